"""The answers' explanations measured with a model (the offline one by default).

    .venv/bin/python benchmarks/explain.py [--model SPEC] [--per-set N] [--out NAME]
        [--runs FILE:SET ...]

Takes the answers of recorded accuracy runs (``pred_sql`` of the ``agent`` records that
succeeded, the first ``--per-set`` of each run), runs each answer's SQL again on its
database (read-only), and explains it as the agent does after an answer
(:func:`sqlnb.agent.explain.explain`: one model call, a second when a sentence was not
grounded).  Reports, per set and in all: the share of explanations grounded on the first
try, the share with an explanation in the end, the sentences dropped, the calls and the
seconds per explanation; writes ``results/NAME.md`` and ``.json`` with every explanation.

The grounding check is code (every number and name of a sentence found in the question,
the SQL or the result), so every explanation kept passes it; the first-try share says how
often the model writes a grounded one by itself.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import accuracy as acc
import common as c

REPLIES = c.REPO / "benchmarks" / "results" / "replies"
# the recorded runs explained by default: the sample set on DuckDB, spider-dev, the unseen
# batches 13-16 (answers of the offline model, right and wrong alike)
DEFAULT_RUNS = (
    f"{REPLIES / 'before_sample.jsonl.gz'}:sample",
    f"{REPLIES / 'before_spider.jsonl.gz'}:spider",
    f"{REPLIES / 'before_unseen_13_16.jsonl.gz'}:unseen",
)


def read_records(path: Path) -> list[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def databases(kind: str, data_dir: Path) -> Any:
    """A function from a record's ``db_id`` to an open read-only adapter, for a set."""
    from sqlnb.adapters import connect

    if kind == "sample":
        files = acc.prepare_sample_databases(data_dir)
        return lambda db_id: connect(f"{db_id}:///{files[db_id]}", readonly=True)
    spider_dir = acc.DEFAULT_SPIDER_DIR if kind == "spider" else acc.build_unseen(data_dir)
    return lambda db_id: connect(f"sqlite:///{acc.db_path(spider_dir, db_id)}", readonly=True)


def run(args: argparse.Namespace, log=print) -> dict[str, Any]:
    from sqlnb.agent.explain import explain
    from sqlnb.agent.models import ModelClient, resolve_model

    client = ModelClient(resolve_model(args.model))
    out: list[dict[str, Any]] = []
    for spec in args.runs:
        file, _, kind = spec.rpartition(":")
        records = [
            r
            for r in read_records(Path(file))
            if r.get("config") == "agent" and r.get("status") == "success" and r.get("pred_sql")
        ][: args.per_set]
        open_db = databases(kind, args.data_dir)
        adapters: dict[str, Any] = {}
        for i, r in enumerate(records, 1):
            db = adapters.get(r["db_id"]) or adapters.setdefault(r["db_id"], open_db(r["db_id"]))
            try:
                result = db.execute(r["pred_sql"])
            except Exception as exc:  # an answer that no longer runs is left out
                log(f"{kind} {r['index']}: skipped ({type(exc).__name__})")
                continue
            t0 = time.perf_counter()
            e = explain(client, question=r["question"], sql=r["pred_sql"], dialect=db.dialect, result=result)
            seconds = time.perf_counter() - t0
            row = {
                "set": kind,
                "index": r["index"],
                "question": r["question"],
                "sql": r["pred_sql"],
                "correct": r.get("correct"),
                "explained": e is not None,
                "first_try": bool(e and e.first_try),
                "calls": e.calls if e else 2,
                "seconds": round(seconds, 2),
                "dropped": len(e.dropped) if e else None,
                "not_found": e.not_found if e else None,
                "first_reply": " ".join(e.first_reply) if e else None,
                "text": e.text if e else None,
            }
            out.append(row)
            log(
                f"{kind} {i}/{len(records)} {r['index']}: "
                f"{'first try' if row['first_try'] else 'explained' if row['explained'] else 'none'}"
                f" in {seconds:.1f} s"
            )
        for a in adapters.values():
            a.close()
    data = {"model": args.model, "commit": acc.git_commit(), "machine": c.machine_info(), "explanations": out}
    data["summary"] = {
        kind: summary([r for r in out if r["set"] == kind]) for kind in dict.fromkeys(r["set"] for r in out)
    }
    data["summary"]["all"] = summary(out)
    return data


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    secs = sorted(r["seconds"] for r in rows)
    return {
        "answers": n,
        "first_try": sum(r["first_try"] for r in rows),
        "explained": sum(r["explained"] for r in rows),
        "dropped_sentences": sum(r["dropped"] or 0 for r in rows),
        "calls": round(sum(r["calls"] for r in rows) / n, 2) if n else None,
        "seconds_median": statistics.median(secs) if secs else None,
        "seconds_p90": secs[min(n - 1, int(0.9 * n))] if secs else None,
    }


def markdown(data: dict[str, Any]) -> str:
    def pct(k: int, n: int) -> str:
        return f"{100 * k / n:.1f}% ({k}/{n})" if n else "–"

    lines = [
        "# Explanations of answers",
        "",
        f"Model `{data['model']}`, code {data['commit']}; {c.machine_markdown(data['machine']).strip()}",
        "",
        "Each answer's SQL of a recorded run, explained as the agent does after an answer "
        "(`benchmarks/explain.py`). First try: every sentence of the first reply grounded "
        "(its numbers and names found in the question, the SQL or the result). Explained: "
        "some grounded sentence was left after at most one rewrite.",
        "",
        c.table(
            [
                "Set",
                "Answers",
                "Grounded first try",
                "Explained",
                "Sentences dropped",
                "Calls",
                "Seconds (median / p90)",
            ],
            [
                [
                    kind,
                    str(s["answers"]),
                    pct(s["first_try"], s["answers"]),
                    pct(s["explained"], s["answers"]),
                    str(s["dropped_sentences"]),
                    str(s["calls"]),
                    f"{c.fmt_s(s['seconds_median'])} / {c.fmt_s(s['seconds_p90'])}",
                ]
                for kind, s in data["summary"].items()
            ],
        ),
        "",
        "## What the first replies named that was not found",
        "",
    ]
    misses = [r for r in data["explanations"] if r["not_found"]]
    for r in misses[:40]:
        lines.append(f"- {r['set']} {r['index']}: {', '.join(r['not_found'])}")
    lines += ["", "## Examples", ""]
    for r in data["explanations"][:12]:
        lines.append(f"- **{r['question']}** — {r['text'] or '(none)'}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="benchmarks/explain.py", description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--model", default="llamacpp:qwen2.5-coder-1.5b", help="model spec (default: the offline model)"
    )
    p.add_argument(
        "--runs",
        nargs="+",
        default=list(DEFAULT_RUNS),
        help="recorded runs as FILE:SET (sample, spider, unseen)",
    )
    p.add_argument("--per-set", type=int, default=30, help="answers explained per run (default 30)")
    p.add_argument("--data-dir", type=Path, default=c.DEFAULT_DATA)
    p.add_argument("--results-dir", type=Path, default=c.DEFAULT_RESULTS)
    p.add_argument("--out", default="explain")
    args = p.parse_args(argv)
    data = run(args, log=lambda m: print(m, flush=True))
    md, js = c.write_results(args.out, args.results_dir, markdown(data), data)
    print(f"wrote {md} and {js}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
