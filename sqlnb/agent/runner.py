"""Running a turn: the schema context, the graph with its checkpointer, progress events,
and the result the front doors show.  Front doors call :class:`Agent`; they never touch
drivers or the graph."""

from __future__ import annotations

import contextlib
import inspect
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from sqlnb import errors
from sqlnb.adapters import Adapter, Catalog, Result, Table
from sqlnb.agent.checks import ASKING_CHECKS, CORRECTED_CHECKS, Answer, judge
from sqlnb.agent.confidence import Confidence, Level, assess
from sqlnb.agent.context import AllValues, SchemaContext, build_context
from sqlnb.agent.explain import Explanation, explain
from sqlnb.agent.graph import build_graph, recursion_limit
from sqlnb.agent.live import Live
from sqlnb.agent.nodes import AgentContext, ChatClient, preview_rows
from sqlnb.agent.prompts import REPEATED_ROWS, correction_request, doubts
from sqlnb.agent.settings import AgentSettings, first_draft_cap
from sqlnb.agent.state import AgentState, Attempt, ReplyRecord, StateUpdate, Turn, add_usage, new_turn
from sqlnb.agent.stats import SessionStats
from sqlnb.agent.stop import StopToken
from sqlnb.labels import answer_text
from sqlnb.sql.format import pretty
from sqlnb.sql.quoting import qualified, quote_identifier

if TYPE_CHECKING:
    import pandas as pd  # at run time pandas loads on the first DataFrame

    from sqlnb.agent.memory import MemoryStore  # at run time loaded by the Agent

Event = dict[str, Any]
_TEXT_TYPE = re.compile(r"char|text|string|clob|enum|varchar|name|citext", re.I)
# rows read of a table for the values of its text columns in the schema context
SAMPLE_ROWS = 200
# a column of codes or categories has every value in the context, up to this many
# (measured on the unseen batches: a stored code that a word of the question spells out
# was never among the three examples shown, and the model made one up)
ALL_VALUES = 10
# the longest value of such a column, and the most rows of a table whose columns are
# looked up with a DISTINCT query when the rows read do not hold the whole table
ALL_VALUES_LENGTH = 24
DISTINCT_ROWS = 100_000


def _codes_or_categories(stored: Sequence[str], distinct: Sequence[str]) -> bool:
    """Whether a column holds codes or categories, from ``stored`` (the non-empty values of
    the rows read) and ``distinct`` (the same, each once): at most ``ALL_VALUES`` short
    ones, each stored twice on average (a name or a title seldom repeats)."""
    return (
        0 < len(distinct) <= ALL_VALUES
        and len(stored) >= 2 * len(distinct)
        and all(len(v) <= ALL_VALUES_LENGTH for v in distinct)
    )


