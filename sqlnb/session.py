"""Named connections (one active) and running a cell's SQL: what the front doors share.

The magics and the CLI talk to this module, never to drivers.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlnb import errors
from sqlnb.adapters import Adapter, ConnectOptions, Result, connect
from sqlnb.adapters.privileges import WriteAccess, write_access
from sqlnb.adapters.spec import known_names, shown_name, spec_for
from sqlnb.sql.text import find_params, split_statements


@dataclass
class Entry:
    name: str
    adapter: Adapter


class ConnectionManager:
    """The named connections of one notebook (kernel); exactly one is active."""

    def __init__(self) -> None:
        self._entries: dict[str, Entry] = {}
        self.active: str | None = None

    # ---- lifecycle -------------------------------------------------------------------
    def connect(
        self,
        target: str,
        name: str | None = None,
        *,
        readonly: bool = False,
        options: ConnectOptions | None = None,
        inspect: bool = True,
        password: str | None = None,
    ) -> Entry:
        """Open ``target`` (a URL or a configured connection name) and make it active.

        ``inspect``: also find out now what the connection's credentials may write
        (:func:`sqlnb.adapters.privileges.write_access`, cached for the connection; a
        failure to find out never fails the connect).  Off, it is found on first use.
        ``password``: the password for a URL given without one (the panel's connect form),
        kept in memory only."""
        if not target or not target.strip():
            raise errors.UsageError(
                "No connection URL or name given",
                hint="e.g. %sqlnb connect duckdb:///data.duckdb --name local",
            )
        named = spec_for(target.strip())
        if password:
            named = dataclasses.replace(named, spec=named.spec.with_password(password))
        name = name or named.name or self._default_name(named.spec)
        _check_name(name)
        opts = options or ConnectOptions()
        overrides = dict(named.options)
        if readonly:
            overrides["readonly"] = True
        if overrides:
            opts = opts.replace(**overrides)
        if name in self._entries:
            self.close(name)  # reconnecting under the same name replaces it
        adapter = connect(named.spec, opts)
        if inspect:
            write_access(adapter)
        entry = Entry(name, adapter)
        self._entries[name] = entry
        self.active = name
        return entry

    @staticmethod
    def known_names() -> list[str]:
        """The names of the configured connections (the connections file, ``SQLNB_<NAME>_URL``)."""
        return known_names()

    def use(self, name: str) -> Entry:
        entry = self.get_entry(name)
        self.active = entry.name
        return entry

    def close(self, name: str) -> None:
        entry = self.get_entry(name)
        entry.adapter.close()
        del self._entries[name]
        if self.active == name:
            self.active = next(iter(self._entries), None)

    def close_all(self) -> None:
        for name in list(self._entries):
            self.close(name)

    # ---- lookup ----------------------------------------------------------------------
    def get_entry(self, name: str | None = None) -> Entry:
        if name is None:
            if self.active is None:
                raise errors.NoActiveConnectionError(
                    "No active connection",
                    hint="connect first: %sqlnb connect duckdb:///data.duckdb (or a name from "
                    "~/.sqlnb/connections.toml)",
                )
            name = self.active
        entry = self._entries.get(name)
        if entry is None:  # raised outside an except: no KeyError(name) as its __context__
            known = ", ".join(self._entries) or "none open"
            shown = shown_name(name)  # a URL given where a name belongs: no password shown
            raise errors.UnknownConnectionError(
                f"No open connection named {shown!r}",
                hint=f"open connections: {known}; open one with %sqlnb connect URL --name {shown}",
            )
        return entry

    def get(self, name: str | None = None) -> Adapter:
        return self.get_entry(name).adapter

    def names(self) -> list[str]:
        return list(self._entries)

    def describe(self) -> list[dict[str, Any]]:
        """One row per connection: name, active, engine, url (no password), readonly (the
        connection), and what its credentials may write: ``can_write`` (True, False, or
        None when sqlnb could not tell) and ``write_access`` (one line for people)."""
        return [self.describe_entry(entry) for entry in self._entries.values()]

    def describe_entry(self, entry: Entry) -> dict[str, Any]:
        a = entry.adapter
        access = write_access(a)
        return {
            "name": entry.name,
            "active": entry.name == self.active,
            "engine": a.display_name,
            "url": a.spec.redacted_url(),
            "readonly": a.options.readonly,
            "can_write": access.can_write,
            "write_access": access.summary,
        }

    def write_access(self, name: str | None = None) -> WriteAccess:
        """What the credentials of connection ``name`` (default: the active one) may write."""
        return write_access(self.get(name))

    def _default_name(self, spec) -> str:
        base = spec.scheme
        if spec.database:
            stem = os.path.splitext(os.path.basename(spec.database))[0]
            base = re.sub(r"[^A-Za-z0-9_]+", "_", stem) or spec.scheme
        name, i = base, 2
        while name in self._entries:
            name, i = f"{base}_{i}", i + 1
        return name


def _check_name(name: str) -> None:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.\-]*", name):
        raise errors.UsageError(
            f"Invalid connection name {shown_name(name)!r}",
            hint="use letters, digits, _ . and -, starting with a letter",
        )


def run_statements(
    adapter: Adapter,
    text: str,
    *,
    lookup: Callable[[str], Any] | None = None,
    params: Mapping[str, Any] | None = None,
    max_rows: int | None = None,
    timeout: float | None = None,
    on_result: Callable[[int, int, Result], None] | None = None,
) -> Result:
    """Run every statement of ``text`` in order and return the last result.

    ``:name`` parameters come from ``params`` or, failing that, ``lookup(name)`` (the
    notebook namespace) and are bound by the driver.  A failure names the statement
    (``statement 2 of 3``) and says that the earlier ones already ran.
    """
    statements = split_statements(text, adapter.dialect)
    if not statements:
        raise errors.UsageError("The cell has no SQL to run", hint="write a statement below the magic line")
    result: Result | None = None
    for i, sql in enumerate(statements, 1):
        names = find_params(sql, adapter.dialect)
        values: dict[str, Any] = {}
        for n in names:
            if params is not None and n in params:
                values[n] = params[n]
            elif lookup is not None:
                try:
                    values[n] = lookup(n)
                except KeyError:
                    raise errors.UsageError(
                        f"No variable named {n!r} for parameter :{n}",
                        hint=f"define {n} in the notebook first (write ::{n} for a cast)",
                    ) from None
        values = {k: plain_value(v) for k, v in values.items()}
        try:
            result = adapter.execute(sql, values or None, max_rows=max_rows, timeout=timeout)
        except errors.SqlnbError as exc:
            if len(statements) > 1:
                done = (
                    f"; statements 1-{i - 1} already ran"
                    if i > 2
                    else ("; statement 1 already ran" if i == 2 else "")
                )
                exc.message = f"Statement {i} of {len(statements)} failed{done}: {exc.message}"
            raise
        if on_result is not None:
            on_result(i, len(statements), result)
    assert result is not None
    return result


def plain_value(v: Any) -> Any:
    """NumPy and pandas scalars (``df.n[0]``, ``pd.Timestamp``) as the plain Python values
    every driver can bind; missing values (NaN-like ``pd.NA``, ``NaT``) as NULL."""
    module = type(v).__module__
    if module.startswith("pandas"):
        import pandas as pd

        if v is pd.NA or v is pd.NaT:
            return None
        if isinstance(v, pd.Timestamp):
            return v.to_pydatetime()
        if isinstance(v, pd.Timedelta):
            return v.to_pytimedelta()
    if module == "numpy" and hasattr(v, "item"):
        import numpy as np

        if isinstance(v, np.datetime64):
            import pandas as pd

            return None if np.isnat(v) else pd.Timestamp(v).to_pydatetime()
        return v.item()
    return v
