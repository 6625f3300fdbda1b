"""A prompt longer than the model's context window, told apart from other refusals.

Each runtime says it in its own words; :func:`context_too_long` reads the ones sqlnb's
models meet and returns a :class:`~sqlnb.errors.ContextTooLong` with the token counts it
found, so that the agent can show the model less of the schema and ask again
(:mod:`sqlnb.agent.fit`) instead of failing the question.
"""

from __future__ import annotations

import re

from sqlnb.errors import ContextTooLong

# what each runtime writes (the numbers, where it gives them, in named groups)
_PATTERNS = (
    # llama-cpp-python: "Requested tokens (9348) exceed context window of 8192"
    re.compile(r"requested tokens \((?P<requested>\d+)\) exceeds? context window of (?P<window>\d+)", re.I),
    # Anthropic: "prompt is too long: 210000 tokens > 200000 maximum"
    re.compile(r"prompt is too long: (?P<requested>\d+) tokens > (?P<window>\d+) maximum", re.I),
    # OpenAI: "This model's maximum context length is 8192 tokens. However, your messages
    # resulted in 9000 tokens"; llama-cpp-python's server in the same words: "... However,
    # you requested 4246 tokens (4230 in the messages, 16 in the completion)"
    re.compile(
        r"maximum context length is (?P<window>\d+) tokens\b.*?(?:resulted in|you requested) "
        r"(?P<requested>\d+) tokens(?: \((?P<prompt>\d+) in the messages)?",
        re.I | re.S,
    ),
    # llama.cpp's server: "the request exceeds the available context size, try increasing it"
    # (its JSON error may carry n_prompt_tokens and n_ctx: see ``counts``)
    re.compile(r"exceeds the available context size", re.I),
    re.compile(r"context_length_exceeded|prompt is too long|exceed(?:s|ed)? (?:the )?context window", re.I),
)


def context_too_long(
    message: str, *, requested: int | None = None, window: int | None = None, hint: str | None = None
) -> ContextTooLong | None:
    """The :class:`ContextTooLong` that ``message`` reports (its token counts where it says
    them, else ``requested`` and ``window``), or None when it reports something else."""
    for pattern in _PATTERNS:
        m = pattern.search(message)
        if m is None:
            continue
        found = m.groupdict()
        prompt = found.get("prompt") or found.get("requested")  # the prompt's own tokens first
        return ContextTooLong(
            message,
            requested=int(prompt) if prompt else requested,
            window=int(found["window"]) if found.get("window") else window,
            hint=hint,
        )
    return None
