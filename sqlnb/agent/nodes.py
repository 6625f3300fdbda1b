"""The graph's nodes (plain functions returning partial state) and its typed routing.

generate → decide_next_step → execute → decide_next_step → generate ... until
decide_next_step ends the turn.  Everything the routing needs is in the state; the run's
context (model, adapter, settings, results) comes in through LangGraph's ``Runtime``.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import decimal
import re
import time
import uuid
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Sequence

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.graph import END
from langgraph.runtime import Runtime

from sqlnb import errors
from sqlnb.adapters import Adapter, Catalog, Result
from sqlnb.agent.doubts import answer_doubts
from sqlnb.agent.hints import (average_subset_filter, both_values_intersect, empty_result_hint, error_hint, label_ids, link_joins,
                               named_value_filter, named_value_swap, negated_join, null_safe_not_in,
                               suggest_fix, value_repair)
from sqlnb.agent.prompts import format_attempt, model_messages, not_a_question_note
from sqlnb.agent.protocol import parse_reply, real_questions
from sqlnb.agent.state import UNRECOVERABLE_KINDS, AgentState, Attempt
from sqlnb.sql.normalize import normalize_sql


@dataclass
class AgentSettings:
    """How the agent runs; the front doors expose these as options and config."""

    preview_rows: int = 5  # rows of each result shown to the model
    share_data: bool = True  # False: no rows or sample values ever reach the model
    row_cap: int = 1000  # rows fetched per attempt
    statement_timeout: float | None = None  # None: the connection's
    rendering: str = "fresh"  # "fresh" or "chat" (see prompts.py)
    sample_values: bool = True  # example values of text columns in the schema context
    value_hints: bool = True  # existing values when a string filter matched nothing
    context_budget: int = 6000  # tokens of schema context
    join_paths: bool = False  # also list foreign keys as "a.x = b.y" join paths
    # After a failed query: besides the model's own correction, draw this many fresh
    # drafts of the question (the first prompt, sampled at retry_temperature); execute
    # runs them all and keeps the result most of them agree on.  0: the correction only.
    # None: per kind of model (default_retry_drafts): 3 for a local one, 0 for a hosted one.
    retry_drafts: int | None = None
    retry_temperature: float = 0.7
    # The first answer: besides the model's own reply, up to this many drafts of it
    # (sampled at first_temperature), each run read-only as it comes, until two of them
    # agree on a non-empty result that no other draft contradicts as often (adaptive
    # self-consistency); the result most drafts gave is kept, without a review call.
    # 0: the model's reply alone, reviewed by the model.  None: per kind of model
    # (default_first_drafts): 3 for a local one, 0 for a hosted one.
    first_drafts: int | None = None
    first_temperature: float = 0.7
    # The memory's accepted answers of this database (examples), for a model that drafts
    # its first answer (first_drafts, a local one by default): shown only when its own
    # answer is rated low (or none is found), in a second pass of the turn that starts over
    # from the conversation as it was (a similar earlier answer can lead a small model to
    # copy its shape; on every stored benchmark answer, starting over beat the first answer
    # where it was rated low and lost to it where it was rated medium or high).  False, or
    # a model without drafts (it cannot be rated): shown from the first call on.
    memory_when_unsure: bool = True
    # A draft that shows an id where the question asks for the thing it identifies
    # ("How many employees work in each region?" answered with region_id) shows the
    # referenced row's name instead, when that runs and keeps every row (hints.label_ids).
    names_for_ids: bool = True
    # A draft whose JOIN compares columns no foreign key links, where the catalog says
    # how the two tables are linked, is joined along the foreign key instead (the one key
    # between them, or the one table linking them), when that runs (hints.link_joins).
    link_joins: bool = True
    # A draft filtering on a stored value the question does not name, where the question
    # names exactly one other value of that column (Type = 'STUDENT' for "senior tickets",
    # 'SENIOR' stored), filters on the named one instead, when that finds rows
    # (hints.named_value_swap; needs value_hints and share_data: it reads stored values).
    named_values: bool = True
    # A draft answering a question about things that have none of something ("students
    # who do not have a cat") by joining their rows and filtering them on the other value
    # (pettype <> 'cat': every student with any other pet) asks for the things' keys
    # NOT IN those that do have one instead, when that runs (hints.negated_join).
    negations: bool = True
    # A draft that leaves out a category the question names ("Which cities have more than
    # three active members?" counted over every member, status 'ACT' stored) filters on it,
    # when that finds rows (hints.named_value_filter; needs value_hints and share_data).
    named_filters: bool = True
    # A draft comparing rows with the average of a subset of them ("wines that cost more
    # than the average price of red wines") that filters the compared rows on the subset
    # too lists them all, when that finds rows (hints.average_subset_filter).
    subset_averages: bool = True
    # A draft answering a question about things that have both of two values among their
    # rows ("customers who ordered both cakes and savoury products") with one filter for
    # either value (cat IN ('CAK', 'SAV')) or for both on one row asks for each value apart,
    # joined by INTERSECT, when that finds rows (hints.both_values_intersect).
    intersections: bool = True
    # Refuse to start on a connection whose credentials may write, or whose write access
    # sqlnb could not find out (sqlnb.adapters.privileges): only a read-only role (or a
    # --readonly file connection) is asked.  The agent's own queries are read-only either way.
    require_readonly_role: bool = False


# Retry drafts per kind of model, when not set.  Local models (llama.cpp in-process, Ollama,
# an OpenAI-compatible server on this machine; scripted ones stand in for them in tests):
# 3, measured on Spider dev with the 1.5B local model (agent EX 67.6% with the drafts, 59.5%
# without: its correction mostly repeats the failing query); their cost is time.  Hosted
# models: 0, since every draft is a paid call and no gain was measured for them.
LOCAL_RETRY_DRAFTS = 3
HOSTED_RETRY_DRAFTS = 0
# Drafts of the first answer, when not set: 3 for a local model.  Measured on the 33 of
# 160 held-out Spider questions where the round drew a fourth draft: with 3 the agent
# answered as many of them right (13) with 24 fewer calls (2.90 instead of 3.05 per
# question over all 160).
LOCAL_FIRST_DRAFTS = 3
# the first round stops drawing after this many drafts when none of their queries found
# anything (failed or empty)
FRUITLESS_DRAWS_STOP = 3
HOSTED_FIRST_DRAFTS = 0
_LOCAL_PROVIDERS = ("llamacpp", "scripted", "ollama")
_LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "0.0.0.0")


def default_retry_drafts(client: Any) -> int:
    """How many retry drafts a model gets when ``AgentSettings.retry_drafts`` is None: by
    the provider of its name (``ModelClient.name``) and, for an OpenAI-compatible model,
    whether its server is on this machine."""
    return LOCAL_RETRY_DRAFTS if is_local_model(client) else HOSTED_RETRY_DRAFTS


def default_first_drafts(client: Any) -> int:
    """How many drafts of the first answer a model gets when ``AgentSettings.first_drafts``
    is None: a local model's drafts cost time only (its prompt prefix is cached), a hosted
    model's each cost a paid call."""
    return LOCAL_FIRST_DRAFTS if is_local_model(client) else HOSTED_FIRST_DRAFTS


