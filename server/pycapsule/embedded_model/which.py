"""Which model answers, in one short line: for the start of a run and the editor's status bar.

The `openai` client's own variables choose the endpoint when pycapsule's do not: an API key
($OPENAI_API_KEY, or the variable `api_key_env` names) without a base_url means api.openai.com,
so the line says so, and why: a key exported for another tool would otherwise send code there
unseen.
"""

from __future__ import annotations

from pycapsule.config import Settings, endpoint_problem
from pycapsule.embedded_model.catalog import CATALOG, resolve_size
from pycapsule.embedded_model.errors import ModelInstallError
from pycapsule.embedded_model.own_file import own_alias
from pycapsule.model_choice import unnamed_model
from pycapsule.redact import mask_credentials

OPENAI_DEFAULT_URL = "https://api.openai.com/v1"


def embedded_label(size: str | None, own_file: str | None = None) -> str:
    """'embedded Qwen2.5-Coder 1.5B' (the size the settings choose), or with `own_file` (the
    `embedded_model_file` setting) 'embedded my-model (your own file /models/my-model.gguf)'."""
    if own_file is not None:
        return f"embedded {own_alias(own_file)} (your own file {own_file})"
    try:
        chosen = resolve_size(size)
    except ModelInstallError:
        return f"embedded model (unknown size {size!r})"
    spec = CATALOG[chosen]
    if spec.alias.startswith("qwen2.5-coder-"):
        return f"embedded Qwen2.5-Coder {chosen.upper()}"
    return f"embedded {spec.alias}"


def endpoint_description(settings: Settings) -> str:
    """The endpoint these settings use, credentials masked, e.g. 'embedded Qwen2.5-Coder 1.5B',
    'http://127.0.0.1:8080/v1 (model qwen2.5-coder)' or
    'https://api.openai.com/v1 (model gpt-x), because $OPENAI_API_KEY is set and no base_url is configured'.
    """
    if settings.uses_embedded_model:
        return embedded_label(settings.embedded_model_size, settings.embedded_model_file)
    model = f"model {settings.model}" if settings.model else unnamed_model(settings.base_url)
    if settings.base_url is None:
        return (f"{OPENAI_DEFAULT_URL} ({model}), because ${settings.api_key_env} is set and no base_url "
                "is configured")
    if endpoint_problem(settings) is not None:
        return f"none: the base_url {mask_credentials(settings.base_url)!r} is invalid"
    return f"{mask_credentials(settings.base_url.rstrip('/'))} ({model})"
