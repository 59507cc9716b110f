"""The programmer agent's model client: one model call over the `openai` client (prompts.py builds
the messages).

`Programmer.stream` streams one answer (text pieces as they arrive, then the whole `Reply`).
Two clocks bound it: `inactivity_timeout` (no streamed piece for that long, the first one included: the
endpoint counts as hung; the embedded model's own server gets it from its first piece on) and
`request_timeout` (the whole answer, retries and their waits included). Only what can succeed on its own is
retried, with backoff (honouring Retry-After up to a cap) and never past `request_timeout`: refused or
dropped connections, 429, 5xx, empty answers. A silent endpoint is not asked again (it already had
`inactivity_timeout`), nor one that refused the key or does not know the model. After the last try it raises
`ModelError` with one sentence in the user's words (no library names, no HTML);
`EndpointError`, its subclass, marks failures of the
endpoint itself, which would repeat for every other function of a run. Cancelling (a
threading.Event) returns within ~50 ms even while the endpoint is silent: the HTTP request runs in
a helper thread that is abandoned and closes itself.

With `progress=True` the stream also yields `model_progress.Progress`: the request's phase (waiting,
reading the prompt, writing) with its figures, once a second at least, and after `stall_notice` seconds
with nothing new, why (the machine is busy, the shared model is answering another request...). The
embedded model's server is asked for its prompt counters (llama.cpp's `return_progress`); a server found
dead meanwhile ends the request at once instead of at its timeout.

`Programmer` keeps what spans a call's tries: the model's name, the one request at a time, the retries,
the totals. Its parts, one job each: openai_chat.py (the `openai` client: the model list, one streamed
request), model_stream.py (one try: its thread, clocks and progress), model_errors.py (failures in the
user's words), model_endpoint.py with embedded_model/llama_endpoint.py (what a request needs of its server
beyond the OpenAI API: nothing for a generic endpoint; llama.cpp's options, read-ahead and slot check for the
embedded model's), model_reply.py and model_settings.py (the types, re-exported here).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from pycapsule.generators import Returning
from pycapsule.model_endpoint import NO_REUSE, AskAgain, Endpoint
from pycapsule.model_errors import Cancelled, EndpointError, ModelError, RequestFailure
from pycapsule.model_reply import Message, Reply, Retrying, Usage
from pycapsule.model_settings import ModelSettings
from pycapsule.model_stream import request_watch, stream_answer
from pycapsule.openai_chat import ChatRequest, OpenAIChat
from pycapsule.prompts import head_block, prefilled, whole_answer

if TYPE_CHECKING:
    from pycapsule.debugging.answer_watch import AnswerTarget
    from pycapsule.model_progress import Progress, ServerProbe

__all__ = ["Cancelled", "EndpointError", "Message", "ModelError", "ModelSettings", "Programmer", "Reply",
           "Retrying", "Usage"]


class Programmer:
    """One model endpoint. Thread-safe: calls may run at once from several threads."""

    def __init__(self, settings: ModelSettings, server: ServerProbe | None = None) -> None:
        """`server`: the embedded model's server (its pid, how it stopped), for what a stall says."""
        self.settings = settings
        self._endpoint = _endpoint(settings, server)
        self._chat = OpenAIChat(settings, self._endpoint)
        self._lock = threading.Lock()
        self._turn = threading.Semaphore(1) if settings.one_at_a_time else None
        self._waiting = 0
        """Requests waiting for their turn: a read-ahead gives way to them between two batches."""
        self._model = settings.model
        self.calls = 0
        self.usage = Usage()

    @property
    def where(self) -> str:
        """The endpoint's URL, credentials masked."""
        return self._chat.wording.where

    @property
    def who(self) -> str:
        """The model as messages name it: "the model at URL", or "the embedded Qwen2.5-Coder 1.5B"."""
        return self._chat.who

    def model_name(self) -> str:
        """The configured model, or the one `model_choice` picks among those the endpoint lists."""
        with self._lock:
            if self._model is None:
                self._model = self._chat.chosen_model()
            return self._model

    def complete(self, messages: Sequence[Message], *, temperature: float = 0.0, seed: int | None = None,
                 on_token: Callable[[str], None] | None = None,
                 cancel: threading.Event | None = None, target: AnswerTarget | None = None) -> Reply:
        """One answer; `on_token` sees each streamed piece (also those of a try that later failed)."""
        answer = Returning(self.stream(messages, temperature=temperature, seed=seed, cancel=cancel,
                                       target=target))
        for item in answer:
            if isinstance(item, str) and on_token is not None:
                on_token(item)
        return answer.value

    def stream(self, messages: Sequence[Message], *, temperature: float = 0.0, seed: int | None = None,
               cancel: threading.Event | None = None, progress: bool = False,
               target: AnswerTarget | None = None) -> Generator[str | Retrying | Progress, None, Reply]:
        """Yields text pieces (and a `Retrying` before each retry; with `progress`, the request's
        `Progress`); returns the `Reply`.

        `seed` makes sampling repeatable where the endpoint supports it (llama.cpp, OpenAI: best effort).
        `target`: the function the answer is for; reading stops once it is complete, or when the answer
        copies the prompt's context (`debugging.answer_watch`). Without it only a loop ends an answer.
        An answer that repeats the target's head (`AnswerTarget.head`) is given the rest of it, where the
        endpoint continues an answer (`ModelSettings.fast_forward_echo`): the request is ended and a second
        one asks the model to go on from the answer with that rest; the rest is yielded as a piece and the
        `Reply` is the whole answer, both requests' usage and time. Likewise an answer that copies the
        prompt's context goes on from a code block that holds the head instead of the copy (once)."""
        model = self.model_name()
        if target is not None and target.head and not self.settings.fast_forward_echo:
            target = replace(target, head="")
        if self._turn is not None:
            yield from self._wait_turn(self._turn, cancel, progress)
        try:
            deadline = time.monotonic() + self.settings.request_timeout  # from the turn: the wait is not its
            request = ChatRequest(model, messages, temperature, seed)
            reply = yield from self._tries(request, cancel, progress, target, deadline)
            going_on = _to_go_on_from(reply, target)
            if going_on is not None:
                reply = yield from self._go_on(request, reply, going_on, cancel, progress, target, deadline)
        finally:
            if self._turn is not None:
                self._turn.release()
        with self._lock:
            self.calls += 1
            self.usage = self.usage + reply.usage
        return reply

    def read_ahead(self, messages: Sequence[Message], cancel: threading.Event | None = None) -> int:
        """Reads a greedy request's prompt into the embedded model's cache ahead of the request, in the
        batches a fresh read makes, so that the request's answer is the same, only sooner
        (embedded_model/read_ahead.py). Gives way between two batches to a request of this client and
        stops when `cancel` is set. Returns the prompt tokens now held (0: nothing to read ahead, or an
        endpoint that is not the embedded model)."""

        def stop() -> bool:
            with self._lock:
                waiting = self._waiting
            return waiting > 0 or (cancel is not None and cancel.is_set())

        try:
            return self._endpoint.read_ahead(messages, stop, self._turn)
        except ModelError as error:
            raise ModelError(self._chat.wording.clean(str(error))) from None

    def close(self) -> None:
        self._chat.close()

    def _wait_turn(self, turn: threading.Semaphore, cancel: threading.Event | None,
                   progress: bool) -> Generator[Progress, None, None]:
        """Takes the endpoint's one turn, yielding the wait's `Progress` with `progress`."""
        watch = request_watch(self._chat) if progress else None
        if watch is not None:
            yield watch.start()
        with self._lock:
            self._waiting += 1
        try:
            while not turn.acquire(timeout=0.05):
                if cancel is not None and cancel.is_set():
                    raise Cancelled()
                if watch is not None and (shown := watch.tick()) is not None:
                    yield shown
        finally:
            with self._lock:
                self._waiting -= 1

    def _go_on(self, request: ChatRequest, reply: Reply, going_on: tuple[str, str],
               cancel: threading.Event | None, progress: bool, target: AnswerTarget | None, deadline: float
               ) -> Generator[str | Retrying | Progress, None, Reply]:
        """`reply` to `request` was ended; `going_on`: what of its text stays and what it is given (the rest
        of the function's head it repeated, or the head in a code block instead of the prompt's context it
        copied). The model goes on from there, reading (fast) what it would have written (slow); the whole
        answer."""
        written, given = going_on
        yield given
        messages = list(request.messages)
        before = messages.pop()["content"] if messages and messages[-1].get("role") == "assistant" else ""
        start = before + written + given
        left = self.settings.max_tokens - reply.usage.completion_tokens
        if left <= 0:
            return replace(reply, text=written + given, finish_reason="length", echo_rest="", copied_from=-1)
        more = yield from self._tries(
            replace(request, messages=prefilled(messages, start), continued=True, max_tokens=left), cancel,
            progress, target and replace(target, head=""), deadline)
        whole = whole_answer(start, more.text)
        text = whole[len(before):] if whole.startswith(before) else whole
        return Reply(text, reply.usage + more.usage, more.finish_reason, more.model,
                     reply.seconds + more.seconds)

    def _tries(self, request: ChatRequest, cancel: threading.Event | None, progress: bool,
               target: AnswerTarget | None, deadline: float
               ) -> Generator[str | Retrying | Progress, None, Reply]:
        tries = self.settings.retries + 1
        if request.continued:  # the server holds what the answer before read and wrote, not a read-ahead
            self._endpoint.forget()
        else:
            request = replace(request, reuse=self._endpoint.reuse(request.messages, request.temperature))
        for try_number in range(1, tries + 1):
            try:
                watch = request_watch(self._chat)
                shown = watch if progress else None
                try:
                    return (yield from stream_answer(self._chat, request, cancel=cancel, deadline=deadline,
                                                     watch=shown, target=target))
                except AskAgain:  # checked before any token was read: ask again, reading it all
                    self._endpoint.forget()
                    request = replace(request, reuse=NO_REUSE)
                    return (yield from stream_answer(self._chat, request, cancel=cancel, deadline=deadline,
                                                     watch=shown, target=target))
            except RequestFailure as failure:
                if request.reuse != NO_REUSE:
                    self._endpoint.forget()
                    request = replace(request, reuse=NO_REUSE)
                delay = self.settings.backoff * 2 ** (try_number - 1)
                if failure.retry_after is not None:
                    delay = max(delay, min(failure.retry_after, self.settings.retry_after_cap))
                out_of_time = time.monotonic() + delay >= deadline
                wording = self._chat.wording
                if not failure.retry or try_number == tries or out_of_time:
                    raise wording.error(failure, try_number, out_of_time and failure.retry) from None
                yield Retrying(wording.clean(failure.reason), delay, try_number)
                if cancel is not None and cancel.wait(delay):
                    raise Cancelled() from None
                if cancel is None:
                    time.sleep(delay)
        raise AssertionError("unreachable")


def _to_go_on_from(reply: Reply, target: AnswerTarget | None) -> tuple[str, str] | None:
    """For an answer ended for the model to go on from: what of its text stays and what it is given; None
    when it ended otherwise."""
    if reply.echoed:
        return reply.text, reply.echo_rest
    if reply.copied and target is not None and target.head and reply.copied_from >= 0:
        return reply.text[:reply.copied_from], head_block(target.head)
    return None


def _endpoint(settings: ModelSettings, server: ServerProbe | None) -> Endpoint:
    """The embedded model's own server speaks llama.cpp beyond the OpenAI API; any other endpoint, only it."""
    if not settings.local:
        return Endpoint(server)
    from pycapsule.embedded_model.llama_endpoint import LlamaCppEndpoint

    return LlamaCppEndpoint(settings, server)
