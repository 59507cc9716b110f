"""The user's own GGUF file as the embedded model (the `embedded_model_file` setting): nothing is downloaded
and nothing pins its digest, so it is checked only for being a readable GGUF file; its model name (the
server's alias) is made from the file's name."""

from __future__ import annotations

import re
from pathlib import Path

from pycapsule.embedded_model.catalog import ModelSpec
from pycapsule.embedded_model.errors import ModelInstallError

GGUF_MAGIC = b"GGUF"
SETTING = "embedded_model_file"


def own_alias(path: Path | str) -> str:
    """'Qwen2.5-Coder-3B-Instruct-Q8_0.gguf' -> 'qwen2.5-coder-3b-instruct-q8_0' (also the name of its files
    in the runtime folder, so only letters, digits, '.', '_' and '-')."""
    name = Path(path).name
    stem = name[: -len(".gguf")] if name.lower().endswith(".gguf") else name
    return re.sub(r"[^a-z0-9._-]+", "-", stem.lower()).strip(".-") or "own-model"


def own_spec(path_text: str) -> ModelSpec:
    """The spec of the user's file: its own name and size, no sources, no pinned digest."""
    path = Path(path_text)
    return ModelSpec(size="own", filename=path.name, alias=own_alias(path), sha256="",
                     file_size=_checked(path), note="your own file (embedded_model_file), not pinned")


def _checked(path: Path) -> int:
    """The size of `path` once it is a readable GGUF file; else one sentence saying what it is."""
    said = f"the {SETTING} {path}"
    try:
        with open(path, "rb") as data:
            magic = data.read(len(GGUF_MAGIC))
            size = data.seek(0, 2)
    except FileNotFoundError:
        raise ModelInstallError(f"{said} does not exist.") from None
    except IsADirectoryError:
        raise ModelInstallError(f"{said} is a folder, not a GGUF file.") from None
    except OSError as error:
        raise ModelInstallError(f"{said} cannot be read: {error.strerror or error}.") from None
    if magic != GGUF_MAGIC:
        raise ModelInstallError(f"{said} is not a GGUF file (it does not start with {GGUF_MAGIC.decode()}).")
    return size
