"""Checks of how a query joins its tables, from the query and the catalog alone (no data
read): two tables linked through others where one has a key of its own for the other."""

from __future__ import annotations

from sqlglot import exp

from sqlnb.adapters import Table
from sqlnb.agent.checks.check import Answer, Check, Finding
from sqlnb.agent.sqltree import and_terms, column_owner, fk_target, scope_tables


def _links(select: exp.Select, scope: dict[str, Table]) -> list[tuple[str, exp.Column, str, exp.Column]]:
    """The equalities of two columns of different tables of ``select`` itself (its joins'
    ON and its WHERE, AND-ed terms): each as (alias, column, other alias, other column)."""
    terms = [t for j in select.args.get("joins") or [] for t in and_terms(j.args.get("on"))]
    where = select.args.get("where")
    terms += and_terms(where.this if where is not None else None)
    out = []
    for term in terms:
        if not isinstance(term, exp.EQ):
            continue
        left, right = term.this, term.expression
        if not isinstance(left, exp.Column) or not isinstance(right, exp.Column):
            continue
        lo, ro = column_owner(left, scope), column_owner(right, scope)
        if lo is None or ro is None or lo[0] == ro[0]:
            continue
        out.append((lo[0], left, ro[0], right))
    return out


def _selects(a: Answer) -> list[tuple[exp.Select, dict[str, Table]]]:
    """Each SELECT of the kept query with its own tables (:func:`scope_tables`)."""
    tree, catalog = a.tree, a.catalog
    if tree is None or catalog is None:
        return []
    return [(s, scope_tables(s, catalog)) for s in tree.find_all(exp.Select)]


def direct_link_bypassed(a: Answer) -> Finding:
    """A query that reads two tables of which one has a foreign key of its own for the
    other (``reviews.reviewer_id`` for ``customers``) and links them through other tables
    instead (``reviews`` to ``orders`` to ``customers``), never using that key: the rows it
    pairs are related some other way (the customer whose order was reviewed, not the one who
    wrote the review).  A path that reaches the other table by a column of the same
    name as the key (``invoice.customer_id`` beside ``invoice_line.customer_id``) is the
    same link written twice, not another one."""
    catalog = a.catalog
    if catalog is None:
        return None
    for select, scope in _selects(a):
        links = _links(select, scope)
        if len(links) < 2:
            continue
        edges: dict[str, set[str]] = {}
        for x, _, y, _ in links:
            edges.setdefault(x, set()).add(y)
            edges.setdefault(y, set()).add(x)
        used = {
            (owner[0], c.name.lower())
            for c in select.find_all(exp.Column)
            if (owner := column_owner(c, scope)) is not None
        }
        for alias, table in scope.items():
            for fk in table.foreign_keys:
                if len(fk.columns) != 1 or (alias, fk.columns[0].lower()) in used:
                    continue
                target = fk_target(fk, catalog)
                if target is None or target is table:
                    continue
                for other, other_table in scope.items():
                    if other_table is not target or other in edges.get(alias, set()):
                        continue
                    if not _reached(edges, alias, other):
                        continue
                    # the columns the path reaches the other table by, on their other side
                    by = {
                        c.name.lower()
                        for x, xc, y, yc in links
                        for side, c in ((x, yc), (y, xc))
                        if side == other
                    }
                    if fk.columns[0].lower() in by:
                        continue
                    return (
                        f"{table.name} has its own key for {target.name} ({table.name}.{fk.columns[0]}), and the "
                        f"query does not use it: it links {alias} to {other} through other tables, which pairs "
                        f"rows related another way"
                    )
    return None


def _reached(edges: dict[str, set[str]], start: str, goal: str) -> bool:
    """Whether ``goal`` is reached from ``start`` along ``edges`` through other aliases."""
    seen, todo = {start}, [start]
    while todo:
        for nxt in edges.get(todo.pop(), set()):
            if nxt == goal:
                return True
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False


DIRECT_LINK_BYPASSED = Check(
    name="direct_link_bypassed",
    summary="two tables linked through others where one has its own key for the other, which the query "
    "does not use",
    find=direct_link_bypassed,
    advice="Join the two tables by the key one has for the other, the link the question means, instead of "
    "through other tables.",
)
