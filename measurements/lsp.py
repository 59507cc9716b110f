"""Measure the language server from the outside, the way an editor sees it: a real pygls client
talks to `pycapsule serve` over stdio.

- code-action and hover latency on a generated module of N lines (hover on functions that have
  attempt history, so the history store is read), medians and p95, against the round trip of a
  do-nothing command (`pycapsule.cancel` with no run) measured in the same session;
- a no-op and a hover sent right behind a run's start (issue 47); the no-op against the same no-op sent
  alone a moment before each start, the hover against its p95 target (both are sent alone first, so each
  start finds the server in the same state);
- save -> diagnostics for a module of F doctest functions (one failing example each): cold (every
  function's key changed), cached (saved again unchanged) and one function changed, against a
  direct `Engine.check` of the same module in this process.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types
from pycapsule.commands.options import add_backend
from pycapsule.exit_codes import ExitCode

from measurements.lsp_client import EditorSession
from measurements.timing import figures, timed_async

SAMPLES = 200
SAVES = 5
STARTS = 100
"""Run starts measured, for each request sent behind one."""


@dataclass(frozen=True)
class Paired:
    """Seconds one request took alone and then right behind a run's start, a moment apart; and the start
    command's own answer (the run's id, which the editor waits for)."""

    alone: float
    behind: float
    start: float


def latency_module(lines: int) -> str:
    """About `lines` lines: doctest functions, every third one a stub, one failing (so the first
    diagnostics are published and the benchmark knows the server has finished checking)."""
    parts = [
        'import math\n\nLIMIT = 10\n\n\ndef wrong():\n    """>>> wrong()\n    1\n    """\n    return 2\n'
    ]
    index = 0
    while sum(part.count("\n") for part in parts) < lines:
        body = (
            "    ...\n"
            if index % 3 == 0
            else "".join(f"    y = y * 2 + {k}\n" for k in range(8)) + "    return y\n"
        )
        prelude = "" if index % 3 == 0 else "    y = x\n"
        parts.append(
            f'\n\ndef f_{index:04d}(x):\n    """Step {index}.\n\n    >>> f_{index:04d}(1) >= 0\n    True\n'
            f'    """\n{prelude}{body}'
        )
        index += 1
    return "".join(parts)


def diagnostics_module(functions: int, salt: int) -> str:
    """`functions` doctest functions, each with one passing and one failing example."""
    parts = [f"SALT = {salt}\n"]
    for index in range(functions):
        parts.append(
            f'\n\ndef g_{index:03d}(x):\n    """Add {index}.\n\n    >>> g_{index:03d}(0)\n    {index}\n'
            f'    >>> g_{index:03d}(1)\n    0\n    """\n    return x + {index}\n'
        )
    return "".join(parts)


def _seed_history(history_path: Path, module: Path, names: list[str]) -> None:
    from pycapsule.history import AttemptRecord, History, function_path

    history = History(history_path)
    now = time.time()
    for name in names:
        for attempt, verdict in ((1, "failed"), (2, "passed")):
            history.record(
                AttemptRecord(
                    function_path(module),
                    name,
                    "bench",
                    attempt,
                    "generate",
                    verdict,
                    "",
                    "Failed example: x\nExpected: 1\nGot: 2",
                    "bench-model",
                    100,
                    50,
                    0.5,
                    0.01,
                    now + attempt,
                )
            )
    history.close()


def _direct_check(text: str, path: Path, backend: str | None) -> float:
    from pycapsule.config import load_settings
    from pycapsule.engine import Engine

    settings = load_settings(None, {"sandbox": backend} if backend else {}).settings
    with Engine(settings, project_root=path.parent) as engine:
        engine.check(text, path, None)  # warm the sandbox, as the server's is after its first file
        times = []
        for _ in range(SAVES):
            started = time.perf_counter()
            engine.check(text, path, None)
            times.append(time.perf_counter() - started)
    return statistics.median(times)


