"""The self-debugging loop, end to end in-process: the real openai client talking to the scripted
server, the real default sandbox, the real extraction/splice/condense modules."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from pycapsule.capsule import capsule_by_qualname
from pycapsule.config import Settings
from pycapsule.engine import Engine
from pycapsule.events import (
    AttemptFinished,
    AttemptStarted,
    Event,
    Finished,
    ModelRetrying,
    Notice,
    Outcome,
    TokensStreamed,
)
from pycapsule.history import History
from pycapsule.sandbox.api import Sandbox

from tests.engine.conftest import FAKE_KEY
from tests.fakes.openai_server import Error, FakeOpenAI, Hang, RecordedRequest, Text

MODULE = '''"""A module with more than the target in it."""
import os

LIMIT = 10


def add(a, b):
    """Add two numbers.

    >>> add(1, 2)
    3
    >>> add(-1, 1)
    0
    """
    ...


def untouched():
    return "same bytes"
'''

RIGHT = "```python\ndef add(a, b):\n    return a + b\n```"
WRONG = "Here it is:\n```python\ndef add(a, b):\n    return a - b\n```"
WRONG_TOO = "```python\ndef add(a, b):\n    return a * b\n```"


@pytest.fixture
def module_file(tmp_path: Path) -> Path:
    path = tmp_path / "mod.py"
    path.write_text(MODULE)
    return path


def settings_for(server: FakeOpenAI, **overrides: object) -> Settings:
    values = {"base_url": server.base_url, "api_key": FAKE_KEY, "model": "fake-coder", "retry_backoff": 0.01,
              "model_retries": 1, "request_timeout": 5.0, **overrides}
    return Settings(**values)  # type: ignore[arg-type]


def run(server: FakeOpenAI, sandbox: Sandbox, path: Path, qualname: str = "add", *,
        cancel: threading.Event | None = None, from_current_body: bool = False,
        **overrides: object) -> tuple[list[Event], Outcome]:
    capsule = capsule_by_qualname(path.read_bytes().decode(), qualname, path)
    with Engine(settings_for(server, **overrides), sandbox=sandbox) as engine:
        events = list(engine.generate(capsule, cancel=cancel, from_current_body=from_current_body))
    assert isinstance(events[-1], Finished)
    assert sum(isinstance(e, Finished) for e in events) == 1
    return events, events[-1].outcome


def finished_attempts(events: list[Event]) -> list[AttemptFinished]:
    return [e for e in events if isinstance(e, AttemptFinished)]


def modes(events: list[Event]) -> list[str]:
    return [e.mode for e in events if isinstance(e, AttemptStarted)]


def test_success_at_the_first_attempt(openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path) -> None:
    openai_server.queue(RIGHT)
    events, outcome = run(openai_server, sandbox, module_file)
    assert outcome.status == "passed" and outcome.attempts == 1
    assert isinstance(events[0], AttemptStarted) and (events[0].attempt, events[0].max_attempts) == (1, 3)
    streamed = "".join(e.text for e in events if isinstance(e, TokensStreamed))
    assert streamed == RIGHT
    assert outcome.new_source == MODULE.replace('    """\n    ...\n', '    """\n    return a + b\n')
    (request,) = openai_server.chat_requests
    assert "def add(a, b):" in request.prompt_text and ">>> add(1, 2)" in request.prompt_text
    assert "import os" in request.prompt_text  # the module context
    assert request.body["temperature"] == 0.0
    assert outcome.usage.completion_tokens > 0


@pytest.mark.parametrize(("context_chars", "shows_the_module"), [(4000, True), (0, False)])
def test_the_context_chars_setting_bounds_what_the_prompt_shows_of_the_module(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path, context_chars: int,
        shows_the_module: bool) -> None:
    openai_server.queue(RIGHT)
    _, outcome = run(openai_server, sandbox, module_file, context_chars=context_chars)
    assert outcome.status == "passed"
    (request,) = openai_server.chat_requests
    assert ">>> add(1, 2)" in request.prompt_text
    assert ("import os" in request.prompt_text) is shows_the_module


def test_a_failure_is_condensed_into_the_fix_prompt(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path) -> None:
    openai_server.queue(WRONG, RIGHT)
    events, outcome = run(openai_server, sandbox, module_file, retry_temperature=0.6, restart_after=1)
    assert outcome.status == "passed" and outcome.attempts == 2
    first, _ = finished_attempts(events)
    assert not first.passed and "add(1, 2)" in first.headline
    assert "Expected: 3" in first.condensed and "Got: -1" in first.condensed
    assert modes(events) == ["generate", "fix"]
    fix = openai_server.chat_requests[1]
    last_user = fix.messages[-1]["content"]
    assert first.condensed in last_user
    assert "return a - b" in fix.messages[-2]["content"] and fix.messages[-2]["role"] == "assistant"
    assert ">>> add(1, 2)" in fix.prompt_text  # the original task is still there
    assert fix.body["temperature"] == 0.6


def test_budget_exhausted_is_a_clear_failure_with_no_new_source(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path) -> None:
    openai_server.queue(WRONG, WRONG_TOO, WRONG)
    events, outcome = run(openai_server, sandbox, module_file, max_attempts=3)
    assert outcome.status == "gave_up" and outcome.new_source is None and outcome.edits == ()
    assert outcome.message.startswith("add: still failing after 3 attempt(s): doctest failed")
    assert len(openai_server.chat_requests) == 3 and openai_server.pending == 0
    assert [a.verdict for a in finished_attempts(events)] == ["failed"] * 3


def test_each_attempt_says_how_many_examples_failed(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path) -> None:
    half_right = "```python\ndef add(a, b):\n    return a + b if a > 0 else 5\n```"
    openai_server.queue(WRONG, half_right, "no code at all", RIGHT)
    events, outcome = run(openai_server, sandbox, module_file, max_attempts=4)
    assert outcome.status == "passed"
    assert [a.failed_examples for a in finished_attempts(events)] == [2, 1, None, 0]


def test_restart_from_a_fresh_conversation_after_failed_fixes(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path) -> None:
    openai_server.queue(WRONG, WRONG_TOO, WRONG, RIGHT)
    events, outcome = run(openai_server, sandbox, module_file, restart_after=2, max_attempts=5)
    assert outcome.status == "passed"
    assert modes(events) == ["generate", "fix", "fix", "restart"]
    restart = openai_server.chat_requests[3]
    assert [m["role"] for m in restart.messages] == ["user"]
    assert restart.body["temperature"] > 0


def test_a_restart_names_the_earlier_failures_but_shows_none_of_their_code(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path) -> None:
    openai_server.queue(WRONG, WRONG_TOO, RIGHT)
    events, outcome = run(openai_server, sandbox, module_file, restart_after=0)
    assert outcome.status == "passed"
    assert modes(events) == ["generate", "restart", "restart"]  # restart_after = 0: no fix turns
    first, second = finished_attempts(events)[:2]
    last = openai_server.chat_requests[2]
    assert [m["role"] for m in last.messages] == ["user"]
    task = last.task_message
    assert first.headline in task and second.headline in task
    assert "a - b" not in task and "a * b" not in task


@pytest.mark.parametrize("fix_repeated_failures", [False, True])
def test_a_restart_that_fails_as_before_is_fixed_rather_than_restarted_when_the_user_asks(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path, fix_repeated_failures: bool) -> None:
    alike = "```python\ndef add(a, b):\n    return -(b - a)\n```"  # other code, the same wrong results
    openai_server.queue(WRONG, alike, RIGHT)
    events, outcome = run(openai_server, sandbox, module_file, fix_repeated_failures=fix_repeated_failures)
    assert outcome.status == "passed"
    first, second = finished_attempts(events)[:2]
    assert first.headline == second.headline
    third = openai_server.chat_requests[2]
    if fix_repeated_failures:
        assert modes(events) == ["generate", "restart", "fix"]
        assert "-(b - a)" in third.messages[1]["content"]
        assert second.condensed in third.messages[-1]["content"]
    else:
        assert modes(events) == ["generate", "restart", "restart"]
        assert [m["role"] for m in third.messages] == ["user"]


def test_the_history_window_bounds_the_fix_prompt(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path) -> None:
    openai_server.queue(WRONG, WRONG_TOO, "```python\ndef add(a, b):\n    return a ** b\n```", RIGHT)
    run(openai_server, sandbox, module_file, restart_after=10, history_window=1, max_attempts=5)
    fourth = openai_server.chat_requests[3]
    assistant = [m["content"] for m in fourth.messages if m["role"] == "assistant"]
    assert len(assistant) == 2
    assert "a * b" in assistant[0] and "a ** b" in assistant[1]


def test_an_answer_without_code_is_a_failed_attempt_that_says_why(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path) -> None:
    openai_server.queue("I would add the two numbers together.", RIGHT)
    events, outcome = run(openai_server, sandbox, module_file)
    assert outcome.status == "passed"
    first = finished_attempts(events)[0]
    assert first.verdict == "no_code" and "no usable code" in first.headline
    assert "```python" in openai_server.chat_requests[1].messages[-1]["content"]


def test_an_answer_stuck_repeating_lines_is_stopped_and_the_model_told_why(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path) -> None:
    openai_server.queue("```python\n" + "import os\n" * 500, RIGHT)
    events, outcome = run(openai_server, sandbox, module_file)
    assert outcome.status == "passed"
    first = finished_attempts(events)[0]
    assert first.verdict == "no_code"
    assert "kept repeating the same lines" in openai_server.chat_requests[1].messages[-1]["content"]


def test_a_model_slowly_writing_lines_of_one_shape_is_stopped_and_told_it_looped(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path) -> None:
    """Issue 66's loop: `if a == 1: return ...`, `if a == 2: ...` until the token limit, at the pace of a
    model on a laptop (unwatched, this answer would stream for about 45 s)."""
    chain = "".join(f"    if a == {n}:\n        return {n} + b\n" for n in range(300))
    looping = Text(f"```python\ndef add(a, b):\n{chain}", usage=None, chunk_delay=0.005)
    openai_server.queue(looping, RIGHT)
    events, outcome = run(openai_server, sandbox, module_file, request_timeout=30.0)
    assert (outcome.status, outcome.attempts) == ("passed", 2)
    first = finished_attempts(events)[0]
    assert "kept repeating the same lines" in first.failure
    assert first.usage.completion_tokens < len(looping.text) / 8 / 10  # under a tenth of its pieces read
    assert "kept repeating the same lines" in openai_server.chat_requests[1].messages[-1]["content"]


def test_an_answer_is_read_until_its_function_is_complete_and_no_further(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path) -> None:
    explanation = "This adds the two numbers, which is what the docstring asks for. " * 100
    openai_server.queue(Text(f"{RIGHT}\n\n{explanation}", usage=None, chunk_delay=0.001))
    events, outcome = run(openai_server, sandbox, module_file)
    assert (outcome.status, outcome.attempts) == ("passed", 1)
    [first] = finished_attempts(events)
    assert first.usage.completion_tokens <= len(RIGHT) // 8 + 2  # the explanation's pieces were not read


def test_a_changed_signature_is_a_failed_attempt(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path) -> None:
    openai_server.queue("```python\nasync def add(a, b):\n    await x()\n    return a + b\n```", RIGHT)
    events, outcome = run(openai_server, sandbox, module_file)
    assert outcome.status == "passed"
    first = finished_attempts(events)[0]
    assert first.verdict == "signature"
    assert "def add(a, b):" in openai_server.chat_requests[1].messages[-1]["content"]


MULTI_LINE_SIGNATURE = '''def pick(
    values: list[int],
    default: int | None = None,
) -> int | None:
    """The first value, or `default`.

    >>> pick([3, 4])
    3
    """
    ...
'''


def test_a_changed_multi_line_signature_is_quoted_whole_in_the_retry(
        openai_server: FakeOpenAI, sandbox: Sandbox, tmp_path: Path) -> None:
    path = tmp_path / "picks.py"
    path.write_text(MULTI_LINE_SIGNATURE)
    right = "```python\ndef pick(values, default=None):\n    return values[0] if values else default\n```"
    openai_server.queue("```python\ndef pick(values):\n    return values[0]\n```", right)
    events, outcome = run(openai_server, sandbox, path, "pick", restart_after=1)
    assert outcome.status == "passed"
    assert finished_attempts(events)[0].verdict == "signature" and modes(events) == ["generate", "fix"]
    retry = openai_server.chat_requests[1].messages[-1]["content"]
    signature = MULTI_LINE_SIGNATURE.split(":\n", 1)[0] + ":"
    assert f"Keep this signature exactly:\n```python\n{signature}\n```\n" in retry


FENCED_EXAMPLE = '''def slug(text: str) -> str:
    """The words of `text`, lower-cased and joined by hyphens.

    ```pycon
    >>> slug("Hello World")
    'hello-world'

    ```
    """
    ...
'''


def test_an_answer_that_repeats_a_fenced_example_of_the_docstring_passes_at_the_first_attempt(
        openai_server: FakeOpenAI, sandbox: Sandbox, tmp_path: Path) -> None:
    path = tmp_path / "slugs.py"
    path.write_text(FENCED_EXAMPLE)
    solved = FENCED_EXAMPLE.replace("    ...", '    return "-".join(text.lower().split())')
    openai_server.queue(f"Here is the function:\n\n```python\n{solved}```\n")
    _, outcome = run(openai_server, sandbox, path, "slug")
    assert outcome.status == "passed" and outcome.attempts == 1
    assert outcome.new_source == solved


@pytest.mark.parametrize("failure", [Error(500, "overloaded"), Error(429, "quota")])
def test_model_failures_end_with_one_line_and_no_change(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path, failure: object) -> None:
    openai_server.queue(failure, failure)
    events, outcome = run(openai_server, sandbox, module_file, request_timeout=5.0)
    assert outcome.status == "error" and outcome.new_source is None
    assert "\n" not in outcome.message and "after 2 tries" in outcome.message
    assert any(isinstance(e, ModelRetrying) for e in events)
    assert outcome.unavailable == "model"  # a run over several functions stops here


def test_a_silent_model_ends_the_attempt_after_the_inactivity_timeout_without_retrying(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path) -> None:
    openai_server.queue(Hang(), Hang())
    events, outcome = run(openai_server, sandbox, module_file, inactivity_timeout=0.5)
    assert outcome.status == "error" and outcome.unavailable == "model" and outcome.new_source is None
    assert "sent nothing for 0.5 s" in outcome.message and "\n" not in outcome.message
    assert not any(isinstance(e, ModelRetrying) for e in events)
    assert len(openai_server.chat_requests) == 1


def test_a_model_that_is_down(sandbox: Sandbox, module_file: Path) -> None:
    server = FakeOpenAI().start()
    server.stop()  # nothing listens on its port any more
    _, outcome = run(server, sandbox, module_file)
    assert outcome.status == "error" and "cannot reach the model" in outcome.message


def test_cancel_during_streaming(openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path) -> None:
    openai_server.queue(Text(RIGHT * 20, chunk_delay=0.05))
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    events, outcome = run(openai_server, sandbox, module_file, cancel=cancel)
    assert outcome.status == "cancelled" and outcome.new_source is None
    assert not finished_attempts(events)


def test_cancel_while_the_doctests_run_ends_the_run_without_waiting_for_them(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path) -> None:
    slow = "```python\ndef add(a, b):\n    import time\n    time.sleep(60)\n    return a + b\n```"
    openai_server.queue(slow)
    cancel = threading.Event()
    capsule = capsule_by_qualname(module_file.read_text(), "add", module_file)
    started = 0.0
    with Engine(settings_for(openai_server, job_timeout=60.0), sandbox=sandbox) as engine:
        events = []
        for event in engine.generate(capsule, cancel=cancel):
            events.append(event)
            if isinstance(event, AttemptStarted):
                threading.Timer(1.0, cancel.set).start()  # the answer comes at once: the doctests run then
                started = time.monotonic()
    assert events[-1].outcome.status == "cancelled" and events[-1].outcome.new_source is None
    assert time.monotonic() - started < 20, "the run waited for the sandbox's job instead of the cancel"
    assert not finished_attempts(events), "a cancelled check is not an attempt's verdict"


def test_a_run_cancelled_before_it_starts_asks_no_model(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path) -> None:
    cancel = threading.Event()
    cancel.set()  # e.g. Ctrl-C, which also kills an embedded model's server: nothing may start it again
    _, outcome = run(openai_server, sandbox, module_file, cancel=cancel)
    assert outcome.status == "cancelled" and outcome.new_source is None
    assert openai_server.requests == []


def test_cancel_between_attempts(openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path) -> None:
    openai_server.queue(WRONG, RIGHT)
    cancel = threading.Event()
    capsule = capsule_by_qualname(module_file.read_text(), "add", module_file)
    with Engine(settings_for(openai_server), sandbox=sandbox) as engine:
        events = []
        for event in engine.generate(capsule, cancel=cancel):
            events.append(event)
            if isinstance(event, AttemptFinished):
                cancel.set()
    assert events[-1].outcome.status == "cancelled"
    assert len(openai_server.chat_requests) == 1


def test_without_doctests_one_generation_is_not_verified(
        openai_server: FakeOpenAI, sandbox: Sandbox, tmp_path: Path) -> None:
    path = tmp_path / "plain.py"
    path.write_text('def double(x):\n    """Twice x."""\n')
    openai_server.queue("```python\ndef double(x):\n    return 2 * x\n```")
    _, outcome = run(openai_server, sandbox, path, "double")
    assert outcome.status == "not_verified" and "NOT verified" in outcome.message
    assert outcome.new_source == 'def double(x):\n    """Twice x."""\n    return 2 * x\n'
    assert len(openai_server.chat_requests) == 1


def test_fix_mode_checks_the_current_body_first(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path) -> None:
    module_file.write_text(MODULE.replace("    ...\n", "    return a - b\n"))
    openai_server.queue(RIGHT)
    events, outcome = run(openai_server, sandbox, module_file, from_current_body=True)
    assert outcome.status == "passed"
    assert modes(events) == ["check", "fix"]
    check = finished_attempts(events)[0]
    assert check.attempt == 0 and "Got: -1" in check.condensed
    (request,) = openai_server.chat_requests  # one message: the body as it stands, its failure, a fix
    assert "return a - b" in request.messages[-1]["content"]
    assert check.condensed in request.messages[-1]["content"]
    assert "smallest change" in request.messages[-1]["content"]


def test_fix_mode_on_passing_code_asks_no_model(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path) -> None:
    module_file.write_text(MODULE.replace("    ...\n", "    return a + b\n"))
    _, outcome = run(openai_server, sandbox, module_file, from_current_body=True)
    assert outcome.status == "passed" and "already pass" in outcome.message and outcome.new_source is None
    assert openai_server.chat_requests == []


def test_the_source_is_byte_identical_outside_the_body_and_imports(
        openai_server: FakeOpenAI, sandbox: Sandbox, tmp_path: Path) -> None:
    path = tmp_path / "crlf.py"
    original = MODULE.replace("\n", "\r\n")
    path.write_bytes(original.encode())
    openai_server.queue("```python\nimport math\n\ndef add(a, b):\n"
                        "    return int(math.fsum([a, b]))\n```")
    _, outcome = run(openai_server, sandbox, path)
    assert outcome.status == "passed" and outcome.new_source is not None
    capsule = capsule_by_qualname(original, "add", path)
    new = outcome.new_source
    tail = original[capsule.body_end:]
    assert new.endswith(tail)
    head = original[: capsule.body_start]
    assert new.replace("import math\r\n", "", 1).startswith(head)
    assert "\r\n    return" in new and "\n    return" not in new.replace("\r\n", "")


def test_every_attempt_is_recorded_without_the_key(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path, private_history: Path) -> None:
    openai_server.queue(WRONG, RIGHT)
    run(openai_server, sandbox, module_file)
    records = History().attempts(module_file, "add")
    assert [(r.attempt, r.mode, r.verdict) for r in records] == [
        (2, "restart", "passed"), (1, "generate", "failed")]
    assert records[1].model == "fake-coder" and records[1].completion_tokens > 0
    assert records[1].first_error_line.startswith("Failed example: add(1, 2)")
    assert [r.verified for r in records] == ["verified by 2 examples; they catch 2 of 2 small changes", ""], \
        "told on the result's row only"
    for stored in private_history.parent.glob("history.sqlite3*"):
        assert FAKE_KEY.encode() not in stored.read_bytes()


def test_a_run_repeats_exactly_and_asking_again_brings_new_samples(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path, private_history: Path) -> None:
    openai_server.queue(WRONG, WRONG_TOO, WRONG, RIGHT)
    run(openai_server, sandbox, module_file, max_attempts=2)
    run(openai_server, sandbox, module_file, max_attempts=2)
    seeds = [request.body["seed"] for request in openai_server.chat_requests]
    assert seeds == [1, 2, 3, 4]  # the second run starts after the two attempts the history holds


def test_a_function_with_no_file_always_starts_from_the_same_seeds(
        openai_server: FakeOpenAI, sandbox: Sandbox, private_history: Path) -> None:
    """Bench tasks have no file: their seeds must not depend on what ran before them."""
    openai_server.queue(WRONG, WRONG_TOO, WRONG, WRONG_TOO)
    capsule = capsule_by_qualname(MODULE, "add", None)
    with Engine(settings_for(openai_server, max_attempts=2), sandbox=sandbox) as engine:
        for _ in range(2):
            list(engine.generate(capsule))
    assert [request.body["seed"] for request in openai_server.chat_requests] == [1, 2, 1, 2]


def test_the_key_never_reaches_the_sandbox(
        openai_server: FakeOpenAI, sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    path = tmp_path / "snoop.py"
    path.write_text('def snoop():\n    """Is the key visible?\n\n    >>> snoop()\n    False\n    """\n')
    openai_server.queue("```python\ndef snoop():\n    import os\n"
                        f"    return any({FAKE_KEY!r} in v for v in os.environ.values())\n```")
    _, outcome = run(openai_server, sandbox, path, "snoop", max_attempts=1)
    assert outcome.status == "passed", outcome.message


def test_sandbox_warnings_are_passed_on_once(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path) -> None:
    module_file.parent.chmod(0o700)  # the sandbox's unprivileged uid cannot read the project
    openai_server.queue(WRONG, RIGHT)
    events, outcome = run(openai_server, sandbox, module_file)
    assert outcome.status == "passed"
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert len(notices) == 1 and "not readable" in notices[0]


def test_fix_mode_on_a_one_line_function(openai_server: FakeOpenAI, sandbox: Sandbox, tmp_path: Path) -> None:
    path = tmp_path / "inline.py"
    path.write_text('def inc(x): """Add one.\n\n    >>> inc(1)\n    2\n    """; return x\n')
    openai_server.queue("```python\ndef inc(x):\n    return x + 1\n```")
    events, outcome = run(openai_server, sandbox, path, "inc", from_current_body=True)
    assert outcome.status == "passed", outcome.message
    check = finished_attempts(events)[0]
    assert check.attempt == 0 and "Got: 1" in check.condensed
    assert outcome.new_source is not None and "return x + 1" in outcome.new_source


def test_answers_without_code_use_up_the_budget_and_say_so(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path) -> None:
    openai_server.queue("Sorry, I cannot help.", "Still no code.")
    _, outcome = run(openai_server, sandbox, module_file, max_attempts=2)
    assert outcome.status == "gave_up" and outcome.new_source is None
    assert outcome.message.startswith("add: still failing after 2 attempt(s): no usable code in the answer")


def test_a_truncated_answer_is_told_to_be_shorter(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path) -> None:
    openai_server.queue(Text("Let me explain at length. First, addition is", finish_reason="length"), RIGHT)
    events, outcome = run(openai_server, sandbox, module_file)
    assert outcome.status == "passed"
    assert "cut off at the token limit" in finished_attempts(events)[0].condensed
    assert "cut off at the token limit" in openai_server.chat_requests[1].messages[-1]["content"]
    # the user reads why, not the instructions written for the model
    assert finished_attempts(events)[0].failure == "The answer was cut off at the token limit."


def test_an_answer_cut_off_by_the_time_limit_is_an_attempt_kept_with_its_tokens(
        openai_server: FakeOpenAI, sandbox: Sandbox, module_file: Path, tmp_path: Path) -> None:
    """A slow model still writing when request_timeout runs out: the attempt is not lost. Its text and the
    tokens that came are in its AttemptFinished and the history, and the run goes on."""
    openai_server.queue(Text("Let me explain at length. " + "First, addition is " * 200, chunk_delay=0.01),
                        RIGHT)
    history = History(tmp_path / "history.sqlite3")
    capsule = capsule_by_qualname(module_file.read_text(), "add", module_file)
    with Engine(settings_for(openai_server, request_timeout=1.0), sandbox=sandbox, history=history) as engine:
        events = list(engine.generate(capsule))
    outcome = events[-1].outcome
    assert (outcome.status, outcome.attempts) == ("passed", 2)
    first = finished_attempts(events)[0]
    assert first.usage.completion_tokens > 0 and "Let me explain at length." in first.code
    assert first.failure == "The answer was cut off by the time limit (request_timeout)."
    [_, kept] = history.attempts(module_file, "add")  # newest first
    assert (kept.attempt, kept.completion_tokens) == (1, first.usage.completion_tokens)
    history.close()


def test_two_loops_at_once_share_one_engine(
        openai_server: FakeOpenAI, sandbox: Sandbox, tmp_path: Path) -> None:
    path = tmp_path / "two.py"
    path.write_text(MODULE + '\n\ndef neg(x):\n    """\n    >>> neg(2)\n    -2\n    """\n')

    def answer(request: RecordedRequest) -> str:
        neg = "```python\ndef neg(x):\n    return -x\n```"
        return RIGHT if "def add" in request.task_function else neg

    openai_server.responder = answer
    source = path.read_text()
    outcomes: dict[str, Outcome] = {}
    with Engine(settings_for(openai_server), sandbox=sandbox) as engine:
        def work(qualname: str) -> None:
            events = list(engine.generate(capsule_by_qualname(source, qualname, path)))
            outcomes[qualname] = events[-1].outcome

        threads = [threading.Thread(target=work, args=(q,)) for q in ("add", "neg")]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    assert {q: o.status for q, o in outcomes.items()} == {"add": "passed", "neg": "passed"}
    assert "return -x" in outcomes["neg"].new_source and "return a + b" in outcomes["add"].new_source


def test_a_body_whose_examples_only_set_up_is_not_verified(
        openai_server: FakeOpenAI, sandbox: Sandbox, tmp_path: Path) -> None:
    path = tmp_path / "groups.py"
    path.write_text('def groupby(key, seq):\n    """\n    >>> names = ["Al", "Bob"]\n'
                    '    >>> groupby(len, names)  # doctest: +SKIP\n'
                    '    {2: [\'Al\'], 3: [\'Bob\']}\n    """\n')
    openai_server.queue("```python\ndef groupby(key, seq):\n    return {key(x): [x] for x in seq}\n```")
    _, outcome = run(openai_server, sandbox, path, "groupby")
    assert outcome.status == "not_verified", outcome.message
    assert "no example in its docstring checks it" in outcome.message


