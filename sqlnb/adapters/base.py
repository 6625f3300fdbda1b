"""The adapter contract: connect, execute, catalog, cancel, close.

One subclass per engine lives next to this module.  Engine differences are data on the
subclass (``dialect``, ``extra``, capability flags) plus a handful of small hooks
(``_connect``, ``_execute``, ``_load_catalog``, ``_cancel``, ``_close``, ``_classify``).
Everything that is the same for every engine — timing, the read-only guard, timeouts by
interruption, kernel-interrupt cancellation, error classification fallbacks, catalog
caching — lives here once.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import threading
import time
import weakref
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Iterable, Mapping, Sequence

import pyarrow as pa

from sqlnb import errors
from sqlnb.adapters.interrupt import interrupt_watcher
from sqlnb.adapters.spec import ConnectionSpec, ConnectOptions
from sqlnb.sql.statement import Statement, accept, unchecked
from sqlnb.sql.text import bind_literals, bind_params

if TYPE_CHECKING:  # pragma: no cover
    from sqlnb.sql.functions import FunctionPolicy
    from sqlnb.sql.live import SessionFunctions


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class ResultColumn:
    name: str
    type: str  # the engine's type name, lower case ("integer", "varchar", "timestamp with time zone")


class Result:
    """The outcome of one statement.

    Data is held as an Arrow table (``arrow``); ``rows`` and ``to_pandas()`` convert on
    demand.  For statements that return no rows, ``columns`` is empty and ``row_count``
    is the number of affected rows (or -1 when the driver does not know).
    """

    __slots__ = ("columns", "arrow", "row_count", "truncated", "elapsed", "statement", "notices", "_df")

    def __init__(self, columns: Sequence[ResultColumn], arrow: pa.Table | None,
                 row_count: int, truncated: bool = False, elapsed: float = 0.0,
                 statement: str = ""):
        self.columns = list(columns)
        self.arrow = arrow
        self.row_count = row_count
        self.truncated = truncated
        self.elapsed = elapsed
        self.statement = statement
        self.notices: list[str] = []  # things the user should know about this result
        self._df = None

    @property
    def returns_rows(self) -> bool:
        return self.arrow is not None

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def rows(self) -> list[tuple]:
        if self.arrow is None:
            return []
        cols = [col.to_pylist() for col in self.arrow.columns]
        return list(zip(*cols)) if cols else []

    def to_pandas(self):
        if self._df is None:
            self._df = arrow_to_pandas(self.arrow) if self.arrow is not None else _empty_frame()
        return self._df

    @property
    def df(self):
        return self.to_pandas()

    def __repr__(self) -> str:
        return (f"Result(columns={self.column_names}, row_count={self.row_count}, "
                f"truncated={self.truncated}, elapsed={self.elapsed:.3f}s)")


def _empty_frame():
    import pandas as pd

    return pd.DataFrame()


def arrow_to_pandas(table: pa.Table):
    """The one Arrow → pandas conversion every path goes through, so dtypes agree.

    - text becomes pandas' Arrow-backed string dtype (pandas 3's ``str``; no Python
      objects, so a million strings convert in milliseconds);
    - a decimal column becomes int64 (scale 0) or float64 when every value survives the
      round trip exactly (up to 15 significant digits), else stays Python ``Decimal``
      objects: no precision is ever lost, and the common case is as fast as a float column;
    - dates stay ``datetime.date`` objects, timestamps keep microseconds.
    """
    import pyarrow.compute as pc

    for i, col in enumerate(table.columns):
        if pa.types.is_decimal(col.type):
            as_float = _lossless_float(col, pc)
            if as_float is not None:
                table = table.set_column(i, table.field(i).name, as_float)
    return table.to_pandas(date_as_object=True, coerce_temporal_nanoseconds=False,
                           types_mapper=_pandas_type_for)


def _lossless_float(col, pc):
    if col.type.scale == 0:  # whole numbers (e.g. DuckDB's sum of integers): int64 if they fit
        try:
            return pc.cast(col, pa.int64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OverflowError):
            pass
    try:
        as_float = pc.cast(col, pa.float64())
        back = pc.cast(as_float, col.type, safe=False)
        same = pc.all(pc.equal(back, col)).as_py()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OverflowError):
        return None
    return as_float if same in (True, None) else None


def _string_dtype():
    import numpy as np
    import pandas as pd

    try:
        return pd.StringDtype("pyarrow", na_value=np.nan)  # pandas >= 2.3: the future ``str``
    except (TypeError, ImportError):
        return None  # older pandas: Python objects, as before


_STRING_DTYPE: list = []


def _pandas_type_for(typ: pa.DataType):
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        if not _STRING_DTYPE:
            _STRING_DTYPE.append(_string_dtype())
        return _STRING_DTYPE[0]
    return None


def _canonical_array(values: list, type_name: str = "") -> pa.Array:
    """Infer an Arrow array from driver values, normalising the awkward ones.

    UUIDs become strings; parsed JSON (dict/list) becomes its JSON text; memoryview and
    bytearray become bytes; timezone-aware datetimes are converted to UTC.
    """
    import datetime as dt
    import decimal
    import json
    import uuid

    sample = next((v for v in values if v is not None), None)
    if isinstance(sample, uuid.UUID):
        values = [None if v is None else str(v) for v in values]
    elif isinstance(sample, (dict, list)) or (type_name in ("json", "jsonb", "variant", "object", "array")
                                              and not isinstance(sample, str) and sample is not None):
        values = [None if v is None else json.dumps(v) for v in values]
    elif isinstance(sample, (memoryview, bytearray)):
        values = [None if v is None else bytes(v) for v in values]
    elif isinstance(sample, dt.datetime) and sample.tzinfo is not None:
        values = [None if v is None else v.astimezone(dt.timezone.utc) for v in values]
        return pa.array(values, type=pa.timestamp("us", tz="UTC"))
    elif isinstance(sample, decimal.Decimal):
        return _decimal_array(values)
    elif isinstance(sample, dt.timedelta):
        return pa.array(values, type=pa.duration("us"))
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        # mixed or exotic values: keep them readable rather than failing the query
        return pa.array([None if v is None else str(v) for v in values], type=pa.string())


def _decimal_array(values: list) -> pa.Array:
    """Decimals with one scale for the column (the largest seen), like a typed column."""
    import decimal

    scale = 0
    digits = 1
    for v in values:
        if v is None or not v.is_finite():
            continue
        sign, ds, exp = v.as_tuple()
        scale = max(scale, -exp if exp < 0 else 0)
        digits = max(digits, len(ds) + (exp if exp > 0 else 0))
    precision = max(digits - 0, 1) + scale
    if any(v is not None and not v.is_finite() for v in values) or precision > 76:
        return pa.array([None if v is None else str(v) for v in values], type=pa.string())
    q = decimal.Decimal(1).scaleb(-scale)
    values = [None if v is None else v.quantize(q) for v in values]
    typ = pa.decimal128(min(max(precision, scale + 1), 38), scale) if precision <= 38 else pa.decimal256(precision, scale)
    return pa.array(values, type=typ)


def rows_to_arrow(columns: Sequence[ResultColumn], rows: Sequence[Sequence[Any]],
                  types: Sequence[pa.DataType | None] | None = None) -> pa.Table:
    """Build the canonical Arrow table from plain driver rows.

    ``types`` (optional, one per column, None = infer) are the Arrow types the engine's
    column metadata calls for, so that an adapter's plain path and its Arrow-native path
    (cast with :func:`conform_arrow` to the same types) give identical tables.  Values
    that do not fit the given type fall back to inference.
    """
    names = _unique_names([c.name for c in columns])
    if rows and columns:
        known = list(types) if types is not None and len(types) == len(columns) else [None] * len(columns)
        if any(t is None for t in known):  # untyped columns: their type from the first rows
            sample = rows[:100]
            known = [t if t is not None else _simple_type([r[i] for r in sample])
                     for i, t in enumerate(known)]
    else:
        known = []
    if known and all(t is not None for t in known):
        # every type known: one C++ pass over the row tuples, no Python transposition
        # (about 2x faster for 1M rows); anything it does not take goes column by column
        try:
            struct = pa.array(rows, type=pa.struct([pa.field(str(i), t) for i, t in enumerate(known)]))
            return pa.Table.from_arrays(struct.flatten(), names=names)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError,
                TypeError, ValueError):
            pass
    if rows:
        cols = [list(c) for c in zip(*rows)]
    else:
        cols = [[] for _ in columns]
    arrays = []
    for i, (col, values) in enumerate(zip(columns, cols)):
        typ = types[i] if types is not None and i < len(types) else None
        if typ is not None:
            arr = _typed_array(values, typ)
            if arr is not None:
                arrays.append(arr)
                continue
        if not values:
            arrays.append(pa.array([], type=pa.null()))
        else:
            arrays.append(_canonical_array(values, col.type))
    return pa.Table.from_arrays(arrays, names=names)


_SIMPLE_TYPES = {bool: pa.bool_(), int: pa.int64(), float: pa.float64(), str: pa.string(),
                 bytes: pa.binary()}


def _simple_type(values: list) -> pa.DataType | None:
    """The Arrow type inference would give values of one plain Python type (None: other
    or mixed types, or no values — those take the column-by-column path)."""
    kinds = {type(v) for v in values if v is not None}
    if kinds == {int, float}:  # e.g. SQLite NUMERIC affinity: whole numbers come back as int
        return pa.float64()
    if len(kinds) != 1:
        return None
    return _SIMPLE_TYPES.get(kinds.pop())


def _typed_array(values: list, typ: pa.DataType) -> pa.Array | None:
    """``values`` as an array of ``typ`` after the same normalisations as inference
    (None when they do not fit, so the caller infers instead)."""
    import datetime as dt
    import json

    sample = next((v for v in values if v is not None), None)
    if sample is not None:
        if isinstance(sample, (dict, list)) and (pa.types.is_string(typ) or pa.types.is_large_string(typ)):
            values = [None if v is None else json.dumps(v) for v in values]
        elif isinstance(sample, (memoryview, bytearray)):
            values = [None if v is None else bytes(v) for v in values]
        elif isinstance(sample, dt.datetime) and sample.tzinfo is not None:
            values = [None if v is None else v.astimezone(dt.timezone.utc) for v in values]
    try:
        return pa.array(values, type=typ)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError, TypeError,
            ValueError):
        return None


def conform_arrow(table: pa.Table, types: Sequence[pa.DataType | None],
                  names: Sequence[str] | None = None, strict: bool = True) -> pa.Table:
    """Normalise an Arrow-native result and cast its columns to ``types`` (None: keep the
    canonical type), giving the same table as :func:`rows_to_arrow` with those types.
    A value that does not fit raises ``pa.ArrowInvalid`` (the caller falls back to its
    plain path), or with ``strict=False`` leaves that column as it came."""
    table = normalize_arrow(table)
    arrays = []
    for i, col in enumerate(table.columns):
        typ = types[i] if i < len(types) else None
        if typ is not None and col.type != typ:
            try:
                col = col.cast(typ)  # safe cast: raises rather than lose data
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                if strict:
                    raise
        arrays.append(col)
    out_names = _unique_names(list(names) if names is not None else table.column_names)
    return pa.Table.from_arrays(arrays, names=out_names)


def _unique_names(names: list[str]) -> list[str]:
    """Arrow and pandas cope badly with duplicate column names: suffix them (a, a_1)."""
    seen: dict[str, int] = {}
    out = []
    for n in names:
        n = n if n else "?column?"
        if n in seen:
            seen[n] += 1
            out.append(f"{n}_{seen[n]}")
        else:
            seen[n] = 0
            out.append(n)
    return out


def normalize_arrow(table: pa.Table) -> pa.Table:
    """Bring a table from an Arrow-native path to the canonical types.

    Canonical: integers are int64 and floats float64 (what plain driver values give),
    strings are ``string`` (not large/view), timestamps are microseconds with UTC for
    zone-aware ones, UUID and JSON extension types are text, binary is ``binary``.
    """
    fields = []
    arrays = []
    changed = False
    for name, col in zip(table.column_names, table.columns):
        typ = col.type
        target = _canonical_type(typ)
        if target is not None and target != typ:
            changed = True
            if isinstance(typ, pa.BaseExtensionType):
                col = pa.chunked_array([c.storage for c in col.chunks], type=typ.storage_type)
                typ = typ.storage_type
            if pa.types.is_fixed_size_binary(typ) and typ.byte_width == 16 and target == pa.string():
                import uuid

                col = pa.array([None if v is None else str(uuid.UUID(bytes=v)) for v in col.to_pylist()],
                               type=pa.string())
            else:
                col = col.cast(target)
        fields.append(pa.field(name, col.type))
        arrays.append(col)
    if not changed:
        return table
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def _canonical_type(typ: pa.DataType) -> pa.DataType | None:
    if isinstance(typ, pa.BaseExtensionType):
        ext = getattr(typ, "extension_name", "")
        if ext in ("arrow.uuid",):
            return pa.string()
        if ext in ("arrow.json", "arrow.opaque"):
            return pa.string()
        return _canonical_type(typ.storage_type) or typ.storage_type
    if pa.types.is_integer(typ) and typ != pa.int64() and typ != pa.uint64():
        return pa.int64()  # one integer width, as plain driver values give
    if pa.types.is_floating(typ) and typ != pa.float64():
        return pa.float64()
    if pa.types.is_large_string(typ) or pa.types.is_string_view(typ):
        return pa.string()
    if pa.types.is_large_binary(typ) or pa.types.is_binary_view(typ):
        return pa.binary()
    if pa.types.is_timestamp(typ):
        tz = "UTC" if typ.tz else None
        if typ.unit != "us" or (typ.tz and typ.tz != "UTC"):
            return pa.timestamp("us", tz=tz)
    if pa.types.is_time(typ) and typ != pa.time64("us"):
        return pa.time64("us")
    if pa.types.is_duration(typ) and typ.unit != "us":
        return pa.duration("us")
    if pa.types.is_dictionary(typ):
        return typ.value_type
    return None


def fetch_rows(cursor: Any, max_rows: int | None) -> tuple[list, bool]:
    """A DB-API cursor's rows, at most ``max_rows`` of them, and whether more were there."""
    if max_rows is None:
        return cursor.fetchall(), False
    rows = cursor.fetchmany(max_rows + 1)
    return rows[:max_rows], len(rows) > max_rows


