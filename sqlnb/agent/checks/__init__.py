"""The checks of an answer: what speaks against the query a turn kept, as the answer to
its question.  Each check is a :class:`~sqlnb.agent.checks.check.Check` (one name, a
summary, the function that finds, whether it reads the data), defined in the module of
its kind and listed once in :data:`CHECKS`.  A finding lowers the answer's confidence
(:mod:`sqlnb.agent.confidence`) with its reason; no check changes an answer (the
:mod:`sqlnb.agent.repairs` do that, and the model's one correction after it is shown the
findings, :meth:`sqlnb.agent.runner.Agent._correct`).

From the query, the question and the catalog (:mod:`.query`):

- ``numbers_left_out``: a number the question names that the query does not use;
- ``filters_not_asked``: a filter on a value the question does not name;
- ``negated_value``: a value the question leaves out, the only one the query keeps;
- ``included_filtered_out``: a question that counts rows in some state as well ("counting
  any since deleted"), a query keeping only one state by a flag (``archived = 0``);
- ``counted_elsewhere``: a question counting a table's rows, a query that does not read it;
- ``ranking_without_order``: a question for the most or the top, a query that does not rank;
- ``measure_not_shown``: a ranking by an aggregate the result does not show (names without
  the amounts they were ranked by);
- ``rows_not_asked``: a question for a number of things ("the top 5", "which three") whose
  result has more rows, or whose query keeps another number;
- ``limit_not_asked``: a question for every group ("each country", "per month") whose
  query groups by it and keeps only its first rows with a LIMIT the question does not name;
- ``interval_not_number``: a question for a number of days or hours answered with an
  interval ("3 days 13:42:34");
- ``whole_division``: a result that divides whole numbers (``SUM(seconds / 3600)``) in an
  engine whose division of whole numbers drops the fraction;
- ``null_group``: a grouped result with a row whose label is NULL (rows without a region
  counted as a region of their own);
- ``parent_not_followed``: a question for the top of a hierarchy ("the top-level
  category") answered without the key that links a row to its parent;
- ``key_not_asked``: a listing that shows a table's key beside other columns where the
  question asks for no identifier;
- ``time_not_ordered``: a question about time ("each year", "when") answered with dated
  rows in no order;
- ``time_reversed``: a question for the earliest ("the oldest account") answered with the
  latest dates, or for the latest with the earliest;
- ``attribute_of_other``: a question for an attribute of a thing ("the name of the song")
  answered with the row's own attribute where its table has the thing's as a column
  (``singer.Name`` beside ``singer.Song_Name``);
- ``named_row_shown``: a self-join (people and their managers) that shows a column of the
  row the question names (the manager's ``Title``) where the rows listed have their own;
- ``filter_echoed``: a result that shows only the columns the query pins to a value
  (``SELECT name ... WHERE name = 'Drinks'``), repeating the value it was given;

From the data, read-only (:mod:`.data`):

- ``values_left_out``: a stored value the question names that the query does not use;
- ``kind_not_read``: a kind the question names ("bugs": 'Bug' of ``issue_type.name``) in a
  small table of kinds that the query's table refers to and the query does not read;
- ``flag_not_applied``: a yes/no column the question names ("billable hours":
  ``time_entry.billable``) that the query does not use, taking the rows either way;
- ``merged_entities``: rows added together under a name several of them share;
- ``fan_out``: a sum or average over a join that repeats the rows it sums;
- ``needless_join``: rows added up over a join used for nothing but joining, which changes
  how many rows there are;
- ``missing_as_zero``: the rows without something ("sold without a discount") taken as the
  rows where it is 0 or empty, where it is also NULL;
- ``code_meaning_guessed``: a filter on a numbered code (``wheelchair_accessible = 0``)
  whose meaning nothing in the database names and whose number the question does not write.

From the question's words (:mod:`.words`), a finding that keeps an answer from "high"
without doubting it (``Check.ceiling``):

- ``words_not_read``: a word of the question that nothing in the query stands for ("the
  payments returned unpaid": nothing for 'unpaid'), a condition the query may leave out.

From the question's readings (:mod:`.vague`), whose findings are questions for the user
(``Check.asks``: the turn asks back, the answer shown as a guess):

- ``criterion_not_named``: a question that judges without a measure ("the best products")
  answered by a measure it does not name;
- ``cutoff_not_named``: a question that grades without a cutoff ("cheap products") answered
  with a cutoff it does not give.

Adding a check is one function and one ``Check`` (with its ``advice``, what a corrected
query does about its finding) in its module and one line here;
``tests/test_checks.py`` walks this registry and needs a case for each check.  A check is
turned off by its name in ``AgentSettings.disabled_checks``.
"""

