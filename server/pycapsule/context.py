"""What the prompt needs to know about the target's module, within a character budget.

The candidates are the module's imports, its top-level definitions and constants (tables spread
over several lines included), for a method its own class (every other method, private ones too,
and `__init__`, which tells the attributes), and definitions imported from the project's own
files. They are chosen by how likely the body is to use them, most likely first, until the budget
is spent:

1. names the target's signature (the types its annotations name included), examples, docstring
   prose and current body mention (and, for a method, its class's bases);
2. names a body of the target is likely to use, scored: what the neighbouring code uses (its class's
   other methods most, then the module's functions, the nearest weighing most), what is defined right
   beside the target (the private table next to the function that indexes it, a one-line setting),
   what shares a word with the target's name; offered by score per character, so one large class
   does not crowd out several small helpers;
3. the rest of the module, the nearest definitions first (not its strings: a string nobody names
   is usually a note or a template for other modules).

A class too large for the whole of it to be worth its room shows what builds its instances first:
`__init__`, `__new__`, `from_*` and `parse*` methods, classmethods returning `cls(...)` (for the
target's own class, those before the members nearest the target; for another class, those alone,
its other public methods named in one comment line).

What is chosen is shown in source order. A function is shown as its signature, the first line of
its docstring and a comment where the body would be: never an empty `...` body, which a small
model may take for the function it has to write and complete instead of the target.

The module's own definitions are found with `ast`: exact, and ~100x faster than asking jedi.
jedi is used only for names imported from the user's own project files (relative imports and
the project's own packages), which is what jedi is good at; standard-library and installed
packages are left out because the model knows them already.
"""

from __future__ import annotations

import ast
import contextlib
import doctest
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pycapsule.capsule import (
    Capsule,
    SourceLines,
    docstring_node,
    header_colon_end,
    is_stub_statement,
    parse_module,
)
from pycapsule.debugging.dependencies import class_path
from pycapsule.debugging.source_text import dedent_code
from pycapsule.parsing import parse_source

_Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
_Function = ast.FunctionDef | ast.AsyncFunctionDef
_JEDI_LOCK = threading.Lock()
"""jedi keeps process-wide caches; generations run in worker threads, so one lookup at a time."""
DEFAULT_BUDGET_CHARS = 2000
"""About 500 tokens (code runs ~4 characters a token): on a CPU, reading the context is most of a
first attempt's wait, and 4,000 characters passed no more real-code functions (docs/results, issue 48)."""
INIT_LINES_SHOWN = 15
"""A class's __init__ is shown whole up to this many lines: it tells which attributes exist."""
TABLE_LINES_SHOWN = 30
"""A constant spread over more lines (a long table) shows its first lines and how many are left out."""
JEDI_LOOKUPS = 6
"""Names resolved through jedi per prompt at most: each lookup can take a good part of a second."""
SHORT_FUNCTION_LINES = 12
"""A function this long or shorter is shown whole."""
BODY_LINES_SHOWN = 3
"""A longer one shows this many of its first body lines."""
BESIDE_WEIGHT = 3.0
"""What being defined right beside the target counts for; a function next to the target using a name
counts about 2, one far away 0.2, a method of the target's class 3."""
WORD_WEIGHT = 4.0
"""What sharing a word with the target's name counts for, that word being in no other name."""
_COMMON_WORDS = frozenset({"get", "set", "is", "has", "to", "the", "of", "from", "and", "for", "with", "in",
                           "init", "new", "make", "do", "as", "by", "on", "or", "self", "cls"})
"""Words of a name that say nothing of what it is about."""
LARGE_CLASS_SHARE = 0.2
"""Another class whose summary would take more of the budget than this shows its constructors and
parsers only (and the names of its other methods), unless the target names it and it fits."""
COST_POWER = 0.5
"""Likely names are offered by score / characters ** COST_POWER: a cheap likely name before a costly one."""
_CONSTRUCTORS = frozenset({"__init__", "__new__", "__post_init__"})


