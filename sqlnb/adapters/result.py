"""Results of statements, and the one way driver values become Arrow and then pandas.

A :class:`Result` holds its data as an Arrow table.  Every engine builds that table the
same way — :func:`rows_to_arrow` from plain driver rows, :func:`normalize_arrow` /
:func:`conform_arrow` from a driver's native Arrow — and every DataFrame comes from
:func:`arrow_to_pandas`, so an engine's fast and plain paths give the same values and
dtypes.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

if TYPE_CHECKING:  # at run time pandas loads on the first DataFrame
    import pandas as pd


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

    __slots__ = ("_df", "arrow", "columns", "elapsed", "notices", "row_count", "statement", "truncated")

    def __init__(
        self,
        columns: Sequence[ResultColumn],
        arrow: pa.Table | None,
        row_count: int,
        truncated: bool = False,
        elapsed: float = 0.0,
        statement: str = "",
    ):
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
        return list(zip(*cols, strict=False)) if cols else []

    def to_pandas(self) -> pd.DataFrame:
        if self._df is None:
            self._df = arrow_to_pandas(self.arrow) if self.arrow is not None else _empty_frame()
        return self._df

    @property
    def df(self) -> pd.DataFrame:
        return self.to_pandas()

    def __repr__(self) -> str:
        return (
            f"Result(columns={self.column_names}, row_count={self.row_count}, "
            f"truncated={self.truncated}, elapsed={self.elapsed:.3f}s)"
        )


def _empty_frame() -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame()


def arrow_to_pandas(table: pa.Table) -> pd.DataFrame:
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
    return table.to_pandas(
        date_as_object=True, coerce_temporal_nanoseconds=False, types_mapper=_pandas_type_for
    )


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
    elif isinstance(sample, (dict, list)) or (
        type_name in ("json", "jsonb", "variant", "object", "array")
        and not isinstance(sample, str)
        and sample is not None
    ):
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
        _sign, ds, exp = v.as_tuple()
        scale = max(scale, -exp if exp < 0 else 0)
        digits = max(digits, len(ds) + (exp if exp > 0 else 0))
    precision = max(digits - 0, 1) + scale
    if any(v is not None and not v.is_finite() for v in values) or precision > 76:
        return pa.array([None if v is None else str(v) for v in values], type=pa.string())
    q = decimal.Decimal(1).scaleb(-scale)
    values = [None if v is None else v.quantize(q) for v in values]
    typ = (
        pa.decimal128(min(max(precision, scale + 1), 38), scale)
        if precision <= 38
        else pa.decimal256(precision, scale)
    )
    return pa.array(values, type=typ)


# what pyarrow raises when values do not fit the Arrow type asked for
NOT_OF_TYPE = (
    pa.ArrowInvalid,
    pa.ArrowTypeError,
    pa.ArrowNotImplementedError,
    OverflowError,
    TypeError,
    ValueError,
)


def array_of_type(values: Any, typ: pa.DataType, **options: Any) -> pa.Array | None:
    """``values`` as an Arrow array of ``typ`` (``options``: more of ``pa.array``'s, such
    as ``from_pandas``); None when they do not fit it, so the caller infers instead."""
    try:
        return pa.array(values, type=typ, **options)
    except NOT_OF_TYPE:
        return None


def rows_to_arrow(
    columns: Sequence[ResultColumn],
    rows: Sequence[Sequence[Any]],
    types: Sequence[pa.DataType | None] | None = None,
) -> pa.Table:
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
            known = [
                t if t is not None else _simple_type([r[i] for r in sample]) for i, t in enumerate(known)
            ]
    else:
        known = []
    if known and all(t is not None for t in known):
        # every type known: one C++ pass over the row tuples, no Python transposition
        # (about 2x faster for 1M rows); anything it does not take goes column by column
        struct = array_of_type(rows, pa.struct([pa.field(str(i), t) for i, t in enumerate(known)]))
        if struct is not None:
            return pa.Table.from_arrays(struct.flatten(), names=names)
    cols = [list(c) for c in zip(*rows, strict=False)] if rows else [[] for _ in columns]
    arrays = []
    for i, (col, values) in enumerate(zip(columns, cols, strict=False)):
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


_SIMPLE_TYPES = {bool: pa.bool_(), int: pa.int64(), float: pa.float64(), str: pa.string(), bytes: pa.binary()}


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
    return array_of_type(values, typ)


def conform_arrow(
    table: pa.Table,
    types: Sequence[pa.DataType | None],
    names: Sequence[str] | None = None,
    strict: bool = True,
) -> pa.Table:
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
    for name, col in zip(table.column_names, table.columns, strict=False):
        typ = col.type
        target = _canonical_type(typ)
        if target is not None and target != typ:
            changed = True
            if isinstance(typ, pa.BaseExtensionType):
                col = pa.chunked_array([c.storage for c in col.chunks], type=typ.storage_type)
                typ = typ.storage_type
            if pa.types.is_fixed_size_binary(typ) and typ.byte_width == 16 and target == pa.string():
                import uuid

                col = pa.array(
                    [None if v is None else str(uuid.UUID(bytes=v)) for v in col.to_pylist()],
                    type=pa.string(),
                )
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
