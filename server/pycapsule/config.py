"""Settings: defaults <- the user's config file <- `[tool.pycapsule]` in the nearest pyproject.toml
<- environment <- overrides (the command line, the editor's settings).

The trust rule: a project's file comes with the repository, so it may tune the loop but never decide
where code runs or what is sent where. The keys in `USER_ONLY_KEYS` are read only from the user's own
configuration (the config file in the platform's config dir, or $PYCAPSULE_CONFIG; the environment;
the command line; the editor's user settings); a project file that sets one gets a one-line warning
naming the key and the file, and is otherwise ignored.

Bad values never stop the tool: each one becomes a one-sentence warning naming the key, where it
came from and the default used instead. The API key is a `SecretStr`: it is never printed, logged,
sent to the sandbox or stored in the history.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from pycapsule.sandbox.roots import shared_folder


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # the model endpoint; no base_url and no api_key = the embedded local model
    model: str | None = None
    """Model name at the endpoint (None: the endpoint's first model, or the embedded model)."""
    base_url: str | None = None
    api_key: SecretStr | None = Field(default=None, repr=False)
    api_key_env: str = "OPENAI_API_KEY"
    """The environment variable that holds the API key."""
    embedded_model_size: Literal["0.5b", "1.5b"] | None = None
    """Size of the embedded model (None: its installer's default)."""
    request_timeout: float = Field(default=120.0, gt=0)
    """Seconds one model request may take."""
    model_retries: int = Field(default=3, ge=0, le=10)
    """Extra tries after a connection error, timeout, 429, 5xx or empty answer."""
    retry_backoff: float = Field(default=1.0, ge=0)
    """Seconds before the first retry; doubled each time."""
    retry_after_cap: float = Field(default=30.0, ge=0)
    """The longest Retry-After the client will honour."""
    max_tokens: int = Field(default=2048, ge=64)
    temperature: float = Field(default=0.0, ge=0, le=2)
    """Sampling temperature of the first attempt (greedy by default)."""
    retry_temperature: float = Field(default=0.5, ge=0, le=2)
    """Temperature of every later attempt: greedy retries repeat themselves."""

    # the self-debugging loop
    max_attempts: int = Field(default=5, ge=1, le=50)
    restart_after: int = Field(default=1, ge=0)
    """Failed fixes in a row before starting again from a fresh conversation (0: never a fix turn)."""
    history_window: int = Field(default=2, ge=0, le=10)
    """Earlier failed attempts shown in a fix prompt, besides the last one."""

    # the sandbox
    sandbox: str | None = None
    """Backend name (bwrap, docker, unsafe-subprocess); None picks the first that works."""
    job_timeout: float = Field(default=10.0, gt=0, le=600)

    # the editor
    diagnostics: bool = True
    """Show failing doctests as diagnostics on save."""

    @property
    def uses_embedded_model(self) -> bool:
        return self.base_url is None and self.api_key is None

    def public(self) -> dict[str, Any]:
        """The settings without the key: safe to print, log and store."""
        return self.model_dump(exclude={"api_key"})


DEFAULTS = Settings()
_KEYS = frozenset(Settings.model_fields)
USER_ONLY_KEYS = frozenset({"sandbox", "base_url", "api_key_env"})
"""Settings that widen what runs where or what is sent: never taken from a project's file."""
CONFIG_ENV = "PYCAPSULE_CONFIG"


def user_config_file(environ: Mapping[str, str] | None = None) -> Path:
    """The user's own config file: $PYCAPSULE_CONFIG, else config.toml in the platform's config dir."""
    environ = os.environ if environ is None else environ
    if environ.get(CONFIG_ENV):
        return Path(environ[CONFIG_ENV])
    return platformdirs.user_config_path("pycapsule") / "config.toml"


@dataclass
class LoadedSettings:
    settings: Settings
    warnings: list[str] = field(default_factory=list)
    pyproject: Path | None = None


def snake_case(key: str) -> str:
    """`maxAttempts`, `max-attempts` and `max_attempts` all name the same setting."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).replace("-", "_").lower()


def _folders_up(start: Path) -> list[Path]:
    """`start` (or its folder, for a file) and every folder above it."""
    here = start.resolve()
    if not here.is_dir():
        here = here.parent
    return [here, *here.parents]


def find_pyproject(start: Path | None) -> Path | None:
    """The nearest pyproject.toml at or above `start` (a file or a directory)."""
    if start is None:
        return None
    return next((f / "pyproject.toml" for f in _folders_up(start) if (f / "pyproject.toml").is_file()), None)


def project_root(path: Path | None) -> Path | None:
    """The folder the sandbox shows of `path`'s project: the nearest folder above it marked by a
    pyproject.toml or .git, else the file's own folder; never a shared folder ($HOME, /, /tmp, ...,
    see `shared_folder`): a marker there does not count, and a loose file directly in one gets None
    (the sandbox then sees only the file itself)."""
    if path is None:
        return None
    folders = [f for f in _folders_up(path) if not shared_folder(f)]
    marked = (f for f in folders if (f / "pyproject.toml").is_file() or (f / ".git").exists())
    own = _folders_up(path)[0]
    return next(marked, None if shared_folder(own) else own)


def _read_toml(path: Path, warnings: list[str]) -> dict[str, Any] | None:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        warnings.append(f"{path} could not be read ({_one_line(error)}); its settings are ignored.")
        return None


def _from_pyproject(path: Path, warnings: list[str], user_file: Path) -> dict[str, Any]:
    data = _read_toml(path, warnings)
    if data is None:
        return {}
    tool = data.get("tool", {})
    table = tool.get("pycapsule", {}) if isinstance(tool, dict) else None
    if not isinstance(table, dict):
        warnings.append(f"[tool.pycapsule] in {path} is not a table; it is ignored.")
        return {}
    for key in [k for k in table if snake_case(str(k)) in USER_ONLY_KEYS]:
        warnings.append(
            f"Setting '{key}' in {path} is ignored: a project may not choose where code runs or what "
            f"is sent; set it in your own configuration ({user_file}, the environment, the "
            "command line or your editor's user settings)."
        )
    return {k: v for k, v in table.items() if snake_case(str(k)) not in USER_ONLY_KEYS}


def _from_user_file(path: Path, warnings: list[str]) -> dict[str, Any]:
    """Top-level keys of the user's config file (a [tool.pycapsule] table there works too)."""
    if not path.is_file():
        return {}
    data = _read_toml(path, warnings)
    if data is None:
        return {}
    tool = data.get("tool")
    table = tool.get("pycapsule", data) if isinstance(tool, dict) else data
    return {k: v for k, v in table.items() if k != "tool"} if isinstance(table, dict) else {}


