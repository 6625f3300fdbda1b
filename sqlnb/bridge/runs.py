"""One question asked from outside a cell (the JupyterLab panel, the chat widget): the
agent runs in a daemon thread, so the kernel's shell stays free for cells, and every step
comes out as a JSON-safe event of docs/protocol.md (``started``, ``reply``, ``attempt``,
then exactly one ``done``).

    run = AskRun(agent=agent, manager=manager, question="How many orders?", on_event=print)
    run.start()
    run.stop()        # the Stop button: the run still ends with its ``done`` (status stopped)
    run.wait(10)

The run talks to the notebook's :class:`~sqlnb.session.ConnectionManager` and the agent,
never to drivers.
"""

from __future__ import annotations

import logging
import re
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlnb import errors, labels
from sqlnb.agent.stop import StopToken
from sqlnb.charts import chart_code, chart_spec
from sqlnb.sql.format import pretty
from sqlnb.values import json_value

__all__ = [
    "AskRun",
    "Busy",
    "chart_info",
    "confidence_info",
    "confidence_labels",
    "done_event",
    "error_info",
    "json_rows",
    "protocol_event",
    "running",
    "safe_text",
]

Event = dict[str, Any]


class Busy(errors.SqlnbError):
    """A question is already being answered in this kernel (the panel's or a chat's)."""

    kind = "busy"


# Every run of this kernel, whichever front door started it: one question at a time per
# kernel (two turns at once on one connection would interleave in its conversation).
_RUNS: weakref.WeakSet = weakref.WeakSet()
_RUNS_LOCK = threading.Lock()


def running() -> AskRun | None:
    """The question being answered in this kernel, if any (from the panel or a chat)."""
    return next((r for r in list(_RUNS) if not r.done), None)


