"""How a result looks in a notebook and in a terminal.

An answer (:class:`~sqlnb.agent.runner.AskResult`) shows in a notebook through the IPython
display formatter :func:`show_answers` registers (``%load_ext sqlnb`` and ``sqlnb.ask()``
call it): the agent never imports this module.  Its plain text, the same everywhere, is
:func:`sqlnb.labels.answer_text` (``str(answer)``)."""

from __future__ import annotations

import html
import json

from sqlnb.adapters import Result
from sqlnb.labels import (
    alternative_head,
    alternatives_head,
    confidence_line,
    counts_text,
    format_elapsed,
    outcome_head,
    stop_reason_text,
)
from sqlnb.labels import answer_text as ask_summary
from sqlnb.labels import progress_line as ask_progress_line
from sqlnb.labels import table_text as result_table
from sqlnb.values import json_value

__all__ = [
    "LiveProgress",
    "ResultView",
    "ask_progress_line",
    "ask_summary",
    "ask_summary_html",
    "catalog_frame",
    "confidence_line",
    "format_elapsed",
    "json_value",
    "result_json",
    "result_table",
    "show_answers",
    "table_frame",
]


def _fmt_count(n: int) -> str:
    return f"{n:,}"


class ResultView:
    """A rich display of a :class:`Result`: at most ``display_limit`` rows are rendered.

    Holds only the rows it shows, so keeping the view alive (IPython's output history)
    never keeps a large result alive.
    """

    def __init__(
        self,
        result: Result,
        display_limit: int = 20,
        fetch_limit: int | None = None,
        connection: str | None = None,
        stored_as: str | None = None,
    ):
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
            parts.append(
                f"{_fmt_count(self.row_count)}{more} row{'s' if self.row_count != 1 else ''}"
                f" × {len(self.columns)} column{'s' if len(self.columns) != 1 else ''}"
            )
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
            notes.append(
                f"Showing the first {_fmt_count(self.display_limit)} of "
                f"{_fmt_count(self.row_count)} rows (%config SqlMagic.display_limit)."
            )
        if self.truncated:
            limit = f"{_fmt_count(self.fetch_limit)} " if self.fetch_limit else ""
            notes.append(
                f"Fetching stopped at the row limit {limit}rows: the query returns more. "
                "Use --limit 0 to fetch everything, or -o VAR to keep the full result."
            )
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
            parts.append(
                self.head.to_html(
                    index=False, max_rows=self.display_limit, border=0, classes="dataframe sqlnb-table"
                )
            )
        parts.append(
            f'<div class="sqlnb-summary" style="opacity:0.7;font-size:90%">'
            f"{html.escape(self.summary())}</div>"
        )
        for n in self.notices():
            parts.append(f'<div class="sqlnb-notice" style="font-size:90%">{html.escape(n)}</div>')
        parts.append("</div>")
        return "".join(parts)


def result_json(result: Result, connection: dict | None = None) -> str:
    """``sqlnb sql --json``'s object; ``connection``: what to say about the connection
    (name, engine, redacted URL, readonly, write access), under the key ``connection``."""
    rows = [[json_value(v) for v in row] for row in result.rows]
    data = {
        "columns": result.column_names,
        "rows": rows,
        "row_count": result.row_count,
        "elapsed_ms": round(result.elapsed * 1000, 3),
    }
    if connection is not None:
        data["connection"] = connection
    return json.dumps(data)


def catalog_frame(catalog):
    """One row per table or view."""
    import pandas as pd

    rows = [
        {
            "schema": t.schema,
            "name": t.name,
            "kind": t.kind,
            "columns": len(t.columns),
            "rows (estimate)": t.row_count,
            "primary key": ", ".join(t.primary_key),
            "comment": t.comment or "",
        }
        for t in catalog.tables
    ]
    return pd.DataFrame(
        rows, columns=["schema", "name", "kind", "columns", "rows (estimate)", "primary key", "comment"]
    ).set_index(["schema", "name"])


