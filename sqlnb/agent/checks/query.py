"""Checks from the query, the question and the catalog alone (no data read): a number the
question names that the query does not use, a filter on a value the question does not
name, a value the question leaves out that the query keeps only the rows of, a question
counting a table the query does not read, a ranking question answered without ranking
or without showing what it ranks by, a question for a number of things ("the top 5")
whose result has another number of rows, and a grouped result with a group that has no
label (NULL).  The last two read the kept query's result as well, never the database."""

from __future__ import annotations

import re

from sqlglot import exp

from sqlnb.adapters import Table
from sqlnb.agent.checks.check import Answer, Check, Finding
from sqlnb.agent.lexicon import (
    FILLER_WORDS,
    NEGATIONS,
    NUMBER_WORDS,
    RANKING_WORD,
    abbreviates,
    is_code,
    plain_text,
    roots,
    stem,
    value_named,
)
from sqlnb.agent.repairs.dates import date_column
from sqlnb.agent.repairs.labels import label_columns
from sqlnb.agent.sqltree import (
    column_owner,
    normal_name,
    pinned_columns,
    query_tables,
    readable,
    scope_tables,
)
from sqlnb.sql.dialects import sqlglot_dialect

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


# a question that says rows in some state count as well: "counting any that have since
# been deleted", "those on hold included", "whatever their status", "in any stage" (not
# "not counting cancelled orders")
_INCLUDED = re.compile(
    r"(?<!not )(?<!without )\b(counting (?:any|those|the ones|all|ones|every)|including|included|"
    r"whatever (?:its|their)|regardless of|(?:in|of) any (?:status|stage|state)|as well)\b",
    re.I,
)


def _flag_filters(tree: exp.Expr, question: str, dialect: str) -> list[str]:
    """The filters of ``tree`` that keep the rows by a flag (``archived = 0``,
    ``is_active = TRUE``, ``deleted_at IS NULL``) whose column the question names in no
    word."""
    asked = roots(question)
    out: list[str] = []
    for node in tree.find_all(exp.EQ, exp.NEQ, exp.Is):
        col, other = node.this, node.expression
        if not isinstance(col, exp.Column):
            col, other = other, col
        if not isinstance(col, exp.Column):
            continue
        number_flag = isinstance(other, exp.Literal) and not other.is_string and other.this in ("0", "1")
        if not (number_flag or isinstance(other, exp.Boolean | exp.Null)):
            continue
        if roots(col.name) & asked:  # roots splits snake_case and camelCase names
            continue
        if isinstance(node, exp.Is) and isinstance(node.parent, exp.Not):
            out.append(f"{col.sql(dialect=dialect)} IS NOT {other.sql(dialect=dialect)}")
        else:
            out.append(node.sql(dialect=dialect))
    return out


def included_filtered_out(a: Answer) -> Finding:
    """The question says that rows in some state count as well ("counting any that have
    since been deleted", "those on hold included", "whatever their status") and the query
    keeps only the rows of one state by a flag the question does not name
    (``archived = 0``, ``deleted_at IS NULL``): it leaves out the rows it was told to
    count."""
    asked = _INCLUDED.search(a.question)
    if asked is None or a.tree is None:
        return None
    kept = _flag_filters(a.tree, a.question, sqlglot_dialect(a.dialect))
    if not kept:
        return None
    return f'the question says "{asked.group(0)}", and the query keeps only the rows where {kept[0]}'


_HOW_MANY = re.compile(r"\bhow many (\w+)(?:\s+(\w+))?", re.I)


def _not_read(a: Answer, asked: re.Match[str]) -> Table | None:
    """The table whose rows the words ``asked`` counts (its first word, or its two words
    together: "boat classes" is BoatClass, not Boat) where the query does not read it."""
    if a.catalog is None:
        return None
    first, second = (stem(w.lower()) for w in (asked.group(1), asked.group(2) or ""))
    keys = {stem(normal_name(t.name)): t for t in a.catalog.tables}
    counted = first + second if second and first + second in keys else first
    table = keys.get(counted)
    read = query_tables(a.sql, a.dialect, a.catalog)
    # read under a name that holds the word (pets counted in Has_Pet): not elsewhere
    if table is None or table in read or any(counted in roots(t.name) for t in read):
        return None
    return table


