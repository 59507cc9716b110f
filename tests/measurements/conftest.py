"""Fixtures of the measurement tools' tests: each tool runs as a contributor runs it,
`python3 -m measurements` from the checkout (usage errors, which measure nothing, through its `main` in this
process: each command costs seconds of imports); the model bench borrows the tiny real GGUF of the model
tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.models.conftest import tiny_env, tiny_model_dir  # noqa: F401 (fixtures the model bench uses)

CHECKOUT = Path(__file__).resolve().parents[2]


def measurements(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "measurements", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=CHECKOUT, env=dict(os.environ))
