"""Which model a spec names: ``provider:model`` to a LangChain chat model
(:func:`resolve_model`), and a model back to such a name (:func:`describe_model`)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from sqlnb.agent.models.llamacpp import LlamaCppChatModel, import_llama_cpp
from sqlnb.agent.models.llamaserver import shared_model
from sqlnb.agent.models.redact import first_line, scrub_secrets
from sqlnb.agent.models.scripted import ScriptedChatModel
from sqlnb.errors import ConfigurationError, MissingDriverError, ModelNotConfigured

__all__ = ["DEFAULT_ANTHROPIC_MODEL", "MODEL_ENV", "describe_model", "resolve_model"]

MODEL_ENV = "SQLNB_MODEL"
DEFAULT_ANTHROPIC_MODEL = "anthropic:claude-sonnet-4-5"

# One line: what to do when no model is configured (the notebook's %%ask, the panel's
# error, the CLI all show it after "no language model is configured").
_HOW_TO_CONFIGURE = (
    "set ANTHROPIC_API_KEY, or run `sqlnb demo --offline` for a local one, or "
    '%config AskMagic.model = "provider:model" (also SQLNB_MODEL or --model), '
    "e.g. openai:gpt-4o-mini, ollama:qwen2.5-coder, llamacpp:qwen2.5-coder-1.5b"
)

# Environment variables holding each provider's API key (for hints only).
_KEY_ENV = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "azure_openai": "AZURE_OPENAI_API_KEY",
    "groq": "GROQ_API_KEY",
    "mistralai": "MISTRAL_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "xai": "XAI_API_KEY",
    "fireworks": "FIREWORKS_API_KEY",
    "together": "TOGETHER_API_KEY",
    "google_genai": "GOOGLE_API_KEY",
    "cohere": "COHERE_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "perplexity": "PPLX_API_KEY",
}
# sqlnb's own extra names the package where one exists
_EXTRA_FOR = {"langchain-openai": "sqlnb[openai]"}


def _llama_model_path(value: str) -> str:
    from sqlnb.agent.download.catalog import MODELS, model_dir, model_path

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
        hint=f"sqlnb model download {default} and use llamacpp:{default}, or give the path of a .gguf file",
    )


# --- resolution ------------------------------------------------------------------------
def _builtin_providers() -> dict[str, tuple[Any, ...]]:
    try:
        from langchain.chat_models import base
    except ImportError:  # pragma: no cover - langchain is a dependency
        return {}
    return dict(getattr(base, "_BUILTIN_PROVIDERS", {}))


def resolve_model(
    spec: str | None = None, *, timeout: float = 60.0, temperature: float = 0.0, **kwargs: Any
) -> BaseChatModel:
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
        from sqlnb.agent.download.catalog import DEFAULT_MODEL, offline_model

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
        # the Jupyter server's shared model process, when it serves this file (sqlnb.server)
        shared = shared_model(path, temperature=temperature, **kwargs)
        if shared is not None:
            return shared
        if importlib.util.find_spec("llama_cpp") is None:
            import_llama_cpp()  # raises MissingDriverError with the install hint
        return LlamaCppChatModel(model_path=path, temperature=temperature, **kwargs)
    return _init_provider(provider, name, timeout=timeout, temperature=temperature, kwargs=kwargs)


def _init_provider(
    provider: str, name: str, *, timeout: float, temperature: float, kwargs: dict[str, Any]
) -> BaseChatModel:
    builtin = _builtin_providers()
    if builtin and provider not in builtin:
        known = ", ".join(sorted({*builtin, "llamacpp", "scripted"}))
        raise ConfigurationError(
            f"unknown model provider {provider!r} in {provider}:{name}", hint=f"use one of: {known}"
        )
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
        raise ModelNotConfigured(
            f"anthropic:{name} needs an Anthropic API key",
            hint="set ANTHROPIC_API_KEY, or choose another model with "
            '%config AskMagic.model = "provider:model" (also '
            "SQLNB_MODEL or --model); `sqlnb demo --offline` sets "
            "up a local one",
        )
    if provider == "openai" and kw.get("base_url") and not has_key:
        kw["api_key"] = "not-needed"  # local OpenAI-compatible servers ignore the key

    from langchain.chat_models import init_chat_model

    try:
        model: BaseChatModel = init_chat_model(name, model_provider=provider, **kw)
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
            f"cannot set up {provider}:{name}: {scrub_secrets(first_line(exc))}",
            hint=hint,
        ) from exc
    try:
        model.metadata = {**(model.metadata or {}), "sqlnb_model": f"{provider}:{name}"}
    except (ValueError, TypeError, AttributeError):  # pragma: no cover - frozen model
        pass
    return model


# --- describing -------------------------------------------------------------------------
_PROVIDER_BY_CLASS = {
    "ChatAnthropic": "anthropic",
    "ChatOpenAI": "openai",
    "AzureChatOpenAI": "azure_openai",
    "ChatOllama": "ollama",
    "ChatGroq": "groq",
    "ChatMistralAI": "mistralai",
    "ChatGoogleGenerativeAI": "google_genai",
    "ChatVertexAI": "google_vertexai",
    "ChatBedrock": "bedrock",
    "ChatBedrockConverse": "bedrock_converse",
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
    name = next(
        (
            getattr(model, attr)
            for attr in ("model", "model_name", "model_id")
            if isinstance(getattr(model, attr, None), str)
        ),
        None,
    )
    return f"{provider}:{name}" if name else provider
