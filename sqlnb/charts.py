"""Charts of query results as Vega-Lite v5, which JupyterLab draws itself.

A result gets a chart when its shape suits one:

- a time (dates, timestamps, ``2024-03``-like text, or a year column of whole numbers)
  and one or more measures: a line per measure (several measures folded into one
  ``measure`` / ``value`` pair), or a line per category when the result also has a
  category column of a few values and one measure;
- a category (text, booleans) and a measure: horizontal bars sorted by the measure, at
  most :data:`MAX_CATEGORIES` of them, a second category column of a few values as the
  bars' colour.

Anything else has no chart (:func:`chart_spec` returns None, :func:`why_no_chart` says
why): a single row, no numeric measure, numbers that are only ids or keys (``id``,
``customer_id``, ``CustomerId``, ``key``), too many categories, a category repeated
with nothing to tell its rows apart.  The data is inlined in the spec, at most
:data:`MAX_ROWS` rows.

    spec = chart_spec(df)          # a dict, or None
    sqlnb.chart(df)                # the chart in a notebook (a UsageError when none suits)
    chart_code(cell)               # an answer's %%sql cell that also draws its chart

This module shows results; it never talks to a database.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlnb import errors

__all__ = [
    "MAX_CATEGORIES",
    "MAX_ROWS",
    "MIME",
    "Chart",
    "chart",
    "chart_code",
    "chart_spec",
    "why_no_chart",
]

MIME = "application/vnd.vegalite.v5+json"
SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"
MAX_ROWS = 5_000  # rows inlined in a spec
MAX_CATEGORIES = 50  # bars in a bar chart
MAX_SERIES = 12  # lines or colours a category column may add

# numbers that name rows rather than measure them
_ID_NAME = re.compile(r"(?:^|_)(?:id|key|pk|fk|uuid|code|no)$", re.I)
_CAMEL_ID = re.compile(r"[a-z0-9](?:Id|ID|Key)$")
_YEAR_NAME = re.compile(r"(?:^|_)(?:year|yr)$", re.I)
_CAMEL_YEAR = re.compile(r"[a-z0-9]Year$")
_ISO_TIME = re.compile(
    r"\d{4}-\d{2}(?:-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?)?"
)


@dataclass
class _Columns:
    times: list[str]
    years: list[str]
    measures: list[str]
    categories: list[str]


def chart_spec(df: Any) -> dict[str, Any] | None:
    """A Vega-Lite v5 spec (a dict, JSON-safe, data inlined) for a pandas DataFrame whose
    shape suits a chart, else None (:func:`why_no_chart` says why)."""
    spec, _ = _plan(df)
    return spec


def why_no_chart(df: Any) -> str | None:
    """Why ``df`` gets no chart, in a sentence; None when it gets one."""
    spec, reason = _plan(df)
    return None if spec is not None else reason


def _plan(df: Any) -> tuple[dict[str, Any] | None, str]:
    import pandas as pd

    if not isinstance(df, pd.DataFrame):
        raise errors.UsageError(
            f"a chart needs a pandas DataFrame, not {type(df).__name__}",
            hint="e.g. %%sql -o df, then sqlnb.chart(df)",
        )
    if len(df) < 2:
        return None, "a single row is clearer as it is than as a chart"
    if len(df.columns) < 2:
        return None, "a chart needs at least two columns (what to draw and what to draw it by)"
    if not df.columns.is_unique:
        return None, "two columns have the same name; give them aliases (AS ...) to chart them"
    data = df.head(MAX_ROWS)
    cols = _classify(data)
    if not cols.measures:
        if any(_is_number(data[c]) for c in data.columns):
            return None, "its numbers are ids or keys, not measures to draw"
        return None, "it has no numeric column to draw"
    names = [str(c) for c in data.columns]
    if cols.times or cols.years:
        return _line(data, cols, names)
    if not cols.categories:
        return None, "it has no category or time column to draw the numbers by"
    return _bar(data, cols, names)


def _classify(df: Any) -> _Columns:
    out = _Columns([], [], [], [])
    for col in df.columns:
        s = df[col]
        name = str(col)
        if _is_time(s):
            out.times.append(name)
        elif _is_number(s):
            if _is_year(name, s):
                out.years.append(name)
            elif not _is_id(name) and s.notna().any():
                out.measures.append(name)
        else:
            out.categories.append(name)
    return out


def _is_time(s: Any) -> bool:
    import pandas as pd

    if pd.api.types.is_datetime64_any_dtype(s.dtype):
        return True
    values = s.dropna()
    if values.empty:
        return False
    if str(s.dtype).startswith(("date32", "date64", "timestamp")):  # pandas' Arrow dtypes
        return True
    first = values.iloc[0]
    if isinstance(first, (dt.date, dt.datetime)):
        return all(isinstance(v, (dt.date, dt.datetime)) for v in values)
    if isinstance(first, str):
        return all(isinstance(v, str) and _ISO_TIME.fullmatch(v.strip()) for v in values)
    return False


def _is_number(s: Any) -> bool:
    import pandas as pd

    if pd.api.types.is_bool_dtype(s.dtype):
        return False
    if pd.api.types.is_numeric_dtype(s.dtype):
        return True
    values = s.dropna()
    return not values.empty and all(
        isinstance(v, (int, float, decimal.Decimal)) and not isinstance(v, bool) for v in values
    )


def _is_id(name: str) -> bool:
    return bool(_ID_NAME.search(name) or _CAMEL_ID.search(name))


def _is_year(name: str, s: Any) -> bool:
    if not (_YEAR_NAME.search(name) or _CAMEL_YEAR.search(name)):
        return False
    values = s.dropna()
    try:
        return not values.empty and all(float(v).is_integer() and 1000 <= float(v) <= 9999 for v in values)
    except (TypeError, ValueError):
        return False


def _line(df: Any, cols: _Columns, names: list[str]) -> tuple[dict[str, Any] | None, str]:
    x = (cols.times or cols.years)[0]
    if df[x].nunique(dropna=True) < 2:
        return None, f"{x} has one value: nothing to draw a line along"
    x_enc: dict[str, Any] = {"field": _field(x), "title": x}
    if x in cols.times:
        x_enc["type"] = "temporal"
    else:
        x_enc.update(type="ordinal", sort="ascending")
    color = None
    if len(cols.measures) == 1 and cols.categories:
        series = cols.categories[0]
        if df[series].nunique(dropna=True) <= MAX_SERIES:
            color = {"field": _field(series), "type": "nominal", "title": series}
    keep = [x, *cols.measures, *([color["title"]] if color else [])]
    spec = _spec(df, keep, x=x)
    spec["mark"] = {"type": "line", "point": True, "tooltip": True}
    if len(cols.measures) == 1:
        m = cols.measures[0]
        spec["encoding"] = {"x": x_enc, "y": {"field": _field(m), "type": "quantitative", "title": m}}
        if color:
            spec["encoding"]["color"] = color
    else:
        spec["transform"] = [{"fold": [_field(m) for m in cols.measures], "as": ["measure", "value"]}]
        spec["encoding"] = {
            "x": x_enc,
            "y": {"field": "value", "type": "quantitative", "title": "value"},
            "color": {"field": "measure", "type": "nominal", "title": None},
        }
    return spec, ""


def _bar(df: Any, cols: _Columns, names: list[str]) -> tuple[dict[str, Any] | None, str]:
    cat, m = cols.categories[0], cols.measures[0]
    n = df[cat].nunique(dropna=False)
    if n > MAX_CATEGORIES:
        return None, f"{n:,} values of {cat} are more bars than a chart can show (at most {MAX_CATEGORIES})"
    color = None
    if n < len(df):  # a category repeated: a second category column must tell its rows apart
        second = next((c for c in cols.categories[1:] if df[c].nunique(dropna=True) <= MAX_SERIES), None)
        if second is None or df.duplicated([cat, second]).any():
            return None, f"values of {cat} repeat with nothing to tell their rows apart"
        color = {"field": _field(second), "type": "nominal", "title": second}
    spec = _spec(df, [cat, m, *([color["title"]] if color else [])], x=None)
    spec["mark"] = {"type": "bar", "tooltip": True}
    spec["encoding"] = {
        "y": {"field": _field(cat), "type": "nominal", "sort": "-x", "title": cat},
        "x": {"field": _field(m), "type": "quantitative", "title": m},
    }
    if color:
        spec["encoding"]["color"] = color
    return spec, ""


def _spec(df: Any, keep: Sequence[str], *, x: str | None) -> dict[str, Any]:
    """The spec's frame: the schema and the rows of the columns drawn, JSON-safe."""
    columns = [c for c in df.columns if str(c) in keep]
    rows = []
    for values in zip(*(df[c].tolist() for c in columns), strict=True):
        rows.append({str(c): _value(v) for c, v in zip(columns, values, strict=True)})
    return {"$schema": SCHEMA, "data": {"values": rows}}


