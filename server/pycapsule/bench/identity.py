"""What a run's results depend on: the configuration that is hashed, and the provenance that is recorded."""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pycapsule import __version__
from pycapsule.bench.tasks import BenchTask
from pycapsule.capsule import capsule_by_qualname
from pycapsule.config import Settings
from pycapsule.context import module_context
from pycapsule.debugging import answer_watch, echo, repetition
from pycapsule.debugging.iterator_examples import iterator_examples, iterator_failure
from pycapsule.debugging.sandbox_lacks import sandbox_lacks
from pycapsule.embedded_model.catalog import CATALOG, resolve_size
from pycapsule.embedded_model.own_file import own_alias
from pycapsule.loop import REPEAT_HEAT
from pycapsule.prompts import answer_prefix, fix_messages, generate_messages, restart_messages
from pycapsule.sandbox.api import ExampleFailure, ExceptionInfo, FunctionReport, MissingResource, RunResult

_CHECKOUT = Path(__file__).resolve().parents[3]


def embedded_size(name: str | None) -> str | None:
    """A catalog size named by `--model` ('0.5b' or its alias), for the embedded model."""
    if name is None:
        return None
    for size, spec in CATALOG.items():
        if name.lower() in (size, spec.alias, spec.filename):
            return size
    return None


def model_identity(settings: Settings) -> dict[str, Any]:
    """Which model answers: the embedded file (by SHA-256) or an endpoint's model (host, no credentials)."""
    if settings.uses_embedded_model and settings.embedded_model_file is not None:
        own = Path(settings.embedded_model_file)  # the user's own file: no pinned digest to record
        return {"kind": "embedded", "name": own_alias(own), "file": own.name, "path": str(own),
                "sha256": None}
    if settings.uses_embedded_model:
        spec = CATALOG[resolve_size(settings.embedded_model_size)]
        return {"kind": "embedded", "name": spec.alias, "file": spec.filename, "sha256": spec.sha256}
    host = urlsplit(settings.base_url).hostname if settings.base_url else "api.openai.com"
    return {"kind": "endpoint", "name": settings.model or "(the endpoint's default)", "host": host}


_FIRST_ATTEMPT_KEYS = ("temperature", "max_tokens", "job_timeout")
_LOOP_KEYS = ("max_attempts", "retry_temperature", "restart_after", "history_window")
# A module with what the prompt builder chooses from (imports, a one-line and a multi-line constant, a
# helper, a class with a private method): rendering it through `module_context` makes a change to how
# context is chosen or shown change the fingerprint, as a change to the message templates does.
_SAMPLE = '''"""A sample module."""
import re
from collections import OrderedDict

LIMIT = 3
RULES = [
    (re.compile("a"), "b"),
    (re.compile("c"), "d"),
]


def _helper(text):
    """Normalise text."""
    return text.strip()


class Box:
    """Holds things."""

    def __init__(self, size):
        self.size = size
        self._items = OrderedDict()

    def _room(self):
        return self.size - len(self._items)

    def put(self, item: str) -> bool:
        """Put `item` in the box when it fits.

        >>> Box(1).put("a")
        True
        """
        ...


def sample(a: int) -> int:
    """One.

    >>> sample(1)
    1
    """
    ...
'''


# A context of imports and constants only is placed apart from one that shows definitions (prompts.py).
_IMPORTS_ONLY_SAMPLE = '''from typing import List

LIMIT = 3


def capped(values: List[int]) -> List[int]:
    """The values, at most LIMIT each.

    >>> capped([1, 5])
    [1, 3]
    """
    ...
'''


def prompt_fingerprint() -> str:
    """A hash of the prompts as the model sees them (system, task, fix and restart messages, and the
    module context chosen for a function, for a method and for a module of imports and constants only)."""
    function, method = (capsule_by_qualname(_SAMPLE, name) for name in ("sample", "Box.put"))
    plain = capsule_by_qualname(_IMPORTS_ONLY_SAMPLE, "capped")
    rendered = [
        generate_messages(function, module_context(function)),
        generate_messages(method, module_context(method)),
        generate_messages(plain, module_context(plain)),
        fix_messages(function, None, [("code 1", "error 1")], "code 2", "error 2"),
        restart_messages(function, None, ["failure 1"]),
    ]
    return hashlib.sha256(json.dumps(rendered).encode()).hexdigest()[:8]


def loop_fingerprint() -> str:
    """A hash of what only self-debugging's retries depend on beyond the settings: the retry prompts when
    the last answer repeated tried code, how much hotter the request after a repeat samples, and that an
    attempt whose examples fail only for what the sandbox lacks ends the run (not verified)."""
    function = capsule_by_qualname(_SAMPLE, "sample")
    offline = ExceptionInfo("URLError", "down", None, None, missing=MissingResource("network", "down"))
    failure = ExampleFailure("sample", "sample(1)", 5, "1\n", "", offline)
    lacking = RunResult("ok", (FunctionReport("sample", 1, 1, (failure,)),))
    rendered = [
        fix_messages(function, None, [], "code 1", "error 1", repeated="failure 1"),
        restart_messages(function, None, ["failure 1"], repeated="failure 1"),
        REPEAT_HEAT,
        sandbox_lacks(lacking, function),
    ]
    return hashlib.sha256(json.dumps(rendered).encode()).hexdigest()[:8]


