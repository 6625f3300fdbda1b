"""PostgreSQL through psycopg 3, with an Arrow fast path through adbc-driver-postgresql.

What is sent is the statement as written (see :mod:`sqlnb.sql.statement`): psycopg's
RawCursor takes the text as it is (``$n`` placeholders), always over the extended query
protocol, which runs one statement per call; the ADBC path and the zero-row describe get
the same text, embedded on lines of its own or parsed by the server without running.

Two connections per adapter, both in autocommit mode:

- the **psycopg** connection runs everything: statements with parameters, statements that
  write or change the session, ``max_rows``-capped queries, and the catalog;
- the **ADBC** connection (opened lazily, on the first query that can use it) fetches the
  results of plain read-only queries straight into Arrow, which is several times faster
  for large results.  A query takes it only when all of these hold: it is a single
  read-only query per :func:`sqlnb.sql.guard.check_read_only`; it has no ``:name``
  parameters (ADBC binds text parameters as ``text`` where psycopg lets the server infer
  the type, so the two would not always agree: parameterised queries use psycopg); no
  ``max_rows`` cap below :attr:`PostgresAdapter.fast_path_min_rows` is asked (above it the
  record batches are streamed and the query is cancelled after ``max_rows + 1`` rows);
  and nothing run on the psycopg connection left session state the ADBC connection would
  lack (a SET, a temp table, an explicit BEGIN, a PREPARE, ... switch the fast path off
  for the rest of the adapter's life).  A result with a column type the fast path does not
  convert identically (arrays, intervals, ranges, enums, ...) is cancelled and re-run on
  psycopg.

Both paths give the same Arrow types (``tests/test_postgres.py`` checks the DataFrames are
equal): integers int64 and floats float64 (base's canonical widths), numeric a decimal (the
declared precision and scale, else ``decimal128(38, s)`` with the data's largest scale;
NaN/Infinity keep PostgreSQL's text), json/jsonb/uuid their text (psycopg loads them as
text), timestamps microseconds (UTC for ``timestamptz``).  ``ConnectOptions.arrow=False``
switches the fast path off.

Sessions: on a read-write connection the statement timeout is set with ``SET`` right after
connecting (startup ``options`` are refused by PgBouncer), on both connections.  On a
read-only connection nothing is set for the session: every statement runs in its own
``BEGIN READ ONLY`` with ``SET LOCAL statement_timeout`` and a savepoint, and is rolled
back after it once the session-level advisory locks it may have taken are released (see
:meth:`PgFamilyAdapter._read_only_statement`).  Session settings do not survive a pooler in
transaction mode (each transaction may run on another server session, and a session SET
leaks into other clients' sessions there), and a function calling
``set_config('default_transaction_read_only', 'off', false)`` would switch a session
setting off for every later statement.
"""

from __future__ import annotations

import functools
import math
import operator
import re
from collections.abc import Sequence
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.compute as pc

from sqlnb import errors
from sqlnb.adapters.base import Adapter
from sqlnb.adapters.catalog import Catalog, assemble_tables
from sqlnb.adapters.result import Result, ResultColumn, conform_arrow, empty_result, fetch_rows, rows_to_arrow
from sqlnb.adapters.spec import revealed
from sqlnb.sql.statement import Statement
from sqlnb.sql.text import strip_comments

# ---------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------

# oid: (typname, format_type(oid, NULL)) for the built-in types results usually carry.
BUILTIN_TYPES: dict[int, tuple[str, str]] = {
    16: ("bool", "boolean"),
    17: ("bytea", "bytea"),
    18: ("char", '"char"'),
    19: ("name", "name"),
    20: ("int8", "bigint"),
    21: ("int2", "smallint"),
    23: ("int4", "integer"),
    24: ("regproc", "regproc"),
    25: ("text", "text"),
    26: ("oid", "oid"),
    28: ("xid", "xid"),
    114: ("json", "json"),
    142: ("xml", "xml"),
    650: ("cidr", "cidr"),
    700: ("float4", "real"),
    701: ("float8", "double precision"),
    790: ("money", "money"),
    829: ("macaddr", "macaddr"),
    869: ("inet", "inet"),
    1000: ("_bool", "boolean[]"),
    1005: ("_int2", "smallint[]"),
    1007: ("_int4", "integer[]"),
    1009: ("_text", "text[]"),
    1015: ("_varchar", "character varying[]"),
    1016: ("_int8", "bigint[]"),
    1021: ("_float4", "real[]"),
    1022: ("_float8", "double precision[]"),
    1042: ("bpchar", "character"),
    1043: ("varchar", "character varying"),
    1082: ("date", "date"),
    1083: ("time", "time without time zone"),
    1114: ("timestamp", "timestamp without time zone"),
    1115: ("_timestamp", "timestamp without time zone[]"),
    1182: ("_date", "date[]"),
    1184: ("timestamptz", "timestamp with time zone"),
    1185: ("_timestamptz", "timestamp with time zone[]"),
    1186: ("interval", "interval"),
    1231: ("_numeric", "numeric[]"),
    1266: ("timetz", "time with time zone"),
    1560: ("bit", "bit"),
    1562: ("varbit", "bit varying"),
    1700: ("numeric", "numeric"),
    2205: ("regclass", "regclass"),
    2206: ("regtype", "regtype"),
    2950: ("uuid", "uuid"),
    2951: ("_uuid", "uuid[]"),
    3802: ("jsonb", "jsonb"),
    3807: ("_jsonb", "jsonb[]"),
    3904: ("int4range", "int4range"),
    3906: ("numrange", "numrange"),
    3908: ("tsrange", "tsrange"),
    3910: ("tstzrange", "tstzrange"),
    3912: ("daterange", "daterange"),
    3926: ("int8range", "int8range"),
    5069: ("xid8", "xid8"),
}
TYPNAME_DISPLAY = dict(BUILTIN_TYPES.values())
NUMERIC_OID = 1700

