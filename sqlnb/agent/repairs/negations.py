"""Things that have none: a draft answering a question about the things that have none of
something by filtering their joined rows on another value asks for their keys ``NOT IN``
those that do have one instead (:data:`NEGATIONS`)."""

from __future__ import annotations

from sqlglot import exp

from sqlnb.adapters import Catalog, Table
from sqlnb.agent.lexicon import HAVING_NONE
from sqlnb.agent.repairs.rewrite import Draft, Proposal, Rewrite
from sqlnb.agent.sqltree import and_terms, fk_target, parse, readable, scope_tables
from sqlnb.sql.dialects import sqlglot_dialect


def _positive(term: exp.Expr) -> exp.Expr | None:
    """The condition a negated filter on stored values excludes (``c = 'x'`` for
    ``c <> 'x'``, ``NOT c = 'x'``; ``c IN ('x', 'y')`` for ``c NOT IN ('x', 'y')``), or
    None for any other condition."""
    if (
        isinstance(term, exp.NEQ)
        and isinstance(term.left, exp.Column)
        and isinstance(term.right, exp.Literal)
    ):
        return exp.EQ(this=term.left.copy(), expression=term.right.copy())
    if isinstance(term, exp.Not):
        inner = term.this.unnest() if isinstance(term.this, exp.Paren) else term.this
        if (
            isinstance(inner, exp.EQ)
            and isinstance(inner.left, exp.Column)
            and isinstance(inner.right, exp.Literal)
        ):
            return inner.copy()
        if (
            isinstance(inner, exp.In)
            and isinstance(inner.this, exp.Column)
            and not inner.args.get("query")
            and inner.expressions
            and all(isinstance(e, exp.Literal) for e in inner.expressions)
        ):
            return inner.copy()
    return None


def _parents(table: Table, scope: dict[str, Table], catalog: Catalog) -> set[int]:
    """The tables of ``scope`` that ``table`` reaches by foreign keys alone (each row of it
    has at most one row of each): itself, its keys' targets, theirs, …"""
    inside = {id(t) for t in scope.values()}
    seen, todo = {id(table)}, [table]
    while todo:
        for fk in todo.pop().foreign_keys:
            ref = fk_target(fk, catalog)
            if ref is not None and id(ref) in inside and id(ref) not in seen:
                seen.add(id(ref))
                todo.append(ref)
    return seen


def negated_join(sql: str, dialect: str, catalog: Catalog | None, question: str) -> tuple[str, str] | None:
    """A question about the things that have none of something answered by joining their
    rows and filtering the joined rows on the other value (``JOIN orders … WHERE status
    <> 'x'``), which keeps every thing with at least one row of another value: the query
    with that filter turned into ``key NOT IN (the keys of the things that do have one)``,
    and what changed.  The joins are kept where the rest of the query uses them, dropped
    otherwise.

    Only when the question asks about things having none
    (:data:`~sqlnb.agent.lexicon.HAVING_NONE`: "never", "do not have", "with no",
    "without"), the query is one SELECT listing columns of one table (no grouping, no
    aggregate) with a single-column primary key, and the negated filter is on a table
    joined on the "many" side of it (not a table its own foreign keys lead to, which
    holds one row per thing).  None otherwise."""
    if catalog is None or not question or not HAVING_NONE.search(question):
        return None
    tree = parse(sql, dialect)
    if (
        not isinstance(tree, exp.Select)
        or not tree.args.get("joins")
        or tree.args.get("group")
        or tree.args.get("having")
        or tree.args.get("limit")
        or tree.find(exp.AggFunc)
    ):
        return None
    if any(
        isinstance(j.this, exp.Subquery) or (j.side or "").upper() in ("RIGHT", "FULL")
        for j in tree.args["joins"]
    ):
        return None
    scope = scope_tables(tree, catalog)
    if len(scope) != 1 + len(tree.args["joins"]):
        return None  # a source that is not a catalog table
    owners = {c.table.lower() for e in tree.expressions for c in e.find_all(exp.Column)}
    if len(owners) != 1 or "" in owners or any(isinstance(e.unalias(), exp.Star) for e in tree.expressions):
        return None
    thing_alias = owners.pop()
    thing = scope.get(thing_alias)
    if thing is None or len(thing.primary_key) != 1:
        return None
    parents = _parents(thing, scope, catalog)
    where = tree.args.get("where")
    terms = and_terms(where.this if where else None)
    negated = [
        (i, pos)
        for i, t in enumerate(terms)
        if (pos := _positive(t)) is not None
        # the column a negated filter compares (_positive keeps one)
        and (col := pos.find(exp.Column)) is not None
        and (owner := scope.get(col.table.lower())) is not None
        and id(owner) not in parents
    ]
    if len(negated) != 1:
        return None
    at, positive = negated[0]
    d = sqlglot_dialect(dialect)
    key = exp.Column(
        this=exp.to_identifier(thing.primary_key[0], quoted=True),
        table=tree.expressions[0].find(exp.Column).args.get("table").copy(),
    )
    inner = tree.copy()
    inner.set("expressions", [key.copy()])
    inner.set("distinct", None)
    inner.set("order", None)
    inner.set("where", exp.Where(this=positive))
    rest = [t.copy() for i, t in enumerate(terms) if i != at]
    outer = tree.copy()
    used = {
        c.table.lower()
        for part in (outer.expressions, rest, [outer.args.get("order")])
        for e in part
        if e is not None
        for c in e.find_all(exp.Column)
    }
    if used <= {thing_alias}:
        # the joins were there for the negated filter alone: the things, each once
        from_ = outer.args.get("from_")
        if from_ is None or (from_.this.alias or from_.this.name).lower() != thing_alias:
            src = next(
                j.this for j in tree.args["joins"] if (j.this.alias or j.this.name).lower() == thing_alias
            )
            outer.set("from_", exp.From(this=src.copy()))
        outer.set("joins", None)
    condition = exp.Not(this=exp.In(this=key.copy(), query=exp.Subquery(this=inner)))
    where = exp.and_(*rest, condition) if rest else condition
    outer.set("where", exp.Where(this=where))
    before = terms[at].sql(dialect=d)
    return readable(
        outer.sql(dialect=d)
    ), f"{before} → {key.sql(dialect=d)} NOT IN (… WHERE {positive.sql(dialect=d)})"


def _propose(draft: Draft) -> Proposal:
    return negated_join(draft.sql, draft.dialect, draft.catalog, draft.question)


NEGATIONS = Rewrite(
    name="negations",
    summary="A draft answering a question about things that have none of something by filtering "
    "their joined rows on another value asks for their keys NOT IN those that have one.",
    propose=_propose,
    keeps="runs",
    reason="asks for the ones that have none instead of filtering their rows ({change})",
)
