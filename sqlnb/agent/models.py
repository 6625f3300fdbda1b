"""Which language model the agent talks to, and how it calls it.

One spec string ``provider:model`` picks a LangChain chat model (:func:`resolve_model`):

- ``anthropic:claude-sonnet-4-5``, ``openai:gpt-4o-mini``, ``ollama:qwen2.5-coder``, any
  provider LangChain's ``init_chat_model`` knows;
- ``llamacpp:qwen2.5-coder-1.5b`` (a downloaded model name) or ``llamacpp:/path/x.gguf``:
  llama.cpp in-process (:class:`LlamaCppChatModel`);
- ``scripted:replies.json``: canned replies for sqlnb's tests (:class:`ScriptedChatModel`).

:class:`ModelClient` is what the agent calls: it retries transient failures, enforces a
deadline, scrubs secrets from errors and returns the reply text with token usage.
"""

from __future__ import annotations

import atexit
import contextvars
import importlib.util
import json
import os
import re
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field, PrivateAttr

from sqlnb.agent.parallel import chat_prompt, load_llama, side_by_side
from sqlnb.errors import (
    ConfigurationError,
    MissingDriverError,
    ModelError,
    ModelNotConfigured,
    ScriptExhausted,
    SqlnbError,
)

__all__ = [
    "DEFAULT_ANTHROPIC_MODEL", "MODEL_ENV", "LlamaCppChatModel", "ModelClient", "ModelError",
    "ModelNotConfigured", "ScriptExhausted", "ScriptedChatModel", "describe_model",
    "resolve_model", "scrub_secrets",
]

MODEL_ENV = "SQLNB_MODEL"
DEFAULT_ANTHROPIC_MODEL = "anthropic:claude-sonnet-4-5"
LLAMA_THREADS_ENV = "SQLNB_LLAMA_THREADS"
LLAMA_PARALLEL_ENV = "SQLNB_LLAMA_PARALLEL"  # 1/on: replies of one prompt side by side

# One line: what to do when no model is configured (the notebook's %%ask, the panel's
# error, the CLI all show it after "no language model is configured").
_HOW_TO_CONFIGURE = (
    "set ANTHROPIC_API_KEY, or run `sqlnb demo --offline` for a local one, or "
    "%config AskMagic.model = \"provider:model\" (also SQLNB_MODEL or --model), "
    "e.g. openai:gpt-4o-mini, ollama:qwen2.5-coder, llamacpp:qwen2.5-coder-1.5b"
)

# Environment variables holding each provider's API key (for hints only).
_KEY_ENV = {
    "anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY",
    "azure_openai": "AZURE_OPENAI_API_KEY", "groq": "GROQ_API_KEY",
    "mistralai": "MISTRAL_API_KEY", "deepseek": "DEEPSEEK_API_KEY", "xai": "XAI_API_KEY",
    "fireworks": "FIREWORKS_API_KEY", "together": "TOGETHER_API_KEY",
    "google_genai": "GOOGLE_API_KEY", "cohere": "COHERE_API_KEY",
    "openrouter": "OPENROUTER_API_KEY", "perplexity": "PPLX_API_KEY",
}
# sqlnb's own extra names the package where one exists
_EXTRA_FOR = {"langchain-openai": "sqlnb[openai]"}


# --- message conversion ----------------------------------------------------------------
_ROLES = {"system": "system", "human": "user", "ai": "assistant"}


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return str(message.text)


def _role_content(messages: Sequence[BaseMessage]) -> list[tuple[str, str]]:
    """OpenAI-style roles: system / user / assistant; any other message counts as user."""
    return [(_ROLES.get(m.type, "user"), _text(m)) for m in messages]


# The stop token of the turn whose model call runs in this thread (ModelClient sets it in
# the call's worker thread): a model that waits can wake up on it.
_CURRENT_STOP: contextvars.ContextVar[Any] = contextvars.ContextVar("sqlnb_stop", default=None)


