"""What an answer check is: a named rule that reads the answer a turn kept and says what
speaks against it (:class:`Check`), and what it reads (:class:`Answer`).  A finding lowers
the answer's confidence with its reason; it never changes the answer.  The rules are in
the modules of this package; the registry is :data:`sqlnb.agent.checks.CHECKS`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from sqlglot import exp

from sqlnb.adapters import Catalog, Result, Table
from sqlnb.agent.sqltree import parse

# one read-only query of the data (a SELECT the checks build): its rows; raises when the
# database refuses it or the turn's time for lookups is spent
Lookup = Callable[[str], Sequence[tuple[Any, ...]]]


@dataclass(frozen=True)
class Answer:
    """The query a turn kept and what a check may read about it."""

    sql: str
    dialect: str
    question: str
    catalog: Catalog | None = None
    result: Result | None = None  # the kept query's result
    row_count: int | None = None
    # the distinct stored values of a column, and read-only lookups of the data: None where
    # data may not be read (a private connection, value lookups off)
    stored_values: Callable[[Table, str], Sequence[object]] | None = None
    lookup: Lookup | None = None

    @cached_property
    def tree(self) -> exp.Expr | None:
        """The kept query parsed (None when it does not parse)."""
        return parse(self.sql, self.dialect)

    def rows(self, limit: int = 200) -> list[tuple[Any, ...]]:
        """The first ``limit`` rows of the result (none without one)."""
        table = self.result.arrow if self.result is not None else None
        if table is None:
            return []
        cols = [col.to_pylist()[:limit] for col in table.slice(0, limit).columns]
        return list(zip(*cols, strict=True)) if cols else []

    def column_names(self) -> list[str]:
        """The result's column names (none without one)."""
        table = self.result.arrow if self.result is not None else None
        return list(table.column_names) if table is not None else []


# a check's finding: the reason, in words a person understands, or None
Finding = str | None
# the highest confidence an answer with a check's finding keeps
Ceiling = Literal["low", "medium"]


@dataclass(frozen=True)
class Check:
    """One answer check.

    ``name`` is the one name used everywhere: the value that turns it off
    (``AgentSettings.disabled_checks``, ``AskMagic.disabled_checks``), the key of its
    finding in the attempt record (``Attempt["checks"]``) and in the ablation.  ``find``
    reads an :class:`Answer` and returns the reason or None.  ``reads_data``: it queries the
    data (read-only, within the turn's lookup time), so it runs only where data may be read.
    ``asks``: its finding is a question for the user (the question has several readings):
    the turn asks it back, the answer shown as a guess the user may take.  ``advice``: what
    a corrected query does about a finding, in words for the model, shown after the finding
    when the model is asked for a correction (every check that does not ask has one).
    ``corrected``: a finding of it alone asks the model for a correction
    (:meth:`sqlnb.agent.runner.Agent._correct`); False for a check whose findings are too
    often about something else for the model to act on (it still lowers the rating, and is
    shown beside another check's finding).  ``ceiling``: the highest confidence an answer
    with a finding keeps: "low" (the finding doubts the answer: every check but one) or
    "medium" (the finding is missing evidence, not a doubt: the answer cannot be "high", and
    the finding is never shown to the model as something to correct).
    """

    name: str
    summary: str
    find: Callable[[Answer], Finding]
    reads_data: bool = False
    asks: bool = False
    advice: str = ""
    corrected: bool = True
    ceiling: Ceiling = "low"

    def __post_init__(self) -> None:
        if not self.name.isidentifier() or not self.name.islower():
            raise ValueError(f"Check {self.name!r}: a name is a lower-case identifier")
        if not self.asks and not self.advice.strip():
            raise ValueError(f"Check {self.name!r}: a check that does not ask back needs its advice")
        if self.ceiling != "low" and (self.asks or self.corrected):
            raise ValueError(
                f"Check {self.name!r}: a check that only keeps an answer from high neither asks nor corrects"
            )
