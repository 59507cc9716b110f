"""CHANGELOG.md as the release reads it (Keep a Changelog): `## [Unreleased]` first, then one section per
version, newest first, each headed `## [X.Y.Z] - YYYY-MM-DD` once tagged or `## [X.Y.Z] - Unreleased` before.

The release workflow takes the notes of its GitHub release from here (standard library only, no install):

    python tests/packaging/changelog.py notes 0.2.0 > release-notes.md

and tests/packaging/test_version.py checks the file against the package's version with `problems`."""

from __future__ import annotations

import datetime
import re
import sys
from dataclasses import dataclass
from pathlib import Path

CHANGELOG = Path(__file__).resolve().parents[2] / "CHANGELOG.md"

UNRELEASED = "Unreleased"
HEADING = re.compile(r"^## \[(?P<name>[^\]]+)\](?:\s+-\s+(?P<when>\S.*?))?\s*$", re.MULTILINE)
VERSION = re.compile(r"\d+\.\d+\.\d+")
"""What a release may be called: the Marketplace takes only major.minor.patch, where PEP 440 and semver
agree, so pyproject's version and package.json's are the same string."""


@dataclass(frozen=True)
class Section:
    name: str
    """"Unreleased" or a version."""
    when: str | None
    """What follows the heading's " - ": a date (released), "Unreleased", or None when nothing does."""
    body: str

    @property
    def released(self) -> bool:
        return self.when is not None and _date(self.when) is not None


def _date(text: str) -> datetime.date | None:
    try:
        return datetime.date.fromisoformat(text) if re.fullmatch(r"\d{4}-\d\d-\d\d", text) else None
    except ValueError:
        return None


def sections(text: str) -> list[Section]:
    """The `## [...]` sections in the file's order, each with its text up to the next one."""
    found = list(HEADING.finditer(text))
    ends = [match.start() for match in found[1:]] + [len(text)]
    return [Section(match["name"].strip(), match["when"], text[match.end() : end].strip())
            for match, end in zip(found, ends, strict=True)]


def problems(text: str, version: str, releasing: bool = False) -> list[str]:
    """What is wrong with a changelog for a package at `version` (empty: nothing). `releasing`: the tag of
    that version is being published, so its section must carry the date it was tagged."""
    found = sections(text)
    if not found or found[0].name != UNRELEASED:
        return [f"the first section is not [{UNRELEASED}]"]
    wrong = [f"[{UNRELEASED}] has a date or a status: {found[0].when}"] if found[0].when else []
    versions = found[1:]
    if not versions:
        return [*wrong, "no version section"]
    if versions[0].name != version:
        wrong.append(f"the newest version section is [{versions[0].name}], the package is {version}")
    for position, section in enumerate(versions):
        if not VERSION.fullmatch(section.name):
            wrong.append(f"[{section.name}] is not a version major.minor.patch")
        if not section.body:
            wrong.append(f"[{section.name}] says nothing")
        if section.when is None or not (section.released or section.when == UNRELEASED):
            wrong.append(f"[{section.name}] is headed neither with a date YYYY-MM-DD nor '{UNRELEASED}': "
                         f"{section.when}")
        elif not section.released and position > 0:
            wrong.append(f"[{section.name}] is older than the newest version and still '{UNRELEASED}'")
    numbered = [tuple(map(int, s.name.split("."))) for s in versions if VERSION.fullmatch(s.name)]
    if numbered != sorted(set(numbered), reverse=True):
        wrong.append("the version sections are not newest first, each once")
    dates = [_date(s.when) for s in versions if s.released and s.when]
    if dates != sorted(dates, reverse=True):
        wrong.append("the dates of the version sections are not newest first")
    if releasing and versions[0].name == version and not versions[0].released:
        wrong.append(f"[{version}] is being released but its heading has no date: "
                     f"`## [{version}] - YYYY-MM-DD`, the day of the tag")
    return wrong


def notes(text: str, version: str) -> str:
    """The text of a released version's section: the notes of its GitHub release."""
    for section in sections(text):
        if section.name == version:
            if not section.released:
                raise ValueError(f"CHANGELOG.md: [{version}] has no date, so it is not released")
            return section.body + "\n"
    raise ValueError(f"CHANGELOG.md has no section [{version}]")


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "notes":
        print("usage: python tests/packaging/changelog.py notes VERSION", file=sys.stderr)
        return 2
    try:
        sys.stdout.write(notes(CHANGELOG.read_text(encoding="utf-8"), argv[1]))
    except ValueError as error:
        print(error, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
