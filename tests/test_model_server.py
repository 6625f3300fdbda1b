"""The offline model shared by a Jupyter server's notebooks, for real: llama.cpp's own
OpenAI-compatible server (``llama_cpp.server``) run by :class:`sqlnb.server.process.ModelProcess`
on the tiny GGUF model the tests write (tests/tiny_gguf.py), kernels that resolve
``llamacpp:`` to it, and the Jupyter server extension that starts and stops it.

The bad cases are real too: a process killed in the middle of an answer (started again, the
call made again), killed for good (a ModelError with a hint), a missing or broken model file,
a taken port."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from sqlnb import errors
from sqlnb.agent.download import runtime
from sqlnb.agent.models import LlamaCppChatModel, ModelClient, describe_model, llamacpp, resolve_model
from sqlnb.agent.models.llamaserver import (
    MODEL_SERVER_ENV,
    MODEL_SERVER_FILE_ENV,
    LlamaServerChatModel,
    read_runtime,
    shared_server,
)
from sqlnb.server import process as model_process
from sqlnb.server.process import ModelProcess, port_taken
from tests.tiny_gguf import write_tiny_llama

pytest.importorskip("fastapi", reason="llama-cpp-python[server] (sqlnb[local]) is not installed")

MESSAGES = [("system", "You write SQL for a SQLite database."), ("human", "How many singers?")]
ROOT = Path(__file__).resolve().parents[1]
LOAD_S = 120  # the tiny model loads in about a second; a busy machine gets room


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    return write_tiny_llama(tmp_path_factory.mktemp("gguf") / "tiny.gguf")


def _start(tiny_model, runtime_file, **kwargs) -> ModelProcess:
    proc = ModelProcess(tiny_model, runtime_file, n_ctx=512, n_threads=1, **kwargs)
    proc.start()
    assert proc.wait(LOAD_S) == "ready", proc.status()
    return proc


@pytest.fixture(scope="module")
def served(tiny_model, tmp_path_factory):
    """One model process for the module's tests (started again by the tests that kill it)."""
    proc = _start(tiny_model, tmp_path_factory.mktemp("runtime") / "sqlnb-model-test.json")
    yield proc
    proc.stop()


@pytest.fixture
def kernel_env(served, monkeypatch):
    """What a kernel of the Jupyter server sees: the runtime file's path."""
    monkeypatch.setenv(MODEL_SERVER_FILE_ENV, str(served.runtime_file))
    monkeypatch.delenv(MODEL_SERVER_ENV, raising=False)
    monkeypatch.setattr(llamacpp, "_LLAMAS", {})
    yield served
    llamacpp._close_llamas()


def _get(url: str, route: str, token: str | None = None, scheme: str = "Bearer") -> int:
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    conn.request("GET", route, headers={"Authorization": f"{scheme} {token}"} if token else {})
    response = conn.getresponse()
    response.read()
    conn.close()
    return response.status


# --- the process ------------------------------------------------------------------------------
def test_the_process_listens_on_loopback_and_wants_its_token(served):
    data = read_runtime(served.runtime_file)
    assert data["state"] == "ready" and data["pid"] == served.pid and data["model_path"] == served.model_path
    assert data["url"] == f"http://127.0.0.1:{data['port']}" and data["token"] == served.token
    # the runtime file holds the token: its owner alone reads it
    assert stat.S_IMODE(os.stat(served.runtime_file).st_mode) == 0o600
    assert _get(served.url, "/v1/models", served.token) == 200
    assert _get(served.url, "/v1/models") == 401
    assert _get(served.url, "/v1/models", "not-the-token") == 401
    # the token is nowhere on the process's command line (which every user can read)
    cmdline = Path(f"/proc/{served.pid}/cmdline").read_bytes().decode()
    assert served.token not in cmdline
    # and it listens on loopback only: not on the machine's other addresses
    with socket.create_connection(("127.0.0.1", served.port), timeout=5):
        pass
    status = served.status()
    assert status["state"] == "ready" and status["model"] == "llamacpp:tiny"
    assert "token" not in json.dumps(status) and served.token not in json.dumps(status)


