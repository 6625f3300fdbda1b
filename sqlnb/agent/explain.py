"""An answer explained in two to four plain sentences, grounded in what it rests on.

After a turn has an answer, one model call writes what was computed, what the SQL assumes
(filters applied or not, the grouping key, the time window, NULL handling, the row limit)
and the headline values.  The model is shown the question, the SQL, the facts of the SQL
read off its tree (:func:`sql_facts`), and the result: its columns, types and row count,
and its first rows unless the connection is private (``share_data`` off).

Every number and every name of the text must appear in what the model was shown: the
question, the SQL or the result (:func:`ungrounded`, in code, not the model's word).  A
reply with a sentence that is not grounded is written again once, told what was not found;
the sentences still not grounded are then dropped, and with none left there is no
explanation.  A failing model call (a stopped turn, a model that is down) leaves the answer
without one: an explanation never fails an answer.
"""

from __future__ import annotations

import calendar
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from sqlglot import exp

from sqlnb.adapters import Result
from sqlnb.agent.lexicon import NUMBER_WORDS, STOP_WORDS
from sqlnb.agent.nodes import ChatClient, preview_rows
from sqlnb.agent.prompts import template
from sqlnb.agent.sqltree import and_terms, parse, readable
from sqlnb.sql.dialects import sqlglot_dialect

# rows of the result the model is shown (and the text may quote)
EXPLAIN_ROWS = 10
# sentences kept at most
MAX_SENTENCES = 4

__all__ = [
    "EXPLAIN_ROWS",
    "STANDALONE_LABEL",
    "Explanation",
    "Sources",
    "echoes",
    "explain",
    "sentences",
    "sql_facts",
    "standalone_line",
    "ungrounded",
]


@dataclass
class Explanation:
    """An answer's explanation: its ``text`` (grounded sentences only), whether the first
    reply was grounded as written (``first_try``), the sentences dropped, the model calls
    (1 or 2) and their seconds and usage."""

    text: str
    first_try: bool
    calls: int
    seconds: float
    dropped: list[str] = field(default_factory=list)
    # what the first reply named that was not found: numbers, names, quoted values
    not_found: list[str] = field(default_factory=list)
    first_reply: list[str] = field(default_factory=list)  # its sentences, as written
    usage: dict[str, float] = field(default_factory=dict)
    # a follow-up's question as the query answers it, on its own ("answered as"), grounded in
    # the questions of the conversation and the SQL; None: not a follow-up, or not grounded
    standalone: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "first_try": self.first_try,
            "calls": self.calls,
            "seconds": round(self.seconds, 3),
            "dropped": list(self.dropped),
            "not_found": list(self.not_found),
            **({"standalone": self.standalone} if self.standalone else {}),
        }


# ---- what the SQL does ---------------------------------------------------------------
def _outer_select(tree: exp.Expr) -> exp.Select | None:
    if isinstance(tree, exp.Select):
        return tree
    if isinstance(tree, exp.SetOperation):
        return None
    found = tree.find(exp.Select)
    return found if isinstance(found, exp.Select) else None


