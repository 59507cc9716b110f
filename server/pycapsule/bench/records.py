"""Per-task results on disk: one JSON line per finished task, appended as it finishes.

A run's results live in `<out>/<dataset>-<mode>-<config hash>.jsonl` beside a manifest
(`.json`: the configuration, the command, the model file's SHA-256, the date). The config hash
covers everything that changes what the model produces or how it is scored, so resuming a run
only skips tasks finished under the same configuration; a changed setting starts a new file.

A published run keeps its manifest (and report) where it was, and its records gzipped elsewhere: the
manifest's `records` names them, relative to the manifest's folder (measurements/results/publish.py does
this).
Every reader and the writer follow that pointer and read or append the gzipped form, so a published
run resumes, is reused and is reported like any other.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import threading
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pycapsule.bench.portable import portable_command, portable_path

RECORDS_KEY = "records"
"""The manifest's pointer to its published records (a path relative to the manifest's folder)."""
_PATH_FIELDS = ("data_file", "settings_file")


@dataclass
class TaskRecord:
    task_id: str
    prompt_key: str
    status: str
    """The hidden-test score: passed, failed or unscorable."""
    detail: str = ""
    """Why it failed or was not scorable (one line)."""
    outcome: str = ""
    """How the loop ended on the prompt's examples: passed, not_verified, gave_up, error, cancelled..."""
    outcome_message: str = ""
    attempts: int = 0
    passed_attempt: int | None = None
    """The attempt whose code passed the visible examples (None: none did)."""
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    generation_seconds: float = 0.0
    score_seconds: float = 0.0
    headlines: list[str] = field(default_factory=list)
    """The visible-example verdict of each attempt, one line each."""
    codes: list[str] = field(default_factory=list)
    """Each attempt's candidate code, as the loop ran it."""
    verdicts: list[str] = field(default_factory=list)
    """Each attempt's verdict on the examples (passed, failed, no_code, signature, ...)."""
    attempt_tokens: list[list[int]] = field(default_factory=list)
    """Each attempt's [prompt, completion] tokens."""
    attempt_seconds: list[float] = field(default_factory=list)
    """Each attempt's wall time (model and examples)."""
    examples_failed: list[int | None] = field(default_factory=list)
    """Each attempt's count of failed examples (None: they could not all run)."""
    function: str = ""
    """The name of the function the model was asked for (records before 2026-11-28 lack it)."""
    replies: dict[str, str] = field(default_factory=dict)
    """The model's raw reply of each attempt that yielded no usable function (bench/lost_answers.py), by
    attempt number ('1', '2', ...): failed extractions only, the machine's folders taken out."""
    final_code: str | None = None
    """The module that was scored."""
    reused_from: str | None = None
    """The results file this generation was taken from (same prompt, same generation settings; for a
    direct run also a self-debugging run's first attempt)."""

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def generation(self) -> dict[str, Any]:
        """Everything but the score: what can be reused for another dataset with the same prompt."""
        data = asdict(self)
        for key in ("task_id", "status", "detail", "score_seconds", "reused_from"):
            data.pop(key)
        return data


def config_hash(config: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:10]


@dataclass(frozen=True)
class RunFiles:
    results: Path
    manifest: Path

    @classmethod
    def of(cls, out: Path, dataset: str, mode: str, config: dict[str, Any]) -> RunFiles:
        manifest = out / f"{dataset}-{mode}-{config_hash(config)}.json"
        return cls(results_of(manifest, read_manifest(manifest)), manifest)


def results_of(manifest_path: Path, manifest: dict[str, Any] | None) -> Path:
    """Where a run's records are: `<stem>.jsonl` beside its manifest, or where a published manifest's
    `records` points."""
    published = (manifest or {}).get(RECORDS_KEY)
    if isinstance(published, str) and published:
        return Path(os.path.normpath(manifest_path.parent / published))
    return manifest_path.with_suffix(".jsonl")


def is_compressed(path: Path) -> bool:
    return path.suffix == ".gz"


def gunzip_prefix(data: bytes) -> tuple[bytes, bool]:
    """What a gzip file of one or more members holds, and whether it ends cleanly. A writer killed
    mid-run leaves its last member without an end; everything it flushed before is still returned."""
    parts: list[bytes] = []
    while data:
        member = zlib.decompressobj(wbits=31)
        try:
            parts.append(member.decompress(data))
        except zlib.error:
            return b"".join(parts), False
        if not member.eof:
            return b"".join(parts), False
        data = member.unused_data
    return b"".join(parts), True


