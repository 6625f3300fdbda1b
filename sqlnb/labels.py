"""The words sqlnb shows while it answers a question, written once.

Every front door shows the same texts for a run's steps (started, the model's replies, each
attempt, a second pass with remembered answers), for an answer's confidence and for how a run
ended: the terminal (``%%ask``'s progress, ``sqlnb ask``) and the chat widget render them
from here, and the JupyterLab panel receives them ready-made in the protocol's events (the
``label`` fields, docs/protocol.md), so it shows the kernel's words instead of its own.  An
answer in plain text (:func:`answer_text`: ``print(answer)``, ``sqlnb ask``) is written here
too, with the plain-text table of its result (:func:`table_text`).

The functions take an event as the agent emits it (``Agent.ask``'s ``on_event``: an
``attempt`` event holds the attempt under ``attempt``) or as the protocol carries it (the
attempt's fields flat): both give the same label.  Pure functions of plain values: no
database, model or notebook is needed to render a label.  This module imports nothing of
sqlnb, so every layer may use it (the agent's ``AskResult.__str__`` included; the import
layers in pyproject.toml keep it at the bottom).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

__all__ = [
    "CONFIDENCE_LEVELS",
    "OUTCOMES",
    "STOP_REASONS",
    "Answer",
    "Table",
    "answer_text",
    "attempt_head",
    "attempt_label",
    "attempt_outcome",
    "confidence_aria_label",
    "confidence_label",
    "confidence_line",
    "confidence_tooltip",
    "counts_text",
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
    "table_text",
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


def explaining_label() -> str:
    """The step after an answer is found: the model explains it."""
    return "Explaining the answer…"


def correcting_label(event: Mapping[str, Any]) -> str:
    """The answer checks found something against the answer (``findings``: their reasons by
    name): the model is shown them and corrects it."""
    findings = [str(f) for f in (event.get("findings") or {}).values()]
    said = f": {'; '.join(findings)}" if findings else ""
    return f"The checks doubt the answer{said}. Asking the model for a correction…"


def phase_label(event: Mapping[str, Any]) -> str:
    """What the turn is doing now (a ``phase`` event, :mod:`sqlnb.agent.live`): ``Writing a
    query…``, ``Writing draft 2 of up to 4…``, ``Running the query…``, ``Checking the answer
    against the data…``, ``Explaining the answer…``."""
    phase = event.get("phase")
    if phase == "running":
        return "Running the query…"
    if phase == "checking":
        return "Checking the answer against the data…"
    if phase == "correcting":
        return correcting_label(event)
    purpose = event.get("purpose")
    if purpose == "explain":
        return explaining_label()
    if purpose == "correct":
        return "Writing a correction…"
    if purpose == "draft":
        n, of = event.get("draft"), event.get("drafts")
        if n and of:
            return f"Writing draft {n} of up to {of}…"
        return f"Writing draft {n}…" if n else "Writing a draft…"
    return "Writing a query…" if int(event.get("call") or 1) == 1 else "Writing a reply…"


def step_label(event: Mapping[str, Any]) -> str | None:
    """The one-line label of a ``started``, ``reply``, ``attempt``, ``memory``,
    ``correcting`` or ``explaining`` event, as the panel shows it (None for any other event)."""
    kind = event.get("type")
    if kind == "explaining":
        return explaining_label()
    if kind == "started":
        return started_label(event)
    if kind == "reply":
        return reply_label(event)
    if kind == "attempt":
        return attempt_label(event)
    if kind == "memory":
        return memory_label(event)
    if kind == "correcting":
        return correcting_label(event)
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
    if kind == "correcting":
        return correcting_label(event)
    if kind == "explaining":
        return explaining_label()
    return None


# how a run ended, in a few words (the outcome's first words everywhere)
OUTCOMES = {
    "success": "Answer",
    "failed": "No query succeeded",
    "stopped": "Stopped",
    "needs_clarification": "More information needed",
}


def outcome_head(status: str | None) -> str:
    """``Answer``, ``No query succeeded``, ``Stopped``, ``More information needed``
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


# --- an answer, in plain text -----------------------------------------------------------
class Table(Protocol):
    """What :func:`table_text` reads of a result (a :class:`sqlnb.adapters.Result`)."""

    @property
    def returns_rows(self) -> bool: ...
    @property
    def row_count(self) -> int: ...
    @property
    def column_names(self) -> Sequence[str]: ...
    @property
    def rows(self) -> Sequence[Sequence[Any]]: ...


