"""`pycapsule bench merge DIR... --out DIR`: join the records of one run split across machines.

Each machine runs `pycapsule bench ... --shard I/N --out DIR` with the same settings; their folders are
copied back and merged here. A run is its manifest's file name (`<dataset>-<mode>-<hash>`), so the same
name in two folders is the same configuration, and joining their records is safe. Two folders holding the
same dataset and mode under different hashes are different configurations (another setting, model,
prompt or dataset file): the merge refuses, saying what differs, and writes nothing.

On a task recorded in several folders the record of the folder named first wins (the output folder's own
records, when it is not named, count last). The merged manifest holds the union of the shards, the
longest shard's wall time (shards run side by side) and how each part was made (`merged_from`). The
report of the output folder is rebuilt by the caller.
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pycapsule.bench.records import (
    MODEL_THREADS_KEY,
    RECORDS_KEY,
    SANDBOX_LIBRARIES_KEY,
    SANDBOX_PYTHON_KEY,
    TaskRecord,
    read_manifest,
    read_records,
    results_of,
    with_model_threads,
    with_sandbox_libraries,
    write_manifest,
)
from pycapsule.bench.shards import SHARDS_KEY, union_of_shards

PROVENANCE_KEYS = ("commit", "pycapsule", "sandbox", SANDBOX_PYTHON_KEY)
"""Manifest fields that may differ between shards of one run (the code, the machine): joined with ' + '."""


class MergeError(ValueError):
    """The folders cannot be merged; the message is one sentence."""


@dataclass(frozen=True)
class Source:
    folder: Path
    manifest_path: Path
    manifest: dict[str, Any]

    @property
    def run(self) -> str:
        return self.manifest_path.stem

    @property
    def kind(self) -> tuple[str, str]:
        config = self.manifest["config"]
        return str(config.get("dataset")), str(config.get("generation", {}).get("mode"))


@dataclass(frozen=True)
class MergedRun:
    run: str
    """The manifest's file name without `.json`."""
    records: int
    total_tasks: int
    duplicates: int
    """Tasks recorded in more than one folder (the first folder's record was kept)."""
    shards: list[str] | None


def merge_folders(folders: list[Path], out: Path) -> list[MergedRun]:
    """Merge every run found in `folders` into `out`; raises MergeError (nothing written) when a folder is
    missing, holds no run, or two folders hold different configurations of one dataset and mode."""
    for folder in folders:
        if not folder.is_dir():
            raise MergeError(f"{folder} is not a folder of bench results")
    named = [_runs_in(folder) for folder in folders]
    if not any(named):
        raise MergeError(f"no bench run (a manifest and its records) in {', '.join(map(str, folders))}")
    _refuse_different_configurations([source for sources in named for source in sources])
    resolved = {folder.resolve() for folder in folders}
    own = _runs_in(out) if out.is_dir() and out.resolve() not in resolved else []
    by_run: dict[str, list[Source]] = {}
    for source in [s for sources in named for s in sources]:
        by_run.setdefault(source.run, []).append(source)
    for source in own:  # the output's own copy of a run counts last
        if source.run in by_run:
            by_run[source.run].append(source)
    out.mkdir(parents=True, exist_ok=True)
    return [_merge_run(run, sources, out) for run, sources in by_run.items()]


def _runs_in(folder: Path) -> list[Source]:
    sources = []
    for path in sorted(folder.glob("*.json")):
        manifest = read_manifest(path)
        if manifest is not None and isinstance(manifest.get("config"), dict):
            sources.append(Source(folder, path, manifest))
    return sources


def _refuse_different_configurations(sources: list[Source]) -> None:
    first: dict[tuple[str, str], Source] = {}
    for source in sources:
        seen = first.setdefault(source.kind, source)
        if seen.run != source.run:
            dataset, mode = source.kind
            raise MergeError(
                f"refusing to merge different configurations of {dataset} {mode}: {seen.run} in "
                f"{seen.folder} and {source.run} in {source.folder} differ in "
                f"{_differences(seen.manifest['config'], source.manifest['config'])}; only shards of one "
                "run (same settings, model, prompts and dataset) can be merged"
            )


