"""`LlamaCppEndpoint`: what a request to the embedded model's llama.cpp server adds to a generic
OpenAI-compatible one's (model_endpoint.py).

Its own options (`cache_prompt`, `return_progress`: the prompt's counts as it reads it), and the prompt
read ahead into its one slot (read_ahead.py): a greedy request for the same prompt takes the batches held
from the cache, and its first count, before any token is read, checks that the slot still holds them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from pycapsule.embedded_model.read_ahead import PromptReader, ReadAheadError
from pycapsule.model_endpoint import NO_REUSE, AskAgain, Endpoint, PromptCounts, Reuse, SlotCheck
from pycapsule.model_errors import ModelError

if TYPE_CHECKING:
    import threading

    from pycapsule.model_progress import ServerProbe
    from pycapsule.model_reply import Message
    from pycapsule.model_settings import ModelSettings


class LlamaCppEndpoint(Endpoint):
    """The embedded model's own server (`ModelSettings.local`). Thread-safe."""

    def __init__(self, settings: ModelSettings, server: ServerProbe | None = None) -> None:
        super().__init__(server)
        self._cache_sampled = settings.cache_sampled_prompts
        self._reader: PromptReader | None = None
        if settings.base_url:
            self._reader = PromptReader(settings.base_url, settings.request_timeout)

    def read_ahead(self, messages: Sequence[Message], stop: Callable[[], bool],
                   turn: threading.Semaphore | None) -> int:
        """Reads a greedy request's prompt into the cache in the batches a fresh read makes, so that the
        request's answer is the same, only sooner; stops between two batches when `stop()` says so."""
        if self._reader is None:
            return 0
        try:
            return self._reader.read(messages, stop, turn)
        except ReadAheadError as error:
            self._reader.forget()
            raise ModelError(str(error)) from None

    def reuse(self, messages: Sequence[Message], temperature: float) -> Reuse:
        """(0, 0) when the request reads the whole prompt. Only a greedy request reuses a read-ahead; any
        other request changes what the slot holds."""
        reader = self._reader
        if reader is None or not reader.holds:
            return NO_REUSE
        if temperature == 0:
            try:
                tokens = reader.tokens(messages)
            except ReadAheadError:
                tokens = []
            if (held := reader.held_for(tokens)) > 0:
                return len(tokens), held
        reader.forget()
        return NO_REUSE

    def forget(self) -> None:
        if self._reader is not None:
            self._reader.forget()

    def options(self, temperature: float, reuse: Reuse, continued: bool = False) -> dict[str, Any]:
        # llama.cpp's own option; the embedded server's default is off (serve.py). A continued request
        # reuses the slot the answer it goes on from was written in, greedy or not: reading it all again
        # would cost more than the writing it saves.
        body: dict[str, Any] = {}
        if reuse[1] or continued or (self._cache_sampled and temperature > 0):
            body["cache_prompt"] = True
        body["return_progress"] = True  # the prompt's counts as llama.cpp reads it (model_progress)
        return body

    def slot_check(self, reuse: Reuse) -> SlotCheck:
        return _SlotCheck(reuse)


class _SlotCheck:
    """Raises `AskAgain` when the slot held something else than the batches a try takes from it: found at
    the server's first count, before it read a token (this read would round otherwise)."""

    def __init__(self, reuse: Reuse) -> None:
        self._reuse = reuse
        self._unchecked = reuse[1] > 0

    def __call__(self, chunk: Any, counted: PromptCounts | None) -> None:
        if self._unchecked and counted is not None:
            if (counted[0], counted[1]) != self._reuse:
                raise AskAgain()
            self._unchecked = False
        if self._unchecked and any(choice.delta and choice.delta.content for choice in chunk.choices or ()):
            raise AskAgain()  # an answer without the count to check it by
