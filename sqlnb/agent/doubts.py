"""What speaks against a query that ran, as the answer to its question: the doubts that
lower an answer's confidence (:mod:`sqlnb.agent.confidence`) without changing it.

From the query and the catalog alone (:func:`answer_doubts`): one row kept of the groups
the question asks about each of, rows kept by a LIMIT with no ORDER BY, a number the
question names that the query does not use, a value the query filters on that the
question does not name, one date subtracted from another.  From the
data (:func:`values_left_out`): a stored value the question names that the query does not
use."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from sqlglot import exp

from sqlnb.adapters import Catalog, Table
from sqlnb.agent.lexicon import (
    ANY_ROWS,
    EACH_WORD,
    FILLER_WORDS,
    NUMBER_WORDS,
    is_code,
    nameable,
    plain_text,
    roots,
    value_named,
)
from sqlnb.agent.sqltree import TEXT_TYPES, parse, query_tables, scope_tables, table_names
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


def answer_doubts(
    sql: str, dialect: str, catalog: Catalog | None, question: str, row_count: int | None
) -> list[str]:
    """What about a query that ran speaks against it as the answer to ``question``, from
    the query, the catalog and the result's size (no data): the question asks for each of
    something while the query keeps one row of its groups (``GROUP BY … LIMIT 1``), the
    query keeps some rows (``LIMIT``) without ordering them first while the question asks
    for no number of rows, the question names a number (a year, a threshold) the query
    does not use, the query filters on a value the question does not name
    (:func:`_filters_not_asked`), or it subtracts one date or time column from another (an
    interval, or in SQLite a difference of the years only, where a number of days is
    usually meant)."""
    tree = parse(sql, dialect)
    if tree is None:
        return []
    out: list[str] = []
    limit = tree.args.get("limit") if isinstance(tree, (exp.Select, exp.Union)) else None
    if (
        limit is not None
        and limit.expression is not None
        and tree.args.get("order") is None
        and not _asks_for_rows(question or "", limit.expression.sql())
    ):
        out.append(
            f"it keeps {limit.expression.sql()} row(s) (LIMIT) without an ORDER BY: which ones "
            "is up to the database, and the question asks for no number of rows"
        )
    left_out = _numbers_left_out(question or "", sql)
    if left_out:
        out.append(
            f"the question names {', '.join(left_out)}, the query does not use "
            f"{'it' if len(left_out) == 1 else 'them'}"
        )
    not_asked = _filters_not_asked(tree, question)
    if not_asked:
        out.append(f"it filters on {', '.join(repr(v) for v in not_asked)}, which the question does not name")
    each = EACH_WORD.search(question or "")
    if each and row_count == 1:
        for select in tree.find_all(exp.Select):
            limit = select.args.get("limit")
            if (
                select.args.get("group") is not None
                and limit is not None
                and limit.expression is not None
                and limit.expression.sql() == "1"
            ):
                out.append(
                    f'the question asks about every group ("{each.group(1)}"), '
                    "the query keeps only one (LIMIT 1)"
                )
                break
    if catalog is not None:
        scope: dict[str, Table] = {}
        for select in tree.find_all(exp.Select):
            scope.update(scope_tables(select, catalog))

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

        for sub in tree.find_all(exp.Sub):
            if temporal(sub.this) and temporal(sub.expression):
                out.append(
                    f"it subtracts one date from another ({sub.sql(dialect=sqlglot_dialect(dialect))}): "
                    "an interval, not a number of days"
                )
                break
    return out


def values_left_out(
    sql: str,
    dialect: str,
    catalog: Catalog | None,
    question: str,
    distinct_values: Callable[[Table, str], Sequence[object]],
    max_columns: int = 12,
) -> list[str]:
    """Doubts from the data: the stored values of the query's text columns (``distinct_values``,
    at most ``max_columns`` columns a table) that the question names and the query does not
    use, e.g. a question about the orders of one status answered without a filter on that
    status.  A value counts as named when the question holds it as whole words, in any
    case, a plural ending allowed, and a code when a word of the question spells it out
    (:func:`~sqlnb.agent.lexicon.value_named` with ``codes``); other values shorter than three letters, numbers (see
    :func:`_numbers_left_out`) and values whose every word is a word of a table or column
    name of the query (a value 'x' beside a column ``is_x``) are not looked for.  A value counts
    as used when the query holds it, or each of its words, anywhere (a code: quoted)."""
    if catalog is None or not question:
        return []
    tables = query_tables(sql, dialect, catalog)  # none for a query that does not parse
    names = table_names(tables)
    worth = nameable(names)
    named = value_named(question, codes=True, names=names)
    used = plain_text(sql).replace("''", "'")
    out: list[str] = []
    seen: set[str] = set()
    for table in tables:
        for col in [c for c in table.columns if TEXT_TYPES.search(c.type or "")][:max_columns]:
            try:
                values = distinct_values(table, col.name)
            except Exception:  # a column the database cannot list: nothing to say about it
                continue
            for v in values:
                if not isinstance(v, str):
                    continue
                plain = plain_text(v)
                words = re.findall(r"[a-z]+", plain)
                code = is_code(v)
                if plain in seen or not worth(v):
                    continue
                if not named(v):
                    continue
                seen.add(plain)
                if (
                    (f"'{plain}'" in used or f'"{plain}"' in used)
                    if code
                    else (plain in used or all(w in used for w in words if len(w) > 2))
                ):
                    continue
                out.append(
                    f"the question names '{v}' (a value of {table.name}.{col.name}), "
                    "the query does not use it"
                )
    return out
