"""What the model's answers are made of: the share that is the body pycapsule keeps, against the signature
and docstring it repeats (thrown away: the user's are kept byte for byte) and everything else (imports,
helpers, example calls).

Reads published `pycapsule bench` runs (their manifests; the records they point to) of a HumanEval-family or
MBPP dataset, which it needs to know each task's function. Shares are of the characters of the code each
attempt's answer held; the tokens not spent on the body are estimated from each attempt's completion tokens
by that share, a lower bound (prose and fences around the code are not in the records).
"""

from __future__ import annotations

import argparse
import ast
import statistics
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from pycapsule.bench.datasets import load_tasks
from pycapsule.bench.records import read_manifest, read_records, results_of
from pycapsule.bench.tasks import DatasetError
from pycapsule.exit_codes import ExitCode

PARTS = ("body", "signature and docstring", "other code")


@dataclass(frozen=True)
class Answer:
    parts: Counter[str]
    """Characters of the answer's code, by part."""
    completion_tokens: int

    @property
    def body_share(self) -> float:
        total = sum(self.parts.values())
        return self.parts["body"] / total if total else 0.0


def split_answer(code: str, function: str) -> Counter[str]:
    """The characters of `code` by part: the body of top-level `function` (after its docstring), its
    decorators, header and docstring, and the rest. Code that does not parse or lacks the function is all
    "other code"."""
    parts: Counter[str] = Counter()
    try:
        module = ast.parse(code)
    except SyntaxError:
        parts["other code"] = len(code)
        return parts
    target = next((n for n in module.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                   and n.name == function), None)
    if target is None or target.end_lineno is None:
        parts["other code"] = len(code)
        return parts
    lines = code.splitlines(keepends=True)
    first = min([target.lineno, *(d.lineno for d in target.decorator_list)]) - 1
    statements = target.body
    if (statements and isinstance(statements[0], ast.Expr) and isinstance(statements[0].value, ast.Constant)
            and isinstance(statements[0].value.value, str)):
        body_start = statements[0].end_lineno or target.lineno
    else:
        body_start = statements[0].lineno - 1 if statements else target.end_lineno
    parts["signature and docstring"] = sum(len(line) for line in lines[first:body_start])
    parts["body"] = sum(len(line) for line in lines[body_start:target.end_lineno])
    parts["other code"] = len(code) - parts["signature and docstring"] - parts["body"]
    return parts


def answers_of(manifest_path: Path) -> tuple[str, list[Answer]]:
    """The run's label and every attempt's answer; raises ValueError (one sentence) when it cannot."""
    manifest = read_manifest(manifest_path)
    if manifest is None:
        raise ValueError(f"{manifest_path} is not a bench manifest")
    dataset = manifest.get("config", {}).get("dataset", "")
    try:
        _, tasks = load_tasks(dataset)
    except DatasetError as error:
        raise ValueError(f"{manifest_path}: {error}") from None
    functions = {task.task_id: task.entry_point for task in tasks}
    answers = []
    for record in read_records(results_of(manifest_path, manifest)).values():
        function = functions.get(record.task_id)
        if function is None:
            continue
        for index, code in enumerate(record.codes or []):
            tokens = record.attempt_tokens[index][1] if index < len(record.attempt_tokens or []) else 0
            answers.append(Answer(split_answer(code or "", function), int(tokens)))
    mode = manifest.get("config", {}).get("generation", {}).get("mode", "")
    return f"{manifest.get('model_label', '?')} {dataset} {mode}", answers


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("manifests", nargs="+", type=Path, metavar="MANIFEST",
                        help="a published run's manifest (docs/results/.../humaneval-selfdebug-HASH.json)")


def run(args: argparse.Namespace) -> int:
    print("| run | answers | body | signature and docstring | other code | median body share "
          "| completion tokens / answer | not body (est.) |")
    print("|---|---|---|---|---|---|---|---|")
    for path in args.manifests:
        try:
            label, answers = answers_of(path)
        except ValueError as error:
            print(f"measurements answers: {error}", file=sys.stderr)
            return ExitCode.FAILED
        if not answers:
            print(f"measurements answers: {path} has no answers to read", file=sys.stderr)
            return ExitCode.FAILED
        total: Counter[str] = Counter()
        for answer in answers:
            total.update(answer.parts)
        chars = sum(total.values()) or 1
        shares = " | ".join(f"{100 * total[part] / chars:.0f} %" for part in PARTS)
        tokens = sum(a.completion_tokens for a in answers) / len(answers)
        wasted = sum(a.completion_tokens * (1 - a.body_share) for a in answers) / len(answers)
        median = statistics.median(a.body_share for a in answers)
        print(f"| {label} | {len(answers)} | {shares} | {100 * median:.0f} % | {tokens:.0f} | {wasted:.0f} |")
    return ExitCode.OK
