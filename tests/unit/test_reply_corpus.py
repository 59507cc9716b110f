"""Every realistic reply in the corpus is repaired into a working function or rejected with a reason."""

from __future__ import annotations

import doctest

import pytest
from pycapsule.capsule import Capsule, capsule_by_qualname
from pycapsule.debugging.example_calls import strip_example_calls
from pycapsule.debugging.extraction import NoCodeError, extract_code
from pycapsule.debugging.signature import SignatureMismatch, Splice, apply_edits, splice

from tests.unit.corpus import CASES, Case


def run_pipeline(capsule: Capsule, reply: str) -> Splice:
    code = extract_code(reply, capsule.name)
    code = strip_example_calls(code, capsule.name)
    return splice(capsule, code)


def doctest_failures(source: str, capsule: Capsule) -> int:
    """Run the capsule's docstring examples against the new module (our own corpus code)."""
    namespace: dict = {"__name__": "corpus_module"}
    exec(compile(source, "corpus_module.py", "exec"), namespace)
    test = doctest.DocTestParser().get_doctest(capsule.docstring or "", namespace, capsule.qualname, None, 0)
    runner = doctest.DocTestRunner(verbose=False)
    runner.run(test, out=lambda text: None)
    return runner.failures


def assert_only_body_and_insertions_changed(capsule: Capsule, result: Splice) -> None:
    """Byte-identical outside the replaced body, except insertions above the function (imports, helpers)."""
    assert apply_edits(capsule.module_source, result.edits) == result.new_source
    replaced = [edit for edit in result.edits if edit.start != edit.end or edit.start == capsule.body_start]
    assert [(edit.start, edit.end) for edit in replaced] == [(capsule.body_start, capsule.body_end)]
    for edit in result.edits:
        if edit not in replaced:
            assert edit.start <= capsule.header_start
            assert edit.start == 0 or capsule.module_source[edit.start - 1] in "\r\n"


def assert_header_and_docstring_kept(capsule: Capsule, result: Splice) -> Capsule:
    new = capsule_by_qualname(result.new_source, capsule.qualname)
    assert new.header == capsule.header
    assert new.docstring == capsule.docstring
    if capsule.docstring_start is not None:
        old_literal = capsule.module_source[capsule.docstring_start : capsule.docstring_end]
        assert result.new_source[new.docstring_start : new.docstring_end] == old_literal
    assert new.body == result.body
    assert not new.is_stub
    return new


def test_the_corpus_is_large_and_varied() -> None:
    assert len(CASES) >= 30
    assert len({case.id for case in CASES}) == len(CASES)
    assert sum(case.rejected is not None for case in CASES) >= 8


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_reply_is_repaired_or_rejected_with_a_reason(case: Case) -> None:
    capsule = capsule_by_qualname(case.module, case.qualname)
    if case.rejected is not None:
        with pytest.raises((SignatureMismatch, NoCodeError)) as raised:
            run_pipeline(capsule, case.reply)
        reason = raised.value.reason
        assert case.rejected in reason
        assert reason.endswith(".") and "\n" not in reason
        return

    result = run_pipeline(capsule, case.reply)
    assert_only_body_and_insertions_changed(capsule, result)
    new = assert_header_and_docstring_kept(capsule, result)
    for text in case.body_has:
        assert text.replace("\n", capsule.newline) in new.body
    for text in case.body_lacks:
        assert text not in result.new_source
    for line in case.imports:
        assert result.new_source.count(line + capsule.newline) == 1
    target_at = result.new_source.index(capsule.header)
    for helper in case.helpers:
        assert 0 <= result.new_source.index(helper) < target_at
    assert doctest_failures(result.new_source, new) == 0