def _value(v: Any) -> Any:
    """A cell as the chart reads it: numbers as numbers, times ISO 8601, NaN as null."""
    import pandas as pd

    if v is None or v is pd.NaT:
        return None
    if isinstance(v, (bool, str)):
        return v
    if isinstance(v, (int, float, decimal.Decimal)):
        f = float(v)
        if not math.isfinite(f):
            return None
        return int(v) if isinstance(v, int) else f
    if hasattr(v, "item") and not isinstance(v, (dt.date, dt.datetime)):  # numpy scalars
        return _value(v.item())
    if isinstance(v, (dt.date, dt.datetime, dt.time)):
        return v.isoformat()
    try:
        if pd.isna(v):
            return None
    except (TypeError, ValueError):
        pass
    return str(v)


def _field(name: str) -> str:
    """A column name as a Vega-Lite field (dots and brackets would read as nesting)."""
    return re.sub(r"([\\.\[\]])", r"\\\1", name)


# ---------------------------------------------------------------------------
# in a notebook
# ---------------------------------------------------------------------------


class Chart:
    """A chart that draws itself in a notebook (Vega-Lite, rendered by JupyterLab)."""

    def __init__(self, spec: dict[str, Any]):
        self.spec = spec

    @property
    def kind(self) -> str:
        mark = self.spec.get("mark") or {}
        return str(mark.get("type") if isinstance(mark, dict) else mark)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, Any]:
        return {MIME: self.spec, "text/plain": repr(self)}

    def __repr__(self) -> str:
        enc = self.spec.get("encoding") or {}
        fields = [enc[a].get("title") for a in ("y", "x") if a in enc]
        n = len(self.spec.get("data", {}).get("values") or [])
        return f"<sqlnb chart: {self.kind} of {' by '.join(str(f) for f in fields if f)}, {n:,} rows>"


