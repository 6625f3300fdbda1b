"""The graph's nodes (plain functions returning partial state) and its typed routing.

generate → decide_next_step → execute → decide_next_step → generate ... until
decide_next_step ends the turn.  Everything the routing needs is in the state; the run's
context (model, adapter, settings, results) comes in through LangGraph's ``Runtime``.
The first answer's vote of drafts is :mod:`sqlnb.agent.first_round`; the repairs and
rewrites it applies are :mod:`sqlnb.agent.repairs`; the hints the model sees,
:mod:`sqlnb.agent.hints`.
"""

from __future__ import annotations

import dataclasses
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, cast

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.runtime import Runtime

from sqlnb import errors
from sqlnb.adapters import Adapter, Catalog, Result, Table
from sqlnb.agent.context import estimate_tokens
from sqlnb.agent.execution import Fingerprint, Run, fingerprint, nothing_found, plain_value, run_statement
from sqlnb.agent.first_round import FirstRoundResult, draft_seed, first_round
from sqlnb.agent.fit import TRIES as FIT_TRIES
from sqlnb.agent.fit import smaller_budget
from sqlnb.agent.hints import empty_result_hint, error_hint, null_not_in_hint, repeated_rows_hint
from sqlnb.agent.live import Live
from sqlnb.agent.prompts import format_attempt, model_messages, not_a_question_note
from sqlnb.agent.protocol import Reply, correction_sql, parse_reply, real_questions
from sqlnb.agent.repairs.empty import null_safe_not_in
from sqlnb.agent.repairs.names import suggest_fix
from sqlnb.agent.settings import AgentSettings, default_retry_drafts, first_draft_cap
from sqlnb.agent.state import (
    UNRECOVERABLE_KINDS,
    AgentState,
    Attempt,
    Candidate,
    EndReason,
    ReplyRecord,
    StateUpdate,
    Status,
    Turn,
    add_usage,
)
from sqlnb.agent.stop import StopToken
from sqlnb.sql.normalize import normalize_sql


class ChatClient(Protocol):
    """How the agent calls a model (:class:`sqlnb.agent.models.ModelClient`, or the
    runner's stoppable wrapper of one): the reply's text and the call's usage (token and
    call counts, seconds).  ``samples`` (whether a call with a temperature gives a new
    sample), ``side_by_side`` (whether several replies are written together), ``explains``
    (whether it writes explanations of answers) and ``corrects`` (whether it writes
    corrections of answers the checks doubt) are read where a client has them."""

    def invoke(
        self,
        messages: Sequence[BaseMessage],
        *,
        temperature: float | None = ...,
        seed: int | None = ...,
        draft: bool = ...,
        purpose: str | None = ...,
    ) -> tuple[str, Mapping[str, object]]: ...

    def invoke_many(
        self, messages: Sequence[BaseMessage], specs: Sequence[dict[str, float | None]]
    ) -> Sequence[tuple[str, Mapping[str, object]]]: ...


class DistinctValues(Protocol):
    """The stored values of a table's column (a read-only DISTINCT query, looked up once
    per turn)."""

    def __call__(self, table: Table, column: str, /, timeout: float = ...) -> Sequence[object]: ...


@dataclass
class AgentContext:
    """What a run needs besides its state (not checkpointed)."""

    model: ChatClient
    adapter: Adapter
    catalog: Catalog | None = None
    settings: AgentSettings = field(default_factory=AgentSettings)
    results: dict[int, Result] = field(default_factory=dict)  # attempt n -> its result
    distinct_values: DistinctValues | None = None
    stop: StopToken | None = None  # the turn ends as "stopped" once it is set
    # statements the first round already ran (sql -> (sql, outcome, seconds)): the execute
    # node records them instead of running them again
    prerun: dict[str, Run] = field(default_factory=dict)
    live: Live | None = None  # the turn's phases shown as they come (sqlnb.agent.live)
    # the schema context of the turn's question within a budget of tokens (the runner's
    # choice of tables): a smaller one when the model refuses a prompt as too long
    fit_schema: Callable[[int], str] | None = None


# ---------------------------------------------------------------------------
# nodes
# ---------------------------------------------------------------------------


