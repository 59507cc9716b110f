"""An answer that repeats code this run already tried: it is not run again, it is recorded as a repeat of
that attempt, and the next request says so and samples differently (the scripted model, the real sandbox)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from pycapsule.bench.attempts import fold_events
from pycapsule.bench.summary import diagnose
from pycapsule.bench.tasks import BenchTask
from pycapsule.capsule import capsule_by_qualname
from pycapsule.engine import Engine
from pycapsule.event_text import result
from pycapsule.history import History
from pycapsule.sandbox.api import Job, RunResult, Sandbox

from tests.engine.test_loop import (
    MODULE,
    RIGHT,
    WRONG,
    WRONG_TOO,
    finished_attempts,
    modes,
    run,
    settings_for,
)
from tests.fakes.openai_server import FakeOpenAI

WRONG_RELAID = "```python\ndef add(a, b):\n    # take b away from a\n\n    return a-b    # subtract\n```"
"""WRONG with other spacing, a blank line and comments: the same code."""
NOTE = "Your last answer repeated code that already failed"


class CountingSandbox:
    """The real sandbox, remembering the module of every job that ran doctests (the import check before a
    run runs none), in the warm sandbox and in a fresh one (the re-check of a passing body). The runs count
    the loop's attempts, so the tests here turn the mutants of a passing body off (`max_mutants = 0`)."""

    def __init__(self, inner: Sandbox) -> None:
        self.inner, self.name = inner, inner.name
        self.checked: list[str] = []
        self.rechecked: list[str] = []

    def run(self, job: Job, cancel: threading.Event | None = None) -> RunResult:
        doctests = job.doctests if job.doctests is not None else job.doctest_targets
        if doctests is None or doctests:
            (self.rechecked if job.fresh else self.checked).append(job.source)
        return self.inner.run(job, cancel)

    def close(self) -> None:
        self.inner.close()

    def runs_of(self, text: str) -> int:
        """How many doctest runs had `text` in their module."""
        return sum(text in source for source in self.checked)


@pytest.fixture
def counted(request: pytest.FixtureRequest) -> CountingSandbox:
    """test_loop's warm sandbox, counted afresh for each test."""
    return CountingSandbox(request.getfixturevalue("sandbox"))


@pytest.fixture
def module_file(tmp_path: Path) -> Path:
    path = tmp_path / "mod.py"
    path.write_text(MODULE)
    return path


def test_code_already_tried_is_not_run_again_and_the_next_request_says_so(
        openai_server: FakeOpenAI, counted: CountingSandbox, module_file: Path) -> None:
    openai_server.queue(WRONG, WRONG, RIGHT)
    events, outcome = run(openai_server, counted, module_file, max_mutants=0, retry_temperature=0.5)
    assert outcome.status == "passed" and outcome.attempts == 3  # the repeat used up an attempt
    first, second, third = finished_attempts(events)
    assert (first.repeated, second.repeated, third.repeated) == (None, 1, None)
    assert counted.runs_of("return a - b") == 1
    # the repeat carries attempt 1's result, and says which attempt it repeated
    assert (second.verdict, second.headline, second.failed_examples) == (
        first.verdict, first.headline, first.failed_examples)
    assert result(second) == f"repeated attempt 1 (not run again): {first.headline}"
    # the request after it tells the model, with what failed, and samples differently
    asked_second, asked_third = openai_server.chat_requests[1:]
    assert NOTE not in asked_second.prompt_text
    assert f"{NOTE} ({first.headline}); try a different approach." in asked_third.task_message
    assert asked_third.body["seed"] != asked_second.body["seed"]
    assert asked_third.body["temperature"] > asked_second.body["temperature"] >= 0.5


def test_spacing_blank_lines_and_comments_do_not_make_code_new(
        openai_server: FakeOpenAI, counted: CountingSandbox, module_file: Path) -> None:
    openai_server.queue(WRONG, WRONG_RELAID, RIGHT)
    events, outcome = run(openai_server, counted, module_file, max_mutants=0)
    assert outcome.status == "passed"
    assert [attempt.repeated for attempt in finished_attempts(events)] == [None, 1, None]
    assert counted.runs_of("a-b") == 0 and counted.runs_of("a - b") == 1


def test_a_different_answer_is_run_as_usual(
        openai_server: FakeOpenAI, counted: CountingSandbox, module_file: Path) -> None:
    openai_server.queue(WRONG, WRONG_TOO, RIGHT)
    events, outcome = run(openai_server, counted, module_file, max_mutants=0, retry_temperature=0.5)
    assert outcome.status == "passed"
    assert [attempt.repeated for attempt in finished_attempts(events)] == [None, None, None]
    assert counted.runs_of("a - b") == counted.runs_of("a * b") == counted.runs_of("a + b") == 1
    assert [source for source in counted.rechecked if "a + b" in source] == counted.rechecked, \
        "only the passing body is run again, in a fresh sandbox, before it is called passed"
    assert len(counted.rechecked) == 1
    assert NOTE not in openai_server.chat_requests[2].prompt_text
    assert [request.body["temperature"] for request in openai_server.chat_requests] == [0.0, 0.5, 0.5]


