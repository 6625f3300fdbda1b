"""The words sqlnb shows while it answers a question, written once.

Every front door shows the same texts for a run's steps (started, the model's replies, each
attempt, a second pass with remembered answers), for an answer's confidence and for how a run
ended: the terminal (``%%ask``'s progress, ``sqlnb ask``) and the chat widget render them
from here, and the JupyterLab panel receives them ready-made in the protocol's events (the
``label`` fields, docs/protocol.md), so it shows the kernel's words instead of its own.

The functions take an event as the agent emits it (``Agent.ask``'s ``on_event``: an
``attempt`` event holds the attempt under ``attempt``) or as the protocol carries it (the
attempt's fields flat): both give the same label.  Pure functions of plain values: no
database, model or notebook is needed to render a label.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "CONFIDENCE_LEVELS",
    "OUTCOMES",
    "STOP_REASONS",
    "attempt_head",
    "attempt_label",
    "attempt_outcome",
    "confidence_aria_label",
    "confidence_label",
    "confidence_line",
    "confidence_tooltip",
    "format_elapsed",
    "is_routine_reply",
    "memory_label",
    "outcome_head",
    "outcome_label",
    "progress_line",
    "reason_sentence",
    "reply_label",
    "rows_text",
    "score_percent",
    "started_label",
    "step_label",
    "stop_reason_text",
]

# why a run stopped (an AskResult's stop_reason), as a phrase
STOP_REASONS = {
    "finalized": "the model confirmed the result",
    "voted": "the result most drafts gave was kept",
    "executed": "first query that found something (--no-review, or a correction after the drafts)",
    "duplicate_sql": "the model proposed the same query again",
    "no_sql": "the model replied without SQL",
    "max_iterations": "the iteration limit was reached",
    "consecutive_failures": "too many failed queries in a row",
    "unrecoverable_error": "an error another attempt cannot fix",
    "model_error": "the model failed",
    "clarification": "the model needs more information",
}

# an answer's confidence level, as its badge reads
CONFIDENCE_LEVELS = {
    "high": "High confidence",
    "medium": "Medium confidence",
    "low": "Low confidence — check this answer",
}

MODEL_ERROR_WIDTH = 120  # a failed model call's message is cut here in its step


# --- small pieces ----------------------------------------------------------------------
def format_elapsed(seconds: float) -> str:
    """``0.4 ms``, ``12.0 ms``, ``1.25 s``."""
    if seconds < 1:
        return f"{seconds * 1000:.1f} ms"
    return f"{seconds:.2f} s"


def rows_text(n: int, more: bool = False) -> str:
    """``1 row``, ``1,234 rows``, ``500+ rows`` (``more``: the fetch stopped at a limit)."""
    return f"{n:,}{'+' if more else ''} row{'s' if n != 1 else ''}"


def stop_reason_text(reason: str | None) -> str:
    """Why a run stopped, as a phrase (an unknown reason as it is)."""
    return STOP_REASONS.get(reason or "", reason or "")


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width] + "…"


def _one_line(sql: str | None, width: int = 110) -> str:
    text = " ".join((sql or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _attempt(event: Mapping[str, Any]) -> Mapping[str, Any]:
    """An attempt's fields, from an agent event (under ``attempt``, its candidates a list) or
    a protocol event (flat, its candidates a number)."""
    inner = event.get("attempt")
    if not isinstance(inner, Mapping):
        return event
    candidates = inner.get("candidates")
    return {
        **inner,
        "max_iterations": event.get("max_iterations"),
        "candidates": len(candidates) if isinstance(candidates, (list, tuple)) else candidates,
    }


# --- a run's steps -----------------------------------------------------------------------
def started_label(event: Mapping[str, Any]) -> str:
    """``Asking anthropic:claude-sonnet-4-5 on shop (duckdb), up to 5 attempts``."""
    model = event.get("model") or "the default model"
    connection, dialect = event.get("connection"), event.get("dialect")
    on = f" on {connection}{f' ({dialect})' if dialect else ''}" if connection else ""
    limit = event.get("max_iterations")
    return f"Asking {model}{on}, up to {limit if limit is not None else '?'} attempts"


def reply_label(event: Mapping[str, Any]) -> str:
    """What the model's reply did: failed, asked back, confirmed the result, drafted the
    answer several times, or wrote the next query."""
    if event.get("model_error"):
        return f"The model call failed: {_clip(str(event['model_error']), MODEL_ERROR_WIDTH)}"
    if event.get("clarify") is not None:
        return "The model asks for clarification."
    n = event.get("candidates") or 0
    if event.get("not_a_question") and not n:
        return f"The model's CLARIFY asked the user nothing ({event['not_a_question']}); asking it again…"
    if event.get("sql") is None and event.get("final"):
        return "The model confirmed the result."
    if n and event.get("first_round"):
        return (
            f"Drafted the answer {event.get('draws') or n} times ({n} different "
            f"quer{'ies' if n != 1 else 'y'}); the result most drafts gave is kept…"
        )
    if n == 1:
        return "Trying another query in place of one that already failed…"
    if n:
        return f"Trying {n} candidate queries; the result most of them agree on is kept…"
    return "The model wrote a query." if event.get("sql") else "The model replied."


def is_routine_reply(event: Mapping[str, Any]) -> bool:
    """A reply that only brings the next query (its attempt, which follows, says more): the
    terminal and the chat widget leave it out; the panel shows it as a step."""
    return (
        not event.get("model_error")
        and event.get("clarify") is None
        and not event.get("candidates")
        and not event.get("not_a_question")
        and not (event.get("sql") is None and event.get("final"))
    )


def attempt_head(event: Mapping[str, Any]) -> str:
    """``Attempt 2 of at most 5 (kept 1 of 3 candidates)``."""
    a = _attempt(event)
    limit = a.get("max_iterations")
    of = f" of at most {limit}" if limit else ""
    n = a.get("candidates") or 0
    kept = f" (kept 1 of {n} candidates)" if n > 1 else ""
    return f"Attempt {a.get('n') if a.get('n') is not None else '?'}{of}{kept}"


def attempt_outcome(event: Mapping[str, Any]) -> str:
    """``✓ 3 rows · 12.0 ms`` or ``✗ table_not_found: no such table: x``."""
    a = _attempt(event)
    if a.get("ok"):
        n = a.get("row_count")
        rows = "ran" if n is None else rows_text(int(n), bool(a.get("truncated")))
        return f"✓ {rows} · {format_elapsed(a.get('elapsed') or 0)}"
    return f"✗ {a.get('error_kind')}: {a.get('error')}"


def attempt_label(event: Mapping[str, Any]) -> str:
    """An attempt in one line, without its SQL: ``Attempt 1 of at most 5: ✓ 3 rows · 1.2 ms``."""
    return f"{attempt_head(event)}: {attempt_outcome(event)}"


def memory_label(event: Mapping[str, Any]) -> str:
    """The turn starts over with remembered answers as examples, or that second pass found no
    answer and the first one stands (``kept_first``)."""
    level = event.get("level")
    if event.get("kept_first"):
        return "No answer found with the remembered answers: the first answer stands" + (
            f" ({level} confidence)." if level else "."
        )
    n = int(event.get("examples") or 0)
    why = f"{level} confidence" if level else "no query found"
    return (
        f"Not sure of that answer ({why}): asking again "
        f"with {n} remembered answer{'s' if n != 1 else ''} of this database as examples…"
    )


def step_label(event: Mapping[str, Any]) -> str | None:
    """The one-line label of a ``started``, ``reply``, ``attempt`` or ``memory`` event, as
    the panel shows it (None for any other event)."""
    kind = event.get("type")
    if kind == "started":
        return started_label(event)
    if kind == "reply":
        return reply_label(event)
    if kind == "attempt":
        return attempt_label(event)
    if kind == "memory":
        return memory_label(event)
    return None


def progress_line(event: Mapping[str, Any]) -> str | None:
    """The terminal's live progress for an event (None: nothing to show): the notable
    replies, each attempt with its SQL on one line and its outcome below, the memory's
    second pass."""
    kind = event.get("type")
    if kind == "reply":
        return None if is_routine_reply(event) else reply_label(event)
    if kind == "attempt":
        return f"{attempt_head(event)}: {_one_line(_attempt(event).get('sql'))}\n  {attempt_outcome(event)}"
    if kind == "memory":
        return memory_label(event)
    return None


# how a run ended, in a few words (the outcome's first words everywhere)
OUTCOMES = {
    "success": "Answer",
    "failed": "No query succeeded",
    "stopped": "Stopped",
    "needs_clarification": "The model needs more information",
}


def outcome_head(status: str | None) -> str:
    """``Answer``, ``No query succeeded``, ``Stopped``, ``The model needs more information``
    (an unknown status as it is)."""
    return OUTCOMES.get(status or "", str(status))


def outcome_label(status: str | None, stop_reason: str | None = None) -> str | None:
    """How a run ended, in one line: ``Answer (the model confirmed the result)``, ``No query
    succeeded (the iteration limit was reached)``, ``Stopped.`` (None for ``error``: its
    error says it)."""
    if status not in OUTCOMES:
        return None
    why = stop_reason_text(stop_reason)
    if status in ("success", "failed"):
        return f"{outcome_head(status)} ({why})" if why else outcome_head(status)
    return f"{outcome_head(status)}."


# --- an answer's confidence --------------------------------------------------------------
def confidence_label(level: str | None) -> str:
    """The badge: ``High confidence``, ``Medium confidence``, ``Low confidence — check this
    answer`` (an unknown level as it is)."""
    return CONFIDENCE_LEVELS.get(level or "", str(level))


def reason_sentence(reason: str) -> str:
    """A reason (a phrase, ``the result is empty``) as a sentence: ``The result is empty``."""
    text = str(reason).strip()
    return text[:1].upper() + text[1:]


def score_percent(score: float | None) -> str | None:
    """``0.82`` → ``82%`` (rounded half up; None: no score)."""
    return None if score is None else f"{math.floor(score * 100 + 0.5)}%"


def confidence_aria_label(level: str | None, score: float | None, reasons: Sequence[str]) -> str:
    """The badge's accessible name: the level, the score, how to read the reasons."""
    pct, n = score_percent(score), len(reasons)
    why = f"; {n} reason{'s' if n != 1 else ''}, expand to read {'them' if n != 1 else 'it'}" if n else ""
    return confidence_label(level) + (f" (score {pct})" if pct else "") + why


def confidence_tooltip(level: str | None, score: float | None, reasons: Sequence[str]) -> str:
    """The badge's tooltip: the level and score, then one reason a line."""
    pct = score_percent(score)
    head = confidence_label(level) + (f" ({pct})" if pct else "")
    return "\n".join([head] + [f"• {reason_sentence(r)}" for r in reasons])


def confidence_line(confidence: Mapping[str, Any] | None) -> str | None:
    """The terminal's line: ``High confidence (3 of 3 drafts gave this result)`` (None without
    a confidence)."""
    if not confidence:
        return None
    head = confidence_label(confidence.get("level"))
    why = "; ".join(confidence.get("reasons") or [])
    return f"{head} ({why})" if why else head