@dataclass
class AskResult:
    """What one question gave: the final SQL (runnable, read-only), how it ended, every
    attempt, and the final result (``df``)."""

    question: str
    connection: str
    dialect: str
    model: str
    status: str
    stop_reason: str | None
    sql: str | None
    iterations: int
    attempts: list[Attempt]
    questions: list[str] = field(default_factory=list)
    usage: dict[str, float] = field(default_factory=dict)
    result: Result | None = None
    elapsed: float = 0.0
    model_error: str | None = None
    context: SchemaContext | None = None
    # how far the answer can be trusted, from evidence (sqlnb.agent.confidence): {level,
    # score, reasons}; None when there is no SQL
    confidence: Confidence | None = None
    # the question this answer answers, on its own: an answer to the model's clarifying
    # questions ("February") with the question that was asked before ("Orders per month?
    # (February)"); None: ``question`` itself.  The provenance comment and the memory use it.
    asked_before: str | None = None
    # the remembered answers shown to the model as examples: [{id, question}]
    examples: list[dict[str, Any]] = field(default_factory=list)
    # the answer in two to four grounded sentences (sqlnb.agent.explain); None: not asked
    # for (AgentSettings.explain), no answer, or no sentence grounded
    explained: Explanation | None = None

    @property
    def explanation(self) -> str | None:
        """What the answer computed, what its SQL assumes and its headline values, in two
        to four sentences whose every number and name is in the question, the SQL or the
        result; None when there is none."""
        return self.explained.text if self.explained is not None else None

    @property
    def answered_as(self) -> str | None:
        """A follow-up question as this answer read it, on its own ("answered as": "How many
        paid orders did the North region have in 2024?" for "and the North?"), from the
        explanation's call and grounded in the conversation's questions
        and the SQL; None for a question that is not a follow-up, or without one."""
        return self.explained.standalone if self.explained is not None else None

    @property
    def ok(self) -> bool:
        return self.status == "success"

    @property
    def full_question(self) -> str:
        """The question with what it answers: after a clarification, the earlier question
        and this reply together."""
        if self.asked_before:
            return f"{self.asked_before} ({self.question})"
        return self.question

    @property
    def columns(self) -> list[str]:
        return self.result.column_names if self.result is not None else []

    @property
    def alternatives(self) -> list[dict[str, Any]]:
        """The other results the drafts of the kept query gave, where they disagreed: for
        each, one query that gave it, how many drafts gave it, its row count, columns and
        first rows; most drafts first.  Empty when the drafts agreed or there was one."""
        kept = next((a for a in reversed(self.attempts) if a.get("ok") and a["sql"] == self.sql), None)
        if kept is None:
            return []
        candidates = kept.get("candidates") or []
        chosen = next((c.get("group") for c in candidates if c.get("chosen")), None)
        out: dict[int, dict[str, Any]] = {}
        for c in candidates:
            group = c.get("group")
            if group is None or group == chosen or group in out:
                continue
            out[group] = {
                "sql": c["sql"],
                "drafts": int(c.get("votes") or c.get("weight") or 1),
                "row_count": c.get("row_count"),
                "columns": list(c.get("columns") or []),
                "rows": [list(r) for r in c.get("preview") or []],
            }
        return sorted(out.values(), key=lambda alt: -alt["drafts"])

    def rows(self, n: int = 10) -> list[list[Any]]:
        return preview_rows(self.result, n) if self.result is not None else []

    @property
    def df(self) -> pd.DataFrame:
        """The final SQL's result as a DataFrame (up to the agent's row cap)."""
        if self.result is None:
            import pandas as pd

            return pd.DataFrame()
        return self.result.to_pandas()

    def to_dict(self, rows: int = 10) -> dict[str, Any]:
        return {
            "question": self.question,
            "connection": self.connection,
            "dialect": self.dialect,
            "model": self.model,
            "status": self.status,
            "stop_reason": self.stop_reason,
            "sql": self.sql,
            "iterations": self.iterations,
            "attempts": [
                {k: a.get(k) for k in ("sql", "ok", "error_kind", "error", "row_count")}
                for a in self.attempts
            ],
            "columns": self.columns,
            "rows": self.rows(rows),
            "questions": self.questions,
            "usage": dict(self.usage),
            "elapsed": round(self.elapsed, 3),
            "confidence": self.confidence,
            "alternatives": self.alternatives,
            "explanation": self.explanation,
            "answered_as": self.answered_as,
            **({"explained": self.explained.to_dict()} if self.explained is not None else {}),
            "examples": [dict(e) for e in self.examples],
            **({"model_error": self.model_error} if self.model_error else {}),
        }

    def cell_source(self, alternative: int | None = None) -> str | None:
        """A runnable ``%%sql`` cell for the final SQL (laid out: :attr:`sql_pretty`), with a
        comment recording how it was made (question, model, attempts).  None when there is
        no final SQL.
        ``alternative``: the cell of another result the drafts gave instead (1-based, as
        :attr:`alternatives` lists them); an IndexError when there is no such one."""
        if not self.sql:
            return None
        if alternative is not None:
            others = self.alternatives
            if not 1 <= alternative <= len(others):
                raise IndexError(alternative)
            picked = others[alternative - 1]
            q = " ".join(self.full_question.split())
            q = q[:157] + "..." if len(q) > 160 else q
            drafts = picked["drafts"]
            comment = (
                f"-- sqlnb ask: {q} | model: {self.model} | another reading "
                f"({drafts} draft{'s' if drafts != 1 else ''})"
            )
            return f"%%sql --conn {self.connection}\n{comment}\n{pretty(picked['sql'], self.dialect)}\n"
        q = " ".join(self.full_question.split())
        if len(q) > 160:
            q = q[:157] + "..."
        n = len(self.attempts)
        comment = f"-- sqlnb ask: {q} | model: {self.model} | attempts: {n}"
        if self.status == "needs_clarification":
            comment += " | a guess: the question was asked back"
        return f"%%sql --conn {self.connection}\n{comment}\n{self.sql_pretty}\n"

    @property
    def sql_pretty(self) -> str | None:
        """The final SQL laid out one clause per line in the connection's dialect, meaning
        the same (:func:`sqlnb.sql.format.pretty`; the SQL as it ran when it cannot be laid
        out safely).  For people: the cell and the panel show it, the agent ran ``sql``."""
        return pretty(self.sql, self.dialect) if self.sql else None

    def __str__(self) -> str:
        """The answer as plain text (:func:`sqlnb.labels.answer_text`).  In a notebook the
        front doors show it as HTML (``sqlnb.display.show_answers``): the agent imports
        no front door."""
        return answer_text(self)

    def __repr__(self) -> str:
        return (
            f"AskResult(status={self.status!r}, stop_reason={self.stop_reason!r}, "
            f"attempts={len(self.attempts)}, sql={self.sql!r})"
        )


def refuse_writable_role(adapter: Adapter, connection: str) -> None:
    """``require_readonly_role``: a :class:`~sqlnb.errors.WritableRoleError` unless the
    credentials of ``adapter`` are known to be read-only (write access that could not be
    found out counts as writable)."""
    from sqlnb.adapters.privileges import write_access

    access = write_access(adapter)
    if access.can_write is False:
        return
    hint = (
        "connect with a read-only role (only SELECT / USAGE grants; for a SQLite or DuckDB "
        "file, %sqlnb connect ... --readonly), or turn the setting off: "
        "%config AskMagic.require_readonly_role = False"
    )
    if access.can_write is None:
        raise errors.WritableRoleError(
            f"Not asking on {connection!r}: sqlnb could not tell whether its role can write "
            f"({access.reason}), and with require_readonly_role on that counts as writable",
            hint=hint,
        )
    what = access.summary.split(" — ")[0]
    raise errors.WritableRoleError(
        f"Not asking on {connection!r}: require_readonly_role is on and {what}", hint=hint
    )