# Arrow type per PostgreSQL type, given to result.rows_to_arrow (plain rows) and
# result.conform_arrow (ADBC) so both paths build the same table.  Integers and floats use
# the canonical int64/float64 widths; numeric is handled by numeric_array().
ARROW_TYPES: dict[str, pa.DataType] = {
    "int2": pa.int64(),
    "int4": pa.int64(),
    "int8": pa.int64(),
    "float4": pa.float64(),
    "float8": pa.float64(),
    "bool": pa.bool_(),
    "text": pa.string(),
    "varchar": pa.string(),
    "bpchar": pa.string(),
    "name": pa.string(),
    "date": pa.date32(),
    "time": pa.time64("us"),
    "timestamp": pa.timestamp("us"),
    "timestamptz": pa.timestamp("us", tz="UTC"),
    "uuid": pa.string(),
    "json": pa.string(),
    "jsonb": pa.string(),
    "bytea": pa.binary(),
}
# Types the ADBC path converts exactly like the psycopg path; anything else re-runs on psycopg.
FAST_PATH_TYPES = frozenset(ARROW_TYPES) | {"numeric"}

_NONFINITE = {
    "nan": "NaN",
    "inf": "Infinity",
    "+inf": "Infinity",
    "infinity": "Infinity",
    "-inf": "-Infinity",
    "-infinity": "-Infinity",
}


def numeric_precision_scale(typmod: int | None) -> tuple[int, int] | None:
    """(precision, scale) of a ``numeric(p, s)`` typmod; None when unconstrained."""
    if typmod is None or typmod < 4:
        return None
    t = typmod - 4
    precision = (t >> 16) & 0xFFFF
    scale = ((t & 0x7FF) ^ 1024) - 1024  # PostgreSQL 15 allows negative scales
    if precision < 1 or scale < 0 or scale > precision:
        return None
    return precision, scale


def numeric_array(col: pa.Array | pa.ChunkedArray, typmod: int | None = None) -> pa.Array | pa.ChunkedArray:
    """PostgreSQL numeric text (or decimals) → an Arrow decimal column.

    ``numeric(p, s)`` becomes ``decimal(p, s)``; unconstrained numeric becomes
    ``decimal128(38, s)`` (``decimal256(76, s)`` when wider) with ``s`` the largest scale in
    the data.  Columns holding NaN or ±Infinity, or too wide for decimal256, stay text in
    PostgreSQL's spelling.
    """
    declared = numeric_precision_scale(typmod)
    if (
        pa.types.is_decimal(col.type)
        and declared is not None
        and (col.type.precision, col.type.scale) == declared
    ):
        return col  # already what _to_decimal would make of it
    if not pa.types.is_string(col.type):
        col = col.cast(pa.string())
    try:
        return _to_decimal(col, typmod)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        valid = col.drop_null()
        if not (len(valid) and pc.any(pc.match_substring_regex(valid, "[A-Za-z]")).as_py()):
            raise
    # NaN or ±Infinity: keep PostgreSQL's text ('nan'/'inf' from ADBC spelled the same way)
    values = [None if v is None else _NONFINITE.get(v.lower(), v) for v in col.to_pylist()]
    return pa.array(values, type=pa.string())


def _to_decimal(col: pa.Array | pa.ChunkedArray, typmod: int | None) -> pa.Array | pa.ChunkedArray:
    declared = numeric_precision_scale(typmod)
    if declared is not None:
        precision, scale = declared
        if precision <= 38:
            return col.cast(pa.decimal128(precision, scale))
        if precision <= 76:
            return col.cast(pa.decimal256(precision, scale))
    scale, int_digits = 0, 1
    valid = col.drop_null()
    if len(valid):
        dot = pc.find_substring(valid, ".")
        length = pc.utf8_length(valid)
        has_dot = pc.greater_equal(dot, 0)
        frac = pc.if_else(has_dot, pc.subtract(pc.subtract(length, dot), 1), 0)
        whole = pc.if_else(has_dot, dot, length)
        whole = pc.subtract(whole, pc.cast(pc.starts_with(valid, "-"), pa.int32()))
        scale = int(pc.max(frac).as_py() or 0)
        int_digits = max(int(pc.max(whole).as_py() or 1), 1)
    if int_digits + scale <= 38:
        return col.cast(pa.decimal128(38, scale))
    if int_digits + scale <= 76:
        return col.cast(pa.decimal256(76, scale))
    return col  # wider than decimal256: the text


def arrow_types(typnames: Sequence[str | None]) -> list[pa.DataType | None]:
    return [ARROW_TYPES.get(t or "") for t in typnames]


def with_numerics(table: pa.Table, typnames: Sequence[str | None], typmods: Sequence[int | None]) -> pa.Table:
    """Turn the numeric columns (text or decimals) into decimals, see numeric_array()."""
    if "numeric" not in typnames:
        return table
    arrays = [
        numeric_array(col, typmod) if typname == "numeric" else col
        for col, typname, typmod in zip(table.columns, typnames, typmods, strict=True)
    ]
    return pa.Table.from_arrays(arrays, names=table.column_names)


# ---------------------------------------------------------------------------
# Session-state tracking for the fast path
# ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=512)
def cached_read_only(sql: str, dialect: str) -> bool:
    """The guard's verdict (with the shipped function policy) on ``sql``, remembered for
    the statements a session runs again."""
    from sqlnb.sql.guard import check_read_only

    return check_read_only(sql, dialect).read_only