def test_a_missing_model_file_is_a_configuration_error_with_the_download_command(tmp_path):
    proc = ModelProcess(tmp_path / "qwen.gguf", tmp_path / "runtime.json")
    with pytest.raises(errors.ConfigurationError) as info:
        proc.start()
    assert str(tmp_path / "qwen.gguf") in info.value.message
    assert info.value.hint == "sqlnb model download qwen2.5-coder-1.5b"
    assert not (tmp_path / "runtime.json").exists() and proc.pid == 0


def test_a_file_that_is_no_model_fails_with_the_log_and_what_to_do(tmp_path):
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"not a gguf file" * 100)
    proc = ModelProcess(broken, tmp_path / "runtime.json", n_ctx=512, n_threads=1)
    proc.start()
    assert proc.wait(LOAD_S) == "failed"
    status = proc.status()
    assert "exited while loading" in status["error"] and "GGUF" in status["hint"]
    assert read_runtime(tmp_path / "runtime.json")["state"] == "failed"
    # a kernel does not use a failed process: it loads the model itself
    assert shared_server(str(broken), tmp_path / "runtime.json") is None
    proc.stop()
    assert not (tmp_path / "runtime.json").exists()


def test_a_taken_port_is_reported_and_another_one_used(tiny_model, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert port_taken(port)
        proc = _start(tiny_model, tmp_path / "runtime.json", port=port)
        try:
            assert proc.port != port and f"port {port} was taken" in proc.status()["note"]
            assert _get(proc.url, "/v1/models", proc.token) == 200
        finally:
            proc.stop()


def test_a_port_taken_while_the_model_loads_is_given_up_for_another(tiny_model, tmp_path, monkeypatch):
    """The port was free when chosen and taken by the time llama.cpp's server bound it (it
    binds after loading): the process is started again on another port."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        monkeypatch.setattr(model_process, "port_taken", lambda *a: False)  # seen free when chosen
        proc = _start(tiny_model, tmp_path / "runtime.json", port=port)
        try:
            assert proc.port != port and "taken while the model loaded" in proc.status()["note"]
            assert "address already in use" in proc.log_file.read_text().lower()
        finally:
            proc.stop()


def test_install_checks_the_packages_of_an_extra():
    assert runtime.missing_requirements(["llama-cpp-python[server]==0.3.36"]) == []
    assert runtime.missing_requirements(["llama-cpp-python==0.0.1"]) == ["llama-cpp-python==0.0.1"]
    # an extra of an installed package whose packages are not all there
    assert runtime.missing_requirements(["pandas[no-such-extra-xyz]"]) == []
    pandas_extras = {"performance", "aws", "gcp", "excel", "parquet", "feather", "hdf5", "spss"}
    missing = runtime.missing_requirements([f"pandas[{e}]" for e in sorted(pandas_extras)])
    assert missing, "some optional package of pandas' extras should be missing here"


# --- kernels -----------------------------------------------------------------------------------
def test_a_kernel_resolves_the_model_to_the_shared_process(tiny_model, kernel_env):
    model = resolve_model(f"llamacpp:{tiny_model}", max_tokens=16)
    assert isinstance(model, LlamaServerChatModel)
    assert describe_model(model) == "llamacpp:tiny"
    client = ModelClient(model)
    text, usage = client.invoke(MESSAGES)
    assert isinstance(text, str) and text
    assert usage["calls"] == 1 and usage["input_tokens"] > 10 and 0 < usage["output_tokens"] <= 16 + 4
    assert client.invoke(MESSAGES)[0] == text  # greedy: the same reply again
    one = client.invoke(MESSAGES, temperature=0.9, seed=1)[0]
    assert client.invoke(MESSAGES, temperature=0.9, seed=1)[0] == one  # a seed repeats a sample
    assert {client.invoke(MESSAGES, temperature=0.9, seed=s)[0] for s in (2, 3, 4)} - {one}
    # the options a draft gets: its stop sequences and token cap
    _, usage = client.invoke(MESSAGES, temperature=0.7, seed=5, draft=True)
    assert usage["output_tokens"] <= 320 + 4
    assert not llamacpp._LLAMAS, "the kernel loaded no model of its own"


def test_the_shared_model_streams_its_reply_with_the_usage_last(tiny_model, kernel_env):
    model = resolve_model(f"llamacpp:{tiny_model}", max_tokens=16)
    whole = model.invoke(MESSAGES)
    chunks = list(model.stream(MESSAGES))
    assert len(chunks) > 2
    assert "".join(c.content for c in chunks) == whole.content
    # the usage on the last piece sqlnb gives (LangChain may add an empty closing chunk)
    with_usage = [i for i, c in enumerate(chunks) if c.usage_metadata]
    assert len(with_usage) == 1 and not any(c.content for c in chunks[with_usage[0] :])
    last = chunks[with_usage[0]]
    assert 0 < last.usage_metadata["output_tokens"] <= 16
    assert last.response_metadata["finish_reason"] in ("length", "stop")


def test_a_prompt_too_long_for_the_shared_model_says_how_long(tiny_model, kernel_env):
    """The process's context (512 tokens here) refuses a longer prompt in its own words; the
    kernel reads the counts from them, so the agent can cut the schema to fit."""
    client = ModelClient(resolve_model(f"llamacpp:{tiny_model}", max_tokens=16))
    with pytest.raises(errors.ContextTooLong) as info:
        client.invoke([("human", "count the rows " * 200)])
    assert info.value.window == 512 and info.value.requested > 512
    assert "SqlnbModelServer.n_ctx" in info.value.hint
    assert client.invoke(MESSAGES)[0]  # the process still answers afterwards


def test_a_kernel_loads_its_own_model_when_the_process_is_off_or_serves_another(
    tiny_model, kernel_env, monkeypatch, tmp_path
):
    other = write_tiny_llama(tmp_path / "other.gguf", seed=1)
    assert isinstance(resolve_model(f"llamacpp:{other}", max_tokens=8), LlamaCppChatModel)
    # side by side replies are in-process only
    assert isinstance(resolve_model(f"llamacpp:{tiny_model}", parallel=True), LlamaCppChatModel)
    monkeypatch.setenv(MODEL_SERVER_ENV, "off")
    assert isinstance(resolve_model(f"llamacpp:{tiny_model}", max_tokens=8), LlamaCppChatModel)
    monkeypatch.delenv(MODEL_SERVER_ENV)
    monkeypatch.setenv(MODEL_SERVER_FILE_ENV, str(tmp_path / "no-such-runtime.json"))
    assert isinstance(resolve_model(f"llamacpp:{tiny_model}", max_tokens=8), LlamaCppChatModel)


def test_a_fresh_process_like_a_restarted_kernel_answers_from_the_loaded_model(tiny_model, kernel_env):
    code = (
        "import sys, time; t = time.perf_counter()\n"
        "from sqlnb.agent.models import resolve_model\n"
        f"m = resolve_model('llamacpp:{tiny_model}', max_tokens=8)\n"
        "reply = m.invoke('How many singers?')\n"
        "print(type(m).__name__, reply.usage_metadata['output_tokens'] > 0)\n"
    )
    env = {**os.environ, MODEL_SERVER_FILE_ENV: str(kernel_env.runtime_file)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["LlamaServerChatModel", "True"]


def test_a_process_killed_during_an_answer_is_started_again_and_the_call_made_again(tiny_model, kernel_env):
    served = kernel_env
    model = resolve_model(f"llamacpp:{tiny_model}", max_tokens=16)
    expected = model.invoke(MESSAGES).content
    first_pid, restarts = served.pid, served.restarts
    # frozen, the process takes the call without answering; killed, it breaks the connection
    os.kill(first_pid, signal.SIGSTOP)
    box = {}
    call = threading.Thread(target=lambda: box.update(reply=ModelClient(model).invoke(MESSAGES)))
    call.start()
    time.sleep(1.0)
    os.kill(first_pid, signal.SIGKILL)
    call.join(LOAD_S)
    assert not call.is_alive()
    text, usage = box["reply"]
    assert text == expected and usage["calls"] == 1
    assert served.state == "ready" and served.pid != first_pid and served.restarts == restarts + 1
    assert read_runtime(served.runtime_file)["pid"] == served.pid


def test_a_process_that_stays_dead_is_a_model_error_that_says_what_to_do(tiny_model, tmp_path, monkeypatch):
    proc = _start(tiny_model, tmp_path / "runtime.json", max_restarts=0)
    try:
        monkeypatch.setenv(MODEL_SERVER_FILE_ENV, str(proc.runtime_file))
        model = resolve_model(f"llamacpp:{tiny_model}", max_tokens=8)
        assert isinstance(model, LlamaServerChatModel)
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait_for(lambda p: p.state == "failed", 30)
        with pytest.raises(errors.ModelError) as info:
            ModelClient(model).invoke(MESSAGES)
        assert "the shared model process failed" in info.value.message
        assert "restart Jupyter" in info.value.hint
    finally:
        proc.stop()
    # the Jupyter server gone (the runtime file removed): the kernel is told to restart
    with pytest.raises(errors.ModelError) as info:
        ModelClient(model).invoke(MESSAGES)
    assert "gone" in info.value.message and "restart the kernel" in info.value.hint


def _gone(pid: int, timeout: float) -> bool:
    """Whether process ``pid`` ended within ``timeout`` s (a zombie left unreaped counts)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z"):
                return True
        except (FileNotFoundError, IndexError):
            return True
        time.sleep(0.2)
    return False


def test_a_model_process_ends_itself_when_its_jupyter_server_is_killed(tiny_model, tmp_path, monkeypatch):
    runtime_file = tmp_path / "sqlnb-model-killed.json"
    code = (
        "import sys, time\n"
        "from sqlnb.server.process import ModelProcess\n"
        f"p = ModelProcess({str(tiny_model)!r}, {str(runtime_file)!r}, n_ctx=512, n_threads=1)\n"
        "p.start(); print(p.wait(120), p.pid, flush=True); time.sleep(600)\n"
    )
    owner = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        state, pid = owner.stdout.readline().split()
        assert state == "ready"
        monkeypatch.setenv(MODEL_SERVER_FILE_ENV, str(runtime_file))
        model = resolve_model(f"llamacpp:{tiny_model}", max_tokens=8)
        assert isinstance(model, LlamaServerChatModel)
    finally:
        owner.kill()  # no shutdown of its own: as a Jupyter server killed with SIGKILL
        owner.wait(10)
    assert _gone(int(pid), 15), "the model process outlived the process that started it"
    # its runtime file is left behind, but kernels see that nobody serves it
    assert read_runtime(runtime_file)["state"] == "ready"
    assert shared_server(str(tiny_model), runtime_file) is None
    started = time.monotonic()
    with pytest.raises(errors.ModelError) as info:
        ModelClient(model).invoke(MESSAGES)
    assert "gone" in info.value.message and time.monotonic() - started < 10


# --- the Jupyter server extension ----------------------------------------------------------------
def _server_get(port: int, token: str | None, route: str = "/sqlnb/model") -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", route, headers={"Authorization": f"token {token}"} if token else {})
    response = conn.getresponse()
    body = response.read()
    conn.close()
    try:
        return response.status, json.loads(body)
    except ValueError:
        return response.status, {}


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:  # it ended meanwhile
        return b""


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)


