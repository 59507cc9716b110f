"""Capsule reading and splicing on a large module, as ratios to ast.parse of the same text.

Each round times ast.parse first and then every operation, so the ratios share the machine's load.
"""

from __future__ import annotations

import argparse
import ast
import statistics
import sys
import time
from collections.abc import Callable

from pycapsule.capsule import capsule_at, capsule_by_qualname, read_capsules
from pycapsule.context import module_context
from pycapsule.debugging.example_calls import strip_example_calls
from pycapsule.debugging.extraction import extract_code
from pycapsule.debugging.signature import splice
from pycapsule.exit_codes import ExitCode


def make_module(lines: int, functions: int) -> str:
    per_function = max(lines // functions - 8, 1)
    parts = ["import math\n\n"]
    for index in range(functions):
        body = "".join(f"    x{j} = a + b * {j}\n" for j in range(per_function))
        parts.append(
            f'\n\ndef f{index}(a, b):\n    """Function {index}.\n\n    >>> f{index}(1, 2)\n    3\n    """\n'
            f"{body}    return a + b\n"
        )
    return "".join(parts)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lines", type=int, default=3000, metavar="N",
                        help="length of the generated module (default 3000)")
    parser.add_argument("--functions", type=int, default=50, metavar="N",
                        help="doctest functions in it (default 50)")
    parser.add_argument("--rounds", type=int, default=20, metavar="N",
                        help="rounds, each timing ast.parse and then every operation (default 20)")


def run(args: argparse.Namespace) -> int:
    if args.functions < 1 or args.rounds < 1:
        print("measurements capsule: --functions and --rounds must be at least 1", file=sys.stderr)
        return ExitCode.USAGE
    source = make_module(args.lines, args.functions)
    middle = f"f{args.functions // 2}"
    capsule = capsule_by_qualname(source, middle)
    reply = (
        f"Sure:\n```python\nimport math\n\ndef {middle}(a, b):\n    return math.floor(a) + b\n```\n"
        f"print({middle}(1, 2))\n"
    )
    line0 = source[: capsule.body_start].count("\n")

    def clean(text: str) -> str:
        return strip_example_calls(extract_code(text, middle), middle)

    operations: dict[str, Callable[[], object]] = {
        "read_capsules (all functions)": lambda: read_capsules(source),
        "capsule_at (code action)": lambda: capsule_at(source, line0, 4),
        "extract_code + strip_example_calls": lambda: clean(reply),
        "splice": lambda: splice(capsule, clean(reply)),
        "module_context": lambda: module_context(capsule),
    }
    baseline: list[float] = []
    ratios: dict[str, list[float]] = {name: [] for name in operations}
    for _ in range(args.rounds):
        started = time.perf_counter()
        ast.parse(source)
        base = time.perf_counter() - started
        baseline.append(base)
        for name, operation in operations.items():
            started = time.perf_counter()
            operation()
            ratios[name].append((time.perf_counter() - started) / base)
    lines = source.count("\n")
    print(f"module: {lines} lines, {args.functions} functions; {args.rounds} rounds")
    print(f"baseline ast.parse: median {statistics.median(baseline) * 1000:.1f} ms")
    for name, values in ratios.items():
        median = statistics.median(values)
        milliseconds = median * statistics.median(baseline) * 1000
        print(f"{name:38s} median {median:5.2f}x ast.parse (~{milliseconds:.1f} ms)")
    return 0