def sql_facts(sql: str, dialect: str) -> list[str]:
    """What the outermost SELECT of ``sql`` does, one short line each, in words a person
    reads, with the SQL's own text for its conditions: the joins and the rows they drop,
    the filters (or that there is none), the grouping, the aggregates and how they count
    NULLs, DISTINCT, the order and the row limit.  Empty when it does not parse."""
    tree = parse(sql, dialect)
    if tree is None:
        return []
    d = sqlglot_dialect(dialect)
    if isinstance(tree, exp.SetOperation):
        kind = {"Union": "UNION", "Intersect": "INTERSECT", "Except": "EXCEPT"}.get(type(tree).__name__, "")
        return [
            f"combines two queries with {kind}{'' if tree.args.get('distinct') is False else ' (duplicates removed)'}"
        ]
    select = _outer_select(tree)
    if select is None:
        return []

    select = select.copy()
    for col in select.find_all(exp.Column):  # the columns by their own names: shorter to read
        if col.args.get("table") is not None:
            col.set("table", None)

    def text(node: exp.Expr) -> str:
        return readable(node.sql(dialect=d))

    def name(node: exp.Expr) -> str:
        return node.name if isinstance(node, exp.Table) else text(node)

    facts: list[str] = []
    source = select.args.get("from_") or select.args.get("from")
    first = name(source.this) if isinstance(source, exp.From) else ""
    for join in select.args.get("joins") or []:
        side = (join.side or "").upper()
        target = name(join.this)
        if side == "LEFT":
            facts.append(f"keeps the {first or 'first table'} rows without a matching {target} row")
        elif side in ("RIGHT", "FULL"):
            facts.append(f"keeps the {target} rows without a match ({side} JOIN)")
        elif join.args.get("kind") == "CROSS":
            facts.append(f"pairs every row with every row of {target}")
        else:
            facts.append(f"leaves out rows without a matching {target} row")
    where = select.args.get("where")
    terms = and_terms(where.this) if where is not None else []
    if terms:
        facts += [f"only rows where {text(t)}" for t in terms]
    elif first:
        facts.append(f"no filter: all rows of {first} count")
    group = select.args.get("group")
    if group is not None and group.expressions:
        facts.append(f"one result row per {', '.join(text(g) for g in group.expressions)}")
    having = select.args.get("having")
    if having is not None:
        facts += [f"only groups where {text(t)}" for t in and_terms(having.this)]
    nulls: list[str] = []
    for agg in select.find_all(exp.AggFunc):
        if agg.find_ancestor(exp.Select) is not select:
            continue
        arg = agg.this
        if isinstance(agg, exp.Count) and (arg is None or isinstance(arg, exp.Star)):
            continue  # every row counts
        if isinstance(agg, (exp.Count, exp.Avg, exp.Sum, exp.Min, exp.Max)) and text(agg) not in nulls:
            nulls.append(text(agg))
    if nulls:
        facts.append(f"{', '.join(nulls)} {'ignores' if len(nulls) == 1 else 'ignore'} missing (NULL) values")
    if select.args.get("distinct") is not None:
        facts.append("duplicate rows removed (DISTINCT)")
    order = select.args.get("order")
    if order is not None and order.expressions:
        keys = [
            f"{text(o.this)}, {'largest' if o.args.get('desc') else 'smallest'} first"
            if isinstance(o, exp.Ordered)
            else text(o)
            for o in order.expressions
        ]
        facts.append(f"sorted by {'; then '.join(keys)}")
    limit = select.args.get("limit")
    if limit is not None:
        n = limit.expression if isinstance(limit, exp.Limit) else None
        facts.append(f"only the first {text(n) if n is not None else text(limit)} rows are kept")
    return facts


# ---- grounding -------------------------------------------------------------------------
_NUMBER = re.compile(
    r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?:\s*(%|percent\b)|\s*(thousand|million|billion|bn|k|m)\b)?",
    re.I,
)
_SCALE = {"thousand": 1e3, "k": 1e3, "million": 1e6, "m": 1e6, "billion": 1e9, "bn": 1e9}
_QUOTED = re.compile(r"(?<!\w)(['\"`“‘])([^'\"`“”‘’\n]{1,80})(['\"`”’])(?!\w)")
_CAPITAL = re.compile(r"(?<![\w'’-])([A-Z][\w&'’-]*)")
_WORD = re.compile(r"[^\W_]+")
# capitalized words that name no value: SQL's own words
_SQL_WORDS = frozenset(
    {
        "sql",
        "null",
        "nulls",
        "sum",
        "avg",
        "average",
        "count",
        "min",
        "max",
        "distinct",
        "group",
        "by",
        "order",
        "limit",
        "where",
        "join",
        "having",
        "and",
        "or",
        "not",
        "id",
        "ids",
        "i",
        "as",
        "in",
        "case",
        "true",
        "false",
        "asc",
        "desc",
        "select",
        "from",
        "inner",
        "left",
        "right",
        "outer",
        "on",
        "union",
        "all",
        "like",
        "between",
        "is",
    }
)
_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m} | {
    m.lower(): i for i, m in enumerate(calendar.month_abbr) if m
}
_ISO_MONTH = re.compile(r"\b\d{4}-(\d{2})\b")


