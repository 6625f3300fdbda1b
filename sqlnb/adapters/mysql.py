"""MySQL and MariaDB through mysql-connector-python's C extension; big reads via connectorx.

Two ways a query reaches Arrow, giving the same table (and so the same DataFrame):

- the plain path: the driver's C extension fetches rows, :func:`rows_to_arrow` builds the
  table with Arrow types derived from the result's column metadata (:class:`_Field`);
- the fast path (connectorx, Rust, straight to Arrow) for a single guard-approved query
  without parameters or row cap on a session with no state connectorx's own connection
  would lack.  Its column metadata comes from a probe that does not run the query
  (``SELECT * FROM (<query>) AS _p WHERE 0``); the Arrow table is cast to the same types.
  Columns connectorx gets wrong or cannot read (TIME, BIT, NULL, GEOMETRY, SET, FLOAT,
  DECIMAL with more than 10 decimals, which it silently rounds to 10) keep the query on the
  plain path, as do ``ConnectOptions(arrow=False)``.
  The statement timeout and the read-only layer travel with the query on MariaDB as
  ``SET STATEMENT max_statement_time=N, tx_read_only=1 FOR /* sqlnb:<tag> */ <query>``;
  cancel finds the tagged query in the processlist and kills it.

Read-only connections: the guard (in :class:`Adapter`) first, then the session itself:
``SET SESSION TRANSACTION READ ONLY`` and, on MariaDB, every statement wrapped in
``SET STATEMENT tx_read_only=1 FOR ...``, so even a statement that switched the session
back (``SET SESSION TRANSACTION READ WRITE``) leaves the next one read-only.  A read-only
transaction still lets ``SELECT ... INTO OUTFILE/DUMPFILE`` write a file on the server
(measured on MariaDB 10.11), so read-only connections also refuse those keywords here;
give read-only users no FILE privilege.

Catalog: five single-view information_schema queries for the connection's database
(TABLES, COLUMNS, TABLE_CONSTRAINTS, KEY_COLUMN_USAGE, STATISTICS), joined in Python —
MariaDB joins information_schema views without indexes, which took 1.2-1.7 s for 1,000
tables where the separate queries take about 0.05 s.  KEY_COLUMN_USAGE already names the
referenced table and columns, so REFERENTIAL_CONSTRAINTS (rules only) is not read.

The C extension only loads if it is imported before pyarrow (see ``sqlnb/__init__.py``);
otherwise the adapter warns and runs on the pure-Python driver (``c_extension`` says which).
"""

from __future__ import annotations

import logging
import math
import re
import threading
import time
import uuid
import warnings
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from sqlnb import errors
from sqlnb.adapters.base import Adapter
from sqlnb.adapters.catalog import Catalog, assemble_tables
from sqlnb.adapters.classify import TIMEOUT_HINT
from sqlnb.adapters.result import Result, ResultColumn, conform_arrow, empty_result, rows_to_arrow
from sqlnb.adapters.spec import revealed
from sqlnb.sql.statement import Statement
from sqlnb.sql.text import scan

log = logging.getLogger(__name__)

# MySQL protocol column types (mysql.connector.constants.FieldType)
_DECIMAL, _TINY, _SHORT, _LONG, _FLOAT, _DOUBLE, _NULL, _TIMESTAMP = 0, 1, 2, 3, 4, 5, 6, 7
_LONGLONG, _INT24, _DATE, _TIME, _DATETIME, _YEAR, _NEWDATE, _VARCHAR, _BIT = 8, 9, 10, 11, 12, 13, 14, 15, 16
_VECTOR, _JSON, _NEWDECIMAL, _ENUM, _SET = 242, 245, 246, 247, 248
_TINY_BLOB, _MEDIUM_BLOB, _LONG_BLOB, _BLOB, _VAR_STRING, _STRING, _GEOMETRY = (
    249,
    250,
    251,
    252,
    253,
    254,
    255,
)

_UNSIGNED_FLAG, _ENUM_FLAG, _SET_FLAG = 32, 256, 2048
_BINARY_CHARSET = 63

# canonical widths (see result.normalize_arrow): int64, and uint64 only where int64 cannot hold it
_INT_TYPES = {
    _TINY: (pa.int64(), pa.int64(), "tinyint"),
    _SHORT: (pa.int64(), pa.int64(), "smallint"),
    _INT24: (pa.int64(), pa.int64(), "mediumint"),
    _LONG: (pa.int64(), pa.int64(), "int"),
    _LONGLONG: (pa.int64(), pa.uint64(), "bigint"),
}
_TEXT_TYPES = {
    _VARCHAR: ("varchar", "varbinary"),
    _VAR_STRING: ("varchar", "varbinary"),
    _STRING: ("char", "binary"),
    _TINY_BLOB: ("tinytext", "tinyblob"),
    _MEDIUM_BLOB: ("mediumtext", "mediumblob"),
    _LONG_BLOB: ("longtext", "longblob"),
    _BLOB: ("text", "blob"),
}
_OTHER_NAMES = {
    _DECIMAL: "decimal",
    _NEWDECIMAL: "decimal",
    _FLOAT: "float",
    _DOUBLE: "double",
    _NULL: "null",
    _TIMESTAMP: "timestamp",
    _DATE: "date",
    _NEWDATE: "date",
    _TIME: "time",
    _DATETIME: "datetime",
    _YEAR: "year",
    _BIT: "bit",
    _JSON: "json",
    _ENUM: "enum",
    _SET: "set",
    _GEOMETRY: "geometry",
    _VECTOR: "vector",
}
# connectorx reads these as their canonical types: anything else stays on the plain path
_CX_MAX_DECIMALS = 10  # connectorx rounds every DECIMAL to 10 decimals (decimal128(38, 10))

