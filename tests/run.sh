#!/usr/bin/env bash
# The one test command (README, .ci/run): installs what the tests need, starts the services, runs every suite.
# Idempotent; caches (pip, npm, the sandbox image, the model) live under $PYCAPSULE_CI_CACHE.
set -euo pipefail
cd "$(dirname "$0")/.."
export PYCAPSULE_CI_CACHE="${PYCAPSULE_CI_CACHE:-$HOME/.cache/pycapsule-ci}"
mkdir -p "$PYCAPSULE_CI_CACHE"
started=$(date +%s)
step() { printf '\n== %s (%ss)\n' "$1" "$(( $(date +%s) - started ))"; }
# Set-up scripts may start services (the sandbox's private dockerd); stop them however the run ends.
stop_services() { if declare -F pycapsule_stop_dockerd >/dev/null; then pycapsule_stop_dockerd; fi; }
trap stop_services EXIT

step "python packages"
# A system Python that refuses installs outside a venv (PEP 668: Debian's and Ubuntu's own python3) gets one,
# .venv, first on PATH for everything below (apt-get install python3-venv where `venv` cannot make it).
if python3 -c 'import pathlib, sys, sysconfig
sys.exit(sys.prefix != sys.base_prefix or not pathlib.Path(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED").exists())'; then
  [ -x .venv/bin/python3 ] || python3 -m venv .venv
  export PATH="$PWD/.venv/bin:$PATH"
fi
# Until issue 15 the distribution was called "pycapsule" (on PyPI another project): drop that old install of ours.
if python3 -m pip show pycapsule 2>/dev/null | grep -q '^Summary: A self-debugging code generator'; then
  python3 -m pip uninstall --quiet --disable-pip-version-check -y pycapsule
fi
python3 -m pip install --quiet --disable-pip-version-check -e '.[test,bench]'

for setup in tests/*/setup.sh; do
  step "set-up: $setup"
  # shellcheck disable=SC1090
  source "$setup"
done

step "lint"
python3 -m ruff check server tests measurements

step "release build and check (publishes nothing)"
# The wheel, the sdist and the .vsix a release publishes, built and checked as .github/workflows/release.yml
# does on a tag; tests/packaging checks these files instead of building them again.
export PYCAPSULE_RELEASE_DIST="$PYCAPSULE_CI_CACHE/release"
bash tests/packaging/release_check.sh "$PYCAPSULE_RELEASE_DIST"

step "tests"
# Two processes (tests/conftest.py: the model's and the editors' tests all in one of them), then the tests that
# must run alone. The slowest tests are listed at the end: where CI's minutes go (fresh machines here differ
# up to 2 x).
python3 -m pytest -ra -p no:cacheprovider --durations=25 -n 2 --dist loadgroup -m "not alone" "$@"
step "tests that run alone"
status=0
python3 -m pytest -ra -p no:cacheprovider -m alone "$@" || status=$?
(( status == 0 || status == 5 ))  # 5: none of them among the tests asked for
step "done"
