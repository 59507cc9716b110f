"""`pycapsule bench DATASET`: a benchmark run, direct or self-debugging, resumable, with a report;
`pycapsule bench merge DIR... --out DIR` joins the folders of a run split with `--shard I/N`.

Usage errors and failures end in one sentence on stderr and a non-zero exit; results already
written are never lost (each task is appended as it finishes, and the report is rebuilt from them).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pycapsule.bench.datasets import load_tasks
from pycapsule.bench.datasets.files import sha256
from pycapsule.bench.identity import (
    embedded_size,
    first_attempt_settings,
    generation_settings,
    git_commit,
    model_identity,
    now,
    tasks_fingerprint,
    version,
)
from pycapsule.bench.merge import MergeError, merge_folders
from pycapsule.bench.progress import progress_reporter
from pycapsule.bench.records import (
    MODEL_THREADS_KEY,
    SANDBOX_LIBRARIES_KEY,
    SANDBOX_PYTHON_KEY,
    RunFiles,
    config_hash,
    read_manifest,
    read_records,
    with_model_threads,
    with_sandbox_libraries,
    write_manifest,
)
from pycapsule.bench.report import write_report
from pycapsule.bench.runner import BenchRunner, ModelUnavailable, default_workers, reusable_generations
from pycapsule.bench.shards import SHARDS_KEY, Shard, held_shards, parse_shard
from pycapsule.bench.summary import summarize
from pycapsule.bench.tasks import BenchTask, DatasetError
from pycapsule.commands import SUMMARIES
from pycapsule.commands.options import Subcommands, add_backend, add_model, add_model_timeouts, setting
from pycapsule.config import LoadedSettings, load_settings
from pycapsule.embedded_model.errors import EmbeddedModelError
from pycapsule.embedded_model.which import endpoint_description
from pycapsule.exit_codes import ExitCode
from pycapsule.model_client import ModelError
from pycapsule.sandbox.api import Sandbox, SandboxUnavailable

if TYPE_CHECKING:
    from pycapsule.engine import Engine

DEFAULT_OUT = "bench-results"
DATASETS = ("humaneval", "humaneval-et", "humaneval-plus", "mbpp", "mbpp-et", "bigcodebench", "realcode",
            "realcode-visible")
MERGE = "merge"
RUN_OPTIONS = ("data", "limit", "workers", "shard", "max_attempts", "model", "backend", "inactivity_timeout",
               "request_timeout")
"""The options of a run, which `merge` does not take (--mode has a default, so it cannot be told apart)."""


def _fail(message: str, code: int = ExitCode.USAGE) -> int:
    print(f"pycapsule bench: {message}", file=sys.stderr)
    return code


def _check_numbers(args: argparse.Namespace) -> str | None:
    for name in ("max_attempts", "limit", "workers"):
        value = getattr(args, name, None)
        if value is not None and value < 1:
            return f"--{name.replace('_', '-')} must be at least 1, not {value}"
    return None


def _settings(args: argparse.Namespace) -> LoadedSettings:
    overrides: dict[str, Any] = {
        "sandbox": args.backend,
        "max_attempts": 1 if args.mode == "direct" else args.max_attempts,
        "inactivity_timeout": getattr(args, "inactivity_timeout", None),
        "request_timeout": getattr(args, "request_timeout", None),
    }
    loaded = load_settings(Path.cwd(), overrides)
    size = embedded_size(args.model)
    if loaded.settings.uses_embedded_model and size is not None:
        overrides["embedded_model_size"] = size
    elif args.model is not None:
        overrides["model"] = args.model
    loaded = load_settings(Path.cwd(), overrides)
    for warning in loaded.warnings:
        print(f"pycapsule bench: {warning}", file=sys.stderr)
    print(f"pycapsule bench: model: {endpoint_description(loaded.settings)}", file=sys.stderr)
    return loaded


def _command(args: argparse.Namespace) -> str:
    """The command line that reproduces this run (from the parsed options, whoever parsed them)."""
    words = ["pycapsule", "bench", args.dataset, "--mode", args.mode]
    if args.mode == "selfdebug" and args.max_attempts is not None:
        words += ["--max-attempts", str(args.max_attempts)]
    for option in ("data", "limit", "workers", "model", "backend", "shard", "out"):
        value = getattr(args, option, None)
        if value is not None:
            words += [f"--{option}", value.label if isinstance(value, Shard) else str(value)]
    return shlex.join(words)


def _shard(text: str) -> Shard:
    try:
        return parse_shard(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def register(commands: Subcommands) -> None:
    bench = commands.add_parser("bench", help=SUMMARIES["bench"])
    bench.add_argument(
        "dataset",
        choices=[*DATASETS, MERGE],
        help="the benchmark to run: %(choices)s; `merge DIR... --out DIR` joins the folders of a run split "
             "with --shard (docs/bench.md#runs-across-machines)",
    )
    bench.add_argument("folders", nargs="*", metavar="DIR", help="merge only: the folders to join")
    bench.add_argument("--data", metavar="PATH", help="the dataset file (default: where it is known to be)")
    bench.add_argument("--mode", choices=["direct", "selfdebug"], default="selfdebug",
                       help="direct: one answer per task; selfdebug: the repair loop (default)")
    bench.add_argument("--max-attempts", type=setting("max_attempts"), metavar="N",
                       help="attempts per task in selfdebug mode (default: the max_attempts setting, 3)")
    bench.add_argument("--limit", type=int, metavar="N", help="only the first N tasks")
    bench.add_argument("--workers", type=int, metavar="N",
                       help="tasks at once, so requests at once to an endpoint (default: from the machine)")
    bench.add_argument("--shard", type=_shard, metavar="I/N",
                       help="only the tasks at positions I, I+N, I+2N... (after --limit), recorded under the "
                            "whole run's hash; join the shards' folders with `pycapsule bench merge`; auto/N "
                            "takes I from a Kubernetes Indexed Job or a Slurm job array")
    bench.add_argument("--out", metavar="DIR", help="where per-task results and the report go")
    add_model(bench)
    add_model_timeouts(bench)
    add_backend(bench)


def run(args: argparse.Namespace) -> int:
    if args.dataset == MERGE:
        return _merge(args)
    if args.folders:
        return _fail(f"unexpected {' '.join(args.folders)}: only `pycapsule bench merge` takes folders")
    if (problem := _check_numbers(args)) is not None:
        return _fail(problem)
    try:
        data_file, tasks = load_tasks(args.dataset, args.data)
        loaded = _settings(args)
        settings = loaded.settings
        model = model_identity(settings)
    except (DatasetError, EmbeddedModelError) as error:
        return _fail(str(error))
    prepared = tasks_fingerprint(tasks)  # of every task: --limit and --shard are not part of a run's identity
    shows_tests = settings.project_tests and any(t.project is not None and t.project.visible for t in tasks)
    if args.limit:
        tasks = tasks[: args.limit]
    total = len(tasks)
    scope = frozenset(task.task_id for task in tasks)
    if args.shard is not None:
        tasks = args.shard.select(tasks)
    generation = {"mode": args.mode, "model": model, **generation_settings(settings, args.mode)}
    if shows_tests:  # the loop runs the tests the tasks leave visible: not the generations of a run without
        generation["project_tests"] = "visible"
    config = {"dataset": args.dataset, "data_sha256": sha256(data_file), "tasks_sha256": prepared,
              "generation": generation}
    out = Path(args.out or DEFAULT_OUT)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        return _fail(f"cannot create the results folder {out}: {error.strerror or error}")
    files = RunFiles.of(out, args.dataset, args.mode, config)
    previous = read_manifest(files.manifest)
    manifest = previous or {"started": now(), "wall_seconds": 0.0}
    label = model["name"]
    if model["kind"] == "endpoint" and settings.model is None:
        label = manifest.get("model_label", label)  # the endpoint's default, learned on the first run
    manifest.update(
        {
            "config": config,
            "generation_hash": config_hash(generation),
            "first_attempt_hash": config_hash(first_attempt_settings(generation)),
            "command": _command(args),
            "model_label": label,
            "model_sha256": model.get("sha256"),
            "data_file": str(data_file),
            "total_tasks": total,
            "pycapsule": version(),
            "commit": git_commit(),
            "settings_file": str(loaded.pyproject) if loaded.pyproject else None,
        }
    )
    shards = held_shards(previous, args.shard)
    if shards is None:
        manifest.pop(SHARDS_KEY, None)
    else:
        manifest[SHARDS_KEY] = shards
    write_manifest(files.manifest, manifest)
    return _run(args, settings, tasks, scope, files, manifest, out)


def _merge(args: argparse.Namespace) -> int:
    given = [f"--{name.replace('_', '-')}" for name in RUN_OPTIONS if getattr(args, name, None) is not None]
    if given:
        return _fail(f"merge takes only folders and --out, not {', '.join(given)}")
    if not args.folders or args.out is None:
        return _fail("merge needs the folders to join and --out DIR: pycapsule bench merge DIR... --out DIR")
    out = Path(args.out)
    try:
        merged = merge_folders([Path(folder) for folder in args.folders], out)
    except MergeError as error:
        return _fail(str(error))
    except OSError as error:
        return _fail(f"cannot merge into {out}: {error.strerror or error}")
    report = write_report(out)
    for run in merged:
        held = f"shards {', '.join(run.shards)}" if run.shards else "the whole run"
        kept = (f"; {run.duplicates} tasks were in several folders, the first folder's record kept"
                if run.duplicates else "")
        print(f"{run.run}: {run.records}/{run.total_tasks} tasks ({held}){kept}")
    print(f"report: {report}")
    return 0


def _run(
    args: argparse.Namespace, settings: Any, tasks: list[BenchTask], scope: frozenset[str], files: RunFiles,
    manifest: dict[str, Any], out: Path,
) -> int:
    """Run `tasks`; the closing line counts the records of `scope` (the tasks within --limit) only."""
    from pycapsule.engine import Engine
    from pycapsule.history import History
    from pycapsule.interpreter import Interpreter

    began = time.monotonic()
    code = 0
    sandbox_name = manifest.get("sandbox")
    with (
        tempfile.TemporaryDirectory(prefix="pycapsule-bench-") as scratch,
        # the sandbox's Python is the `python` setting alone: no environment a shell happens to activate
        Engine(settings, history=History(Path(scratch) / "history.sqlite3"),
               interpreter=Interpreter(settings.python, "the bench's `python` setting")) as engine,
    ):
        try:
            sandbox = engine.sandbox()
            sandbox_name = sandbox.name
            _run_tasks(args, settings, engine, sandbox, tasks, files, manifest, out)
        except _STOPS as error:
            code = _stopped(error)
        finally:
            _write_session(manifest, files, engine, began, sandbox_name)
    _report(args, len(tasks), scope, files, manifest, out)
    return code


def _run_tasks(
    args: argparse.Namespace, settings: Any, engine: Engine, sandbox: Sandbox, tasks: list[BenchTask],
    files: RunFiles, manifest: dict[str, Any], out: Path,
) -> None:
    """Run in `sandbox` the tasks not recorded yet, each with a reused generation where the run has one."""
    runner = BenchRunner(
        tasks,
        files,
        sandbox,
        engine.generate,
        workers=args.workers or default_workers(tasks),
        reuse=reusable_generations(
            out, manifest["generation_hash"], files.results,
            manifest["first_attempt_hash"] if args.mode == "direct" else None),
    )
    pending = runner.pending()
    _note_libraries(runner, pending, manifest)
    fresh = [task for task in pending if task.prompt_key not in runner.reuse]
    _label_model(engine, runner, settings, manifest, generating=bool(fresh))
    if pending:
        print(
            f"pycapsule bench: {args.dataset} {args.mode}, "
            f"{len(pending)} of {len(tasks)} tasks to run "
            f"({len(pending) - len(fresh)} reusing generations) with {manifest['model_label']} "
            f"-> {files.results}",
            file=sys.stderr,
        )
    with progress_reporter(len(tasks), len(tasks) - len(pending)) as on_record:
        runner.run(on_record)
    if errors := runner.state.model_errors:
        print(f"pycapsule bench: {len(errors)} task(s) not recorded because the model failed them "
              f"({'; '.join(errors)}); rerun the same command to retry them", file=sys.stderr)


def _note_libraries(runner: BenchRunner, pending: list[BenchTask], manifest: dict[str, Any]) -> None:
    """The sandbox's Python and libraries into the manifest; a warning for the pending tasks that need
    libraries it lacks (recorded as unscorable, not sent to the model)."""
    if (libraries := runner.libraries()).python:
        manifest[SANDBOX_PYTHON_KEY] = libraries.python
        manifest[SANDBOX_LIBRARIES_KEY] = with_sandbox_libraries(manifest, libraries.installed)
    if missing := runner.missing_libraries():
        blocked = sum(1 for task in pending if set(task.libs) & set(missing))
        print(f"pycapsule bench: {blocked} tasks need libraries not installed where the sandbox runs "
              f"({', '.join(f'{lib} {count}' for lib, count in missing.items())}); "
              "they are recorded as unscorable, not sent to the model", file=sys.stderr)


def _label_model(engine: Engine, runner: BenchRunner, settings: Any, manifest: dict[str, Any],
                 generating: bool) -> None:
    """The manifest's model label: the model's own name when tasks need new generations (`generating`: the
    model is started here), else, for an endpoint's default model, the name its reused generations kept."""
    if generating:
        programmer = engine.programmer()  # start the model once, before the workers race to
        manifest["model_label"] = programmer.model_name()
        if threads := with_model_threads(manifest, engine.model_threads):
            manifest[MODEL_THREADS_KEY] = threads
    elif manifest["config"]["generation"]["model"]["kind"] == "endpoint" and settings.model is None:
        reused = [r.model_label for r in runner.reuse.values() if r.model_label]
        manifest["model_label"] = reused[0] if reused else manifest["model_label"]