def counted_elsewhere(a: Answer) -> Finding:
    """The question counts the rows of a table ("How many entries …" of a table
    ``Entry``, "how many order lines" of ``order_lines``) and the query does not read that
    table: it counts something else."""
    if a.tree is None or not (asked := _HOW_MANY.search(a.question)):
        return None
    table = _not_read(a, asked)
    if table is None:
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


# a question for a number of things: "top 5", "the 3 most", "which five", "first ten", "the
# two largest" (the number, and the word after it)
_COUNTED = re.compile(  # a lookahead: matches may overlap ("the top 5")
    r"(?=(\b(?:top|first|last|which|what|the)[\s-]+(\d{1,3}|[a-z]+)\s+(\w+)"
    r"|\b(\d{1,3}|[a-z]+)\s+(most|least|\w+est)\b))",
    re.I,
)
# words after a number that make it a window of time, not a number of rows ("the first
# three months")
_TIME_UNITS = frozenset(
    f"{unit}{plural}"
    for unit in ("second", "minute", "hour", "day", "week", "month", "quarter", "year", "decade")
    for plural in ("", "s")
)


def _asked_count(question: str) -> tuple[int, str] | None:
    """The number of things the question asks for ("top 5", "which five", "the 3 most"),
    and how it says it; None when it asks for no number of things."""
    for m in _COUNTED.finditer(question):
        said, after = (m.group(2), m.group(3)) if m.group(2) else (m.group(4), m.group(5))
        low = said.lower()
        n = int(low) if low.isdigit() else NUMBER_WORDS.get(low)
        if n is None or n < 2 or n > 100 or after.lower() in _TIME_UNITS:
            continue
        return n, m.group(1)
    return None


def _kept_rows(tree: exp.Query) -> int | None:
    """The number of rows the query's outer ``LIMIT`` keeps; None without one (or with an
    expression for it)."""
    limit = tree.args.get("limit")
    kept = limit.expression if isinstance(limit, exp.Limit) else None
    return int(kept.this) if isinstance(kept, exp.Literal) and kept.is_int else None


def rows_not_asked(a: Answer) -> Finding:
    """The question asks for a number of things ("the top 5", "which three") and the result
    has more rows than that, or the query keeps a different number (``LIMIT``)."""
    asked = _asked_count(a.question)
    if asked is None or not isinstance(a.tree, exp.Query):
        return None
    n, said = asked
    kept = _kept_rows(a.tree)
    if kept is not None and kept != n:
        return f'the question asks for "{said}", the query keeps {kept} rows'
    if a.row_count is not None and a.row_count > n:
        return f'the question asks for "{said}", the result has {a.row_count} rows'
    return None


# a question for every group: "each country", "for every month", "per region" (the word
# after it names what is grouped)
_EVERY = re.compile(r"\b(?:each|every|per)\s+(?:the\s+|single\s+)?([a-z]+)", re.I)


def _grouped_by(tree: exp.Expr | None, word: str) -> bool:
    """Whether the query's outer GROUP BY groups by what ``word`` names: a grouped
    column, or the table of one, whose name has the word's root."""
    if not isinstance(tree, exp.Select) or (group := tree.args.get("group")) is None:
        return False
    root = stem(word.lower())
    for g in group.expressions:
        if isinstance(g, exp.Literal) and g.is_int and 0 < int(g.this) <= len(tree.expressions):
            g = tree.expressions[int(g.this) - 1]  # GROUP BY 1: the first column
        for col in g.find_all(exp.Column):
            if any(r.startswith(root) for r in roots(f"{col.name} {col.table}")):
                return True
    return False


def limit_not_asked(a: Answer) -> Finding:
    """The question asks for every group ("each country", "per month"), the query groups by
    it and keeps only its first rows (``LIMIT n``), a number the question does not name:
    the groups past the n-th are cut off."""
    n = _kept_rows(a.tree) if isinstance(a.tree, exp.Query) else None
    if n is None:
        return None
    asked = _asked_count(a.question)
    named = {int(x) for x in re.findall(r"\b\d+\b", a.question)} | {
        v for w, v in NUMBER_WORDS.items() if re.search(rf"\b{w}\b", a.question, re.I)
    }
    if (asked is not None and asked[0] == n) or n in named:
        return None
    for m in _EVERY.finditer(a.question):
        if _grouped_by(a.tree, m.group(1)):
            return (
                f'the question asks for "{m.group(0)}", the query keeps only the first {n} '
                f"row{'s' if n != 1 else ''}"
            )
    return None


