"""Find the code in a model's reply: fenced blocks, bare code, prose around it, think-tags.

Fences are found line by line (a small pattern for the fence line only) and close by CommonMark's
rules, so a fenced example inside a docstring the reply repeats does not end the reply's block;
everything else is decided by whether a piece parses and what its syntax tree defines. The code
that defines the target wins, fenced or not; imports and helpers from the reply's other Python
blocks are carried along.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass

from pycapsule.debugging import UnusableReply
from pycapsule.debugging.source_text import dedent_code, normalize_newlines
from pycapsule.parsing import parse_source

_OPENING = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\s]*)[^`]*$")
_BARE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*$")
_MAX_CLOSING_INDENT = 3
_MAX_BLOCK_ENDS = 200
"""Other ends tried, in a whole reply, for blocks that do not parse where CommonMark ends them."""
_PYTHON_LABELS = {"", "python", "python3", "py", "py3", "pycon", "ipython", "sage"}
_THINK_TAGS = ("think", "thinking", "reasoning")
_MAX_PARSE_ATTEMPTS = 400
"""Line runs tried as code in an unfenced reply before giving up."""


class NoCodeError(UnusableReply):
    """The reply holds no usable Python code; `reason` is one sentence."""


@dataclass(frozen=True)
class Fence:
    indent: str
    char: str
    length: int

    @property
    def columns(self) -> int:
        return len(self.indent.expandtabs(4))


@dataclass
class _Scan:
    """A reply's lines, and how many more block ends it may try: a huge reply of broken blocks gets
    CommonMark's ends rather than seconds of parsing."""

    lines: list[str]
    tries_left: int = _MAX_BLOCK_ENDS


@dataclass(frozen=True)
class CodeBlock:
    label: str
    code: str
    lines: range = range(0)
    """The reply's lines it takes, its fences included."""


@dataclass(frozen=True)
class _Found:
    code: str
    defines_target: bool
    lines: range = range(0)
    """The reply's lines the code comes from (unfenced code only)."""

    def holds(self, block: CodeBlock) -> bool:
        return self.lines.start <= block.lines.start and block.lines.stop <= self.lines.stop


def strip_thinking(reply: str) -> str:
    """Drop <think>...</think> sections (and an unclosed one's start, a closed one's orphan end)."""
    text = reply
    for tag in _THINK_TAGS:
        opening, closing = f"<{tag}>", f"</{tag}>"
        while True:
            start = text.find(opening)
            end = text.find(closing)
            if end != -1 and (start == -1 or end < start):
                text = text[end + len(closing) :]  # The opening tag was in the prompt.
            elif start != -1 and end != -1:
                text = text[:start] + text[end + len(closing) :]
            elif start != -1:
                text = text[:start]  # Still thinking when the reply stopped: nothing after is code.
            else:
                break
    return text


def _opening(line: str) -> tuple[Fence, str] | None:
    """The fence a line opens and its label, or None."""
    match = _OPENING.match(line)
    if match is None:
        return None
    label = match["info"].lower().lstrip("{.").rstrip("}")
    return Fence(match["indent"], match["fence"][0], len(match["fence"])), label


def opening_fence(line: str) -> Fence | None:
    """The fence a line opens (any info string), or None."""
    opened = _opening(line)
    return None if opened is None else opened[0]


def _bare_fence(line: str) -> Fence | None:
    """The fence of a line that holds only a fence (no info string), or None."""
    match = _BARE.match(line)
    return None if match is None else Fence(match["indent"], match["fence"][0], len(match["fence"]))


def closes_fence(line: str, opening: Fence) -> bool:
    """CommonMark's closing fence: the opening's character, at least as many, indented at most 3 columns
    more than the opening (a fence indented further is content: an example inside a docstring)."""
    fence = _bare_fence(line)
    return (
        fence is not None
        and fence.char == opening.char
        and fence.length >= opening.length
        and fence.columns <= opening.columns + _MAX_CLOSING_INDENT
    )


