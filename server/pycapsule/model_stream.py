"""One try of a streamed answer: `stream_answer` yields its text pieces (and its `Progress`) and returns
the `Reply`.

The HTTP request runs in a helper thread that is abandoned and closes itself, so cancelling (a
threading.Event) returns within ~50 ms even while the endpoint is silent. Two clocks bound it:
`inactivity_timeout` (no streamed piece for that long, the first one included: the endpoint counts as
hung; the embedded model's own server gets it from its first piece on) and `request_timeout` (the whole
answer, retries included: an answer still streaming then is kept, cut off). Reading ends early once the
answer's function is complete, it loops, it copies the prompt's context, or it repeats the function's head
as the task shows it, whose rest `Programmer.stream` then gives the model to go on from (`AnswerWatch`).
A server found dead while nothing moves ends the try at once.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from pycapsule.debugging.answer_watch import SHORTENED, AnswerTarget, AnswerWatch
from pycapsule.model_errors import SILENT_HINT, Cancelled, RequestFailure
from pycapsule.model_progress import Progress, RequestWatch, why_stalled
from pycapsule.model_reply import TIMED_OUT, Reply, Usage

if TYPE_CHECKING:
    from pycapsule.openai_chat import ChatRequest, OpenAIChat

_POLL = 0.05
"""Seconds between two looks at the cancel event and the clocks while the endpoint is silent."""


def request_watch(chat: OpenAIChat) -> RequestWatch:
    """The progress of one request to this endpoint."""
    settings = chat.settings
    local = settings.local

    def stalled(phase: str, seconds: float, model_cores: float | None) -> str:
        limit = f"request_timeout = {settings.request_timeout:g} s" if local and phase != "writing" \
            else f"inactivity_timeout = {settings.inactivity_timeout:g} s of silence"
        return why_stalled(phase, seconds, who=chat.who, local=local,  # type: ignore[arg-type]
                           model_cores=model_cores, limit=limit)

    return RequestWatch(local=local, stall_notice=settings.stall_notice, prompt_rate=chat.prompt_rate,
                        stalled=stalled, server_pid=chat.endpoint.server_pid)


def stream_answer(chat: OpenAIChat, request: ChatRequest, *, cancel: threading.Event | None, deadline: float,
                  watch: RequestWatch | None, target: AnswerTarget | None = None
                  ) -> Generator[str | Progress, None, Reply]:
    """One try; `watch`: the progress to yield (None: none, though stalls are still watched). Raises
    `RequestFailure`, `Cancelled`, or `AskAgain` from the endpoint's slot check."""
    return (yield from _AnswerStream(chat, request, cancel, deadline, target).run(watch))