def empty_result(statement: str, row_count: int = -1, elapsed: float = 0.0) -> Result:
    return Result([], None, row_count, False, elapsed, statement)


# ---------------------------------------------------------------------------
# Catalog
# ---------------------------------------------------------------------------

@dataclass(slots=True)
class Column:
    name: str
    type: str
    nullable: bool = True
    default: str | None = None
    comment: str | None = None


@dataclass(slots=True)
class ForeignKey:
    name: str | None
    columns: list[str]
    ref_schema: str | None
    ref_table: str
    ref_columns: list[str]


@dataclass(slots=True)
class Index:
    name: str
    columns: list[str]
    unique: bool = False


@dataclass
class Table:
    schema: str | None
    name: str
    kind: str = "table"  # "table" or "view"
    columns: list[Column] = field(default_factory=list)
    primary_key: list[str] = field(default_factory=list)
    unique: list[list[str]] = field(default_factory=list)
    foreign_keys: list[ForeignKey] = field(default_factory=list)
    indexes: list[Index] = field(default_factory=list)
    row_count: int | None = None  # estimate
    comment: str | None = None

    @property
    def qualified_name(self) -> str:
        return f"{self.schema}.{self.name}" if self.schema else self.name

    def column(self, name: str) -> Column | None:
        for c in self.columns:
            if c.name == name:
                return c
        low = name.lower()
        return next((c for c in self.columns if c.name.lower() == low), None)


