"""Two bodies that both pass are shown, not silently chosen: a body an earlier run passed that still passes
the same examples and tests is run on the inputs the suggested examples come from, and every input on which
it and the written body show different things is reported with both values (and offered as an example to
confirm). The real default sandbox; the CLI in a subprocess with a private history."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pycapsule.capsule import capsule_by_qualname
from pycapsule.config import Settings
from pycapsule.events import Notice
from pycapsule.exit_codes import ExitCode
from pycapsule.history import AttemptRecord, History
from pycapsule.sandbox.api import Sandbox
from pycapsule.strength.check import assess
from pycapsule.strength.rivals import Rival, disagreements, earlier_bodies

from tests.engine.test_loop import run
from tests.engine.test_strength import generate
from tests.fakes.openai_server import FakeOpenAI

FEES = '''"""Library fees."""


def late_fee(days):
    """Half a unit a day, capped at 10.0 after 20 days.

    >>> late_fee(3)
    1.5
    """
'''
CAPPED = "def late_fee(days):\n    if days > 20:\n        return 10.0\n    return days * 0.5\n"
UNCAPPED = "def late_fee(days):\n    return days * 0.5\n"
HALVED = "def late_fee(days):\n    return days / 2\n"  # the same values as UNCAPPED on every int
WRONG = "def late_fee(days):\n    return days\n"  # fails the example
TWO_PARAMETERS = "def late_fee(days, rate):\n    return days * rate\n"  # no longer fits the header


def with_body(code: str) -> str:
    return FEES + code.split("\n", 1)[1]


def record(code: str, verdict: str = "passed", mode: str = "generate", created: float | None = None,
           path: Path | None = None) -> AttemptRecord:
    return AttemptRecord(str(path or ""), "late_fee", "run-1", 1, mode, verdict, code, "", "fake-coder",
                         0, 0, 0.0, 0.0, created if created is not None else time.time())


def capsule_in(path: Path, code: str):
    path.write_text(with_body(code))
    return capsule_by_qualname(path.read_text(), "late_fee", path)


def test_the_rivals_are_the_bodies_earlier_runs_passed_other_than_the_written_one(tmp_path: Path) -> None:
    capsule = capsule_in(tmp_path / "fees.py", UNCAPPED)
    records = [record(UNCAPPED), record(CAPPED, verdict="failed"), record(CAPPED, mode="check"),
               record(CAPPED, created=1_780_000_000.0), record(TWO_PARAMETERS),
               record(HALVED), record(CAPPED)]
    rivals = earlier_bodies(records, capsule, capsule.module_source)
    assert [("if days > 20" in r.source, "days / 2" in r.source) for r in rivals] == [(True, False),
                                                                                       (False, True)]
    assert rivals[0].label.startswith("the body a run passed on 2026-")


def test_a_passing_body_that_shows_another_value_is_reported_with_both(tmp_path: Path,
                                                                         sandbox: Sandbox) -> None:
    capsule = capsule_in(tmp_path / "fees.py", UNCAPPED)
    rival = Rival(with_body(CAPPED), "the body a run passed on 2026-12-06 14:03")
    found = disagreements(sandbox, capsule, capsule.module_source, [rival], first_calls=["late_fee(25)"],
                          examples=True, tests=None, root=tmp_path, job_timeout=10.0, probe_timeout=5.0)
    assert found and found[0].call == "late_fee(25)"
    assert (found[0].output, found[0].other_output) == ("12.5", "10.0")
    assert all(float(d.output) != float(d.other_output) and float(d.call[9:-1]) > 20 for d in found)
    assert found[0].text() == ("`late_fee(25)` is 12.5 with this body, 10.0 with the body a run passed on "
                               "2026-12-06 14:03")


def test_a_body_that_agrees_everywhere_or_fails_the_examples_now_says_nothing(tmp_path: Path,
                                                                                sandbox: Sandbox) -> None:
    capsule = capsule_in(tmp_path / "fees.py", UNCAPPED)
    rivals = [Rival(with_body(HALVED), "the same values"), Rival(with_body(WRONG), "fails the example")]
    assert disagreements(sandbox, capsule, capsule.module_source, rivals, first_calls=[], examples=True,
                         tests=None, root=tmp_path, job_timeout=10.0, probe_timeout=5.0) == ()


def test_the_strength_offers_each_disputed_input_as_an_example_with_this_bodys_value(
        tmp_path: Path, sandbox: Sandbox) -> None:
    capsule = capsule_in(tmp_path / "fees.py", UNCAPPED)
    rival = Rival(with_body(CAPPED), "the body a run passed on 2026-12-06 14:03")
    strength = assess(sandbox, capsule, capsule.module_source, Settings(), examples=True, tests=None,
                      root=tmp_path, rivals=[rival])
    assert strength is not None and strength.disagreements and strength.loose_ends
    offered = {example.call: example.output for example in strength.suggested}
    assert all(offered[d.call] == d.output for d in strength.disagreements)
    assert "another body that passes them disagrees: `late_fee(" in strength.describe()
    assert strength.as_json()["disagreements"][0]["other_output"] == "10.0"


@pytest.mark.parametrize("earlier", [CAPPED, UNCAPPED])
def test_check_strength_names_where_a_body_an_earlier_run_passed_disagrees(
        tmp_path: Path, private_history: Path, earlier: str) -> None:
    path = tmp_path / "fees.py"
    path.write_text(with_body(UNCAPPED))
    history = History(private_history)
    try:
        history.record(record(earlier, path=path.resolve()))
    finally:
        history.close()
    done = subprocess.run([sys.executable, "-m", "pycapsule", "check", f"{path}::late_fee", "--strength",
                           "--json"], capture_output=True, text=True, timeout=120)
    [function] = json.loads(done.stdout)["functions"]
    found = function["strength"]["disagreements"]
    assert done.returncode == ExitCode.OK, done.stderr
    if earlier == UNCAPPED:  # the body itself: nothing to compare
        assert found == []
        return
    assert found and {"call", "output", "other_output", "other"} == set(found[0])
    assert found[0]["other"].startswith("the body a run passed on ")
    shown = subprocess.run([sys.executable, "-m", "pycapsule", "check", f"{path}::late_fee", "--strength"],
                           capture_output=True, text=True, timeout=120)
    assert "another body that passes them disagrees: `late_fee(" in shown.stdout


def test_generate_says_where_its_body_and_the_one_an_earlier_run_passed_disagree(
        openai_server: FakeOpenAI, tmp_path: Path) -> None:
    path = tmp_path / "fees.py"
    path.write_text(FEES)
    (tmp_path / "pyproject.toml").write_text("[tool.pycapsule]\nretry_backoff = 0.01\nmodel_retries = 1\n")
    openai_server.queue(f"```python\n{CAPPED}```")
    first = json.loads(generate(openai_server, f"{path}::late_fee", "--json").stdout)["results"][0]
    assert first["status"] == "passed" and first["mutants"]["disagreements"] == []  # nothing earlier
    openai_server.queue(f"```python\n{UNCAPPED}```")
    done = generate(openai_server, f"{path}::late_fee", "--json")

    assert done.returncode == ExitCode.OK, done.stderr  # it informs; the status is the small changes' to set
    result = json.loads(done.stdout)["results"][0]
    found = result["mutants"]["disagreements"]
    assert found and all(float(d["output"]) == float(d["call"][9:-1]) / 2 and d["other_output"] == "10.0"
                         for d in found)
    assert "another body that passes them disagrees: `late_fee(" in result["message"]
    offered = {example["call"]: example["output"] for example in result["suggested_examples"]}
    assert all(offered.get(d["call"]) == d["output"] for d in found)


def test_with_second_opinions_a_fresh_answer_that_passes_too_is_compared_and_the_first_body_stays(
        openai_server: FakeOpenAI, sandbox: Sandbox, tmp_path: Path) -> None:
    path = tmp_path / "fees.py"
    path.write_text(FEES)
    openai_server.queue(f"```python\n{CAPPED}```")
    openai_server.queue(f"```python\n{UNCAPPED}```")
    events, outcome = run(openai_server, sandbox, path, "late_fee", second_opinions=1)

    assert outcome.status == "passed" and "if days > 20" in (outcome.new_source or "")  # the first body
    assert outcome.attempts == 2 and len(openai_server.chat_requests) == 2
    second = openai_server.chat_requests[1]
    assert second.body["temperature"] == 0.5  # sampled, as a restart is
    assert any(isinstance(e, Notice) and "asking for another answer to compare" in e.message for e in events)
    assert outcome.strength is not None
    [other] = {d.other for d in outcome.strength.disagreements}
    assert other == "attempt 2's answer"
    assert "another body that passes them disagrees: `late_fee(" in outcome.message
    assert "pass after 1 attempt(s)" in outcome.message


def test_second_opinions_are_not_asked_by_default_nor_for_a_body_its_examples_pin_down(
        openai_server: FakeOpenAI, sandbox: Sandbox, tmp_path: Path) -> None:
    path = tmp_path / "fees.py"
    path.write_text(FEES)
    openai_server.queue(f"```python\n{CAPPED}```")
    _, outcome = run(openai_server, sandbox, path, "late_fee")
    assert outcome.status == "passed" and len(openai_server.chat_requests) == 1
    pinned = FEES.replace("    1.5\n", "    1.5\n    >>> late_fee(1)\n    0.5\n")
    path.write_text(pinned)
    openai_server.queue(f"```python\n{UNCAPPED}```")
    _, outcome = run(openai_server, sandbox, path, "late_fee", second_opinions=2)
    assert outcome.strength is not None and not outcome.strength.survivors, outcome.strength
    assert len(openai_server.chat_requests) == 2  # one more request: this run's only one
