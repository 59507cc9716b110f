"""Answers that yielded no usable function: counted, and judged the model's own or pycapsule's (issue 51)."""

from __future__ import annotations

import pytest
from pycapsule.bench.lost_answers import (
    CUT_OFF,
    MODEL,
    PYCAPSULE,
    UNKNOWN,
    definition_in,
    lost_answers,
    not_parseable,
    owner,
    scrub,
)
from pycapsule.bench.records import TaskRecord
from pycapsule.bench.report import render_markdown, summary_json
from pycapsule.bench.summary import summarize
from pycapsule.debugging.extraction import NoCodeError, extract_code

BODY = "def add(a, b):\n    return a + b\n"

# replies holding a complete definition of `add`: the extractor must find each one too
WITH_DEFINITION = {
    "plain fence": f"Here:\n```python\n{BODY}```\n",
    "nested fence in a docstring": (
        'Sure:\n````python\ndef add(a, b):\n    """Add.\n\n    ```\n    add(1, 2)\n    ```\n    """\n'
        "    return a + b\n````\nDone.\n"),
    "a second block after it": "```python\n" + BODY + "```\n```python\nprint(add(1, 2))\n```\n",
    "pycon": "```pycon\n>>> def add(a, b):\n...     return a + b\n...\n>>> add(1, 2)\n3\n```\n",
    "tildes": f"~~~python\n{BODY}~~~\n",
    "four backticks": f"````py\n{BODY}````\n",
    "unterminated fence": f"The answer:\n```python\n{BODY}",
    "bare code in prose": f"Use this:\n\n{BODY}\nIt adds.\n",
    "a docstring line at column 0": (
        'Here:\n```python\ndef add(a, b):\n    """Add\nnumbers."""\n    return a + b\n```\nok'),
    "method in a class": "```python\nclass Calc:\n    def add(self, a, b):\n        return a + b\n```\n",
}

# replies with no complete definition of `add`: the model's own
WITHOUT_DEFINITION = {
    "empty": "",
    "no code": "I cannot help with that.",
    "prose only, naming the function": "The function add(a, b) returns a + b: call add(1, 2) to get 3.",
    "cut off mid-expression": "```python\ndef add(a, b):\n    return (a +\n",
    "unterminated, cut off": "```python\ndef add(a, b):\n    total = sum([a,\n",
    "does not parse": "```python\ndef add(a, b)\n    return a + b\n```\n",
    "a stub": '```python\ndef add(a, b):\n    """Add."""\n    ...\n```\n',
    "another name": "```python\ndef plus(a, b):\n    return a + b\n```\n",
    "pycon output only": "```pycon\n>>> add(1, 2)\n3\n```\n",
}


@pytest.mark.parametrize("reply", WITH_DEFINITION.values(), ids=WITH_DEFINITION.keys())
def test_a_complete_definition_is_found_by_the_second_route_and_by_the_extractor(reply: str) -> None:
    assert definition_in(reply, "add")
    assert owner(reply, "add") == PYCAPSULE  # had the loop called it not parseable, the loss is pycapsule's
    assert "add" in extract_code(reply, "add")


@pytest.mark.parametrize("reply", WITHOUT_DEFINITION.values(), ids=WITHOUT_DEFINITION.keys())
def test_a_reply_without_a_complete_definition_is_the_models_own(reply: str) -> None:
    assert not definition_in(reply, "add")
    assert owner(reply, "add") == MODEL


def test_no_recorded_reply_is_not_judged() -> None:
    assert owner(None, "add") == UNKNOWN


def test_a_reply_the_time_limit_cut_off_before_a_definition_is_counted_apart() -> None:
    reply = WITHOUT_DEFINITION["unterminated, cut off"]
    assert owner(reply, "add", cut_off=True) == CUT_OFF
    assert owner(WITH_DEFINITION["unterminated fence"], "add", cut_off=True) == PYCAPSULE
    assert owner(reply, "add") == MODEL
    # no_code says so in its headline; signature does not, but runs nothing after the model's 300 s
    record = _record("T/3", ["no_code", "signature", "signature"],
                     ["no usable code in the answer (cut off by the time limit): x",
                      "the code does not fit `add`: The reply does not define add; it defines f",
                      "the code does not fit `add`: The reply does not define add; it defines f"],
                     ["", "", ""], {"1": reply, "2": "def f():\n    return 1\n", "3": "def f(): return 1"},
                     function="add")
    record.attempt_seconds = [300.01, 300.02, 12.5]
    assert lost_answers([record]).attempts == [("T/3", 1, CUT_OFF), ("T/3", 2, CUT_OFF), ("T/3", 3, MODEL)]