@dataclass
class Catalog:
    dialect: str
    tables: list[Table]
    default_schema: str | None = None
    loaded_at: float = field(default_factory=time.time)
    elapsed: float = 0.0

    @property
    def schemas(self) -> list[str]:
        return sorted({t.schema for t in self.tables if t.schema})

    def find(self, name: str) -> Table | None:
        """Look a table up by ``name`` or ``schema.name``, exactly then case-insensitively."""
        schema, _, bare = name.rpartition(".")
        matches = [t for t in self.tables if t.name == bare and (not schema or t.schema == schema)]
        if not matches:
            low, slow = bare.lower(), schema.lower()
            matches = [t for t in self.tables
                       if t.name.lower() == low and (not schema or (t.schema or "").lower() == slow)]
        if len(matches) > 1 and not schema:
            preferred = [t for t in matches if t.schema == self.default_schema]
            matches = preferred or matches
        return matches[0] if matches else None


def assemble_tables(table_rows: Iterable[Sequence[Any]], column_rows: Iterable[Sequence[Any]],
                    constraint_rows: Iterable[Sequence[Any]] = (),
                    index_rows: Iterable[Sequence[Any]] = ()) -> list[Table]:
    """Build :class:`Table` objects from the rows of a few set-based catalog queries.

    - ``table_rows``: (schema, name, kind, row_count_estimate, comment)
    - ``column_rows``: (schema, table, column, type, nullable, default, comment), in order
    - ``constraint_rows``: (schema, table, constraint_name, kind, columns, ref_schema,
      ref_table, ref_columns) with kind in {"p", "u", "f"} and column lists as sequences
    - ``index_rows``: (schema, table, index_name, unique, columns)
    """
    tables: dict[tuple, Table] = {}
    for schema, name, kind, rows, comment in table_rows:
        kind = "view" if str(kind).lower() in ("v", "view", "m", "materialized view") else "table"
        tables[(schema, name)] = Table(schema, name, kind,
                                       row_count=int(rows) if rows is not None and int(rows) >= 0 else None,
                                       comment=comment or None)
    get = tables.get
    for schema, table, name, typ, nullable, default, comment in column_rows:  # the hot loop
        t = get((schema, table))
        if t is not None:
            t.columns.append(Column(
                name, (typ if type(typ) is str else str(typ)).lower(),
                nullable if type(nullable) is bool else _truthy(nullable),
                default if default is None or type(default) is str else str(default),
                comment or None))
    for schema, table, cname, kind, cols, ref_schema, ref_table, ref_cols in constraint_rows:
        t = tables.get((schema, table))
        if t is None:
            continue
        cols = list(cols)
        if kind == "p":
            t.primary_key = cols
        elif kind == "u":
            t.unique.append(cols)
        elif kind == "f":
            t.foreign_keys.append(ForeignKey(cname, cols, ref_schema, ref_table, list(ref_cols)))
    for schema, table, iname, unique, cols in index_rows:
        t = tables.get((schema, table))
        if t is not None:
            t.indexes.append(Index(iname, list(cols), _truthy(unique)))
    return list(tables.values())


