"""Which language model the agent talks to, and how it calls it.

One spec string ``provider:model`` picks a LangChain chat model (:func:`resolve_model`):

- ``anthropic:claude-sonnet-4-5``, ``openai:gpt-4o-mini``, ``ollama:qwen2.5-coder``, any
  provider LangChain's ``init_chat_model`` knows;
- ``llamacpp:qwen2.5-coder-1.5b`` (a downloaded model name) or ``llamacpp:/path/x.gguf``:
  llama.cpp in-process (:class:`LlamaCppChatModel`), or the Jupyter server's model process
  shared by its notebooks when it serves that file
  (:class:`~sqlnb.agent.models.llamaserver.LlamaServerChatModel`, :mod:`sqlnb.server`);
- ``scripted:replies.json``: canned replies for sqlnb's tests (:class:`ScriptedChatModel`).

:class:`ModelClient` is what the agent calls: it retries transient failures, enforces a
deadline, scrubs secrets from errors and returns the reply text with token usage.

The package, one module per job: :mod:`~sqlnb.agent.models.spec` (resolving and describing
specs), :mod:`~sqlnb.agent.models.client` (:class:`ModelClient`),
:mod:`~sqlnb.agent.models.llamacpp`, :mod:`~sqlnb.agent.models.llamaserver`,
:mod:`~sqlnb.agent.models.scripted`, and the helpers
they share (:mod:`~sqlnb.agent.models.messages`, :mod:`~sqlnb.agent.models.redact`).
"""

from __future__ import annotations

from sqlnb.agent.models.client import DRAFT_MAX_TOKENS, DRAFT_STOP, ModelClient
from sqlnb.agent.models.llamacpp import LLAMA_PARALLEL_ENV, LLAMA_THREADS_ENV, LlamaCppChatModel
from sqlnb.agent.models.redact import scrub_secrets
from sqlnb.agent.models.scripted import ScriptedChatModel
from sqlnb.agent.models.spec import (
    DEFAULT_ANTHROPIC_MODEL,
    MODEL_ENV,
    describe_model,
    resolve_model,
)
from sqlnb.errors import ModelError, ModelNotConfigured, ScriptExhausted

__all__ = [
    "DEFAULT_ANTHROPIC_MODEL",
    "DRAFT_MAX_TOKENS",
    "DRAFT_STOP",
    "LLAMA_PARALLEL_ENV",
    "LLAMA_THREADS_ENV",
    "MODEL_ENV",
    "LlamaCppChatModel",
    "ModelClient",
    "ModelError",
    "ModelNotConfigured",
    "ScriptExhausted",
    "ScriptedChatModel",
    "describe_model",
    "resolve_model",
    "scrub_secrets",
]
