"""Ending a streamed answer as soon as the rest of it cannot count.

Writing is the slow part of a model call (about 12 tokens/s for the 1.5B on 2 cores, against 65 for
reading), and much of what small models write after the function is never used: an explanation, example
calls, a test, the prompt's context again. `AnswerWatch` is fed the answer as it streams and says when to
stop reading:
- `LOOPED`: the answer's tail is a loop (`debugging.repetition`);
- `COMPLETE`: the target function is complete and nothing after it can be part of it: its code fence has
  closed, or its `def` block has ended and the next top-level line is not one the function needs. Complete
  means: it parses, its body is more than a stub, every name it reads is bound (a builtin, a name of the
  user's module, of the answer so far, or its own) and every method it calls on `self` or `cls` is one
  the module's or the answer's classes define. An answer whose function still needs one is read on: a
  helper may follow;
- `COPIED`: the answer has started copying the prompt's context (`COPIED_LINES` lines in a row taken
  verbatim from the module context the prompt shows) before writing a complete function; `copied_from` is
  where the code it copies into begins, from which the model client may have it go on with the function's
  head instead;
- `ECHOED`: the answer repeats the function's head as the task shows it (`AnswerTarget.head`) and the rest of
  that head is long enough to be read rather than written (`debugging.echo`): `echo_rest` holds it, and the
  model client asks the model to go on from it.

Inside a `<think>` section (reasoning models) nothing but loops ends an answer.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field
from functools import cached_property

from pycapsule.capsule import docstring_node, is_stub_statement
from pycapsule.debugging.echo import EchoWatch, head_from_def
from pycapsule.debugging.extraction import Fence, closes_fence, defined_function, opening_fence
from pycapsule.debugging.repetition import RepetitionWatch
from pycapsule.debugging.source_text import dedent_code
from pycapsule.debugging.statements import free_names, top_level_names
from pycapsule.parsing import parse_source

LOOPED = "looped"
COMPLETE = "complete"
COPIED = "copied"
ECHOED = "echoed"
SHORTENED = frozenset({COMPLETE, ECHOED})
"""Ends whose `kept` text stops before what was streamed: the rest is not part of the answer."""

COPIED_LINES = 16
"""Lines in a row that the answer takes verbatim from the prompt's context to be ended as a copy."""
_COPY_MIN_CHARS = 16
"""A context line shorter than this (`return result`, `else:`) is one any code may hold: never a copy."""
_MAX_CHECKS = 200
"""Candidate ends an answer is parsed at before the watch stops looking for its end."""
_BUILTINS = frozenset(dir(builtins)) | {"__name__", "__file__", "__doc__", "__class__"}


@dataclass(frozen=True)
class AnswerTarget:
    """What an answer is for: the function's name, the user's module, the context the prompt shows."""

    name: str
    module_source: str = ""
    context: str = ""
    head: str = ""
    """The function's decorators, signature and docstring as the task shows them, when an answer that repeats
    them may be given their rest (`ECHOED`); "" when not."""

    @cached_property
    def module_names(self) -> frozenset[str] | None:
        """Names the user's module binds at its top level and in its classes (None: it imports `*`, so
        any name may be bound)."""
        try:
            module = parse_source(self.module_source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return frozenset()
        if any(isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names)
               for node in module.body):
            return None
        return frozenset(_names_with_classes(module))

    @cached_property
    def context_lines(self) -> frozenset[str]:
        """The context's lines long enough to tell a copy, stripped."""
        lines = (line.strip() for line in self.context.splitlines())
        return frozenset(line for line in lines if len(line) >= _COPY_MIN_CHARS)


@dataclass
class _Block:
    """The fenced block the answer is in, or the answer's bare code (no fence)."""

    fence: Fence | None
    """The opening fence; None: bare code."""
    start: int = -1
    """Where its first line begins in the streamed text; -1: in the text the answer was prefilled with."""
    lines: list[str] = field(default_factory=list)
    def_indent: int | None = None
    """Columns of the target's def line once it appeared in this block."""
    body_seen: bool = False
    echo: EchoWatch | None = None
    """Whether the answer repeats the target's head, from the def line on."""


