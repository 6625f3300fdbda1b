"""Snowflake through snowflake-connector-python (tested locally against fakesnow).

- Results: Arrow straight from the connector (``fetch_arrow_all``) when the cursor offers
  it, else ``fetch_pandas_all`` (what the fakesnow stand-in offers), else ``fetchall``;
  every path is cast to the types the column metadata (``cursor.description``) calls for,
  so the DataFrames agree.  A row cap (``max_rows``) uses ``fetchmany``.
- Statement timeout: ``STATEMENT_TIMEOUT_IN_SECONDS`` as a per-statement parameter (server
  side), plus the connector's own client-side ``timeout`` a second later as a backstop.
- Cancel: ``SYSTEM$CANCEL_ALL_QUERIES(<session id>)`` from a second cursor of the same
  connection (the adapter runs one statement at a time); Ctrl-C also reaches the
  connector's own SIGINT handler, which aborts the request.  (fakesnow has neither: there
  the DuckDB connection under it is interrupted.)
- Read-only: Snowflake has no read-only session.  The guard runs first; the second layer is
  the role: connect with ``?role=<a role with only SELECT/USAGE grants>``.  sqlnb cannot
  check what a role may do.  (The fakesnow stand-in has no roles; for it each statement on a
  read-only connection runs in a read-only DuckDB transaction instead — see
  :meth:`SnowflakeAdapter._standin_read_only`.)
- One statement per call: every statement goes with ``MULTI_STATEMENT_COUNT = 1``, so the
  service refuses a text of several statements (sqlnb never sets it higher); sqlnb's own
  splitter refuses such a text before sending too, which is all the fakesnow stand-in has
  (it runs every statement it is given).
- Parameters: the connector interpolates ``%(name)s`` values into the text on the client
  (paramstyle ``pyformat``), after any check.  A guarded statement's values therefore go
  into the text before the guard reads it, as the literals the connector itself writes
  (:func:`_literal`), and the connector sends that text unchanged.
- Unquoted identifiers fold to upper case: catalog names come back as CUSTOMERS, ID, ...
"""

from __future__ import annotations

import contextlib
import logging
import math
import re
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from sqlnb import errors
from sqlnb.adapters.base import Adapter
from sqlnb.adapters.catalog import Catalog, assemble_tables
from sqlnb.adapters.result import (
    Result,
    ResultColumn,
    array_of_type,
    conform_arrow,
    empty_result,
    fetch_rows,
    rows_to_arrow,
)
from sqlnb.sql.statement import Statement
from sqlnb.sql.text import scan, split_statements

log = logging.getLogger(__name__)

# snowflake.connector.constants.FIELD_TYPES order
_FIXED, _REAL, _TEXT, _DATE, _TIMESTAMP, _VARIANT, _TIMESTAMP_LTZ, _TIMESTAMP_TZ = range(8)
_TIMESTAMP_NTZ, _OBJECT, _ARRAY, _BINARY, _TIME, _BOOLEAN, _GEOGRAPHY, _GEOMETRY = range(8, 16)

_TYPE_NAMES = {
    _REAL: "float",
    _TEXT: "varchar",
    _DATE: "date",
    _TIMESTAMP: "timestamp",
    _VARIANT: "variant",
    _TIMESTAMP_LTZ: "timestamp_ltz",
    _TIMESTAMP_TZ: "timestamp_tz",
    _TIMESTAMP_NTZ: "timestamp_ntz",
    _OBJECT: "object",
    _ARRAY: "array",
    _BINARY: "binary",
    _TIME: "time",
    _BOOLEAN: "boolean",
    _GEOGRAPHY: "geography",
    _GEOMETRY: "geometry",
}
_ARROW_TYPES = {
    _REAL: pa.float64(),
    _TEXT: pa.string(),
    _DATE: pa.date32(),
    _TIMESTAMP: pa.timestamp("us"),
    _TIMESTAMP_NTZ: pa.timestamp("us"),
    _TIMESTAMP_LTZ: pa.timestamp("us", tz="UTC"),
    _TIMESTAMP_TZ: pa.timestamp("us", tz="UTC"),
    _VARIANT: pa.string(),
    _OBJECT: pa.string(),
    _ARRAY: pa.string(),
    _BINARY: pa.binary(),
    _TIME: pa.time64("us"),
    _BOOLEAN: pa.bool_(),
    _GEOGRAPHY: pa.string(),
    _GEOMETRY: pa.string(),
}

