"""Names clearly meant: a failed query with the column or table the engine did not find
replaced by the one clearly meant (:func:`suggest_fix`): a column taken from the wrong
table of the query, a misspelt name, a column of a table the query does not read yet (that
table joined along its foreign key)."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from sqlglot import exp

from sqlnb.adapters import Catalog, Table
from sqlnb.agent.hints import MISSING_COLUMN, MISSING_TABLE, missing_name
from sqlnb.agent.lexicon import roots
from sqlnb.agent.sqltree import (
    fk_links,
    normal_name,
    parse,
    qualified,
    qualify_own,
    scope_tables,
    spelling,
    table_node,
    table_refs,
)
from sqlnb.sql.dialects import sqlglot_dialect


def _closest(name: str, candidates: Sequence[str]) -> str | None:
    """The one candidate that is clearly meant: equal but for case and underscores, else
    a single close spelling."""
    exact = [c for c in candidates if normal_name(c) == normal_name(name)]
    if len(set(exact)) == 1:
        return exact[0]
    if exact:
        return None
    normed = {normal_name(c): c for c in candidates}
    close = difflib.get_close_matches(normal_name(name), list(normed), n=2, cutoff=0.8)
    if len(close) == 1 or (
        len(close) == 2
        and difflib.SequenceMatcher(None, normal_name(name), close[0]).ratio()
        - difflib.SequenceMatcher(None, normal_name(name), close[1]).ratio()
        > 0.1
    ):
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
            for mine, theirs in zip(fk.columns, fk.ref_columns, strict=False):
                if theirs.lower() == want:
                    return mine
    for fk in other.foreign_keys:
        if fk.ref_table.lower() == table.name.lower():
            for theirs, mine in zip(fk.columns, fk.ref_columns, strict=False):
                if theirs.lower() == want:
                    return mine
    return None


def _fix_column(
    tree: exp.Expr,
    qualifier: str,
    bare: str,
    aliases: dict[str, Table],
    spelled: dict[str, str],
    *,
    misspelt: bool,
) -> bool:
    """Fix the references to column ``bare`` (of ``qualifier`` when given) in place: moved to
    the one table of the query that has it, or, with ``misspelt``, renamed to the closest
    existing name.  Whether anything changed."""
    changed = False
    owners = {a: t for a, t in aliases.items() if t.column(bare) is not None}
    for col in list(tree.find_all(exp.Column)):
        if col.name.lower() != bare.lower() or (qualifier and col.table.lower() != qualifier.lower()):
            continue
        # the tables of the column's own SELECT first (the one joined beside it, while a
        # subquery reads the table that has the column too), else of the whole query
        select = col.find_ancestor(exp.Select)
        own = spelling(select) if select is not None else {}
        local = {a: t for a, t in owners.items() if a in own}
        mine = local if len(local) == 1 else owners
        if qualifier and len(mine) == 1:  # taken from the wrong table of the query
            owner = next(iter(mine))
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
        pool = [
            c.name for a, t in aliases.items() if not qualifier or a == qualifier.lower() for c in t.columns
        ] or [c.name for t in aliases.values() for c in t.columns]
        fixed = _closest(bare, pool)
        if fixed is not None and fixed != bare:
            # a name that differs in case only was folded by the engine (PostgreSQL's
            # DiscountPct is discountpct unquoted): quoted, it is the catalog's spelling
            col.set("this", exp.to_identifier(fixed, quoted=True if fixed.lower() == bare.lower() else None))
            changed = True
    return changed


def suggest_fix(kind: str, message: str, sql: str, dialect: str, catalog: Catalog | None) -> str | None:
    """The failed query with the name the engine did not find replaced by the one clearly
    meant — a column taken from the wrong table of the query, a misspelt column or table —
    or None when no single fix is clear.  The model sees it as a suggestion; it runs only
    if the model proposes it (or, for a draft of the first round, as its stand-in)."""
    if catalog is None:
        return None
    tree = parse(sql, dialect)
    if tree is None:
        return None
    d = sqlglot_dialect(dialect)
    refs = table_refs(tree, catalog)
    aliases = {alias.lower(): found for alias, _, found in refs}
    spelled = {alias.lower(): alias for alias, _, _ in refs}  # alias as the query writes it
    changed = False
    column = missing_name(message, MISSING_COLUMN)
    table = missing_name(message, MISSING_TABLE) if kind == "table_not_found" else None
    if column:
        qualifier, _, bare = column.rpartition(".")
        # a column of a table the query does not use: that table joined along its foreign
        # key; else a column taken from the wrong table of the query, or misspelt
        joined = _join_owner(tree, bare, catalog)
        if (
            not joined
            and not any(t.column(bare) is not None for t in catalog.tables)
            and (spelt := _split_name(bare, catalog)) is not None
        ):
            # a name no table has that spells a table and its column (<table>_<column>)
            joined = _join_owner(tree, bare, catalog, spelt=spelt)
        changed = joined or _fix_column(tree, qualifier, bare, aliases, spelled, misspelt=True)
        # the engine names the first missing column only: others taken from the wrong
        # table of the query get the same fix
        changed = _requalify(tree, aliases, spelled) or changed
        # and columns of tables the query does not use yet, one owner joined for each;
        # then the columns qualified with a table that lacks them go to the joined one
        for other in _unresolved(tree, catalog):
            joined = _join_owner(tree, other, catalog) or joined
        if joined:
            changed = True
            refs = table_refs(tree, catalog)
            aliases = {alias.lower(): found for alias, _, found in refs}
            spelled = {alias.lower(): alias for alias, _, _ in refs}
            # not the links to a table joined later (a JOIN condition)
            _requalify(tree, aliases, spelled, outside_joins=True)
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


def _requalify(
    tree: exp.Expr, aliases: dict[str, Table], spelled: dict[str, str], *, outside_joins: bool = False
) -> bool:
    """Columns qualified with a table of the query that lacks them, moved to the table of
    the query that has them (``_fix_column``); ``outside_joins``: not those inside a JOIN
    condition.  Whether any moved."""
    changed = False
    for col in list(tree.find_all(exp.Column)):
        q = col.table.lower()
        if (
            q
            and q in aliases
            and aliases[q].column(col.name) is None
            and not (outside_joins and col.find_ancestor(exp.Join) is not None)
        ):
            changed = _fix_column(tree, col.table, col.name, aliases, spelled, misspelt=False) or changed
    return changed


def _split_name(bare: str, catalog: Catalog) -> tuple[Table, str] | None:
    """The one table and column a missing column's name spells as ``<table>_<column>``
    (``customer_city`` for ``customers.city``), the table's name in singular or plural;
    None when no single pair is clear."""
    found = []
    parts = bare.split("_")
    for i in range(1, len(parts)):
        prefix, suffix = "_".join(parts[:i]), "_".join(parts[i:])
        for t in catalog.tables:
            col = t.column(suffix)
            if col is not None and roots(t.name) == roots(prefix):
                found.append((t, col.name))
    return found[0] if len(found) == 1 else None


def _join_owner(
    tree: exp.Expr, bare: str, catalog: Catalog, *, spelt: tuple[Table, str] | None = None
) -> bool:
    """Join the table that has column ``bare`` to each SELECT that names the column
    although none of its tables has it (a filter on a column of a table linked to the one
    the SELECT reads): the one owner of the column that one foreign key links to a table
    of the SELECT, joined along that key, the column taken from it.  ``spelt``: the owner
    and column a name no table has stands for (:func:`_split_name`): the column renamed,
    taken from the owner, which is joined unless the SELECT reads it already.  Whether
    anything changed."""
    owners = [spelt[0]] if spelt else [t for t in catalog.tables if t.column(bare) is not None]
    if not owners:
        return False
    changed = False
    for select in list(tree.find_all(exp.Select)):
        scope = scope_tables(select, catalog)
        if not scope:
            continue
        refs = [
            c
            for c in select.find_all(exp.Column)
            if c.name.lower() == bare.lower()
            and c.find_ancestor(exp.Select) is select
            and (not c.table or c.table.lower() in scope)
        ]
        if not refs or any(t.column(bare) is not None for t in scope.values()):
            continue
        if any(c.find_ancestor(exp.Join) is not None for c in refs):
            continue  # a join condition on a column the table lacks: a wrong link, not a missing table
        if spelt and (read := [a for a, t in scope.items() if t is spelt[0]]):
            if len(read) == 1:  # the owner is read already: the column taken from it
                spelled = spelling(select)
                for c in refs:
                    c.set("table", exp.to_identifier(spelled.get(read[0], read[0])))
                    c.set("this", exp.to_identifier(spelt[1], quoted=True))
                changed = True
            continue
        links = [
            (alias, owner, pair)
            for owner in owners
            if all(owner is not t for t in scope.values())
            for alias, t in scope.items()
            for pair in fk_links(t, owner, catalog)
        ]
        if len({id(owner) for _, owner, _ in links}) != 1 or len(links) != 1:
            continue  # no owner linked to the query's tables, or not one clear link
        alias, owner, (x, y) = links[0]
        spelled = spelling(select)
        used = set(scope) | {t.name.lower() for t in tree.find_all(exp.Table)}
        name, n = owner.name.lower(), 2
        while name in used:
            name, n = f"{owner.name.lower()}_{n}", n + 1
        # the new table may share column names: this SELECT's own columns are qualified
        qualify_own(select, scope, spelled)
        for c in refs:
            c.set("table", exp.to_identifier(name))
            if spelt:
                c.set("this", exp.to_identifier(spelt[1], quoted=True))
        select.join(
            exp.alias_(table_node(owner, catalog), exp.to_identifier(name)),
            on=exp.EQ(this=qualified(x, spelled.get(alias, alias)), expression=qualified(y, name)),
            copy=False,
        )
        changed = True
    return changed


def _unresolved(tree: exp.Expr, catalog: Catalog) -> list[str]:
    """The names of columns that no table of their SELECT (nor of an enclosing one) has,
    other than the SELECT's own output names, first seen first."""
    out: list[str] = []
    for select in tree.find_all(exp.Select):
        scopes = [scope_tables(select, catalog)]
        outer = select.parent
        while outer is not None:
            if isinstance(outer, exp.Select):
                scopes.append(scope_tables(outer, catalog))
            outer = outer.parent
        if not scopes[0]:
            continue
        names = {e.alias.lower() for e in select.expressions if isinstance(e, exp.Alias)}
        for c in select.find_all(exp.Column):
            if c.find_ancestor(exp.Select) is not select or c.name.lower() in names or not c.name:
                continue
            if c.table:
                t = scopes[0].get(c.table.lower())
                if (
                    t is None
                    or t.column(c.name) is not None
                    or any(x.column(c.name) is not None for x in scopes[0].values())
                ):
                    continue
            elif any(t.column(c.name) is not None for sc in scopes for t in sc.values()):
                continue
            if c.name.lower() not in (n.lower() for n in out):
                out.append(c.name)
    return out
