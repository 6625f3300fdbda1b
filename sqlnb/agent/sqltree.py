"""SQL-tree helpers the hints, repairs and checks share: a query parsed (sqlglot), the
catalog tables it reads and by which alias, each SELECT's own tables, the foreign keys
between two tables, columns and tables written back qualified and quoted, and the filters
that compare a column with strings, with the values stored in that column."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Iterator, Sequence

import sqlglot
from sqlglot import exp

from sqlnb.adapters import Catalog, ForeignKey, Table
from sqlnb.sql.dialects import sqlglot_dialect

_log = logging.getLogger("sqlglot")

# column types that hold text
TEXT_TYPES = re.compile(r"char|text|string|clob", re.I)


def parse(sql: str, dialect: str) -> exp.Expr | None:
    """``sql`` parsed in ``dialect`` (sqlglot's warnings silenced), or None when it does
    not parse."""
    previous = _log.level
    _log.setLevel(logging.CRITICAL)
    try:
        return sqlglot.parse_one(sql, read=sqlglot_dialect(dialect))
    except Exception:
        return None
    finally:
        _log.setLevel(previous)


def normal_name(name: str) -> str:
    """A name in lower case without anything but letters and digits (``Course_ID`` and
    ``courseid`` alike)."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def table_refs(tree: exp.Expr, catalog: Catalog) -> list[tuple[str, str, Table]]:
    """The query's table references found in the catalog: (alias as written, table name
    as written, catalog table)."""
    refs = []
    for t in tree.find_all(exp.Table):
        found = catalog.find(f"{t.db}.{t.name}" if t.db else t.name)
        if found is not None:
            refs.append((t.alias or t.name, t.name, found))
    return refs


def query_tables(sql: str, dialect: str, catalog: Catalog) -> list[Table]:
    """The catalog tables a query reads (CTE names aside), in order of appearance."""
    tree = parse(sql, dialect)
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


def alias_table(sql: str, dialect: str, catalog: Catalog, alias: str) -> Table | None:
    """The catalog table an alias (or table name) of the query stands for."""
    tree = parse(sql, dialect)
    if tree is None:
        return None
    low = alias.lower()
    return next((t for a, name, t in table_refs(tree, catalog) if low in (a.lower(), name.lower())), None)


def table_names(tables: Iterable[Table]) -> list[str]:
    """The names of ``tables`` and of their columns."""
    return [n for t in tables for n in (t.name, *(c.name for c in t.columns))]


def scope_tables(select: exp.Select, catalog: Catalog) -> dict[str, Table]:
    """The catalog tables of one SELECT's own FROM and JOINs (not its subqueries), by
    alias (or name) in lower case."""
    out: dict[str, Table] = {}
    sources = [select.args.get("from_") or select.args.get("from")] + list(select.args.get("joins") or [])
    for src in sources:
        t = src.this if src is not None else None
        if not isinstance(t, exp.Table):
            continue
        found = catalog.find(f"{t.db}.{t.name}" if t.db else t.name)
        if found is not None:
            out[(t.alias or t.name).lower()] = found
    return out


def column_owner(col: exp.Column, scope: dict[str, Table]) -> tuple[str, Table] | None:
    """The alias (lower case) and catalog table a column of a SELECT belongs to, among the
    SELECT's own tables (:func:`scope_tables`); None when unclear."""
    if col.table:
        t = scope.get(col.table.lower())
        return (col.table.lower(), t) if t is not None else None
    owners = [(alias, t) for alias, t in scope.items() if t.column(col.name) is not None]
    return owners[0] if len(owners) == 1 else None


def grouped_apart(table: Table, alias: str, groups: Sequence[tuple[str, Table, str]]) -> bool:
    """Whether a grouping (``groups``: alias, table and column of each grouped column)
    tells ``table``'s rows apart: it groups by the table's key or a unique column of the
    same alias, or by a foreign key that references the table."""
    key = table.primary_key[0].lower() if len(table.primary_key) == 1 else None
    for g_alias, g_table, g_col in groups:
        low = g_col.lower()
        if g_alias == alias and (
            low == key or any([low] == [u.lower() for u in cols] for cols in table.unique)
        ):
            return True
        for fk in g_table.foreign_keys:
            if [c.lower() for c in fk.columns] == [low] and fk.ref_table.lower() == table.name.lower():
                return True
    return False


def spelling(select: exp.Select) -> dict[str, str]:
    """Each table alias (or name) of ``select``'s own FROM and JOINs, in lower case, as
    the query spells it (an engine may fold case)."""
    sources = [select.args.get("from_") or select.args.get("from")] + list(select.args.get("joins") or [])
    return {
        (t.alias or t.name).lower(): (t.alias or t.name)
        for src in sources
        if src is not None and isinstance(t := src.this, exp.Table)
    }


def fk_target(fk: ForeignKey, catalog: Catalog) -> Table | None:
    """The catalog table foreign key ``fk`` references."""
    return catalog.find(f"{fk.ref_schema}.{fk.ref_table}" if fk.ref_schema else fk.ref_table)


def fk_links(a: Table, b: Table, catalog: Catalog) -> list[tuple[str, str]]:
    """The single-column foreign keys between ``a`` and ``b`` (either direction), as
    (column of ``a``, column of ``b``) pairs."""
    out: list[tuple[str, str]] = []

    def key(fk: ForeignKey, ref: Table) -> str | None:
        if len(fk.ref_columns) == 1 and fk.ref_columns[0]:
            return fk.ref_columns[0]
        return ref.primary_key[0] if len(ref.primary_key) == 1 else None

    for src, dst, flip in ((a, b, False), (b, a, True)):
        for fk in src.foreign_keys:
            if len(fk.columns) != 1 or fk_target(fk, catalog) is not dst or (ref := key(fk, dst)) is None:
                continue
            pair = (ref, fk.columns[0]) if flip else (fk.columns[0], ref)
            if pair not in out:
                out.append(pair)
    return out


def table_node(table: Table, catalog: Catalog) -> exp.Table:
    """``table`` as a quoted table expression, its schema named unless it is the default."""
    schema = table.schema if table.schema and table.schema != catalog.default_schema else None
    return exp.Table(
        this=exp.to_identifier(table.name, quoted=True),
        db=exp.to_identifier(schema, quoted=True) if schema else None,
    )


def qualified(column: str, table: str, *, quoted: bool = False) -> exp.Column:
    """``table.column``: the column as the catalog spells it (quoted), the table or alias
    as the query does (``quoted``: as the catalog does)."""
    return exp.Column(
        this=exp.to_identifier(column, quoted=True), table=exp.to_identifier(table, quoted=quoted)
    )


def qualify_own(select: exp.Select, scope: dict[str, Table], spelled: dict[str, str]) -> None:
    """Qualify the unqualified columns of ``select`` itself (not of its subqueries) that
    one of its tables has, with that table's alias as the query spells it."""
    for c in list(select.find_all(exp.Column)):
        if c.table or c.find_ancestor(exp.Select) is not select:
            continue
        having = [a for a, t in scope.items() if t.column(c.name) is not None]
        if len(having) == 1:
            c.set("table", exp.to_identifier(spelled.get(having[0], having[0])))


def and_terms(node: exp.Expr | None) -> list[exp.Expr]:
    """The terms of a condition joined by AND (parentheses around it aside)."""
    if node is None:
        return []
    node = node.unnest() if isinstance(node, exp.Paren) else node
    if isinstance(node, exp.And):
        return and_terms(node.left) + and_terms(node.right)
    return [node]


def pinned_columns(
    select: exp.Select, scope: dict[str, Table], keep: Callable[[exp.Literal], bool] | None = None
) -> set[tuple[str, str]]:
    """The columns (alias, column name, both in lower case) that ``select``'s WHERE pins to
    one value (``alias.col = 'x'``, either way round; ``keep``: only literals it takes)."""
    pinned: set[tuple[str, str]] = set()
    for term in and_terms(select.args.get("where") and select.args["where"].this):
        if not isinstance(term, exp.EQ):
            continue
        for col, lit in ((term.this, term.expression), (term.expression, term.this)):
            if isinstance(col, exp.Column) and isinstance(lit, exp.Literal) and (keep is None or keep(lit)):
                owner = column_owner(col, scope)
                if owner is not None:
                    pinned.add((owner[0], col.name.lower()))
    return pinned


def string_filters(
    tree: exp.Expr, catalog: Catalog, kinds: tuple[type[exp.Expr], ...], *, unique_owner: bool = False
) -> Iterator[tuple[exp.Expr, exp.Column, Table, list[exp.Literal]]]:
    """The filters of a parsed query that compare a catalog column with string literals
    (``col = 'x'``, ``col IN ('x', 'y')``, ...; ``kinds``: the expression classes): each
    as (node, column, its table, the literals).  A column without a qualifier belongs to
    the first table of the query that has it (``unique_owner``: only when one has it)."""
    aliases: dict[str, Table] = {}
    for alias, name, found in table_refs(tree, catalog):
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


def stored_strings(
    table: Table, col: exp.Column, distinct_values: Callable[[Table, str], Sequence[object]]
) -> list[str] | None:
    """The values stored in ``table``'s column that ``col`` names (``distinct_values``), as
    text, NULLs left out: None when the table has no such column or its values cannot be
    read."""
    column = table.column(col.name)
    if column is None:
        return None
    try:
        return [str(v) for v in distinct_values(table, column.name) if v is not None]
    except Exception:  # a column the database cannot list
        return None


def stored_numbers(
    table: Table, col: exp.Column, distinct_values: Callable[[Table, str], Sequence[object]]
) -> list[float] | None:
    """The values stored in ``table``'s column that ``col`` names (``distinct_values``), NULLs
    left out, when every one is a number (booleans are not): None when some value is not,
    none is stored, or the column cannot be read."""
    column = table.column(col.name)
    if column is None:
        return None
    try:
        stored = [v for v in distinct_values(table, column.name) if v is not None]
    except Exception:  # a column the database cannot list
        return None
    numbers = [float(v) for v in stored if isinstance(v, int | float) and not isinstance(v, bool)]
    return numbers if numbers and len(numbers) == len(stored) else None


_NAME = r'(?:"[^"]+"|`[^`]+`|\w+)(?:\.(?:"[^"]+"|`[^`]+`|\w+))*'


def readable(sql: str) -> str:
    """sqlglot's ``NOT x IN (…)`` and ``NOT x IS NULL`` as people write them (``x NOT IN``,
    ``x IS NOT NULL``) for a column ``x``: the same query."""
    sql = re.sub(rf"\bNOT ({_NAME}) IN \(", r"\1 NOT IN (", sql)
    return re.sub(rf"\bNOT ({_NAME}) IS NULL\b", r"\1 IS NOT NULL", sql)
