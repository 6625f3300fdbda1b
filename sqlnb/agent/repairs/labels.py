"""Names for ids: a draft that shows an id where the question asks for the thing it
identifies shows that thing's name instead (:data:`NAMES_FOR_IDS`)."""

from __future__ import annotations

from sqlglot import exp

from sqlnb.adapters import Catalog, Column, Table
from sqlnb.agent.lexicon import FIRST_NAME_COLUMNS, ID_WORDS, LAST_NAME_COLUMNS, roots, words
from sqlnb.agent.repairs.rewrite import Draft, Proposal, Rewrite
from sqlnb.agent.sqltree import (
    TEXT_TYPES,
    fk_target,
    normal_name,
    parse,
    qualify_own,
    scope_tables,
    table_node,
)
from sqlnb.sql.dialects import sqlglot_dialect


def label_column(table: Table) -> str | None:
    """The column that names a row of ``table`` for a person: ``name``, ``<table>_name``,
    a text column named like the table itself (``course.Course``), the one text column
    whose name ends in "name", else ``title``; None when no single column is clear
    (``first_name`` and ``last_name``: which one is unclear, and ``title`` is then more
    likely a job's than the row's name)."""
    texts = [c for c in table.columns if TEXT_TYPES.search(c.type or "")]
    found_roots = roots(table.name)
    stem = "".join(sorted(found_roots)) if len(found_roots) == 1 else normal_name(table.name)
    ranked = ({"name"}, {stem + "name", normal_name(table.name) + "name"}, {stem, normal_name(table.name)})
    for names in ranked:
        found = [c.name for c in texts if normal_name(c.name) in names]
        if len(found) == 1:
            return found[0]
    ending = [c.name for c in texts if normal_name(c.name).endswith("name")]
    if ending:
        return ending[0] if len(ending) == 1 else None
    titles = [c.name for c in texts if normal_name(c.name) == "title"]
    return titles[0] if len(titles) == 1 else None


def label_columns(table: Table) -> list[str]:
    """The columns that name a row of ``table`` for a person: its :func:`label_column`, else
    a first and a last name (``first_name``/``last_name``, ``Fname``/``LName``), else none."""
    one = label_column(table)
    if one is not None:
        return [one]
    texts = [c.name for c in table.columns if TEXT_TYPES.search(c.type or "")]
    first = [c for c in texts if normal_name(c) in FIRST_NAME_COLUMNS]
    last = [c for c in texts if normal_name(c) in LAST_NAME_COLUMNS]
    return [first[0], last[0]] if len(first) == 1 and len(last) == 1 else []