_DML = {"INSERT", "UPDATE", "DELETE", "MERGE"}

_ERRNO_CLASSES: dict[int, type[errors.SqlnbError]] = {
    2003: errors.TableNotFound,  # "Object 'X' does not exist or not authorized."
    904: errors.ColumnNotFound,  # "invalid identifier 'X'"
    1003: errors.SQLSyntaxError,
    1002: errors.SQLSyntaxError,
    1007: errors.SQLSyntaxError,
    100035: errors.TypeMismatch,
    100037: errors.TypeMismatch,
    100038: errors.TypeMismatch,
    100040: errors.TypeMismatch,
    100071: errors.TypeMismatch,
    2262: errors.TypeMismatch,
    3001: errors.PermissionDenied,
    3003: errors.PermissionDenied,
    3041: errors.PermissionDenied,
    630: errors.QueryTimeout,  # "Statement reached its statement or warehouse timeout"
    604: errors.QueryCancelled,  # "SQL execution canceled"
    390100: errors.AuthenticationFailed,
    390144: errors.AuthenticationFailed,
    390111: errors.ConnectionLost,
    390114: errors.ConnectionLost,
    250003: errors.ConnectFailed,
    251005: errors.ConnectFailed,
    251006: errors.ConnectFailed,
}

_CONNECT_PARAMS = (
    "authenticator",
    "host",
    "port",
    "protocol",
    "region",
    "private_key_file",
    "private_key_file_pwd",
    "token",
    "passcode",
    "client_session_keep_alive",
    "ocsp_fail_open",
    "timezone",
)


def _first_word(sql: str) -> str:
    for tok in scan(sql, "snowflake"):
        if tok.kind in ("comment", "semicolon"):
            continue
        if tok.kind != "code":
            return ""
        m = re.match(r"\s*([A-Za-z_]+)", tok.text)
        if m:
            return m.group(1).upper()
        if tok.text.strip():
            return ""
    return ""


def _type_name(d) -> str:
    code = d.type_code
    if code == _FIXED:
        if d.precision is not None and d.scale is not None:
            return f"number({d.precision},{d.scale})"
        return "number"
    name = _TYPE_NAMES.get(code)
    if name is None:
        from snowflake.connector.constants import FIELD_ID_TO_NAME

        name = (FIELD_ID_TO_NAME.get(code) or f"type{code}").lower()
    return name


def _arrow_type(d) -> pa.DataType | None:
    if d.type_code == _FIXED:
        scale = d.scale or 0
        return pa.int64() if scale == 0 else pa.decimal128(38, min(scale, 37))
    return _ARROW_TYPES.get(d.type_code)