def generate(state: AgentState, runtime: Runtime[AgentContext]) -> StateUpdate:
    """Call the model with the dialect's system prompt and what it should see now.

    After a failed query, ``settings.retry_drafts`` more replies are drawn from the
    question's first prompt at ``retry_temperature``: with the correction they are the
    candidates the execute node chooses from.  Measured on Spider with a small local
    model, its correction mostly repeats the failing query, while fresh drafts that run
    are mostly right.

    A prompt the model refuses as longer than its context is asked again with a smaller
    schema context (:mod:`sqlnb.agent.fit`), which the rest of the turn keeps."""
    ctx = runtime.context
    refused = 0
    while True:
        try:
            update = _generate(state, runtime)
        except errors.ContextTooLong as exc:
            refused += 1
            smaller = _smaller_schema(state, ctx, exc) if refused <= FIT_TRIES else None
            if smaller is None:
                return _model_failed(state, str(exc), refused)
            state = cast(AgentState, {**state, "schema_context": smaller})
            continue
        if refused:  # the refused calls count as failed ones; the smaller schema stays
            update["schema_context"] = state.get("schema_context", "")
            update["usage"] = add_usage(
                update.get("usage") or {}, {"failed_calls": refused, "calls": refused}
            )
        return update


def _smaller_schema(state: AgentState, ctx: AgentContext, refused: errors.ContextTooLong) -> str | None:
    """The schema context of a prompt that should fit where ``refused`` said the last one did
    not; None when there is none (no way to choose another, or none smaller to show)."""
    if ctx.fit_schema is None:
        return None
    schema = state.get("schema_context", "")
    prompt = "\n".join(str(m.content) for m in model_messages(state, ctx.settings.rendering))
    budget = smaller_budget(schema, prompt, refused)
    if budget is None:
        return None
    text = ctx.fit_schema(budget)
    return text if estimate_tokens(text) < estimate_tokens(schema) else None


def _model_failed(state: AgentState, message: str, failed: int) -> StateUpdate:
    return {
        "iteration": state.get("iteration", 0) + 1,
        "model_error": message,
        "reply": None,
        "last_step": "generate",
        "usage": add_usage(state.get("usage") or {}, {"failed_calls": failed, "calls": failed}),
    }


