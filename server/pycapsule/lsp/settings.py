"""The server's settings, per document: `[tool.pycapsule]` in the pyproject.toml nearest the file
<- environment <- initializationOptions <- `workspace/configuration` (section "pycapsule", asked
for each workspace folder), validated by `pycapsule.config` (the CLI's lookup rule and its trust rule:
the editor's values are the user's own, so they may set the model and raise a limit; the project's file
may not choose the model, and may only lower a limit below the user's config file or the default).

Each bad value becomes one `window/showMessage` naming the key and the default used (shown once,
not on every reload). The API key itself is never taken from the editor: editors keep settings
in plain files, so the key stays in the environment variable `apiKeyEnv` names.

Two options only concern the editor and are not part of `Settings`: `diffPreview` (send the edit
with a change annotation that needs confirmation, where the client supports annotations) and
`applyEditTimeout` (seconds to wait for the editor's answer to an edit before ending the run).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pycapsule.config import LoadedSettings, Settings, load_settings, snake_case
from pycapsule.lsp import wording
from pycapsule.lsp.protocol import SECTION

_EDITOR_SOURCE = "the editor's settings"


@dataclass(frozen=True)
class EditorOptions:
    diff_preview: bool = True
    apply_edit_timeout: float = 10.0


_EDITOR_KEYS = {"diff_preview", "apply_edit_timeout"}


def editor_values(raw: Any) -> dict[str, Any]:
    """The pycapsule settings inside whatever the editor sent: {"pycapsule": {...}} or the table itself."""
    if not isinstance(raw, Mapping):
        return {}
    inner = raw.get(SECTION)
    return dict(inner) if isinstance(inner, Mapping) else dict(raw)


def editor_options(values: Mapping[str, Any], warnings: list[str]) -> EditorOptions:
    """The editor-only options among `values`; a bad one is named in `warnings` and its default used."""
    found = {snake_case(str(k)): v for k, v in values.items() if snake_case(str(k)) in _EDITOR_KEYS}
    defaults = EditorOptions()
    preview = found.get("diff_preview", defaults.diff_preview)
    if not isinstance(preview, bool):
        warnings.append(wording.diff_preview_not_bool(defaults.diff_preview))
        preview = defaults.diff_preview
    timeout = found.get("apply_edit_timeout", defaults.apply_edit_timeout)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= 3600:
        warnings.append(wording.apply_edit_timeout_out_of_range(defaults.apply_edit_timeout))
        timeout = defaults.apply_edit_timeout
    return EditorOptions(preview, float(timeout))


@dataclass
class Resolved:
    loaded: LoadedSettings
    options: EditorOptions

    @property
    def settings(self) -> Settings:
        return self.loaded.settings

    @property
    def warnings(self) -> list[str]:
        return self.loaded.warnings


def resolve(
    start: Path | None, initialization: Mapping[str, Any], configuration: Mapping[str, Any]
) -> Resolved:
    """Settings for the file or folder `start`; the editor's values win over the project's file."""
    overrides = {**initialization, **configuration}
    warnings: list[str] = []
    for key in [k for k in overrides if snake_case(str(k)) == "api_key"]:
        overrides.pop(key)
        warnings.append(wording.api_key_ignored(str(key), _EDITOR_SOURCE))
    options = editor_options(overrides, warnings)
    overrides = {k: v for k, v in overrides.items() if snake_case(str(k)) not in _EDITOR_KEYS}
    loaded = load_settings(start, overrides, overrides_source=_EDITOR_SOURCE)
    loaded.warnings[:0] = warnings
    return Resolved(loaded, options)
