"""Subset averages: a draft comparing rows with the average of a subset of them that limits
the compared rows to that subset too lists them all (:data:`SUBSET_AVERAGES`)."""

from __future__ import annotations

from sqlglot import exp

from sqlnb.adapters import Catalog
from sqlnb.agent.lexicon import AVERAGE_WORD, value_named
from sqlnb.agent.repairs.rewrite import Draft, Proposal, Rewrite
from sqlnb.agent.sqltree import and_terms, parse, readable, scope_tables, table_names
from sqlnb.sql.dialects import sqlglot_dialect


def _same_filter(a: exp.Expr, b: exp.Expr) -> bool:
    """Whether two ``column = 'value'`` terms compare the same column (by name) with the
    same string."""

    def parts(term: exp.Expr) -> tuple[str, str] | None:
        if isinstance(term, exp.EQ):
            for col, lit in ((term.this, term.expression), (term.expression, term.this)):
                if isinstance(col, exp.Column) and isinstance(lit, exp.Literal) and lit.is_string:
                    return col.name.lower(), str(lit.this)
        return None

    pa = parts(a)
    return pa is not None and pa == parts(b)


def average_subset_filter(
    sql: str, dialect: str, catalog: Catalog | None, question: str
) -> tuple[str, str] | None:
    """A question comparing rows with the average of a subset of them (the rows above the
    average of those of one kind) answered with the subset's filter on the compared rows
    as well (``WHERE kind = 'x' AND v > (SELECT AVG(v) FROM t WHERE kind = 'x')``: only
    rows of that kind listed): the query without that outer filter, and what was dropped.

    Only when one SELECT over one catalog table compares a column of it with a subquery
    that averages over the same table, both filter on the same ``column = 'value'``, and
    the question names that value (as a word, or a code it spells out) only after its
    "average" and not before it (a question that limits the compared rows to that kind
    as well keeps the filter).  None otherwise."""
    if catalog is None or not question:
        return None
    where_avg = AVERAGE_WORD.search(question)
    if where_avg is None:
        return None
    tree = parse(sql, dialect)
    if not isinstance(tree, exp.Select) or tree.args.get("joins") or tree.args.get("where") is None:
        return None
    scope = scope_tables(tree, catalog)
    if len(scope) != 1:
        return None
    table = next(iter(scope.values()))
    names = table_names([table])
    before = value_named(question[: where_avg.start()], codes=True, names=names)
    after = value_named(question[where_avg.start() :], codes=True, names=names)
    terms = and_terms(tree.args["where"].this)
    d = sqlglot_dialect(dialect)
    for cmp in terms:
        if not isinstance(cmp, (exp.GT, exp.GTE, exp.LT, exp.LTE)):
            continue
        sub = next((s for s in (cmp.this, cmp.expression) if isinstance(s, exp.Subquery)), None)
        inner = sub.this if sub is not None else None
        if (
            not isinstance(inner, exp.Select)
            or len(inner.expressions) != 1
            or not isinstance(inner.expressions[0].unalias(), exp.Avg)
            or inner.args.get("joins")
        ):
            continue
        inner_scope = scope_tables(inner, catalog)
        if list(inner_scope.values()) != [table] or inner.args.get("where") is None:
            continue
        inner_terms = and_terms(inner.args["where"].this)
        for term in terms:
            if term is cmp or not any(_same_filter(term, t) for t in inner_terms):
                continue
            value = str(next(lit for lit in term.find_all(exp.Literal)).this)
            if not after(value) or before(value):
                continue
            rest = [t for t in terms if t is not term]
            tree.set("where", exp.Where(this=exp.and_(*[t.copy() for t in rest])))
            return readable(tree.sql(dialect=d)), f"{term.sql(dialect=d)} left to the average"
    return None


def _propose(draft: Draft) -> Proposal:
    return average_subset_filter(draft.sql, draft.dialect, draft.catalog, draft.question)


SUBSET_AVERAGES = Rewrite(
    name="subset_averages",
    summary="A draft comparing rows with the average of a subset of them that limits the compared "
    "rows to that subset as well lists them all.",
    propose=_propose,
    keeps="finds_rows",
    reason="the rows compared with a subset's average are no longer limited to that subset ({change})",
)
