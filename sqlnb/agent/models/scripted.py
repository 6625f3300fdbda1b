"""``scripted:replies.json``: a chat model that answers from a fixed list, for sqlnb's tests
and demos."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from langchain_core.messages import AIMessage
from pydantic import Field, PrivateAttr

from sqlnb.agent.models.messages import CURRENT_STOP, PromptChatModel, reply_message
from sqlnb.errors import ConfigurationError, ModelError, ScriptExhausted

__all__ = ["ScriptedChatModel"]


class ScriptedChatModel(PromptChatModel):
    """Replies from a fixed list, in order: deterministic tests and demos.

    ``prompts`` records every prompt received as ``[(role, content), ...]`` with roles
    ``system``/``user``/``assistant``.  Token usage is estimated (4 characters a token).

    ``drafts``: the replies to sampled calls (a temperature given, as the agent's retry
    drafts are), in order, recorded in ``draft_prompts``.  None: the script does not
    sample, and the agent draws no drafts from it.

    ``explanations``: the replies to the calls that explain an answer (purpose
    ``explain``), in order, recorded in ``explain_prompts``.  None: the script writes no
    explanations, and the agent asks for none.

    ``corrections``: the replies to the calls that correct an answer the checks doubt
    (purpose ``correct``), in order, recorded in ``correct_prompts``.  None: the script
    writes no corrections, and the agent asks for none.

    ``delay``: seconds each call (reply or draft) waits before answering: a slow model,
    for the panel's Stop button in browser tests and the bridge benchmark.  The wait ends
    early when the turn is stopped (:class:`sqlnb.agent.stop.StopToken`); the call then
    fails with :class:`ModelError` and uses up no reply.  In a file:
    ``{"replies": [...], "drafts": [...], "explanations": [...], "corrections": [...],
    "delay": 2.5}``.

    ``stream_pause``: seconds between two words of a streamed reply (the browser tests
    watch the text arrive); ``"stream_pause"`` in a file.

    ``context_window``: the prompt tokens it takes, counted as ``chars_per_token``
    characters each; a longer prompt is refused in llama.cpp's words ("Requested tokens
    (N) exceed context window of W"), using up no reply.  None: any prompt is taken.

    ``read_ahead``: it stands for a model that keeps prompt states (a local one), so sqlnb
    has it read the start of the next question's prompt ahead of time
    (:meth:`sqlnb.agent.runner.Agent.warm`); those calls take no reply of the script and are
    recorded in ``read_ahead_prompts``.  ``"read_ahead": true`` in a file.
    """

    replies: list[str]
    position: int = 0
    prompts: list[list[tuple[str, str]]] = Field(default_factory=list)
    drafts: list[str] | None = None
    draft_position: int = 0
    draft_prompts: list[list[tuple[str, str]]] = Field(default_factory=list)
    explanations: list[str] | None = None
    explain_position: int = 0
    explain_prompts: list[list[tuple[str, str]]] = Field(default_factory=list)
    corrections: list[str] | None = None
    correct_position: int = 0
    correct_prompts: list[list[tuple[str, str]]] = Field(default_factory=list)
    source: str | None = None
    """The file the replies came from (its name shows in :func:`describe_model`)."""
    delay: float = 0.0
    stream_pause: float = 0.0
    """Seconds between two words of a streamed reply (``"stream_pause"`` in a file)."""
    read_ahead: bool = False
    context_window: int | None = None
    chars_per_token: float = 4.0
    refused_prompts: list[list[tuple[str, str]]] = Field(default_factory=list)
    read_ahead_prompts: list[list[tuple[str, str]]] = Field(default_factory=list)

    takes_purpose: ClassVar[bool] = True  # ModelClient passes the call's purpose

    @property
    def samples(self) -> bool:
        return self.drafts is not None

    @property
    def keeps_prompt_states(self) -> bool:
        return self.read_ahead

    @property
    def explains(self) -> bool:
        return self.explanations is not None

    @property
    def corrects(self) -> bool:
        return self.corrections is not None

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
            raise ConfigurationError(
                f"cannot read scripted model file {str(file)!r}: {exc.strerror or exc}"
            ) from exc
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ConfigurationError(
                f"scripted model file {str(file)!r} is not valid JSON: {exc.msg} at line "
                f"{exc.lineno}, column {exc.colno}",
                hint=f"it must hold a JSON list of reply strings, {example}",
            ) from None
        drafts, explanations, corrections, delay, pause, ahead = None, None, None, 0.0, 0.0, False
        keys = {"replies", "drafts", "explanations", "corrections", "delay", "stream_pause", "read_ahead"}
        if isinstance(data, dict) and set(data) <= keys and "replies" in data:
            drafts, explanations = data.get("drafts"), data.get("explanations")
            corrections = data.get("corrections")
            ahead = data.get("read_ahead", False)
            if not isinstance(ahead, bool):
                raise ConfigurationError(
                    f'scripted model file {str(file)!r}: "read_ahead" must be true or false, '
                    f"not {json.dumps(ahead)}"
                )
            delay, pause = data.get("delay", 0.0), data.get("stream_pause", 0.0)
            data = data["replies"]
            for key, value in (("delay", delay), ("stream_pause", pause)):
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
                    raise ConfigurationError(
                        f'scripted model file {str(file)!r}: "{key}" must be a number of '
                        f"seconds (0 or more), not {json.dumps(value)}",
                        hint=f'e.g. {{"replies": ["```sql\\nSELECT 1\\n```"], "{key}": 2}}',
                    )
        for key, value in (("drafts", drafts), ("explanations", explanations), ("corrections", corrections)):
            if not isinstance(value, (list, type(None))):
                raise ConfigurationError(
                    f'scripted model file {str(file)!r}: "{key}" must be a list of reply strings, '
                    f"not a JSON {type(value).__name__}",
                    hint=f'e.g. {{"replies": ["FINAL"], "{key}": ["```sql\\nSELECT 1\\n```"]}}',
                )
        if not isinstance(data, list):
            raise ConfigurationError(
                f"scripted model file {str(file)!r} holds a JSON {type(data).__name__}, not a list",
                hint=f"it must hold a JSON list of reply strings, {example} (or an object "
                'with that list under "replies", sampled replies under "drafts", '
                'explanations of answers under "explanations" and corrections under "corrections")',
            )
        for what, items in (
            ("reply", data),
            ("draft", drafts or []),
            ("explanation", explanations or []),
            ("correction", corrections or []),
        ):
            for i, item in enumerate(items):
                if not isinstance(item, str):
                    raise ConfigurationError(
                        f"scripted model file {str(file)!r}: {what} {i + 1} is a JSON "
                        f"{type(item).__name__}, not a string",
                        hint=f"it must hold a JSON list of reply strings, {example}",
                    )
        return cls(
            replies=data,
            drafts=drafts,
            explanations=explanations,
            corrections=corrections,
            source=file.name,
            delay=float(delay),
            stream_pause=float(pause),
            read_ahead=ahead,
        )

    @property
    def _llm_type(self) -> str:
        return "sqlnb-scripted"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"source": self.source, "replies": len(self.replies)}

    @property
    def remaining(self) -> int:
        return len(self.replies) - self.position

    @staticmethod
    def _wait(seconds: float) -> None:
        """Wait ``seconds``, ended early by a stop of the turn (:class:`ModelError`)."""
        token = CURRENT_STOP.get()
        if token is None:
            time.sleep(seconds)
        elif token.wait(seconds):
            raise ModelError("the scripted model's call was stopped")

    def _between_pieces(self) -> None:
        if self.stream_pause > 0:
            self._wait(self.stream_pause)

    def _answer(
        self, prompt: list[tuple[str, str]], stop: list[str] | None, options: Mapping[str, Any]
    ) -> AIMessage:
        tokens = int(sum(len(content) for _, content in prompt) / self.chars_per_token)
        if self.context_window is not None and tokens >= self.context_window:
            with self._lock:
                self.refused_prompts.append(prompt)
            raise ValueError(f"Requested tokens ({tokens}) exceed context window of {self.context_window}")
        if options.get("purpose") == "read_ahead":  # no reply of the script, no delay
            with self._lock:
                self.read_ahead_prompts.append(prompt)
            return reply_message("", sum(len(content) for _, content in prompt) // 4, 0)
        if self.delay > 0:
            self._wait(self.delay)
        if options.get("purpose") in ("explain", "correct"):
            reply = self._next_of(options["purpose"], prompt)
        elif options.get("temperature") is not None and self.drafts is not None:
            reply = self._next_of("draft", prompt)
        else:
            reply = self._next_reply(prompt)
        return reply_message(reply, sum(len(content) for _, content in prompt) // 4, len(reply) // 4)

    # the scripted calls of each kind but the replies: the list, its position and its
    # prompts (attributes), and the words of the error once it is used up
    _KINDS: ClassVar[dict[str, tuple[str, str, str, str, str]]] = {
        "draft": ("drafts", "draft_position", "draft_prompts", "draft", "fewer sampled calls"),
        "explain": (
            "explanations",
            "explain_position",
            "explain_prompts",
            "explanation",
            "fewer answers explained",
        ),
        "correct": (
            "corrections",
            "correct_position",
            "correct_prompts",
            "correction",
            "fewer answers corrected",
        ),
    }

    def _next_of(self, kind: str, prompt: list[tuple[str, str]]) -> str:
        """The next scripted answer to a call of ``kind`` (a draft, an explanation, a
        correction), its prompt recorded; :class:`ScriptExhausted` once they are used up."""
        items_name, position_name, prompts_name, what, fewer = self._KINDS[kind]
        items: list[str] = getattr(self, items_name) or []
        with self._lock:
            getattr(self, prompts_name).append(prompt)
            position: int = getattr(self, position_name)
            if position >= len(items):
                raise ScriptExhausted(
                    f"the scripted model has no {what} left: all {len(items)} were used",
                    hint=f"add {items_name} to the script, or expect {fewer}",
                )
            setattr(self, position_name, position + 1)
            return str(items[position])

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
