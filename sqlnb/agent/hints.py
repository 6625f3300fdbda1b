"""Concrete hints for the model after a failed or empty query: which table really has a
column, the closest existing names, the columns of the tables a query used, and the
values a filter could have matched."""

from __future__ import annotations

import difflib
import logging
import re
from typing import Callable, Sequence

import sqlglot
from sqlglot import exp

from sqlnb.adapters.base import Catalog, Table
from sqlnb.sql.dialects import sqlglot_dialect

_log = logging.getLogger("sqlglot")

_MISSING_COLUMN = [
    re.compile(r"no such column:\s*([\w.\"`$]+)", re.I),  # SQLite
    re.compile(r'column\s+"?([\w.$]+)"?\s+does not exist', re.I),  # PostgreSQL, Redshift
    re.compile(r"unknown column\s+'([^']+)'", re.I),  # MySQL
    re.compile(r'referenced column\s+"([^"]+)"\s+not found', re.I),  # DuckDB
    re.compile(r"invalid identifier\s+'([^']+)'", re.I),  # Snowflake
    re.compile(r'column\s+"([^"]+)"\s+not found', re.I),
    re.compile(r'column "([^"]+)" must appear in the group by', re.I),
]
_MISSING_TABLE = [
    re.compile(r"no such table:\s*([\w.\"`$]+)", re.I),
    re.compile(r'relation\s+"([^"]+)"\s+does not exist', re.I),
    re.compile(r"table\s+'([^']+)'\s+doesn't exist", re.I),
    re.compile(r'table with name\s+"?([\w.$]+)"?\s+does not exist', re.I),
    re.compile(r"object\s+'([^']+)'\s+does not exist", re.I),
]


def _unquote(name: str) -> str:
    return name.strip().strip('"`[]')


def missing_name(message: str, patterns) -> str | None:
    for p in patterns:
        m = p.search(message or "")
        if m:
            return _unquote(m.group(1))
    return None


def query_tables(sql: str, dialect: str, catalog: Catalog) -> list[Table]:
    """The catalog tables a query reads (CTE names aside), in order of appearance."""
    tree = _parse(sql, dialect)
    if tree is None:
        return []
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    out: list[Table] = []
    for t in tree.find_all(exp.Table):
        if t.name.lower() in ctes:
            continue
        found = catalog.find(f"{t.db}.{t.name}" if t.db else t.name)
        if found is not None and found not in out:
            out.append(found)
    return out


def _table_refs(tree: exp.Expression, catalog: Catalog) -> list[tuple[str, str, Table]]:
    """The query's table references found in the catalog: (alias as written, table name
    as written, catalog table)."""
    refs = []
    for t in tree.find_all(exp.Table):
        found = catalog.find(f"{t.db}.{t.name}" if t.db else t.name)
        if found is not None:
            refs.append((t.alias or t.name, t.name, found))
    return refs


def alias_table(sql: str, dialect: str, catalog: Catalog, alias: str) -> Table | None:
    """The catalog table an alias (or table name) of the query stands for."""
    tree = _parse(sql, dialect)
    if tree is None:
        return None
    low = alias.lower()
    return next((t for a, name, t in _table_refs(tree, catalog) if low in (a.lower(), name.lower())), None)


def error_hint(kind: str, message: str, sql: str, dialect: str, catalog: Catalog | None) -> str | None:
    """Hints for a failed query, from the catalog (no data)."""
    if catalog is None:
        return None
    hints: list[str] = []
    used = query_tables(sql, dialect, catalog)
    if kind == "column_not_found" or missing_name(message, _MISSING_COLUMN):
        name = missing_name(message, _MISSING_COLUMN)
        if name:
            qualifier, _, bare = name.rpartition(".")
            owners = [t for t in catalog.tables if t.column(bare) is not None]
            aliased = alias_table(sql, dialect, catalog, qualifier) if qualifier else None
            if aliased is not None and aliased.column(bare) is None:
                where = f"{qualifier} is {aliased.name}" if qualifier.lower() != aliased.name.lower() \
                    else aliased.name
                hints.append(f"{where}, which has no column {bare} (its columns: "
                             f"{', '.join(c.name for c in aliased.columns[:30])})")
            if owners:
                names = ", ".join(t.qualified_name if t.schema and t.schema != catalog.default_schema
                                  else t.name for t in owners[:6])
                hints.append(f"column {bare} exists in: {names}")
                if used and not any(t in used for t in owners):
                    hints.append("join one of those tables, or take the column from the table that has it")
            else:
                pool = sorted({c.name for t in (used or catalog.tables) for c in t.columns})
                close = difflib.get_close_matches(bare, pool, n=3, cutoff=0.5) or \
                    difflib.get_close_matches(bare.lower(), [p.lower() for p in pool], n=3, cutoff=0.5)
                if close:
                    hints.append(f"no column is named {bare}; closest: {', '.join(close)}")
    if kind == "table_not_found" or missing_name(message, _MISSING_TABLE):
        name = missing_name(message, _MISSING_TABLE)
        if name:
            bare = name.split(".")[-1]
            pool = [t.name for t in catalog.tables]
            close = difflib.get_close_matches(bare, pool, n=3, cutoff=0.5) or \
                [p for p in pool if p.lower() == bare.lower()]
            if close:
                hints.append(f"no table is named {bare}; closest: {', '.join(close)}")
    if used and kind not in ("timeout", "cancelled", "read_only"):
        cols = "; ".join(f"{t.name}({', '.join(c.name for c in t.columns[:30])})" for t in used[:4])
        hints.append(f"columns of the tables used: {cols}")
    return "; ".join(hints) or None


