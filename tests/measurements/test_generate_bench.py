"""`python3 -m measurements generate`: time to a passing body per answer_prefill value, through the Engine,
the real sandbox and an endpoint (here the scripted one, answering as llama.cpp's server does when its answer
is prefilled: only what follows). Speed itself is never asserted here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI, RecordedRequest
from tests.measurements.conftest import CHECKOUT

MODULE = '''def double(n: int) -> int:
    """Twice n.

    >>> double(4)
    8
    """


def shout(text: str) -> str:
    """Upper case, with a bang.

    >>> shout("hi")
    'HI!'
    """
'''
BODIES = {"double": "    return 2 * n\n", "shout": '    return text.upper() + "!"\n'}


def _answer(request: RecordedRequest) -> str:
    task = request.messages[0]["content"].split("```python\n", 1)[1].split("```", 1)[0]  # the target only
    body = next(body for name, body in BODIES.items() if f"def {name}(" in task)
    if request.messages[-1]["role"] == "assistant":  # prefilled: the body and the closing fence only
        return f"{body}```"
    return f"```python\n{task}{body}```"


def test_it_times_each_prefill_value_on_every_stub_against_the_first(tmp_path: Path) -> None:
    module = tmp_path / "stubs.py"
    module.write_text(MODULE)
    with FakeOpenAI(responder=_answer) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-bench-test",
               "PYCAPSULE_MODEL": "fake-coder", "PYCAPSULE_HISTORY": str(tmp_path / "users-history.sqlite3")}
        done = subprocess.run([sys.executable, "-m", "measurements", "generate", str(module), "--rounds", "2",
                               "--prefill", "never", "--prefill", "always"],
                              capture_output=True, text=True, timeout=300, cwd=CHECKOUT, env=env)
        prefilled = [r for r in server.chat_requests if r.messages[-1]["role"] == "assistant"]
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line.split() for line in done.stdout.splitlines()[2:4]}
    assert set(rows) == {"never", "always"}
    assert rows["never"][3] == rows["always"][3] == "4/4", done.stdout
    assert rows["never"][-1] == "1.00"
    assert len(prefilled) == 4 == len(server.chat_requests) - 4
    assert "medians over 2 round(s) of 2 function(s)" in done.stdout
    assert not (tmp_path / "users-history.sqlite3").exists(), "the rounds are not the user's history"


def test_a_file_without_stubs_is_a_usage_error(tmp_path: Path) -> None:
    module = tmp_path / "done.py"
    module.write_text("def f():\n    return 1\n")
    done = subprocess.run([sys.executable, "-m", "measurements", "generate", str(module)],
                          capture_output=True, text=True, timeout=60, cwd=CHECKOUT)
    assert done.returncode == 2 and "has no stub function to generate" in done.stderr
