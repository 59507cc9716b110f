"""Per-task results on disk: one JSON line per finished task, appended as it finishes.

A run's results live in `<out>/<dataset>-<mode>-<config hash>.jsonl` beside a manifest
(`.json`: the configuration, the command, the model file's SHA-256, the date). The config hash
covers everything that changes what the model produces or how it is scored, so resuming a run
only skips tasks finished under the same configuration; a changed setting starts a new file.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


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
        stem = f"{dataset}-{mode}-{config_hash(config)}"
        return cls(out / f"{stem}.jsonl", out / f"{stem}.json")


def read_records(path: Path) -> dict[str, TaskRecord]:
    """The records in a results file, by task id (the last one wins); a torn last line is ignored."""
    records: dict[str, TaskRecord] = {}
    if not path.is_file():
        return records
    known = set(TaskRecord.__dataclass_fields__)
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            continue  # a run killed mid-write leaves at most one partial line
        if isinstance(data, dict) and "task_id" in data:
            records[data["task_id"]] = TaskRecord(**{k: v for k, v in data.items() if k in known})
    return records


class RecordWriter:
    """Appends records from many worker threads, one whole line and one flush per task."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
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


def read_manifest(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    temporary.replace(path)
