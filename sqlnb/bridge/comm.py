"""The ``sqlnb`` comm target: the kernel side of docs/protocol.md.

``%load_ext sqlnb`` calls :func:`register`, which registers the target with the kernel's
comm manager (the ``comm`` package's, which ipykernel 6+ provides).  A :class:`Bridge`
per kernel answers the panel's requests (hello, connections, use, schema, ask, stop,
remember, rows) on the shell thread; questions run in an :class:`~sqlnb.bridge.runs.AskRun`
thread, so the shell stays free for cells while the agent works, and their events go out
on the comm from that thread.

The bridge talks to the notebook's connection manager and agent (the ones ``%sqlnb`` and
``%%ask`` use), never to drivers.  What reaches the browser: connection names, redacted
URLs, schema metadata, SQL and small result previews; errors as ``{kind, message, hint}``,
never a traceback or a password.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from sqlnb import errors
from sqlnb._version import __version__
from sqlnb.bridge.runs import AskRun, Busy, error_info, json_rows, safe_text
from sqlnb.kernel import kernel_session

__all__ = ["FEATURES", "PROTOCOL", "TARGET", "Bridge", "Busy", "ProtocolMismatch", "register"]

PROTOCOL = 1
# what this kernel side does beyond the first version of protocol 1 (the hello reply's
# `features`; docs/protocol.md "Changes")
FEATURES = (
    "confidence",
    "remember",
    "memory_event",
    "write_access",
    "labels",
    "live",
    "results",
    "stats",
    "connect",
    "answered_as",
)
TARGET = "sqlnb"
_KEEP_RUNS = 20  # finished runs remembered for a late `stop`, `remember` or `rows`
ROWS_PAGE = 1_000  # the most rows one `rows` reply carries

log = logging.getLogger("sqlnb.bridge")


def _known_names(manager: Any) -> list[str]:
    """The names of the configured connections (connections file, environment); none when
    the file cannot be read (the connect form then takes URLs)."""
    try:
        return list(manager.known_names())
    except errors.SqlnbError:
        return []


def run_is_going(bridge: Any) -> bool:
    run = getattr(bridge, "run", None)
    return run is not None and not getattr(run, "done", True)


class ProtocolMismatch(errors.SqlnbError):
    kind = "protocol_mismatch"


def register(ipython) -> Bridge | None:
    """Register the ``sqlnb`` comm target for ``ipython``'s kernel; returns the bridge
    (None without a kernel, e.g. in a terminal IPython)."""
    kernel = getattr(ipython, "kernel", None)
    if kernel is None:
        return None
    manager = getattr(kernel, "comm_manager", None)
    if manager is None:
        import comm

        manager = comm.get_comm_manager()
    session = kernel_session(ipython, create=True)
    if session.bridge is None:
        session.bridge = Bridge(ipython)
    manager.register_target(TARGET, session.bridge.open)
    return session.bridge


class Bridge:
    """The panel's counterpart in one kernel: one panel comm at a time, one question at
    a time."""

    def __init__(self, shell, *, kernel=None):
        self.shell = shell
        self.kernel = kernel
        self.panel = None  # the comm whose hello came last (None: no panel open)
        self.run: AskRun | None = None  # the run going on, or the last one
        self.runs: OrderedDict[str, AskRun] = OrderedDict()
        self.inserted: list[str] = []  # cell ids the panel said it inserted below
        self.reading_ahead: threading.Thread | None = None  # the last read-ahead's start
        self._lock = threading.RLock()
        self._send_lock = threading.Lock()
        self._handlers: dict[str, Callable[[Any, dict], dict]] = {
            "hello": self.hello,
            "connections": self.connections,
            "use": self.use,
            "connect": self.connect,
            "schema": self.schema,
            "ask": self.ask,
            "stop": self.stop,
            "remember": self.remember,
            "rows": self.rows,
        }

    # ---- what the bridge works with ------------------------------------------------
    def _session(self):
        session = kernel_session(self.shell)
        if session is None or not session.loaded:
            raise errors.ConfigurationError("sqlnb is not loaded in this kernel", hint="run %load_ext sqlnb")
        return session

    @property
    def magics(self):
        return self._session().magics

    @property
    def manager(self):
        return self.magics.manager

    @property
    def ask_magic(self):
        return self._session().ask

    # ---- the comm ------------------------------------------------------------------
    def open(self, comm, open_msg: dict | None = None) -> None:
        """The comm target: a panel opened a comm (it becomes *the* panel at its hello)."""
        comm.on_msg(lambda msg: self.handle(comm, (msg.get("content") or {}).get("data")))
        comm.on_close(lambda msg: self._closed(comm))

    def _closed(self, comm) -> None:
        with self._lock:
            if self.panel is comm:
                self.panel = None

    def send(self, comm, message: dict) -> bool:
        """Send one protocol message (``v`` added) unless the comm is closed."""
        if comm is None or getattr(comm, "_closed", False):
            return False
        with self._send_lock:
            try:
                comm.send({"v": PROTOCOL, **message})
            except Exception:  # a comm the kernel can no longer reach
                log.debug("sqlnb: could not send on the panel comm", exc_info=True)
                return False
        if message.get("type") == "event" and threading.current_thread() is not threading.main_thread():
            self._flush_iopub()
        return True

    def _flush_iopub(self, timeout: float = 0.5) -> None:
        """Wait until the kernel's IOPub thread has sent what is queued: a question's thread
        goes straight on to CPU-bound work (the schema context) after an event, and would
        otherwise keep the IOPub thread from sending it (measured: the first step reached
        the panel ~35 ms late at the median, ~80 ms at p95; see benchmarks/ui_events)."""
        kernel = self.kernel or getattr(self.shell, "kernel", None)
        iopub = getattr(kernel, "iopub_thread", None)
        if iopub is None or not hasattr(iopub, "schedule"):
            return
        sent = threading.Event()
        try:
            iopub.schedule(sent.set)
        except Exception:
            return
        sent.wait(timeout)

    def handle(self, comm, data: Any) -> None:
        """One message from the panel: a request gets exactly one reply."""
        if not isinstance(data, dict):
            return
        rid = data.get("id")
        kind = data.get("type")
        if kind == "inserted":  # the panel inserted a cell we asked for
            if isinstance(data.get("cell_id"), str):
                self.inserted.append(data["cell_id"])
            return
        try:
            if data.get("v") != PROTOCOL:
                raise ProtocolMismatch(
                    f"the panel speaks protocol version {data.get('v')!r}, this kernel's sqlnb "
                    f"speaks version {PROTOCOL}",
                    hint="install the same sqlnb version in the kernel's environment as in "
                    "JupyterLab's (pip install -U sqlnb), then restart the kernel",
                )
            handler = self._handlers.get(kind) if isinstance(kind, str) else None
            if handler is None:
                raise errors.UsageError(
                    f"unknown request {kind!r}", hint=f"requests: {', '.join(self._handlers)}"
                )
            if not isinstance(rid, str) or not rid:
                raise errors.UsageError("a request needs an id (a string)")
            after: list[Callable[[], None]] = []
            reply_data = handler(comm, data, after) if kind == "ask" else handler(comm, data)
        except Exception as exc:
            if not isinstance(exc, errors.SqlnbError):
                log.exception("sqlnb: the panel's %r request failed", kind)
            info = (
                {"kind": exc.kind, "message": safe_text(exc.message), "hint": exc.hint}
                if isinstance(exc, (ProtocolMismatch, Busy))
                else error_info(exc)
            )
            self.send(comm, {"type": "reply", "id": rid, "ok": False, "error": info})
            return
        self.send(comm, {"type": "reply", "id": rid, "ok": True, "data": reply_data})
        for fn in after:  # e.g. start the run once its id went out
            fn()

    # ---- requests ----------------------------------------------------------------------
    def hello(self, comm, data: dict) -> dict:
        if data.get("protocol") != PROTOCOL:
            raise ProtocolMismatch(
                f"the panel speaks protocol version {data.get('protocol')!r}, this kernel's "
                f"sqlnb speaks version {PROTOCOL}",
                hint="install the same sqlnb version in the kernel's environment as in "
                "JupyterLab's (pip install -U sqlnb), then restart the kernel",
            )
        with self._lock:
            old, self.panel = self.panel, comm
        if old is not None and old is not comm:
            self.send(old, {"type": "superseded"})
            try:
                old.close()
            except Exception:
                pass
            # nobody listens to the older panel's question any more: stop it, so that the
            # new panel is not told "busy" until it ends
            run = self.run
            if run is not None and not run.done and getattr(run, "comm", None) is old:
                run.stop()
        self._read_ahead()  # the first question's prompt, read while the user types it
        return {
            "protocol": PROTOCOL,
            "sqlnb": __version__,
            "python": sys.version.split()[0],
            "features": list(FEATURES),
            **self._connections(),
        }

    def connections(self, comm, data: dict) -> dict:
        return self._connections()

    def use(self, comm, data: dict) -> dict:
        name = data.get("name")
        if not isinstance(name, str) or not name:
            raise errors.UsageError("use needs a connection name")
        self.manager.use(name)
        self._read_ahead(name)
        return self._connections()

    def connect(self, comm, data: dict) -> dict:
        """Open a connection from the panel (its connect form, or Reconnect after a kernel
        restart): ``target`` a URL or a configured connection's name, ``name`` (optional),
        ``password`` (optional: for a URL given without one; kept in the kernel's memory
        only, never sent back, logged or saved), ``readonly``."""
        target, name, password = data.get("target"), data.get("name") or None, data.get("password") or None
        if not isinstance(target, str) or not target.strip():
            raise errors.UsageError(
                "connect needs a URL or a connection name",
                hint="e.g. duckdb:///sample.duckdb, or the name of a connection in ~/.sqlnb/connections.toml",
            )
        if name is not None and not isinstance(name, str):
            raise errors.UsageError("connect: name must be a string")
        if password is not None and not isinstance(password, str):
            raise errors.UsageError("connect: password must be a string")
        if run_is_going(self):
            raise errors.UsageError(
                "A question is being answered", hint="wait for it (or stop it), then connect"
            )
        entry = self.manager.connect(
            target.strip(), name, readonly=bool(data.get("readonly")), password=password
        )
        self._read_ahead(entry.name)
        return {**self._connections(), "connected": entry.name}

    def _read_ahead(self, connection: str | None = None, **options: Any) -> None:
        """Have a local model read the start of the next question's prompt on
        ``connection`` (default: the active one) in the background
        (:meth:`sqlnb.magics.ask.AskMagic.read_ahead_for`); nothing when sqlnb is not
        loaded, no connection is active, or reading ahead is off.  In a thread of its own:
        the first time, it builds the agent (imports included), which the reply that
        called it does not wait for."""

        def start() -> None:
            try:
                self.ask_magic.read_ahead_for(connection, **options)
            except errors.SqlnbError:
                pass
            except Exception:  # never a panel's request's failure
                log.debug("sqlnb: reading ahead did not start", exc_info=True)

        thread = threading.Thread(target=start, daemon=True, name="sqlnb-read-ahead")
        thread.start()
        self.reading_ahead = thread

    def _connections(self) -> dict:
        manager = self.manager
        conns = [
            {
                "name": c["name"],
                "engine": c["engine"],
                "url": c["url"],
                "readonly": bool(c["readonly"]),
                "active": bool(c["active"]),
                "write_access": write_access_info(manager.write_access(c["name"])),
            }
            for c in manager.describe()
        ]
        # the configured connections (names only) the connect form offers
        return {"connections": conns, "active": manager.active, "known": _known_names(manager)}

    def schema(self, comm, data: dict) -> dict:
        name = data.get("connection") or None
        if name is not None and not isinstance(name, str):
            raise errors.UsageError("schema: connection must be a name")
        entry = self.manager.get_entry(name)
        catalog = entry.adapter.catalog(refresh=bool(data.get("refresh")))
        return {
            "connection": entry.name,
            "dialect": catalog.dialect,
            "tables": [table_info(t) for t in catalog.tables],
        }

    def ask(self, comm, data: dict, after: list) -> dict:
        question = data.get("question")
        if not isinstance(question, str) or not question.strip():
            raise errors.UsageError("ask needs a question", hint="type a question first")
        ask_magic = self.ask_magic
        max_iterations = _int(data, "max_iterations", ask_magic.max_iterations, minimum=1)
        rows = _int(data, "rows", 10, minimum=0)
        connection = data.get("connection") or None
        model = data.get("model") or ask_magic.model or None
        for field, value in (("connection", connection), ("model", model)):
            if value is not None and not isinstance(value, str):
                raise errors.UsageError(f"ask: {field} must be a string")
        history = data.get("history")
        if history is not None and not isinstance(history, list):
            raise errors.UsageError("ask: history must be a list of earlier turns")
        with self._lock:

            def settings(name: str):
                return ask_magic.settings(no_data=False, connection=name)

            run = AskRun(
                agent=ask_magic.agent,
                manager=self.manager,
                question=question.strip(),
                connection=connection,
                model=model,
                max_iterations=max_iterations,
                settings=settings,
                history=history,
                new=bool(data.get("new")),
                rows=rows,
                failure_cutoff=ask_magic.failure_cutoff,
                on_event=lambda event: self.send(comm, {"type": "event", "run": run.id, "event": event}),
                after_done=lambda name: self._read_ahead(name, model=model, max_iterations=max_iterations),
            )
            run.claim()  # Busy while a question (the panel's or a chat's) is answered
            run.comm = comm  # type: ignore[attr-defined]  # the panel that asked
            self.run = run
            self.runs[run.id] = run
            while len(self.runs) > _KEEP_RUNS:
                self.runs.popitem(last=False)
        after.append(run.start)
        return {"run": run.id}

    def stop(self, comm, data: dict) -> dict:
        rid = data.get("run")
        run = self.runs.get(rid) if isinstance(rid, str) else None
        if run is None:
            raise errors.UsageError(
                f"no run {rid!r} in this kernel", hint="it may have ended with a kernel restart"
            )
        if run.done:
            return {"stopping": False}
        run.stop()
        return {"stopping": True}

    def remember(self, comm, data: dict) -> dict:
        """Store an answer's question and SQL in the memory store (the thumbs-up): the
        run's own question, SQL and connection when this kernel still knows the run, else
        the request's ``question``, ``sql`` and ``connection`` (a reloaded page, a
        restarted kernel).  The store keeps one copy of a pair: remembering twice answers
        the same id."""
        rid = data.get("run")
        if rid is not None and not isinstance(rid, str):
            raise errors.UsageError("remember: run must be a run id (a string)")
        run = self.runs.get(rid) if rid else None
        if run is not None:
            if not run.done:
                raise errors.UsageError(
                    "this answer is not finished yet", hint="wait for its end, then remember it"
                )
            result = run.result
            if result is None or not result.sql:
                raise errors.UsageError("this answer has no SQL to remember")
            question, sql, connection = result.full_question, result.sql, result.connection
        else:
            question, sql, connection = (data.get(k) for k in ("question", "sql", "connection"))
            if rid and not (question or sql):
                raise errors.UsageError(
                    f"no run {rid!r} in this kernel",
                    hint="it may have ended with a kernel restart; send its question, sql and connection",
                )
            for field, value in (("question", question), ("sql", sql)):
                if not isinstance(value, str) or not value.strip():
                    raise errors.UsageError(f"remember needs the answer's {field}")
            if connection is not None and not isinstance(connection, str):
                raise errors.UsageError("remember: connection must be a name")
        entry = self.manager.get_entry(connection or None)
        memory_id = self.ask_magic.agent.remember(
            entry.adapter, question.strip(), sql, connection=entry.name, source="thumbs_up"
        )
        return {"id": memory_id}

    def rows(self, comm, data: dict) -> dict:
        """A page of an answer's result rows (``offset``, ``limit``: at most
        :data:`ROWS_PAGE`), JSON-safe as the ``done`` event's, from the result the kernel
        keeps with the run (its last 20 runs)."""
        rid = data.get("run")
        run = self.runs.get(rid) if isinstance(rid, str) else None
        if run is None:
            raise errors.UsageError(
                f"no run {rid!r} in this kernel",
                hint="it may have ended with a kernel restart, or be older than the last "
                f"{_KEEP_RUNS} questions; ask again, or insert its cell and run it",
            )
        if not run.done:
            raise errors.UsageError("this answer is not finished yet", hint="wait for its end")
        result: Any = run.result  # an AskResult, or None when the run failed to start
        table = getattr(getattr(result, "result", None), "arrow", None)
        if table is None:
            raise errors.UsageError("this answer has no result rows")
        offset = _int(data, "offset", 0, minimum=0, request="rows")
        limit = min(_int(data, "limit", 100, minimum=1, request="rows"), ROWS_PAGE)
        return {
            "run": rid,
            "offset": offset,
            "columns": list(result.columns),
            "rows": json_rows(result.result, limit, offset),
            "row_count": table.num_rows,
            "truncated": bool(getattr(result.result, "truncated", False)),
        }

    # ---- commands ----------------------------------------------------------------------
    def insert_cell(self, source: str, cell_id: str | None = None, *, run: bool = False) -> bool:
        """Ask the open panel to insert ``source`` below the cell ``cell_id`` (default: the
        cell being executed, from the execute request's metadata).  False when no panel is
        open or the cell is unknown: the caller falls back to ``set_next_input``."""
        if cell_id is None:
            cell_id = self.current_cell_id()
        with self._lock:
            panel = self.panel
        if panel is None or not cell_id:
            return False
        return self.send(
            panel, {"type": "insert_cell", "source": source, "cell_id": cell_id, "run": bool(run)}
        )

    def current_cell_id(self) -> str | None:
        """The id of the cell being executed: JupyterLab sends it as ``cellId`` in the
        execute request's metadata."""
        parent = None
        kernel = self.kernel or getattr(self.shell, "kernel", None)
        if kernel is not None:
            try:
                parent = kernel.get_parent("shell")
            except Exception:
                parent = None
        if not parent:
            parent = getattr(self.shell, "parent_header", None)
        metadata = (parent or {}).get("metadata") or {}
        cell_id = metadata.get("cellId")
        return cell_id if isinstance(cell_id, str) and cell_id else None


def write_access_info(access) -> dict:
    """What a connection's credentials may write (a
    :class:`~sqlnb.adapters.privileges.WriteAccess`, from the connection manager), as the
    panel shows it: ``can_write`` (true, false, or null when sqlnb could not tell), ``label``
    (a few words for the connection indicator), ``summary`` (the full sentence, its tooltip)
    and the counts."""
    return {
        "can_write": access.can_write,
        "label": access.label,
        "summary": access.summary,
        "writable_tables": access.writable_tables,
        "superuser": access.superuser,
    }


def table_info(table) -> dict:
    """A catalog table as the panel shows it: columns with type, nullable, pk, fk."""
    refs: dict[str, str] = {}
    for fk in table.foreign_keys:
        for i, col in enumerate(fk.columns):
            ref_col = fk.ref_columns[i] if i < len(fk.ref_columns) else None
            if ref_col and col not in refs:
                refs[col] = f"{fk.ref_table}.{ref_col}"
    pk = set(table.primary_key or [])
    return {
        "schema": table.schema,
        "name": table.name,
        "kind": table.kind,
        "comment": table.comment,
        "columns": [
            {
                "name": c.name,
                "type": c.type,
                "nullable": bool(c.nullable),
                "pk": c.name in pk,
                "fk": refs.get(c.name),
            }
            for c in table.columns
        ],
    }


def _int(data: dict, key: str, default: int, *, minimum: int, request: str = "ask") -> int:
    value = data.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise errors.UsageError(f"{request}: {key} must be a whole number, at least {minimum}")
    return value
