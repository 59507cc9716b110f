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
"""

from __future__ import annotations

import html
import math
import queue
import re
import threading
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

from pycapsule.debugging.answer_watch import COMPLETE, COPIED, LOOPED, AnswerTarget, AnswerWatch
from pycapsule.generators import Returning
from pycapsule.model_choice import choose_model
from pycapsule.model_progress import Progress, RequestWatch, ServerProbe, why_stalled
from pycapsule.redact import mask_credentials

if TYPE_CHECKING:
    import openai

    from pycapsule.config import Settings
    from pycapsule.embedded_model.read_ahead import PromptReader

Message = dict[str, str]
"""One chat message as the endpoint takes it: {"role": ..., "content": ...}."""

# `Reply.finish_reason`s of an answer ended here (debugging/answer_watch.py): it kept repeating itself
# (LOOPED), its function was complete (COMPLETE), it copied the prompt's context (COPIED).
TIMED_OUT = "timed_out"
"""`Reply.finish_reason` of an answer cut off here by `request_timeout` while it streamed: what came
is kept."""

class ModelError(Exception):
    """The model could not give an answer; `str(error)` is one line for the user."""


class EndpointError(ModelError):
    """The endpoint itself failed: unreachable, silent, refused the key, does not know the model, kept
    failing (5xx, 429), or is misconfigured. Every later request of the run would fail the same way, so
    a run over several functions stops at the first one (`loop.unavailable_part`)."""


class Cancelled(Exception):
    """The caller's cancel event was set while waiting for the model."""


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False
    """True when the endpoint sent no `usage` and the numbers were counted here."""
    cached_tokens: int = 0
    """Of `prompt_tokens`, those the endpoint did not read again: reused from its prompt cache."""

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.prompt_tokens + other.prompt_tokens,
                     self.completion_tokens + other.completion_tokens, self.estimated or other.estimated,
                     self.cached_tokens + other.cached_tokens)


@dataclass(frozen=True)
class Reply:
    text: str
    usage: Usage
    finish_reason: str | None
    model: str
    seconds: float
    """Wall-clock time of the successful request (retries and waits excluded)."""

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"

    @property
    def looped(self) -> bool:
        """The answer fell into repeating itself and was ended early (`debugging.repetition`)."""
        return self.finish_reason == LOOPED

    @property
    def copied(self) -> bool:
        """The answer started copying the prompt's context and was ended early (`debugging.answer_watch`)."""
        return self.finish_reason == COPIED

    @property
    def ended_at_code_end(self) -> bool:
        """The answer's function was complete and the rest was not read (`debugging.answer_watch`)."""
        return self.finish_reason == COMPLETE

    @property
    def timed_out(self) -> bool:
        """The answer was still streaming when `request_timeout` ran out."""
        return self.finish_reason == TIMED_OUT


