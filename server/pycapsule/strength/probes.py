"""Inputs the function's annotations admit, run on a passing body: one that raises a type error on such an
input (`", ".join(items)` for `items: list[Any]` given ints) does not do what its signature promises,
whatever its examples say. Mutants only test the examples against the body's own structure; these probes
try inputs the examples never use.

The inputs are drawn by Hypothesis from the annotations (seeded, small: ints -20..50, short ASCII strings,
containers of at most 5 items), rendered as literal calls and run as one docstring of bare `>>> call` lines
in the sandbox (`examples.probe_failures`). Only annotations made of builtins and `typing` /
`collections.abc` generics are read; a parameter without a default that is not annotated, or whose
annotation names anything else (a class, a Callable), leaves the function without probes. A bare `list`
(`dict`, `Sequence`, ...) holds items of the kinds the examples pass there (HumanEval's `l: list` called
with ints is not meant for strings: measured, docs/results/probes), and none when they pass none; an
explicit `list[Any]` holds ints or strings. Methods and async functions get none, as for suggested
examples."""

from __future__ import annotations

import ast
import functools
import re
import textwrap
import threading
from collections.abc import Callable, Container
from dataclasses import dataclass
from typing import Any

from pycapsule.capsule import Capsule, Example, parse_module
from pycapsule.parsing import parse_expression
from pycapsule.sandbox.api import Sandbox
from pycapsule.strength.examples import TRACEBACK, example_calls, probe_failures, render_call

PROBES = 24
"""Inputs drawn per function (fewer when the annotations admit fewer distinct ones)."""
FLAGGED = frozenset({"TypeError", "AttributeError", "NameError", "UnboundLocalError"})
"""Exceptions that say the body mishandles an input of its declared types, rather than refusing one it may
refuse (ValueError, IndexError on an empty list: the docstring may say so). Not flagged when the docstring or
an example names the exception."""

_Strategy = Any  # a hypothesis SearchStrategy
_DRAW_LOCK = threading.Lock()  # Hypothesis' engine keeps global state: one draw at a time

_INT, _FLOAT, _TEXT = "int", "float", "str"
_SCALARS = {"int": _INT, "float": _FLOAT, "str": _TEXT, "bool": "bool", "bytes": "bytes", "None": "None",
            "complex": None}
_SEQUENCES = {"list", "List", "Sequence", "MutableSequence", "Iterable", "Collection", "Reversible",
              "Container"}
"""Given a list (an Iterator is not: a body may call next() on it)."""
_SETS = {"set", "Set", "frozenset", "FrozenSet", "AbstractSet", "MutableSet"}
_MAPPINGS = {"dict", "Dict", "Mapping", "MutableMapping"}
_ANY = {"Any", "object"}
_MODULES = {"typing", "t", "collections.abc", "abc", "typing_extensions"}


@dataclass(frozen=True)
class RaisedOn:
    """An input the signature admits on which the body raised."""

    call: str
    """'join_all([0])'."""
    error: str
    """'TypeError: sequence item 0: expected str instance, int found'."""

    @property
    def exception(self) -> str:
        return self.error.split(":", 1)[0]

    def text(self) -> str:
        return f"`{self.call}` raises {self.error}"

    def as_json(self) -> dict[str, str]:
        return {"call": self.call, "error": self.error}


class _Unreadable(Exception):
    """An annotation this module does not turn into inputs."""


def signature_calls(capsule: Capsule, limit: int = PROBES) -> tuple[str, ...]:
    """Up to `limit` distinct call texts with inputs the annotations admit (none when they cannot be read),
    without the calls the examples already make. The same capsule gives the same calls."""
    if capsule.class_names or capsule.is_async:
        return ()
    return _signature_calls(capsule.header, capsule.name, capsule.examples, limit)


@functools.lru_cache(maxsize=128)
def _signature_calls(header: str, name: str, examples: tuple[Example, ...], limit: int) -> tuple[str, ...]:
    """Keyed by what the calls depend on, so a run's attempts, which change only the body, draw once."""
    try:
        parameters = _parameters(header, name, examples)
    except _Unreadable:
        return ()
    if not parameters:
        return ()
    drawn = _draw(parameters, limit * 2)
    made = {_normal(example.source) for example in examples}
    calls: dict[str, str] = {}
    for arguments in drawn:
        call = render_call(name, arguments)
        if call is not None and _normal(call) not in made:
            calls.setdefault(_normal(call), call)
        if len(calls) >= limit:
            break
    return tuple(calls.values())


