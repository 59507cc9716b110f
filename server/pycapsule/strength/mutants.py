"""Mutants of one function's body: small changes of its syntax tree, each written back as text.

A mutant's source is the module with only the changed node's text replaced, so the other lines keep their
bytes and numbers. Operator changes keep the operands' text and swap the operator's token; parentheses are
added only where precedence, or a replacement spanning lines, needs them. The signature, decorators,
annotations, docstrings, f-string format specs and `global`/`nonlocal` never change. Nothing runs here.
"""

from __future__ import annotations

import ast
import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise

from pycapsule.capsule import SourceLines, definitions
from pycapsule.parsing import parse_expression, parse_source

OPERATORS: dict[str, str] = {
    "comparison": "`<`/`<=`, `>`/`>=`, `<`/`>`, `==`/`!=`, `in`/`not in`, `is`/`is not` "
                  "(so `is None`/`is not None`)",
    "boolean": "`and` and `or` exchanged",
    "arithmetic": "`+`/`-`, `*`/`/`, `/`/`//`, `%` to `//`, `**` to `*`, `<<`/`>>`, `&`/`|`, `^` to `|` "
                  "(in `+=` too), a unary minus dropped",
    "constant": "a number made n+1, n-1, 0, 1 or -1; `True`/`False` exchanged; a string emptied "
                "(an empty one made `'x'`)",
    "empty": "a non-empty list, tuple, set or dict display made empty",
    "negation": "a `not` dropped, or the test of an `if`, `while`, `assert` or conditional expression "
                "negated",
    "slice": "a slice's start or stop moved by one",
    "statement": "a statement removed",
    "return": "a returned value replaced by `None` or by another value the function returns",
    "arguments": "two adjacent positional arguments of a call exchanged",
}
"""Each family's one-line description, as docs/generate.md's table gives it."""

_TOKENS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
           ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&", ast.BitOr: "|",
           ast.BitXor: "^", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
           ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not",
           ast.And: "and", ast.Or: "or"}
_SWAPS: dict[type, tuple[type, ...]] = {
    ast.Add: (ast.Sub,), ast.Sub: (ast.Add,), ast.Mult: (ast.Div,), ast.Div: (ast.Mult, ast.FloorDiv),
    ast.FloorDiv: (ast.Div,), ast.Mod: (ast.FloorDiv,), ast.Pow: (ast.Mult,), ast.LShift: (ast.RShift,),
    ast.RShift: (ast.LShift,), ast.BitAnd: (ast.BitOr,), ast.BitOr: (ast.BitAnd,), ast.BitXor: (ast.BitOr,),
    ast.Lt: (ast.LtE, ast.Gt), ast.LtE: (ast.Lt,), ast.Gt: (ast.GtE, ast.Lt), ast.GtE: (ast.Gt,),
    ast.Eq: (ast.NotEq,), ast.NotEq: (ast.Eq,), ast.In: (ast.NotIn,), ast.NotIn: (ast.In,),
    ast.Is: (ast.IsNot,), ast.IsNot: (ast.Is,), ast.And: (ast.Or,), ast.Or: (ast.And,)}
# How tightly an expression binds: 0 is any expression (lambda, conditional, tuple), 14 an atom.
_PRECEDENCE = {ast.Or: 1, ast.And: 2, ast.Not: 3, ast.BitOr: 5, ast.BitXor: 6, ast.BitAnd: 7, ast.LShift: 8,
               ast.RShift: 8, ast.Add: 9, ast.Sub: 9, ast.Mult: 10, ast.MatMult: 10, ast.Div: 10,
               ast.FloorDiv: 10, ast.Mod: 10, ast.USub: 11, ast.UAdd: 11, ast.Invert: 11, ast.Pow: 12}
