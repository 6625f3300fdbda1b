"""The agent's state: a message history plus what the routing rules read.

Everything here is plain data (strings, numbers, lists, dicts, LangChain messages), so a
checkpointer can keep it between turns of a conversation.  Results themselves (Arrow
tables) stay outside the state, in the run's context.

The annotations here are evaluated when the classes are made (no ``from __future__ import
annotations``), so that ``NotRequired`` counts at run time too (a TypedDict's
``__optional_keys__``, which LangGraph reads).
"""

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, get_args

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

# typing_extensions (a dependency of langchain-core and langgraph): NotRequired on Python
# 3.10, and a TypedDict that records it there
from typing_extensions import NotRequired, TypedDict

# how a turn stands: running, then how it ended ("stopped": the user stopped it)
Status = Literal["running", "success", "failed", "needs_clarification", "stopped"]
# why a turn ended by itself (sqlnb.labels words each one)
StopReason = Literal[
    "clarification",
    "finalized",
    "voted",
    "duplicate_sql",
    "no_sql",
    "unrecoverable_error",
    "consecutive_failures",
    "max_iterations",
    "model_error",
    "executed",
]
# the stop reason of a turn the user stopped (its status says "stopped" too)
EndReason = StopReason | Literal["stopped"]
Step = Literal["generate", "execute"]

STOP_REASONS: tuple[str, ...] = get_args(StopReason)

# errors after which another attempt cannot help
UNRECOVERABLE_KINDS = frozenset({"connection_lost", "authentication", "permission", "connect_failed"})


class Candidate(TypedDict):
    """One of the candidate queries an attempt was chosen from, and how the vote saw it."""

    sql: str
    ok: bool
    error_kind: str | None
    row_count: int | None  # None: it failed
    weight: int  # the drafts that gave this query (or a query that stands in for it)
    group: int | None  # which of the distinct non-empty results it gave (None: failed or empty)
    votes: int  # the drafts behind its result (0: failed or empty)
    chosen: bool
    # the first candidate of each distinct result: its columns and first rows (plain
    # values), so that an answer can show the other readings its drafts gave
    columns: NotRequired[list[str]]
    preview: NotRequired[list[list[Any]]]


class Attempt(TypedDict):
    """One proposed query and what running it gave."""

    n: int  # 1-based within the turn
    sql: str
    ok: bool
    error_kind: str | None
    error: str | None
    hint: str | None
    suggestion: str | None  # the failed query with the names clearly meant (repairs.names.suggest_fix)
    row_count: int | None
    truncated: bool
    columns: list[list[str]]  # [name, type]
    preview: list[list[Any]]  # first rows as plain values (empty when data sharing is off)
    elapsed: float
    # when chosen among several candidates (or one that several drafts gave)
    candidates: NotRequired[list[Candidate]]
    # the first answer of the turn, chosen by a vote of drafts (sqlnb.agent.first_round),
    # and how many drafts were drawn (those that asked back or wrote no query included)
    first_round: NotRequired[bool]
    draws: NotRequired[int]
    # what the first round changed in this query without a model call: the answer
    # rewrites that produced it, each by its name (sqlnb.agent.repairs.REWRITES) with what
    # it changed, in the order applied; a filter value put back as stored; the NULLs left
    # out of its NOT IN lists
    rewrites: NotRequired[dict[str, str]]
    repaired: NotRequired[str]
    null_safe: NotRequired[str]
    # the kept query's findings of the answer checks (sqlnb.agent.checks.CHECKS), by check
    # name: what speaks against it as the answer (set on the turn's kept attempt)
    checks: NotRequired[dict[str, str]]
    # a correction of an earlier answer the checks doubted, written after the model was
    # shown their findings: the findings it answered, by check name (see Agent._correct)
    corrects: NotRequired[dict[str, str]]
    # while a correction is asked for: what the model is shown against this query, by name
    # (the checks' findings, and repeated rows; sqlnb.agent.runner.doubts)
    doubts: NotRequired[dict[str, str]]
    # False: the rows were not shown to the model (data sharing is off)
    data_shared: NotRequired[bool]
    # it ran and found nothing: no rows, or one row of only zeros and NULLs
    nothing_found: NotRequired[bool]
    # rows of its result repeat (the hint says so)
    repeated_rows: NotRequired[bool]


