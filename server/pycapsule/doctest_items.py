"""Which docstrings of a module run as doctests, found once on the host with the one definition walker.

A whole module runs as doctest and pytest run it: the module's docstring, then every class, function and
method that is an attribute of the module at run time (the worker skips those that are not, e.g. a
function defined in a branch not taken). One named target runs whatever it is, a nested function too.
"""

from __future__ import annotations

import ast

from pycapsule.capsule import definitions, docstring_node, parse_module
from pycapsule.sandbox.api import MODULE_DOCSTRING, DoctestItem


def doctest_items(source: str, targets: tuple[str, ...] | None) -> tuple[DoctestItem, ...]:
    """The docstrings to run: every one (targets None) or those of `targets`, in source order.

    A target with no docstring gets an item with an empty docstring (reported as 0 examples); one that
    does not exist gets an item with that error. Raises CapsuleError on a syntax error."""
    module = parse_module(source)
    found: list[DoctestItem] = []
    if targets is None:
        module_doc = docstring_node(module)
        if module_doc is not None:
            found.append(_item(MODULE_DOCSTRING, module_doc, lookup=False))
    for definition in definitions(module):
        if targets is None:
            doc = docstring_node(definition.node)
            if doc is not None and not definition.in_function:
                found.append(_item(definition.qualname, doc, lookup=True))
        elif definition.qualname in targets and all(i.qualname != definition.qualname for i in found):
            doc = docstring_node(definition.node)
            found.append(_item(definition.qualname, doc, lookup=False) if doc is not None
                         else DoctestItem(definition.qualname, "", definition.node.lineno))
    if targets is not None and MODULE_DOCSTRING in targets and (doc := docstring_node(module)) is not None:
        found.insert(0, _item(MODULE_DOCSTRING, doc, lookup=False))
    for missing in sorted(set(targets or ()) - {item.qualname for item in found}):
        error = f"no function or class named {missing!r} in the module"
        found.append(DoctestItem(missing, "", 1, error=error))
    return tuple(found)


def qualnames(source: str) -> set[str]:
    """Every name `check FILE::NAME` accepts."""
    module = parse_module(source)
    return {d.qualname for d in definitions(module)} | {MODULE_DOCSTRING}


def _item(qualname: str, doc: ast.Expr, lookup: bool) -> DoctestItem:
    value = doc.value.value  # type: ignore[attr-defined]
    return DoctestItem(qualname, value, doc.lineno, lookup)