_ERRNO_CLASSES: dict[int, type[errors.SqlnbError]] = {
    1146: errors.TableNotFound,
    1051: errors.TableNotFound,
    1109: errors.TableNotFound,
    1054: errors.ColumnNotFound,
    1064: errors.SQLSyntaxError,
    1149: errors.SQLSyntaxError,
    1366: errors.TypeMismatch,
    1292: errors.TypeMismatch,
    1264: errors.TypeMismatch,
    1265: errors.TypeMismatch,
    1406: errors.TypeMismatch,
    3140: errors.TypeMismatch,
    4038: errors.TypeMismatch,
    1142: errors.PermissionDenied,
    1143: errors.PermissionDenied,
    1044: errors.PermissionDenied,
    1227: errors.PermissionDenied,
    1370: errors.PermissionDenied,
    1095: errors.PermissionDenied,
    1792: errors.PermissionDenied,
    1290: errors.PermissionDenied,
    1836: errors.PermissionDenied,
    1045: errors.AuthenticationFailed,
    1698: errors.AuthenticationFailed,
    1317: errors.QueryCancelled,
    3024: errors.QueryTimeout,
    1969: errors.QueryTimeout,
    1907: errors.QueryTimeout,
    2006: errors.ConnectionLost,
    2013: errors.ConnectionLost,
    2055: errors.ConnectionLost,
    4031: errors.ConnectionLost,
    2002: errors.ConnectFailed,
    2003: errors.ConnectFailed,
    2005: errors.ConnectFailed,
    2026: errors.ConnectFailed,
}

# statements after which the session holds state that connectorx's connection would lack
_NEUTRAL_FIRST_WORDS = {
    "SELECT",
    "WITH",
    "VALUES",
    "TABLE",
    "(",
    "INSERT",
    "UPDATE",
    "DELETE",
    "REPLACE",
    "CREATE",
    "DROP",
    "ALTER",
    "TRUNCATE",
    "RENAME",
    "SHOW",
    "DESCRIBE",
    "DESC",
    "EXPLAIN",
    "ANALYZE",
    "OPTIMIZE",
    "CHECK",
    "CHECKSUM",
    "GRANT",
    "REVOKE",
    "HELP",
}
_SESSION_FUNCTIONS = re.compile(
    r"\b(connection_id|last_insert_id|found_rows|row_count|"
    r"last_value|lastval|previous\s+value|sql_calc_found_rows)\b",
    re.I,
)
_USER_VARIABLE = re.compile(r"(?<![@\w])@(?!@)")
_FILE_WRITE = re.compile(r"\b(outfile|dumpfile)\b", re.I)
_CX_ERROR = re.compile(r"ERROR (\d+) \(([0-9A-Z]{5})\): (.*?)\s*\}?\s*$", re.S)

_CONNECT_PARAMS = {  # URL query parameters passed to the driver
    "charset": str,
    "collation": str,
    "unix_socket": str,
    "auth_plugin": str,
    "ssl_ca": str,
    "ssl_cert": str,
    "ssl_key": str,
    "ssl_disabled": "bool",
    "ssl_verify_cert": "bool",
    "ssl_verify_identity": "bool",
    "compress": "bool",
}


@dataclass(frozen=True)
class _Field:
    """One result column's metadata, as the protocol gives it."""

    name: str
    code: int
    flags: int = 0
    charset: int = 0
    decimals: int | None = None  # None: not known (pure-Python driver)

    @property
    def unsigned(self) -> bool:
        return bool(self.flags & _UNSIGNED_FLAG)

    @property
    def binary(self) -> bool:
        return self.charset == _BINARY_CHARSET

    @property
    def type_name(self) -> str:
        if self.code in _INT_TYPES:
            name = _INT_TYPES[self.code][2]
            return f"{name} unsigned" if self.unsigned else name
        if self.flags & _SET_FLAG:
            return "set"
        if self.flags & _ENUM_FLAG:
            return "enum"
        if self.code in _TEXT_TYPES:
            return _TEXT_TYPES[self.code][1 if self.binary else 0]
        name = _OTHER_NAMES.get(self.code)
        if name is None:
            from mysql.connector.constants import FieldType

            name = (FieldType.get_info(self.code) or f"type{self.code}").lower()
        if self.code in (_FLOAT, _DOUBLE, _NEWDECIMAL, _DECIMAL) and self.unsigned:
            name += " unsigned"
        return name

    @property
    def arrow_type(self) -> pa.DataType | None:
        """The canonical Arrow type both paths produce (None: infer from the values)."""
        code = self.code
        if code in _INT_TYPES:
            signed, unsigned, _ = _INT_TYPES[code]
            return unsigned if self.unsigned else signed
        if code == _YEAR:
            return pa.int64()
        if code in (_FLOAT, _DOUBLE):
            return pa.float64()
        if code in (_NEWDECIMAL, _DECIMAL):
            return (
                pa.decimal128(38, self.decimals)
                if self.decimals is not None and self.decimals <= 38
                else None
            )
        if code in (_DATE, _NEWDATE):
            return pa.date32()
        if code in (_DATETIME, _TIMESTAMP):
            return pa.timestamp("us")
        if code == _TIME:
            return pa.duration("us")  # MySQL TIME is an interval (-838:59:59 .. 838:59:59)
        if code == _BIT:
            return pa.uint64()
        if code == _NULL:
            return pa.null()
        if code == _JSON:
            return pa.string()
        if code in _TEXT_TYPES or code in (_ENUM, _SET):
            if self.flags & (_SET_FLAG | _ENUM_FLAG):
                return pa.string()
            return pa.binary() if self.binary else pa.string()
        if code == _GEOMETRY:
            return pa.binary()
        return None

    @property
    def fast_ok(self) -> bool:
        """connectorx reads it correctly (and without a Rust panic).  Not FLOAT: the text
        protocol prints it with 6 digits while connectorx reads the exact binary float32,
        so the two paths could not agree."""
        code = self.code
        if code in _INT_TYPES or code in (_YEAR, _DOUBLE, _DATE, _NEWDATE, _DATETIME, _TIMESTAMP, _JSON):
            return True
        if code in (_NEWDECIMAL, _DECIMAL):
            return self.decimals is not None and self.decimals <= _CX_MAX_DECIMALS
        if code in _TEXT_TYPES:
            return not self.flags & _SET_FLAG
        return False


