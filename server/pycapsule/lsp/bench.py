"""Measure the language server from the outside, the way an editor sees it: a real pygls client
talks to `pycapsule serve` over stdio.

- code-action and hover latency on a generated module of N lines (hover on functions that have
  attempt history, so the history store is read), medians and p95, against the round trip of a
  do-nothing command (`pycapsule.cancel` with no run) measured in the same session;
- save -> diagnostics for a module of F doctest functions (one failing example each): cold (every
  function's key changed), cached (saved again unchanged) and one function changed, against a
  direct `Engine.check` of the same module in this process.
"""

from __future__ import annotations

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
from pygls.lsp.client import LanguageClient

SAMPLES = 200
SAVES = 5


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


@dataclass
class Figures:
    median_ms: float
    p95_ms: float


def figures(samples: list[float]) -> Figures:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return Figures(statistics.median(ordered) * 1000, p95 * 1000)


class _Session:
    """A pygls client with the capabilities an editor announces, and what the server sends it."""

    def __init__(self) -> None:
        self.client = LanguageClient("pycapsule-lsp-bench", "1")
        self.published: dict[str, asyncio.Event] = {}
        self.diagnostics: dict[str, list[types.Diagnostic]] = {}
        client = self.client

        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: types.PublishDiagnosticsParams) -> None:
            self.diagnostics[params.uri] = list(params.diagnostics)
            self.published.setdefault(params.uri, asyncio.Event()).set()

        @client.feature(types.WORKSPACE_CONFIGURATION)
        def configuration(params: types.ConfigurationParams) -> list[Any]:
            return [None for _ in params.items]

        for quiet in (
            types.WINDOW_LOG_MESSAGE,
            types.WINDOW_SHOW_MESSAGE,
            types.PROGRESS,
            "pycapsule/status",
        ):
            client.feature(quiet)(lambda params: None)

        @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def create(params: types.WorkDoneProgressCreateParams) -> None:
            return None

    async def start(self, root: Path, env: dict[str, str], options: dict[str, Any]) -> None:
        await self.client.start_io(sys.executable, "-m", "pycapsule", "serve", env=env, cwd=str(root))
        capabilities = types.ClientCapabilities(
            workspace=types.WorkspaceClientCapabilities(configuration=True),
            window=types.WindowClientCapabilities(work_done_progress=True),
            text_document=types.TextDocumentClientCapabilities(
                hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown]),
            ),
        )
        await self.client.initialize_async(
            types.InitializeParams(
                capabilities=capabilities,
                root_uri=root.as_uri(),
                process_id=os.getpid(),
                initialization_options={"pycapsule": options},
            )
        )
        self.client.initialized(types.InitializedParams())

    def open(self, path: Path, text: str) -> str:
        uri = path.as_uri()
        self.published.setdefault(uri, asyncio.Event()).clear()
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
            )
        )
        return uri

    def change_and_save(self, uri: str, path: Path, text: str, version: int) -> None:
        path.write_text(text, encoding="utf-8")
        self.published.setdefault(uri, asyncio.Event()).clear()
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        self.client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )

    async def diagnostics_published(self, uri: str) -> float:
        started = time.perf_counter()
        await asyncio.wait_for(self.published.setdefault(uri, asyncio.Event()).wait(), 300)
        return time.perf_counter() - started

    async def stop(self) -> None:
        try:
            await asyncio.wait_for(self.client.shutdown_async(None), 30)
            self.client.exit(None)
        finally:
            await self.client.stop()


async def _timed(samples: int, request: Callable[[int], Awaitable[Any]]) -> list[float]:
    times = []
    for number in range(samples):
        started = time.perf_counter()
        await request(number)
        times.append(time.perf_counter() - started)
    return times


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

    with tempfile.TemporaryDirectory(prefix="pycapsule-lsp-bench-") as folder:
        root = Path(folder)
        big, checked = root / "big.py", root / "checked.py"
        big_text = latency_module(lines)
        big.write_text(big_text, encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYCAPSULE_")}
        env["PYCAPSULE_HISTORY"] = str(root / "history.sqlite3")
        names = [f"f_{i:04d}" for i in range(big_text.count("\ndef f_"))]
        _seed_history(root / "history.sqlite3", big, names)
        session = _Session()
        await session.start(root, env, {"sandbox": backend} if backend else {})
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

            await _timed(20, code_action)  # warm-up
            baseline = figures(await _timed(SAMPLES, round_trip))
            actions = figures(await _timed(SAMPLES, code_action))
            hovers = figures(await _timed(SAMPLES, hover))
            after_edit = figures(await _timed(SAMPLES // 4, edit_then_code_action))

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
        "debounce_ms": DEBOUNCE_SECONDS * 1000,
        "cold_ms": statistics.median(cold[1:] or cold) * 1000,
        "first_open_ms": cold[0] * 1000,
        "cached_ms": statistics.median(cached) * 1000,
        "one_changed_ms": statistics.median(one_changed) * 1000,
        "direct_check_ms": direct * 1000,
        "diagnostics": published,
    }