class _AnswerStream:
    def __init__(self, chat: OpenAIChat, request: ChatRequest, cancel: threading.Event | None,
                 deadline: float, target: AnswerTarget | None) -> None:
        self._chat, self._request, self._cancel, self._deadline = chat, request, cancel, deadline
        self._events: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._stop = threading.Event()
        self._include_usage = chat.include_usage
        self._check_slot = chat.endpoint.slot_check(request.reuse)
        self._started = self._last_heard = time.monotonic()
        self._pieces: list[str] = []
        self._usage: Usage | None = None
        self._finish_reason: str | None = None
        last = request.messages[-1] if request.messages else {}
        self._answer = AnswerWatch(target, last.get("content", "") if last.get("role") == "assistant" else "")

    def run(self, watch: RequestWatch | None) -> Generator[str | Progress, None, Reply]:
        threading.Thread(target=self._produce, name="pycapsule-model-call", daemon=True).start()
        phases = watch or request_watch(self._chat)  # the stall check runs without `progress` too
        if watch is not None:
            yield watch.start()
        try:
            while not (yield from self._next(phases, show=watch is not None)):
                pass
        finally:
            self._stop.set()
        return self._reply()

    def _produce(self) -> None:
        try:
            response = self._chat.open(self._request, self._include_usage)
            try:
                for chunk in response:
                    if self._stop.is_set():
                        return
                    self._events.put(("chunk", chunk))
            finally:
                response.close()
            self._events.put(("end", None))
        except BaseException as error:  # handed to the consumer, which classifies it
            self._events.put(("error", error))

    def _next(self, phases: RequestWatch, show: bool) -> Generator[str | Progress, None, bool]:
        """Waits for the next event and handles it; True once the answer has ended."""
        try:
            kind, item = self._events.get(timeout=_POLL)
        except queue.Empty:
            kind, item = "quiet", None
        if kind == "quiet":
            return (yield from self._quiet(phases, show))
        self._last_heard = time.monotonic()
        if self._cancel is not None and self._cancel.is_set():
            raise Cancelled()
        if kind == "end":
            return True
        if kind == "error":
            raise self._chat.failure(item, self._request.model)
        return (yield from self._chunk(item, phases, show))

    def _quiet(self, phases: RequestWatch, show: bool) -> Generator[Progress, None, bool]:
        if self._cancel is not None and self._cancel.is_set():
            raise Cancelled() from None
        if self._out_of_time():
            self._finish_reason = TIMED_OUT
            return True
        shown = phases.tick()
        if shown is not None and phases.current.stalled:
            self._end_if_the_server_died()
        if shown is not None and show:
            yield shown
        return False

    def _end_if_the_server_died(self) -> None:
        """Raises when the embedded model's server has stopped: the try would only wait out its timeout."""
        error = self._chat.endpoint.server_error()
        if error is not None:
            raise RequestFailure(error.rstrip("."), retry=False, hint=self._chat.wording.reach_hint)

    def _chunk(self, chunk: Any, phases: RequestWatch, show: bool) -> Generator[str | Progress, None, bool]:
        endpoint = self._chat.endpoint
        if chunk.usage is not None:
            self._usage = _usage(chunk.usage)
        counted = endpoint.prompt_counts(chunk)
        self._check_slot(chunk, counted)
        shown = phases.prompt(*counted) if counted is not None else None
        if shown is not None and show:
            yield shown
        self._chat.prompt_rate = endpoint.prompt_rate(chunk) or phases.prompt_rate or self._chat.prompt_rate
        for choice in chunk.choices or ():
            if choice.finish_reason:
                self._finish_reason = choice.finish_reason
            text = choice.delta.content if choice.delta else None
            if text:
                self._pieces.append(text)
                if (shown := phases.token()) is not None and show:
                    yield shown
                if (end := self._answer.feed(text)) is not None:
                    self._finish_reason = end
                    if end in SHORTENED:  # the pieces streamed add up to the answer kept
                        text = text[:max(0, self._answer.kept - (self._answer.streamed - len(text)))]
                    if text:
                        yield text
                    break
                yield text
        if self._answer.end is not None:
            return True
        if self._out_of_time():
            self._finish_reason = TIMED_OUT
            return True
        return False

    def _reply(self) -> Reply:
        text = "".join(self._pieces)
        if self._finish_reason in SHORTENED:
            text = text[:self._answer.kept]  # not part of the answer: what follows its function or its echo
        if not text.strip():
            raise RequestFailure(f"{self._chat.who} sent an empty answer", retry=True, endpoint=False)
        usage = self._usage
        if usage is None:
            # no usage from the server: one streamed piece is about one token; prompts ~4 characters a token
            prompt_chars = sum(len(m.get("content", "")) for m in self._request.messages)
            usage = Usage(prompt_chars // 4, len(self._pieces), estimated=True)
        return Reply(text, usage, self._finish_reason, self._request.model, time.monotonic() - self._started,
                     self._answer.echo_rest, self._answer.copied_from)

    def _out_of_time(self) -> bool:
        """True when `request_timeout` ran out while the answer was still coming: a slow model or a long
        answer, whose text so far is the reply (an attempt of its own, kept in the history). A clock that
        ran out on a silent endpoint raises (`_check_clocks`)."""
        now = time.monotonic()
        streaming = bool(self._pieces)
        idle = self._chat.settings.inactivity_timeout
        if streaming and now >= self._deadline and now - self._last_heard < idle:
            return True
        self._check_clocks(streaming)
        return False

    def _check_clocks(self, streaming: bool) -> None:
        settings, who = self._chat.settings, self._chat.who
        now = time.monotonic()
        idle = settings.inactivity_timeout
        if now - self._last_heard >= idle and (streaming or not settings.local):
            what = "stopped sending its answer" if streaming else "sent nothing"
            raise RequestFailure(f"{who} {what} for {idle:g} s", retry=False, hint=SILENT_HINT)
        if now >= self._deadline:
            # still streaming: a slow model or a long answer, not a broken endpoint
            raise RequestFailure(f"{who} did not finish its answer within "
                                 f"{settings.request_timeout:g} s", retry=False, endpoint=not streaming,
                                 hint="raise request_timeout, or lower max_tokens")


def _usage(reported: Any) -> Usage:
    """A streamed answer's `usage` (its last chunk), with the prompt tokens taken from the cache."""
    details = getattr(reported, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or 0
    return Usage(reported.prompt_tokens or 0, reported.completion_tokens or 0, cached_tokens=int(cached))