_COMPARISON, _UNARY, _AWAIT, _ATOM = 4, 11, 13, 14
_LOOSE = (ast.IfExp, ast.Lambda, ast.NamedExpr, ast.Tuple, ast.Yield, ast.YieldFrom, ast.Starred)
_EMPTY = {ast.List: "[]", ast.Tuple: "()", ast.Set: "set()", ast.Dict: "{}"}
_NOT_WALKED = (ast.expr_context, ast.operator, ast.boolop, ast.cmpop, ast.unaryop)
_SKIPPED_FIELDS = {ast.FunctionDef: {"args", "decorator_list", "returns"}, ast.Lambda: {"args"},
                   ast.AsyncFunctionDef: {"args", "decorator_list", "returns"}, ast.AnnAssign: {"annotation"},
                   ast.ClassDef: {"bases", "keywords", "decorator_list"}, ast.FormattedValue: {"format_spec"}}
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_KEPT_STATEMENTS = (ast.Pass, ast.ClassDef, ast.Global, ast.Nonlocal, *_FUNCTIONS)
_SHOWN_LENGTH = 60


SYMMETRIC_CALLS = frozenset({"min", "max", "hypot", "gcd", "lcm", "dist", "isclose", "add", "mul", "and_",
                             "or_", "xor", "eq", "ne", "union", "intersection", "symmetric_difference"})
"""Calls whose positional arguments may be exchanged without changing the result (builtins, `math` and
`operator` functions, set methods): their swaps are equivalent changes that no example could catch."""


@dataclass(frozen=True)
class Mutant:
    line: int
    """1-based line, in the module source, of the node that was changed."""
    change: str
    """One line for the user: "`a < b` -> `a <= b`", "`total += x` -> removed"."""
    operator: str
    """The operator family: one of OPERATORS' keys."""
    source: str
    """The whole module text with only this change made."""


@dataclass(frozen=True)
class Mutants:
    mutants: tuple[Mutant, ...]
    total: int
    """How many distinct, compiling mutants exist before the cap."""

    @property
    def capped(self) -> bool:
        return self.total > len(self.mutants)


@dataclass(frozen=True)
class _Edit:
    operator: str
    line: int
    start: int
    end: int
    text: str
    change: str


@dataclass(frozen=True)
class _Site:
    node: ast.AST
    parent: ast.AST
    block: list[ast.stmt] | None
    """The statement list holding `node`, when it is a statement."""
    owner: ast.AST
    """The function whose own body holds `node` (a nested function's, inside one)."""


def mutants_of(source: str, qualname: str, *, limit: int = 60) -> Mutants:
    """The mutants of function `qualname`'s body, at most `limit` of them spread over families and lines.
    Raises ValueError when `source` doesn't parse or has no function `qualname`."""
    try:
        module = parse_source(source)
    except SyntaxError as error:
        raise ValueError(f"the source does not parse: {error.msg} (line {error.lineno})") from None
    functions = [d for d in definitions(module) if isinstance(d.node, _FUNCTIONS)]
    function = next((d.node for d in functions if d.qualname == qualname), None)
    if function is None:
        raise ValueError(f"no function {qualname!r} in the source")
    outermost = next(d.node for d in functions if not d.in_function
                     and d.node.lineno <= function.lineno and function.end_lineno <= d.node.end_lineno)
    checker = _Checker(source, outermost)
    kept = [edit for edit in _Mutator(source, function).edits() if checker.accepts(edit)]
    chosen = _spread(kept, limit) if limit > 0 else []
    return Mutants(tuple(Mutant(e.line, e.change, e.operator, source[: e.start] + e.text + source[e.end :])
                         for e in chosen), total=len(kept))


