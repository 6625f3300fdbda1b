"""Things kept apart: a draft that adds up rows per name of a thing (``GROUP BY
customers.name`` with a COUNT or SUM, or per a person's first and last name) and not per
the thing's key groups by the key as well, so that two customers who share a name are not
added together (:data:`GROUP_BY_KEY`).  Where no name is shared the result is the same, and the draft
stands as written."""

from __future__ import annotations

from sqlglot import exp

from sqlnb.adapters import Catalog
from sqlnb.agent.repairs.labels import label_columns
from sqlnb.agent.repairs.rewrite import Draft, Proposal, Rewrite
from sqlnb.agent.sqltree import column_owner, grouped_apart, parse, qualified, scope_tables, spelling
from sqlnb.sql.dialects import sqlglot_dialect


def group_by_key(sql: str, dialect: str, catalog: Catalog | None) -> tuple[str, str] | None:
    """``sql`` grouped by the key of each table whose naming columns
    (:func:`~sqlnb.agent.repairs.labels.label_columns`: one, or a person's first and last
    name, all of them) it groups by without the key, a
    unique column or a foreign key referencing the table (only for a single-column key and
    a query that adds up rows: a grouping without an aggregate lists distinct names), and
    what was added; None when nothing is to add."""
    tree = parse(sql, dialect)
    if not isinstance(tree, exp.Select) or catalog is None:
        return None
    group = tree.args.get("group")
    if group is None or tree.find(exp.AggFunc) is None:
        return None
    scope, spelled = scope_tables(tree, catalog), spelling(tree)
    groups = [
        (owner[0], owner[1], g.name)
        for g in group.expressions
        if isinstance(g, exp.Column) and (owner := column_owner(g, scope)) is not None
    ]
    added: list[str] = []
    for alias, table, col in list(groups):
        # the column that names the table's rows, or a person's first and last name: all grouped
        names = {n.lower() for n in label_columns(table)}
        grouped = {c.lower() for a, _, c in groups if a == alias}
        if not names or len(table.primary_key) != 1 or col.lower() not in names or not names <= grouped:
            continue
        if grouped_apart(table, alias, groups):
            continue
        key, written = table.primary_key[0], spelled.get(alias, alias)
        group.append("expressions", qualified(key, written))
        groups.append((alias, table, key))
        added.append(f"{written}.{key}")
    if not added:
        return None
    return tree.sql(dialect=sqlglot_dialect(dialect)), f"grouped by {', '.join(added)} as well"


def _propose(draft: Draft) -> Proposal:
    return group_by_key(draft.sql, draft.dialect, draft.catalog)


GROUP_BY_KEY = Rewrite(
    name="group_by_key",
    summary="A draft that adds up rows per name of a thing, not per its key, groups by the key as well.",
    propose=_propose,
    keeps="changes_result",
    reason="things that share a name kept apart ({change})",
)
