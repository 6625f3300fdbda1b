"""Checks that read the data (read-only, within the turn's lookup time): a stored value the
question names that the query does not use, entities added together because the query
groups by a name that several of them share, and a sum over a join that repeats the rows
it sums."""

from __future__ import annotations

import re
from typing import Any

from sqlglot import exp

from sqlnb.adapters import Table
from sqlnb.agent.checks.check import Answer, Check, Finding
from sqlnb.agent.lexicon import (
    NUMBER_WORDS,
    ORDINAL_WORDS,
    is_code,
    nameable,
    plain_text,
    stem,
    tokens,
    value_named,
)
from sqlnb.agent.repairs.labels import label_column
from sqlnb.agent.sqltree import (
    TEXT_TYPES,
    column_owner,
    fk_target,
    grouped_apart,
    qualified,
    query_tables,
    scope_tables,
    spelling,
    stored_numbers,
    table_names,
    table_node,
)
from sqlnb.sql.dialects import sqlglot_dialect

# the most values of a result column looked up at once
_MOST_VALUES = 200


def _unlabelled(a: Answer) -> str:
    """The query's text in lower case without the names it gives its columns (``AS
    strong_yes_count`` labels a count, it keeps no rows): what the query uses."""
    if a.tree is None:
        return plain_text(a.sql)
    tree = a.tree.copy()
    for alias in list(tree.find_all(exp.Alias)):
        if isinstance(alias.parent, exp.Select) and alias in alias.parent.expressions:
            alias.replace(alias.this)
    return plain_text(tree.sql())


def values_left_out(a: Answer, max_columns: int = 12) -> Finding:
    """The stored values of the query's text columns (``Answer.stored_values``, at most
    ``max_columns`` columns a table) that the question names and the query does not use,
    e.g. a question about the orders of one status answered without a filter on that
    status.  A value counts as named when the question holds it as whole words, in any
    case, a plural ending allowed, and a code when a word of the question spells it out
    (:func:`~sqlnb.agent.lexicon.value_named` with ``codes``); other values shorter than
    three letters, numbers (see :mod:`.query`'s ``numbers_left_out``) and values whose every
    word is a word of a table or column name of the query (a value 'x' beside a column
    ``is_x``) are not looked for.  A value counts as used when the query holds it, or each
    of its words, anywhere but in the names the query gives its columns (a code: quoted)."""
    if a.catalog is None or not a.question or a.stored_values is None:
        return None
    tables = query_tables(a.sql, a.dialect, a.catalog)  # none for a query that does not parse
    names = table_names(tables)
    worth = nameable(names)
    named = value_named(a.question, codes=True, names=names)
    used = _unlabelled(a).replace("''", "'")
    out: list[str] = []
    seen: set[str] = set()
    for table in tables:
        for col in [c for c in table.columns if TEXT_TYPES.search(c.type or "")][:max_columns]:
            try:
                values = a.stored_values(table, col.name)
            except Exception:  # a column the database cannot list: nothing to say about it
                continue
            for v in values:
                if not isinstance(v, str):
                    continue
                plain = plain_text(v)
                words = re.findall(r"[a-z]+", plain)
                code = is_code(v)
                if plain in seen or not worth(v) or not named(v):
                    continue
                seen.add(plain)
                if (
                    (f"'{plain}'" in used or f'"{plain}"' in used)
                    if code
                    else (plain in used or all(w in used for w in words if len(w) > 2))
                ):
                    continue
                out.append(
                    f"the question names '{v}' (a value of {table.name}.{col.name}), the query does not use it"
                )
    return "; ".join(out) or None


# the most rows of a table of kinds (issue types, categories, statuses) whose names are read
_MOST_KINDS = 30