@dataclass(frozen=True)
class Retrying:
    """Yielded by `Programmer.stream` before a retry: what went wrong and how long it waits."""

    reason: str
    delay: float
    try_number: int


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
    it; `inactivity_timeout` starts with the first piece."""
    stall_notice: float = 30.0
    """Seconds with nothing new (no prompt count, no token) before a progress says why (`model_progress`)."""
    cache_sampled_prompts: bool = False
    """Ask the embedded model's server (`local`; llama.cpp's option) to reuse the prompt prefix it read for
    the request before, for sampled requests only: a greedy answer must depend on its prompt alone (the
    `prompt_cache` setting)."""

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
        )


class _Failure(Exception):
    def __init__(self, reason: str, *, retry: bool, retry_after: float | None = None,
                 endpoint: bool = True, hint: str = "") -> None:
        super().__init__(reason)
        self.reason, self.retry, self.retry_after = reason, retry, retry_after
        self.endpoint, self.hint = endpoint, hint
        """`endpoint`: the endpoint failed, not this one request; `hint`: what the user should check."""


class _NotReadAhead(Exception):
    """The server did not take exactly the prompt read ahead from its cache (another request took the
    slot meanwhile): found at its first count, before it read a token."""


class Programmer:
    """One model endpoint. Thread-safe: calls may run at once from several threads."""

    def __init__(self, settings: ModelSettings, server: ServerProbe | None = None) -> None:
        """`server`: the embedded model's server (its pid, how it stopped), for what a stall says."""
        self.settings = settings
        self._server = server
        self._prompt_rate: float | None = None
        import openai  # heavy (seconds on a busy machine): only when a model is really used

        key = settings.api_key.get_secret_value() if settings.api_key else "no-key"
        self._secret = settings.api_key.get_secret_value() if settings.api_key else None
        idle = settings.inactivity_timeout
        read = settings.request_timeout if settings.local else idle
        self._client = openai.OpenAI(
            base_url=settings.base_url,
            api_key=key,
            max_retries=0,  # retries are ours: bounded, cancellable, reported
            # our clocks decide (see _one_try); the client's only free an abandoned request's thread
            timeout=openai.Timeout(read + 5.0, connect=min(10.0, idle)),
        )
        self._lock = threading.Lock()
        self._turn = threading.Semaphore(1) if settings.one_at_a_time else None
        self._waiting = 0
        """Requests waiting for their turn: a read-ahead gives way to them between two batches."""
        self._reader: PromptReader | None = None
        if settings.local and settings.base_url:
            from pycapsule.embedded_model.read_ahead import PromptReader

            self._reader = PromptReader(settings.base_url, settings.request_timeout)
        self._model = settings.model
        self._include_usage = True
        self.calls = 0
        self.usage = Usage()

    @property
    def where(self) -> str:
        """The endpoint's URL, credentials masked."""
        return mask_credentials(str(self._client.base_url).rstrip("/"))

    @property
    def who(self) -> str:
        """The model as messages name it: "the model at URL", or "the embedded Qwen2.5-Coder 1.5B"."""
        return f"the {self.settings.label}" if self.settings.label else f"the model at {self.where}"

    def model_name(self) -> str:
        """The configured model, or the one `model_choice` picks among those the endpoint lists."""
        with self._lock:
            if self._model is None:
                import openai

                try:
                    models = [m.id for m in self._client.models.list()]
                except openai.NotFoundError:
                    raise EndpointError(self._clean(
                        f"the endpoint at {self.where} has no model list (404) to choose a model from; name "
                        "the model (--model or PYCAPSULE_MODEL), and check that base_url is the API's "
                        "address (it usually ends in /v1)."
                    )) from None
                except openai.OpenAIError as error:  # the same sentence as when asking for an answer
                    raise self._error(self._classify(error, ""), 1, False) from None
                except Exception:  # a listing that is not OpenAI's shape
                    raise EndpointError(self._clean(
                        f"the endpoint at {self.where} did not list its models in the OpenAI format; "
                        "name the model (--model or PYCAPSULE_MODEL)."
                    )) from None
                if not models:
                    raise EndpointError(self._clean(
                        f"the endpoint at {self.where} lists no models; "
                        "name one (--model or PYCAPSULE_MODEL)."
                    ))
                chosen = choose_model(models, self.settings.base_url)
                if chosen is None:
                    raise EndpointError(self._clean(
                        f"the endpoint at {self.where} lists {len(models)} model(s) and none of them can "
                        f"chat (they are for images, audio, embeddings or moderation, e.g. {models[0]}); "
                        "name a chat model (--model or PYCAPSULE_MODEL)."
                    ))
                self._model = chosen
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
        copies the prompt's context (`debugging.answer_watch`). Without it only a loop ends an answer."""
        model = self.model_name()
        if self._turn is not None:
            watch = self._watch() if progress else None
            if watch is not None:
                yield watch.start()
            with self._lock:
                self._waiting += 1
            try:
                while not self._turn.acquire(timeout=0.05):
                    if cancel is not None and cancel.is_set():
                        raise Cancelled()
                    if watch is not None and (shown := watch.tick()) is not None:
                        yield shown
            finally:
                with self._lock:
                    self._waiting -= 1
        try:
            reply = yield from self._tries(model, messages, temperature, seed, cancel, progress, target)
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
        if self._reader is None:
            return 0
        from pycapsule.embedded_model.read_ahead import ReadAheadError

        def stop() -> bool:
            with self._lock:
                waiting = self._waiting
            return waiting > 0 or (cancel is not None and cancel.is_set())

        try:
            return self._reader.read(messages, stop, self._turn)
        except ReadAheadError as error:
            self._reader.forget()
            raise ModelError(self._clean(str(error))) from None

    def _reusable(self, messages: Sequence[Message], temperature: float) -> tuple[int, int]:
        """(tokens of the prompt, tokens read ahead that this request takes from the cache); (0, 0) when it
        reads the whole prompt. Only a greedy request reuses a read-ahead; any other request changes what the
        slot holds."""
        reader = self._reader
        if reader is None or not reader.holds:
            return 0, 0
        if temperature == 0:
            from pycapsule.embedded_model.read_ahead import ReadAheadError

            try:
                tokens = reader.tokens(messages)
            except ReadAheadError:
                tokens = []
            if (held := reader.held_for(tokens)) > 0:
                return len(tokens), held
        reader.forget()
        return 0, 0

    def _tries(self, model: str, messages: Sequence[Message], temperature: float, seed: int | None,
               cancel: threading.Event | None, progress: bool, target: AnswerTarget | None
               ) -> Generator[str | Retrying | Progress, None, Reply]:
        started = time.monotonic()
        deadline = started + self.settings.request_timeout
        tries = self.settings.retries + 1
        reuse = self._reusable(messages, temperature)
        for try_number in range(1, tries + 1):
            try:
                watch = self._watch()
                try:
                    return (yield from self._one_try(model, messages, temperature, seed, cancel, deadline,
                                                     watch if progress else None, reuse, target))
                except _NotReadAhead:  # checked before any token was read: ask again, reading it all
                    if self._reader is not None:
                        self._reader.forget()
                    reuse = (0, 0)
                    return (yield from self._one_try(model, messages, temperature, seed, cancel, deadline,
                                                     watch if progress else None, reuse, target))
            except _Failure as failure:
                if reuse != (0, 0) and self._reader is not None:
                    self._reader.forget()
                    reuse = (0, 0)
                delay = self.settings.backoff * 2 ** (try_number - 1)
                if failure.retry_after is not None:
                    delay = max(delay, min(failure.retry_after, self.settings.retry_after_cap))
                out_of_time = time.monotonic() + delay >= deadline
                if not failure.retry or try_number == tries or out_of_time:
                    raise self._error(failure, try_number, out_of_time and failure.retry) from None
                yield Retrying(self._clean(failure.reason), delay, try_number)
                if cancel is not None and cancel.wait(delay):
                    raise Cancelled() from None
                if cancel is None:
                    time.sleep(delay)
        raise AssertionError("unreachable")

    def _error(self, failure: _Failure, tries: int, out_of_time: bool) -> ModelError:
        """One sentence: what happened (and how often), then what to check."""
        how_often = f" (after {tries} tries)" if tries > 1 else ""
        if out_of_time:
            how_often = f" (after {tries} tr{'ies' if tries > 1 else 'y'}; no time left for another " \
                        f"within request_timeout = {self.settings.request_timeout:g} s)"
        hint = f"; {failure.hint}" if failure.hint else ""
        kind = EndpointError if failure.endpoint else ModelError
        return kind(self._clean(f"{failure.reason}{how_often}{hint}."))

    def close(self) -> None:
        self._client.close()

    def _clean(self, text: str) -> str:
        text = mask_credentials(" ".join(text.split()))
        # a key of a few characters is no secret worth garbling every word that holds its letters
        return text.replace(self._secret, "***") if self._secret and len(self._secret) >= 6 else text

    def _watch(self) -> RequestWatch:
        """The progress of one request to this endpoint."""
        local, settings = self.settings.local, self.settings

        def stalled(phase: str, seconds: float, model_cores: float | None) -> str:
            limit = f"request_timeout = {settings.request_timeout:g} s" if local and phase != "writing" \
                else f"inactivity_timeout = {settings.inactivity_timeout:g} s of silence"
            return why_stalled(phase, seconds, who=self.who, local=local,  # type: ignore[arg-type]
                               model_cores=model_cores, limit=limit)

        pid = self._server.pid if self._server is not None else None
        return RequestWatch(local=local, stall_notice=settings.stall_notice, prompt_rate=self._prompt_rate,
                            stalled=stalled, server_pid=pid)

    def _dead_server(self) -> None:
        """Raises when the embedded model's server has stopped: a request to it would only wait out its
        timeout."""
        error = self._server.error() if self._server is not None else None
        if error is not None:
            raise _Failure(error.rstrip("."), retry=False, hint=self._reach_hint)

    def _one_try(self, model: str, messages: Sequence[Message], temperature: float, seed: int | None,
                 cancel: threading.Event | None, deadline: float, watch: RequestWatch | None,
                 reuse: tuple[int, int] = (0, 0), target: AnswerTarget | None = None
                 ) -> Generator[str | Progress, None, Reply]:
        """`reuse`: (the prompt's tokens, how many of them were read ahead), (0, 0) for none."""
        total, held = reuse
        unchecked = held > 0
        events: queue.Queue[tuple[str, Any]] = queue.Queue()
        stop = threading.Event()
        include_usage = self._include_usage
        started = time.monotonic()

        def produce() -> None:
            try:
                extra: dict[str, Any] = {"stream_options": {"include_usage": True}} if include_usage else {}
                if seed is not None:
                    extra["seed"] = seed
                # llama.cpp's own option; the embedded server's default is off (serve.py)
                body: dict[str, Any] = {}
                sampled_cache = self.settings.cache_sampled_prompts and temperature > 0
                if self.settings.local and (held or sampled_cache):
                    body["cache_prompt"] = True
                if self.settings.local:  # the prompt's counts as llama.cpp reads it (model_progress)
                    body["return_progress"] = True
                if body:
                    extra["extra_body"] = body
                response = self._client.chat.completions.create(
                    model=model, messages=list(messages), stream=True, temperature=temperature,
                    max_tokens=self.settings.max_tokens, **extra)  # type: ignore[call-overload]
                try:
                    for chunk in response:
                        if stop.is_set():
                            return
                        events.put(("chunk", chunk))
                finally:
                    response.close()
                events.put(("end", None))
            except BaseException as error:  # handed to the consumer, which classifies it
                events.put(("error", error))

        threading.Thread(target=produce, name="pycapsule-model-call", daemon=True).start()
        pieces: list[str] = []
        usage: Usage | None = None
        finish_reason: str | None = None
        last_heard = started
        last = messages[-1] if messages else {}
        answer = AnswerWatch(target, last.get("content", "") if last.get("role") == "assistant" else "")
        phases = watch or self._watch()  # the stall check runs without `progress` too
        if watch is not None:
            yield watch.start()
        try:
            while True:
                try:
                    kind, item = events.get(timeout=0.05)
                except queue.Empty:
                    if cancel is not None and cancel.is_set():
                        raise Cancelled() from None
                    if self._out_of_time(last_heard, deadline, bool(pieces)):
                        finish_reason = TIMED_OUT
                        break
                    shown = phases.tick()
                    if shown is not None and phases.current.stalled:
                        self._dead_server()
                    if shown is not None and watch is not None:
                        yield shown
                    continue
                last_heard = time.monotonic()
                if cancel is not None and cancel.is_set():
                    raise Cancelled()
                if kind == "end":
                    break
                if kind == "error":
                    raise self._classify(item, model)
                if item.usage is not None:
                    usage = _usage(item.usage)
                counted = _prompt_counts(item)
                if unchecked and counted is not None:
                    if (counted[0], counted[1]) != (total, held):
                        raise _NotReadAhead()  # the slot held something else: this read would round otherwise
                    unchecked = False
                if unchecked and any(choice.delta and choice.delta.content for choice in item.choices or ()):
                    raise _NotReadAhead()  # an answer without the count to check it by
                shown = phases.prompt(*counted) if counted is not None else None
                if shown is not None and watch is not None:
                    yield shown
                self._prompt_rate = _prompt_rate(item) or phases.prompt_rate or self._prompt_rate
                for choice in item.choices or ():
                    if choice.finish_reason:
                        finish_reason = choice.finish_reason
                    text = choice.delta.content if choice.delta else None
                    if text:
                        pieces.append(text)
                        if (shown := phases.token()) is not None and watch is not None:
                            yield shown
                        yield text
                        if (end := answer.feed(text)) is not None:
                            finish_reason = end
                            break
                if answer.end is not None:
                    break
                if self._out_of_time(last_heard, deadline, bool(pieces)):
                    finish_reason = TIMED_OUT
                    break
        finally:
            stop.set()
        text = "".join(pieces)
        if finish_reason == COMPLETE:
            text = text[:answer.kept]  # what followed the function is not part of the answer
        if not text.strip():
            raise _Failure(f"{self.who} sent an empty answer", retry=True, endpoint=False)
        if usage is None:
            # no usage from the server: one streamed piece is about one token; prompts ~4 characters a token
            prompt_chars = sum(len(m.get("content", "")) for m in messages)
            usage = Usage(prompt_chars // 4, len(pieces), estimated=True)
        return Reply(text, usage, finish_reason, model, time.monotonic() - started)

    def _out_of_time(self, last_heard: float, deadline: float, streaming: bool) -> bool:
        """True when `request_timeout` ran out while the answer was still coming: a slow model or a long
        answer, whose text so far is the reply (an attempt of its own, kept in the history). A clock that
        ran out on a silent endpoint raises (`_check_clocks`)."""
        now = time.monotonic()
        if streaming and now >= deadline and now - last_heard < self.settings.inactivity_timeout:
            return True
        self._check_clocks(last_heard, deadline, streaming)
        return False

    def _check_clocks(self, last_heard: float, deadline: float, streaming: bool) -> None:
        now = time.monotonic()
        idle = self.settings.inactivity_timeout
        if now - last_heard >= idle and (streaming or not self.settings.local):
            what = "stopped sending its answer" if streaming else "sent nothing"
            raise _Failure(f"{self.who} {what} for {idle:g} s", retry=False,
                           hint="check that it is running and not overloaded, or raise inactivity_timeout")
        if now >= deadline:
            # still streaming: a slow model or a long answer, not a broken endpoint
            raise _Failure(f"{self.who} did not finish its answer within "
                           f"{self.settings.request_timeout:g} s", retry=False, endpoint=not streaming,
                           hint="raise request_timeout, or lower max_tokens")

    @property
    def _reach_hint(self) -> str:
        if self.settings.label:
            return "it may have stopped: run again (it restarts by itself)"
        return "check that the server is running and that base_url is right"

    def _classify(self, error: BaseException, model: str) -> _Failure:
        import openai

        where, who = self.where, self.who
        if isinstance(error, openai.APITimeoutError):
            return _Failure(f"{who} did not answer in time", retry=False,
                            hint="check that it is running and not overloaded, or raise inactivity_timeout")
        if isinstance(error, openai.APIConnectionError):
            return _Failure(f"cannot reach {who}: {connection_problem(error)}", retry=True,
                            hint=self._reach_hint)
        if isinstance(error, openai.APIStatusError):
            status = error.status_code
            message = _status_message(error)
            said = f" ({status}: {message})" if message else f" ({status})"
            if status == 400 and "stream_options" in message and self._include_usage:
                self._include_usage = False  # an older server: count tokens here instead
                return _Failure(f"{who} does not accept stream_options", retry=True,
                                retry_after=0)
            if status == 429:
                return _Failure(f"{who} is rate-limited{said}", retry=True,
                                retry_after=_retry_after(error), hint="wait, or check your plan's limits")
            if status >= 500:
                return _Failure(f"{who} failed{said}", retry=True,
                                retry_after=_retry_after(error), hint="check the server's log")
            if status in (401, 403):
                return _Failure(f"{who} refused the API key{said}", retry=False,
                                hint=f"check ${self.settings.api_key_env}")
            if status == 404 and "model" in message.lower():
                return _Failure(f"the endpoint at {where} does not know model '{model}'{said}", retry=False,
                                hint="check the model name (--model or PYCAPSULE_MODEL)")
            if status == 404:  # not about the model: the address has no chat completions API
                return _Failure(f"the endpoint at {where} has no chat completions API{said}", retry=False,
                                hint="check that base_url is the API's address (it usually ends in /v1)")
            return _Failure(f"{who} rejected the request{said}", retry=False, endpoint=False,
                            hint="check the endpoint's limits (context length, max_tokens)")
        if isinstance(error, Exception):
            return _Failure(f"{who} sent an answer that is not in the OpenAI format",
                            retry=True, hint="check that base_url points at an OpenAI-compatible API")
        raise error  # KeyboardInterrupt and friends are not ours to swallow


def connection_problem(error: BaseException) -> str:
    """What went wrong with a connection, in a few plain words (never a library's class name)."""
    import errno
    import socket
    import ssl

    seen: set[int] = set()
    current: BaseException | None = error
    names: list[str] = []
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, socket.gaierror):
            return "its host name could not be resolved"
        if isinstance(current, ssl.SSLCertVerificationError):
            return "its TLS certificate could not be verified"
        if isinstance(current, ssl.SSLError):
            return "the TLS handshake failed"
        code = getattr(current, "errno", None)
        if isinstance(current, ConnectionRefusedError) or code == errno.ECONNREFUSED:
            return "connection refused"
        if isinstance(current, ConnectionResetError):
            return "the connection was reset"
        if code in (errno.EHOSTUNREACH, errno.ENETUNREACH):
            return "the network or host is unreachable"
        names.append(type(current).__name__)
        current = current.__cause__ or current.__context__
    text = " ".join(str(error).split()).lower()
    if "connection refused" in text or "errno 111" in text:
        return "connection refused"
    if any(n in ("UnsupportedProtocol",) for n in names):
        return "its address does not start with http:// or https://"
    if any(n in ("RemoteProtocolError", "ReadError", "LocalProtocolError") for n in names):
        return "the connection closed before a complete answer"
    if any(n in ("ConnectError", "ConnectTimeout") for n in names):
        return "the connection could not be made"
    return "the connection failed"