def _block_code(lines: list[str], indent: str) -> str:
    # A block inside a list item is indented like its fence.
    return "\n".join(line.removeprefix(indent) for line in lines) + "\n"


def _as_python(code: str, label: str) -> str:
    return _from_console(code) if label in ("pycon", "") else code


def _other_ends(lines: list[str], start: int, opening: Fence, strict: int) -> Iterator[int]:
    """Where else the block may end, in order: any later line of only the opening's character (the model
    may have unindented a fence inside a docstring, or closed with a shorter or indented fence), or the
    end of the reply."""
    for index in range(start, len(lines)):
        fence = _bare_fence(lines[index])
        if index != strict and fence is not None and fence.char == opening.char:
            yield index
    if strict != len(lines):
        yield len(lines)


def _block_end(scan: _Scan, start: int, opening: Fence, label: str) -> int:
    """The index of the line that ends the block whose first line is lines[start] (len(lines): unclosed).

    CommonMark's rule first; a Python block that does not parse there ends at the first other fence
    where it does: a fence inside a string of the code cannot end it, since the code before it would
    leave the string open."""
    lines = scan.lines

    def parses_up_to(end: int) -> bool:
        return _parses(_as_python(_block_code(lines[start:end], opening.indent), label)) is not None

    strict = next((index for index in range(start, len(lines)) if closes_fence(lines[index], opening)),
                  len(lines))
    if label not in _PYTHON_LABELS or parses_up_to(strict):
        return strict
    for end in _other_ends(lines, start, opening, strict):
        if scan.tries_left <= 0:
            break
        scan.tries_left -= 1
        if parses_up_to(end):
            return end
    return strict


def fenced_blocks(text: str) -> list[CodeBlock]:
    """Markdown code blocks in order; an unclosed last block runs to the end of the reply. A block ends
    where CommonMark ends it, unless it is Python that only parses up to a later fence (`_block_end`)."""
    blocks: list[CodeBlock] = []
    scan = _Scan(text.split("\n"))
    lines = scan.lines
    index = 0
    while index < len(lines):
        opened = _opening(lines[index])
        if opened is None:
            index += 1
            continue
        opening, label = opened
        end = _block_end(scan, index + 1, opening, label)
        code = _block_code(lines[index + 1 : end], opening.indent)
        blocks.append(CodeBlock(label, code, range(index, min(end + 1, len(lines)))))
        index = end + 1
    return blocks