def kind_not_read(a: Answer) -> Finding:
    """The question names a kind of thing ("bugs") that is the name of a row of a small table
    of kinds (``issue_type.name`` = 'Bug', at most :data:`_MOST_KINDS` rows) which a table the
    query reads refers to by a key (``issue.issue_type``), and the query neither reads that
    table nor uses the key: it counts every kind.  A word that is a word of a table or column
    name the query reads is not looked for.  Read from the data: the kinds' names."""
    tree, catalog = a.tree, a.catalog
    if tree is None or catalog is None or a.stored_values is None or not a.question:
        return None
    tables = query_tables(a.sql, a.dialect, catalog)
    used = {c.name.lower() for c in tree.find_all(exp.Column)}
    read_words = {stem(w) for t in tables for n in [t.name, *(c.name for c in t.columns)] for w in tokens(n)}
    asked = {stem(w) for w in tokens(a.question) if len(w) >= 3} - read_words
    seen: set[int] = set()
    for table in tables:
        for fk in table.foreign_keys:
            target = fk_target(fk, catalog) if len(fk.columns) == 1 else None
            if target is None or id(target) in seen or target in tables or fk.columns[0].lower() in used:
                continue
            seen.add(id(target))
            label = label_column(target)
            if label is None:
                continue
            try:
                kinds = [v for v in a.stored_values(target, label) if isinstance(v, str)]
            except Exception:  # a column the database cannot list
                continue
            if len(kinds) > _MOST_KINDS:
                continue
            for kind in kinds:
                words = tokens(kind)
                if len(words) == 1 and len(words[0]) >= 3 and stem(words[0]) in asked:
                    return (
                        f"the question names '{kind}' ({target.name}.{label}, which {table.name}.{fk.columns[0]} "
                        f"refers to), and the query does not read {target.name}"
                    )
    return None


# a column named as an identifier of its rows ("customer_id", "CustomerNo", "vendor_code",
# "emp_num"): grouping by it tells the rows' things apart even where the catalog declares
# another key (a warehouse dimension's surrogate key beside the business key)
_IDENTIFIER = re.compile(r"(?:^|_|(?<=[a-z]))(?:id|no|num|number|code|key|ref)$", re.I)


def _identifier(column: str) -> bool:
    return bool(_IDENTIFIER.search(column)) and column.lower() not in {"no", "code", "key"}


def _single_key(table: Table) -> str | None:
    return table.primary_key[0] if len(table.primary_key) == 1 else None


def merged_entities(a: Answer) -> Finding:
    """The query groups by the column that names a table's rows (``customers.name``) and
    not by the table's key, and names in its result are shared by several rows of that
    table: those rows are added together as one.  Read from the data: the result's names
    that more than one row holds."""
    tree, catalog = a.tree, a.catalog
    if not isinstance(tree, exp.Select) or catalog is None or a.lookup is None:
        return None
    group = tree.args.get("group")
    if group is None:
        return None
    scope = scope_tables(tree, catalog)
    groups: list[tuple[str, Table, str]] = []
    for g in group.expressions:
        if isinstance(g, exp.Column) and (owner := column_owner(g, scope)) is not None:
            groups.append((owner[0], owner[1], g.name))
    shown = a.column_names()
    for alias, table, col in groups:
        label = label_column(table)
        key = _single_key(table)
        if label is None or key is None or col.lower() != label.lower() or col.lower() == key.lower():
            continue
        if grouped_apart(table, alias, groups):
            continue
        if any(g_alias == alias and _identifier(g_col) for g_alias, _, g_col in groups):
            continue  # also grouped by an identifier of the same rows
        # the result column that shows the name
        index = next(
            (
                i
                for i, p in enumerate(tree.expressions)
                if isinstance(p.unalias(), exp.Column)
                and p.unalias().name.lower() == col.lower()
                and column_owner(p.unalias(), scope) == (alias, table)
            ),
            None,
        )
        if index is None or index >= len(shown):
            continue
        values = list(dict.fromkeys(r[index] for r in a.rows(_MOST_VALUES) if isinstance(r[index], str)))
        if not values:
            continue
        dialect = sqlglot_dialect(a.dialect)
        stored = table.column(col)
        name_col = exp.column(exp.to_identifier(stored.name if stored else col, quoted=True))
        source = table_node(table, catalog)
        probe = (
            exp.select(name_col.copy(), exp.Count(this=exp.Star()))
            .from_(source)
            .where(exp.In(this=name_col.copy(), expressions=[exp.Literal.string(v) for v in values]))
            .group_by(name_col.copy())
            .having(exp.GT(this=exp.Count(this=exp.Star()), expression=exp.Literal.number(1)))
            .order_by(exp.Ordered(this=exp.Count(this=exp.Star()), desc=True))
        )
        shared: list[tuple[Any, ...]] = list(a.lookup(probe.sql(dialect=dialect)))
        if not shared:
            continue
        name, n = shared[0][0], shared[0][1]
        more = f" ({len(shared)} of the result's names are shared)" if len(shared) > 1 else ""
        return (
            f"'{name}' names {n} different rows of {table.name}{more}: grouped by {col} and not by "
            f"{key}, the query adds them together"
        )
    return None


