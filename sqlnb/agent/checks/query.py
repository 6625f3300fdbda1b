"""Checks from the query, the question and the catalog alone (no data read): a LIMIT that
keeps rows no ORDER BY chose, a number the question names that the query does not use, a
filter on a value the question does not name, one row kept of the groups the question
asks about each of, one date subtracted from another, a ranking question answered without
ranking, and one total where the question asks for one per group."""

from __future__ import annotations

import re

from sqlglot import exp

from sqlnb.adapters import Table
from sqlnb.agent.checks.check import Answer, Check, Finding
from sqlnb.agent.lexicon import (
    ANY_ROWS,
    EACH_WORD,
    FILLER_WORDS,
    NEGATIONS,
    NUMBER_WORDS,
    RANKING_WORD,
    TIME_UNITS,
    abbreviates,
    is_code,
    plain_text,
    roots,
    stem,
    value_named,
)
from sqlnb.agent.sqltree import normal_name, query_tables, scope_tables, table_names
from sqlnb.sql.dialects import sqlglot_dialect

_TEMPORAL_TYPES = re.compile(r"date|time", re.I)
# a number standing alone: not part of a word or of a longer number, a full stop after it
# ends the sentence ("Show 5.")
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?!\w|\.\d)")


def _numbers_left_out(question: str, sql: str) -> list[str]:
    """The numbers ``question`` names (a year, a threshold, a count) that appear nowhere in
    ``sql``: not as a number, not inside a string (a date)."""
    asked = dict.fromkeys(_NUMBER.findall(question.replace(",", "")))
    if not asked:
        return []
    used = set(_NUMBER.findall(re.sub(r"[-/:']", " ", sql)))
    strings = re.findall(r"'[^']*'", sql)
    out = []
    for n in asked:
        forms = {n, n.lstrip("0") or "0"} | ({str(float(n))} if "." in n else set())
        if not forms & used and not any(n in s for s in strings):
            out.append(n)
    return out


def _asks_for_rows(question: str, n: str) -> bool:
    """Whether ``question`` asks for ``n`` rows (the number as digits or a word) or for
    any rows at all."""
    if ANY_ROWS.search(question):
        return True
    if n in _NUMBER.findall(question):
        return True
    word = NUMBER_WORDS[int(n)] if n.isdigit() and int(n) < len(NUMBER_WORDS) else None
    return word is not None and re.search(rf"(?<![\w.]){word}\b", question, re.I) is not None


def _filters_not_asked(tree: exp.Expr, question: str) -> list[str]:
    """The string values the query compares a column with (``=``, ``<>``, ``IN``,
    ``LIKE``) that the question names in no way: none of the value's words (of three
    letters or more) is a word of the question, the start of one ('FURN' for
    "furniture", 'IN_PROGRESS' for "in progress") or begins with one ("house" for
    'houses'), and that is not a code the question spells out (a word's first letters or
    consonants: :func:`~sqlnb.agent.lexicon.value_named` with ``codes``).  Values of only
    short words or digits (a code like 'F', a date) are not judged."""
    asked = set(re.findall(r"[a-z0-9]+", (question or "").lower()))
    asked_roots = roots(question or "")
    spelled = value_named(question or "", codes=True)

    def named(word: str) -> bool:
        return (
            word in asked
            or bool(roots(word) & asked_roots)
            or any(q.startswith(word) or (len(q) >= 4 and word.startswith(q)) for q in asked if len(q) >= 3)
        )

    out: list[str] = []
    for node in tree.find_all(exp.EQ, exp.NEQ, exp.In, exp.Like, exp.ILike):
        values = node.expressions if isinstance(node, exp.In) else [node.expression]
        for lit in values:
            if not (isinstance(lit, exp.Literal) and lit.is_string) or lit.this in out:
                continue
            words = [
                w for w in re.findall(r"[a-z]+", lit.this.lower()) if len(w) >= 3 and w not in FILLER_WORDS
            ]
            if words and not any(named(w) for w in words) and not (is_code(lit.this) and spelled(lit.this)):
                out.append(lit.this)
    return out


def limit_without_order(a: Answer) -> Finding:
    """The query keeps some rows (``LIMIT``) without ordering them first, while the
    question asks for no number of rows: which rows is up to the database."""
    tree = a.tree
    limit = tree.args.get("limit") if isinstance(tree, (exp.Select, exp.Union)) else None
    if (
        limit is None
        or limit.expression is None
        or tree is None
        or tree.args.get("order") is not None
        or _asks_for_rows(a.question, limit.expression.sql())
    ):
        return None
    return (
        f"it keeps {limit.expression.sql()} row(s) (LIMIT) without an ORDER BY: which ones "
        "is up to the database, and the question asks for no number of rows"
    )


