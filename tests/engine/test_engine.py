"""The engine: lazily started parts, clear errors for missing parts, and the embedded model."""

from __future__ import annotations

from pathlib import Path

import pytest
from pycapsule.capsule import capsule_by_qualname
from pycapsule.config import Settings
from pycapsule.engine import Engine
from pycapsule.events import AttemptStarted, Finished, ModelProgress
from pycapsule.history import History
from pycapsule.sandbox.api import SandboxUnavailable

from tests.engine.test_loop import MODULE
from tests.fakes.openai_server import FakeOpenAI


def test_check_runs_the_doctests_of_the_targets(tmp_path: Path) -> None:
    source = MODULE.replace("    ...\n", "    return a - b\n")
    with Engine(Settings()) as engine:
        result = engine.check(source, tmp_path / "mod.py", ("add",))
    assert not result.passed
    (report,) = result.functions
    assert (report.qualname, report.attempted, report.failed) == ("add", 2, 2)


def test_an_unknown_sandbox_ends_the_stream_with_one_sentence(openai_server: FakeOpenAI) -> None:
    """Settings refuse such a name (tests/config); the engine still answers in one sentence if one
    reaches it anyway."""
    settings = Settings(base_url=openai_server.base_url, model="m").model_copy(
        update={"sandbox": "no-such-backend"})
    with Engine(settings) as engine:
        events = list(engine.generate(capsule_by_qualname(MODULE, "add")))
    (finished,) = events
    assert isinstance(finished, Finished) and finished.outcome.status == "error"
    assert "no sandbox backend named 'no-such-backend'" in finished.outcome.message
    assert openai_server.chat_requests == []


def test_nothing_starts_until_it_is_needed(openai_server: FakeOpenAI,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Making an engine opens no sandbox and asks no endpoint: an unusable sandbox shows only when used."""
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    engine = Engine(Settings(base_url=openai_server.base_url, model="m", sandbox="docker"))
    assert openai_server.chat_requests == []
    with pytest.raises(SandboxUnavailable):
        engine.sandbox()
    engine.close()


@pytest.mark.model
def test_the_embedded_model_fills_a_function_when_no_endpoint_is_set(private_history: Path) -> None:
    settings = Settings(embedded_model_size="0.5b", max_attempts=3)
    assert settings.uses_embedded_model
    capsule = capsule_by_qualname(MODULE, "add", Path("/nonexistent/mod.py"))
    with Engine(settings) as engine:
        events = list(engine.generate(capsule))
    outcome = events[-1].outcome
    assert outcome.status == "passed", outcome.message
    assert any(isinstance(e, ModelProgress) and "local model" in e.progress.note for e in events)
    assert sum(isinstance(e, AttemptStarted) for e in events) == outcome.attempts
    (record, *_) = History().attempts(Path("/nonexistent/mod.py"), "add")
    assert record.model.startswith("qwen2.5-coder-0.5b") and record.completion_tokens > 0


def _package(tmp_path: Path, module: str) -> Path:
    """A project with a package `shop` holding `prices.py` (the module under test) and a sibling."""
    tmp_path.chmod(0o755)  # the sandbox reads the project as an unprivileged uid
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'shop'\n")
    package = tmp_path / "src" / "shop"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "rates.py").write_text("VAT = {'food': 0.1, 'books': 0.0}\n")
    path = package / "prices.py"
    path.write_text(module)
    return path


PRICES = '''from .rates import VAT


def _round(value):
    return round(value, 2)


def gross(net, kind):
    """The price with VAT.

    >>> gross(10, "food")
    11.0
    >>> gross(3, "books")
    3.0
    """
    ...
'''


def test_a_body_using_a_relative_import_and_a_module_helper_passes_in_a_package(
        tmp_path: Path, openai_server: FakeOpenAI) -> None:
    path = _package(tmp_path, PRICES)
    openai_server.queue("```python\ndef gross(net, kind):\n    return _round(net * (1 + VAT[kind]))\n```")
    with Engine(Settings(base_url=openai_server.base_url, model="m")) as engine:
        events = list(engine.generate(capsule_by_qualname(PRICES, "gross", path)))
    outcome = events[-1].outcome
    assert outcome.status == "passed", outcome.message
    assert len(openai_server.chat_requests) == 1


def test_an_import_error_outside_the_function_stops_before_any_model_call(
        tmp_path: Path, openai_server: FakeOpenAI) -> None:
    module = "import no_such_package_here\n" + PRICES
    path = _package(tmp_path, module)
    with Engine(Settings(base_url=openai_server.base_url, model="m")) as engine:
        events = list(engine.generate(capsule_by_qualname(module, "gross", path)))
    (finished,) = [event for event in events if isinstance(event, Finished)]
    assert finished.outcome.status == "error"
    assert "src/shop/prices.py:1: ModuleNotFoundError: No module named 'no_such_package_here'" \
        in finished.outcome.message
    assert "no model was asked" in finished.outcome.message
    assert openai_server.chat_requests == []
