"""The Docker backend: a warm worker as the main process of a hardened container.

Settings (FACTS.md §2): no network, memory and pids limits, one CPU, read-only root with tmpfs
work dir and /tmp, all capabilities dropped, no-new-privileges, a non-root uid unique to the
container, and an init (tini) that reaps. The worker talks over the container's attach socket,
so nothing is copied into the read-only container. Podman works through DOCKER_HOST.
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
from pycapsule.sandbox.protocol import BOOTSTRAP, Transport, WorkerGone, WorkerTimeout
from pycapsule.sandbox.seccomp import LOADER as SECCOMP_LOADER
from pycapsule.sandbox.seccomp import filter_program
from pycapsule.sandbox.warm import WarmSandbox

WORK_DIR = "/tmp"  # a tmpfs; Docker gives tmpfs mounts the image dir's mode, and only /tmp is 1777 there
PROJECT_DIR = "/project"
STREAM_HEADER = struct.Struct(">BxxxI")  # Docker's multiplexed attach stream: kind, size
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


class AttachTransport(Transport):
    """The worker's stdin/stdout through Docker's attach socket (stdout and stderr multiplexed)."""

    def __init__(self, client: Any, container: Any):
        self.client = client
        self.container = container
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

    def diagnostics(self) -> str:
        return self._stderr.decode("utf-8", "replace")


class DockerSandbox(WarmSandbox):
    name = "docker"
    foreign_uid = True
    start_timeout = 60.0

    def __init__(self, project_root: Path | None = None, limits: Limits = DEFAULT_LIMITS,
                 image: str | None = None):
        super().__init__(project_root, limits)
        self.client = connect()
        self.image = image or image_tag()
        if image_python(self.client, self.image) is None:
            raise SandboxUnavailable(
                f"the Docker sandbox image {self.image} is not built; run `pycapsule sandbox build-image`."
            )
        self.uid = 1_000_000 + secrets.randbelow(1_000_000_000)

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
        if project_root is not None and project_root.is_dir():  # Docker would create a missing one
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

    def _launch(self, project_root: Path | None) -> tuple[Transport, dict[str, Any]]:
        container = self.create_container(self.container_settings(project_root))
        try:
            transport = AttachTransport(self.client, container)
            container.start()
        except Exception:
            with contextlib.suppress(Exception):
                container.remove(force=True)
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
