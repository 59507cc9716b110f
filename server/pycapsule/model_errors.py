"""A failed model request in the user's words: what `Programmer` raises, and the one sentence it says.

`ErrorWording` turns what went wrong (an `openai` error, a clock that ran out) into a `RequestFailure`:
its reason, whether a retry can succeed on its own, whether the endpoint itself failed, and what the user
should check. After the last try it becomes one `ModelError` sentence, with no library names, no HTML and
no credentials.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pycapsule.redact import mask_credentials

if TYPE_CHECKING:
    import openai

    from pycapsule.model_settings import ModelSettings


SILENT_HINT = "check that it is running and not overloaded, or raise inactivity_timeout"
"""What to check about an endpoint that sent nothing in time."""


class ModelError(Exception):
    """The model could not give an answer; `str(error)` is one line for the user."""


class EndpointError(ModelError):
    """The endpoint itself failed: unreachable, silent, refused the key, does not know the model, kept
    failing (5xx, 429), or is misconfigured. Every later request of the run would fail the same way, so
    a run over several functions stops at the first one (`loop.unavailable_part`)."""


class Cancelled(Exception):
    """The caller's cancel event was set while waiting for the model."""


class RequestFailure(Exception):
    """One try failed; `Programmer` retries it or words it as a `ModelError`."""

    def __init__(self, reason: str, *, retry: bool, retry_after: float | None = None,
                 endpoint: bool = True, hint: str = "") -> None:
        super().__init__(reason)
        self.reason, self.retry, self.retry_after = reason, retry, retry_after
        self.endpoint, self.hint = endpoint, hint
        """`endpoint`: the endpoint failed, not this one request; `hint`: what the user should check."""


@dataclass(frozen=True)
class ErrorWording:
    """How one endpoint's failures are told: who failed, what to check, its key never shown."""

    where: str
    """The endpoint's URL, credentials masked."""
    label: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    request_timeout: float = 300.0
    secret: str | None = field(default=None, repr=False)

    @classmethod
    def of(cls, settings: ModelSettings, where: str) -> ErrorWording:
        secret = settings.api_key.get_secret_value() if settings.api_key else None
        return cls(where, settings.label, settings.api_key_env, settings.request_timeout, secret)

    @property
    def who(self) -> str:
        """The model as messages name it: "the model at URL", or "the embedded Qwen2.5-Coder 1.5B"."""
        return f"the {self.label}" if self.label else f"the model at {self.where}"

    @property
    def reach_hint(self) -> str:
        if self.label:
            return "it may have stopped: run again (it restarts by itself)"
        return "check that the server is running and that base_url is right"

    def clean(self, text: str) -> str:
        text = mask_credentials(" ".join(text.split()))
        # a key of a few characters is no secret worth garbling every word that holds its letters
        return text.replace(self.secret, "***") if self.secret and len(self.secret) >= 6 else text

    def error(self, failure: RequestFailure, tries: int, out_of_time: bool) -> ModelError:
        """One sentence: what happened (and how often), then what to check."""
        how_often = f" (after {tries} tries)" if tries > 1 else ""
        if out_of_time:
            how_often = f" (after {tries} tr{'ies' if tries > 1 else 'y'}; no time left for another " \
                        f"within request_timeout = {self.request_timeout:g} s)"
        hint = f"; {failure.hint}" if failure.hint else ""
        kind = EndpointError if failure.endpoint else ModelError
        return kind(self.clean(f"{failure.reason}{how_often}{hint}."))

    def classify(self, error: BaseException, model: str) -> RequestFailure:
        """What the `openai` client raised, as a failure to retry or to tell (`model`: the one asked)."""
        import openai

        who = self.who
        if isinstance(error, openai.APITimeoutError):
            return RequestFailure(f"{who} did not answer in time", retry=False, hint=SILENT_HINT)
        if isinstance(error, openai.APIConnectionError):
            return RequestFailure(f"cannot reach {who}: {connection_problem(error)}", retry=True,
                                  hint=self.reach_hint)
        if isinstance(error, openai.APIStatusError):
            return self._status_failure(error, model)
        if isinstance(error, Exception):
            return RequestFailure(f"{who} sent an answer that is not in the OpenAI format",
                                  retry=True, hint="check that base_url points at an OpenAI-compatible API")
        raise error  # KeyboardInterrupt and friends are not ours to swallow

    def _status_failure(self, error: openai.APIStatusError, model: str) -> RequestFailure:
        where, who = self.where, self.who
        status = error.status_code
        message = status_message(error)
        said = f" ({status}: {message})" if message else f" ({status})"
        if status == 429:
            return RequestFailure(f"{who} is rate-limited{said}", retry=True,
                                  retry_after=_retry_after(error), hint="wait, or check your plan's limits")
        if status >= 500:
            return RequestFailure(f"{who} failed{said}", retry=True,
                                  retry_after=_retry_after(error), hint="check the server's log")
        if status in (401, 403):
            return RequestFailure(f"{who} refused the API key{said}", retry=False,
                                  hint=f"check ${self.api_key_env}")
        if status == 404 and "model" in message.lower():
            return RequestFailure(f"the endpoint at {where} does not know model '{model}'{said}", retry=False,
                                  hint="check the model name (--model or PYCAPSULE_MODEL)")
        if status == 404:  # not about the model: the address has no chat completions API
            return RequestFailure(f"the endpoint at {where} has no chat completions API{said}", retry=False,
                                  hint="check that base_url is the API's address (it usually ends in /v1)")
        return RequestFailure(f"{who} rejected the request{said}", retry=False, endpoint=False,
                              hint="check the endpoint's limits (context length, max_tokens)")


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


def status_message(error: openai.APIStatusError) -> str:
    """What an error status's body says, as a short sentence."""
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
