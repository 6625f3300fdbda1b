"""The agent's state: a message history plus what the routing rules read.

Everything here is plain data (strings, numbers, lists, dicts, LangChain messages), so a
checkpointer can keep it between turns of a conversation.  Results themselves (Arrow
tables) stay outside the state, in the run's context.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

Status = Literal["running", "success", "failed", "needs_clarification"]
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

STOP_REASONS: tuple[str, ...] = StopReason.__args__  # type: ignore[attr-defined]

# errors after which another attempt cannot help
UNRECOVERABLE_KINDS = frozenset({"connection_lost", "authentication", "permission", "connect_failed"})


class Attempt(TypedDict, total=False):
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
    preview: list[list[Any]]  # first rows (empty when data sharing is off)
    elapsed: float
    # when chosen among several candidates: each one's sql, ok, error_kind, votes, chosen
    candidates: list[dict[str, Any]]
    # what the first round changed in this query without a model call: the answer
    # rewrites that produced it, each by its name (sqlnb.agent.repairs.REWRITES) with what
    # it changed, in the order applied; a filter value put back as stored; the NULLs left
    # out of its NOT IN lists
    rewrites: dict[str, str]
    repaired: str
    null_safe: str


class Turn(TypedDict, total=False):
    """An earlier question of the conversation and how it ended."""

    question: str
    sql: str | None
    status: str
    questions: list[str]  # the model's clarification questions, if it asked


class AgentState(TypedDict, total=False):
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
    reply: dict[str, Any] | None  # the last reply, parsed: text, sql, final, clarify
    last_step: Literal["generate", "execute"] | None
    next_step: Literal["generate", "execute", "end"] | None
    model_error: str | None
    final_sql: str | None
    status: Status
    stop_reason: StopReason | None
    questions: list[str]
    usage: dict[str, float]
    turns: list[Turn]
    # accepted question/SQL pairs of this database (the memory), shown as examples
    examples: list[dict[str, str]]


def new_turn(
    question: str,
    *,
    connection: str,
    dialect: str,
    schema_context: str,
    max_iterations: int,
    failure_cutoff: int,
    no_review: bool,
    examples: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
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
    }


def add_usage(total: dict[str, float], usage: dict[str, Any] | None) -> dict[str, float]:
    """``total`` with one call's (or one pass's) token and call counts added: a usage
    without its own ``calls`` count is one call."""
    out = dict(total)
    for k, v in (usage or {}).items():
        if isinstance(v, (int, float)):
            out[k] = out.get(k, 0) + v
    if "calls" not in (usage or {}):
        out["calls"] = out.get("calls", 0) + 1
    return out
