"""Repairs of a query that found nothing: a filter value put back as it is stored
(:func:`value_repair`), and the NULLs left out of a ``NOT IN`` subquery
(:func:`null_safe_not_in`).  The first round tries them when every draft came back empty."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence

from sqlglot import exp

from sqlnb.adapters import Catalog, Table
from sqlnb.agent.lexicon import plain_text
from sqlnb.agent.sqltree import parse, readable, stored_strings, string_filters
from sqlnb.sql.dialects import sqlglot_dialect


def value_repair(
    sql: str, dialect: str, catalog: Catalog | None, distinct_values: Callable[[Table, str], Sequence[object]]
) -> tuple[str, str] | None:
    """When a filter matched nothing because a string literal differs from the value
    stored in its column only in case or spacing (``= 'new york'`` for 'New York'), or is
    one clear near match of it: the query with the stored values put in, and what was
    replaced (``'new york' → 'New York'``).  None when no literal has exactly one such
    stored value."""
    if catalog is None:
        return None
    tree = parse(sql, dialect)
    if tree is None:
        return None
    changes: list[str] = []
    for _node, col, table, literals in string_filters(
        tree, catalog, (exp.EQ, exp.In, exp.NEQ), unique_owner=True
    ):
        values = stored_strings(table, col, distinct_values)
        if not values:
            continue
        for lit in literals:
            wanted = str(lit.this)
            if wanted in values:
                continue
            same = [v for v in values if plain_text(v) == plain_text(wanted)]
            if len(same) != 1:
                near = difflib.get_close_matches(wanted, values, n=2, cutoff=0.85)
                same = near if len(near) == 1 else []
            if len(same) == 1:
                lit.replace(exp.Literal.string(same[0]))
                changes.append(f"'{wanted}' → '{same[0]}'")
    if not changes:
        return None
    return readable(tree.sql(dialect=sqlglot_dialect(dialect))), ", ".join(changes)


def null_safe_not_in(sql: str, dialect: str) -> tuple[str, list[str]] | None:
    """``x NOT IN (SELECT c FROM …)`` is never true once ``c`` holds a NULL, so such a
    query comes back empty however the data looks: the query with ``c IS NOT NULL`` added
    to each such subquery (what "x is not among the c's" means), and those columns.  None
    when the query has no ``NOT IN`` over a one-column subquery."""
    tree = parse(sql, dialect)
    if tree is None:
        return None
    changed: list[str] = []
    for node in list(tree.find_all(exp.Not)):
        inner = node.this.unnest() if isinstance(node.this, exp.Paren) else node.this
        if not isinstance(inner, exp.In) or not isinstance(inner.args.get("query"), exp.Subquery):
            continue
        select = inner.args["query"].this
        if not isinstance(select, exp.Select) or len(select.expressions) != 1:
            continue
        col = select.expressions[0].unalias()
        if not isinstance(col, exp.Column):
            continue
        select.where(exp.Not(this=exp.Is(this=col.copy(), expression=exp.Null())), copy=False)
        changed.append(col.sql(dialect=sqlglot_dialect(dialect)))
    if not changed:
        return None
    return readable(tree.sql(dialect=sqlglot_dialect(dialect))), changed