def table_frame(table):
    """One row per column of ``table``, with keys and references."""
    import pandas as pd

    refs = {}
    for fk in table.foreign_keys:
        for col, ref in zip(fk.columns, fk.ref_columns, strict=False):
            target = ".".join(p for p in (fk.ref_schema, fk.ref_table) if p)
            refs[col] = f"{target}({ref})"
    unique = {cols[0] for cols in table.unique if len(cols) == 1}
    rows = [
        {
            "column": c.name,
            "type": c.type,
            "nullable": c.nullable,
            "default": c.default or "",
            "key": "PK" if c.name in table.primary_key else ("unique" if c.name in unique else ""),
            "references": refs.get(c.name, ""),
            "comment": c.comment or "",
        }
        for c in table.columns
    ]
    frame = pd.DataFrame(
        rows, columns=["column", "type", "nullable", "default", "key", "references", "comment"]
    ).set_index("column")
    frame.attrs["table"] = table.qualified_name
    return frame


# ---------------------------------------------------------------------------------------
# the agent (%%ask, sqlnb ask)
# ---------------------------------------------------------------------------------------


def ask_summary_html(result, preview_rows: int = 5) -> str:
    """The outcome of an ask for a notebook (an answer's text/html): status, the final SQL
    and a preview.  Its plain-text twin is :func:`ask_summary` (:func:`sqlnb.labels.answer_text`)."""
    esc = html.escape
    if result.status == "needs_clarification":
        items = "".join(f"<li>{esc(q)}</li>" for q in result.questions)
        best = f"<div>Best guess (runnable as it is):</div><pre>{esc(result.sql)}</pre>" if result.sql else ""
        return (
            f"<div><b>{esc(outcome_head('needs_clarification'))}:</b><ul>{items}</ul>{best}"
            "<small>Answer with another %%ask; the conversation continues.</small></div>"
        )
    why = stop_reason_text(result.stop_reason)
    color = "#1a7f37" if result.status == "success" else "#cf222e"
    parts = [
        f"<div><b style='color:{color}'>{esc(result.status)}</b> · {esc(why)} · {counts_text(result)}, "
        f"{esc(format_elapsed(result.elapsed))} · <code>{esc(result.model)}</code></div>"
    ]
    if result.model_error:
        parts.append(f"<div>Model error: {esc(result.model_error)}</div>")
    if result.sql and (answered_as := getattr(result, "answered_as", None)):
        parts.append(f"<div class='sqlnb-answered-as'><i>Answered as:</i> {esc(answered_as)}</div>")
    if result.sql and result.explanation:
        parts.append(f"<p class='sqlnb-explanation'>{esc(result.explanation)}</p>")
    if result.sql:
        conf = confidence_line(result.confidence)
        if conf:
            level = (result.confidence or {}).get("level")
            tint = {"high": "#1a7f37", "medium": "#9a6700", "low": "#cf222e"}.get(level, "inherit")
            parts.append(
                f"<div class='sqlnb-confidence sqlnb-confidence-{esc(str(level))}' "
                f"style='color:{tint}'>{esc(conf)}</div>"
            )
        parts.append(f"<pre>{esc(result.sql)}</pre>")
        if result.result is not None:
            parts.append(_preview_html(result.result, preview_rows))
        parts.append(_alternatives_html(result.alternatives))
    elif result.attempts:
        last = result.attempts[-1]
        parts.append(
            f"<div>{esc(outcome_head('failed'))}; the last error: "
            f"{esc(str(last.get('error_kind')))}: "
            f"{esc(str(last.get('error')))}</div>"
        )
    return "\n".join(parts)