def _from_environment(environ: Mapping[str, str], api_key_env: str) -> dict[str, Any]:
    values: dict[str, Any] = {}
    if environ.get("OPENAI_BASE_URL"):
        values["base_url"] = environ["OPENAI_BASE_URL"]
    if environ.get(api_key_env):
        values["api_key"] = environ[api_key_env]
    if environ.get("PYCAPSULE_MODEL"):
        values["model"] = environ["PYCAPSULE_MODEL"]
    if environ.get("PYCAPSULE_SANDBOX"):
        values["sandbox"] = environ["PYCAPSULE_SANDBOX"]
    return values


def _one_line(error: object) -> str:
    return " ".join(str(error).split())


def _merge(layers: list[tuple[str, Mapping[str, Any]]], warnings: list[str]) -> dict[str, tuple[str, Any]]:
    merged: dict[str, tuple[str, Any]] = {}
    for source, values in layers:
        for raw_key, value in values.items():
            key = snake_case(str(raw_key))
            if key not in _KEYS:
                warnings.append(f"Unknown setting '{raw_key}' in {source} is ignored.")
            elif value is not None:
                merged[key] = (source, value)
    return merged


def _validate(merged: dict[str, tuple[str, Any]], warnings: list[str]) -> Settings:
    values = {key: value for key, (_, value) in merged.items()}
    while True:
        try:
            return Settings(**values)
        except ValidationError as error:
            for problem in error.errors():
                key = str(problem["loc"][0]) if problem["loc"] else ""
                if key not in values:
                    raise
                source = merged[key][0]
                shown = "(hidden)" if key == "api_key" else repr(values[key])
                default = getattr(DEFAULTS, key)
                warnings.append(
                    f"Setting '{key}' = {shown} from {source} is invalid ({problem['msg'].lower()}); "
                    f"using the default {default!r}."
                )
                values.pop(key)


def load_settings(
    start: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    *,
    overrides_source: str = "the command line",
) -> LoadedSettings:
    """Settings for a file or folder `start`; `overrides` (CLI flags, LSP options) win; None = unset."""
    environ = os.environ if environ is None else environ
    warnings: list[str] = []
    user_file = user_config_file(environ)
    user_values = _from_user_file(user_file, warnings)
    pyproject = find_pyproject(start)
    file_values = _from_pyproject(pyproject, warnings, user_file) if pyproject else {}
    override_values = dict(overrides or {})
    # the key's variable name may itself be configured (by the user only), so find it before
    # reading the environment
    key_env = next(
        (str(v) for layer in (override_values, user_values) for k, v in layer.items()
         if snake_case(str(k)) == "api_key_env" and isinstance(v, str) and v),
        DEFAULTS.api_key_env,
    )
    if "api_key" in {snake_case(str(k)) for k in user_values}:
        warnings.append(
            f"Setting 'api_key' in {user_file} is ignored: keep secrets out of files and set ${key_env}."
        )
        user_values = {k: v for k, v in user_values.items() if snake_case(str(k)) != "api_key"}
    layers: list[tuple[str, Mapping[str, Any]]] = [
        (str(user_file), user_values),
        (str(pyproject) if pyproject else "pyproject.toml", file_values),
        ("the environment", _from_environment(environ, key_env)),
        (overrides_source, override_values),
    ]
    if "api_key" in {snake_case(str(k)) for k in file_values}:
        warnings.append(
            f"Setting 'api_key' in {pyproject} is ignored: keep secrets out of files and set ${key_env}."
        )
        file_values = {k: v for k, v in file_values.items() if snake_case(str(k)) != "api_key"}
        layers[1] = (layers[1][0], file_values)
    settings = _validate(_merge(layers, warnings), warnings)
    return LoadedSettings(settings, warnings, pyproject)