@dataclass
class Sources:
    """What an explanation may name: the question, the SQL, the result's columns and
    types and row count, and the rows the model was shown."""

    text: str  # all of it, lower case, for quoted values
    words: frozenset[str]
    numbers: tuple[float, ...]
    months: frozenset[int]
    # the string values the query keeps only the rows of (``=``, ``IN``) and those it leaves
    # out (``<>``, ``NOT IN``), lower case: a sentence must not say the opposite
    kept: frozenset[str] = frozenset()
    left_out: frozenset[str] = frozenset()

    @classmethod
    def of(
        cls,
        question: str,
        sql: str,
        columns: Sequence[str],
        types: Sequence[str],
        rows: Sequence[Sequence[Any]],
        row_count: int | None,
        shown: Sequence[Sequence[Any]] = (),
        dialect: str = "",
    ) -> Sources:
        """``shown``: the rows again as the model saw them (floats rounded); ``dialect``:
        the SQL's."""
        cells = [str(v) for row in [*rows, *shown] for v in row if v is not None]
        parts = [question, sql, *columns, *types, *cells]
        text = "\n".join(parts).lower()
        numbers: list[float] = []
        for row in [*rows, *shown]:
            for v in row:
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    numbers.append(abs(float(v)))
        for part in parts:
            numbers += [_value(m) for m in _NUMBER.finditer(part)]
        words = set(_WORD.findall(text))
        numbers += [float(NUMBER_WORDS[w]) for w in words if w in NUMBER_WORDS]
        if row_count is not None:
            numbers.append(float(row_count))
        numbers += [float(len(columns)), float(len(rows))]
        months = {_MONTHS[w] for w in words if w in _MONTHS}
        months |= {int(m) for m in _ISO_MONTH.findall(text) if 1 <= int(m) <= 12}
        kept, left_out = filter_values(sql, dialect)
        return cls(
            text=text,
            words=frozenset(words),
            numbers=tuple(numbers),
            months=frozenset(months),
            kept=kept,
            left_out=left_out,
        )


def _value(m: re.Match[str]) -> float:
    whole, frac = m.group(1).replace(",", ""), m.group(2)
    return float(f"{whole}.{frac}" if frac else whole)


def _number_found(m: re.Match[str], numbers: Iterable[float]) -> bool:
    """Whether the number ``m`` of a text is one of ``numbers`` as written: rounded or cut
    to its decimals, in thousands or millions, or as a percentage of a share."""
    v = _value(m)
    unit = 10.0 ** -len(m.group(2) or "")
    scale = _SCALE.get((m.group(4) or "").lower(), 1.0)
    target, u = v * scale, unit * scale
    percent = bool(m.group(3))
    for s in numbers:
        if abs(s - target) <= 0.5 * u + 1e-9 * max(1.0, s) or 0 <= s - target < u:
            return True
        if percent and (abs(s * 100 - v) <= 0.5 * unit + 1e-9 or 0 <= s * 100 - v < unit):
            return True
    return False


def _word_found(word: str, sources: Sources) -> bool:
    w = word.lower().strip("'’.-&")
    if not w or w in _SQL_WORDS:
        return True
    if w.endswith(("'s", "’s")):
        w = w[:-2]
    if w in _MONTHS:
        return _MONTHS[w] in sources.months
    parts = _WORD.findall(w)
    return all(
        p in sources.words
        or p.rstrip("s") in sources.words
        or p + "s" in sources.words
        or (p.endswith("ies") and p[:-3] + "y" in sources.words)
        or p.isdigit()
        for p in parts
    )


