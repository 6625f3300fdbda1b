"""The agent's repairs of a draft query, without a model call.

The answer rewrites: each a :class:`~sqlnb.agent.repairs.rewrite.Rewrite` (one name, a
summary, the function that proposes the new query, what the new query's result must keep
to stand, whether it reads stored values), defined in the module of its family and listed
once in :data:`REWRITES`, in the order the first round applies them to a draft that ran
(each to the query the ones before it left):

- ``link_joins`` (:mod:`.joins`): a JOIN on columns no foreign key links, joined along the keys;
- ``named_filters`` (:mod:`.values`): a category the question names, filtered on;
- ``subset_averages`` (:mod:`.averages`): rows compared with a subset's average, no longer
  limited to that subset;
- ``date_difference`` (:mod:`.dates`): a subtraction of two dates that gives no number of
  days (SQLite's text, MySQL's digits, an interval), counted in days or the unit asked for;
- ``epoch_dates`` (:mod:`.dates`): a column that stores moments as seconds since 1970, read
  as a date in SQLite (``strftime('%Y', created)``), read as the moment it counts;
- ``date_part_as_number`` (:mod:`.dates`): an answer column that formats a date into one
  number as text (SQLite's ``strftime('%Y', …)``: '2024') gives the number;
- ``percent_scale`` (:mod:`.percents`): a column holding percentages (stored from 0 to 100)
  taken as a fraction of one (``1 - DiscountPct``, ``DiscountPct = 0.25`` for "25 percent")
  read as a percentage;
- ``self_join_side`` (:mod:`.sides`): the side of a self-join pinned to a value, shown in
  the answer, swapped for the other side;
- ``names_for_ids`` (:mod:`.labels`): names shown for the ids the question asks about;
- ``group_by_key`` (:mod:`.entities`): rows added up per name of a thing grouped by its key
  as well, so things that share a name are not added together.

Adding a rule is one module (or a function and a ``Rewrite`` in its family's) and one line
here; ``tests/test_repairs.py`` walks this registry and needs a case for each rule.  A rule
is turned off by its name in ``AgentSettings.disabled_rewrites``.

The other repairs are not switchable: the names a failed query clearly meant
(:mod:`.names`), and a filter value or a ``NOT IN`` list of a query that found nothing
(:mod:`.empty`).
"""

from __future__ import annotations

from sqlnb.agent.repairs.averages import SUBSET_AVERAGES
from sqlnb.agent.repairs.dates import DATE_DIFFERENCE, DATE_PART_AS_NUMBER, EPOCH_DATES
from sqlnb.agent.repairs.entities import GROUP_BY_KEY
from sqlnb.agent.repairs.joins import LINK_JOINS
from sqlnb.agent.repairs.labels import NAMES_FOR_IDS
from sqlnb.agent.repairs.percents import PERCENT_SCALE
from sqlnb.agent.repairs.rewrite import Draft, Rewrite
from sqlnb.agent.repairs.sides import SELF_JOIN_SIDE
from sqlnb.agent.repairs.values import NAMED_FILTERS

REWRITES: tuple[Rewrite, ...] = (
    LINK_JOINS,
    NAMED_FILTERS,
    SUBSET_AVERAGES,
    DATE_DIFFERENCE,
    EPOCH_DATES,
    DATE_PART_AS_NUMBER,
    PERCENT_SCALE,
    SELF_JOIN_SIDE,
    NAMES_FOR_IDS,
    GROUP_BY_KEY,
)
REWRITE_NAMES: tuple[str, ...] = tuple(r.name for r in REWRITES)
_BY_NAME = {r.name: r for r in REWRITES}
if len(_BY_NAME) != len(REWRITES):
    raise RuntimeError("two rewrites share a name")


# The rewrites the ablation retired, by name: what became of them.  A retired name in
# AgentSettings.disabled_rewrites is dropped with a RetiredRuleWarning, not refused, so a
# configuration written for an earlier sqlnb still loads.
RETIRED_REWRITES: dict[str, str] = {
    "intersections": "retired 2026-11-27: it changed no answer on the batches written after it",
    "negations": "retired 2026-11-27: it changed no answer on the batches written after it",
    "named_values": "retired 2026-11-29: the check values_left_out doubts what it rewrote",
    "missing_as_none": "retired 2026-11-29: the check missing_as_zero doubts what it rewrote",
}


def rewrite_named(name: str) -> Rewrite:
    """The rewrite called ``name``; KeyError for a name no rewrite has."""
    return _BY_NAME[name]


__all__ = ["RETIRED_REWRITES", "REWRITES", "REWRITE_NAMES", "Draft", "Rewrite", "rewrite_named"]