def _generate(state: AgentState, runtime: Runtime[AgentContext]) -> StateUpdate:
    """One try of :func:`generate` (a :class:`~sqlnb.errors.ContextTooLong` raised, every
    other failure of the model returned as ``model_error``)."""
    ctx = runtime.context
    s = ctx.settings
    iteration = state.get("iteration", 0) + 1
    usage = state.get("usage") or {}
    try:
        messages = model_messages(state, s.rendering)
        drawn: list[str] = []
        if _drafts_together(state, ctx, iteration):
            # the first answer and its first drafts written side by side: about the time
            # of one reply (the drafts are what the first round would draw next)
            drafts: list[dict[str, float | None]] = [
                {"temperature": s.first_temperature, "seed": draft_seed(state, j)}
                for j in range(TOGETHER_DRAFTS)
            ]
            together = ctx.model.invoke_many(messages, [{"temperature": None}, *drafts])
            (text, call_usage), drawn = together[0], [t for t, _ in together[1:]]
            for _, u in together:
                usage = add_usage(usage, u)
        elif state.get("correcting"):
            # the answer the checks doubted, corrected after seeing their findings
            text, call_usage = ctx.model.invoke(messages, purpose="correct")
            usage = add_usage(usage, call_usage)
        else:
            text, call_usage = ctx.model.invoke(messages)
            usage = add_usage(usage, call_usage)
        reply = parse_reply(text)
        if state.get("correcting") and not reply.sql and not reply.final:
            # a correction's query, in whatever form the reply gives it (no question now)
            reply = Reply(text=text, sql=correction_sql(text))
        not_a_question: str | None = None
        if reply.clarify is not None and (drafted(state.get("attempts") or []) or state.get("correcting")):
            # the drafts of the first round already decided whether to ask back; asking
            # now is a reaction to an empty result or a failed query, not an ambiguity of
            # the question: a reply without SQL (the best query found stands)
            reply = dataclasses.replace(reply, clarify=None)
        if reply.clarify is not None:
            # a clarification only when it asks something: not when it carries SQL or
            # echoes the question or the prompt (a failed turn, the loop goes on)
            shown = "\n".join(str(m.content) for m in messages if not isinstance(m, SystemMessage))
            questions, not_a_question = real_questions(reply, state.get("question", ""), shown)
            reply = dataclasses.replace(reply, clarify=None if not_a_question else questions)
        pool, usage = _retry_candidates(state, reply, ctx, iteration, usage)
        first: FirstRoundResult | None = None
        if not state.get("attempts") and iteration == 1:
            first, usage = first_round(state, reply, messages, ctx, usage, drawn)
    except errors.ContextTooLong:
        raise  # generate shows the model less of the schema and asks again
    except errors.SqlnbError as exc:
        return {
            "iteration": iteration,
            "model_error": str(exc),
            "reply": None,
            "last_step": "generate",
            "usage": add_usage(usage, {"failed_calls": 1}),
        }
    except Exception as exc:  # a provider's own exception that escaped the client
        return {
            "iteration": iteration,
            "model_error": f"{type(exc).__name__}: {exc}",
            "reply": None,
            "last_step": "generate",
            "usage": add_usage(usage, {"failed_calls": 1}),
        }
    out: ReplyRecord = {"text": text, "sql": reply.sql, "final": reply.final, "clarify": reply.clarify}
    if not_a_question:
        out["not_a_question"] = not_a_question  # the next prompt says so (prompts.py)
    if len(pool) > 1 or (pool and pool[0] != reply.sql):
        # several candidates, or the model's own reply repeated a failed query or had
        # none and a draft stands in; nothing is final before the model saw its result
        out["sql"], out["final"], out["candidates"] = pool[0], False, pool
    if first:
        # no candidates: the drafts wrote no query, and asking back is what they agree on
        out["sql"], out["final"] = (first["candidates"][0] if first["candidates"] else None), False
        out["candidates"], out["weights"] = first["candidates"], first["weights"]
        out["first_round"], out["draws"], out["clarify"] = True, first["draws"], first["clarify"]
        if first.get("repairs"):
            out["repairs"] = first["repairs"]
        if first.get("nulls"):
            out["nulls"] = first["nulls"]
        if first.get("rewrites"):
            out["rewrites"] = first["rewrites"]
        if reply.clarify is not None and first["clarify"] is None:
            out["clarify_overruled"] = True  # most drafts agreed on an answer instead
    said: list[AnyMessage] = [AIMessage(content=text)]
    if not_a_question and s.rendering == "chat":
        said.append(HumanMessage(content=not_a_question_note(not_a_question, state)))
    return {
        "messages": said,
        "iteration": iteration,
        "reply": out,
        "usage": usage,
        "last_step": "generate",
    }


def _retry_candidates(
    state: AgentState, reply: Reply, ctx: AgentContext, iteration: int, usage: dict[str, float]
) -> tuple[list[str], dict[str, float]]:
    """After a failed attempt: the reply's SQL, the failed query with the names clearly
    meant (the hint's suggestion) and fresh drafts of the question, without any query that
    already failed or repeats another candidate (none when not retrying).  A draft call
    that fails ends the drafting; the candidates so far stand."""
    s = ctx.settings
    attempts = state.get("attempts") or []
    drafts = s.retry_drafts if s.retry_drafts is not None else default_retry_drafts(ctx.model)
    if (
        drafts <= 0
        or not attempts
        or attempts[-1].get("ok")
        or reply.clarify is not None
        or not getattr(ctx.model, "samples", False)
        or attempts[-1].get("error_kind") in UNRECOVERABLE_KINDS | {"cancelled", "read_only"}
    ):
        return [], usage
    if drafted(attempts):
        # the first round already sampled the first prompt up to 1 + first_drafts times:
        # more samples of it add calls, not new answers; the correction (which saw the
        # error) and the hint's suggestion are the candidates
        drafts = 0
    dialect = state.get("dialect", "")
    failed = [c["sql"] for a in attempts for c in _queries(a) if not c.get("ok")]
    seen = [normalize_sql(sql, dialect) for sql in failed]
    pool: list[str] = []

    def add(sql: str | None) -> None:
        if sql and (key := normalize_sql(sql, dialect)) not in seen:
            seen.append(key)
            pool.append(sql)

    add(reply.sql)
    add(attempts[-1].get("suggestion"))  # the failed query with the names clearly meant
    # the question's first prompt (fresh rendering: the question and earlier turns, no
    # attempts), whichever rendering the corrections use
    first = model_messages({**state, "attempts": [], "reply": None}, "fresh") if drafts else []
    for j in range(drafts):
        try:
            text, call_usage = ctx.model.invoke(
                first, temperature=s.retry_temperature, seed=iteration * 1000 + j, draft=True
            )
        except Exception:
            usage = add_usage(usage, {"failed_calls": 1, "calls": 0})
            break
        usage = add_usage(usage, call_usage)
        add(parse_reply(text).sql)
    return pool, usage


