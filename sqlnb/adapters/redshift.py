"""Amazon Redshift through redshift_connector.

Shares error classification, type names, Arrow typing and the pg_catalog queries with the
PostgreSQL adapter (:class:`~sqlnb.adapters.postgres.PgFamilyAdapter`); the differences:

- the driver: redshift_connector (pure Python).  Its ``get_tables``/``get_columns`` query
  Redshift-only ``svv_*`` views, so the catalog comes from our own pg_catalog queries.
- parameters: ``:name`` becomes ``$1``, ``$2`` … and the cursor runs in ``qmark`` style,
  which leaves ``$n`` alone (the driver's ``pyformat``/``format`` styles do not undo ``%%``
  inside string literals, so a literal ``'%'`` would reach the server doubled).  With
  parameters the driver rewrites every ``?`` it finds, so such a statement is refused
  (the text sent must be the text checked).  The driver speaks the extended query
  protocol: one statement per call.
- sessions: on a read-write connection ``statement_timeout`` is set with ``SET`` after
  connecting (connection poolers such as PgBouncer do not forward startup options).  On a
  read-only connection every statement runs in its own ``BEGIN READ ONLY`` with the
  timeout set for that transaction only (``set_config('statement_timeout', ms, true)``)
  and is rolled back afterwards, as on PostgreSQL (see the postgres module).
- prepared statements: unnamed (``max_prepared_statements=0`` unless the URL sets it): a
  cached named statement is missing, or another client's, on the next server session
  behind a pooler in transaction mode.
- row caps: the driver buffers a whole result before the first row is read, so a query
  with ``max_rows`` runs as ``DECLARE sqlnb_cap_<n> CURSOR FOR`` followed by the query as
  written on lines of its own, and ``FETCH FORWARD max_rows + 1``: only those rows leave
  the server.
- cancel: the driver has none, so a second, short-lived connection runs
  ``pg_cancel_backend(pid)`` with the backend pid read at connect time
  (``pg_backend_pid()`` is the real server pid, also behind PgBouncer in session mode); a
  read-only connection reads it again inside each statement's transaction, which also
  holds behind a pooler in transaction mode.
- after an interrupt broke the protocol mid-read the driver silently returns empty results
  forever: ``_after_cancel`` discards such a connection and opens a new one.
"""

from __future__ import annotations

import inspect
import re
import threading
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from sqlnb import errors
from sqlnb.adapters.postgres import (
    BUILTIN_TYPES,
    NUMERIC_OID,
    UNKNOWN,
    PgFamilyAdapter,
    arrow_types,
    cached_read_only,
    changes_session,
    with_numerics,
)
from sqlnb.adapters.result import Result, ResultColumn, empty_result, fetch_rows, rows_to_arrow
from sqlnb.adapters.spec import revealed
from sqlnb.sql.statement import Statement

_BYTEA_OID = 17
_TXN_END = re.compile(r"^\s*(commit|rollback|end|abort)\b", re.I)
_TRUE = {"1", "true", "yes", "on", "t", "y"}
_FALSE = {"0", "false", "no", "off", "f", "n"}