def test_what_counts_as_not_parseable() -> None:
    fits = "the code does not fit `add`: "
    assert not_parseable("no_code", "no usable code in the answer: The reply is empty")
    assert not_parseable("signature", fits + "The reply does not define add; it defines x")
    assert not_parseable("signature", fits + "The reply's code does not parse: x at line 2")
    assert not_parseable("signature", fits + "The reply's add is still a stub (pass, ...)")
    assert not not_parseable("signature", fits + "The reply's add adds the parameter c")
    assert not not_parseable("failed", "doctest failed: add(1, 2)")


def test_the_machines_folders_leave_a_reply() -> None:
    assert scrub("open('/tmp/w123/pkg/mod.py')", ["/tmp/w123/pkg"]) == "open('<folder>/mod.py')"


def _record(task_id: str, verdicts: list[str], headlines: list[str], codes: list[str],
            replies: dict[str, str] | None = None, function: str = "") -> TaskRecord:
    return TaskRecord(task_id, "k", "failed", verdicts=verdicts, headlines=headlines, codes=codes,
                      replies=replies or {}, function=function, attempts=len(verdicts), outcome="gave_up")


RECORDS = {
    # attempt 1: the model's (no definition); attempt 2 failed the examples: not counted
    "lib/m.py::Calc.add": _record("lib/m.py::Calc.add", ["no_code", "failed"],
                                  ["no usable code in the answer: x", "doctest failed"], ["I cannot.", BODY],
                                  {"1": "I cannot."}),
    # a definition the loop missed: pycapsule's
    "T/1": _record("T/1", ["signature"], ["the code does not fit `add`: The reply does not define add"],
                   ["def plus(a, b): ...\n"], {"1": WITH_DEFINITION["tildes"]}, function="add"),
    # made before replies were kept: a no_code attempt's code is its reply, unless cut at 2,000 characters
    "T/2": _record("T/2", ["no_code", "no_code", "signature"],
                   ["no usable code in the answer: x", "no usable code in the answer: y",
                    "the code does not fit `add`: The reply does not define add"],
                   ["No code here.", "x" * 2000, "def plus(a, b): return 1\n"], function="add"),
}


def test_each_run_counts_its_unparseable_answers_by_owner() -> None:
    lost = lost_answers(RECORDS.values())
    assert lost.attempts == [("lib/m.py::Calc.add", 1, MODEL), ("T/1", 1, PYCAPSULE), ("T/2", 1, MODEL),
                             ("T/2", 2, UNKNOWN), ("T/2", 3, UNKNOWN)]
    assert lost.line() == ("answers not parseable: 5, of which the model's own: 2, pycapsule's: 1, "
                           "not judged (no reply recorded): 2")
    assert lost_answers(RECORDS.values(), {"T/2": "add"}).count(UNKNOWN) == 2  # names do not make replies


def test_the_report_and_the_json_summary_show_the_count() -> None:
    manifest = {"config": {"dataset": "realcode", "generation": {"mode": "selfdebug", "max_attempts": 3}},
                "model_label": "m", "total_tasks": 3}
    run = summarize(manifest, RECORDS)
    text = render_markdown([run], [])
    assert ("answers not parseable: 5, of which the model's own: 2, pycapsule's: 1, "
            "not judged (no reply recorded): 2 (T/1 #1)") in text
    figures = summary_json([run])["runs"][0]["answers_not_parseable"]
    assert figures == {"not_parseable": 5, "model": 2, "pycapsule": 1, "no_reply_recorded": 2,
                       "pycapsule_attempts": ["T/1 #1"]}


def test_the_extractor_and_the_second_route_agree_on_the_models_own() -> None:
    """Replies without a definition: the extractor finds none of `add` either (or code that is not it)."""
    for reply in WITHOUT_DEFINITION.values():
        try:
            code = extract_code(reply, "add")
        except NoCodeError:
            continue
        assert not definition_in(code, "add")


def test_the_command_counts_a_records_file_without_reused_generations(tmp_path, capsys) -> None:
    import json
    from dataclasses import asdict, replace

    from pycapsule.bench.lost_answers import main

    path = tmp_path / "run.jsonl"
    reused = replace(RECORDS["T/1"], task_id="T/9", reused_from="other.jsonl")
    path.write_text("".join(json.dumps(asdict(r)) + "\n" for r in [*RECORDS.values(), reused]))
    assert main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "3 tasks generated; answers not parseable: 5, of which the model's own: 2, pycapsule's: 1" in out
    assert "  T/1 attempt 1: pycapsule\n" in out