class Agent:
    """The text-to-SQL agent of one notebook (or one CLI run): one compiled graph, one
    checkpointer whose threads keep the conversation per connection."""

    def __init__(
        self,
        *,
        checkpointer: BaseCheckpointSaver[str] | None = None,
        settings: AgentSettings | None = None,
        memory: MemoryStore | bool | None = True,
    ):
        """``memory``: the memory of accepted answers, a
        :class:`~sqlnb.agent.memory.MemoryStore`, True (the default file) or False (off;
        ``use_memory`` switches it later)."""
        from sqlnb.agent.memory import MemoryStore, MemoryWarning

        self.memory = memory if isinstance(memory, MemoryStore) else MemoryStore()
        self.use_memory = memory is not False and memory is not None
        self._memory_warning = MemoryWarning()
        self.checkpointer = checkpointer if checkpointer is not None else InMemorySaver()
        self.graph = build_graph(self.checkpointer)
        self.settings = settings or AgentSettings()
        self._clients: dict[tuple[str, bool], ChatClient] = {}  # (model spec, Anthropic key set) -> client
        self._clients_lock = threading.Lock()
        # (adapter, catalog load time, table) -> its text columns' values
        self._samples: dict[tuple[int, float, str], dict[str, Sequence[str]]] = {}
        self._generation: dict[str, int] = {}  # thread -> conversation number (reset)
        # (connection, model) -> the schema budget of the last prompt that had to be made
        # smaller to fit the model's context (sqlnb.agent.fit): later questions start there
        self._fitted: dict[tuple[str, str], int] = {}
        self._asking: set[str] = set()  # connections with a turn under way
        self._asking_lock = threading.Lock()
        self.stats = SessionStats()  # this session's questions, added up (%sqlnb stats)
        # the background warm-up (warm_soon): the one that waits, and its thread
        self._warm_lock = threading.Lock()
        self._warm_next: tuple[Adapter, dict[str, Any]] | None = None
        self._warm_thread: threading.Thread | None = None

    # ---- models ------------------------------------------------------------------
    def client(self, model: Any = None) -> ChatClient:
        """A ModelClient for ``model``: a spec string, a chat model, or a client (told
        apart by what they have)."""
        from sqlnb.agent.models import ModelClient, resolve_model

        if hasattr(model, "invoke") and hasattr(model, "retries"):
            ready: ChatClient = model
            return ready
        if model is None or isinstance(model, str):
            import os

            key = (model or os.environ.get("SQLNB_MODEL") or "", bool(os.environ.get("ANTHROPIC_API_KEY")))
            # one client per spec, whichever thread asks first (a question, a read-ahead): a
            # second one would be a second model (a scripted one would start its replies over)
            with self._clients_lock:
                if key not in self._clients:
                    self._clients[key] = ModelClient(resolve_model(model))
                return self._clients[key]
        return ModelClient(model)

    # ---- reading ahead -----------------------------------------------------------
    def warm(
        self,
        adapter: Adapter,
        *,
        connection: str = "default",
        model: Any = None,
        max_iterations: int = 5,
        failure_cutoff: int = 3,
        settings: AgentSettings | None = None,
    ) -> float | None:
        """Have a local model that keeps prompt states read, before the next question on
        ``connection`` comes, the part of that question's prompt that comes before it: the
        system prompt with the schema, and the conversation so far
        (:func:`~sqlnb.agent.prompts.prompt_before_question`).  The question's prompt is then
        read from its question on, which on a small machine is the difference between the
        first words of the reply in a second and in several.

        The seconds the model took; None when nothing was read: a model that keeps no prompt
        states (a hosted one), or the ``chat`` rendering, whose prompts do not begin alike.
        Errors are the model's or the database's (the schema context's sample values), as a
        question's would be."""
        from sqlnb.agent.prompts import prompt_before_question

        s = settings or self.settings
        client = self.client(model)
        read_ahead = getattr(client, "warm", None)
        if read_ahead is None or not getattr(client, "keeps_prompt_states", False) or s.rendering != "fresh":
            return None
        turns = self.history(connection)
        earlier = [t.get("question", "") for t in turns[-2:]]
        fitted = self._fitted.get(_fit_key(connection, client))
        context = self.schema_context(" ".join(earlier), adapter, s, budget=fitted)
        state = cast(
            AgentState,
            {
                "dialect": adapter.dialect,
                "schema_context": context.text,
                "max_iterations": max_iterations,
                "failure_cutoff": failure_cutoff,
                "turns": turns,
            },
        )
        return float(read_ahead(prompt_before_question(state)))

    def warm_soon(self, adapter: Adapter, **options: Any) -> None:
        """:meth:`warm` in a background thread (its options as there); a warm-up asked for
        while one runs replaces any that waits, so the last one asked for runs last.  A
        warm-up that fails is logged and forgotten: it only loses the time it would save."""
        with self._warm_lock:
            self._warm_next = (adapter, options)
            if self._warm_thread is not None and self._warm_thread.is_alive():
                return
            self._warm_thread = threading.Thread(target=self._warm_loop, daemon=True, name="sqlnb-warm")
            self._warm_thread.start()

    def _warm_loop(self) -> None:
        while True:
            with self._warm_lock:
                job, self._warm_next = self._warm_next, None
                if job is None:
                    self._warm_thread = None
                    return
            adapter, options = job
            try:
                self.warm(adapter, **options)
            except Exception:
                logging.getLogger("sqlnb.agent").debug("sqlnb: reading ahead failed", exc_info=True)

    def warming(self) -> bool:
        """Whether a background warm-up (:meth:`warm_soon`) runs or waits."""
        with self._warm_lock:
            return self._warm_thread is not None

    # ---- conversation ------------------------------------------------------------
    def thread_id(self, connection: str) -> str:
        return f"{connection}#{self._generation.get(connection, 0)}"

    def reset(self, connection: str | None = None) -> None:
        """Forget the conversation (of one connection, or all)."""
        names = [connection] if connection else list(self._generation)
        for name in names:
            self._generation[name] = self._generation.get(name, 0) + 1

    def history(self, connection: str) -> list[Turn]:
        state = self.graph.get_state({"configurable": {"thread_id": self.thread_id(connection)}})
        return list((state.values or {}).get("turns") or [])

    def seed_history(self, connection: str, turns: Sequence[Mapping[str, Any]]) -> bool:
        """Make earlier turns ``[{question, status, sql, questions?}]`` (e.g. a panel's
        saved history after a kernel restart) the conversation of ``connection``, as if
        they had been asked here: the next question sees them like real earlier turns.
        Only when that conversation is empty; returns whether it seeded."""
        from langchain_core.messages import AIMessage, HumanMessage

        if self.history(connection):
            return False
        clean: list[Turn] = []
        messages: list[BaseMessage] = []
        for t in turns or []:
            if not isinstance(t, Mapping):
                raise errors.UsageError("history turns must be objects {question, status, sql}")
            question = str(t.get("question") or "").strip()
            if not question:
                continue
            sql = t.get("sql") or None
            questions = [str(q) for q in (t.get("questions") or []) if str(q).strip()]
            status = str(t.get("status") or ("success" if sql else "failed"))
            clean.append(
                {
                    "question": question,
                    "sql": str(sql) if sql else None,
                    "status": status,
                    "questions": questions,
                }
            )
            messages.append(HumanMessage(content=question))
            if questions:
                messages.append(AIMessage(content="CLARIFY: " + " ".join(questions)))
            elif sql:
                messages.append(AIMessage(content=f"```sql\n{sql}\n```\nFINAL"))
        if not clean:
            return False
        self._generation.setdefault(connection, 0)
        config: RunnableConfig = {"configurable": {"thread_id": self.thread_id(connection)}}
        # written as the turn-ending decision, so the thread rests at its end: the next
        # question starts a new turn on top of these, exactly as after real turns
        self.graph.update_state(
            config,
            {"messages": messages, "turns": clean, "next_step": "end", "status": clean[-1]["status"]},
            as_node="decide_next_step",
        )
        return True

    # ---- asking ------------------------------------------------------------------
    def ask(
        self,
        question: str,
        adapter: Adapter,
        *,
        connection: str = "default",
        model: Any = None,
        max_iterations: int = 5,
        failure_cutoff: int = 3,
        no_review: bool = False,
        settings: AgentSettings | None = None,
        on_event: Callable[[Event], None] | None = None,
        stop: StopToken | None = None,
        examples: Sequence[Mapping[str, Any]] | None = None,
        use_memory: bool | None = None,
        live: bool = False,
    ) -> AskResult:
        """Answer ``question`` on ``adapter``.  ``examples``: question/SQL pairs of this
        database to show the model (``[{question, sql}]``); None: the accepted answers of
        this database most like the question, from the memory, unless ``use_memory`` (default:
        ``self.use_memory``) is False.  A memory that cannot be read fails no question.  ``stop`` (a
        :class:`~sqlnb.agent.stop.StopToken`): stopping it abandons the model call in
        flight, cancels the agent's running statement, and the turn ends with status
        ``stopped``; the conversation stays usable.

        ``live``: ``on_event`` is also told each phase as it starts and the model's text as
        it is written (``phase`` and ``text`` events, :mod:`sqlnb.agent.live`).

        One turn at a time per connection: a question on a connection whose previous one
        is still being answered (the panel's, a cell's) is a :class:`UsageError`."""
        with self._one_turn_at_a_time(connection):
            question = (question or "").strip()
            if not question:
                raise errors.UsageError(
                    "No question to ask", hint="write the question in the cell body below %%ask"
                )
            if max_iterations < 1:
                raise errors.UsageError("--max-iterations must be at least 1")
            s = settings or self.settings
            if s.require_readonly_role:
                refuse_writable_role(adapter, connection)
            if examples is None and (self.use_memory if use_memory is None else use_memory):
                examples = self.recall(adapter, question)
            client = self.client(model)
            self._generation.setdefault(connection, 0)  # so that reset() with no name finds it
            start = time.perf_counter()
            emit = on_event or (lambda e: None)
            config: RunnableConfig = {
                "configurable": {"thread_id": self.thread_id(connection)},
                "recursion_limit": recursion_limit(max_iterations),
            }
            before = self.history(connection)
            earlier = [t.get("question", "") for t in before[-2:]]
            asked_before = (
                before[-1].get("question") or None
                if before and before[-1].get("status") == "needs_clarification"
                else None
            )
            emit({"type": "context", "connection": connection})
            catalog = adapter.catalog()
            run_adapter = adapter
            fit_key = _fit_key(connection, client)
            if stop is not None:
                client = StoppableClient(client, stop)
                # stands in for the adapter: execute is its own, the rest the adapter's
                run_adapter = cast(Adapter, StoppableAdapter(adapter, stop))
            shows = Live(emit, drafts=first_draft_cap(s, client)) if live else None
            if shows is not None:
                client = shows.client(client)
            about = " ".join(earlier + [question])
            ctx_text = self.schema_context(about, run_adapter, s, budget=self._fitted.get(fit_key))

            def fit_schema(budget: int) -> str:
                """The schema context within ``budget`` tokens, after the model refused a
                longer prompt: the rest of the turn (a second pass included) and its answer's
                ``context`` have it, and later questions on this connection and model start
                there."""
                nonlocal ctx_text
                self._fitted[fit_key] = budget
                ctx_text = self.schema_context(about, run_adapter, s, budget=budget)
                return ctx_text.text

            shown = [dict(e) for e in examples or []]
            # the accepted answers only when the model's own answer is not trusted (rated low, or
            # none found): a second pass of the turn, on the conversation as it was before the first
            unsure_only = (
                bool(shown)
                and s.memory_when_unsure
                and first_draft_cap(s, client) > 0
                and bool(getattr(client, "samples", False))
            )
            base: str | None = (
                self.graph.get_state(config).config.get("configurable", {}).get("checkpoint_id")
                if unsure_only
                else None
            )

            def run_pass(on: RunnableConfig, shown_examples: list[dict[str, Any]]) -> _Turn:
                """A pass of this turn on ``on``'s thread, the model shown ``shown_examples``."""
                return self._turn(
                    question,
                    connection,
                    adapter,
                    run_adapter,
                    client,
                    catalog,
                    s,
                    ctx_text,
                    on,
                    max_iterations,
                    failure_cutoff,
                    no_review,
                    shown_examples,
                    stop,
                    emit,
                    shows,
                    fit_schema,
                )

            turn = run_pass(config, [] if unsure_only else shown)
            used = [] if unsure_only else shown
            if (
                unsure_only
                and turn.level() not in ("high", "medium")
                and turn.values.get("status") != "stopped"
                and not (stop is not None and stop.stopped)
                and turn.values.get("stop_reason") != "model_error"
            ):  # a failing model fails once
                emit({"type": "memory", "examples": len(shown), "level": turn.level()})
                if base is None:  # nothing before this turn: the second pass on a fresh thread
                    self._generation[connection] = self._generation.get(connection, 0) + 1
                fork: RunnableConfig = {
                    "configurable": {
                        "thread_id": self.thread_id(connection),
                        **({"checkpoint_id": base} if base else {}),
                    },
                    "recursion_limit": recursion_limit(max_iterations),
                }
                first, first_end = turn, self.graph.get_state(config).config
                turn = run_pass(fork, shown)
                usage = add_usage(turn.values.get("usage") or {}, first.values.get("usage"))
                used = shown
                if first.final_sql and not turn.final_sql and turn.values.get("status") != "stopped":
                    # the second pass found no answer (its drafts failed, or it ended on repeated
                    # SQL): the first one, rated low, is still better than none; the
                    # conversation goes on from it
                    self._restore(connection, first_end, fresh=base is None)
                    emit(
                        {
                            "type": "memory",
                            "kept_first": True,
                            "examples": len(shown),
                            "level": first.level(),
                        }
                    )
                    turn, used = first, []
                turn.values["usage"] = usage
            values, attempts, final_sql = turn.values, turn.attempts, turn.final_sql
            result, confidence = turn.result, turn.confidence
            asks = _asking_findings(attempts, final_sql)
            if asks and values.get("status") == "success" and asked_before is None:
                # the question has several readings and the query chose one: asked back, the
                # answer kept as a guess; a reply to it is answered (asked at most once)
                values = self._ask_back(connection, asks)
            from sqlnb.agent.models import describe_model

            out = AskResult(
                question=question,
                connection=connection,
                dialect=adapter.dialect,
                model=describe_model(getattr(client, "model", client)),
                status=values.get("status", "failed"),
                stop_reason=values.get("stop_reason"),
                sql=final_sql,
                iterations=values.get("iteration", 0),
                attempts=attempts,
                questions=list(values.get("questions") or []),
                usage=dict(values.get("usage") or {}),
                result=result,
                elapsed=time.perf_counter() - start,
                model_error=values.get("model_error"),
                context=ctx_text,
                confidence=confidence.copy() if confidence else None,
                asked_before=asked_before,
                examples=[{"id": e.get("id"), "question": e["question"]} for e in used],
            )
            if (
                s.explain
                and out.ok
                and out.sql
                and result is not None
                and not (stop is not None and stop.stopped)
                and getattr(client, "explains", True)
            ):
                emit({"type": "explaining"})
                # a follow-up (not a reply to a question asked back) is also read on its own
                follow_up = [] if asked_before else [t.get("question") or "" for t in before[-3:]]
                out.explained = self._explain(client, out, share_data=s.share_data, earlier=follow_up)
                if out.explained is not None:
                    out.usage = add_usage(out.usage, out.explained.usage)
                out.elapsed = time.perf_counter() - start
            self.stats.add(out)
            emit({"type": "done", "result": out})
            return out

    def _ask_back(self, connection: str, questions: list[str]) -> AgentState:
        """End the connection's last turn as a clarification asking ``questions``, its
        answer kept as the best query so far; the thread's state after it."""
        config: RunnableConfig = {"configurable": {"thread_id": self.thread_id(connection)}}
        values = cast(AgentState, dict(self.graph.get_state(config).values))
        turns = list(values.get("turns") or [])
        if turns:
            turns[-1] = {**turns[-1], "status": "needs_clarification", "questions": list(questions)}
        update: StateUpdate = {
            "turns": turns,
            "status": "needs_clarification",
            "stop_reason": "clarification",
            "questions": list(questions),
            "next_step": "end",
        }
        self.graph.update_state(config, update, as_node="decide_next_step")
        return cast(AgentState, {**values, **update})

    @staticmethod
    def _explain(
        client: ChatClient, answer: AskResult, *, share_data: bool, earlier: Sequence[str] = ()
    ) -> Explanation | None:
        """The answer's explanation (:mod:`sqlnb.agent.explain`); None when the model call
        fails: an explanation never fails an answer."""
        assert answer.sql is not None and answer.result is not None
        try:
            return explain(
                client,
                question=answer.full_question,
                sql=answer.sql,
                dialect=answer.dialect,
                result=answer.result,
                share_data=share_data,
                earlier=earlier,
            )
        except errors.ModelError:
            return None

    @contextlib.contextmanager
    def _one_turn_at_a_time(self, connection: str) -> Iterator[None]:
        """Hold ``connection`` for one turn: a :class:`UsageError` while another turn on it
        is under way."""
        with self._asking_lock:
            if connection in self._asking:
                raise errors.UsageError(
                    f"A question on {connection!r} is still being answered",
                    hint="wait for it to finish (or stop it), then ask again",
                )
            self._asking.add(connection)
        try:
            yield
        finally:
            with self._asking_lock:
                self._asking.discard(connection)

    def _restore(self, connection: str, end: RunnableConfig, *, fresh: bool) -> None:
        """Make the checkpoint ``end`` (a first pass's last) where ``connection``'s conversation
        goes on from, after a second pass that is not kept: on a fresh thread, the thread
        before it; else a copy of ``end`` written on top of the second pass's checkpoints."""
        if fresh:
            self._generation[connection] -= 1
        else:
            self.graph.update_state(end, None, as_node="__copy__")

    def _turn(
        self,
        question: str,
        connection: str,
        adapter: Adapter,
        run_adapter: Adapter,
        client: ChatClient,
        catalog: Catalog,
        s: AgentSettings,
        ctx_text: SchemaContext,
        config: RunnableConfig,
        max_iterations: int,
        failure_cutoff: int,
        no_review: bool,
        examples: list[dict[str, Any]],
        stop: StopToken | None,
        emit: Callable[[Event], None],
        live: Live | None = None,
        fit_schema: Callable[[int], str] | None = None,
    ) -> _Turn:
        """Run one turn of the graph on ``config``'s thread and judge its answer."""
        looked_up: dict[tuple[str, str], list[Any]] = {}  # this turn's stored values, by column

        def distinct(t: Table, c: str, timeout: float = 5) -> list[Any]:
            key = (t.qualified_name, c)
            if key not in looked_up:
                looked_up[key] = self._distinct(run_adapter, t, c, timeout=timeout)
            return looked_up[key]

        context = AgentContext(
            model=client,
            adapter=run_adapter,
            catalog=catalog,
            settings=s,
            distinct_values=distinct,
            stop=stop,
            live=live,
            fit_schema=fit_schema,
        )
        inputs = new_turn(
            question,
            connection=connection,
            dialect=adapter.dialect,
            schema_context=ctx_text.text,
            max_iterations=max_iterations,
            failure_cutoff=failure_cutoff,
            no_review=no_review,
            examples=examples,
        )
        update: dict[str, StateUpdate | None]  # each node's update, by the node's name
        for update in self.graph.stream(inputs, config, context=context, stream_mode="updates"):
            for node, delta in update.items():
                _progress(node, delta or {}, max_iterations, emit)
        # the thread's latest state: a pass forked from an earlier checkpoint ends there
        # (LangGraph gives a snapshot's values untyped: they are this graph's state)
        values = cast(
            AgentState,
            dict(
                self.graph.get_state(
                    {"configurable": {"thread_id": config["configurable"]["thread_id"]}}
                ).values
            ),
        )
        attempts = list(values.get("attempts") or [])
        final_sql = values.get("final_sql")
        result = None
        confidence: Confidence | None = None
        if final_sql:
            n = max(a["n"] for a in attempts if a.get("ok") and a["sql"] == final_sql)
            result = context.results.get(n)
            kept = next(a for a in attempts if a["n"] == n)
            judged = kept.copy()
            if live is not None:
                live.phase("checking")
            judged["checks"] = self._check(final_sql, question, result, kept, context)
            attempts = [judged if a is kept else a for a in attempts]
            confidence = assess(
                judged,
                reviewed=values.get("stop_reason") == "finalized",
                earlier_failures=sum(1 for a in attempts if a["n"] < n and not a.get("ok")),
            )
            if self._may_correct(values, judged, s, stop) and getattr(client, "corrects", True):
                thread: RunnableConfig = {
                    "configurable": {"thread_id": config["configurable"]["thread_id"]},
                    "recursion_limit": recursion_limit(max_iterations),
                }
                return self._correct(
                    question, thread, context, values, judged, confidence, emit, max_iterations
                )
        return _Turn(values, attempts, final_sql, result, confidence)

    @staticmethod
    def _may_correct(values: AgentState, judged: Attempt, s: AgentSettings, stop: StopToken | None) -> bool:
        """Whether the model is shown the checks' findings against the kept query and asked
        for a correction: ``correct_findings`` on, a finding that is not a question for the
        user (those ask back), a reply left of the turn's ``max_iterations``, not stopped."""
        findings = doubts(judged)
        return (
            s.correct_findings
            and any(name in CORRECTED_CHECKS or name == REPEATED_ROWS for name in findings)
            and not any(name in findings for name in ASKING_CHECKS)
            and values.get("status") == "success"
            and values.get("iteration", 0) < values.get("max_iterations", 5)
            and not (stop is not None and stop.stopped)
        )

    def _correct(
        self,
        question: str,
        thread: RunnableConfig,
        context: AgentContext,
        values: AgentState,
        judged: Attempt,
        confidence: Confidence | None,
        emit: Callable[[Event], None],
        max_iterations: int,
    ) -> _Turn:
        """Show the model the answer checks' findings against the kept query (``judged``)
        and run the query it corrects it with (one reply, read-only, as every query).  The
        correction is the answer only where it ran, found something, and the checks find
        strictly less against it (a subset of the findings, none new); otherwise the
        answer stands (with ``confidence``, its rating), the correction among the turn's
        attempts.  A failing model call fails nothing: the answer stands."""
        from langchain_core.messages import HumanMessage

        findings = doubts(judged)
        emit({"type": "correcting", "findings": findings})
        marked = [
            {**a, "doubts": findings} if a["n"] == judged["n"] else a for a in values.get("attempts") or []
        ]
        self.graph.update_state(
            thread,
            {
                "attempts": marked,
                "correcting": True,
                "turns": list(values.get("turns") or [])[:-1],  # the correction ends the turn again
                "next_step": "generate",
                # the chat rendering's request (the fresh one is built from the attempts)
                "messages": [HumanMessage(content=correction_request(findings))],
            },
            as_node="decide_next_step",
        )
        update: dict[str, StateUpdate | None]  # each node's update, by the node's name
        for update in self.graph.stream(None, thread, context=context, stream_mode="updates"):
            for node, delta in update.items():
                _progress(node, delta or {}, max_iterations, emit)
        after = cast(AgentState, dict(self.graph.get_state(thread).values))
        attempts = [judged if a["n"] == judged["n"] else a for a in after.get("attempts") or []]
        if after.get("status") == "stopped":  # stopped while correcting: as any stopped turn
            return _Turn(after, attempts, after.get("final_sql"), None, None)
        last = attempts[-1]
        new_sql = after.get("final_sql")
        if (
            new_sql
            and last["n"] > judged["n"]
            and last.get("ok")
            and last["sql"] == new_sql
            and not last.get("nothing_found")
            and new_sql != judged["sql"]
        ):
            result = context.results.get(last["n"])
            if context.live is not None:
                context.live.phase("checking")
            checks = self._check(new_sql, question, result, last, context)
            left = doubts(cast(Attempt, {**last, "checks": checks}))
            if set(left) < set(findings):
                fixed = {k: v for k, v in findings.items() if k not in left}
                kept = cast(Attempt, {**last, "checks": checks, "corrects": fixed})
                attempts[-1] = kept
                self.graph.update_state(thread, {"correcting": False}, as_node="decide_next_step")
                after["correcting"] = False
                return _Turn(after, attempts, new_sql, result, assess(kept))
        # the answer stands: the thread ends as the turn did before the correction
        restored: StateUpdate = {
            "final_sql": judged["sql"],
            "status": values.get("status", "success"),
            "stop_reason": values.get("stop_reason"),
            "turns": list(values.get("turns") or []),
            "model_error": None,
            "correcting": False,
            "next_step": "end",
        }
        self.graph.update_state(thread, restored, as_node="decide_next_step")
        kept_values = cast(AgentState, {**after, **restored})
        return _Turn(kept_values, attempts, judged["sql"], context.results.get(judged["n"]), confidence)

    def _check(
        self, sql: str, question: str, result: Result | None, kept: Attempt, context: AgentContext
    ) -> dict[str, str]:
        """The findings of the answer checks (:func:`sqlnb.agent.checks.judge`) about the
        kept query, by check name: for the user and the confidence, and (their reasons
        only) for the model's correction (:meth:`_correct`).  The checks that read the data
        (read-only) run when value lookups are on, and all their lookups together take at
        most :data:`CHECK_SECONDS`; on a large database the lookups not reached in time
        find nothing."""
        s = context.settings
        stored_values = lookup = None
        if s.value_hints and context.distinct_values is not None:
            find_values, deadline = context.distinct_values, time.monotonic() + CHECK_SECONDS
            adapter = context.adapter

            def left() -> float:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError("no time left for the answer checks' lookups")
                return max(0.5, remaining)

            def stored_values(table: Table, column: str) -> Sequence[object]:
                return find_values(table, column, timeout=left())

            def lookup(query: str) -> Sequence[tuple[Any, ...]]:
                return adapter.execute(query, max_rows=CHECK_ROWS, readonly=True, timeout=left()).rows

        answer = Answer(
            sql=sql,
            dialect=context.adapter.dialect,
            question=question,
            catalog=context.catalog,
            result=result,
            row_count=kept.get("row_count"),
            stored_values=stored_values,
            lookup=lookup,
        )
        return judge(answer, s.disabled_checks)

    # ---- the memory of accepted answers -------------------------------------------------
    def recall(self, adapter: Adapter, question: str, k: int = 3) -> list[dict[str, Any]]:
        """The accepted answers of ``adapter``'s database most like ``question`` (empty,
        with one logged warning, when the memory cannot be read)."""
        from sqlnb.agent.memory import database_fingerprint

        try:
            return self.memory.similar(database_fingerprint(adapter), question, k=k)
        except Exception as exc:  # the memory never fails a question
            self._memory_warning(exc)
            return []

    def remember(
        self, adapter: Adapter, question: str, sql: str, *, connection: str = "", source: str
    ) -> int:
        """Keep ``question`` → ``sql`` (a read-only query) as an accepted answer of
        ``adapter``'s database; ``source``: "cell", "thumbs_up" or "remember".  Returns the
        entry's id; a :class:`UsageError` when the memory is off or the SQL writes, a
        :class:`~sqlnb.errors.MemoryStoreError` when the file cannot be written."""
        from sqlnb.agent.memory import remember_answer

        if not self.use_memory:
            raise errors.UsageError(
                "The memory of accepted answers is off", hint="turn it on: %config AskMagic.use_memory = True"
            )
        return remember_answer(self.memory, adapter, question, sql, connection=connection, source=source)

    def schema_context(
        self, text: str, adapter: Adapter, settings: AgentSettings | None = None, *, budget: int | None = None
    ) -> SchemaContext:
        """The schema context the model sees for ``text`` (the question, with earlier ones
        of the conversation): sample values included when the settings share data; within
        ``budget`` tokens where that is below the settings' ``context_budget``."""
        s = settings or self.settings
        samples = (lambda t: self._sample_values(adapter, t)) if s.share_data and s.sample_values else None
        return build_context(
            adapter.catalog(),
            text,
            adapter.dialect,
            budget=s.context_budget if budget is None else min(budget, s.context_budget),
            samples=samples,
            with_join_paths=s.join_paths,
        )

    # ---- data for the context (read-only, capped, only when sharing is on) -----------
    def _sample_values(self, adapter: Adapter, table: Table, n: int = 3) -> dict[str, Sequence[str]]:
        """Values of the table's text columns for the schema context: ``n`` examples each,
        or every value (:class:`~sqlnb.agent.context.AllValues`) of a column of codes or
        categories, one that repeats a few short values (:func:`_codes_or_categories`), so that a
        stored code the question names in words (a word it abbreviates) is in the context
        even when no example shows it."""
        key = (id(getattr(adapter, "_adapter", adapter)), adapter.catalog().loaded_at, table.qualified_name)
        if key in self._samples:
            return self._samples[key]
        cols = [c for c in table.columns if _TEXT_TYPE.search(c.type or "")][:12]
        values: dict[str, Sequence[str]] = {}
        if cols:
            d = adapter.dialect
            name = qualified(table.schema, table.name, d)
            sql = f"SELECT {', '.join(quote_identifier(c.name, d) for c in cols)} FROM {name} LIMIT {SAMPLE_ROWS}"
            try:
                res = adapter.execute(sql, max_rows=SAMPLE_ROWS, timeout=5, readonly=True)
            except errors.QueryCancelled:
                return values  # stopped or interrupted: not cached, the next question tries again
            except errors.SqlnbError:
                res = None
            if res is not None and res.arrow is not None:
                whole = res.arrow.num_rows < SAMPLE_ROWS  # every row of the table was read
                lookups = 6  # DISTINCT queries at most for a table too large to read whole
                for c, col in zip(cols, res.arrow.columns, strict=False):
                    stored = [str(v) for v in col.to_pylist() if v is not None and v != ""]
                    seen = list(dict.fromkeys(stored))
                    every = seen if _codes_or_categories(stored, seen) else None
                    if every and not whole:
                        try:
                            every = self._every_value(adapter, table, c.name, every) if lookups > 0 else None
                        except errors.QueryCancelled:
                            return values  # not cached: the next question looks again
                        lookups -= 1
                    if every:
                        values[c.name] = AllValues(every)
                    elif seen:
                        values[c.name] = seen[:n]
        self._samples[key] = values
        return values

    def _every_value(self, adapter: Adapter, table: Table, column: str, seen: list[str]) -> list[str] | None:
        """Every value of a column of a table too large to read whole, when it has at most
        ``ALL_VALUES`` (one DISTINCT query, read-only, 2 s at most, only on a table of at
        most ``DISTINCT_ROWS`` rows by the catalog's count): None when it has more, the
        table is larger or its size unknown, or the query fails."""
        if table.row_count is None or not 0 <= table.row_count <= DISTINCT_ROWS:
            return None
        try:
            stored = self._distinct(adapter, table, column, timeout=2, limit=ALL_VALUES + 1)
        except errors.QueryCancelled:
            raise  # stopped by the user: the caller gives up on the table's values
        except errors.SqlnbError:
            return None
        stored = [str(v) for v in stored if v is not None and v != ""]
        if len(stored) > ALL_VALUES:
            return None
        return seen + sorted(set(stored) - set(seen))

    def _distinct(
        self, adapter: Adapter, table: Table, column: str, timeout: float = 5, limit: int = 500
    ) -> list[Any]:
        d = adapter.dialect
        name = qualified(table.schema, table.name, d)
        col = quote_identifier(column, d)
        res = adapter.execute(
            f"SELECT DISTINCT {col} FROM {name} WHERE {col} IS NOT NULL LIMIT {limit}",
            max_rows=limit,
            timeout=timeout,
            readonly=True,
        )
        return [r[0] for r in res.rows]


