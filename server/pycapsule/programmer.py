"""The programmer agent: the prompts, and one model call over the `openai` client.

`Programmer.stream` streams one answer (text pieces as they arrive, then the whole `Reply`),
retrying connection errors, timeouts, 429, 5xx and empty answers with backoff (honouring
Retry-After up to a cap), and raises `ModelError` with one line after the last try. Cancelling
(a threading.Event) returns within ~50 ms even while the endpoint is silent: the HTTP request
runs in a helper thread that is abandoned and closes itself.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

if TYPE_CHECKING:
    import openai

    from pycapsule.capsule import Capsule
    from pycapsule.config import Settings

Message = dict[str, str]

# No system message: the model's chat template then supplies its own default, as its authors evaluated it.
# Our former instructions there ("expert programmer, keep the signature, one code block, no tests") cost
# the embedded 0.5B model 7 HumanEval tasks at the first attempt (docs/results/system-prompt-ab).
SYSTEM_PROMPT: str | None = None


class ModelError(Exception):
    """The model could not give an answer; `str(error)` is one line for the user."""


class Cancelled(Exception):
    """The caller's cancel event was set while waiting for the model."""


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False
    """True when the endpoint sent no `usage` and the numbers were counted here."""

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.prompt_tokens + other.prompt_tokens,
                     self.completion_tokens + other.completion_tokens, self.estimated or other.estimated)


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
    """None: the first model the endpoint lists."""
    api_key: SecretStr | None = field(default=None, repr=False)
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float = 120.0
    retries: int = 3
    backoff: float = 1.0
    retry_after_cap: float = 30.0
    max_tokens: int = 2048

    @classmethod
    def from_settings(cls, settings: Settings, *, base_url: str | None = None,
                      model: str | None = None) -> ModelSettings:
        """The endpoint part of `settings`; `base_url`/`model` replace them (the embedded model's)."""
        return cls(
            base_url=base_url or settings.base_url,
            model=model or settings.model,
            api_key=settings.api_key,
            api_key_env=settings.api_key_env,
            timeout=settings.request_timeout,
            retries=settings.model_retries,
            backoff=settings.retry_backoff,
            retry_after_cap=settings.retry_after_cap,
            max_tokens=settings.max_tokens,
        )