# --- scripted model ----------------------------------------------------------------------
class ScriptedChatModel(BaseChatModel):
    """Replies from a fixed list, in order: deterministic tests and demos.

    ``prompts`` records every prompt received as ``[(role, content), ...]`` with roles
    ``system``/``user``/``assistant``.  Token usage is estimated (4 characters a token).

    ``drafts``: the replies to sampled calls (a temperature given, as the agent's retry
    drafts are), in order, recorded in ``draft_prompts``.  None: the script does not
    sample, and the agent draws no drafts from it.

    ``delay``: seconds each call (reply or draft) waits before answering: a slow model,
    for the panel's Stop button in browser tests and the bridge benchmark.  The wait ends
    early when the turn is stopped (:class:`sqlnb.agent.stop.StopToken`); the call then
    fails with :class:`ModelError` and uses up no reply.  In a file:
    ``{"replies": [...], "drafts": [...], "delay": 2.5}``.
    """

    replies: list[str]
    position: int = 0
    prompts: list[list[tuple[str, str]]] = Field(default_factory=list)
    drafts: list[str] | None = None
    draft_position: int = 0
    draft_prompts: list[list[tuple[str, str]]] = Field(default_factory=list)
    source: str | None = None
    """The file the replies came from (its name shows in :func:`describe_model`)."""
    delay: float = 0.0

    @property
    def samples(self) -> bool:
        return self.drafts is not None

    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> ScriptedChatModel:
        """Load replies from a JSON file: a list of strings, or an object with the list
        under ``replies``, the sampled calls' replies under ``drafts`` and the seconds
        each call waits under ``delay``."""
        file = Path(path).expanduser()
        example = 'e.g. ["```sql\\nSELECT 1\\n```", "FINAL"]'
        try:
            raw = file.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ConfigurationError(
                f"scripted model file {str(file)!r} does not exist",
                hint=f"write the replies as a JSON list of strings to it, {example}",
            ) from None
        except OSError as exc:
            raise ConfigurationError(f"cannot read scripted model file {str(file)!r}: "
                                     f"{exc.strerror or exc}") from exc
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ConfigurationError(
                f"scripted model file {str(file)!r} is not valid JSON: {exc.msg} at line "
                f"{exc.lineno}, column {exc.colno}",
                hint=f"it must hold a JSON list of reply strings, {example}",
            ) from None
        drafts, delay = None, 0.0
        if isinstance(data, dict) and set(data) <= {"replies", "drafts", "delay"} and "replies" in data:
            data, drafts, delay = data["replies"], data.get("drafts"), data.get("delay", 0.0)
            if isinstance(delay, bool) or not isinstance(delay, (int, float)) or not delay >= 0:
                raise ConfigurationError(
                    f"scripted model file {str(file)!r}: \"delay\" must be a number of "
                    f"seconds (0 or more), not {json.dumps(delay)}",
                    hint='e.g. {"replies": ["```sql\\nSELECT 1\\n```"], "delay": 2}',
                )
        if not isinstance(data, list) or not isinstance(drafts, (list, type(None))):
            raise ConfigurationError(
                f"scripted model file {str(file)!r} holds a JSON {type(data).__name__}, "
                "not a list",
                hint=f"it must hold a JSON list of reply strings, {example} (or an object "
                     'with that list under "replies" and sampled replies under "drafts")',
            )
        for what, items in (("reply", data), ("draft", drafts or [])):
            for i, item in enumerate(items):
                if not isinstance(item, str):
                    raise ConfigurationError(
                        f"scripted model file {str(file)!r}: {what} {i + 1} is a JSON "
                        f"{type(item).__name__}, not a string",
                        hint=f"it must hold a JSON list of reply strings, {example}",
                    )
        return cls(replies=data, drafts=drafts, source=file.name, delay=float(delay))

    @property
    def _llm_type(self) -> str:
        return "sqlnb-scripted"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"source": self.source, "replies": len(self.replies)}

    @property
    def remaining(self) -> int:
        return len(self.replies) - self.position

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  **kwargs: Any) -> ChatResult:
        prompt = _role_content(messages)
        if self.delay > 0:
            stop = _CURRENT_STOP.get()
            if stop is None:
                time.sleep(self.delay)
            elif stop.wait(self.delay):
                raise ModelError("the scripted model's call was stopped")
        if kwargs.get("temperature") is not None and self.drafts is not None:
            reply = self._next_draft(prompt)
        else:
            reply = self._next_reply(prompt)
        input_tokens = sum(len(content) for _, content in prompt) // 4
        output_tokens = len(reply) // 4
        message = AIMessage(content=reply, usage_metadata={
            "input_tokens": input_tokens, "output_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens,
        })
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _next_draft(self, prompt: list[tuple[str, str]]) -> str:
        drafts = self.drafts or []
        with self._lock:
            self.draft_prompts.append(prompt)
            if self.draft_position >= len(drafts):
                raise ScriptExhausted(
                    f"the scripted model has no draft left: all {len(drafts)} were used",
                    hint="add drafts to the script, or expect fewer sampled calls",
                )
            self.draft_position += 1
            return drafts[self.draft_position - 1]

    def _next_reply(self, prompt: list[tuple[str, str]]) -> str:
        with self._lock:
            self.prompts.append(prompt)
            if self.position >= len(self.replies):
                where = f" in {self.source}" if self.source else ""
                raise ScriptExhausted(
                    f"the scripted model has no reply left: all {len(self.replies)} "
                    f"replies{where} were used (call {len(self.prompts)})",
                    hint="add replies to the script, or expect fewer model calls",
                )
            self.position += 1
            return self.replies[self.position - 1]


