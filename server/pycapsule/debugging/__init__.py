"""Deterministic modules that do what a model does badly: extraction, example calls, signatures, errors."""


class UnusableReply(ValueError):
    """A model reply that cannot be used; `reason` is one sentence the fix prompt can show the model."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class SignatureMismatch(UnusableReply):
    """The reply cannot be fitted into the user's function; `reason` is one sentence for the model."""