_STOPS = (SandboxUnavailable, ModelError, EmbeddedModelError, ModelUnavailable, KeyboardInterrupt)
"""What ends a run early, its finished tasks kept (see `_stopped`)."""


def _stopped(error: BaseException) -> int:
    """The exit code of a run that one of `_STOPS` ended, once the reason is said on stderr."""
    if isinstance(error, SandboxUnavailable):
        return _fail(f"no sandbox to run code in: {error}", ExitCode.SANDBOX_UNAVAILABLE)
    if isinstance(error, (ModelError, EmbeddedModelError)):
        return _fail(str(error), ExitCode.MODEL_UNAVAILABLE)
    if isinstance(error, ModelUnavailable):
        return _fail(
            f"stopped: the model failed several tasks in a row (last: {error}); "
            "finished tasks are kept, rerun the same command to resume",
            ExitCode.MODEL_UNAVAILABLE,
        )
    print("pycapsule bench: interrupted; finished tasks are kept, rerun the same command to resume",
          file=sys.stderr)
    return ExitCode.INTERRUPTED


def _write_session(manifest: dict[str, Any], files: RunFiles, engine: Engine, began: float,
                   sandbox_name: str | None) -> None:
    """The manifest written however the session ended: its time added, its sandbox, the model's threads."""
    manifest["wall_seconds"] = round(float(manifest.get("wall_seconds", 0.0)) + time.monotonic() - began, 1)
    manifest["updated"] = now()
    manifest["sandbox"] = sandbox_name
    if threads := with_model_threads(manifest, engine.model_threads):  # a restarted model may differ
        manifest[MODEL_THREADS_KEY] = threads
    write_manifest(files.manifest, manifest)


def _report(args: argparse.Namespace, run_tasks: int, scope: frozenset[str], files: RunFiles,
            manifest: dict[str, Any], out: Path) -> None:
    """The report rebuilt from every record in `out`, and the closing line, which counts `scope`'s only."""
    report = write_report(out)
    records = read_records(files.results)
    summary = summarize(manifest, {task_id: r for task_id, r in records.items() if task_id in scope})
    shard = f" (shard {args.shard.label}: {run_tasks} tasks)" if args.shard is not None else ""
    beyond = len(records) - summary.done
    kept = f" ({beyond} more kept from a longer run)" if beyond else ""
    print(
        f"{summary.dataset} {summary.mode}: pass@1 {summary.pass_at_1:.1f}% "
        f"({summary.passed}/{summary.scored}"
        f"{', ' + str(summary.unscorable) + ' unscorable' if summary.unscorable else ''}), "
        f"{summary.done}/{summary.total_tasks} tasks done{shard}{kept}, "
        f"{summary.mean_model_calls:.2f} model calls/task; "
        f"report: {report}"
    )