class _Checker:
    """Keeps an edit when its text is new, changes the tree, and compiles. It compiles only the outermost
    function holding the target (the scope a `nonlocal` needs): the rest of the module is unchanged."""

    def __init__(self, source: str, outermost: ast.stmt) -> None:
        lines = SourceLines(source)
        first = min([d.lineno for d in getattr(outermost, "decorator_list", [])] + [outermost.lineno])
        self.source, self.start, self.end = source, lines.start(first), lines.end(outermost.end_lineno)
        self.prefix = "if 1:\n" if lines.line_text(first)[:1] in " \t" else ""  # an indented def
        self.seen = {source[self.start : self.end]}

    def accepts(self, edit: _Edit) -> bool:
        region = self.source[self.start : edit.start] + edit.text + self.source[edit.end : self.end]
        # Only an expression can be rewritten into the same tree (`f(0x10, 16)` -> `f(16, 0x10)`); as the
        # edit is the only change, comparing its two texts' trees compares the function's.
        if region in self.seen or (edit.operator != "statement"
                                   and _same_tree(self.source[edit.start : edit.end], edit.text)):
            return False
        self.seen.add(region)
        try:
            compile(self.prefix + region, "<mutant>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError):
            return False
        return True


def _spread(edits: list[_Edit], limit: int) -> list[_Edit]:
    """`limit` edits, round-robin over (family, line): each family's first line, then each family's second
    line..., then the second mutant of each line...; returned by line, then in generation order."""
    ordered = sorted(edits, key=lambda e: e.line)  # stable: generation order within a line
    families = list(OPERATORS)
    lines = {family: sorted({e.line for e in edits if e.operator == family}) for family in families}
    earlier: Counter[tuple[str, int]] = Counter()
    ranks = []
    for position, edit in enumerate(ordered):
        rounds = earlier[edit.operator, edit.line]
        earlier[edit.operator, edit.line] += 1
        ranks.append((rounds, lines[edit.operator].index(edit.line), families.index(edit.operator), position))
    return [ordered[rank[-1]] for rank in sorted(sorted(ranks)[:limit], key=lambda rank: rank[-1])]


class _Mutator:
    def __init__(self, source: str, function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.source, self.lines, self.function = source, SourceLines(source), function

    def edits(self) -> Iterator[_Edit]:
        """Every candidate edit, in source order of the nodes they change."""
        body = self.function.body
        sites = [site for statement in (body[1:] if _is_docstring(body[0]) else body)
                 for site in self._sites(statement, self.function, body, self.function)]
        self.returns: dict[int, list[ast.Return]] = {}  # by id() of the function they return from
        for site in sites:
            if isinstance(site.node, ast.Return) and not _is_none(site.node.value):
                self.returns.setdefault(id(site.owner), []).append(site.node)
        for site in sites:
            for family in (self._operators, self._unary, self._literal, self._negated_test, self._slice,
                           self._statement, self._return, self._arguments):
                yield from family(site)

    def _sites(self, node: ast.AST, parent: ast.AST, block: list | None, owner: ast.AST) -> Iterator[_Site]:
        yield _Site(node, parent, block, owner)
        for name, value in ast.iter_fields(node):
            children = value if isinstance(value, list) else [value]
            statements = value if children and isinstance(children[0], ast.stmt) else None
            for child in children if name not in _SKIPPED_FIELDS.get(type(node), ()) else ():
                if self._walked(child, node):
                    yield from self._sites(child, node, statements, node if isinstance(node, _FUNCTIONS)
                                           else owner)

    def _walked(self, child: object, parent: ast.AST) -> bool:
        if not isinstance(child, ast.AST) or isinstance(child, _NOT_WALKED):
            return False
        if isinstance(parent, ast.JoinedStr):  # its text pieces stay; its expressions where Python 3.11
            # placed them right (not always so inside f-strings)
            return isinstance(child, ast.FormattedValue) and _same_tree(self.text(child.value), child.value)
        return not (isinstance(parent, (*_FUNCTIONS, ast.ClassDef)) and child is parent.body[0]
                    and _is_docstring(child))

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (self.lines.offset(node.lineno, node.col_offset),
                self.lines.offset(node.end_lineno, node.end_col_offset))

    def text(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.source[start:end]

    def _edit(self, operator: str, node: ast.AST, text: str, shown: ast.AST | None = None,
              span: tuple[int, int] | None = None) -> _Edit:
        """Replace `node`'s text (or `span`) by `text`; `change` shows `shown` (default `node`) changed."""
        (start, end), (shown_start, shown_end) = span or self.span(node), self.span(shown or node)
        before = self.source[shown_start:shown_end]
        after = self.source[shown_start:start] + text + self.source[end:shown_end]
        return _Edit(operator, node.lineno, start, end, text, _change_text(before, after))

    def _parenthesized(self, node: ast.AST) -> bool:
        start, end = self.span(node)
        return (self.source[max(0, start - 80) : start].rstrip().endswith("(")
                and self.source[end : end + 80].lstrip().startswith(")"))

    def _fit(self, text: str, precedence: int, parent: ast.AST, child: ast.AST) -> str:
        """`text` to stand in `child`'s place under `parent`: parenthesized when it binds too loosely there
        or spans lines (only brackets allow that), unless `child` already stands in parentheses."""
        if not isinstance(child, ast.expr) or self._parenthesized(child):
            return text
        return f"({text})" if "\n" in text or "\r" in text or precedence < _binding(parent, child) else text

    def _operators(self, site: _Site) -> Iterator[_Edit]:
        node = site.node
        if isinstance(node, ast.Compare):
            for gap, old in enumerate(node.ops):
                for new in _SWAPS[type(old)]:
                    yield from self._swapped("comparison", site, [node.left, *node.comparators], [gap], new)
        elif isinstance(node, ast.BoolOp):
            gaps = list(range(len(node.values) - 1))  # all of them: `a and b or c` would regroup
            yield from self._swapped("boolean", site, node.values, gaps, *_SWAPS[type(node.op)])
        elif isinstance(node, ast.BinOp | ast.AugAssign):
            operands = [node.left, node.right] if isinstance(node, ast.BinOp) else [node.target, node.value]
            for new in _SWAPS.get(type(node.op), ()):
                yield from self._swapped("arithmetic", site, operands, [0], new)

    def _swapped(self, family: str, site: _Site, operands: list, gaps: list[int], new: type
                 ) -> Iterator[_Edit]:
        """`site.node` with its operator token between operands[gap] and operands[gap + 1] made `new`, for
        each gap; operands that would bind too loosely next to `new` are parenthesized."""
        node, statement = site.node, isinstance(site.node, ast.stmt)
        olds = node.ops if isinstance(node, ast.Compare) else [node.op] * len(gaps)
        edits = []
        for gap in gaps:
            pattern = _token_pattern(type(olds[gap]), "=" if statement else "")
            token = pattern.match(self.source, self.span(operands[gap])[1], self.span(operands[gap + 1])[0])
            if token is None:
                return
            edits.append((token.start(1), token.end(1), _TOKENS[new] + ("=" if statement else "")))
        changed = ast.BinOp(node.left, new(), node.right) if isinstance(node, ast.BinOp) else (
            ast.BoolOp(new(), node.values) if isinstance(node, ast.BoolOp) else node)
        for operand in operands:
            if _precedence(operand) < _binding(changed, operand) and not self._parenthesized(operand):
                start, end = self.span(operand)
                edits += [(start, start, "("), (end, end, ")")]
        parts, (position, end) = [], self.span(node)
        for edit_start, edit_end, text in sorted(edits):
            parts += [self.source[position:edit_start], text]
            position = edit_end
        text = "".join([*parts, self.source[position:end]])
        yield self._edit(family, node, self._fit(text, _precedence(changed), site.parent, node))

    def _unary(self, site: _Site) -> Iterator[_Edit]:
        node = site.node
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.Not):
            operand = self._fit(self.text(node.operand), _precedence(node.operand), site.parent, node)
            yield self._edit("arithmetic" if isinstance(node.op, ast.USub) else "negation", node, operand)

    def _literal(self, site: _Site) -> Iterator[_Edit]:
        node = site.node
        if isinstance(node, ast.Constant):
            for text in _constant_texts(node.value, self.text(node)):
                precedence = _UNARY if text.startswith("-") else _ATOM
                yield self._edit("constant", node, self._fit(text, precedence, site.parent, node))
        elements = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None)
        if type(node) in _EMPTY and elements and isinstance(getattr(node, "ctx", ast.Load()), ast.Load):
            yield self._edit("empty", node, _EMPTY[type(node)])

    def _negated_test(self, site: _Site) -> Iterator[_Edit]:
        node = site.node
        if isinstance(node, ast.If | ast.While | ast.IfExp | ast.Assert) and not (
                isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not)):
            test = self.text(node.test)
            negated = "not " + (f"({test})" if _precedence(node.test) < _PRECEDENCE[ast.Not] else test)
            yield self._edit("negation", node.test, self._fit(negated, _PRECEDENCE[ast.Not], node, node.test))

    def _slice(self, site: _Site) -> Iterator[_Edit]:
        node = site.node
        for bound in (node.lower, node.upper) if isinstance(node, ast.Slice) else ():
            for delta in (1, -1) if bound is not None else ():
                value = _int_value(bound)
                if value is not None:
                    text = str(value + delta)
                    moved = self._fit(text, _UNARY if value + delta < 0 else _ATOM, node, bound)
                else:
                    text = self.text(bound)
                    text = f"({text})" if _precedence(bound) < _PRECEDENCE[ast.Add] else text
                    text = f"{text} {'+' if delta > 0 else '-'} 1"
                    moved = self._fit(text, _PRECEDENCE[ast.Add], node, bound)
                yield self._edit("slice", bound, moved, shown=site.parent)

    def _statement(self, site: _Site) -> Iterator[_Edit]:
        """Whole lines go when the statement has them to itself; else it becomes `pass` (also when it is
        its block's only statement). An `elif` goes only as whole lines (`pass` would end the `if`)."""
        node, block = site.node, site.block
        if not isinstance(node, ast.stmt) or isinstance(node, _KEPT_STATEMENTS) or block is None:
            return
        if isinstance(node, ast.Return) and block is getattr(site.owner, "body", None) and node is block[-1]:
            return  # the function's last statement: removing it is the `return None` change
        start, end = self.span(node)
        line_start, last_line = self.lines.start(node.lineno), self.lines.content_end(node.end_lineno)
        alone = (not self.source[line_start:start].strip()
                 and re.fullmatch(r"[ \t]*(#.*)?", self.source[end:last_line]) is not None)
        is_elif = isinstance(site.parent, ast.If) and block is site.parent.orelse \
            and self.source.startswith("elif", start)
        change = f"`{_shortened(self.source[start:end].splitlines()[0])}` -> removed"
        if alone and (len(block) > 1 or is_elif):
            yield _Edit("statement", node.lineno, line_start, self.lines.end(node.end_lineno), "", change)
        elif not is_elif:
            yield _Edit("statement", node.lineno, start, end, "pass", change)

    def _return(self, site: _Site) -> Iterator[_Edit]:
        node = site.node
        if isinstance(node, ast.Return) and not _is_none(node.value):
            yield self._edit("return", node.value, "None", shown=node)
            others = {ast.dump(r.value): r.value for r in self.returns[id(site.owner)]}
            others.pop(ast.dump(node.value))
            for other in others.values():
                text = self._fit(self.text(other), _precedence(other), node, node.value)
                yield self._edit("return", node.value, text, shown=node)

    def _arguments(self, site: _Site) -> Iterator[_Edit]:
        node = site.node
        if not isinstance(node, ast.Call) or any(isinstance(a, ast.Starred) for a in node.args):
            return
        if _called_name(node.func) in SYMMETRIC_CALLS:  # the swap is the same call: it could never be caught
            return
        for left, right in pairwise(node.args):
            (start, left_end), (right_start, end) = self.span(left), self.span(right)
            if self.text(left) != self.text(right):
                swapped = (self._fit(self.text(right), _precedence(right), node, left)
                           + self.source[left_end:right_start]
                           + self._fit(self.text(left), _precedence(left), node, right))
                yield self._edit("arguments", left, swapped, shown=node, span=(start, end))


