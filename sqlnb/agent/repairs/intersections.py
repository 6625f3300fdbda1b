"""Both of two values as INTERSECT: a draft answering a question about the things that
have both of two values with one filter for either value (or for both on one row) asks for
each value apart, joined by ``INTERSECT`` (:data:`INTERSECTIONS`)."""

from __future__ import annotations

from sqlglot import exp

from sqlnb.agent.lexicon import BOTH_WORD, EXCLUDING
from sqlnb.agent.repairs.rewrite import Draft, Proposal, Rewrite
from sqlnb.agent.sqltree import parse, readable
from sqlnb.sql.dialects import sqlglot_dialect

# where a value split may sit: filters of the query or of a subquery its filter reads
_SPLIT_PATH = (exp.Where, exp.And, exp.Paren, exp.In, exp.Exists, exp.Subquery, exp.Select)


def _column_value(term: exp.Expr) -> tuple[exp.Column, exp.Literal] | None:
    """``col = value``: the column and the value."""
    term = term.unnest() if isinstance(term, exp.Paren) else term
    if isinstance(term, exp.EQ):
        for col, lit in ((term.this, term.expression), (term.expression, term.this)):
            if isinstance(col, exp.Column) and isinstance(lit, exp.Literal):
                return col, lit
    return None


def _value_pair(node: exp.Expr) -> tuple[exp.Column, exp.Literal, exp.Literal] | None:
    """``col IN (a, b)`` or ``col = a OR col = b`` (a and b different): the column and its
    two values."""
    pair = None
    if isinstance(node, exp.In) and not node.args.get("query") and not isinstance(node.parent, exp.Not):
        values = node.expressions
        if (
            isinstance(node.this, exp.Column)
            and len(values) == 2
            and all(isinstance(v, exp.Literal) for v in values)
        ):
            pair = node.this, values[0], values[1]
    elif isinstance(node, exp.Or):
        a, b = _column_value(node.this), _column_value(node.expression)
        if a and b and a[0].sql().lower() == b[0].sql().lower():
            pair = a[0], a[1], b[1]
    return pair if pair and pair[1].sql() != pair[2].sql() else None


def _both_targets(tree: exp.Expr) -> list[tuple[exp.Expr, exp.Expr | None]]:
    """Where a query asks one column of a filter for two values at once: ``(node, None)``
    for ``col IN (a, b)`` or ``col = a OR col = b`` (rows with either value), ``(term_a,
    term_b)`` for ``col = a AND col = b`` in one filter (no row has both)."""
    found: list[tuple[exp.Expr, exp.Expr | None]] = []
    for node in tree.find_all(exp.In, exp.Or, exp.Where):
        if not isinstance(node, exp.Where):
            if _value_pair(node) and node.find_ancestor(exp.Where) is not None:
                found.append((node, None))
            continue
        terms = list(node.this.flatten()) if isinstance(node.this, exp.And) else [node.this]
        eqs = [(t, cv) for t in terms if (cv := _column_value(t))]
        for i, (ta, (ca, va)) in enumerate(eqs):
            for tb, (cb, vb) in eqs[i + 1 :]:
                if ca.sql().lower() == cb.sql().lower() and va.sql() != vb.sql():
                    found.append((ta, tb))
    return found


def both_values_intersect(sql: str, dialect: str, question: str) -> tuple[str, str] | None:
    """A question asking for the things that have both of two values among their related
    rows answered with one filter for either value (``cat IN ('A', 'B')``, ``cat = 'A'
    OR cat = 'B'``: anything with one of them) or for both on the same row (``cat = 'A'
    AND cat = 'B'``: nothing): the query once per value, joined by ``INTERSECT``, and
    what was split.

    Only when the question says "both" and excludes nothing, the query is one SELECT
    without an aggregate, ordering or limit (a GROUP BY of its own columns only, which
    lists each row once as INTERSECT does, is dropped), and one filter of it, or of a
    subquery its filter reads, asks one column for two values.  None otherwise."""
    if not question or not BOTH_WORD.search(question) or EXCLUDING.search(question):
        return None
    tree = parse(sql, dialect)
    if (
        not isinstance(tree, exp.Select)
        or tree.args.get("order")
        or tree.args.get("limit")
        or tree.args.get("having")
        or any(p.find(exp.AggFunc) for p in tree.expressions)
    ):
        return None
    group = tree.args.get("group")
    if group is not None:
        shown = {(p.unalias() if isinstance(p, exp.Alias) else p).sql().lower() for p in tree.expressions}
        if any(g.sql().lower() not in shown for g in group.expressions):
            return None
    targets = _both_targets(tree)
    if len(targets) != 1:
        return None
    node, other = targets[0]
    parent = node.parent
    while parent is not None and parent is not tree:
        if not isinstance(parent, _SPLIT_PATH):
            return None  # a value pair in a join condition, a projection, a comparison
        parent = parent.parent
    d = sqlglot_dialect(dialect)
    branches = []
    for i in (0, 1):
        branch = tree.copy()
        branch.set("group", None)
        # the copy's own target (the same place as in the query)
        a, b = _both_targets(branch)[0]
        if b is None:
            pair = _value_pair(a)
            if pair is None:  # found there by _both_targets
                return None
            col, *values = pair
            (a.parent if isinstance(a.parent, exp.Paren) else a).replace(
                exp.EQ(this=col.copy(), expression=values[i].copy())
            )
        else:
            where = a.find_ancestor(exp.Where)
            if where is None:  # _both_targets finds these terms in a WHERE
                return None
            drop = b if i == 0 else a
            terms = list(where.this.flatten()) if isinstance(where.this, exp.And) else [where.this]
            where.set("this", exp.and_(*[t.copy() for t in terms if t is not drop]))
        branches.append(branch)
    both = exp.Intersect(this=branches[0], expression=branches[1], distinct=True)
    what = node.sql(dialect=d) if other is None else f"{node.sql(dialect=d)} AND {other.sql(dialect=d)}"
    return readable(both.sql(dialect=d)), f"{what} split into an INTERSECT, one value each"


def _propose(draft: Draft) -> Proposal:
    return both_values_intersect(draft.sql, draft.dialect, draft.question)


INTERSECTIONS = Rewrite(
    name="intersections",
    summary="A draft answering a question about things that have both of two values with one "
    "filter for either value asks for each value apart, joined by INTERSECT.",
    propose=_propose,
    keeps="finds_rows",
    reason="each of the two values the question asks for both of is asked for apart ({change})",
)
