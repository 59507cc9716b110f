"""Does the module context hold what a real body uses? No model is asked.

For each function of the given files (methods included, nested functions not): stub its body, build
the prompt's module context, and check that every name the library's own body uses from its module (a
module-level name; for a method, a member of its class that the body reads through `self`) appears in
the context. Prints how many functions using such names got all of them, and the context's size.

A name counts as shown when the context mentions it anywhere (a neighbour's excerpt calling it is
enough). The stricter second count asks for its definition: the first line of its assignment, its
`def`/`class` line, its import; for a member, its `def`, its assignment or the `# sets` note.

Usage: PYTHONPATH=server BUDGET=4000 python3 docs/results/module-context/recall.py OUT.json FILE.py...
"""

from __future__ import annotations

import ast
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

from pycapsule.capsule import Capsule, CapsuleError, capsule_by_qualname, read_capsules
from pycapsule.context import module_context
from pycapsule.debugging.dependencies import module_bindings

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def _first_line(node: ast.stmt) -> int:
    return min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])


def class_path(module: ast.Module, names: tuple[str, ...]) -> ast.ClassDef | None:
    """(Here too, so the script also measures a checkout that does not have this function.)"""
    scope, found = module.body, None
    for name in names:
        found = next((s for s in scope if isinstance(s, ast.ClassDef) and s.name == name), None)
        if found is None:
            return None
        scope = found.body
    return found


def _class_members(owner: ast.ClassDef) -> set[str]:
    members = {name for item in owner.body for name in _bound(item)}
    for node in ast.walk(owner):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                and isinstance(node.value, ast.Name) and node.value.id == "self":
            members.add(node.attr)
    return members


def _bound(item: ast.stmt) -> list[str]:
    if isinstance(item, _Function | ast.ClassDef):
        return [item.name]
    targets = item.targets if isinstance(item, ast.Assign) else [item.target] \
        if isinstance(item, ast.AnnAssign) else []
    return [target.id for target in targets if isinstance(target, ast.Name)]


def used_names(capsule: Capsule) -> set[str]:
    """Module names the function's own body reads; 'self.x' for members of its class."""
    tree = ast.parse(capsule.module_source)
    function = next((node for node in ast.walk(tree) if isinstance(node, _Function)
                     and node.name == capsule.name and _first_line(node) == capsule.def_line), None)
    if function is None:
        return set()
    body = ast.Module(body=function.body, type_ignores=[])
    bindings = module_bindings(tree) - {capsule.qualname.split(".")[0]}
    names = {node.id for node in ast.walk(body) if isinstance(node, ast.Name) and node.id in bindings}
    owner = class_path(tree, capsule.class_names) if capsule.class_names else None
    receiver = (function.args.posonlyargs + function.args.args)[:1]
    if owner is not None and receiver:
        members = _class_members(owner) - {capsule.name}
        names |= {f"self.{node.attr}" for node in ast.walk(body)
                  if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load)
                  and isinstance(node.value, ast.Name) and node.value.id == receiver[0].arg
                  and node.attr in members}
    return names


def missing_from(context: str, names: set[str]) -> list[str]:
    missing = []
    for name in sorted(names):
        bare = name.removeprefix("self.")
        pattern = rf"\b{re.escape(bare)}\b" if name.startswith("self.") else rf"(?<![\w.]){re.escape(bare)}\b"
        if not re.search(pattern, context):
            missing.append(name)
    return missing