# --- llama.cpp in-process ----------------------------------------------------------------
def _default_threads() -> int:
    configured = os.environ.get(LLAMA_THREADS_ENV, "").strip()
    if configured:
        try:
            return max(1, int(configured))
        except ValueError:
            raise ConfigurationError(
                f"{LLAMA_THREADS_ENV}={configured!r} is not a number",
                hint=f"set {LLAMA_THREADS_ENV} to a thread count such as 2",
            ) from None
    return min(4, os.cpu_count() or 1)


def _default_parallel() -> bool:
    # off unless asked for: on 24 car_1 questions it saved 7% of the time and its answers
    # were not shown to be as good (benchmarks/results/accuracy_side_by_side.md)
    return os.environ.get(LLAMA_PARALLEL_ENV, "").strip().lower() in ("1", "on", "true", "yes")


_LLAMAS: dict[tuple[str, int, int], tuple[Any, threading.Lock]] = {}
_LLAMAS_LOCK = threading.Lock()


def _import_llama_cpp() -> Any:
    # llama.cpp's OpenMP threads spin while they wait: with any other busy process on the
    # machine they steal each other's cores (measured on 2 shared cores: one question 83 s
    # spinning, 8 s passive).  OpenMP reads this once, when llama.cpp's library loads.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import llama_cpp
    except ImportError as exc:
        raise MissingDriverError(
            "llama-cpp-python is not installed, so llamacpp: models cannot run",
            hint="pip install 'sqlnb[local]'",
        ) from exc
    return llama_cpp


def _get_llama(model_path: str, n_ctx: int, n_threads: int) -> tuple[Any, threading.Lock]:
    """One Llama per (path, n_ctx, n_threads) per process, with the lock that guards it."""
    key = (model_path, n_ctx, n_threads)
    with _LLAMAS_LOCK:
        entry = _LLAMAS.get(key)
        if entry is None:
            llama_cpp = _import_llama_cpp()
            try:
                # room for several sequences in one KV cache: replies decoded side by side
                llama = load_llama(llama_cpp.Llama, llama_cpp.llama_cpp, model_path=model_path,
                                   n_ctx=n_ctx, n_threads=n_threads, verbose=False, seed=0)
            except (ValueError, OSError, RuntimeError) as exc:
                raise ConfigurationError(
                    f"llama.cpp could not load {model_path}: {exc}",
                    hint="the file may be corrupt or not a GGUF model: delete it and run "
                         "`sqlnb model download qwen2.5-coder-1.5b` again",
                ) from exc
            if not _LLAMAS:
                atexit.register(_close_llamas)
            entry = _LLAMAS[key] = (llama, threading.Lock())
        return entry


def _close_llamas() -> None:
    """Free loaded models while the interpreter still works (llama-cpp-python's own
    finalizer fails noisily during interpreter shutdown)."""
    with _LLAMAS_LOCK:
        entries = list(_LLAMAS.values())
        _LLAMAS.clear()
    for llama, lock in entries:
        if lock.acquire(timeout=1.0):  # never free a model a worker thread is still using
            try:
                llama.close()
            except Exception:
                pass
            finally:
                lock.release()


# A draft's reply ends where its ```sql block has closed and prose begins: the closing
# fence followed by a blank line (what the explanation after the query starts with).  The
# block's text stays whole; extract_sql reads a fence left open.
DRAFT_STOP = ("```\n\n",)
DRAFT_MAX_TOKENS = 320