_ITERABLE_SAMPLE = '''def pairs(iterable, n: int, *, rest: "Iterable[int] | None" = None):
    """Pairs.

    >>> list(pairs([1, 2, 3, 4], 2, rest=range(2)))  # doctest: +ELLIPSIS
    [...]
    >>> items = {3, 4}
    >>> list(pairs(items, 1, rest=(x for x in 'ab')))
    [(3,), (4,)]
    >>> list(pairs('ab', 1, rest={5: 6}))
    [('a',), ('b',)]
    """
    ...
'''


def iterator_fingerprint() -> str:
    """A hash of which examples run again with iterators, and of what the model is told when they fail."""
    examples = iterator_examples(capsule_by_qualname(_ITERABLE_SAMPLE, "pairs"))
    assert examples is not None
    rendered = [examples.docstring, iterator_failure(examples, "headline 1", "error 1")]
    return hashlib.sha256(json.dumps(rendered).encode()).hexdigest()[:8]


CONTEXT_CHARS_BEFORE_THE_SETTING = 4000
"""What every run made before `context_chars` existed showed, whatever the default is now."""


def generation_settings(settings: Settings, mode: str) -> dict[str, Any]:
    """The settings that change what a run produces (never the API key): a direct run is a first
    attempt only, so the loop's own settings do not change it."""
    keys = _FIRST_ATTEMPT_KEYS + (_LOOP_KEYS if mode == "selfdebug" else ())
    values: dict[str, Any] = {key: getattr(settings, key) for key in keys}
    values["prompt"] = prompt_fingerprint()
    if settings.answer_prefill != "never":  # added later: runs made without it keep their identity
        sample = capsule_by_qualname(_SAMPLE, "Box.put")
        rendered = hashlib.sha256(answer_prefix(sample).encode()).hexdigest()[:8]
        values["answer_prefill"] = f"{settings.answer_prefill} {rendered}"
    if settings.context_chars != CONTEXT_CHARS_BEFORE_THE_SETTING:  # added later, too
        values["context_chars"] = settings.context_chars
    if settings.prompt_cache != "never" and (mode == "selfdebug" or settings.temperature > 0):
        # added later, as answer_prefill was; only sampled requests use it, and only the embedded model's
        values["prompt_cache"] = settings.prompt_cache
    if not settings.project_tests:  # added later: the project's tests are on by default (realcode-visible)
        values["project_tests"] = False
    values["answer_ends"] = answer_ends_fingerprint()  # added later (issue 66): answers were read to the end
    if settings.fast_forward_echo != "never":  # added later: runs made without it keep their identity
        # runs made before a copying answer went on from the head say only the echo's thresholds
        thresholds = f"{echo.ECHO_LINES}/{echo.ECHO_MIN_CHARS}"
        values["fast_forward_echo"] = f"{settings.fast_forward_echo} {thresholds}, copies"
    if mode == "selfdebug":
        values["loop"] = loop_fingerprint()
        if settings.answer_prefill != "never":  # earlier runs prefilled every answer; a first is the same
            values["prefilled_answers"] = "first"
        if settings.fix_repeated_failures:  # added later: runs made without it keep their identity
            values["fix_repeated_failures"] = True
        if settings.iterator_examples:  # added later: runs made without it keep their identity
            values["iterator_examples"] = iterator_fingerprint()
    return values


def answer_ends_fingerprint() -> str:
    """When an answer stops being read (debugging/answer_watch.py): its rules' thresholds. Runs made before
    the watch have no such key: they read every answer to its end (or a verbatim loop)."""
    return (f"complete, copied {answer_watch.COPIED_LINES}, looped {repetition.MIN_LINES}/"
            f"{repetition.SHAPE_LINES}/{repetition.DATA_LINES}")


def first_attempt_settings(generation: dict[str, Any]) -> dict[str, Any]:
    """What a run's first attempt depends on: equal for a direct run and a self-debugging run whose
    attempt 1 is the very generation the direct run would make."""
    keys = ("model", *_FIRST_ATTEMPT_KEYS, "prompt", "answer_prefill", "context_chars", "answer_ends",
            "fast_forward_echo")
    if generation.get("temperature", 0) > 0:  # a sampled first attempt may use the prompt cache
        keys += ("prompt_cache",)
    return {key: generation[key] for key in keys if key in generation}


def tasks_fingerprint(tasks: Sequence[BenchTask]) -> str:
    """A hash of the tasks as prepared (prompts shown, hidden tests run): the dataset file's hash alone
    misses a change in how the reader prepares them, e.g. more prose examples rewritten as doctests."""
    digest = hashlib.sha256()
    for task in tasks:
        digest.update(json.dumps([task.task_id, task.prompt, task.hidden_test]).encode())
    return digest.hexdigest()[:16]


def git_commit() -> str | None:
    """The checkout's short commit, with `-dirty` when the package's code differs from it (files a run
    writes elsewhere, such as its results, do not count): a result must name the code that made it."""
    head = _git("rev-parse", "--short", "HEAD")
    if head and _git("status", "--porcelain", "--", "server"):
        head += "-dirty"
    return head


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(_CHECKOUT), *args],
                              capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


def version() -> str:
    return __version__
