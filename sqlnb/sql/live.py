"""The read-only guard's function policy for a connected session.

An adapter owns one :class:`SessionFunctions` and hands it a query callable
(``query(sql)`` runs a query of sqlnb's own on the engine's metadata, on the adapter's
connection, and returns its rows).  The policy is read through it once per session —
:meth:`SessionFunctions.policy` reads it again when the session object it is given
changes (a reconnect) — and keeps asking the engine, through the same callable, about the
functions each statement calls.  Where the metadata cannot be read, the snapshot shipped
with sqlnb stands in (:func:`sqlnb.sql.functions.snapshot_policy`).

This module sits above both :mod:`sqlnb.sql.guard` and :mod:`sqlnb.sql.functions`: the
guard takes a policy, and a live DuckDB policy judges a user's macro body with the guard,
so the guard is passed in here (the two never import each other in a cycle).
"""

from __future__ import annotations

import logging

from sqlnb.sql.functions import (
    SNAPSHOTS,
    FunctionPolicy,
    Query,
    duckdb_policy,
    postgres_policy,
    snapshot_policy,
)
from sqlnb.sql.guard import check_read_only

_log = logging.getLogger(__name__)


def duckdb_macro_problem(sql: str, policy: FunctionPolicy) -> str | None:
    """The guard's word on a DuckDB macro's body (as a query) under ``policy``: why it is
    not read-only, or None when it is."""
    verdict = check_read_only(sql, "duckdb", policy)
    return None if verdict.read_only else verdict.reason


def read_live_policy(
    dialect: str, query: Query, *, engine: str, readonly: bool = False
) -> FunctionPolicy | None:
    """The function policy of the session ``query`` reaches, read from the engine's own
    metadata now; None where the engine publishes none.  ``engine``: its display name;
    ``readonly``: a read-only connection (a DuckDB one cannot create macros, so no lookup
    per statement).  When the metadata cannot be read, the shipped snapshot stands in."""
    if dialect not in SNAPSHOTS:
        return None
    try:
        if dialect == "duckdb":
            return duckdb_policy(query, look_up=not readonly, check_macro=duckdb_macro_problem)
        return postgres_policy(query, engine=engine)
    except Exception as exc:
        _log.warning(
            "could not read the function metadata of %s (%s); the guard uses sqlnb's snapshot", engine, exc
        )
        return snapshot_policy(dialect)


class SessionFunctions:
    """One connection's function policy, read through ``query`` once per session.

    The adapter passes its own bound method as ``query`` (it runs the statement on its
    connection, one at a time, and turns a lost session into
    :class:`~sqlnb.errors.ConnectionLost`); the cache lives here, not on the adapter."""

    def __init__(self, dialect: str, query: Query, *, engine: str, readonly: bool = False):
        self.dialect = dialect
        self.engine = engine
        self.readonly = readonly
        self._query = query
        self._session: object | None = None
        self._policy: FunctionPolicy | None = None
        self._read = False

    def policy(self, session: object) -> FunctionPolicy | None:
        """The policy of ``session`` (the driver connection now open): the one read before
        while it is the same object, else read again."""
        if self.dialect not in SNAPSHOTS:
            return None
        if self._read and self._session is session:
            return self._policy
        policy = read_live_policy(self.dialect, self._query, engine=self.engine, readonly=self.readonly)
        self._session, self._policy, self._read = session, policy, True
        return policy