PRICES = '''import csv


def total(path):
    """Sum the prices in a CSV file.

    >>> total("data/prices.csv")
    12.5
    """
'''
READS_THE_PATH = ("```python\ndef total(path):\n    with open(path) as handle:\n"
                  "        return sum(float(row[1]) for row in csv.reader(handle))\n```")
READS_ANOTHER_PATH = READS_THE_PATH.replace("open(path)", 'open("prices.csv")')


def test_an_example_that_needs_a_file_the_sandbox_lacks_ends_the_run_not_verified_and_says_why(
        openai_server: FakeOpenAI, sandbox: Sandbox, tmp_path: Path) -> None:
    path = tmp_path / "prices.py"
    path.write_text(PRICES)
    openai_server.queue(READS_THE_PATH)
    events, outcome = run(openai_server, sandbox, path, "total")
    assert outcome.status == "not_verified" and outcome.attempts == 1
    assert outcome.message == (
        "total: body generated but NOT verified: examples cannot run in the sandbox (1 of 1): "
        "`total(\"data/prices.csv\")` needs 'data/prices.csv', which is not there")
    assert outcome.new_source is not None and "csv.reader(handle)" in outcome.new_source
    assert [a.verdict for a in finished_attempts(events)] == ["not_verified"]


def test_a_file_the_docstring_does_not_name_is_the_code_s_mistake_and_is_fed_back(
        openai_server: FakeOpenAI, sandbox: Sandbox, tmp_path: Path) -> None:
    path = tmp_path / "prices.py"
    path.write_text(PRICES)
    openai_server.queue(READS_ANOTHER_PATH, READS_THE_PATH)
    events, outcome = run(openai_server, sandbox, path, "total")
    assert [a.verdict for a in finished_attempts(events)] == ["failed", "not_verified"]
    assert "FileNotFoundError" in openai_server.chat_requests[1].prompt_text
    assert outcome.status == "not_verified"