def raised_on(sandbox: Sandbox, capsule: Capsule, source: str, *, timeout: float,
              cancel: threading.Event | None = None, flagged: Container[str] = FLAGGED
              ) -> tuple[RaisedOn, ...]:
    """The admitted inputs on which the body in `source` raises a `flagged` exception from the module's own
    code, one per exception type, in the order drawn. Nothing when the probes cannot run (a probe that hangs
    stops the job: nothing is said then)."""
    calls = signature_calls(capsule)
    if not calls:
        return ()
    failures = probe_failures(sandbox, capsule, source, calls, timeout, cancel)
    if failures is None:
        return ()
    allowed = _named_exceptions(capsule)
    found: dict[str, RaisedOn] = {}
    for call, failure in zip(calls, failures, strict=True):
        info = failure.exception if failure is not None else None
        if info is None or info.line is None or info.type not in flagged or info.type in allowed:
            continue
        message = info.message.splitlines()[0][:200] if info.message else ""
        found.setdefault(info.type, RaisedOn(call, f"{info.type}: {message}" if message else info.type))
    return tuple(found.values())


def raised_output(raised: RaisedOn) -> str:
    """What doctest shows for the call, as an example's expected output."""
    return f"{TRACEBACK}{raised.error}"


def _named_exceptions(capsule: Capsule) -> set[str]:
    text = (capsule.docstring or "") + "".join(example.want for example in capsule.examples)
    return {name for name in re.findall(r"\b\w*(?:Error|Exception)\b", text)}


def _normal(call: str) -> str:
    try:
        return ast.unparse(parse_expression(call))
    except (SyntaxError, ValueError):
        return call


# ---- annotations -> strategies ------------------------------------------------------------------------


def _parameters(header: str, name: str, examples: tuple[Example, ...]) -> list[tuple[int | str, _Strategy]]:
    """(slot, strategy) of each parameter the call must give: positional index or keyword name."""
    try:
        node = parse_module(textwrap.dedent(header) + "\n    ...\n").body[0]
    except (SyntaxError, ValueError) as error:
        raise _Unreadable("the header") from error
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    needed = positional[: len(positional) - len(args.defaults)]
    keywords = [a for a, default in zip(args.kwonlyargs, args.kw_defaults, strict=True) if default is None]
    seeds, _ = example_calls(name, examples)
    slots: list[tuple[int | str, ast.expr | None]] = [
        *enumerate(arg.annotation for arg in needed), *((arg.arg, arg.annotation) for arg in keywords)]
    return [(slot, _strategy(annotation, [dict(seed)[slot] for _, seed in seeds if slot in dict(seed)]))
            for slot, annotation in slots]


def _strategy(annotation: ast.expr | None, shown: list[Any]) -> _Strategy:
    """What the annotation admits; `shown`: the examples' values for the parameter (a bare container's
    items take their kinds)."""
    from hypothesis import strategies as st

    bare = annotation is not None and not isinstance(annotation, ast.Subscript | ast.BinOp | ast.Constant)
    if bare and _name(annotation) in _SEQUENCES | _SETS | _MAPPINGS:
        return st.one_of(*(_kind_strategy(kind) for kind in _shown_kinds(_name(annotation), shown)))
    return st.one_of(*(_kind_strategy(kind) for kind in _kinds(annotation)))


def _shown_kinds(container: str, shown: list[Any]) -> list[tuple]:
    """A bare container of the kinds of items the examples pass: `list` shown `[1, 2]` is a list of ints."""
    if container in _MAPPINGS:
        kinds = {("dict", _scalar(k), _scalar(v)) for value in shown if isinstance(value, dict)
                 for k, v in value.items()}
    else:
        shape = "set" if container in _SETS else "list"
        kinds = {(shape, _scalar(item)) for value in shown
                 if isinstance(value, list | tuple | set | frozenset) for item in value}
    if not kinds:
        raise _Unreadable(f"a bare {container} the examples show no items of")
    return sorted(kinds)


def _scalar(item: Any) -> tuple:
    for kind, types in ((_TEXT, str), ("bool", bool), (_INT, int), (_FLOAT, float)):
        if isinstance(item, types):
            return (kind,)
    raise _Unreadable(type(item).__name__)


