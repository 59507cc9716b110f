"""Per-job latency of a trivial doctest, cold (a new sandbox per job, i.e. one container run per job for
Docker) and warm (the pre-forked worker), per backend, all in one process.

For Docker, one plain `docker run` per job (same image and settings, no worker) is the baseline too.
Warm is measured twice: back to back, where each job also waits for the previous job's clean-up and
the next pre-fork, and with a pause between jobs, where those happen off the critical path as they do
in an editor. Both are printed. With `--project DIR`, warm back-to-back jobs also run with DIR as their
project root (shown read-only, its top-level entries copied or linked into each job's folder), as an editor's
jobs run: the ratio to plain warm jobs is that set-up's cost."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from pycapsule.exit_codes import ExitCode
from pycapsule.sandbox.api import Job, RunResult, SandboxUnavailable
from pycapsule.sandbox.select import open_sandbox

from measurements.timing import figures, timed

TRIVIAL = '''
def one():
    """
    >>> one()
    1
    """
    return 1
'''
WARM_TARGET_MS = 10.0
RATIO_TARGET = 20.0
COLD_JOBS_MAX = 20
PACE_SECONDS = 0.05


class BenchFailure(Exception):
    pass


def job(project: Path | None = None) -> Job:
    return Job(source=TRIVIAL, doctest_targets=("one",), timeout=30, project_root=project)


def check_passed(name: str, result: RunResult) -> None:
    if not result.passed:
        raise BenchFailure(f"{name}: the trivial doctest did not pass ({result.status}: {result.detail})")


def warm_samples(name: str, count: int, project: Path | None = None,
                 paced: bool = True) -> tuple[list[float], list[float]]:
    """(back-to-back, paced) latencies on one warm sandbox; no paced ones unless `paced`."""
    sandbox = open_sandbox(name, project)
    try:
        def once() -> None:
            check_passed(name, sandbox.run(job(project)))

        once()  # the first job after start pays for page faults the others do not
        return timed(count, once), timed(count, once, gap=PACE_SECONDS) if paced else []
    finally:
        sandbox.close()


def cold_samples(name: str, count: int) -> list[float]:
    def once() -> None:
        sandbox = open_sandbox(name)
        try:
            result = sandbox.run(job())
        finally:
            sandbox.close()
        check_passed(name, result)

    return timed(count, once)


DOCKER_RUN_SCRIPT = """
import doctest, types
module = types.ModuleType("m")
exec(SOURCE, module.__dict__)
outcome = doctest.testmod(module)
print("ok" if outcome.attempted == 1 and outcome.failed == 0 else "failed")
"""


def docker_run_samples(count: int) -> list[float]:
    """One plain `docker run` per job (same image, same hardened settings, no worker): the baseline."""
    from pycapsule.sandbox.docker import DockerSandbox

    sandbox = DockerSandbox()
    try:
        settings = sandbox.container_settings(None)
        settings.update(command=["python3", "-c", f"SOURCE = {TRIVIAL!r}\n{DOCKER_RUN_SCRIPT}"],
                        stdin_open=False, auto_remove=False)

        def once() -> None:
            output = sandbox.client.containers.run(sandbox.image, remove=True, **settings)
            if output.strip() != b"ok":
                raise BenchFailure(f"docker run: the trivial doctest did not pass ({output[-200:]!r})")

        return timed(count, once)
    finally:
        sandbox.close()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", action="append", metavar="NAME",
                        help="a backend to measure; repeat for several (default: bwrap and docker)")
    parser.add_argument("--jobs", type=int, default=50, metavar="N",
                        help="jobs per backend and mode (default 50)")
    parser.add_argument("--project", type=Path, metavar="DIR",
                        help="also time warm jobs with DIR as their project root, as an editor's jobs run")


def run(args: argparse.Namespace) -> int:
    if args.jobs < 1:
        print("measurements sandbox: --jobs must be at least 1", file=sys.stderr)
        return ExitCode.USAGE
    if args.project is not None and not args.project.is_dir():
        print(f"measurements sandbox: --project {args.project} is not a folder", file=sys.stderr)
        return ExitCode.USAGE
    return run_bench(args.backend or ["bwrap", "docker"], args.jobs, project=args.project)


def run_bench(backends: Sequence[str], jobs: int, say: Callable[[str], None] = print,
              project: Path | None = None) -> int:
    cold_jobs = max(3, min(jobs, COLD_JOBS_MAX))
    say(f"a trivial doctest per job. warm: {jobs} jobs on one pre-forked worker, back to back; "
        f"warm+gap: {jobs} more with {PACE_SECONDS * 1000:.0f} ms between jobs (as edits and saves come), "
        f"not counted; cold: {cold_jobs} jobs, a new sandbox each (started, used once, removed)")
    say(f"{'backend':18} {'mode':10} {'jobs':>5} {'median ms':>10} {'p90 ms':>9} {'cold/this':>10}")
    measured = 0
    for name in backends:
        try:
            back_to_back, paced = warm_samples(name, jobs)
            with_project = warm_samples(name, jobs, project, paced=False)[0] if project is not None else None
            cold = cold_samples(name, cold_jobs)
        except (SandboxUnavailable, BenchFailure) as error:
            say(f"{name:18} skipped: {error}")
            continue
        measured += 1
        rows = [("warm", back_to_back), ("warm+gap", paced), ("cold", cold)]
        if with_project is not None:
            rows.insert(2, ("warm+proj", with_project))
        if name == "docker":
            try:
                rows.append(("docker run", docker_run_samples(cold_jobs)))
            except (SandboxUnavailable, BenchFailure) as error:
                say(f"{name:18} docker run baseline skipped: {error}")
        cold_ms = figures(cold).median_ms
        for mode, samples in rows:
            summed = figures(samples)
            say(f"{name:18} {mode:10} {len(samples):>5} {summed.median_ms:>10.2f} "
                f"{summed.percentile_ms:>9.2f} {cold_ms / summed.median_ms:>9.1f}x")
        baseline_name, baseline = rows[-1] if rows[-1][0] == "docker run" else ("cold", cold)
        for mode, samples in (("warm", back_to_back), ("warm+gap", paced)):
            median_ms = figures(samples).median_ms
            ratio = figures(baseline).median_ms / median_ms
            verdict = "meets" if median_ms <= WARM_TARGET_MS and ratio >= RATIO_TARGET else "misses"
            say(f"{name:18} {mode}: {ratio:.1f}x faster than {baseline_name}; {verdict} the target "
                f"(median <= {WARM_TARGET_MS:.0f} ms and >= {RATIO_TARGET:.0f}x faster)")
        if with_project is not None:
            cost = figures(with_project).median_ms / figures(back_to_back).median_ms
            say(f"{name:18} warm+proj: {cost:.2f}x the time of warm (project {project})")
    return 0 if measured else 1
