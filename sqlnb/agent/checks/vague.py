"""Checks that a question has several readings and the query had to choose one: the
question judges without saying by what ("the best products": by units, by revenue?) or
grades without saying where the grade starts ("cheap products": under what price?).

Their findings are questions for the user (``Check.asks``): the turn asks back, and the
query is shown as a guess the user may take.  Both read the question's words against the
query's tree and the catalog, never the data, and ask at most once per question (a reply to
a clarification is answered)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from sqlglot import exp

from sqlnb.adapters import Catalog, Table
from sqlnb.agent.checks.check import Answer, Check, Finding
from sqlnb.agent.lexicon import (
    GRADING_WORDS,
    JUDGING_PHRASE,
    JUDGING_WORDS,
    MEASURE_NAMED,
    MEASURING_WORDS,
    NUMBER_WORDS,
    SETTLED_BY,
    STOP_WORDS,
    listed,
    stem,
    tokens,
)
from sqlnb.agent.sqltree import table_refs

_COMPOUND = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_SUFFIX = re.compile(r"(?:ities|ity|ings|ing|ers|er|est|ed|ly|es|s)$")
_NUMERIC = re.compile(r"int|real|num|dec|float|double|money|serial", re.I)
_DIGITS = re.compile(r"\d+")
# a column that names or links rows rather than measuring them
_KEYISH = re.compile(r"(?:^|_)(?:id|key|code|no|number|zip|phone)$|year$|^id", re.I)
# how many of the data's other measures a question lists
OTHER_MEASURES = 4


def _base(word: str) -> str:
    """A word without its common endings (rating, rated: rat; popularity: popular)."""
    w = word.lower()
    stripped = _SUFFIX.sub("", w)
    return stripped if len(stripped) >= 3 else w


def _related(a: str, b: str) -> bool:
    """Whether two words name the same thing: the same base, or one the start of the other
    (five letters or more)."""
    ba, bb = _base(a), _base(b)
    if ba == bb:
        return True
    short, long_ = sorted((ba, bb), key=len)
    return len(short) >= 5 and long_.startswith(short)


def judging_word(question: str) -> str | None:
    """The word (or phrase) by which ``question`` judges without a measure: "best", "most
    important", "how did we do"; None when it names its measure ("best selling", "top
    products by revenue") or judges nothing."""
    if MEASURE_NAMED.search(question):
        return None
    # a compound's first parts describe its last ("top-level", "well-known", "best-selling"):
    # only a word that stands alone or ends a compound judges ("top-performing")
    words = [c.split("-")[-1] for c in _COMPOUND.findall(question.lower())]
    for i, w in enumerate(words):
        if w not in JUDGING_WORDS:
            continue
        after = words[i + 1] if i + 1 < len(words) else ""
        before = words[i - 1] if i else ""
        if listed(after, MEASURING_WORDS) or (w == "well" and before == "as"):
            continue
        return str(w)
    found = JUDGING_PHRASE.search(question)
    return found.group(0) if found else None


def _selects(tree: exp.Expr) -> Iterator[exp.Select]:
    yield from tree.find_all(exp.Select)


def _measure_words(node: exp.Expr, select: exp.Select, catalog: Catalog | None) -> tuple[list[str], str]:
    """The words that name what ``node`` (a ranking or compared expression of ``select``)
    measures: its columns' names, the alias it stands for, and for a count of rows the
    tables counted (those the query does not group by); and how to call it."""
    aliases = {e.alias.lower(): e.this for e in select.expressions if isinstance(e, exp.Alias)}
    words: list[str] = []
    label = node.sql()
    if isinstance(node, exp.Column) and not node.table and node.name.lower() in aliases:
        words += tokens(node.name)
        node = aliases[node.name.lower()]
    elif isinstance(node, exp.Literal) and node.is_int:  # ORDER BY 2: the second column
        position = int(node.this) - 1
        if 0 <= position < len(select.expressions):
            chosen = select.expressions[position]
            words += tokens(chosen.alias) if isinstance(chosen, exp.Alias) else []
            node = chosen.this if isinstance(chosen, exp.Alias) else chosen
            label = chosen.alias or node.sql()
    for col in node.find_all(exp.Column):
        words += tokens(col.name)
    if node.find(exp.Count) is not None and catalog is not None:
        grouped = {
            (col.table or "").lower()
            for g in (select.args.get("group") or exp.Group()).expressions
            for col in g.find_all(exp.Column)
        }
        for alias, name, table in table_refs(select, catalog):
            if alias.lower() not in grouped and name.lower() not in grouped:
                words += tokens(table.name)
    return [w for w in words if not listed(w, STOP_WORDS) and w not in ("id", "ids")], label


def _deciders(tree: exp.Expr) -> list[tuple[exp.Expr, exp.Select]]:
    """What decides the query's rows: the expressions it orders by, and those it compares
    (``>``, ``<``, ``BETWEEN``) in its filters, each with its SELECT."""
    out: list[tuple[exp.Expr, exp.Select]] = []
    for select in _selects(tree):
        order = select.args.get("order")
        for o in order.expressions if order is not None else []:
            out.append((o.this if isinstance(o, exp.Ordered) else o, select))
        for part in ("where", "having"):
            cond = select.args.get(part)
            if cond is None:
                continue
            for cmp in cond.find_all(exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Between):
                if cmp.find_ancestor(exp.Select) is select:
                    out.append((cmp.this, select))
    return out