def fan_out(a: Answer) -> Finding:
    """The query sums or averages a column of one table over a join that repeats that
    table's rows (an order's total over its order lines): each row counts once per
    matching row of the other tables.  Read from the data: the joined rows (with the
    query's filters) against the distinct keys of the summed table."""
    tree, catalog = a.tree, a.catalog
    if not isinstance(tree, exp.Select) or catalog is None or a.lookup is None or not tree.args.get("joins"):
        return None
    scope = scope_tables(tree, catalog)
    if len(scope) < 2:
        return None
    spelled = spelling(tree)
    dialect = sqlglot_dialect(a.dialect)
    for agg in tree.find_all(exp.Sum, exp.Avg):
        if agg.find_ancestor(exp.Select) is not tree or agg.find(exp.Distinct) is not None:
            continue
        owners = [column_owner(c, scope) for c in agg.find_all(exp.Column)]
        if not owners or None in owners or len({o[0] for o in owners if o is not None}) != 1:
            continue
        first = owners[0]
        if first is None:
            continue
        alias, table = first
        key = _single_key(table)
        if key is None:
            continue
        probe = tree.copy()
        for arg in ("group", "having", "order", "limit", "offset", "distinct"):
            probe.set(arg, None)
        keyed = qualified(key, spelled.get(alias, alias))
        probe.set(
            "expressions",
            [exp.Count(this=exp.Star()), exp.Count(this=exp.Distinct(expressions=[keyed]))],
        )
        rows = list(a.lookup(probe.sql(dialect=dialect)))
        if not rows or rows[0][0] is None or rows[0][1] is None:
            continue
        joined, distinct = int(rows[0][0]), int(rows[0][1])
        if joined > distinct:
            others = ", ".join(t.name for al, t in scope.items() if al != alias)
            return (
                f"it {'sums' if isinstance(agg, exp.Sum) else 'averages'} {agg.this.sql(dialect=dialect)} "
                f"over a join that repeats rows of {table.name} ({joined} joined rows for {distinct} "
                f"of them): each counts once per matching row of {others}"
            )
    return None


def _count_rows(a: Answer, select: exp.Select) -> int | None:
    """The rows of ``select``'s FROM, JOINs and WHERE (its grouping, ordering and limit
    left out), counted in the database."""
    assert a.lookup is not None
    probe = select.copy()
    for arg in ("group", "having", "order", "limit", "offset", "distinct"):
        probe.set(arg, None)
    probe.set("expressions", [exp.Count(this=exp.Star())])
    rows = list(a.lookup(probe.sql(dialect=sqlglot_dialect(a.dialect))))
    return int(rows[0][0]) if rows and rows[0][0] is not None else None