def _jupyter(tmp_path: Path, **env_vars: str) -> tuple[subprocess.Popen, int, str]:
    """A real Jupyter server with sqlnb's extension, its runtime files in tmp_path."""
    pytest.importorskip("jupyter_server")
    token, port = "sqlnb-test-token", model_process.free_port()
    env = {
        **os.environ,
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
    }
    env.pop(MODEL_SERVER_FILE_ENV, None)
    env.pop(MODEL_SERVER_ENV, None)
    env.update(env_vars)
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyter_server",
            "--no-browser",
            f"--port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={tmp_path}",
            "--ServerApp.jpserver_extensions={'sqlnb.server': True}",
            "--SqlnbModelServer.n_ctx=512",
            "--ServerApp.allow_root=True",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(tmp_path / "server.log", "wb"),  # noqa: SIM115 - closed with the process
    )
    return server, port, token


def _settled(server: subprocess.Popen, port: int, token: str) -> dict | None:
    """``GET /sqlnb/model`` once the state is no longer ``loading`` (each reading while it
    loads says for how long)."""
    deadline, status = time.monotonic() + LOAD_S, None
    while time.monotonic() < deadline and server.poll() is None:
        try:
            code, status = _server_get(port, token)
        except OSError:
            time.sleep(0.3)
            continue
        if code == 200 and status["state"] != "loading":
            return status
        assert code == 200 and status["state"] == "loading" and status["seconds_loading"] is not None
        time.sleep(0.3)
    return status


