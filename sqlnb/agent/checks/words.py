"""The check of the question's words (:data:`WORDS_NOT_READ`): a word of the question that
nothing in the kept query stands for.  It reads the question and the query's tree alone.

A word stands for something in the query when it names, as written, as a stem, a verb's
form, the start of a longer name or its short form (``rtn`` for "returned"), a table or
a column the query reads or a word of a string it compares with; a month ("December")
when the query writes its number; a word that leaves rows out ("not", "never", "leave
out") when the query negates something; a word that compares ("after", "under") when the
query compares; a word that adds rows up ("altogether", "combined") when the query
aggregates; a word negated by its prefix ("unpublished", "inactive", "disabled") when
the query says no to what the rest of the word names (``is_published = 0``, ``active <>
1``, ``NOT enabled``; a prefix's opposite, "en" for "dis", counts as well).  Words that
name no table, column, value or condition are not looked for: the stop list, the asking
words, numbers and number words (``numbers_left_out`` and ``rows_not_asked`` read those),
ranking words (``ranking_without_order``) and :data:`~sqlnb.agent.lexicon.QUIET_WORDS`.

Its finding does not doubt the answer: a word may need nothing in the query ("customers
who live in Leeds").  It keeps the answer from "high", the promise that the answer is
right: a query that accounts for every word of its question is right far more often than
one that does not (``Check.ceiling``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar, cast

from sqlglot import exp

from sqlnb.agent.checks.check import Answer, Check, Finding
from sqlnb.agent.lexicon import (
    ASKING_WORDS,
    COMPARING_WORDS,
    LEAVING_OUT_WORDS,
    MONTH_NAMES,
    NUMBER_WORDS,
    ORDINAL_WORDS,
    QUIET_WORDS,
    RANKING_WORD,
    STOP_WORDS,
    TOTALLING_WORDS,
    abbreviates,
    listed,
    stem,
    tokens,
    verb_stems,
)

# the shortest name that stands for the longer words it starts ("cancel" for "cancelled"),
# and the shortest word found inside a name run together ("commerce" in ``ecommerce``)
_PREFIX = 4
_INSIDE = 5
# "leave" leaves rows out with one of these after it ("leave out", "leave the refunds out")
_PARTICLES = frozenset({"out", "off", "aside"})
_PARTICLE_REACH = 5  # words after "leave" its particle may come
# values that stand for "no" in a comparison with them (``returned = 'N'``, ``active = 0``)
_NO_VALUES = frozenset({"0", "n", "no", "false", "f", ""})
_T = TypeVar("_T")


def _forms(word: str) -> set[str]:
    """A word and its stems: the noun's (:func:`~sqlnb.agent.lexicon.stem`) and a verb's
    (:func:`~sqlnb.agent.lexicon.verb_stems`), three letters or more."""
    found = {word, stem(word)}
    for verb in verb_stems(word):
        found |= {verb, stem(verb)}
    return {f for f in found if len(f) >= 3}


# what a query's names give to read a question's words by: their words, those words'
# :func:`_forms`, and the names run together in lower case (``ecommerceorders``)
Vocabulary = tuple[set[str], set[str], set[str]]


def _vocabulary(names: list[str]) -> Vocabulary:
    """The words of ``names``, their forms and the names run together (:data:`Vocabulary`)."""
    names = [n for n in names if n]
    words = {w for n in names for w in tokens(n)}
    named = {f for w in words for f in _forms(w)}
    joined = {re.sub(r"[^a-z0-9]", "", n.lower()) for n in names}
    return words, named, joined


def _names(tree: exp.Expr) -> Vocabulary:
    """The :data:`Vocabulary` of the tables and columns ``tree`` reads and of the strings
    it compares with.  A column that only names an alias of the query (``ORDER BY
    total_hours``) and a table that names a CTE stand for nothing the data holds."""
    aliases = {a.alias.lower() for a in tree.find_all(exp.Alias) if a.alias}
    ctes = {c.alias.lower() for c in tree.find_all(exp.CTE) if c.alias}
    names: list[str] = []
    for node in tree.find_all(exp.Column, exp.Table):
        name = node.name
        if not name:
            continue
        if isinstance(node, exp.Column) and not node.table and name.lower() in aliases:
            continue
        if isinstance(node, exp.Table) and name.lower() in ctes:
            continue
        names.append(name)
    names += [lit.this for lit in tree.find_all(exp.Literal) if lit.is_string]
    return _vocabulary(names)


def _is_no(value: exp.Expr) -> bool:
    """Whether ``value`` is a value that says no (``0``, ``'N'``, ``false``)."""
    if isinstance(value, exp.Literal):
        return str(value.this).strip().lower() in _NO_VALUES
    return isinstance(value, exp.Boolean) and not value.this


def _leaves_out(tree: exp.Expr) -> bool:
    """Whether the query leaves rows out by a negation: NOT, <>, EXCEPT, IS NULL, or an
    equality with a value that says no."""
    if any(True for _ in tree.find_all(exp.Not, exp.NEQ, exp.Except)):
        return True
    if any(isinstance(node.expression, exp.Null) for node in tree.find_all(exp.Is)):
        return True
    return any(_is_no(eq.expression) for eq in tree.find_all(exp.EQ))


# prefixes that negate the rest of a word ("unpaid", "inactive", "disabled", "deactivated",
# "nonmember"), each with the prefixes of its opposite that a stored flag may be named by
# ("disabled" for ``enabled = 0``)
_NEGATING_PREFIXES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("non", ("",)),
    ("dis", ("", "en")),
    ("un", ("",)),
    ("in", ("",)),
    ("im", ("",)),
    ("de", ("",)),
)
_NEGATED_REST = 4  # the shortest rest of a word its prefix negates ("unpaid": "paid")


def _under_not(node: exp.Expr) -> bool:
    """Whether ``node`` stands under a NOT of its own (``NOT (active = 0)``, ``shipped IS NOT
    NULL``): a no under a NOT says yes."""
    parent = node.parent
    while isinstance(parent, exp.Paren):
        parent = parent.parent
    return isinstance(parent, exp.Not)


def _said_no(tree: exp.Expr) -> Vocabulary:
    """The :data:`Vocabulary` of what the query says no to: a column it
    compares with a value that says no, a column and a string it tells apart with ``<>``, a
    column under a NOT of its own, a column it asks to be NULL (none of them under a NOT)."""
    names: list[str] = []
    for eq in tree.find_all(exp.EQ):
        if _under_not(eq):
            continue
        sides = (eq.this, eq.expression)
        for side, other in (sides, sides[::-1]):
            if isinstance(side, exp.Column) and _is_no(other):
                names.append(side.name)
    for neq in tree.find_all(exp.NEQ):
        if _under_not(neq):
            continue
        for side in (neq.this, neq.expression):
            if isinstance(side, exp.Column):
                names.append(side.name)
            elif isinstance(side, exp.Literal) and side.is_string:
                names.append(side.this)
    for column in tree.find_all(exp.Column):
        if _under_not(column):
            names.append(column.name)
    for null in tree.find_all(exp.Is):
        if (
            isinstance(null.this, exp.Column)
            and isinstance(null.expression, exp.Null)
            and not _under_not(null)
        ):
            names.append(null.this.name)
    return _vocabulary(names)


def _negation_read(word: str, said_no: Vocabulary) -> bool:
    """Whether ``word`` is a word its prefix negates ("unpublished") whose rest, or the rest
    with its opposite's prefix ("enabled" for "disabled"), stands for something the query
    says no to (:func:`_said_no`)."""
    words, named, joined = said_no
    if not words:
        return False
    for prefix, opposites in _NEGATING_PREFIXES:
        rest = word[len(prefix) :]
        if not word.startswith(prefix) or len(rest) < _NEGATED_REST:
            continue
        if any(_stands_for(o + rest, words, named, joined) for o in opposites):
            return True
    return False


def _compares(tree: exp.Expr) -> bool:
    """Whether the query compares with <, <=, >, >= or BETWEEN."""
    return any(True for _ in tree.find_all(exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Between))


def _totals(tree: exp.Expr) -> bool:
    """Whether the query adds rows up: an aggregate or a GROUP BY."""
    return any(True for _ in tree.find_all(exp.AggFunc, exp.Group))


def _month_written(month: int, sql: str) -> bool:
    """Whether the query writes the ``month``'s number: in a date ('2024-12-01'), as a
    month's two digits ('12', '03') or as a number."""
    two = f"{month:02d}"
    return re.search(rf"-{two}(?!\d)|'{two}'|(?<![\d.-]){month}(?![\d.])", sql) is not None