class _Failure(Exception):
    def __init__(self, reason: str, *, retry: bool, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason, self.retry, self.retry_after = reason, retry, retry_after


class Programmer:
    """One model endpoint. Thread-safe: calls may run at once from several threads."""

    def __init__(self, settings: ModelSettings) -> None:
        self.settings = settings
        import openai  # heavy (seconds on a busy machine): only when a model is really used

        key = settings.api_key.get_secret_value() if settings.api_key else "no-key"
        self._secret = settings.api_key.get_secret_value() if settings.api_key else None
        self._client = openai.OpenAI(
            base_url=settings.base_url,
            api_key=key,
            max_retries=0,  # retries are ours: bounded, cancellable, reported
            timeout=openai.Timeout(settings.timeout, connect=min(10.0, settings.timeout)),
        )
        self._lock = threading.Lock()
        self._model = settings.model
        self._include_usage = True
        self.calls = 0
        self.usage = Usage()

    @property
    def where(self) -> str:
        return str(self._client.base_url).rstrip("/")

    def model_name(self) -> str:
        """The configured model, or the endpoint's first listed model."""
        with self._lock:
            if self._model is None:
                import openai

                try:
                    models = [m.id for m in self._client.models.list()]
                except openai.OpenAIError as error:
                    raise ModelError(self._clean(
                        f"no model name set (--model or PYCAPSULE_MODEL) and the endpoint at {self.where} "
                        f"did not list its models: {_describe(error)}")) from None
                if not models:
                    raise ModelError(f"no model name set (--model or PYCAPSULE_MODEL) and the endpoint at "
                                     f"{self.where} lists none.")
                self._model = models[0]
            return self._model

    def complete(self, messages: Sequence[Message], *, temperature: float = 0.0, seed: int | None = None,
                 on_token: Callable[[str], None] | None = None,
                 cancel: threading.Event | None = None) -> Reply:
        """One answer; `on_token` sees each streamed piece (also those of a try that later failed)."""
        stream = self.stream(messages, temperature=temperature, seed=seed, cancel=cancel)
        while True:
            try:
                item = next(stream)
            except StopIteration as done:
                return done.value
            if isinstance(item, str) and on_token is not None:
                on_token(item)

    def stream(self, messages: Sequence[Message], *, temperature: float = 0.0, seed: int | None = None,
               cancel: threading.Event | None = None) -> Generator[str | Retrying, None, Reply]:
        """Yields text pieces (and a `Retrying` before each retry); returns the `Reply`.

        `seed` makes sampling repeatable where the endpoint supports it (llama.cpp, OpenAI: best effort)."""
        model = self.model_name()
        tries = self.settings.retries + 1
        for try_number in range(1, tries + 1):
            try:
                reply = yield from self._one_try(model, messages, temperature, seed, cancel)
            except _Failure as failure:
                if not failure.retry or try_number == tries:
                    suffix = f" (after {try_number} tries)" if try_number > 1 else ""
                    raise ModelError(self._clean(f"{failure.reason}{suffix}")) from None
                delay = self.settings.backoff * 2 ** (try_number - 1)
                if failure.retry_after is not None:
                    delay = max(delay, min(failure.retry_after, self.settings.retry_after_cap))
                yield Retrying(self._clean(failure.reason), delay, try_number)
                if cancel is not None and cancel.wait(delay):
                    raise Cancelled() from None
                if cancel is None:
                    time.sleep(delay)
                continue
            with self._lock:
                self.calls += 1
                self.usage = self.usage + reply.usage
            return reply
        raise AssertionError("unreachable")

    def close(self) -> None:
        self._client.close()

    def _clean(self, text: str) -> str:
        text = " ".join(text.split())
        return text.replace(self._secret, "***") if self._secret else text

    def _one_try(self, model: str, messages: Sequence[Message], temperature: float, seed: int | None,
                 cancel: threading.Event | None) -> Generator[str, None, Reply]:
        events: queue.Queue[tuple[str, Any]] = queue.Queue()
        stop = threading.Event()
        include_usage = self._include_usage
        started = time.monotonic()

        def produce() -> None:
            try:
                extra: dict[str, Any] = {"stream_options": {"include_usage": True}} if include_usage else {}
                if seed is not None:
                    extra["seed"] = seed
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
        try:
            while True:
                try:
                    kind, item = events.get(timeout=0.05)
                except queue.Empty:
                    if cancel is not None and cancel.is_set():
                        raise Cancelled() from None
                    continue
                if cancel is not None and cancel.is_set():
                    raise Cancelled()
                if kind == "end":
                    break
                if kind == "error":
                    raise self._classify(item, model)
                if item.usage is not None:
                    usage = Usage(item.usage.prompt_tokens or 0, item.usage.completion_tokens or 0)
                for choice in item.choices or ():
                    if choice.finish_reason:
                        finish_reason = choice.finish_reason
                    text = choice.delta.content if choice.delta else None
                    if text:
                        pieces.append(text)
                        yield text
        finally:
            stop.set()
        text = "".join(pieces)
        if not text.strip():
            raise _Failure(f"the model at {self.where} sent an empty answer", retry=True)
        if usage is None:
            # no usage from the server: one streamed piece is about one token; prompts ~4 characters a token
            prompt_chars = sum(len(m.get("content", "")) for m in messages)
            usage = Usage(prompt_chars // 4, len(pieces), estimated=True)
        return Reply(text, usage, finish_reason, model, time.monotonic() - started)

    def _classify(self, error: BaseException, model: str) -> _Failure:
        import openai

        where = self.where
        if isinstance(error, openai.APITimeoutError):
            seconds = self.settings.timeout
            return _Failure(f"the model at {where} did not answer within {seconds:g} s", retry=True)
        if isinstance(error, openai.APIConnectionError):
            cause = error.__cause__ or error.__context__
            detail = _describe(cause) if cause else _describe(error)
            return _Failure(f"cannot reach the model at {where}: {detail}", retry=True)
        if isinstance(error, openai.APIStatusError):
            status = error.status_code
            message = _status_message(error)
            if status == 400 and "stream_options" in message and self._include_usage:
                self._include_usage = False  # an older server: count tokens here instead
                return _Failure(f"the model at {where} does not accept stream_options", retry=True,
                                retry_after=0)
            if status == 429:
                return _Failure(f"the model at {where} is rate-limited (429): {message}", retry=True,
                                retry_after=_retry_after(error))
            if status >= 500:
                return _Failure(f"the model at {where} failed ({status}): {message}", retry=True,
                                retry_after=_retry_after(error))
            if status in (401, 403):
                return _Failure(f"the model at {where} refused the API key ({status}): {message}; "
                                f"check ${self.settings.api_key_env}", retry=False)
            if status == 404:
                return _Failure(f"the model at {where} does not know model '{model}' (404): {message}",
                                retry=False)
            return _Failure(f"the model at {where} rejected the request ({status}): {message}", retry=False)
        if isinstance(error, Exception):
            return _Failure(f"the model at {where} sent an unreadable answer: {_describe(error)}", retry=True)
        raise error  # KeyboardInterrupt and friends are not ours to swallow


def _describe(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _status_message(error: openai.APIStatusError) -> str:
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return " ".join(str(inner["message"]).split())[:300]
        if isinstance(inner, str):
            return inner[:300]
    text = error.response.text if error.response is not None else str(error)
    return " ".join(text.split())[:300] or "no message"


def _retry_after(error: openai.APIStatusError) -> float | None:
    value = error.response.headers.get("retry-after") if error.response is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


# ---- prompts -------------------------------------------------------------------------------------

def function_task(capsule: Capsule) -> str:
    """The target as the user wrote it, without its body: decorators, signature and docstring."""
    head = capsule.module_source[capsule.header_start: capsule.body_start].rstrip()
    if capsule.docstring is None:
        return f"{head}\n{capsule.indent}...\n" if head.endswith(":") else f"{head}\n"
    return f"{head}\n"


def _task_message(capsule: Capsule, context: str | None) -> str:
    where = ""
    if "." in capsule.qualname:
        owner = capsule.qualname.rsplit(".", 1)[0]
        where = f" (it is `{capsule.qualname}`, defined inside `{owner}`)"
    text = f"Complete this Python function{where}:\n```python\n{function_task(capsule)}```\n"
    if context and context.strip():
        text += f"\nIt can use these names from its module (they exist already; do not repeat them):\n" \
                f"```python\n{context.strip()}\n```\n"
    return text


def generate_messages(capsule: Capsule, context: str | None) -> list[Message]:
    system: list[Message] = [{"role": "system", "content": SYSTEM_PROMPT}] if SYSTEM_PROMPT else []
    return [*system, {"role": "user", "content": _task_message(capsule, context)}]


def restart_messages(capsule: Capsule, context: str | None, failures: Sequence[str]) -> list[Message]:
    """A fresh conversation: the task, plus how earlier attempts failed (one line each) but not their code,
    which a small model would copy."""
    messages = generate_messages(capsule, context)
    if failures:
        listed = "\n".join(f"- {failure}" for failure in failures)
        note = f"\nEarlier attempts failed like this; write a different solution:\n{listed}\n"
        messages[-1]["content"] += note
    return messages


def fix_request(condensed_error: str) -> str:
    return (f"That function fails:\n{condensed_error.strip()}\n\nFix it. Reply with the whole corrected "
            "function in one ```python code block.")


def fix_messages(capsule: Capsule, context: str | None, history_window: Sequence[tuple[str, str]],
                 last_code: str, condensed_error: str) -> list[Message]:
    """The task, then up to `history_window` earlier (code, condensed error) turns, then the last one."""
    messages = generate_messages(capsule, context)
    for code, error in (*history_window, (last_code, condensed_error)):
        messages.append({"role": "assistant", "content": f"```python\n{code.strip()}\n```"})
        messages.append({"role": "user", "content": fix_request(error)})
    return messages