def needless_join(a: Answer) -> Finding:
    """The query adds up rows (COUNT, SUM, AVG) over a join with a table it uses for
    nothing else than joining it, joined to a table in the middle of the chain (neither the
    FROM table nor a grouped one), and that join repeats rows (a stadium's concerts
    counted once per singer of each concert; a join that only drops rows, keeping those
    that have a match, is a filter and not doubted).  Read from the data: the
    rows with the join against the rows without it."""
    tree, catalog = a.tree, a.catalog
    if not isinstance(tree, exp.Select) or catalog is None or a.lookup is None:
        return None
    joins = list(tree.args.get("joins") or [])
    adds_up = [
        f
        for f in tree.find_all(exp.Count, exp.Sum, exp.Avg)
        if f.find_ancestor(exp.Select) is tree and f.find(exp.Distinct) is None
    ]
    if not joins or not adds_up:
        return None
    source = tree.args.get("from_") or tree.args.get("from")
    anchors = (
        {(source.this.alias or source.this.name).lower()}
        if source and isinstance(source.this, exp.Table)
        else set()
    )
    group = tree.args.get("group")
    anchors |= {col.table.lower() for col in (group.find_all(exp.Column) if group else ()) if col.table}
    for join in joins:
        table = join.this
        on = join.args.get("on")
        if not isinstance(table, exp.Table) or on is None or join.args.get("kind") or join.side:
            continue
        alias = (table.alias or table.name).lower()
        own = [col for col in tree.find_all(exp.Column) if col.table.lower() == alias]
        elsewhere = [col for col in own if col.find_ancestor(exp.Join) is not join]
        # used only to join, or as the argument of COUNT (a key it shares with the other side)
        if any(not isinstance(col.parent, exp.Count) for col in elsewhere):
            continue
        others = {col.table.lower() for col in on.find_all(exp.Column)} - {alias}
        # joined to a table in the middle of the chain: the rows added up are the middle
        # table's (counting the FROM table's or the grouped table's children is the point)
        if (
            len(others) != 1
            or others & anchors
            or any(
                col.table.lower() == alias
                for j in joins
                if j is not join
                for col in (j.args.get("on") or exp.Null()).find_all(exp.Column)
            )
        ):
            continue
        without = tree.copy()
        without.set("joins", [j.copy() for j in joins if j is not join])
        with_rows, without_rows = _count_rows(a, tree), _count_rows(a, without)
        if with_rows is None or without_rows is None or with_rows <= without_rows:
            continue
        return (
            f"it joins {table.name} only to match keys, and that join repeats rows "
            f"({with_rows} rows with it, {without_rows} without) before they are added up"
        )
    return None


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


def missing_as_zero(a: Answer) -> Finding:
    """The question asks for the rows without something ("sold without any discount") and
    the query takes them as the rows whose column for it is 0 or empty (``discount = 0``:
    :func:`lacking_filters`), where that column has rows with
    no value at all (NULL): those are left out."""
    tree = a.tree
    if a.catalog is None or a.lookup is None or not isinstance(tree, exp.Select):
        return None
    scope = scope_tables(tree, a.catalog)
    dialect = sqlglot_dialect(a.dialect)
    for term, col, _lit in lacking_filters(tree, a.question):
        owner = column_owner(col, scope)
        if owner is None:
            continue
        table = owner[1]
        stored = next((c.name for c in table.columns if c.name.lower() == col.name.lower()), col.name)
        nulls = _count_rows(
            a,
            exp.select(exp.Star())
            .from_(table_node(table, a.catalog))
            .where(exp.Is(this=exp.column(exp.to_identifier(stored, quoted=True)), expression=exp.Null())),
        )
        if nulls:
            return (
                f"the question asks for the rows without {col.name}: {nulls} rows of {table.name} have no "
                f"{col.name} at all (NULL), which {term.sql(dialect=dialect)} leaves out"
            )
    return None


# the most different codes a column of numbered codes holds (more: a measure, a count)
_MOST_CODES = 9
# a number the question writes, as digits or as a word ("two", "3", "the 2nd")
_WRITTEN_NUMBER = re.compile(r"(?<![\w.])(\d+)(?:st|nd|rd|th)?(?!\w)")
# the absence of a thing ("no parent category", "without a manager"): a 0 stands for none
_ABSENCE = frozenset({"no", "without", "none", "zero"})


def _written_numbers(question: str, column: str) -> set[float]:
    """The whole numbers ``question`` writes, in digits or in words (cardinal or ordinal),
    and 0 where it says that the thing ``column`` names is absent ("no parent" beside a
    column ``parent``)."""
    text = question.lower().replace(",", "")
    words = tokens(text)
    found = {float(n) for n in _WRITTEN_NUMBER.findall(text)}
    found |= {float(NUMBER_WORDS[w]) for w in words if w in NUMBER_WORDS}
    found |= {float(ORDINAL_WORDS[w]) for w in words if w in ORDINAL_WORDS}
    named = {stem(w) for w in tokens(column) if len(w) >= 3}
    if any(w in _ABSENCE and {stem(x) for x in words[i + 1 : i + 3]} & named for i, w in enumerate(words)):
        found.add(0.0)
    return found


