"""DuckDB through the duckdb package; results come out as Arrow natively."""

from __future__ import annotations

import contextlib
from typing import Any, Mapping

import duckdb

from sqlnb import errors
from sqlnb.adapters.base import (Adapter, Catalog, Result, ResultColumn, assemble_tables,
                                 empty_result, normalize_arrow)
from sqlnb.sql.statement import Statement


class DuckDBAdapter(Adapter):
    scheme = "duckdb"
    dialect = "duckdb"
    extra = ""
    driver_module = "duckdb"
    display_name = "DuckDB"
    native_timeout = False  # enforced by interrupting the connection
    paramstyle = "dollar_named"

    def _connect(self) -> None:
        path = self.spec.database
        config: dict[str, Any] = {}
        ro = self.options.readonly
        if ro:
            # read_only alone still lets TEMP tables and COPY ... TO write files
            config.update(enable_external_access=False, lock_configuration=True)
        if path is None:
            self.conn = duckdb.connect(":memory:", config=config)
            return
        self._require_file_for_readonly(path)
        try:
            self.conn = duckdb.connect(path, read_only=ro, config=config)
        except duckdb.Error as exc:
            raise self._open_error(path, exc) from None

    def _open_error(self, path: str, exc: Exception) -> errors.SqlnbError:
        msg = str(exc)
        if "different configuration" in msg:
            return errors.ConfigurationError(
                f"DuckDB file {path!r} is already open in this kernel with other settings "
                "(read-only vs read-write)",
                hint="close the other connection first (%sqlnb close NAME) or open it the same way",
                engine_message=msg)
        if "lock" in msg.lower():
            return errors.ConnectFailed(
                f"DuckDB file {path!r} is locked by another process",
                hint="another notebook or program has it open for writing; close it, or open "
                     "this one with --readonly if the other is read-only too",
                engine_message=msg)
        return errors.ConnectFailed(f"Cannot open DuckDB database {path!r}: {msg}", engine_message=msg)

    def _execute(self, statement: Statement, params: Any, max_rows: int | None,
                 timeout: float | None) -> Result:
        kind = _statement_kind(statement)
        sql = self._sendable(statement)
        rel = self.conn.sql(sql, params=params) if params else self.conn.sql(sql)
        if rel is None:
            return empty_result(statement)
        if kind == "dml":
            rows = rel.fetchall()
            return empty_result(statement, int(rows[0][0]) if rows and rows[0] else -1)
        if kind == "command":
            rel.fetchall()
            return empty_result(statement)
        names, types = rel.columns, [str(t).lower() for t in rel.types]
        if max_rows is not None:
            table = rel.limit(max_rows + 1).to_arrow_table()
            truncated = table.num_rows > max_rows
            if truncated:
                table = table.slice(0, max_rows)
        else:
            table, truncated = rel.to_arrow_table(), False
        table = normalize_arrow(table)
        columns = [ResultColumn(n, t) for n, t in zip(names, types)]
        return Result(columns, table, table.num_rows, truncated)

    def _load_catalog(self) -> Catalog:
        q = self.conn.execute
        db = q("SELECT current_database(), current_schema()").fetchone()
        database, schema = db[0], db[1]
        tables = q(
            "SELECT schema_name, table_name, 'table', estimated_size, comment FROM duckdb_tables() "
            "WHERE database_name = $db AND NOT internal AND NOT temporary "
            "UNION ALL SELECT schema_name, view_name, 'view', NULL, comment FROM duckdb_views() "
            "WHERE database_name = $db AND NOT internal AND NOT temporary "
            "ORDER BY 1, 2", {"db": database}).fetchall()
        columns = q(
            "SELECT schema_name, table_name, column_name, data_type, is_nullable, column_default, "
            "comment FROM duckdb_columns() WHERE database_name = $db AND NOT internal "
            "ORDER BY schema_name, table_name, column_index", {"db": database}).fetchall()
        constraints = []
        for sch, tbl, ctype, cols, ref_table, ref_cols, name in q(
                "SELECT schema_name, table_name, constraint_type, constraint_column_names, "
                "referenced_table, referenced_column_names, constraint_name FROM duckdb_constraints() "
                "WHERE database_name = $db AND constraint_type IN ('PRIMARY KEY', 'UNIQUE', 'FOREIGN KEY')",
                {"db": database}).fetchall():
            kind = {"PRIMARY KEY": "p", "UNIQUE": "u", "FOREIGN KEY": "f"}[ctype]
            constraints.append((sch, tbl, name, kind, cols, sch if kind == "f" else None,
                                ref_table, ref_cols or []))
        indexes = []
        for sch, tbl, name, unique, expressions in q(
                "SELECT schema_name, table_name, index_name, is_unique, expressions FROM duckdb_indexes() "
                "WHERE database_name = $db", {"db": database}).fetchall():
            indexes.append((sch, tbl, name, unique, _index_columns(expressions)))
        return Catalog(self.dialect, assemble_tables(tables, columns, constraints, indexes),
                       default_schema=schema)

    def _cancel(self) -> None:
        self.conn.interrupt()

    @contextlib.contextmanager
    def _read_only_scope(self):
        # A duplicate connection to the same database (its own transaction context, so an
        # open transaction of the user's is left alone) in a read-only transaction, which
        # DuckDB keeps from every write, TEMP tables included.  Cancel reaches it too,
        # since it stands in self.conn while the statement runs.
        main, ro = self.conn, self.conn.cursor()
        try:
            ro.execute("BEGIN TRANSACTION READ ONLY")
            self.conn = ro
            yield
        finally:
            self.conn = main
            try:
                ro.close()  # ends (rolls back) the read-only transaction
            except duckdb.Error:
                pass

    def _close(self) -> None:
        self.conn.close()

    def _classify(self, exc: BaseException) -> errors.SqlnbError | None:
        msg = str(exc)
        if isinstance(exc, duckdb.InterruptException) or "interrupted" in msg.lower():
            return errors.QueryCancelled("Query interrupted")
        if isinstance(exc, duckdb.CatalogException):
            low = msg.lower()
            if "table" in low and ("does not exist" in low or "not exist" in low):
                return errors.TableNotFound(msg)
            return errors.DatabaseError(msg)
        if isinstance(exc, duckdb.BinderException):
            if "column" in msg.lower():
                return errors.ColumnNotFound(msg)
            return errors.TypeMismatch(msg) if "type" in msg.lower() else errors.DatabaseError(msg)
        if isinstance(exc, duckdb.ParserException):
            return errors.SQLSyntaxError(msg)
        if isinstance(exc, (duckdb.ConversionException, duckdb.TypeMismatchException)):
            return errors.TypeMismatch(msg)
        if isinstance(exc, duckdb.PermissionException) or "read-only" in msg.lower() \
                or "read only" in msg.lower():
            return errors.PermissionDenied(msg)
        return None


def _index_columns(expressions: Any) -> list[str]:
    if isinstance(expressions, (list, tuple)):
        return [str(e).strip('"') for e in expressions]
    text = str(expressions or "").strip("[]")
    return [p.strip().strip('"') for p in text.split(",") if p.strip()]


def _statement_kind(sql: str) -> str:
    """'dml' (affected-row count), 'command' (no rows) or 'rows'; 'rows' when unsure."""
    import logging

    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import SqlglotError

    log = logging.getLogger("sqlglot")
    level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except (SqlglotError, ValueError):
        return "rows"
    finally:
        log.setLevel(level)
    if isinstance(tree, (exp.Insert, exp.Update, exp.Delete, exp.Merge)):
        return "rows" if tree.args.get("returning") else "dml"
    if isinstance(tree, (exp.Create, exp.Drop, exp.Alter, exp.Set, exp.Attach, exp.Detach,
                         exp.Transaction, exp.Commit, exp.Rollback, exp.Use, exp.Copy,
                         exp.TruncateTable)):
        return "command"
    return "rows"
