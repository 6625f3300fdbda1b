"""``llamacpp:`` through the Jupyter server's shared model process: one llama.cpp server per
Jupyter server (:mod:`sqlnb.server`), loaded once, shared by every notebook and kept across
kernel restarts.

The Jupyter server writes a *runtime file* (mode 0600) and names it to its kernels in
``$SQLNB_MODEL_SERVER_FILE``: the server's URL, its per-server token, the model file, the
process id and its ``state`` (``loading``, ``ready``, ``failed``, ``stopped``).
:func:`shared_server` reads it; :func:`resolve_model <sqlnb.agent.models.spec.resolve_model>`
then gives a :class:`LlamaServerChatModel`, which speaks the OpenAI chat API
(``/v1/chat/completions``) with the token, or, when no shared server runs for the same model
file, the in-process :class:`~sqlnb.agent.models.llamacpp.LlamaCppChatModel` as before.
``SQLNB_MODEL_SERVER=off`` turns the shared server off on both sides.
"""

from __future__ import annotations

import http.client
import json
import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk

from sqlnb.agent.models.messages import (
    CURRENT_STOP,
    PromptChatModel,
    completion_message,
    role_content,
    usage_chunk,
)
from sqlnb.agent.models.overflow import context_too_long
from sqlnb.errors import ConfigurationError, ModelError

__all__ = [
    "MODEL_SERVER_ENV",
    "MODEL_SERVER_FILE_ENV",
    "STATES",
    "LlamaServerChatModel",
    "ServerInfo",
    "read_runtime",
    "server_disabled",
    "shared_model",
    "shared_server",
    "write_runtime",
]

MODEL_SERVER_ENV = "SQLNB_MODEL_SERVER"  # off: no shared model process, llama.cpp in the kernel
MODEL_SERVER_FILE_ENV = "SQLNB_MODEL_SERVER_FILE"  # the runtime file, set for the server's kernels
STATES = ("loading", "ready", "failed", "stopped")

# what to do when the shared model process cannot answer
_HINT_RESTART = (
    "ask again; if it keeps failing, restart Jupyter, or set SQLNB_MODEL_SERVER=off before "
    "starting it to load the model in each kernel instead"
)


def server_disabled() -> bool:
    """Whether ``$SQLNB_MODEL_SERVER`` turns the shared model process off."""
    return os.environ.get(MODEL_SERVER_ENV, "").strip().lower() in ("off", "0", "false", "no")