def _kinds(node: ast.expr | None) -> list[tuple]:
    """The annotation as alternatives, each a nested tuple: ('int',), ('list', kind), ('dict', k, v),
    ('tuple', kind, ...) or ('tuple*', kind). `Any` inside a container is one kind per container (a list of
    ints, or of strings), not a mix: a body may fairly assume its items are alike."""
    if node is None:
        raise _Unreadable("no annotation")
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return _kinds(parse_expression(node.value))
        except (SyntaxError, ValueError) as error:
            raise _Unreadable(node.value) from error
    if isinstance(node, ast.Constant) and node.value is None:
        return [("None",)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _kinds(node.left) + _kinds(node.right)
    name = _name(node.value if isinstance(node, ast.Subscript) else node)
    if not isinstance(node, ast.Subscript):
        if name in _ANY:
            return [(_INT,), (_TEXT,)]
        if name in _SCALARS and _SCALARS[name] is not None:
            return [(_SCALARS[name],)]
        if name in _SEQUENCES:
            return [("list", (_INT,)), ("list", (_TEXT,))]
        if name in _MAPPINGS:
            return [("dict", (_TEXT,), (_INT,))]
        raise _Unreadable(name)
    items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    if name in ("Optional",):
        return [*_kinds(items[0]), ("None",)]
    if name == "Union":
        return [kind for item in items for kind in _kinds(item)]
    if name == "Literal":
        values = [item.value for item in items if isinstance(item, ast.Constant)]
        if len(values) != len(items):
            raise _Unreadable("Literal")
        return [("literal", *values)]
    if name in _SEQUENCES | _SETS:
        shape = "set" if name in _SETS else "list"
        return [(shape, kind) for kind in _kinds(items[0])]
    if name in _MAPPINGS and len(items) == 2:
        return [("dict", key, value) for key in _kinds(items[0]) for value in _kinds(items[1])]
    if name in ("tuple", "Tuple"):
        if len(items) == 2 and isinstance(items[1], ast.Constant) and items[1].value is Ellipsis:
            return [("tuple*", kind) for kind in _kinds(items[0])]
        return [("tuple", *(_one_kind(item) for item in items))]
    raise _Unreadable(name)


def _one_kind(node: ast.expr) -> tuple:
    """A tuple's item: its alternatives as one ('union', ...) kind when it has several."""
    kinds = _kinds(node)
    return kinds[0] if len(kinds) == 1 else ("union", *kinds)


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and ast.unparse(node.value) in _MODULES:
        return node.attr
    raise _Unreadable(ast.unparse(node))


def _kind_strategy(kind: tuple) -> _Strategy:
    from hypothesis import strategies as st

    scalars: dict[str, Callable[[], _Strategy]] = {
        _INT: lambda: st.integers(-20, 50),
        _FLOAT: lambda: st.floats(-100.0, 100.0, allow_nan=False, allow_subnormal=False),
        _TEXT: lambda: st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=8),
        "bool": st.booleans,
        "bytes": lambda: st.binary(max_size=8),
        "None": st.none,
    }
    head, *rest = kind
    if head in scalars:
        return scalars[head]()
    if head == "literal":
        return st.sampled_from(rest)
    if head == "union":
        return st.one_of(*(_kind_strategy(k) for k in rest))
    if head == "list":
        return st.lists(_kind_strategy(rest[0]), max_size=5)
    if head == "tuple*":
        return st.lists(_kind_strategy(rest[0]), max_size=5).map(tuple)
    if head == "tuple":
        return st.tuples(*(_kind_strategy(k) for k in rest))
    if head == "set":
        if not _hashable(rest[0]):
            raise _Unreadable("a set of unhashable items")
        return st.sets(_kind_strategy(rest[0]), max_size=5)
    if head == "dict":
        if not _hashable(rest[0]):
            raise _Unreadable("a dict of unhashable keys")
        return st.dictionaries(_kind_strategy(rest[0]), _kind_strategy(rest[1]), max_size=4)
    raise _Unreadable(head)


def _hashable(kind: tuple) -> bool:
    head, *rest = kind
    if head in ("list", "set", "dict", "tuple*"):
        return False
    return all(_hashable(k) for k in rest if isinstance(k, tuple))


def _draw(parameters: list[tuple[int | str, _Strategy]], count: int) -> list[list[tuple[int | str, Any]]]:
    """`count` argument lists drawn with a fixed seed: Hypothesis starts from the simplest inputs (0, '',
    []) and grows them."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st

    drawn: list[list[tuple[int | str, Any]]] = []
    slots = [slot for slot, _ in parameters]

    @settings(max_examples=count, derandomize=True, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.tuples(*(strategy for _, strategy in parameters)))
    def collect(values: tuple[Any, ...]) -> None:
        drawn.append(list(zip(slots, values, strict=True)))

    with _DRAW_LOCK:
        try:
            collect()
        except _Unreadable:
            raise
        except Exception:  # a strategy Hypothesis refuses: no probes rather than a failed run
            return []
    return drawn