@dataclass
class _Piece:
    text: str
    order: tuple[int, int]
    """Where it is shown: (section, line in the module)."""
    shorter: str | None = None
    """What is shown instead of a large class's `text`: its constructors and parsers."""
    named: bool = False
    """The target names it: shown whole whenever it fits."""


def module_context(capsule: Capsule, budget_chars: int = DEFAULT_BUDGET_CHARS) -> str:
    """Imports and summaries of what the target can use from its module, most likely used first ("" for a
    budget of 0: nothing is parsed or looked up)."""
    if budget_chars <= 0:
        return ""
    try:
        module = parse_module(capsule.module_source)
    except ValueError:
        return ""
    return _ModuleView(capsule, module).context(budget_chars)


class _ModuleView:
    def __init__(self, capsule: Capsule, module: ast.Module) -> None:
        self.capsule = capsule
        self.lines = SourceLines(capsule.module_source)
        self.imports = [node for node in module.body if isinstance(node, ast.Import | ast.ImportFrom)]
        self.definitions: dict[str, _Definition] = {}
        self.constants: dict[str, ast.stmt] = {}
        for node in module.body:
            if isinstance(node, _Definition):
                self.definitions[node.name] = node
            for name in _assigned(node):
                if not (name.startswith("__") and name.endswith("__")):
                    self.constants[name] = node
        self.imported = {
            (alias.asname or alias.name): statement
            for statement in self.imports if isinstance(statement, ast.ImportFrom)
            for alias in statement.names
        }
        self.owner = class_path(module, capsule.class_names) if capsule.class_names else None
        self.top_name = capsule.qualname.split(".")[0]
        self.target_line = capsule.def_line
        self.body = module.body
        self.jedi_lookups = 0
        self.import_paths: tuple[Path, ...] | None = None
        """Found on the first name imported with `from`."""
        self.shown: set[int] = set()
        """ids of the nodes already offered (`a = b = 1` binds two names)."""

    def context(self, budget: int) -> str:
        chosen: list[_Piece] = []
        used = 0
        import_text = "\n".join(_segment(self.lines, node) for node in self.imports)
        for piece in self._pieces(import_text, budget):
            too_long = used + len(piece.text) + 2 > budget or (
                not piece.named and len(piece.text) > budget * LARGE_CLASS_SHARE)
            if too_long and piece.shorter is not None:
                piece.text = piece.shorter
            cost = len(piece.text) + 2
            if used + cost <= budget:
                chosen.append(piece)
                used += cost
        chosen.sort(key=lambda piece: piece.order)
        return "\n\n".join(piece.text for piece in chosen)

    def _pieces(self, import_text: str, budget: int) -> Iterator[_Piece]:
        if import_text:
            yield _Piece("# The module's imports\n" + import_text, (0, 0))
        seen = {self.top_name}
        if self.owner is not None:
            text = self._own_class(self.owner, compact=False)
            if len(text) > budget // 2:
                text = self._own_class(self.owner, compact=True, most_chars=budget * 3 // 4)
            yield _Piece("# The class the function belongs to\n" + text, (3, self.owner.lineno))
        named = list(_mentioned_names(self.capsule))
        if self.owner is not None:
            named += [name for base in self.owner.bases for name in _names_in(base)]
        for _, piece in self._offered(named, seen):
            piece.named = True
            yield piece
        # What is likely used, by score per character: a large class a neighbour uses does not crowd
        # out the private helper written next to the target.
        scores = self._likely_scores()
        likely = self._offered(sorted(scores, key=self._distance), seen)
        likely.sort(key=lambda found: -scores[found[0]] / _cost(found[1], budget) ** COST_POWER)
        for _, piece in likely:
            yield piece
        # A string nobody in the module names is usually a note or a template for other modules.
        texts = {name for name, node in self.constants.items() if _is_text(node)}
        module_names = [*self.definitions, *(name for name in self.constants if name not in texts)]
        for _, piece in self._offered(sorted(module_names, key=self._distance), seen):
            yield piece

    def _offered(self, names: Iterable[str], seen: set[str]) -> list[tuple[str, _Piece]]:
        """The pieces for the names not offered yet."""
        found = []
        for name in names:
            if name in seen:
                continue
            seen.add(name)
            piece = self._piece(name)
            if piece is not None:
                found.append((name, piece))
        return found

    def _likely_scores(self) -> Counter[str]:
        """How likely a body of the target is to use each module name nothing in it names: what the
        neighbouring code uses (the nearest weighing most), what is defined right beside the target, what
        shares a word with the target's name (`_align_column_choose_padfn` for `_align_column`,
        `_mac_arch` for `mac_platforms`)."""
        known = dict.fromkeys([*self.definitions, *self.constants, *self.imported])
        scores: Counter[str] = Counter()
        for function, weight in self._neighbours():
            # In the order the names appear: equal scores rank alike in every process (a set's order
            # changes with the hash seed, and so did the prompt).
            for name in dict.fromkeys(node.id for node in ast.walk(function) if isinstance(node, ast.Name)):
                if name in known:
                    scores[name] += weight
        for name in self._beside_target():
            scores[name] += BESIDE_WEIGHT
        for name, weight in self._sharing_words(known).items():
            scores[name] += weight
        scores.pop(self.top_name, None)
        return scores

    def _neighbours(self) -> list[tuple[_Function, float]]:
        """The other functions and methods, each with how much its names count: the class's own methods
        most, then the module's functions, the nearer the more."""
        neighbours: list[tuple[_Function, float]] = []
        if self.owner is not None:
            neighbours += [(item, 3.0) for item in self.owner.body
                           if isinstance(item, _Function) and item.name != self.capsule.name]
        for node in self.definitions.values():
            if node.name == self.top_name:
                continue
            distance = abs(node.lineno - self.target_line)
            if isinstance(node, _Function):
                neighbours.append((node, 0.2 + 40.0 / (20.0 + distance)))
        return neighbours

    def _beside_target(self) -> list[str]:
        """The names bound between the target's top-level statement and the definitions on either side
        of it (a private table written next to the function that indexes it, a one-line setting), and
        those definitions."""
        index = next((i for i, node in enumerate(self.body)
                      if _first_line(node) <= self.target_line <= (node.end_lineno or node.lineno)), None)
        if index is None:
            return []
        found: list[str] = []
        for step in (-1, 1):
            position = index + step
            while 0 <= position < len(self.body):
                node = self.body[position]
                if isinstance(node, _Definition):
                    found.append(node.name)
                    break
                # A string over several lines is usually a note (HumanEval/64's FIX), a one-line one a
                # setting the body reads (a path, a format, a pattern: BigCodeBench's constants).
                if not (_is_text(node) and (node.end_lineno or node.lineno) > node.lineno):
                    found += _assigned(node)
                position += step
        return found

    def _sharing_words(self, known: Iterable[str]) -> dict[str, float]:
        """Names that share a word with the target's name, a word rarer in the module's names weighing
        more (its class's words, for a method, half as much)."""
        words_of = {name: _words(name) for name in known if name != self.top_name}
        frequency = Counter(word for words in words_of.values() for word in words)
        wanted = {word: 1.0 for word in _words(self.capsule.name)}
        for class_name in self.capsule.class_names:
            for word in _words(class_name):
                wanted.setdefault(word, 0.5)
        found: dict[str, float] = {}
        for name, words in words_of.items():
            weight = sum(wanted[word] / frequency[word] for word in sorted(words & wanted.keys()))
            if weight:
                found[name] = WORD_WEIGHT * weight
        return found

    def _line_of(self, name: str) -> int:
        node = self.definitions.get(name) or self.constants.get(name)
        return node.lineno if node is not None else 0

    def _distance(self, name: str) -> int:
        return abs(self._line_of(name) - self.target_line)

    def _piece(self, name: str) -> _Piece | None:
        node = self.definitions.get(name) or self.constants.get(name)
        if node is not None:
            if id(node) in self.shown:
                return None
            self.shown.add(id(node))
        if name in self.definitions:
            node = self.definitions[name]
            if isinstance(node, ast.ClassDef):
                return _Piece(_class_summary(self.lines, node), (2, node.lineno),
                              _class_summary(self.lines, node, short=True))
            return _Piece(_function_summary(self.lines, node, ""), (2, node.lineno))
        if name in self.constants:
            node = self.constants[name]
            return _Piece(_constant(self.lines, node), (2, node.lineno))
        if name in self.imported and self.jedi_lookups < JEDI_LOOKUPS:
            statement = self.imported[name]
            assert isinstance(statement, ast.ImportFrom)
            if self.import_paths is None:
                self.import_paths = _import_paths(self.capsule.path)
            if not _is_project_module(self.import_paths, statement):
                return None
            self.jedi_lookups += 1
            text = _jedi_summary(self.capsule, statement, name, self.import_paths)
            return _Piece(text, (1, statement.lineno)) if text else None
        return None

    def _own_class(self, node: ast.ClassDef, compact: bool, most_chars: int | None = None) -> str:
        """The target's class: every member but the target itself, private ones included.

        `compact` (for a large class) leaves out the methods' body lines and docstring lines (not a
        parser's docstring line) and a long table's rows; `most_chars` then keeps its constructors and
        parsers and the members nearest the target that fit."""
        lines = self.lines
        members: list[tuple[ast.stmt, str]] = []
        for item in node.body:
            if item is docstring_node(node):
                continue
            if isinstance(item, _Function):
                if _first_line(item) == self.target_line:
                    continue
                if compact and _makes_instances(item) and item.name not in _CONSTRUCTORS:
                    # A parser keeps its docstring line: what it makes an instance of.
                    members.append((item, _method(lines, item, own_class=False)))
                else:
                    members.append((item, _method(lines, item, own_class=True, with_doc=not compact)))
            elif isinstance(item, ast.Assign | ast.AnnAssign):
                text = _constant(lines, item, TABLE_LINES_SHOWN // 3 if compact else TABLE_LINES_SHOWN)
                members.append((item, _indented(text, lines, item)))
        head = _class_head(lines, node)
        if most_chars is not None:
            room = most_chars - len(head)
            # Constructors and parsers first: __init__ tells the attributes every method may use, and a
            # method comparing or combining instances builds one from its other operand.
            nearest = sorted(members, key=lambda member: (not _makes_instances(member[0]),
                                                          abs(member[0].lineno - self.target_line)))
            kept = []
            for member in nearest:
                if len(member[1]) + 1 <= room:
                    kept.append(member)
                    room -= len(member[1]) + 1
            members = [member for member in members if member in kept]
        return "\n".join([head, *(text for _, text in members)])


def _assigned(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def _cost(piece: _Piece, budget: int) -> int:
    """The characters a piece takes when shown (a large class, shortened)."""
    if piece.shorter is not None and len(piece.text) > budget * LARGE_CLASS_SHARE:
        return len(piece.shorter) + 2
    return len(piece.text) + 2


def _words(name: str) -> set[str]:
    """'_alignColumn_padfn' -> {'align', 'column', 'padfn'}; common words and single letters left out."""
    spaced = "".join(f"_{c}" if c.isupper() else c for c in name).lower()
    return {_singular(word) for word in spaced.split("_") if len(word) > 1 and word not in _COMMON_WORDS}


def _singular(word: str) -> str:
    """'addresses' -> 'address', 'tags' -> 'tag' (roughly: enough to match a name's words)."""
    if word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") and len(word) > 3 else word


def _is_text(node: ast.stmt) -> bool:
    value = getattr(node, "value", None)
    return isinstance(value, ast.Constant) and isinstance(value.value, str | bytes)


def _first_line(node: ast.stmt) -> int:
    return min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])


def _segment(lines: SourceLines, node: ast.stmt) -> str:
    first = _first_line(node)
    last = node.end_lineno or node.lineno
    return lines.text[lines.start(first) : lines.content_end(last)].replace("\r\n", "\n")


def _constant(lines: SourceLines, node: ast.stmt, most_lines: int = TABLE_LINES_SHOWN) -> str:
    """The assignment as written; a long table keeps its first lines and says how many are left out."""
    text = _segment(lines, node)
    rows = text.split("\n")
    if len(rows) <= most_lines:
        return text
    kept = rows[: most_lines - 2]
    indent = rows[1][: len(rows[1]) - len(rows[1].lstrip())] or "    "
    return "\n".join([*kept, f"{indent}# ... {len(rows) - len(kept) - 1} more lines ...", rows[-1]])


def _first_doc_line(node: ast.AST) -> str | None:
    if docstring_node(node) is None:
        return None
    text = ast.get_docstring(node) or ""
    first = text.strip().split("\n", 1)[0].strip()
    return first or None


def _function_summary(lines: SourceLines, node: _Function, indent: str, excerpt: bool = True,
                      with_doc: bool = True) -> str:
    """A short function whole; a longer one as its decorators and def line(s), the first line of its
    docstring and its first body lines, then a comment saying how many lines are left out.

    Never an empty `...` body: a small model takes such a stub for the function it has to write and
    completes it instead of the target; nor a comment standing for the whole body, which the 0.5B
    model copied as the target's body (HumanEval/38 and /50). Without `excerpt` (another class's
    methods), no body lines at all; without `with_doc`, no docstring line."""
    first = _first_line(node)
    last = node.end_lineno or node.lineno
    if excerpt and _is_unwritten(node):
        return _unwritten_summary(lines, node, indent)
    if last - first + 1 <= SHORT_FUNCTION_LINES and excerpt and with_doc:
        text = lines.text[lines.start(first) : lines.content_end(last)].replace("\r\n", "\n")
        return "\n".join(line.removeprefix(indent) for line in text.split("\n"))
    end = header_colon_end(lines, node, node.body[0])
    header = lines.text[lines.start(first) : end].replace("\r\n", "\n")
    header = "\n".join(line.removeprefix(indent) for line in header.split("\n"))
    parts = [header]
    doc_node = docstring_node(node)
    doc = _first_doc_line(node) if with_doc else None
    if doc:
        parts.append(f'    """{doc}"""')
    statements = node.body[1:] if doc_node is not None else node.body
    body_first = statements[0].lineno if statements else last + 1
    header_last = lines.line_of(end - 1)
    shown = min(last, body_first + BODY_LINES_SHOWN - 1) if excerpt and with_doc else header_last
    body_indent = _indent_of(lines, statements[0]) if statements else indent + "    "
    for number in range(body_first, shown + 1):
        parts.append("    " + lines.line_text(number).removeprefix(body_indent))
    left_out = last - shown
    if left_out > 0:
        parts.append(f"    # ... {left_out} more line{'s' if left_out > 1 else ''} ...")
    return "\n".join(parts)


def _is_unwritten(node: _Function) -> bool:
    """Another stub of the module (its body still `...`), e.g. the next function the user will generate."""
    statements = node.body[1:] if docstring_node(node) is not None else node.body
    return all(is_stub_statement(statement) for statement in statements)


def _unwritten_summary(lines: SourceLines, node: _Function, indent: str) -> str:
    """A stub as one comment line: its name, parameters and summary are there to call it by, and no
    `def` with an empty body is there for the model to complete instead of its own target."""
    end = header_colon_end(lines, node, node.body[0])
    header = " ".join(lines.text[lines.start(node.lineno) : end].split()).removesuffix(":")
    doc = _first_doc_line(node)
    return f"# {header.removeprefix('async ')}  (not written yet{': ' + doc if doc else ''})"


def _class_head(lines: SourceLines, node: ast.ClassDef) -> str:
    class_line_end = header_colon_end(lines, node, node.body[0])  # type: ignore[arg-type]
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    parts = [lines.text[lines.start(first) : class_line_end].replace("\r\n", "\n")]
    doc = _first_doc_line(node)
    if doc:
        parts.append(f'    """{doc}"""')
    return "\n".join(parts)


def _class_summary(lines: SourceLines, node: ast.ClassDef, short: bool = False) -> str:
    """Another class of the module: its one-line attributes, what __init__ sets, its public methods.

    `short` (a class too large for what is left of the budget): its constructors and parsers, the
    other public methods named in one comment line."""
    parts = [_class_head(lines, node)]
    others: list[str] = []
    for item in node.body:
        if isinstance(item, ast.AnnAssign | ast.Assign) and item.end_lineno == item.lineno:
            parts.append("    " + lines.line_text(item.lineno).strip())
        elif isinstance(item, _Function):
            if item.name.startswith("_") and item.name not in _CONSTRUCTORS:
                continue
            if short and not _makes_instances(item):
                others.append(item.name)
                continue
            parts.append(_method(lines, item, own_class=False))
    if others:
        names = ", ".join(dict.fromkeys(others))
        parts.append(f"    # and {names if len(names) <= 100 else names[:100].rsplit(', ', 1)[0] + ', ...'}")
    return "\n".join(parts)


def _makes_instances(item: ast.stmt) -> bool:
    """A constructor or a parser of its class: __init__, __new__, __post_init__, a from_*/parse* method,
    a classmethod that returns cls(...)."""
    if not isinstance(item, _Function):
        return False
    if item.name in _CONSTRUCTORS or item.name.lstrip("_").lower().startswith(("from", "parse")):
        return True
    is_classmethod = any(isinstance(d, ast.Name) and d.id == "classmethod" for d in item.decorator_list)
    if not is_classmethod or not item.args.args:
        return False
    cls = item.args.args[0].arg
    return any(isinstance(node, ast.Return) and isinstance(node.value, ast.Call)
               and isinstance(node.value.func, ast.Name) and node.value.func.id == cls
               for node in ast.walk(item))


def _method(lines: SourceLines, item: _Function, own_class: bool, with_doc: bool = True) -> str:
    indent = _indent_of(lines, item)
    length = (item.end_lineno or item.lineno) - item.lineno + 1
    if own_class and item.name == "__init__" and length <= INIT_LINES_SHOWN:
        text = _segment(lines, item)
        return "\n".join("    " + line.removeprefix(indent) for line in text.split("\n"))
    summary = _function_summary(lines, item, indent, excerpt=own_class, with_doc=with_doc)
    summary = "\n".join("    " + line for line in summary.split("\n"))
    length = (item.end_lineno or item.lineno) - _first_line(item) + 1
    shown_whole = own_class and with_doc and length <= SHORT_FUNCTION_LINES
    if (own_class or item.name in _CONSTRUCTORS) and not shown_whole:
        attributes = _attributes_set(item)
        if attributes:
            summary += "\n        # sets " + ", ".join(attributes)
    return summary


def _attributes_set(function: _Function) -> list[str]:
    """'self.x' for each attribute the method assigns, in order (for __new__, on the instance it makes:
    `self = super().__new__(cls)`)."""
    receiver = (function.args.posonlyargs + function.args.args)[:1]
    if not receiver:
        return []
    names = {receiver[0].arg}
    if function.name == "__new__":
        names = {target.id for node in ast.walk(function) if isinstance(node, ast.Assign)
                 and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute)
                 and node.value.func.attr == "__new__"
                 for target in node.targets if isinstance(target, ast.Name)}
    found = [
        f"{node.value.id}.{node.attr}" for node in ast.walk(function)
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
        and isinstance(node.value, ast.Name) and node.value.id in names
    ]
    return list(dict.fromkeys(found))


