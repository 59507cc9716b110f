# Set-up for tests/realprojects (sourced by tests/run.sh): the libraries' pinned sdists, cached in CI's
# cache folder, and the runtime dependencies their modules import, pinned.
export PYCAPSULE_SDIST_CACHE="${PYCAPSULE_SDIST_CACHE:-$PYCAPSULE_CI_CACHE/sdists}"
# pydash 8.0.4 imports typing_extensions (pydash requires >3.10,!=4.6.0).
python3 -m pip install --quiet --disable-pip-version-check 'typing-extensions==4.16.0'
PYTHONPATH="$PWD/server${PYTHONPATH:+:$PYTHONPATH}" python3 -m tests.realprojects.libraries
