"""What a model call receives: LangChain messages as ``(role, content)`` pairs, a reply's
text, and the stop token of the turn the call belongs to."""

from __future__ import annotations

import contextvars
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage

__all__ = ["CURRENT_STOP", "message_text", "role_content"]

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


# The stop token of the turn whose model call runs in this thread (ModelClient sets it in
# the call's worker thread): a model that waits can wake up on it.
CURRENT_STOP: contextvars.ContextVar[Any] = contextvars.ContextVar("sqlnb_stop", default=None)