def _called_name(func: ast.expr) -> str:
    """'max' for `max(...)`, 'gcd' for `math.gcd(...)`: the last name of what is called."""
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _token_pattern(operator: type, suffix: str) -> re.Pattern[str]:
    """The operator's token after what may stand between an operand and it: spaces, parentheses, line
    continuations, comments."""
    token = re.escape(_TOKENS[operator]).replace(r"\ ", r"\s+") + re.escape(suffix)
    return re.compile(rf"(?:[\s()\\]|#[^\r\n]*)*({token})")  # compiled once: re caches it


def _precedence(node: ast.AST) -> int:
    if isinstance(node, ast.BoolOp | ast.BinOp | ast.UnaryOp):
        return _PRECEDENCE[type(node.op)]
    if isinstance(node, ast.Compare | ast.Await):
        return _COMPARISON if isinstance(node, ast.Compare) else _AWAIT
    return 0 if isinstance(node, _LOOSE) else _ATOM


def _binding(parent: ast.AST, child: ast.AST) -> int:
    """The least precedence `child` needs to stand unparenthesized in `parent`."""
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Pow):
        return _AWAIT if child is parent.left else _UNARY
    if isinstance(parent, ast.BinOp):
        return _PRECEDENCE[type(parent.op)] + (0 if child is parent.left else 1)
    if isinstance(parent, ast.BoolOp | ast.UnaryOp):
        return _PRECEDENCE[type(parent.op)] + isinstance(parent, ast.BoolOp)
    if isinstance(parent, ast.Compare | ast.Starred):
        return _COMPARISON + 1
    trailer = (isinstance(parent, ast.Attribute | ast.Subscript) and child is parent.value) or (
        isinstance(parent, ast.Call) and child is parent.func)
    if isinstance(parent, ast.Await) or trailer:
        return _ATOM
    return 1 if isinstance(parent, ast.IfExp) and child is not parent.orelse else 0


