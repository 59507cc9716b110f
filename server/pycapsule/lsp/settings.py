"""The server's settings: `[tool.pycapsule]` in pyproject.toml <- environment <- initializationOptions
<- `workspace/configuration` (section "pycapsule"), validated by `pycapsule.config`.

Each bad value becomes one `window/showMessage` naming the key and the default used (shown once,
not on every reload). The API key itself is never taken from the editor: editors keep settings
in plain files, so the key stays in the environment variable `apiKeyEnv` names.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pycapsule.config import LoadedSettings, load_settings, snake_case

SECTION = "pycapsule"
_EDITOR_SOURCE = "the editor's settings"


def editor_values(raw: Any) -> dict[str, Any]:
    """The pycapsule settings inside whatever the editor sent: {"pycapsule": {...}} or the table itself."""
    if not isinstance(raw, Mapping):
        return {}
    inner = raw.get(SECTION)
    return dict(inner) if isinstance(inner, Mapping) else dict(raw)


def resolve(
    root: Path | None, initialization: Mapping[str, Any], configuration: Mapping[str, Any]
) -> LoadedSettings:
    """Settings for the workspace `root`; the editor's values win over the project's file."""
    overrides = {**initialization, **configuration}
    warnings: list[str] = []
    for key in [k for k in overrides if snake_case(str(k)) == "api_key"]:
        overrides.pop(key)
        warnings.append(
            f"Setting '{key}' in {_EDITOR_SOURCE} is ignored: put the key in the environment variable "
            "that 'apiKeyEnv' names."
        )
    loaded = load_settings(root, overrides, overrides_source=_EDITOR_SOURCE)
    loaded.warnings[:0] = warnings
    return loaded