_FIRST_WORD = re.compile(r"^[\s(]*([A-Za-z]+)")
_QUERY_WORDS = frozenset({"select", "with", "values", "table"})
# Statements that leave no session state behind (unless they create something temporary).
_STATELESS = _QUERY_WORDS | {
    "insert",
    "update",
    "delete",
    "merge",
    "truncate",
    "drop",
    "alter",
    "comment",
    "grant",
    "revoke",
    "vacuum",
    "analyze",
    "analyse",
    "refresh",
    "copy",
    "explain",
    "show",
    "cluster",
    "reindex",
    "create",
    "commit",
    "end",
    "rollback",
    "abort",
    "checkpoint",
    "import",
}
_CREATE_TEMP = re.compile(r"^\s*create\s+(or\s+replace\s+)?((global|local)\s+)?(temp|temporary)\b", re.I)
_INTO_TEMP = re.compile(r"\binto\s+(temp|temporary)\b", re.I)
_SESSION_CALLS = re.compile(
    r"\b(pg_temp\w*|set_config|pg_advisory\w*|setval|nextval|currval|lastval)\b", re.I
)


def changes_session(sql: str, dialect: str) -> bool:
    """Could ``sql`` leave session state (settings, temp objects, a transaction, prepared
    statements, sequence state, ...) that another connection would not see?"""
    text = strip_comments(sql, dialect)
    m = _FIRST_WORD.match(text)
    if not m:
        return True
    word = m.group(1).lower()
    if word not in _STATELESS:
        return True  # SET, RESET, BEGIN, START, PREPARE, DECLARE, LISTEN, DO, CALL, LOAD, ...
    if word in _QUERY_WORDS:
        return bool(_SESSION_CALLS.search(text) or _INTO_TEMP.search(text))
    return bool(_CREATE_TEMP.match(text) or _SESSION_CALLS.search(text))


# ---------------------------------------------------------------------------
# Catalog queries (PostgreSQL and Redshift share them; differences are class attributes)
# ---------------------------------------------------------------------------

_TABLES_SQL = """
SELECT c.oid::bigint, n.nspname, c.relname, c.relkind,
       CASE WHEN c.relkind IN ('r', 'p', 'm', 'f') AND c.reltuples >= 0
            THEN c.reltuples::bigint END,
       d.description
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_catalog.pg_description d
       ON d.objoid = c.oid AND d.classoid = 'pg_catalog.pg_class'::regclass AND d.objsubid = 0
WHERE c.relkind IN ({relkinds}) AND {schemas} {extra}
ORDER BY 2, 3
"""

# Keyed by the table's oid (the tables query maps it to schema and name) and ordered in
# Python: a server-side sort of 20,000 wide rows spills to disk with the default work_mem.
_COLUMNS_SQL = """
SELECT a.attrelid::bigint, a.attnum, a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod),
       NOT a.attnotnull, pg_catalog.pg_get_expr(ad.adbin, ad.adrelid), d.description
FROM pg_catalog.pg_attribute a
JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_catalog.pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
LEFT JOIN pg_catalog.pg_description d
       ON d.objoid = a.attrelid AND d.classoid = 'pg_catalog.pg_class'::regclass
      AND d.objsubid = a.attnum
WHERE a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ({relkinds}) AND {schemas} {extra}
"""

# One row per constraint column (portable: no arrays in the output, no WITH ORDINALITY).
# Column names come from scalar subqueries (index lookups), which beats hashing all of
# pg_attribute for the few thousand key columns a large schema has.
_CONSTRAINTS_SQL = """
SELECT n.nspname, c.relname, k.conname, k.contype, k.i,
       (SELECT a.attname FROM pg_catalog.pg_attribute a
         WHERE a.attrelid = k.conrelid AND a.attnum = k.conkey[k.i]),
       fn.nspname, fc.relname,
       (SELECT a.attname FROM pg_catalog.pg_attribute a
         WHERE a.attrelid = k.confrelid AND a.attnum = k.confkey[k.i])
FROM (SELECT con.conname, con.contype, con.conrelid, con.confrelid, con.conkey, con.confkey,
             pg_catalog.generate_series(1, pg_catalog.array_upper(con.conkey, 1)) AS i
      FROM pg_catalog.pg_constraint con
      WHERE con.contype IN ('p', 'u', 'f') AND con.conrelid <> 0) k
JOIN pg_catalog.pg_class c ON c.oid = k.conrelid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_catalog.pg_class fc ON fc.oid = k.confrelid
LEFT JOIN pg_catalog.pg_namespace fn ON fn.oid = fc.relnamespace
WHERE {schemas}
ORDER BY 1, 2, 3, 5
"""

_INDEXES_SQL = """
SELECT n.nspname, c.relname, ic.relname, x.indisunique, x.i,
       COALESCE((SELECT a.attname FROM pg_catalog.pg_attribute a
                  WHERE a.attrelid = x.indrelid AND a.attnum = x.indkey[x.i - 1]
                    AND x.indkey[x.i - 1] <> 0),
                pg_catalog.pg_get_indexdef(x.indexrelid, x.i, true))
FROM (SELECT indexrelid, indrelid, indisunique, indkey,
             pg_catalog.generate_series(1, {nkeys}) AS i
      FROM pg_catalog.pg_index) x
JOIN pg_catalog.pg_class c ON c.oid = x.indrelid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_class ic ON ic.oid = x.indexrelid
WHERE c.relkind IN ('r', 'p', 'm') AND {schemas}
ORDER BY 1, 2, 3, 5
"""


# ---------------------------------------------------------------------------
# Shared PostgreSQL-family behaviour
# ---------------------------------------------------------------------------


