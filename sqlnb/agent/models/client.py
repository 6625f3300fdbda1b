"""The agent's way of calling a chat model: :class:`ModelClient` retries transient failures,
enforces a deadline, abandons a stopped call, scrubs secrets from errors and returns the reply
text with its token usage."""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessageChunk, BaseMessage, BaseMessageChunk

from sqlnb.agent.models.llamacpp import LLAMA_PARALLEL_ENV
from sqlnb.agent.models.messages import CURRENT_STOP, message_text
from sqlnb.agent.models.overflow import context_too_long
from sqlnb.agent.models.redact import first_line, scrub_secrets
from sqlnb.agent.models.spec import describe_model
from sqlnb.errors import ContextTooLong, ModelError, SqlnbError

__all__ = ["DRAFT_MAX_TOKENS", "DRAFT_STOP", "ModelClient", "TextSink"]

# A draft's reply ends where its ```sql block has closed and prose begins: the closing
# fence followed by a blank line (what the explanation after the query starts with).  The
# block's text stays whole; extract_sql reads a fence left open.
DRAFT_STOP = ("```\n\n",)
DRAFT_MAX_TOKENS = 320
# an answer's explanation: two to four sentences
EXPLAIN_MAX_TOKENS = 160


class TextSink(Protocol):
    """Where a streamed reply's text goes: each piece as it is written; ``restart``: the
    text so far is void (the call is tried again)."""

    def __call__(self, piece: str, *, restart: bool = False) -> None: ...


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

    def __init__(
        self,
        model: BaseChatModel,
        *,
        retries: int = 2,
        backoff: float = 1.0,
        timeout: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
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

    @property
    def corrects(self) -> bool:
        """Whether the model writes corrections of answers the checks doubt (a scripted
        model only when its script has them)."""
        return bool(getattr(self.model, "corrects", True))

    @property
    def explains(self) -> bool:
        """Whether the model writes explanations of answers (a scripted model only when its
        script has them)."""
        return bool(getattr(self.model, "explains", True))

    @property
    def keeps_prompt_states(self) -> bool:
        """Whether the model keeps what it has read of a prompt for a later prompt that
        begins the same way (a local llama.cpp model): reading a prompt's beginning ahead of
        time (:meth:`warm`) then saves that time when the prompt comes."""
        return bool(getattr(self.model, "keeps_prompt_states", False))

    def warm(self, messages: LanguageModelInput) -> float:
        """Have the model read ``messages`` and write one token, so that a later prompt that
        begins with them is read from where it parts (only a model that
        :attr:`keeps_prompt_states`; the others are not called).  The seconds it took; not
        retried (a warm-up that fails costs the next question only that time)."""
        if not self.keeps_prompt_states:
            return 0.0
        options: dict[str, Any] = {"max_tokens": 1}
        if getattr(self.model, "takes_purpose", False):
            options["purpose"] = "read_ahead"
        start = time.perf_counter()
        self._run(lambda: self.model.invoke(messages, **options))
        return time.perf_counter() - start

    def invoke(
        self,
        messages: LanguageModelInput,
        *,
        temperature: float | None = None,
        seed: int | None = None,
        stop: Any = None,
        draft: bool = False,
        purpose: str | None = None,
        on_text: TextSink | None = None,
    ) -> tuple[str, dict[str, Any]]:
        """Return the reply text and this call's usage: input/output/total tokens,
        ``calls`` (1) and ``seconds`` (wall time, retries included).

        ``temperature`` overrides the model's for this call (a sampled reply); ``seed``
        makes it reproducible where the model takes one (llama.cpp).  ``stop``: a
        :class:`~sqlnb.agent.stop.StopToken` that abandons the call when stopped.
        ``draft``: only the query of the reply is used (a draft of an answer), so a model
        that takes them (llama.cpp) stops generating once the ```sql block has closed and
        the text after it begins (``DRAFT_STOP``), within ``DRAFT_MAX_TOKENS``.
        ``purpose``: ``"explain"`` for an answer's explanation (a model of sqlnb's own
        answers it from its explanations, within ``EXPLAIN_MAX_TOKENS``).
        ``on_text``: the reply is streamed, each piece of text handed to it as it is
        written (``on_text(piece)``); before a retried attempt it is told to start over
        (``on_text("", restart=True)``).  The reply and its usage are the same as without."""
        options: dict[str, Any] = {}
        if temperature is not None:
            options["temperature"] = temperature
            if seed is not None and getattr(self.model, "takes_seed", False):
                options["seed"] = seed
        if draft and getattr(self.model, "takes_seed", False):
            options["stop"] = list(DRAFT_STOP)
            options["max_tokens"] = DRAFT_MAX_TOKENS
        if purpose and getattr(self.model, "takes_purpose", False):
            options["purpose"] = purpose
            if purpose == "explain":
                options["max_tokens"] = EXPLAIN_MAX_TOKENS
        start = time.perf_counter()
        attempt = 0
        while True:
            if stop is not None and stop.stopped:
                raise _stopped_error(self.name)
            try:
                if on_text is not None and attempt:
                    on_text("", restart=True)  # the retry writes the reply again
                message = self._call(messages, options, stop, on_text)
                break
            except SqlnbError:  # sqlnb's own, a stopped call's and a missed deadline's included
                raise
            except Exception as exc:
                overflow = self._too_long(exc)
                if overflow is not None:  # a provider's own "prompt is too long": not retried
                    raise overflow from exc
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
                pause = min(self.backoff * 2**attempt, self.MAX_DELAY)
                if stop is not None and self.sleep is time.sleep:
                    stop.wait(pause)  # a stop ends the pause (and the loop, above)
                else:
                    self.sleep(pause)
                attempt += 1
        seconds = time.perf_counter() - start
        text = message_text(message) if isinstance(message, BaseMessage) else str(message)
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

    def invoke_many(
        self,
        messages: LanguageModelInput,
        specs: Sequence[dict[str, Any]],
        *,
        stop: Any = None,
        draft: bool = True,
    ) -> list[tuple[str, dict[str, Any]]]:
        """Replies to one prompt, one per spec (``temperature``: None for the model's own,
        ``seed``), each with its usage as :meth:`invoke` gives it.  Written side by side
        where the model can (:attr:`side_by_side`: one call, its seconds on the first
        reply, ``calls`` 0 and ``replies_beside`` 1 on the others), else one call each.
        ``draft``: only their queries are used (as in :meth:`invoke`)."""
        if not self.side_by_side:
            return [
                self.invoke(
                    messages, temperature=sp.get("temperature"), seed=sp.get("seed"), stop=stop, draft=draft
                )
                for sp in specs
            ]
        wanted = [
            {
                "temperature": sp["temperature"]
                if sp.get("temperature") is not None
                else getattr(self.model, "temperature", 0.0),
                "seed": sp.get("seed"),
            }
            for sp in specs
        ]
        options = {"max_tokens": DRAFT_MAX_TOKENS, "stop": list(DRAFT_STOP)} if draft else {}
        model: Any = self.model  # side_by_side: a model with replies() (LlamaCppChatModel)
        start = time.perf_counter()
        try:
            done = self._run(lambda: model.replies(messages, wanted, **options), stop)
        except SqlnbError:  # sqlnb's own, a stopped call's and a missed deadline's included
            raise
        except Exception as exc:
            overflow = self._too_long(exc)
            if overflow is not None:
                raise overflow from exc
            raise ModelError(
                f"{self.name} failed: {self._describe(exc)}",
                hint=f"try again; if it persists, turn side-by-side replies off (unset {LLAMA_PARALLEL_ENV})",
            ) from exc
        seconds = time.perf_counter() - start
        # one call (the model was asked once, for the time of about one reply); the
        # replies written beside the first are counted apart
        return [
            (
                text,
                {**usage, "calls": 1, "seconds": seconds}
                if i == 0
                else {**usage, "calls": 0, "seconds": 0.0, "replies_beside": 1},
            )
            for i, (text, usage) in enumerate(done)
        ]

    def _deadline_error(self) -> ModelError:
        return ModelError(
            f"{self.name} did not answer within {self.timeout:g} s",
            hint="try again, or allow more time (a larger timeout)",
        )

    def _too_long(self, exc: BaseException) -> ContextTooLong | None:
        """``exc`` as the provider's "prompt is too long" (sqlnb.agent.models.overflow), or None."""
        return context_too_long(f"{self.name} refused the request: {self._describe(exc)}")

    @staticmethod
    def _describe(exc: BaseException) -> str:
        return scrub_secrets(f"{type(exc).__name__}: {first_line(exc)}")

    def _call(
        self,
        messages: LanguageModelInput,
        options: dict[str, Any] | None = None,
        stop: Any = None,
        on_text: TextSink | None = None,
    ) -> Any:
        options = options or {}
        if on_text is None:
            return self._run(lambda: self.model.invoke(messages, **options), stop)
        return self._run(lambda: self._streamed(messages, options, on_text), stop)

    def _streamed(self, messages: LanguageModelInput, options: dict[str, Any], on_text: TextSink) -> Any:
        """The reply written piece by piece (LangChain's ``stream``: a model that cannot
        stream gives its whole reply as one piece), each piece handed to ``on_text``; the
        pieces added up are the reply, its usage included."""
        reply: BaseMessageChunk | None = None
        for chunk in self.model.stream(messages, **options):
            reply = chunk if reply is None else reply + chunk
            piece = chunk.content if isinstance(chunk.content, str) else message_text(chunk)
            if piece:
                on_text(piece)
        return reply if reply is not None else AIMessageChunk(content="")

    def _run(self, call: Callable[[], Any], stop: Any = None) -> Any:
        """``call()`` within the timeout, abandoned when ``stop`` is stopped (a worker
        thread then; in this thread when neither is set): a :class:`ModelError` (not retried)
        for a stopped call and for one past the deadline."""
        if self.timeout is None and stop is None:
            return call()
        box: dict[str, Any] = {}
        done = threading.Event()

        def work() -> None:
            CURRENT_STOP.set(stop)
            try:
                box["result"] = call()
            except BaseException as exc:  # handed to the caller's thread
                box["error"] = exc
            finally:
                done.set()

        context = contextvars.copy_context()  # keep LangChain callbacks/tracing context
        worker = threading.Thread(target=context.run, args=(work,), daemon=True, name="sqlnb-model-call")
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
                raise _stopped_error(self.name)
            if not finished:
                raise self._deadline_error()
        if "error" in box:
            raise box["error"]
        return box["result"]