def _fields_from_cext(raw_fields) -> list[_Field]:
    # (catalog, db, table, org_table, name, org_name, charsetnr, length, type, flags, decimals)
    return [_Field(_text(f[4]), int(f[8]), int(f[9]), int(f[6]), int(f[10])) for f in raw_fields]


def _fields_from_description(description) -> list[_Field]:
    # (name, type_code, None, None, None, scale, null_ok, flags, charset); the scale slot
    # is filled by _ScaleReportingProtocol (None from a stock pure-Python connection)
    out = []
    for d in description:
        flags = int(d[7]) if len(d) > 7 and d[7] is not None else 0
        charset = int(d[8]) if len(d) > 8 and d[8] is not None else 0
        scale = int(d[5]) if len(d) > 5 and d[5] is not None else None
        out.append(_Field(_text(d[0]), int(d[1]), flags, charset, scale))
    return out


def _scale_reporting_protocol_class():
    from mysql.connector import utils
    from mysql.connector.protocol import MySQLProtocol

    class ScaleReportingProtocol(MySQLProtocol):
        """The pure-Python driver reads each column's decimals but leaves the DB-API
        ``scale`` slot empty; this fills it (the C extension reports it already), so a
        DECIMAL's scale is known before any row arrives."""

        @staticmethod
        def parse_column(packet: bytes, encoding: str = "utf-8"):
            desc = MySQLProtocol.parse_column(packet, encoding)
            rest = packet[4:]
            for _ in range(6):  # catalog, db, table, org_table, name, org_name
                rest, _value = utils.read_lc_string(rest)
            decimals = (
                rest[10] if len(rest) > 10 else None
            )  # <xHIBHBxx: 0x0c, charset, length, type, flags, decimals
            return desc[:5] + (decimals,) + desc[6:]

    return ScaleReportingProtocol


def _ScaleReportingProtocol():
    return _scale_reporting_protocol_class()()


def _with_decimals(f: _Field, rows: list, i: int) -> _Field:
    """The pure-Python driver does not report a DECIMAL's scale: read it off the values
    (the text protocol sends them with the column's scale, e.g. 12.50)."""
    if f.decimals is not None or f.code not in (_NEWDECIMAL, _DECIMAL):
        return f
    scale = 0
    for row in rows:
        v = row[i]
        if v is not None and hasattr(v, "as_tuple") and v.is_finite():
            scale = max(scale, -v.as_tuple().exponent)
    return _Field(f.name, f.code, f.flags, f.charset, scale)


def _text(v: Any) -> str:
    return v.decode("utf-8", "replace") if isinstance(v, (bytes, bytearray)) else str(v)


def _first_word(sql: str) -> str:
    for tok in scan(sql, "mysql"):
        if tok.kind in ("comment", "semicolon"):
            continue
        if tok.kind != "code":
            return ""
        m = re.match(r"\s*(\(|[A-Za-z_]+)", tok.text)
        if m:
            return m.group(1).upper()
        if tok.text.strip():
            return ""
    return ""


def _literal(value: Any) -> str:
    """A SQL literal that MySQL and MariaDB read the same under every sql_mode (no
    backslash escapes, which NO_BACKSLASH_ESCAPES switches off): text with a backslash or
    a control character, and bytes, as hex."""
    import datetime as dt
    import decimal

    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    if isinstance(value, decimal.Decimal) and value.is_finite():
        return str(value)
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return (
            "'" + value.isoformat(sep=" ") + "'"
            if isinstance(value, dt.datetime)
            else "'" + value.isoformat() + "'"
        )
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "X'" + bytes(value).hex() + "'"
    if isinstance(value, str):
        if "\\" in value or any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in value):
            return "CONVERT(X'" + value.encode("utf-8").hex() + "' USING utf8mb4)"
        return "'" + value.replace("'", "''") + "'"
    raise errors.UsageError(
        f"A parameter of type {type(value).__name__} cannot be sent on a read-only MySQL connection",
        hint="pass a number, text, bytes, a date or a time, or None",
    )


def _calls_unknown_function(sql: str) -> bool:
    """Whether the query calls a function sqlglot does not know as a MySQL built-in (a
    stored function, most likely).  The fast path's probe runs the query (MariaDB
    evaluates a derived table even under WHERE 0 or LIMIT 0) and connectorx runs it again,
    so a function with side effects would run twice: such queries stay on the driver."""
    import sqlglot
    from sqlglot import exp

    try:
        trees = sqlglot.parse(sql, read="mysql")
    except Exception:
        return True
    return any(t is not None and next(t.find_all(exp.Anonymous), None) is not None for t in trees)


def _code_text(sql: str) -> str:
    return " ".join(t.text for t in scan(sql, "mysql") if t.kind == "code")


