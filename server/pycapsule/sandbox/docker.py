"""The Docker backend: a warm worker as the main process of a hardened container.

Settings (FACTS.md §2): no network, memory and pids limits, one CPU, read-only root with tmpfs
work dir and /tmp, all capabilities dropped, no-new-privileges, a non-root uid unique to the
container, and an init (tini) that reaps. The worker talks over the container's attach socket,
so nothing is copied into the read-only container. Podman works through DOCKER_HOST.

The project folder is bind-mounted read-only, unless the engine may be on another machine (DOCKER_HOST
is not a local unix socket, or PYCAPSULE_DOCKER_PROJECT=copy), where a bind would show that machine's
folder, not ours: then a copy of the project (project_copy.py) is put into a fresh volume through a
helper container that is created and never started, and the volume is mounted read-only in its place;
a job finding the project changed since the copy gets a new worker with a new copy.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import struct
import time
from pathlib import Path
from typing import Any

from pycapsule.sandbox.api import SandboxUnavailable
from pycapsule.sandbox.image import image_python, image_tag
from pycapsule.sandbox.limits import DEFAULT_LIMITS, Limits
from pycapsule.sandbox.project_copy import fingerprint, project_archive, project_entries
from pycapsule.sandbox.protocol import BOOTSTRAP, Transport, WorkerGone, WorkerTimeout
from pycapsule.sandbox.seccomp import LOADER as SECCOMP_LOADER
from pycapsule.sandbox.seccomp import filter_program
from pycapsule.sandbox.warm import WarmSandbox, WarmWorker

WORK_DIR = "/tmp"  # a tmpfs; Docker gives tmpfs mounts the image dir's mode, and only /tmp is 1777 there
PROJECT_DIR = "/project"
STREAM_HEADER = struct.Struct(">BxxxI")  # Docker's multiplexed attach stream: kind, size
PROJECT_SETTING = "PYCAPSULE_DOCKER_PROJECT"
"""How the project reaches the container: `bind`, `copy`, or unset (auto: see copies_project)."""
PROJECT_LABEL = {"pycapsule.sandbox": "project"}
"""The label of project volumes: `docker volume prune --filter label=pycapsule.sandbox=project` removes any
a killed process left behind."""
ENGINE_HINT = (
    "start a Docker engine (or Podman's API service) and point DOCKER_HOST at it, "
    "e.g. DOCKER_HOST=unix:///run/podman/podman.sock"
)


def connect() -> Any:
    try:
        import docker
        import docker.errors
    except ImportError as error:  # pragma: no cover - docker is a dependency
        raise SandboxUnavailable("the docker Python package is missing; pip install docker.") from error
    where = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    try:
        client = docker.from_env(timeout=30)
        client.ping()
    except Exception as error:
        raise SandboxUnavailable(f"no Docker engine answers at {where}; {ENGINE_HINT}.") from error
    return client


def copies_project(environ: dict[str, str] | None = None) -> bool:
    """Whether the project must be copied into the container: PYCAPSULE_DOCKER_PROJECT=copy, or, unset, a
    DOCKER_HOST that is not a local unix socket (tcp://, ssh://...: possibly another machine)."""
    environ = dict(os.environ) if environ is None else environ
    setting = environ.get(PROJECT_SETTING, "").strip().lower()
    if setting in ("copy", "bind"):
        return setting == "copy"
    if setting:
        raise SandboxUnavailable(f"{PROJECT_SETTING} is {setting!r}; use copy, bind, or leave it unset")
    host = environ.get("DOCKER_HOST", "").strip()
    return bool(host) and not host.startswith(("unix://", "/", "npipe://"))


class AttachTransport(Transport):
    """The worker's stdin/stdout through Docker's attach socket (stdout and stderr multiplexed)."""

    def __init__(self, client: Any, container: Any, volume: Any = None):
        self.client = client
        self.container = container
        self.volume = volume
        """The project volume this container alone uses (copy mode), removed with it."""
        attached = client.api.attach_socket(
            container.id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
        )
        self._socket: socket.socket = getattr(attached, "_sock", attached)
        self._attached = attached
        self._raw = bytearray()
        self._stderr = bytearray()
        self._closed = False

    def send(self, data: bytes) -> None:
        try:
            self._socket.sendall(data)
        except OSError as error:
            raise WorkerGone(str(error)) from error

    def receive(self, deadline: float) -> bytes:
        while True:
            if len(self._raw) >= STREAM_HEADER.size:
                kind, size = STREAM_HEADER.unpack_from(self._raw)
                if len(self._raw) >= STREAM_HEADER.size + size:
                    payload = bytes(self._raw[STREAM_HEADER.size : STREAM_HEADER.size + size])
                    del self._raw[: STREAM_HEADER.size + size]
                    if kind == 1:
                        return payload
                    self._stderr = (self._stderr + payload)[-4000:]
                    continue
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WorkerTimeout()
            self._socket.settimeout(remaining)
            try:
                chunk = self._socket.recv(1 << 20)
            except TimeoutError as error:
                raise WorkerTimeout() from error
            except OSError as error:
                raise WorkerGone(str(error)) from error
            if not chunk:
                return b""
            self._raw += chunk

    def kill(self) -> None:
        if self._closed:
            return
        self._closed = True
        # close() alone leaves dockerd blocked on the hijacked connection (FACTS.md §2).
        with contextlib.suppress(OSError):
            self._socket.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(Exception):
            self._attached.close()
        with contextlib.suppress(Exception):
            self.container.remove(force=True)
        if self.volume is not None:
            remove_volume(self.volume)

    def diagnostics(self) -> str:
        return self._stderr.decode("utf-8", "replace")


class DockerSandbox(WarmSandbox):
    name = "docker"
    foreign_uid = True
    start_timeout = 60.0

    def __init__(self, project_root: Path | None = None, limits: Limits = DEFAULT_LIMITS,
                 image: str | None = None, python: str | None = None):
        super().__init__(project_root, limits)
        self.client = connect()
        self.image = image or image_tag()
        self.image_python = image_python(self.client, self.image)
        if self.image_python is None:
            raise SandboxUnavailable(
                f"the Docker sandbox image {self.image} is not built; run `pycapsule sandbox build-image`."
            )
        self.python = python
        """The project's interpreter, which this backend cannot use: its image has a Python of its own."""
        self.uid = 1_000_000 + secrets.randbelow(1_000_000_000)
        self.copy_project = copies_project()
        self._copied: dict[Path, str] = {}
        """Each copied project root's fingerprint at the time of its worker's copy."""

    def run_warnings(self) -> tuple[str, ...]:
        if self.python is None:
            return ()
        return (f"the docker sandbox runs its image's Python {self.image_python}, not {self.python}: the "
                "project's installed packages are not there (the bwrap backend runs the project's Python)",)

    def container_settings(self, project_root: Path | None) -> dict[str, Any]:
        import docker.types

        scratch = f"size={self.limits.scratch_bytes},mode=1777"
        memory = self.limits.sandbox_memory_bytes
        command = ["python3", "-I", "-c", BOOTSTRAP]
        program = filter_program()
        if program is not None:  # the socket families Docker's own profile allows (see seccomp.py)
            command = ["python3", "-I", "-c", SECCOMP_LOADER, program.hex(), "/usr/bin/python3", *command[1:]]
        settings: dict[str, Any] = {
            "command": command,
            "stdin_open": True,
            "tty": False,
            "init": True,
            "network_mode": "none",
            "mem_limit": memory,
            "memswap_limit": memory,
            "pids_limit": self.limits.processes + 8,
            "nano_cpus": 1_000_000_000,
            "read_only": True,
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"],
            "user": f"{self.uid}:{self.uid}",
            "tmpfs": {WORK_DIR: scratch},
            "ipc_mode": "private",
            "shm_size": self.limits.scratch_bytes,
            "ulimits": [docker.types.Ulimit(name="nofile", soft=self.limits.open_files,
                                            hard=self.limits.open_files),
                        docker.types.Ulimit(name="fsize", soft=self.limits.file_size_bytes,
                                            hard=self.limits.file_size_bytes)],
            "log_config": docker.types.LogConfig(type="json-file", config={"max-size": "1m"}),
            "environment": {"LANG": "C.UTF-8", "HOME": WORK_DIR},
            "working_dir": WORK_DIR,
            "hostname": "sandbox",
            "labels": {"pycapsule.sandbox": "worker"},
            "auto_remove": True,
        }
        if project_root is not None and project_root.is_dir() and not self.copy_project:
            # (Docker would create a missing one); a copied project's volume is added by _launch
            settings["volumes"] = {str(project_root): {"bind": PROJECT_DIR, "mode": "ro"}}
        return settings

    def create_container(self, settings: dict[str, Any]) -> Any:
        from docker.models.containers import _create_container_args

        version = self.client.api._version
        arguments = _create_container_args({"image": self.image, "version": version, **settings})
        config = self.client.api.create_container_config(**arguments)
        # The SDK has no switch for StdinOnce: when our attach connection goes (even if this process
        # dies without closing), the worker reads end-of-file, exits, and auto_remove deletes the container.
        config["StdinOnce"] = True
        created = self.client.api.create_container_from_config(config)
        return self.client.containers.get(created["Id"])

    def project_volume(self, project_root: Path) -> Any:
        """A new volume holding a copy of the project: filled through a helper container that is created
        (hardened as well) and never started, since a volume mounted read-only cannot be written."""
        entries = project_entries(project_root)
        snapshot = fingerprint(entries)
        volume = self.client.volumes.create(name=f"pycapsule-project-{secrets.token_hex(8)}",
                                            labels=PROJECT_LABEL)
        try:
            helper = self.client.containers.create(
                self.image, command=["true"], network_mode="none", read_only=True, user="65534:65534",
                volumes={volume.name: {"bind": PROJECT_DIR, "mode": "rw"}}, labels=PROJECT_LABEL)
            try:
                with project_archive(project_root, entries) as archive:
                    if not helper.put_archive(PROJECT_DIR, archive):
                        raise RuntimeError(f"the Docker engine refused the copy of {project_root}")
            finally:
                helper.remove(force=True)
        except Exception:
            remove_volume(volume)
            raise
        self._copied[project_root] = snapshot
        return volume

    def _worker(self, root: Path | None) -> WarmWorker:
        if self.copy_project and root is not None:
            worker = self._workers.get(root)
            if worker is not None and worker.alive and self._copied.get(root) != _current(root):
                with worker.lock:  # after its running job: the next job gets a worker with a new copy
                    worker.kill()
        return super()._worker(root)

    def _launch(self, project_root: Path | None) -> tuple[Transport, dict[str, Any]]:
        settings = self.container_settings(project_root)
        volume = None
        if self.copy_project and project_root is not None and project_root.is_dir():
            volume = self.project_volume(project_root)
            settings["volumes"] = {volume.name: {"bind": PROJECT_DIR, "mode": "ro"}}
        try:
            container = self.create_container(settings)
        except Exception:
            if volume is not None:
                remove_volume(volume)
            raise
        try:
            transport = AttachTransport(self.client, container, volume)
            container.start()
        except Exception:
            with contextlib.suppress(Exception):
                container.remove(force=True)
            if volume is not None:
                remove_volume(volume)
            raise
        init = {
            "op": "init",
            "sys_path_prepend": [PROJECT_DIR] if project_root is not None else [],
            "project_dir": PROJECT_DIR if project_root is not None else None,
            "work_dir": WORK_DIR,
            "clean_dirs": [WORK_DIR, "/dev/shm", "/dev/mqueue"],
            "own_pid_namespace": True,
            "own_ipc_namespace": True,
            "limits": self.limits.to_wire(),
        }
        return transport, init


def _current(root: Path) -> str | None:
    try:
        return fingerprint(project_entries(root))
    except Exception:  # too large now: the relaunch reports it
        return None


def remove_volume(volume: Any, wait: float = 5.0) -> None:
    """Remove a project volume once its container is gone (auto_remove may still be removing it)."""
    import docker.errors

    deadline = time.monotonic() + wait
    while True:
        try:
            volume.remove(force=True)
            return
        except docker.errors.NotFound:
            return
        except Exception:  # in use a moment longer, or the engine is gone: then the label finds it later
            if time.monotonic() >= deadline:
                return
            time.sleep(0.1)
