"""Settings: defaults <- the user's config file <- `[tool.pycapsule]` in the nearest pyproject.toml
<- the environment (`PYCAPSULE_<NAME>` for every setting) <- overrides (the command line, the
editor's settings). The table of every setting, its variable, type and default: docs/generate.md.

The trust rule: a project's file comes with the repository, so it may tune the loop but never decide
where code runs, what is sent where, which model answers, or how much of the user's money and time a
run may spend. The keys in `USER_ONLY_KEYS` are read only from the user's own configuration (the
config file in the platform's config dir, or $PYCAPSULE_CONFIG; the environment; the command line;
the editor's settings); a project file that sets one gets a one-line warning naming the key and the
file, and is otherwise ignored. The limits in `LIMIT_KEYS` a project's file may lower but not raise:
a value above the user's own (their config file's, else the default) is replaced by it, with a
one-line warning naming the key, the file and the value used.

One validation rule, `Settings` itself (strict: `true` is not a number, no infinities or NaN; the
environment's text is read as the setting's type). A bad value from a file, the environment or the
editor never stops the tool: it becomes one warning naming the key, its source and the value used
instead (the next source's, else the default). The command line is stricter: `flag_type` turns a
bad flag into a usage error. One exception keeps code from going somewhere unexpected: an invalid
`base_url` is kept as it is, so the model is never asked elsewhere (`endpoint_problem` says why).
The API key is a `SecretStr`: it is never printed, logged, sent to the sandbox or stored.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import tomllib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import platformdirs
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from pycapsule.embedded_model.catalog import CATALOG, DEFAULT_SIZE, OLD_SIZE_ENV, SIZES
from pycapsule.redact import mask_credentials
from pycapsule.sandbox.roots import shared_folder

SandboxName = Literal["bwrap", "docker", "unsafe-subprocess"]
EMBEDDED = "embedded"
"""`base_url = "embedded"` (`PYCAPSULE_BASE_URL=embedded`): the embedded local model, even with an API key
exported for another tool (the key is then not used)."""


def base_url_problem(url: str) -> str | None:
    """Why `url` cannot be an endpoint's base URL (None: it can)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        return f"it is not a URL ({error})"
    if parts.scheme not in ("http", "https"):
        return "it must start with http:// or https://"
    if not parts.hostname:
        return "it names no host"
    if port == 0:
        return "port 0 is not a port"
    return None


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    # the model endpoint; no base_url and no api_key = the embedded local model
    model: str | None = Field(default=None, min_length=1)
    """Model name at the endpoint (None: the embedded model, or the endpoint's first chat model:
    `model_choice`)."""
    base_url: str | None = None
    """An OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1, or "embedded" (None: the embedded
    model, or api.openai.com when an API key is set)."""
    api_key: SecretStr | None = Field(default=None, repr=False)
    api_key_env: str = Field(default="OPENAI_API_KEY", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    """The environment variable that holds the API key."""
    embedded_model_size: str = DEFAULT_SIZE
    """Size of the embedded model: one of `catalog.SIZES` ("tiny": random weights, for tests)."""
    embedded_model_file: str | None = None
    """The absolute path of the user's own GGUF file, run as the embedded model instead of a catalog size:
    nothing is downloaded, no digest pins it (docs/model.md). None: the catalog's `embedded_model_size`."""
    model_idle_timeout: float = Field(default=900.0, gt=0, le=86400)
    """Seconds the user's shared embedded model server waits without a request before it stops (read from
    the user's own configuration when the server starts; docs/model.md)."""
    model_gpu_layers: int = Field(default=0, ge=0, le=1000)
    """Layers of the embedded model llama.cpp offloads to a GPU where the installed runtime reports a GPU
    device (0: none; more than the model has: all). Without a GPU device the model runs on the CPU and
    `pycapsule model status` says so. Read from the user's own configuration when the server starts."""
    request_timeout: float = Field(default=300.0, gt=0, le=3600)
    """Seconds one attempt may wait for the model's whole answer, retries and their waits included."""
    inactivity_timeout: float = Field(default=60.0, gt=0, le=3600)
    """Seconds without a streamed piece (the first one included) before the model counts as hung."""
    stall_notice: float = Field(default=30.0, gt=0, le=3600)
    """Seconds a model request may make no progress before its progress says why (docs/generate.md)."""
    model_retries: int = Field(default=3, ge=0, le=10)
    """Extra tries after a connection error, 429, 5xx or empty answer (within request_timeout)."""
    retry_backoff: float = Field(default=1.0, ge=0, le=600)
    """Seconds before the first retry; doubled each time."""
    retry_after_cap: float = Field(default=30.0, ge=0, le=3600)
    """The longest Retry-After the client will honour."""
    max_tokens: int = Field(default=2048, ge=64, le=1_000_000)
    temperature: float = Field(default=0.0, ge=0, le=2)
    """Sampling temperature of the first attempt (greedy by default)."""
    retry_temperature: float = Field(default=0.5, ge=0, le=2)
    """Temperature of every later attempt: greedy retries repeat themselves."""
    answer_prefill: Literal["never", "embedded", "always"] = "never"
    """Start a stub's first answer with the function's signature and docstring, so the model writes only the
    body (fewer tokens, so faster); retries write whole answers: "embedded" for the embedded model only,
    "always" for any endpoint that continues a final assistant message (llama.cpp's server does; OpenAI's
    API does not)."""
    fast_forward_echo: Literal["never", "embedded", "always"] = "never"
    """An answer that starts by repeating the function's signature and docstring is given the rest of them
    to read instead of writing it (reading is ~5 x faster): "embedded" for the embedded model only,
    "always" for any endpoint that continues a final assistant message (docs/generate.md)."""
    context_chars: int = Field(default=2000, ge=0, le=100_000)
    """Characters of the module's context (imports, helpers, the class) the prompt shows, about 4 a token: on
    the embedded model reading them is most of a first attempt's wait; 0 shows none (docs/generate.md)."""
    prompt_cache: Literal["never", "sampled"] = "sampled"
    """The embedded model: "sampled" lets a sampled request (a retry, at `retry_temperature` > 0) reuse the
    prompt the model read for the request before, so a retry reads only what it adds to the first
    request's prompt. A greedy request takes from the cache only what was read ahead for it (`read_ahead`),
    in the batches a fresh read makes: a greedy answer depends on its prompt alone.
    A cached retry is another draw of the same sampling (paired runs: the same pass@1, docs/results)."""

    read_ahead: bool = True
    """The language server reads a stub's first request into the embedded model's cache while the user
    pauses on the stub (the model already running), so a run started there writes sooner; the answer is the
    same (docs/results/read-ahead)."""

    # the self-debugging loop
    # The defaults are the settings measured best (docs/results/README.md): restarts only, at most 3 attempts.
    max_attempts: int = Field(default=3, ge=1, le=50)
    restart_after: int = Field(default=0, ge=0, le=50)
    """Failed fixes in a row before starting again from a fresh conversation (0: never a fix turn, every
    retry is a fresh conversation that names the earlier failures)."""
    fix_repeated_failures: bool = False
    """A fresh conversation whose answer fails as an earlier attempt did (the same headline) is followed by
    one fix turn of that answer (its code and condensed failure) instead of yet another fresh one: a restart
    names an earlier failure in one line, which a small model may not get past. Off until measured (issue
    66)."""
    history_window: int = Field(default=2, ge=0, le=10)
    """Earlier failed attempts shown in a fix prompt, besides the last one."""
    second_opinions: int = Field(default=0, ge=0, le=3)
    """Fresh answers asked for a passing body its examples and tests leave open (a change of it still
    passes, or an input its annotations admit raises), within `max_attempts`: where one that passes as well
    shows something else, the result says so with both values (`strength.rivals`). The body that passed
    first stays the result. 0: none (the default, not measured yet). Yours only: a project's file cannot
    make its runs ask for more answers."""
    iterator_examples: bool = True
    """Run the examples again with an iterator where the function takes any iterable (a parameter named
    `iterable` or annotated `Iterable[...]`), and ask again when only those fail: a body that indexes or
    measures a list passes list examples and fails on generators. Judges only the model's answers; a
    body that passes its examples but not these is still applied when no answer does better."""

    max_mutants: int = Field(default=60, ge=0, le=500)
    """Small changes (mutants: `pycapsule.strength`) of a passing body run against its examples and tests, to
    tell how tightly they pin it down; 0 turns the check off."""
    min_caught: float = Field(default=0.0, ge=0, le=1)
    """A body whose examples and tests pass is "passed" only when they catch at least this share of its
    mutants; below it, "passed_loosely": kept, with the changes that survive and examples that would catch
    them. 0 (the default, measured: docs/results/strength) never withholds "passed"; what survives is said."""
    strict_signatures: bool = False
    """A passing body that raises a type error on an input its annotations admit (the signature probes,
    `pycapsule.strength.probes`) is "passed_loosely" rather than "passed". Off by default, measured
    (docs/results/probes): on the published runs' bodies such errors came from loose annotations, not wrong
    bodies; the input is always said and offered as an example to confirm."""

    # the sandbox
    sandbox: SandboxName | None = None
    """Backend name (bwrap, docker, unsafe-subprocess); None picks the first that works."""
    job_timeout: float = Field(default=10.0, gt=0, le=600)
    project_tests: bool = True
    """Run the project's own tests of a function (pytest, in the sandbox) on every body whose examples pass:
    "passed" then means its examples and those tests pass."""
    test_timeout: float = Field(default=60.0, gt=0, le=1800)
    """Seconds one run of a function's selected tests may take."""
    python: str | None = None
    """The interpreter whose packages the doctests import (an editor's selected environment); the
    bwrap and unsafe-subprocess sandboxes run it. None: the interpreter running pycapsule. Docker
    always uses its image's Python."""

    # the editor
    diagnostics: bool = True
    """Show failing doctests as diagnostics on save."""

    @field_validator("base_url")
    @classmethod
    def _usable_base_url(cls, url: str | None) -> str | None:
        problem = base_url_problem(url) if url is not None and url != EMBEDDED else None
        if problem:
            raise ValueError(problem)
        return url

    @model_validator(mode="before")
    @classmethod
    def _no_key_for_the_embedded_model(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("base_url") == EMBEDDED and data.get("api_key") is not None:
            return {**data, "api_key": None}
        return data

    def __repr_args__(self) -> Any:
        for name, value in super().__repr_args__():
            yield name, mask_credentials(value) if name == "base_url" and value else value

    @field_validator("embedded_model_size")
    @classmethod
    def _a_known_size(cls, size: str) -> str:
        if size.strip().lower() not in CATALOG:
            *others, last = (repr(known) for known in SIZES)
            raise ValueError(f"must be {', '.join(others)} or {last}")
        return size.strip().lower()

    @field_validator("embedded_model_file")
    @classmethod
    def _an_absolute_path(cls, value: str | None) -> str | None:
        # whether it is a readable GGUF file is said when the model starts (own_file.py), not here: a file
        # missing for a moment must not silently turn into a download of the default model
        if value is not None and not os.path.isabs(value):
            raise ValueError("it must be the absolute path of a GGUF file")
        return value

    @field_validator("python")
    @classmethod
    def _an_interpreter(cls, value: str | None) -> str | None:
        if value is not None and not (os.path.isabs(value) and os.path.isfile(value)
                                      and os.access(value, os.X_OK)):
            raise ValueError("it must be the absolute path of a Python executable")
        return value

    @property
    def uses_embedded_model(self) -> bool:
        return self.base_url == EMBEDDED or (self.base_url is None and self.api_key is None)

    def public(self) -> dict[str, Any]:
        """The settings without the key and with the URL's credentials masked: safe to print, log, store."""
        values = self.model_dump(exclude={"api_key"})
        if values["base_url"]:
            values["base_url"] = mask_credentials(values["base_url"])
        return values


def endpoint_problem(settings: Settings) -> str | None:
    """Why no model may be asked with these settings (an invalid base_url kept on purpose), else None."""
    if settings.base_url is None or settings.base_url == EMBEDDED:
        return None
    problem = base_url_problem(settings.base_url)
    if problem is None:
        return None
    return (f"the configured base_url {mask_credentials(settings.base_url)!r} cannot be used: {problem}; "
            "fix it (see `pycapsule config`)")


DEFAULTS = Settings()
_KEYS = frozenset(Settings.model_fields)
_WHERE_CODE_GOES = "a project may not choose where code runs or what is sent"
_THE_MODEL = "the model is yours to choose, not a project's"
_A_FILE_LOADED = "a project may not choose a file for your model server to load"
_YOUR_SERVER = "the shared model server is yours, not a project's"
_USER_ONLY_REASONS = {
    "sandbox": _WHERE_CODE_GOES, "base_url": _WHERE_CODE_GOES, "api_key_env": _WHERE_CODE_GOES,
    "python": _WHERE_CODE_GOES, "model": _THE_MODEL, "embedded_model_size": _THE_MODEL,
    "embedded_model_file": _A_FILE_LOADED,
    "model_idle_timeout": _YOUR_SERVER,
    "model_gpu_layers": _YOUR_SERVER,
    "second_opinions": "the model calls a run spends beyond what it needs are yours to allow",
}
USER_ONLY_KEYS = frozenset(_USER_ONLY_REASONS)
"""Settings that widen what runs where or what is sent, or choose the model: never taken from a
project's file."""
LIMIT_KEYS = frozenset({"max_attempts", "max_tokens", "model_retries", "history_window", "request_timeout",
                        "inactivity_timeout", "retry_backoff", "retry_after_cap", "job_timeout",
                        "test_timeout"})
"""What a run may spend of the user's money (requests, tokens sent and received) or time (waits,
timeouts): a project's file may lower these, never raise them above the user's own value."""
CONFIG_ENV = "PYCAPSULE_CONFIG"
ENV_PREFIX = "PYCAPSULE_"
ENV_ALIASES: dict[str, tuple[str, ...]] = {
    "base_url": ("OPENAI_BASE_URL",),  # the openai client's own variable
}
"""Further variables read for a setting, below `PYCAPSULE_<NAME>`."""
DEPRECATED_ENV: dict[str, str] = {
    "embedded_model_size": OLD_SIZE_ENV,
}
"""Older spellings still read for a setting, below the documented ones, each with a warning naming the
variable to use instead (never listed in the docs' table: `env_names` leaves them out)."""
FLAGS = {"sandbox": "--backend"}
"""Command-line flags whose name is not `--<name-with-dashes>`."""
DEFAULT_SOURCE = "default"


def env_names(key: str) -> tuple[str, ...]:
    """The environment variables that set `key`, strongest first (the key itself: see `api_key_env`)."""
    if key == "api_key":
        return ()
    return (f"{ENV_PREFIX}{key.upper()}", *ENV_ALIASES.get(key, ()))


def flag_name(key: str) -> str:
    return FLAGS.get(key, "--" + key.replace("_", "-"))


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
    sources: dict[str, str] = field(default_factory=dict)
    """Where each setting's value came from: "default", a file's path, "$VARIABLE", a flag or the
    editor's settings."""
    user_file: Path | None = None


def snake_case(key: str) -> str:
    """`maxAttempts`, `max-attempts` and `max_attempts` all name the same setting."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).replace("-", "_").lower()


def _folders_up(start: Path) -> Iterator[str]:
    """`start` (or its folder, for a file) and every folder above it, real paths, the nearest first. On
    strings: the language server looks up the pyproject.toml for every request it answers, and pathlib
    took 2-3 x as long."""
    here = os.path.realpath(start)
    if not os.path.isdir(here):
        here = os.path.dirname(here)
    while True:
        yield here
        parent = os.path.dirname(here)
        if parent == here:
            return
        here = parent


def find_pyproject(start: Path | None) -> Path | None:
    """The nearest pyproject.toml at or above `start` (a file or a directory)."""
    if start is None:
        return None
    found = (os.path.join(f, "pyproject.toml") for f in _folders_up(start))
    return next((Path(candidate) for candidate in found if os.path.isfile(candidate)), None)


def project_root(path: Path | None) -> Path | None:
    """The folder the sandbox shows of `path`'s project: the nearest folder above it marked by a
    pyproject.toml or .git, else the file's own folder; never a shared folder ($HOME, /, /tmp, ...,
    see `shared_folder`): a marker there does not count, and a loose file directly in one gets None
    (the sandbox then sees only the file itself)."""
    if path is None:
        return None
    up = [Path(f) for f in _folders_up(path)]
    folders = [f for f in up if not shared_folder(f)]
    marked = (f for f in folders if (f / "pyproject.toml").is_file() or (f / ".git").exists())
    own = up[0]
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
        reason = _USER_ONLY_REASONS[snake_case(str(key))]
        warnings.append(f"Setting '{key}' in {path} is ignored: {reason}; set it in {_yours(user_file)}.")
    return {k: v for k, v in table.items() if snake_case(str(k)) not in USER_ONLY_KEYS}


def _yours(user_file: Path) -> str:
    return (f"your own configuration ({user_file}, the environment, the command line or your editor's "
            "user settings)")


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


def _from_environment(environ: Mapping[str, str], api_key_env: str,
                      warnings: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """One layer per variable, weakest first: the aliases (OPENAI_BASE_URL...) lose to PYCAPSULE_<NAME>,
    with a warning when both are set and differ."""
    layers: list[tuple[str, dict[str, Any]]] = []
    for key in sorted(_KEYS):
        spellings = (*env_names(key), *((DEPRECATED_ENV[key],) if key in DEPRECATED_ENV else ()))
        named = [name for name in spellings if environ.get(name, "").strip()]
        if key in DEPRECATED_ENV and DEPRECATED_ENV[key] in named:
            warnings.append(f"${DEPRECATED_ENV[key]} is deprecated: it is the setting '{key}', whose "
                            f"variable is ${env_names(key)[0]}; set that one instead.")
        if len({environ[name].strip() for name in named}) > 1:
            warnings.append(f"Setting '{key}' is given twice in the environment, as "
                            f"{' and '.join(f'${name}' for name in named)}; ${named[0]} is used.")
        for name in reversed(named):
            layers.append((f"${name}", {key: environ[name].strip()}))
    if environ.get(api_key_env):
        layers.append((f"${api_key_env}", {"api_key": environ[api_key_env]}))
    return layers


def _one_line(error: object) -> str:
    return " ".join(str(error).split())


@dataclass(frozen=True)
class _Layer:
    source: str
    values: Mapping[str, Any]
    from_text: bool = False
    """The environment's values are text, read as the setting's type."""
    project: bool = False
    """The project's file: its limits may only be lowered."""


@dataclass(frozen=True)
class _Candidate:
    source: str
    raw_key: str
    value: Any
    from_text: bool
    project: bool


def _problem(key: str, value: Any, from_text: bool) -> tuple[str | None, Any]:
    """(None, the value as the setting's type) or (why `value` is not valid for `key`, None)."""
    try:
        if from_text:
            checked = Settings.model_validate_strings({key: value}, strict=False)
        else:
            checked = Settings.model_validate({key: value})
    except ValidationError as error:
        problem = error.errors()[0]
        message = str(problem["msg"])
        message = message.removeprefix("Value error, ").replace("Input should be", "must be")
        return message[:1].lower() + message[1:], None
    return None, getattr(checked, key)


def _shown(key: str, value: Any) -> str:
    if key == "api_key":
        return "(hidden)"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return mask_credentials(repr(value))


_NONE_MEANS = {
    "sandbox": "none (the first backend that works)",
    "model": "none (the endpoint's first chat model; gpt-4.1-mini on api.openai.com)",
    "embedded_model_file": "none (the catalog's model of embedded_model_size)",
}


def _described(key: str, value: Any, source: str) -> str:
    """How the value used is named in a warning: 'the default 5' or "3 from /path/pyproject.toml"."""
    shown = _NONE_MEANS.get(key, "none") if value is None else _shown(key, value)
    return f"the default {shown}" if source == DEFAULT_SOURCE else f"{shown} from {source}"


def _candidates(layers: list[_Layer], warnings: list[str]) -> dict[str, list[_Candidate]]:
    """Each known key's values, weakest first; a warning for each unknown key."""
    candidates: dict[str, list[_Candidate]] = {}
    for layer in layers:
        spelled: dict[str, str] = {}
        for raw_key, value in layer.values.items():
            key = snake_case(str(raw_key))
            if key in _KEYS and key in spelled:  # the later one is the stronger (see _resolve)
                warnings.append(f"Setting '{key}' is given twice in {layer.source}, as '{spelled[key]}' and "
                                f"'{raw_key}'; '{raw_key}' is used.")
            spelled[key] = str(raw_key)
            if key not in _KEYS:
                warnings.append(f"Unknown setting '{raw_key}' in {layer.source} is ignored.")
            elif value is not None:
                candidate = _Candidate(layer.source, str(raw_key), value, layer.from_text, layer.project)
                candidates.setdefault(key, []).append(candidate)
    return candidates


def _named(key: str, candidate: _Candidate) -> str:
    """The key as written, and as documented when they differ."""
    return f"'{key}'" if candidate.raw_key == key else f"'{candidate.raw_key}' ({key})"


def _users_limit(key: str, weaker: list[_Candidate]) -> tuple[Any, str]:
    """The user's own value of a limit under the project's file (their config file's), else the default."""
    for candidate in weaker:
        problem, value = _problem(key, candidate.value, candidate.from_text)
        if problem is None:
            return value, candidate.source
    return getattr(DEFAULTS, key), DEFAULT_SOURCE


def _capped(key: str, candidate: _Candidate, value: Any, weaker: list[_Candidate], warnings: list[str],
            user_file: Path) -> tuple[Any, str]:
    """The value and source used: a project's limit above the user's own is replaced by it, with a warning."""
    if not (candidate.project and key in LIMIT_KEYS):
        return value, candidate.source
    limit, limit_source = _users_limit(key, weaker)
    if value <= limit:
        return value, candidate.source
    warnings.append(f"Setting {_named(key, candidate)} = {_shown(key, value)} in {candidate.source} is "
                    f"lowered to {_described(key, limit, limit_source)}: a project may lower a cost or time "
                    f"limit but never raise it; to allow more, set it in {_yours(user_file)}.")
    return limit, limit_source


def _resolve(layers: list[_Layer], warnings: list[str], user_file: Path) -> tuple[Settings, dict[str, str]]:
    """The strongest valid value of each key, a project's limits capped at the user's; a warning for each
    invalid or capped one."""
    candidates = _candidates(layers, warnings)
    chosen: dict[str, Any] = {}
    sources: dict[str, str] = {}
    blocked_url: Any = None
    for key in Settings.model_fields:
        invalid: list[tuple[_Candidate, str]] = []
        ranked = list(reversed(candidates.get(key, [])))  # the strongest first
        for position, candidate in enumerate(ranked):
            problem, value = _problem(key, candidate.value, candidate.from_text)
            if problem is None:
                weaker = ranked[position + 1:]
                chosen[key], sources[key] = _capped(key, candidate, value, weaker, warnings, user_file)
                break
            invalid.append((candidate, problem))
            if key == "base_url" and len(invalid) == 1:
                # never fall back to another endpoint (or to api.openai.com): the code would go elsewhere
                blocked_url, sources[key] = candidate.value, candidate.source
                break
        sources.setdefault(key, DEFAULT_SOURCE)
        for candidate, problem in invalid:
            if key == "base_url" and blocked_url is not None:
                used = "no model is asked until it is fixed"
            else:
                used = "using " + _described(key, chosen.get(key, getattr(DEFAULTS, key)), sources[key])
            warnings.append(f"Setting {_named(key, candidate)} = {_shown(key, candidate.value)} from "
                            f"{candidate.source} is invalid ({problem}); {used}.")
    settings = Settings.model_validate(chosen)
    if blocked_url is not None:
        settings = settings.model_copy(update={"base_url": str(blocked_url)})
    return settings, sources


def _key_variable(overrides: Mapping[str, Any], environ: Mapping[str, str],
                  user_values: Mapping[str, Any]) -> str:
    """The variable holding the API key: `api_key_env` from the strongest user-owned source that sets
    a valid one (it must be known before the environment is read for the key itself)."""
    env_value = environ.get(env_names("api_key_env")[0], "").strip()
    for values in (overrides, {"api_key_env": env_value}, user_values):
        for raw_key, value in values.items():
            named = snake_case(str(raw_key)) == "api_key_env" and value
            if named and _problem("api_key_env", value, False)[0] is None:
                return str(value)
    return DEFAULTS.api_key_env


def _flag_source(key: str) -> str:
    return f"the command line ({flag_name(key)})"


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
    override_values = {k: v for k, v in (overrides or {}).items() if v is not None}
    # the key's variable name may itself be configured (by the user only), so find it before
    # reading the environment
    key_env = _key_variable(override_values, environ, user_values)
    for path, values in ((user_file, user_values), (pyproject, file_values)):
        if "api_key" in {snake_case(str(k)) for k in values}:
            warnings.append(
                f"Setting 'api_key' in {path} is ignored: keep secrets out of files and set ${key_env}."
            )
            for k in [k for k in values if snake_case(str(k)) == "api_key"]:
                values.pop(k)
    layers = [
        _Layer(str(user_file), user_values),
        _Layer(str(pyproject) if pyproject else "pyproject.toml", file_values, project=True),
        *(_Layer(source, values, from_text=True)
          for source, values in _from_environment(environ, key_env, warnings)),
    ]
    if overrides_source == "the command line":
        layers += [_Layer(_flag_source(snake_case(str(k))), {k: v}) for k, v in override_values.items()]
    else:
        layers.append(_Layer(overrides_source, override_values))
    settings, sources = _resolve(layers, warnings, user_file)
    settings = _with_model_defaults(settings, sources)
    if settings.base_url == EMBEDDED:
        sources.pop("api_key", None)  # not used: shown as unset
    return LoadedSettings(settings, warnings, pyproject, sources, user_file)


def model_default_source(size: str) -> str:
    return f"the embedded {size} model's default"


def _with_model_defaults(settings: Settings, sources: dict[str, str]) -> Settings:
    """`settings` with the embedded model's own measured defaults (`ModelSpec.defaults`) for the keys
    still at pycapsule's default; `sources` names the model for them."""
    if not settings.uses_embedded_model or settings.embedded_model_file is not None:
        return settings  # a file of the user's own was never measured
    spec = CATALOG[settings.embedded_model_size]
    unset = [key for key, source in sources.items() if source == DEFAULT_SOURCE]
    update = {key: value for key, value in spec.defaults if key in unset}
    for key in update:
        sources[key] = model_default_source(spec.size)
    return Settings.model_validate({**settings.model_dump(), **update}) if update else settings


def flag_type(key: str) -> Callable[[str], Any]:
    """An argparse `type=` for the setting `key`: the flag's text as the setting's type, or a usage error
    (exit 2) saying what is wrong, by the same rule as every other source."""
    if key not in _KEYS:
        raise KeyError(key)

    def parse(text: str) -> Any:
        problem, value = _problem(key, text, True)
        if problem is not None and key == "sandbox":  # the sandbox's own wording, as when it is opened
            raise argparse.ArgumentTypeError(f"there is no sandbox backend named {text!r}; choose one of "
                                             "bwrap, docker, unsafe-subprocess")
        if problem is not None:
            raise argparse.ArgumentTypeError(f"{problem} (got {mask_credentials(repr(text))})")
        return value

    parse.__name__ = key
    return parse
