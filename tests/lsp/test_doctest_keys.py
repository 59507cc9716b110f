"""A function's cached doctest result is reused only while nothing it depends on changed."""

from pycapsule.lsp.doctest_keys import ModuleKeys

MODULE = '''import math

LIMIT = 3


def helper(x):
    return x + 1


def uses_helper(x):
    """>>> uses_helper(1)
    2
    """
    return helper(x)


def alone(x):
    return x
'''


def keys(source: str) -> dict[str, str]:
    module = ModuleKeys(source)
    lines = source.splitlines()
    def_line = {
        name: next(i + 1 for i, line in enumerate(lines) if line.startswith(f"def {name}("))
        for name in ("helper", "uses_helper", "alone")
    }
    return {name: module.key(name, line) for name, line in def_line.items()}


def test_same_text_same_keys():
    assert keys(MODULE) == keys(MODULE)


def test_changing_a_helper_changes_its_callers_keys_only():
    before, after = keys(MODULE), keys(MODULE.replace("x + 1", "x + 2"))
    assert before["uses_helper"] != after["uses_helper"]
    assert before["helper"] != after["helper"]
    assert before["alone"] == after["alone"]


def test_changing_top_level_code_changes_every_key():
    before, after = keys(MODULE), keys(MODULE.replace("LIMIT = 3", "LIMIT = 4"))
    assert all(before[name] != after[name] for name in before)


def test_moving_a_function_keeps_its_key():
    moved = MODULE.replace("import math\n", "import math\n\n\n\n")
    assert keys(MODULE) == keys(moved)
