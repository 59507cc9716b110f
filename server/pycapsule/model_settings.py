"""`ModelSettings`: one model endpoint's address, model, key, clocks, retries and kind, for `Programmer`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import SecretStr

if TYPE_CHECKING:
    from pycapsule.config import Settings


@dataclass(frozen=True)
class ModelSettings:
    base_url: str | None
    """None: the `openai` client's default (api.openai.com)."""
    model: str | None
    """None: the one `model_choice.choose_model` picks among those the endpoint lists."""
    api_key: SecretStr | None = field(default=None, repr=False)
    api_key_env: str = "OPENAI_API_KEY"
    request_timeout: float = 300.0
    """Seconds for the whole answer, retries and their waits included."""
    inactivity_timeout: float = 60.0
    """Seconds without a streamed piece (the first one included) before the endpoint counts as hung."""
    retries: int = 3
    backoff: float = 1.0
    retry_after_cap: float = 30.0
    max_tokens: int = 2048
    one_at_a_time: bool = False
    """The endpoint answers one request at a time (the embedded model): requests wait here, not there,
    so their clocks start when the endpoint can really answer."""
    label: str | None = None
    """How messages name the model instead of by its URL, e.g. "embedded Qwen2.5-Coder 1.5B"."""
    local: bool = False
    """The embedded model's own server on this machine: silence before the first piece is prompt processing
    on a busy CPU, not a hang (a server that dies drops the connection), so only `request_timeout` bounds
    it; `inactivity_timeout` starts with the first piece. Its requests carry llama.cpp's own options
    (embedded_model/llama_endpoint.py)."""
    stall_notice: float = 30.0
    """Seconds with nothing new (no prompt count, no token) before a progress says why (`model_progress`)."""
    cache_sampled_prompts: bool = False
    """Ask the embedded model's server (`local`; llama.cpp's option) to reuse the prompt prefix it read for
    the request before, for sampled requests only: a greedy answer must depend on its prompt alone (the
    `prompt_cache` setting)."""
    fast_forward_echo: bool = False
    """An answer that repeats the function's signature and docstring is given their rest to read: the
    endpoint continues a final assistant message (the embedded model's does; the `fast_forward_echo`
    setting)."""

    @classmethod
    def from_settings(cls, settings: Settings, *, base_url: str | None = None,
                      model: str | None = None, one_at_a_time: bool = False,
                      label: str | None = None, local: bool = False) -> ModelSettings:
        """The endpoint part of `settings`; `base_url`/`model` replace them (the embedded model's)."""
        return cls(
            base_url=base_url or settings.base_url,
            model=model or settings.model,
            api_key=settings.api_key,
            api_key_env=settings.api_key_env,
            request_timeout=settings.request_timeout,
            inactivity_timeout=settings.inactivity_timeout,
            one_at_a_time=one_at_a_time,
            label=label,
            local=local,
            cache_sampled_prompts=settings.prompt_cache == "sampled",
            stall_notice=settings.stall_notice,
            retries=settings.model_retries,
            backoff=settings.retry_backoff,
            retry_after_cap=settings.retry_after_cap,
            max_tokens=settings.max_tokens,
            fast_forward_echo=settings.fast_forward_echo == "always" or (
                settings.fast_forward_echo == "embedded" and local),
        )
