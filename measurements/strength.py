"""The mutation check of a passing body (`pycapsule.strength`): its time per body, and how many mutants.

Bodies: those the published HumanEval self-debugging run of the default model called passed (its records,
in data/records: each holds the module that was scored), bodies of up to `--max-lines` lines. Each
body's strength is measured against its examples in the warm sandbox, as the loop measures it, with the
lines its examples ran (so changes on lines nothing runs survive without a run).

Baseline, in the same process and interleaved: one run of the same body's examples in the same sandbox (what
the loop does anyway before the check). The report gives medians and p95 of both, the ratio, mutants per
body, and how many bodies were capped; the issue's targets: p50 <= 1 s, p95 <= 3 s on 2 cores.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from pathlib import Path

from pycapsule.capsule import Capsule, CapsuleError, read_capsules
from pycapsule.commands.options import add_backend
from pycapsule.executor import execute
from pycapsule.exit_codes import ExitCode
from pycapsule.sandbox.api import SandboxUnavailable
from pycapsule.sandbox.select import open_sandbox
from pycapsule.strength.check import measure_strength
from pycapsule.tests_job import body_lines

from measurements.timing import figures, percentile

RECORDS = (Path(__file__).resolve().parents[1] / "data" / "records" / "prompt-cache" / "qwen2.5-coder-1.5b"
           / "humaneval-selfdebug-9f6f74ce83.jsonl.gz")
TARGET_P50, TARGET_P95 = 1.0, 3.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bodies", type=int, default=40, help="bodies to measure (default 40)")
    parser.add_argument("--max-lines", type=int, default=40, help="longest body, in lines (default 40)")
    parser.add_argument("--records", type=Path, default=RECORDS, help="a published run's records (.jsonl.gz)")
    add_backend(parser)


def passed_bodies(records: Path, count: int, max_lines: int) -> list[tuple[str, Capsule]]:
    """(task id, capsule) of the first `count` bodies the run called passed: the module it scored, and in it
    the function with the most examples (HumanEval's target)."""
    found = []
    with gzip.open(records, "rt", encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            if record.get("outcome") != "passed" or not record.get("final_code"):
                continue
            try:
                capsules = [c for c in read_capsules(record["final_code"]) if c.verified_by_doctests]
            except CapsuleError:
                continue
            if not capsules:
                continue
            capsule = max(capsules, key=lambda c: len(c.examples))
            if 0 < len(body_lines(capsule.module_source, capsule.qualname)) <= max_lines:
                found.append((record["task_id"], capsule))
            if len(found) == count:
                break
    return found


def run(args: argparse.Namespace) -> int:
    if not args.records.exists():
        print(f"measurements strength: no records at {args.records}", file=sys.stderr)
        return ExitCode.USAGE
    bodies = passed_bodies(args.records, args.bodies, args.max_lines)
    try:
        sandbox = open_sandbox(args.backend)
    except SandboxUnavailable as error:
        print(f"measurements strength: {error}", file=sys.stderr)
        return ExitCode.SANDBOX_UNAVAILABLE
    checks, baselines, mutants, shares, capped = [], [], [], [], 0
    try:
        for task_id, capsule in bodies:
            source = capsule.module_source
            began = time.perf_counter()
            verdict = execute(sandbox, capsule, source, 10.0, trace_lines=True)
            baselines.append(time.perf_counter() - began)
            if not verdict.passed:
                print(f"  {task_id}: its examples do not pass here ({verdict.headline}); left out",
                      file=sys.stderr)
                baselines.pop()
                continue
            began = time.perf_counter()
            strength, _ = measure_strength(sandbox, capsule, source, examples=True, tests=None,
                                           lines_run=frozenset(verdict.result.lines_run),
                                           body_seconds=verdict.result.duration, job_timeout=10.0, root=None)
            checks.append(time.perf_counter() - began)
            mutants.append(strength.run)
            shares.append(strength.share)
            capped += strength.capped
    finally:
        sandbox.close()
    if not checks:
        print("measurements strength: no body to measure", file=sys.stderr)
        return 1
    check, base = figures(checks, 0.95), figures(baselines, 0.95)
    print(f"measurements strength: {len(checks)} passing bodies of {args.records.name} (<= {args.max_lines} "
          f"lines), warm '{sandbox.name}' sandbox, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    for label, timing in (("mutation check per body", check), ("baseline: the examples run once", base)):
        print(f"  {label:40} median {timing.median_ms:8.1f} ms   p95 {timing.percentile_ms:8.1f} ms")
    print(f"  {'ratio check / baseline (medians)':40} {check.median_ms / base.median_ms:8.1f}x")
    print(f"  mutants judged per body: median {sorted(mutants)[len(mutants) // 2]}, p90 "
          f"{percentile(mutants, 0.9)}, max {max(mutants)}; capped: {capped} of {len(checks)}")
    print(f"  caught share: median {sorted(shares)[len(shares) // 2]:.2f}; at least 0.8: "
          f"{sum(share >= 0.8 for share in shares)} of {len(shares)}")
    met = check.median_ms <= TARGET_P50 * 1000 and check.percentile_ms <= TARGET_P95 * 1000
    print(f"  target: p50 <= {TARGET_P50:.0f} s and p95 <= {TARGET_P95:.0f} s per body: "
          f"{'met' if met else 'NOT met'}")
    return 0