def filter_values(sql: str, dialect: str = "") -> tuple[frozenset[str], frozenset[str]]:
    """The string values ``sql``'s filters keep only the rows of (``col = 'x'``, ``IN``)
    and those they leave out (``<>``, ``NOT IN``), lower case."""
    tree = parse(sql, dialect)
    kept: set[str] = set()
    left_out: set[str] = set()
    if tree is None:
        return frozenset(), frozenset()
    for node in tree.find_all(exp.EQ, exp.NEQ, exp.In):
        values = node.expressions if isinstance(node, exp.In) else [node.expression]
        strings = [v.this.lower() for v in values if isinstance(v, exp.Literal) and v.is_string]
        negated = isinstance(node, exp.NEQ) or isinstance(node.parent, exp.Not)
        (left_out if negated else kept).update(w for w in strings if w.strip())
    return frozenset(kept), frozenset(left_out)


_LEAVING = r"(?:not|non|excluding|excludes|excluded|except|without|other than|no)"


def contradicted(sentence: str, sources: Sources) -> list[str]:
    """What ``sentence`` says the query does the opposite of: a value it keeps only the rows
    of said to be left out ("excluding cancelled orders" for ``status = 'cancelled'``), a
    value it leaves out said to be the only one kept ("only cancelled orders")."""
    low = sentence.lower()
    out = []
    for value in sorted(sources.kept):
        if re.search(rf"\b{_LEAVING}[\s-]+(?:[\w']+\s+){{0,6}}'?{re.escape(value)}\b", low):
            out.append(f"'{value}' said to be left out")
    for value in sorted(sources.left_out):
        if re.search(rf"\bonly\s+(?:the\s+)?(?:\w+\s+){{0,1}}{re.escape(value)}\b", low):
            out.append(f"'{value}' said to be the only one kept")
    return out


def ungrounded(sentence: str, sources: Sources) -> list[str]:
    """The numbers, names (capitalized words but the sentence's first) and quoted values
    of ``sentence`` that ``sources`` do not hold, and what it says the query's filters do
    the opposite of (:func:`contradicted`); empty when it is grounded.  SQL code in a
    sentence counts as not grounded."""
    missing: list[str] = []
    if "```" in sentence or re.search(r"\bSELECT\b.+\bFROM\b", sentence):
        return ["SQL code"]
    for m in _NUMBER.finditer(sentence):
        if not _number_found(m, sources.numbers):
            missing.append(m.group(0).strip())
    for m in _QUOTED.finditer(sentence):
        inner = " ".join(m.group(2).lower().split()).strip(" .,;:!?")
        if inner and inner not in sources.text:
            missing.append(m.group(0))
    for m in _CAPITAL.finditer(sentence):
        before = sentence[: m.start()].rstrip(" \"'“‘(")
        if not before or before[-1] in ".:;!?—–-":
            continue  # a sentence's or a clause's first word is capitalized anyway
        if m.group(1).lower() in STOP_WORDS:
            continue  # a common word capitalized (a heading, a list) names nothing
        if not _word_found(m.group(1), sources):
            missing.append(m.group(1))
    missing += contradicted(sentence, sources)
    return list(dict.fromkeys(missing))


# ---- the instructions echoed ------------------------------------------------------------
ECHO_WORDS = 6  # a sentence that shares this many words in a row with the instructions
ECHOED = "words of the instructions"  # how such a sentence is listed among what was not found
STYLE_EXAMPLE = "The style, for another question"  # where the instructions' example begins


def _ngrams(text: str, n: int = ECHO_WORDS) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def echoes(sentence: str, instructions: str) -> bool:
    """Whether ``sentence`` repeats the instructions (six words in a row of them, the
    example of the style aside) instead of explaining: a small model sometimes says what it
    was asked to write."""
    rules = instructions.split(STYLE_EXAMPLE)[0]
    return bool(_ngrams(sentence) & _ngrams(rules))


