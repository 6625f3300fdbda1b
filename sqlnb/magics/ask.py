"""``%%ask``: a question in, a runnable ``%%sql`` cell out.  A thin front door over
:class:`sqlnb.agent.runner.Agent`; connections come from the notebook's
:class:`~sqlnb.session.ConnectionManager` (the one ``%sqlnb connect`` fills)."""

from __future__ import annotations

import shlex
import sys
import threading
from typing import TYPE_CHECKING, Any

from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from traitlets import Bool, Float, Int, List, Unicode, observe

from sqlnb import errors
from sqlnb.agent.checks import CHECK_NAMES
from sqlnb.agent.repairs import REWRITE_NAMES
from sqlnb.kernel import kernel_session
from sqlnb.magics.sql import MagicArgumentParser as _Parser
from sqlnb.magics.sql import people_errors as _people_errors

if TYPE_CHECKING:
    from sqlnb.agent.runner import AskResult


def _ask_parser() -> _Parser:
    p = _Parser(prog="%%ask", add_help=False)
    p.add_argument("--conn", "-c", help="connection name (default: the active one)")
    p.add_argument("--model", "-m", help="model spec, e.g. anthropic:claude-sonnet-4-5")
    p.add_argument("--max-iterations", type=int, dest="max_iterations")
    p.add_argument("--no-review", action="store_true", help="stop at the first successful query")
    p.add_argument("--no-insert", action="store_true", help="do not insert a %%sql cell")
    p.add_argument("--no-data", action="store_true", help="show the model no rows or sample values")
    p.add_argument("--new", action="store_true", help="start a new conversation (forget earlier questions)")
    p.add_argument(
        "--no-memory", action="store_true", dest="no_memory", help="show the model no remembered answers"
    )
    return p


