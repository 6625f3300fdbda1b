"""What an answer rewrite is: a named rule that proposes a new query for a draft that ran
(:class:`Rewrite`), and what it reads (:class:`Draft`).  The rules themselves are in the
modules of this package, one family each; the registry is :data:`sqlnb.agent.repairs.REWRITES`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from sqlnb.adapters import Catalog, Result, Table

# what a rewritten query's result must keep for the rewrite to stand in for the draft:
# "runs": it ran; "finds_rows": it has rows; "same_row_count": as many rows as the draft's;
# "changes_result": it has rows and they are not the draft's (a rewrite that would only
# restate the draft's answer does not stand in, nor is it reported)
Keeps = Literal["runs", "finds_rows", "same_row_count", "changes_result"]
KEEPS: tuple[Keeps, ...] = ("runs", "finds_rows", "same_row_count", "changes_result")


@dataclass(frozen=True)
class Draft:
    """A draft query that ran, with what a rewrite may read about it."""

    sql: str
    dialect: str
    catalog: Catalog | None
    question: str
    result: Result  # the draft's own result
    # the distinct stored values of a column (table, column name): None where values may
    # not be read (data sharing or value hints off, or no lookup for this connection)
    stored_values: Callable[[Table, str], Sequence[object]] | None = None


# a rewrite's proposal: the new query and what it changed (for people), or None
Proposal = tuple[str, str] | None


@dataclass(frozen=True)
class Rewrite:
    """One answer rewrite, in the spirit of sqlglot's named transforms.

    ``name`` is the one name used everywhere: the value that turns it off
    (``AgentSettings.disabled_rewrites``, ``AskMagic.disabled_rewrites``), the key of what
    it changed in the attempt record (``Attempt["rewrites"]``) and of its confidence
    reason.  ``propose`` reads a :class:`Draft` and proposes the new query; the new query
    stands in for the draft only when it runs and its result ``keeps`` what it must.
    ``needs_values``: it reads stored values, so it runs only where they may be read.
    ``reason``: the confidence reason, with ``{change}`` for what it changed."""

    name: str
    summary: str
    propose: Callable[[Draft], Proposal]
    keeps: Keeps
    reason: str
    needs_values: bool = False

    def __post_init__(self) -> None:
        if self.keeps not in KEEPS:
            raise ValueError(f"Rewrite {self.name}: keeps must be one of {', '.join(KEEPS)}")
        if "{change}" not in self.reason:
            raise ValueError(f"Rewrite {self.name}: its reason must say what changed ({{change}})")

    def stands(self, rewritten: Result, draft: Result) -> bool:
        """Whether the rewritten query's result keeps what it must of the draft's."""
        if self.keeps == "finds_rows":
            return bool(rewritten.row_count)
        if self.keeps == "same_row_count":
            return rewritten.row_count == draft.row_count
        if self.keeps == "changes_result":
            return bool(rewritten.row_count) and _row_multiset(rewritten) != _row_multiset(draft)
        return True

    def reason_for(self, change: str) -> str:
        """The confidence reason of an answer this rewrite changed (``change``: what)."""
        return self.reason.format(change=change)


def _row_multiset(result: Result) -> list[str]:
    """A result's rows in a canonical order (each row's repr), to tell two results apart."""
    table = result.arrow
    if table is None:
        return []
    return sorted(repr(row) for row in zip(*(col.to_pylist() for col in table.columns), strict=True))