from __future__ import annotations

from collections.abc import Collection

from sqlnb.agent.checks.check import Answer, Ceiling, Check, Finding, Lookup
from sqlnb.agent.checks.data import (
    CODE_MEANING_GUESSED,
    FAN_OUT,
    FLAG_NOT_APPLIED,
    KIND_NOT_READ,
    MERGED_ENTITIES,
    MISSING_AS_ZERO,
    NEEDLESS_JOIN,
    VALUES_LEFT_OUT,
)
from sqlnb.agent.checks.query import (
    ATTRIBUTE_OF_OTHER,
    COUNTED_ELSEWHERE,
    FILTER_ECHOED,
    FILTERS_NOT_ASKED,
    INCLUDED_FILTERED_OUT,
    INTERVAL_NOT_NUMBER,
    KEY_NOT_ASKED,
    LIMIT_NOT_ASKED,
    MEASURE_NOT_SHOWN,
    NAMED_ROW_SHOWN,
    NEGATED_VALUE,
    NULL_GROUP,
    NUMBERS_LEFT_OUT,
    PARENT_NOT_FOLLOWED,
    RANKING_WITHOUT_ORDER,
    ROWS_NOT_ASKED,
    TIME_NOT_ORDERED,
    TIME_REVERSED,
    WHOLE_DIVISION,
)
from sqlnb.agent.checks.vague import CRITERION_NOT_NAMED, CUTOFF_NOT_NAMED
from sqlnb.agent.checks.words import WORDS_NOT_READ