class MySQLAdapter(Adapter):
    scheme = "mysql"
    dialect = "mysql"
    extra = "mysql"
    driver_module = "mysql.connector"
    display_name = "MySQL"
    native_timeout = True  # max_statement_time (MariaDB) / max_execution_time (MySQL)
    paramstyle = "pyformat"

    #: Run statements as ``SET STATEMENT ... FOR <statement>`` (MariaDB) for the row cap and
    #: the read-only layer; without it (MySQL) the row cap is a session ``sql_select_limit``
    #: set around the statement.  None: decided by the server.
    set_statement: bool | None = None
    #: A ``KILL QUERY`` from a second connection at the statement timeout.  MySQL's
    #: ``max_execution_time`` times out top-level SELECTs only, so DML, DDL and CALL would
    #: run without a timeout; MariaDB's ``max_statement_time`` covers every statement.
    #: None: on MySQL, not on MariaDB.
    kill_backstop: bool | None = None

    @property
    def has_set_statement(self) -> bool:
        return self.is_mariadb if self.set_statement is None else bool(self.set_statement)

    @property
    def uses_kill_backstop(self) -> bool:
        return (not self.is_mariadb) if self.kill_backstop is None else bool(self.kill_backstop)

    # ---- connecting -------------------------------------------------------------
    def _connect(self) -> None:
        spec = self.spec
        kwargs: dict[str, Any] = {
            "host": spec.host or "127.0.0.1",
            "port": spec.port or 3306,
            "user": spec.user or "",
            "password": spec.password or "",  # a Secret until the driver call (spec.revealed)
            "autocommit": True,
            "connection_timeout": max(1, math.ceil(self.options.connect_timeout or 10)),
            "charset": "utf8mb4",
        }
        if spec.database:
            kwargs["database"] = spec.database
        for key, value in spec.params.items():
            kind = _CONNECT_PARAMS.get(key)
            if kind == "bool":
                kwargs[key] = value.strip().lower() in ("1", "true", "yes", "on")
            elif kind is not None:
                kwargs[key] = value
        self._kwargs = kwargs
        # connectorx cannot copy these connection settings: keep those sessions on the driver
        self._fast_enabled = bool(getattr(self.options, "arrow", True)) and not any(
            k in kwargs
            for k in (
                "unix_socket",
                "ssl_ca",
                "ssl_cert",
                "ssl_key",
                "ssl_verify_cert",
                "ssl_verify_identity",
                "compress",
            )
        )
        self._cx_ssl_mode: str | None = None  # connectorx's URL holds the password: never kept
        self._cx_ok: bool | None = None  # connectorx reached the server (None: not tried yet)
        self._running = False
        self._exec_token = 0
        self._fast_tag: str | None = None
        self._dirty = False
        self._session_timeout: float | None = None
        self.last_path: str | None = None  # how the last result came: "connectorx" or "driver"
        self.conn = self._open()
        self._setup_session()

    def _open(self, **overrides: Any):
        import mysql.connector
        from mysql.connector.constants import ClientFlag

        # one statement per call: without the multi-statements flag the server refuses a
        # second statement after a ";" (a fooled guard cannot COMMIT the read-only
        # transaction away and go on writing)
        kwargs = {"client_flags": [-ClientFlag.MULTI_STATEMENTS], **self._kwargs, **overrides}
        try:
            return _scrubbed(mysql.connector.connect(use_pure=False, **revealed(kwargs)))
        except ImportError as exc:  # the C extension could not be loaded
            warnings.warn(
                f"mysql-connector-python's C extension is not available ({exc}); using the "
                "pure-Python driver, about 3x slower. Import sqlnb (or mysql.connector) before "
                "pandas/pyarrow so the extension can load.",
                RuntimeWarning,
                stacklevel=3,
            )
            conn = _scrubbed(mysql.connector.connect(use_pure=True, **revealed(kwargs)))
            conn._protocol = _ScaleReportingProtocol()  # fill description's scale slot
            return conn

    @property
    def c_extension(self) -> bool:
        """True when the driver's C extension is in use (``CMySQLConnection``)."""
        return type(self.conn).__name__ == "CMySQLConnection"

    def _setup_session(self) -> None:
        conn = self.conn
        info = str(getattr(conn, "server_info", None) or "")
        self.server_version = info
        self.is_mariadb = "mariadb" in info.lower()
        self.connection_id = conn.connection_id
        self._session_timeout = None
        cur = conn.cursor()
        try:
            if self.options.readonly:
                cur.execute("SET SESSION TRANSACTION READ ONLY")
            self._apply_session_timeout(cur, self.options.statement_timeout or None)
        finally:
            cur.close()
        self._dirty = False

    def _apply_session_timeout(self, cur, timeout: float | None) -> None:
        seconds = float(timeout or 0)
        if self._session_timeout == seconds:
            return
        if self.is_mariadb:
            cur.execute(f"SET SESSION max_statement_time = {seconds:.6f}")
        else:  # MySQL: milliseconds, SELECT only
            cur.execute(f"SET SESSION max_execution_time = {round(seconds * 1000)}")
        self._session_timeout = seconds

    # ---- executing --------------------------------------------------------------
    # the driver interpolates %(name)s values on the client: a guarded statement's values
    # go into the checked text as literals that read the same under every sql_mode
    interpolates_parameters = True

    def _literal(self, value: Any) -> str:
        return _literal(value)

    def _execute(
        self, statement: Statement, params: Any, max_rows: int | None, timeout: float | None
    ) -> Result:
        guarded = self.read_only_now
        if guarded and _FILE_WRITE.search(_code_text(statement)):
            raise errors.ReadOnlyViolation(
                "Refused on a read-only connection: INTO OUTFILE/DUMPFILE writes a file on the "
                "server even in a read-only transaction",
                reason="it writes a file on the server",
                dialect=self.dialect,
            )
        self._exec_token += 1
        self._running = True
        try:
            if params is None and max_rows is None and self._fast_eligible(statement):
                result = self._execute_fast(statement, timeout)
                if result is not None:
                    return result
            return self._execute_plain(statement, params, max_rows, timeout)
        finally:
            self._running = False
            if guarded:
                self._release_locks()

    def _release_locks(self) -> None:
        """Release the named locks (GET_LOCK) a guarded statement may have taken through a
        stored function: they outlive the statement and its read-only transaction.  The
        session's own named locks go too; run the agent on a connection of its own to
        keep them."""
        try:
            cur = self.conn.cursor()
            try:
                cur.execute("SELECT RELEASE_ALL_LOCKS()")
                cur.fetchall()
            finally:
                cur.close()
        except Exception:  # a lost connection says so on the next statement
            pass

    # the plain path -----------------------------------------------------------
    def _execute_plain(
        self, statement: Statement, bound: Any, max_rows: int | None, timeout: float | None
    ) -> Result:
        import mysql.connector

        first = _first_word(statement)
        if first not in _NEUTRAL_FIRST_WORDS or (
            first in ("CREATE", "DROP") and re.search(r"\btemporary\b", _code_text(statement), re.I)
        ):
            self._dirty = True  # SET, USE, BEGIN, temporary tables, CALL, ...: not for connectorx
        settings = []
        set_statement = self.has_set_statement
        readonly_wrap = self.read_only_now and set_statement
        if readonly_wrap:
            settings.append("tx_read_only=1")
        # the row cap on the server (sql_select_limit; an explicit larger LIMIT wins over
        # it, so _fetch also stops a result that goes on past the cap)
        is_query = first in ("SELECT", "WITH", "VALUES", "(")
        limit_wrap = max_rows is not None and set_statement and is_query
        session_limit = max_rows is not None and not set_statement and is_query
        if limit_wrap:
            settings.append(f"sql_select_limit={int(max_rows) + 1}")
        sent = statement
        if settings:
            sent = statement.wrap(f"SET STATEMENT {', '.join(settings)} FOR")
        token = self._exec_token
        cur = self.conn.cursor()
        backstop = self._start_backstop(timeout, token)
        try:
            self._apply_session_timeout(cur, timeout)
            if session_limit:
                cur.execute(f"SET SESSION sql_select_limit = {int(max_rows) + 1}")
            try:
                cur.execute(self._sendable(sent), bound)
            except mysql.connector.Error as exc:
                if not (settings and getattr(exc, "errno", None) == 1064):
                    raise
                # a syntax error runs nothing: the statement as written, without the
                # wrapper (a guarded one still runs in the read-only session or transaction)
                cur.execute(self._sendable(statement), bound)
            if not cur.description:
                self._check_backstop(token, timeout)
                self.last_path = "driver"
                return empty_result(statement, cur.rowcount if cur.rowcount is not None else -1)
            fields = self._result_fields(cur)
            rows, truncated = self._fetch(cur, max_rows)
        finally:
            if backstop is not None:
                backstop.cancel()
            try:
                cur.close()
            except Exception:
                pass
            if session_limit:
                self._reset_select_limit()
        self._check_backstop(token, timeout)
        fields = [_with_decimals(f, rows, i) for i, f in enumerate(fields)]
        types = [f.arrow_type for f in fields]
        rows = self._fix_values(fields, rows)
        columns = [ResultColumn(f.name, f.type_name) for f in fields]
        self.last_path = "driver"
        return Result(columns, rows_to_arrow(columns, rows, types), len(rows), truncated)

    def _reset_select_limit(self) -> None:
        try:
            cur = self.conn.cursor()
            try:
                cur.execute("SET SESSION sql_select_limit = DEFAULT")
            finally:
                cur.close()
        except Exception:  # a lost connection says so on the next statement
            pass

    # the statement timeout's backstop ---------------------------------------------
    def _start_backstop(self, timeout: float | None, token: int):
        """A timer that kills the statement at the timeout where the server's own timeout
        may not cover it (see :attr:`kill_backstop`)."""
        if not timeout or not self.uses_kill_backstop:
            return None
        timer = threading.Timer(timeout, self._backstop_fired, (token,))
        timer.daemon = True
        timer.start()
        return timer

    def _backstop_fired(self, token: int) -> None:
        if self._running and self._exec_token == token:
            self._timed_out = True
            self._backstop_token = token
            try:
                self._kill(token=token)
            except Exception:
                pass

    def _check_backstop(self, token: int, timeout: float | None) -> None:
        """A killed statement may still end without an error (``SLEEP()`` returns 1 when
        interrupted): it did not run to its end, so it is a timeout all the same."""
        if getattr(self, "_backstop_token", None) == token:
            raise errors.QueryTimeout(
                f"Query exceeded the statement timeout of {timeout:g} s",
                dialect=self.dialect,
                hint=TIMEOUT_HINT,
            )

    def _stop_result(self) -> None:
        """The row cap was reached and the server still sends rows: KILL QUERY stops it, so
        the rest of the result is not transferred just to be thrown away."""
        self._stopping = True
        try:
            self._kill()
        except Exception:
            pass

    def _result_fields(self, cur) -> list[_Field]:
        raw = getattr(self.conn, "_cmysql", None)
        if raw is not None:
            try:
                fields = _fields_from_cext(raw.fetch_fields())
                if len(fields) == len(cur.description):
                    return fields
            except Exception:
                pass
        return _fields_from_description(cur.description)

    def _fetch(self, cur, max_rows: int | None) -> tuple[list, bool]:
        limit = None if max_rows is None else int(max_rows) + 1
        raw = getattr(self.conn, "_cmysql", None)
        self._stopping = False
        if raw is None or getattr(self.conn, "converter", None) is not None:
            if limit is None:
                rows = cur.fetchall()
            else:
                rows = cur.fetchmany(limit)
                if len(rows) == limit and cur.fetchone() is not None:
                    self._stop_result()
                    self._drain(cur)
        else:
            rows = self._fetch_cext(raw, limit)
        truncated = max_rows is not None and len(rows) > max_rows
        if truncated:
            rows = rows[:max_rows]
        return rows, truncated

    def _fetch_cext(self, raw, limit: int | None) -> list:
        """Rows straight from the C extension (the cursor's loop costs ~1 µs a row more)."""
        from _mysql_connector import MySQLInterfaceError
        from mysql.connector.errors import InterfaceError, get_mysql_exception

        rows: list = []
        append = rows.append
        fetch = raw.fetch_row
        try:
            if limit is None:
                row = fetch()
                while row is not None:
                    append(row)
                    row = fetch()
            else:
                while len(rows) < limit:
                    row = fetch()
                    if row is None:
                        break
                    append(row)
                else:
                    if fetch() is not None:  # the server sends more: stop it
                        self._stop_result()
            self.conn.free_result()  # reads and drops whatever the row cap left behind
        except MySQLInterfaceError as err:
            try:
                self.conn.free_result()
            except Exception:
                pass
            if self._stopping:  # the end of a result we stopped ourselves
                return rows
            if getattr(err, "errno", None):
                raise get_mysql_exception(err.errno, msg=err.msg, sqlstate=err.sqlstate) from None
            raise InterfaceError(str(err)) from None
        return rows

    def _drain(self, cur) -> None:
        """Read what is left of a stopped result (pure-Python driver)."""
        try:
            while cur.fetchone() is not None:
                pass
        except Exception:  # the end of the stopped result
            pass
        try:
            if self.conn.unread_result:
                self.conn.consume_results()
        except Exception:
            pass

    @staticmethod
    def _fix_values(fields: list[_Field], rows: list) -> list:
        """Values the driver converts in a way the canonical types do not take."""
        fixes = {}
        for i, f in enumerate(fields):
            if f.flags & _SET_FLAG:
                # the driver turns SET values into Python sets (order lost): sorted members
                fixes[i] = lambda v: ",".join(sorted(v)) if isinstance(v, (set, frozenset)) else v
            elif f.code == _BIT:
                fixes[i] = lambda v: int.from_bytes(v, "big") if isinstance(v, (bytes, bytearray)) else v
        if not fixes or not rows:
            return rows
        out = []
        for row in rows:
            row = list(row)
            for i, fn in fixes.items():
                if row[i] is not None:
                    row[i] = fn(row[i])
            out.append(tuple(row))
        return out

    # the fast path ------------------------------------------------------------
    def _fast_eligible(self, statement: Statement) -> bool:
        if not self._fast_enabled or self._dirty:
            return False
        if self._statement_readonly or (self.options.readonly and not self.has_set_statement):
            return False  # connectorx's own session would be outside the read-only layer
        try:
            import connectorx  # noqa: F401
        except ImportError:
            return False
        code = _code_text(statement)
        if _USER_VARIABLE.search(code) or _SESSION_FUNCTIONS.search(code):
            return False  # reads this session's state
        from sqlnb.sql.guard import check_read_only

        if not check_read_only(statement, self.dialect).read_only or _calls_unknown_function(statement):
            return False
        return self._cx_reachable()

    def _cx_reachable(self) -> bool:
        """Once per connection: can connectorx connect at all?  It retries a failing connect
        for 30 s, so it gets a few seconds in a helper thread; past that the connection
        stays on the driver (e.g. an auth plugin or TLS setup connectorx does not speak)."""
        if self._cx_ok is None:
            import connectorx as cx

            outcome: dict[str, Any] = {}
            url = self._cx_url()

            def attempt() -> None:
                try:
                    cx.read_sql(url, "SELECT 1 AS ok", return_type="arrow")
                    outcome["ok"] = True
                except BaseException as exc:  # a Rust panic is a BaseException
                    outcome["error"] = exc

            thread = threading.Thread(target=attempt, name="sqlnb-connectorx-check", daemon=True)
            thread.start()
            thread.join(min(max(float(self.options.connect_timeout or 5), 1.0), 5.0))
            self._cx_ok = bool(outcome.get("ok"))
            if not self._cx_ok:
                why = self._scrub(str(outcome.get("error") or "no answer within the connect timeout"))
                log.warning(
                    "connectorx cannot reach %s (%s): large results use the driver",
                    self.spec.redacted_url(),
                    why,
                )
        return self._cx_ok

    def _probe(self, statement: Statement) -> list[_Field] | None:
        """Column metadata, returning no rows (None: the probe failed).  MariaDB still
        evaluates the query's derived table, so on a read-only connection the probe runs
        in the same read-only statement scope as the query itself."""
        raw = getattr(self.conn, "_cmysql", None)
        probe = statement.wrap("SELECT * FROM (", ") AS _sqlnb_probe WHERE 0")
        if self.read_only_now and self.has_set_statement:
            probe = probe.wrap("SET STATEMENT tx_read_only=1 FOR")
        cur = self.conn.cursor()
        try:
            cur.execute(self._sendable(probe))
            if raw is not None:
                fields = _fields_from_cext(raw.fetch_fields())
            else:
                fields = _fields_from_description(cur.description)
            cur.fetchall()
            return fields
        except Exception as exc:  # e.g. duplicate column names: the plain path decides
            log.debug("fast-path probe failed: %s", exc)
            return None
        finally:
            try:
                cur.close()
            except Exception:
                pass

    def _cx_url(self) -> str:
        """connectorx's URL: the same server, user and database, and TLS when the driver's
        connection has it (the driver encrypts whenever the server offers it).  Built for
        each call and not kept: it holds the password in clear text."""
        from urllib.parse import quote

        if self._cx_ssl_mode is None:
            cur = self.conn.cursor()
            try:
                cur.execute("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
                row = cur.fetchone()
            finally:
                cur.close()
            self._cx_ssl_mode = "REQUIRED" if row and row[1] else "DISABLED"
        k = self._kwargs
        auth = quote(k["user"], safe="")
        if k.get("password"):
            auth += ":" + quote(k["password"].reveal(), safe="")
        db = "/" + quote(k["database"], safe="") if k.get("database") else ""
        return f"mysql://{auth}@{k['host']}:{k['port']}{db}?ssl-mode={self._cx_ssl_mode}"

    def _execute_fast(self, statement: Statement, timeout: float | None) -> Result | None:
        import connectorx as cx

        fields = self._probe(statement)
        if not fields or not all(f.fast_ok for f in fields):
            return None
        tag = uuid.uuid4().hex
        settings = []
        if self.has_set_statement:
            if timeout:
                settings.append(f"max_statement_time={float(timeout):.6f}")
            if self.options.readonly:
                settings.append("tx_read_only=1")
        # connectorx sends the text as one prepared statement (COM_STMT_PREPARE: one
        # statement, the text as it is), on a connection of its own that ends with the call
        if settings:
            query = statement.wrap(f"SET STATEMENT {', '.join(settings)} FOR /* sqlnb:{tag} */")
        else:
            query = statement.wrap(f"/* sqlnb:{tag} */")
        watchdog = None
        if timeout and not self.has_set_statement:  # MySQL has no SET STATEMENT: kill it on time
            watchdog = threading.Timer(timeout, self._fast_timeout, (tag,))
            watchdog.daemon = True
        self._fast_tag = tag
        self._fast_timed_out = False
        try:
            if watchdog is not None:
                watchdog.start()
            table = cx.read_sql(self._cx_url(), self._sendable(query), return_type="arrow")
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # RuntimeError, or a Rust panic (pyo3 PanicException)
            server_error = _cx_server_error(exc)
            if self._fast_timed_out:
                raise errors.QueryTimeout(
                    f"Query exceeded the statement timeout of {timeout:g} s",
                    engine_message=self._scrub(str(exc)),
                ) from None
            if server_error is not None:
                raise server_error from None
            if self._cancel_requested:
                raise errors.QueryCancelled(
                    "Query cancelled",
                    engine_message=self._scrub(str(exc)),
                    hint="the connection is still usable",
                ) from None
            if "waiting for connection" in str(exc):
                self._cx_ok = False  # it could not connect this time: stop trying
            log.debug("connectorx could not read the result, using the driver: %s", self._scrub(str(exc)))
            return None
        finally:
            self._fast_tag = None
            if watchdog is not None:
                watchdog.cancel()
        if table.num_columns != len(fields):
            return None
        try:
            arrow = conform_arrow(table, [f.arrow_type for f in fields], [f.name for f in fields])
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
            log.debug("connectorx result does not fit the column types, using the driver: %s", exc)
            return None
        columns = [ResultColumn(f.name, f.type_name) for f in fields]
        self.last_path = "connectorx"
        return Result(columns, arrow, arrow.num_rows, False)

    def _fast_timeout(self, tag: str) -> None:
        if self._fast_tag == tag:
            self._fast_timed_out = True
            self._kill(tag=tag)

    # ---- catalog ----------------------------------------------------------------
    def _load_catalog(self) -> Catalog:
        cur = self.conn.cursor()
        try:
            cur.execute("SELECT DATABASE()")
            database = cur.fetchone()[0]
            if database:
                where, args = "{s} = %s", (database,)
            else:
                where, args = ("{s} NOT IN ('information_schema', 'mysql', 'performance_schema', 'sys')"), ()

            def q(sql: str, col: str) -> list:
                cur.execute(sql.replace("{where}", where.format(s=col)), args or None)
                return cur.fetchall()

            tables = q(
                "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, TABLE_ROWS, TABLE_COMMENT "
                "FROM information_schema.TABLES WHERE {where} ORDER BY TABLE_SCHEMA, TABLE_NAME",
                "TABLE_SCHEMA",
            )
            table_rows = []
            for schema, name, ttype, nrows, comment in tables:
                kind = "view" if "VIEW" in str(ttype).upper() else "table"
                if kind == "view":  # views have no row estimate; MySQL's comment says 'VIEW'
                    nrows, comment = None, None
                table_rows.append((schema, name, kind, nrows, comment or None))
            cols = q(
                "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, "
                "COLUMN_DEFAULT, COLUMN_COMMENT FROM information_schema.COLUMNS WHERE {where} "
                "ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION",
                "TABLE_SCHEMA",
            )
            column_rows = []
            for schema, table, name, ctype, nullable, default, comment in cols:
                if default is not None and str(default).upper() == "NULL":
                    default = None  # MariaDB reports "no default" of a nullable column as 'NULL'
                column_rows.append((schema, table, name, _text(ctype), nullable, default, comment or None))
            # three single-view queries joined here: MariaDB joins information_schema views
            # without indexes (the joined form took 1.2-1.7 s for 1,000 tables, these 0.05 s)
            kinds = {
                (schema, table, name): ctype
                for schema, table, name, ctype in q(
                    "SELECT TABLE_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, CONSTRAINT_TYPE "
                    "FROM information_schema.TABLE_CONSTRAINTS WHERE {where} "
                    "AND CONSTRAINT_TYPE IN ('PRIMARY KEY', 'UNIQUE', 'FOREIGN KEY')",
                    "TABLE_SCHEMA",
                )
            }
            keys = q(
                "SELECT TABLE_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, COLUMN_NAME, "
                "REFERENCED_TABLE_SCHEMA, REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME "
                "FROM information_schema.KEY_COLUMN_USAGE WHERE {where} "
                "ORDER BY TABLE_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION",
                "TABLE_SCHEMA",
            )
            grouped: dict[tuple, dict] = {}
            for schema, table, cname, col, rschema, rtable, rcol in keys:
                ctype = kinds.get((schema, table, cname))
                if ctype is None:
                    continue
                entry = grouped.setdefault(
                    (schema, table, cname),
                    {
                        "kind": {"PRIMARY KEY": "p", "UNIQUE": "u", "FOREIGN KEY": "f"}[ctype],
                        "cols": [],
                        "rschema": rschema,
                        "rtable": rtable,
                        "rcols": [],
                    },
                )
                entry["cols"].append(col)
                if rcol is not None:
                    entry["rcols"].append(rcol)
            constraint_rows = [
                (
                    s,
                    t,
                    c,
                    e["kind"],
                    e["cols"],
                    e["rschema"] if e["kind"] == "f" else None,
                    e["rtable"] if e["kind"] == "f" else None,
                    e["rcols"],
                )
                for (s, t, c), e in grouped.items()
            ]
            stats = q(
                "SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, NON_UNIQUE, COLUMN_NAME "
                "FROM information_schema.STATISTICS WHERE {where} "
                "ORDER BY TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX",
                "TABLE_SCHEMA",
            )
            indexes: dict[tuple, dict] = {}
            for schema, table, iname, non_unique, col in stats:
                entry = indexes.setdefault(
                    (schema, table, iname), {"unique": not int(non_unique), "cols": []}
                )
                entry["cols"].append(col if col is not None else "(expression)")
            index_rows = [(s, t, i, e["unique"], e["cols"]) for (s, t, i), e in indexes.items()]
        finally:
            cur.close()
        tables_out = assemble_tables(table_rows, column_rows, constraint_rows, index_rows)
        return Catalog(self.dialect, tables_out, default_schema=database)

    # ---- cancelling -------------------------------------------------------------
    def _cancel(self) -> None:
        if not self._running:
            return
        tag = self._fast_tag
        self._kill(tag=tag, token=self._exec_token)

    def _kill(self, tag: str | None = None, token: int | None = None) -> None:
        """KILL QUERY from a second, short-lived connection; repeated until the statement
        returns (a kill that lands before the query reaches the server is lost)."""
        side = self._open(connection_timeout=2)
        try:
            cur = side.cursor()
            deadline = time.monotonic() + 2.0
            while time.monotonic() < deadline:
                if token is not None and (not self._running or self._exec_token != token):
                    return
                if tag is not None:
                    if self._fast_tag != tag:
                        return
                    cur.execute(
                        "SELECT ID FROM information_schema.PROCESSLIST "
                        "WHERE INFO LIKE %s AND ID <> CONNECTION_ID()",
                        (f"%sqlnb:{tag}%",),
                    )
                    ids = [r[0] for r in cur.fetchall()]
                else:
                    ids = [self.connection_id]
                for pid in ids:
                    try:
                        cur.execute(f"KILL QUERY {int(pid)}")
                    except Exception:  # it ended meanwhile
                        pass
                if token is None and tag is None:
                    return
                time.sleep(0.1)
        finally:
            try:
                side.close()
            except Exception:
                pass

    def _after_cancel(self) -> None:
        """After an interrupt the result may be half read: drop it, or reconnect."""
        try:
            if self.conn.unread_result:
                self.conn.consume_results()
            cur = self.conn.cursor()
            cur.execute("SELECT 1")
            cur.fetchall()
            cur.close()
        except Exception:
            try:
                self.conn.close()
            except Exception:
                pass
            self.conn = self._open()
            self._setup_session()

    def _read_only_scope(self):
        # a read-only transaction (MySQL and MariaDB); MariaDB statements also run as
        # SET STATEMENT tx_read_only=1 FOR ... and INTO OUTFILE is refused (read_only_now)
        return self._read_only_transaction(
            self.conn.in_transaction, lambda: self._run("START TRANSACTION READ ONLY"), self.conn.rollback
        )

    def _close(self) -> None:
        self.conn.close()

    # ---- errors -----------------------------------------------------------------
    def _classify(self, exc: BaseException) -> errors.SqlnbError | None:
        errno = getattr(exc, "errno", None)
        msg = getattr(exc, "msg", None) or str(exc)
        msg = self._scrub(" ".join(str(msg).split()))
        if isinstance(exc, ImportError):
            return errors.MissingDriverError(msg, hint='run: pip install "sqlnb[mysql]"')
        cls = _ERRNO_CLASSES.get(errno) if isinstance(errno, int) else None
        if errno in (2003, 2002, 2005):
            return errors.ConnectFailed(msg, hint="check that the server is running and reachable")
        if errno == 1792 or (errno == 1290 and "read-only" in msg.lower()):
            return errors.PermissionDenied(f"{msg} (the connection is read-only)")
        if cls is not None:
            return cls(msg)
        if errno is None and "not available" in msg.lower():
            return errors.ConnectionLost(msg)
        return None


def _scrubbed(conn):
    """The driver keeps the password on its connection for its own reconnect, which sqlnb
    never uses (it opens a new connection): drop it, so it lives in sqlnb's Secret only."""
    for name in ("_password", "_password1", "_password2", "_password3"):
        if getattr(conn, name, None):
            setattr(conn, name, "")
    return conn


def _cx_server_error(exc: BaseException):
    """A MySQL server error reported through connectorx, as the driver's exception."""
    m = _CX_ERROR.search(str(exc))
    if not m:
        return None
    from mysql.connector.errors import get_mysql_exception

    return get_mysql_exception(int(m.group(1)), msg=m.group(3).strip(), sqlstate=m.group(2))
