"""The docstring's examples again, with an iterator where the function takes any iterable.

Examples usually pass lists, so a body that indexes its argument, takes its len() or reads it twice
passes them and fails every caller that passes a generator. A parameter takes any iterable when its
annotation says so (`Iterable[...]`, `Iterator[...]`) or, unannotated, when it is named `iterable` (the
word of the Python glossary, the standard library and itertools-style libraries). Each example that gives
such a parameter a list, tuple or set (a display or comprehension, `range(...)`, or a name the examples
bound to one) is run again with `iter(...)` around that argument and must print the same.

Only the self-debugging loop runs them, on the model's answers (setting `iterator_examples`): `check`
reports what doctest and pytest report, and a body the user wrote is never judged by them.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from pycapsule.capsule import Capsule, SourceLines
from pycapsule.debugging import SignatureMismatch
from pycapsule.debugging.reply_function import signature_node
from pycapsule.parsing import parse_expression, parse_source

ITERABLE_NAMES = frozenset({"iterable"})
ITERABLE_TYPES = frozenset({"Iterable", "Iterator", "Generator"})
_RANGE_LIKE = frozenset({"range"})
_LITERALS = (ast.List, ast.Tuple, ast.Set, ast.ListComp, ast.SetComp)
"""Not strings (libraries treat a string as one item, or search it for substrings) nor dicts (a mapping
iterates over its keys only)."""
_FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class IteratorExamples:
    docstring: str
    """The examples as a docstring to run: every example in order, the target's calls given iterators."""
    parameters: tuple[str, ...]
    """The parameters given an iterator in at least one example, e.g. ('iterable',)."""


def iterator_examples(capsule: Capsule) -> IteratorExamples | None:
    """The capsule's examples with an iterator for each literal given to an iterable parameter; None when
    the function takes no iterable or no example gives one a literal."""
    if capsule.docstring is None or capsule.doctest_error is not None:
        return None
    try:
        function = signature_node(capsule)
    except SignatureMismatch:
        return None
    iterables = _iterable_parameters(function)
    if not iterables:
        return None
    method = bool(capsule.class_names) and not _decorated(function, "staticmethod")
    rewriter = _Rewriter(capsule.name, capsule.class_names, iterables, method)
    parts: list[str] = []
    given: list[str] = []
    for example in capsule.examples:
        source, names = rewriter.example(example.source)
        given.extend(name for name in names if name not in given)
        parts.append(_example_text(source, example.want))
    if not given:
        return None
    return IteratorExamples("\n".join(parts), tuple(given))


def _decorated(function: _FunctionNode, name: str) -> bool:
    return any(isinstance(d, ast.Name) and d.id == name for d in function.decorator_list)


@dataclass(frozen=True)
class _Parameters:
    positional: tuple[str, ...]
    """Every parameter that can be passed by position, in order (self included)."""
    iterable: frozenset[str]


def iterator_failure(iterators: IteratorExamples, failure: str, condensed: str) -> tuple[str, str]:
    """The headline and the fix prompt's lines for a body that passes its examples but not with iterators
    (`failure`: what failed with them, in one line; `condensed`: the failure as the fix prompt shows it)."""
    names = " and ".join(f"`{name}`" for name in iterators.parameters)
    many = len(iterators.parameters) > 1
    return (f"fails with an iterator for {names}: {failure}",
            f"The examples pass as written, but {names} may be any iterable, and they fail when "
            f"{'each is' if many else 'it is'} an iterator, which can be read only once and has no len() "
            f"and no indexing:\n{condensed}")


def _iterable_parameters(function: _FunctionNode) -> _Parameters | None:
    arguments = function.args
    positional = tuple(a.arg for a in [*arguments.posonlyargs, *arguments.args])
    iterable = frozenset(
        a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs] if _takes_iterable(a))
    return _Parameters(positional, iterable) if iterable else None


def _takes_iterable(argument: ast.arg) -> bool:
    if argument.annotation is None:
        return argument.arg in ITERABLE_NAMES
    return _is_iterable_type(argument.annotation)


