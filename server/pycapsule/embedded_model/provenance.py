"""Which source served an installed model file: `<file>.source.json` beside it, written just before the
verified file is renamed into place (`pycapsule model status` and `model list` say it).

A file installed before sources were recorded has none and is reported as from an unknown source; a record
whose digest is not the file's pinned one (the file was replaced since) counts as none.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

from pycapsule.embedded_model.catalog import HubFile, ModelSpec, Source

UNKNOWN = "an unknown source (installed before pycapsule recorded where files come from)"


def record_path(model_file: Path) -> Path:
    return model_file.with_name(model_file.name + ".source.json")


def source_record(source: Source, spec: ModelSpec, url: str | None = None) -> dict[str, Any]:
    """What is recorded of `source` having served `spec`'s file (`url`: where the Hub file was fetched)."""
    record: dict[str, Any] = {"source": source.kind, "label": source.label, "sha256": spec.sha256,
                              "installed": time.time()}
    if isinstance(source, HubFile):
        record.update(repo=source.repo, revision=source.revision, path=source.path, url=url)
    else:
        record["requirements"] = [part.requirement for part in source.parts]
    return record


def write_record(model_file: Path, record: dict[str, Any]) -> None:
    """Written atomically (a temporary file renamed), before the model file itself is renamed into place."""
    path = record_path(model_file)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    os.replace(temporary, path)


def discard_record(model_file: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        record_path(model_file).unlink()


def read_record(model_file: Path, spec: ModelSpec) -> dict[str, Any] | None:
    """The recorded source of `spec`'s installed file, None when there is none (or not for this file)."""
    try:
        record = json.loads(record_path(model_file).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("sha256") != spec.sha256:
        return None
    return record


def described(record: dict[str, Any] | None) -> str:
    """'Hugging Face (Qwen/... at f86cb2c1)', 'PyPI (...)' or the unknown source."""
    return str(record.get("label") or record.get("source")) if record else UNKNOWN
