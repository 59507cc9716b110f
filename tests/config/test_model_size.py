"""The embedded model's size is one setting, `embedded_model_size`, with one documented variable
($PYCAPSULE_EMBEDDED_MODEL_SIZE, as every setting's): `pycapsule config` shows the size a run uses and where
it came from (never "none" while 1.5b is used), and the older spelling $PYCAPSULE_MODEL_SIZE still works
with a warning naming the variable to use (issue 49 item 5 f). Each embedded model may carry defaults of its
own, measured for it, used where nothing else sets the key (issue 66 item 3)."""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from pycapsule.config import env_names, load_settings
from pycapsule.embedded_model.catalog import CATALOG, SIZES, resolve_size
from pycapsule.embedded_model.which import endpoint_description

from tests.checkout import ROOT
from tests.config.test_cli import pycapsule

DEPRECATED = "$PYCAPSULE_MODEL_SIZE is deprecated"


def test_config_shows_the_size_used_and_its_source(tmp_path: Path, clean_env: dict[str, str]) -> None:
    shown = {}
    for name, environ in (("default", {}), ("documented", {"PYCAPSULE_EMBEDDED_MODEL_SIZE": "0.5b"}),
                          ("old", {"PYCAPSULE_MODEL_SIZE": "0.5b"})):
        done = pycapsule("config", str(tmp_path), "--json", env={**clean_env, **environ})
        assert done.returncode == 0, done.stderr
        doc = json.loads(done.stdout)
        shown[name] = (doc["settings"]["embedded_model_size"], doc["endpoint"], doc["warnings"])
    value, endpoint, warnings = shown["default"]
    assert (value["value"], value["source"], warnings) == ("1.5b", "default", [])
    assert endpoint == "embedded Qwen2.5-Coder 1.5B"
    value, endpoint, warnings = shown["documented"]
    assert (value["value"], value["source"], warnings) == ("0.5b", "$PYCAPSULE_EMBEDDED_MODEL_SIZE", [])
    assert value["env"] == ["PYCAPSULE_EMBEDDED_MODEL_SIZE"] and endpoint == "embedded Qwen2.5-Coder 0.5B"
    value, endpoint, [warning] = shown["old"]
    assert (value["value"], value["source"]) == ("0.5b", "$PYCAPSULE_MODEL_SIZE")
    assert warning.startswith(DEPRECATED) and "$PYCAPSULE_EMBEDDED_MODEL_SIZE" in warning
    assert endpoint == "embedded Qwen2.5-Coder 0.5B"


def test_the_table_says_the_size_not_none(tmp_path: Path, clean_env: dict[str, str]) -> None:
    done = pycapsule("config", str(tmp_path), env=clean_env)
    [row] = [line.split() for line in done.stdout.splitlines() if line.startswith("embedded_model_size")]
    assert row == ["embedded_model_size", "1.5b", "default"]


def test_the_old_spelling_warns_once_and_loses_to_the_documented_one(tmp_path: Path) -> None:
    loaded = load_settings(tmp_path, None, {"PYCAPSULE_MODEL_SIZE": "1.5b",
                                            "PYCAPSULE_EMBEDDED_MODEL_SIZE": "0.5b"})
    assert loaded.settings.embedded_model_size == "0.5b"
    assert loaded.sources["embedded_model_size"] == "$PYCAPSULE_EMBEDDED_MODEL_SIZE"
    assert [w for w in loaded.warnings if w.startswith(DEPRECATED)] != []
    assert len([w for w in loaded.warnings if "PYCAPSULE_MODEL_SIZE" in w]) == 2  # deprecated; given twice
    same = load_settings(tmp_path, None, {"PYCAPSULE_MODEL_SIZE": "0.5b",
                                          "PYCAPSULE_EMBEDDED_MODEL_SIZE": "0.5b"})
    assert [w for w in same.warnings if "PYCAPSULE_MODEL_SIZE" in w] == [same.warnings[0]]
    assert same.warnings[0].startswith(DEPRECATED)


def test_the_old_spelling_is_not_documented_as_a_settings_variable() -> None:
    assert env_names("embedded_model_size") == ("PYCAPSULE_EMBEDDED_MODEL_SIZE",)


@pytest.mark.parametrize(("text", "size"), [("0.5B", "0.5b"), (" 1.5b ", "1.5b")])
def test_a_size_is_read_as_the_catalog_names_it(tmp_path: Path, text: str, size: str) -> None:
    loaded = load_settings(tmp_path, None, {"PYCAPSULE_EMBEDDED_MODEL_SIZE": text})
    assert (loaded.settings.embedded_model_size, loaded.warnings) == (size, [])
    assert endpoint_description(loaded.settings) == f"embedded Qwen2.5-Coder {size.upper()}"