def _alternatives_html(alternatives) -> str:
    """The other results the drafts gave (none when they agreed), folded: each with how
    many drafts gave it, its SQL, its first rows, and how to insert it (``%ask pick N``)."""
    if not alternatives:
        return ""
    import pandas as pd

    esc = html.escape
    items = []
    for i, alt in enumerate(alternatives, 1):
        rows = alt.get("rows") or []
        table = (
            pd.DataFrame(rows, columns=alt.get("columns") or None).to_html(
                index=False, border=0, classes="dataframe sqlnb-table"
            )
            if rows
            else ""
        )
        items.append(
            f"<li><div>{esc(alternative_head(i, alt))} · insert it: <code>%ask pick {i}</code></div>"
            f"<pre>{esc(str(alt.get('sql') or ''))}</pre>{table}</li>"
        )
    return (
        f"<details class='sqlnb-alternatives'><summary>{esc(alternatives_head(alternatives))}</summary>"
        f"<ol style='list-style:none;padding-left:0'>{''.join(items)}</ol></details>"
    )


def _preview_html(result: Result, n: int) -> str:
    from sqlnb.adapters.result import arrow_to_pandas

    if result.arrow is None:
        return ""
    head = arrow_to_pandas(result.arrow.slice(0, n))
    total = len(result.arrow)
    more = "+" if result.truncated else ""
    note = (
        f"Preview: {min(n, total)} of {total:,}{more} rows; run the new cell for the full result."
        if total > n or result.truncated
        else f"{total:,} row{'s' if total != 1 else ''}."
    )
    return (
        head.to_html(index=False, border=0, classes="dataframe sqlnb-table")
        + f'<div style="opacity:0.7;font-size:90%">{html.escape(note)}</div>'
    )


def show_answers(shell) -> None:
    """Show an answer (:class:`~sqlnb.agent.runner.AskResult`) in ``shell``'s notebook as
    :func:`ask_summary_html`: registered with IPython's text/html formatter by the class's
    name, so the agent is imported only when an answer is shown; its text/plain stays its
    ``repr``.  Idempotent; nothing without a shell."""
    if shell is None:
        return
    html_formatter = shell.display_formatter.formatters["text/html"]
    html_formatter.for_type_by_name("sqlnb.agent.runner", "AskResult", ask_summary_html)


class LiveProgress:
    """``%%ask``'s live output in a notebook: one display that updates in place with what
    the turn is doing now (a ``phase`` event's label and the time since the turn began)
    and the end of the model's text as it is written (``text`` events); :meth:`close`
    empties it once the answer is there.  Other events are not its business:
    :meth:`update` returns False for them and the caller prints them as before."""

    SHOWN = 600  # the characters of the model's text shown (its end)

    def __init__(self, display=None, clock=None):
        import time

        if display is None:
            from IPython.display import display
        self._display = display
        self._clock = clock or time.perf_counter
        self._start = self._clock()
        self._handle = None
        self.label = ""
        self.text = ""

    def update(self, event: dict) -> bool:
        """Show a ``phase`` or ``text`` event (True); False for any other event."""
        from sqlnb.labels import phase_label

        kind = event.get("type")
        if kind == "phase":
            self.label = event.get("label") or phase_label(event)
            if event.get("phase") == "writing":
                self.text = ""
        elif kind == "text":
            offset = int(event.get("offset") or 0)
            self.text = self.text[:offset] + str(event.get("text") or "")
        else:
            return False
        self._show(self._bundle())
        return True

    def _bundle(self) -> dict:
        head = f"{self.label} ({format_elapsed(self._clock() - self._start)})"
        text = self.text if len(self.text) <= self.SHOWN else "…" + self.text[-self.SHOWN :]
        plain = f"{head}\n{text}" if text else head
        body = (
            f'<pre style="margin:2px 0;opacity:.8;white-space:pre-wrap">{html.escape(text)}</pre>'
            if text
            else ""
        )
        page = f'<div class="sqlnb-live"><div style="opacity:.7">{html.escape(head)}</div>{body}</div>'
        return {"text/plain": plain, "text/html": page}

    def _show(self, bundle: dict) -> None:
        if self._handle is None:
            self._handle = self._display(bundle, raw=True, display_id=True)
        else:
            self._handle.update(bundle, raw=True)

    def close(self) -> None:
        """Empty the live output (the answer shows below it)."""
        if self._handle is not None:
            self._handle.update({"text/plain": ""}, raw=True)
            self._handle = None
