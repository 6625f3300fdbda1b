"""Two accuracy runs of the same questions side by side: a run of the code before a change
(recorded with ``accuracy --replies``) and a run of the code after it (replayed from the
same store of model replies, the model asked only for calls the store lacks), per data set
and configuration: EX before and after, the questions answered with the same SQL, and those
turned right and wrong.

    .venv/bin/python benchmarks/before_after.py --out redesign_before_after \\
        --pair "unseen=results/replies/before_unseen.jsonl.gz:.work/after_unseen.jsonl" ...

Each ``--pair`` is ``LABEL=BEFORE:AFTER`` (JSONL files of ``accuracy --jsonl``, gzip
allowed); every configuration found in both is compared on the questions both answered.
Writes ``results/<out>.md`` and ``results/<out>.json``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import accuracy as acc
import common as c


def _by_key(records: Sequence[dict[str, Any]]) -> dict[tuple[str, str, int], dict[str, Any]]:
    return {
        (r["config"], r["db_id"], r["index"]): r
        for r in records
        if not r.get("exception") and not r.get("ambiguous") and "correct" in r
    }


def compare(before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per configuration: the questions both runs answered, right before, right after, the
    same SQL, turned right (wrong before, right after) and turned wrong (the reverse)."""
    b, a = _by_key(before), _by_key(after)
    out: dict[str, dict[str, Any]] = {}
    for key in sorted(b.keys() & a.keys()):
        config = key[0]
        s = out.setdefault(
            config,
            {
                "questions": 0,
                "right_before": 0,
                "right_after": 0,
                "same_sql": 0,
                "turned_right": 0,
                "turned_wrong": 0,
            },
        )
        rb, ra = bool(b[key]["correct"]), bool(a[key]["correct"])
        s["questions"] += 1
        s["right_before"] += rb
        s["right_after"] += ra
        s["same_sql"] += (b[key].get("pred_sql") or "") == (a[key].get("pred_sql") or "")
        s["turned_right"] += ra and not rb
        s["turned_wrong"] += rb and not ra
    return out


def markdown(data: dict[str, Any]) -> str:
    rows = []
    for label, per in data["sets"].items():
        for config, s in per.items():
            n = s["questions"]
            rows.append(
                [
                    label,
                    config,
                    str(n),
                    f"{100.0 * s['right_before'] / n:.1f}% ({s['right_before']})",
                    f"{100.0 * s['right_after'] / n:.1f}% ({s['right_after']})",
                    str(s["same_sql"]),
                    str(s["turned_right"]),
                    str(s["turned_wrong"]),
                ]
            )
    return "\n".join(
        [
            "# before and after: the same questions, the code before a change and after it",
            "",
            f"Note: {data['note']}" if data.get("note") else "",
            "",
            "Per data set and configuration, over the questions both runs answered: EX of the "
            "run before (the code that recorded the model's replies) and after (this code, "
            "the model's replies taken from the same store, the model asked only for calls it "
            "lacks), how many answers kept the same SQL, and how many turned right and wrong.",
            "",
            f"- Date: {data['machine']['date']}; commit {data.get('commit') or '?'}",
            "",
            c.table(
                [
                    "Set",
                    "Configuration",
                    "Questions",
                    "EX before",
                    "EX after",
                    "Same SQL",
                    "Turned right",
                    "Turned wrong",
                ],
                rows,
            ),
            "",
        ]
    )


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pair", action="append", required=True, help="LABEL=BEFORE.jsonl[.gz]:AFTER.jsonl[.gz]")
    p.add_argument("--results-dir", type=Path, default=c.DEFAULT_RESULTS)
    p.add_argument("--out", default="before_after")
    p.add_argument("--note", default=None)
    args = p.parse_args(argv)
    sets: dict[str, dict[str, Any]] = {}
    for pair in args.pair:
        label, _, files = pair.partition("=")
        before, _, after = files.partition(":")
        if not (label and before and after):
            p.error(f"--pair {pair!r}: write LABEL=BEFORE:AFTER")
        per = compare(acc.read_jsonl(Path(before)), acc.read_jsonl(Path(after)))
        for config, s in per.items():
            sets.setdefault(label, {})[config] = s
    data = {
        "benchmark": "before_after",
        "note": args.note,
        "pairs": args.pair,
        "sets": sets,
        "machine": c.machine_info(),
        "commit": acc.git_commit(),
    }
    c.write_results(args.out, args.results_dir, markdown(data), data)
    return data


if __name__ == "__main__":
    main()
