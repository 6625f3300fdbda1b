"""How far an answer can be trusted, from evidence rather than from the model's say-so.

The evidence is what running the candidate queries showed: how many of the model's drafts
gave the kept result, whether the result is empty, whether its rows repeat, whether a
stored value had to be looked up for a filter, whether earlier queries of the turn failed.
Every answer with SQL gets one of three levels:

- ``high``: at least two independent drafts of the question gave the same non-empty result
  and no draft gave another one, asked back or wrote no query, and every word of the
  question that names a table, a column, a value or a condition has something in the
  query that stands for it (the check ``words_not_read``, whose finding alone makes an
  answer ``medium``: drafts of one model agree on the same mistakes, and a query that
  leaves a word of its question unread is right far less often);
- ``medium``: at least two drafts agree and more of them than on any other result (or a
  model that does not sample reviewed its own result), with nothing suspicious about it;
- ``low``: no agreement, an empty result, repeated rows, a filter value that had to be
  replaced by the one stored in the data, or a finding of the answer checks
  (:data:`sqlnb.agent.checks.CHECKS`, run on the kept query: from the query and the
  question, e.g. rows kept by a LIMIT with no ORDER BY, a number the question names that
  the query does not use; and from the data, read-only, e.g. a stored value the question
  names that the query leaves out, rows added together under a name they share, a sum
  over a join that repeats the summed rows).

An answer rewrite of the first round (:data:`sqlnb.agent.repairs.REWRITES`) that changed
the kept query adds its reason (``Rewrite.reason``, with what it changed), without
lowering the level.

The benchmark (``benchmarks/accuracy.py``) reports execution accuracy per level, so that
"high" can be checked against what it promises.
"""

from __future__ import annotations

from typing import Literal, TypedDict

from sqlnb.agent.checks import DOUBTING_CHECKS
from sqlnb.agent.repairs import REWRITES
from sqlnb.agent.state import Attempt

Level = Literal["high", "medium", "low"]
# the highest score of an answer kept from high by a finding that does not doubt it
MEDIUM_SCORE = 0.8


class Confidence(TypedDict):
    level: Level
    score: float  # 0..1: the share of the drafts that gave the kept result, lowered by the checks' findings
    reasons: list[str]


def assess(attempt: Attempt, *, reviewed: bool = False, earlier_failures: int = 0) -> Confidence | None:
    """The confidence of ``attempt`` (the kept query of a turn), or None when it did not
    run.  ``reviewed``: the model checked its result and kept it (FINAL)."""
    if not attempt or not attempt.get("ok"):
        return None
    reasons: list[str] = []
    cands = attempt.get("candidates") or []
    draws = sum(int(c.get("weight") or 1) for c in cands) if cands else 1
    chosen = next((c for c in cands if c.get("chosen")), None)
    agree = int(chosen.get("votes") or 0) if chosen else (1 if attempt.get("row_count") else 0)
    rivals = [
        c
        for c in cands
        if c.get("ok")
        and not c.get("chosen")
        and (c.get("votes") or 0) > 0
        and c.get("group") != (chosen.get("group") if chosen else None)
    ]
    best_rival = max((int(c.get("votes") or 0) for c in rivals), default=0)
    rows = attempt.get("row_count") or 0
    nothing = rows == 0 or bool(attempt.get("nothing_found"))
    # drafts of the first round that asked back or wrote no query count against agreement
    silent = max(0, int(attempt.get("draws") or 0) - draws) if attempt.get("first_round") else 0
    draws += silent
    score = agree / draws if draws else 0.0

    if len(cands) > 1 or draws > 1:
        reasons.append(f"{agree} of {draws} drafts gave this result")
        if silent:
            reasons.append(f"{silent} draft{'s' if silent != 1 else ''} asked back or wrote no query")
        if rivals:
            others = len({c.get("group") for c in rivals})
            reasons.append(f"{others} other result{'s' if others != 1 else ''} came from the other drafts")
    if rows == 0:
        reasons.append("the result is empty")
    elif nothing:
        reasons.append("the result is only zeros or NULLs: a filter may have matched nothing")
    if attempt.get("repeated_rows"):
        reasons.append("rows of the result repeat")
    if attempt.get("repaired"):
        reasons.append(f"a filter value was replaced by the stored one ({attempt['repaired']})")
    # the findings of the answer checks (sqlnb.agent.checks.CHECKS), in their order
    findings = attempt.get("checks") or {}
    reasons.extend(findings.values())
    if attempt.get("corrects"):
        reasons.append(
            "the model corrected the first answer after the checks found: "
            + "; ".join(attempt["corrects"].values())
        )
    if attempt.get("null_safe"):
        reasons.append(f"{attempt['null_safe']}: a NOT IN list that holds a NULL matches no row")
    # what the answer rewrites changed (sqlnb.agent.repairs.REWRITES), in their order
    done = attempt.get("rewrites") or {}
    for rewrite in REWRITES:
        if done.get(rewrite.name):
            reasons.append(rewrite.reason_for(done[rewrite.name]))
    if earlier_failures:
        reasons.append(
            f"{earlier_failures} earlier quer{'ies' if earlier_failures != 1 else 'y'} "
            "of this question failed"
        )
    if reviewed:
        reasons.append("the model checked the result and kept it")

    # a finding of a check with a "medium" ceiling keeps the answer from high, and doubts nothing
    doubting = any(name in DOUBTING_CHECKS for name in findings)
    short_of_high = bool(findings) and not doubting
    doubted = nothing or bool(attempt.get("repeated_rows")) or bool(attempt.get("repaired")) or doubting
    if doubted:
        score = min(score, 0.3)
    elif short_of_high:
        score = min(score, MEDIUM_SCORE)
    if not doubted and not short_of_high and agree >= 2 and not rivals and agree == draws:
        level: Level = "high"
    elif not doubted and agree >= 2 and agree > best_rival:
        level = "medium"
    elif not doubted and draws == 1 and reviewed and not earlier_failures:
        level, score = "medium", max(score, 0.5)
    else:
        level = "low"
        score = min(score, 0.49)
    return {"level": level, "score": round(score, 3), "reasons": reasons}