def _same_tree(text: str, other: str | ast.AST) -> bool:
    """`text` parses to the expression `other` is (a text or a node)."""
    try:
        other = parse_expression(f"({other})") if isinstance(other, str) else other
        return ast.dump(parse_expression(f"({text})")) == ast.dump(other)
    except SyntaxError:
        return False


def _constant_texts(value: object, text: str) -> list[str]:
    """The replacement literals for a constant written `text`."""
    if isinstance(value, bool):
        return [repr(not value)]
    if isinstance(value, int | float):
        kind = type(value)
        values = [kind(v) for v in (value + 1, value - 1, 0, 1, -1)]
        finite = [v for v in values if v != value and (kind is int or math.isfinite(v))]
        return list(dict.fromkeys(map(repr, finite)))
    if isinstance(value, str | bytes):
        quoted = re.match(r"([A-Za-z]*)('''|\"\"\"|'|\")", text)  # the literal's own prefix and quotes
        prefix, quote = quoted.groups() if quoted else ("b" if isinstance(value, bytes) else "", '"')
        return [prefix + quote + ("" if value else "x") + quote]
    return []


def _int_value(node: ast.expr) -> int | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _int_value(node.operand)
        return None if value is None else -value
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def _is_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) \
        and isinstance(statement.value.value, str)