class LlamaCppChatModel(BaseChatModel):
    """A GGUF model run in-process by llama.cpp (``pip install 'sqlnb[local]'``).

    Instances with the same (model_path, n_ctx, n_threads) share one loaded model, so the
    prompt-prefix cache makes a repeated schema prefix cheap; calls are serialized.
    :meth:`replies` writes several replies to one prompt side by side
    (:mod:`sqlnb.agent.parallel`); with ``parallel`` on (``$SQLNB_LLAMA_PARALLEL=1``) the
    agent's first answer and its first drafts are written that way.
    """

    model_path: str
    n_ctx: int = 8192
    n_threads: int = Field(default_factory=_default_threads)
    max_tokens: int = 512
    temperature: float = 0.0
    repeat_penalty: float = 1.0
    stop: list[str] | None = None
    parallel: bool = Field(default_factory=_default_parallel)
    takes_seed: ClassVar[bool] = True  # ModelClient passes a seed with sampled calls

    @property
    def _llm_type(self) -> str:
        return "sqlnb-llamacpp"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_path": self.model_path, "n_ctx": self.n_ctx,
                "temperature": self.temperature, "max_tokens": self.max_tokens}

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  **kwargs: Any) -> ChatResult:
        llama, lock = _get_llama(self.model_path, self.n_ctx, self.n_threads)
        chat = [{"role": role, "content": content} for role, content in _role_content(messages)]
        stops = stop if stop is not None else self.stop
        with lock:
            try:
                out = llama.create_chat_completion(
                    messages=chat, temperature=kwargs.get("temperature", self.temperature),
                    repeat_penalty=self.repeat_penalty,
                    max_tokens=kwargs.get("max_tokens", self.max_tokens),
                    stop=list(stops) if stops else [],
                    # a fixed seed per call: sampled replies are reproducible
                    **({"seed": int(kwargs["seed"])} if kwargs.get("seed") is not None else {}),
                )
            except ValueError as exc:  # e.g. "Requested tokens (9000) exceed context window"
                raise self._refused(exc) from exc
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        prompt_tokens = int(usage.get("prompt_tokens", 0))
        completion_tokens = int(usage.get("completion_tokens", 0))
        message = AIMessage(
            content=choice["message"].get("content") or "",
            usage_metadata={"input_tokens": prompt_tokens, "output_tokens": completion_tokens,
                            "total_tokens": prompt_tokens + completion_tokens},
            response_metadata={"finish_reason": choice.get("finish_reason"),
                               "model": Path(self.model_path).name},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _refused(self, exc: ValueError) -> ModelError:
        return ModelError(f"llama.cpp refused the prompt: {exc}",
                          hint=f"the prompt is too long for n_ctx={self.n_ctx}: ask about fewer "
                               "tables or use a model with a larger context")

    def replies(self, messages: LanguageModelInput, specs: Sequence[dict[str, Any]], *,
                max_tokens: int | None = None, stop: Sequence[str] | None = None,
                ) -> list[tuple[str, dict[str, int]]]:
        """One reply per spec (``temperature``, ``seed``) to ``messages``, decoded side by
        side (one model pass per token for all of them): each reply's text and its token
        usage (the prompt counted for each, as separate calls would).  Replies are the ones
        separate calls would give, but for rounding differences of batched arithmetic."""
        llama, lock = _get_llama(self.model_path, self.n_ctx, self.n_threads)
        chat = [{"role": role, "content": content}
                for role, content in _role_content(self._convert_input(messages).to_messages())]
        stops = list(stop) if stop is not None else list(self.stop or [])
        with lock:
            try:
                prompt, stops = chat_prompt(llama, chat, stops)
                done = side_by_side(llama, prompt, specs, stop=stops,
                                    max_tokens=max_tokens if max_tokens is not None else self.max_tokens)
            except ValueError as exc:
                raise self._refused(exc) from exc
        return [(text, {"input_tokens": len(prompt), "output_tokens": n,
                        "total_tokens": len(prompt) + n}) for text, n in done]


def _llama_model_path(value: str) -> str:
    from sqlnb.agent.download import MODELS, model_dir, model_path

    default = next(iter(MODELS))
    if value in MODELS:
        path = model_path(value)
        if path.is_file():
            return str(path)
        raise ConfigurationError(
            f"the local model {value!r} is not downloaded yet (looked for {path})",
            hint=f"sqlnb model download {value}",
        )
    given = Path(value).expanduser()
    candidates = [given]
    if not given.is_absolute():
        candidates += [model_dir() / value, model_dir() / f"{value}.gguf"]
    for candidate in candidates:
        if candidate.is_file():
            return str(candidate.resolve())
    raise ConfigurationError(
        f"no GGUF model file {value!r} (looked for {', '.join(map(str, candidates))})",
        hint=f"sqlnb model download {default} and use llamacpp:{default}, or give the path "
             "of a .gguf file",
    )


# --- resolution ----------------------------------------------------------------------------
def _builtin_providers() -> dict[str, tuple]:
    try:
        from langchain.chat_models import base
    except ImportError:  # pragma: no cover - langchain is a dependency
        return {}
    return dict(getattr(base, "_BUILTIN_PROVIDERS", {}))


def resolve_model(spec: str | None = None, *, timeout: float = 60.0,
                  temperature: float = 0.0, **kwargs: Any) -> BaseChatModel:
    """The chat model a ``provider:model`` spec names (see the module docstring).

    With no spec (``%config AskMagic.model`` and ``--model`` are specs): ``$SQLNB_MODEL``,
    else Claude when ANTHROPIC_API_KEY is set, else the offline model when it is installed
    (llama_cpp importable and ``qwen2.5-coder-1.5b`` downloaded: ``sqlnb demo --offline``),
    else :class:`ModelNotConfigured`.  Extra ``kwargs`` (``base_url``, ``api_key``,
    ``n_ctx``...) go to the model's constructor.
    """
    if spec is None or not spec.strip():
        spec = os.environ.get(MODEL_ENV, "").strip() or None
    if spec is None:
        from sqlnb.agent.download import DEFAULT_MODEL, offline_model

        if os.environ.get("ANTHROPIC_API_KEY"):
            spec = DEFAULT_ANTHROPIC_MODEL
        elif offline_model() is not None:
            spec = f"llamacpp:{DEFAULT_MODEL}"
        else:
            raise ModelNotConfigured("no language model is configured", hint=_HOW_TO_CONFIGURE)
    spec = spec.strip()
    provider, sep, name = spec.partition(":")
    provider, name = provider.strip().lower(), name.strip()
    if "?" in name and provider not in ("scripted", "llamacpp", "llama_cpp", "llama.cpp"):
        # options in the spec itself, for config strings: openai:qwen?base_url=http://host:8000/v1
        from urllib.parse import parse_qsl

        name, _, query = name.partition("?")
        kwargs = {**dict(parse_qsl(query, keep_blank_values=False)), **kwargs}
    if not sep or not provider or not name:
        raise ConfigurationError(
            f"model spec {spec!r} is not of the form provider:model",
            hint="e.g. anthropic:claude-sonnet-4-5, openai:gpt-4o-mini, "
                 "ollama:qwen2.5-coder, llamacpp:qwen2.5-coder-1.5b or scripted:replies.json",
        )
    if provider == "scripted":
        return ScriptedChatModel.from_file(name)
    if provider in ("llamacpp", "llama_cpp", "llama.cpp"):
        path = _llama_model_path(name)
        if importlib.util.find_spec("llama_cpp") is None:
            _import_llama_cpp()  # raises MissingDriverError with the install hint
        return LlamaCppChatModel(model_path=path, temperature=temperature, **kwargs)
    return _init_provider(provider, name, timeout=timeout, temperature=temperature,
                          kwargs=kwargs)


def _init_provider(provider: str, name: str, *, timeout: float, temperature: float,
                   kwargs: dict[str, Any]) -> BaseChatModel:
    builtin = _builtin_providers()
    if builtin and provider not in builtin:
        known = ", ".join(sorted({*builtin, "llamacpp", "scripted"}))
        raise ConfigurationError(f"unknown model provider {provider!r} in {provider}:{name}",
                                 hint=f"use one of: {known}")
    kw = dict(kwargs)
    kw.setdefault("temperature", temperature)
    if provider == "ollama":  # ChatOllama takes the HTTP timeout through its client
        client_kwargs = dict(kw.pop("client_kwargs", None) or {})
        client_kwargs.setdefault("timeout", timeout)
        kw["client_kwargs"] = client_kwargs
    else:
        kw.setdefault("timeout", timeout)
        kw.setdefault("max_retries", 0)  # sqlnb retries itself (ModelClient)
    key_env = _KEY_ENV.get(provider)
    has_key = bool(kw.get("api_key") or (key_env and os.environ.get(key_env)))
    if provider == "anthropic" and not has_key and not kw.get("base_url"):
        raise ModelNotConfigured(f"anthropic:{name} needs an Anthropic API key",
                                 hint="set ANTHROPIC_API_KEY, or choose another model with "
                                      "%config AskMagic.model = \"provider:model\" (also "
                                      "SQLNB_MODEL or --model); `sqlnb demo --offline` sets "
                                      "up a local one")
    if provider == "openai" and kw.get("base_url") and not has_key:
        kw["api_key"] = "not-needed"  # local OpenAI-compatible servers ignore the key

    from langchain.chat_models import init_chat_model

    try:
        model = init_chat_model(name, model_provider=provider, **kw)
    except ImportError as exc:
        module = builtin.get(provider, (f"langchain_{provider}",))[0]
        package = module.split(".", 1)[0].replace("_", "-")
        extra = _EXTRA_FOR.get(package)
        hint = f"pip install {package}" + (f" (or pip install '{extra}')" if extra else "")
        raise MissingDriverError(
            f"the {provider} models need the {package} package, which is not installed",
            hint=hint,
        ) from exc
    except Exception as exc:  # pydantic ValidationError, missing credentials, ...
        hint = "check the model name and options"
        if key_env:
            hint = f"set {key_env} (or pass api_key=...), and {hint}"
        raise ConfigurationError(
            f"cannot set up {provider}:{name}: {scrub_secrets(_first_line(exc))}",
            hint=hint,
        ) from exc
    try:
        model.metadata = {**(model.metadata or {}), "sqlnb_model": f"{provider}:{name}"}
    except (ValueError, TypeError, AttributeError):  # pragma: no cover - frozen model
        pass
    return model


# --- describing and calling --------------------------------------------------------------
_PROVIDER_BY_CLASS = {
    "ChatAnthropic": "anthropic", "ChatOpenAI": "openai", "AzureChatOpenAI": "azure_openai",
    "ChatOllama": "ollama", "ChatGroq": "groq", "ChatMistralAI": "mistralai",
    "ChatGoogleGenerativeAI": "google_genai", "ChatVertexAI": "google_vertexai",
    "ChatBedrock": "bedrock", "ChatBedrockConverse": "bedrock_converse",
}


def describe_model(model: Any) -> str:
    """A short name such as ``anthropic:claude-sonnet-4-5`` or ``scripted:replies.json``."""
    if isinstance(model, ScriptedChatModel):
        return f"scripted:{model.source}" if model.source else "scripted"
    if isinstance(model, LlamaCppChatModel):
        return f"llamacpp:{Path(model.model_path).stem}"
    metadata = getattr(model, "metadata", None)
    if isinstance(metadata, dict) and metadata.get("sqlnb_model"):
        return str(metadata["sqlnb_model"])
    provider = _PROVIDER_BY_CLASS.get(type(model).__name__)
    if provider is None:
        try:
            provider = str(model._llm_type).removesuffix("-chat")
        except Exception:
            provider = type(model).__name__
    name = next((getattr(model, attr) for attr in ("model", "model_name", "model_id")
                 if isinstance(getattr(model, attr, None), str)), None)
    return f"{provider}:{name}" if name else provider


_SECRET_PATTERNS = [
    (re.compile(r"\b(sk-ant-|sk-proj-|sk-)[A-Za-z0-9_\-]{6,}"), r"\1***"),
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._\-]{8,}"), r"\1***"),
    (re.compile(r"(?i)((?:api[_-]?key|x-api-key|token)[\"']?\s*[:=]\s*[\"']?)[^\s\"',}]{6,}"),
     r"\1***"),
]