TOGETHER_DRAFTS = 2  # drafts written beside the first answer, where that costs little
# the first rows kept of each distinct result the candidates gave (AskResult.alternatives)
ALTERNATIVE_ROWS = 5


def _drafts_together(state: AgentState, ctx: AgentContext, iteration: int) -> bool:
    """Whether the first answer is written together with its first drafts: a model that
    writes replies side by side (llama.cpp in-process), a first round that will draw
    drafts, and only the question's first call."""
    return (
        iteration == 1
        and not state.get("attempts")
        and first_draft_cap(ctx.settings, ctx.model) >= TOGETHER_DRAFTS
        and bool(getattr(ctx.model, "samples", False))
        and getattr(ctx.model, "side_by_side", False) is True
    )


def execute(state: AgentState, runtime: Runtime[AgentContext]) -> StateUpdate:
    """Run the proposed SQL through the read-only guard, then in a read-only session with
    a row cap and the statement timeout; append the outcome as a tool-result message.

    Several candidates (after a failure, see :func:`generate`) all run the same way; the
    attempt keeps the one whose result most of them agree on (a non-empty result before
    an empty one, then the earliest), or the first candidate's error when none ran."""
    ctx = runtime.context
    reply = _last_reply(state)
    attempts = list(state.get("attempts") or [])
    n = len(attempts) + 1
    dialect = state.get("dialect", "")
    candidates = reply.get("candidates") or [reply.get("sql") or ""]
    weights = list(reply.get("weights") or [1] * len(candidates))
    runs = [ctx.prerun.pop(sql) if sql in ctx.prerun else run_statement(sql, ctx) for sql in candidates]
    ctx.prerun.clear()
    votes = _votes(runs, weights) if len(runs) > 1 or weights[0] > 1 else [0]
    chosen = _vote(runs, votes)
    sql, outcome, elapsed = runs[chosen]
    attempt = _attempt(n, sql, outcome, elapsed, dialect, ctx)
    if len(runs) > 1 or weights[0] > 1:
        groups = _groups(runs)
        attempt["candidates"] = [
            {
                "sql": c,
                "ok": not isinstance(o, errors.SqlnbError),
                "error_kind": o.kind if isinstance(o, errors.SqlnbError) else None,
                "row_count": _row_count(o),
                "weight": weights[i],
                "group": groups[i],
                "votes": votes[i],
                "chosen": i == chosen,
            }
            for i, (c, o, _) in enumerate(runs)
        ]
        # the first candidate of each distinct result keeps its first rows
        for i, (cand, (_, o, _)) in enumerate(zip(attempt["candidates"], runs, strict=True)):
            if isinstance(o, Result) and groups[i] is not None and groups[i] not in groups[:i]:
                cand["columns"] = list(o.column_names)
                cand["preview"] = preview_rows(o, ALTERNATIVE_ROWS)
    if reply.get("first_round"):
        attempt["first_round"] = True
        attempt["draws"] = reply.get("draws") or sum(weights)
    # what the first round changed in the chosen query (its confidence reasons say so)
    if done := (reply.get("repairs") or {}).get(sql):
        attempt["repaired"] = done
    if done := (reply.get("nulls") or {}).get(sql):
        attempt["null_safe"] = done
    if rewrites := (reply.get("rewrites") or {}).get(sql):
        attempt["rewrites"] = dict(rewrites)
    failures = 0 if attempt["ok"] else state.get("consecutive_failures", 0) + 1
    return {
        "attempts": attempts + [attempt],
        "consecutive_failures": failures,
        "messages": [
            ToolMessage(
                content=format_attempt(attempt, with_choice=True),
                tool_call_id=f"attempt-{n}-{uuid.uuid4().hex[:8]}",
                name="run_sql",
            )
        ],
        "last_step": "execute",
    }


