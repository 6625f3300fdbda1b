"""ablation: what each of the agent's answer rewrites earns, on data written after it.

Every rewrite of ``sqlnb.agent.repairs.REWRITES`` is measured on and off, all else
equal: each question is asked once with every rewrite on (the agent as users get it),
and again with one rewrite off (``AgentSettings.disabled_rewrites``) wherever that
rewrite proposed a query for one of its drafts ("fired"; a rewrite acts only through its
proposals, so where it proposed none it changes nothing and the answer with it off is the
same). The model's replies come from a store of an earlier run
(``benchmarks/replies.py``, ``--replies``): a call the store holds is not asked again, so
the only model calls are those a switched-off rewrite makes new (none in
``--replay-only``, where such a question is reported as needing the model).

A rule is judged on the unseen batches written *after* it (a database's batch date is
the date its file entered the repository; a rule's date is in :data:`RULE_ADDED`) and on
spider-dev; the table says per rule: questions where it fired, answers it turned right,
answers it turned wrong, the net change in EX points, and the verdict (it earns its place
where it turned more answers right than wrong on the batches written after it).

    .venv/bin/python benchmarks/ablation.py --replies benchmarks/results/replies/agent.jsonl.gz \\
        --sets spider,unseen [--live] [--out ablation]

Writes ``results/<out>.md`` and ``results/<out>.json`` (every question's outcome).
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import accuracy as acc
import common as c
from replies import ReplyMissing, ReplyStore

# When each rewrite entered the agent (its first commit): the batches written after it are
# the data it is judged on.  A new rule adds its line here when it enters the registry.
RULE_ADDED: dict[str, tuple[str, str]] = {
    "names_for_ids": ("f93c3d8", "2026-11-25T09:09:00"),
    "link_joins": ("353eb12", "2026-11-25T11:59:00"),
    "named_filters": ("57130cc", "2026-11-26T13:06:00"),
    "subset_averages": ("57130cc", "2026-11-26T13:06:00"),
    # entered in fea4103; changed in f3fe839 (a person's first and last name, both grouped,
    # read from the twenty-fifth batch): judged anew on the batches written after that change
    "group_by_key": ("f3fe839", "2026-11-28T14:56:58"),
    # written while the twentieth unseen batch was being written (by a writer who read no
    # agent code) and committed two minutes after it: that batch does not count for it
    "date_difference": ("0cb91fe", "2026-11-28T04:33:39"),
    "date_part_as_number": ("8deb32d", "2026-11-28T11:10:23"),
    "percent_scale": ("8deb32d", "2026-11-28T11:10:23"),
    "self_join_side": ("8deb32d", "2026-11-28T11:10:23"),
    # read from a wrong answer rated high of the twenty-fourth batch (a Moodle creation date)
    "epoch_dates": ("69187cf", "2026-11-28T14:22:48"),
}

# When each answer check entered the agent (its first commit): the batches written after it
# are the data it is judged on.  A new check adds its line here when it enters the registry.
CHECK_ADDED: dict[str, tuple[str, str]] = {
    "numbers_left_out": ("7061fe5", "2026-11-25T20:18:53"),
    # judged anew from b101df8 (a value's words joined by underscores named as words),
    # f8d4c38 (the names a query gives its columns do not use a value) and 5607072 (a value
    # whose word is a verb's form of a column name's word is that column's); on the thirtieth
    # batch, between the last two, it found against 3 wrong answers and 2 right ones
    "values_left_out": ("5607072", "2026-11-29T01:22:11"),
    "filters_not_asked": ("d8ae35a", "2026-11-25T22:43:01"),
    "negated_value": ("fea4103", "2026-11-27T15:54:35"),
    "counted_elsewhere": ("fea4103", "2026-11-27T15:54:35"),
    "ranking_without_order": ("fea4103", "2026-11-27T15:54:35"),
    # changed in 1261697 (silent where an identifier of the same rows is grouped too) after
    # the nineteenth batch showed its one finding there on such a right answer: judged anew
    # on the batches written after that change
    "merged_entities": ("1261697", "2026-11-28T02:07:39"),
    "fan_out": ("fea4103", "2026-11-27T15:54:35"),
    "needless_join": ("fea4103", "2026-11-27T15:54:35"),
    # entered in e5a56de; changed in ed27fa8 (silent where the judging word is a stored value the
    # query filters on, read from the twenty-seventh batch) and in a4f6c9d (silent where it names a
    # column asked for, "the project key", read from the twenty-eighth) and in b101df8 (silent
    # where it qualifies a stored value the query filters on, "a strong yes", read from the
    # twenty-ninth): judged anew from then
    "criterion_not_named": ("b101df8", "2026-11-28T22:15:52"),
    "cutoff_not_named": ("e5a56de", "2026-11-27T19:03:14"),
    # written in the working tree at these times and committed in 9595eee, 24 s after the
    # nineteenth unseen batch, whose writer was given their names and read no agent code
    # (benchmarks/unseen/README.md): that batch is data written after them
    "measure_not_shown": ("9595eee", "2026-11-28T01:12:00"),
    "rows_not_asked": ("9595eee", "2026-11-28T01:12:00"),
    # changed in 27bedd6 (it speaks when the question leaves the unlabelled rows out) after a
    # wrong answer rated high of the twentieth batch: judged anew on the batches after it
    "null_group": ("27bedd6", "2026-11-28T05:06:19"),
    "limit_not_asked": ("01bf0c5", "2026-11-28T02:18:36"),
    "interval_not_number": ("df460ff", "2026-11-28T02:16:01"),
    # entered in f32808b; changed in 27bedd6 (a level below a named row: "under", "subgroups")
    # after three wrong answers rated high of the twentieth batch: judged from that change on
    "parent_not_followed": ("27bedd6", "2026-11-28T05:06:19"),
    "key_not_asked": ("f32808b", "2026-11-28T04:44:58"),
    "time_not_ordered": ("24c5fbb", "2026-11-28T05:17:32"),
    "missing_as_zero": ("f4255bf", "2026-11-28T05:27:26"),
    "time_reversed": ("637691a", "2026-11-28T11:19:18"),
    # read from a spider-dev answer rated high (concert_singer): spider-dev is no evidence for it
    "attribute_of_other": ("2becc3d", "2026-11-28T11:59:59"),
    # read from two wrong answers rated high of the twenty-fifth batch
    "included_filtered_out": ("f3fe839", "2026-11-28T14:56:58"),
    # read from a wrong answer rated high of the twenty-sixth batch (a GTFS wheelchair code);
    # entered in 172ecb4, took ordinals and "no X" in b9b2f78
    "code_meaning_guessed": ("b9b2f78", "2026-11-28T17:55:59"),
    # read from a wrong answer rated high of the twenty-eighth batch (hours as SUM(seconds / 3600))
    "whole_division": ("54231b4", "2026-11-28T18:38:06"),
    # read from a wrong answer rated high of the twenty-eighth batch (open bugs counted over
    # every issue type), after the wider change to values_left_out above was reverted
    "kind_not_read": ("e59f878", "2026-11-28T19:08:55"),
    # read from a wrong answer rated high of the twenty-ninth batch (the reports of a named
    # manager shown with the manager's own title)
    "named_row_shown": ("b101df8", "2026-11-28T22:15:52"),
    # read from the thirtieth unseen batch's wrong answers rated high
    # entered in eaa3aa0, changed in 07e7d91 before any batch was written after it
    "flag_not_applied": ("07e7d91", "2026-11-29T01:27:50"),
    # read from no batch's answers: the words of a question the query has nothing for, measured
    # on the untouched first runs of batches 17-30 before it entered (see docs/agent.md); "leave"
    # without its particle ("on leave") names a thing since the change after the thirty-fifth
    # batch (its record from 2e599c3 stood: one stored answer changed, written before it);
    # changed in 37d78a4 (a word negated by its prefix, "unpublished", read where the query
    # says no to the rest of it) from the right answers it kept from high on batches 36-39,
    # before the fortieth batch was merged: judged anew from then
    "words_not_read": ("37d78a4", "2026-11-29T13:07:53"),
    # read from the wrong answers rated high in the replay after the thirty-fifth batch (a
    # class answered with its group's own row); the thirty-sixth to thirty-eighth batches'
    # writers began before it was committed and read no agent code
    "filter_echoed": ("bab3f1c", "2026-11-29T09:44:34"),
}


# A check changes no answer, only its rating: one that has not fired yet on the batches
# written after it waits for more of them, until they hold this many questions (about five
# batches), and leaves if it has fired on none by then.
CHECK_EVIDENCE_QUESTIONS = 200


def check_names() -> list[str]:
    from sqlnb.agent.checks import CHECK_NAMES

    return list(CHECK_NAMES)


def rule_names() -> list[str]:
    from sqlnb.agent.repairs import REWRITES

    return [r.name for r in REWRITES]


def written(db_file: Path) -> dt.datetime | None:
    """When a database file of the unseen set entered the repository (its first commit)."""
    out = (c.git("log", "--diff-filter=A", "--format=%aI", "--", str(db_file)) or "").split()
    return dt.datetime.fromisoformat(out[-1]).replace(tzinfo=None) if out else None


def after(rule: str, when: dt.datetime | None) -> bool:
    """Whether data written at ``when`` was written after ``rule`` entered."""
    added = RULE_ADDED.get(rule) or CHECK_ADDED.get(rule)
    if when is None or added is None:
        return False
    return when > dt.datetime.fromisoformat(added[1])


class Proposals:
    """Which rewrites proposed a query while a question was answered: each rewrite of the
    first round's registry wrapped so that a proposal is noted (a rewrite acts only
    through its proposals, so one that proposed nothing cannot change the answer, and
    turning it off there would ask the same calls and give the same answer)."""

    def __init__(self) -> None:
        import dataclasses

        import sqlnb.agent.first_round as first_round

        self.names: set[str] = set()

        def noted(rewrite: Any) -> Any:
            def propose(draft: Any) -> Any:
                out = rewrite.propose(draft)
                if out is not None:
                    self.names.add(rewrite.name)
                return out

            return dataclasses.replace(rewrite, propose=propose)

        first_round.REWRITES = tuple(noted(r) for r in first_round.REWRITES)

    def take(self) -> set[str]:
        out, self.names = self.names, set()
        return out


def open_store(path: Path, client: Any, live: bool) -> ReplyStore:
    """A store over ``path``; a ``.gz`` file is read into a working copy (new replies are
    appended there and written back, compressed, by :func:`save_store`)."""
    if path.suffix == ".gz":
        work = Path(tempfile.mkdtemp(prefix="sqlnb-replies-")) / path.stem
        if path.exists():
            with gzip.open(path, "rb") as src, open(work, "wb") as dst:
                shutil.copyfileobj(src, dst)
        store = ReplyStore(client, work, live=live)
        store.compressed_to = path
        return store
    return ReplyStore(client, path, live=live)


def save_store(store: ReplyStore) -> None:
    target = store.compressed_to
    # only a live run adds replies: a replay leaves the compressed file as it was
    if target is not None and store.live and store.misses and store.path.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(store.path, "rb") as src, gzip.open(target, "wb") as dst:
            shutil.copyfileobj(src, dst)


def questions_of(sets: Sequence[str], data_dir: Path) -> list[dict[str, Any]]:
    """Every question of the sets asked for, each with its set, database file and date."""
    out: list[dict[str, Any]] = []
    for name in sets:
        if name == "spider":
            root = acc.DEFAULT_SPIDER_DIR
            for q in acc.load_questions(root):
                out.append(dict(q, set="spider-dev", db=acc.db_path(root, q["db_id"]), written=None))
        elif name == "unseen":
            root = acc.build_unseen(data_dir)
            dates: dict[str, dt.datetime | None] = {}
            for q in acc.load_questions(root):
                db = q["db_id"]
                if db not in dates:
                    dates[db] = written(acc.UNSEEN_DIR / f"{db}.sql")
                out.append(dict(q, set="unseen", db=acc.db_path(root, db), written=dates[db]))
        else:
            raise ValueError(f"unknown set {name!r}: spider or unseen")
    return out


def ask(
    q: dict[str, Any], adapter: Any, client: Any, scorer: Any, disabled: frozenset[str], max_iterations: int
) -> dict[str, Any]:
    """One question with ``disabled`` rewrites off: its SQL and whether it is right;
    ``missing`` when a replay-only store lacks a call it needed (the store counts it, also
    where the agent caught the error)."""
    from sqlnb.agent.runner import Agent
    from sqlnb.agent.settings import AgentSettings

    misses = getattr(client, "misses", 0)
    # no correction of the answers the checks doubt: the checks are judged on the answer the
    # drafts gave (what they do to its rating), and the stored runs asked no corrections
    settings = AgentSettings(disabled_rewrites=disabled, explain=False, correct_findings=False)
    agent = Agent(settings=settings, memory=False)
    try:
        res = agent.ask(
            q["question"],
            adapter,
            connection=q["db_id"],
            model=client,
            max_iterations=max_iterations,
            examples=[],
        )
    except ReplyMissing:
        return {"missing": True}
    if getattr(client, "misses", 0) > misses and not getattr(client, "live", True):
        return {"missing": True}
    m = scorer.evaluate(q["db"], q["query"], res.sql)
    return {
        "sql": res.sql,
        "correct": bool(m.correct),
        "status": res.status,
        "level": (res.confidence or {}).get("level"),
        "checks": levels_without_each_check(res),
    }


def levels_without_each_check(res: Any) -> dict[str, str | None]:
    """Each answer check that found something against the kept query, with the level the
    answer would have had without that one finding (the checks change no query and no call,
    so one run tells what each of them did to the rating)."""
    from sqlnb.agent.confidence import assess

    kept = next((a for a in res.attempts if "checks" in a), None)
    if kept is None:
        return {}
    out: dict[str, str | None] = {}
    for name in kept["checks"]:
        judged = dict(kept)
        judged["checks"] = {k: v for k, v in kept["checks"].items() if k != name}
        conf = assess(
            judged,  # type: ignore[arg-type]
            reviewed=res.stop_reason == "finalized",
            earlier_failures=sum(1 for a in res.attempts if a["n"] < kept["n"] and not a.get("ok")),
        )
        out[name] = conf["level"] if conf else None
    return out


def run_ablation(
    questions: Sequence[dict[str, Any]],
    client: Any,
    names: Sequence[str],
    *,
    max_iterations: int = acc.DEFAULT_MAX_ITERATIONS,
    log: Callable[[str], None] = print,
) -> list[dict[str, Any]]:
    """Each question with every rewrite on, then with each rewrite that proposed a query on it off."""
    from sqlnb.adapters import connect

    scorer = acc.Scorers()
    proposals = Proposals()
    adapters: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    try:
        for i, q in enumerate(questions, 1):
            db = str(q["db"])
            if db not in adapters:
                adapters[db] = connect(f"sqlite:///{db}", readonly=True)
            adapter = adapters[db]
            proposals.take()
            base = ask(q, adapter, client, scorer, frozenset(), max_iterations)
            on = proposals.take() & set(names)
            row: dict[str, Any] = {
                "set": q["set"],
                "db_id": q["db_id"],
                "index": q["index"],
                "written": q["written"].isoformat() if q["written"] else None,
            }
            if base.get("missing"):
                row["missing"] = True
                rows.append(row)
                log(f"[{i}/{len(questions)}] {q['set']} {q['db_id']} #{q['index']}: not in the store")
                continue
            row.update(
                {
                    "correct": base["correct"],
                    "sql": base["sql"],
                    "level": base["level"],
                    "checks": base["checks"],
                    "fired": sorted(on),
                    "off": {},
                }
            )
            for name in sorted(on):
                alt = ask(q, adapter, client, scorer, frozenset({name}), max_iterations)
                row["off"][name] = (
                    {"missing": True}
                    if alt.get("missing")
                    else {"correct": alt["correct"], "sql": alt["sql"]}
                )
            rows.append(row)
            offs = ", ".join(
                f"{k} off {'✓' if v.get('correct') else ('?' if v.get('missing') else '✗')}"
                for k, v in row["off"].items()
            )
            log(
                f"[{i}/{len(questions)}] {q['set']} {q['db_id']} #{q['index']}: "
                f"{'✓' if base['correct'] else '✗'}" + (f"  ({offs})" if offs else "")
            )
    finally:
        acc.close_adapters(adapters.values())
        scorer.close()
    return rows


def _counts_for(row: dict[str, Any], label: str, rule: str) -> bool:
    """Whether a question counts for ``rule`` in the set called ``label``."""
    if label == "spider-dev":
        return bool(row["set"] == "spider-dev")
    when = dt.datetime.fromisoformat(row["written"]) if row.get("written") else None
    return row["set"] == "unseen" and after(rule, when)


def summarize(rows: Sequence[dict[str, Any]], names: Sequence[str]) -> dict[str, Any]:
    """Per rule and per set (spider-dev; unseen batches written after the rule): the
    questions, where it fired, answers it turned right (right on, wrong off) and wrong
    (wrong on, right off), answers that need the model, and the net EX points."""
    out: dict[str, Any] = {}
    for name in names:
        per: dict[str, dict[str, Any]] = {}
        for label in ("unseen after it", "spider-dev"):
            chosen = [r for r in rows if _counts_for(r, label, name) and not r.get("missing")]
            n = len(chosen)
            fired_on = [r for r in chosen if name in r.get("fired", ())]
            wins = sum(
                1
                for r in fired_on
                if r["correct"] and not r["off"][name].get("missing") and not r["off"][name]["correct"]
            )
            losses = sum(
                1
                for r in fired_on
                if not r["correct"] and not r["off"][name].get("missing") and r["off"][name]["correct"]
            )
            unknown = sum(1 for r in fired_on if r["off"][name].get("missing"))
            per[label] = {
                "questions": n,
                "fired": len(fired_on),
                "wins": wins,
                "losses": losses,
                "needs_model": unknown,
                "points": round(100.0 * (wins - losses) / n, 2) if n else None,
            }
        later = per["unseen after it"]
        verdict = (
            "keep"
            if later["wins"] > later["losses"]
            else "no data"
            if not later["questions"]
            else "remove (never fired)"
            if not later["fired"]
            else "remove"
        )
        out[name] = {"added": RULE_ADDED.get(name), "sets": per, "verdict": verdict}
    return out


def summarize_checks(rows: Sequence[dict[str, Any]], names: Sequence[str]) -> dict[str, Any]:
    """Per answer check and per set (spider-dev; unseen batches written after the check):
    the answers it found something against, how many of those were wrong and right, the
    share wrong among them against the share wrong among all the set's answers (its lift:
    how much more often an answer it doubts is wrong), and of the answers it kept from the
    high rating (high without its finding), how many were wrong and right.  A check earns
    its place when the answers it finds against are wrong more often than the answers of
    the batches written after it are overall (a lift above 1).

    A check whose finding only keeps an answer from high (``Check.ceiling`` "medium":
    ``words_not_read``) doubts nothing, so its lift says little: it fires on most answers,
    right and wrong, and its one effect is on the high band.  It earns its place when the
    answers it kept from high were wrong at least as often as the high band's answers with
    it are (it takes wrong answers out of high, not just answers), and leaves when it kept
    only right ones."""
    from sqlnb.agent.checks import check_named

    out: dict[str, Any] = {}
    for name in names:
        per: dict[str, dict[str, Any]] = {}
        for label in ("unseen after it", "spider-dev"):
            chosen = [r for r in rows if _counts_for(r, label, name) and not r.get("missing")]
            fired = [r for r in chosen if name in (r.get("checks") or {})]
            kept_from_high = [r for r in fired if r["checks"][name] == "high"]
            band = [r for r in chosen if r.get("level") == "high"]
            wrong = sum(1 for r in fired if not r["correct"])
            base = sum(1 for r in chosen if not r["correct"]) / len(chosen) if chosen else 0.0
            per[label] = {
                "questions": len(chosen),
                "fired": len(fired),
                "on_wrong": wrong,
                "on_right": len(fired) - wrong,
                "wrong_share": round(wrong / len(fired), 3) if fired else None,
                "base_wrong_share": round(base, 3),
                "lift": round(wrong / len(fired) / base, 2) if fired and base else None,
                "high_wrong": sum(1 for r in kept_from_high if not r["correct"]),
                "high_right": sum(1 for r in kept_from_high if r["correct"]),
                # the high band with the check: answers rated high, and how many right
                "band_high": len(band),
                "band_high_right": sum(1 for r in band if r["correct"]),
            }
        later = per["unseen after it"]
        if check_named(name).ceiling == "medium" and later["fired"]:
            kept = later["high_wrong"] + later["high_right"]
            band_wrong = (
                (later["band_high"] - later["band_high_right"]) / later["band_high"]
                if later["band_high"]
                else 0.0
            )
            verdict = (
                "pending (kept none from high)"
                if not kept and later["questions"] < CHECK_EVIDENCE_QUESTIONS
                else "keep"
                if later["high_wrong"] and later["high_wrong"] / kept >= band_wrong
                else "remove"
            )
        else:
            verdict = (
                "no data"
                if not later["questions"]
                else "pending (not fired yet)"
                if not later["fired"] and later["questions"] < CHECK_EVIDENCE_QUESTIONS
                else "remove (never fired)"
                if not later["fired"]
                else "keep"
                if (later["lift"] or 0) > 1
                else "remove"
            )
        out[name] = {"added": CHECK_ADDED.get(name), "sets": per, "verdict": verdict}
    return out


def high_band(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per set: the answers rated high and how many of them were right."""
    out: dict[str, Any] = {}
    for r in rows:
        if r.get("missing"):
            continue
        s = out.setdefault(r["set"], {"questions": 0, "high": 0, "high_right": 0})
        s["questions"] += 1
        if r.get("level") == "high":
            s["high"] += 1
            s["high_right"] += bool(r["correct"])
    return out