# a question for a length of time as a number of units ("how many days", "in hours", "the
# average number of weeks")
_TIME_COUNT = re.compile(
    r"\b(?:how many|number of|in|average|mean|total)\b(?:\s+\w+){0,3}?\s+"
    r"(seconds|minutes|hours|days|weeks|months|years)\b",
    re.I,
)


def interval_not_number(a: Answer) -> Finding:
    """The question asks for a length of time as a number of units ("how many days") and a
    column of the result is an interval ("3 days 13:42:34"), not a number of them."""
    asked = _TIME_COUNT.search(a.question)
    if asked is None or a.result is None:
        return None
    for col in a.result.columns:
        if "interval" in (col.type or "").lower():
            return (
                f"the question asks for a number of {asked.group(1).lower()}, the result's {col.name} is an "
                "interval, not a number"
            )
    return None


def _shown(node: exp.Expr, select: exp.Select) -> bool:
    """Whether the ORDER BY term ``node`` is a column of ``select``'s result: the same
    expression, its alias, or its position."""
    if isinstance(node, exp.Literal) and node.is_int:
        return True
    key = node.sql().lower()
    for col in select.expressions:
        inner = col.this if isinstance(col, exp.Alias) else col
        if inner.sql().lower() == key or (col.alias and col.alias.lower() == key.strip('"`')):
            return True
        if isinstance(col, exp.Star):
            return not node.find(exp.AggFunc)
    return False


def measure_not_shown(a: Answer) -> Finding:
    """The question ranks ("the most", "top") and the query ranks its rows by an aggregate
    the result does not show: the names come without the amounts they were ranked by."""
    if not RANKING_WORD.search(a.question) or not isinstance(a.tree, exp.Select):
        return None
    if a.row_count is not None and a.row_count < 2:
        return None
    order = a.tree.args.get("order")
    if order is None:
        return None
    for term in order.expressions:
        node = term.this if isinstance(term, exp.Ordered) else term
        if node.find(exp.AggFunc) is not None and not _shown(node, a.tree):
            ranked = node.sql(dialect=sqlglot_dialect(a.dialect))
            return f"the rows are ranked by {ranked}, which the result does not show"
    return None


# a question that speaks of the rows without a label ("counting the returns without a
# reason as one group", "unassigned tickets"): a group of them is asked for
_WITHOUT = re.compile(
    r"\b(?:without|missing|unknown|null|none|unassigned|unspecified|blank|empty|no\s+\w+)\b", re.I
)


# a question that speaks of the rows without a label to leave them out ("leave out the
# donors with no recorded source"): a group of them is not asked for
_LEAVE_OUT = re.compile(
    r"\b(?:leav(?:e|ing) out|exclud(?:e|ing)|ignor(?:e|ing)|omit(?:ting)?|not counting|except)\b", re.I
)


def null_group(a: Answer) -> Finding:
    """The query groups, and one row of its result has no label: every column that is not
    an aggregate is NULL (rows without a region, say, from an outer join or a missing key,
    counted as a group of their own), and the question does not speak of such rows
    ("without a reason", "unassigned") but to leave them out ("leave out the donors with no
    recorded source")."""
    tree = a.tree
    if not isinstance(tree, exp.Select) or tree.args.get("group") is None or a.result is None:
        return None
    if _WITHOUT.search(a.question) and not _LEAVE_OUT.search(a.question):
        return None
    names = a.column_names()
    labels = [
        i
        for i, col in enumerate(tree.expressions)
        if i < len(names) and not isinstance(col, exp.Star) and col.find(exp.AggFunc, exp.Window) is None
    ]
    if not labels or len(tree.expressions) != len(names):
        return None
    rows = a.rows(limit=1000)
    empty = sum(1 for row in rows if all(row[i] is None for i in labels))
    if not empty:
        return None
    shown = ", ".join(names[i] for i in labels)
    return (
        f"a row of the result has no {shown} (NULL): the rows without one are counted as a group of their own"
    )