def _last_reply(state: AgentState) -> ReplyRecord:
    """The turn's last reply; when there is none, one with no SQL, nothing final and no
    questions."""
    return state.get("reply") or {"text": "", "sql": None, "final": False, "clarify": None}


def _queries(attempt: Attempt) -> Sequence[Candidate | Attempt]:
    """The queries an attempt ran: its candidates, or the attempt's own."""
    candidates: Sequence[Candidate | Attempt] = attempt.get("candidates") or []
    return candidates or [attempt]


def drafted(attempts: list[Attempt]) -> bool:
    """Whether this turn's first answer was a vote of drafts (see :mod:`sqlnb.agent.first_round`)."""
    return any(a.get("first_round") for a in attempts)


def _votes(runs: list[Run], weights: list[int] | None = None) -> list[int]:
    """For each run, how many drafts (``weights``: drafts per run, 1 each by default) gave
    the same non-empty result (0: failed or empty)."""
    w = weights or [1] * len(runs)
    prints = [fingerprint(o) if isinstance(o, Result) else None for _, o, _ in runs]
    return [sum(w[j] for j, q in enumerate(prints) if q == p) if p is not None else 0 for p in prints]


def _groups(runs: list[Run]) -> list[int | None]:
    """For each run, the number of its result among the distinct non-empty results (None:
    failed or empty)."""
    prints = [fingerprint(o) if isinstance(o, Result) else None for _, o, _ in runs]
    seen: list[Fingerprint] = []
    out: list[int | None] = []
    for p in prints:
        if p is None:
            out.append(None)
            continue
        if p not in seen:
            seen.append(p)
        out.append(seen.index(p))
    return out


def _row_count(outcome: Result | errors.SqlnbError) -> int | None:
    if not isinstance(outcome, Result):
        return None
    return len(outcome.arrow) if outcome.arrow is not None else max(outcome.row_count, 0)


def _vote(runs: list[Run], votes: list[int]) -> int:
    """The index of the run to keep: most votes (see :func:`_votes`), then a result (even
    empty) over an error, then the earliest."""
    return min(range(len(runs)), key=lambda i: (-votes[i], not isinstance(runs[i][1], Result), i))


def _attempt(
    n: int, sql: str, outcome: Result | errors.SqlnbError, elapsed: float, dialect: str, ctx: AgentContext
) -> Attempt:
    """The attempt record of one run: the result's shape and preview, or the classified
    error with hints; the result itself goes to the run's context."""
    s = ctx.settings
    attempt: Attempt = {
        "n": n,
        "sql": sql,
        "ok": False,
        "error_kind": None,
        "error": None,
        "hint": None,
        "suggestion": None,
        "row_count": None,
        "truncated": False,
        "columns": [],
        "preview": [],
        "elapsed": 0.0,
    }
    if isinstance(outcome, errors.SqlnbError):
        exc = outcome
        attempt["error_kind"] = exc.kind
        if isinstance(exc, errors.ReadOnlyViolation):
            attempt["error"] = f"refused before reaching the database: {exc.reason}"
            attempt["hint"] = "only a single read-only SELECT runs here; never write data"
        elif _read_only_refusal(exc):
            # the read-only session (the second layer) stopped a write the guard let
            # through, e.g. inside a function: a refused write, not a missing privilege
            attempt["error_kind"] = "read_only"
            attempt["error"] = f"refused by the read-only session: {_error_text(exc)}"
            attempt["hint"] = (
                "only read-only queries run here; this one writes (e.g. through a "
                "function it calls): never write data"
            )
        else:
            attempt["error"] = _error_text(exc)
            message = f"{exc.message} {exc.engine_message or ''}"
            attempt["hint"] = error_hint(exc.kind, message, sql, dialect, ctx.catalog) or exc.hint
            attempt["suggestion"] = suggest_fix(exc.kind, message, sql, dialect, ctx.catalog)
        if not s.share_data:
            attempt["error"] = _without_values(attempt["error"], sql, ctx.catalog)
    else:
        result = outcome
        ctx.results[n] = result
        attempt["ok"] = True
        attempt["row_count"] = len(result.arrow) if result.arrow is not None else max(result.row_count, 0)
        attempt["truncated"] = bool(result.truncated)
        attempt["columns"] = [[c.name, c.type] for c in result.columns]
        if s.share_data and s.preview_rows > 0:
            attempt["preview"] = preview_rows(result, s.preview_rows)
        else:
            attempt["data_shared"] = False
        if nothing_found(result):
            attempt["nothing_found"] = True
        if attempt.get("nothing_found"):
            hints = []
            if s.share_data and s.value_hints and ctx.distinct_values:
                hints.append(empty_result_hint(sql, dialect, ctx.catalog, ctx.distinct_values))
            if (null_safe := null_safe_not_in(sql, dialect)) is not None:
                # from the query alone: NOT IN over a list that holds a NULL matches nothing
                hints.append(null_not_in_hint(null_safe[1]))
            attempt["hint"] = "; ".join(h for h in hints if h) or None
        elif attempt["row_count"] and attempt["row_count"] > 1:
            attempt["hint"] = repeated_rows_hint(result)
            if attempt["hint"]:
                attempt["repeated_rows"] = True
    attempt["elapsed"] = round(elapsed, 6)
    return attempt