class SnowflakeAdapter(Adapter):
    scheme = "snowflake"
    dialect = "snowflake"
    extra = "snowflake"
    driver_module = "snowflake.connector"
    display_name = "Snowflake"
    native_timeout = True  # STATEMENT_TIMEOUT_IN_SECONDS and the connector's timeout
    paramstyle = "pyformat"
    identity_params = ("warehouse", "role")

    # ---- connecting -------------------------------------------------------------
    def _connect(self) -> None:
        import snowflake.connector  # look connect up at call time (fakesnow patches it)

        spec, params = self.spec, self.spec.params
        kwargs: dict[str, Any] = {
            "user": spec.user,
            "password": spec.password.reveal() if spec.password else None,
            "account": spec.host,
            "database": spec.database,
            "schema": spec.path[0] if spec.path else None,
            "warehouse": params.get("warehouse"),
            "role": params.get("role"),
            "login_timeout": max(1, math.ceil(self.options.connect_timeout or 10)),
            "autocommit": True,
            "paramstyle": self.paramstyle,
        }
        for key in _CONNECT_PARAMS:
            if key in params:
                kwargs[key] = params[key]
        kwargs = {k: v for k, v in kwargs.items() if v is not None}
        self.conn = snowflake.connector.connect(**kwargs)
        self._running = None  # the cursor of the statement in flight
        self.last_path: str | None = None  # how the last result came: "arrow", "pandas", "rows"

    @property
    def _duck(self):
        """The DuckDB connection under the fakesnow stand-in (None on real Snowflake)."""
        return getattr(self.conn, "_duck_conn", None)

    @contextlib.contextmanager
    def _standin_read_only(self) -> Iterator[None]:
        """fakesnow has no roles, so a read-only connection's second layer there is a
        read-only DuckDB transaction around each statement (DuckDB refuses every write in
        it).  On real Snowflake that layer is the role given with ``?role=``."""
        duck = self._duck if self.read_only_now else None
        if duck is None:
            yield
            return
        duck.execute("BEGIN TRANSACTION READ ONLY")
        try:
            yield
        finally:
            try:
                duck.execute("ROLLBACK")
            except Exception:
                pass

    # ---- executing --------------------------------------------------------------
    # the connector interpolates %(name)s values on the client: a guarded statement's
    # values go into the checked text as the literals the connector writes (with no values
    # it sends a text unchanged: no % is interpolated)
    interpolates_parameters = True

    def _literal(self, value: Any) -> str:
        return _literal(value)

    def _execute(
        self, statement: Statement, bound: Any, max_rows: int | None, timeout: float | None
    ) -> Result:
        sql = statement
        # One statement per call.  The service refuses a text of several statements unless
        # MULTI_STATEMENT_COUNT allows them: it goes with every statement, always 1.  The
        # count below refuses such a text before it is sent; fakesnow runs every statement
        # it is given, so there it is the only layer, and on Snowflake the service's own
        # refusal is the second one (its parser, not sqlnb's splitter, has the last word).
        count = len(split_statements(statement, self.dialect))
        if count > 1:
            raise self._several_statements(count, "sqlnb")
        statement_params: dict[str, Any] = {"MULTI_STATEMENT_COUNT": 1}
        kwargs: dict[str, Any] = {"_statement_params": statement_params}
        if timeout:
            seconds = max(1, math.ceil(timeout))
            statement_params["STATEMENT_TIMEOUT_IN_SECONDS"] = seconds
            kwargs["timeout"] = seconds + 1  # the connector aborts it client-side if need be
        cur = self.conn.cursor()
        self._running = cur
        try:
            with self._standin_read_only():
                cur.execute(self._sendable(statement), bound, **kwargs)
            description = cur.description  # fakesnow re-describes on every access: once
            self.last_path = "rows"
            if not description:
                return empty_result(sql, _rowcount(cur))
            if _first_word(sql) in _DML:  # Snowflake answers DML with a row of counts
                return empty_result(sql, _rowcount(cur))
            names = [d.name for d in description]
            types = [_arrow_type(d) for d in description]
            columns = [ResultColumn(d.name, _type_name(d)) for d in description]
            if max_rows is None:
                if getattr(self.options, "arrow", True):
                    table = self._fetch_arrow(cur, types, names)
                    if table is not None:
                        return Result(columns, table, table.num_rows, False)
                    self.last_path = "rows"
                rows, truncated = cur.fetchall(), False
            else:
                rows, truncated = fetch_rows(cur, int(max_rows))
            return Result(columns, rows_to_arrow(columns, rows, types), len(rows), truncated)
        finally:
            self._running = None
            try:
                cur.close()
            except Exception:
                pass

    def _fetch_arrow(self, cur, types: list, names: list[str]) -> pa.Table | None:
        """All rows as Arrow without Python objects per value, when the cursor can."""
        from snowflake.connector.errors import NotSupportedError

        unavailable = (AttributeError, NotSupportedError, NotImplementedError)
        table = None
        fetch_arrow = getattr(cur, "fetch_arrow_all", None)
        if fetch_arrow is not None:
            try:
                try:
                    table = fetch_arrow(force_return_table=True, force_microsecond_precision=True)
                except TypeError:  # an older connector without those keywords
                    table = fetch_arrow()
                self.last_path = "arrow"
            except unavailable as exc:
                log.debug("fetch_arrow_all unavailable: %s", exc)
                table = None
        if table is None:
            fetch_pandas = getattr(cur, "fetch_pandas_all", None)
            if fetch_pandas is None:
                return None
            try:
                df = fetch_pandas()
            except unavailable as exc:
                log.debug("fetch_pandas_all unavailable: %s", exc)
                return None
            if df is None or len(df.columns) != len(names):
                return None
            if _lossy_integers(df, types):
                # read the rows instead where the cursor still has them (fakesnow does)
                rows = cur.fetchall()
                if len(rows) == len(df):
                    self.last_path = "rows"
                    columns = [ResultColumn(n, "") for n in names]
                    return rows_to_arrow(columns, rows, types)
            table = pa.Table.from_arrays(
                [_series_to_arrow(df.iloc[:, i], typ) for i, typ in enumerate(types)],
                names=[str(i) for i in range(len(names))],
            )
            self.last_path = "pandas"
        if table.num_columns != len(names):
            return None
        return conform_arrow(table, types, names, strict=False)

    # ---- catalog ----------------------------------------------------------------
    def _load_catalog(self) -> Catalog:
        cur = self.conn.cursor()
        try:
            cur.execute("SELECT CURRENT_DATABASE(), CURRENT_SCHEMA()")
            database, current_schema = cur.fetchone()
            where = "table_catalog = CURRENT_DATABASE() AND table_schema <> 'INFORMATION_SCHEMA'"
            cur.execute(
                "SELECT table_schema, table_name, table_type, row_count, comment "
                f"FROM information_schema.tables WHERE {where}"
            )
            table_rows, seen = [], set()
            for schema, name, ttype, nrows, comment in cur.fetchall():
                kind = "view" if "VIEW" in str(ttype).upper() else "table"
                table_rows.append((schema, name, kind, nrows, comment))
                seen.add((schema, name))
            # fakesnow lists views only here; real Snowflake lists them in both
            cur.execute(
                f"SELECT table_schema, table_name, comment FROM information_schema.views WHERE {where}"
            )
            for schema, name, comment in cur.fetchall():
                if (schema, name) not in seen:
                    table_rows.append((schema, name, "view", None, comment))
            cur.execute(
                "SELECT table_schema, table_name, column_name, data_type, numeric_precision, "
                "numeric_scale, character_maximum_length, is_nullable, column_default, comment "
                f"FROM information_schema.columns WHERE {where} "
                "ORDER BY table_schema, table_name, ordinal_position"
            )
            column_rows = [
                (s, t, c, _column_type(dt, p, sc, ln), nullable, default, comment)
                for s, t, c, dt, p, sc, ln, nullable, default, comment in cur.fetchall()
            ]
            constraint_rows = self._constraints(cur, database)
        finally:
            cur.close()
        tables = assemble_tables(table_rows, column_rows, constraint_rows)
        return Catalog(self.dialect, tables, default_schema=current_schema)

    def _constraints(self, cur, database: str) -> list:
        """Keys from the standard views where the engine has them (fakesnow: DuckDB's),
        else from SHOW ... KEYS (Snowflake has no KEY_COLUMN_USAGE view)."""
        try:
            cur.execute(
                "SELECT tc.table_schema, tc.table_name, tc.constraint_name, tc.constraint_type, "
                "k.column_name, k.ordinal_position, rc.unique_constraint_schema, rc.unique_constraint_name "
                "FROM information_schema.table_constraints tc "
                "JOIN information_schema.key_column_usage k ON k.constraint_catalog = tc.constraint_catalog "
                "  AND k.constraint_schema = tc.constraint_schema AND k.constraint_name = tc.constraint_name "
                "LEFT JOIN information_schema.referential_constraints rc "
                "  ON rc.constraint_catalog = tc.constraint_catalog "
                "  AND rc.constraint_schema = tc.constraint_schema AND rc.constraint_name = tc.constraint_name "
                "WHERE tc.table_catalog = CURRENT_DATABASE() "
                "AND tc.constraint_type IN ('PRIMARY KEY', 'UNIQUE', 'FOREIGN KEY') "
                "ORDER BY 1, 2, 3, 6"
            )
            rows = cur.fetchall()
        except Exception as exc:
            log.debug("no key_column_usage view (%s): using SHOW ... KEYS", exc)
            return self._constraints_from_show(cur, database)
        by_name: dict[tuple, dict] = {}
        for schema, table, cname, ctype, col, _pos, ref_schema, ref_name in rows:
            e = by_name.setdefault(
                (schema, cname),
                {"schema": schema, "table": table, "kind": ctype, "cols": [], "ref": (ref_schema, ref_name)},
            )
            e["cols"].append(col)
        out = []
        for (_schema, name), e in by_name.items():
            kind = {"PRIMARY KEY": "p", "UNIQUE": "u", "FOREIGN KEY": "f"}[e["kind"]]
            ref_schema = ref_table = None
            ref_cols: list[str] = []
            if kind == "f":
                target = by_name.get(e["ref"])
                if target is None:
                    continue
                ref_schema, ref_table, ref_cols = target["schema"], target["table"], target["cols"]
            out.append((e["schema"], e["table"], name, kind, e["cols"], ref_schema, ref_table, ref_cols))
        return out

    def _constraints_from_show(self, cur, database: str) -> list:
        from sqlnb.sql.quoting import quote_identifier

        db = quote_identifier(database, "snowflake")
        out = []
        for kind, what in (("p", "PRIMARY"), ("u", "UNIQUE"), ("f", "IMPORTED")):
            try:
                cur.execute(f"SHOW {what} KEYS IN DATABASE {db}")
            except Exception as exc:
                log.debug("SHOW %s KEYS failed: %s", what, exc)
                continue
            names = [d.name.lower() for d in cur.description]
            keys: dict[tuple, dict] = {}
            for row in cur.fetchall():
                r = dict(zip(names, row, strict=True))
                if kind == "f":
                    key = (r.get("fk_schema_name"), r.get("fk_table_name"), r.get("fk_name"))
                    e = keys.setdefault(
                        key,
                        {
                            "cols": [],
                            "ref": (r.get("pk_schema_name"), r.get("pk_table_name")),
                            "ref_cols": [],
                        },
                    )
                    e["cols"].append((r.get("key_sequence"), r.get("fk_column_name")))
                    e["ref_cols"].append((r.get("key_sequence"), r.get("pk_column_name")))
                else:
                    key = (r.get("schema_name"), r.get("table_name"), r.get("constraint_name"))
                    e = keys.setdefault(key, {"cols": [], "ref": (None, None), "ref_cols": []})
                    e["cols"].append((r.get("key_sequence"), r.get("column_name")))
            for (schema, table, cname), e in keys.items():
                cols = [c for _, c in sorted(e["cols"], key=lambda x: int(x[0] or 0))]
                ref_cols = [c for _, c in sorted(e["ref_cols"], key=lambda x: int(x[0] or 0))]
                out.append((schema, table, cname, kind, cols, e["ref"][0], e["ref"][1], ref_cols))
        return out

    # ---- cancelling -------------------------------------------------------------
    def _cancel(self) -> None:
        if self._running is None:
            return
        session_id = getattr(self.conn, "session_id", None)
        if session_id is None:
            # the fakesnow stand-in has no SYSTEM$CANCEL_*; its DuckDB plays the server
            duck = self._duck
            if duck is not None:
                duck.interrupt()
            return
        cur = self.conn.cursor()
        try:
            cur.execute("SELECT SYSTEM$CANCEL_ALL_QUERIES(%s)", (int(session_id),))
        finally:
            cur.close()

    def _read_only_scope(self):
        # Snowflake has no read-only transaction or session: on real Snowflake the second
        # layer is a SELECT-only role (?role=...); the fakesnow stand-in gets a read-only
        # DuckDB transaction around the statement (_standin_read_only, via read_only_now).
        return contextlib.nullcontext()

    def _close(self) -> None:
        self.conn.close()

    # ---- errors -----------------------------------------------------------------
    def _classify(self, exc: BaseException) -> errors.SqlnbError | None:
        errno = getattr(exc, "errno", None)
        msg = getattr(exc, "raw_msg", None) or getattr(exc, "msg", None) or str(exc)
        msg = self._scrub(" ".join(str(msg).split()))
        low = msg.lower()
        if errno == 604 and "timeout" in low:
            return errors.QueryTimeout(msg)
        if "incorrect username or password" in low:
            return errors.AuthenticationFailed(msg)
        if "invalid identifier" in low or re.search(r"referenced column .* not found", low):
            return errors.ColumnNotFound(msg)  # Snowflake's / the DuckDB stand-in's words
        if errno == 2003 and "does not exist" not in low:
            return None
        cls = _ERRNO_CLASSES.get(errno) if isinstance(errno, int) else None
        if cls is not None:
            return cls(msg)
        if errno == 250001:  # "Failed to connect to DB ..."
            return errors.ConnectFailed(msg)
        return None