# a question about a level of a hierarchy: "the top-level category", "its parent group",
# "the root account", "the campaigns under the winter appeal", "its subcategories" (not
# "under 30", a comparison)
_HIERARCHY = re.compile(
    r"\b(top[- ]level|parent|root|uppermost|"
    r"under(?!\s+(?:[$£€]?\d|one|two|three|ten|a\b|the\s+(?:age|average|limit|budget|threshold)))|"
    r"sub-\w+|sub(?:categor|group|division|sidiar|ordinate|folder|project|task|account|region|team|"
    r"department|class|type|campaign)\w*|child(?:ren)?)\b",
    re.I,
)


def parent_not_followed(a: Answer) -> Finding:
    """The question asks about a level of a hierarchy ("which top-level category", "the
    parent group", "the campaigns under the winter appeal", "its subcategories") and the
    query reads a table whose rows have a parent row of the same table (a foreign key to
    itself: ``categories.parent_id``) without using that key at all: the rows it reports are
    the table's own rows, whatever level they are at (the row the question names, say,
    instead of those under it)."""
    if a.catalog is None or a.tree is None:
        return None
    asked = _HIERARCHY.search(a.question)
    if asked is None:
        return None
    used = {c.name.lower() for c in a.tree.find_all(exp.Column)}
    for table in query_tables(a.sql, a.dialect, a.catalog):
        for fk in table.foreign_keys:
            if fk.ref_table.lower() != table.name.lower() or len(fk.columns) != 1:
                continue
            column = fk.columns[0]
            if column.lower() not in used:
                return (
                    f'the question speaks of a hierarchy ("{asked.group(1).lower()}"), and the query does not '
                    f"use {table.name}.{column}, which links each row to its parent"
                )
    return None


# a question that asks for identifiers: "ids", "the id of", "key", "number" ("order number")
_ASKS_KEY = re.compile(r"\b(ids?|identifiers?|keys?|numbers?|codes?|no\.?)\b", re.I)


def key_not_asked(a: Answer) -> Finding:
    """A query that lists rows (no grouping, no aggregate) shows a table's key (its
    one-column primary key, or a column named ``id``) beside the column that names those
    rows (``name``; a first and a last name), and the question asks for no identifier
    ("id", "number", "code") nor names the key's column: a column the question does not ask
    for.  A key shown without such a name (an order, which has none) is how the rows are
    told apart, and is not judged."""
    if a.catalog is None or not isinstance(a.tree, exp.Select):
        return None
    tree = a.tree
    if tree.args.get("group") is not None or tree.find(exp.AggFunc) is not None or len(tree.expressions) < 2:
        return None
    if _ASKS_KEY.search(a.question):
        return None
    asked = {stem(w) for w in re.findall(r"[a-z]+", a.question.lower())}
    scope = scope_tables(tree, a.catalog)
    shown = [
        (owner[0], col.unalias().name.lower())
        for col in tree.expressions
        if isinstance(col.unalias(), exp.Column) and (owner := column_owner(col.unalias(), scope)) is not None
    ]
    for col in tree.expressions:
        inner = col.unalias()
        if not isinstance(inner, exp.Column):
            continue
        owner = column_owner(inner, scope)
        if owner is None:
            continue
        alias, table = owner
        labels = {c.lower() for c in label_columns(table)}
        if not labels or not any(o == alias and n in labels for o, n in shown):
            continue
        keys = {k.lower() for k in table.primary_key} if len(table.primary_key) == 1 else set()
        name = inner.name.lower()
        if name not in keys and name != "id":
            continue
        words = {stem(w) for w in re.findall(r"[a-z]+", name)} - {"id"}
        if words & asked:  # "customer_no" for "which customers": named
            continue
        return f"the result shows {table.name}.{inner.name}, a key the question does not ask for"
    return None