def _raw_records(path: Path) -> tuple[bytes, bool]:
    """A results file's text (decompressed), and whether it ends cleanly (no torn line or member)."""
    data = path.read_bytes()
    whole = True
    if is_compressed(path):
        data, whole = gunzip_prefix(data)
    return data, whole and (not data or data.endswith(b"\n"))


def complete_lines(path: Path) -> bytes:
    """A results file's whole lines (decompressed): what is left of a run killed mid-write."""
    data, _ = _raw_records(path)
    return data[: data.rfind(b"\n") + 1]


def compress_records(source: Path, target: Path) -> None:
    """Write `source`'s whole lines gzipped to `target`, atomically and byte-for-byte reproducibly."""
    _replace_bytes(target, gzip.compress(complete_lines(source), compresslevel=9, mtime=0))


def _replace_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(data)
    temporary.replace(path)


def read_records(path: Path) -> dict[str, TaskRecord]:
    """The records in a results file (`.jsonl`, or `.jsonl.gz` when published), by task id (the last one
    wins); a torn last line is ignored."""
    records: dict[str, TaskRecord] = {}
    if not path.is_file():
        return records
    known = set(TaskRecord.__dataclass_fields__)
    text, _ = _raw_records(path)
    for line in text.decode("utf-8", errors="replace").splitlines():
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            continue  # a run killed mid-write leaves at most one partial line
        if isinstance(data, dict) and "task_id" in data:
            records[data["task_id"]] = TaskRecord(**{k: v for k, v in data.items() if k in known})
    return records


class RecordWriter:
    """Appends records from many worker threads, one whole line and one flush per task. A `.gz` file gets
    one more gzip member per writer, each record flushed through (readable if the run is killed)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        if is_compressed(path):
            if path.is_file() and not _raw_records(path)[1]:
                # a killed run left a member without its end: a member appended after it would be unreadable
                compress_records(path, path)
            self._file = gzip.open(path, "at", encoding="utf-8")  # noqa: SIM115 (closed by close())
            return
        torn = path.is_file() and path.stat().st_size > 0 and not path.read_bytes().endswith(b"\n")
        self._file = path.open("a", encoding="utf-8")
        if torn:  # end the partial line a killed run left, so the next record starts on its own line
            self._file.write("\n")

    def write(self, record: TaskRecord) -> None:
        line = json.dumps(asdict(record), ensure_ascii=False) + "\n"
        with self._lock:
            self._file.write(line)
            self._file.flush()

    def close(self) -> None:
        self._file.close()


MODEL_THREADS_KEY = "model_threads"
"""Manifest field: the embedded model's thread counts over the run's sessions (greedy answers can differ
between counts, so runs that must repeat each other pin $PYCAPSULE_MODEL_THREADS)."""


def with_model_threads(manifest: dict[str, Any], *counts: int | None) -> list[int]:
    """The manifest's thread counts with `counts` added (None: no embedded model), sorted, each once."""
    seen = manifest.get(MODEL_THREADS_KEY)
    known = {count for count in seen if isinstance(count, int)} if isinstance(seen, list) else set()
    return sorted(known | {count for count in counts if count is not None})


SANDBOX_PYTHON_KEY = "sandbox_python"
SANDBOX_LIBRARIES_KEY = "sandbox_libraries"
"""Manifest fields: the Python version the sandbox ran the tasks' code with, and the distributions that
provided the third-party modules the tasks need ('sklearn': 'scikit-learn 1.3.1'), over the run's
sessions (a module whose version changed between sessions shows both, joined with ' | ')."""


def with_sandbox_libraries(manifest: dict[str, Any], installed: dict[str, str]) -> dict[str, str]:
    """The manifest's sandbox libraries with `installed` added."""
    seen = manifest.get(SANDBOX_LIBRARIES_KEY)
    merged = {str(k): str(v) for k, v in seen.items()} if isinstance(seen, dict) else {}
    for module, provided in installed.items():
        known = merged[module].split(" | ") if module in merged else []
        merged[module] = " | ".join(dict.fromkeys([*known, provided]))
    return dict(sorted(merged.items()))


def read_manifest(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    """Write a manifest atomically, its paths (data file, settings file, the command's) made portable: a
    manifest may be published, and must not name the folders of the machine that made it."""
    portable = dict(manifest)
    for key in _PATH_FIELDS:
        if isinstance(portable.get(key), str):
            portable[key] = portable_path(portable[key])
    if isinstance(portable.get("command"), str):
        portable["command"] = portable_command(portable["command"])
    text = json.dumps(portable, indent=2, sort_keys=True) + "\n"
    _replace_bytes(path, text.encode("utf-8"))