def compare(rows: Sequence[dict[str, Any]], before: dict[tuple[str, int], dict[str, Any]]) -> dict[str, Any]:
    """Per set: the recorded run's answers (``before``) against this code's with every
    rewrite on, over the same questions: right before, right now, the same SQL, and the
    questions this code asked a call the store lacks (its behaviour changed there)."""
    out: dict[str, Any] = {}
    for r in rows:
        b = before.get((r["db_id"], r["index"]))
        if b is None:
            continue
        s = out.setdefault(
            r["set"], {"questions": 0, "right_before": 0, "right_now": 0, "same_sql": 0, "not_in_store": 0}
        )
        s["questions"] += 1
        s["right_before"] += bool(b["correct"])
        if r.get("missing"):
            s["not_in_store"] += 1
            continue
        s["right_now"] += bool(r["correct"])
        s["same_sql"] += r["sql"] == b.get("pred_sql")
    return out


def markdown(data: dict[str, Any]) -> str:
    info = data["machine"]
    lines = [
        "# ablation: what each answer rewrite earns on data written after it",
        "",
        f"Note: {data['note']}" if data.get("note") else "",
        "",
        f"Each question asked with every rewrite on, then with each rewrite that proposed a query on it off "
        f"(`AgentSettings.disabled_rewrites`), the model's replies taken from `{data['replies']['file']}` "
        f"({data['replies']['hits']} calls answered from it, {data['replies']['misses']} "
        f"{'asked of the model' if data['replies']['live'] else 'missing'}). "
        "Turned right: right with the rule, wrong without it; turned wrong: the reverse. "
        "Net: (turned right − turned wrong) / questions, in EX points. A rule earns its place when "
        "it turns more answers right than wrong on the unseen batches written after it "
        "(docs/agent.md).",
        "",
        f"- Model: `{data['model']}`; questions: {data['questions']} "
        f"({', '.join(f'{k} {v}' for k, v in data['by_set'].items())}); not in the store: {data['missing']}",
        f"- Date: {info['date']}; machine: {info.get('cpu', '?')}, {info.get('cpu_count')} cores; "
        f"commit {data.get('commit') or '?'}; wall time {data['seconds'] / 60:.1f} min",
        "",
        c.table(
            [
                "Rule (entered)",
                "Set",
                "Questions",
                "Fired",
                "Turned right",
                "Turned wrong",
                "Needs the model",
                "Net (points)",
                "Verdict",
            ],
            [
                [
                    f"`{name}` ({(s['added'] or ['?', '?'])[1][:10]})",
                    label,
                    str(v["questions"]),
                    str(v["fired"]),
                    str(v["wins"]),
                    str(v["losses"]),
                    str(v["needs_model"]),
                    "—" if v["points"] is None else f"{v['points']:+.2f}",
                    f"**{s['verdict']}**" if label == "unseen after it" else "",
                ]
                for name, s in data["rules"].items()
                for label, v in s["sets"].items()
            ],
        ),
        "",
    ]
    if data.get("checks"):
        lines += [
            "## The answer checks",
            "",
            "The same run, every check on: the answers each check found something against "
            '(`Attempt["checks"]`), how many of them were wrong and right, and of the answers it '
            "kept from the high rating (rated high without its finding), how many were wrong and "
            "right. Share wrong: of the answers it found against, and in brackets of all the "
            "set's answers. A check earns its place when the answers it finds against are wrong "
            "more often than the answers of the unseen batches written after it are overall "
            "(docs/agent.md).",
            "",
            c.table(
                [
                    "Check (entered)",
                    "Set",
                    "Questions",
                    "Fired",
                    "On wrong",
                    "On right",
                    "Share wrong (all answers)",
                    "Kept from high: wrong / right",
                    "High with it: right / rated",
                    "Verdict",
                ],
                [
                    [
                        f"`{name}` ({(s['added'] or ['?', '?'])[1][:10]})",
                        label,
                        str(v["questions"]),
                        str(v["fired"]),
                        str(v["on_wrong"]),
                        str(v["on_right"]),
                        (
                            f"{100 * v['wrong_share']:.0f}% ({100 * v['base_wrong_share']:.0f}%)"
                            if v["wrong_share"] is not None
                            else f"— ({100 * v['base_wrong_share']:.0f}%)"
                        ),
                        f"{v['high_wrong']} / {v['high_right']}",
                        f"{v['band_high_right']} / {v['band_high']}",
                        f"**{s['verdict']}**" if label == "unseen after it" else "",
                    ]
                    for name, s in data["checks"].items()
                    for label, v in s["sets"].items()
                ],
            ),
            "",
            c.table(
                ["Set", "Questions", "Rated high", "High and right"],
                [
                    [
                        name,
                        str(v["questions"]),
                        str(v["high"]),
                        f"{100.0 * v['high_right'] / v['high']:.1f}% ({v['high_right']})"
                        if v["high"]
                        else "—",
                    ]
                    for name, v in (data.get("high_band") or {}).items()
                ],
            ),
            "",
        ]
    if data.get("before_after"):
        lines += [
            "## This code against the run that recorded the replies",
            "",
            "The same questions, every rewrite on: the recorded run's answers (the code of its "
            "commit) and this code's, replayed from the store. A question whose calls are not all in "
            "the store was asked differently by this code.",
            "",
            c.table(
                ["Set", "Questions", "EX recorded", "EX this code", "Same SQL", "Not in the store"],
                [
                    [
                        name,
                        str(v["questions"]),
                        f"{100.0 * v['right_before'] / v['questions']:.1f}% ({v['right_before']})",
                        f"{100.0 * v['right_now'] / v['questions']:.1f}% ({v['right_now']})",
                        str(v["same_sql"]),
                        str(v["not_in_store"]),
                    ]
                    for name, v in data["before_after"].items()
                ],
            ),
            "",
        ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None, log: Callable[[str], None] = print) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--replies", type=Path, required=True, help="the store of model replies (.jsonl or .jsonl.gz)"
    )
    p.add_argument("--sets", default="spider,unseen", help="spider, unseen (comma-separated)")
    p.add_argument("--db-ids", default=None, help="these databases only (comma-separated)")
    p.add_argument(
        "--live",
        action="store_true",
        help="ask the model for calls the store lacks (and store them); default: replay only",
    )
    p.add_argument("--model", default=acc.DEFAULT_MODEL)
    p.add_argument("--rules", default=None, help="these rewrites only (default: the whole registry)")
    p.add_argument("--data-dir", type=Path, default=c.DEFAULT_DATA)
    p.add_argument("--results-dir", type=Path, default=c.DEFAULT_RESULTS)
    p.add_argument("--out", default="ablation")
    p.add_argument("--note", default=None)
    p.add_argument(
        "--before",
        default=None,
        help="the JSONL files (comma-separated) of the accuracy run that recorded the store "
        "(configuration agent): only its questions are asked, and its answers are compared "
        "with this code's, every rewrite on",
    )
    args = p.parse_args(argv)
    names = [n.strip() for n in (args.rules or "").split(",") if n.strip()] or rule_names()
    unknown = sorted(set(names) - set(rule_names()))
    if unknown:
        raise SystemExit(
            f"unknown rewrite(s) {', '.join(unknown)}; the registry has {', '.join(rule_names())}"
        )
    questions = questions_of([s.strip() for s in args.sets.split(",") if s.strip()], args.data_dir)
    if args.db_ids:
        wanted = {d.strip() for d in args.db_ids.split(",")}
        questions = [q for q in questions if q["db_id"] in wanted]
    before: dict[tuple[str, int], dict[str, Any]] = {}
    for f in (args.before or "").split(","):
        if f.strip():
            for r in acc.read_jsonl(Path(f.strip())):
                if r.get("config") == "agent" and not r.get("exception"):
                    before[(r["db_id"], r["index"])] = r
    if before:
        questions = [q for q in questions if (q["db_id"], q["index"]) in before]
    info = c.machine_info()
    # replay only: the model is never loaded; the store says which model wrote it, and the
    # agent reads only that name of the client (a local model gets its drafts)
    client: Any = acc.make_client(args.model) if args.live else _Named("")
    store = open_store(args.replies, client, live=args.live)
    if not args.live:
        client.name = store.recorded_model or args.model
    model_name = client.name
    log(f"ablation: {len(questions)} questions, rewrites {', '.join(names)}, {len(store)} stored replies")
    t0 = time.perf_counter()
    try:
        rows = run_ablation(questions, store, names, log=log)
    finally:
        save_store(store)
    by_set: dict[str, int] = {}
    for q in questions:
        by_set[q["set"]] = by_set.get(q["set"], 0) + 1
    data = {
        "benchmark": "ablation",
        "note": args.note,
        "model": model_name,
        "questions": len(questions),
        "by_set": by_set,
        "missing": sum(1 for r in rows if r.get("missing")),
        "replies": {"file": str(args.replies), "hits": store.hits, "misses": store.misses, "live": args.live},
        "rules": summarize(rows, names),
        "checks": summarize_checks(rows, check_names()),
        "high_band": high_band(rows),
        "before_after": compare(rows, before) if before else None,
        "rows": rows,
        "machine": info,
        "commit": acc.git_commit(),
        "seconds": round(time.perf_counter() - t0, 1),
    }
    c.write_results(args.out, args.results_dir, markdown(data), data)
    return data


class _Named:
    """A client that only has a name: in replay-only mode every call comes from the store."""

    samples = True
    retries = 0
    side_by_side = False

    def __init__(self, name: str):
        self.name = name
        self.model = self

    def invoke(self, *args: Any, **kwargs: Any) -> Any:
        raise ReplyMissing("replay only: the model is not loaded")


if __name__ == "__main__":
    main()