# a question about time: "each year", "per month", "by date", "when", "monthly", "over time"
_ABOUT_TIME = re.compile(
    r"\b(?:each|every|per|by|for each)\s+(?:year|month|quarter|week|day|date|hour)s?\b|\bwhen\b|"
    r"\b(?:yearly|monthly|quarterly|weekly|daily|hourly|over time|trend)\b",
    re.I,
)
_TIME_TYPE = re.compile(r"date|time", re.I)


def _time_column(col: exp.Expr, scope: dict[str, Table], result_type: str) -> bool:
    """Whether a column of the result is a time: its type in the result (a DATE, a
    TIMESTAMP), or, where the engine types it as text or a number (SQLite's ``strftime``),
    an expression over a column of a date or time type."""
    if _TIME_TYPE.search(result_type or "") and "interval" not in (result_type or "").lower():
        return True
    for c in col.find_all(exp.Column):
        owner = column_owner(c, scope)
        column = owner[1].column(c.name) if owner is not None else None
        if column is not None and _TIME_TYPE.search(column.type or ""):
            return True
    return False


def time_not_ordered(a: Answer) -> Finding:
    """The question asks about time ("each year", "when") and the query lists rows that carry
    a time (a date, a year taken from one) in no particular order: without an ORDER BY the
    engine may give the years or the dates in any order."""
    tree = a.tree
    if not isinstance(tree, exp.Select) or tree.args.get("order") is not None or a.catalog is None:
        return None
    if a.row_count is not None and a.row_count < 2:
        return None
    asked = _ABOUT_TIME.search(a.question)
    if asked is None:
        return None
    scope = scope_tables(tree, a.catalog)
    names = a.column_names()
    types = [col.type or "" for col in a.result.columns] if a.result is not None else []
    for i, col in enumerate(tree.expressions):
        if isinstance(col, exp.Star) or col.find(exp.AggFunc) is not None:
            continue
        if _time_column(col.unalias(), scope, types[i] if i < len(types) else ""):
            shown = names[i] if i < len(names) else col.alias_or_name
            return (
                f'the question asks about time ("{asked.group(0).lower()}"), and the rows come in no '
                f"order (no ORDER BY on {shown})"
            )
    return None


# a question for the earliest or the latest of something dated: "the oldest account", "the
# client who has been with the firm the longest", "the most recent order", "the youngest"
_EARLIEST = re.compile(r"\b(?:earliest|oldest|longest|least recent(?:ly)?)\b", re.I)
_LATEST = re.compile(r"\b(?:latest|newest|youngest|most recent(?:ly)?)\b", re.I)


def time_reversed(a: Answer) -> Finding:
    """The question asks for the earliest of something dated ("oldest", "earliest", "the
    longest" a thing has been) and the query keeps the rows with the latest dates, ordered
    by a date descending with a LIMIT; or for the latest ("newest", "most recent",
    "youngest") and the query keeps the earliest.  A question that asks for both says
    nothing; an order by anything but a date (an age, a duration) is not judged."""
    tree = a.tree
    if not isinstance(tree, exp.Select) or tree.args.get("order") is None or a.catalog is None:
        return None
    if tree.args.get("limit") is None:
        return None
    early, late = _EARLIEST.search(a.question), _LATEST.search(a.question)
    if bool(early) == bool(late):
        return None
    first = tree.args["order"].expressions[0]
    key = first.this
    if not isinstance(key, exp.Column) or date_column(key, scope_tables(tree, a.catalog)) is None:
        return None
    desc = bool(first.args.get("desc"))
    if early and desc:
        return (
            f'the question asks for the earliest ("{early.group(0).lower()}"), and the query keeps the '
            f"latest {key.name} (ORDER BY {key.name} DESC)"
        )
    if late and not desc:
        return (
            f'the question asks for the latest ("{late.group(0).lower()}"), and the query keeps the '
            f"earliest {key.name} (ORDER BY {key.name} ascending)"
        )
    return None


# engines whose "/" of two whole numbers gives a whole number (7 / 2 = 3)
_WHOLE_DIVIDING = frozenset({"sqlite", "postgres", "redshift"})
_WHOLE_TYPE = re.compile(r"int|serial", re.I)
# a question that asks for whole units ("full hours", "complete weeks", "rounded down")
_ASKS_WHOLE = re.compile(r"\b(?:whole|full|complete|completed|rounded down|truncated)\b", re.I)