def _stands_for(word: str, words: set[str], named: set[str], joined: set[str]) -> bool:
    """Whether one of the query's ``words`` (their :func:`_forms`: ``named``; or its
    ``joined`` names) stands for the question's ``word``."""
    forms = _forms(word)
    if forms & named:
        return True
    for name in named:
        if len(name) >= _PREFIX and any(
            f.startswith(name) or (len(f) >= _PREFIX and name.startswith(f)) for f in forms
        ):
            return True
    if any(len(f) >= _INSIDE and f in name for f in forms for name in joined):
        return True
    return any(len(w) >= 3 and w.isalpha() and abbreviates(w, word) for w in words)


def _looked_for(word: str) -> bool:
    """Whether ``word`` of a question names a table, a column, a value or a condition."""
    return not (
        len(word) < 3
        or word.isdigit()
        or word in NUMBER_WORDS
        or word in ORDINAL_WORDS
        or RANKING_WORD.fullmatch(word) is not None
        or listed(word, STOP_WORDS)
        or listed(word, ASKING_WORDS)
        or listed(word, QUIET_WORDS)
    )


def _names_a_leave(said: list[str], i: int) -> bool:
    """Whether ``said[i]`` is "leave" as a thing ("on leave", "annual leave", "leave
    applications"): as a verb that leaves rows out it comes with its particle within a few
    words ("leave out the guests", "leave the refunds out")."""
    return said[i] == "leave" and not any(w in _PARTICLES for w in said[i + 1 : i + 1 + _PARTICLE_REACH])


