"""``%sqlnb``, ``%%sql`` and ``%sql``: thin front doors over :mod:`sqlnb.session`."""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from typing import Any

from IPython.core.magic import Magics, line_cell_magic, line_magic, magics_class
from traitlets import Bool, Float, Int

from sqlnb import errors
from sqlnb.adapters import ConnectOptions
from sqlnb.adapters.spec import hide_unrecognized
from sqlnb.display import ResultView
from sqlnb.kernel import kernel_session
from sqlnb.session import ConnectionManager, run_statements


class MagicArgumentParser(argparse.ArgumentParser):
    """argparse that raises a one-line UsageError instead of exiting the kernel."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise errors.UsageError(
            f"{self.prog}: {hide_unrecognized(message)}", hint=f"usage: {self.format_usage().strip()[7:]}"
        )

    def exit(self, status: int = 0, message: str | None = None) -> None:  # type: ignore[override]
        if message:
            raise errors.UsageError(message.strip())
        raise errors.UsageError(self.format_help())


def _sqlnb_parser() -> MagicArgumentParser:
    p = MagicArgumentParser(prog="%sqlnb", add_help=False)
    sub = p.add_subparsers(dest="command", parser_class=MagicArgumentParser)
    c = sub.add_parser("connect", prog="%sqlnb connect", add_help=False)
    c.add_argument("target", help="URL or configured connection name")
    c.add_argument("--name", "-n")
    c.add_argument("--readonly", action="store_true")
    c.add_argument("--timeout", type=float, help="statement timeout in seconds")
    c.add_argument("--connect-timeout", type=float)
    u = sub.add_parser("use", prog="%sqlnb use", add_help=False)
    u.add_argument("name")
    sub.add_parser("list", prog="%sqlnb list", add_help=False)
    s = sub.add_parser("schema", prog="%sqlnb schema", add_help=False)
    s.add_argument("table", nargs="?")
    s.add_argument("--conn")
    s.add_argument("--refresh", action="store_true")
    s.add_argument("--sample", type=int, default=0, help="also show N sample rows of TABLE")
    cl = sub.add_parser("close", prog="%sqlnb close", add_help=False)
    cl.add_argument("name")
    r = sub.add_parser("remember", prog="%sqlnb remember", add_help=False)
    r.add_argument("question", nargs="*", help="the question the last %%sql cell answers")
    st = sub.add_parser("stats", prog="%sqlnb stats", add_help=False)
    st.add_argument("--reset", action="store_true", help="start counting afresh")
    m = sub.add_parser("memory", prog="%sqlnb memory", add_help=False)
    m.add_argument("action", nargs="?", default="list", choices=("list", "export", "delete", "clear"))
    m.add_argument("args", nargs="*", help="export: FILE; delete: ID [ID ...]")
    m.add_argument("--all", action="store_true", help="every database's entries, not only this one's")
    m.add_argument("--conn")
    return p


def _sql_parser() -> MagicArgumentParser:
    p = MagicArgumentParser(prog="%%sql", add_help=False)
    p.add_argument("--conn", "-c")
    p.add_argument("-o", "--output", dest="output")
    p.add_argument("--limit", type=int, help="fetch at most N rows (0: no limit)")
    p.add_argument("--timeout", type=float)
    p.add_argument("--chart", action="store_true", help="also draw the result as a chart")
    return p


_LINE_OPTION = re.compile(r"^\s*(--conn|-c|-o|--output|--limit|--timeout)(?:\s+|=)(\"[^\"]*\"|'[^']*'|\S+)")
_LINE_FLAG = re.compile(r"^\s*(--chart)(?=\s|$)")


def split_line_options(line: str) -> tuple[list[str], str]:
    """Leading options of ``%sql`` and the SQL that follows, untouched (quotes kept)."""
    opts: list[str] = []
    rest = line
    while True:
        m = _LINE_OPTION.match(rest)
        if m:
            opts += [m.group(1), shlex.split(m.group(2))[0]]
        else:
            m = _LINE_FLAG.match(rest)
            if not m:
                break
            opts.append(m.group(1))
        rest = rest[m.end() :]
    return opts, rest.strip()


def people_errors(func):
    """Unexpected exceptions become one readable line too (``%tb`` still has the details)."""
    import functools

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except (errors.SqlnbError, KeyboardInterrupt):
            raise
        except Exception as exc:
            raise errors.SqlnbError(
                f"Unexpected {type(exc).__name__}: {' '.join(str(exc).split())}",
                hint="this is a bug in sqlnb; %tb shows the details",
            ) from exc

    return wrapper


@magics_class
class SqlMagic(Magics):
    """Runnable SQL cells.  Settings: ``%config SqlMagic.display_limit = 50`` and so on."""

    display_limit = Int(20, help="Rows rendered for a result; the full result is kept with -o VAR.").tag(
        config=True
    )
    autolimit = Int(
        100_000,
        help="Rows fetched for a displayed result without -o (0: no limit). "
        "Keeps a 10-million-row query from filling the kernel's memory.",
    ).tag(config=True)
    statement_timeout = Float(
        30.0, help="Seconds before a statement is cancelled on the server (0: none)."
    ).tag(config=True)
    connect_timeout = Float(10.0, help="Seconds to wait for a connection.").tag(config=True)
    show_progress = Bool(True, help="Show which statement runs in a multi-statement cell.").tag(config=True)

    def __init__(self, shell=None, **kwargs: Any):
        super().__init__(shell=shell, **kwargs)
        self.manager = ConnectionManager()
        self._last_cell: tuple[str, Any, str] | None = None  # connection, adapter, SQL
        self._own_memory = None
        self._memory_warned = False

    # ------------------------------------------------------------------ %sqlnb
    @line_magic("sqlnb")
    @people_errors
    def sqlnb(self, line: str):
        """%sqlnb connect URL|NAME [--name NAME] [--readonly] | use NAME | list | schema [TABLE] | close NAME
        | remember ["QUESTION"] | memory [--all] | memory export FILE | memory delete ID [ID ...] | memory clear
        | stats [--reset]"""
        try:
            args = _sqlnb_parser().parse_args(shlex.split(line))
        except ValueError as exc:  # unbalanced quotes
            raise errors.UsageError(f"%sqlnb: {exc}") from None
        if args.command is None:
            raise errors.UsageError(
                "%sqlnb needs a command",
                hint="connect URL [--name N] [--readonly] | use N | list | schema [TABLE] | "
                "close N | remember [QUESTION] | memory [list|export FILE|delete ID|clear] | stats",
            )
        return getattr(self, f"_cmd_{args.command}")(args)

    def _options(self, args) -> ConnectOptions:
        timeout = args.timeout if getattr(args, "timeout", None) is not None else self.statement_timeout
        ctimeout = getattr(args, "connect_timeout", None) or self.connect_timeout
        return ConnectOptions(readonly=False, statement_timeout=timeout or None, connect_timeout=ctimeout)

    def _cmd_connect(self, args):
        if "://" in args.target and re.search(r"://[^/@\s]*:[^/@\s]+@", args.target):
            print(
                "Note: this URL holds a password, which is saved with the notebook. Put it in "
                "~/.sqlnb/connections.toml, an environment variable or the keyring instead.",
                file=sys.stderr,
            )
        entry = self.manager.connect(
            args.target, args.name, readonly=args.readonly, options=self._options(args)
        )
        ro = " (read-only)" if entry.adapter.options.readonly else ""
        print(f"Connected to {entry.adapter.spec.redacted_url()} as {entry.name!r}{ro}; it is now active.")
        print(f"Write access: {self.manager.write_access(entry.name).summary}")

    def _cmd_use(self, args):
        entry = self.manager.use(args.name)
        print(f"Active connection: {entry.name!r} ({entry.adapter.spec.redacted_url()})")

    def _cmd_list(self, args):
        """The open connections, with what each one's credentials may write (``can_write``:
        True, False, or None when sqlnb could not tell; ``write_access``: one line)."""
        import pandas as pd

        rows = self.manager.describe()
        if not rows:
            print("No connections. Open one with %sqlnb connect URL")
            return None
        return pd.DataFrame(rows).set_index("name")

    def _cmd_close(self, args):
        self.manager.close(args.name)
        active = f"; active: {self.manager.active!r}" if self.manager.active else ""
        print(f"Closed {args.name!r}{active}")

    def _cmd_schema(self, args):
        from sqlnb.display import catalog_frame, table_frame

        adapter = self.manager.get(args.conn)
        catalog = adapter.catalog(refresh=args.refresh)
        if args.table:
            table = catalog.find(args.table)
            if table is None:
                import difflib

                close = difflib.get_close_matches(args.table, [t.name for t in catalog.tables], n=3)
                raise errors.TableNotFound(
                    f"No table or view named {args.table!r}",
                    hint=f"did you mean {', '.join(close)}?"
                    if close
                    else "%sqlnb schema lists them; add --refresh after changes",
                )
            from IPython.display import display

            display(table_frame(table))
            if args.sample:
                display(ResultView(adapter.sample(table.qualified_name, args.sample), self.display_limit))
            return None
        return catalog_frame(catalog)

    # ------------------------------------------------------------------ %sql / %%sql
    @line_cell_magic("sql")
    @people_errors
    def sql(self, line: str, cell: str | None = None):
        """%%sql [--conn NAME] [-o VAR] [--limit N] [--timeout S] [--chart]  — then SQL in the
        cell body.  ``--chart`` also draws the result (Vega-Lite) when its shape suits a chart.

        Also ``%sql [options] SQL`` on one line, which returns the DataFrame (with
        ``--chart``, it displays the chart too).
        """
        if cell is None:
            opts, text = split_line_options(line)
        else:
            try:
                opts, text = shlex.split(line), cell
            except ValueError as exc:
                raise errors.UsageError(f"%%sql: {exc}") from None
        args = _sql_parser().parse_args(opts)
        if args.limit is not None and args.limit < 0:
            raise errors.UsageError("--limit must be 0 (no limit) or a positive number of rows")
        if args.output and not args.output.isidentifier():
            raise errors.UsageError(f"-o needs a Python variable name, not {args.output!r}")
        if not text.strip():
            raise errors.UsageError(
                "The cell has no SQL to run",
                hint="write the SQL below %%sql" if cell is not None else "write the SQL after %sql",
            )
        entry = self.manager.get_entry(args.conn)
        if args.limit is not None:
            max_rows = args.limit or None
        elif args.output or cell is None:
            max_rows = None  # the user asked for the data itself
        else:
            max_rows = self.autolimit or None

        # Release the previous result of this output variable before fetching the new one:
        # holding both would double the peak, and allocators keep what was freed late
        # (measured: +129 MiB over five re-runs of a 1M-row cell, against +5 MiB).
        released = bool(args.output) and self.shell.user_ns.get(args.output) is not None
        if released:
            self.shell.user_ns[args.output] = None

        def lookup(name: str) -> Any:
            return self.shell.user_ns[name]

        progress = None
        if self.show_progress and cell is not None:
            progress = self._progress
        try:
            result = run_statements(
                entry.adapter,
                text,
                lookup=lookup,
                max_rows=max_rows,
                timeout=args.timeout,
                on_result=progress,
            )
        except errors.SqlnbError as exc:
            if released:
                exc.message += f" ({args.output} was cleared when the cell started; re-run to fill it)"
            raise
        df = None
        if args.output:
            df = result.to_pandas()
            self.shell.user_ns[args.output] = df
        view = ResultView(
            result, self.display_limit, fetch_limit=max_rows, connection=entry.name, stored_as=args.output
        )
        if cell is None:
            if not result.returns_rows:
                print(view.summary())
                return None
            df = df if df is not None else result.to_pandas()
            if args.chart:
                self._show_chart(result, df)
            return df
        self._last_cell = (entry.name, entry.adapter, text)
        self._remember_cell(entry.name, entry.adapter, text)
        from IPython.display import display

        if args.chart:
            self._show_chart(result, df)
        display(view)
        return None

    @staticmethod
    def _show_chart(result, df=None) -> None:
        """``--chart``: the result as a Vega-Lite chart (JupyterLab draws it), or a line
        saying why it gets none; the table shows either way."""
        from IPython.display import display

        from sqlnb.charts import Chart, chart_spec, why_no_chart

        if not result.returns_rows:
            print("No chart: the statement returned no rows.", file=sys.stderr)
            return
        if df is None:
            df = result.to_pandas()
        spec = chart_spec(df)
        if spec is None:
            print(
                f"No chart: {why_no_chart(df)}. A chart needs a category or a time column "
                "and a numeric measure.",
                file=sys.stderr,
            )
            return
        display(Chart(spec))  # its bundle: the Vega-Lite spec and a line of text

    # ------------------------------------------------------------------ the memory
    def _memory(self):
        """The memory of accepted answers (the agent's) and whether it is on."""
        session = kernel_session(self.shell)
        ask = session.ask if session is not None else None
        if ask is not None:
            return ask.memory, bool(ask.use_memory)
        if self._own_memory is None:
            from sqlnb.agent.memory import MemoryStore

            self._own_memory = MemoryStore()
        return self._own_memory, True

    def _remember_cell(self, name: str, adapter, text: str) -> None:
        """A cell ``%%ask`` wrote (its provenance comment) ran: its answer is accepted."""
        from sqlnb.agent.memory import provenance_question, remember_answer, without_provenance

        question = provenance_question(text)
        if not question:
            return
        store, on = self._memory()
        if not on:
            return
        try:
            remember_answer(
                store, adapter, question, without_provenance(text), connection=name, source="cell"
            )
        except errors.MemoryStoreError as exc:
            if not self._memory_warned:  # the cell ran; say once why nothing is remembered
                self._memory_warned = True
                print(f"Not remembered: {exc}", file=sys.stderr)
        except errors.UsageError:
            pass  # edited into something other than one read-only query: not an accepted answer

    def _cmd_remember(self, args):
        from sqlnb.agent.memory import provenance_question, remember_answer, without_provenance

        if self._last_cell is None:
            raise errors.UsageError(
                "No %%sql cell has run successfully in this session yet",
                hint='run the query in a %%sql cell, then %sqlnb remember "the question it answers"',
            )
        name, adapter, text = self._last_cell
        question = " ".join(args.question).strip() or provenance_question(text)
        if not question:
            raise errors.UsageError(
                "Which question does the last %%sql cell answer?",
                hint='say it: %sqlnb remember "How many orders are paid?"',
            )
        store, on = self._memory()
        if not on:
            raise errors.UsageError(
                "The memory of accepted answers is off", hint="turn it on: %config AskMagic.use_memory = True"
            )
        entry_id = remember_answer(
            store, adapter, question, without_provenance(text), connection=name, source="remember"
        )
        print(f"Remembered #{entry_id} for {name!r}: {question}")

    def _cmd_stats(self, args):
        """This session's questions: asked, answered, attempts, the model's and the
        database's time, tokens and the price of a hosted model's tokens."""
        from sqlnb.labels import stats_text

        session = kernel_session(self.shell)
        ask = session.ask if session is not None else None
        if ask is None or getattr(ask, "_agent", None) is None:
            print("No question asked in this session yet (%%ask, the sqlnb panel or sqlnb.chat()).")
            return None
        stats = ask.agent.stats
        if args.reset:
            stats.reset()
            print("Counting this session's questions afresh.")
            return None
        print(stats_text(stats.to_dict()))
        return None

    def _cmd_memory(self, args):
        from sqlnb.agent.memory import database_fingerprint

        store, _ = self._memory()
        fingerprint, where = None, "any database"
        if not args.all and args.action != "delete":
            entry = self.manager.get_entry(args.conn)
            fingerprint, where = database_fingerprint(entry.adapter), f"{entry.name!r}'s database"
        if args.action == "list":
            if args.args:
                raise errors.UsageError(
                    "%sqlnb memory takes no arguments",
                    hint="export FILE | delete ID [ID ...] | clear | --all",
                )
            return self._memory_frame(store.entries(fingerprint), where, with_connection=args.all)
        if args.action == "export":
            if len(args.args) != 1:
                raise errors.UsageError(
                    "%sqlnb memory export needs one FILE",
                    hint="e.g. %sqlnb memory export answers.json [--all]",
                )
            n = store.export(args.args[0], fingerprint)
            print(f"Exported {n} remembered answer{'s' * (n != 1)} of {where} to {args.args[0]}")
            return None
        if args.action == "delete":
            try:
                ids = [int(a) for a in args.args]
            except ValueError:
                raise errors.UsageError(
                    "%sqlnb memory delete takes entry ids (numbers)", hint="%sqlnb memory lists them"
                ) from None
            if not ids:
                raise errors.UsageError(
                    "%sqlnb memory delete needs the ids to delete",
                    hint="e.g. %sqlnb memory delete 3 7; %sqlnb memory lists them",
                )
            n = store.delete(ids)
            missing = "" if n == len(set(ids)) else " (the others were not there)"
            print(f"Deleted {n} remembered answer{'s' * (n != 1)}{missing}")
            return None
        # clear
        if args.args:
            raise errors.UsageError(
                "%sqlnb memory clear takes no arguments",
                hint="it clears the active connection's database (--conn NAME: another's)",
            )
        if args.all:
            raise errors.UsageError(
                "%sqlnb memory clear works on one database",
                hint="delete the file instead: " + str(store.path),
            )
        n = store.delete(fingerprint=fingerprint)
        print(f"Deleted {n} remembered answer{'s' * (n != 1)} of {where}")
        return None

    @staticmethod
    def _memory_frame(entries, where: str, *, with_connection: bool):
        import pandas as pd

        if not entries:
            print(
                f"No remembered answers for {where}. Run a cell %%ask inserted, or "
                '%sqlnb remember "QUESTION" after a %%sql cell.'
            )
            return None
        cols = ["id"] + (["connection"] if with_connection else []) + ["question", "sql", "source", "date"]
        rows = [
            {
                **e,
                "sql": (e["sql"].strip().splitlines() or [""])[0],
                "date": e["created_at"].replace("T", " ").rstrip("Z")[:16],
            }
            for e in entries
        ]
        return pd.DataFrame(rows, columns=cols).set_index("id")

    def _progress(self, i: int, n: int, result) -> None:
        if n > 1 and i < n:
            from sqlnb.display import format_elapsed

            what = (
                f"{result.row_count} rows"
                if result.returns_rows
                else (f"{result.row_count} rows affected" if result.row_count >= 0 else "done")
            )
            print(f"[{i}/{n}] {what} · {format_elapsed(result.elapsed)}")
