"""The engine's model, started on its first request: nothing loads the model when nothing needs it.

`ModelSource` stands where the loop wants a `Programmer` (`settings`, `stream`): an endpoint's programmer is
made on the first request, and with no endpoint configured the embedded model is installed if missing and
its shared server found or started (`embedded_model.endpoint.start_local_endpoint`) at that moment, not
before. So a function that already passes its examples and tests, or `check`, never starts, contacts or
downloads the model. While the embedded model starts, the request's stream yields `Progress("starting")`
with the install's and the start's lines (`note`) and the seconds; a server found stopped before a request
is started again (its programmer and endpoint let go of).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator, Sequence
from dataclasses import replace
from typing import Any

from pycapsule.config import Settings, endpoint_problem
from pycapsule.debugging.answer_watch import AnswerTarget
from pycapsule.embedded_model.which import embedded_label
from pycapsule.model_client import (
    Cancelled,
    EndpointError,
    Message,
    ModelSettings,
    Programmer,
    Reply,
    Retrying,
)
from pycapsule.model_progress import HEARTBEAT, Progress


class _Start:
    """The embedded model starting in a thread of its own (an install can take minutes): its lines so far,
    then its endpoint or its error."""

    def __init__(self, size: str | None, own_file: str | None = None) -> None:
        self.lines: list[str] = []
        self.began = time.monotonic()
        self.done = threading.Event()
        self.endpoint: Any = None
        self.error: Exception | None = None
        threading.Thread(target=self._run, args=(size, own_file), name="pycapsule-embedded-model",
                         daemon=True).start()

    def _run(self, size: str | None, own_file: str | None) -> None:
        from pycapsule.embedded_model.endpoint import start_local_endpoint

        try:
            self.endpoint = start_local_endpoint(size, on_progress=self.lines.append, own_file=own_file)
        except Exception as error:  # ModelInstallError / ModelServerError carry one sentence
            self.error = error
        finally:
            self.done.set()


class ModelSource:
    """Thread-safe: the first request of any thread starts the model; the others wait for that start."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._lock = threading.Lock()
        self._programmer: Programmer | None = None
        self._endpoint: Any = None
        self._start: _Start | None = None
        embedded = settings.uses_embedded_model
        self.settings = ModelSettings.from_settings(
            settings, one_at_a_time=embedded, local=embedded,
            label=(embedded_label(settings.embedded_model_size, settings.embedded_model_file)
                   if embedded else None))
        """What the programmer will be (the embedded model's `base_url` and `model` once it runs)."""

    @property
    def threads(self) -> int | None:
        """The embedded model's CPU threads while it runs; None for an endpoint or before it starts."""
        endpoint = self._endpoint
        return endpoint.threads if endpoint is not None else None

    @property
    def started(self) -> bool:
        """A programmer is made (for the embedded model: its server was found or started)."""
        return self._programmer is not None

    def programmer(self, cancel: threading.Event | None = None) -> Programmer:
        """The programmer, starting the model now if needed."""
        answer = self.ready(cancel)
        try:
            while True:
                next(answer)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]

    def ready(self, cancel: threading.Event | None = None) -> Generator[Progress, None, Programmer]:
        """The programmer; while the embedded model is being installed or started, yields its `Progress`
        ("starting"; for an endpoint, "connecting" while its client is made). Raises EndpointError when it
        cannot start (the next request tries again)."""
        with self._lock:
            if self._endpoint is not None and not self._endpoint.alive:
                self._let_go()  # killed, crashed or stopped idle: start it again
            if self._programmer is not None:
                return self._programmer
            if (problem := endpoint_problem(self._settings)) is not None:
                raise EndpointError(problem)
            if self._settings.uses_embedded_model:
                start = self._start = self._start or _Start(self._settings.embedded_model_size,
                                                            self._settings.embedded_model_file)
        if not self._settings.uses_embedded_model:
            yield Progress("connecting")  # the client's import takes seconds on a busy machine
            made = Programmer(self.settings)
            with self._lock:
                if self._programmer is None:
                    self._programmer = made
                else:  # another thread made one meanwhile
                    made.close()
                return self._programmer
        told, shown = 0, 0.0
        while not start.done.wait(0.05):
            if cancel is not None and cancel.is_set():
                raise Cancelled()
            now = time.monotonic()
            if told < len(start.lines) or now - shown >= HEARTBEAT or not shown:
                note = start.lines[told] if told < len(start.lines) else ""
                told += bool(note)
                shown = now
                yield Progress("starting", now - start.began, note=note)
        for note in start.lines[told:]:
            yield Progress("starting", time.monotonic() - start.began, note=note)
        return self._started(start)

    def _started(self, start: _Start) -> Programmer:
        with self._lock:
            if self._start is start:
                self._start = None
                if start.endpoint is not None:
                    endpoint = self._endpoint = start.endpoint
                    self._programmer = Programmer(replace_endpoint(self.settings, endpoint), server=endpoint)
            if self._programmer is not None:
                return self._programmer
        raise EndpointError(f"the embedded model could not start: {start.error}")

    def stream(self, messages: Sequence[Message], *, temperature: float = 0.0, seed: int | None = None,
               cancel: threading.Event | None = None, progress: bool = False,
               target: AnswerTarget | None = None) -> Generator[str | Retrying | Progress, None, Reply]:
        """`Programmer.stream`, the model started first (its progress yielded with `progress`)."""
        starting = self.ready(cancel)
        try:
            while True:
                shown = next(starting)
                if progress:
                    yield shown
        except StopIteration as stop:
            programmer: Programmer = stop.value
        return (yield from programmer.stream(messages, temperature=temperature, seed=seed, cancel=cancel,
                                             progress=progress, target=target))

    def read_ahead(self, messages: Sequence[Message], cancel: threading.Event | None = None) -> int:
        """`Programmer.read_ahead`, only when the model already runs: nothing is started for it."""
        with self._lock:
            programmer = self._programmer
            alive = self._endpoint is None or self._endpoint.alive
        return programmer.read_ahead(messages, cancel) if programmer is not None and alive else 0

    def close(self) -> None:
        with self._lock:
            self._let_go()

    def _let_go(self) -> None:
        for part in (self._programmer, self._endpoint):
            if part is not None:
                part.close()
        self._programmer = self._endpoint = None


def replace_endpoint(settings: ModelSettings, endpoint: Any) -> ModelSettings:
    """`settings` pointed at the embedded model's running server."""
    return replace(settings, base_url=endpoint.base_url, model=endpoint.model)
