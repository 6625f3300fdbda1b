"""The other side of a self-join: a draft that joins a table to itself, pins one side to a
value (``WHERE parent.name = 'Electronics'``) and shows that side's pinned column answers
with the value it was given, once per row of the other side.  It shows the other side's
column instead (:data:`SELF_JOIN_SIDE`): the subcategories of Electronics, the manager of
the employee named, the rows the question asks about."""

from __future__ import annotations

from sqlglot import exp

from sqlnb.adapters import Catalog
from sqlnb.agent.repairs.rewrite import Draft, Proposal, Rewrite
from sqlnb.agent.sqltree import column_owner, parse, pinned_columns, readable, scope_tables, spelling
from sqlnb.sql.dialects import sqlglot_dialect


def self_join_side(sql: str, dialect: str, catalog: Catalog | None) -> tuple[str, str] | None:
    """``sql`` showing, for each column of its answer that belongs to one side of a
    self-join (a table joined to itself, under exactly two names) and that its WHERE pins
    to one value, the same column of the other side, where the other side's is not pinned;
    and what was changed.  None when the answer shows no pinned side."""
    if catalog is None:
        return None
    tree = parse(sql, dialect)
    if not isinstance(tree, exp.Select):
        return None
    scope = scope_tables(tree, catalog)
    spelled = spelling(tree)
    sides: dict[str, list[str]] = {}
    for alias, table in scope.items():
        sides.setdefault(table.qualified_name.lower(), []).append(alias)
    pinned = pinned_columns(tree, scope)
    d = sqlglot_dialect(dialect)
    changed: list[str] = []
    for projection in tree.expressions:
        col = projection.this if isinstance(projection, exp.Alias) else projection
        if not isinstance(col, exp.Column) or not col.table:
            continue
        owner = column_owner(col, scope)
        if owner is None or (owner[0], col.name.lower()) not in pinned:
            continue
        both = sides[owner[1].qualified_name.lower()]
        other = next((a for a in both if a != owner[0]), None)
        if len(both) != 2 or other is None or (other, col.name.lower()) in pinned:
            continue
        before = col.sql(dialect=d)
        col.set("table", exp.to_identifier(spelled.get(other, other)))
        changed.append(f"{before} → {col.sql(dialect=d)}")
    if not changed:
        return None
    return readable(tree.sql(dialect=d)), ", ".join(changed)


def _propose(draft: Draft) -> Proposal:
    return self_join_side(draft.sql, draft.dialect, draft.catalog)


SELF_JOIN_SIDE = Rewrite(
    name="self_join_side",
    summary="A draft that shows the side of a self-join its WHERE pins to a value (the value it was given, "
    "once per row) shows the other side's column instead.",
    propose=_propose,
    keeps="changes_result",
    reason="the rows joined to the one named, not the one named again ({change})",
)