def _is_iterable_type(annotation: ast.expr) -> bool:
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            parsed = parse_expression(annotation.value)
        except (SyntaxError, ValueError):
            return False
        return _is_iterable_type(parsed)
    if isinstance(annotation, ast.Subscript):
        if _type_name(annotation.value) == "Optional":
            return _is_iterable_type(annotation.slice)
        return _is_iterable_type(annotation.value)
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _is_iterable_type(annotation.left) or _is_iterable_type(annotation.right)
    return _type_name(annotation) in ITERABLE_TYPES


def _type_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


class _Rewriter:
    """Puts `iter(...)` around what the examples, in order, give the target's iterable parameters."""

    def __init__(self, name: str, class_names: tuple[str, ...], parameters: _Parameters,
                 method: bool) -> None:
        self.name, self.class_names, self.parameters, self.method = name, class_names, parameters, method
        self.literal_names: set[str] = set()
        """Names the examples so far last bound to a literal (`>>> it = []`)."""

    def example(self, source: str) -> tuple[str, list[str]]:
        """`source` with `iter(...)` around each literal given to an iterable parameter of a call to the
        target, and the parameters given one."""
        try:
            tree = parse_source(source)
        except (SyntaxError, ValueError):
            return source, []
        spans: list[tuple[ast.expr, str]] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                skipped = self._bound_self(node)
                if skipped is not None:
                    spans.extend(self._iterable_arguments(node, skipped))
        self._note_bindings(tree)
        lines = SourceLines(source)
        outermost: list[tuple[int, int, str]] = []
        for start, end, parameter in sorted((lines.offset(a.lineno, a.col_offset),
                                             lines.offset(a.end_lineno or a.lineno, a.end_col_offset or 0),
                                             parameter) for a, parameter in spans):
            if not outermost or start >= outermost[-1][1]:  # one inside another: the outer one is enough
                outermost.append((start, end, parameter))
        wrapped = source
        for start, end, _ in reversed(outermost):
            wrapped = f"{wrapped[:start]}iter({wrapped[start:end]}){wrapped[end:]}"
        return wrapped, [parameter for _, _, parameter in outermost]

    def _note_bindings(self, tree: ast.Module) -> None:
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
                self.literal_names.discard(node.id)
        for statement in tree.body:
            if isinstance(statement, ast.Assign) and self._is_literal(statement.value):
                self.literal_names.update(t.id for t in statement.targets if isinstance(t, ast.Name))

    def _bound_self(self, call: ast.Call) -> int | None:
        """How many leading positional parameters the call binds itself (a method's self), or None when
        the call is not to the target."""
        function = call.func
        if not self.method:
            return 0 if isinstance(function, ast.Name) and function.id == self.name else None
        if not (isinstance(function, ast.Attribute) and function.attr == self.name):
            return None
        on_class = isinstance(function.value, ast.Name) and function.value.id == self.class_names[-1]
        return 0 if on_class else 1

    def _iterable_arguments(self, call: ast.Call, skipped: int) -> list[tuple[ast.expr, str]]:
        positional, iterable = self.parameters.positional, self.parameters.iterable
        found: list[tuple[ast.expr, str]] = []
        for index, argument in enumerate(call.args):
            if isinstance(argument, ast.Starred):
                break
            position = skipped + index
            if position < len(positional) and positional[position] in iterable and self._is_literal(argument):
                found.append((argument, positional[position]))
        for keyword in call.keywords:
            if keyword.arg in iterable and self._is_literal(keyword.value):
                found.append((keyword.value, keyword.arg))
        return found

    def _is_literal(self, node: ast.expr) -> bool:
        """A list, tuple or set written in the examples themselves (or `range(...)`): sure to iterate the same
        as an iterator over it."""
        if isinstance(node, _LITERALS):
            return True
        if isinstance(node, ast.Name):
            return node.id in self.literal_names
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _RANGE_LIKE


def _example_text(source: str, want: str) -> str:
    """One example as a docstring holds it: `>>>` and `...` prompts, then the expected output."""
    lines = source.rstrip("\n").split("\n")
    prompted = [f">>> {lines[0]}", *(f"... {line}" for line in lines[1:])]
    return "\n".join(prompted) + "\n" + want