def _end_server(server: subprocess.Popen) -> None:
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(60)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait(10)


def test_the_jupyter_server_starts_the_process_tells_its_kernels_and_stops_it(tiny_model, tmp_path):
    server, port, token = _jupyter(tmp_path, SQLNB_MODEL=f"llamacpp:{tiny_model}")
    runtime_dir = tmp_path / "runtime"
    try:
        status = _settled(server, port, token)
        log = (tmp_path / "server.log").read_text()
        assert status and status["state"] == "ready", f"{status}\n{log[-3000:]}"
        assert status["model"] == "llamacpp:tiny" and "token" not in status
        assert _server_get(port, None)[0] == 403  # the handler wants the Jupyter server's token
        runtime = runtime_dir / f"sqlnb-model-{server.pid}.json"
        data = read_runtime(runtime)
        assert data["state"] == "ready" and stat.S_IMODE(os.stat(runtime).st_mode) == 0o600
        model_pid = data["pid"]
        assert model_pid in _children(server.pid)
        # a kernel the server starts finds the process in its environment
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("POST", "/api/kernels", body="{}", headers={"Authorization": f"token {token}"})
        assert conn.getresponse().status == 201
        conn.close()
        kernels = [p for p in _children(server.pid) if p != model_pid]
        assert kernels and _environ(kernels[0]).get(MODEL_SERVER_FILE_ENV) == str(runtime)
    finally:
        _end_server(server)
    # stopped with the server: the model process and its runtime file are gone
    assert _gone(model_pid, 15)
    assert not runtime.exists()