@dataclass
class _Turn:
    """One pass of a turn through the graph: its final state and its judged answer."""

    values: AgentState
    attempts: list[Attempt]
    final_sql: str | None
    result: Result | None
    confidence: Confidence | None

    def level(self) -> Level | None:
        """Its answer's confidence level (None: no answer)."""
        return self.confidence["level"] if self.confidence else None


# the most time the answer checks that read the data (sqlnb.agent.checks) may spend on
# their lookups, all together; on a large database the lookups not reached find nothing
CHECK_SECONDS = 2.0
# the most rows one lookup of the answer checks fetches
CHECK_ROWS = 1000


def _asking_findings(attempts: Sequence[Attempt], final_sql: str | None) -> list[str]:
    """The findings of the asking checks (:data:`~sqlnb.agent.checks.ASKING_CHECKS`) about
    the kept query: questions for the user."""
    if not final_sql:
        return []
    kept = next(
        (a for a in reversed(attempts) if a.get("ok") and a["sql"] == final_sql and "checks" in a), None
    )
    found = (kept or {}).get("checks") or {}
    return [f for name, f in found.items() if name in ASKING_CHECKS]


class StoppableClient:
    """The model client of a stoppable turn: every call waits on the stop token too."""

    def __init__(self, client: ChatClient, stop: StopToken):
        self._client, self._stop = client, stop
        try:
            self._takes_stop = "stop" in inspect.signature(client.invoke).parameters
        except (TypeError, ValueError):
            self._takes_stop = False

    def invoke(self, messages: Sequence[BaseMessage], **kwargs: Any) -> tuple[str, Mapping[str, object]]:
        if self._stop.stopped:
            raise errors.ModelError("the model call was stopped")
        # the client's own invoke, with the stop token where it takes one (see __init__)
        call: Callable[..., tuple[str, Mapping[str, object]]] = self._client.invoke
        if self._takes_stop:
            return call(messages, stop=self._stop, **kwargs)
        return call(messages, **kwargs)

    def invoke_many(
        self, messages: Sequence[BaseMessage], specs: Sequence[dict[str, float | None]], **kwargs: Any
    ) -> Sequence[tuple[str, Mapping[str, object]]]:
        if self._stop.stopped:
            raise errors.ModelError("the model call was stopped")
        # a client that writes several replies at once takes the stop token
        call: Callable[..., Sequence[tuple[str, Mapping[str, object]]]] = self._client.invoke_many
        return call(messages, specs, stop=self._stop, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


class StoppableAdapter:
    """The adapter as a stoppable turn uses it: stopping cancels the statement the agent
    runs at that moment, never a statement of the notebook's (the cancel is armed only
    while the agent's statement holds the connection's lock)."""

    RECANCEL_EVERY = 0.2  # s: a cancel that came before the driver call started is repeated

    def __init__(self, adapter: Adapter, stop: StopToken):
        self._adapter, self._stop = adapter, stop

    def execute(self, sql: str, params: Mapping[str, Any] | None = None, **kwargs: Any) -> Result:
        a = self._adapter
        lock = getattr(a, "_lock", None) or contextlib.nullcontext()
        with lock:
            if self._stop.stopped:
                raise errors.QueryCancelled("Query not run: the question was stopped", dialect=a.dialect)
            running, guard = threading.Event(), threading.Lock()
            running.set()

            def cancel_if_running() -> bool:
                with guard:  # never once the statement returned: a cell's may run next
                    if running.is_set():
                        a.cancel()
                    return running.is_set()

            def again() -> None:  # a cancel that came just before the driver call started
                for _ in range(int(3 / self.RECANCEL_EVERY)):
                    time.sleep(self.RECANCEL_EVERY)
                    if not cancel_if_running():
                        return

            def cancel() -> None:
                if cancel_if_running():
                    threading.Thread(target=again, daemon=True, name="sqlnb-stop-cancel").start()

            self._stop.add_callback(cancel)
            try:
                return a.execute(sql, params, **kwargs)
            finally:
                with guard:
                    running.clear()
                self._stop.remove_callback(cancel)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._adapter, name)