def label_ids(sql: str, dialect: str, catalog: Catalog | None, question: str) -> tuple[str, str] | None:
    """A query that shows an id where the question asks for the thing it identifies
    (``SELECT customer_id, count(*) … GROUP BY customer_id`` for a question about each
    customer): the same query with the referenced row's name shown instead (a LEFT JOIN
    on the foreign key, so no row is lost; grouping by the id is kept), and what was
    replaced (``orders.customer_id → customers.name``); a person's id shows their first
    and last name; a key to another row of the same table (``manager_id``) shows that
    row's name, joined once more.  Only when the question names the thing (its table or
    the id column's other words) and never says "id", and the referenced table has one
    clear name column that the query does not show already.  None otherwise."""
    if catalog is None:
        return None
    qwords = roots(question)
    if set(words(question)) & ID_WORDS:
        return None
    tree = parse(sql, dialect)
    if not isinstance(tree, exp.Select):
        return None
    scope = scope_tables(tree, catalog)
    if not scope:
        return None
    d = sqlglot_dialect(dialect)

    def resolve(col: exp.Column) -> tuple[str, Table] | None:
        if col.table:
            t = scope.get(col.table.lower())
            return (col.table, t) if t is not None and t.column(col.name) is not None else None
        having = [(a, t) for a, t in scope.items() if t.column(col.name) is not None]
        return having[0] if len(having) == 1 else None

    items = [
        (i, item, item.this if isinstance(item, exp.Alias) else item)
        for i, item in enumerate(tree.expressions)
    ]
    # the rows the query already names (shows a text column of): (alias, table)
    named_rows = {
        (r[0].lower(), id(r[1]))
        for _, _, col in items
        if isinstance(col, exp.Column)
        and (r := resolve(col)) is not None
        and TEXT_TYPES.search(_column(r[1], col.name).type or "")
    }
    used = set(scope) | {t.name.lower() for t in tree.find_all(exp.Table)}
    changes: list[str] = []
    replaced: dict[int, list[exp.Expr]] = {}  # a projection's index -> what shows instead
    joined = False
    for i, item, col in items:
        if not isinstance(col, exp.Column) or not col.name:
            continue
        found = resolve(col)
        if found is None:
            continue
        source, owner = found
        column = _column(owner, col.name)
        ref, key = _referenced(owner, column.name, catalog)
        labels = label_columns(ref) if ref is not None else []
        # a key to another row of the same table (a mentor, a manager): the name the
        # query shows of the row itself is not that row's
        other_row = ref is owner and key.lower() != column.name.lower()
        if (
            ref is None
            or not labels
            or any(t == id(ref) and not (other_row and a == source.lower()) for a, t in named_rows)
        ):
            continue  # no name to show, or the query shows a text column of that row
        thing = (roots(column.name) - ID_WORDS) | (set() if other_row else roots(ref.name))
        if not thing & qwords:
            continue  # the question does not name what the id identifies
        if ref is owner and not other_row:  # the table's own key: its name columns are right there
            qualifier = (
                (col.args["table"].copy() if col.table else exp.to_identifier(source))
                if col.table or len(scope) > 1
                else None
            )
            new: list[exp.Expr] = [
                exp.column(label, table=qualifier.copy() if qualifier else None, quoted=True)
                for label in labels
            ]
        else:
            alias, n = ref.name.lower(), 2
            while alias in used:
                alias, n = f"{ref.name.lower()}_{n}", n + 1
            used.add(alias)
            if not joined:
                # the new table may share column names: every column of this SELECT is
                # qualified first
                qualify_own(tree, scope, {})
                joined = True
            target = table_node(ref, catalog)
            tree.join(
                exp.alias_(target, exp.to_identifier(alias, quoted=True)),
                on=exp.EQ(this=exp.column(key, table=alias, quoted=True), expression=col.copy()),
                join_type="left",
                copy=False,
            )
            new = [exp.column(label, table=alias, quoted=True) for label in labels]
        named_rows.add((source.lower() if ref is owner and not other_row else alias, id(ref)))
        group = tree.args.get("group")
        if group is not None and any(
            isinstance(g, exp.Column) and g.name.lower() == col.name.lower() and resolve(g) == found
            for g in group.expressions
        ):
            for shown in new:  # still grouped by the id: the same groups
                group.append("expressions", shown.copy())
        if len(new) == 1 and isinstance(item, exp.Alias) and not set(words(item.alias)) & ID_WORDS:
            item.set("this", new[0])
            replaced[i] = [item]
        else:
            replaced[i] = new
        changes.append(f"{owner.name}.{column.name} → " + ", ".join(f"{ref.name}.{x}" for x in labels))
    if not changes:
        return None
    tree.set("expressions", [e for i, item, _ in items for e in replaced.get(i, [item])])
    try:
        return tree.sql(dialect=d), ", ".join(changes)
    except Exception:
        return None


def _column(table: Table, name: str) -> Column:
    """The column ``name`` of ``table``, where the query's names were resolved to it."""
    column = table.column(name)
    if column is None:  # resolved names are columns their table has
        raise LookupError(f"{table.name} has no column {name}")
    return column


def _referenced(table: Table, column: str, catalog: Catalog) -> tuple[Table | None, str]:
    """The table a single-column key ``table.column`` identifies a row of, and its key
    column: the foreign key's target (``table`` itself for a key to another of its rows,
    such as a manager's id), or ``table`` itself for its own one-column primary key."""
    low = column.lower()
    for fk in table.foreign_keys:
        if len(fk.columns) == 1 and fk.columns[0].lower() == low:
            ref = fk_target(fk, catalog)
            if (
                ref is not None
                and len(fk.ref_columns) == 1
                and not (ref is table and fk.ref_columns[0].lower() == low)
            ):
                return ref, fk.ref_columns[0]
    if len(table.primary_key) == 1 and table.primary_key[0].lower() == low:
        return table, column
    return None, ""


def _propose(draft: Draft) -> Proposal:
    # only a draft with rows has ids to name
    if not draft.result.row_count:
        return None
    return label_ids(draft.sql, draft.dialect, draft.catalog, draft.question)


NAMES_FOR_IDS = Rewrite(
    name="names_for_ids",
    summary="A draft that shows an id where the question asks for the thing it identifies shows "
    "the referenced row's name instead.",
    propose=_propose,
    keeps="same_row_count",
    reason="names shown for the ids the query chose ({change})",
)
