"""`answer_prefill`: a stub's first answer starts with the function's signature and docstring, so the model
writes only the body; retries write whole answers. The scripted endpoint answers the way llama.cpp's server
does (only what follows the prefix when streaming, the whole answer otherwise) or the way an endpoint that
ignores it does."""

from __future__ import annotations

from pathlib import Path

import pytest
from pycapsule.sandbox.api import Sandbox

from tests.engine.test_loop import MODULE, run
from tests.fakes.openai_server import FakeOpenAI

HEAD = MODULE[MODULE.index("def add"): MODULE.index("    ...")]
BODY = "    return a + b\n```"

CLASS_MODULE = '''class Counter:
    def __init__(self) -> None:
        self.count = 0

    def bump(self, by: int) -> int:
        """Add `by` and return the new count.

        >>> Counter().bump(2)
        2
        """
        ...
'''


@pytest.fixture
def module_file(tmp_path: Path) -> Path:
    path = tmp_path / "mod.py"
    path.write_text(MODULE)
    return path


@pytest.mark.parametrize("answer", [BODY, f"```python\n{HEAD}{BODY}", f"Sure:\n```python\n{HEAD}{BODY}"],
                         ids=["the continuation only", "the prefix repeated", "an endpoint that ignores it"])
def test_a_prefilled_answer_of_any_shape_gives_the_body(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path, answer: str) -> None:
    openai_server.queue(answer)
    _, outcome = run(openai_server, sandbox, module_file, answer_prefill="always")
    assert outcome.status == "passed"
    assert outcome.new_source == MODULE.replace('    """\n    ...\n', '    """\n    return a + b\n')
    (request,) = openai_server.chat_requests
    assert request.messages[-1] == {"role": "assistant", "content": f"```python\n{HEAD}"}


def test_a_method_is_prefilled_as_the_task_shows_it_and_its_body_lands_in_the_class(
        openai_server: FakeOpenAI, sandbox: Sandbox, tmp_path: Path) -> None:
    path = tmp_path / "counter.py"
    path.write_text(CLASS_MODULE)
    openai_server.queue("        self.count += by\n        return self.count\n```")
    _, outcome = run(openai_server, sandbox, path, "Counter.bump", answer_prefill="always")
    assert outcome.status == "passed", outcome.message
    task, prefix = (m["content"] for m in openai_server.chat_requests[0].messages)
    assert prefix.startswith("```python\n    def bump(self, by: int) -> int:\n        \"\"\"Add `by`")
    assert prefix in task, "the answer starts as the task shows the method"
    assert outcome.new_source is not None and "        self.count += by\n" in outcome.new_source


def test_only_the_first_answer_is_prefilled_so_a_retry_can_write_a_helper_beside_the_function(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path) -> None:
    openai_server.queue("    return a - b\n```")
    openai_server.queue("```python\ndef _plus(a, b):\n    return a + b\n\n\n"
                        f"{HEAD}    return _plus(a, b)\n```")
    _, outcome = run(openai_server, sandbox, module_file, answer_prefill="always", max_mutants=0)
    assert outcome.status == "passed" and outcome.attempts == 2, outcome.message
    first, retry = openai_server.chat_requests
    assert first.messages[-1]["role"] == "assistant"
    assert retry.messages[-1]["role"] == "user", "the retry writes its whole answer"
    assert "got -1" in retry.messages[-1]["content"], "the retry is told how the prefilled answer failed"
    assert outcome.new_source is not None and "def _plus(a, b):" in outcome.new_source


@pytest.mark.parametrize("setting", ["never", "embedded"])
def test_an_endpoint_is_not_prefilled_unless_the_user_says_always(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path, setting: str) -> None:
    openai_server.queue(f"```python\n{HEAD}{BODY}")
    _, outcome = run(openai_server, sandbox, module_file, answer_prefill=setting)
    assert outcome.status == "passed"
    assert [m["role"] for m in openai_server.chat_requests[0].messages] == ["user"]
