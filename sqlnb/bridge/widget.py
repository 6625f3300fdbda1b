"""``sqlnb.chat()``: the sqlnb chat as an ipywidgets widget in a cell's output area, for
notebooks without the JupyterLab extension (VS Code, the classic notebook: any frontend
that renders ipywidgets 8).

The widget is plain ipywidgets (no frontend code of its own), so it works wherever
ipywidgets does.  A question runs as a :class:`sqlnb.bridge.runs.AskRun` — the same run the
sidebar's ``ask`` request starts — and the widget renders the run's protocol events
(``started``, ``reply``, ``attempt``, ``done``; see docs/protocol.md) as they arrive.

Threads: the agent runs in the run's daemon thread, and ``on_event`` is called there.
ipywidgets documents updating widgets from a background thread by setting their traits
directly ("Asynchronous Widgets: updating a widget in the background"): each trait set is
one comm message on IOPub, which ipykernel sends through its IOPub thread, and ipykernel
resolves a thread's parent message from the shell's context.  The widget keeps those sets
few (one HTML value per step list, a handful of button states per event) and takes one
lock around every change, from the worker's events and the buttons' handlers alike, so a
click never interleaves with an event half-rendered.

What the buttons do:

- **Ask** starts a run on the selected connection; it is disabled while a run goes, and a
  second click meanwhile does nothing.  A kernel answers one question at a time, across
  chats and the panel (two turns at once would interleave in a connection's conversation).
- **Stop** (while a run goes) cancels the model call and the running statement; the turn
  ends as *stopped*.  Clicking it again does nothing.
- **Insert** hands the ``%%sql --conn NAME`` cell to the notebook with
  ``set_next_input``.  A notebook inserts cells only in answer to a cell's execution, so
  the cell appears below the next cell you run (the widget says so).  When the sqlnb
  JupyterLab panel is open, its comm inserts the cell below the chat's cell at once.
- **Copy** shows the SQL in a text box to select and copy (Ctrl+C / ⌘C): a widget without
  frontend code of its own cannot write to the clipboard.  Edits in that box are undone,
  so it always holds the answer's SQL.
- **Remember** (thumbs-up) stores the answer's question and SQL in sqlnb's memory store
  (``Agent.remember``, source ``thumbs_up``): later questions about the same database show
  it to the model as an example.  It then reads *Remembered* and is disabled; an error
  (e.g. SQL that is not read-only) shows beside it.

An answer with SQL — a success, or the best query found before the model asked back —
offers these buttons, and its confidence (``High confidence`` / ``Medium confidence`` /
``Low confidence — check this answer``, the reasons on hover and on expand) when the agent
rated it.  Every step, confidence and outcome text is :mod:`sqlnb.labels`'s, the words the
terminal and the JupyterLab panel show.

Connection names, engines and the SQL reach the browser; URLs and passwords never do.
"""

from __future__ import annotations

import html
import importlib
import threading
from collections.abc import Callable
from typing import Any

from sqlnb import errors, labels
from sqlnb.kernel import kernel_session

__all__ = ["ChatWidget", "chat", "confidence_html", "done_html", "step_html", "table_html"]

_MUTED = "opacity:0.7;font-size:90%"
_OK = "color:#1a7f37"
_BAD = "color:#cf222e"
_PRE = (
    "white-space:pre-wrap;margin:2px 0 4px 0;padding:4px 6px;font-size:90%;"
    "background:rgba(127,127,127,0.08);border-radius:3px"
)


def _import_widgets():
    try:
        import ipywidgets
    except ImportError:
        raise errors.ConfigurationError(
            "sqlnb.chat() needs ipywidgets, which is not installed in this kernel's environment",
            hint='%pip install "sqlnb[widgets]" (or %pip install ipywidgets), then restart the kernel',
        ) from None
    return ipywidgets


# ---------------------------------------------------------------------------------------
# rendering protocol events (pure functions: HTML text, every value escaped)
# ---------------------------------------------------------------------------------------


