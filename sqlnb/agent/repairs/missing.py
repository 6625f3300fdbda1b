"""Rows without something: a draft answering a question for the rows that lack something
("sold without any discount") with the rows whose column for it is 0 or empty
(``DiscountPct = 0``) counts the rows with no value at all (NULL) as well
(:data:`MISSING_AS_NONE`): ``COALESCE(DiscountPct, 0) = 0``.  Where the column has no NULL
the result is the same, and the draft stands as written.  An answer it changed is rated
medium at most: "without" may mean a 0, nothing recorded, or both, and it takes both.  The check ``missing_as_zero``
(:mod:`sqlnb.agent.checks.data`) finds the same filters (:func:`lacking_filters`) and
doubts an answer that keeps one."""

from __future__ import annotations

import re

from sqlglot import exp

from sqlnb.adapters import Catalog
from sqlnb.agent.repairs.rewrite import Draft, Proposal, Rewrite
from sqlnb.agent.sqltree import parse, readable
from sqlnb.sql.dialects import sqlglot_dialect

# a question for the rows that lack something: "without any discount", "no phone number",
# "missing a due date"
_LACKING = re.compile(r"\b(?:without|no|missing|lacking|lacks?|never)\b", re.I)


def _words(text: str) -> set[str]:
    """The words of at least three letters of ``text`` (a column name split at its capitals
    and underscores), in lower case."""
    return {
        w for w in re.findall(r"[a-z]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", text).lower()) if len(w) >= 3
    }


def lacking_filters(select: exp.Select, question: str) -> list[tuple[exp.EQ, exp.Column, exp.Literal]]:
    """The filters of ``select``'s WHERE that take the rows a question asks for as lacking
    something as those whose column for it is 0 or empty (``discount = 0``, ``phone = ''``),
    where the column is named in the question (a word of it, or a word sharing a stem of
    four letters or more); each as (filter, column, the 0 or the empty string).  Empty when
    the question asks for no rows without something."""
    where = select.args.get("where")
    if where is None or not _LACKING.search(question):
        return []
    asked = _words(question)
    found: list[tuple[exp.EQ, exp.Column, exp.Literal]] = []
    for term in where.find_all(exp.EQ):
        col, lit = term.this, term.expression
        if not isinstance(col, exp.Column):
            col, lit = lit, col
        if not isinstance(col, exp.Column) or not isinstance(lit, exp.Literal):
            continue
        if not (lit.is_string and lit.this == "") and not (lit.is_number and float(lit.this) == 0):
            continue
        if any(
            w in asked or any(q.startswith(w) or w.startswith(q) for q in asked if len(q) >= 4)
            for w in _words(col.name)
        ):
            found.append((term, col, lit))
    return found


def missing_as_none(sql: str, dialect: str, catalog: Catalog | None, question: str) -> tuple[str, str] | None:
    """``sql`` with each filter of :func:`lacking_filters` (in the outermost query) counting
    the rows with no value too (``COALESCE(col, 0) = 0``), and what was changed; None when
    there is none."""
    if catalog is None:
        return None
    tree = parse(sql, dialect)
    if not isinstance(tree, exp.Select):
        return None
    d = sqlglot_dialect(dialect)
    changed: list[str] = []
    for term, col, lit in lacking_filters(tree, question):
        before = term.sql(dialect=d)
        term.replace(
            exp.EQ(this=exp.Coalesce(this=col.copy(), expressions=[lit.copy()]), expression=lit.copy())
        )
        changed.append(
            f"{before} → COALESCE({col.sql(dialect=d)}, {lit.sql(dialect=d)}) = {lit.sql(dialect=d)}"
        )
    if not changed:
        return None
    return readable(tree.sql(dialect=d)), ", ".join(changed)


def _propose(draft: Draft) -> Proposal:
    return missing_as_none(draft.sql, draft.dialect, draft.catalog, draft.question)


MISSING_AS_NONE = Rewrite(
    name="missing_as_none",
    summary="A draft that answers a question for the rows without something with the rows where its column "
    "is 0 or empty counts the rows where it has no value (NULL) as well.",
    propose=_propose,
    keeps="changes_result",
    reason="rows with no value at all counted as having none ({change})",
    # "without a discount" may mean a discount of 0, none recorded, or both: the rewrite takes
    # both, which is one reading of the question and is rated so
    ceiling="medium",
)
