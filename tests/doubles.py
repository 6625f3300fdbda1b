"""Test doubles shared by the test modules.

- :func:`script`: a scripted model (``scripted:PATH``) answering with the replies given, in
  order; :func:`script_file` writes such a file as it is given (also a malformed one).
- :func:`sql_block`: a model's reply proposing a query in a fenced ``sql`` block.
- :func:`readonly_sqlite`: a read-only connection to a new SQLite file made by a script.
- :func:`loaded_shell`: IPython's ``InteractiveShell`` with sqlnb freshly loaded; the
  ``shell`` fixture of ``tests/conftest.py`` is that shell for one test.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell


def script_file(directory: Path, data: Any, name: str | None = None) -> str:
    """Write a scripted model's file into ``directory`` and return its path: ``data`` as
    JSON, or a ``str`` as it is (for files the model must refuse).  ``name`` defaults to the
    next free ``replies-N.json``, so one test can write several scripts."""
    if name is None:
        name = f"replies-{len(list(directory.glob('replies-*')))}.json"
    path = directory / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


def script(
    directory: Path,
    *replies: str,
    delay: float | None = None,
    drafts: list[str] | None = None,
    name: str | None = None,
) -> str:
    """The spec of a scripted model answering with ``replies`` in order; ``drafts`` are its
    replies to sampled calls (the agent's drafts) and ``delay`` the seconds each call waits
    first.  Without either, the file is the plain list of replies.  ``name``: the file's
    name (see :func:`script_file`)."""
    if delay is None and drafts is None:
        data: Any = list(replies)
    else:
        data = {"replies": list(replies), "delay": delay or 0.0}
        if drafts is not None:
            data["drafts"] = drafts
    return f"scripted:{script_file(directory, data, name)}"


def sql_block(sql: str, lead: str = "Here it is:") -> str:
    """A model's reply proposing ``sql``: ``lead`` (a line of prose; "" for none), then the
    query in a fenced ``sql`` block."""
    block = f"```sql\n{sql}\n```"
    return f"{lead}\n{block}" if lead else block


@contextmanager
def loaded_shell() -> Iterator[InteractiveShell]:
    """IPython's ``InteractiveShell`` with sqlnb loaded afresh (new magics, connections and
    agent; no ``AskMagic`` settings left by an earlier ``%config``, no pending next input);
    sqlnb is unloaded on leaving."""
    from IPython.core.interactiveshell import InteractiveShell

    import sqlnb.magics

    ip = InteractiveShell.instance()
    ip.config.pop("AskMagic", None)
    sqlnb.magics.load_ipython_extension(ip)
    ip.rl_next_input = None
    try:
        yield ip
    finally:
        sqlnb.magics.unload_ipython_extension(ip)


def readonly_sqlite(directory: Path, script: str, name: str = "shop") -> Any:
    """A read-only sqlnb connection to a new SQLite file made by ``script`` in
    ``directory`` (close it when done)."""
    import sqlite3

    from sqlnb.adapters import connect

    path = directory / f"{name}.sqlite"
    con = sqlite3.connect(path)
    con.executescript(script)
    con.close()
    return connect(f"sqlite:///{path}", readonly=True)


def readonly_duckdb(directory: Path, script: str, name: str = "shop") -> Any:
    """A read-only sqlnb connection to a new DuckDB file made by ``script`` in
    ``directory`` (close it when done)."""
    import duckdb

    from sqlnb.adapters import connect

    path = directory / f"{name}.duckdb"
    con = duckdb.connect(str(path))
    con.execute(script)
    con.close()
    return connect(f"duckdb:///{path}", readonly=True)