def numbers_left_out(a: Answer) -> Finding:
    """The question names a number (a year, a threshold, a count) the query does not use."""
    left_out = _numbers_left_out(a.question, a.sql)
    if not left_out:
        return None
    return (
        f"the question names {', '.join(left_out)}, the query does not use "
        f"{'it' if len(left_out) == 1 else 'them'}"
    )


def filters_not_asked(a: Answer) -> Finding:
    """The query filters on a string value the question names in no way."""
    if a.tree is None:
        return None
    not_asked = _filters_not_asked(a.tree, a.question)
    if not not_asked:
        return None
    return f"it filters on {', '.join(repr(v) for v in not_asked)}, which the question does not name"


def one_of_each(a: Answer) -> Finding:
    """The question asks about every group ("each", "every", "per") and the query keeps one
    row of its groups (``GROUP BY … LIMIT 1``, one row in the result)."""
    each = EACH_WORD.search(a.question)
    if not each or a.row_count != 1 or a.tree is None:
        return None
    for select in a.tree.find_all(exp.Select):
        limit = select.args.get("limit")
        if (
            select.args.get("group") is not None
            and limit is not None
            and limit.expression is not None
            and limit.expression.sql() == "1"
        ):
            return (
                f'the question asks about every group ("{each.group(1)}"), the query keeps only one (LIMIT 1)'
            )
    return None


def date_difference(a: Answer) -> Finding:
    """The query subtracts one date or time column from another: an interval, or in SQLite
    a difference of the years only, where a number of days is usually meant."""
    if a.catalog is None or a.tree is None:
        return None
    scope: dict[str, Table] = {}
    for select in a.tree.find_all(exp.Select):
        scope.update(scope_tables(select, a.catalog))

    def temporal(e: exp.Expr) -> bool:
        if not isinstance(e, exp.Column):
            return False
        owners = (
            [scope[e.table.lower()]]
            if e.table and e.table.lower() in scope
            else [t for t in scope.values() if t.column(e.name) is not None]
        )
        col = owners[0].column(e.name) if len(owners) == 1 else None
        return col is not None and bool(_TEMPORAL_TYPES.search(col.type or ""))

    for sub in a.tree.find_all(exp.Sub):
        if temporal(sub.this) and temporal(sub.expression):
            return (
                f"it subtracts one date from another ({sub.sql(dialect=sqlglot_dialect(a.dialect))}): "
                "an interval, not a number of days"
            )
    return None


def _named_at(value: str, words: list[str]) -> list[int]:
    """The positions of the question's ``words`` that name the stored ``value``: the value
    itself (a plural ending allowed), a word it begins (a stem: 'refund' of "refunded"),
    or, for a code, a word it is a short form of (:func:`~sqlnb.agent.lexicon.abbreviates`)."""
    plain = plain_text(value)
    if not plain or " " in plain or len(plain) < 3:
        return []
    return [
        i
        for i, w in enumerate(words)
        if w == plain
        or re.fullmatch(rf"{re.escape(plain)}(?:e?s|ed|d)?", w) is not None
        or (is_code(value) and abbreviates(value, w))
    ]


def _negated(words: list[str], i: int) -> str | None:
    """The negation among the three words before ``words[i]`` ("not", "never", "without",
    "non", "excluding", "other than", a word ending in "n't"), as the question has it."""
    before = words[max(0, i - 3) : i]
    for j, w in enumerate(before):
        if w in NEGATIONS or w.endswith("n't") or (w == "than" and j > 0 and before[j - 1] == "other"):
            return " ".join(before[j:] + [words[i]])
    return None


def negated_value(a: Answer) -> Finding:
    """The question leaves out rows of a value ("not refunded", "without a discount",
    "other than cancelled") and the query keeps only the rows of that value (``= 'REF'``,
    ``IN (…)``, ``LIKE``), not inside a NOT, an EXCEPT or a subquery under NOT."""
    if a.tree is None:
        return None
    words = re.findall(r"[a-z]+(?:'t)?", a.question.lower())
    for node in a.tree.find_all(exp.EQ, exp.In, exp.Like, exp.ILike):
        if node.find_ancestor(exp.Not, exp.Except) is not None:
            continue
        values = node.expressions if isinstance(node, exp.In) else [node.expression]
        for lit in values:
            if not (isinstance(lit, exp.Literal) and lit.is_string):
                continue
            for i in _named_at(lit.this, words):
                said = _negated(words, i)
                if said:
                    return (
                        f'the question says "{said}", the query keeps only the rows where '
                        f"{node.sql(dialect=sqlglot_dialect(a.dialect))}"
                    )
    return None


