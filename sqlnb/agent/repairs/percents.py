"""Percentages as they are stored: a draft that takes a column holding percentages (its
stored values between 0 and 100, some above 1: ``DiscountPct`` 5, 10, 25) as a fraction of
one reads it as a percentage (:data:`PERCENT_SCALE`):

- ``1 - DiscountPct`` (or ``1 + TaxRate``) becomes ``1 - COALESCE(DiscountPct, 0) / 100.0``.
  A row with no percentage at all (NULL) counts as 0 percent: written as it was, its whole
  line is NULL, and a SUM over the lines leaves it out;
- ``DiscountPct = 0.25`` for a question about "a 25 percent discount" (or "25%") becomes
  ``DiscountPct = 25``.

Where the column holds fractions (no stored value above 1) the draft stands as written.
It reads stored values."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from sqlglot import exp

from sqlnb.adapters import Catalog, Table
from sqlnb.agent.repairs.rewrite import Draft, Proposal, Rewrite
from sqlnb.agent.sqltree import column_owner, parse, readable, scope_tables, stored_numbers
from sqlnb.sql.dialects import sqlglot_dialect

# a column named for a share of something: DiscountPct, tax_rate, commission_percent, markup
_SHARE_NAME = re.compile(r"pct|perc|discount|rate|ratio|share|markup|margin|commission|tax", re.I)
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)


def _percent_column(
    col: exp.Expr,
    scope: dict[str, Table],
    distinct_values: Callable[[Table, str], Sequence[object]],
) -> bool:
    """Whether ``col`` is a column of the query's tables, named for a share of something,
    whose stored values are all numbers from 0 to 100 and not all at most 1."""
    if not isinstance(col, exp.Column) or not _SHARE_NAME.search(col.name):
        return False
    owner = column_owner(col, scope)
    numbers = stored_numbers(owner[1], col, distinct_values) if owner is not None else None
    if numbers is None:
        return False
    return all(0 <= n <= 100 for n in numbers) and max(numbers) > 1


def _percent_named(question: str, fraction: float) -> str | None:
    """The percentage ``fraction`` stands for ("25" for 0.25) when the question names it
    as one ("25 percent", "25%", "25 per cent"); None otherwise."""
    if not 0 < fraction < 1:
        return None
    whole = round(fraction * 100, 6)
    text = f"{whole:g}"
    pattern = rf"(?<![\d.]){re.escape(text)}(?:\.0+)?\s*(?:%|per\s*cent\b|percent\b|pct\b)"
    return text if re.search(pattern, question, re.I) else None


def percent_scale(
    sql: str,
    dialect: str,
    catalog: Catalog | None,
    question: str,
    distinct_values: Callable[[Table, str], Sequence[object]],
) -> tuple[str, str] | None:
    """``sql`` with each percentage column (see the module) that it takes as a fraction of
    one read as a percentage, and what was changed; None when there is none."""
    if catalog is None:
        return None
    tree = parse(sql, dialect)
    if tree is None:
        return None
    d = sqlglot_dialect(dialect)
    changed: list[str] = []
    for select in list(tree.find_all(exp.Select)):
        scope = scope_tables(select, catalog)
        if not scope:
            continue
        for node in list(select.find_all(exp.Sub, exp.Add, *_COMPARISONS)):
            if node.parent_select is not select:
                continue
            if isinstance(node, exp.Sub | exp.Add):
                one, col = node.this, node.expression
                if isinstance(node, exp.Add) and isinstance(col, exp.Literal):
                    one, col = col, one
                if not (isinstance(one, exp.Literal) and one.is_number and float(one.this) == 1):
                    continue
                if not _percent_column(col, scope, distinct_values):
                    continue
                before = node.sql(dialect=d)
                share = exp.Div(
                    this=exp.Coalesce(this=col.copy(), expressions=[exp.Literal.number(0)]),
                    expression=exp.Literal.number("100.0"),
                    typed=True,  # a division as the engine writes it (no cast added)
                    safe=True,
                )
                col.replace(share)
                changed.append(f"{before} → {node.sql(dialect=d)}")
                continue
            col, lit = node.this, node.expression
            if not isinstance(lit, exp.Literal) or not lit.is_number:
                continue
            named = _percent_named(question, float(lit.this))
            if named is None or not _percent_column(col, scope, distinct_values):
                continue
            lit.replace(exp.Literal.number(named))
            changed.append(f"{lit.this} → {named}")
    if not changed:
        return None
    return readable(tree.sql(dialect=d)), f"{', '.join(changed)} (a percentage, stored from 0 to 100)"


def _propose(draft: Draft) -> Proposal:
    if draft.stored_values is None:
        return None
    return percent_scale(draft.sql, draft.dialect, draft.catalog, draft.question, draft.stored_values)


PERCENT_SCALE = Rewrite(
    name="percent_scale",
    summary="A draft that takes a column holding percentages (stored from 0 to 100) as a fraction of one "
    '(1 - DiscountPct, DiscountPct = 0.25 for "25 percent") reads it as a percentage.',
    propose=_propose,
    keeps="changes_result",
    reason="a percentage read as stored, from 0 to 100 ({change})",
    needs_values=True,
)