def _progress(node: str, delta: StateUpdate, max_iterations: int, emit: Callable[[Event], None]) -> None:
    if node == "generate":
        reply: ReplyRecord | dict[str, Any] = delta.get("reply") or {}
        emit(
            {
                "type": "reply",
                "iteration": delta.get("iteration"),
                "max_iterations": max_iterations,
                "sql": reply.get("sql"),
                "final": reply.get("final"),
                "clarify": reply.get("clarify"),
                "candidates": len(reply.get("candidates") or []) or None,
                "first_round": bool(reply.get("first_round")),
                "draws": reply.get("draws"),
                "not_a_question": reply.get("not_a_question"),
                "model_error": delta.get("model_error"),
            }
        )
    elif node == "execute":
        attempts: Sequence[Attempt] = delta.get("attempts") or []
        if attempts:
            emit({"type": "attempt", "attempt": attempts[-1], "max_iterations": max_iterations})
    elif node == "decide_next_step":
        if delta.get("next_step") == "execute":
            emit({"type": "executing"})
        elif delta.get("next_step") == "end":
            emit({"type": "stopped", "status": delta.get("status"), "stop_reason": delta.get("stop_reason")})


def _fit_key(connection: str, client: ChatClient) -> tuple[str, str]:
    """Whose fitted schema budget a question uses: its connection's, with its model."""
    return connection, str(getattr(client, "name", "") or type(client).__name__)
