"""`OpenAIChat`: one endpoint's `openai` client, the generic OpenAI-compatible part of `Programmer`.

It lists the endpoint's models, opens one streamed chat completion (the endpoint's own options from its
`Endpoint`), and words what the client raised (`ErrorWording`). Its clocks are not the client's: the
stream's (model_stream.py) decide, the client's only free an abandoned request's thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pycapsule.model_choice import choose_model
from pycapsule.model_endpoint import NO_REUSE, Endpoint, Reuse
from pycapsule.model_errors import EndpointError, ErrorWording, RequestFailure, status_message
from pycapsule.redact import mask_credentials

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletionChunk

    from pycapsule.model_reply import Message
    from pycapsule.model_settings import ModelSettings


@dataclass(frozen=True)
class ChatRequest:
    """What one try asks the endpoint."""

    model: str
    messages: Sequence[Message]
    temperature: float = 0.0
    seed: int | None = None
    reuse: Reuse = NO_REUSE
    """What the try takes of the prompt read ahead (`Endpoint.reuse`)."""
    continued: bool = False
    """The request goes on from an answer the request before it streamed (`Programmer.stream`): the
    endpoint may reuse what it read and wrote for that one."""
    max_tokens: int | None = None
    """None: the settings' `max_tokens`."""


class OpenAIChat:
    """Thread-safe: requests may run at once from several threads."""

    def __init__(self, settings: ModelSettings, endpoint: Endpoint) -> None:
        import openai  # heavy (seconds on a busy machine): only when a model is really used

        self.settings = settings
        self.endpoint = endpoint
        key = settings.api_key.get_secret_value() if settings.api_key else "no-key"
        idle = settings.inactivity_timeout
        read = settings.request_timeout if settings.local else idle
        self._client = openai.OpenAI(
            base_url=settings.base_url,
            api_key=key,
            max_retries=0,  # retries are ours: bounded, cancellable, reported
            # our clocks decide (model_stream.py); the client's only free an abandoned request's thread
            timeout=openai.Timeout(read + 5.0, connect=min(10.0, idle)),
        )
        self.wording = ErrorWording.of(settings, mask_credentials(str(self._client.base_url).rstrip("/")))
        self.include_usage = True
        """False once the endpoint refused `stream_options` (an older server): tokens are counted here."""
        self.prompt_rate: float | None = None
        """The prompt rate the endpoint measured last (for the next request's first estimate)."""

    @property
    def who(self) -> str:
        return self.wording.who

    def chosen_model(self) -> str:
        """The model `model_choice` picks among those the endpoint lists; raises `EndpointError`."""
        import openai

        where, clean = self.wording.where, self.wording.clean
        try:
            models = [m.id for m in self._client.models.list()]
        except openai.NotFoundError:
            raise EndpointError(clean(
                f"the endpoint at {where} has no model list (404) to choose a model from; name "
                "the model (--model or PYCAPSULE_MODEL), and check that base_url is the API's "
                "address (it usually ends in /v1)."
            )) from None
        except openai.OpenAIError as error:  # the same sentence as when asking for an answer
            raise self.wording.error(self.failure(error, ""), 1, False) from None
        except Exception:  # a listing that is not OpenAI's shape
            raise EndpointError(clean(
                f"the endpoint at {where} did not list its models in the OpenAI format; "
                "name the model (--model or PYCAPSULE_MODEL)."
            )) from None
        if not models:
            raise EndpointError(clean(
                f"the endpoint at {where} lists no models; "
                "name one (--model or PYCAPSULE_MODEL)."
            ))
        chosen = choose_model(models, self.settings.base_url)
        if chosen is None:
            raise EndpointError(clean(
                f"the endpoint at {where} lists {len(models)} model(s) and none of them can "
                f"chat (they are for images, audio, embeddings or moderation, e.g. {models[0]}); "
                "name a chat model (--model or PYCAPSULE_MODEL)."
            ))
        return chosen

    def open(self, request: ChatRequest, include_usage: bool) -> openai.Stream[ChatCompletionChunk]:
        """The streamed answer (a response to close); raises what the `openai` client raises."""
        extra: dict[str, Any] = {"stream_options": {"include_usage": True}} if include_usage else {}
        if request.seed is not None:
            extra["seed"] = request.seed
        body = self.endpoint.options(request.temperature, request.reuse, request.continued)
        if body:
            extra["extra_body"] = body
        return self._client.chat.completions.create(
            model=request.model, messages=list(request.messages), stream=True,
            temperature=request.temperature, max_tokens=request.max_tokens or self.settings.max_tokens,
            **extra)  # type: ignore[call-overload]

    def failure(self, error: BaseException, model: str) -> RequestFailure:
        """What the client raised, as a failure to retry or to tell."""
        import openai

        if (isinstance(error, openai.APIStatusError) and error.status_code == 400
                and "stream_options" in status_message(error) and self.include_usage):
            self.include_usage = False  # an older server: count tokens here instead
            return RequestFailure(f"{self.who} does not accept stream_options", retry=True, retry_after=0)
        return self.wording.classify(error, model)

    def close(self) -> None:
        self._client.close()