def code_meaning_guessed(a: Answer) -> Finding:
    """The query keeps the rows of one or more numbered codes of a column
    (``wheelchair_accessible = 0``) that holds a few small whole numbers (three to
    :data:`_MOST_CODES` of them, 0 to 999), is no key and refers to no table that names the
    codes, and the question writes none of the kept numbers: what each number stands for
    is said nowhere in the database, so the answer takes its meaning on trust (0 may be
    "unknown" where 2 is "no").  A number counts as written in digits, in words ("two",
    "the second floor") and, for 0, as the absence of what the column names ("no parent
    category" beside ``parent``).  A column of two values is read as a yes/no flag and not
    judged.  Read from the data: the column's stored values."""
    tree, catalog = a.tree, a.catalog
    if not isinstance(tree, exp.Select) or catalog is None or a.stored_values is None or not a.question:
        return None
    where = tree.args.get("where")
    if where is None:
        return None
    scope = scope_tables(tree, catalog)
    for term in where.find_all(exp.EQ, exp.NEQ, exp.In):
        col = term.this if isinstance(term.this, exp.Column) else term.args.get("expression")
        if not isinstance(col, exp.Column):
            continue
        kept = (
            term.expressions
            if isinstance(term, exp.In)
            else [term.expression if term.this is col else term.this]
        )
        if not kept or term.args.get("query") is not None:
            continue
        if not all(isinstance(n, exp.Literal) and n.is_number for n in kept):
            continue
        numbers = [float(n.this) for n in kept]
        if any(n in _written_numbers(a.question, col.name) or n != int(n) for n in numbers):
            continue
        owner = column_owner(col, scope)
        if owner is None:
            continue
        table = owner[1]
        name = col.name.lower()
        if (
            name in {c.lower() for c in table.primary_key}
            or any(name in {c.lower() for c in fk.columns} for fk in table.foreign_keys)
            or _identifier(col.name)
        ):
            continue
        stored = stored_numbers(table, col, a.stored_values)
        if stored is None or not 3 <= len(set(stored)) <= _MOST_CODES:
            continue
        if not all(v == int(v) and 0 <= v <= 999 for v in stored):
            continue
        codes = ", ".join(str(int(v)) for v in sorted(set(stored)))
        kept_text = ", ".join(str(int(n)) for n in numbers)
        return (
            f"the query keeps {table.name}.{col.name} {'<>' if isinstance(term, exp.NEQ) else '='} "
            f"{kept_text}, a numbered code (the column holds {codes}) whose meaning the database "
            "does not name, and the question does not name the number"
        )
    return None


# a yes/no column's name after its prefix ("is_archived", "IsActive"); a column that says a
# row has linked rows ("has_incidents") is not one: a query may count the links instead
_FLAG_PREFIXES = frozenset({"is"})
_LINKS_PREFIXES = frozenset({"has", "have"})
# what a yes/no column stores: 0 and 1, or true and false
_FLAG_VALUES = frozenset({"0", "1", "true", "false", "t", "f"})
# a question that counts the rows either way ("including the archived ones", "whether or not
# billable", "whatever their status")
_EITHER_WAY = re.compile(
    r"\b(?:including|included|counting|whether|whatever|regardless|as well|too|or not)\b", re.I
)


def _flag_word(column: str) -> str | None:
    """The one word a yes/no column's name says (``billable``, ``is_archived`` → archived), of
    four letters or more; None for a name of several words or one that says a row has links
    (``has_incidents``)."""
    said = tokens(column)
    if said and said[0].lower() in _LINKS_PREFIXES:
        return None
    words = [w for w in said if w.lower() not in _FLAG_PREFIXES]
    return words[0].lower() if len(words) == 1 and len(words[0]) >= 4 else None