class PgFamilyAdapter(Adapter):
    """What PostgreSQL and Redshift share: error classification by SQLSTATE, type names,
    the canonical Arrow types and the pg_catalog queries.  Engine differences are the
    class attributes below."""

    native_timeout = True

    # catalog differences
    catalog_relkinds: ClassVar[str] = "'r', 'p', 'v', 'm', 'f'"
    catalog_schema_filter: ClassVar[str] = (
        "(n.nspname <> 'information_schema' AND n.nspname !~ '^pg_'"
        " OR n.oid = pg_catalog.pg_my_temp_schema())"
    )
    catalog_table_filter: ClassVar[str] = "AND NOT c.relispartition"
    catalog_index_keys: ClassVar[str] = "indnkeyatts"

    def _init_state(self) -> None:
        self._type_names: dict[int, str] = {}
        self._session_timeout: float | object | None = UNKNOWN  # what statement_timeout is now
        self._effective_timeout: float | None = None

    # ---- type names -----------------------------------------------------------------
    def _type_display(self, oids: Sequence[int]) -> list[str]:
        """format_type(oid, NULL) for each oid: built-ins from a table, others looked up
        once in pg_type and cached."""
        missing = {o for o in oids if o not in BUILTIN_TYPES and o not in self._type_names}
        if missing:
            try:
                rows = self._catalog_rows(
                    "SELECT oid::int, pg_catalog.format_type(oid, NULL) FROM pg_catalog.pg_type "
                    f"WHERE oid IN ({', '.join(str(int(o)) for o in sorted(missing))})"
                )
                for oid, name in rows:
                    self._type_names[int(oid)] = str(name)
            except Exception:
                pass
            for o in missing:
                self._type_names.setdefault(o, f"oid {o}")
        return [BUILTIN_TYPES[o][1] if o in BUILTIN_TYPES else self._type_names[o] for o in oids]

    # ---- catalog ----------------------------------------------------------------------
    def _load_catalog(self) -> Catalog:
        fmt = {
            "relkinds": self.catalog_relkinds,
            "schemas": self.catalog_schema_filter,
            "extra": self.catalog_table_filter,
            "nkeys": self.catalog_index_keys,
        }
        tables, columns, constraints, indexes, schema = self._catalog_queries(
            [
                _TABLES_SQL.format(**fmt),
                _COLUMNS_SQL.format(**fmt),
                _CONSTRAINTS_SQL.format(**fmt),
                _INDEXES_SQL.format(**fmt),
                "SELECT pg_catalog.current_schema()",
            ]
        )
        names = {oid: (nsp, rel) for oid, nsp, rel, *_ in tables}
        columns.sort(key=operator.itemgetter(0, 1))
        column_rows = [
            names[oid] + (name, typ, nullable, default, comment)
            for oid, _num, name, typ, nullable, default, comment in columns
            if oid in names
        ]
        constraint_rows: list[tuple] = []
        current = None
        for nsp, rel, cname, kind, _i, col, ref_schema, ref_table, ref_col in constraints:
            if (nsp, rel, cname) != current:
                current = (nsp, rel, cname)
                constraint_rows.append((nsp, rel, cname, _char(kind), [], ref_schema, ref_table, []))
            constraint_rows[-1][4].append(col)
            if ref_col is not None:
                constraint_rows[-1][7].append(ref_col)
        index_rows: list[tuple] = []
        current = None
        for nsp, rel, iname, unique, _i, col in indexes:
            if (nsp, rel, iname) != current:
                current = (nsp, rel, iname)
                index_rows.append((nsp, rel, iname, unique, []))
            index_rows[-1][4].append(col)
        built = assemble_tables([row[1:] for row in tables], column_rows, constraint_rows, index_rows)
        return Catalog(self.dialect, built, default_schema=schema[0][0] if schema else None)

    def _catalog_queries(self, queries: Sequence[str]) -> list[list[Sequence[Any]]]:
        """The rows of each catalog query (subclasses may send them together)."""
        return [list(self._catalog_rows(q)) for q in queries]

    # ---- timeouts ---------------------------------------------------------------------
    @staticmethod
    def _timeout_ms(timeout: float | None) -> int:
        return math.ceil(timeout * 1000) if timeout else 0

    # ---- read-only statements -------------------------------------------------------------
    #: sqlnb's own SQL that sets the statement timeout for the current transaction only
    #: (``{ms}`` filled in); Redshift's SET LOCAL differs, set_config works on both
    local_timeout_sql: ClassVar[str] = "SET LOCAL statement_timeout = {ms}"

    def _advisory_locks(self) -> bool:
        """Whether the server has session-level advisory locks (PostgreSQL does; Redshift
        has none)."""
        return True

    def _read_only_statement(
        self, run, query=None, *, timeout: bool = True, release: str = "all"
    ) -> _ReadOnlyStatement:
        """The read-only transaction one statement runs in (a read-only connection's every
        statement, or ``execute(..., readonly=True)`` on a read-write one).

        ``run(sql)`` runs sqlnb's own SQL on the statement's connection (``query(sql)``
        returns rows).  Read-only and the timeout are properties of the transaction, not of
        the session: a pooler in transaction mode keeps them (the whole transaction runs on
        one server session), nothing leaks into other clients' sessions, and what a
        function changes with ``set_config(..., false)`` is undone by the rollback.  What a
        rollback does not undo is released before it, inside the same transaction (so on
        the same server session behind a transaction pooler): session-level advisory locks
        a function took (``release="all"``: every one, on a read-only connection, where
        the guard refuses taking them; ``"new"``: only those the statement added, on a
        read-write connection whose own locks stay).  A savepoint lets that run after a
        failed statement."""
        if not self._advisory_locks():
            release = ""
        return _ReadOnlyStatement(run, query, self.local_timeout_sql if timeout else "", release)

    # ---- errors -----------------------------------------------------------------------
    def _sqlstate_and_message(self, exc: BaseException) -> tuple[str | None, str, str | None]:
        """(SQLSTATE, the engine's primary message, hint) of a driver exception."""
        return getattr(exc, "sqlstate", None), _exc_text(exc), None

    def _classify(self, exc: BaseException) -> errors.SqlnbError | None:
        import socket

        state, message, hint = self._sqlstate_and_message(exc)
        low = message.lower()
        cls: type[errors.SqlnbError] | None = None
        if state == "57014" or (state is None and "canceling statement" in low):
            if "statement timeout" in low:
                t = self._effective_timeout
                text = (
                    f"Query exceeded the statement timeout of {t:g} s"
                    if t
                    else "Query exceeded the statement timeout"
                )
                return errors.QueryTimeout(f"{text} ({message})", engine_message=message)
            return errors.QueryCancelled(
                f"Query cancelled ({message})", engine_message=message, hint="the connection is still usable"
            )
        if (
            "password authentication failed" in low
            or "authentication failed" in low
            or (state or "").startswith("28")
        ):
            cls = errors.AuthenticationFailed
        elif state is not None:
            cls = _SQLSTATE_CLASSES.get(state) or _SQLSTATE_CLASSES.get(state[:2])
            if state == "25006":
                hint = hint or "the connection is read-only; open one without --readonly to write"
        elif isinstance(exc, (socket.timeout, TimeoutError)) or "timeout expired" in low:
            cls = errors.ConnectFailed
            message = f"timed out ({message})" if "time" not in low else message
        elif any(n in low for n in _LOST):
            cls = errors.ConnectionLost
        elif any(n in low for n in _CONNECT):
            cls = errors.ConnectFailed
        if cls is None:
            return None
        return cls(message, engine_message=message, hint=hint)