_TAG = re.compile(r"<[^>]*>")
_TITLE = re.compile(r"(?is)<title[^>]*>(.*?)</title>|<h1[^>]*>(.*?)</h1>")


def plain_sentence(text: str, limit: int = 160) -> str:
    """An error body as a short sentence: an HTML page's title (or its text without tags), shortened."""
    if "<" in text and ">" in text and re.search(r"(?i)<(html|head|body|title|h1|p|div|!doctype)\b", text):
        found = _TITLE.search(text)
        text = next((g for g in found.groups() if g), "") if found else ""
        text = html.unescape(_TAG.sub(" ", text or ""))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _status_message(error: openai.APIStatusError) -> str:
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return plain_sentence(str(inner["message"]))
        if isinstance(inner, str):
            return plain_sentence(inner)
    text = error.response.text if error.response is not None else ""
    return plain_sentence(text)


def _retry_after(error: openai.APIStatusError) -> float | None:
    value = error.response.headers.get("retry-after") if error.response is not None else None
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return max(0.0, seconds) if seconds is not None and math.isfinite(seconds) else None


def _prompt_counts(chunk: Any) -> tuple[int, int, int, float] | None:
    """llama.cpp's `prompt_progress` in a streamed chunk: (total, cached, processed, ms), else None."""
    counts = getattr(chunk, "prompt_progress", None)
    if not isinstance(counts, dict):
        return None
    try:
        return (int(counts["total"]), int(counts.get("cache", 0)), int(counts["processed"]),
                float(counts.get("time_ms", 0)))
    except (KeyError, TypeError, ValueError):
        return None


def _prompt_rate(chunk: Any) -> float | None:
    """The prompt rate llama.cpp measured (its last chunk's `timings`), when it read enough to tell."""
    timings = getattr(chunk, "timings", None)
    if not isinstance(timings, dict):
        return None
    rate, read = timings.get("prompt_per_second"), timings.get("prompt_n")
    if not isinstance(rate, int | float) or not isinstance(read, int) or read < 32:
        return None
    return float(rate) if math.isfinite(rate) and rate > 0 else None


def _usage(reported: Any) -> Usage:
    """A streamed answer's `usage` (its last chunk), with the prompt tokens taken from the cache."""
    details = getattr(reported, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or 0
    return Usage(reported.prompt_tokens or 0, reported.completion_tokens or 0, cached_tokens=int(cached))
