"""How a result looks in a notebook and in a terminal."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import html
import json
import math
from typing import Any

from sqlnb.adapters import Result


def _fmt_count(n: int) -> str:
    return f"{n:,}"


def format_elapsed(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:.1f} ms"
    return f"{seconds:.2f} s"


class ResultView:
    """A rich display of a :class:`Result`: at most ``display_limit`` rows are rendered.

    Holds only the rows it shows, so keeping the view alive (IPython's output history)
    never keeps a large result alive.
    """

    def __init__(self, result: Result, display_limit: int = 20, fetch_limit: int | None = None,
                 connection: str | None = None, stored_as: str | None = None):
        self.columns = result.column_names
        self.returns_rows = result.returns_rows
        self.row_count = result.row_count
        self.truncated = result.truncated
        self.elapsed = result.elapsed
        self.fetch_limit = fetch_limit
        self.connection = connection
        self.stored_as = stored_as
        self.display_limit = max(int(display_limit), 0)
        self.result_notices = list(result.notices)
        if result.arrow is not None:
            head = result.arrow.slice(0, self.display_limit)
            from sqlnb.adapters.result import arrow_to_pandas

            self.head = arrow_to_pandas(head)
        else:
            self.head = None

    # ---- text ------------------------------------------------------------------------
    def summary(self) -> str:
        parts = []
        if self.returns_rows:
            more = "+" if self.truncated else ""
            parts.append(f"{_fmt_count(self.row_count)}{more} row{'s' if self.row_count != 1 else ''}"
                         f" × {len(self.columns)} column{'s' if len(self.columns) != 1 else ''}")
        elif self.row_count >= 0:
            parts.append(f"{_fmt_count(self.row_count)} row{'s' if self.row_count != 1 else ''} affected")
        else:
            parts.append("done")
        parts.append(format_elapsed(self.elapsed))
        if self.connection:
            parts.append(f"on {self.connection}")
        return " · ".join(parts)

    def notices(self) -> list[str]:
        notes = list(self.result_notices)
        if self.returns_rows and self.row_count > self.display_limit:
            notes.append(f"Showing the first {_fmt_count(self.display_limit)} of "
                         f"{_fmt_count(self.row_count)} rows (%config SqlMagic.display_limit).")
        if self.truncated:
            limit = f"{_fmt_count(self.fetch_limit)} " if self.fetch_limit else ""
            notes.append(f"Fetching stopped at the row limit {limit}rows: the query returns more. "
                         "Use --limit 0 to fetch everything, or -o VAR to keep the full result.")
        if self.stored_as:
            notes.append(f"Full result stored in {self.stored_as}.")
        return notes

    def __repr__(self) -> str:
        lines = []
        if self.head is not None:
            lines.append(self.head.to_string(index=False) if len(self.head.columns) else "(no columns)")
        lines.append(self.summary())
        lines.extend(self.notices())
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        parts = ['<div class="sqlnb-result">']
        if self.head is not None:
            parts.append(self.head.to_html(index=False, max_rows=self.display_limit, border=0,
                                           classes="dataframe sqlnb-table"))
        parts.append(f'<div class="sqlnb-summary" style="opacity:0.7;font-size:90%">'
                     f"{html.escape(self.summary())}</div>")
        for n in self.notices():
            parts.append(f'<div class="sqlnb-notice" style="font-size:90%">{html.escape(n)}</div>')
        parts.append("</div>")
        return "".join(parts)


def json_value(v: Any) -> Any:
    """A JSON-safe form of a database value (decimals as strings keep their precision)."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, (dt.datetime, dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, dt.timedelta):
        return v.total_seconds()
    if isinstance(v, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(v)).decode("ascii")
    if isinstance(v, (list, tuple)):
        return [json_value(x) for x in v]
    if isinstance(v, dict):
        return {str(k): json_value(x) for k, x in v.items()}
    return str(v)


def result_json(result: Result, connection: dict | None = None) -> str:
    """``sqlnb sql --json``'s object; ``connection``: what to say about the connection
    (name, engine, redacted URL, readonly, write access), under the key ``connection``."""
    rows = [[json_value(v) for v in row] for row in result.rows]
    data = {"columns": result.column_names, "rows": rows, "row_count": result.row_count,
            "elapsed_ms": round(result.elapsed * 1000, 3)}
    if connection is not None:
        data["connection"] = connection
    return json.dumps(data)


def result_table(result: Result, max_rows: int | None = None) -> str:
    """A plain-text table for terminals."""
    if not result.returns_rows:
        n = result.row_count
        return f"{n} row{'s' if n != 1 else ''} affected" if n >= 0 else "OK"
    names = result.column_names
    rows = result.rows if max_rows is None else result.rows[:max_rows]
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max([len(n)] + [len(r[i]) for r in cells]) for i, n in enumerate(names)]
    line = "+".join("-" * (w + 2) for w in widths)
    out = [" | ".join(n.ljust(w) for n, w in zip(names, widths)), line.replace("+", "+")]
    for r in cells:
        out.append(" | ".join(c.ljust(w) for c, w in zip(r, widths)))
    out.append(f"({result.row_count} row{'s' if result.row_count != 1 else ''})")
    return "\n".join(out)