# ---- the reply as sentences -------------------------------------------------------------
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'“‘(]?[A-Z0-9])")


def sentences(reply: str) -> list[str]:
    """The reply's prose as sentences: markdown, headings, labels and bullets taken off, the
    lines joined."""
    lines = []
    for line in reply.replace("\r", "").split("\n"):
        line = re.sub(r"^\s*(?:#+\s*|[-*•]\s+|\d+[.)]\s+)", "", line).strip()
        line = re.sub(r"^(?:explanation|answer|summary)\s*:\s*", "", line, flags=re.I)
        line = line.replace("**", "").replace("__", "")
        if line:
            lines.append(line)
    prose = " ".join(lines)
    return [s.strip() for s in _SENTENCE_END.split(prose) if s.strip()]


# ---- the prompt ---------------------------------------------------------------------------
def _cell(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, float):
        return f"{v:.2f}" if abs(v) >= 1 else f"{v:.4g}"
    text = str(v).replace("\n", " ")
    return text if len(text) <= 60 else text[:57] + "..."


def prompt(
    question: str,
    sql: str,
    dialect: str,
    columns: Sequence[str],
    types: Sequence[str],
    rows: Sequence[Sequence[Any]],
    row_count: int | None,
    earlier: Sequence[str] = (),
) -> list[BaseMessage]:
    """The explanation's prompt: the task, then the question, the SQL, its facts and the
    result (``rows`` empty: only its columns, types and row count).  ``earlier``: the
    questions asked before in the conversation, for a follow-up, whose reply then starts
    with the question on its own (:data:`STANDALONE_LABEL`)."""
    facts = sql_facts(sql, dialect)
    parts = [f"Question: {question}", f"Query:\n{sql.strip()}"]
    if earlier:
        asked = "\n".join(f"- {q}" for q in earlier)
        parts.insert(0, f"Earlier questions of this conversation:\n{asked}")
    if facts:
        parts.append("Notes on the query:\n" + "\n".join(f"- {f}" for f in facts))
    shape = ", ".join(f"{c} ({t})" if t else c for c, t in zip(columns, types, strict=False))
    count = "unknown" if row_count is None else str(row_count)
    parts.append(f"Result: {count} row{'s' if row_count != 1 else ''}; columns: {shape or '(none)'}")
    if rows:
        table = [" | ".join(columns)] + [" | ".join(_cell(v) for v in row) for row in rows]
        more = f" (the first {len(rows)})" if row_count is not None and row_count > len(rows) else ""
        parts.append(f"Rows{more}:\n" + "\n".join(table))
    elif row_count:
        parts.append("The rows are private: do not state any value of the result.")
    if earlier:
        parts.append(
            "The question is a follow-up of the earlier ones. Start your reply with one line: "
            f"'{STANDALONE_LABEL} ' and the question as the query answers it, written so that it "
            "reads on its own (with what it takes from the earlier questions). Then the explanation."
        )
    return [SystemMessage(content=template("explain").strip()), HumanMessage(content="\n\n".join(parts))]


def _shown_rows(rows: Sequence[Sequence[Any]]) -> list[list[Any]]:
    return [[float(_cell(v)) if isinstance(v, float) else v for v in row] for row in rows]


# how a follow-up's explanation gives the question on its own, as its first line
STANDALONE_LABEL = "Question on its own:"
_STANDALONE = re.compile(r"^[\s*_>#-]*question on its own[*_]*\s*:[*_]*\s*(.+?)\s*$", re.I | re.M)