def _whole(node: exp.Expr, scope: dict[str, Table]) -> bool:
    """Whether ``node`` is a whole number in the engine: a whole-number literal, a column of
    an integer type, a count, a sum, min or max of a whole number, or such numbers added,
    taken away or multiplied."""
    node = node.unnest() if isinstance(node, exp.Paren) else node
    if isinstance(node, exp.Literal):
        return node.is_int
    if isinstance(node, exp.Column):
        owner = column_owner(node, scope)
        column = owner[1].column(node.name) if owner is not None else None
        return column is not None and bool(_WHOLE_TYPE.search(column.type or ""))
    if isinstance(node, exp.Count):
        return True
    if isinstance(node, exp.Sum | exp.Min | exp.Max):
        return _whole(node.this, scope)
    if isinstance(node, exp.Add | exp.Sub | exp.Mul):
        return _whole(node.this, scope) and _whole(node.expression, scope)
    return False


def whole_division(a: Answer) -> Finding:
    """A result column divides a whole number by a whole number (``SUM(seconds / 3600)``,
    ``COUNT(*) / 7``) in an engine whose division of whole numbers drops the fraction
    (SQLite, PostgreSQL, Redshift): 5,400 seconds come out as 1 hour, not 1.5.  A question for
    whole units ("full hours") is not judged."""
    tree = a.tree
    if not isinstance(tree, exp.Select) or a.catalog is None or a.dialect not in _WHOLE_DIVIDING:
        return None
    if a.question and _ASKS_WHOLE.search(a.question):
        return None
    scope = scope_tables(tree, a.catalog)
    for col in tree.expressions:
        for div in col.find_all(exp.Div):
            if _whole(div.this, scope) and _whole(div.expression, scope):
                shown = readable(div.sql(dialect=sqlglot_dialect(a.dialect)))
                return f"the query divides whole numbers ({shown}), which drops the fraction in this engine"
    return None


def _split_name(name: str) -> list[str]:
    """A column name's words in lower case (``Song_release_year``: song, release, year;
    ``SongName``: song, name)."""
    return re.findall(r"[a-z]+|\d+", re.sub(r"([a-z])([A-Z])", r"\1 \2", name).lower())


def attribute_of_other(a: Answer) -> Finding:
    """The question asks for an attribute of a thing ("the name ... of the song", "the
    song's name") and the query shows the attribute of the table's own rows (``singer.Name``)
    where the same table has that attribute of the thing as a column of its own
    (``singer.Song_Name``), which the query does not show."""
    tree = a.tree
    if not isinstance(tree, exp.Select) or a.catalog is None or not a.question:
        return None
    scope = scope_tables(tree, a.catalog)
    shown = {
        (owner[0], c.name.lower())
        for p in tree.expressions
        for c in p.find_all(exp.Column)
        if (owner := column_owner(c, scope)) is not None
    }
    question = a.question.lower()
    for p in tree.expressions:
        col = p.unalias()
        if not isinstance(col, exp.Column):
            continue
        owner = column_owner(col, scope)
        if owner is None:
            continue
        alias, table = owner
        attr = _split_name(col.name)
        if not attr:
            continue
        for other in table.columns:
            words = _split_name(other.name)
            if len(words) <= len(attr) or words[-len(attr) :] != attr or (alias, other.name.lower()) in shown:
                continue
            thing = " ".join(words[: -len(attr)])
            said = " ".join(attr)
            asked = (
                rf"\b{re.escape(said)}s?\b(?:\s+[\w-]+){{0,5}}?\s+of\s+(?:the\s+|a\s+|an\s+|each\s+|its\s+|their\s+)?"
                rf"{re.escape(thing)}s?\b|\b{re.escape(thing)}(?:'s|s')?\s+{re.escape(said)}s?\b"
            )
            if len(thing) >= 3 and re.search(asked, question):
                return (
                    f"the question asks for the {said} of the {thing}, and the query shows {table.name}.{col.name}, "
                    f"not {table.name}.{other.name}"
                )
    return None


