"""The ``sqlnb`` command line: a thin front door over :mod:`sqlnb.session`.

    sqlnb sql --db URL [--readonly] [--json] [--timeout S] [--limit N] SQL
    sqlnb ask --db URL [--model SPEC] [--max-iterations N] [--no-review] [--no-data] [--json]
              [--require-readonly-role] QUESTION
    sqlnb model download NAME | sqlnb model list
    sqlnb memory list [--db URL] [--json] | export FILE [--db URL] | delete ID [ID ...] | delete --db URL
    sqlnb demo [--dir DIR] [--no-lab] [--port N] [--offline] [--no-browser]

Failures exit non-zero with a one-line message on stderr (1: the database or the
query failed, or ``ask`` found no answer; 2: bad usage or configuration; 3: ``ask``
needs clarification).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from sqlnb import errors


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        from sqlnb.adapters.spec import hide_unrecognized

        raise errors.UsageError(f"{self.prog}: {hide_unrecognized(message)}")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="sqlnb", description="Ask your database questions from a notebook or a terminal.")
    from sqlnb._version import __version__

    p.add_argument("--version", action="version", version=f"sqlnb {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    s = sub.add_parser("sql", help="run SQL and print the result")
    s.add_argument("--db", required=True, help="connection URL or configured connection name")
    s.add_argument("--readonly", action="store_true", help="refuse anything but a read-only query")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.add_argument("--timeout", type=float, default=30.0, help="statement timeout in seconds (default 30)")
    s.add_argument("--connect-timeout", type=float, default=10.0)
    s.add_argument("--limit", type=int, default=None, help="fetch at most N rows")
    s.add_argument(
        "sql",
        nargs="+",
        help="the SQL: one quoted argument, or several quoted statements (run in order; "
        "the last is shown), or the words of one statement unquoted",
    )

    a = sub.add_parser("ask", help="ask a question; print the SQL that answers it")
    a.add_argument("--db", required=True, help="connection URL or configured connection name")
    a.add_argument(
        "--model",
        "-m",
        help="model spec, e.g. anthropic:claude-sonnet-4-5, openai:gpt-4o-mini, llamacpp:qwen2.5-coder-1.5b",
    )
    a.add_argument("--max-iterations", type=int, default=5, help="model calls at most (default 5)")
    a.add_argument("--no-review", action="store_true", help="stop at the first successful query")
    a.add_argument("--no-data", action="store_true", help="show the model no rows or sample values")
    a.add_argument(
        "--retry-drafts",
        type=int,
        default=None,
        metavar="N",
        help="after a failed query, N fresh drafts of the question run beside the "
        "model's correction; the result most agree on is kept (0: off; default: "
        "3 for a local model, 0 for a hosted one, which pays for every draft)",
    )
    a.add_argument(
        "--first-drafts",
        type=int,
        default=None,
        metavar="N",
        help="up to N drafts of the first answer run beside the model's own reply "
        "until two agree; the result most drafts gave is kept (0: off; "
        "default: 3 for a local model, 0 for a hosted one)",
    )
    a.add_argument(
        "--no-memory", action="store_true", help="show the model no remembered answers of this database"
    )
    a.add_argument(
        "--no-explain",
        action="store_true",
        dest="no_explain",
        help="no explanation of the answer (one model call fewer)",
    )
    a.add_argument(
        "--no-correct",
        action="store_true",
        dest="no_correct",
        help="keep the first answer when the answer checks doubt it (no correction call)",
    )
    a.add_argument("--json", action="store_true", help="print one JSON object")
    a.add_argument(
        "--require-readonly-role",
        action="store_true",
        help="refuse to ask when the credentials may write (or sqlnb cannot tell); "
        "the agent's own queries are read-only either way",
    )
    a.add_argument("--timeout", type=float, default=30.0, help="statement timeout in seconds (default 30)")
    a.add_argument("--connect-timeout", type=float, default=10.0)
    a.add_argument("question", nargs="+", help="the question")

    mem = sub.add_parser("memory", help="the remembered answers (~/.sqlnb/memory.sqlite or $SQLNB_HOME)")
    memsub = mem.add_subparsers(dest="memory_command", parser_class=_Parser)
    ml = memsub.add_parser("list", help="list the remembered answers (of one database with --db)")
    ml.add_argument("--db", help="connection URL or configured name: only this database's")
    ml.add_argument("--json", action="store_true", help="print a JSON list")
    me = memsub.add_parser("export", help="write the remembered answers to a JSON file")
    me.add_argument("file")
    me.add_argument("--db", help="connection URL or configured name: only this database's")
    md = memsub.add_parser("delete", help="delete remembered answers by id, or all of one database (--db)")
    md.add_argument("ids", nargs="*", type=int)
    md.add_argument("--db", help="connection URL or configured name: all of this database's")

    m = sub.add_parser("model", help="manage the offline model")
    msub = m.add_subparsers(dest="model_command", parser_class=_Parser)
    dl = msub.add_parser("download", help="fetch an offline model into the cache (sha256 checked)")
    dl.add_argument("name", help="e.g. qwen2.5-coder-1.5b")
    dl.add_argument(
        "--dir", default=None, help="cache folder (default $SQLNB_MODEL_DIR or ~/.cache/sqlnb/models)"
    )
    msub.add_parser("list", help="the models sqlnb can download, and which are here")

    d = sub.add_parser("demo", help="create the sample DuckDB database and notebook, open JupyterLab")
    d.add_argument("--dir", default="sqlnb-demo", help="folder for the sample files (default ./sqlnb-demo)")
    d.add_argument("--no-lab", action="store_true", help="only create the files")
    d.add_argument("--port", type=int, default=8888)
    d.add_argument(
        "--offline",
        action="store_true",
        help="first set up the offline model: install llama-cpp-python (a source "
        "build, ~8-12 min on 2 cores, once) and download "
        "qwen2.5-coder-1.5b (1.1 GB)",
    )
    d.add_argument("--no-browser", action="store_true", help="start JupyterLab without opening a browser")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help(sys.stderr)
            return 2
        return {"sql": cmd_sql, "ask": cmd_ask, "model": cmd_model, "demo": cmd_demo, "memory": cmd_memory}[
            args.command
        ](args)
    except errors.SqlnbError as exc:
        print(f"sqlnb: error: {_one_line(exc)}", file=sys.stderr)
        return 2 if isinstance(exc, (errors.ConfigurationError, errors.UsageError)) else 1
    except KeyboardInterrupt:
        print("sqlnb: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: still one line, details on request
        import os

        if os.environ.get("SQLNB_DEBUG"):
            raise
        print(
            f"sqlnb: internal error: {type(exc).__name__}: {' '.join(str(exc).split())} "
            "(set SQLNB_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return 1


def _one_line(exc: errors.SqlnbError) -> str:
    return " ".join(str(exc).split())


def sql_texts(parts: list[str]) -> list[str]:
    """The SQL texts of ``sqlnb sql``'s arguments: several arguments that each hold a space
    were quoted one statement each (``"CREATE TABLE t (a)" "SELECT * FROM t"``), so each
    runs as written, in order (never joined into one text, where a trailing comment of one
    would swallow the next); otherwise the arguments are the words of one SQL text."""
    if len(parts) > 1 and all(len(p.split()) > 1 for p in parts):
        return list(parts)
    return [" ".join(parts)]


def cmd_sql(args) -> int:
    from sqlnb.adapters import ConnectOptions
    from sqlnb.display import result_json, result_table
    from sqlnb.session import ConnectionManager, run_statements

    texts = sql_texts(args.sql)
    if args.limit is not None and args.limit < 0:
        raise errors.UsageError("--limit must be 0 (no limit) or a positive number")
    manager = ConnectionManager()
    options = ConnectOptions(statement_timeout=args.timeout or None, connect_timeout=args.connect_timeout)
    # --json says what the connection's credentials may write (a few catalog queries)
    entry = manager.connect(args.db, "cli", readonly=args.readonly, options=options, inspect=args.json)
    try:
        for text in texts:
            result = run_statements(entry.adapter, text, max_rows=args.limit or None)
        connection = connection_info(manager, entry) if args.json else None
    finally:
        manager.close_all()
    if args.json:
        print(result_json(result, connection))
    else:
        print(result_table(result))
    return 0


def connection_info(manager, entry) -> dict:
    """The connection as ``--json`` shows it: name, engine, URL without password, readonly,
    and ``write_access`` (what its credentials may change: ``can_write`` True, False or
    None when sqlnb could not tell, a ``summary`` for people, counts and flags)."""
    from sqlnb.adapters.privileges import write_access

    row = manager.describe_entry(entry)
    return {
        "name": row["name"],
        "engine": row["engine"],
        "url": row["url"],
        "readonly": bool(row["readonly"]),
        "write_access": write_access(entry.adapter).to_dict(),
    }


def cmd_ask(args) -> int:
    import json

    from sqlnb.adapters import ConnectOptions
    from sqlnb.agent.runner import Agent
    from sqlnb.agent.settings import AgentSettings
    from sqlnb.display import ask_progress_line, ask_summary
    from sqlnb.session import ConnectionManager

    if args.max_iterations < 1:
        raise errors.UsageError("--max-iterations must be at least 1")
    if args.retry_drafts is not None and args.retry_drafts < 0:
        raise errors.UsageError("--retry-drafts must be 0 or more")
    if args.first_drafts is not None and args.first_drafts < 0:
        raise errors.UsageError("--first-drafts must be 0 or more")
    question = " ".join(args.question)
    manager = ConnectionManager()
    options = ConnectOptions(statement_timeout=args.timeout or None, connect_timeout=args.connect_timeout)
    # a read-only connection: the agent never writes, and the session says so too
    entry = manager.connect(
        args.db, "cli", readonly=True, options=options, inspect=args.require_readonly_role
    )

    def progress(event: dict) -> None:
        text = ask_progress_line(event)
        if text and not args.json:
            print(text, file=sys.stderr, flush=True)

    try:
        agent = Agent(memory=not args.no_memory)
        result = agent.ask(
            question,
            entry.adapter,
            connection=entry.name,
            model=args.model,
            max_iterations=args.max_iterations,
            no_review=args.no_review,
            settings=AgentSettings(
                share_data=not args.no_data,
                retry_drafts=args.retry_drafts,
                first_drafts=args.first_drafts,
                require_readonly_role=args.require_readonly_role,
                explain=not args.no_explain,
                correct_findings=not args.no_correct,
            ),
            on_event=progress,
        )
    finally:
        manager.close_all()
    if args.json:
        from sqlnb.display import json_value

        data = result.to_dict()
        data["rows"] = [[json_value(v) for v in row] for row in data["rows"]]
        print(json.dumps(data, ensure_ascii=False))
    else:
        print(ask_summary(result))
    if result.status == "needs_clarification":
        return 3
    return 0 if result.status == "success" else 1


def cmd_model(args) -> int:
    from sqlnb.agent.download import download_model, known_models, model_path

    if args.model_command == "download":
        path = download_model(args.name, dest_dir=args.dir)
        from sqlnb.agent.download import DEFAULT_MODEL

        how = (
            f"sqlnb uses it when no other model is chosen (or: --model llamacpp:{args.name})"
            if args.name == DEFAULT_MODEL
            else f"Use it with --model llamacpp:{args.name}"
        )
        print(f"{path}\n{how}; it runs with llama-cpp-python: pip install 'sqlnb[local]'")
        return 0
    if args.model_command == "list":
        for name in known_models():
            path = model_path(name)
            print(f"{name}\t{'downloaded: ' + str(path) if path.exists() else 'not downloaded'}")
        return 0
    raise errors.UsageError("sqlnb model needs a command", hint="sqlnb model download qwen2.5-coder-1.5b")


def cmd_memory(args) -> int:
    import json

    from sqlnb.agent.memory import MemoryStore, database_fingerprint

    store = MemoryStore()
    fingerprint = None
    if getattr(args, "db", None):
        from sqlnb.session import ConnectionManager

        manager = ConnectionManager()
        try:
            fingerprint = database_fingerprint(
                manager.connect(args.db, "cli", readonly=True, inspect=False).adapter
            )
        finally:
            manager.close_all()
    if args.memory_command == "list":
        entries = store.entries(fingerprint)
        if args.json:
            print(json.dumps(entries, ensure_ascii=False))
        for e in [] if args.json else entries:
            first = (e["sql"].strip().splitlines() or [""])[0]
            print(
                f"{e['id']}\t{e['created_at'][:10]}\t{e['source']}\t{e['connection']}\t"
                f"{e['question']}\t{first}"
            )
        if not entries and not args.json:
            print(
                f"No remembered answers{' of this database' if fingerprint else ''} in {store.path}. "
                "An answer is remembered when its cell runs, with 👍 in the sidebar, or with "
                "%sqlnb remember on a %%sql cell.",
                file=sys.stderr,
            )
        return 0
    if args.memory_command == "export":
        n = store.export(args.file, fingerprint)
        print(f"Exported {n} remembered answer{'s' * (n != 1)} to {args.file}")
        return 0
    if args.memory_command == "delete":
        if not args.ids and fingerprint is None:
            raise errors.UsageError(
                "sqlnb memory delete needs ids, or --db for all of one database",
                hint="sqlnb memory list shows the ids",
            )
        n = store.delete(args.ids or None, fingerprint=fingerprint)
        print(f"Deleted {n} remembered answer{'s' * (n != 1)}")
        if args.ids and n < len(set(args.ids)):
            print("Some ids were not found: sqlnb memory list shows the ids", file=sys.stderr)
        return 0
    raise errors.UsageError(
        "sqlnb memory needs a command", hint="sqlnb memory list | export FILE | delete ID"
    )


def cmd_demo(args) -> int:
    from sqlnb.demo import launch_lab, prepare_demo

    if args.offline:
        setup_offline()

    notebook = prepare_demo(args.dir)
    print(f"Sample database and notebook ready: {notebook}")
    if args.no_lab:
        return 0
    return launch_lab(notebook, port=args.port, open_browser=not args.no_browser)


def setup_offline() -> None:
    """``sqlnb demo --offline``: the runtime (the ``local`` extra) and the default model,
    each step with its estimate first and a progress bar."""
    from sqlnb.agent.download import (
        BUILD_ESTIMATE,
        DEFAULT_MODEL,
        DOWNLOAD_ESTIMATE,
        LOCAL_REQUIREMENTS,
        download_model,
        get_model_spec,
        install_runtime,
    )

    spec = get_model_spec(DEFAULT_MODEL)
    print(
        f"Setting up the offline model {DEFAULT_MODEL} ({spec.description}):\n"
        f"  1/2 install {', '.join(LOCAL_REQUIREMENTS)}: {BUILD_ESTIMATE}\n"
        f"  2/2 download the model: {DOWNLOAD_ESTIMATE}",
        file=sys.stderr,
        flush=True,
    )
    install_runtime()
    path = download_model(DEFAULT_MODEL)
    print(
        f"Offline model ready: {path}\n%%ask uses it unless SQLNB_MODEL, "
        "%config AskMagic.model or ANTHROPIC_API_KEY choose another.",
        file=sys.stderr,
        flush=True,
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
