"""Joins along the keys: a draft whose JOIN compares columns no foreign key links is joined
along the foreign keys the catalog declares instead (:data:`LINK_JOINS`)."""

from __future__ import annotations

from sqlglot import exp

from sqlnb.adapters import Catalog, Table
from sqlnb.agent.repairs.rewrite import Draft, Proposal, Rewrite
from sqlnb.agent.sqltree import (
    fk_links,
    fk_target,
    parse,
    qualified,
    qualify_own,
    scope_tables,
    spelling,
    table_node,
)
from sqlnb.sql.dialects import sqlglot_dialect


def link_joins(
    sql: str, dialect: str, catalog: Catalog | None, *, allow_missing: bool = False
) -> tuple[str, str] | None:
    """A query whose JOIN compares columns that no foreign key links, while the catalog
    says how the two tables are linked: the same query joined along the foreign key
    (``a.id = b.id`` → ``a.id = b.a_id``, or the link through the one table between
    them), and what changed.  Small models join on any two columns whose names look
    alike; an unlinked join either finds nothing or pairs unrelated rows.

    Only a JOIN whose ON is one equality of two columns, only between tables the catalog
    declares foreign keys for, and only when the link is clear: the one foreign key
    between the two tables, or else the one table that links them (one key each way) and
    that the query does not use yet.  Columns of the same name are taken as meant (a
    natural link the catalog may not declare) unless both are their tables' own keys.
    ``allow_missing``: also a JOIN whose ON names a column its table does not have (a
    query that failed on it).  None otherwise."""
    if catalog is None or not any(t.foreign_keys for t in catalog.tables):
        return None
    tree = parse(sql, dialect)
    if tree is None:
        return None
    linked = {id(t) for t in catalog.tables if t.foreign_keys} | {
        id(r) for t in catalog.tables for fk in t.foreign_keys if (r := fk_target(fk, catalog))
    }
    changes: list[str] = []
    for select in list(tree.find_all(exp.Select)):
        scope = scope_tables(select, catalog)
        used = set(scope) | {t.name.lower() for t in select.find_all(exp.Table)}
        spelled = spelling(select)
        joins = list(select.args.get("joins") or [])
        for join in joins:
            on = join.args.get("on")
            right = join.this
            if not isinstance(on, exp.EQ) or not isinstance(right, exp.Table) or join.args.get("using"):
                continue
            if not (isinstance(on.this, exp.Column) and isinstance(on.expression, exp.Column)):
                continue
            joined = (right.alias or right.name).lower()
            if joined not in scope:
                continue

            missing: list[str] = []  # qualifiers of columns their table does not have
            found = [(_owner(c, scope, missing), c) for c in (on.this, on.expression)]
            if any(o is None for o, _ in found) or (missing and not allow_missing):
                continue
            ends = [(o, c) for o, c in found if o is not None]
            owners = [o for o, _ in ends]
            if joined in owners:
                if owners.count(joined) == 2:
                    continue  # compares two columns of one row: a filter, not a link
                other = next(o for o in owners if o != joined)
                mine = {o: c.name.lower() for o, c in ends}
                if (
                    mine[other] == mine[joined]
                    and not missing
                    and not all(
                        [k.lower() for k in scope[o].primary_key] == [mine[o]] for o in (other, joined)
                    )
                ):
                    # the same name on both sides: a link the catalog may not declare
                    # (but two tables' own keys, ``a.id = b.id``, pair unrelated rows)
                    continue
            elif owners[0] == owners[1]:
                # both sides on one earlier table (``JOIN b ON a.x = a.y``): nothing links
                # the joined table yet
                other, mine = owners[0], None
            else:
                continue
            a, b = scope[other], scope[joined]
            if id(a) not in linked or id(b) not in linked or a is b:
                continue
            links = fk_links(a, b, catalog)
            if mine and any((x.lower(), y.lower()) == (mine[other], mine[joined]) for x, y in links):
                continue  # joined along the foreign key
            qa, qb = spelled.get(other, other), spelled.get(joined, joined)
            before = (
                f"{on.this.sql(dialect=sqlglot_dialect(dialect))} = "
                f"{on.expression.sql(dialect=sqlglot_dialect(dialect))}"
            )
            if len(links) == 1:
                x, y = links[0]
                join.set("on", exp.EQ(this=qualified(x, qa), expression=qualified(y, qb)))
                changes.append(f"{before} → {a.name}.{x} = {b.name}.{y}")
                continue
            if links:
                continue  # several keys between them: which one is meant is not clear
            # a table the query reads already links them another way (one link of a row
            # beside another link of the same row): not this link
            mids = [
                (t, first[0], second[0])
                for t in catalog.tables
                if t is not a
                and t is not b
                and t.name.lower() not in used
                and len(first := fk_links(a, t, catalog)) == 1
                and len(second := fk_links(t, b, catalog)) == 1
            ]
            if len(mids) != 1:
                continue
            mid, (x, m1), (m2, y) = mids[0]
            used.add(mid.name.lower())
            # the new table may share column names: this SELECT's own columns are qualified
            qualify_own(select, scope, spelled)
            step = exp.Join(
                this=table_node(mid, catalog),
                on=exp.EQ(this=qualified(x, qa), expression=qualified(m1, mid.name, quoted=True)),
            )
            for arg in ("side", "kind"):
                if join.args.get(arg):
                    step.set(arg, join.args[arg])
            join.set("on", exp.EQ(this=qualified(m2, mid.name, quoted=True), expression=qualified(y, qb)))
            all_joins = select.args.get("joins") or []
            at = next(i for i, j in enumerate(all_joins) if j is join)
            select.set("joins", all_joins[:at] + [step] + all_joins[at:])
            changes.append(f"{before} → {a.name}.{x} = {mid.name}.{m1}, {mid.name}.{m2} = {b.name}.{y}")
    if not changes:
        return None
    try:
        return tree.sql(dialect=sqlglot_dialect(dialect)), "; ".join(changes)
    except Exception:
        return None


def _owner(col: exp.Column, scope: dict[str, Table], missing: list[str]) -> str | None:
    """The alias (in ``scope``) of the table a column of a JOIN's ON belongs to: its
    qualifier's, else the one table that has it; None when no table of the scope is
    clear.  A qualifier whose table does not have the column is added to ``missing``."""
    if col.table:
        q = col.table.lower()
        if q in scope and scope[q].column(col.name) is None:
            missing.append(q)  # ``b.x_id`` where b has none: b is what it joins
            return q
        return q if q in scope else None
    having = [a for a, t in scope.items() if t.column(col.name) is not None]
    return having[0] if len(having) == 1 else None


def _propose(draft: Draft) -> Proposal:
    return link_joins(draft.sql, draft.dialect, draft.catalog)


LINK_JOINS = Rewrite(
    name="link_joins",
    summary="A draft whose JOIN compares columns no foreign key links is joined along the foreign "
    "keys instead (the one key between the two tables, or the one table linking them).",
    propose=_propose,
    keeps="runs",
    reason="joined along the foreign keys ({change})",
)