def _string_filters(tree: exp.Expression, catalog: Catalog, kinds: tuple, *, unique_owner: bool = False):
    """The filters of a parsed query that compare a catalog column with string literals
    (``col = 'x'``, ``col IN ('x', 'y')``, ...; ``kinds``: the expression classes): each
    as (node, column, its table, the literals).  A column without a qualifier belongs to
    the first table of the query that has it (``unique_owner``: only when one has it)."""
    aliases: dict[str, Table] = {}
    for alias, name, found in _table_refs(tree, catalog):
        aliases[alias.lower()] = found
        aliases.setdefault(name.lower(), found)
    for node in list(tree.find_all(*kinds)):
        col = node.this if isinstance(node.this, exp.Column) else None
        if col is None:
            continue
        if isinstance(node, exp.In):
            literals = [e for e in node.expressions if isinstance(e, exp.Literal) and e.is_string]
        else:
            lit = node.expression
            literals = [lit] if isinstance(lit, exp.Literal) and lit.is_string else []
        if not literals:
            continue
        table = aliases.get(col.table.lower()) if col.table else None
        if table is None:
            owners = [t for t in aliases.values() if t.column(col.name) is not None]
            table = owners[0] if owners and (len(owners) == 1 or not unique_owner) else None
        if table is None or table.column(col.name) is None:
            continue
        yield node, col, table, literals


def empty_result_hint(sql: str, dialect: str, catalog: Catalog | None,
                      distinct_values: Callable[[Table, str], Sequence[object]]) -> str | None:
    """When a filter matched nothing: the existing values closest to each string literal
    compared with a column (``col = 'x'``, ``col LIKE 'x'``, ``col IN (...)``)."""
    if catalog is None:
        return None
    tree = _parse(sql, dialect)
    if tree is None:
        return None
    hints: list[str] = []
    seen: set[tuple[str, str]] = set()
    for node, col, table, literals in _string_filters(tree, catalog, (exp.EQ, exp.Like, exp.ILike, exp.In)):
        key = (table.name, col.name.lower())
        if key in seen:
            continue
        seen.add(key)
        try:
            values = [str(v) for v in distinct_values(table, table.column(col.name).name) if v is not None]
        except Exception:
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
            hints.append(f"{table.name}.{col.name} has no {', '.join(repr(w) for w in wanted)}; {label}: {quoted}")
    return "; ".join(hints) or None


def _parse(sql: str, dialect: str):
    previous = _log.level
    _log.setLevel(logging.CRITICAL)
    try:
        return sqlglot.parse_one(sql, read=sqlglot_dialect(dialect))
    except Exception:
        return None
    finally:
        _log.setLevel(previous)


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _closest(name: str, candidates: Sequence[str]) -> str | None:
    """The one candidate that is clearly meant: equal but for case and underscores, else
    a single close spelling."""
    exact = [c for c in candidates if _norm(c) == _norm(name)]
    if len(set(exact)) == 1:
        return exact[0]
    if exact:
        return None
    normed = {_norm(c): c for c in candidates}
    close = difflib.get_close_matches(_norm(name), list(normed), n=2, cutoff=0.8)
    if len(close) == 1 or (len(close) == 2 and difflib.SequenceMatcher(None, _norm(name), close[0]).ratio()
                           - difflib.SequenceMatcher(None, _norm(name), close[1]).ratio() > 0.1):
        return normed[close[0]]
    return None


def _compared_with(col: exp.Column) -> exp.Column | None:
    """The column on the other side of an equality ``col = other``, if that is one."""
    parent = col.parent
    if isinstance(parent, exp.EQ):
        other = parent.expression if parent.this is col else parent.this
        if isinstance(other, exp.Column):
            return other
    return None


def _key_column(table: Table | None, other: Table, other_column: str) -> str | None:
    """The column of ``table`` that a foreign key pairs with ``other.other_column`` (either
    direction), or None."""
    if table is None:
        return None
    want = other_column.lower()
    for fk in table.foreign_keys:
        if fk.ref_table.lower() == other.name.lower():
            for mine, theirs in zip(fk.columns, fk.ref_columns):
                if theirs.lower() == want:
                    return mine
    for fk in other.foreign_keys:
        if fk.ref_table.lower() == table.name.lower():
            for theirs, mine in zip(fk.columns, fk.ref_columns):
                if theirs.lower() == want:
                    return mine
    return None