CHECKS: tuple[Check, ...] = (
    NUMBERS_LEFT_OUT,
    FILTERS_NOT_ASKED,
    NEGATED_VALUE,
    INCLUDED_FILTERED_OUT,
    COUNTED_ELSEWHERE,
    RANKING_WITHOUT_ORDER,
    MEASURE_NOT_SHOWN,
    ROWS_NOT_ASKED,
    LIMIT_NOT_ASKED,
    NULL_GROUP,
    INTERVAL_NOT_NUMBER,
    WHOLE_DIVISION,
    PARENT_NOT_FOLLOWED,
    KEY_NOT_ASKED,
    TIME_NOT_ORDERED,
    TIME_REVERSED,
    ATTRIBUTE_OF_OTHER,
    NAMED_ROW_SHOWN,
    FILTER_ECHOED,
    VALUES_LEFT_OUT,
    KIND_NOT_READ,
    FLAG_NOT_APPLIED,
    MERGED_ENTITIES,
    FAN_OUT,
    NEEDLESS_JOIN,
    MISSING_AS_ZERO,
    CODE_MEANING_GUESSED,
    WORDS_NOT_READ,
    CRITERION_NOT_NAMED,
    CUTOFF_NOT_NAMED,
)
CHECK_NAMES: tuple[str, ...] = tuple(c.name for c in CHECKS)
# the checks whose findings are questions for the user
ASKING_CHECKS: frozenset[str] = frozenset(c.name for c in CHECKS if c.asks)
# the checks whose finding alone asks the model for a correction (Check.corrected)
CORRECTED_CHECKS: frozenset[str] = frozenset(c.name for c in CHECKS if c.corrected and not c.asks)
# the checks whose findings doubt an answer (rated low); the others only keep it from high
DOUBTING_CHECKS: frozenset[str] = frozenset(c.name for c in CHECKS if c.ceiling == "low")
# The checks the ablation retired, by name: what became of them.  A retired name in
# AgentSettings.disabled_checks is dropped with a RetiredRuleWarning, not refused, so a
# configuration written for an earlier sqlnb still loads.
RETIRED_CHECKS: dict[str, str] = {
    "limit_without_order": "retired 2026-11-27: it never fired on the batches written after it",
    "date_difference": "retired 2026-11-27: it never fired on the batches written after it "
    "(the rewrite of that name stays)",
    "one_of_each": "retired 2026-11-27: it flagged only right answers on the batches written after it",
    "one_total_for_groups": "retired 2026-11-27: it flagged only right answers on the batches "
    "written after it",
    "coded_value_not_named": "retired 2026-11-29: it never fired on the 221 questions written after it, "
    "and the sample set without it lost no right answer and no rating",
    "ranked_elsewhere": "retired 2026-11-29: it never fired on the 224 questions written after it, "
    "and the sample set without it lost no right answer and no rating",
    "count_not_quantity": "retired 2026-11-29: it never fired on the 224 questions written after it, "
    "and the sample set without it lost no right answer and no rating",
    "only_the_added": "retired 2026-11-29: it never fired on the 210 questions written after it, "
    "and the sample set without it lost no right answer and no rating",
    "restriction_not_applied": "retired 2026-11-29: it never fired on the 210 questions written after it, "
    "and the sample set without it lost no right answer and no rating",
    "date_of_other_event": "retired 2026-11-29: it never fired on the 210 questions written after it, "
    "and the sample set without it lost no right answer and no rating",
    "primary_not_kept": "retired 2026-11-29: it never fired on the 210 questions written after it, "
    "and the sample set without it lost no right answer and no rating",
    "value_of_other_table": "retired 2026-11-29: it never fired on the 210 questions written after it, "
    "and the sample set without it lost no right answer and no rating",
    "total_compared_per_row": "retired 2026-11-29: it never fired on the 224 questions written after it, "
    "and the sample set without it lost no right answer and no rating",
    "grouped_not_asked": "retired 2026-11-29: on the 322 questions written after it, the answers it doubted "
    "were wrong less often (1 of 2) than all answers were (71%)",
    "same_row_joined": "retired 2026-11-29: its one finding on the 84 questions written after it was against "
    "a right answer",
    "direct_link_bypassed": "retired 2026-11-29: on the 112 questions written after it, the answers it doubted "
    "were wrong less often (1 of 2) than all answers were (69%)",
}
_BY_NAME = {c.name: c for c in CHECKS}
if len(_BY_NAME) != len(CHECKS):
    raise RuntimeError("two checks share a name")


def check_named(name: str) -> Check:
    """The check called ``name``; KeyError for a name no check has."""
    return _BY_NAME[name]


def judge(answer: Answer, disabled: Collection[str] = ()) -> dict[str, str]:
    """Every finding of the checks not ``disabled`` about ``answer``, by check name, in the
    registry's order.  A check that reads data runs only where ``answer`` may read it; a
    check that fails (a query shape it does not know, a lookup the database refused or
    that ran out of time) finds nothing."""
    found: dict[str, str] = {}
    for check in CHECKS:
        if check.name in disabled:
            continue
        if check.reads_data and answer.stored_values is None and answer.lookup is None:
            continue
        try:
            finding = check.find(answer)
        except Exception:
            finding = None
        if finding:
            found[check.name] = finding
    return found


__all__ = [
    "ASKING_CHECKS",
    "CHECKS",
    "CHECK_NAMES",
    "CORRECTED_CHECKS",
    "DOUBTING_CHECKS",
    "RETIRED_CHECKS",
    "Answer",
    "Ceiling",
    "Check",
    "Finding",
    "Lookup",
    "check_named",
    "judge",
]