def _truthy(v: Any) -> bool:
    if isinstance(v, str):
        return v.strip().upper() in ("YES", "Y", "TRUE", "T", "1")
    return bool(v)


# ---------------------------------------------------------------------------
# The adapter
# ---------------------------------------------------------------------------

_OPEN: "weakref.WeakSet[Adapter]" = weakref.WeakSet()


@atexit.register
def _close_open_adapters() -> None:
    """Close what is still open while the interpreter can still run driver code (ADBC
    and others complain from their finalizers during interpreter teardown)."""
    for adapter in list(_OPEN):
        adapter.close()


# Adapters whose password the drivers' log records must not show (open or connecting).
_WITH_SECRETS: "weakref.WeakSet[Adapter]" = weakref.WeakSet()
_FILTERED_LOGGERS: set[str] = set()


class _ScrubSecretsFilter:
    """A logging filter for the drivers' loggers: a record whose text holds the password of
    an adapter (e.g. a driver echoing a server error at DEBUG) gets it replaced by ``***``.
    Filters run only for records that are logged at all, so this costs nothing while the
    drivers' DEBUG logging is off."""

    def filter(self, record) -> bool:
        adapters = [a for a in list(_WITH_SECRETS) if a.spec.password]
        if not adapters:
            return True
        try:
            text = record.getMessage()
        except Exception:
            return True
        scrubbed = text
        for adapter in adapters:
            scrubbed = adapter._scrub(scrubbed)
        if scrubbed != text:
            record.msg, record.args = scrubbed, None
        return True


_SCRUB_FILTER = _ScrubSecretsFilter()


def _filter_driver_logs(package: str) -> None:
    """Put the scrubbing filter on every logger of ``package`` (filters are not inherited:
    each module logger needs its own)."""
    import logging

    names = [n for n in list(logging.root.manager.loggerDict)
             if (n == package or n.startswith(package + ".")) and n not in _FILTERED_LOGGERS]
    for name in names:
        logging.getLogger(name).addFilter(_SCRUB_FILTER)
        _FILTERED_LOGGERS.add(name)