def _indented(text: str, lines: SourceLines, node: ast.stmt) -> str:
    indent = _indent_of(lines, node)
    return "\n".join("    " + line.removeprefix(indent) for line in text.split("\n"))


def _indent_of(lines: SourceLines, node: ast.stmt) -> str:
    text = lines.line_text(node.lineno)
    return text[: len(text) - len(text.lstrip())]


def _mentioned_names(capsule: Capsule) -> Iterator[str]:
    """Names in the signature, the examples, the docstring's words and the body, in that order."""
    header = capsule.header.strip()
    with contextlib.suppress(SyntaxError, ValueError):
        tree = parse_source(dedent_code(header.replace("\r\n", "\n")) + "\n    pass\n")
        yield from _names_in(tree)
    for example in capsule.examples:
        with contextlib.suppress(SyntaxError, ValueError):
            yield from _names_in(parse_source(example.source))
    if capsule.docstring:
        try:
            prose: Iterable[object] = doctest.DocTestParser().parse(capsule.docstring)
        except ValueError:
            prose = [capsule.docstring]
        for part in prose:
            if isinstance(part, str):
                for word in part.replace("`", " ").replace("(", " ").replace(".", " ").split():
                    word = word.strip(",:;'\"[]{}")
                    if word.isidentifier():
                        yield word
    if not capsule.is_stub:
        with contextlib.suppress(SyntaxError, ValueError):
            yield from _names_in(parse_source(dedent_code(capsule.body.replace("\r\n", "\n"))))