def write_runtime(path: str | os.PathLike[str], data: Mapping[str, Any]) -> None:
    """Write the runtime file at once (a reader never sees half of it), readable by its owner
    only (it holds the token)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(dict(data), fh)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    os.replace(tmp, path)


def read_runtime(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The runtime file's content (None: missing or unreadable)."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


@dataclass(frozen=True)
class ServerInfo:
    """One reading of the runtime file."""

    url: str
    token: str
    model_path: str
    pid: int
    state: str
    error: str | None = None
    hint: str | None = None
    server_pid: int = 0  # the Jupyter server's

    @classmethod
    def from_runtime(cls, data: Mapping[str, Any]) -> ServerInfo:
        return cls(
            url=str(data.get("url") or ""),
            token=str(data.get("token") or ""),
            model_path=str(data.get("model_path") or ""),
            pid=int(data.get("pid") or 0),
            state=str(data.get("state") or ""),
            error=data.get("error"),
            hint=data.get("hint"),
            server_pid=int(data.get("server_pid") or 0),
        )


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive, and not ours to use
        return True
    return True


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _runtime_path(path: str | os.PathLike[str] | None) -> Path | None:
    if path is None:
        path = os.environ.get(MODEL_SERVER_FILE_ENV, "").strip() or None
    return Path(path) if path else None


def _request(
    info: ServerInfo, method: str, route: str, body: Mapping[str, Any] | None, timeout: float
) -> http.client.HTTPResponse:
    parts = urlsplit(info.url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=timeout)
    headers = {"Authorization": f"Bearer {info.token}"}
    payload = None
    if body is not None:
        payload = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    conn.request(method, route, body=payload, headers=headers)
    return conn.getresponse()


def healthy(info: ServerInfo, timeout: float = 2.0) -> bool:
    """Whether the server answers an authenticated ``GET /v1/models``."""
    try:
        response = _request(info, "GET", "/v1/models", None, timeout)
        response.read()
        response.close()
    except (OSError, http.client.HTTPException):
        return False
    return response.status == 200


def shared_server(model_path: str, path: str | os.PathLike[str] | None = None) -> Path | None:
    """The runtime file of the shared model process when one serves ``model_path`` (the same
    file) and is loading or ready and healthy; None otherwise (turned off, no runtime file,
    another model, failed, stopped, its process gone)."""
    if server_disabled():
        return None
    runtime = _runtime_path(path)
    if runtime is None:
        return None
    data = read_runtime(runtime)
    if data is None:
        return None
    info = ServerInfo.from_runtime(data)
    if info.state not in ("loading", "ready") or not _same_file(info.model_path, model_path):
        return None
    if not _alive(info.pid) or (info.server_pid and not _alive(info.server_pid)):
        return None
    if info.state == "ready" and not healthy(info):
        return None
    return runtime


def shared_model(model_path: str, *, temperature: float = 0.0, **kwargs: Any) -> LlamaServerChatModel | None:
    """A :class:`LlamaServerChatModel` for ``model_path`` when the shared model process
    serves it (:func:`shared_server`), else None.  Options the server fixes when it starts
    (``n_ctx``, ``n_threads``) are not taken per model; side-by-side replies (``parallel``)
    are in-process only, so asking for them gives None."""
    from sqlnb.agent.models.llamacpp import _default_parallel

    if kwargs.get("parallel", _default_parallel()):
        return None
    runtime = shared_server(model_path)
    if runtime is None:
        return None
    own = {k: v for k, v in kwargs.items() if k in LlamaServerChatModel.model_fields and k != "parallel"}
    model = LlamaServerChatModel(
        runtime_file=str(runtime), model_path=model_path, temperature=temperature, **own
    )
    model.metadata = {**(model.metadata or {}), "sqlnb_model": f"llamacpp:{Path(model_path).stem}"}
    return model


class _ServerGone(Exception):
    """The connection to the model process broke (it died or was stopped)."""


class LlamaServerChatModel(PromptChatModel):
    """The offline model answered by the Jupyter server's shared llama.cpp process.

    Takes the options the in-process model takes per call (``temperature``, ``seed``,
    ``max_tokens``, ``stop``), and streams (``model.stream(...)``: one chunk per piece of
    text, the token usage on the last).  While the process loads, a call waits for it
    (``load_timeout``); when the process dies during a call, the Jupyter server restarts it
    and the call is made once more, else :class:`ModelError` says what to do.
    """

    runtime_file: str
    model_path: str
    max_tokens: int = 512
    temperature: float = 0.0
    repeat_penalty: float = 1.0
    stop: list[str] | None = None
    load_timeout: float = 600.0  # seconds to wait for the model to load (or load again)
    request_timeout: float = 600.0  # seconds without a byte from the server
    parallel: bool = False  # side by side replies are in-process only (ModelClient reads this)
    takes_seed: ClassVar[bool] = True
    takes_purpose: ClassVar[bool] = True
    keeps_prompt_states: ClassVar[bool] = True  # the server keeps prompt states (its RAM cache)

    @property
    def _llm_type(self) -> str:
        return "sqlnb-llamaserver"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {
            "model_path": self.model_path,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }

    # --- the process ---------------------------------------------------------------
    def _read(self) -> ServerInfo:
        data = read_runtime(self.runtime_file)
        info = ServerInfo.from_runtime(data) if data is not None else None
        if info is None or (info.server_pid and not _alive(info.server_pid)):
            raise ModelError(
                "the shared model process of this Jupyter server is gone (it stopped with the server)",
                hint="restart the kernel: sqlnb then loads the model in the kernel, or uses "
                "the model process of the Jupyter server it runs in",
            )
        return info

    def _ready(self, not_pid: int = 0) -> ServerInfo:
        """The server's info once it is ready, waiting while it loads; with ``not_pid`` (a
        process whose connection broke), once another process is ready, or that one
        still answers after a few seconds.  :class:`ModelError` when it failed, stopped or
        took too long."""
        start = time.monotonic()
        deadline = start + self.load_timeout
        stop = CURRENT_STOP.get()
        while True:
            info = self._read()
            if info.state == "ready" and _alive(info.pid):
                if info.pid != not_pid:
                    return info
                if time.monotonic() - start > 3.0 and healthy(info):
                    return info  # the connection broke, not the process
            if info.state == "failed":
                raise ModelError(
                    f"the shared model process failed: {info.error or 'it exited'}",
                    hint=info.hint or _HINT_RESTART,
                )
            if info.state == "stopped":
                raise ModelError("the shared model process was stopped", hint=_HINT_RESTART)
            if time.monotonic() > deadline:
                raise ModelError(
                    f"the shared model process was not ready within {self.load_timeout:g} s",
                    hint=_HINT_RESTART,
                )
            if stop is not None and stop.stopped:
                raise ModelError("the call to the model was stopped", hint="ask again when you are ready")
            time.sleep(0.2)

    def _body(
        self, prompt: list[tuple[str, str]], stop: list[str] | None, options: Mapping[str, Any], stream: bool
    ) -> dict[str, Any]:
        stops = stop if stop is not None else options.get("stop", self.stop)
        body: dict[str, Any] = {
            "messages": [{"role": role, "content": content} for role, content in prompt],
            "temperature": options.get("temperature", self.temperature),
            "max_tokens": options.get("max_tokens", self.max_tokens),
            "repeat_penalty": self.repeat_penalty,
            "stop": list(stops) if stops else [],
            "stream": stream,
        }
        if options.get("seed") is not None:
            body["seed"] = int(options["seed"])
        if stream:
            body["stream_options"] = {"include_usage": True}
        return body

    def _post(self, info: ServerInfo, body: Mapping[str, Any]) -> http.client.HTTPResponse:
        try:
            response = _request(info, "POST", "/v1/chat/completions", body, self.request_timeout)
        except TimeoutError as exc:
            raise ModelError(
                f"the shared model process did not answer within {self.request_timeout:g} s",
                hint=_HINT_RESTART,
            ) from exc
        except (OSError, http.client.HTTPException) as exc:
            raise _ServerGone(str(exc)) from exc
        if response.status != 200:
            text = response.read().decode("utf-8", "replace")
            response.close()
            raise self._refused(response.status, text)
        return response

    @staticmethod
    def _refused(status: int, text: str) -> ModelError:
        counts: dict[str, Any] = {}
        try:
            detail = json.loads(text)
            error = detail.get("error", {}) if isinstance(detail, dict) else {}
            counts = error if isinstance(error, dict) else {}
            message = counts.get("message")
            message = message or (detail.get("detail") if isinstance(detail, dict) else None) or text
        except ValueError:
            message = text
        message = str(message).strip()[:300]
        if status == 401:
            return ModelError(
                "the shared model process refused sqlnb's token",
                hint="restart the kernel so that it reads the Jupyter server's model process again",
            )
        overflow = context_too_long(
            f"llama.cpp refused the prompt: {message}",
            requested=_count(counts.get("n_prompt_tokens")),
            window=_count(counts.get("n_ctx")),
            hint="the prompt is too long for the model's context: start a new conversation, or "
            "give the shared model a larger context (SqlnbModelServer.n_ctx)",
        )
        if overflow is not None:
            return overflow
        return ModelError(f"the shared model process answered {status}: {message}", hint=_HINT_RESTART)

    def _twice(self, attempt: Any) -> Any:
        """``attempt(info)`` on the ready server; once more when the process died during it
        (after the Jupyter server started it again)."""
        info = self._ready()
        try:
            return attempt(info)
        except _ServerGone:
            pass
        info = self._ready(not_pid=info.pid)
        try:
            return attempt(info)
        except _ServerGone as exc:
            raise ModelError(
                f"the shared model process stopped while answering, twice ({exc})",
                hint=_HINT_RESTART,
            ) from None

    # --- answers -------------------------------------------------------------------
    def _answer(
        self, prompt: list[tuple[str, str]], stop: list[str] | None, options: Mapping[str, Any]
    ) -> AIMessage:
        body = self._body(prompt, stop, options, stream=False)

        def attempt(info: ServerInfo) -> dict[str, Any]:
            response = self._post(info, body)
            try:
                raw = response.read()
            except (OSError, http.client.HTTPException) as exc:
                raise _ServerGone(str(exc)) from exc
            finally:
                response.close()
            try:
                out: dict[str, Any] = json.loads(raw)
            except ValueError as exc:
                raise _ServerGone(f"an incomplete reply ({len(raw)} bytes)") from exc
            return out

        out = self._twice(attempt)
        return completion_message(out, Path(self.model_path).name)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        """One chunk per piece of text the server sends (server-sent events); the usage on
        the last chunk when the server gives it.  A process that dies before the first piece
        is started again and asked once more; after it, the text already given cannot be
        taken back, so :class:`ModelError` says so."""
        body = self._body(role_content(messages), stop, kwargs, stream=True)
        stopper = CURRENT_STOP.get()
        response = self._twice(lambda info: self._post(info, body))
        given, pieces = False, 0
        usage: tuple[int, int] | None = None  # tokens read, written
        finish: str | None = None
        try:
            for event in _events(response):
                if stopper is not None and stopper.stopped:
                    break  # closing the connection ends the server's generation
                if event.get("usage"):
                    u = event["usage"]
                    usage = (int(u.get("prompt_tokens", 0)), int(u.get("completion_tokens", 0)))
                for choice in event.get("choices") or []:
                    finish = choice.get("finish_reason") or finish
                    text = (choice.get("delta") or {}).get("content") or ""
                    if text:
                        given = True
                        pieces += 1
                        yield ChatGenerationChunk(message=AIMessageChunk(content=text))
        except _ServerGone as exc:
            raise ModelError(
                f"the shared model process stopped while writing its reply ({exc})"
                + ("" if given else ", before any text"),
                hint=_HINT_RESTART,
            ) from None
        finally:
            response.close()
        if usage is None:  # a server that gives no usage when streaming: a token per piece
            usage = (0, pieces)
        yield usage_chunk(*usage, finish_reason=finish, model=Path(self.model_path).name)


def _events(response: http.client.HTTPResponse) -> Iterator[dict[str, Any]]:
    """The JSON payloads of a server-sent event stream, until ``[DONE]``."""
    while True:
        try:
            line = response.readline()
        except (OSError, http.client.HTTPException) as exc:
            raise _ServerGone(str(exc)) from exc
        if not line:
            raise _ServerGone("the stream ended before [DONE]")
        text = line.decode("utf-8", "replace").strip()
        if not text.startswith("data:"):
            continue  # blank separators, comments (": ping"), event names
        data = text[len("data:") :].strip()
        if data == "[DONE]":
            return
        try:
            event = json.loads(data)
        except ValueError:
            continue
        if isinstance(event, dict):
            if event.get("error"):
                raise ModelError(f"the shared model process failed: {event['error']}", hint=_HINT_RESTART)
            yield event


def missing_model_error(path: str) -> ConfigurationError:
    """The model file the shared process should serve is not there."""
    from sqlnb.agent.download.catalog import DEFAULT_MODEL

    return ConfigurationError(
        f"the model file {path} does not exist, so the shared model process cannot start",
        hint=f"sqlnb model download {DEFAULT_MODEL}",
    )


def _count(value: Any) -> int | None:
    """A token count from the server's error (None when it gave none)."""
    return int(value) if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