def _is_none(node: ast.expr | None) -> bool:
    return node is None or (isinstance(node, ast.Constant) and node.value is None)


def _change_text(before: str, after: str) -> str:
    """"`before` -> `after`", each side shortened around where the two differ, so the change stays in sight
    ('`sum(a) - sum(b)` -> `sum(a) + sum(b)`' cut in its middle would show two equal texts)."""
    before, after = " ".join(before.split()), " ".join(after.split())
    if max(len(before), len(after)) <= _SHOWN_LENGTH:
        return f"`{before}` -> `{after}`"
    start = next((i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b),
                 min(len(before), len(after)))
    cut = max(0, start - _SHOWN_LENGTH // 3)
    return f"`{_window(before, cut)}` -> `{_window(after, cut)}`"


def _window(text: str, cut: int) -> str:
    """At most _SHOWN_LENGTH characters of `text` from `cut`, an ellipsis where it was cut."""
    shown = text[cut:cut + _SHOWN_LENGTH - 2]
    return ("…" if cut else "") + shown + ("…" if cut + len(shown) < len(text) else "")


def _shortened(text: str) -> str:
    """Whitespace runs made one space; at most _SHOWN_LENGTH characters, an ellipsis for the middle."""
    text = " ".join(text.split())
    if len(text) <= _SHOWN_LENGTH:
        return text
    head = (_SHOWN_LENGTH - 1) * 2 // 3
    return text[:head] + "…" + text[len(text) - (_SHOWN_LENGTH - 1 - head) :]
