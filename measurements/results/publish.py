"""Publish finished bench folders: their raw per-task records leave docs/ for data/records/, gzipped.

Usage: python3 measurements/results/publish.py FOLDER... [--records DIR]

For each run in FOLDER (a manifest `<stem>.json` with its records `<stem>.jsonl` beside it, as
`pycapsule bench --out FOLDER` writes them) the records are gzipped to
`data/records/<FOLDER relative to docs/results>/<stem>.jsonl.gz` (or under `--records DIR`), checked
and deleted; the manifest then names them (`records`, relative to the manifest's folder) and its paths
are made portable. The plots are deleted and report.md is rebuilt without them. What stays in FOLDER
is small: manifests and the report.

The bench reads the published form wherever it reads records: rerunning the same `pycapsule bench ...
--out FOLDER` resumes into the gzipped file, reuses its generations and rebuilds the report (with plots
again: publish once more afterwards). Publishing a published folder changes nothing. It uses this
checkout's pycapsule (server/), whatever is installed.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(CHECKOUT / "server"))

from pycapsule.bench.records import (  # noqa: E402
    RECORDS_KEY,
    compress_records,
    read_manifest,
    read_records,
    results_of,
    write_manifest,
)
from pycapsule.bench.report import ATTEMPTS_PLOT, PASS_PLOT, SUMMARY, write_report  # noqa: E402

RESULTS = CHECKOUT / "docs" / "results"
RECORDS = CHECKOUT / "data" / "records"


class PublishError(Exception):
    """A folder that cannot be published as it is (one sentence)."""


def records_folder(folder: Path, records_root: Path | None = None) -> Path:
    """Where `folder`'s records go: the path `folder` has under docs/results, under the records root."""
    folder = folder.resolve()
    if folder.is_relative_to(RESULTS):
        return (records_root or RECORDS).resolve() / folder.relative_to(RESULTS)
    if records_root is None:
        raise PublishError(f"{folder} is not under {RESULTS}: name where its records go with --records DIR")
    return records_root.resolve() / folder.name


def publish(folder: Path, records_root: Path | None = None) -> list[Path]:
    """Publish every run in `folder` (see the module's docstring); returns the records files written."""
    if not folder.is_dir():
        raise PublishError(f"{folder} is not a folder")
    target_folder = records_folder(folder, records_root)
    written = []
    for manifest_path in sorted(folder.glob("*.json")):
        manifest = read_manifest(manifest_path)
        if manifest is None or "config" not in manifest:
            continue
        plain, published = manifest_path.with_suffix(".jsonl"), results_of(manifest_path, manifest)
        if plain.is_file():
            target = published if published != plain else target_folder / f"{manifest_path.stem}.jsonl.gz"
            if not target.exists():
                compress_records(plain, target)
                written.append(target)
            if read_records(target) != read_records(plain):
                raise PublishError(f"{plain} and {target} hold different records: keep one, delete the other")
            pointer = os.path.relpath(target.resolve(), manifest_path.parent.resolve())
            manifest[RECORDS_KEY] = Path(pointer).as_posix()
        elif not published.is_file():
            print(f"publish: {manifest_path.name} has no records (neither {plain.name} nor "
                  f"{manifest.get(RECORDS_KEY)})", file=sys.stderr)
        write_manifest(manifest_path, manifest)  # portable paths, also in manifests published before
        plain.unlink(missing_ok=True)
    for plot in (ATTEMPTS_PLOT, PASS_PLOT, SUMMARY):
        (folder / plot).unlink(missing_ok=True)
    write_report(folder, plots=False)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path, metavar="FOLDER")
    parser.add_argument("--records", type=Path, default=None,
                        help="the records root (default: data/records, for folders under docs/results)")
    args = parser.parse_args(argv)
    try:
        for folder in args.folders:
            for target in publish(folder, args.records):
                print(f"{target.relative_to(CHECKOUT) if target.is_relative_to(CHECKOUT) else target}")
    except PublishError as error:
        print(f"publish: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