def scrub_secrets(text: str) -> str:
    """``text`` with anything that looks like an API key replaced by ``***``."""
    for name, value in os.environ.items():
        if len(value) >= 8 and name.endswith(("_API_KEY", "_TOKEN", "_SECRET")) \
                and value in text:
            text = text.replace(value, "***")
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0] if text else text


_NOT_RETRIED = {
    "AuthenticationError": "check the API key (e.g. ANTHROPIC_API_KEY / OPENAI_API_KEY)",
    "PermissionDeniedError": "the API key lacks access to this model: check its permissions",
    "BadRequestError": "the provider rejected the request: check the model name and options",
    "NotFoundError": "the provider does not know this model: check the model name",
}


def _not_retried_hint(exc: BaseException) -> str | None:
    for cls in type(exc).__mro__:
        if cls.__name__ in _NOT_RETRIED:
            return _NOT_RETRIED[cls.__name__]
    return None


class _Deadline(Exception):
    pass


class _Stopped(Exception):
    pass


def _stopped_error(name: str) -> ModelError:
    return ModelError(f"the call to {name} was stopped", hint="ask again when you are ready")


class ModelClient:
    """Calls a chat model for the agent: retries, deadline, usage, errors for people.

    Transient failures are retried ``retries`` times with exponential backoff
    (``backoff * 2**n`` seconds, at most 30 s).  Authentication, permission, bad-request
    and not-found errors, and sqlnb's own errors (ScriptExhausted, configuration), are not.
    With ``timeout`` the call runs in a worker thread; past the deadline the thread is
    abandoned and :class:`ModelError` raised (not retried).  With a ``stop`` token
    (:class:`sqlnb.agent.stop.StopToken`) it runs in a worker thread too, and stopping
    abandons it at once (:class:`ModelError`, not retried).
    """

    MAX_DELAY = 30.0

    def __init__(self, model: BaseChatModel, *, retries: int = 2, backoff: float = 1.0,
                 timeout: float | None = None,
                 sleep: Callable[[float], None] = time.sleep):
        self.model = model
        self.retries = max(0, int(retries))
        self.backoff = backoff
        self.timeout = timeout
        self.sleep = sleep
        self.name = describe_model(model)

    @property
    def samples(self) -> bool:
        """Whether a call with a temperature gives a new sample (a scripted model without
        drafts does not)."""
        return bool(getattr(self.model, "samples", True))

    def invoke(self, messages: LanguageModelInput, *, temperature: float | None = None,
               seed: int | None = None, stop: Any = None,
               draft: bool = False) -> tuple[str, dict[str, Any]]:
        """Return the reply text and this call's usage: input/output/total tokens,
        ``calls`` (1) and ``seconds`` (wall time, retries included).

        ``temperature`` overrides the model's for this call (a sampled reply); ``seed``
        makes it reproducible where the model takes one (llama.cpp).  ``stop``: a
        :class:`~sqlnb.agent.stop.StopToken` that abandons the call when stopped.
        ``draft``: only the query of the reply is used (a draft of an answer), so a model
        that takes them (llama.cpp) stops generating once the ```sql block has closed and
        the text after it begins (``DRAFT_STOP``), within ``DRAFT_MAX_TOKENS``."""
        options: dict[str, Any] = {}
        if temperature is not None:
            options["temperature"] = temperature
            if seed is not None and getattr(self.model, "takes_seed", False):
                options["seed"] = seed
        if draft and getattr(self.model, "takes_seed", False):
            options["stop"] = list(DRAFT_STOP)
            options["max_tokens"] = DRAFT_MAX_TOKENS
        start = time.perf_counter()
        attempt = 0
        while True:
            if stop is not None and stop.stopped:
                raise _stopped_error(self.name)
            try:
                message = self._call(messages, options, stop)
                break
            except SqlnbError:
                raise
            except _Stopped:
                raise _stopped_error(self.name) from None
            except _Deadline:
                raise self._deadline_error() from None
            except Exception as exc:
                hint = _not_retried_hint(exc)
                if hint is not None:
                    raise ModelError(
                        f"{self.name} refused the request: {self._describe(exc)}",
                        hint=hint,
                    ) from exc
                if attempt >= self.retries:
                    tries = "1 attempt" if attempt == 0 else f"{attempt + 1} attempts"
                    raise ModelError(
                        f"{self.name} failed after {tries}: {self._describe(exc)}",
                        hint="the model service may be down or overloaded: try again later",
                    ) from exc
                pause = min(self.backoff * 2 ** attempt, self.MAX_DELAY)
                if stop is not None and self.sleep is time.sleep:
                    stop.wait(pause)  # a stop ends the pause (and the loop, above)
                else:
                    self.sleep(pause)
                attempt += 1
        seconds = time.perf_counter() - start
        text = _text(message) if isinstance(message, BaseMessage) else str(message)
        usage = getattr(message, "usage_metadata", None) or {}
        input_tokens = int(usage.get("input_tokens", 0) or 0)
        output_tokens = int(usage.get("output_tokens", 0) or 0)
        return text, {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "total_tokens": int(usage.get("total_tokens", 0) or input_tokens + output_tokens),
            "calls": 1,
            "seconds": seconds,
        }

    @property
    def side_by_side(self) -> bool:
        """Whether several replies to one prompt are written together (llama.cpp in-process
        with ``parallel`` on), so that they cost little more than one."""
        return bool(getattr(self.model, "parallel", False)) and hasattr(self.model, "replies")

    def invoke_many(self, messages: LanguageModelInput, specs: Sequence[dict[str, Any]], *,
                    stop: Any = None, draft: bool = True) -> list[tuple[str, dict[str, Any]]]:
        """Replies to one prompt, one per spec (``temperature``: None for the model's own,
        ``seed``), each with its usage as :meth:`invoke` gives it.  Written side by side
        where the model can (:attr:`side_by_side`: one call, its seconds on the first
        reply, ``calls`` 0 and ``replies_beside`` 1 on the others), else one call each.
        ``draft``: only their queries are used (as in :meth:`invoke`)."""
        if not self.side_by_side:
            return [self.invoke(messages, temperature=sp.get("temperature"), seed=sp.get("seed"),
                                stop=stop, draft=draft) for sp in specs]
        wanted = [{"temperature": sp["temperature"] if sp.get("temperature") is not None
                   else getattr(self.model, "temperature", 0.0), "seed": sp.get("seed")}
                  for sp in specs]
        options = {"max_tokens": DRAFT_MAX_TOKENS, "stop": list(DRAFT_STOP)} if draft else {}
        start = time.perf_counter()
        try:
            done = self._run(lambda: self.model.replies(messages, wanted, **options), stop)
        except SqlnbError:
            raise
        except _Stopped:
            raise _stopped_error(self.name) from None
        except _Deadline:
            raise self._deadline_error() from None
        except Exception as exc:
            raise ModelError(f"{self.name} failed: {self._describe(exc)}",
                             hint="try again; if it persists, turn side-by-side replies off "
                                  f"(unset {LLAMA_PARALLEL_ENV})") from exc
        seconds = time.perf_counter() - start
        # one call (the model was asked once, for the time of about one reply); the
        # replies written beside the first are counted apart
        return [(text, {**usage, "calls": 1, "seconds": seconds} if i == 0 else
                 {**usage, "calls": 0, "seconds": 0.0, "replies_beside": 1})
                for i, (text, usage) in enumerate(done)]

    def _deadline_error(self) -> ModelError:
        return ModelError(f"{self.name} did not answer within {self.timeout:g} s",
                          hint="try again, or allow more time (a larger timeout)")

    @staticmethod
    def _describe(exc: BaseException) -> str:
        return scrub_secrets(f"{type(exc).__name__}: {_first_line(exc)}")

    def _call(self, messages: LanguageModelInput, options: dict[str, Any] | None = None,
              stop: Any = None) -> Any:
        options = options or {}
        return self._run(lambda: self.model.invoke(messages, **options), stop)

    def _run(self, call: Callable[[], Any], stop: Any = None) -> Any:
        """``call()`` within the timeout, abandoned when ``stop`` is stopped (a worker
        thread then; in this thread when neither is set)."""
        if self.timeout is None and stop is None:
            return call()
        box: dict[str, Any] = {}
        done = threading.Event()

        def work() -> None:
            _CURRENT_STOP.set(stop)
            try:
                box["result"] = call()
            except BaseException as exc:  # handed to the caller's thread
                box["error"] = exc
            finally:
                done.set()

        context = contextvars.copy_context()  # keep LangChain callbacks/tracing context
        worker = threading.Thread(target=context.run, args=(work,), daemon=True,
                                  name="sqlnb-model-call")
        if stop is not None:
            stop.add_callback(done.set)
        try:
            worker.start()
            finished = done.wait(self.timeout)
        finally:
            if stop is not None:
                stop.remove_callback(done.set)
        if "result" not in box and "error" not in box:
            if stop is not None and stop.stopped:
                raise _Stopped()
            if not finished:
                raise _Deadline()
        if "error" in box:
            raise box["error"]
        return box["result"]