class AskRun:
    """A question run in a daemon thread, streaming protocol events to ``on_event``.

    ``on_event`` is called from the worker thread with each event object (the ``event``
    of a protocol message, without the envelope); the last one is always ``done``, also
    when the run fails before it starts (no connection, no model: status ``error`` with
    ``error: {kind, message, hint}``; ``started`` is then not sent).

    ``settings``: an :class:`~sqlnb.agent.settings.AgentSettings`, or a callable taking the
    connection name and returning one (e.g. ``lambda name: ask_magic.settings(no_data=False,
    connection=name)``), or None for the defaults.  ``history``: earlier turns
    ``[{question, status, sql, questions?}]`` seeded when the connection's conversation is
    empty (after a kernel restart).  ``new=True`` starts a new conversation first (the
    history is then not seeded).  ``rows``: result rows in the ``done`` event.
    ``after_done``: called with the connection's name once ``done`` went out, when the run
    did not fail (e.g. ``AskMagic.read_ahead_for``: the next question's prompt is read
    while this answer is read); what it raises is logged, never sent.
    """

    def __init__(
        self,
        *,
        agent,
        manager,
        question: str,
        connection: str | None = None,
        model=None,
        max_iterations: int = 5,
        settings=None,
        history=None,
        new: bool = False,
        rows: int = 10,
        on_event: Callable[[Event], None],
        failure_cutoff: int = 3,
        no_review: bool = False,
        after_done: Callable[[str], object] | None = None,
    ):
        self.id: str = uuid.uuid4().hex
        self.result = None  # AskResult, after done (None when the run failed to start)
        self.done: bool = False
        self.agent = agent
        self.manager = manager
        self.question = question
        self.connection = connection
        self.model = model
        self.max_iterations = max_iterations
        self.settings = settings
        self.history = history
        self.new = new
        self.rows = rows
        self.failure_cutoff = failure_cutoff
        self.no_review = no_review
        self.on_event = on_event
        self.after_done = after_done
        self.done_event: Event | None = None  # the done event, once sent
        self._stop = StopToken()
        self._finished = threading.Event()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()

    # ---- control --------------------------------------------------------------------
    def claim(self) -> None:
        """Make this the kernel's question; :class:`Busy` while another one is answered
        (the panel's or a chat's).  :meth:`start` claims, when not claimed before."""
        with _RUNS_LOCK:
            other = running()
            if other is not None and other is not self:
                raise Busy(
                    "A question is still being answered in this kernel (in the sqlnb panel or a chat)",
                    hint="wait for it to end, or stop it there",
                )
            _RUNS.add(self)

    def start(self) -> None:
        """Run the question in a daemon thread (never the caller's)."""
        with self._start_lock:
            if self._thread is not None:
                return
            self.claim()
            self._thread = threading.Thread(target=self._run, daemon=True, name=f"sqlnb-ask-{self.id[:8]}")
            self._thread.start()

    def stop(self) -> None:
        """Stop the run (idempotent): the model call is abandoned, the agent's running
        statement cancelled; the run ends with its ``done`` event, status ``stopped``."""
        self._stop.stop()

    @property
    def stopping(self) -> bool:
        return self._stop.stopped

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until ``done`` was sent; True when it was."""
        return self._finished.wait(timeout)

    # ---- the worker -------------------------------------------------------------------
    def _emit(self, event: Event) -> None:
        try:
            self.on_event(event)
        except Exception:  # a closed comm must not end the run without its done
            pass

    def _run(self) -> None:
        start = time.perf_counter()
        connection_name = self.connection
        done: Event
        try:
            entry = self.manager.get_entry(self.connection)
            connection_name = entry.name
            if self.new:
                self.agent.reset(entry.name)
            elif self.history:
                self.agent.seed_history(entry.name, _turns(self.history))
            settings = self.settings(entry.name) if callable(self.settings) else self.settings
            client = self.agent.client(self.model)
            from sqlnb.agent.models import describe_model

            started = {
                "type": "started",
                "question": self.question,
                "connection": entry.name,
                "dialect": entry.adapter.dialect,
                "model": describe_model(getattr(client, "model", client)),
                "max_iterations": self.max_iterations,
            }
            self._emit({**started, "label": labels.started_label(started)})
            result = self.agent.ask(
                self.question,
                entry.adapter,
                connection=entry.name,
                model=client,
                max_iterations=self.max_iterations,
                failure_cutoff=self.failure_cutoff,
                no_review=self.no_review,
                settings=settings,
                stop=self._stop,
                on_event=self._agent_event,
                live=True,
            )
            self.result = result
            done = done_event(result, self.rows)
        except Exception as exc:  # every run ends with a done, errors included
            if not isinstance(exc, errors.SqlnbError):  # a bug: the details go to the log
                logging.getLogger("sqlnb.bridge").exception("sqlnb: the question failed")
            done = {
                "type": "done",
                "status": "error",
                "stop_reason": None,
                "sql": None,
                "sql_pretty": None,
                "answered_as": None,
                "questions": [],
                "columns": [],
                "rows": [],
                "row_count": None,
                "truncated": False,
                "cell": None,
                "chart": None,
                "chart_cell": None,
                "connection": connection_name,
                "iterations": 0,
                "usage": {},
                "elapsed": round(time.perf_counter() - start, 3),
                "confidence": None,
                "confidence_labels": None,
                "error": error_info(exc),
                "label": None,
            }
        stats = getattr(self.agent, "stats", None)
        if stats is not None:  # the session's questions so far (the panel's footer)
            done["stats"] = stats.to_dict()
            done["stats_label"] = labels.stats_line(done["stats"])
        self.done_event = done
        self.done = True
        try:
            self._emit(done)
        finally:
            self._finished.set()
        if self.after_done is not None and done.get("status") != "error":
            try:
                self.after_done(connection_name)
            except Exception:
                logging.getLogger("sqlnb.bridge").debug("sqlnb: after the run", exc_info=True)

    def _agent_event(self, event: Event) -> None:
        out = protocol_event(event)
        if out is not None:
            self._emit(out)


# ---------------------------------------------------------------------------
# events
# ---------------------------------------------------------------------------


def protocol_event(event: Mapping[str, Any]) -> Event | None:
    """The protocol form of one of :meth:`Agent.ask`'s progress events (``reply``,
    ``attempt``, ``memory``, ``correcting``, ``explaining``, ``phase``), with its ``label``
    (:mod:`sqlnb.labels`), and of the model's streamed ``text``; None for the others (the
    run sends ``started`` and ``done`` itself)."""
    kind = event.get("type")
    if kind == "reply":
        clarify = event.get("clarify")
        return {
            "type": "reply",
            "iteration": event.get("iteration"),
            "max_iterations": event.get("max_iterations"),
            "sql": event.get("sql"),
            "final": bool(event.get("final")),
            "clarify": [str(q) for q in clarify] if clarify is not None else None,
            "candidates": event.get("candidates"),
            "model_error": event.get("model_error"),
            "label": labels.reply_label(event),
        }
    if kind == "attempt":
        a = event.get("attempt") or {}
        return {
            "type": "attempt",
            "n": a.get("n"),
            "max_iterations": event.get("max_iterations"),
            "sql": a.get("sql"),
            "ok": bool(a.get("ok")),
            "row_count": a.get("row_count"),
            "truncated": bool(a.get("truncated")),
            "error_kind": a.get("error_kind"),
            "error": a.get("error"),
            "elapsed": a.get("elapsed"),
            "candidates": len(a.get("candidates") or []) or 1,
            "label": labels.attempt_label(event),
        }
    if kind == "memory":
        # the answer was not trusted: the turn starts over with remembered answers as
        # examples (its attempts are numbered from 1 again)
        # or, after that second pass found no answer, the first answer stands (kept_first);
        # its label is ``text`` (the event had its line before the others had labels)
        return {
            "type": "memory",
            "examples": int(event.get("examples") or 0),
            "level": event.get("level"),
            "kept_first": bool(event.get("kept_first")),
            "text": labels.memory_label(event),
        }
    if kind == "explaining":
        return {"type": "explaining", "label": labels.explaining_label()}
    if kind == "correcting":
        # the answer checks doubt the answer: the model is shown their findings (the
        # panel's live line says so; the correction's query comes as an attempt)
        return {"type": "phase", "phase": "correcting", "label": labels.correcting_label(event)}
    if kind == "phase":
        keys = ("phase", "call", "purpose", "draft", "drafts")
        return {
            "type": "phase",
            **{k: event[k] for k in keys if event.get(k) is not None},
            "label": labels.phase_label(event),
        }
    if kind == "text":
        return {
            "type": "text",
            "call": event.get("call"),
            "offset": int(event.get("offset") or 0),
            "text": str(event.get("text") or ""),
        }
    return None


def done_event(result: Any, rows: int = 10) -> Event:
    """The ``done`` event of a finished :class:`~sqlnb.agent.runner.AskResult`."""
    row_count = None
    if result.result is not None and result.result.arrow is not None:
        row_count = result.result.arrow.num_rows
    status = result.status
    error = None
    if result.stop_reason == "model_error" and status != "success":
        # the model failed (timeout, service down, script exhausted) before any answer
        status = "error"
        error = {
            "kind": "ModelError",
            "message": safe_text(result.model_error or "the model failed"),
            "hint": "check the model's configuration and try again",
        }
    confidence = confidence_info(getattr(result, "confidence", None)) if result.sql else None
    cell = result.cell_source()
    chart = chart_info(result) if result.sql else None
    return {
        "type": "done",
        "status": status,
        "stop_reason": result.stop_reason,
        "sql": result.sql,
        "sql_pretty": (getattr(result, "sql_pretty", None) or result.sql) if result.sql else None,
        "questions": list(result.questions or []),
        "columns": list(result.columns),
        "rows": json_rows(result.result, rows) if result.result is not None else [],
        "row_count": row_count,
        "truncated": bool(getattr(result.result, "truncated", False)),
        "cell": cell,
        "chart": chart,
        "chart_cell": chart_code(cell) if cell and chart is not None else None,
        "connection": result.connection,
        "iterations": result.iterations,
        "usage": {k: v for k, v in (result.usage or {}).items() if isinstance(v, (int, float))},
        "elapsed": round(result.elapsed, 3),
        "confidence": confidence,
        "confidence_labels": confidence_labels(confidence),
        "alternatives": alternatives_info(result) if result.sql else [],
        "explanation": (getattr(result, "explanation", None) or None) if result.sql else None,
        "answered_as": (getattr(result, "answered_as", None) or None) if result.sql else None,
        "error": error,
        "label": labels.outcome_label(status, result.stop_reason),
    }


def chart_info(result: Any) -> dict[str, Any] | None:
    """The Vega-Lite spec of an answer's result (:func:`sqlnb.charts.chart_spec`), or None
    when its shape suits no chart; a chart that fails is no chart, never a failed run."""
    if getattr(result, "result", None) is None:
        return None
    try:
        return chart_spec(result.df)
    except Exception:
        logging.getLogger("sqlnb.bridge").debug("sqlnb: no chart for the answer", exc_info=True)
        return None


def alternatives_info(result: Any) -> list[dict[str, Any]]:
    """The other results the drafts of an answer gave (``AskResult.alternatives``), each
    with its label, SQL, first rows (JSON-safe) and the runnable cell that inserts it."""
    import json

    out = []
    for i, alt in enumerate(getattr(result, "alternatives", None) or [], 1):
        out.append(
            {
                "label": labels.alternative_head(i, alt),
                "sql": alt["sql"],
                "sql_pretty": pretty(alt["sql"], getattr(result, "dialect", None)),
                "drafts": alt["drafts"],
                "row_count": alt.get("row_count"),
                "columns": list(alt.get("columns") or []),
                "rows": json.loads(json.dumps(alt.get("rows") or [], default=str)),
                "cell": result.cell_source(alternative=i),
            }
        )
    return out


_LEVELS = ("high", "medium", "low")


def confidence_info(confidence: Any) -> dict[str, Any] | None:
    """The ``confidence`` of a ``done`` event: ``{level, score, reasons}`` (level high,
    medium or low; score 0..1; reasons short phrases for people), or None when the answer has
    no confidence (no SQL, or an agent that does not rate its answers)."""
    if confidence is None:
        return None
    if not isinstance(confidence, Mapping):  # e.g. a dataclass with the same fields
        confidence = {k: getattr(confidence, k, None) for k in ("level", "score", "reasons")}
    level = str(confidence.get("level") or "").lower()
    if level not in _LEVELS:
        return None
    try:
        score = float(confidence.get("score"))
    except (TypeError, ValueError):
        score = None
    # NaN is no score
    score = round(min(1.0, max(0.0, score)), 3) if score is not None and score == score else None
    reasons = confidence.get("reasons") or []
    if isinstance(reasons, str):
        reasons = [reasons]
    return {
        "level": level,
        "score": score,
        "reasons": [safe_text(r) for r in reasons if str(r or "").strip()],
    }


def confidence_labels(info: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The words of a confidence badge (:mod:`sqlnb.labels`), for a :func:`confidence_info`:
    ``{label, aria_label, tooltip, reasons}`` (the reasons as sentences); None without one."""
    if info is None:
        return None
    level, score, reasons = info["level"], info["score"], info["reasons"]
    return {
        "label": labels.confidence_label(level),
        "aria_label": labels.confidence_aria_label(level, score, reasons),
        "tooltip": labels.confidence_tooltip(level, score, reasons),
        "reasons": [labels.reason_sentence(r) for r in reasons],
    }