def named_row_shown(a: Answer) -> Finding:
    """A query that reads one table twice (a self-join: people and their managers) and
    keeps one of the two readings to the row the question names (``T2.LastName =
    'Lockwood'``) shows a column of that named row (``T2.Title``) beside the other reading's
    rows without the same column of those rows (``T1.Title``): every row shows the named
    row's value where the question asks for each listed row's own."""
    tree = a.tree
    if not isinstance(tree, exp.Select) or a.catalog is None or not a.question:
        return None
    scope = scope_tables(tree, a.catalog)
    if len({t.name.lower() for t in scope.values()}) == len(scope):
        return None
    asked = plain_text(a.question)

    def named(lit: exp.Literal) -> bool:
        value = plain_text(lit.this) if lit.is_string else ""
        return bool(value) and re.search(rf"(?<!\w){re.escape(value)}(?!\w)", asked) is not None

    pinned: dict[str, set[str]] = {}  # alias -> the columns its filters compare with a named value
    for alias, column in pinned_columns(tree, scope, named):
        pinned.setdefault(alias, set()).add(column)
    shown = [
        (owner, c.name)
        for p in tree.expressions
        for c in p.find_all(exp.Column)
        if (owner := column_owner(c, scope)) is not None
    ]
    shown_keys = {(alias, name.lower()) for (alias, _), name in shown}
    for (alias, table), name in shown:
        if alias not in pinned or name.lower() in pinned[alias]:
            continue
        others = [
            o
            for o, t in scope.items()
            if o != alias
            and o not in pinned
            and t.name.lower() == table.name.lower()
            and any(s_alias == o for s_alias, _ in shown_keys)
        ]
        for other in others:
            if (other, name.lower()) not in shown_keys:
                return (
                    f"the query shows {alias}.{name}, the {name} of the {table.name} row the question names, on "
                    f"every row it lists; the {name} of the listed rows ({other}.{name}) is not shown"
                )
    return None


def filter_echoed(a: Answer) -> Finding:
    """The result shows only columns the query's WHERE pins to one value each (``SELECT
    name ... WHERE name = 'Drinks'``), nothing counted or added: every row repeats the value
    the query was given, and nothing about the rows it stands for (the groups under Drinks,
    the members of a team) is answered."""
    tree, catalog = a.tree, a.catalog
    if not isinstance(tree, exp.Select) or catalog is None or tree.args.get("group") is not None:
        return None
    scope = scope_tables(tree, catalog)
    pinned = pinned_columns(tree, scope)
    shown: list[tuple[str, str]] = []
    for p in tree.expressions:
        node = p.unalias() if isinstance(p, exp.Alias) else p
        owner = column_owner(node, scope) if isinstance(node, exp.Column) else None
        if owner is None:
            return None
        shown.append((owner[0], node.name.lower()))
    if not shown or not all(s in pinned for s in shown):
        return None
    names = ", ".join(dict.fromkeys(name for _, name in shown))
    return (
        f"the result shows only {names}, which the query's WHERE fixes to the value it was given: it repeats "
        "that value and says nothing about the rows it stands for"
    )


