"""What a self-debugging run (`pycapsule.loop`) asks the model next, from how its attempts failed.

A stub's first attempt generates (its request names how earlier runs' bodies failed); a failed answer is
shown to the model with its failure in a fix turn. After `restart_after` failed fixes in a row the next
attempt starts over from a fresh conversation (mode "restart") that names the earlier failures but does
not show their code: small models copy a wrong idea once it is in their context (docs/results).
`restart_after = 0` makes every retry a restart; with `fix_repeated_failures`, a fresh conversation's answer
that failed as an earlier attempt did gets a fix turn first, which shows its failure in full.

A function that already has a body is repaired, not rewritten: after attempt 0 every attempt shows the
model that body with its failure and asks for the smallest change (`prompts.repair_messages`); earlier
failed changes are named by their headlines only.

An answer that repeated code already tried (`judge.Judge.result_of`) adds nothing to the conversation:
the next request is the one that got it plus one sentence saying it repeated code that failed, sampled
`REPEAT_HEAT` hotter than that request (at most 1.0, never below `retry_temperature`).

A stub's first answer is prefilled (`answer_prefill`) with the function down to its docstring, sent as
the start of the model's answer. Only the first: prefilled retries fixed fewer failures (docs/results,
"Answer prefill"), and a whole answer can define a helper or an import beside the function.
"""

from __future__ import annotations

from dataclasses import dataclass

from pycapsule.capsule import Capsule
from pycapsule.config import Settings
from pycapsule.events import Mode
from pycapsule.judge import AttemptResult
from pycapsule.prompts import answer_prefix, fix_messages, prefilled, repair_messages, restart_messages

REPEAT_HEAT = 0.3
"""How much hotter than the request that got a repeated answer the next request samples (up to 1.0)."""


@dataclass(frozen=True)
class Request:
    """One attempt's request to the model."""

    mode: Mode
    messages: list[dict[str, str]]
    """As sent: ending with the prefilled start of the answer when `prefix` is set."""
    temperature: float
    prefix: str | None = None
    """The start of the answer the model continues (None: not prefilled)."""


class AttemptPolicy:
    """The conversation so far of one run, and the request it makes next."""

    def __init__(self, capsule: Capsule, settings: Settings, context: str | None, local_model: bool) -> None:
        self.capsule, self.settings, self.context = capsule, settings, context
        prefill = settings.answer_prefill == "always" or (
            settings.answer_prefill == "embedded" and local_model)
        self.prefix = answer_prefix(capsule) if prefill else None
        """What a stub's first answer starts with (None: not prefilled)."""
        self.original: AttemptResult | None = None
        """A repair (the function had a body, which failed): that body's attempt 0."""
        self.failures: list[str] = []
        """Headlines of the failures so far, each once, oldest first (earlier runs' first)."""
        self.last: AttemptResult | None = None
        """The answer the next fix turn shows (None: the next attempt starts a fresh conversation)."""
        self.window: list[tuple[str, str]] = []
        """(code, condensed failure) of the answers before `last` in this conversation."""
        self.failed_fixes = 0
        self.repeat: AttemptResult | None = None
        """The last answer, when it repeated code already tried."""
        self.repeat_temperature = 0.0
        """The temperature of the request that got `repeat`."""

    def learn(self, earlier: list[AttemptResult]) -> None:
        """Earlier runs' failures (`RunRecorder.earlier_tries`, newest first): the first request names the
        latest of them."""
        failures: list[str] = []
        for result in earlier:
            if result.headline and result.headline not in failures:
                failures.insert(0, result.headline)
        self.failures.extend(failures[-(self.settings.history_window + 1):])

    def repair(self, current: AttemptResult) -> None:
        """The function's body failed as attempt 0: every attempt asks for a small change of it."""
        self.original = self.last = current
        self.failures.append(current.headline)

    def request(self, attempt: int) -> Request:
        """What attempt `attempt` (from 1) asks."""
        capsule, settings, window = self.capsule, self.settings, self.settings.history_window
        repeated = self.repeat.headline if self.repeat is not None else None
        if self.original is not None:  # every attempt a small change to the body as it stands
            mode: Mode = "fix"
            messages = self._repair(self.original, repeated)
        elif self.last is None:
            mode = "generate" if attempt == 1 else "restart"
            messages = self.restart_request(self.failures, repeated)
        else:
            mode = "fix"
            earlier = self.window[-window:] if window else []
            messages = fix_messages(capsule, self.context, earlier, self.last.code, self.last.condensed,
                                    repeated)
        temperature = settings.temperature if attempt == 1 else settings.retry_temperature
        if self.repeat is not None:
            temperature = max(temperature, min(1.0, self.repeat_temperature + REPEAT_HEAT))
        prefix = self.prefix if mode == "generate" else None
        if prefix is not None:
            messages = prefilled(messages, prefix)
        return Request(mode, messages, temperature, prefix)

    def second_opinion(self) -> Request:
        """Another answer for a body that passed, to compare with it: a fresh conversation, as a restart
        asks, sampled at `retry_temperature` (a repair asks for another small change of the body)."""
        if self.original is not None:
            return Request("fix", self._repair(self.original, None), self.settings.retry_temperature)
        return Request("restart", self.restart_request(self.failures, None), self.settings.retry_temperature)

    def _repair(self, original: AttemptResult, repeated: str | None) -> list[dict[str, str]]:
        """A small change of the body as it stands, naming the later failures."""
        earlier = self.failures[1:][-(self.settings.history_window + 1):]
        return repair_messages(self.capsule, self.context, original.code, original.condensed, earlier,
                               repeated)

    def restart_request(self, failures: list[str], repeated: str | None) -> list[dict[str, str]]:
        """A fresh conversation naming the latest `failures` (with those of earlier runs)."""
        return restart_messages(self.capsule, self.context, failures[-(self.settings.history_window + 1):],
                                repeated)

    def failed(self, result: AttemptResult, request: Request) -> None:
        """The answer to `request` failed with `result`: the next request follows from it."""
        if request.mode == "fix":
            self.failed_fixes += 1
        failed_alike = False  # a fresh conversation's answer failed as an earlier attempt did
        if result.repeated is not None:  # nothing new to show the model: the note says it repeated
            self.repeat, self.repeat_temperature = result, request.temperature
        else:
            self.repeat = None
            if self.last is not None:
                self.window.append((self.last.code, self.last.condensed))
            self.last = result
            failed_alike = request.mode != "fix" and result.headline in self.failures
            if result.headline not in self.failures:
                self.failures.append(result.headline)
        if failed_alike and self.settings.fix_repeated_failures:
            return  # the next attempt is a fix turn of this answer, which shows its failure in full
        if self.failed_fixes >= self.settings.restart_after:
            self.window, self.last, self.failed_fixes = [], None, 0