def test_every_repeat_in_a_row_samples_hotter_up_to_1_and_each_request_has_its_own_seed(
        openai_server: FakeOpenAI, counted: CountingSandbox, module_file: Path) -> None:
    openai_server.queue(WRONG, WRONG, WRONG, WRONG, RIGHT)
    events, outcome = run(openai_server, counted, module_file, max_mutants=0, max_attempts=5,
                          retry_temperature=0.5)
    assert outcome.status == "passed"
    assert [attempt.repeated for attempt in finished_attempts(events)] == [None, 1, 1, 1, None]
    requests = openai_server.chat_requests
    assert [request.body["temperature"] for request in requests] == pytest.approx([0.0, 0.5, 0.8, 1.0, 1.0])
    assert [request.body["seed"] for request in requests] == [1, 2, 3, 4, 5]


def test_a_retry_temperature_above_1_is_kept_after_a_repeat(
        openai_server: FakeOpenAI, counted: CountingSandbox, module_file: Path) -> None:
    openai_server.queue(WRONG, WRONG, RIGHT)
    run(openai_server, counted, module_file, max_mutants=0, retry_temperature=1.2)
    assert [request.body["temperature"] for request in openai_server.chat_requests] == [0.0, 1.2, 1.2]


def test_a_fix_that_returns_the_current_body_repeats_it_and_is_asked_again_in_the_same_conversation(
        openai_server: FakeOpenAI, counted: CountingSandbox, module_file: Path) -> None:
    module_file.write_text(MODULE.replace("    ...\n", "    return a - b\n"))
    openai_server.queue(WRONG, RIGHT)
    events, outcome = run(openai_server, counted, module_file, max_mutants=0, from_current_body=True,
                          restart_after=2)
    assert outcome.status == "passed" and outcome.attempts == 2
    assert modes(events) == ["check", "fix", "fix"]
    check, unchanged, _ = finished_attempts(events)
    assert unchanged.repeated == 0 and unchanged.headline == check.headline
    assert result(unchanged).startswith("repeated the current body (not run again): ")
    assert counted.runs_of("return a - b") == 1
    # nothing new entered the conversation: the same turns, the last one saying the answer repeated itself
    first_fix, second_fix = openai_server.chat_requests
    assert second_fix.messages[:-1] == first_fix.messages[:-1]
    assert NOTE in second_fix.messages[-1]["content"] and NOTE not in first_fix.messages[-1]["content"]
    assert check.condensed in second_fix.messages[-1]["content"]
    assert (first_fix.body["temperature"], second_fix.body["temperature"]) == (0.0, 0.5)


def test_the_history_records_a_repeat_as_an_attempt_that_names_what_it_repeated(
        openai_server: FakeOpenAI, counted: CountingSandbox, module_file: Path) -> None:
    openai_server.queue(WRONG, WRONG, RIGHT)
    run(openai_server, counted, module_file, max_mutants=0)
    records = History().attempts(module_file, "add")
    assert [(r.attempt, r.verdict) for r in records] == [(3, "passed"), (2, "failed"), (1, "failed")]
    assert records[1].first_error_line == "repeated attempt 1 (not run again)"
    assert records[1].completion_tokens > 0  # a model call, counted as one


def test_code_the_sandbox_killed_is_run_again_when_it_comes_back(
        openai_server: FakeOpenAI, counted: CountingSandbox, module_file: Path) -> None:
    """A killed job may be the worker's fault rather than the code's: its code gets a second run."""
    dies = "```python\ndef add(a, b):\n    import os\n    os._exit(3)\n```"
    openai_server.queue(dies, dies)
    events, _ = run(openai_server, counted, module_file, max_mutants=0, max_attempts=2)
    assert [(a.verdict, a.repeated) for a in finished_attempts(events)] == [("killed", None)] * 2
    assert counted.runs_of("os._exit(3)") == 2


def test_the_bench_report_counts_a_repeat_that_differs_only_in_layout(
        openai_server: FakeOpenAI, counted: CountingSandbox) -> None:
    """The report's "retries that repeated earlier code" compares the codes the loop recorded."""
    prompt = 'def add(a, b):\n    """Add.\n\n    >>> add(1, 2)\n    3\n    """\n'
    capsule = capsule_by_qualname(prompt, "add", None)
    task = BenchTask("humaneval", "T/0", "add", prompt, hidden_test="assert add(2, 2) == 4\n",
                     reference=prompt + "    return a + b\n")
    openai_server.queue(WRONG, WRONG_RELAID, WRONG_TOO)
    with Engine(settings_for(openai_server, max_mutants=0), sandbox=counted) as engine:
        record = fold_events(task, capsule, engine.generate(capsule))
    diagnosis = diagnose([record])
    assert (diagnosis.retries, diagnosis.repeated) == (2, 1)


PASSES_ONLY_IN_A_WORN_SANDBOX = ("```python\ndef add(a, b):\n    import os\n"
                                 "    return a + b if os.getpid() > 40 else 0\n```")
"""Right only where many jobs ran before it: a stand-in for anything an earlier job could leave behind."""


def test_a_body_that_passes_only_in_the_warm_sandbox_is_not_called_passed(
        openai_server: FakeOpenAI, counted: CountingSandbox, module_file: Path) -> None:
    if counted.name != "bwrap":
        pytest.skip("needs a sandbox whose process numbers start afresh (its own pid namespace)")
    for _ in range(40):  # the warm sandbox's process numbers climb past 40
        counted.inner.run(Job(source="pass", project_root=module_file.parent))
    openai_server.queue(PASSES_ONLY_IN_A_WORN_SANDBOX)
    events, outcome = run(openai_server, counted, module_file, max_mutants=0, max_attempts=1)
    assert outcome.status != "passed"
    [attempt] = finished_attempts(events)
    assert "passed in the warm sandbox but not in a fresh one" in attempt.headline
    assert counted.runs_of("os.getpid() > 40") == 1 and len(counted.rechecked) == 1
