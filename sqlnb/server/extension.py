"""The Jupyter side of the shared model process: which model to load, the process started
with the server and stopped with it, the kernels told where it is, and ``GET /sqlnb/model``.
"""

from __future__ import annotations

import atexit
import json
import os
import time
from pathlib import Path
from typing import Any

from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado import web
from traitlets import Bool, Int, Unicode
from traitlets.config import LoggingConfigurable

from sqlnb.agent.models.llamaserver import MODEL_SERVER_FILE_ENV, server_disabled
from sqlnb.errors import SqlnbError
from sqlnb.server.process import ModelProcess

__all__ = ["ModelHandler", "SqlnbModelServer", "load", "model_to_serve", "unload"]

_KEY = "sqlnb_model_server"
_LLAMA = ("llamacpp", "llama_cpp", "llama.cpp")


class SqlnbModelServer(LoggingConfigurable):
    """The offline model's process shared by the notebooks of this Jupyter server
    (``c.SqlnbModelServer.*`` in ``jupyter_server_config.py``)."""

    enabled = Bool(
        True,
        config=True,
        help="Load the offline model once for every notebook of this server (False, or "
        "SQLNB_MODEL_SERVER=off: each kernel loads its own).",
    )
    model = Unicode(
        "",
        config=True,
        help="The llamacpp: model to load; empty: the one kernels would use (SQLNB_MODEL, "
        "else the downloaded offline model when no ANTHROPIC_API_KEY is set).",
    )
    port = Int(0, config=True, help="The model process's port on 127.0.0.1 (0: a free one).")
    n_ctx = Int(8192, config=True, help="The model's context size in tokens.")


def model_to_serve(spec: str = "") -> str | None:
    """The model file the kernels of this server would load in-process: from ``spec``, else
    ``$SQLNB_MODEL``, else the downloaded offline model when no Anthropic key is set (the
    order of :func:`~sqlnb.agent.models.resolve_model`); None when they use another model.
    :class:`~sqlnb.errors.ConfigurationError` (with the download command) when a
    ``llamacpp:`` model is named but not there."""
    from sqlnb.agent.download.catalog import DEFAULT_MODEL, offline_model
    from sqlnb.agent.models.spec import MODEL_ENV, _llama_model_path

    spec = spec.strip() or os.environ.get(MODEL_ENV, "").strip()
    if spec:
        provider, _, name = spec.partition(":")
        if provider.strip().lower() not in _LLAMA or not name.strip():
            return None
        return _llama_model_path(name.strip())
    if os.environ.get("ANTHROPIC_API_KEY"):
        return None
    if offline_model() is None:
        return None
    return _llama_model_path(DEFAULT_MODEL)


class _Shared:
    """What the handler reads: the process, or why there is none."""

    def __init__(self) -> None:
        self.process: ModelProcess | None = None
        self.state = "none"
        self.error: str | None = None
        self.hint: str | None = None
        self.model: str | None = None

    def status(self) -> dict[str, Any]:
        if self.process is not None:
            return self.process.status()
        return {
            "state": self.state,
            "model": self.model,
            "seconds_loading": None,
            "error": self.error,
            "hint": self.hint,
        }


class ModelHandler(APIHandler):
    """``GET /sqlnb/model``: the shared model's state, for the sidebar (no token in it)."""

    @web.authenticated
    def get(self) -> None:
        shared: _Shared = self.settings[_KEY]
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(shared.status()))


def load(serverapp: Any) -> None:
    """Start the model process (in the background) when the offline model is the one to
    serve; register ``GET /sqlnb/model``."""
    settings = SqlnbModelServer(parent=serverapp)
    shared = _Shared()
    web_app = serverapp.web_app
    web_app.settings[_KEY] = shared
    web_app.add_handlers(
        ".*$", [(url_path_join(web_app.settings["base_url"], "sqlnb", "model"), ModelHandler)]
    )
    if server_disabled() or not settings.enabled:
        shared.state = "off"
        serverapp.log.info("sqlnb: the shared model process is off; kernels load their own model")
        return
    try:
        path = model_to_serve(settings.model)
    except SqlnbError as exc:
        shared.state, shared.error, shared.hint = "failed", exc.message, exc.hint
        serverapp.log.warning("sqlnb: no shared model process: %s (%s)", exc.message, exc.hint)
        return
    if path is None:
        serverapp.log.info("sqlnb: no offline model to share (the kernels use another model)")
        return
    runtime_dir = Path(serverapp.runtime_dir)
    runtime_dir.mkdir(parents=True, exist_ok=True)
    runtime = runtime_dir / f"sqlnb-model-{os.getpid()}.json"
    process = ModelProcess(path, runtime, port=settings.port, n_ctx=settings.n_ctx)
    shared.model = process.name
    try:
        process.start()
    except SqlnbError as exc:
        shared.state, shared.error, shared.hint = "failed", exc.message, exc.hint
        serverapp.log.warning("sqlnb: no shared model process: %s (%s)", exc.message, exc.hint)
        return
    shared.process = process
    # kernels this server starts inherit its environment: they find the process there
    os.environ[MODEL_SERVER_FILE_ENV] = str(runtime)
    serverapp.log.info("sqlnb: loading %s in a process shared by the notebooks (%s)", process.name, runtime)
    started = time.monotonic()

    def said(status: dict[str, Any]) -> None:
        if status["state"] == "ready":
            serverapp.log.info("sqlnb: %s is ready (%.1f s)", process.name, time.monotonic() - started)
        elif status["state"] == "failed":
            serverapp.log.warning("sqlnb: the model process failed: %s (%s)", status["error"], status["hint"])

    process.on_change = said
    # jupyter_server has no stop hook for an extension without an app of its own: the
    # process stops when the server's Python exits (Ctrl+C, SIGTERM, File › Shut Down); when
    # the server is killed outright, the process notices and ends itself (child.py)
    atexit.register(unload, serverapp)


def unload(serverapp: Any) -> None:
    """Stop the model process with the Jupyter server."""
    shared: _Shared | None = serverapp.web_app.settings.get(_KEY)
    if shared is None or shared.process is None:
        return
    process, shared.process, shared.state = shared.process, None, "stopped"
    process.stop()
    if os.environ.get(MODEL_SERVER_FILE_ENV) == str(process.runtime_file):
        os.environ.pop(MODEL_SERVER_FILE_ENV, None)
    try:
        serverapp.log.info("sqlnb: the shared model process stopped")
    except Exception:  # the log may be closed at exit
        pass