def _differences(a: dict[str, Any], b: dict[str, Any]) -> str:
    flat_a, flat_b = _flatten(a), _flatten(b)
    keys = sorted(key for key in flat_a.keys() | flat_b.keys() if flat_a.get(key) != flat_b.get(key))
    if not keys:
        return "their hash"
    shown = [f"{key} ({json.dumps(flat_a.get(key))} against {json.dumps(flat_b.get(key))})"
             for key in keys[:4]]
    return ", ".join(shown) + (f" and {len(keys) - 4} more" if len(keys) > 4 else "")


def _flatten(config: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in config.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _merge_run(run: str, sources: list[Source], out: Path) -> MergedRun:
    records: dict[str, TaskRecord] = {}
    duplicates = 0
    for source in sources:
        for task_id, record in read_records(results_of(source.manifest_path, source.manifest)).items():
            if task_id in records:
                duplicates += 1
            else:
                records[task_id] = record
    manifest = _merged_manifest(sources, out, len(records))
    results = out / f"{run}.jsonl"
    temporary = results.with_name(results.name + ".tmp")
    temporary.write_text("".join(json.dumps(asdict(r), ensure_ascii=False) + "\n" for r in records.values()),
                         encoding="utf-8")
    temporary.replace(results)
    write_manifest(out / f"{run}.json", manifest)
    return MergedRun(run, len(records), int(manifest.get("total_tasks", len(records))), duplicates,
                     manifest.get(SHARDS_KEY))


def _merged_manifest(sources: list[Source], out: Path, records: int) -> dict[str, Any]:
    manifests = [source.manifest for source in sources]
    merged = dict(manifests[0])
    merged.pop(RECORDS_KEY, None)  # the merged records are written plain, beside the manifest
    merged["total_tasks"] = max(int(m.get("total_tasks", 0)) for m in manifests) or records
    # shards run side by side: the run took as long as its longest shard (a sum would double-count re-merges)
    merged["wall_seconds"] = max(float(m.get("wall_seconds", 0.0)) for m in manifests)
    for key, pick in (("started", min), ("updated", max)):
        values = [m[key] for m in manifests if isinstance(m.get(key), str)]
        if values:
            merged[key] = pick(values)
    for key in PROVENANCE_KEYS:
        values = list(dict.fromkeys(str(m[key]) for m in manifests if m.get(key) is not None))
        if values:
            merged[key] = " + ".join(values)
    merged["model_label"] = next((m["model_label"] for m in manifests if m.get("model_label")),
                                 merged.get("model_label"))
    merged.pop(MODEL_THREADS_KEY, None)
    if threads := sorted({n for m in manifests for n in with_model_threads(m)}):
        merged[MODEL_THREADS_KEY] = threads
    merged.pop(SANDBOX_LIBRARIES_KEY, None)
    for manifest in manifests:
        if isinstance(libraries := manifest.get(SANDBOX_LIBRARIES_KEY), dict):
            merged[SANDBOX_LIBRARIES_KEY] = with_sandbox_libraries(merged, libraries)
    shards = union_of_shards([m.get(SHARDS_KEY) for m in manifests])
    if shards is None:
        merged.pop(SHARDS_KEY, None)
    else:
        merged[SHARDS_KEY] = shards
    merged["command"] = unsharded_command(str(merged.get("command", "")), out)
    merged["merged_from"] = _origins(manifests)
    return merged


def _origins(manifests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """How each part was made (its command, code, sandbox, time); a part that is itself a merge
    contributes its own parts, once each."""
    origins: list[dict[str, Any]] = []
    for manifest in manifests:
        parts = manifest.get("merged_from")
        if not isinstance(parts, list):
            parts = [{key: manifest.get(key) for key in ("command", "commit", "sandbox", "wall_seconds",
                                                         SHARDS_KEY)}]
        origins += [part for part in parts if part not in origins]
    return origins


def unsharded_command(command: str, out: Path) -> str:
    """A shard's command made the whole run's: no `--shard`, and `--out` the merged folder."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        if word in ("--shard", "--out"):
            skip = True
            continue
        if word.startswith(("--shard=", "--out=")):
            continue
        kept.append(word)
    return shlex.join([*kept, "--out", os.fspath(out)]) if kept else command