def test_the_jupyter_server_starts_no_process_when_it_is_off(tiny_model, tmp_path):
    server, port, token = _jupyter(tmp_path, SQLNB_MODEL=f"llamacpp:{tiny_model}", SQLNB_MODEL_SERVER="off")
    try:
        status = _settled(server, port, token)
        assert status and status["state"] == "off", (tmp_path / "server.log").read_text()[-3000:]
        assert not [pid for pid in _children(server.pid) if b"sqlnb.server.child" in _cmdline(pid)]
        assert not list((tmp_path / "runtime").glob("sqlnb-model-*"))
    finally:
        _end_server(server)


def test_the_jupyter_server_says_what_to_do_when_the_model_is_missing(tmp_path):
    server, port, token = _jupyter(tmp_path, SQLNB_MODEL="llamacpp:qwen2.5-coder-1.5b")
    try:
        status = _settled(server, port, token)
        assert status and status["state"] == "failed", (tmp_path / "server.log").read_text()[-3000:]
        assert "not downloaded" in status["error"]
        assert status["hint"] == "sqlnb model download qwen2.5-coder-1.5b"
    finally:
        _end_server(server)


def test_the_server_loads_the_model_the_kernels_would_use(tiny_model, monkeypatch, tmp_path):
    pytest.importorskip("jupyter_server")
    from sqlnb.server.extension import model_to_serve

    monkeypatch.delenv("SQLNB_MODEL", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert model_to_serve() is None  # no model downloaded (the tests' empty model folder)
    assert model_to_serve(f"llamacpp:{tiny_model}") == str(tiny_model)
    monkeypatch.setenv("SQLNB_MODEL", f"llamacpp:{tiny_model}")
    assert model_to_serve() == str(tiny_model)
    monkeypatch.setenv("SQLNB_MODEL", "anthropic:claude-sonnet-4-5")
    assert model_to_serve() is None
    monkeypatch.setenv("SQLNB_MODEL", "llamacpp:qwen2.5-coder-1.5b")
    with pytest.raises(errors.ConfigurationError) as info:
        model_to_serve()  # named but not downloaded: said with the command that downloads it
    assert info.value.hint == "sqlnb model download qwen2.5-coder-1.5b"
    # the offline model downloaded and no other chosen: the server loads it
    monkeypatch.delenv("SQLNB_MODEL")
    from sqlnb.agent.download.catalog import model_path

    downloaded = model_path("qwen2.5-coder-1.5b")
    downloaded.parent.mkdir(parents=True, exist_ok=True)
    downloaded.write_bytes(tiny_model.read_bytes())
    try:
        assert model_to_serve() == str(downloaded.resolve())
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
        assert model_to_serve() is None  # the kernels would ask Claude
    finally:
        downloaded.unlink()


def test_the_extension_is_shipped_with_the_package():
    config = json.loads((ROOT / "jupyter-config" / "jupyter_server_config.d" / "sqlnb.json").read_text())
    assert config["ServerApp"]["jpserver_extensions"] == {"sqlnb.server": True}
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"jupyter-config/jupyter_server_config.d/sqlnb.json" = "etc/jupyter/' in pyproject
    import sqlnb.server

    assert sqlnb.server._jupyter_server_extension_points() == [{"module": "sqlnb.server"}]


def test_the_warm_model_benchmark_measures_both_ways(tiny_model, tmp_path):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import warm_model

    assert warm_model.main(["--model", str(tiny_model), "--runs", "1", "--results-dir", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "warm_model.json").read_text())
    assert [r["model_class"] for r in data["in_kernel"]] == ["LlamaCppChatModel"]
    assert [r["model_class"] for r in data["shared"]] == ["LlamaServerChatModel"]
    assert all(r["same_reply_again"] for r in data["in_kernel"] + data["shared"])
    assert set(data["shared_memory"]["parts"]) == {"kernel 1", "kernel 2", "model process"}
    assert data["shared_memory"]["total"]["rss"] > 0 and data["server_load_s"] > 0
    text = (tmp_path / "warm_model.md").read_text()
    assert "Restart to answer" in text and "shared process" in text


def test_the_process_module_needs_no_jupyter_and_kernels_no_server_code():
    code = (
        "import sys\n"
        "import sqlnb.agent.models, sqlnb.server.process\n"
        "print(sorted(m for m in sys.modules if m.startswith(('jupyter_server', 'tornado', 'sqlnb.server.ext'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
    kernel = "import sys, sqlnb.agent.models; print(sorted(m for m in sys.modules if m.startswith('sqlnb.server')))"
    out = subprocess.run([sys.executable, "-c", kernel], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr


def test_the_model_process_keeps_no_logits_and_counts_its_prompt_states_in_full(monkeypatch, tmp_path):
    """llama_cpp.server's defaults keep a vocabulary's logits for every token read (5 GB of
    scores for an 8,192-token context, 1.1 GB copied into each prompt state kept): the shared
    process was killed for memory after a few questions. It loads the model without them, and
    its cache counts every byte of a state (sqlnb.agent.prompt_states)."""
    import llama_cpp
    import llama_cpp.server.app as server_app
    import uvicorn

    from sqlnb.server import child

    made: dict = {}
    monkeypatch.setattr(llama_cpp, "LlamaRAMCache", llama_cpp.LlamaRAMCache)  # put back after the test
    monkeypatch.setattr(server_app, "create_app", lambda **kw: made.update(kw) or "app")
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: made.update(ran=app))
    config = {
        "host": "127.0.0.1",
        "port": 1,
        "api_key": "k",
        "model": str(tmp_path / "m.gguf"),
        "cache_bytes": 1 << 20,
    }
    monkeypatch.setenv(child.CONFIG_ENV, json.dumps(config))
    monkeypatch.delenv(child.PARENT_ENV, raising=False)
    assert child.main() == 0 and made["ran"] == "app"
    (settings,) = made["model_settings"]
    assert settings.logits_all is False and settings.cache is True and settings.cache_size == 1 << 20
    assert llama_cpp.LlamaRAMCache.__name__ == "PromptStates"