_HOW_MANY = re.compile(r"\bhow many (\w+)(?:\s+(\w+))?", re.I)


def counted_elsewhere(a: Answer) -> Finding:
    """The question counts the rows of a table ("How many entries …" of a table
    ``Entry``, "how many order lines" of ``order_lines``) and the query does not read that
    table: it counts something else."""
    if a.catalog is None or a.tree is None:
        return None
    asked = _HOW_MANY.search(a.question)
    if not asked:
        return None
    first, second = (stem(w.lower()) for w in (asked.group(1), asked.group(2) or ""))
    keys = {stem(normal_name(t.name)): t for t in a.catalog.tables}
    # the longest name the words give: "boat classes" is BoatClass, not Boat
    counted = first + second if second and first + second in keys else first
    table = keys.get(counted)
    read = query_tables(a.sql, a.dialect, a.catalog)
    # read under a name that holds the word (pets counted in Has_Pet): not elsewhere
    if table is None or table in read or any(counted in roots(t.name) for t in read):
        return None
    return f'the question asks "{asked.group(0)}", and the query does not read {table.name}'


def ranking_without_order(a: Answer) -> Finding:
    """The question asks for the most, the least or the top of something, and the query
    neither orders its rows nor takes a MAX or MIN anywhere: nothing in it ranks."""
    asked = RANKING_WORD.search(a.question)
    if not asked or not isinstance(a.tree, exp.Query):
        return None
    if any(s.args.get("order") is not None for s in a.tree.find_all(exp.Select, exp.Union)):
        return None
    if a.tree.find(exp.Max, exp.Min, exp.Window) is not None:
        return None
    return (
        f'the question asks for "{asked.group(0)}", the query neither orders its rows nor takes a MAX or MIN'
    )


def one_total_for_groups(a: Answer) -> Finding:
    """The question asks for a figure per group ("per month", "for each store") of
    something the query's tables name or of a time unit, and the query gives one total
    over all its rows (an aggregate, no GROUP BY, one row)."""
    tree = a.tree
    if not isinstance(tree, exp.Select) or tree.args.get("group") is not None or a.row_count != 1:
        return None
    if not any(isinstance(p.unalias(), exp.AggFunc) for p in tree.expressions):
        return None
    names = roots(" ".join(table_names(scope_tables(tree, a.catalog).values()))) if a.catalog else set()
    for m in re.finditer(r"\b(?:each|every|per)\s+(\w+)", a.question, re.I):
        word = m.group(1).lower()
        if word in TIME_UNITS or roots(word) & names:
            return f'the question asks for a figure "{m.group(0)}", the query gives one total over all rows'
    return None


LIMIT_WITHOUT_ORDER = Check(
    name="limit_without_order",
    summary="rows kept by a LIMIT with no ORDER BY, where the question asks for no number of rows",
    find=limit_without_order,
)
NUMBERS_LEFT_OUT = Check(
    name="numbers_left_out",
    summary="a number the question names (a year, a threshold) that the query does not use",
    find=numbers_left_out,
)
FILTERS_NOT_ASKED = Check(
    name="filters_not_asked",
    summary="a filter on a value the question does not name",
    find=filters_not_asked,
)
ONE_OF_EACH = Check(
    name="one_of_each",
    summary='one row kept (GROUP BY … LIMIT 1) of the groups the question asks about "each" of',
    find=one_of_each,
)
DATE_DIFFERENCE = Check(
    name="date_difference",
    summary="one date column subtracted from another (an interval, not a number of days)",
    find=date_difference,
)
NEGATED_VALUE = Check(
    name="negated_value",
    summary='a value the question leaves out ("not refunded") that the query keeps only the rows of',
    find=negated_value,
)
COUNTED_ELSEWHERE = Check(
    name="counted_elsewhere",
    summary='a question counting the rows of a table ("how many entries") whose query does not read it',
    find=counted_elsewhere,
)
RANKING_WITHOUT_ORDER = Check(
    name="ranking_without_order",
    summary="a question for the most, least or top answered by a query that does not rank",
    find=ranking_without_order,
)
ONE_TOTAL_FOR_GROUPS = Check(
    name="one_total_for_groups",
    summary='one total over all rows where the question asks for one "per" or "for each" group',
    find=one_total_for_groups,
)
