"""SQLite through the standard library's sqlite3."""

from __future__ import annotations

import contextlib
import sqlite3
from typing import Any

from sqlnb import errors
from sqlnb.adapters.base import Adapter
from sqlnb.adapters.catalog import Catalog, assemble_tables
from sqlnb.adapters.result import Result, ResultColumn, empty_result, fetch_rows, rows_to_arrow
from sqlnb.sql.statement import Statement
from sqlnb.sql.text import scan

# Authorizer actions a read-only session may perform.
_READ_ACTIONS = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    getattr(sqlite3, "SQLITE_RECURSIVE", 33),
}
_READ_PRAGMAS = {
    "table_info",
    "table_xinfo",
    "index_list",
    "index_info",
    "index_xinfo",
    "foreign_key_list",
    "table_list",
    "database_list",
    "collation_list",
    "function_list",
    "pragma_list",
    "compile_options",
    "user_version",
    "schema_version",
    "page_count",
    "page_size",
    "encoding",
}
_OBJECT_PRAGMAS = {"table_info", "table_xinfo", "index_list", "index_info", "index_xinfo", "foreign_key_list"}
_WRITE_FUNCTIONS = {"load_extension", "writefile", "readfile", "edit", "fts3_tokenizer"}


def _read_only_authorizer(action, arg1, arg2, dbname, trigger):
    if action in _READ_ACTIONS:
        if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _WRITE_FUNCTIONS:
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA:
        name = (arg1 or "").lower()
        # an argument names a table or index for these; for the others it sets a value
        if name in _OBJECT_PRAGMAS or (name in _READ_PRAGMAS and arg2 is None):
            return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_UPDATE and arg1 in ("sqlite_master", "sqlite_temp_master"):
        # SQLite re-reads its schema this way inside pragma_foreign_key_list/index_list on
        # some files (seen on Spider's); writing the schema table needs PRAGMA
        # writable_schema, which is denied, and query_only refuses every write anyway
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_TRANSACTION:  # BEGIN/COMMIT of a read transaction
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