def _esc(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def step_html(event: dict) -> str | None:
    """One step of a run's progress as HTML (None: the event shows nothing by itself: a
    reply that only brings the next query, or a failed model call, which the outcome says)."""
    kind = event.get("type")
    if kind == "explaining":
        return f'<div style="{_MUTED}">{_esc(event.get("label") or labels.explaining_label())}</div>'
    if kind == "started" or (kind == "memory" and event.get("text")):
        return f'<div style="{_MUTED}">{_esc(event.get("label") or event.get("text"))}</div>'
    if kind == "reply":
        if event.get("model_error") or labels.is_routine_reply(event):
            return None
        return f'<div style="{_MUTED}">{_esc(labels.reply_label(event))}</div>'
    if kind == "attempt":
        head = _esc(labels.attempt_head(event))
        style = _OK if event.get("ok") else _BAD
        return (
            f'<div><b>{head}</b><pre style="{_PRE}">{_esc(event.get("sql"))}</pre>'
            f'<span style="{style}">{_esc(labels.attempt_outcome(event))}</span></div>'
        )
    return None


def table_html(columns: list[str], rows: list[list[Any]], row_count: int | None = None) -> str:
    """A small HTML table of a result preview, with a line saying how much it shows."""
    if not columns:
        return ""
    head = "".join(f"<th style='text-align:left;padding:1px 8px'>{_esc(c)}</th>" for c in columns)
    null = "<i style='opacity:0.6'>NULL</i>"
    body = "".join(
        "<tr>"
        + "".join(f"<td style='padding:1px 8px'>{null if v is None else _esc(v)}</td>" for v in row)
        + "</tr>"
        for row in rows
    )
    total = row_count if row_count is not None and row_count >= 0 else len(rows)
    note = (
        f"First {len(rows):,} of {labels.rows_text(total)}; run the cell for the full result."
        if total > len(rows)
        else f"{labels.rows_text(total)}."
    )
    return (
        f"<div style='overflow-x:auto;max-height:22em'><table style='border-collapse:collapse;"
        f"font-size:90%'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
        f'<div style="{_MUTED}">{_esc(note)}</div>'
    )


def error_line(error: dict | None) -> str:
    """One readable line for an error ``{kind, message, hint}``."""
    error = error or {}
    text = str(error.get("message") or "Something went wrong")
    if error.get("hint"):
        text += f" ({error['hint']})"
    return text


# JupyterLab's theme colours where the chat is shown in JupyterLab, fixed ones elsewhere
_LEVEL_COLOR = {
    "high": "var(--jp-success-color1, #1a7f37)",
    "medium": "var(--jp-warn-color1, #9a6700)",
    "low": "var(--jp-error-color1, #cf222e)",
}


def confidence_html(confidence: Any) -> str:
    """The confidence badge of an answer (empty when it has none): the level, the score
    and reasons on hover, the reasons on expand; an accessible name for screen readers."""
    from sqlnb.bridge.runs import confidence_info, confidence_labels

    c = confidence_info(confidence)
    if c is None:
        return ""
    words = confidence_labels(c)
    label, reasons, aria, title = words["label"], words["reasons"], words["aria_label"], words["tooltip"]
    color = _LEVEL_COLOR[c["level"]]
    style = (
        f"display:inline-block;padding:0 6px;border-radius:8px;border:1px solid {color};"
        f"color:{color};font-size:85%;line-height:1.6"
    )
    attrs = (
        f'class="sqlnb-confidence-badge" data-level="{c["level"]}" '
        f'aria-label="{_esc(aria)}" title="{_esc(title)}"'
    )
    if not reasons:
        return f'<span role="note" {attrs} style="{style}">{_esc(label)}</span>'
    items = "".join(f"<li>{_esc(r)}</li>" for r in reasons)
    return (
        f'<details class="sqlnb-confidence" style="display:inline-block;vertical-align:top">'
        f'<summary {attrs} style="{style};cursor:pointer">{_esc(label)}</summary>'
        f'<ul style="margin:2px 0 4px 0;padding-left:18px;{_MUTED}">{items}</ul></details>'
    )


def done_html(event: dict) -> str:
    """How a run ended: the outcome line, the final SQL and its result preview."""
    status = event.get("status")
    why = labels.stop_reason_text(event.get("stop_reason"))
    usage = event.get("usage") or {}
    calls = int(usage.get("calls") or event.get("iterations") or 0)
    stats = []
    if calls:
        stats.append(f"{calls} model call{'s' if calls != 1 else ''}")
    if event.get("elapsed") is not None:
        stats.append(labels.format_elapsed(float(event["elapsed"])))
    tail = f'<span style="{_MUTED}"> · {_esc(" · ".join(stats))}</span>' if stats else ""
    sql = event.get("sql")
    if status == "error":
        return f'<div style="{_BAD}">✗ {_esc(error_line(event.get("error")))}</div>'
    if status == "stopped":
        parts = [f'<div style="{_BAD}">■ {_esc(labels.outcome_label("stopped"))}</div>']
        if sql:
            parts.append(f'<div>Best query so far:</div><pre style="{_PRE}">{_esc(sql)}</pre>')
        return "".join(parts)
    if status == "needs_clarification":
        items = (
            "".join(f"<li>{_esc(q)}</li>" for q in event.get("questions") or [])
            or "<li>(no question given)</li>"
        )
        head = labels.outcome_head("needs_clarification")
        parts = [f"<div><b>{_esc(head)}:</b><ul style='margin:2px 0'>{items}</ul></div>"]
        if sql:
            parts.append(
                f"<div>Best guess: {confidence_html(event.get('confidence'))}</div>"
                f'<pre style="{_PRE}">{_esc(sql)}</pre>'
            )
        parts.append(f'<div style="{_MUTED}">Answer below; the answer is asked as a follow-up.</div>')
        return "".join(parts)
    if status == "success" and sql:
        return (
            f'<div><b style="{_OK}">✓ {_esc(labels.outcome_head(status))}</b> '
            f'<span style="{_MUTED}">({_esc(why)})</span>{tail}</div>'
            + (
                f'<div class="sqlnb-answered-as" style="{_MUTED}"><i>Answered as:</i> {_esc(answered_as)}</div>'
                if (answered_as := event.get("answered_as"))
                else ""
            )
            + (
                f'<p class="sqlnb-explanation" style="margin:4px 0">{_esc(explanation)}</p>'
                if (explanation := event.get("explanation"))
                else ""
            )
            + (f"<div>{badge}</div>" if (badge := confidence_html(event.get("confidence"))) else "")
            + f'<pre style="{_PRE}">{_esc(sql)}</pre>'
            + table_html(
                list(event.get("columns") or []), list(event.get("rows") or []), event.get("row_count")
            )
        )
    return (
        f'<div><b style="{_BAD}">✗ {_esc(labels.outcome_head("failed"))}</b> '
        f'<span style="{_MUTED}">({_esc(why)})</span>{tail}</div>'
    )


# ---------------------------------------------------------------------------------------
# the widget
# ---------------------------------------------------------------------------------------

NO_CONNECTION = (
    "No connection: open one with %sqlnb connect URL --name NAME in a cell, then refresh the list (↻)."
)


def _status_html(text: str, *, bad: bool) -> str:
    return f'<div style="{_BAD if bad else _MUTED}">{_esc(text)}</div>' if text else ""


def write_access_html(access: Any) -> str:
    """The selected connection's write access (a
    :class:`~sqlnb.adapters.privileges.WriteAccess`): its label, the full sentence on hover."""
    if access is None:
        return ""
    style = _MUTED if access.can_write is False else _BAD
    mark = "🔒" if access.can_write is False else "⚠"
    return (
        f'<div class="sqlnb-write-access" style="{style}" title="{_esc(access.summary)}">'
        f"{mark} {_esc(access.label)}</div>"
    )


class Turn:
    """One question of the chat: its steps, its outcome, and its buttons."""

    def __init__(self, chat: ChatWidget, question: str, connection: str):
        w = chat._w
        self.chat = chat
        self.question = question
        self.connection = connection
        self.steps: list[str] = []
        self.events: list[dict] = []
        self.done: dict | None = None
        self.run = None
        self.header = w.HTML(
            f'<div style="margin-top:6px"><b>You</b> '
            f'<span style="{_MUTED}">on {_esc(connection)}</span>: '
            f'<span style="white-space:pre-wrap">{_esc(question)}</span></div>'
        )
        self.steps_view = w.HTML("")
        # what the run is doing now and the model's text as it is written (cleared at the end)
        self.live_view = w.HTML("")
        self.live_label, self.live_text = "", ""
        self.outcome = w.HTML("")
        self.insert_button = w.Button(
            description="Insert", icon="plus", tooltip="Insert the %%sql cell into the notebook"
        )
        self.copy_button = w.Button(description="Copy", icon="copy", tooltip="Show the SQL to copy")
        self.remember_button = w.Button(
            description="Remember", icon="thumbs-up", tooltip="Remember this answer"
        )
        self.remembered: int | None = None  # the memory store's id, once remembered
        self.insert_button.on_click(lambda _b: chat._guard(self.insert))
        self.copy_button.on_click(lambda _b: chat._guard(self.copy))
        self.remember_button.on_click(lambda _b: chat._guard(self.remember))
        self.note = w.HTML("")
        self.copy_box = w.Textarea(layout=w.Layout(width="100%", display="none"))
        self.copy_box.observe(self._keep_copy_text, names="value")
        self.actions = w.HBox(
            [self.insert_button, self.copy_button, self.remember_button, self.note],
            layout=w.Layout(display="none", align_items="center"),
        )
        self.answer = w.Textarea(
            placeholder="Your answer to the model's question…", layout=w.Layout(width="100%")
        )
        self.answer_button = w.Button(description="Answer", button_style="primary")
        self.answer_button.on_click(lambda _b: chat._guard(self.send_answer))
        self.clarify = w.VBox([self.answer, self.answer_button], layout=w.Layout(display="none"))
        # the other results the drafts gave, each with a button that inserts it instead
        self.others = w.VBox([], layout=w.Layout(display="none"))
        self.box = w.VBox(
            [
                self.header,
                self.steps_view,
                self.live_view,
                self.outcome,
                self.actions,
                self.others,
                self.copy_box,
                self.clarify,
            ]
        )

    # called with the chat's lock held
    def add_event(self, event: dict) -> None:
        kind = event.get("type")
        if kind in ("phase", "text"):
            self.show_live(event)
            return
        self.events.append(event)
        if kind == "done":
            self.live_view.value = ""
            self.finish(event)
            return
        text = step_html(event)
        if text:
            self.steps.append(text)
            self.steps_view.value = "".join(self.steps)

    def show_live(self, event: dict) -> None:
        """A ``phase`` or ``text`` event: the live line says what the run does now, with the
        end of the model's text as it is written."""
        if event.get("type") == "phase":
            self.live_label = event.get("label") or labels.phase_label(event)
            if event.get("phase") == "writing":
                self.live_text = ""
        else:
            offset = int(event.get("offset") or 0)
            self.live_text = self.live_text[:offset] + str(event.get("text") or "")
        tail = self.live_text[-600:]
        self.live_view.value = f'<div style="{_MUTED}">{_esc(self.live_label)}</div>' + (
            f'<pre style="{_PRE};opacity:.8">{_esc(tail)}</pre>' if tail else ""
        )

    def finish(self, event: dict) -> None:
        self.done = event
        self.outcome.value = done_html(event)
        # an answer with SQL: a success, or the best query found before a clarification
        if event.get("status") in ("success", "needs_clarification") and event.get("cell"):
            self.actions.layout.display = "flex"
        if event.get("status") == "needs_clarification":
            self.clarify.layout.display = "flex"
        alternatives = event.get("alternatives") or []
        if alternatives and event.get("status") == "success":
            self.others.children = [
                self.chat._w.HTML(
                    f'<div style="{_MUTED}">{_esc(labels.alternatives_head(alternatives))}</div>'
                )
            ] + [self._other(alt) for alt in alternatives]
            self.others.layout.display = "flex"

    def _other(self, alt: dict) -> Any:
        """One other result: its label, SQL and first rows, and a button inserting it."""
        w = self.chat._w
        view = w.HTML(
            f'<div>{_esc(alt.get("label"))}</div><pre style="{_PRE}">{_esc(alt.get("sql"))}</pre>'
            + table_html(list(alt.get("columns") or []), list(alt.get("rows") or []), alt.get("row_count"))
        )
        button = w.Button(
            description="Use this", icon="plus", tooltip="Insert this reading's %%sql cell instead"
        )
        button.on_click(lambda _b: self.chat._guard(self.insert, alt.get("cell")))
        return w.VBox([view, button])

    def insert(self, cell: str | None = None) -> None:
        """Insert the answer's %%sql cell (``cell``: another reading's instead)."""
        cell = cell or (self.done or {}).get("cell")
        if not cell:
            return
        session = kernel_session(self.chat.shell)
        bridge = session.bridge if session is not None else None
        if bridge is not None and self.chat.cell_id and bridge.insert_cell(cell, self.chat.cell_id):
            note = "The %%sql cell was inserted below the chat's cell."  # the sqlnb panel is open
        else:
            self.chat.shell.set_next_input(cell, replace=False)
            note = "The %%sql cell appears below the next cell you run."
        self.note.value = f'<span style="{_MUTED}">{_esc(note)}</span>'

    def copy(self) -> None:
        sql = (self.done or {}).get("sql") or ""
        self.copy_box.value = sql
        self.copy_box.rows = min(12, max(2, sql.count("\n") + 1))
        self.copy_box.layout.display = "flex"
        self.note.value = f'<span style="{_MUTED}">Select the SQL below and copy it (Ctrl+C / ⌘C).</span>'

    def remember(self) -> None:
        """The thumbs-up: store the answer's question and SQL in the memory store (once;
        the run's own question, SQL and connection)."""
        if self.remembered is not None:
            return  # pressed before: the pair is stored
        result = getattr(self.run, "result", None)
        sql = getattr(result, "sql", None) or (self.done or {}).get("sql")
        if not sql or not (self.done or {}).get("cell"):
            return
        question = getattr(result, "question", None) or self.question
        connection = getattr(result, "connection", None) or self.connection
        try:
            entry = self.chat.manager.get_entry(connection)
            memory_id = self.chat.ask_magic.agent.remember(
                entry.adapter, question, sql, connection=entry.name, source="thumbs_up"
            )
        except errors.SqlnbError as exc:
            self.note.value = f'<span style="{_BAD}">{_esc(exc)}</span>'
            return
        self.remembered = memory_id
        self.remember_button.description = "Remembered"
        self.remember_button.icon = "check"
        self.remember_button.button_style = "success"
        self.remember_button.tooltip = (
            "Remembered: sqlnb shows this question and its SQL to the "
            "model as an example for similar questions"
        )
        self.remember_button.disabled = True
        self.note.value = (
            f'<span style="{_MUTED}">Remembered: similar questions on '
            f"{_esc(entry.name)} get this SQL as an example.</span>"
        )

    def _keep_copy_text(self, change) -> None:
        sql = (self.done or {}).get("sql") or ""
        if change["new"] != sql and self.copy_box.layout.display != "none":
            self.copy_box.value = sql  # read-only: an edit is undone

    def send_answer(self) -> None:
        text = self.answer.value.strip()
        if not text:
            self.chat._say("Write an answer first.")
            return
        if self.chat._start(text, connection=self.connection, answering=self):
            self.set_answering(False)

    def set_answering(self, enabled: bool) -> None:
        self.answer.disabled = not enabled
        self.answer_button.disabled = not enabled


class ChatWidget:
    """The chat: a connection picker, the conversation, a question box with Ask and Stop.

    ``.view`` is the ipywidgets box shown in the output area (the object displays as it).
    """

    def __init__(self, shell, *, connection: str | None = None, model: Any = None, rows: int = 10):
        self._w = w = _import_widgets()
        self.shell = shell
        session = kernel_session(shell)
        if session is None or not session.loaded:
            raise errors.ConfigurationError("sqlnb is not loaded in this kernel", hint="run %load_ext sqlnb")
        self.magics = session.magics
        self.ask_magic = session.ask
        self.manager = self.magics.manager
        self.model = model
        self.rows = rows
        self.cell_id = _current_cell_id(shell)  # the cell showing the chat (JupyterLab sends it)
        self._lock = threading.RLock()
        self._busy = False
        self._syncing = False
        self._new = False
        self.run = None
        self.turns: list[Turn] = []

        self.connection = w.Dropdown(description="Connection", options=[], layout=w.Layout(width="auto"))
        self.connection.observe(lambda ch: self._guard(self._on_pick, ch["new"]), names="value")
        self.refresh_button = w.Button(
            icon="refresh", tooltip="Refresh the list of connections", layout=w.Layout(width="36px")
        )
        self.refresh_button.on_click(lambda _b: self._guard(self.refresh_connections))
        self.new_button = w.Button(
            description="New conversation",
            tooltip="The next question starts over: earlier questions are forgotten",
        )
        self.new_button.on_click(lambda _b: self._guard(self.new_conversation))
        title = w.HTML("<b>sqlnb</b>")
        self.transcript = w.VBox([])
        self.status = w.HTML("")
        self.access = w.HTML("")  # what the selected connection's credentials may write
        self.question = w.Textarea(
            placeholder="Ask the database a question…", layout=w.Layout(width="100%", height="4.5em")
        )
        self.ask_button = w.Button(description="Ask", button_style="primary", icon="paper-plane")
        self.ask_button.on_click(lambda _b: self._guard(self.ask))
        self.stop_button = w.Button(
            description="Stop", button_style="danger", icon="stop", layout=w.Layout(display="none")
        )
        self.stop_button.on_click(lambda _b: self._guard(self.stop))
        self.view = w.VBox(
            [
                w.HBox(
                    [title, self.connection, self.refresh_button, self.new_button],
                    layout=w.Layout(align_items="center"),
                ),
                self.access,
                self.transcript,
                self.status,
                w.HBox(
                    [self.question, w.VBox([self.ask_button, self.stop_button])],
                    layout=w.Layout(width="100%"),
                ),
            ]
        )
        self.refresh_connections()
        if connection is not None:
            self._guard(self._open, connection)

    # ---- display -----------------------------------------------------------------
    def _repr_mimebundle_(self, **kwargs):
        return self.view._repr_mimebundle_(**kwargs)

    def __repr__(self) -> str:
        return f"<sqlnb chat on {self.connection.value!r}>"

    # ---- helpers -----------------------------------------------------------------
    def _say(self, text: str, *, bad: bool = True) -> None:
        self.status.value = _status_html(text, bad=bad)

    def _guard(self, fn: Callable, *args) -> Any:
        """Run a handler under the lock; a sqlnb error becomes the status line (the widget
        stays usable); anything else too, named by its type."""
        with self._lock:
            try:
                return fn(*args)
            except errors.SqlnbError as exc:
                self._say(str(exc))
            except Exception as exc:  # a handler must never break the widget
                self._say(f"{type(exc).__name__}: {exc}")
            return None

    # ---- connections -------------------------------------------------------------
    def refresh_connections(self) -> None:
        """Show the kernel's open connections, the active one selected."""
        rows = self.manager.describe()
        options = [(self._label(r), r["name"]) for r in rows]
        self._syncing = True
        try:
            self.connection.options = options
            self.connection.value = self.manager.active if options else None
        finally:
            self._syncing = False
        self._show_access()
        self._say(NO_CONNECTION if not options else "")  # a refresh clears an older complaint

    def _show_access(self) -> None:
        name = self.connection.value
        self.access.value = write_access_html(
            self.manager.write_access(name) if name in self.manager.names() else None
        )

    @staticmethod
    def _label(row: dict) -> str:
        return f"{row['name']} · {row['engine']}" + (" · read-only" if row.get("readonly") else "")

    def _on_pick(self, name: str | None) -> None:
        if self._syncing or name is None:
            return
        self.manager.use(name)
        self._show_access()

    def _open(self, connection: str) -> None:
        if connection not in self.manager.names():
            self.manager.connect(connection)  # a URL or a configured name; it becomes active
        else:
            self.manager.use(connection)
        self.refresh_connections()

    def new_conversation(self) -> None:
        self._new = True
        self._say("The next question starts a new conversation.", bad=False)

    # ---- asking ------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._busy

    def ask(self) -> None:
        """The Ask button: ask the question box's question."""
        question = self.question.value.strip()
        if not question:
            self._say("Write a question first.")
            return
        self._start(question, connection=self.connection.value)

    def _start(self, question: str, *, connection: str | None, answering: Turn | None = None) -> bool:
        """Start a run of ``question`` (False when one is already running).  ``answering``:
        the turn whose clarification question this answers."""
        with self._lock:
            if self._busy:
                return False  # a second click while a run goes does nothing
            self._say("")
            entry = self.manager.get_entry(connection)  # no connection: a clear error
            settings = self.ask_magic.settings(no_data=False, connection=entry.name)
            model = self.model if self.model is not None else (self.ask_magic.model or None)
            run = _ask_run_class()(
                agent=self.ask_magic.agent,
                manager=self.manager,
                question=question,
                connection=entry.name,
                model=model,
                max_iterations=self.ask_magic.max_iterations,
                failure_cutoff=self.ask_magic.failure_cutoff,
                settings=settings,
                new=self._new,
                rows=self.rows,
                on_event=lambda event: self._on_event(turn, answering, event),
                after_done=lambda name: self.ask_magic.read_ahead_for(name, model=model),
            )
            run.claim()  # one question at a time per kernel (this chat's, another's, the panel's)
            turn = Turn(self, question, entry.name)
            turn.run = run
            self._busy = True
            self.run = run
            self.turns.append(turn)
            self.transcript.children = (*self.transcript.children, turn.box)
            self.ask_button.disabled = True
            self.stop_button.disabled = False
            self.stop_button.description = "Stop"
            self.stop_button.layout.display = "flex"
            try:
                run.start()
            except BaseException as exc:
                turn.outcome.value = f'<div style="{_BAD}">✗ {_esc(exc)}</div>'
                self._end_run()
                raise
            self._new = False
            return True

    def _end_run(self) -> None:
        self._busy = False
        self.ask_button.disabled = False
        self.stop_button.layout.display = "none"

    def _on_event(self, turn: Turn, answering: Turn | None, event: dict) -> None:
        """A run's event, from its worker thread."""
        with self._lock:
            try:
                turn.add_event(event)
            except Exception as exc:  # rendering must never break the run
                self._say(f"Could not show a step: {type(exc).__name__}: {exc}")
            if event.get("type") != "done":
                return
            status = event.get("status")  # an error shows as the turn's outcome line
            if answering is not None:
                if status in ("error", "stopped"):
                    answering.set_answering(True)  # the answer is still in its box: try again
                elif answering.answer.value.strip() == turn.question:
                    answering.answer.value = ""
            elif status not in ("error", "stopped") and self.question.value.strip() == turn.question:
                self.question.value = ""  # asked and answered: the box is free for the next one
            if turn.run is self.run:
                self._end_run()

    def stop(self) -> None:
        """The Stop button: end the running turn (idempotent)."""
        run = self.run
        if not self._busy or run is None or self.stop_button.disabled:
            return
        self.stop_button.disabled = True
        self.stop_button.description = "Stopping…"
        run.stop()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the current run to end (scripts and tests); True when none is running."""
        run = self.run
        return True if run is None else bool(run.wait(timeout))

    def close(self) -> None:
        """Stop a running turn and close every widget of the chat."""
        with self._lock:
            if self._busy and self.run is not None:
                self.run.stop()
            for widget in _walk(self.view):
                widget.close()


def _current_cell_id(shell) -> str | None:
    session = kernel_session(shell)
    bridge = session.bridge if session is not None else None
    try:
        return bridge.current_cell_id() if bridge is not None else None
    except Exception:
        return None


def _walk(widget):
    """A widget and every widget inside it."""
    yield widget
    for child in getattr(widget, "children", ()) or ():
        yield from _walk(child)


def widgets_in(chat: ChatWidget) -> list:
    """Every widget the chat shows (its state is what reaches the browser)."""
    return list(_walk(chat.view))


def _ask_run_class():
    from sqlnb.bridge.runs import AskRun

    return AskRun


def _shell():
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        raise errors.UsageError(
            "sqlnb.chat() runs in a notebook (a Jupyter kernel)",
            hint="from a terminal, use sqlnb ask or sqlnb.ask()",
        )
    if not _loaded(shell):
        shell.extension_manager.load_extension("sqlnb")
        if not _loaded(shell):  # recorded as loaded, then unloaded: load it again by name
            importlib.import_module("sqlnb").load_ipython_extension(shell)
    return shell


def _loaded(shell) -> bool:
    session = kernel_session(shell)
    return session is not None and session.loaded


def chat(connection: str | None = None, model: Any = None) -> ChatWidget:
    """The sqlnb chat as a widget; see :mod:`sqlnb.bridge.widget`."""
    return ChatWidget(_shell(), connection=connection, model=model)
