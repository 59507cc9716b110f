"""docs/generate.md holds the one table of settings: every setting, its variable, its default and
whether a project's file may set it (or only lower it), as the code has them."""

from __future__ import annotations

from pathlib import Path

import pytest
from pycapsule.config import DEFAULTS, LIMIT_KEYS, USER_ONLY_KEYS, Settings, env_names

DOCS = Path(__file__).parents[2] / "docs" / "generate.md"


def table_rows() -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    lines = DOCS.read_text(encoding="utf-8").split("## Settings", 1)[1].splitlines()
    for line in lines:
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 6:
            rows[cells[0].strip("`")] = cells
    return rows


def shown_default(value: object) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def test_every_setting_has_a_row() -> None:
    assert set(table_rows()) == set(Settings.model_fields)


@pytest.mark.parametrize("key", sorted(Settings.model_fields))
def test_each_row_says_what_the_code_does(key: str) -> None:
    _, variable, _, default, from_project, _ = table_rows()[key]
    for name in env_names(key):
        assert f"`{name}`" in variable
    assert default.strip("`").startswith(shown_default(getattr(DEFAULTS, key)))
    assert from_project.startswith("no") == (key in USER_ONLY_KEYS or key == "api_key")
    assert from_project.startswith("lower only") == (key in LIMIT_KEYS)