def _literal(value: Any) -> str:
    """``value`` as the SQL literal the connector writes when it interpolates a
    ``%(name)s`` parameter (``SnowflakeConverter``: to_snowflake, escape, quote), so a
    statement means the same with the guard and without it: text in single quotes with
    backslash escapes (Snowflake's string syntax), dates and times as quoted text, bytes as
    ``X'...'``, a list or tuple as its literals joined by commas (for ``IN (:ids)``)."""
    import datetime as dt
    import decimal

    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise errors.UsageError(
                f"The parameter value {value!r} has no SQL literal",
                hint="pass a finite number, or None for NULL",
            )
        return repr(value)
    if isinstance(value, (list, tuple)):
        return ",".join(_literal(v) for v in value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "X'" + bytes(value).hex().upper() + "'"
    if isinstance(value, decimal.Decimal):
        text = str(value)
    elif isinstance(value, dt.datetime):
        text = value.isoformat(sep=" ", timespec="microseconds" if value.microsecond else "seconds")
    elif isinstance(value, (dt.date, dt.time)):
        text = value.isoformat()
    elif isinstance(value, dt.timedelta):
        hours, rest = divmod(value.days * 86400 + value.seconds, 3600)
        text = f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}" + (
            f".{value.microseconds:06d}" if value.microseconds else ""
        )
    elif isinstance(value, str):
        text = value
    else:
        raise errors.UsageError(
            f"A parameter of type {type(value).__name__} cannot be sent in a read-only Snowflake statement",
            hint="pass a number, text, bytes, a date or a time, or None",
        )
    return (
        "'" + (text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("'", "\\'")) + "'"
    )


def _series_to_arrow(series, typ: pa.DataType | None) -> pa.Array:
    """One DataFrame column back to Arrow, straight into its canonical type when it fits
    (about 3x faster than letting pyarrow infer Decimal and str objects)."""
    arr = None if typ is None else array_of_type(series, typ, from_pandas=True)
    return arr if arr is not None else pa.array(series, from_pandas=True)


def _lossy_integers(df, types: list) -> bool:
    """pandas turns an integer column with NULLs into float64: beyond 2**53 that loses
    digits, which the plain path would not."""
    import numpy as np

    for i, typ in enumerate(types):
        if typ == pa.int64():
            col = df.iloc[:, i]
            if col.dtype.kind == "f":
                values = col.to_numpy()
                if np.nanmax(np.abs(values), initial=0) >= 2**53:
                    return True
    return False


def _rowcount(cur) -> int:
    n = getattr(cur, "rowcount", None)
    return -1 if n is None else int(n)


def _column_type(data_type, precision, scale, length) -> str:
    dt = str(data_type).lower()
    if dt == "number" and precision is not None:
        return f"number({precision},{scale or 0})"
    if dt == "text":
        return f"varchar({length})" if length else "varchar"
    return dt