def binding_lines(source: str) -> dict[str, list[str]]:
    """For each module-level name, the first line of each statement binding it ('' for an import)."""
    found: dict[str, list[str]] = {}
    pending: list[ast.stmt] = list(ast.parse(source).body)
    while pending:
        statement = pending.pop()
        if isinstance(statement, _Function | ast.ClassDef):
            keyword = "class" if isinstance(statement, ast.ClassDef) else "def"
            found.setdefault(statement.name, []).append(f"{keyword} {statement.name}")
            continue
        if isinstance(statement, ast.Import | ast.ImportFrom):
            for alias in statement.names:
                found.setdefault((alias.asname or alias.name).split(".")[0], []).append("")
            continue
        if isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            line = ast.get_source_segment(source, statement) or ""
            for target in targets:
                for node in ast.walk(target):
                    if isinstance(node, ast.Name):
                        found.setdefault(node.id, []).append(line.split("\n", 1)[0])
        for field in ("body", "orelse", "finalbody"):
            pending.extend(getattr(statement, field, None) or [])
        for handler in getattr(statement, "handlers", None) or []:
            pending.extend(handler.body)
    return found


def undefined_in(context: str, names: set[str], bindings: dict[str, list[str]]) -> list[str]:
    """The names whose definition the context does not show (a mention is not enough)."""
    undefined = []
    for name in sorted(names):
        if name.startswith("self."):
            bare = re.escape(name.removeprefix("self."))
            patterns = [rf"\bdef {bare}\(", rf"\bself\.{bare}\s*(?:=|:)", rf"# sets [^\n]*\bself\.{bare}\b",
                        rf"(?m)^\s+{bare}\s*(?::|=)"]
        else:
            lines = bindings.get(name, [])
            if "" in lines:  # an import: the import block shows it
                patterns = [rf"(?<![\w.]){re.escape(name)}\b"]
            else:
                patterns = [rf"(?m)^(?:async )?{re.escape(line)}\b" if line.startswith(("def ", "class "))
                            else rf"(?m)^{re.escape(line)}" for line in lines if line]
        if not any(re.search(pattern, context) for pattern in patterns):
            undefined.append(name)
    return undefined


def stubbed(capsule: Capsule) -> str:
    source = capsule.module_source
    return source[: capsule.body_start] + capsule.indent + "...\n" + source[capsule.body_end :]


def measure(files: list[str], budget: int) -> list[dict]:
    records = []
    for file in files:
        path = Path(file)
        try:
            capsules = read_capsules(path.read_text(encoding="utf-8"), path)
        except (OSError, CapsuleError) as error:
            print(f"skipped {file}: {error}", file=sys.stderr)
            continue
        bindings = binding_lines(path.read_text(encoding="utf-8"))
        for capsule in capsules:
            if capsule.is_stub or capsule.inline_body or "<" in capsule.qualname \
                    or capsule.qualname.count(".") > 1:
                continue
            stub = capsule_by_qualname(stubbed(capsule), capsule.qualname, path)
            started = time.perf_counter()
            context = module_context(stub, budget)
            seconds = time.perf_counter() - started
            used = used_names(capsule)
            records.append({"file": file, "qualname": capsule.qualname, "used": sorted(used),
                            "missing": missing_from(context, used),
                            "undefined": undefined_in(context, used, bindings), "chars": len(context),
                            "seconds": seconds})
    return records


def main() -> None:
    records = measure(sys.argv[2:], int(os.environ.get("BUDGET", "4000")))
    Path(sys.argv[1]).write_text(json.dumps(records, indent=1))
    users = [r for r in records if r["used"]]
    found = sum(len(r["used"]) - len(r["missing"]) for r in users)
    print(f"{len(records)} functions, {len(users)} use module names, all of them in the context: "
          f"{sum(not r['missing'] for r in users)}; names found {found}/{sum(len(r['used']) for r in users)}")
    defined = sum(len(r["used"]) - len(r["undefined"]) for r in users)
    print(f"definitions shown: all of them for {sum(not r['undefined'] for r in users)}; "
          f"names {defined}/{sum(len(r['used']) for r in users)}")
    chars = [r["chars"] for r in records]
    seconds = [r["seconds"] for r in records]
    print(f"context characters median {statistics.median(chars):.0f}, max {max(chars)}; "
          f"seconds median {statistics.median(seconds):.3f}, max {max(seconds):.2f}")


if __name__ == "__main__":
    main()
