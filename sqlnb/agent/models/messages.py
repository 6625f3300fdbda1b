"""What a model call receives and what sqlnb's own chat models give back: LangChain messages
as ``(role, content)`` pairs, a reply's text, the stop token of the turn the call belongs to,
and :class:`PromptChatModel`, the LangChain side of the scripted and llama.cpp models."""

from __future__ import annotations

import contextvars
import re
from abc import abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

__all__ = [
    "CURRENT_STOP",
    "PromptChatModel",
    "completion_message",
    "message_text",
    "reply_message",
    "role_content",
    "usage_chunk",
]

_PIECE = re.compile(r"\s*\S+|\s+")  # a word and the space before it
_ROLES = {"system": "system", "human": "user", "ai": "assistant"}


def message_text(message: BaseMessage) -> str:
    """A message's text (a reply's content, whatever shape the provider gave it)."""
    content = message.content
    if isinstance(content, str):
        return content
    return str(message.text)


def role_content(messages: Sequence[BaseMessage]) -> list[tuple[str, str]]:
    """OpenAI-style roles: system / user / assistant; any other message counts as user."""
    return [(_ROLES.get(m.type, "user"), message_text(m)) for m in messages]


def reply_message(text: str, input_tokens: int, output_tokens: int, **metadata: Any) -> AIMessage:
    """A reply as LangChain keeps it: its text, its token usage and the model's ``metadata``
    (``response_metadata``: a finish reason, the model's name)."""
    return AIMessage(
        content=text,
        usage_metadata={
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens,
        },
        response_metadata=metadata,
    )


def usage_chunk(input_tokens: int, output_tokens: int, **metadata: Any) -> ChatGenerationChunk:
    """The last piece of a streamed reply: no text, the reply's token usage and the model's
    ``metadata`` (a finish reason, the model's name), as :func:`reply_message` has them."""
    reply = reply_message("", input_tokens, output_tokens, **metadata)
    return ChatGenerationChunk(
        message=AIMessageChunk(
            content="", usage_metadata=reply.usage_metadata, response_metadata=reply.response_metadata
        )
    )


def completion_message(out: Mapping[str, Any], model: str) -> AIMessage:
    """An OpenAI-style chat completion (llama.cpp's, in the process or from its server) as
    a reply: its text, its token usage, its finish reason and the model's name."""
    choice = out["choices"][0]
    usage = out.get("usage") or {}
    return reply_message(
        choice["message"].get("content") or "",
        int(usage.get("prompt_tokens", 0)),
        int(usage.get("completion_tokens", 0)),
        finish_reason=choice.get("finish_reason"),
        model=model,
    )


class PromptChatModel(BaseChatModel):
    """A chat model of sqlnb's own (scripted, llama.cpp): it answers a prompt of ``(role,
    content)`` pairs (:func:`role_content`) with one reply (``_answer``, built with
    :func:`reply_message`); LangChain calls it through ``_generate``."""

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        message = self._answer(role_content(messages), stop, kwargs)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        """The reply of ``_answer`` a word at a time (a model that writes as it goes
        overrides this), its usage and metadata on the last piece."""
        message = self._answer(role_content(messages), stop, kwargs)
        for i, piece in enumerate(_PIECE.findall(message_text(message))):
            if i:
                self._between_pieces()
            yield ChatGenerationChunk(message=AIMessageChunk(content=piece))
        yield ChatGenerationChunk(
            message=AIMessageChunk(
                content="",
                usage_metadata=message.usage_metadata,
                response_metadata=message.response_metadata,
            )
        )

    def _between_pieces(self) -> None:
        """The pause between two pieces of a streamed reply (none; a scripted model's may be
        set, for the browser tests that watch it)."""

    @abstractmethod
    def _answer(
        self, prompt: list[tuple[str, str]], stop: list[str] | None, options: Mapping[str, Any]
    ) -> AIMessage:
        """The reply to ``prompt``: ``stop``, the stop sequences LangChain passed (None:
        the model's own); ``options``, the call's options (``temperature``, ``seed``,
        ``max_tokens``)."""


# The stop token of the turn whose model call runs in this thread (ModelClient sets it in
# the call's worker thread): a model that waits can wake up on it.
CURRENT_STOP: contextvars.ContextVar[Any] = contextvars.ContextVar("sqlnb_stop", default=None)
