"""Dataset readers: `load_tasks(name, data)` -> the tasks of one benchmark, in the dataset's order."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pycapsule.bench.datasets.bigcodebench import read_bigcodebench
from pycapsule.bench.datasets.files import FILE_NAMES, locate
from pycapsule.bench.datasets.humaneval import read_humaneval, read_humaneval_et, read_humaneval_plus
from pycapsule.bench.datasets.mbpp import read_mbpp, read_mbpp_et
from pycapsule.bench.datasets.realcode import read_realcode, read_realcode_visible
from pycapsule.bench.tasks import BenchTask

READERS: dict[str, Callable[[Path], list[BenchTask]]] = {
    "humaneval": read_humaneval,
    "humaneval-et": read_humaneval_et,
    "humaneval-plus": read_humaneval_plus,
    "mbpp": read_mbpp,
    "mbpp-et": read_mbpp_et,
    "bigcodebench": read_bigcodebench,
    "realcode": read_realcode,
    "realcode-visible": read_realcode_visible,
}
DATASETS = tuple(READERS)
assert set(READERS) == set(FILE_NAMES)


def load_tasks(dataset: str, data: str | Path | None = None) -> tuple[Path, list[BenchTask]]:
    """The file read and its tasks; DatasetError (one sentence) when it is missing or malformed."""
    path = locate(dataset, data)
    return path, READERS[dataset](path)
