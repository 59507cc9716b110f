"""What a run's results depend on: the configuration that is hashed, and the provenance that is recorded."""

from __future__ import annotations

import hashlib
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pycapsule import __version__
from pycapsule.config import Settings
from pycapsule.models.catalog import CATALOG, resolve_size
from pycapsule.programmer import SYSTEM_PROMPT

_CHECKOUT = Path(__file__).resolve().parents[3]


def embedded_size(name: str | None) -> str | None:
    """A catalog size named by `--model` ('0.5b' or its alias), for the embedded model."""
    if name is None:
        return None
    for size, spec in CATALOG.items():
        if name.lower() in (size, spec.alias, spec.filename):
            return size
    return None


def model_identity(settings: Settings) -> dict[str, Any]:
    """Which model answers: the embedded file (by SHA-256) or an endpoint's model (host, no credentials)."""
    if settings.uses_embedded_model:
        spec = CATALOG[resolve_size(settings.embedded_model_size)]
        return {"kind": "embedded", "name": spec.alias, "file": spec.filename, "sha256": spec.sha256}
    host = urlsplit(settings.base_url).hostname if settings.base_url else "api.openai.com"
    return {"kind": "endpoint", "name": settings.model or "(the endpoint's default)", "host": host}


def generation_settings(settings: Settings) -> dict[str, Any]:
    """The settings that change what the loop produces (never the API key)."""
    keys = ("max_attempts", "temperature", "retry_temperature", "restart_after", "history_window",
            "max_tokens", "job_timeout")
    values = {key: getattr(settings, key) for key in keys}
    values["prompt"] = hashlib.sha256(SYSTEM_PROMPT.encode()).hexdigest()[:8]
    return values


def git_commit() -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(_CHECKOUT), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


def version() -> str:
    return __version__