class RedshiftAdapter(PgFamilyAdapter):
    scheme = "redshift"
    dialect = "redshift"
    extra = "redshift"
    driver_module = "redshift_connector"
    display_name = "Amazon Redshift"
    paramstyle = "numeric"  # $1, $2, ... (see the module docstring)
    default_port: ClassVar[int] = 5439

    # Redshift's catalog is PostgreSQL 8.0's: no partitions, no INCLUDE columns in indexes,
    # no pg_my_temp_schema().
    catalog_relkinds = "'r', 'v', 'm'"
    catalog_schema_filter = (
        "n.nspname NOT IN ('information_schema', 'catalog_history') AND n.nspname !~ '^pg_'"
    )
    catalog_table_filter = ""
    catalog_index_keys = "indnatts"
    local_timeout_sql = "SELECT pg_catalog.set_config('statement_timeout', '{ms}', true)"

    def _advisory_locks(self) -> bool:
        # Redshift has no advisory locks; a PostgreSQL server behind the driver does
        return self._has_advisory_locks

    # ---- connect -------------------------------------------------------------------------
    def _connect_kwargs(self) -> dict[str, Any]:
        import redshift_connector

        spec = self.spec
        accepted = inspect.signature(redshift_connector.connect).parameters
        kwargs: dict[str, Any] = {
            "host": spec.host,
            "port": spec.port or self.default_port,
            "user": spec.user,
            "password": spec.password,  # a Secret until the driver call (spec.revealed)
            "database": spec.database,
            "application_name": "sqlnb",
            # unnamed statements: a cached named one would be missing (or another's) on the
            # next server session behind a pooler in transaction mode, and a cached FETCH
            # would keep the row description of the first cursor it read
            "max_prepared_statements": 0,
        }
        if self.options.connect_timeout:
            kwargs["timeout"] = self.options.connect_timeout
        for key, value in spec.params.items():
            if key not in accepted or key in ("password", "user", "host", "port", "database"):
                raise errors.ConfigurationError(
                    f"Unknown Redshift connection parameter {key!r} in {spec.redacted_url()}",
                    hint="use redshift_connector.connect() arguments such as ssl, sslmode, "
                    "application_name, iam, cluster_identifier, region",
                )
            kwargs[key] = _coerce(value, accepted[key].annotation)
        return {k: v for k, v in kwargs.items() if v is not None}

    def _connect(self) -> None:
        self._init_state()
        self._kwargs = self._connect_kwargs()
        self._running_pid: int | None = None
        self._broken = False
        self._cursor_seq = 0
        self._cancel_lock = threading.Lock()
        self._open()

    def _open(self) -> None:
        import redshift_connector

        conn = _scrubbed(redshift_connector.connect(**revealed(self._kwargs)))
        try:
            conn.autocommit = True
            try:  # the connect timeout must not stay on the socket for every later read
                conn._usock.settimeout(None)
            except Exception:
                pass
            cur = conn.cursor()
            if not self.options.readonly:  # read-only: per statement, see _execute_rows
                cur.execute(f"SET statement_timeout TO {self._timeout_ms(self.options.statement_timeout)}")
            cur.execute("SELECT pg_backend_pid()")
            pid = cur.fetchone()[0]
            cur.execute("SELECT count(*) FROM pg_catalog.pg_proc WHERE proname = 'pg_advisory_unlock_all'")
            advisory = bool(cur.fetchone()[0])
            cur.close()
        except BaseException:
            try:
                conn.close()
            except Exception:
                pass
            raise
        self.conn = conn
        self.pid = int(pid)
        self._has_advisory_locks = advisory
        self._broken = False
        self._session_timeout = self.options.statement_timeout or None

    # ---- execute ---------------------------------------------------------------------
    def _bind(self, sql: str, params: Mapping[str, Any] | None, guarded: bool) -> tuple[str, Any]:
        """``$n`` placeholders.  With parameters the driver reads the text again with a
        lexer of its own and turns every ``?`` it finds outside its idea of a string into a
        placeholder (dollar quotes included): such a text is refused rather than changed."""
        text, bound = super()._bind(sql, params, guarded)
        if bound and "?" in text and not _driver_keeps_question_marks(text):
            raise errors.UsageError(
                "A statement with :name parameters cannot contain '?' on Redshift: the "
                "driver would read it as a placeholder and change the statement",
                dialect=self.dialect,
                hint="write the value in the text instead of a parameter, or avoid '?' in that statement",
            )
        return text, bound

    def _execute(
        self, statement: Statement, params: Any, max_rows: int | None, timeout: float | None
    ) -> Result:
        self._effective_timeout = timeout
        return self._execute_rows(statement, params, max_rows, timeout)

    def _execute_rows(
        self, statement: Statement, params: Any, max_rows: int | None, timeout: float | None
    ) -> Result:
        cur = self.conn.cursor()
        cur.paramstyle = "qmark"
        # a capped query: a cursor on the server, so only max_rows + 1 rows are sent
        capped = max_rows is not None and (statement.accepted or cached_read_only(statement, self.dialect))
        own = None  # the read-only transaction this statement runs in, when sqlnb opens one
        cursor_txn = False  # a transaction sqlnb opened for a capped query's cursor
        declared = False
        pid = self.pid
        try:
            if self.options.readonly:
                own = self._read_only_statement(self._run_unless_broken, self._catalog_rows)
                own.begin(timeout)
                cur.execute("SELECT pg_catalog.pg_backend_pid()")
                pid = int(cur.fetchone()[0])  # the server session of this transaction
            elif self._session_timeout is UNKNOWN or self._session_timeout != timeout:
                cur.execute(f"SET statement_timeout TO {self._timeout_ms(timeout)}")
                # inside a transaction (the user's, or a read-only scope) a rollback undoes it
                self._session_timeout = UNKNOWN if self.conn.in_transaction else timeout
            sent = statement
            if capped:
                if own is None and not self.conn.in_transaction:
                    self._run("BEGIN")
                    cursor_txn = True
                self._cursor_seq += 1  # a fresh name: nothing cached for another cursor applies
                cursor_name = f"sqlnb_cap_{self._cursor_seq}"
                sent = statement.wrap(f"DECLARE {cursor_name} CURSOR FOR")
            self._running_pid = pid
            try:
                if params:
                    cur.execute(self._sendable(sent), params)
                else:
                    cur.execute(self._sendable(sent))
                declared = capped
                if capped:
                    cur.execute(f"FETCH FORWARD {int(max_rows) + 1} FROM {cursor_name}")
            except Exception as exc:
                if not _is_server_error(exc):
                    self._broken = True  # the protocol state is unknown now
                raise
            except BaseException:  # KeyboardInterrupt mid-read: the connection is unusable
                self._broken = True
                raise
            finally:
                self._running_pid = None
            description = cur.description
            if not description:
                return empty_result(statement, cur.rowcount if cur.rowcount is not None else -1)
            rows, truncated = fetch_rows(cur, max_rows)
        finally:
            if declared and own is None and not cursor_txn:  # the user's transaction stays open
                try:
                    self._run(f"CLOSE {cursor_name}")
                except Exception:
                    pass
            try:
                cur.close()
            except Exception:
                pass
            if cursor_txn:
                try:
                    self._run_unless_broken("COMMIT")
                except Exception:
                    pass
            if own is not None:
                own.end()
            if changes_session(statement, self.dialect) or _TXN_END.match(statement):
                # it may have SET statement_timeout, or rolled back our SET
                self._session_timeout = UNKNOWN
        oids = [int(d[1]) for d in description]
        names = [d[0] for d in description]
        rows = _fix_values(list(rows), oids)
        columns = [ResultColumn(n, t) for n, t in zip(names, self._type_display(oids), strict=True)]
        typnames = [BUILTIN_TYPES.get(o, (None,))[0] for o in oids]
        table = rows_to_arrow(columns, rows, arrow_types(typnames))
        return Result(columns, with_numerics(table, typnames, [-1] * len(oids)), len(rows), truncated)

    def _run_unless_broken(self, sql: str) -> None:
        """sqlnb's own statement (opening or ending the transaction it runs one statement
        in), not on a connection an interrupt left mid-protocol (_after_cancel replaces
        that one)."""
        if not self._broken:
            self._run(sql)

    # ---- the rest of the contract ----------------------------------------------------
    def _catalog_rows(self, sql: str) -> list[Sequence[Any]]:
        cur = self.conn.cursor()
        try:
            cur.execute(sql)
            return [tuple(r) for r in cur.fetchall()]
        finally:
            cur.close()

    def _catalog_queries(self, queries: Sequence[str]) -> list[list[Sequence[Any]]]:
        if not self.options.readonly or self.conn.in_transaction:
            return super()._catalog_queries(queries)
        # a read-only connection has no session timeout: the catalog gets a transaction
        # with the connection's timeout, like every statement
        self._run("BEGIN READ ONLY")
        try:
            self._run(
                "SELECT pg_catalog.set_config('statement_timeout', "
                f"'{self._timeout_ms(self.options.statement_timeout)}', true)"
            )
            return super()._catalog_queries(queries)
        finally:
            self._run_unless_broken("ROLLBACK")

    def _cancel(self) -> None:
        pid = self._running_pid
        if pid is not None:
            self._cancel_pid(pid)

    def _cancel_pid(self, pid: int) -> None:
        """Cancel ``pid``'s statement from a second, short-lived connection."""
        import redshift_connector

        with self._cancel_lock:
            kwargs = dict(self._kwargs)
            kwargs["timeout"] = min(float(kwargs.get("timeout") or 2.0), 2.0)
            conn = _scrubbed(redshift_connector.connect(**revealed(kwargs)))
            try:
                conn.autocommit = True
                cur = conn.cursor()
                cur.execute(f"SELECT pg_cancel_backend({int(pid)})")
                cur.fetchall()
            finally:
                conn.close()

    def _after_cancel(self) -> None:
        if not self._broken and self._usable():
            return
        old, old_pid = self.conn, self.pid
        try:
            self._cancel_pid(old_pid)  # in case the interrupt beat the watcher's cancel
        except Exception:
            pass
        try:
            old.close()
        except Exception:
            pass
        self._open()

    def _usable(self) -> bool:
        try:
            cur = self.conn.cursor()
            cur.execute("SELECT 1")
            rows = [tuple(r) for r in cur.fetchall() or ()]
            cur.close()
            return rows == [(1,)]
        except Exception:
            return False

    def _read_only_scope(self):
        own = self._read_only_statement(
            self._run_unless_broken, self._catalog_rows, timeout=False, release="new"
        )
        return self._read_only_transaction(
            bool(getattr(self.conn, "in_transaction", False)), lambda: own.begin(None), own.end
        )

    def _close(self) -> None:
        self.conn.close()

    def _sqlstate_and_message(self, exc: BaseException) -> tuple[str | None, str, str | None]:
        info = exc.args[0] if exc.args and isinstance(exc.args[0], dict) else None
        if info is not None:
            return info.get("C"), str(info.get("M") or exc), info.get("H")
        if len(exc.args) == 2 and isinstance(exc.args[1], BaseException):  # ('communication error', OSError)
            return None, f"{exc.args[0]}: {exc.args[1]}", None
        return super()._sqlstate_and_message(exc)