def flag_not_applied(a: Answer) -> Finding:
    """The question says the word a yes/no column of a table the query reads is named by
    ("billable hours" and ``time_entry.billable``; "archived clients" and
    ``client.is_archived``), and the query uses no column of that name nor that word as a
    stored value: it takes the rows either way.  A yes/no column stores both 0 and 1 (or
    true and false) and nothing else but NULL.  Silent where the question counts the rows
    either way ("including", "whether or not").  Read from the data: the column's values."""
    tree, catalog = a.tree, a.catalog
    if tree is None or catalog is None or a.stored_values is None or not a.question:
        return None
    if _EITHER_WAY.search(a.question):
        return None
    asked = {stem(w) for w in tokens(a.question) if len(w) >= 4}
    used = {stem(w) for c in tree.find_all(exp.Column) for w in tokens(c.name)}
    used |= {stem(w) for lit in tree.find_all(exp.Literal) if lit.is_string for w in tokens(str(lit.this))}
    for table in query_tables(a.sql, a.dialect, catalog):
        for column in table.columns:
            word = _flag_word(column.name)
            if word is None or stem(word) not in asked or stem(word) in used:
                continue
            try:
                values = {str(v).lower() for v in a.stored_values(table, column.name) if v is not None}
            except Exception:  # a column the database cannot list
                continue
            if values and values <= _FLAG_VALUES and len(values) == 2:
                return (
                    f'the question says "{word}", and the query does not use {table.name}.{column.name} '
                    "(yes or no for each row): it takes the rows either way"
                )
    return None


VALUES_LEFT_OUT = Check(
    name="values_left_out",
    summary="a stored value the question names that the query does not use",
    find=values_left_out,
    reads_data=True,
    advice="Filter on that value in the column that stores it.",
    # its findings once led the model astray: on the twenty-second unseen batch, a branch
    # code 'MAR' read from "31 March" and 'HOL' from "holds" made the correction add a
    # filter that turned two right answers wrong, and none of its corrections was right
    corrected=False,
)
MERGED_ENTITIES = Check(
    name="merged_entities",
    summary="rows added together because the query groups by a name several of them share",
    find=merged_entities,
    reads_data=True,
    advice="GROUP BY the key of the table as well as the name, so that different rows with the same name stay apart.",
)
NEEDLESS_JOIN = Check(
    name="needless_join",
    summary="rows added up over a join with a table used for nothing but the join, which repeats them",
    find=needless_join,
    reads_data=True,
    advice="Leave out the join with the table that is used for nothing but the join.",
)
FAN_OUT = Check(
    name="fan_out",
    summary="a sum or average over a join that repeats the rows it sums",
    find=fan_out,
    reads_data=True,
    advice=(
        "Add the amount up before the join (in a subquery per row of its own table), or take it "
        "from the table it belongs to without the join that repeats it."
    ),
)
CODE_MEANING_GUESSED = Check(
    name="code_meaning_guessed",
    summary="a filter on a numbered code whose meaning the database does not name",
    find=code_meaning_guessed,
    reads_data=True,
    advice=(
        "Keep the number the question means only where the database says what the codes stand for "
        "(a table that names them, the values of a column beside them); otherwise say which number "
        "was taken for what."
    ),
    # the model has nothing more to read about the codes than it had: a correction would guess again
    corrected=False,
)
KIND_NOT_READ = Check(
    name="kind_not_read",
    summary='a kind the question names ("bugs") kept in a table of kinds the query does not read',
    find=kind_not_read,
    reads_data=True,
    advice="Join the table of kinds the question names and filter on that kind's name.",
)
FLAG_NOT_APPLIED = Check(
    name="flag_not_applied",
    summary='a yes/no column the question names ("billable") that the query does not use',
    find=flag_not_applied,
    reads_data=True,
    advice="Keep only the rows where that yes/no column says what the question says (= 1, or = 0 for its opposite).",
)
MISSING_AS_ZERO = Check(
    name="missing_as_zero",
    summary="rows without something taken as the rows where it is 0 or empty, where it is also NULL",
    find=missing_as_zero,
    reads_data=True,
    advice="Count the rows where the column has no value (IS NULL) as well as those where it is 0 or empty.",
)