@contextlib.contextmanager
def gc_paused():
    """Pause the cyclic garbage collector while a result is fetched and converted.

    A million fetched rows are a million new tuples; each allocation burst triggers full
    collections that walk all of them again (measured: the same fetch and conversion took
    2-3x longer with collection on).  Rows are freed by reference counting regardless.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


_DEFAULT_PORTS = {"postgresql": 5432, "mysql": 3306, "redshift": 5439}


class Adapter(ABC):
    """One open connection to one engine.

    Subclasses set the class attributes and implement the underscore hooks.  The public
    methods add the behaviour every engine shares.
    """

    scheme: ClassVar[str]
    dialect: ClassVar[str]  # sqlglot dialect name
    extra: ClassVar[str]  # pip extra that installs the driver
    driver_module: ClassVar[str]  # import name of the driver, for missing-driver errors
    display_name: ClassVar[str]
    native_timeout: ClassVar[bool] = True  # engine enforces statement_timeout itself
    paramstyle: ClassVar[str] = "named"  # how the driver wants :name parameters
    #: connection parameters that are part of which database this is (see identity())
    identity_params: ClassVar[tuple[str, ...]] = ()

    def __init__(self, spec: ConnectionSpec, options: ConnectOptions | None = None):
        self.spec = spec
        self.options = options or ConnectOptions()
        self._catalog: Catalog | None = None
        self._timed_out = False
        self._cancel_requested = False
        self._lost = False  # the session died: reconnect before the next statement
        self._statement_readonly = False
        self._lock = threading.RLock()
        self._functions: SessionFunctions | None = None  # the guard's policy, per session
        self.closed = False
        if self.spec.password:
            _WITH_SECRETS.add(self)
            try:
                __import__(self.driver_module)
            except Exception:
                pass  # a missing driver says so from _connect
            _filter_driver_logs(self.driver_module.split(".")[0])
        try:
            self._connect()
        except errors.SqlnbError:
            raise
        except Exception as exc:  # classify driver errors on connect too
            raise self._connect_error(exc) from None
        if self.spec.password:  # loggers of driver modules that connecting imported
            _filter_driver_logs(self.driver_module.split(".")[0])
        _OPEN.add(self)

    # ---- hooks --------------------------------------------------------------------
    @abstractmethod
    def _connect(self) -> None: ...

    @abstractmethod
    def _execute(self, statement: Statement, params: Any, max_rows: int | None,
                 timeout: float | None) -> Result:
        """Run ``statement`` (its parameters already in the driver's form, see
        :meth:`_bind`).  Every text this sends to the driver for the statement passes
        :meth:`_sendable`: the statement itself, or one of its :meth:`Statement.wrap`
        wrappers, never a changed copy."""

    #: the driver interpolates parameter values into the text on the client (MySQL,
    #: Snowflake): the server would run a text the guard never saw, so a guarded
    #: statement's values go into the text as :meth:`_literal` writes them
    interpolates_parameters: ClassVar[bool] = False

    def _literal(self, value: Any) -> str:
        """``value`` as a SQL literal of this engine (where interpolates_parameters)."""
        raise NotImplementedError

    def _bind(self, sql: str, params: Mapping[str, Any] | None,
              guarded: bool) -> tuple[str, Any]:
        """The statement's text with ``:name`` parameters in the driver's placeholder style,
        and the values in the driver's form (only the placeholders change; values travel
        apart from the text).  The guard checks this text, as sent: where the driver would
        change the text itself (:attr:`interpolates_parameters`), a guarded statement's
        values are bound into the text here instead, so the guard sees them."""
        if guarded and params and self.interpolates_parameters:
            return bind_literals(sql, params, self.dialect, self._literal), None
        return bind_params(sql, params, self.paramstyle, self.dialect)

    def _statement(self, sql: str, params: Mapping[str, Any] | None,
                   guarded: bool) -> tuple[Statement, Any]:
        """The statement to send and its bound parameters: for a guarded statement (a
        read-only connection, or ``readonly=True``) the text the guard accepted, else the
        text as written."""
        wire, bound = self._bind(sql, params, guarded)
        if not guarded:
            return unchecked(wire, self.dialect), bound
        where = "on a read-only connection" if self.options.readonly else "as read-only"
        return accept(wire, self.dialect, self.guard_functions(), where=where), bound

    def _several_statements(self, count: int, reader: str) -> errors.SqlnbError:
        """The error for a text ``reader`` (the engine's parser, or sqlnb's splitter where
        no engine can be asked) reads as ``count`` statements: nothing of it has run."""
        return errors.UsageError(
            f"{reader} reads {count} statements in this text; sqlnb sends one statement per "
            "call, so none of them ran", dialect=self.dialect,
            hint="run the statements one at a time (a %%sql cell splits a cell into "
                 "statements)")

    def _sendable(self, text: Any) -> str:
        """The one check between sqlnb and a driver for every statement a user or the
        agent runs: the text must be the :class:`Statement` this connection built for it
        (or a wrapper :meth:`Statement.wrap` made and the guard checked again), and while
        a guarded statement runs, one the guard accepted.  Anything else (a copy with
        comments stripped, a re-joined text) is refused before the driver sees it."""
        if not isinstance(text, Statement) or text.dialect != self.dialect:
            raise errors.ReadOnlyViolation(
                "Refused: sqlnb was about to send a text other than the statement it "
                "built and checked", reason="the text differs from the checked statement",
                dialect=self.dialect, hint="this is a bug in sqlnb; please report it")
        if self.read_only_now and not text.accepted:
            raise errors.ReadOnlyViolation(
                "Refused: the statement was not checked by the read-only guard",
                reason="not checked by the guard", dialect=self.dialect,
                hint="this is a bug in sqlnb; please report it")
        return str.__str__(text)

    @abstractmethod
    def _load_catalog(self) -> Catalog: ...

    @abstractmethod
    def _cancel(self) -> None: ...

    @abstractmethod
    def _close(self) -> None: ...

    def _classify(self, exc: BaseException) -> errors.SqlnbError | None:
        """Map a driver exception to a classified error (None: use the generic rules)."""
        return None

    def _require_file_for_readonly(self, path: str) -> None:
        """File engines: a read-only connection must not create a missing database."""
        import os

        if self.options.readonly and not os.path.exists(path):
            raise errors.ConfigurationError(
                f"{self.display_name} database {path!r} does not exist",
                hint="a read-only connection cannot create it; check the path")

    def _reconnect(self) -> None:
        """Open a new session after the old one was lost (the catalog cache stays)."""
        try:
            self._close()
        except Exception:
            pass
        try:
            self._connect()
        except errors.SqlnbError:
            raise
        except Exception as exc:
            raise self._connect_error(exc) from None
        self._lost = False

    def _after_cancel(self) -> None:
        """Restore the connection after an interrupt (e.g. reconnect); default: nothing."""

    @abstractmethod
    def _read_only_scope(self) -> contextlib.AbstractContextManager:
        """Make the session read-only for one statement on a read-write connection (a
        read-only transaction rolled back afterwards, ``PRAGMA query_only``, ...): the
        second safety layer under the guard for ``execute(..., readonly=True)``."""

    @contextlib.contextmanager
    def _read_only_transaction(self, in_transaction: bool, begin, end):
        """A read-only transaction around one statement: ``begin()`` opens it, ``end()``
        rolls it back whatever happened.  Refused inside the user's own open transaction,
        which the rollback would end."""
        if in_transaction:
            raise self._open_transaction_error()
        begin()
        try:
            yield
        finally:
            try:
                end()
            except Exception:
                pass

    def _run(self, sql: str) -> None:
        """Run a statement of sqlnb's own (no result) through a DB-API cursor."""
        cur = self.conn.cursor()
        try:
            cur.execute(sql)
        finally:
            cur.close()

    def _open_transaction_error(self, engine_message: str | None = None) -> errors.SqlnbError:
        return errors.UsageError(
            "The connection is inside an open transaction, so a query cannot run in a "
            "read-only transaction of its own", dialect=self.dialect, engine_message=engine_message,
            hint="COMMIT or ROLLBACK in a %%sql cell first")

    def guard_functions(self) -> FunctionPolicy | None:
        """The function policy the read-only guard applies here: built from the engine's
        own metadata (pg_proc, duckdb_functions()) once per session, or None where the
        engine publishes none (see :mod:`sqlnb.sql.functions` and :mod:`sqlnb.sql.live`)."""
        if self._functions is None:
            from sqlnb.sql.live import SessionFunctions

            self._functions = SessionFunctions(self.dialect, self._metadata_rows,
                                               engine=self.display_name,
                                               readonly=self.options.readonly)
        return self._functions.policy(getattr(self, "conn", None))

    def _catalog_rows(self, sql: str) -> Sequence[Sequence[Any]]:
        """The rows of a query of sqlnb's own on the engine's metadata, run on the
        connection as it is (no guard, no read-only scope): the catalog queries of engines
        that share them, and the guard's function policy (engines that publish one)."""
        raise NotImplementedError(f"{type(self).__name__} reads no metadata by query")

    def _metadata_rows(self, sql: str) -> Sequence[Sequence[Any]]:
        """:meth:`_catalog_rows` one statement at a time on this connection (a driver
        connection is not safe to share between threads), for the guard's function policy;
        a lost session raises :class:`~sqlnb.errors.ConnectionLost`."""
        with self._lock:
            try:
                return self._catalog_rows(sql)
            except Exception as exc:
                err = self.classify(exc)
                if isinstance(err, errors.ConnectionLost):
                    raise err from None
                raise

    @contextlib.contextmanager
    def _statement_lock(self):
        """The connection, one statement at a time (a cell and the agent's thread take
        turns); an interrupt while waiting for it cancels this statement only."""
        try:
            self._lock.acquire()
        except KeyboardInterrupt:
            raise errors.QueryCancelled(
                "Query cancelled by interrupt while it was waiting for another statement on "
                "this connection (sqlnb's agent or another thread)", dialect=self.dialect,
                hint="the connection is still usable; run it again when the other statement ends") from None
        try:
            yield
        finally:
            self._lock.release()

    @property
    def read_only_now(self) -> bool:
        """Whether the statement being run must not write: a read-only connection, or a
        read-only statement on a read-write one."""
        return self.options.readonly or self._statement_readonly

    @contextlib.contextmanager
    def _statement_read_only(self, wanted: bool):
        if not wanted or self.options.readonly:
            yield  # a read-only connection already is a read-only session
            return
        self._statement_readonly = True
        try:
            with self._read_only_scope():
                yield
        finally:
            self._statement_readonly = False

    # ---- public contract -------------------------------------------------------------
    def execute(self, sql: str, params: Mapping[str, Any] | None = None, *,
                max_rows: int | None = None, timeout: float | None = None,
                readonly: bool = False) -> Result:
        """Run one statement.  ``max_rows`` caps the rows fetched (``truncated`` tells),
        ``timeout`` overrides the connection's statement timeout (seconds).
        ``readonly=True`` runs it like on a read-only connection: the guard first, then in
        a read-only session scope, even when the connection itself may write."""
        if self.closed:
            raise errors.ConnectionLost(f"Connection to {self.spec.redacted_url()} is closed",
                                        hint="reconnect with %sqlnb connect")
        if not sql or not sql.strip():
            raise errors.UsageError("Empty SQL statement", hint="write a statement to run")
        reconnected = False
        guarded = bool(self.options.readonly or readonly)
        if guarded and self._lost:  # the guard's function lookup needs a live session
            with self._lock:
                if self._lost:
                    self._reconnect()
                    reconnected = True
        try:
            statement, bound = self._statement(sql, params, guarded)
        except errors.ConnectionLost as err:
            self._lost = True  # the next statement opens a new connection
            err.hint = "run it again to reconnect"
            raise err from None
        if timeout is None:
            timeout = self.options.statement_timeout
        timeout = timeout or None
        with self._statement_lock():
            if self._lost:
                self._reconnect()
                reconnected = True
            self._timed_out = False
            self._cancel_requested = False
            timer = None
            if timeout and not self.native_timeout:
                timer = threading.Timer(timeout, self._timeout_fired)
                timer.daemon = True
                timer.start()
            start = time.perf_counter()
            try:
                with interrupt_watcher(self._interrupt_fired), gc_paused(), \
                        self._statement_read_only(readonly):
                    result = self._execute(statement, bound, max_rows, timeout)
            except KeyboardInterrupt:
                self._recover_after_cancel()
                raise errors.QueryCancelled(
                    "Query cancelled by interrupt", dialect=self.dialect,
                    hint="the connection is still usable") from None
            except Exception as exc:
                err = exc if isinstance(exc, errors.SqlnbError) else self.classify(exc, timeout=timeout)
                if isinstance(err, (errors.QueryCancelled, errors.QueryTimeout)):
                    self._recover_after_cancel()
                if isinstance(err, errors.ConnectionLost):
                    self._lost = True  # the next statement opens a new connection
                    err.hint = ("run it again to reconnect; settings made with SET and "
                                "temporary tables are gone with the old session")
                raise err from None
            finally:
                if timer is not None:
                    timer.cancel()
            result.elapsed = time.perf_counter() - start
            result.statement = sql
            if reconnected:
                result.notices.append("The connection was lost and has been re-opened: settings "
                                      "made with SET and temporary tables are gone.")
            return result

    def catalog(self, refresh: bool = False) -> Catalog:
        """The cached catalog; ``refresh=True`` reads it again from the engine."""
        if self._catalog is None or refresh:
            start = time.perf_counter()
            with self._lock, gc_paused():
                try:
                    cat = self._load_catalog()
                except errors.SqlnbError:
                    raise
                except Exception as exc:
                    raise self.classify(exc) from None
            cat.elapsed = time.perf_counter() - start
            self._catalog = cat
        return self._catalog

    def sample(self, table: str, n: int = 5) -> Result:
        """Up to ``n`` rows of ``table`` (a name from the catalog)."""
        t = self.catalog().find(table)
        if t is None:
            raise errors.TableNotFound(f"Table {table!r} is not in the catalog",
                                       hint=self._closest_hint(table), dialect=self.dialect)
        from sqlnb.sql.quoting import qualified

        return self.execute(f"SELECT * FROM {qualified(t.schema, t.name, self.dialect)} LIMIT {int(n)}",
                            max_rows=n)

    def cancel(self) -> None:
        """Cancel the running statement, if any (safe to call from another thread)."""
        self._cancel_requested = True
        try:
            self._cancel()
        except Exception:
            pass

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            _OPEN.discard(self)
            try:
                self._close()
            except Exception:
                pass

    def identity(self) -> dict[str, Any]:
        """What names this connection's database, without any secret (no password, no
        secret parameter): the engine and the resolved file of a database file (an
        in-memory database: a random token of this connection, which no other connection
        shares), else host, port, database, user, further path segments and the
        ``identity_params``.  The memory of accepted answers is keyed by its digest."""
        import os
        import uuid

        from sqlnb.adapters.spec import _is_secret_key

        s = self.spec
        if s.scheme in ("sqlite", "duckdb"):
            if not s.database:
                return {"engine": s.scheme,
                        "in_memory": self.__dict__.setdefault("_memory_token", uuid.uuid4().hex)}
            return {"engine": s.scheme, "path": os.path.realpath(os.path.abspath(s.database))}
        ident: dict[str, Any] = {
            "engine": s.scheme, "host": (s.host or "").lower(),
            "port": s.port or _DEFAULT_PORTS.get(s.scheme), "database": s.database or "",
            "user": s.user or "", "path": list(s.path)}
        ident.update({k: s.params[k] for k in self.identity_params
                      if k in s.params and not _is_secret_key(k)})
        return ident

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self) -> str:
        ro = ", readonly" if self.options.readonly else ""
        return f"<{type(self).__name__} {self.spec.redacted_url()}{ro}>"

    # ---- shared machinery ----------------------------------------------------------
    def _timeout_fired(self) -> None:
        self._timed_out = True
        self.cancel()

    def _interrupt_fired(self) -> None:
        self.cancel()

    def _recover_after_cancel(self) -> None:
        try:
            self._after_cancel()
        except Exception:
            pass

    def _closest_hint(self, name: str) -> str | None:
        try:
            names = [t.name for t in (self._catalog.tables if self._catalog else [])]
        except Exception:
            return None
        import difflib

        close = difflib.get_close_matches(name.split(".")[-1], names, n=3, cutoff=0.6)
        return f"did you mean {', '.join(close)}?" if close else None

    def classify(self, exc: BaseException, timeout: float | None = None) -> errors.SqlnbError:
        """Turn a driver exception into a classified, secret-free :class:`SqlnbError`."""
        if isinstance(exc, errors.SqlnbError):
            return exc
        err = self._classify(exc)
        message = self._scrub(_exc_message(exc))
        if err is None or type(err) is errors.DatabaseError:
            generic = classify_message(message, dialect=self.dialect)
            if err is None or type(generic) is not errors.DatabaseError:
                err = generic
        if self._timed_out and not isinstance(err, errors.QueryTimeout):
            err = errors.QueryTimeout(f"Query exceeded the statement timeout of {timeout or self.options.statement_timeout:g} s",
                                      engine_message=message, dialect=self.dialect,
                                      hint=_TIMEOUT_HINT)
        elif self._cancel_requested and not isinstance(err, (errors.QueryCancelled, errors.QueryTimeout)):
            err = errors.QueryCancelled("Query cancelled", engine_message=message, dialect=self.dialect,
                                        hint="the connection is still usable")
        if isinstance(err, errors.QueryTimeout) and err.hint is None:
            err.hint = _TIMEOUT_HINT
        err.message = self._scrub(" ".join(err.message.split()))
        err.args = (err.message,)  # repr() and pickling show the args, not .message
        if err.engine_message is None:
            err.engine_message = message
        else:
            err.engine_message = self._scrub(err.engine_message)
        if err.hint:
            err.hint = self._scrub(err.hint)
        err.dialect = self.dialect
        if isinstance(err, (errors.TableNotFound,)) and err.hint is None:
            err.hint = self._closest_hint(_quoted_name(message) or "")
        return err

    def _connect_error(self, exc: BaseException) -> errors.SqlnbError:
        err = self.classify(exc)
        where = self.spec.redacted_url()
        if self.spec.password is None and "password" in err.message.lower() \
                and not isinstance(err, errors.AuthenticationFailed):
            err = errors.AuthenticationFailed(err.message, engine_message=err.engine_message,
                                              dialect=self.dialect)
        if isinstance(err, errors.AuthenticationFailed) and self.spec.password is None:
            from sqlnb.adapters.spec import ENGINE_PASSWORD_ENV

            env = ENGINE_PASSWORD_ENV.get(self.spec.scheme)
            err.message = f"Authentication failed for {where}: no password was found ({err.message})"
            err.hint = (f"set {env + ' or ' if env else ''}SQLNB_<NAME>_PASSWORD, add it to "
                        "~/.sqlnb/connections.toml, or store it in the keyring (service 'sqlnb')")
        elif isinstance(err, errors.AuthenticationFailed):
            err.message = f"Authentication failed for {where}: {err.message}"
            err.hint = err.hint or "check the user and password (environment, connections file or keyring)"
        elif isinstance(err, (errors.ConnectionLost, errors.ConnectFailed, errors.QueryTimeout)) or type(err) is errors.DatabaseError:
            err = errors.ConnectFailed(f"Cannot connect to {where}: {err.message}",
                                       engine_message=err.engine_message, dialect=self.dialect,
                                       hint="check that the server is running and reachable, "
                                            "and the host, port and database name")
        return err

    def _scrub(self, text: str) -> str:
        pw = self.spec.password.reveal() if self.spec.password else None
        if pw and len(pw) >= 1:
            from urllib.parse import quote

            # also its URL-encoded form: drivers that take a URL may echo it
            for form in {pw, quote(pw, safe=""), quote(pw)}:
                text = text.replace(form, "***")
        return text