def _scrubbed(conn):
    """The driver keeps the password on its connection after authenticating (it needs it
    for nothing later): drop it, so it lives in sqlnb's Secret only."""
    if getattr(conn, "password", None) is not None:
        conn.password = None
    return conn


def _driver_keeps_question_marks(sql: str) -> bool:
    """Whether redshift_connector's own scanner (``convert_paramstyle``: '...' strings with
    '' doubling, "..." names, -- and non-nested /* */ comments, and E'...' read loosely)
    leaves every ``?`` of ``sql`` alone: each one inside a plain '...' string or a "..."
    name, in a text without dollar quotes, E'...' strings or block comments, where the
    driver's reading and the engine's could part."""
    from sqlnb.sql.text import scan

    for tok in scan(sql, "redshift"):
        text = tok.text
        if tok.kind == "comment" and text.startswith("/*"):
            return False
        if tok.kind == "string" and (
            text.startswith("$") or sql[max(tok.start - 1, 0) : tok.start] in ("e", "E", "&")
        ):
            return False
        if "?" in text and not (tok.kind == "ident" or (tok.kind == "string" and text.startswith("'"))):
            return False
    return True


def _is_server_error(exc: BaseException) -> bool:
    """An error the server sent (the protocol is in a known state after it)."""
    return bool(exc.args) and isinstance(exc.args[0], dict) and "C" in exc.args[0]


def _coerce(value: str, annotation: Any) -> Any:
    text = str(annotation)
    low = value.strip().lower()
    if "bool" in text and (low in _TRUE or low in _FALSE):
        return low in _TRUE
    if "int" in text and low.lstrip("-").isdigit():
        return int(low)
    if "List" in text or "list" in text:
        return [v for v in value.split(",") if v]
    return value


def _fix_values(rows: list, oids: Sequence[int]) -> list:
    """Values redshift_connector leaves as text: bytea arrives as '\\x..' hex text."""
    fix = [i for i, o in enumerate(oids) if o in (_BYTEA_OID, NUMERIC_OID)]
    if not fix or not rows:
        return rows
    out = []
    for row in rows:
        row = list(row)
        for i in fix:
            v = row[i]
            if oids[i] == _BYTEA_OID and isinstance(v, str) and v.startswith("\\x"):
                row[i] = bytes.fromhex(v[2:])
            elif oids[i] == NUMERIC_OID and v is not None and not isinstance(v, str):
                row[i] = str(v)
        out.append(row)
    return out
