"""The reply protocol every model speaks (the scripted test model included).

- A fenced ```sql block proposes that SQL; when there are several, the last one wins.
  A reply that is nothing but a bare ``SELECT``/``WITH`` statement proposes it too.
- A line reading ``FINAL`` (any case, markdown emphasis ignored) declares the last
  successful SQL final, the one the model has seen the result of; a FINAL reply that
  carries new SQL is no finalisation: the SQL runs and the model is shown its result.
- A reply beginning ``CLARIFY:`` asks the user; the following lines are the questions.
  It is a clarification only when it asks something (:func:`real_questions`): one that
  carries SQL, or only echoes the user's question or the prompt's own text, is not.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
# a query starts with SELECT, or WITH and a CTE definition ("With the result shown, ..."
# is prose, not SQL)
_BARE_START = re.compile(
    r"""(?is)^\s*(?:select\b|with\s+(?:recursive\s+)?(?:"[^"]+"|`[^`]+`|\w+)\s*"""
    r"""(?:\([^)]*\)\s*)?as\s*(?:not\s+)?(?:materialized\s*)?\()"""
)
_FINAL_LINE = re.compile(r"^[\s>*_`#-]*final[\s*_`.!:]*$", re.I)
_CLARIFY = re.compile(r"^[\s*_`#]*clarify[\s*_`]*:[*_`]*", re.I)  # also **CLARIFY:**
_SQL_LANGS = {
    "sql",
    "postgresql",
    "postgres",
    "mysql",
    "sqlite",
    "duckdb",
    "snowflake",
    "redshift",
    "tsql",
    "plsql",
    "psql",
}


@dataclass
class Reply:
    """What a model reply asks for."""

    text: str
    sql: str | None = None
    final: bool = False
    clarify: list[str] | None = None
    questions: list[str] = field(default_factory=list)

    @property
    def kind(self) -> str:
        if self.clarify is not None:
            return "clarify"
        if self.sql:
            return "final_sql" if self.final else "sql"
        return "final" if self.final else "none"


def parse_reply(text: str) -> Reply:
    text = text or ""
    stripped = text.strip()
    if _CLARIFY.match(stripped):
        body = _CLARIFY.sub("", stripped, count=1)
        questions = [_strip_bullet(line) for line in body.splitlines()]
        questions = [q for q in questions if q]
        return Reply(text=text, clarify=questions)
    sql = extract_sql(text)
    final = any(_FINAL_LINE.match(line) for line in _outside_fences(text).splitlines())
    return Reply(text=text, sql=sql, final=final)


def extract_sql(text: str) -> str | None:
    """The proposed SQL of a reply: the last fenced SQL block, else the whole reply when it
    is a bare SELECT/WITH statement (a trailing FINAL line aside)."""
    blocks = []
    for m in _FENCE.finditer(text):
        lang, body = m.group(1).lower(), m.group(2).strip()
        if not body:
            continue
        # an untagged fence counts when it holds a query (small models often omit "sql")
        if lang in _SQL_LANGS or (not lang and _BARE_START.match(body)):
            blocks.append(body)
    if blocks:
        return _clean(blocks[-1])
    lines = [line for line in text.strip().splitlines() if not _FINAL_LINE.match(line)]
    candidate = "\n".join(lines).strip()
    if candidate and "```" not in candidate and _BARE_START.match(candidate):
        return _clean(candidate)
    return None


# an attempt as the fresh prompt lists one (sqlnb.agent.prompts): "Attempt N:", then the
# query as indented lines
_LISTED = re.compile(r"^Attempt \d+:[ \t]*\n((?:(?: {4}|\t)[^\n]*(?:\n|$))+)", re.M)


def correction_sql(text: str) -> str | None:
    """The query of a reply to a request for a correction (the answer checks' findings,
    :func:`sqlnb.agent.prompts.correction_request`): as :func:`extract_sql` finds one, also
    after a ``CLARIFY:`` (no question can be asked then), else the query of the last attempt
    the reply lists in the prompt's own form ("Attempt 2:" and the query indented), as a
    small model shown its attempts that way writes its next one."""
    body = _CLARIFY.sub("", (text or "").strip(), count=1)
    sql = extract_sql(body)
    if sql:
        return sql
    listed = _LISTED.findall(body)
    if listed:
        query = textwrap.dedent(listed[-1]).strip()
        if _BARE_START.match(query):
            return _clean(query)
    return None


def _clean(sql: str) -> str:
    sql = sql.strip()
    while sql.endswith(";"):
        sql = sql[:-1].rstrip()
    return sql


def _outside_fences(text: str) -> str:
    return _FENCE.sub("\n", text)


def _strip_bullet(line: str) -> str:
    return re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", line).strip()


# the prompt's own feedback lines (prompts.fresh_prompt, format_attempt, chat_history): a
# small model sometimes copies them after CLARIFY:
_FEEDBACK_LINE = re.compile(
    r"^(?:attempt \d+\b|the query (?:ran|failed)\b|columns:|first \d+ rows?:|hint:|question:"
    r"|no rows matched|result of your query|your attempts so far|earlier in this conversation"
    r"|answered with:|you asked:|the last query failed|\d+ candidate quer)",
    re.I,
)


def _norm(text: str) -> str:
    """Lower case, markdown emphasis and bullets gone, whitespace collapsed, no end punctuation."""
    text = re.sub(r"[*_`>#]+", " ", text.lower())
    return re.sub(r"\s+", " ", text).strip(" .:;!?-\t")


def real_questions(reply: Reply, question: str, prompt: str) -> tuple[list[str], str | None]:
    """The questions of a CLARIFY reply that ask the user something, and, when none does,
    why it is no clarification: it carries SQL, or its lines only echo the user's
    ``question`` or the text of the ``prompt`` the model was shown (its instructions,
    "Attempt 2:", "The query ran: 0 rows.", ...), or it has no question at all."""
    lines = reply.clarify or []
    if extract_sql(reply.text) or any(_BARE_START.match(q) for q in lines):
        return [], "it carries SQL: a query goes in a ```sql block, without CLARIFY"
    asked = _norm(question)
    shown = _norm(prompt)
    shown_lines = {_norm(line) for line in prompt.splitlines()}
    kept, echoes = [], []
    for q in lines:
        n = _norm(q)
        if not n:
            continue
        n_plain = n.removeprefix("question").strip(" :")
        if n_plain == asked or n == asked:
            echoes.append("the question")
        elif _FEEDBACK_LINE.match(n) or n in shown_lines or (len(n) >= 12 and n in shown):
            echoes.append("the prompt")
        else:
            kept.append(q)
    if kept:
        return kept, None
    if not echoes:
        return [], "it asks nothing"
    if "the question" in echoes:
        return [], "it repeats the user's question"
    return [], "it repeats the text of the prompt"