def standalone_line(reply: str) -> tuple[str | None, str]:
    """The question on its own that ``reply`` starts with (:data:`STANDALONE_LABEL`), and
    the rest of the reply; (None, reply) without one."""
    m = _STANDALONE.search(reply)
    if m is None:
        return None, reply
    line = m.group(1).strip().strip("*_`\"'“”").strip()
    rest = (reply[: m.start()] + reply[m.end() :]).strip()
    return (line or None), rest


# ---- the step ---------------------------------------------------------------------------
def explain(
    client: ChatClient,
    *,
    question: str,
    sql: str,
    dialect: str,
    result: Result,
    share_data: bool = True,
    earlier: Sequence[str] = (),
) -> Explanation | None:
    """Explain the answer ``sql`` (its ``result``) to ``question``: one model call, a
    second when a sentence of the first reply is not grounded.  None when no sentence is
    grounded; a :class:`~sqlnb.errors.ModelError` when a call fails.

    ``earlier``: the questions asked before in the conversation (a follow-up): the reply
    also gives the question on its own (:attr:`Explanation.standalone`), kept when its
    numbers and names are in those questions, this one or the SQL."""
    columns = list(result.column_names)
    types = [c.type for c in result.columns]
    row_count = result.arrow.num_rows if result.arrow is not None else None
    rows = preview_rows(result, EXPLAIN_ROWS) if share_data else []
    earlier = [q for q in earlier if q and q.strip()]
    messages = prompt(question, sql, dialect, columns, types, rows, row_count, earlier)
    # the rows as the model saw them (floats to two decimals), and as they are
    sources = Sources.of(
        question, sql, columns, types, rows, row_count, shown=_shown_rows(rows), dialect=dialect
    )
    # what a question on its own may name: the conversation's questions and the SQL
    asked = Sources.of("\n".join([*earlier, question]), sql, [], [], [], None, dialect=dialect)
    start = time.perf_counter()
    usage: dict[str, float] = {}
    standalone: list[str] = []

    def call(msgs: list[BaseMessage]) -> list[str]:
        text, used = client.invoke(msgs, purpose="explain")
        for k, v in (used or {}).items():
            if isinstance(v, (int, float)):
                usage[k] = usage.get(k, 0) + v
        if text and earlier:
            line, text = standalone_line(text)
            if line and not standalone and not ungrounded(line, asked) and line.lower() != question.lower():
                standalone.append(line)
        return sentences(text)[:MAX_SENTENCES] if text else []

    instructions = str(messages[0].content)

    def not_grounded(sentence: str) -> list[str]:
        echo = [ECHOED] if echoes(sentence, instructions) else []
        return ungrounded(sentence, sources) + echo

    first = call(messages)
    missing = {s: not_grounded(s) for s in first}
    not_found = list(dict.fromkeys(w for ws in missing.values() for w in ws))
    kept, dropped, calls = first, [], 1
    if not first or not_found:
        calls = 2
        values = [w for w in not_found if w != ECHOED]
        feedback = (
            (
                f"These are not in the question, the query or the result: {', '.join(values)}. "
                if values
                else ""
            )
            + ("Do not repeat the instructions: explain this result. " if ECHOED in not_found else "")
            + ("There was no explanation. " if not first else "")
            + "Write the explanation again: 2 to 4 plain sentences, only numbers, names and values shown above."
        )
        again = call([*messages, AIMessage(content=" ".join(first)), HumanMessage(content=feedback)])
        kept = [s for s in again if not not_grounded(s)]
        dropped = [s for s in again if s not in kept]
        if not kept:  # the second reply is no better: the first's grounded sentences
            kept = [s for s in first if not missing[s]]
            dropped = [s for s in first if missing[s]]
    seconds = time.perf_counter() - start
    usage["seconds"] = seconds
    if not kept:
        return None
    return Explanation(
        text=" ".join(kept),
        first_try=bool(first) and not not_found,
        calls=calls,
        seconds=seconds,
        dropped=dropped,
        not_found=not_found,
        first_reply=first,
        usage=usage,
        standalone=standalone[0] if standalone else None,
    )
