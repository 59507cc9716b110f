import json
import re
import subprocess
from pathlib import Path

import pytest
from pycapsule import prompts
from pycapsule.bench import identity
from pycapsule.config import Settings
from pycapsule.context import DEFAULT_BUDGET_CHARS
from pycapsule.debugging import answer_watch, iterator_examples

from tests.bench.published import RESULTS


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "server").mkdir()
    (tmp_path / "server" / "code.py").write_text("x = 1\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    monkeypatch.setattr(identity, "_CHECKOUT", tmp_path)
    return tmp_path


def test_a_run_names_the_commit_of_its_code(checkout: Path) -> None:
    (checkout / "results.jsonl").write_text("{}\n")  # what a run writes is not its code
    assert identity.git_commit() == git(checkout, "rev-parse", "--short", "HEAD")


def test_code_changed_since_the_commit_is_marked_dirty(checkout: Path) -> None:
    (checkout / "server" / "code.py").write_text("x = 2\n")
    assert identity.git_commit() == git(checkout, "rev-parse", "--short", "HEAD") + "-dirty"


def test_no_checkout_names_no_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(identity, "_CHECKOUT", tmp_path)
    assert identity.git_commit() is None


def test_how_module_context_is_chosen_is_part_of_the_prompt_fingerprint(
        monkeypatch: pytest.MonkeyPatch) -> None:
    before = identity.prompt_fingerprint()
    real = identity.module_context
    monkeypatch.setattr(identity, "module_context", lambda capsule: real(capsule).replace("_room", "_space"))
    assert identity.prompt_fingerprint() != before


@pytest.mark.parametrize("rule", [r"(?!)", r""], ids=["no context goes first", "every context goes first"])
def test_where_the_module_context_goes_is_part_of_the_prompt_fingerprint(
        monkeypatch: pytest.MonkeyPatch, rule: str) -> None:
    before = identity.prompt_fingerprint()
    monkeypatch.setattr(prompts, "_DEFINITION_LINE", re.compile(rule))
    assert identity.prompt_fingerprint() != before


def test_iterator_examples_are_part_of_a_self_debugging_runs_identity_only_when_they_are_run() -> None:
    """Runs made before the setting existed (no iterator examples) keep their identity, so they still
    resume; a direct run is one attempt judged by nothing but its hidden tests, so it is unchanged."""
    off = identity.generation_settings(Settings(iterator_examples=False), "selfdebug")
    on = identity.generation_settings(Settings(), "selfdebug")
    assert "iterator_examples" not in off
    assert on == {**off, "iterator_examples": identity.iterator_fingerprint()}
    assert identity.first_attempt_settings({"model": "m", **on}) == identity.first_attempt_settings(
        {"model": "m", **off})
    assert "iterator_examples" not in identity.generation_settings(Settings(), "direct")


def test_the_iterator_fingerprint_follows_which_arguments_become_iterators(
        monkeypatch: pytest.MonkeyPatch) -> None:
    before = identity.iterator_fingerprint()
    monkeypatch.setattr(iterator_examples, "ITERABLE_NAMES", frozenset({"items"}))
    assert identity.iterator_fingerprint() != before


def test_answer_prefill_is_part_of_a_runs_identity_only_when_it_is_used() -> None:
    """Runs made before the setting existed (never prefilled) keep their identity, so they still resume."""
    never = identity.generation_settings(Settings(), "selfdebug")
    assert "answer_prefill" not in never
    assert never == identity.generation_settings(Settings(answer_prefill="never"), "selfdebug")
    embedded = identity.generation_settings(Settings(answer_prefill="embedded"), "selfdebug")
    assert embedded["answer_prefill"].startswith("embedded ")
    first_attempts = [identity.first_attempt_settings({"model": "m", **g}) for g in (never, embedded)]
    assert first_attempts[0] != first_attempts[1], "a direct run never reuses the other's answers"


def test_when_answers_stop_being_read_is_part_of_every_runs_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs made before the answer watch read every answer to its end: a run now never resumes them."""
    for mode in ("direct", "selfdebug"):
        watched = identity.generation_settings(Settings(), mode)
        monkeypatch.setattr(answer_watch, "COPIED_LINES", answer_watch.COPIED_LINES + 1)
        other = identity.generation_settings(Settings(), mode)
        monkeypatch.undo()
        assert watched["answer_ends"] != other["answer_ends"]
        assert identity.first_attempt_settings({"model": "m", **watched}) != identity.first_attempt_settings(
            {"model": "m", **other})


def test_a_run_prefilling_only_its_first_answer_is_not_one_that_prefilled_every_answer() -> None:
    """Self-debugging runs made when every answer was prefilled are not resumed; their first attempts are the
    same request, so a direct run still takes them."""
    direct = identity.generation_settings(Settings(answer_prefill="embedded"), "direct")
    selfdebug = identity.generation_settings(Settings(answer_prefill="embedded"), "selfdebug")
    assert selfdebug["prefilled_answers"] == "first" and "prefilled_answers" not in direct
    assert "prefilled_answers" not in identity.generation_settings(Settings(), "selfdebug")
    assert (identity.first_attempt_settings({"model": "m", **direct})
            == identity.first_attempt_settings({"model": "m", **selfdebug}))


def test_the_context_chars_are_part_of_a_runs_identity_unless_they_are_those_of_older_runs() -> None:
    """Runs made before the setting existed (4,000 characters, the default then) keep their identity, and a
    run with today's default never takes their answers."""
    before = identity.generation_settings(Settings(context_chars=4000), "direct")
    assert "context_chars" not in before
    default = identity.generation_settings(Settings(), "direct")
    assert default == {**before, "context_chars": DEFAULT_BUDGET_CHARS}
    shorter = identity.generation_settings(Settings(context_chars=1500), "direct")
    assert shorter == {**before, "context_chars": 1500}
    first = [identity.first_attempt_settings({"model": "m", **g}) for g in (before, default, shorter)]
    assert first[0] != first[1] != first[2] != first[0], "a direct run never reuses another's answers"


def test_the_prompt_cache_is_part_of_a_runs_identity_only_where_it_can_change_an_answer() -> None:
    """Only sampled requests use it: the retries of self-debugging, and a first attempt only when it is
    sampled. Runs made before the setting existed (no cache) keep their identity."""
    never, sampled = (identity.generation_settings(Settings(prompt_cache=value), "selfdebug")
                      for value in ("never", "sampled"))
    assert "prompt_cache" not in never
    assert sampled == {**never, "prompt_cache": "sampled"}
    first_attempts = [identity.first_attempt_settings({"model": "m", **g}) for g in (never, sampled)]
    assert first_attempts[0] == first_attempts[1], "a greedy attempt 1 is the same request either way"
    assert "prompt_cache" not in identity.generation_settings(Settings(prompt_cache="sampled"), "direct")
    hot = identity.generation_settings(Settings(prompt_cache="sampled", temperature=0.7), "direct")
    assert identity.first_attempt_settings({"model": "m", **hot})["prompt_cache"] == "sampled"


def test_a_run_whose_copying_answers_go_on_from_the_head_is_not_one_made_before_they_did() -> None:
    """The published fast-forward run (2026-12-07) ended a copying answer: a run now does not resume it."""
    published = RESULTS / "fast-forward-echo" / "qwen2.5-coder-1.5b" / "realcode-selfdebug-9b38ad5565.json"
    before = json.loads(published.read_text())["config"]["generation"]["fast_forward_echo"]
    now = identity.generation_settings(Settings(fast_forward_echo="embedded"), "selfdebug")
    assert before == "embedded 3/80" and now["fast_forward_echo"] != before