def test_an_unknown_size_is_one_warning_and_the_default(tmp_path: Path) -> None:
    loaded = load_settings(tmp_path, None, {"PYCAPSULE_EMBEDDED_MODEL_SIZE": "13b"})
    assert loaded.settings.embedded_model_size == "1.5b"
    assert loaded.warnings == ["Setting 'embedded_model_size' = '13b' from $PYCAPSULE_EMBEDDED_MODEL_SIZE is "
                               "invalid (must be '0.5b', '1.5b', '3b' or '7b'); using the default '1.5b'."]


def test_the_sizes_offered_everywhere_are_the_catalogs() -> None:
    """The setting, `model install|serve --size`, VS Code's choices and the docs' table: one list."""
    from pycapsule.commands import model

    assert SIZES == ("0.5b", "1.5b", "3b", "7b")
    for size in SIZES:
        assert load_settings(None, {"embedded_model_size": size}, {}).warnings == []
    parser = argparse.ArgumentParser()
    model.register(parser.add_subparsers())
    for action in ("install", "serve"):
        with pytest.raises(SystemExit):
            parser.parse_args(["model", action, "--size", "13b"])
        assert parser.parse_args(["model", action, "--size", "7b"]).size == "7b"
    manifest = json.loads((ROOT / "vscode-client" / "package.json").read_text(encoding="utf-8"))
    choices = manifest["contributes"]["configuration"]["properties"]["pycapsule.embeddedModelSize"]["enum"]
    assert choices == [*SIZES, None]
    docs = (ROOT / "docs" / "generate.md").read_text(encoding="utf-8")
    [row] = [line for line in docs.splitlines() if line.startswith("| `embedded_model_size` |")]
    assert re.findall(r"`(\d[\d.]*b)`", row.split("|")[3]) == list(SIZES)


def test_a_caller_without_settings_reads_both_spellings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYCAPSULE_EMBEDDED_MODEL_SIZE", raising=False)
    monkeypatch.setenv("PYCAPSULE_MODEL_SIZE", "0.5b")
    assert resolve_size(None) == "0.5b"
    monkeypatch.setenv("PYCAPSULE_EMBEDDED_MODEL_SIZE", "1.5b")
    assert resolve_size(None) == "1.5b"


@pytest.fixture
def prefilling_1_5b(monkeypatch: pytest.MonkeyPatch) -> None:
    """The 1.5B model measured best with its first answer prefilled (a default of its own)."""
    monkeypatch.setitem(CATALOG, "1.5b", replace(CATALOG["1.5b"], defaults=(("answer_prefill", "embedded"),)))


@pytest.mark.usefixtures("prefilling_1_5b")
def test_the_embedded_models_own_defaults_apply_where_nothing_is_set_and_say_so(tmp_path: Path) -> None:
    loaded = load_settings(tmp_path, None, {})
    assert loaded.settings.answer_prefill == "embedded"
    assert loaded.sources["answer_prefill"] == "the embedded 1.5b model's default"
    other = load_settings(tmp_path, None, {"PYCAPSULE_EMBEDDED_MODEL_SIZE": "0.5b"})
    assert (other.settings.answer_prefill, other.sources["answer_prefill"]) == ("never", "default")


@pytest.mark.usefixtures("prefilling_1_5b")
def test_what_the_user_or_the_project_sets_beats_the_models_default(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.pycapsule]\nanswer_prefill = "never"\n')
    loaded = load_settings(tmp_path, None, {})
    assert loaded.settings.answer_prefill == "never"
    assert loaded.sources["answer_prefill"] == str(tmp_path / "pyproject.toml")
    flagged = load_settings(tmp_path / "elsewhere", {"answer_prefill": "always"}, {})
    assert flagged.settings.answer_prefill == "always"


@pytest.mark.usefixtures("prefilling_1_5b")
def test_a_models_defaults_do_not_follow_the_user_to_an_endpoint(tmp_path: Path) -> None:
    loaded = load_settings(tmp_path, None, {"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"})
    assert (loaded.settings.answer_prefill, loaded.sources["answer_prefill"]) == ("never", "default")


def test_the_1_5b_model_is_given_the_head_it_repeats_by_default_the_others_are_not(tmp_path: Path) -> None:
    """docs/results/fast-forward-echo: measured on the 1.5B only."""
    loaded = load_settings(tmp_path, None, {})
    assert loaded.settings.embedded_model_size == "1.5b"
    assert (loaded.settings.fast_forward_echo, loaded.sources["fast_forward_echo"]) == (
        "embedded", "the embedded 1.5b model's default")
    smaller = load_settings(tmp_path, None, {"PYCAPSULE_EMBEDDED_MODEL_SIZE": "0.5b"})
    assert (smaller.settings.fast_forward_echo, smaller.sources["fast_forward_echo"]) == ("never", "default")
