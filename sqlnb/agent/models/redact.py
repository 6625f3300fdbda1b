"""What a model's error may show: API keys masked, the first line of an exception."""

from __future__ import annotations

import os
import re

__all__ = ["first_line", "scrub_secrets"]

_SECRET_PATTERNS = [
    (re.compile(r"\b(sk-ant-|sk-proj-|sk-)[A-Za-z0-9_\-]{6,}"), r"\1***"),
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._\-]{8,}"), r"\1***"),
    (re.compile(r"(?i)((?:api[_-]?key|x-api-key|token)[\"']?\s*[:=]\s*[\"']?)[^\s\"',}]{6,}"), r"\1***"),
]


def scrub_secrets(text: str) -> str:
    """``text`` with anything that looks like an API key replaced by ``***``."""
    for name, value in os.environ.items():
        if len(value) >= 8 and name.endswith(("_API_KEY", "_TOKEN", "_SECRET")) and value in text:
            text = text.replace(value, "***")
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (its class name when it has none)."""
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0] if text else text