async def measure(lines: int, functions: int, backend: str | None = None) -> dict[str, Any]:
    from pycapsule.lsp.diagnostics import DEBOUNCE_SECONDS

    with tempfile.TemporaryDirectory(prefix="measurements-lsp-") as folder:
        root = Path(folder)
        big, checked = root / "big.py", root / "checked.py"
        big_text = latency_module(lines)
        big.write_text(big_text, encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYCAPSULE_")}
        env["PYCAPSULE_HISTORY"] = str(root / "history.sqlite3")
        # Runs are started, never answered: a model that cannot be reached ends them at once.
        env.update(OPENAI_BASE_URL="http://127.0.0.1:9/v1", OPENAI_API_KEY="unused")
        names = [f"f_{i:04d}" for i in range(big_text.count("\ndef f_"))]
        _seed_history(root / "history.sqlite3", big, names)
        session = EditorSession()
        await session.start(root, env, {"modelRetries": 0, **({"sandbox": backend} if backend else {})})
        try:
            uri = session.open(big, big_text)
            await session.diagnostics_published(
                uri
            )  # let its first doctest run finish: measure a quiet server
            text_lines = big_text.splitlines()
            def_lines = [i for i, line in enumerate(text_lines) if line.startswith("def f_")]
            rng = random.Random(7)
            document = types.TextDocumentIdentifier(uri=uri)

            def code_action(_: int) -> Awaitable[Any]:
                line = rng.randrange(len(text_lines))
                position = types.Position(line=line, character=4)
                return session.client.text_document_code_action_async(
                    types.CodeActionParams(
                        text_document=document,
                        range=types.Range(start=position, end=position),
                        context=types.CodeActionContext(diagnostics=[]),
                    )
                )

            def hover(_: int) -> Awaitable[Any]:
                position = types.Position(line=rng.choice(def_lines), character=6)
                return session.client.text_document_hover_async(
                    types.HoverParams(text_document=document, position=position)
                )

            def round_trip(_: int) -> Awaitable[Any]:
                return session.client.workspace_execute_command_async(
                    types.ExecuteCommandParams(command="pycapsule.cancel", arguments=[])
                )

            version = 1

            def edit_then_code_action(number: int) -> Awaitable[Any]:
                # Untimed: the edit is a notification the server handles before the request.
                nonlocal version
                version += 1
                session.client.text_document_did_change(
                    types.DidChangeTextDocumentParams(
                        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                        content_changes=[
                            types.TextDocumentContentChangeWholeDocument(text=big_text + f"# edit {number}\n")
                        ],
                    )
                )
                return code_action(number)

            stub_lines = [i for i in def_lines if text_lines[i + 6].strip() == "..."]

            async def behind_a_run_start(number: int, request: Callable[[int], Awaitable[Any]]) -> Paired:
                # A real start (a stub, the engine then fails at the unreachable model): the request sent
                # right behind it must not wait for the start's module-sized work (parsing the just-edited
                # file, building the capsule and context, the import check). The same request is first
                # timed alone at the same moment (the edit handled, the last run ended): the control.
                nonlocal version
                version += 1
                edited = big_text + f"# start {number}\n"
                session.client.text_document_did_change(
                    types.DidChangeTextDocumentParams(
                        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                        content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited)],
                    )
                )
                await round_trip(number)  # the edit is handled: only the start is measured
                alone = (await timed_async(1, request))[0]
                line = stub_lines[number % len(stub_lines)]
                sent = time.perf_counter()
                start = asyncio.ensure_future(session.client.workspace_execute_command_async(
                    types.ExecuteCommandParams(command="pycapsule.generate", arguments=[
                        {"uri": uri, "position": {"line": line, "character": 4}}])))
                answered: list[float] = []
                start.add_done_callback(lambda _: answered.append(time.perf_counter()))
                await asyncio.sleep(0)
                began = time.perf_counter()
                await request(number)
                elapsed = time.perf_counter() - began
                answer = await start
                # Each start is measured on its own: the next one waits until this run has ended in the
                # engine's process (it would otherwise still be working there, taking a core). The run ends
                # there on its own, at the unreachable model: a cancel would end it for the editor at once,
                # before the engine's process has parsed the module (since the start answers first).
                run_id = answer.get("runId") if isinstance(answer, dict) else None
                if run_id is None:
                    raise RuntimeError(f"the benchmark's run did not start: {answer}")
                await session.run_ended(str(run_id))
                return Paired(alone, elapsed, answered[0] - sent)

            await timed_async(20, code_action)  # warm-up
            baseline = figures(await timed_async(SAMPLES, round_trip), 0.95)
            actions = figures(await timed_async(SAMPLES, code_action), 0.95)
            hovers = figures(await timed_async(SAMPLES, hover), 0.95)
            after_edit = figures(await timed_async(SAMPLES // 4, edit_then_code_action), 0.95)
            behind_start = [await behind_a_run_start(n, round_trip) for n in range(STARTS)]
            hover_behind_start = [await behind_a_run_start(n, hover) for n in range(STARTS)]

            cold, cached, one_changed = [], [], []
            text = diagnostics_module(functions, 0)
            checked.write_text(text, encoding="utf-8")
            checked_uri = session.open(checked, text)
            cold.append(await session.diagnostics_published(checked_uri))
            version = 1
            for salt in range(1, SAVES + 1):
                version += 1
                text = diagnostics_module(functions, salt)  # a top-level change: every key changes
                session.change_and_save(checked_uri, checked, text, version)
                cold.append(await session.diagnostics_published(checked_uri))
            for _ in range(SAVES):
                version += 1
                session.change_and_save(checked_uri, checked, text, version)
                cached.append(await session.diagnostics_published(checked_uri))
            for step in range(SAVES):
                version += 1
                changed = text.replace("    return x + 0\n", f"    return x + 0 * {step + 1}\n")
                session.change_and_save(checked_uri, checked, changed, version)
                one_changed.append(await session.diagnostics_published(checked_uri))
            published = len(session.diagnostics.get(checked_uri, []))
        finally:
            await session.stop()
        direct = _direct_check(text, checked, backend)
    return {
        "lines": len(text_lines),
        "functions": functions,
        "baseline": baseline,
        "code_action": actions,
        "hover": hovers,
        "code_action_after_edit": after_edit,
        "no_op_behind_run_start": figures([p.behind for p in behind_start], 0.95),
        "no_op_beside_run_starts": figures([p.alone for p in behind_start], 0.95),
        "hover_behind_run_start": figures([p.behind for p in hover_behind_start], 0.95),
        "run_start": figures([p.start for p in [*behind_start, *hover_behind_start]], 0.95),
        "debounce_ms": DEBOUNCE_SECONDS * 1000,
        "cold_ms": statistics.median(cold[1:] or cold) * 1000,
        "first_open_ms": cold[0] * 1000,
        "cached_ms": statistics.median(cached) * 1000,
        "one_changed_ms": statistics.median(one_changed) * 1000,
        "direct_check_ms": direct * 1000,
        "diagnostics": published,
    }


TARGETS = {"code_action": 50.0, "code_action_after_edit": 50.0, "hover": 20.0, "hover_behind_run_start": 50.0,
           "run_start": 300.0}
"""p95 targets in milliseconds."""
BEHIND_START_FACTOR = 3.0
"""A no-op behind a run's start: its p95 at most this times the p95 of the same no-op sent alone a moment
before each start (the same edit handled, the last run ended), so that both p95s are taken in the same
minutes of a machine whose load drifts."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lines", type=int, default=3000, metavar="N",
                        help="length of the generated module (default 3000)")
    parser.add_argument("--functions", type=int, default=50, metavar="N",
                        help="doctest functions in it (default 50)")
    add_backend(parser)


def run(args: argparse.Namespace) -> int:
    if args.lines < 50 or args.functions < 1:
        print("measurements lsp: --lines must be at least 50 and --functions at least 1", file=sys.stderr)
        return ExitCode.USAGE
    print(f"measurements lsp: {args.lines}-line module, {args.functions} doctest functions ...", flush=True)
    result = asyncio.run(measure(args.lines, args.functions, args.backend))
    base = result["baseline"]
    print(f"\nrequest latency over stdio, {SAMPLES} requests each, {result['lines']}-line module")
    print(f"  {'request':<28}{'median':>10}{'p95':>10}{'p95 target':>12}{'x round trip':>14}")
    label = "round trip (no-op command)"
    print(f"  {label:<28}{base.median_ms:>8.2f}ms{base.percentile_ms:>8.2f}ms{'':>12}{1:>13.1f}x")
    verdicts = []
    for key, label in (
        ("code_action", "code action"),
        ("code_action_after_edit", "code action after an edit"),
        ("hover", "hover (with history)"),
        ("hover_behind_run_start", "hover behind a run's start"),
        ("run_start", "a run's start answered"),
    ):
        summed = result[key]
        target = TARGETS[key]
        verdicts.append(summed.percentile_ms <= target)
        ratio = summed.median_ms / base.median_ms if base.median_ms else float("nan")
        print(
            f"  {label:<28}{summed.median_ms:>8.2f}ms{summed.percentile_ms:>8.2f}ms"
            f"{'<= ' + format(target, '.0f') + ' ms':>12}{ratio:>13.1f}x"
        )
    behind, beside = result["no_op_behind_run_start"], result["no_op_beside_run_starts"]
    allowed = BEHIND_START_FACTOR * beside.percentile_ms
    verdicts.append(behind.percentile_ms <= allowed)
    for label, summed, target in (("no-op beside the starts", beside, ""),
                                  ("no-op behind a run's start", behind, f"<= {allowed:.1f} ms")):
        print(f"  {label:<28}{summed.median_ms:>8.2f}ms{summed.percentile_ms:>8.2f}ms{target:>12}"
              f"{summed.median_ms / base.median_ms:>13.1f}x")
    print(f"  (a run's start: generate on a stub of the just-edited module, {STARTS} times; before each, the "
          f"no-op alone at the same moment: 'beside the starts'; target: p95 behind a start <= "
          f"{BEHIND_START_FACTOR:g} x the p95 beside them)")
    print(
        f"\nsave -> diagnostics, {result['functions']} doctest functions "
        f"({result['diagnostics']} failures published), median of {SAVES} saves, "
        f"includes the {result['debounce_ms']:.0f} ms debounce"
    )
    direct = result["direct_check_ms"]
    for key, label in (
        ("first_open_ms", "first open (sandbox start)"),
        ("cold_ms", "cold (every function changed)"),
        ("one_changed_ms", "one function changed"),
        ("cached_ms", "cached (saved unchanged)"),
    ):
        print(f"  {label:<34}{result[key]:>9.1f} ms")
    print(f"  {'direct Engine.check, same module':<34}{direct:>9.1f} ms  (baseline, in this process, warm)")
    print("\nverdict: " + ("p95 targets met" if all(verdicts) else "a p95 target was MISSED"))
    return 0 if all(verdicts) else 1