def _parses(code: str) -> ast.Module | None:
    try:
        return parse_source(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def defined_function(module: ast.Module, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The module's function `name` at top level or in a top-level class (the first), or None."""
    for node in module.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            return node
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name == name:
                    return item
    return None


def defines(module: ast.Module, name: str) -> bool:
    """Whether the module defines a function `name` at top level or in a top-level class."""
    return defined_function(module, name) is not None


def _has_function(module: ast.Module) -> bool:
    definitions = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    return any(isinstance(node, definitions) for node in module.body)


def _from_console(code: str) -> str:
    """A '>>> ' session (pycon) turned into its code lines."""
    lines = code.split("\n")
    if not any(line.lstrip().startswith(">>> ") for line in lines):
        return code
    kept = [line.lstrip()[4:] for line in lines if line.lstrip().startswith((">>> ", "... "))]
    return "\n".join(kept) + "\n"


def _support_from(others: list[ast.Module], chosen: ast.Module, sources: list[str]) -> str:
    """Imports and definitions from other blocks that the chosen block lacks."""
    have = {getattr(node, "name", None) for node in chosen.body}
    have |= {
        alias.asname or alias.name
        for node in chosen.body
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    pieces = []
    for module, source in zip(others, sources, strict=True):
        for node in module.body:
            keep = False
            if isinstance(node, ast.Import | ast.ImportFrom):
                keep = any((alias.asname or alias.name) not in have for alias in node.names)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                keep = node.name not in have and not node.name.startswith("test")
            if keep:
                segment = ast.get_source_segment(source, node, padded=False) or ""
                decorators = "".join(
                    f"@{ast.get_source_segment(source, d)}\n" for d in getattr(node, "decorator_list", [])
                )
                pieces.append(decorators + segment + "\n")
                have.add(getattr(node, "name", None))
    return "\n".join(pieces)


def _syntax_error(code: str) -> str:
    try:
        parse_source(code)
    except SyntaxError as error:
        return f"{error.msg} at line {error.lineno} of its code block"
    except (ValueError, RecursionError, MemoryError) as error:
        return str(error)
    return "it does not define a function"


def _from_blocks(blocks: list[CodeBlock], target_name: str) -> _Found | None:
    python = [b for b in blocks if b.label in _PYTHON_LABELS] or blocks
    parsed = []
    for block in python:
        code = _as_python(block.code, block.label)
        module = _parses(code)
        if module is not None:
            parsed.append((code, module))
    if not parsed:
        return None
    defining = [(code, module) for code, module in parsed if defines(module, target_name)]
    chosen = defining[-1] if defining else None  # A later block is usually the corrected one.
    if chosen is None:
        with_functions = [(code, module) for code, module in parsed if _has_function(module)]
        chosen = with_functions[-1] if with_functions else parsed[-1]
    code, module = chosen
    others = [(c, m) for c, m in parsed if m is not module]
    support = _support_from([m for _, m in others], module, [c for c, _ in others]) if others else ""
    return _Found((support + "\n" + code) if support else code, bool(defining))


def _whole_reply(text: str, target_name: str) -> _Found | None:
    """The reply as it stands, when it is code: unfenced, perhaps with a fenced example in a docstring."""
    module = _parses(text + "\n")
    if module is None or not (_has_function(module) or any(isinstance(n, ast.Return) for n in module.body)):
        return None
    return _Found(text + "\n", defines(module, target_name), range(text.count("\n") + 1))


def _from_prose(text: str, target_name: str) -> _Found | None:
    """Unfenced code inside prose: the longest parsing run of lines around the target's def."""
    lines = text.split("\n")
    starts = [
        index
        for index, line in enumerate(lines)
        if line.lstrip().startswith(("def ", "async def ", "class ", "@", "import ", "from "))
    ]
    # A run of code ends before a blank line or an unindented line (where prose resumes).
    ends = [
        end
        for end in range(1, len(lines) + 1)
        if lines[end - 1].strip() and (end == len(lines) or not lines[end][:1].isspace())
    ]
    best: _Found | None = None
    covered = -1
    attempts = 0
    for start in starts:
        if start < covered:
            continue
        for end in reversed([end for end in ends if end > start]):
            attempts += 1
            if attempts > _MAX_PARSE_ATTEMPTS:
                return best  # A huge reply of near-code: stop rather than parse for minutes.
            chunk = "\n".join(lines[start:end]) + "\n"
            module = _parses(dedent_code(chunk))
            if module is None or not _has_function(module):
                continue
            code = dedent_code(chunk)
            if defines(module, target_name):
                return _Found(code, True, range(start, end))
            best = best or _Found(code, False, range(start, end))
            covered = end
            break
    return best


def extract_code(reply: str, target_name: str) -> str:
    """The Python code of a model's reply, best candidate for `target_name` first."""
    text = normalize_newlines(strip_thinking(reply)).strip("\n")
    if not text.strip():
        raise NoCodeError("The reply is empty.")
    blocks = fenced_blocks(text)
    in_blocks = _from_blocks(blocks, target_name)
    if in_blocks is not None and in_blocks.defines_target:
        return in_blocks.code
    unfenced = _whole_reply(text, target_name) or _from_prose(text, target_name)
    # Blocks inside unfenced code that defines the target are examples in its docstring.
    if unfenced is not None and unfenced.defines_target and all(unfenced.holds(block) for block in blocks):
        return unfenced.code
    found = in_blocks or unfenced
    if found is not None:
        return found.code
    if blocks:
        raise NoCodeError(f"The reply's code is not valid Python: {_syntax_error(blocks[-1].code)}.")
    raise NoCodeError(f"The reply contains no Python code that defines {target_name}.")