def _cell(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, (bytes, bytearray, memoryview)):
        return "\\x" + bytes(v).hex()
    return str(v).replace("\n", "\\n")


def catalog_frame(catalog):
    """One row per table or view."""
    import pandas as pd

    rows = [{"schema": t.schema, "name": t.name, "kind": t.kind, "columns": len(t.columns),
             "rows (estimate)": t.row_count, "primary key": ", ".join(t.primary_key),
             "comment": t.comment or ""} for t in catalog.tables]
    return pd.DataFrame(rows, columns=["schema", "name", "kind", "columns", "rows (estimate)",
                                       "primary key", "comment"]).set_index(["schema", "name"])


def table_frame(table):
    """One row per column of ``table``, with keys and references."""
    import pandas as pd

    refs = {}
    for fk in table.foreign_keys:
        for col, ref in zip(fk.columns, fk.ref_columns):
            target = ".".join(p for p in (fk.ref_schema, fk.ref_table) if p)
            refs[col] = f"{target}({ref})"
    unique = {cols[0] for cols in table.unique if len(cols) == 1}
    rows = [{"column": c.name, "type": c.type, "nullable": c.nullable, "default": c.default or "",
             "key": "PK" if c.name in table.primary_key else ("unique" if c.name in unique else ""),
             "references": refs.get(c.name, ""), "comment": c.comment or ""} for c in table.columns]
    frame = pd.DataFrame(rows, columns=["column", "type", "nullable", "default", "key", "references",
                                        "comment"]).set_index("column")
    frame.attrs["table"] = table.qualified_name
    return frame


# ---------------------------------------------------------------------------------------
# the agent (%%ask, sqlnb ask)
# ---------------------------------------------------------------------------------------

