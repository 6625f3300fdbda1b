"""The shared model process: llama.cpp's OpenAI-compatible server (``python -m
llama_cpp.server``) run as a child process, bound to 127.0.0.1 on a free port with a random
token, its state kept in a runtime file (:mod:`sqlnb.agent.models.llamaserver`) that the
kernels read.  Nothing here needs Jupyter: the server extension (:mod:`sqlnb.server`) starts
one :class:`ModelProcess` and stops it with the server.

A process that exits after it was ready is started again (at most ``max_restarts`` times);
one that exits while loading is ``failed``, with the end of its log as the error.  When the
port it was given is taken, another free port is used and the change is reported.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlnb.agent.models.llamaserver import (
    ServerInfo,
    healthy,
    missing_model_error,
    write_runtime,
)
from sqlnb.errors import MissingDriverError
from sqlnb.server.child import CONFIG_ENV, PARENT_ENV

__all__ = ["SERVER_MODULES", "ModelProcess", "free_port", "port_taken"]

# what ``python -m llama_cpp.server`` imports (llama-cpp-python[server], in sqlnb[local])
SERVER_MODULES = (
    "llama_cpp",
    "fastapi",
    "uvicorn",
    "sse_starlette",
    "starlette_context",
    "pydantic_settings",
)

log = logging.getLogger("sqlnb.server")


def port_taken(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something listens on (or holds) ``host:port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return True
    return False


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing uses on ``host`` now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _threads() -> int:
    from sqlnb.agent.models.llamacpp import _default_threads

    return _default_threads()


def _cache_bytes() -> int:
    """Memory for kept prompt states, as the in-kernel model keeps them
    (``SQLNB_LLAMA_CACHE_MB``; 0 where that model keeps none)."""
    from sqlnb.agent.models import llamacpp

    reader = getattr(llamacpp, "_cache_bytes", None)
    return int(reader()) if reader is not None else 0


class ModelProcess:
    """One llama.cpp server process for ``model_path``, its state in ``runtime_file``.

    :meth:`start` returns at once: the process loads in the background (state ``loading``,
    then ``ready`` or ``failed``); :meth:`wait` waits for it; :meth:`stop` ends it and
    removes the runtime file.  :meth:`status` is what ``GET /sqlnb/model`` answers (no token).
    """

    READY_POLL = 0.25

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        runtime_file: str | os.PathLike[str],
        *,
        port: int = 0,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        max_restarts: int = 3,
        load_timeout: float = 900.0,
        python: str = sys.executable,
        log_file: str | os.PathLike[str] | None = None,
        name: str | None = None,
        on_change: Callable[[dict[str, Any]], None] | None = None,
    ):
        self.model_path = str(model_path)
        self.runtime_file = Path(runtime_file)
        self.wanted_port = int(port)
        self.n_ctx = int(n_ctx)
        self.n_threads = n_threads
        self.max_restarts = max_restarts
        self.load_timeout = load_timeout
        self.python = python
        self.log_file = Path(log_file) if log_file else self.runtime_file.with_suffix(".log")
        self.name = name or f"llamacpp:{Path(self.model_path).stem}"
        self.on_change = on_change
        self.token = secrets.token_urlsafe(32)
        self.port = 0
        self.state = "stopped"
        self.error: str | None = None
        self.hint: str | None = None
        self.note: str | None = None  # e.g. the port it was given was taken
        self.restarts = 0
        self.loading_since: float | None = None
        self.loaded_seconds: float | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._changed = threading.Condition(self._lock)

    # --- public --------------------------------------------------------------------
    @property
    def pid(self) -> int:
        proc = self._proc
        return proc.pid if proc is not None else 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def check(self) -> None:
        """:class:`~sqlnb.errors.ConfigurationError` when the model file is missing,
        :class:`~sqlnb.errors.MissingDriverError` when llama-cpp-python's server is not
        installed: what :meth:`start` checks before it starts anything."""
        if not Path(self.model_path).is_file():
            raise missing_model_error(self.model_path)
        missing = [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]
        if missing:
            raise MissingDriverError(
                f"llama.cpp's server cannot run: {', '.join(missing)} not installed",
                hint="pip install 'sqlnb[local]' (it includes llama-cpp-python[server])",
            )

    def start(self) -> None:
        """Check, then start loading in the background (returns at once)."""
        self.check()
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._stopping.clear()
            self.restarts = 0
            self._set("loading", error=None, hint=None)
            self._thread = threading.Thread(target=self._run, name="sqlnb-model-process", daemon=True)
            self._thread.start()

    def wait(self, timeout: float | None = None) -> str:
        """Wait until the process is ready, failed or stopped (or ``timeout`` s); the state."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._changed:
            while self.state == "loading":
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    break
                self._changed.wait(left)
            return self.state

    def wait_for(self, predicate: Callable[[ModelProcess], bool], timeout: float) -> bool:
        """Wait until ``predicate(self)`` holds (checked on each change of state)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not predicate(self):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
            return True

    def stop(self, timeout: float = 10.0) -> None:
        """End the process (SIGTERM, then SIGKILL) and remove the runtime file."""
        self._stopping.set()
        proc = self._proc
        if proc is not None:
            _end(proc, timeout)
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        with self._lock:
            self._set("stopped")
        try:
            self.runtime_file.unlink()
        except FileNotFoundError:
            pass

    def status(self) -> dict[str, Any]:
        """The state for people and the sidebar: no token, no URL."""
        seconds = None
        if self.state == "loading" and self.loading_since is not None:
            seconds = round(time.monotonic() - self.loading_since, 1)
        return {
            "state": self.state,
            "model": self.name,
            "model_path": self.model_path,
            "seconds_loading": seconds,
            "load_seconds": self.loaded_seconds,
            "error": self.error,
            "hint": self.hint,
            "note": self.note,
            "restarts": self.restarts,
            "pid": self.pid or None,
        }

    def info(self) -> ServerInfo:
        return ServerInfo(self.url, self.token, self.model_path, self.pid, self.state, self.error, self.hint)

    # --- the background thread -------------------------------------------------------
    def _set(self, state: str, **fields: Any) -> None:
        """Change the state (the lock held) and write the runtime file."""
        for key, value in fields.items():
            setattr(self, key, value)
        if state == "loading" and self.state != "loading":
            self.loading_since = time.monotonic()
        if state == "ready" and self.loading_since is not None:
            self.loaded_seconds = round(time.monotonic() - self.loading_since, 1)
        self.state = state
        if state != "stopped":
            write_runtime(
                self.runtime_file,
                {
                    "url": self.url,
                    "port": self.port,
                    "token": self.token,
                    "model_path": self.model_path,
                    "model": self.name,
                    "pid": self.pid,
                    "server_pid": os.getpid(),
                    "state": state,
                    "error": self.error,
                    "hint": self.hint,
                    "note": self.note,
                    "restarts": self.restarts,
                    "updated": time.time(),
                },
            )
        self._changed.notify_all()
        if self.on_change is not None:
            try:
                self.on_change(self.status())
            except Exception:  # a listener's failure is no failure of the model
                log.exception("sqlnb: the model process's listener failed")

    def _pick_port(self) -> int:
        if self.wanted_port and not port_taken(self.wanted_port):
            return self.wanted_port
        port = free_port()
        if self.wanted_port:
            self.note = f"port {self.wanted_port} was taken, so the model process uses port {port}"
            log.warning("sqlnb: %s", self.note)
        return port

    def _config(self) -> dict[str, Any]:
        return {
            "host": "127.0.0.1",
            "port": self.port,
            "api_key": self.token,
            "model": self.model_path,
            "n_ctx": self.n_ctx,
            "n_threads": self.n_threads or _threads(),
            "cache_bytes": _cache_bytes(),
        }

    def _spawn(self) -> subprocess.Popen[bytes]:
        env = dict(os.environ)
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as in-process: no spinning threads
        env[PARENT_ENV] = str(os.getpid())
        # the settings, token included, travel in the environment, which only this user
        # can read (/proc/PID/environ), not on the command line, which everyone can
        env[CONFIG_ENV] = json.dumps(self._config())
        with open(self.log_file, "ab") as out:
            os.chmod(self.log_file, 0o600)
            return subprocess.Popen(
                [self.python, "-m", "sqlnb.server.child"],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,  # a Ctrl+C in the terminal reaches Jupyter, which stops it
            )

    def _log_tail(self, lines: int = 6) -> str:
        try:
            text = self.log_file.read_text(errors="replace")
        except OSError:
            return ""
        tail = [line for line in text.strip().splitlines() if line.strip()][-lines:]
        return " | ".join(tail)

    def _run(self) -> None:
        """Start the process, wait until it answers, watch it; start it again when it dies
        after it was ready."""
        port_tries = 0
        while not self._stopping.is_set():
            with self._lock:
                self.port = self._pick_port()
                self._proc = proc = self._spawn()
                self._set("loading")
            ready = self._await_ready(proc)
            if self._stopping.is_set():
                return
            if ready:
                with self._lock:
                    self._set("ready", error=None, hint=None)
                proc.wait()
                if self._stopping.is_set():
                    return
                code = proc.returncode
                if self.restarts >= self.max_restarts:
                    with self._lock:
                        self._set(
                            "failed",
                            error=f"the model process exited (code {code}) {self.restarts + 1} times",
                            hint="restart Jupyter; its log: " + str(self.log_file),
                        )
                    return
                log.warning("sqlnb: the model process exited (code %s); starting it again", code)
                with self._lock:
                    self.restarts += 1
                continue
            # it exited (or hung) while loading
            tail = self._log_tail()
            if proc.poll() is None:
                _end(proc, 5.0)
                error = f"the model did not load within {self.load_timeout:g} s"
            else:
                error = f"the model process exited while loading (code {proc.returncode})"
            if ("address already in use" in tail.lower() or "errno 98" in tail.lower()) and port_tries < 3:
                port_tries += 1  # another program took the port meanwhile: another one
                self.note = f"port {self.port} was taken while the model loaded; trying another"
                log.warning("sqlnb: %s", self.note)
                self.wanted_port = 0
                continue
            with self._lock:
                self._set(
                    "failed",
                    error=f"{error}: {tail}" if tail else error,
                    hint="check that the file is a GGUF model (else delete it and run `sqlnb model "
                    "download qwen2.5-coder-1.5b` again); the full log: " + str(self.log_file),
                )
            return

    def _await_ready(self, proc: subprocess.Popen[bytes]) -> bool:
        deadline = time.monotonic() + self.load_timeout
        info = ServerInfo(self.url, self.token, self.model_path, proc.pid, "loading")
        while time.monotonic() < deadline and not self._stopping.is_set():
            if proc.poll() is not None:
                return False
            if healthy(info, timeout=1.0):
                return True
            self._stopping.wait(self.READY_POLL)
        return False


def _end(proc: subprocess.Popen[bytes], timeout: float) -> None:
    if proc.poll() is not None:
        return
    try:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout)
    except ProcessLookupError:
        pass