def _fix_column(tree: exp.Expression, qualifier: str, bare: str, aliases: dict[str, Table],
                spelled: dict[str, str], *, misspelt: bool) -> bool:
    """Fix the references to column ``bare`` (of ``qualifier`` when given) in place: moved to
    the one table of the query that has it, or, with ``misspelt``, renamed to the closest
    existing name.  Whether anything changed."""
    changed = False
    owners = {a: t for a, t in aliases.items() if t.column(bare) is not None}
    for col in list(tree.find_all(exp.Column)):
        if col.name.lower() != bare.lower() or (qualifier and col.table.lower() != qualifier.lower()):
            continue
        if qualifier and len(owners) == 1:  # taken from the wrong table of the query
            owner = next(iter(owners))
            other = _compared_with(col)
            if other is not None and other.table.lower() == owner and other.name.lower() == bare.lower():
                # a join condition: moving the column would compare it with itself;
                # the foreign key between the two tables says what was meant
                key = _key_column(aliases.get(qualifier.lower()), aliases[owner], bare)
                if key is not None:
                    col.set("this", exp.to_identifier(key))
                    changed = True
                continue
            col.set("table", exp.to_identifier(spelled[owner]))
            changed = True
            continue
        if not misspelt:
            continue
        pool = [c.name for a, t in aliases.items() if not qualifier or a == qualifier.lower()
                for c in t.columns] or [c.name for t in aliases.values() for c in t.columns]
        fixed = _closest(bare, pool)
        if fixed is not None and fixed != bare:
            col.set("this", exp.to_identifier(fixed))
            changed = True
    return changed


def suggest_fix(kind: str, message: str, sql: str, dialect: str, catalog: Catalog | None) -> str | None:
    """The failed query with the name the engine did not find replaced by the one clearly
    meant — a column taken from the wrong table of the query, a misspelt column or table —
    or None when no single fix is clear.  The model sees it as a suggestion; it runs only
    if the model proposes it."""
    if catalog is None:
        return None
    tree = _parse(sql, dialect)
    if tree is None:
        return None
    d = sqlglot_dialect(dialect)
    refs = _table_refs(tree, catalog)
    aliases = {alias.lower(): found for alias, _, found in refs}
    spelled = {alias.lower(): alias for alias, _, _ in refs}  # alias as the query writes it
    changed = False
    column = missing_name(message, _MISSING_COLUMN)
    table = missing_name(message, _MISSING_TABLE) if kind == "table_not_found" else None
    if column:
        qualifier, _, bare = column.rpartition(".")
        changed = _fix_column(tree, qualifier, bare, aliases, spelled, misspelt=True)
        # the engine names the first missing column only: others taken from the wrong
        # table of the query get the same fix
        for col in list(tree.find_all(exp.Column)):
            q = col.table.lower()
            if q and q in aliases and aliases[q].column(col.name) is None:
                changed = _fix_column(tree, col.table, col.name, aliases, spelled, misspelt=False) or changed
    elif table:
        bare = table.split(".")[-1]
        fixed = _closest(bare, [t.name for t in catalog.tables])
        if fixed is not None and fixed != bare:
            for t in tree.find_all(exp.Table):
                if t.name.lower() == bare.lower():
                    t.set("this", exp.to_identifier(fixed))
                    changed = True
    if not changed:
        return None
    try:
        return tree.sql(dialect=d)
    except Exception:
        return None


def _plain_text(value: str) -> str:
    return " ".join(value.lower().split())


def value_repair(sql: str, dialect: str, catalog: Catalog | None,
                 distinct_values: Callable[[Table, str], Sequence[object]]) -> tuple[str, str] | None:
    """When a filter matched nothing because a string literal differs from the value
    stored in its column only in case or spacing (``= 'new york'`` for 'New York'), or is
    one clear near match of it: the query with the stored values put in, and what was
    replaced (``'new york' → 'New York'``).  None when no literal has exactly one such
    stored value."""
    if catalog is None:
        return None
    tree = _parse(sql, dialect)
    if tree is None:
        return None
    changes: list[str] = []
    for node, col, table, literals in _string_filters(tree, catalog, (exp.EQ, exp.In, exp.NEQ),
                                                      unique_owner=True):
        try:
            values = [str(v) for v in distinct_values(table, table.column(col.name).name) if v is not None]
        except Exception:
            continue
        if not values:
            continue
        for lit in literals:
            wanted = str(lit.this)
            if wanted in values:
                continue
            same = [v for v in values if _plain_text(v) == _plain_text(wanted)]
            if len(same) != 1:
                near = difflib.get_close_matches(wanted, values, n=2, cutoff=0.85)
                same = near if len(near) == 1 else []
            if len(same) == 1:
                lit.replace(exp.Literal.string(same[0]))
                changes.append(f"'{wanted}' → '{same[0]}'")
    if not changes:
        return None
    return tree.sql(dialect=sqlglot_dialect(dialect)), ", ".join(changes)