def _names_in(tree: ast.AST) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            yield node.value  # A string annotation ('Point'), a forward reference.


def _is_project_module(folders: tuple[Path, ...], statement: ast.ImportFrom) -> bool:
    """A relative import, or an absolute one of a module the project's import paths hold."""
    if not folders:
        return False
    if statement.level:
        return True
    parts = (statement.module or "").split(".")
    for folder in folders:
        base = folder.joinpath(*parts)
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            return True
    return False


def _import_paths(path: Path | None) -> tuple[Path, ...]:
    """The folders the project's own imports resolve from, as check and generate import the module
    (none for a loose file in a shared folder: the sandbox shows it alone)."""
    from pycapsule.config import project_root
    from pycapsule.project import module_import

    root = project_root(path) if path is not None else None
    return module_import(path, root).import_paths if path is not None and root is not None else ()


def _jedi_summary(capsule: Capsule, statement: ast.ImportFrom, name: str,
                  folders: tuple[Path, ...]) -> str | None:
    import jedi

    lines = SourceLines(capsule.module_source)
    last = statement.end_lineno or statement.lineno
    text = lines.text[lines.start(statement.lineno) : lines.content_end(last)]
    column = None
    for line_offset, line in enumerate(text.split("\n")):
        found = _word_column(line, name)
        if found is not None:
            row, column = statement.lineno + line_offset, found
            break
    if column is None or capsule.path is None:
        return None
    path = Path(capsule.path)
    try:
        with _JEDI_LOCK:
            project = jedi.Project(folders[0], added_sys_path=[str(folder) for folder in folders[1:]])
            script = jedi.Script(capsule.module_source, path=path, project=project)
            found_names = script.goto(row, column, follow_imports=True)
            return _describe(found_names, name)
    except Exception:  # jedi raises many kinds of internal errors on odd code; context is optional.
        return None


def _describe(found_names: list, name: str) -> str | None:
    """A found definition as '# from file.py' and its summary, read from that file."""
    for definition in found_names:
        if definition.module_path is None:
            continue
        path = Path(definition.module_path)
        where = path.name
        if definition.type == "statement":
            code = definition.get_line_code().strip()
            return f"# from {where}\n{code}" if code else None
        try:
            source = path.read_text(encoding="utf-8")
            module = parse_source(source)
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            return None
        lines = SourceLines(source)
        for node in module.body:
            if isinstance(node, _Definition) and node.name == definition.name:
                text = _class_summary(lines, node) if isinstance(node, ast.ClassDef) \
                    else _function_summary(lines, node, "")
                return f"# from {where}\n{text}"
    return None


def _word_column(line: str, word: str) -> int | None:
    start = 0
    while True:
        index = line.find(word, start)
        if index == -1:
            return None
        before = line[index - 1] if index else " "
        after = line[index + len(word)] if index + len(word) < len(line) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return index
        start = index + 1