_TIMEOUT_HINT = ("raise the timeout (%config SqlMagic.statement_timeout, --timeout) or narrow "
                 "the query")


def _exc_message(exc: BaseException) -> str:
    msg = str(exc).strip() or type(exc).__name__
    return " ".join(msg.split()) if len(msg) < 2000 else msg[:2000]


def _quoted_name(message: str) -> str | None:
    import re

    m = re.search(r"""["'`]([^"'`]+)["'`]""", message)
    return m.group(1) if m else None


_PATTERNS: list[tuple[type[errors.SqlnbError], tuple[str, ...]]] = [
    (errors.AuthenticationFailed, ("password authentication failed", "access denied for user",
                                   "authentication failed", "incorrect username or password",
                                   "no password supplied", "invalid authorization")),
    (errors.QueryTimeout, ("statement timeout", "canceling statement due to statement timeout",
                           "max_statement_time", "maximum statement execution time", "timed out",
                           "timeout")),
    (errors.QueryCancelled, ("canceling statement due to user request", "interrupted", "query execution was interrupted",
                             "cancel")),
    (errors.TableNotFound, ("no such table", "does not exist", "doesn't exist", "table with name",
                            "unknown table", "catalog error: table", "not found in from clause")),
    (errors.ColumnNotFound, ("no such column", "unknown column", "column", "referenced column", "binder error")),
    (errors.PermissionDenied, ("permission denied", "read-only", "readonly", "read only", "not authorized",
                               "insufficient privileges", "attempt to write", "command denied",
                               "access denied", "cannot execute", "not allowed")),
    (errors.SQLSyntaxError, ("syntax error", "parser error", "you have an error in your sql syntax",
                             "incomplete input", "unrecognized token")),
    (errors.TypeMismatch, ("invalid input syntax for type", "operator does not exist", "conversion",
                           "could not convert", "cannot be cast", "type mismatch", "incorrect integer value",
                           "datatype mismatch", "truncated incorrect")),
    (errors.ConnectionLost, ("server closed the connection", "lost connection", "connection is closed",
                             "connection already closed", "gone away", "broken pipe", "connection reset",
                             "terminating connection", "connection not available",
                             "no connection to the server", "connection was killed", "brokenpipe",
                             "socket closed")),
    (errors.ConnectFailed, ("connection refused", "could not connect", "can't connect", "could not translate host",
                            "name or service not known", "unknown host", "failed to resolve")),
]


def classify_message(message: str, dialect: str | None = None) -> errors.SqlnbError:
    """Generic classification by message text, for drivers that give nothing better."""
    low = message.lower()
    for cls, needles in _PATTERNS:
        if cls is errors.ColumnNotFound:
            if ("no such column" in low or "unknown column" in low or
                    ("column" in low and ("does not exist" in low or "not found" in low))):
                return cls(message, dialect=dialect)
            continue
        if cls is errors.TableNotFound and "column" in low and "does not exist" in low:
            continue
        if any(n in low for n in needles):
            return cls(message, dialect=dialect)
    return errors.DatabaseError(message, dialect=dialect)