def unread_words(question: str, sql: str, tree: exp.Expr) -> list[str]:
    """The words of ``question`` that nothing in the query (``sql``, parsed as ``tree``)
    stands for, in the question's order, each once."""
    words, named, joined = _names(tree)
    # what the query does (negates, compares, adds up, says no to), each worked out once,
    # when the first word that needs it comes
    done: dict[Callable[[exp.Expr], object], object] = {}

    def does(test: Callable[[exp.Expr], _T]) -> _T:
        if test not in done:
            done[test] = test(tree)
        return cast(_T, done[test])

    unread: list[str] = []
    said = tokens(question)
    for i, word in enumerate(said):
        if not _looked_for(word):
            continue
        if listed(word, LEAVING_OUT_WORDS) and not _names_a_leave(said, i):
            read = does(_leaves_out)
        elif listed(word, COMPARING_WORDS):
            read = does(_compares)
        elif listed(word, TOTALLING_WORDS):
            read = does(_totals)
        elif word in MONTH_NAMES:
            read = _month_written(MONTH_NAMES.index(word) + 1, sql)
        else:
            read = _stands_for(word, words, named, joined) or _negation_read(word, does(_said_no))
        if not read and word not in unread:
            unread.append(word)
    return unread


def _quoted(words: list[str]) -> str:
    shown = [f"'{w}'" for w in words]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def _words_not_read(answer: Answer) -> Finding:
    tree = answer.tree
    if tree is None:
        return None
    unread = unread_words(answer.question, answer.sql, tree)
    if not unread:
        return None
    return f"nothing in the query stands for {_quoted(unread)} of the question"


WORDS_NOT_READ = Check(
    name="words_not_read",
    summary="a word of the question that nothing in the query stands for (a condition it may leave out)",
    find=_words_not_read,
    advice="Make sure the query keeps every condition the question states.",
    corrected=False,
    ceiling="medium",
)