#: a session setting whose value sqlnb does not know now (the statement may have changed it)
UNKNOWN = object()

# Driver messages without a SQLSTATE (libpq reports connection trouble as plain text).
_LOST = (
    "server closed the connection",
    "consuming input failed",
    "terminating connection",
    "connection is closed",
    "connection has been lost",
    "broken pipe",
    "connection reset",
    "ssl syscall error",
    "lost synchronization",
)
_CONNECT = (
    "connection failed",
    "could not connect",
    "connection refused",
    "connection to server",
    "could not translate host",
    "name or service not known",
    "communication error",
    "no route to host",
    "network is unreachable",
)

_SQLSTATE_CLASSES: dict[str, type[errors.SqlnbError]] = {
    "42P01": errors.TableNotFound,
    "3F000": errors.TableNotFound,  # schema does not exist
    "42703": errors.ColumnNotFound,
    "42601": errors.SQLSyntaxError,
    "42883": errors.TypeMismatch,
    "22P02": errors.TypeMismatch,
    "42804": errors.TypeMismatch,
    "22007": errors.TypeMismatch,
    "42846": errors.TypeMismatch,  # cannot coerce
    "42501": errors.PermissionDenied,
    "25006": errors.PermissionDenied,
    "28P01": errors.AuthenticationFailed,
    "28000": errors.AuthenticationFailed,
    "3D000": errors.ConnectFailed,  # database does not exist
    "57P01": errors.ConnectionLost,
    "57P02": errors.ConnectionLost,
    "57P03": errors.ConnectFailed,
    "08": errors.ConnectionLost,  # class 08: connection exceptions (ConnectFailed on connect)
}


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _char(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _exc_text(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split())


_ADBC_ERROR = re.compile(r"(?:ERROR|FATAL):\s+(.*?)(?:\n|\. SQLSTATE:|$)", re.S)


# ---------------------------------------------------------------------------
# PostgreSQL
# ---------------------------------------------------------------------------


class PostgresAdapter(PgFamilyAdapter):
    scheme = "postgresql"
    dialect = "postgres"
    extra = "postgres"
    driver_module = "psycopg"
    display_name = "PostgreSQL"
    # $1, $2, ...: psycopg's RawCursor sends the text as it is (no %-placeholders to parse,
    # no %% to double), and the guard reads $n as parameters
    paramstyle = "numeric"

    #: use adbc-driver-postgresql for plain read-only queries; ConnectOptions.arrow sets it
    #: per connection (False forces psycopg)
    fast_path: bool = True
    #: with a ``max_rows`` cap below this, psycopg streams the rows instead
    fast_path_min_rows: ClassVar[int] = 10_000
    #: read numeric(p <= 15, s) columns as float8 on the fast path (see _narrow_numerics)
    narrow_numerics: bool = True

    # ---- connect -------------------------------------------------------------------------
    def _connect_kwargs(self) -> dict[str, Any]:
        import psycopg

        spec = self.spec
        params = dict(spec.params)
        known = {d.keyword.decode() for d in psycopg.pq.Conninfo.get_defaults()}
        unknown = sorted(k for k in params if k not in known)
        if unknown:
            raise errors.ConfigurationError(
                f"Unknown PostgreSQL connection parameter {unknown[0]!r} in {spec.redacted_url()}",
                hint="use libpq parameters such as sslmode, application_name, options, target_session_attrs",
            )
        kwargs: dict[str, Any] = {
            "host": spec.host,
            "port": spec.port,
            "user": spec.user,
            "password": spec.password,  # a Secret until the driver call (spec.revealed)
            "dbname": spec.database,
            "connect_timeout": max(1, math.ceil(self.options.connect_timeout or 0))
            if self.options.connect_timeout
            else None,
            "application_name": "sqlnb",
        }
        kwargs.update(params)
        return {k: v for k, v in kwargs.items() if v is not None and v != ""}

    def _session_sql(self) -> str:
        """Session settings made after connecting (none on a read-only connection: each
        of its statements sets read-only and the timeout for its own transaction)."""
        if self.options.readonly:
            return ""
        return f"SET statement_timeout = {self._timeout_ms(self.options.statement_timeout)}"

    def _connect(self) -> None:
        import psycopg
        from psycopg.types.string import TextLoader

        self._init_state()
        self._kwargs = self._connect_kwargs()
        self.conn = psycopg.connect(
            autocommit=True,
            prepare_threshold=None,
            cursor_factory=_one_statement_cursor(),
            **revealed(self._kwargs),
        )
        try:
            # numeric, json, jsonb and uuid as their text: the fast path gets the same text
            for oid in (NUMERIC_OID, 114, 3802, 2950):
                self.conn.adapters.register_loader(oid, TextLoader)
            if self._session_sql():
                self.conn.execute(self._session_sql())
        except BaseException:
            self.conn.close()
            raise
        self._session_timeout = self.options.statement_timeout or None
        self.fast_path = bool(getattr(self.options, "arrow", True))
        self._dirty = False  # session state the ADBC connection lacks
        self._adbc_conn = None
        self._adbc_cur = None
        self._adbc_timeout: float | object | None = UNKNOWN
        self._adbc_failed = False
        self._running: str | None = None  # "pg" or "adbc" while a statement runs
        self.last_path: str | None = None  # which path ran the last statement (for tests)

    # ---- execute ---------------------------------------------------------------------
    def _execute(
        self, statement: Statement, params: Any, max_rows: int | None, timeout: float | None
    ) -> Result:
        self._effective_timeout = timeout
        if self._use_fast_path(statement, params, max_rows):
            self.last_path = "adbc"
            try:
                return self._execute_adbc(statement, max_rows, timeout)
            except _FallBack:
                pass
        self.last_path = "psycopg"
        return self._execute_psycopg(statement, params, max_rows, timeout)

    def _use_fast_path(self, statement: Statement, params: Any, max_rows: int | None) -> bool:
        from psycopg.pq import TransactionStatus

        if not self.fast_path or self._dirty or self._adbc_failed:
            return False
        if params:  # psycopg binds them (ADBC would bind text as text, not as unknown)
            return False
        if max_rows is not None and max_rows < self.fast_path_min_rows:
            return False
        if self.conn.info.transaction_status != TransactionStatus.IDLE:
            return False
        return statement.accepted or cached_read_only(statement, self.dialect)

    def _set_timeout_pg(self, timeout: float | None) -> None:
        from psycopg.pq import TransactionStatus

        if self._session_timeout is not UNKNOWN and self._session_timeout == timeout:
            return
        self.conn.execute(f"SET statement_timeout = {self._timeout_ms(timeout)}")
        # inside an explicit transaction a ROLLBACK would undo it: check again next time
        idle = self.conn.info.transaction_status == TransactionStatus.IDLE
        self._session_timeout = timeout if idle else UNKNOWN

    def _execute_psycopg(
        self, statement: Statement, params: Any, max_rows: int | None, timeout: float | None
    ) -> Result:
        from psycopg.pq import TransactionStatus

        own = None
        if self.options.readonly:  # its own read-only transaction, timeout included
            own = self._read_only_statement(self._run, self._catalog_rows)
            own.begin(timeout)
        else:
            self._set_timeout_pg(timeout)
        cur = self.conn.cursor()
        self._running = "pg"
        try:
            truncated = False
            query = self._sendable(statement)
            if max_rows is not None and (statement.accepted or cached_read_only(statement, self.dialect)):
                # stream, and stop the server after max_rows + 1 rows
                rows = []
                description = None
                stream = cur.stream(query, params, size=min(max_rows + 1, 1000))
                try:
                    for row in stream:
                        if description is None:
                            description = cur.description
                        if len(rows) == max_rows:
                            truncated = True
                            break
                        rows.append(row)
                    else:
                        description = description or cur.description
                finally:
                    stream.close()
                if description is None and not rows:
                    # a stream without rows brings no row description: describe the same
                    # text (parsed by the server, not run)
                    fields = self._describe(statement)
                    if fields is not None:
                        return self._plain_result(
                            [f[1] for f in fields], [f[2] for f in fields], [f[0] for f in fields], [], False
                        )
            else:
                cur.execute(query, params)
                description = cur.description
                if description is None:
                    rowcount = cur.rowcount
                    return empty_result(statement, rowcount if rowcount is not None else -1)
                rows, truncated = fetch_rows(cur, max_rows)
        finally:
            self._running = None
            cur.close()
            if own is not None:
                own.end()
            if (
                changes_session(statement, self.dialect)
                or self.conn.info.transaction_status != TransactionStatus.IDLE
            ):
                self._dirty = True
                self._session_timeout = UNKNOWN  # the statement may have SET it
        if description is None:  # a streamed statement that returned no row description
            return empty_result(statement, -1)
        oids = [d.type_code for d in description]
        typmods = [
            ((d.precision << 16) | (d.scale or 0)) + 4
            if d.type_code == NUMERIC_OID and d.precision is not None
            else -1
            for d in description
        ]
        return self._plain_result(oids, typmods, [d.name for d in description], rows, truncated)

    def _describe(self, statement: Statement) -> list[tuple[str, int, int]] | None:
        """(name, type oid, typmod) of each column of ``statement``, from the server's parse
        of the very text (an unnamed prepared statement: nothing runs); None when the
        server cannot describe it."""
        from psycopg.pq import ExecStatus

        text = self._sendable(statement).encode(self.conn.info.encoding or "utf-8")
        try:
            pgconn = self.conn.pgconn
            if pgconn.prepare(b"", text).status != ExecStatus.COMMAND_OK:
                return None
            desc = pgconn.describe_prepared(b"")
            if desc.status != ExecStatus.COMMAND_OK:
                return None
        except Exception:
            return None
        return [
            ((desc.fname(i) or b"").decode("utf-8", "replace"), desc.ftype(i), desc.fmod(i))
            for i in range(desc.nfields)
        ]

    def _plain_result(
        self,
        oids: Sequence[int],
        typmods: Sequence[int],
        names: Sequence[str],
        rows: Sequence[Sequence[Any]],
        truncated: bool,
    ) -> Result:
        displays = self._type_display(oids)
        columns = [ResultColumn(n, t) for n, t in zip(names, displays, strict=True)]
        typnames = [BUILTIN_TYPES.get(o, (None,))[0] for o in oids]
        table = rows_to_arrow(columns, rows, arrow_types(typnames))
        return Result(columns, with_numerics(table, typnames, typmods), len(rows), truncated)

    # ---- the ADBC fast path ------------------------------------------------------------
    def _adbc_cursor(self):
        if self._adbc_cur is None:
            try:
                import adbc_driver_postgresql.dbapi as adbc
                from psycopg.conninfo import make_conninfo

                conn = adbc.connect(
                    make_conninfo(**{k: str(v) for k, v in revealed(self._kwargs).items()}), autocommit=True
                )
                try:
                    cur = conn.cursor()
                    if self._session_sql():
                        cur.execute(self._session_sql())
                except BaseException:
                    conn.close()
                    raise
            except Exception:
                self._adbc_failed = True  # no fast path on this adapter: psycopg does it all
                raise _FallBack() from None
            self._adbc_conn, self._adbc_cur = conn, cur
            self._adbc_timeout = self.options.statement_timeout or None
        return self._adbc_cur

    def _execute_adbc(self, statement: Statement, max_rows: int | None, timeout: float | None) -> Result:
        cur = self._adbc_cursor()
        own = None
        if self.options.readonly:  # its own read-only transaction, timeout included

            def query(sql: str) -> list:
                cur.execute(sql)
                return [tuple(r) for r in cur.fetchall()]

            own = self._read_only_statement(cur.execute, query)
        elif self._adbc_timeout is UNKNOWN or self._adbc_timeout != timeout:
            cur.execute(f"SET statement_timeout = {self._timeout_ms(timeout)}")
            self._adbc_timeout = timeout
        # ADBC runs a query as COPY (<query>) TO STDOUT: the statement goes in on lines of
        # its own (a trailing line comment ends before the ")", a trailing ";" is cut), as
        # sqlnb's wrapper, which the guard checks again as sent
        narrow = self._narrow_numerics(statement)
        wrapped = narrow[0] if narrow else statement.wrap("", "")
        self._running = "adbc"
        reader = None
        if own is not None:
            own.begin(timeout)
        try:
            cur.execute(self._sendable(wrapped))
            reader = cur.fetch_record_batch()
            schema = reader.schema
            typnames, typmods = [], []
            for i, f in enumerate(schema):
                if narrow and i in narrow[1]:  # a numeric(p <= 15) sent as float8, see below
                    typnames.append("numeric")
                    typmods.append(narrow[1][i])
                    continue
                meta = f.metadata or {}
                typnames.append(meta.get(b"POSTGRESQL:type", b"").decode())
                mod = meta.get(b"POSTGRESQL:typmod")
                typmods.append(int(mod) if mod else -1)
            if any(t not in FAST_PATH_TYPES for t in typnames):
                cur.adbc_cancel()
                raise _FallBack()
            truncated = False
            if max_rows is None:
                table = reader.read_all()
            else:
                batches, n = [], 0
                while n <= max_rows:
                    try:
                        batch = reader.read_next_batch()
                    except StopIteration:
                        break
                    batches.append(batch)
                    n += batch.num_rows
                if n > max_rows:
                    truncated = True
                    cur.adbc_cancel()
                table = pa.Table.from_batches(batches, schema=schema).slice(0, max_rows)
        finally:
            self._running = None
            if reader is not None:
                try:
                    reader.close()
                except Exception:
                    pass
            if own is not None:
                own.end()
        columns = [
            ResultColumn(n, TYPNAME_DISPLAY.get(t, t)) for n, t in zip(schema.names, typnames, strict=True)
        ]
        if narrow:  # back from float8 to numeric(p, s): exact, p <= 15 digits round-trip
            for i, typmod in narrow[1].items():
                precision, scale = numeric_precision_scale(typmod)
                table = table.set_column(
                    i, schema.names[i], pc.cast(table.column(i), pa.decimal128(precision, scale), safe=False)
                )
        table = conform_arrow(table, arrow_types(typnames), names=schema.names)
        table = with_numerics(table, typnames, typmods)
        return Result(columns, table, table.num_rows, truncated)

    def _narrow_numerics(self, statement: Statement) -> tuple[Statement, dict[int, int]] | None:
        """Reading PostgreSQL numerics is the slowest part of the ADBC path (about 0.5 s
        per million values, more than a float, a timestamp and a text column together).
        A ``numeric(p, s)`` with ``p <= 15`` survives a trip through float8 exactly (the
        server rounds correctly, and 15 digits fit a double), so such columns are read as
        float8 and cast back to ``decimal(p, s)``: the query is wrapped as
        ``SELECT a, b::float8 AS b FROM (<query>) AS q`` after a describe (no execution)
        on the psycopg connection says which columns qualify.  A subquery with ORDER BY is
        never flattened by PostgreSQL, so the rows keep their order.

        Returns (the wrapped statement, {column index: typmod}) or None to run the query
        as written.
        """
        if not self.narrow_numerics:
            return None
        fields = self._describe(statement)
        if fields is None:
            return None
        narrow = {}
        for i, (_name, oid, typmod) in enumerate(fields):
            ps = numeric_precision_scale(typmod) if oid == NUMERIC_OID else None
            if ps is not None and ps[0] <= 15:
                narrow[i] = typmod
        names = [f[0] for f in fields]
        if not narrow or len(set(names)) != len(names) or not all(names):
            return None
        select = ", ".join(
            f"{_quote(n)}::float8 AS {_quote(n)}" if i in narrow else _quote(n) for i, n in enumerate(names)
        )
        try:
            return statement.wrap(f"SELECT {select} FROM (", ") AS _sqlnb_q"), narrow
        except errors.ReadOnlyViolation:  # a column name the guard refuses: as written
            return None

    # ---- the rest of the contract ----------------------------------------------------
    def _catalog_rows(self, sql: str) -> list[Sequence[Any]]:
        with self.conn.cursor() as cur:
            cur.execute(sql)
            return cur.fetchall()

    def _catalog_queries(self, queries: Sequence[str]) -> list[list[Sequence[Any]]]:
        """All catalog queries in one transaction with JIT off: the planner's row estimates
        for the key-column expansion are large enough to JIT-compile a 5 ms query (about
        40 ms of compiling on a 1,000-table schema).  SET LOCAL ends with the transaction."""
        with self.conn.transaction(), self.conn.cursor() as cur:
            if self.options.readonly:  # no session settings on a read-only connection
                cur.execute("SET TRANSACTION READ ONLY")
                cur.execute(
                    f"SET LOCAL statement_timeout = {self._timeout_ms(self.options.statement_timeout)}"
                )
            cur.execute("SET LOCAL jit = off")
            out = []
            for q in queries:
                cur.execute(q)
                out.append(cur.fetchall())
            return out

    def _cancel(self) -> None:
        running = self._running
        if running == "adbc" and self._adbc_cur is not None:
            self._adbc_cur.adbc_cancel()
        elif running == "pg":
            self.conn.cancel_safe(timeout=2.0)

    def _run(self, sql: str) -> None:
        self.conn.execute(sql)

    def _read_only_scope(self):
        """A read-only transaction around one statement on a read-write connection; the
        advisory locks the statement takes are released (the user's own stay)."""
        from psycopg.pq import TransactionStatus

        own = self._read_only_statement(self._run, self._catalog_rows, timeout=False, release="new")
        return self._read_only_transaction(
            self.conn.info.transaction_status != TransactionStatus.IDLE, lambda: own.begin(None), own.end
        )

    def _close(self) -> None:
        try:
            if self._adbc_cur is not None:
                self._adbc_cur.close()
            if self._adbc_conn is not None:
                self._adbc_conn.close()
        except Exception:
            pass
        finally:
            self._adbc_cur = self._adbc_conn = None
            self.conn.close()

    def _sqlstate_and_message(self, exc: BaseException) -> tuple[str | None, str, str | None]:
        import psycopg

        if isinstance(exc, psycopg.Error):
            diag = getattr(exc, "diag", None)
            primary = getattr(diag, "message_primary", None) if diag is not None else None
            hint = getattr(diag, "message_hint", None) if diag is not None else None
            return exc.sqlstate, primary or _exc_text(exc), hint
        state = getattr(exc, "sqlstate", None)
        text = str(exc)
        if state is not None or type(exc).__module__.startswith("adbc_driver"):
            m = _ADBC_ERROR.search(text)
            return state or None, (m.group(1).strip() if m else _exc_text(exc)), None
        return None, _exc_text(exc), None


class _FallBack(Exception):
    """The fast path cannot take this statement: run it on psycopg."""


class _ReadOnlyStatement:
    """One statement's read-only transaction (see PgFamilyAdapter._read_only_statement):
    ``begin(timeout)`` opens it, ``end()`` releases what outlives a rollback and rolls it
    back (errors there are swallowed: a broken connection reports itself on the next
    statement)."""

    __slots__ = ("_held", "_open", "_query", "_release", "_run", "_timeout_sql")

    SAVEPOINT = "sqlnb_statement"
    ADVISORY_LOCKS_SQL = (
        "SELECT l.classid::int8, l.objid::int8, l.objsubid::int4, l.mode "
        "FROM pg_catalog.pg_locks l WHERE l.locktype = 'advisory' "
        "AND l.pid = pg_catalog.pg_backend_pid() AND l.granted"
    )

    def __init__(self, run, query, timeout_sql: str, release: str):
        self._run, self._query = run, query
        self._timeout_sql, self._release = timeout_sql, release
        self._open = False
        self._held: set | None = None

    def begin(self, timeout: float | None) -> None:
        self._open = True
        try:
            self._run("BEGIN READ ONLY")
            if self._timeout_sql:
                self._run(self._timeout_sql.format(ms=PgFamilyAdapter._timeout_ms(timeout)))
            if self._release == "new":
                self._held = set(self._query(self.ADVISORY_LOCKS_SQL))
            if self._release:
                self._run(f"SAVEPOINT {self.SAVEPOINT}")
        except BaseException:
            self.end()
            raise

    def end(self) -> None:
        if not self._open:
            return
        self._open = False
        try:
            if self._release:
                self._run(f"ROLLBACK TO SAVEPOINT {self.SAVEPOINT}")
                if self._release == "all":
                    self._run("SELECT pg_catalog.pg_advisory_unlock_all()")
                else:
                    self._unlock_new()
        except Exception:
            pass
        finally:
            try:
                self._run("ROLLBACK")
            except Exception:
                pass

    def _unlock_new(self) -> None:
        """Unlock the session-level advisory locks the statement took (each as often as it
        was taken: pg_advisory_unlock returns false once the lock is no longer held)."""
        for classid, objid, objsubid, mode in set(self._query(self.ADVISORY_LOCKS_SQL)) - (
            self._held or set()
        ):
            shared = "_shared" if "Share" in str(mode) and "Exclusive" not in str(mode) else ""
            if int(objsubid) == 1:  # one bigint key: high and low 32 bits
                key = (int(classid) << 32) | int(objid)
                args = str(key - (1 << 64) if key >= 1 << 63 else key)
            else:  # two int4 keys, stored as unsigned oids
                a, b = (int(v) - (1 << 32) if int(v) >= 1 << 31 else int(v) for v in (classid, objid))
                args = f"{a}, {b}"
            for _ in range(1000):
                rows = self._query(f"SELECT pg_catalog.pg_advisory_unlock{shared}({args})")
                if not rows or not rows[0][0]:
                    break


@functools.lru_cache(maxsize=1)
def _one_statement_cursor():
    """psycopg's cursor for every statement sqlnb sends: the text as it is (a RawCursor:
    ``$n`` placeholders, no ``%`` parsing) over the extended query protocol, which runs one
    statement per call (the server refuses "cannot insert multiple commands into a
    prepared statement").  psycopg would use the simple query protocol for a statement
    without parameters, which runs any number of them: a ``COMMIT`` there would end the
    read-only transaction and run the rest read-write."""
    import psycopg

    class OneStatementCursor(psycopg.RawCursor):
        def _execute_send(self, query, *, force_extended: bool = False, binary=None) -> None:
            super()._execute_send(query, force_extended=True, binary=binary)

    return OneStatementCursor