class ReplyRecord(TypedDict):
    """The model's last reply as the state keeps it: parsed
    (:class:`~sqlnb.agent.protocol.Reply`), with the candidate queries to run when there
    are several and what the first round found."""

    text: str
    sql: str | None  # the query to run (the first candidate when there are several)
    final: bool
    clarify: list[str] | None  # the questions for the user, when it asks back
    # a CLARIFY that asked the user nothing: why (the next prompt says so)
    not_a_question: NotRequired[str]
    # several candidate queries, or a draft standing in for the reply's own query
    candidates: NotRequired[list[str]]
    # the first round's vote (sqlnb.agent.first_round.FirstRoundResult): the drafts behind
    # each candidate, the drafts drawn, and what the repairs and rewrites changed in each
    # candidate (SQL -> what; rewrites: SQL -> rewrite name -> what)
    weights: NotRequired[list[int]]
    first_round: NotRequired[bool]
    draws: NotRequired[int]
    repairs: NotRequired[dict[str, str]]
    nulls: NotRequired[dict[str, str]]
    rewrites: NotRequired[dict[str, dict[str, str]]]
    # the model asked back, but most drafts agreed on an answer instead
    clarify_overruled: NotRequired[bool]


class Turn(TypedDict):
    """An earlier question of the conversation and how it ended."""

    question: str
    sql: str | None
    status: str
    questions: list[str]  # the model's clarification questions, if it asked


class Example(TypedDict):
    """An accepted question/SQL pair of this database (the memory), shown to the model."""

    question: str
    sql: str


class AgentState(TypedDict):
    """The state a turn's nodes read: every key but ``turns`` is set when the turn starts
    (:func:`new_turn`)."""

    messages: Annotated[list[AnyMessage], add_messages]
    question: str
    connection: str
    dialect: str
    schema_context: str
    iteration: int  # model calls in this turn
    max_iterations: int
    consecutive_failures: int
    failure_cutoff: int
    no_review: bool
    attempts: list[Attempt]
    reply: ReplyRecord | None  # the last reply
    last_step: Step | None
    next_step: Step | Literal["end"] | None
    model_error: str | None
    final_sql: str | None
    status: Status
    stop_reason: EndReason | None
    questions: list[str]
    usage: dict[str, float]
    # the conversation's earlier turns (none before its first turn ended)
    turns: NotRequired[list[Turn]]
    # accepted question/SQL pairs of this database (the memory), shown as examples
    examples: list[Example]
    # the model is correcting the answer the checks doubted (shown their findings): the
    # correction's outcome ends the turn (sqlnb.agent.runner keeps it only where it helped)
    correcting: bool


class StateUpdate(TypedDict, total=False):
    """What a node returns: the keys of :class:`AgentState` it changes (``messages``:
    the messages to add)."""

    messages: Annotated[list[AnyMessage], add_messages]
    question: str
    connection: str
    dialect: str
    schema_context: str
    iteration: int
    max_iterations: int
    consecutive_failures: int
    failure_cutoff: int
    no_review: bool
    attempts: list[Attempt]
    reply: ReplyRecord | None
    last_step: Step | None
    next_step: Step | Literal["end"] | None
    model_error: str | None
    final_sql: str | None
    status: Status
    stop_reason: EndReason | None
    questions: list[str]
    usage: dict[str, float]
    turns: list[Turn]
    examples: list[Example]
    correcting: bool


def new_turn(
    question: str,
    *,
    connection: str,
    dialect: str,
    schema_context: str,
    max_iterations: int,
    failure_cutoff: int,
    no_review: bool,
    examples: Sequence[Mapping[str, object]] | None = None,
) -> AgentState:
    """The input that starts a turn: per-turn fields reset, the conversation kept."""
    from langchain_core.messages import HumanMessage

    return {
        "messages": [HumanMessage(content=question)],
        "question": question,
        "connection": connection,
        "dialect": dialect,
        "schema_context": schema_context,
        "iteration": 0,
        "max_iterations": max_iterations,
        "consecutive_failures": 0,
        "failure_cutoff": failure_cutoff,
        "no_review": no_review,
        "attempts": [],
        "reply": None,
        "last_step": None,
        "next_step": None,
        "model_error": None,
        "final_sql": None,
        "status": "running",
        "stop_reason": None,
        "questions": [],
        "usage": {},
        "examples": [{"question": str(e["question"]), "sql": str(e["sql"])} for e in examples or []],
        "correcting": False,
    }


def add_usage(total: Mapping[str, float], usage: Mapping[str, object] | None) -> dict[str, float]:
    """``total`` with one call's (or one pass's) token and call counts added: a usage
    without its own ``calls`` count is one call."""
    out = dict(total)
    for k, v in (usage or {}).items():
        if isinstance(v, (int, float)):
            out[k] = out.get(k, 0) + v
    if "calls" not in (usage or {}):
        out["calls"] = out.get("calls", 0) + 1
    return out