def decide_next_step(state: AgentState, runtime: Runtime[AgentContext] | None = None) -> StateUpdate:
    """The rules of the issue, in order; ends the turn with a status and a stop reason or
    says where to go next."""
    context = runtime.context if runtime is not None else None
    stop = context.stop if context is not None else None
    if stop is not None and stop.stopped:  # the user stopped the turn (Stop button)
        return _end(state, "stopped", status="stopped")
    if state.get("model_error"):
        return _end(state, "model_error")
    reply = _last_reply(state)
    attempts = state.get("attempts") or []
    last = attempts[-1] if attempts else None
    if state.get("last_step") == "generate":
        if (clarify := reply.get("clarify")) is not None:
            if reply.get("candidates"):
                # drafts wrote queries although most asked back: run them first, so
                # that the best query found goes with the questions
                return {"next_step": "execute"}
            return _end(state, "clarification", status="needs_clarification", questions=list(clarify))
        sql = reply.get("sql")
        if reply.get("not_a_question") and not sql:
            # a CLARIFY that asked nothing (see generate): a failed turn, ask again
            return _next_or_end(state)
        same_as_last = bool(sql and last and _same_sql(sql, last["sql"], state.get("dialect", "")))
        if reply.get("final") and (not sql or same_as_last) and last is not None and last.get("ok"):
            return _end(state, "finalized")
        if same_as_last:
            return _end(state, "duplicate_sql")
        if not sql:
            if reply.get("final") and last is not None and not last.get("ok"):
                # FINAL after a failure: nothing successful to finalise, ask again
                return _next_or_end(state)
            return _end(state, "no_sql")  # FINAL before anything ran is ignored
        return {"next_step": "execute"}
    # after an execution
    assert last is not None
    if not last.get("ok") and last.get("error_kind") in UNRECOVERABLE_KINDS | {"cancelled"}:
        return _end(state, "unrecoverable_error")
    if (clarify := reply.get("clarify")) is not None:
        return _end(state, "clarification", status="needs_clarification", questions=list(clarify))
    if state.get("correcting"):
        # the correction of an answer the checks doubted ran: whatever it gave ends the
        # turn (the runner keeps it only where it answers their findings)
        return _end(state, "executed")
    if last.get("ok") and last.get("first_round") and not last.get("nothing_found"):
        # the drafts' vote gave a non-empty result: it is the answer (a review call with
        # a small model almost never changes it)
        return _end(state, "voted")
    if last.get("ok") and last.get("first_round") and not last.get("hint"):
        # every draft found nothing and no stored value could be offered instead: the
        # model has nothing new to see (with the 1.5B model such a review kept the empty
        # result or asked the user back, never corrected it); the empty result stands
        return _end(state, "voted")
    if last.get("ok") and not last.get("nothing_found") and drafted(attempts):
        # a correction after the first round that runs and finds something: no review
        # call (it gives the model's say-so, not evidence; the confidence says low)
        return _end(state, "executed")
    # a FINAL that came with new SQL finalises nothing yet: the model has not seen this
    # result, so it is shown it (below) and FINAL must come again
    if last.get("ok") and state.get("no_review"):
        return _end(state, "executed")
    if state.get("consecutive_failures", 0) >= state.get("failure_cutoff", 3):
        return _end(state, "consecutive_failures")
    return _next_or_end(state)