NUMBERS_LEFT_OUT = Check(
    name="numbers_left_out",
    summary="a number the question names (a year, a threshold) that the query does not use",
    find=numbers_left_out,
    advice="Use that number in the query (a filter on the year or the threshold it names).",
)
FILTERS_NOT_ASKED = Check(
    name="filters_not_asked",
    summary="a filter on a value the question does not name",
    find=filters_not_asked,
    advice="Leave out the filter the question does not ask for.",
)
NEGATED_VALUE = Check(
    name="negated_value",
    summary='a value the question leaves out ("not refunded") that the query keeps only the rows of',
    find=negated_value,
    advice="Leave out the rows with that value instead of keeping only them (<> or NOT IN).",
)
INCLUDED_FILTERED_OUT = Check(
    name="included_filtered_out",
    summary='a question that counts rows in some state as well ("counting any since deleted") answered '
    "by a query that keeps only the rows of one state by a flag",
    find=included_filtered_out,
    advice="Drop the filter that leaves out the rows the question says to count as well.",
)
COUNTED_ELSEWHERE = Check(
    name="counted_elsewhere",
    summary='a question counting the rows of a table ("how many entries") whose query does not read it',
    find=counted_elsewhere,
    advice="Count the rows of the table the question counts.",
)
RANKING_WITHOUT_ORDER = Check(
    name="ranking_without_order",
    summary="a question for the most, least or top answered by a query that does not rank",
    find=ranking_without_order,
    advice=(
        "ORDER BY the amount the question ranks by (DESC for the most), with a LIMIT where it "
        "asks for a number of rows."
    ),
)
ROWS_NOT_ASKED = Check(
    name="rows_not_asked",
    summary='a question for a number of things ("the top 5") whose result has more rows or keeps another number',
    find=rows_not_asked,
    advice="Keep as many rows as the question asks for (ORDER BY the amount, then LIMIT that number).",
)
MEASURE_NOT_SHOWN = Check(
    name="measure_not_shown",
    summary="a ranking whose rows are ordered by an amount the result does not show",
    find=measure_not_shown,
    advice="Add the amount the rows are ordered by to the SELECT list.",
)
NULL_GROUP = Check(
    name="null_group",
    summary="a grouped result with a row whose label is missing (NULL), counted as a group of its own",
    find=null_group,
    advice="Leave out the rows without a value (an inner JOIN, or WHERE the column IS NOT NULL).",
)
LIMIT_NOT_ASKED = Check(
    name="limit_not_asked",
    summary='a question for every group ("each country") whose grouped query keeps only its first rows (a LIMIT)',
    find=limit_not_asked,
    advice="Remove the LIMIT: the question asks for every group.",
)
WHOLE_DIVISION = Check(
    name="whole_division",
    summary="a division of whole numbers, which drops the fraction (5400 / 3600 = 1)",
    find=whole_division,
    advice="Divide by a decimal (3600.0) or CAST the dividend AS REAL, so the fraction is kept.",
)
NAMED_ROW_SHOWN = Check(
    name="named_row_shown",
    summary="a self-join that shows a column of the row the question names (a manager's title) "
    "instead of the same column of the rows it lists",
    find=named_row_shown,
    advice="Show that column from the rows listed (the other reading of the table), not from the row the "
    "question names.",
)
INTERVAL_NOT_NUMBER = Check(
    name="interval_not_number",
    summary='a question for a number of days or hours ("how many days") answered with an interval',
    find=interval_not_number,
    advice="Give the number of days as a number (a difference of dates in days), not an interval.",
)

PARENT_NOT_FOLLOWED = Check(
    name="parent_not_followed",
    summary='a question for the top of a hierarchy ("the top-level category") answered without the parent key',
    find=parent_not_followed,
    advice=(
        "Join the table to itself through its parent key, so the rows reported are those of the "
        "level the question asks for."
    ),
)
KEY_NOT_ASKED = Check(
    name="key_not_asked",
    summary="a listing that shows a table's key beside other columns where the question asks for no identifier",
    find=key_not_asked,
    advice="Leave the key column out of the SELECT list; keep the columns the question asks for.",
)
TIME_NOT_ORDERED = Check(
    name="time_not_ordered",
    summary='a question about time ("each year", "when") answered with dated rows in no order',
    find=time_not_ordered,
    advice="ORDER BY the time column.",
)
ATTRIBUTE_OF_OTHER = Check(
    name="attribute_of_other",
    summary='a question for an attribute of a thing ("the name of the song") answered with the row\'s own '
    "(singer.Name beside singer.Song_Name)",
    find=attribute_of_other,
    advice="Show the column that holds the attribute of the thing the question names.",
)
TIME_REVERSED = Check(
    name="time_reversed",
    summary='a question for the earliest ("oldest") answered with the latest dates, or the reverse',
    find=time_reversed,
    advice=(
        "Order by that date ascending (earliest first) for the oldest, earliest or longest-standing, "
        "descending (latest first) for the newest, latest or youngest."
    ),
)

FILTER_ECHOED = Check(
    name="filter_echoed",
    summary="a result that shows only the columns the query fixes to a value, repeating the value it was given",
    find=filter_echoed,
    advice="Show what the question asks about the rows that value stands for (the rows linked to it, through "
    "the key that links them), not the value itself.",
)
