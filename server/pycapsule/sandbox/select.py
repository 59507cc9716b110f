"""open_sandbox(name | None, project_root, python) -> Sandbox: choose and start a backend.

Auto-selection tries bwrap, then docker; unsafe-subprocess only when named.
"""

from __future__ import annotations

from pathlib import Path

from pycapsule.sandbox.api import Sandbox, SandboxUnavailable

BACKENDS = ("bwrap", "docker", "unsafe-subprocess")
AUTO_ORDER = ("bwrap", "docker")


def _create(name: str, project_root: Path | None, python: str | None = None) -> Sandbox:
    if name == "bwrap":
        from pycapsule.sandbox.bwrap import BwrapSandbox

        sandbox = BwrapSandbox(project_root, python=python)
    elif name == "docker":
        from pycapsule.sandbox.docker import DockerSandbox

        sandbox = DockerSandbox(project_root, python=python)
    elif name == "unsafe-subprocess":
        from pycapsule.sandbox.unsafe import UnsafeSandbox

        sandbox = UnsafeSandbox(project_root, python=python)
    else:
        raise SandboxUnavailable(
            f"there is no sandbox backend named {name!r}; choose one of {', '.join(BACKENDS)}."
        )
    sandbox.start()
    return sandbox


def open_sandbox(name: str | None, project_root: Path | None = None, python: str | None = None) -> Sandbox:
    """A started sandbox; raises SandboxUnavailable (one sentence + what to install) when none can run.
    `python`: the interpreter (and so the packages) the jobs run with, where the backend uses the host's."""
    if name:
        return _create(name, project_root, python)
    reasons = []
    for candidate in AUTO_ORDER:
        try:
            return _create(candidate, project_root, python)
        except SandboxUnavailable as error:
            reasons.append(str(error).rstrip("."))
    raise SandboxUnavailable(
        "no sandbox backend works here (" + "; ".join(reasons) + "); install bubblewrap "
        "(apt-get install bubblewrap) or start a Docker engine and run `pycapsule sandbox build-image`, "
        "or name --backend unsafe-subprocess to run without protection."
    )


def available_backends(project_root: Path | None = None) -> dict[str, str | None]:
    """Each backend -> None when it works here, else the sentence saying why not (starts each one once)."""
    found: dict[str, str | None] = {}
    for name in BACKENDS:
        try:
            _create(name, project_root).close()
            found[name] = None
        except SandboxUnavailable as error:
            found[name] = str(error)
    return found