def route(state: AgentState) -> Literal["generate", "execute", "__end__"]:
    step = state.get("next_step")
    if step == "generate":
        return "generate"
    if step == "execute":
        return "execute"
    return "__end__"  # langgraph.graph.END


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def _next_or_end(state: AgentState) -> StateUpdate:
    if state.get("iteration", 0) >= state.get("max_iterations", 5):
        return _end(state, "max_iterations")
    return {"next_step": "generate"}


def _end(
    state: AgentState,
    stop_reason: EndReason,
    *,
    status: Status | None = None,
    questions: list[str] | None = None,
) -> StateUpdate:
    attempts = state.get("attempts") or []
    ok = [a for a in attempts if a.get("ok")]
    if status is None:
        status = "success" if ok else "failed"
    # a clarification after a successful query keeps that query as the best answer so far
    final_sql = ok[-1]["sql"] if ok and status in ("success", "needs_clarification") else None
    turn: Turn = {
        "question": state.get("question", ""),
        "sql": final_sql,
        "status": status,
        "questions": questions or [],
    }
    return {
        "next_step": "end",
        "status": status,
        "stop_reason": stop_reason,
        "final_sql": final_sql,
        "questions": questions or [],
        "turns": list(state.get("turns") or []) + [turn],
    }


def _same_sql(a: str, b: str, dialect: str) -> bool:
    return normalize_sql(a, dialect) == normalize_sql(b, dialect)


_READ_ONLY_SESSION = re.compile(r"read[- ]only transaction|readonly database|query_only", re.I)


def _read_only_refusal(exc: errors.SqlnbError) -> bool:
    """Whether the engine refused a write because the statement ran read-only."""
    return exc.kind == "permission" and bool(
        _READ_ONLY_SESSION.search(f"{exc.message} {exc.engine_message or ''}")
    )


# a quoted stretch of an error message (not the apostrophe of "doesn't")
_QUOTED = re.compile(r"(?<!\w)(?:'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\")(?!\w)")


def _without_values(text: str | None, sql: str, catalog: Catalog | None) -> str | None:
    """An error message with data sharing off: quoted text that is neither written in the
    query nor a (dotted) name from the catalog is masked, since engines quote the offending
    value in some errors (a failed cast: invalid input syntax for type integer: "Ada")."""
    if not text:
        return text
    names: set[str] = set()
    for t in catalog.tables if catalog is not None else []:
        names.update(n.lower() for n in (t.name, t.schema or "") if n)
        names.update(c.name.lower() for c in t.columns)
    low_sql = sql.lower()

    def in_query(part: str) -> bool:
        return re.search(rf"(?<!\w){re.escape(part)}(?!\w)", low_sql) is not None

    def mask(m: re.Match[str]) -> str:
        quote, inner = m.group(0)[0], m.group(0)[1:-1].lower()
        parts = [p for p in inner.split(".") if p]
        if not inner or in_query(inner) or (parts and all(p in names or in_query(p) for p in parts)):
            return m.group(0)
        return f"{quote}(value not shown){quote}"

    return _QUOTED.sub(mask, text)


def _error_text(exc: errors.SqlnbError) -> str:
    engine = exc.engine_message
    if engine and engine not in exc.message:
        return f"{exc.message} (the database said: {engine})"
    return exc.message


def preview_rows(result: Result, n: int) -> list[list[Any]]:
    """The first ``n`` rows of a result as plain values."""
    if result.arrow is None or n <= 0:
        return []
    head = result.arrow.slice(0, n)
    cols = [col.to_pylist() for col in head.columns]
    return [[plain_value(v) for v in row] for row in zip(*cols, strict=True)]