def is_local_model(client: Any) -> bool:
    """Whether ``client``'s model runs on this machine: by the provider of its name and,
    for an OpenAI-compatible model, where its server is."""
    from urllib.parse import urlsplit

    provider = str(getattr(client, "name", "") or "").partition(":")[0].strip().lower()
    if provider in _LOCAL_PROVIDERS:
        return True
    model = getattr(client, "model", None)
    for attr in ("openai_api_base", "base_url"):
        url = getattr(model, attr, None)
        if isinstance(url, str) and url:
            try:
                host = urlsplit(url).hostname or ""
            except ValueError:
                host = ""
            if host in _LOCAL_HOSTS:
                return True
    return False


@dataclass
class AgentContext:
    """What a run needs besides its state (not checkpointed)."""

    model: Any  # sqlnb.agent.models.ModelClient: invoke(messages) -> (text, usage)
    adapter: Adapter
    catalog: Catalog | None = None
    settings: AgentSettings = field(default_factory=AgentSettings)
    results: dict[int, Result] = field(default_factory=dict)  # attempt n -> its result
    distinct_values: Callable[[Any, str], list] | None = None
    stop: Any = None  # sqlnb.agent.stop.StopToken: the turn ends as "stopped" once set
    # statements the first round already ran (sql -> (sql, outcome, seconds)): the execute
    # node records them instead of running them again
    prerun: dict[str, tuple] = field(default_factory=dict)


# ---------------------------------------------------------------------------
# nodes
# ---------------------------------------------------------------------------

