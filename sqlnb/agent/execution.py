"""Running one of the agent's queries, and what two results must share to count as the same
answer: used by the execute node and by the first round's drafts."""

from __future__ import annotations

import datetime as _dt
import decimal
import time
from typing import TYPE_CHECKING, Any

from sqlnb import errors
from sqlnb.adapters import Result

if TYPE_CHECKING:
    from sqlnb.agent.nodes import AgentContext

# one statement run: (its SQL, its result or error, seconds)
Run = tuple[str, Result | errors.SqlnbError, float]
# what two results must share to count as the same answer (:func:`fingerprint`): the
# number of columns, and the rows (each value's repr) in order
Fingerprint = tuple[int, tuple[tuple[str, ...], ...]]


def run_statement(sql: str, ctx: AgentContext) -> Run:
    """One statement through the guard and the read-only session: its result or error."""
    s = ctx.settings
    if ctx.live is not None:
        ctx.live.phase("running")
    start = time.perf_counter()
    try:
        # readonly=True: the guard refuses writes before the database sees them, and the
        # statement runs in a read-only session scope of the connection
        outcome: Result | errors.SqlnbError = ctx.adapter.execute(
            sql, max_rows=s.row_cap, readonly=True, timeout=s.statement_timeout
        )
    except errors.SqlnbError as exc:
        outcome = exc
    return sql, outcome, time.perf_counter() - start


def fingerprint(result: Result) -> Fingerprint | None:
    """What two results must share to count as the same answer: their rows as a multiset
    (column names aside).  None for an empty result."""
    table = result.arrow
    if table is None or nothing_found(result):
        return None
    cols = [col.to_pylist() for col in table.columns]
    rows = sorted(tuple(repr(plain_value(v)) for v in row) for row in zip(*cols, strict=True))
    return (table.num_columns, tuple(rows))


def nothing_found(result: Result) -> bool:
    """Whether a result found nothing: no rows, or one row of only zeros and NULLs (a count
    or sum over rows a filter did not match)."""
    table = result.arrow
    if table is None or table.num_rows == 0:
        return True
    if table.num_rows != 1:
        return False
    values = [col[0].as_py() for col in table.columns]
    return all(
        v is None or (isinstance(v, (int, float, decimal.Decimal)) and not isinstance(v, bool) and v == 0)
        for v in values
    )


def plain_value(v: Any) -> Any:
    """A result's value as plain, checkpointable data."""
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
