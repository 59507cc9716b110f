"""The one scenario both editor tests play: a stub with doctests, a wrong first answer, a right second one.

The model is the scripted OpenAI-compatible server (the only test double, at the network edge); the
language server, the sandbox and the editor are real.
"""

from __future__ import annotations

import doctest
import importlib.util
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from tests.fakes.openai_server import MODEL, FakeOpenAI, Text

STUB_FILE = "stubs.py"
STUB_SOURCE = '''\
"""Functions for the editor tests."""


def already_written(n: int) -> int:
    """Twice n.

    >>> already_written(2)
    4
    """
    return 2 * n


def digit_sum(n: int) -> int:
    """The sum of the decimal digits of n.

    >>> digit_sum(123)
    6
    >>> digit_sum(-45)
    9
    """
    ...


def slow_stub(n: int) -> int:
    """The model never finishes this one: the extension-host tests cancel it.

    >>> slow_stub(1)
    1
    """
    ...
'''
STUB_LINE = STUB_SOURCE.splitlines().index("def digit_sum(n: int) -> int:") + 1
"""1-based line of the stub's `def`."""

WRONG_BODY = "return len(str(n))"
CORRECT_BODY = "return sum(int(digit) for digit in str(abs(n)))"
MAX_ATTEMPTS = 3


def model_replies() -> list[Text]:
    """What the model answers, in order: a body that fails the first doctest, then a right one."""
    return [
        Text(f"```python\ndef digit_sum(n: int) -> int:\n    {WRONG_BODY}\n```"),
        Text(
            "Fixed: digits, not their count.\n"
            f"```python\ndef digit_sum(n: int) -> int:\n    {CORRECT_BODY}\n```"
        ),
    ]


TYPING_LINE = "# Notes:"
"""A line outside every function, where the user of the issue-47 scenarios types during a run."""
ABOVE_FILE = "above.py"
ABOVE_SOURCE = f'''"""A stub above a failing function: generating the stub moves the failing one down."""

{TYPING_LINE}


def digit_sum(n: int) -> int:
    """The sum of the decimal digits of n.

    >>> digit_sum(123)
    6
    >>> digit_sum(-45)
    9
    """
    ...


def twice(n: int) -> int:
    """Twice n.

    >>> twice(2)
    4
    """
    return 3 * n
'''
ABOVE_STUB_LINE = ABOVE_SOURCE.splitlines().index("def digit_sum(n: int) -> int:") + 1
"""1-based line of the stub's `def` in ABOVE_SOURCE."""
FAILING_EXAMPLE = ">>> twice(2)"
LONG_BODY_LAST_LINE = "return total"
LONG_BODY = Text(
    "```python\ndef digit_sum(n: int) -> int:\n    total = 0\n    for digit in str(abs(n)):\n"
    f"        total += int(digit)\n    {LONG_BODY_LAST_LINE}\n```"
)
"""A right body four lines long where the stub had one: everything below it moves down three lines."""
FIXED_TWICE = "return 2 * n"
FIX_TWICE = Text(f"```python\ndef twice(n: int) -> int:\n    {FIXED_TWICE}\n```")


def doctest_failures(path: Path, function: str = "digit_sum") -> int:
    """Runs one function's doctests from the file, in a fresh module (the file is our fixture plus the
    scripted body, not untrusted output)."""
    spec = importlib.util.spec_from_file_location(f"editor_result_{os.getpid()}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    runner = doctest.DocTestRunner(verbose=False)
    for test in doctest.DocTestFinder().find(getattr(module, function), function, globs=vars(module)):
        runner.run(test)
    assert runner.tries > 0, f"no doctests ran for {function}"
    return runner.failures


def require_tool(path: str | None, what: str) -> str:
    """The tool's path; missing tools fail in CI (the set-up must have installed them) and skip elsewhere."""
    if path and (Path(path).exists() or shutil.which(path)):
        return path
    message = f"{what} is not installed: run `source tests/editors/setup.sh` first"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def documented_block(marker: str, language: str) -> str:
    """The `language` code block right after `<!-- marker` in docs/editors.md: tests run what the docs say."""
    docs = Path(__file__).resolve().parents[2] / "docs" / "editors.md"
    text = docs.read_text()
    assert f"<!-- {marker}" in text, f"{docs} lost its {marker} marker"
    match = re.search(rf"```{language}\n(.*?)```", text[text.index(f"<!-- {marker}") :], re.DOTALL)
    assert match, f"no {language} block after the {marker} marker in {docs}"
    return match.group(1)


def editor_environment(home: Path, model_server: FakeOpenAI) -> dict[str, str]:
    """A private HOME/XDG tree (history, editor state) and the scripted model as the endpoint."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("OPENAI_", "PYCAPSULE_"))}
    env["PYCAPSULE_CODE_SERVER"] = os.environ.get("PYCAPSULE_CODE_SERVER", "")
    for name in ("config", "cache", "data", "state"):
        (home / name).mkdir(parents=True, exist_ok=True)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_CACHE_HOME=str(home / "cache"),
        XDG_DATA_HOME=str(home / "data"),
        XDG_STATE_HOME=str(home / "state"),
        OPENAI_BASE_URL=model_server.base_url,
        OPENAI_API_KEY="sk-editor-test",
        PYCAPSULE_MODEL=MODEL,
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    return env
