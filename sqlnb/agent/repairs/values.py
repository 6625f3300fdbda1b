"""Values the question names: a draft leaving out a category the question names filters on it
(:data:`NAMED_FILTERS`), reading stored values."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from sqlglot import exp

from sqlnb.adapters import Catalog, Table
from sqlnb.agent.lexicon import EXCLUDING, is_code, nameable, plain_text, value_named
from sqlnb.agent.repairs.rewrite import Draft, Proposal, Rewrite
from sqlnb.agent.sqltree import (
    TEXT_TYPES,
    parse,
    qualified,
    query_tables,
    readable,
    scope_tables,
    spelling,
    table_names,
)
from sqlnb.sql.dialects import sqlglot_dialect


def named_value_filter(
    sql: str,
    dialect: str,
    catalog: Catalog | None,
    question: str,
    distinct_values: Callable[[Table, str], Sequence[object]],
    max_values: int = 10,
) -> tuple[str, str] | None:
    """A question naming a stored category of the rows it asks about (a status, a kind:
    as a word, or as a word that spells out a stored code) answered without any filter
    on that column: the query with ``column = 'value'`` added to the SELECT reading the
    table, and what was added.

    Only for a column of at most ``max_values`` distinct values that the query does not
    use at all, when the question names exactly one of them (as words, or a code it
    spells out: :func:`~sqlnb.agent.lexicon.value_named` with ``codes``), the value
    appears nowhere in the query and not as another column's value there, its words are
    not only words of the query's table and column names (a plural of a table's name),
    and the question excludes nothing (:data:`~sqlnb.agent.lexicon.EXCLUDING`: the value
    might be the one to leave out).  The table must be read by one SELECT, or by each
    branch of a set operation (``INTERSECT``, ``EXCEPT``, ``UNION``) alike, and once in
    it.  None otherwise."""
    if catalog is None or not question or EXCLUDING.search(question):
        return None
    tree = parse(sql, dialect)
    if tree is None:
        return None
    tables = query_tables(sql, dialect, catalog)
    names = table_names(tables)
    worth = nameable(names)
    # the question's words that name a value the query uses already (a city it filters
    # on, a word spelling out a code it uses) name nothing else
    used = [str(lit.this) for lit in tree.find_all(exp.Literal) if lit.is_string]
    free = " ".join(
        w for w in re.findall(r"[\w'-]+", question) if not any(value_named(w, codes=True)(v) for v in used)
    )
    # a filter added on a code needs the code read strictly: letters of a word in order
    # fit too many of them
    named = value_named(free, codes=True, names=names, strict=True)
    text = plain_text(sql).replace("''", "'")
    selects = list(tree.find_all(exp.Select))
    scopes = {id(s): scope_tables(s, catalog) for s in selects}
    columns = {(c.table.lower(), c.name.lower()) for c in tree.find_all(exp.Column)}  # (qualifier, name)
    found: list[tuple[list[exp.Select], Table, str, str]] = []
    for table in tables:
        places = [s for s in selects if any(t is table for t in scopes[id(s)].values())]
        if any(sum(t is table for t in scopes[id(s)].values()) != 1 for s in places):
            continue  # a self-join: which of its rows is meant is not clear
        if len(places) > 1 and not (
            isinstance(tree, exp.SetOperation) and all(s.find_ancestor(exp.Select) is None for s in places)
        ):
            continue
        aliases = {a for s in places for a, t in scopes[id(s)].items() if t is table}
        for col in table.columns:
            if not TEXT_TYPES.search(col.type or ""):
                continue
            if any(name == col.name.lower() and (not q or q in aliases) for q, name in columns):
                continue  # the query uses the column: another rewrite's business
            try:
                values = [v for v in distinct_values(table, col.name) if isinstance(v, str)]
            except Exception:  # a column the database cannot list: nothing to add
                continue
            if not 2 <= len(values) <= max_values:
                continue
            hits = []
            for v in values:
                plain = plain_text(v)
                code = is_code(v)
                if not worth(v):
                    continue
                if (f"'{plain}'" in text or f'"{plain}"' in text) if code else plain in text:
                    continue
                if named(v):
                    hits.append(v)
            if len(hits) == 1:
                found.append((places, table, col.name, hits[0]))
    # one value named for one column: a value two columns hold is not clearly either's
    counts: dict[str, int] = {}
    for _, _, _, v in found:
        counts[v] = counts.get(v, 0) + 1
    found = [f for f in found if counts[f[3]] == 1]
    if not found:
        return None
    d = sqlglot_dialect(dialect)
    changes = []
    for places, table, column, value in found:
        for select in places:
            alias = next(a for a, t in scopes[id(select)].items() if t is table)
            qualifier = spelling(select).get(alias, alias)
            select.where(
                exp.EQ(this=qualified(column, qualifier), expression=exp.Literal.string(value)), copy=False
            )
        changes.append(f"{table.name}.{column} = '{value}'")
    return readable(tree.sql(dialect=d)), ", ".join(changes) + " added"


def _propose_filter(draft: Draft) -> Proposal:
    if draft.stored_values is None:
        return None
    return named_value_filter(draft.sql, draft.dialect, draft.catalog, draft.question, draft.stored_values)


NAMED_FILTERS = Rewrite(
    name="named_filters",
    summary="A draft that leaves out a category the question names (one value of a column of "
    "few values) filters on it.",
    propose=_propose_filter,
    keeps="finds_rows",
    reason="a filter on the value the question names was added ({change})",
    needs_values=True,
)