_STOP_WORDS = {
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


def ask_progress_line(event: dict) -> str | None:
    """One line of live progress for an agent event (None: nothing to show)."""
    kind = event.get("type")
    if kind == "reply":
        if event.get("model_error"):
            return f"Model call failed: {event['model_error']}"
        if event.get("clarify") is not None:
            return "The model asks for clarification."
        if event.get("not_a_question") and not event.get("candidates"):
            return (f"The model's CLARIFY asked the user nothing ({event['not_a_question']}); "
                    "asking it again…")
        if event.get("sql") is None and event.get("final"):
            return "The model confirmed the result (FINAL)."
        n = event.get("candidates")
        if n and event.get("first_round"):
            return (f"Drafted the answer {event.get('draws') or n} times ({n} different "
                    f"quer{'ies' if n != 1 else 'y'}); the result most drafts gave is kept…")
        if n == 1:
            return "Trying another query in place of one that already failed…"
        if n:
            return f"Trying {n} candidate queries; the result most of them agree on is kept…"
        return None
    if kind == "attempt":
        a = event["attempt"]
        cands = a.get("candidates") or []
        best = f" (kept 1 of {len(cands)} candidates)" if len(cands) > 1 else ""
        head = (f"Attempt {a['n']} of at most {event.get('max_iterations')}{best}: "
                f"{_one_line_sql(a['sql'])}")
        if a.get("ok"):
            more = "+" if a.get("truncated") else ""
            n = a.get("row_count") or 0
            return f"{head}\n  ✓ {n:,}{more} row{'s' if n != 1 else ''} · {format_elapsed(a.get('elapsed') or 0)}"
        return f"{head}\n  ✗ {a.get('error_kind')}: {a.get('error')}"
    if kind == "memory" and event.get("kept_first"):
        return ("No answer found with the remembered answers: the first answer stands"
                + (f" ({event['level']} confidence)." if event.get("level") else "."))
    if kind == "memory":
        n = event.get("examples") or 0
        why = f"{event['level']} confidence" if event.get("level") else "no query found"
        return (f"Not sure of that answer ({why}): asking again "
                f"with {n} remembered answer{'s' if n != 1 else ''} of this database as examples…")
    return None


_LEVEL_WORDS = {"high": "High confidence", "medium": "Medium confidence",
                "low": "Low confidence: check this answer"}


def confidence_line(confidence: dict | None) -> str | None:
    """"High confidence (3 of 3 drafts gave this result)": the answer's confidence and why,
    in one line (None without one)."""
    if not confidence:
        return None
    head = _LEVEL_WORDS.get(confidence.get("level") or "", str(confidence.get("level")))
    why = "; ".join(confidence.get("reasons") or [])
    return f"{head} ({why})" if why else head


def _one_line_sql(sql: str, width: int = 110) -> str:
    text = " ".join((sql or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


def ask_summary(result) -> str:
    """The outcome of an ask as plain text (terminal, notebook text/plain)."""
    lines = []
    if result.status == "needs_clarification":
        lines.append("The model needs more information:")
        lines += [f"  - {q}" for q in result.questions] or ["  (no questions given)"]
        if result.sql:
            lines.append(f"Best query so far:\n{result.sql}")
        lines.append("Answer with another %%ask (the conversation continues).")
        return "\n".join(lines)
    why = _STOP_WORDS.get(result.stop_reason or "", result.stop_reason or "")
    lines.append(f"{result.status.upper()} · {why} · {_counts(result)}, "
                 f"{format_elapsed(result.elapsed)}")
    if result.model_error:
        lines.append(f"Model error: {result.model_error}")
    if result.sql:
        conf = confidence_line(result.confidence)
        if conf:
            lines.append(conf)
        lines.append(result.sql)
        if result.result is not None:
            lines.append(result_table(result.result, max_rows=5))
    elif result.attempts:
        last = result.attempts[-1]
        lines.append(f"No query succeeded; the last error: {last.get('error_kind')}: {last.get('error')}")
    return "\n".join(lines)


def _counts(result) -> str:
    """"2 attempts, 4 model calls": every model call counted, retry drafts included."""
    n = len(result.attempts)
    calls = int((result.usage or {}).get("calls") or result.iterations)
    return f"{n} attempt{'s' if n != 1 else ''}, {calls} model call{'s' if calls != 1 else ''}"


def ask_summary_html(result, preview_rows: int = 5) -> str:
    """The outcome of an ask for a notebook: status, the final SQL and a preview."""
    esc = html.escape
    if result.status == "needs_clarification":
        items = "".join(f"<li>{esc(q)}</li>" for q in result.questions)
        best = f"<div>Best query so far:</div><pre>{esc(result.sql)}</pre>" if result.sql else ""
        return (f"<div><b>The model needs more information:</b><ul>{items}</ul>{best}"
                "<small>Answer with another %%ask; the conversation continues.</small></div>")
    why = _STOP_WORDS.get(result.stop_reason or "", result.stop_reason or "")
    color = "#1a7f37" if result.status == "success" else "#cf222e"
    parts = [f"<div><b style='color:{color}'>{esc(result.status)}</b> · {esc(why)} · {_counts(result)}, "
             f"{esc(format_elapsed(result.elapsed))} · <code>{esc(result.model)}</code></div>"]
    if result.model_error:
        parts.append(f"<div>Model error: {esc(result.model_error)}</div>")
    if result.sql:
        conf = confidence_line(result.confidence)
        if conf:
            level = (result.confidence or {}).get("level")
            tint = {"high": "#1a7f37", "medium": "#9a6700", "low": "#cf222e"}.get(level, "inherit")
            parts.append(f"<div class='sqlnb-confidence sqlnb-confidence-{esc(str(level))}' "
                         f"style='color:{tint}'>{esc(conf)}</div>")
        parts.append(f"<pre>{esc(result.sql)}</pre>")
        if result.result is not None:
            parts.append(_preview_html(result.result, preview_rows))
    elif result.attempts:
        last = result.attempts[-1]
        parts.append(f"<div>No query succeeded; the last error: {esc(str(last.get('error_kind')))}: "
                     f"{esc(str(last.get('error')))}</div>")
    return "\n".join(parts)


def _preview_html(result: Result, n: int) -> str:
    from sqlnb.adapters.result import arrow_to_pandas

    if result.arrow is None:
        return ""
    head = arrow_to_pandas(result.arrow.slice(0, n))
    total = len(result.arrow)
    more = "+" if result.truncated else ""
    note = (f"Preview: {min(n, total)} of {total:,}{more} rows; run the new cell for the full result."
            if total > n or result.truncated else f"{total:,} row{'s' if total != 1 else ''}.")
    return (head.to_html(index=False, border=0, classes="dataframe sqlnb-table")
            + f'<div style="opacity:0.7;font-size:90%">{html.escape(note)}</div>')
