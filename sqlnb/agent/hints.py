"""The hints the model sees with a failed, empty or repeating result: which table really
has a column, the closest existing names, the columns of the tables a query used, the
values a filter could have matched, why a ``NOT IN`` matched nothing, and that rows
repeat.  Text only; the queries the agent rewrites itself are :mod:`sqlnb.agent.repairs`."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Sequence

from sqlglot import exp

from sqlnb.adapters import Catalog, Result, Table
from sqlnb.agent.sqltree import alias_table, parse, query_tables, stored_strings, string_filters

# the name an engine's error says it did not find
MISSING_COLUMN = [
    re.compile(r"no such column:\s*([\w.\"`$]+)", re.I),  # SQLite
    re.compile(r'column\s+"?([\w.$]+)"?\s+does not exist', re.I),  # PostgreSQL, Redshift
    re.compile(r"unknown column\s+'([^']+)'", re.I),  # MySQL
    re.compile(r'referenced column\s+"([^"]+)"\s+not found', re.I),  # DuckDB
    re.compile(r"invalid identifier\s+'([^']+)'", re.I),  # Snowflake
    re.compile(r'column\s+"([^"]+)"\s+not found', re.I),
    re.compile(r'column "([^"]+)" must appear in the group by', re.I),
    re.compile(r'table "([^"]+)" does not have a column named "([^"]+)"', re.I),  # DuckDB, qualified
]
MISSING_TABLE = [
    re.compile(r"no such table:\s*([\w.\"`$]+)", re.I),
    re.compile(r'relation\s+"([^"]+)"\s+does not exist', re.I),
    re.compile(r"table\s+'([^']+)'\s+doesn't exist", re.I),
    re.compile(r'table with name\s+"?([\w.$]+)"?\s+does not exist', re.I),
    re.compile(r"object\s+'([^']+)'\s+does not exist", re.I),
]


def _unquote(name: str) -> str:
    return name.strip().strip('"`[]')


def missing_name(message: str, patterns: Iterable[re.Pattern[str]]) -> str | None:
    """The name an error message says is missing (``patterns``: :data:`MISSING_COLUMN` or
    :data:`MISSING_TABLE`), ``table.column`` where the message names the table apart."""
    for p in patterns:
        m = p.search(message or "")
        if m:
            return ".".join(_unquote(g) for g in m.groups())
    return None


def error_hint(kind: str, message: str, sql: str, dialect: str, catalog: Catalog | None) -> str | None:
    """Hints for a failed query, from the catalog (no data)."""
    if catalog is None:
        return None
    hints: list[str] = []
    used = query_tables(sql, dialect, catalog)
    if kind == "column_not_found" or missing_name(message, MISSING_COLUMN):
        name = missing_name(message, MISSING_COLUMN)
        if name:
            qualifier, _, bare = name.rpartition(".")
            owners = [t for t in catalog.tables if t.column(bare) is not None]
            aliased = alias_table(sql, dialect, catalog, qualifier) if qualifier else None
            if aliased is not None and aliased.column(bare) is None:
                where = (
                    f"{qualifier} is {aliased.name}"
                    if qualifier.lower() != aliased.name.lower()
                    else aliased.name
                )
                hints.append(
                    f"{where}, which has no column {bare} (its columns: "
                    f"{', '.join(c.name for c in aliased.columns[:30])})"
                )
            if owners:
                names = ", ".join(
                    t.qualified_name if t.schema and t.schema != catalog.default_schema else t.name
                    for t in owners[:6]
                )
                hints.append(f"column {bare} exists in: {names}")
                if used and not any(t in used for t in owners):
                    hints.append("join one of those tables, or take the column from the table that has it")
            else:
                pool = sorted({c.name for t in (used or catalog.tables) for c in t.columns})
                close = difflib.get_close_matches(bare, pool, n=3, cutoff=0.5) or difflib.get_close_matches(
                    bare.lower(), [p.lower() for p in pool], n=3, cutoff=0.5
                )
                if close:
                    hints.append(f"no column is named {bare}; closest: {', '.join(close)}")
    if kind == "table_not_found" or missing_name(message, MISSING_TABLE):
        name = missing_name(message, MISSING_TABLE)
        if name:
            bare = name.split(".")[-1]
            pool = [t.name for t in catalog.tables]
            close = difflib.get_close_matches(bare, pool, n=3, cutoff=0.5) or [
                p for p in pool if p.lower() == bare.lower()
            ]
            if close:
                hints.append(f"no table is named {bare}; closest: {', '.join(close)}")
    if used and kind not in ("timeout", "cancelled", "read_only"):
        cols = "; ".join(f"{t.name}({', '.join(c.name for c in t.columns[:30])})" for t in used[:4])
        hints.append(f"columns of the tables used: {cols}")
    return "; ".join(hints) or None


def empty_result_hint(
    sql: str, dialect: str, catalog: Catalog | None, distinct_values: Callable[[Table, str], Sequence[object]]
) -> str | None:
    """When a filter matched nothing: the existing values closest to each string literal
    compared with a column (``col = 'x'``, ``col LIKE 'x'``, ``col IN (...)``)."""
    if catalog is None:
        return None
    tree = parse(sql, dialect)
    if tree is None:
        return None
    hints: list[str] = []
    seen: set[tuple[str, str]] = set()
    for node, col, table, literals in string_filters(tree, catalog, (exp.EQ, exp.Like, exp.ILike, exp.In)):
        key = (table.name, col.name.lower())
        if key in seen:
            continue
        seen.add(key)
        values = stored_strings(table, col, distinct_values)
        if values is None:
            continue
        wanted = [str(lit.this) for lit in literals]
        pattern = isinstance(node, (exp.Like, exp.ILike))
        picks: list[str] = []
        for w in wanted:
            core = w.strip("%_") if pattern else w
            picks += [v for v in values if v.lower() == core.lower() and v not in picks]
            picks += [v for v in values if core.lower() in v.lower() and v not in picks][:3]
            picks += [v for v in difflib.get_close_matches(core, values, n=3, cutoff=0.4) if v not in picks]
        shown = picks[:5] or values[:5]
        if shown:
            label = "closest values" if picks else "some values"
            quoted = ", ".join("'" + v.replace("'", "''") + "'" for v in shown)
            hints.append(
                f"{table.name}.{col.name} has no {', '.join(repr(w) for w in wanted)}; {label}: {quoted}"
            )
    return "; ".join(hints) or None


def null_not_in_hint(columns: Sequence[str]) -> str:
    """Why a query with ``NOT IN (SELECT c …)`` came back empty, for the subqueries'
    ``columns`` (:func:`sqlnb.agent.repairs.empty.null_safe_not_in`): from the query alone."""
    return (
        f"NOT IN matches no row once its list holds a NULL: add IS NOT NULL "
        f"to the subquery ({', '.join(columns)})"
    )


def repeated_rows_hint(result: Result) -> str | None:
    """Say so when rows of a result repeat (a join that multiplies rows, a missing DISTINCT
    or GROUP BY): counts only, no values."""
    table = result.arrow
    if table is None or table.num_columns == 0 or table.num_rows < 2:
        return None
    try:
        distinct = table.group_by(table.column_names, use_threads=False).aggregate([]).num_rows
    except Exception:  # a column type Arrow cannot group by (lists, maps, ...)
        return None
    if distinct == table.num_rows:
        return None
    more = " fetched" if result.truncated else ""
    return (
        f"only {distinct} of the {table.num_rows} rows{more} are different; the others repeat "
        "them (a join that multiplies rows, or a missing DISTINCT or GROUP BY?)"
    )