class Answer(Protocol):
    """What :func:`answer_text` reads of an answer (a :class:`sqlnb.agent.runner.AskResult`)."""

    @property
    def status(self) -> str: ...
    @property
    def stop_reason(self) -> str | None: ...
    @property
    def sql(self) -> str | None: ...
    @property
    def questions(self) -> Sequence[str]: ...
    @property
    def attempts(self) -> Sequence[Mapping[str, Any]]: ...
    @property
    def iterations(self) -> int: ...
    @property
    def usage(self) -> Mapping[str, float]: ...
    @property
    def elapsed(self) -> float: ...
    @property
    def model_error(self) -> str | None: ...
    @property
    def confidence(self) -> Mapping[str, Any] | None: ...
    @property
    def result(self) -> Table | None: ...
    @property
    def alternatives(self) -> Sequence[Mapping[str, Any]]: ...
    @property
    def explanation(self) -> str | None: ...


def _cell(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, (bytes, bytearray, memoryview)):
        return "\\x" + bytes(v).hex()
    return str(v).replace("\n", "\\n")


def table_text(result: Table, max_rows: int | None = None) -> str:
    """A result as a plain-text table for terminals (its first ``max_rows`` rows), or
    ``3 rows affected`` / ``OK`` for a statement that returns none."""
    if not result.returns_rows:
        n = result.row_count
        return f"{n} row{'s' if n != 1 else ''} affected" if n >= 0 else "OK"
    names = result.column_names
    rows = result.rows if max_rows is None else result.rows[:max_rows]
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max([len(n)] + [len(r[i]) for r in cells]) for i, n in enumerate(names)]
    line = "+".join("-" * (w + 2) for w in widths)
    out = [" | ".join(n.ljust(w) for n, w in zip(names, widths, strict=True)), line]
    for r in cells:
        out.append(" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)))
    out.append(f"({result.row_count} row{'s' if result.row_count != 1 else ''})")
    return "\n".join(out)


def counts_text(answer: Answer) -> str:
    """``2 attempts, 4 model calls``: every model call counted, retry drafts included."""
    n = len(answer.attempts)
    calls = int((answer.usage or {}).get("calls") or answer.iterations)
    return f"{n} attempt{'s' if n != 1 else ''}, {calls} model call{'s' if calls != 1 else ''}"


def answer_text(answer: Answer) -> str:
    """An answer as plain text (``print(answer)``, ``sqlnb ask``, a notebook's text/plain
    when asked for it): how it ended, its explanation, the confidence, the final SQL and its
    first rows; the
    model's questions when it needs more information; the last error when no query
    succeeded."""
    lines = []
    if answer.status == "needs_clarification":
        lines.append(f"{outcome_head('needs_clarification')}:")
        lines += [f"  - {q}" for q in answer.questions] or ["  (no questions given)"]
        if answer.sql:
            lines.append(f"Best guess (runnable as it is):\n{answer.sql}")
        lines.append("Answer with another %%ask (the conversation continues).")
        return "\n".join(lines)
    why = stop_reason_text(answer.stop_reason)
    lines.append(f"{answer.status.upper()} · {why} · {counts_text(answer)}, {format_elapsed(answer.elapsed)}")
    if answer.model_error:
        lines.append(f"Model error: {answer.model_error}")
    answered_as = getattr(answer, "answered_as", None)  # an answer of an older sqlnb has none
    if answer.sql and answered_as:
        lines.append(f"Answered as: {answered_as}")
    explanation = getattr(answer, "explanation", None)  # an answer of an older sqlnb has none
    if answer.sql and explanation:
        lines.append(explanation)
    if answer.sql:
        conf = confidence_line(answer.confidence)
        if conf:
            lines.append(conf)
        lines.append(answer.sql)
        if answer.result is not None:
            lines.append(table_text(answer.result, max_rows=5))
        lines += alternatives_text(answer.alternatives)
    elif answer.attempts:
        last = answer.attempts[-1]
        lines.append(
            f"{outcome_head('failed')}; the last error: {last.get('error_kind')}: {last.get('error')}"
        )
    return "\n".join(lines)


def alternatives_head(alternatives: Sequence[Mapping[str, Any]]) -> str:
    """The heading over the other results the drafts gave."""
    n = len(alternatives)
    return f"The drafts also gave {n} other result{'s' if n != 1 else ''}:"


def alternative_head(i: int, alt: Mapping[str, Any]) -> str:
    """One other result's line: its number, how many drafts gave it, its rows."""
    drafts, rows = int(alt.get("drafts") or 1), alt.get("row_count")
    shown = "" if rows is None else f", {rows} row{'s' if rows != 1 else ''}"
    return f"{i}. {drafts} draft{'s' if drafts != 1 else ''}{shown}"


def alternatives_text(alternatives: Sequence[Mapping[str, Any]]) -> list[str]:
    """The other results the drafts gave, as plain text lines (none when they agreed)."""
    if not alternatives:
        return []
    lines = ["", alternatives_head(alternatives)]
    for i, alt in enumerate(alternatives, 1):
        lines.append(alternative_head(i, alt))
        lines += [f"   {line}" for line in str(alt.get("sql") or "").splitlines()]
        cols = list(alt.get("columns") or [])
        for row in list(alt.get("rows") or [])[:3]:
            pairs = zip(cols, row, strict=False) if cols else enumerate(row)
            lines.append("   → " + ", ".join(f"{k}={v}" for k, v in pairs))
    return lines


def _tokens(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def stats_line(stats: Mapping[str, Any]) -> str:
    """The session's questions in one line (the panel's footer): ``4 questions · 3 answered
    (75%) · 2.3 attempts each · model 41 s · database 0.3 s · 12.4k tokens · $0.04``."""
    n = int(stats.get("questions") or 0)
    if not n:
        return "No questions yet in this session"
    answered = int(stats.get("answered") or 0)
    parts = [
        f"{n} question{'s' * (n != 1)}",
        f"{answered} answered ({answered / n:.0%})",
        f"{int(stats.get('attempts') or 0) / n:.1f} attempts each",
        f"model {format_elapsed(float(stats.get('model_seconds') or 0))}",
        f"database {format_elapsed(float(stats.get('database_seconds') or 0))}",
        f"{_tokens(int(stats.get('input_tokens') or 0) + int(stats.get('output_tokens') or 0))} tokens",
    ]
    cost = float(stats.get("cost") or 0)
    if stats.get("unpriced"):
        parts.append("cost unknown" if not cost else f"${cost:.2f} + unknown")
    elif cost:
        parts.append(f"${cost:.2f}" if cost >= 0.01 else "< $0.01")
    else:
        parts.append("no cost (local model)")
    return " · ".join(parts)


def stats_text(stats: Mapping[str, Any]) -> str:
    """``%sqlnb stats``: the session's questions, one figure a line."""
    n = int(stats.get("questions") or 0)
    if not n:
        return "No questions yet in this session."
    tokens_in, tokens_out = int(stats.get("input_tokens") or 0), int(stats.get("output_tokens") or 0)
    cost = float(stats.get("cost") or 0)
    unpriced = list(stats.get("unpriced") or [])
    cost_text = f"${cost:.4f}" + (
        f" (list prices of {stats.get('prices_as_of')})" if cost else " (local models cost nothing per token)"
    )
    if unpriced:
        cost_text += f"; not counted: {', '.join(unpriced)} (price unknown)"
    answered = int(stats.get("answered") or 0)
    rows = [
        ("Questions", str(n)),
        (
            "Answered",
            f"{answered} ({answered / n:.0%}); asked back {int(stats.get('asked_back') or 0)}, "
            f"no answer {int(stats.get('failed') or 0)}, stopped {int(stats.get('stopped') or 0)}",
        ),
        (
            "Attempts",
            f"{int(stats.get('attempts') or 0)} ({int(stats.get('attempts') or 0) / n:.1f} per question)",
        ),
        (
            "Model",
            f"{int(stats.get('model_calls') or 0)} calls, {format_elapsed(float(stats.get('model_seconds') or 0))}",
        ),
        ("Database", format_elapsed(float(stats.get("database_seconds") or 0))),
        ("Time in all", format_elapsed(float(stats.get("seconds") or 0))),
        ("Tokens", f"{tokens_in:,} in, {tokens_out:,} out"),
        ("Cost", cost_text),
        ("Models", ", ".join(stats.get("models") or []) or "–"),
    ]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k + ':':<{width + 1}} {v}" for k, v in rows)
