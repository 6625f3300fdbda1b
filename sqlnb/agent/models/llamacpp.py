"""``llamacpp:``: a GGUF model run in-process by llama.cpp (``pip install 'sqlnb[local]'``).

One loaded model per (path, context size, threads) per process, shared by every
:class:`LlamaCppChatModel` that names it and freed at exit; several replies to one prompt can
be decoded side by side (:mod:`sqlnb.agent.parallel`).
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk
from pydantic import Field

from sqlnb.agent.models.messages import PromptChatModel, completion_message, role_content, usage_chunk
from sqlnb.agent.models.overflow import context_too_long
from sqlnb.agent.parallel import chat_prompt, load_llama, side_by_side
from sqlnb.agent.prompt_states import prompt_state_cache
from sqlnb.errors import ConfigurationError, MissingDriverError, ModelError

__all__ = [
    "LLAMA_CACHE_ENV",
    "LLAMA_PARALLEL_ENV",
    "LLAMA_THREADS_ENV",
    "LlamaCppChatModel",
    "import_llama_cpp",
]

LLAMA_THREADS_ENV = "SQLNB_LLAMA_THREADS"
LLAMA_PARALLEL_ENV = "SQLNB_LLAMA_PARALLEL"  # 1/on: replies of one prompt side by side
LLAMA_CACHE_ENV = "SQLNB_LLAMA_CACHE_MB"  # memory for the prompt states kept (0: none)
# The model's state after each prompt is kept (in memory, least recently used out first), so
# that the next question's prompt, which shares the system prompt and the schema with the
# last one but not with the explanation written since, is read from where they part.  A
# state of the demo's prompt (about 2,000 tokens) takes about 60 MB, every byte counted
# (sqlnb.agent.prompt_states).
LLAMA_CACHE_MB = 1024


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


def _cache_bytes() -> int:
    configured = os.environ.get(LLAMA_CACHE_ENV, "").strip()
    if not configured:
        return LLAMA_CACHE_MB << 20
    try:
        return max(0, int(configured)) << 20
    except ValueError:
        raise ConfigurationError(
            f"{LLAMA_CACHE_ENV}={configured!r} is not a number",
            hint=f"set {LLAMA_CACHE_ENV} to megabytes such as 1024 (0: keep no prompt states)",
        ) from None


def _default_parallel() -> bool:
    # off unless asked for: on 24 car_1 questions it saved 7% of the time and its answers
    # were not shown to be as good (benchmarks/results/accuracy_side_by_side.md)
    return os.environ.get(LLAMA_PARALLEL_ENV, "").strip().lower() in ("1", "on", "true", "yes")


_LLAMAS: dict[tuple[str, int, int], tuple[Any, threading.Lock]] = {}
_LLAMAS_LOCK = threading.Lock()


def import_llama_cpp() -> Any:
    """The ``llama_cpp`` module (:class:`MissingDriverError` with the install hint when it is
    not installed)."""
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
            llama_cpp = import_llama_cpp()
            try:
                # room for several sequences in one KV cache: replies decoded side by side
                llama = load_llama(
                    llama_cpp.Llama,
                    llama_cpp.llama_cpp,
                    model_path=model_path,
                    n_ctx=n_ctx,
                    n_threads=n_threads,
                    verbose=False,
                    seed=0,
                )
            except (ValueError, OSError, RuntimeError) as exc:
                raise ConfigurationError(
                    f"llama.cpp could not load {model_path}: {exc}",
                    hint="the file may be corrupt or not a GGUF model: delete it and run "
                    "`sqlnb model download qwen2.5-coder-1.5b` again",
                ) from exc
            cache = _cache_bytes()
            if cache:
                llama.set_cache(prompt_state_cache(llama_cpp, cache))
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


class LlamaCppChatModel(PromptChatModel):
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
    takes_purpose: ClassVar[bool] = True  # and the call's purpose (an explanation's length cap)
    keeps_prompt_states: ClassVar[bool] = True  # a prompt read ahead is not read again

    @property
    def _llm_type(self) -> str:
        return "sqlnb-llamacpp"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {
            "model_path": self.model_path,
            "n_ctx": self.n_ctx,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }

    def _completion(
        self, prompt: list[tuple[str, str]], stop: list[str] | None, options: Mapping[str, Any]
    ) -> dict[str, Any]:
        """``create_chat_completion``'s arguments for ``prompt`` and the call's options."""
        stops = stop if stop is not None else self.stop
        return {
            "messages": [{"role": role, "content": content} for role, content in prompt],
            "temperature": options.get("temperature", self.temperature),
            "repeat_penalty": self.repeat_penalty,
            "max_tokens": options.get("max_tokens", self.max_tokens),
            "stop": list(stops) if stops else [],
            # a fixed seed per call: sampled replies are reproducible
            **({"seed": int(options["seed"])} if options.get("seed") is not None else {}),
        }

    def _answer(
        self, prompt: list[tuple[str, str]], stop: list[str] | None, options: Mapping[str, Any]
    ) -> AIMessage:
        llama, lock = _get_llama(self.model_path, self.n_ctx, self.n_threads)
        with lock:
            try:
                out = llama.create_chat_completion(**self._completion(prompt, stop, options))
            except ValueError as exc:  # e.g. "Requested tokens (9000) exceed context window"
                raise self._refused(exc) from exc
        return completion_message(out, Path(self.model_path).name)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        """The reply as llama.cpp writes it, a token at a time; its usage on the last piece
        (the tokens written counted as they come, the prompt's read off the model's context)."""
        llama, lock = _get_llama(self.model_path, self.n_ctx, self.n_threads)
        pieces, finish = 0, None
        with lock:
            try:
                stream = llama.create_chat_completion(
                    **self._completion(role_content(messages), stop, kwargs), stream=True
                )
                for part in stream:
                    choice = part["choices"][0]
                    finish = choice.get("finish_reason") or finish
                    delta = choice.get("delta") or {}
                    if "content" in delta:  # one token (its text may wait for the next)
                        pieces += 1
                    if delta.get("content"):
                        yield ChatGenerationChunk(message=AIMessageChunk(content=delta["content"]))
            except ValueError as exc:  # e.g. "Requested tokens (9000) exceed context window"
                raise self._refused(exc) from exc
            # the context holds the prompt and every token written but the last
            prompt_tokens = max(0, int(getattr(llama, "n_tokens", 0) or 0) - pieces + 1)
        yield usage_chunk(prompt_tokens, pieces, finish_reason=finish, model=Path(self.model_path).name)

    def _refused(self, exc: ValueError) -> ModelError:
        message = f"llama.cpp refused the prompt: {exc}"
        hint = (
            f"the prompt is too long for n_ctx={self.n_ctx}: start a new conversation, or "
            "give the model a larger context (n_ctx)"
        )
        return context_too_long(message, window=self.n_ctx, hint=hint) or ModelError(message, hint=hint)

    def replies(
        self,
        messages: LanguageModelInput,
        specs: Sequence[dict[str, Any]],
        *,
        max_tokens: int | None = None,
        stop: Sequence[str] | None = None,
    ) -> list[tuple[str, dict[str, int]]]:
        """One reply per spec (``temperature``, ``seed``) to ``messages``, decoded side by
        side (one model pass per token for all of them): each reply's text and its token
        usage (the prompt counted for each, as separate calls would).  Replies are the ones
        separate calls would give, but for rounding differences of batched arithmetic."""
        llama, lock = _get_llama(self.model_path, self.n_ctx, self.n_threads)
        chat = [
            {"role": role, "content": content}
            for role, content in role_content(self._convert_input(messages).to_messages())
        ]
        stops = list(stop) if stop is not None else list(self.stop or [])
        with lock:
            try:
                prompt, stops = chat_prompt(llama, chat, stops)
                done = side_by_side(
                    llama,
                    prompt,
                    specs,
                    stop=stops,
                    max_tokens=max_tokens if max_tokens is not None else self.max_tokens,
                )
            except ValueError as exc:
                raise self._refused(exc) from exc
        return [
            (text, {"input_tokens": len(prompt), "output_tokens": n, "total_tokens": len(prompt) + n})
            for text, n in done
        ]