class AnswerWatch:
    """Fed one answer's streamed pieces; `end` turns to LOOPED, COMPLETE, COPIED or ECHOED when the answer
    should stop, and `kept` is how many characters of the streamed text to keep (for COMPLETE, the text
    up to the function's end: what follows is not part of the answer; for ECHOED, up to the last line it
    repeated, which `echo_rest` goes on from)."""

    def __init__(self, target: AnswerTarget | None, start: str = "") -> None:
        """`start`: the text the answer was prefilled with (not streamed; read as the answer's start)."""
        self.target = target
        self.end: str | None = None
        self.kept = 0
        self.echo_rest = ""
        """(ECHOED) The rest of the target's head, as the answer would go on."""
        self.copied_from = -1
        """(COPIED) Where the code block (or bare code) the answer copied into begins in the streamed text;
        -1 when it began in the prefilled text."""
        self._line_at = -1
        """Where the line being read begins in the streamed text (-1: a prefilled line)."""
        self._copy_run_at = -1
        """Where the run of lines copied from the context began (its first line's `_line_at`)."""
        self._streamed = 0
        self._partial = ""
        self._repeats = RepetitionWatch()
        self._answer_names: set[str] = set()
        self._block: _Block | None = None
        self._thinking = False
        self._copied_run = 0
        self._checks = 0
        self._target_lines: list[str] | None = None
        """The last closed block that defines the target, while a name it reads is unbound."""
        self._line_is_after = False
        """The last line read is the first one after the function (COMPLETE): it is not kept."""
        for line in start.split("\n")[:-1] if start.endswith("\n") else start.split("\n"):
            self._line(line, prefilled=True)
        self._partial = "" if start.endswith("\n") else start.rsplit("\n", 1)[-1]

    @property
    def streamed(self) -> int:
        """Characters fed so far."""
        return self._streamed

    def feed(self, piece: str) -> str | None:
        """Adds a streamed piece; the reason the answer should end, once there is one."""
        if self.end is not None:
            return self.end
        text = self._partial + piece
        consumed = self._streamed - len(self._partial)
        self._streamed += len(piece)
        *complete, self._partial = text.split("\n")
        for line in complete:
            consumed += len(line) + 1
            self.kept = consumed
            self._line_at = consumed - len(line) - 1
            self._line(line)
            if self.end is not None:
                if self._line_is_after:
                    self.kept = consumed - len(line) - 1
                return self.end
        self.kept = self._streamed
        return None

    def _line(self, line: str, prefilled: bool = False) -> None:
        if self._repeats.add_line(line):
            self.end = LOOPED
            return
        stripped = line.strip()
        for tag in ("think", "thinking", "reasoning"):
            if f"<{tag}>" in stripped:
                self._thinking = True
            if f"</{tag}>" in stripped:
                self._thinking = False
        if self._thinking or self.target is None:
            return
        if not prefilled and self._copies(stripped):
            self.end = COPIED
            self.copied_from = self._block.start if self._block is not None else self._copy_run_at
            return
        block = self._block
        if block is None or block.fence is None:
            opened = opening_fence(line)
            if opened is not None:
                self._block = _Block(opened, self._line_at)
                return
            if block is None:
                if not _looks_like_code(stripped):
                    return
                block = self._block = _Block(None, self._line_at)
        elif closes_fence(line, block.fence):
            self._block = None
            if block.def_indent is not None:
                self._target_lines = block.lines
            else:
                self._learn_names(block.lines)
            if self._target_lines is not None and self._complete(self._target_lines):
                self.end = COMPLETE
            return
        self._in_code(block, line, prefilled)

    def _in_code(self, block: _Block, line: str, prefilled: bool) -> None:
        """A line of code; `prefilled`: of the text the answer was prefilled with (never a repeat)."""
        stripped = line.strip()
        column = len(line) - len(line.lstrip())
        name = self.target.name if self.target is not None else ""
        if block.echo is not None and (rest := block.echo.line(line)) is not None:
            self.end, self.echo_rest = ECHOED, rest
            block.lines.append(line)
            return
        if block.def_indent is None:
            if stripped.startswith(("def ", "async def ")) and _defined_name(stripped) == name:
                block.def_indent = column
                block.echo = None if prefilled else self._echo_watch(line)
        elif stripped and not stripped.startswith("#"):
            if column > block.def_indent:
                block.body_seen = True
            elif block.body_seen and not stripped.startswith((")", "]", "}")) and self._complete(block.lines):
                self.end = COMPLETE
                self._line_is_after = True
                return
        block.lines.append(line)

    def _echo_watch(self, def_line: str) -> EchoWatch | None:
        """A watch of the answer's lines from `def_line` for a repeat of the target's head; None when there
        is no head to give or the def line differs from the head's."""
        assert self.target is not None
        head = head_from_def(self.target.head)
        if not head or def_line.strip() != head[0].strip():
            return None
        return EchoWatch(head, def_line)

    def _copies(self, stripped: str) -> bool:
        """Counts the run of lines taken verbatim from the context; true once it is long enough and no
        complete function came first."""
        assert self.target is not None
        if not stripped or stripped.startswith(("import ", "from ")):
            return False  # an answer starts with the imports it needs, which the context shows too
        if stripped in self.target.context_lines:
            if not self._copied_run:
                self._copy_run_at = self._line_at
            self._copied_run += 1
        else:
            self._copied_run = 0
        return self._copied_run >= COPIED_LINES

    def _complete(self, lines: list[str]) -> bool:
        """Whether `lines` hold the target complete: parsed, more than a stub, every name it reads bound."""
        if self.target is None or self._checks >= _MAX_CHECKS:
            return False
        self._checks += 1
        try:
            module = parse_source(dedent_code("\n".join(lines) + "\n"))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
        function = defined_function(module, self.target.name)
        if function is None or not _has_body(function):
            return False
        known = self.target.module_names
        if known is None:
            return True
        bound = _BUILTINS | known | self._answer_names | _names_with_classes(module)
        return not (free_names(function) - bound) and not (_methods_called(function) - bound)

    def _learn_names(self, lines: list[str]) -> None:
        """Remembers what a closed block that is not the answer binds (an import, a helper)."""
        try:
            module = parse_source(dedent_code("\n".join(lines) + "\n"))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return
        self._answer_names |= top_level_names(module.body)


def _looks_like_code(stripped: str) -> bool:
    """The first line of bare code (an answer without fences)."""
    return stripped.startswith(("def ", "async def ", "import ", "from ", "@", "class "))


def _defined_name(def_line: str) -> str:
    rest = def_line.removeprefix("async ").removeprefix("def ")
    return rest.split("(", 1)[0].strip()


def _names_with_classes(module: ast.Module) -> set[str]:
    """What the module binds at its top level and in its top-level classes (their methods, attributes)."""
    names = top_level_names(module.body)
    for node in module.body:
        if isinstance(node, ast.ClassDef):
            names |= top_level_names(node.body)
    return names


def _methods_called(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The methods a method calls on `self` or `cls` (`self._helper(...)`): a helper method the answer may
    write after it."""
    arguments = [*function.args.posonlyargs, *function.args.args]
    if not arguments or arguments[0].arg not in ("self", "cls"):
        return set()
    receiver = arguments[0].arg
    return {node.func.attr for node in ast.walk(function)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == receiver}


def _has_body(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    statements = function.body[1:] if docstring_node(function) else function.body
    return bool(statements) and not all(is_stub_statement(statement) for statement in statements)
