# Bench tests' machine set-up, sourced by tests/run.sh (idempotent, works on a fresh machine): the source
# trees of the realcode benchmark's libraries, pinned sdists fetched once by pycapsule itself (pip download,
# SHA-256 checked, unpacked) into the CI cache, so CI does not download them again. Their tests need only
# pytest (the `test` extra). Tests and `pycapsule bench realcode` find them through PYCAPSULE_SDIST_CACHE.
export PYCAPSULE_SDIST_CACHE="${PYCAPSULE_SDIST_CACHE:-${PYCAPSULE_CI_CACHE:-$HOME/.cache/pycapsule-ci}/sdists}"
python3 -c "from pycapsule.bench.datasets import load_tasks; load_tasks('realcode')"