class SQLiteAdapter(Adapter):
    scheme = "sqlite"
    dialect = "sqlite"
    extra = ""
    driver_module = "sqlite3"
    display_name = "SQLite"
    native_timeout = False  # enforced by interrupting the connection
    paramstyle = "named"

    def _connect(self) -> None:
        path = self.spec.database
        ro = self.options.readonly
        if path is None:
            target, uri = ":memory:", False
        else:
            import os
            from urllib.parse import quote

            self._require_file_for_readonly(path)
            mode = "ro" if ro else "rwc"
            target, uri = f"file:{quote(os.path.abspath(path))}?mode={mode}", True
        try:
            self.conn = sqlite3.connect(
                target,
                uri=uri,
                timeout=self.options.connect_timeout,
                isolation_level=None,
                check_same_thread=False,
            )
        except sqlite3.OperationalError as exc:
            raise errors.ConnectFailed(
                f"Cannot open SQLite database {path!r}: {exc}",
                hint="check that the directory exists and is readable",
            ) from None
        self.conn.text_factory = str
        if ro:
            # ATTACH of '...?mode=rwc' would create and write another file: allow none.
            self.conn.execute("PRAGMA query_only = ON")  # also covers the temp database
            self.conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
            self.conn.set_authorizer(_read_only_authorizer)

    def _execute(
        self, statement: Statement, params: Any, max_rows: int | None, timeout: float | None
    ) -> Result:
        cur = self.conn.cursor()
        try:
            # sqlite3 runs one statement per execute(): it prepares the first statement and
            # refuses the call, before running anything, when code follows it (a comment or
            # whitespace after the semicolon is fine)
            cur.execute(self._sendable(_one_statement(statement)), params or ())
            if cur.description is None:
                return empty_result(statement, cur.rowcount)
            names = [d[0] for d in cur.description]
            rows, truncated = fetch_rows(cur, max_rows)
        finally:
            cur.close()
        columns = [ResultColumn(n, _type_of(rows, i)) for i, n in enumerate(names)]
        return Result(columns, rows_to_arrow(columns, rows), len(rows), truncated)

    def _load_catalog(self) -> Catalog:
        con = self.conn
        objects = con.execute(
            "SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') "
            "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
        ).fetchall()
        estimates = {}
        has_stat = con.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'").fetchone()
        if has_stat:
            for tbl, stat in con.execute(
                "SELECT tbl, stat FROM sqlite_stat1 WHERE idx IS NULL OR idx = tbl OR stat NOT LIKE '% %'"
            ):
                try:
                    estimates[tbl] = int(str(stat).split()[0])
                except ValueError:
                    pass
        table_rows = [("main", name, kind, estimates.get(name), None) for name, kind in objects]
        cols = con.execute(
            'SELECT m.name, p.name, p.type, p."notnull", p.dflt_value, p.pk '
            "FROM sqlite_master m JOIN pragma_table_info(m.name) p "
            "WHERE m.type IN ('table', 'view') ORDER BY m.name, p.cid"
        ).fetchall()
        column_rows = [
            ("main", t, c, typ or "", not notnull and not pk, dflt, None)
            for t, c, typ, notnull, dflt, pk in cols
        ]
        pks: dict[str, list[tuple[int, str]]] = {}
        for t, c, _typ, _nn, _d, pk in cols:
            if pk:
                pks.setdefault(t, []).append((pk, c))
        constraints = [
            ("main", t, None, "p", [c for _, c in sorted(v)], None, None, []) for t, v in pks.items()
        ]
        fks: dict[tuple[str, int], list] = {}
        for t, fid, _seq, ref, frm, to in con.execute(
            'SELECT m.name, f.id, f.seq, f."table", f."from", f."to" '
            "FROM sqlite_master m JOIN pragma_foreign_key_list(m.name) f "
            "WHERE m.type = 'table' ORDER BY m.name, f.id, f.seq"
        ):
            fks.setdefault((t, fid), []).append((ref, frm, to))
        for (t, fid), parts in fks.items():
            ref = parts[0][0]
            to_cols = [p[2] for p in parts]
            if any(c is None for c in to_cols):  # REFERENCES parent without columns: its PK
                to_cols = [c for _, c in sorted(pks.get(ref, []))] or to_cols
            constraints.append(("main", t, f"fk_{t}_{fid}", "f", [p[1] for p in parts], "main", ref, to_cols))
        idx: dict[tuple[str, str], dict] = {}
        for t, iname, unique, origin, _seqno, cname in con.execute(
            'SELECT m.name, il.name, il."unique", il.origin, ii.seqno, ii.name '
            "FROM sqlite_master m JOIN pragma_index_list(m.name) il "
            "JOIN pragma_index_info(il.name) ii WHERE m.type = 'table' "
            "ORDER BY m.name, il.name, ii.seqno"
        ):
            entry = idx.setdefault((t, iname), {"unique": unique, "origin": origin, "cols": []})
            entry["cols"].append(cname)
        index_rows = []
        for (t, iname), e in idx.items():
            if e["origin"] == "u":
                constraints.append(("main", t, iname, "u", e["cols"], None, None, []))
            index_rows.append(("main", t, iname, e["unique"], e["cols"]))
        tables = assemble_tables(table_rows, column_rows, constraints, index_rows)
        return Catalog(self.dialect, tables, default_schema="main")

    def _cancel(self) -> None:
        self.conn.interrupt()

    @contextlib.contextmanager
    def _read_only_scope(self):
        if self.conn.in_transaction:
            raise self._open_transaction_error()
        self.conn.execute("PRAGMA query_only = ON")
        self.conn.set_authorizer(_read_only_authorizer)
        try:
            yield
        finally:
            self.conn.set_authorizer(None)
            self.conn.execute("PRAGMA query_only = OFF")

    def _close(self) -> None:
        self.conn.close()

    def _classify(self, exc: BaseException) -> errors.SqlnbError | None:
        msg = str(exc)
        low = msg.lower()
        if isinstance(exc, sqlite3.OperationalError) and low == "interrupted":
            return errors.QueryCancelled("Query interrupted")
        if (
            "not authorized" in low
            or "attempt to write a readonly database" in low
            or "too many attached databases" in low
        ):
            return errors.PermissionDenied(f"{msg} (the connection is read-only)")
        if isinstance(exc, sqlite3.ProgrammingError) and "one statement at a time" in low:
            return errors.UsageError(
                "SQLite reads more than one statement in this text; sqlnb sends one "
                "statement per call, so none of them ran",
                engine_message=msg,
                hint="run the statements one at a time (a %%sql cell splits a cell into statements)",
            )
        if "unable to open database" in low:
            return errors.ConnectFailed(msg)
        if "datatype mismatch" in low:
            return errors.TypeMismatch(msg)
        return None


def _one_statement(statement: Statement) -> Statement:
    """The text to send for ``statement``: itself, unless only empty statements follow its
    last token (``SELECT 1;;``), which sqlite3 refuses as a second statement; then the
    statement embedded unchanged without that tail (:meth:`Statement.wrap`, checked by
    the guard again when the statement was checked).  Anything else after it is sent as
    written, for sqlite3 to refuse."""
    end = len(statement.body())
    extra = sum(
        1 for tok in scan(statement, statement.dialect) if tok.kind == "semicolon" and tok.start >= end
    )
    return statement.wrap("") if extra > 1 else statement


_PY_TYPES = {int: "integer", float: "real", str: "text", bytes: "blob", bool: "integer"}


def _type_of(rows: list[tuple], i: int) -> str:
    for row in rows:
        v = row[i]
        if v is not None:
            return _PY_TYPES.get(type(v), type(v).__name__)
    return "null"
