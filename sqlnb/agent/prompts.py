"""Prompts: per-dialect system prompt templates (files under ``prompts/``) and what the
model sees on each generate call, built from the state.

Two renderings of the same state:
- ``fresh`` (default): every call is one new user message that restates the question and
  lists this turn's earlier attempts with their results or errors.  Measured on Spider
  with a small local model, a long chat makes it repeat failing SQL; a fresh prompt that
  shows each attempt and its error next to the question does not.
- ``chat``: the message history as it is (system, question, replies, results).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from string import Template

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from sqlnb.agent.checks import CHECK_NAMES, DOUBTING_CHECKS, check_named
from sqlnb.agent.state import AgentState, Attempt, Example
from sqlnb.sql.dialects import sqlglot_dialect

DIALECT_NAMES = {
    "postgres": "PostgreSQL",
    "mysql": "MySQL",
    "redshift": "Amazon Redshift",
    "snowflake": "Snowflake",
    "sqlite": "SQLite",
    "duckdb": "DuckDB",
}
RENDERINGS = ("fresh", "chat")


@cache
def template(name: str) -> str:
    return resources.files("sqlnb.agent").joinpath("prompts").joinpath(f"{name}.md").read_text("utf-8")


def dialect_notes(dialect: str) -> str:
    d = sqlglot_dialect(dialect)
    try:
        return template(d).strip()
    except FileNotFoundError:
        return "- Write standard SQL."


def system_prompt(dialect: str, schema: str, *, max_iterations: int = 5, failure_cutoff: int = 3) -> str:
    d = sqlglot_dialect(dialect)
    return (
        Template(template("system"))
        .safe_substitute(
            dialect_name=DIALECT_NAMES.get(d, d or "SQL"),
            dialect_notes=dialect_notes(d),
            schema=schema.strip() or "(no tables)",
            max_iterations=max_iterations,
            failure_cutoff=failure_cutoff,
        )
        .strip()
    )


def format_attempt(a: Attempt, *, with_choice: bool = False) -> str:
    """An attempt's outcome as the model is shown it (also the tool-result message).

    ``with_choice``: when the attempt was chosen among several candidates, say so and show
    the query that ran (the tool-result message: the model's reply may hold another)."""
    out = _outcome(a)
    cands = a.get("candidates") or []
    if not with_choice or len(cands) < 2:
        return out
    ran = sum(1 for c in cands if c.get("ok"))
    agree = max((c.get("votes") or 0) for c in cands)
    agreed = f"; {agree} of them gave this result" if agree > 1 else ""
    head = (
        f"{len(cands)} candidate queries ran, {ran} without error{agreed}. This one was "
        f"kept:\n```sql\n{a.get('sql')}\n```"
    )
    return f"{head}\n{out}"


def _outcome(a: Attempt) -> str:
    if a.get("ok"):
        cols = a.get("columns") or []
        n = a.get("row_count")
        more = " (more rows were not fetched)" if a.get("truncated") else ""
        lines = [f"The query ran: {n} row{'s' if n != 1 else ''}{more}."]
        if cols:
            lines.append("Columns: " + ", ".join(f"{c} ({t})" if t else c for c, t in cols))
        preview = a.get("preview") or []
        if preview:
            lines.append(f"First {len(preview)} row{'s' if len(preview) != 1 else ''}:")
            lines.extend(" | ".join(_cell(v) for v in row) for row in preview)
        elif n and a.get("data_shared") is False:
            lines.append("(rows are not shown: data sharing is off for this connection)")
        if n == 0:
            lines.append(
                "No rows matched. An empty result rarely answers a question: check the "
                "filters (values, their case, numbers stored as text) and the joins."
            )
        if a.get("hint"):
            lines.append(f"Hint: {a['hint']}")
        return "\n".join(lines)
    kind = a.get("error_kind") or "error"
    lines = [f"The query failed ({kind.replace('_', ' ')}): {a.get('error') or 'unknown error'}"]
    if a.get("hint"):
        lines.append(f"Hint: {a['hint']}")
    if a.get("suggestion"):
        lines.append(
            "The same query with the names that exist (check that it answers the "
            f"question):\n```sql\n{a['suggestion']}\n```"
        )
    return "\n".join(lines)


def _cell(v: object) -> str:
    if v is None:
        return "NULL"
    s = str(v)
    return s if len(s) <= 60 else s[:57] + "..."


# what comes right before the question in a first call's user message: the text up to it
# is the same for every question asked next (:func:`prompt_before_question`)
QUESTION_LEAD = "Question:"


def _before_question(state: AgentState) -> list[str]:
    """The parts of a ``fresh`` user message before the question: the conversation's
    earlier turns and the accepted answers shown."""
    parts: list[str] = []
    turns = state.get("turns") or []
    if turns:
        lines = ["Earlier in this conversation:"]
        for t in turns[-4:]:
            lines.append(f"Question: {t.get('question')}")
            if t.get("questions"):
                lines.append("You asked: " + " ".join(t["questions"]))
            elif t.get("sql"):
                lines.append(f"Answered with:\n```sql\n{t['sql']}\n```")
            else:
                lines.append("(not answered)")
        parts.append("\n".join(lines))
    shown = examples_text(state.get("examples") or [])
    if shown:
        parts.append(shown)
    return parts


def fresh_prompt(state: AgentState) -> str:
    """This generate call's user message: earlier turns, the question, this turn's attempts
    and what to do now."""
    parts = _before_question(state)
    parts.append(f"{QUESTION_LEAD} {state.get('question', '').strip()}")
    attempts = state.get("attempts") or []
    reply = state.get("reply")
    why = reply.get("not_a_question") if reply else None
    if not attempts:
        parts.append(
            not_a_question_note(why, state)
            if why
            else "Write one SQL query that answers the question, in a ```sql block."
        )
        return "\n\n".join(parts)
    lines = ["Your attempts so far:"]
    correcting = bool(state.get("correcting"))
    for a in attempts:
        # a failed query as plain indented text, not a ```sql block: a small model copies
        # the blocks it is shown, and repeated failing queries verbatim when shown that way;
        # so is the query the checks doubt, when a correction of it is asked for
        fenced = a.get("ok") and not (correcting and a is attempts[-1])
        sql = a["sql"] if fenced else "\n".join("    " + line for line in a["sql"].splitlines())
        shown = f"```sql\n{sql}\n```" if fenced else sql
        lines.append(f"Attempt {a['n']}:\n{shown}\n{format_attempt(a)}")
    parts.append("\n\n".join(lines))
    last = attempts[-1]
    if last.get("ok") and state.get("correcting") and last.get("doubts"):
        parts.append(correction_request(last["doubts"]))
    elif last.get("ok"):
        parts.append(
            "Check the last result against the question: the right rows, columns, "
            "order and filters. If it answers the question, reply with the single word "
            "FINAL. If not, reply with a corrected query in a ```sql block. Do not ask "
            "the user anything now: a query has run, so reply FINAL or with SQL."
        )
    else:
        parts.append(
            "The last query failed. Reply with a corrected query in a ```sql block; "
            "do not repeat a query that failed. Use only the columns each table has."
        )
    if why:
        parts.append(not_a_question_note(why, state))
    return "\n\n".join(parts)


# what doubts an answer besides the checks' findings: its rows repeat (the hint's words)
REPEATED_ROWS = "repeated_rows"
# what a correction does about a doubt that is no answer check's finding
OTHER_ADVICE = {REPEATED_ROWS: "List each thing once (SELECT DISTINCT, or GROUP BY it)."}


def doubts(attempt: Attempt) -> dict[str, str]:
    """What speaks against an answer that a correction can answer, by name: the answer
    checks' findings that doubt it (``Attempt["checks"]`` of the
    :data:`~sqlnb.agent.checks.DOUBTING_CHECKS`) and, where rows of its result repeat,
    that."""
    out = {name: reason for name, reason in (attempt.get("checks") or {}).items() if name in DOUBTING_CHECKS}
    if attempt.get("repeated_rows") and attempt.get("hint"):
        out[REPEATED_ROWS] = str(attempt["hint"])
    return out


def correction_request(findings: Mapping[str, str]) -> str:
    """What the model is asked after the answer checks found something against the last
    query (:meth:`sqlnb.agent.runner.Agent._correct`): their findings, then a corrected
    query."""
    lines = ["Checks of the last query against the question found:"]
    for name, reason in findings.items():
        advice = check_named(name).advice if name in CHECK_NAMES else OTHER_ADVICE.get(name, "")
        lines.append(f"- {reason}. {advice}".rstrip())
    lines.append(
        "Reply with a corrected query in a ```sql block that fixes this and keeps "
        "everything else the question asks for. Do not ask the user anything now."
    )
    return "\n".join(lines)


def examples_text(examples: Sequence[Example]) -> str | None:
    """The memory's accepted answers as the model is shown them (None: none)."""
    if not examples:
        return None
    lines = [
        "Questions about this database answered before, with the SQL the user accepted "
        "(examples; the tables and values they use exist):"
    ]
    for e in examples:
        lines.append(f"Question: {e['question']}\n```sql\n{str(e['sql']).strip()}\n```")
    return "\n".join(lines)


def not_a_question_note(why: str, state: AgentState) -> str:
    """What the model is told after a CLARIFY reply that asked the user nothing."""
    attempts = state.get("attempts") or []
    then = (
        " or, if the last result answers the question, the single word FINAL"
        if attempts and attempts[-1].get("ok")
        else ""
    )
    return (
        f"Your last reply began with CLARIFY: but was not a question for the user ({why}). "
        f"Do not ask the user now: reply with one SQL query in a ```sql block{then}."
    )


def _system(state: AgentState) -> SystemMessage:
    return SystemMessage(
        content=system_prompt(
            state.get("dialect", ""),
            state.get("schema_context", ""),
            max_iterations=state.get("max_iterations", 5),
            failure_cutoff=state.get("failure_cutoff", 3),
        )
    )


def prompt_before_question(state: AgentState) -> list[BaseMessage]:
    """The first generate call's messages (``fresh``) of the next question asked on
    ``state`` (its dialect, schema context, limits and earlier turns; no accepted answers
    shown), cut right after :data:`QUESTION_LEAD`: every question asked next begins its
    prompt with this text, so a local model that keeps prompt states can read it before the
    question comes (:meth:`sqlnb.agent.runner.Agent.warm`)."""
    lead = "\n\n".join([*_before_question(state), QUESTION_LEAD])
    return [_system(state), HumanMessage(content=lead)]


def model_messages(state: AgentState, rendering: str = "fresh") -> list[BaseMessage]:
    system = _system(state)
    if rendering == "fresh":
        return [system, HumanMessage(content=fresh_prompt(state))]
    shown = examples_text(state.get("examples") or [])
    if shown:  # the chat rendering: the accepted answers go with the system prompt
        system = SystemMessage(content=f"{system.content}\n\n{shown}")
    return [system, *chat_history(state.get("messages") or [])]


def chat_history(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The history for a chat model: tool results as user messages (the text protocol has
    no tool calls), consecutive user messages merged."""
    out: list[BaseMessage] = []
    for m in messages:
        if isinstance(m, ToolMessage):
            m = HumanMessage(content=f"Result of your query:\n{m.content}")
        elif not isinstance(m, (HumanMessage, AIMessage)):
            continue
        if out and isinstance(m, HumanMessage) and isinstance(out[-1], HumanMessage):
            out[-1] = HumanMessage(content=f"{out[-1].content}\n\n{m.content}")
        else:
            out.append(m)
    return out
