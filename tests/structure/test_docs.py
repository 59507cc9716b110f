"""The documentation as a clone has it: every relative link resolves, and docs/ holds prose, reports and
small manifests that name no folder of the machine that made them; raw bench records live gzipped in
data/records/."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from tests.checkout import ROOT, checkout_files
from tests.packaging.test_distribution import LINK_TARGETS

DOCS_LIMIT_BYTES = 3_000_000
RECORDS = Path("data") / "records"
MACHINE_FOLDERS = re.compile(rb"/(?:work/|root/|home/(?!user/))")
"""Not /home/user/: BigCodeBench's examples name such paths (`task_func('/home/user/backup_log.json')`), and
so do the loop's messages about them ("needs '/home/user/backup_log.json', which is not there")."""


def _files_under(folder: Path) -> list[Path]:
    return [path for path in checkout_files() if path.is_relative_to(folder)]


def _markdown() -> list[Path]:
    """README.md, measurements/README.md (it points into docs/ and data/) and every page under docs/."""
    return [Path("README.md"), Path("measurements") / "README.md",
            *(path for path in _files_under(Path("docs")) if path.suffix == ".md")]


def _prose(text: str) -> str:
    """Markdown without its fenced code blocks (a `# comment` there is no heading, a `[x](y)` no link)."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return "\n".join(lines)


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    headings = re.findall(r"^#+ (.+)$", _prose(page.read_text(encoding="utf-8")), re.MULTILINE)
    return {_slug(heading) for heading in headings}


def _broken_links(path: Path, root: Path = ROOT) -> list[str]:
    """The links of `path` (relative to `root`) whose file, or heading in a Markdown file, does not exist."""
    text = _prose((root / path).read_text(encoding="utf-8"))
    broken = []
    for match in LINK_TARGETS.finditer(text):
        target = next(group for group in match.groups() if group)
        if re.match(r"[a-z][a-z+.-]*:", target):  # https:, mailto:...
            continue
        name, _, anchor = target.partition("#")
        linked = Path(path.parent, name) if name else path
        resolved = (root / linked).resolve()
        if not resolved.exists():
            broken.append(f"{path}: {target}")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{path}: {target} (no such heading)")
    return broken


def test_every_relative_link_in_the_readmes_and_docs_points_at_a_file_that_exists() -> None:
    assert len(_markdown()) > 10
    assert [broken for path in _markdown() for broken in _broken_links(path)] == []


def test_the_link_check_finds_a_missing_file_and_a_missing_heading(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "bench.md").write_text("# Bench\n## The report\n```sh\n# not a heading\n```\n")
    page = Path("docs") / "page.md"
    (tmp_path / page).write_text("[a](bench.md#the-report) [b](nowhere.md) [c](bench.md#not-a-heading)\n"
                                 "![d](#page) [e](https://example.org/x.md)\n# Page\n")
    assert _broken_links(page, tmp_path) == [f"{page}: nowhere.md",
                                             f"{page}: bench.md#not-a-heading (no such heading)"]


def test_docs_hold_prose_reports_and_small_manifests_under_3_mb() -> None:
    files = _files_under(Path("docs"))
    assert sum((ROOT / path).stat().st_size for path in files) < DOCS_LIMIT_BYTES
    assert [path for path in files if path.suffix in (".jsonl", ".gz")] == []
    assert [path for path in files if path.suffix == ".png" and not path.is_relative_to("docs/images")] == []


MODEL_WRITTEN = ("codes", "final_code")
"""Record fields holding the model's code: it copies the task's prompt, whose own example paths
(BigCodeBench's '/home/user/backup_log.json') are the dataset's, not the machine's."""


def _text(path: Path) -> bytes:
    data = (ROOT / path).read_bytes()
    if path.suffix != ".gz":
        return data
    records = [json.loads(line) for line in gzip.decompress(data).splitlines() if line.strip()]
    return json.dumps([{k: v for k, v in r.items() if k not in MODEL_WRITTEN} for r in records]).encode()


def test_no_committed_doc_report_manifest_or_record_names_a_folder_of_the_machine_that_made_it() -> None:
    files = _files_under(Path("docs")) + _files_under(RECORDS)
    assert any(path.suffix == ".gz" for path in files)
    assert [str(path) for path in files if MACHINE_FOLDERS.search(_text(path))] == []


@pytest.mark.parametrize("manifest", [path for path in _files_under(Path("docs") / "results")
                                      if path.suffix == ".json"], ids=str)
def test_every_published_run_names_its_gzipped_records_in_data_records(manifest: Path) -> None:
    pointer = json.loads((ROOT / manifest).read_text(encoding="utf-8")).get("records")
    assert pointer, f"{manifest} has no records: publish its folder (measurements/results/publish.py)"
    records = (ROOT / manifest.parent / pointer).resolve()
    assert records.is_relative_to(ROOT / RECORDS) and records.name.endswith(".jsonl.gz")
    assert records.is_file() and gzip.decompress(records.read_bytes()).count(b"\n") >= 1
