"""What this session's questions cost: how many were asked and answered, the attempts, the
model's and the database's time, the tokens, and the price of a hosted model's tokens.

The :class:`~sqlnb.agent.runner.Agent` adds every finished question (``%%ask``, the panel,
``sqlnb.chat()``, ``sqlnb.ask()``); ``%sqlnb stats`` and the panel's footer show it."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["PRICES", "PRICES_AS_OF", "SessionStats", "price_of"]

# US dollars per million tokens (input, output): the providers' list prices on this date
PRICES_AS_OF = "2026-11"
PRICES: dict[str, tuple[float, float]] = {
    "anthropic:claude-opus-4-1": (15.0, 75.0),
    "anthropic:claude-opus-4": (15.0, 75.0),
    "anthropic:claude-sonnet-4-5": (3.0, 15.0),
    "anthropic:claude-sonnet-4": (3.0, 15.0),
    "anthropic:claude-haiku-4-5": (1.0, 5.0),
    "anthropic:claude-3-5-haiku": (0.8, 4.0),
    "openai:gpt-4o": (2.5, 10.0),
    "openai:gpt-4o-mini": (0.15, 0.6),
    "openai:gpt-4.1": (2.0, 8.0),
    "openai:gpt-4.1-mini": (0.4, 1.6),
    "openai:gpt-4.1-nano": (0.1, 0.4),
}
# models run on this machine: no price per token
LOCAL = ("llamacpp:", "scripted:", "ollama:")


def price_of(model: str | None) -> tuple[float, float] | None:
    """The (input, output) dollars per million tokens of ``model`` (``provider:name``, a dated
    name matching its family, ``claude-sonnet-4-5-20250929``); (0, 0) for a local model; None
    when unknown."""
    if not model:
        return None
    if model.startswith(LOCAL):
        return (0.0, 0.0)
    if model in PRICES:
        return PRICES[model]
    # the longest listed name the model's name starts with (a dated or suffixed version)
    known = [name for name in PRICES if model.startswith((name + "-", name + "@"))]
    return PRICES[max(known, key=len)] if known else None


@dataclass
class SessionStats:
    """The questions of one kernel session, added up (thread-safe)."""

    questions: int = 0
    answered: int = 0
    asked_back: int = 0
    failed: int = 0
    stopped: int = 0
    attempts: int = 0
    model_calls: int = 0
    model_seconds: float = 0.0
    database_seconds: float = 0.0
    seconds: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    # models whose price is not known: their tokens are not in ``cost``
    unpriced: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, answer: Any) -> None:
        """Add a finished question (an :class:`~sqlnb.agent.runner.AskResult`)."""
        usage: Mapping[str, Any] = getattr(answer, "usage", None) or {}
        status = getattr(answer, "status", None)
        model = getattr(answer, "model", None)
        attempts = list(getattr(answer, "attempts", None) or [])
        tokens_in = int(usage.get("input_tokens", 0) or 0)
        tokens_out = int(usage.get("output_tokens", 0) or 0)
        price = price_of(model)
        with self._lock:
            self.questions += 1
            self.answered += status == "success"
            self.asked_back += status == "needs_clarification"
            self.stopped += status == "stopped"
            self.failed += status not in ("success", "needs_clarification", "stopped")
            self.attempts += len(attempts)
            self.model_calls += int(usage.get("calls", 0) or 0)
            self.model_seconds += float(usage.get("seconds", 0.0) or 0.0)
            self.database_seconds += sum(float(a.get("elapsed") or 0.0) for a in attempts)
            self.seconds += float(getattr(answer, "elapsed", 0.0) or 0.0)
            self.input_tokens += tokens_in
            self.output_tokens += tokens_out
            if model and model not in self.models:
                self.models.append(model)
            if price is None:
                if model and model not in self.unpriced:
                    self.unpriced.append(model)
            else:
                self.cost += (tokens_in * price[0] + tokens_out * price[1]) / 1_000_000

    def to_dict(self) -> dict[str, Any]:
        with self._lock:
            out = {f.name: _copy(getattr(self, f.name)) for f in fields(self) if f.name != "_lock"}
        out["cost"] = round(out["cost"], 6)
        for k in ("model_seconds", "database_seconds", "seconds"):
            out[k] = round(out[k], 3)
        out["prices_as_of"] = PRICES_AS_OF
        return out

    def reset(self) -> None:
        fresh = SessionStats()
        with self._lock:
            for f in fields(self):
                if f.name != "_lock":
                    setattr(self, f.name, getattr(fresh, f.name))


def _copy(value: Any) -> Any:
    return list(value) if isinstance(value, list) else value