def _numeric_columns(tables: list[Table]) -> list[str]:
    """The columns of ``tables`` that measure (numeric, not a key or a code)."""
    out: list[str] = []
    for t in tables:
        keys = {k.lower() for k in t.primary_key} | {c.lower() for fk in t.foreign_keys for c in fk.columns}
        for c in t.columns:
            measures = _NUMERIC.search(c.type or "") and not _KEYISH.search(c.name)
            if measures and c.name.lower() not in keys and c.name not in out:
                out.append(c.name)
    return out


def _names_column(question: str, word: str, tables: list[Table]) -> bool:
    """Whether the judging ``word`` is the name of a column the question asks for: a column
    of a table read called ``word`` where the word before it names the table ("the project
    key" beside ``project.key``), or called that word and the word ("project_key")."""
    words = tokens(question)
    for i, w in enumerate(words):
        if w != word.lower() or not i:
            continue
        before = stem(words[i - 1])
        for table in tables:
            for column in table.columns:
                parts = [stem(p) for p in tokens(column.name)]
                if parts == [before, stem(w)] or (
                    parts == [stem(w)] and before in {stem(p) for p in tokens(table.name)}
                ):
                    return True
    return False


def _neighbours(question: str, word: str) -> set[str]:
    """The words next to ``word`` (a single word) in ``question``."""
    words = tokens(question)
    return {
        words[j]
        for i, w in enumerate(words)
        if w == word.lower()
        for j in (i - 1, i + 1)
        if 0 <= j < len(words)
    }


def criterion_not_named(a: Answer) -> Finding:
    """The question judges without a measure ("the best products", "our most important
    customers", "how did we do") and what the query ranks or filters by is named nowhere in
    it: the query chose the measure.  A judging word with a measure of its own ("most
    expensive": a price) or after which the measure follows ("best selling", "by revenue") is
    not asked about, nor one the query compares with as a stored value (``score = 'bad'``) or
    that qualifies such a value ("a strong yes" beside ``= 'yes'`` or ``= 'strong_yes'``),
    nor one that names a column the question asks for ("the project key": ``project.key``)."""
    word = judging_word(a.question)
    if word is None or a.tree is None:
        return None
    # the word is a value the data stores (Zendesk's score 'bad'), filtered on, or qualifies
    # one ("a strong yes" beside 'yes' or 'strong_yes'): a category, not a judgement
    stored = {
        w
        for lit in a.tree.find_all(exp.Literal)
        if lit.is_string
        for w in re.findall(r"[a-z]+", lit.this.lower())
    }
    if stored & {word.lower(), *_neighbours(a.question, word)}:
        return None
    if a.catalog is not None and _names_column(
        a.question, word, [t for _, _, t in table_refs(a.tree, a.catalog)]
    ):
        return None
    asked = [w for w in tokens(a.question) if not listed(w, STOP_WORDS)]
    settled = SETTLED_BY.get(word.lower(), frozenset())
    used: list[str] = []
    for node, select in _deciders(a.tree):
        words, text = _measure_words(node, select, a.catalog)
        if any(_related(m, q) for m in words for q in [*asked, *settled]):
            return None
        if words and text not in used:
            used.append(text)
    tables = [t for _, _, t in table_refs(a.tree, a.catalog)] if a.catalog is not None else []
    others = [c for c in _numeric_columns(tables) if not any(c in u for u in used)][:OTHER_MEASURES]
    guess = f"this guess goes by {', '.join(used[:2])}" if used else "this guess ranks by nothing"
    also = f"; the data also has {', '.join(others)}" if others else ""
    return f'"{word}" by which measure? {guess[0].upper()}{guess[1:]}{also}.'


def _grading_word(question: str) -> str | None:
    """The word by which ``question`` grades without a cutoff ("cheap", "recent", "many"),
    not a "how" question's ("how many", "how long")."""
    words = tokens(question)
    for i, w in enumerate(words):
        if listed(w, GRADING_WORDS) and not (i and words[i - 1] == "how"):
            return w
    return None


def cutoff_not_named(a: Answer) -> Finding:
    """The question grades without saying where the grade starts ("cheap products", "recent
    orders", "customers who order often") and the query compares with a number or a date
    the question does not give: the query made the cutoff up.  0 and 1 are not cutoffs."""
    word = _grading_word(a.question)
    if word is None or a.tree is None:
        return None
    given = {d.lstrip("0") for d in _DIGITS.findall(a.question)}
    given |= {str(NUMBER_WORDS[w]) for w in tokens(a.question) if w in NUMBER_WORDS}
    for cmp in a.tree.find_all(exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Between):
        bounds = (
            [cmp.args.get("low"), cmp.args.get("high")] if isinstance(cmp, exp.Between) else [cmp.expression]
        )
        for bound in bounds:
            if not isinstance(bound, exp.Literal):
                continue
            digits = [d.lstrip("0") for d in _DIGITS.findall(bound.this)]
            if not digits or all(d in ("", "1") for d in digits):
                continue
            if any(d in given for d in digits if len(d) >= 2) or all(d in given for d in digits):
                continue
            return f'Where does "{word}" start? This guess takes {cmp.sql()}; say the cutoff you mean.'
    return None


CRITERION_NOT_NAMED = Check(
    name="criterion_not_named",
    summary='a question that judges without a measure ("the best products") answered by a measure it does not name',
    find=criterion_not_named,
    asks=True,
)
CUTOFF_NOT_NAMED = Check(
    name="cutoff_not_named",
    summary='a question that grades without a cutoff ("cheap products") answered with a cutoff it does not give',
    find=cutoff_not_named,
    asks=True,
)
