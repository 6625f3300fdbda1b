"""Dates read as they are stored.

Lengths of time as numbers: a draft that subtracts one date or timestamp column from
another where that gives no number of days counts the days (or the hours, minutes or weeks
the question asks for) instead (:data:`DATE_DIFFERENCE`).

What ``later - earlier`` gives depends on the engine: SQLite subtracts the dates' text, so
``'2024-03-09 10:00' - '2024-03-01 08:00'`` is 0 (the years' difference); MySQL subtracts
``20240309100000`` from ``20240301080000``; DuckDB and PostgreSQL give an interval
(``8 days 02:00:00``) where two timestamps are subtracted, which is no number of days.
Where the engine already gives a number of days (two DATE columns in DuckDB or PostgreSQL)
the draft stands as written.

Moments stored as seconds since 1970 (:data:`EPOCH_DATES`): SQLite reads a number given to
its date functions as a Julian day, so ``strftime('%Y', created)`` of 1718000000 is nothing;
the column is read as the moment it counts.

Parts of a date as numbers (:data:`DATE_PART_AS_NUMBER`): ``strftime('%Y', …)`` shown in an
answer gives the year as a number, not as text."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import sqlglot
from sqlglot import exp

from sqlnb.adapters import Catalog, Table
from sqlnb.agent.repairs.rewrite import Draft, Proposal, Rewrite
from sqlnb.agent.sqltree import column_owner, parse, readable, scope_tables, stored_numbers
from sqlnb.sql.dialects import sqlglot_dialect

# the unit a question asks a length of time in ("how many hours", "in days", "the average
# number of weeks"); years and months are not counted from days
_UNIT = re.compile(r"\b(seconds|minutes|hours|days|weeks|months|years)\b", re.I)
_PER_DAY = {"seconds": 86400, "minutes": 1440, "hours": 24, "days": 1}
_DIVIDE_DAYS = {"weeks": 7}
# a date or time by its declared type, or (a text column) by its name: ordered_at,
# ship_date, start_dt, hired_on, created_time
_DATE_TYPE = re.compile(r"date|time", re.I)
_TEXT_TYPE = re.compile(r"^\s*$|char|text|string|clob", re.I)
_DATE_NAME = re.compile(r"(?:^|_)(?:date|dt|time|ts|timestamp)$|_(?:at|on|date)$|^date_", re.I)
# engines whose subtraction of two timestamps is an interval, which answers a question that
# names no unit ("how long did it take") as well as a number of days would
_INTERVALS = frozenset({"duckdb", "postgres", "redshift"})
# engines whose subtraction of the column types below gives no number of days
_NO_DAYS: dict[str, re.Pattern[str]] = {
    "sqlite": re.compile(r".*"),  # every type: dates are text (or numbers nobody should subtract)
    "mysql": re.compile(r"date|time", re.I),  # YYYYMMDDhhmmss numbers subtracted
    "duckdb": re.compile(r"timestamp|datetime", re.I),  # an interval
    "postgres": re.compile(r"timestamp", re.I),
    "redshift": re.compile(r"timestamp", re.I),
}


def date_column(col: exp.Expr, scope: dict[str, Table]) -> str | None:
    """The declared type of ``col`` when it is a column of a date or time (by its type, or
    a text column by its name); None otherwise."""
    if not isinstance(col, exp.Column):
        return None
    owner = column_owner(col, scope)
    if owner is None:
        return None
    column = owner[1].column(col.name)
    if column is None:
        return None
    declared = column.type or ""
    if _DATE_TYPE.search(declared):
        return declared
    if _TEXT_TYPE.search(declared) and _DATE_NAME.search(col.name):
        return declared or "text"
    return None


def _unit(question: str) -> str | None:
    """The unit the question asks for: ``days`` when it names none; None for months or
    years (not counted from days) or several units."""
    units = {m.group(1).lower() for m in _UNIT.finditer(question or "")}
    if not units:
        return "days"
    if len(units) > 1 or units & {"months", "years"}:
        return None
    return units.pop()


def _days_between(later: exp.Expr, earlier: exp.Expr, dialect: str) -> str:
    """SQL for the days from ``earlier`` to ``later`` as a number, fractions of a day kept."""
    d = sqlglot_dialect(dialect)
    a, b = later.sql(dialect=d), earlier.sql(dialect=d)
    if dialect == "sqlite":
        return f"(julianday({a}) - julianday({b}))"
    if dialect == "mysql":
        return f"(TIMESTAMPDIFF(SECOND, {b}, {a}) / 86400)"
    if dialect == "duckdb":
        return f"((epoch({a}) - epoch({b})) / 86400)"
    return f"(EXTRACT(EPOCH FROM ({a} - {b})) / 86400)"


def date_difference(sql: str, dialect: str, catalog: Catalog | None, question: str) -> tuple[str, str] | None:
    """``sql`` with each ``later - earlier`` of two date or time columns that the engine
    does not count in days (see the module) replaced by the number of days between them,
    in the unit the question asks for (hours: times 24; days where it names none); and what
    was replaced.  None when there is no such subtraction, the question asks for months or
    years, an interval stands for a question that names no unit, or the engine is none of
    those above."""
    kinds = _NO_DAYS.get(dialect)
    if kinds is None or catalog is None:
        return None
    unit = _unit(question)
    if unit is None or (dialect in _INTERVALS and not _UNIT.search(question or "")):
        return None  # an interval answers "how long" as well as a number would
    tree = parse(sql, dialect)
    if tree is None:
        return None
    changed: list[str] = []
    d = sqlglot_dialect(dialect)
    for select in list(tree.find_all(exp.Select)):
        scope = scope_tables(select, catalog)
        if not scope:
            continue
        for sub in list(select.find_all(exp.Sub)):
            if sub.parent_select is not select:
                continue
            types = [date_column(side, scope) for side in (sub.this, sub.expression)]
            if not all(types) or not any(kinds.search(t or "") for t in types):
                continue
            days = _days_between(sub.this, sub.expression, dialect)
            if unit in _PER_DAY and _PER_DAY[unit] != 1:
                days = f"({days} * {_PER_DAY[unit]})"
            elif unit in _DIVIDE_DAYS:
                days = f"({days} / {_DIVIDE_DAYS[unit]})"
            node = sqlglot.parse_one(days, read=d)
            changed.append(sub.sql(dialect=d))
            sub.replace(node)
    if not changed:
        return None
    what = ", ".join(changed)
    return readable(tree.sql(dialect=d)), f"{what} counted in {unit}"


def _propose(draft: Draft) -> Proposal:
    return date_difference(draft.sql, draft.dialect, draft.catalog, draft.question)


DATE_DIFFERENCE = Rewrite(
    name="date_difference",
    summary="A draft that subtracts two dates or timestamps where the engine gives no number of "
    "days (SQLite's text, MySQL's digits, an interval) counts the days, or the unit the question "
    "asks for.",
    propose=_propose,
    keeps="same_row_count",
    reason="the time between two dates is a number of days or hours ({change})",
)


# the formats of a date that give one field, a number written as text: the year, the month,
# the day of the month or of the year, the hour, the week of the year, the day of the week
_ONE_NUMBER = frozenset({"%Y", "%m", "%d", "%j", "%H", "%W", "%U", "%w"})
_FORMATTERS = frozenset({"strftime", "to_char", "date_format"})


def _number_format(node: exp.Expr) -> str | None:
    """The format of ``node`` when it formats a date into one number written as text
    (SQLite's and DuckDB's ``strftime``, PostgreSQL's ``to_char``, MySQL's ``DATE_FORMAT``,
    each with one field); None otherwise."""
    if isinstance(node, exp.TimeToStr):
        fmt = node.args.get("format")
    elif isinstance(node, exp.Anonymous) and str(node.this).lower() in _FORMATTERS:
        fmt = next((a for a in node.expressions if isinstance(a, exp.Literal) and a.is_string), None)
    else:
        return None
    if not isinstance(fmt, exp.Literal) or not fmt.is_string:
        return None
    return fmt.this if fmt.this in _ONE_NUMBER else None


def date_part_as_number(sql: str, dialect: str) -> tuple[str, str] | None:
    """``sql`` with each column of its answer that formats a date into one number written
    as text (``strftime('%Y', ordered_at)``: '2024') cast to an integer (2024), the year,
    month or day every other engine's ``EXTRACT`` gives; and what was cast.  Only the
    outermost query's columns: a year compared or joined inside the query stays as it is.
    None when no column of the answer is such a formatted date."""
    tree = parse(sql, dialect)
    if not isinstance(tree, exp.Select):
        return None
    d = sqlglot_dialect(dialect)
    cast: list[str] = []
    for projection in tree.expressions:
        node = projection.this if isinstance(projection, exp.Alias) else projection
        if _number_format(node) is None:
            continue
        cast.append(node.sql(dialect=d))
        node.replace(exp.Cast(this=node.copy(), to=exp.DataType.build("INT")))
    if not cast:
        return None
    return readable(tree.sql(dialect=d)), f"{', '.join(cast)} as a number"


def _propose_part(draft: Draft) -> Proposal:
    return date_part_as_number(draft.sql, draft.dialect)


DATE_PART_AS_NUMBER = Rewrite(
    name="date_part_as_number",
    summary="An answer column that formats a date into one number as text (SQLite's strftime('%Y', …): "
    "'2024') gives the number (2024), as every engine's EXTRACT does.",
    propose=_propose_part,
    keeps="same_row_count",
    reason="a year, month or day is shown as a number ({change})",
)


# SQLite's date and time functions, which read a number as a Julian day (2460311.5 is
# 2024-01-01), not as seconds since 1970, unless told so with the modifier 'unixepoch'
_SQLITE_DATE_FUNCTIONS = ("strftime(", "date(", "datetime(", "time(", "julianday(")
_EPOCH_MODIFIERS = frozenset({"unixepoch", "auto"})
# the stored numbers of a column that counts seconds, or milliseconds, since 1970: from
# 1973-03-03 to 2286-11-20 (1e8 to 1e10 seconds); 0 is read as "never" and left aside
_EPOCH_SCALES = ((1e8, 1e10, 1), (1e11, 1e13, 1000))
# a date written as text: '2024', '2024-06', '2024-06-01 10:00', '2024%'
_DATE_TEXT = re.compile(r"^\d{4}(?:$|[-%/])")
_COMPARED = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Like, exp.Between)


def _epoch_scale(
    col: exp.Column, scope: dict[str, Table], distinct_values: Callable[[Table, str], Sequence[object]]
) -> int | None:
    """1 when ``col`` is a column of the query's tables whose stored values are all seconds
    since 1970 (0 aside), 1000 when they are all milliseconds; None otherwise (text dates,
    other numbers, a column that cannot be read)."""
    owner = column_owner(col, scope)
    numbers = stored_numbers(owner[1], col, distinct_values) if owner is not None else None
    if numbers is None:
        return None
    counted = [abs(n) for n in numbers if n != 0]
    for low, high, scale in _EPOCH_SCALES:
        if counted and all(low <= n < high for n in counted):
            return scale
    return None


def _read_as_date(col: exp.Column) -> bool:
    """Whether the query reads ``col`` as a date: as the time of one of SQLite's date
    functions given no 'unixepoch' modifier, or compared with a date written as text
    (``created >= '2024-01-01'``, ``created LIKE '2024%'``)."""
    parent, alone = col.parent, col.sql(dialect="sqlite")
    # past the casts sqlglot puts around a function's time that SQLite writes as nothing
    # (``strftime('%Y', created)`` is a TimeToStr of a TsOrDsToTimestamp of the column)
    while parent is not None and parent.sql(dialect="sqlite") == alone:
        parent = parent.parent
    if parent is None:
        return False
    written = parent.sql(dialect="sqlite").lower()
    if written.startswith(_SQLITE_DATE_FUNCTIONS):
        said = {lit.this.lower() for lit in parent.find_all(exp.Literal) if lit.is_string}
        return not said & _EPOCH_MODIFIERS
    if isinstance(parent, _COMPARED):
        others = [v for v in parent.args.values() if isinstance(v, exp.Expr) and v is not col]
        return bool(others) and all(
            o.find(exp.Column) is None
            and any(lit.is_string and _DATE_TEXT.match(lit.this) for lit in o.find_all(exp.Literal))
            for o in others
        )
    return False


def epoch_dates(
    sql: str,
    dialect: str,
    catalog: Catalog | None,
    distinct_values: Callable[[Table, str], Sequence[object]],
) -> tuple[str, str] | None:
    """``sql`` with each column that stores a moment as seconds (or milliseconds) since
    1970 and that the query reads as a date in SQLite — the time of ``strftime``, ``date``,
    ``datetime``, ``time`` or ``julianday`` without the modifier 'unixepoch' (read as a
    Julian day: nothing, or a date thousands of years away), or compared with a date written
    as text (a number is less than any text in SQLite, so ``created >= '2024-01-01'`` holds
    for no row) — read as the moment it counts, ``datetime(created, 'unixepoch')``
    (``created / 1000`` for milliseconds); and what was read so.  None when there is no such
    column or the engine is not SQLite (the others refuse a number where a date belongs)."""
    if dialect != "sqlite" or catalog is None:
        return None
    tree = parse(sql, dialect)
    if tree is None:
        return None
    changed: list[str] = []
    for select in list(tree.find_all(exp.Select)):
        scope = scope_tables(select, catalog)
        if not scope:
            continue
        for col in list(select.find_all(exp.Column)):
            if col.parent_select is not select or not _read_as_date(col):
                continue
            scale = _epoch_scale(col, scope, distinct_values)
            if scale is None:
                continue
            moment: exp.Expr = col.copy()
            if scale != 1:
                moment = exp.Div(this=moment, expression=exp.Literal.number(scale))
            node = exp.Anonymous(this="datetime", expressions=[moment, exp.Literal.string("unixepoch")])
            written = (
                f"{col.sql(dialect='sqlite')} as {'seconds' if scale == 1 else 'milliseconds'} since 1970"
            )
            if written not in changed:
                changed.append(written)
            col.replace(node)
    if not changed:
        return None
    return readable(tree.sql(dialect="sqlite")), ", ".join(changed)


def _propose_epoch(draft: Draft) -> Proposal:
    if draft.stored_values is None:
        return None
    return epoch_dates(draft.sql, draft.dialect, draft.catalog, draft.stored_values)


EPOCH_DATES = Rewrite(
    name="epoch_dates",
    summary="A column that stores moments as seconds (or milliseconds) since 1970, read as a date in "
    "SQLite (given to strftime or date without 'unixepoch', or compared with a date as text), is read "
    "as the moment it counts.",
    propose=_propose_epoch,
    keeps="runs",
    reason="times stored as seconds since 1970 are read as dates ({change})",
    needs_values=True,
)