def json_rows(result: Any, n: int, offset: int = 0) -> list[list[Any]]:
    """``n`` rows of a Result from row ``offset`` (0: the first), JSON-safe as ``sqlnb sql
    --json`` writes them: dates ISO, decimals as strings, bytes base64."""
    table = getattr(result, "arrow", None)
    if table is None or n <= 0 or offset >= table.num_rows:
        return []
    head = table.slice(max(offset, 0), n)
    cols = [col.to_pylist() for col in head.columns]
    return [[json_value(v) for v in row] for row in zip(*cols, strict=True)]


def error_info(exc: BaseException) -> dict[str, Any]:
    """``{kind, message, hint}`` for the browser: sqlnb's errors by class name, anything
    else as an internal error; no traceback, no password."""
    if isinstance(exc, errors.SqlnbError):
        return {
            "kind": type(exc).__name__,
            "message": safe_text(exc.message),
            "hint": safe_text(exc.hint) if exc.hint else None,
        }
    return {
        "kind": "InternalError",
        "message": safe_text(f"{type(exc).__name__}: {exc}"),
        "hint": "this is a bug in sqlnb; the kernel's log has the details",
    }


_URL_PASSWORD = re.compile(r"(?i)(\b[a-z][a-z0-9+.\-]*://[^:/@\s]*:)[^@\s]+@")
_PASSWORD_WORD = re.compile(r"(?i)\b(password|pwd|passwd)(\s*[=:]\s*)('[^']*'|\"[^\"]*\"|\S+)")


def safe_text(text: str | None) -> str:
    """Text with API keys, URL passwords and ``password=...`` masked."""
    from sqlnb.agent.models import scrub_secrets

    text = scrub_secrets(" ".join(str(text or "").split()))
    text = _URL_PASSWORD.sub(r"\1***@", text)
    return _PASSWORD_WORD.sub(r"\1\2***", text)


def _turns(history: Any) -> list[dict[str, Any]]:
    if not isinstance(history, Sequence) or isinstance(history, (str, bytes)):
        raise errors.UsageError("history must be a list of earlier turns [{question, status, sql}]")
    return [dict(t) for t in history if isinstance(t, Mapping)]