@magics_class
class AskMagic(Magics):
    """Ask the active connection a question.  Settings: ``%config AskMagic.model = "..."``."""

    model = Unicode(
        "",
        help="Model spec (provider:model). Empty: SQLNB_MODEL, else Anthropic's "
        "default when ANTHROPIC_API_KEY is set.",
    ).tag(config=True)
    max_iterations = Int(5, help="Model calls per question at most.").tag(config=True)
    failure_cutoff = Int(3, help="Stop after this many failed queries in a row.").tag(config=True)
    preview_rows = Int(5, help="Rows of each result shown to the model (0: none).").tag(config=True)
    private_connections = List(
        Unicode(), help="Connections whose data never reaches the model: no result rows, no sample values."
    ).tag(config=True)
    insert_cell = Bool(True, help="Insert a %%sql cell with the final SQL below.").tag(config=True)
    row_cap = Int(1000, help="Rows fetched per attempt.").tag(config=True)
    statement_timeout = Float(0.0, help="Seconds per attempt (0: the connection's timeout).").tag(config=True)
    rendering = Unicode(
        "fresh",
        help="'fresh': each model call restates the question and the "
        "attempts; 'chat': the plain message history.",
    ).tag(config=True)
    retry_drafts = Int(
        -1,
        help="After a failed query, fresh drafts of the question sampled beside "
        "the model's correction; the result most candidates agree on is "
        "kept (0: the correction only; -1: by the kind of model, 3 for a "
        "local one, 0 for a hosted one, which pays for every "
        "draft).",
    ).tag(config=True)
    first_drafts = Int(
        -1,
        help="Drafts of the first answer sampled beside the model's own "
        "reply, each run read-only, until two agree; the result most "
        "drafts gave is kept (0: the model's reply alone, reviewed by the "
        "model; -1: by the kind of model, 3 for a local one, 0 for a "
        "hosted one, which pays for every draft).",
    ).tag(config=True)
    disabled_rewrites = List(
        Unicode(),
        help="Answer rewrites of a draft to turn off, by name: "
        + ", ".join(REWRITE_NAMES)
        + " (sqlnb.agent.repairs; "
        "all on by default).",
    ).tag(config=True)
    disabled_checks = List(
        Unicode(),
        help="Answer checks that lower an answer's confidence to turn off, by name: "
        + ", ".join(CHECK_NAMES)
        + " (sqlnb.agent.checks; all on by default).",
    ).tag(config=True)
    memory_when_unsure = Bool(
        True,
        help="With a model that drafts its first answer, show the "
        "remembered answers only when the answer without them is "
        "rated low (a second pass); off: from the first call "
        "on.",
    ).tag(config=True)
    use_memory = Bool(
        True,
        help="Remember the answers you keep (a cell %%ask inserted that ran, "
        "the panel's thumbs-up, %sqlnb remember) per database, and show "
        "the model the most similar ones as examples (off: nothing is "
        "stored or shown).",
    ).tag(config=True)
    explain = Bool(
        True,
        help="After an answer, two to four sentences on what it computed, what its "
        "SQL assumes and its headline values, every number and name checked "
        "against the question, the SQL and the result (one more model call).",
    ).tag(config=True)
    correct_findings = Bool(
        True,
        help="When the answer checks find something against an answer (a year the "
        "query does not use, a LIMIT on 'each'...), show the model their findings and "
        "run its correction; it is the answer only where the checks find strictly less "
        "against it (one more model call for such answers).",
    ).tag(config=True)
    read_ahead = Bool(
        True,
        help="With a local model (llama.cpp), have it read the start of the next "
        "question's prompt (the schema and the conversation so far) in the "
        "background while you read the answer, and when a panel opens or a "
        "connection becomes active: the reply to the next question starts in about "
        "a second instead of several. A hosted model is never called for this.",
    ).tag(config=True)
    require_readonly_role = Bool(
        False,
        help="Refuse to ask on a connection whose credentials "
        "may write (%sqlnb list shows what each may "
        "write), or whose write access sqlnb could not "
        "find out: connect with a read-only role. The "
        "agent's own queries are read-only either "
        "way.",
    ).tag(config=True)

    def __init__(self, shell=None, manager=None, **kwargs: Any):
        super().__init__(shell=shell, **kwargs)
        self.manager = manager
        self._agent = None
        self._memory = None
        self._agent_lock = threading.RLock()  # the agent and the memory are made once
        # the last %%ask answer (its other readings: %ask pick N)
        self.last_result: AskResult | None = None

    def read_ahead_for(
        self, connection: str | None = None, *, model: Any = None, max_iterations: int | None = None
    ) -> bool:
        """Start reading ahead (:meth:`sqlnb.agent.runner.Agent.warm_soon`) for the next
        question on ``connection`` (default: the active one) with ``model`` (default: this
        magic's); False when off (:attr:`read_ahead`) or there is no such connection."""
        if not self.read_ahead or self.manager is None:
            return False
        try:
            entry = self.manager.get_entry(connection)
        except errors.SqlnbError:
            return False
        self.agent.warm_soon(
            entry.adapter,
            connection=entry.name,
            model=model or self.model or None,
            max_iterations=max_iterations if max_iterations is not None else self.max_iterations,
            failure_cutoff=self.failure_cutoff,
            settings=self.settings(no_data=False, connection=entry.name),
        )
        return True

    @property
    def memory(self):
        """The memory of accepted answers (:class:`~sqlnb.agent.memory.MemoryStore`) the
        agent and the ``%%sql`` cells share."""
        if self._agent is not None:
            return self._agent.memory
        with self._agent_lock:
            if self._memory is None:
                from sqlnb.agent.memory import MemoryStore

                self._memory = MemoryStore()
        return self._memory

    @property
    def agent(self):
        """The notebook's agent (created on first use: LangGraph loads only when asked).  One
        only, whichever thread asks first (a cell, the panel's question, its read-ahead)."""
        if self._agent is None:
            with self._agent_lock:
                if self._agent is None:
                    from sqlnb.agent.runner import Agent

                    agent = Agent(memory=self.memory)
                    agent.use_memory = self.use_memory
                    self._agent = agent
        return self._agent

    @observe("use_memory")
    def _use_memory_changed(self, change) -> None:
        if self._agent is not None:
            self._agent.use_memory = bool(change["new"])

    def settings(self, *, no_data: bool, connection: str):
        from sqlnb.agent.prompts import RENDERINGS
        from sqlnb.agent.settings import AgentSettings

        if self.rendering not in RENDERINGS:
            raise errors.UsageError(
                f"AskMagic.rendering must be one of {', '.join(RENDERINGS)}, not {self.rendering!r}"
            )
        share = not no_data and connection not in self.private_connections
        return AgentSettings(
            preview_rows=max(0, self.preview_rows),
            share_data=share,
            row_cap=max(1, self.row_cap),
            rendering=self.rendering,
            statement_timeout=self.statement_timeout or None,
            retry_drafts=None if self.retry_drafts < 0 else self.retry_drafts,
            first_drafts=None if self.first_drafts < 0 else self.first_drafts,
            disabled_rewrites=frozenset(self.disabled_rewrites),
            disabled_checks=frozenset(self.disabled_checks),
            memory_when_unsure=self.memory_when_unsure,
            require_readonly_role=self.require_readonly_role,
            explain=self.explain,
            correct_findings=self.correct_findings,
        )

    @cell_magic("ask")
    @_people_errors
    def ask(self, line: str, cell: str):
        """%%ask [--conn NAME] [--model SPEC] [--max-iterations N] [--no-review] [--no-insert]
        [--no-data] [--no-memory] [--new] — then the question in the cell body."""
        try:
            args = _ask_parser().parse_args(shlex.split(line))
        except ValueError as exc:
            raise errors.UsageError(f"%%ask: {exc}") from None
        question = (cell or "").strip()
        if not question:
            raise errors.UsageError("%%ask needs a question", hint="write it in the cell body below %%ask")
        entry = self.manager.get_entry(args.conn)
        if args.new:
            self.agent.reset(entry.name)
        max_iterations = args.max_iterations if args.max_iterations is not None else self.max_iterations
        if max_iterations < 1:
            raise errors.UsageError("--max-iterations must be at least 1")

        # in a notebook the model's text and the phase show as they come, in one output
        # that updates in place; a terminal gets the progress lines only
        from sqlnb.display import LiveProgress, ask_progress_line

        live = LiveProgress() if getattr(self.shell, "kernel", None) is not None else None

        def progress(event: dict) -> None:
            if live is not None and live.update(event):
                return
            text = ask_progress_line(event)
            if text:
                print(text, flush=True)

        try:
            result = self.agent.ask(
                question,
                entry.adapter,
                connection=entry.name,
                model=args.model or self.model or None,
                max_iterations=max_iterations,
                failure_cutoff=self.failure_cutoff,
                no_review=args.no_review,
                settings=self.settings(no_data=args.no_data, connection=entry.name),
                on_event=progress,
                use_memory=False if args.no_memory else None,
                live=live is not None,
            )
        except errors.ModelNotConfigured as exc:
            # no model chosen and none installed: say how to set one up, as an error line,
            # without failing the cell (a notebook's "Run All" goes on past it)
            print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
            return None
        finally:
            if live is not None:
                live.close()
        self.last_result = result
        if not args.no_data:  # the next question's prompt, read while this answer is read
            self.read_ahead_for(entry.name, model=args.model, max_iterations=max_iterations)
        source = result.cell_source()
        if source and self.insert_cell and not args.no_insert:
            self._insert(source)
        elif source is None and result.status != "needs_clarification":
            print("No cell inserted: no query succeeded.", file=sys.stderr)
        return result

    def _insert(self, source: str) -> None:
        """Insert a cell: with the JupyterLab panel open, it inserts the cell below this
        one; without it, the frontend does (set_next_input)."""
        session = kernel_session(self.shell)
        bridge = session.bridge if session is not None else None
        if bridge is None or not bridge.insert_cell(source):
            self.shell.set_next_input(source, replace=False)

    def _pick(self, words: list[str]) -> None:
        """``%ask pick N``: a cell for the N-th other result the drafts of the last answer
        gave, inserted as the answer's would be (run it, then ``%sqlnb remember`` keeps it)."""
        result = self.last_result
        others = result.alternatives if result is not None else []
        if not others:
            raise errors.UsageError(
                "The last %%ask answer has no other readings",
                hint="its drafts agreed (or it had one); other readings are listed below an answer when they disagree",
            )
        try:
            n = int(words[1]) if len(words) == 2 else 0
        except ValueError:
            n = 0
        if not 1 <= n <= len(others):
            raise errors.UsageError(
                f"%ask pick takes the number of one of the {len(others)} other reading"
                f"{'s' if len(others) != 1 else ''} listed below the last answer",
                hint=f"e.g. %ask pick 1 (1 to {len(others)})",
            )
        assert result is not None
        source = result.cell_source(alternative=n)
        if source:
            self._insert(source)
            print(f"Inserted the other reading {n} of: {result.question}")

    @line_magic("ask")
    @_people_errors
    def ask_line(self, line: str):
        """%ask --new [--conn NAME]: forget the conversation; %ask history: earlier turns;
        %ask pick N: insert the N-th other reading of the last answer."""
        words = shlex.split(line)
        if words[:1] == ["pick"]:
            return self._pick(words)
        if words[:1] == ["history"]:
            name = self.manager.get_entry(
                words[2] if words[1:2] == ["--conn"] and len(words) > 2 else None
            ).name
            import pandas as pd

            return pd.DataFrame(self.agent.history(name), columns=["question", "status", "sql", "questions"])
        if words[:1] == ["--new"]:
            name = self.manager.get_entry(
                words[2] if words[1:2] == ["--conn"] and len(words) > 2 else None
            ).name
            self.agent.reset(name)
            print(f"Started a new conversation on {name!r}.")
            return None
        raise errors.UsageError(
            "%ask takes 'history', 'pick N' or '--new' [--conn NAME]",
            hint="ask a question with the cell magic: %%ask, then the question below",
        )