def chart(df: Any) -> Chart:
    """The chart of a query's result in a notebook: ``sqlnb.chart(df)`` after ``%%sql -o
    df``.  ``df``: a pandas DataFrame (or an answer of ``sqlnb.ask``, whose ``.df`` is
    drawn).  A bar chart for a category and a measure, a line chart for a time and
    measures; a :class:`~sqlnb.errors.UsageError` saying why when the result suits no chart."""
    if hasattr(df, "df") and not hasattr(df, "columns"):
        df = df.df
    spec, reason = _plan(df)
    if spec is None:
        raise errors.UsageError(f"This result does not suit a chart: {reason}", hint=_HINT)
    return Chart(spec)


_HINT = (
    "a chart needs a category or a time column and a numeric measure, e.g. "
    "SELECT region, sum(amount) AS total ... GROUP BY region"
)

_SQL_LINE = re.compile(r"^%%sql\b(.*)$")


def chart_code(cell: str, variable: str = "df") -> str:
    """The cell "Insert chart" writes: an answer's ``%%sql`` cell (``AskResult.cell_source()``)
    that also keeps its result as ``variable`` and draws it (``-o df --chart``), so it runs
    on its own, anywhere in the notebook; ``sqlnb.chart(df)`` draws it again later."""
    if not variable.isidentifier():
        raise errors.UsageError(f"chart_code needs a Python variable name, not {variable!r}")
    first, _, rest = cell.partition("\n")
    m = _SQL_LINE.match(first.rstrip())
    if m is None:
        raise errors.UsageError("chart_code needs a %%sql cell", hint="e.g. the cell of an answer")
    options = m.group(1).split()
    if not any(o in ("-o", "--output") or o.startswith("--output=") for o in options):
        options += ["-o", variable]
    if "--chart" not in options:
        options.append("--chart")
    return f"%%sql {' '.join(options)}\n{rest}"
