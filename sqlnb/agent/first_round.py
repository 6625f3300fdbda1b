"""The first answer as a vote of drafts (adaptive self-consistency).

The model's own reply and up to ``first_drafts`` replies sampled from the same prompt are
each run read-only as they come; drawing stops as soon as two drafts agree on a non-empty
result that leads every other result.  A draft that fails on a name the repairs can
correct, or that an answer rewrite (:data:`sqlnb.agent.repairs.REWRITES`) improves, has a
stand-in: the corrected or rewritten query, run without a model call, votes in its place.
A clarification stands only when more drafts asked back than agreed on an answer.  When
every query ran but came back empty, a query with a filter value corrected to the stored
one, or with the NULLs left out of its ``NOT IN`` lists, joins the vote.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from langchain_core.messages import BaseMessage, SystemMessage
from typing_extensions import NotRequired, TypedDict

from sqlnb import errors
from sqlnb.adapters import Result
from sqlnb.agent.execution import Fingerprint, Run, fingerprint, run_statement
from sqlnb.agent.protocol import Reply, parse_reply, real_questions
from sqlnb.agent.repairs import REWRITES, Draft, Rewrite
from sqlnb.agent.repairs.empty import null_safe_not_in, value_repair
from sqlnb.agent.repairs.joins import LINK_JOINS, link_joins
from sqlnb.agent.repairs.names import suggest_fix
from sqlnb.agent.settings import first_draft_cap
from sqlnb.agent.state import AgentState, add_usage
from sqlnb.sql.normalize import normalize_sql

if TYPE_CHECKING:
    from sqlnb.agent.nodes import AgentContext

# the first round stops drawing after this many drafts when none of their queries found
# anything (failed or empty)
FRUITLESS_DRAWS_STOP = 3
# corrections of names tried one after another on a draft that fails: one name corrected
# can show the next (a join linked through the table that has the column, then the
# column taken from that table)
NAME_FIX_STEPS = 3


class FirstRoundResult(TypedDict):
    """What the first round gives ``generate`` (:meth:`FirstRound.result`)."""

    candidates: list[str]  # the candidates' SQL, first seen first
    weights: list[int]  # the drafts behind each candidate
    draws: int  # the drafts drawn, the model's reply included
    # the questions for the user, when more drafts asked back than agreed on an answer
    clarify: list[str] | None
    # what changed in a candidate without a model call: a filter value put back as stored
    # (SQL -> what was replaced), the NULLs left out of its NOT IN lists (SQL -> which),
    # the answer rewrites that produced it (SQL -> rewrite name -> what it changed); absent
    # when no draft wrote a query
    repairs: NotRequired[dict[str, str]]
    nulls: NotRequired[dict[str, str]]
    rewrites: NotRequired[dict[str, dict[str, str]]]


def draft_seed(state: AgentState, j: int) -> int:
    """The seed of the question's ``j``-th draft: reproducible, yet not the same random
    stream for every question (a fixed seed made one draft pick the same unlikely first
    token)."""
    return zlib.crc32(f"{state.get('question', '')}#{j}".encode())


def first_round(
    state: AgentState,
    reply: Reply,
    messages: list[BaseMessage],
    ctx: AgentContext,
    usage: dict[str, float],
    drawn: Sequence[str] = (),
) -> tuple[FirstRoundResult | None, dict[str, float]]:
    """The first round of a question (:class:`FirstRound`): what it gives ``generate``
    (:meth:`FirstRound.result`) and the usage with its draft calls added.  ``drawn``:
    drafts already written beside the reply, all taken before any more is drawn.  None
    when the model does not sample or no drafts are configured."""
    if first_draft_cap(ctx.settings, ctx.model) <= 0 or not getattr(ctx.model, "samples", False):
        return None, usage
    round_ = FirstRound(state, reply, messages, ctx)
    usage = round_.draw(drawn, usage)
    round_.fill_empty()
    return round_.result(), usage


class FirstRound:
    """The drafts of one question's first answer, their stand-ins and the vote."""

    def __init__(self, state: AgentState, reply: Reply, messages: list[BaseMessage], ctx: AgentContext):
        self.state = state
        self.reply = reply
        self.messages = messages
        self.ctx = ctx
        self.settings = ctx.settings
        self.dialect = state.get("dialect", "")
        self.question = state.get("question", "")
        self.cap = first_draft_cap(ctx.settings, ctx.model)
        s = ctx.settings
        # stored values may be read (by the rewrites that need them, by the value repair)
        lookups = ctx.distinct_values is not None and s.share_data and s.value_hints
        self.stored_values = ctx.distinct_values if lookups else None
        self.shown = "\n".join(str(m.content) for m in messages if not isinstance(m, SystemMessage))
        self.order: list[str] = []  # the candidates' normalised SQL, first seen first
        self.sqls: dict[str, str] = {}  # normalised SQL -> the candidate's SQL
        self.weights: dict[str, int] = {}  # normalised SQL -> drafts that gave it
        self.prints: dict[
            str, Fingerprint | None
        ] = {}  # normalised SQL -> result fingerprint (None: empty/failed)
        self.asked: list[list[str]] = []  # the clarifying questions of drafts that asked back
        # a draft's normalised SQL -> its stand-in's (a name corrected, a rewrite), followed
        # to the end of the chain
        self.stand_ins: dict[str, str] = {}
        # a candidate's SQL -> the rewrites that produced it: name -> what it changed
        self.changes: dict[str, dict[str, str]] = {}
        self.repairs: dict[str, str] = {}  # a query with stored filter values put in -> what was replaced
        self.nulls: dict[str, str] = {}  # a query with NULLs left out of its NOT IN lists -> which
        self.draws = 0

    # -- the drafts ---------------------------------------------------------------------

    def draw(self, drawn: Sequence[str], usage: dict[str, float]) -> dict[str, float]:
        """Take the reply and the drafts already written, then draw more until the vote is
        settled, most of the round asks back, or the drafts find nothing; the usage with
        the draws' calls added."""
        self.take(self.reply)
        for text in drawn[: self.cap]:
            self.take(parse_reply(text))
        for j in range(len(drawn), self.cap):
            if self.settled():
                break
            if len(self.asked) * 2 > self.cap + 1:
                # most of the drafts the round may draw ask back: a clarification (asking
                # the user is costly, so it takes a majority of the whole round, not of the
                # drafts so far)
                break
            if self.draws >= FRUITLESS_DRAWS_STOP and not self.asked and self.found_nothing():
                # no draft's query found anything (each failed, its names corrected
                # included, or came back empty) and none asked back: more samples of the
                # same prompt tend to go the same way; a stored value for a filter
                # (fill_empty) or the correction, which sees the error or the empty result
                # with the values there are, goes on from here
                break
            text, call_usage = self.ctx.model.invoke(
                self.messages,
                temperature=self.settings.first_temperature,
                seed=draft_seed(self.state, j),
                draft=True,
            )
            usage = add_usage(usage, call_usage)
            self.take(parse_reply(text))
        return usage

    def take(self, r: Reply) -> None:
        """One draft (a parsed reply): a clarification it asks, or its query, run (or its
        stand-in's) and counted."""
        self.draws += 1
        if r.clarify is not None:
            # a draft's CLARIFY counts as asking back only when it asks something: not
            # when it echoes the question or the prompt or carries SQL (as for the reply:
            # see generate); such a draft wrote no query
            questions, _ = real_questions(r, self.question, self.shown)
            if questions:
                self.asked.append(questions)
            return
        if not r.sql:
            return
        key = self.stand_in_of(normalize_sql(r.sql, self.dialect))
        if key in self.weights:
            self.weights[key] += 1
            return
        sql, run = r.sql, run_statement(r.sql, self.ctx)
        if isinstance(run[1], errors.SqlnbError) and (fixed := self.name_fixes(sql, run[1])):
            # a draft that failed on a name the repairs can correct (a column taken from
            # the wrong table of the query, a misspelling, a join on a column its table
            # lacks): its corrected query stands in for it, without a model call, when
            # that runs
            fix, fix_run = fixed
            fix_key = normalize_sql(fix, self.dialect)
            if isinstance(fix_run[1], Result):
                self.stand_ins[key] = fix_key
                if fix_key in self.weights:
                    self.weights[fix_key] += 1
                    return
                key, sql, run = fix_key, fix, fix_run
        # the answer rewrites, in the registry's order, each on what the ones before it
        # left: a rewrite's query stands in for the draft when it runs and keeps what it
        # must, and keeps the record of what it and the ones before it changed
        for rewrite in REWRITES:
            if not isinstance(run[1], Result) or not self.may_run(rewrite):
                continue
            draft = Draft(
                sql=sql,
                dialect=self.dialect,
                catalog=self.ctx.catalog,
                question=self.question,
                result=run[1],
                stored_values=self.stored_values,
            )
            new = self.stand_in(rewrite, draft)
            if new is None:
                continue
            new_sql, new_run, change = new
            new_key = normalize_sql(new_sql, self.dialect)
            self.stand_ins[key] = new_key
            record = self.changes.setdefault(new_sql, {})
            record.update(self.changes.get(sql, {}))
            record[rewrite.name] = change
            if new_key in self.weights:
                self.weights[new_key] += 1
                return
            key, sql, run = new_key, new_sql, new_run
        self.order.append(key)
        self.sqls[key], self.weights[key] = sql, 1
        self.ctx.prerun[sql] = run
        self.prints[key] = fingerprint(run[1]) if isinstance(run[1], Result) else None

    def stand_in_of(self, key: str) -> str:
        """The end of the chain of stand-ins from the normalised SQL ``key`` (``key`` itself
        when it has none), followed until nothing changes; a chain that comes back to a
        query seen on it stops there."""
        seen = {key}
        while (nxt := self.stand_ins.get(key)) is not None and nxt not in seen:
            seen.add(nxt)
            key = nxt
        return key

    def may_run(self, rewrite: Rewrite) -> bool:
        """Whether ``rewrite`` is on, and has the stored values it reads."""
        return self.settings.rewrite_on(rewrite.name) and (
            not rewrite.needs_values or self.stored_values is not None
        )

    def stand_in(self, rewrite: Rewrite, draft: Draft) -> tuple[str, Run, str] | None:
        """``rewrite``'s query for ``draft``, its run and what it changed, when the query
        runs and its result keeps what it must; None otherwise (the draft stands as it
        is)."""
        try:
            proposal = rewrite.propose(draft)
        except Exception:  # a query shape the rewrite does not know
            proposal = None
        if proposal is None:
            return None
        new_sql, change = proposal
        run = self.ctx.prerun.get(new_sql) or run_statement(new_sql, self.ctx)
        if not isinstance(run[1], Result) or not rewrite.stands(run[1], draft.result):
            return None
        self.ctx.prerun[new_sql] = run
        return new_sql, run, change

    def name_fix(self, sql: str, exc: errors.SqlnbError) -> str | None:
        """The failed query with the names clearly meant (:func:`~sqlnb.agent.repairs.names.suggest_fix`),
        or, for a JOIN on a column its table does not have, joined along the foreign keys
        (:func:`~sqlnb.agent.repairs.joins.link_joins`, when ``link_joins`` is on); None
        otherwise."""
        if exc.kind not in ("column_not_found", "table_not_found"):
            return None
        fixed = suggest_fix(
            exc.kind, f"{exc.message} {exc.engine_message or ''}", sql, self.dialect, self.ctx.catalog
        )
        if fixed is None and exc.kind == "column_not_found" and self.settings.rewrite_on(LINK_JOINS.name):
            linked = link_joins(sql, self.dialect, self.ctx.catalog, allow_missing=True)
            fixed = linked[0] if linked else None
        return fixed

    def name_fixes(self, sql: str, exc: errors.SqlnbError) -> tuple[str, Run] | None:
        """A failed draft's names corrected (:meth:`name_fix`) step by step, each step run,
        while the correction fails on another name: the last corrected query and its run,
        or None when no correction is clear."""
        out = None
        for _ in range(NAME_FIX_STEPS):
            fix = self.name_fix(sql, exc)
            if fix is None or fix == sql:
                break
            run = self.ctx.prerun.get(fix) or run_statement(fix, self.ctx)
            out, sql = (fix, run), fix
            if not isinstance(run[1], errors.SqlnbError):
                break
            exc = run[1]
        return out

    # -- the vote -----------------------------------------------------------------------

    def tally(self) -> list[int]:
        """The drafts behind each non-empty result, most first."""
        groups: dict[Fingerprint, int] = {}
        for key in self.order:
            if (p := self.prints[key]) is not None:
                groups[p] = groups.get(p, 0) + self.weights[key]
        return sorted(groups.values(), reverse=True)

    def settled(self) -> bool:
        """Whether two drafts or more agree on a non-empty result that leads every other
        result and the drafts that asked back."""
        t = self.tally()
        top = t[0] if t else 0
        second = t[1] if len(t) > 1 else 0
        return top >= 2 and top > second and top > len(self.asked)

    def found_nothing(self) -> bool:
        """Whether every candidate so far failed or came back empty."""
        return all(self.prints[k] is None for k in self.order)

    def fill_empty(self) -> None:
        """When every query failed or found nothing: the ones that ran with a filter value
        corrected to the stored one (:func:`~sqlnb.agent.repairs.empty.value_repair`), or
        with the NULLs left out of a ``NOT IN`` list, which matches nothing once it holds a
        NULL (:func:`~sqlnb.agent.repairs.empty.null_safe_not_in`), join the vote."""
        if not self.order or not self.found_nothing():
            return
        ran = [k for k in self.order if isinstance(self.ctx.prerun[self.sqls[k]][1], Result)]
        for key in ran[:2]:
            fixed_sql = self.sqls[key]
            by_value: str | None = None
            by_nulls: str | None = None
            if (
                self.stored_values is not None
                and (fixed := value_repair(fixed_sql, self.dialect, self.ctx.catalog, self.stored_values))
                is not None
            ):
                fixed_sql, by_value = fixed
            if (null_safe := null_safe_not_in(fixed_sql, self.dialect)) is not None:
                fixed_sql, by_nulls = null_safe[0], f"NULLs left out of NOT IN ({', '.join(null_safe[1])})"
            new_key = normalize_sql(fixed_sql, self.dialect)
            if new_key in self.weights:
                continue
            self.order.append(new_key)
            self.sqls[new_key], self.weights[new_key] = fixed_sql, self.weights[key]
            run = run_statement(fixed_sql, self.ctx)
            self.ctx.prerun[fixed_sql] = run
            self.prints[new_key] = fingerprint(run[1]) if isinstance(run[1], Result) else None
            if by_value:
                self.repairs[fixed_sql] = by_value
            if by_nulls:
                self.nulls[fixed_sql] = by_nulls

    def result(self) -> FirstRoundResult | None:
        """What ``generate`` proposes from the round: the candidates in order with their
        weights, the draws, a clarification if more drafts asked back than agreed on an
        answer, and what the repairs and rewrites changed in each candidate (``repairs``,
        ``nulls``: SQL -> what; ``rewrites``: SQL -> rewrite name -> what).  None when no
        draft wrote a query and asking back is not what they agree on."""
        top = (self.tally() or [0])[0]
        # drafts that answered but found nothing (their query failed or came back empty):
        # they took the question as answerable, so asking back must outweigh them too (an
        # empty result or a failed query is no ambiguity of the question)
        fruitless = sum(self.weights[k] for k in self.order if self.prints[k] is None)
        clarify = None
        # more drafts asking back than agreeing on an answer (a tie is answered: the query
        # found goes with a confidence, while asking back costs the user a turn), and at
        # least as many as found nothing
        if self.asked and len(self.asked) > top and len(self.asked) >= fruitless:
            clarify = self.reply.clarify if self.reply.clarify else self.asked[0]
        if not self.order:
            return (
                {"candidates": [], "weights": [], "draws": self.draws, "clarify": clarify}
                if clarify is not None
                else None
            )
        sqls = [self.sqls[k] for k in self.order]
        return {
            "candidates": sqls,
            "weights": [self.weights[k] for k in self.order],
            "draws": self.draws,
            "clarify": clarify,
            "repairs": self.repairs,
            "nulls": self.nulls,
            "rewrites": {sql: dict(self.changes[sql]) for sql in sqls if self.changes.get(sql)},
        }