def generate(state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
    """Call the model with the dialect's system prompt and what it should see now.

    After a failed query, ``settings.retry_drafts`` more replies are drawn from the
    question's first prompt at ``retry_temperature``: with the correction they are the
    candidates the execute node chooses from.  Measured on Spider with a small local
    model, its correction mostly repeats the failing query, while fresh drafts that run
    are mostly right."""
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
            together = ctx.model.invoke_many(
                messages, [{"temperature": None}] + [
                    {"temperature": s.first_temperature, "seed": _draft_seed(state, j)}
                    for j in range(TOGETHER_DRAFTS)])
            (text, call_usage), drawn = together[0], [t for t, _ in together[1:]]
            for _, u in together:
                usage = add_usage(usage, u)
        else:
            text, call_usage = ctx.model.invoke(messages)
            usage = add_usage(usage, call_usage)
        reply = parse_reply(text)
        not_a_question = None
        if reply.clarify is not None and drafted(state.get("attempts") or []):
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
        first = None
        if not state.get("attempts") and iteration == 1:
            first, usage = _first_round(state, reply, messages, ctx, usage, drawn)
    except errors.SqlnbError as exc:
        return {"iteration": iteration, "model_error": str(exc), "reply": None, "last_step": "generate",
                "usage": add_usage(usage, {"failed_calls": 1})}
    except Exception as exc:  # a provider's own exception that escaped the client
        return {"iteration": iteration, "model_error": f"{type(exc).__name__}: {exc}",
                "reply": None, "last_step": "generate",
                "usage": add_usage(usage, {"failed_calls": 1})}
    out = {"text": text, "sql": reply.sql, "final": reply.final, "clarify": reply.clarify}
    if not_a_question:
        out["not_a_question"] = not_a_question  # the next prompt says so (prompts.py)
    if len(pool) > 1 or (pool and pool[0] != reply.sql):
        # several candidates, or the model's own reply repeated a failed query or had
        # none and a draft stands in; nothing is final before the model saw its result
        out.update(sql=pool[0], final=False, candidates=pool)
    if first:
        # no candidates: the drafts wrote no query, and asking back is what they agree on
        out.update(sql=(first["candidates"] or [None])[0], final=False, candidates=first["candidates"],
                   weights=first["weights"], first_round=True, draws=first["draws"],
                   clarify=first["clarify"])
        for part in ("repairs", "nulls", "labels", "links", "swaps", "filters", "averages", "intersections",
                     "negations"):
            if first.get(part):
                out[part] = first[part]
        if reply.clarify is not None and first["clarify"] is None:
            out["clarify_overruled"] = True  # most drafts agreed on an answer instead
    said: list[Any] = [AIMessage(content=text)]
    if not_a_question and s.rendering == "chat":
        said.append(HumanMessage(content=not_a_question_note(not_a_question, state)))
    return {
        "messages": said,
        "iteration": iteration,
        "reply": out,
        "usage": usage,
        "last_step": "generate",
    }


def _retry_candidates(state: AgentState, reply: Any, ctx: AgentContext, iteration: int,
                      usage: dict[str, float]) -> tuple[list[str], dict[str, float]]:
    """After a failed attempt: the reply's SQL, the failed query with the names clearly
    meant (the hint's suggestion) and fresh drafts of the question, without any query that
    already failed or repeats another candidate (none when not retrying).  A draft call
    that fails ends the drafting; the candidates so far stand."""
    s = ctx.settings
    attempts = state.get("attempts") or []
    drafts = s.retry_drafts if s.retry_drafts is not None else default_retry_drafts(ctx.model)
    if (drafts <= 0 or not attempts or attempts[-1].get("ok")
            or reply.clarify is not None or not getattr(ctx.model, "samples", False)
            or attempts[-1].get("error_kind") in UNRECOVERABLE_KINDS | {"cancelled", "read_only"}):
        return [], usage
    if drafted(attempts):
        # the first round already sampled the first prompt up to 1 + first_drafts times:
        # more samples of it add calls, not new answers; the correction (which saw the
        # error) and the hint's suggestion are the candidates
        drafts = 0
    dialect = state.get("dialect", "")
    failed = [c["sql"] for a in attempts for c in (a.get("candidates") or [a]) if not c.get("ok")]
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
            text, call_usage = ctx.model.invoke(first, temperature=s.retry_temperature,
                                                seed=iteration * 1000 + j, draft=True)
        except Exception:
            usage = add_usage(usage, {"failed_calls": 1, "calls": 0})
            break
        usage = add_usage(usage, call_usage)
        add(parse_reply(text).sql)
    return pool, usage


TOGETHER_DRAFTS = 2  # drafts written beside the first answer, where that costs little


def _drafts_together(state: AgentState, ctx: AgentContext, iteration: int) -> bool:
    """Whether the first answer is written together with its first drafts: a model that
    writes replies side by side (llama.cpp in-process), a first round that will draw
    drafts, and only the question's first call."""
    return (iteration == 1 and not state.get("attempts") and _first_draft_cap(ctx) >= TOGETHER_DRAFTS
            and bool(getattr(ctx.model, "samples", False))
            and getattr(ctx.model, "side_by_side", False) is True)


def first_draft_cap(settings: AgentSettings, client: Any) -> int:
    """How many drafts the first round may draw: the setting, else by kind of model."""
    return settings.first_drafts if settings.first_drafts is not None else default_first_drafts(client)


def _first_draft_cap(ctx: AgentContext) -> int:
    return first_draft_cap(ctx.settings, ctx.model)


def _draft_seed(state: AgentState, j: int) -> int:
    """The seed of the question's ``j``-th draft: reproducible, yet not the same random
    stream for every question (a fixed seed made one draft pick the same unlikely first
    token)."""
    return zlib.crc32(f"{state.get('question', '')}#{j}".encode("utf-8"))


def _first_round(state: AgentState, reply: Any, messages: list, ctx: AgentContext,
                 usage: dict[str, float], drawn: Sequence[str] = ()
                 ) -> tuple[dict[str, Any] | None, dict[str, float]]:
    """The first answer as a vote of drafts (adaptive self-consistency): the model's own
    reply and up to ``first_drafts`` replies sampled from the same prompt, each query run
    read-only as it comes, drawing stops as soon as two drafts agree on a non-empty result
    that leads every other result.  ``drawn``: drafts already written (beside the reply),
    all taken before any more is drawn.  A clarification stands only when more drafts asked
    back than agreed on an answer.  When every query ran but came back empty, a query with
    a filter value corrected to the stored one (case, spacing, one near match), or with the
    NULLs left out of its ``NOT IN`` lists, joins the vote.  None when the model does not
    sample or no drafts are configured."""
    s = ctx.settings
    cap = _first_draft_cap(ctx)
    if cap <= 0 or not getattr(ctx.model, "samples", False):
        return None, usage
    dialect = state.get("dialect", "")
    order: list[str] = []  # normalised SQL, first seen first
    sqls: dict[str, str] = {}
    weights: dict[str, int] = {}
    prints: dict[str, Any] = {}  # normalised SQL -> result fingerprint (None: empty/failed)
    asked: list[list[str]] = []  # the clarifying questions of drafts that asked back
    corrected: dict[str, str] = {}  # a draft's normalised SQL -> its corrected query's
    labelled: dict[str, str] = {}  # a query showing names for ids -> what it replaced
    linked: dict[str, str] = {}  # a query joined along foreign keys -> what it replaced
    swapped: dict[str, str] = {}  # a query filtering on the value the question names -> what it replaced
    negated: dict[str, str] = {}  # a query asking for keys NOT IN those that have one -> what it replaced
    filtered: dict[str, str] = {}  # a query filtering on the category the question names -> what it added
    averaged: dict[str, str] = {}  # a query leaving a subset's filter to its average -> what it dropped
    intersected: dict[str, str] = {}  # a query asking for each of two values apart -> what it split
    lookups = ctx.distinct_values is not None and s.share_data and s.value_hints
    shown = "\n".join(str(m.content) for m in messages if not isinstance(m, SystemMessage))
    draws = 0

    def take(r: Any) -> None:
        nonlocal draws
        draws += 1
        if r.clarify is not None:
            # a draft's CLARIFY counts as asking back only when it asks something: not
            # when it echoes the question or the prompt or carries SQL (as for the reply:
            # see generate); such a draft wrote no query
            questions, _ = real_questions(r, state.get("question", ""), shown)
            if questions:
                asked.append(questions)
            return
        if not r.sql:
            return
        key = normalize_sql(r.sql, dialect)
        for _ in range(8):  # a name corrected, a join linked, a value swapped or added, an average's
            # filter left to it, two values asked for apart, a negation, names for ids
            key = corrected.get(key, key)
        if key in weights:
            weights[key] += 1
            return
        sql, run = r.sql, _run(r.sql, ctx)
        if isinstance(run[1], errors.SqlnbError) and (fixed := _name_fixes(sql, run[1], dialect, ctx)):
            # a draft that failed on a name the hints can correct (a column taken from
            # the wrong table of the query, a misspelling, a join on a column its table
            # lacks): its corrected query stands in for it, without a model call, when
            # that runs
            fix, fix_run = fixed
            fix_key = normalize_sql(fix, dialect)
            if isinstance(fix_run[1], Result):
                corrected[key] = fix_key
                if fix_key in weights:
                    weights[fix_key] += 1
                    return
                key, sql, run = fix_key, fix, fix_run
        # rewrites that stand in for a draft that ran, without a model call, each when its
        # own query runs: joined along the foreign keys where it joins on columns no key
        # links; filtering on the value the question names where it filters on one the
        # question does not name; showing names where it shows ids the question asks the
        # names of (the same rows).  Each keeps what it changed, and what the ones before it did.
        question = state.get("question", "")
        rewrites = (
            # hints.link_joins: when it runs
            (linked, s.link_joins, lambda: link_joins(sql, dialect, ctx.catalog), lambda r: True),
            # hints.named_value_swap: when it finds rows
            (swapped, s.named_values and lookups,
             lambda: named_value_swap(sql, dialect, ctx.catalog, question, ctx.distinct_values),
             lambda r: bool(r.row_count)),
            # hints.named_value_filter: when it finds rows
            (filtered, s.named_filters and lookups,
             lambda: named_value_filter(sql, dialect, ctx.catalog, question, ctx.distinct_values),
             lambda r: bool(r.row_count)),
            # hints.average_subset_filter: when it finds rows
            (averaged, s.subset_averages, lambda: average_subset_filter(sql, dialect, ctx.catalog, question),
             lambda r: bool(r.row_count)),
            # hints.both_values_intersect: when it finds rows
            (intersected, s.intersections, lambda: both_values_intersect(sql, dialect, question),
             lambda r: bool(r.row_count)),
            # hints.negated_join: when it runs
            (negated, s.negations, lambda: negated_join(sql, dialect, ctx.catalog, question), lambda r: True),
            # hints.label_ids, for a draft with rows: when it returns as many
            (labelled, s.names_for_ids,
             lambda: label_ids(sql, dialect, ctx.catalog, question) if run[1].row_count else None,
             lambda r: r.row_count == run[1].row_count))
        for notes, on, rewrite, keeps in rewrites:
            if not on or not isinstance(run[1], Result) or not (new := _stand_in(rewrite, ctx, keeps)):
                continue
            new_key = normalize_sql(new[0], dialect)
            corrected[key] = new_key
            for earlier in (linked, swapped, filtered, averaged, intersected, negated):
                if sql in earlier:
                    earlier[new[0]] = earlier[sql]
            notes[new[0]] = new[2]
            if new_key in weights:
                weights[new_key] += 1
                return
            key, sql, run = new_key, new[0], new[1]
        order.append(key)
        sqls[key], weights[key] = sql, 1
        ctx.prerun[sql] = run
        prints[key] = _fingerprint(run[1]) if isinstance(run[1], Result) else None

    def tally() -> list[int]:
        groups: dict[Any, int] = {}
        for key in order:
            if prints[key] is not None:
                groups[prints[key]] = groups.get(prints[key], 0) + weights[key]
        return sorted(groups.values(), reverse=True)

    def settled() -> bool:
        t = tally()
        top = t[0] if t else 0
        second = t[1] if len(t) > 1 else 0
        return top >= 2 and top > second and top > len(asked)

    take(reply)
    for text in drawn[:cap]:
        take(parse_reply(text))
    for j in range(len(drawn), cap):
        if settled():
            break
        if len(asked) * 2 > cap + 1:
            # most of the drafts the round may draw ask back: a clarification (asking the
            # user is costly, so it takes a majority of the whole round, not of the
            # drafts so far)
            break
        if draws >= FRUITLESS_DRAWS_STOP and not asked and all(prints[k] is None for k in order):
            # no draft's query found anything (each failed, its names corrected included,
            # or came back empty) and none asked back: more samples of the same prompt
            # tend to go the same way; a stored value for a filter (below) or the
            # correction, which sees the error or the empty result with the values there
            # are, goes on from here
            break
        seed = _draft_seed(state, j)
        text, call_usage = ctx.model.invoke(messages, temperature=s.first_temperature, seed=seed,
                                            draft=True)
        usage = add_usage(usage, call_usage)
        take(parse_reply(text))
    repairs: dict[str, str] = {}  # a query with stored filter values put in -> what was replaced
    nulls: dict[str, str] = {}  # a query with NULLs left out of its NOT IN lists -> which
    if order and all(prints[k] is None for k in order):
        # every query failed or found nothing: the ones that ran with a filter value
        # corrected to the stored one, or with the NULLs left out of a NOT IN list (which
        # matches nothing once it holds a NULL), join the vote
        ran = [k for k in order if isinstance(ctx.prerun[sqls[k]][1], Result)]
        for key in ran[:2]:
            fixed_sql = sqls[key]
            by_value: str | None = None
            by_nulls: str | None = None
            if lookups:
                if (fixed := value_repair(fixed_sql, dialect, ctx.catalog, ctx.distinct_values)) is not None:
                    fixed_sql, by_value = fixed
            if (null_safe := null_safe_not_in(fixed_sql, dialect)) is not None:
                fixed_sql, by_nulls = null_safe[0], f"NULLs left out of NOT IN ({', '.join(null_safe[1])})"
            new_key = normalize_sql(fixed_sql, dialect)
            if new_key in weights:
                continue
            order.append(new_key)
            sqls[new_key], weights[new_key] = fixed_sql, weights[key]
            run = _run(fixed_sql, ctx)
            ctx.prerun[fixed_sql] = run
            prints[new_key] = _fingerprint(run[1]) if isinstance(run[1], Result) else None
            if by_value:
                repairs[fixed_sql] = by_value
            if by_nulls:
                nulls[fixed_sql] = by_nulls
    top = (tally() or [0])[0]
    # drafts that answered but found nothing (their query failed or came back empty):
    # they took the question as answerable, so asking back must outweigh them too (an
    # empty result or a failed query is no ambiguity of the question)
    fruitless = sum(weights[k] for k in order if prints[k] is None)
    clarify = None
    # more drafts asking back than agreeing on an answer (a tie is answered: the query
    # found goes with a confidence, while asking back costs the user a turn), and at
    # least as many as found nothing
    if asked and len(asked) > top and len(asked) >= fruitless:
        clarify = reply.clarify if reply.clarify else asked[0]
    if not order:
        return ({"candidates": [], "weights": [], "draws": draws, "clarify": clarify}
                if clarify is not None else None), usage
    return {"candidates": [sqls[k] for k in order], "weights": [weights[k] for k in order],
            "draws": draws, "clarify": clarify, "repairs": repairs, "nulls": nulls,
            "labels": {sqls[k]: labelled[sqls[k]] for k in order if sqls[k] in labelled},
            "links": {sqls[k]: linked[sqls[k]] for k in order if sqls[k] in linked},
            "swaps": {sqls[k]: swapped[sqls[k]] for k in order if sqls[k] in swapped},
            "filters": {sqls[k]: filtered[sqls[k]] for k in order if sqls[k] in filtered},
            "averages": {sqls[k]: averaged[sqls[k]] for k in order if sqls[k] in averaged},
            "intersections": {sqls[k]: intersected[sqls[k]] for k in order if sqls[k] in intersected},
            "negations": {sqls[k]: negated[sqls[k]] for k in order if sqls[k] in negated}}, usage


def execute(state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
    """Run the proposed SQL through the read-only guard, then in a read-only session with
    a row cap and the statement timeout; append the outcome as a tool-result message.

    Several candidates (after a failure, see :func:`generate`) all run the same way; the
    attempt keeps the one whose result most of them agree on (a non-empty result before
    an empty one, then the earliest), or the first candidate's error when none ran."""
    ctx = runtime.context
    reply = state.get("reply") or {}
    attempts = list(state.get("attempts") or [])
    n = len(attempts) + 1
    dialect = state.get("dialect", "")
    candidates = reply.get("candidates") or [reply.get("sql") or ""]
    weights = list(reply.get("weights") or [1] * len(candidates))
    runs = [ctx.prerun.pop(sql, None) or _run(sql, ctx) for sql in candidates]
    ctx.prerun.clear()
    votes = _votes(runs, weights) if len(runs) > 1 or weights[0] > 1 else [0]
    chosen = _vote(runs, votes)
    sql, outcome, elapsed = runs[chosen]
    attempt = _attempt(n, sql, outcome, elapsed, dialect, ctx)
    if len(runs) > 1 or weights[0] > 1:
        groups = _groups(runs)
        attempt["candidates"] = [
            {"sql": c, "ok": not isinstance(o, errors.SqlnbError),
             "error_kind": o.kind if isinstance(o, errors.SqlnbError) else None,
             "row_count": _row_count(o), "weight": weights[i], "group": groups[i],
             "votes": votes[i], "chosen": i == chosen}
            for i, (c, o, _) in enumerate(runs)]
    if reply.get("first_round"):
        attempt["first_round"] = True  # type: ignore[typeddict-unknown-key]
        attempt["draws"] = reply.get("draws") or sum(weights)  # type: ignore[typeddict-unknown-key]
    # what the first round changed in the chosen query (its confidence reasons say so)
    for part, field in (("repairs", "repaired"), ("labels", "named"), ("links", "linked"),
                        ("nulls", "null_safe"), ("swaps", "swapped"), ("filters", "filtered"),
                        ("averages", "averaged"), ("intersections", "intersected"),
                        ("negations", "negated")):
        if (done := (reply.get(part) or {}).get(sql)):
            attempt[field] = done  # type: ignore[literal-required]
    if attempt["ok"]:
        try:
            doubts = answer_doubts(sql, dialect, ctx.catalog, state.get("question", ""), attempt.get("row_count"))
        except Exception:  # a query shape the checks do not know: no doubt raised
            doubts = []
        if doubts:
            attempt["doubts"] = doubts  # type: ignore[typeddict-unknown-key]
    failures = 0 if attempt["ok"] else state.get("consecutive_failures", 0) + 1
    return {
        "attempts": attempts + [attempt],
        "consecutive_failures": failures,
        "messages": [ToolMessage(content=format_attempt(attempt, with_choice=True),
                                 tool_call_id=f"attempt-{n}-{uuid.uuid4().hex[:8]}", name="run_sql")],
        "last_step": "execute",
    }


def drafted(attempts: list[Attempt]) -> bool:
    """Whether this turn's first answer was a vote of drafts (see :func:`_first_round`)."""
    return any(a.get("first_round") for a in attempts)


def _name_fix(sql: str, exc: errors.SqlnbError, dialect: str, ctx: AgentContext) -> str | None:
    """The failed query with the names clearly meant (:func:`~sqlnb.agent.hints.suggest_fix`),
    or, for a JOIN on a column its table does not have, joined along the foreign keys
    (:func:`~sqlnb.agent.hints.link_joins`, with ``link_joins`` on); None otherwise."""
    if exc.kind not in ("column_not_found", "table_not_found"):
        return None
    fixed = suggest_fix(exc.kind, f"{exc.message} {exc.engine_message or ''}", sql, dialect, ctx.catalog)
    if fixed is None and exc.kind == "column_not_found" and ctx.settings.link_joins:
        linked = link_joins(sql, dialect, ctx.catalog, allow_missing=True)
        fixed = linked[0] if linked else None
    return fixed


# corrections of names tried one after another on a draft that fails: one name corrected
# can show the next (a join linked through the table that has the column, then the
# column taken from that table)
NAME_FIX_STEPS = 3


def _name_fixes(sql: str, exc: errors.SqlnbError, dialect: str, ctx: AgentContext
                ) -> tuple[str, tuple[str, Any, float]] | None:
    """A failed draft's names corrected (:func:`_name_fix`) step by step, each step run,
    while the correction fails on another name: the last corrected query and its run, or
    None when no correction is clear."""
    out = None
    for _ in range(NAME_FIX_STEPS):
        fix = _name_fix(sql, exc, dialect, ctx)
        if fix is None or fix == sql:
            break
        run = ctx.prerun.get(fix) or _run(fix, ctx)
        out, sql = (fix, run), fix
        if not isinstance(run[1], errors.SqlnbError):
            break
        exc = run[1]
    return out


def _stand_in(rewrite: Callable[[], tuple[str, str] | None], ctx: AgentContext,
              keeps: Callable[[Result], bool]) -> tuple[str, tuple[str, Any, float], str] | None:
    """A draft's rewrite (a hints function: the new query and what it changed, or None),
    its run and what it changed, when the rewrite runs and its result ``keeps`` what it
    must; None otherwise (the draft stands as it is)."""
    try:
        fixed = rewrite()
    except Exception:  # a query shape the rewrite does not know
        fixed = None
    if fixed is None:
        return None
    run = ctx.prerun.get(fixed[0]) or _run(fixed[0], ctx)
    if not isinstance(run[1], Result) or not keeps(run[1]):
        return None
    ctx.prerun[fixed[0]] = run
    return fixed[0], run, fixed[1]


def _run(sql: str, ctx: AgentContext) -> tuple[str, Result | errors.SqlnbError, float]:
    """One statement through the guard and the read-only session: its result or error."""
    s = ctx.settings
    start = time.perf_counter()
    try:
        # readonly=True: the guard refuses writes before the database sees them, and the
        # statement runs in a read-only session scope of the connection
        outcome: Result | errors.SqlnbError = ctx.adapter.execute(
            sql, max_rows=s.row_cap, readonly=True, timeout=s.statement_timeout)
    except errors.SqlnbError as exc:
        outcome = exc
    return sql, outcome, time.perf_counter() - start


def _fingerprint(result: Result) -> tuple | None:
    """What two results must share to count as the same answer: their rows as a multiset
    (column names aside).  None for an empty result."""
    table = result.arrow
    if table is None or _nothing_found(result):
        return None
    cols = [col.to_pylist() for col in table.columns]
    rows = sorted((tuple(repr(_plain(v)) for v in row) for row in zip(*cols)))
    return (table.num_columns, tuple(rows))


def _votes(runs: list[tuple[str, Any, float]], weights: list[int] | None = None) -> list[int]:
    """For each run, how many drafts (``weights``: drafts per run, 1 each by default) gave
    the same non-empty result (0: failed or empty)."""
    w = weights or [1] * len(runs)
    prints = [_fingerprint(o) if isinstance(o, Result) else None for _, o, _ in runs]
    return [sum(w[j] for j, q in enumerate(prints) if q == p) if p is not None else 0
            for p in prints]


def _groups(runs: list[tuple[str, Any, float]]) -> list[int | None]:
    """For each run, the number of its result among the distinct non-empty results (None:
    failed or empty)."""
    prints = [_fingerprint(o) if isinstance(o, Result) else None for _, o, _ in runs]
    seen: list[Any] = []
    out: list[int | None] = []
    for p in prints:
        if p is None:
            out.append(None)
            continue
        if p not in seen:
            seen.append(p)
        out.append(seen.index(p))
    return out


def _nothing_found(result: Result) -> bool:
    """Whether a result found nothing: no rows, or one row of only zeros and NULLs (a count
    or sum over rows a filter did not match)."""
    table = result.arrow
    if table is None or table.num_rows == 0:
        return True
    if table.num_rows != 1:
        return False
    values = [col[0].as_py() for col in table.columns]
    return all(v is None or (isinstance(v, (int, float, decimal.Decimal)) and not isinstance(v, bool)
                             and v == 0) for v in values)


def _row_count(outcome: Any) -> int | None:
    if not isinstance(outcome, Result):
        return None
    return len(outcome.arrow) if outcome.arrow is not None else max(outcome.row_count, 0)


def _vote(runs: list[tuple[str, Any, float]], votes: list[int]) -> int:
    """The index of the run to keep: most votes (see :func:`_votes`), then a result (even
    empty) over an error, then the earliest."""
    return min(range(len(runs)),
               key=lambda i: (-votes[i], not isinstance(runs[i][1], Result), i))


def _attempt(n: int, sql: str, outcome: Result | errors.SqlnbError, elapsed: float,
             dialect: str, ctx: AgentContext) -> Attempt:
    """The attempt record of one run: the result's shape and preview, or the classified
    error with hints; the result itself goes to the run's context."""
    s = ctx.settings
    attempt: Attempt = {"n": n, "sql": sql, "ok": False, "error_kind": None, "error": None,
                        "hint": None, "suggestion": None, "row_count": None, "truncated": False, "columns": [],
                        "preview": [], "elapsed": 0.0}
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
            attempt["hint"] = ("only read-only queries run here; this one writes (e.g. through a "
                               "function it calls): never write data")
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
            attempt["data_shared"] = False  # type: ignore[typeddict-unknown-key]
        if _nothing_found(result):
            attempt["nothing_found"] = True  # type: ignore[typeddict-unknown-key]
        if attempt.get("nothing_found"):
            hints = []
            if s.share_data and s.value_hints and ctx.distinct_values:
                hints.append(empty_result_hint(sql, dialect, ctx.catalog, ctx.distinct_values))
            if (null_safe := null_safe_not_in(sql, dialect)) is not None:
                # from the query alone: NOT IN over a list that holds a NULL matches nothing
                hints.append(f"NOT IN matches no row once its list holds a NULL: add IS NOT NULL "
                             f"to the subquery ({', '.join(null_safe[1])})")
            attempt["hint"] = "; ".join(h for h in hints if h) or None
        elif attempt["row_count"] and attempt["row_count"] > 1:
            attempt["hint"] = repeated_rows_hint(result)
            if attempt["hint"]:
                attempt["repeated_rows"] = True  # type: ignore[typeddict-unknown-key]
    attempt["elapsed"] = round(elapsed, 6)
    return attempt


def decide_next_step(state: AgentState, runtime: Runtime[AgentContext] | None = None) -> dict[str, Any]:
    """The rules of the issue, in order; ends the turn with a status and a stop reason or
    says where to go next."""
    stop = getattr(getattr(runtime, "context", None), "stop", None)
    if stop is not None and stop.stopped:  # the user stopped the turn (Stop button)
        return _end(state, "stopped", status="stopped")
    if state.get("model_error"):
        return _end(state, "model_error")
    reply = state.get("reply") or {}
    attempts = state.get("attempts") or []
    last = attempts[-1] if attempts else None
    if state.get("last_step") == "generate":
        if reply.get("clarify") is not None:
            if reply.get("candidates"):
                # drafts wrote queries although most asked back: run them first, so
                # that the best query found goes with the questions
                return {"next_step": "execute"}
            return _end(state, "clarification", status="needs_clarification",
                        questions=list(reply["clarify"]))
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
    if reply.get("clarify") is not None:
        return _end(state, "clarification", status="needs_clarification",
                    questions=list(reply["clarify"]))
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
    return END


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def _next_or_end(state: AgentState) -> dict[str, Any]:
    if state.get("iteration", 0) >= state.get("max_iterations", 5):
        return _end(state, "max_iterations")
    return {"next_step": "generate"}


def _end(state: AgentState, stop_reason: str, *, status: str | None = None,
         questions: list[str] | None = None) -> dict[str, Any]:
    attempts = state.get("attempts") or []
    ok = [a for a in attempts if a.get("ok")]
    if status is None:
        status = "success" if ok else "failed"
    # a clarification after a successful query keeps that query as the best answer so far
    final_sql = ok[-1]["sql"] if ok and status in ("success", "needs_clarification") else None
    turn = {"question": state.get("question", ""), "sql": final_sql, "status": status,
            "questions": questions or []}
    return {"next_step": "end", "status": status, "stop_reason": stop_reason,
            "final_sql": final_sql, "questions": questions or [],
            "turns": list(state.get("turns") or []) + [turn]}


def _same_sql(a: str, b: str, dialect: str) -> bool:
    return normalize_sql(a, dialect) == normalize_sql(b, dialect)


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


_READ_ONLY_SESSION = re.compile(r"read[- ]only transaction|readonly database|query_only", re.I)


def _read_only_refusal(exc: errors.SqlnbError) -> bool:
    """Whether the engine refused a write because the statement ran read-only."""
    return exc.kind == "permission" and bool(
        _READ_ONLY_SESSION.search(f"{exc.message} {exc.engine_message or ''}"))


# a quoted stretch of an error message (not the apostrophe of "doesn't")
_QUOTED = re.compile(r"(?<!\w)(?:'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\")(?!\w)")


def _without_values(text: str | None, sql: str, catalog: Catalog | None) -> str | None:
    """An error message with data sharing off: quoted text that is neither written in the
    query nor a (dotted) name from the catalog is masked, since engines quote the offending
    value in some errors (a failed cast: invalid input syntax for type integer: "Ada")."""
    if not text:
        return text
    names: set[str] = set()
    for t in (catalog.tables if catalog is not None else []):
        names.update(n.lower() for n in (t.name, t.schema or "") if n)
        names.update(c.name.lower() for c in t.columns)
    low_sql = sql.lower()

    def in_query(part: str) -> bool:
        return re.search(rf"(?<!\w){re.escape(part)}(?!\w)", low_sql) is not None

    def mask(m: re.Match) -> str:
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


def repeated_rows_hint(result: Result) -> str | None:
    """Say so when rows of a result repeat (a join that multiplies rows, a missing DISTINCT
    or GROUP BY): counts only, no values."""
    table = result.arrow
    if table is None or table.num_columns == 0 or table.num_rows < 2:
        return None
    try:
        distinct = table.group_by(table.column_names, use_threads=False).aggregate([]).num_rows
    except Exception:  # a column type Arrow cannot group by (lists, maps, ...)
        return None
    if distinct == table.num_rows:
        return None
    more = " fetched" if result.truncated else ""
    return (f"only {distinct} of the {table.num_rows} rows{more} are different; the others repeat "
            "them (a join that multiplies rows, or a missing DISTINCT or GROUP BY?)")


def preview_rows(result: Result, n: int) -> list[list[Any]]:
    """The first ``n`` rows of a result as plain values."""
    if result.arrow is None or n <= 0:
        return []
    head = result.arrow.slice(0, n)
    cols = [col.to_pylist() for col in head.columns]
    return [[_plain(v) for v in row] for row in zip(*cols)]


def _plain(v: Any) -> Any:
    """A preview value as plain, checkpointable data."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if v == v else None
    if isinstance(v, decimal.Decimal):
        return int(v) if v == v.to_integral_value() else float(v)
    if isinstance(v, (_dt.date, _dt.datetime, _dt.time)):
        return v.isoformat()
    if isinstance(v, bytes):
        return v[:32].hex() + ("..." if len(v) > 32 else "")
    return str(v)
