"""The two ways the embedded model can fail, each carrying one sentence a user can act on."""

from __future__ import annotations


class ModelError(RuntimeError):
    """Base class: str(error) is one clear sentence, never a traceback."""


class ModelInstallError(ModelError):
    """The model file could not be fetched, verified or stored."""


class ModelServerError(ModelError):
    """The local model server could not be started, or stopped unexpectedly."""
