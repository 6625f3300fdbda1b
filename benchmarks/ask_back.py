"""Asking back, measured on the vague and clear questions of ``benchmarks/vague``.

    .venv/bin/python benchmarks/ask_back.py [--model SPEC] [--replies FILE] [--replay-only] [--out NAME]

Asks every question of ``benchmarks/vague/questions.json`` through the agent (its default
settings, as the ``agent`` configuration of the accuracy benchmark) on its unseen database,
and reports how many vague questions were asked back and how many clear ones were asked
back needlessly, with who asked (the model's CLARIFY or an asking check of
:mod:`sqlnb.agent.checks.vague`) and the question it asked.  The model's replies are
stored (``--replies``) so that a later run replays them.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import accuracy as acc
import common as c

VAGUE = c.REPO / "benchmarks" / "vague" / "questions.json"
REPLIES = c.REPO / "benchmarks" / "results" / "replies" / "vague.jsonl.gz"


def run(args: argparse.Namespace, log=print) -> dict[str, Any]:
    from sqlnb.adapters import connect
    from sqlnb.agent.checks import ASKING_CHECKS

    questions = json.loads(Path(args.questions).read_text(encoding="utf-8"))
    spider_dir = acc.build_unseen(args.data_dir)
    client = acc.make_client(args.model)
    if args.replies:
        from ablation import open_store

        client = open_store(Path(args.replies), client, live=not args.replay_only)
    adapters: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    try:
        for i, q in enumerate(questions, 1):
            db = adapters.get(q["db_id"]) or adapters.setdefault(
                q["db_id"], connect(f"sqlite:///{acc.db_path(spider_dir, q['db_id'])}", readonly=True)
            )
            t0 = time.perf_counter()
            r = acc.ask_agent(
                q["question"], db, client, connection=q["db_id"], no_review=False, max_iterations=5
            )
            asked = r["status"] == "needs_clarification"
            checks = r.get("checks") or {}
            by = sorted(n for n in checks if n in ASKING_CHECKS) if asked else []
            rows.append(
                {
                    "db_id": q["db_id"],
                    "question": q["question"],
                    "vague": bool(q["vague"]),
                    "asked_back": asked,
                    "asked_by": by or (["model"] if asked else []),
                    "asked": r.get("clarify") or [checks[n] for n in by],
                    "sql": r["pred_sql"],
                    "confidence": r["confidence"],
                    "seconds": round(time.perf_counter() - t0, 2),
                }
            )
            log(
                f"{i}/{len(questions)} {'vague' if q['vague'] else 'clear'}: "
                f"{'asked back' if asked else 'answered'} ({', '.join(rows[-1]['asked_by']) or '-'})"
            )
    finally:
        acc.close_adapters(adapters.values())
        if args.replies:
            from ablation import save_store

            save_store(client)
    vague = [r for r in rows if r["vague"]]
    clear = [r for r in rows if not r["vague"]]
    data = {
        "model": args.model,
        "commit": acc.git_commit(),
        "machine": c.machine_info(),
        "vague": len(vague),
        "vague_asked": sum(r["asked_back"] for r in vague),
        "clear": len(clear),
        "clear_asked": sum(r["asked_back"] for r in clear),
        "asked_by": {
            who: sum(1 for r in rows if who in r["asked_by"])
            for who in ["model", *sorted({n for r in rows for n in r["asked_by"]} - {"model"})]
        },
        "questions": rows,
    }
    if args.replies:
        data["replies"] = {"hits": client.hits, "misses": client.misses}
    return data


def markdown(data: dict[str, Any]) -> str:
    def pct(k: int, n: int) -> str:
        return f"{100 * k / n:.1f}% ({k}/{n})" if n else "–"

    lines = [
        "# Asking back",
        "",
        f"Model `{data['model']}`, code {data['commit']}; {c.machine_markdown(data['machine']).strip()}",
        "",
        "The vague and clear questions of `benchmarks/vague` (written blind, after the asking "
        "checks), asked through the agent (`benchmarks/ask_back.py`).",
        "",
        c.table(
            ["Questions", "Asked back"],
            [
                ["vague", pct(data["vague_asked"], data["vague"])],
                ["clear (needlessly)", pct(data["clear_asked"], data["clear"])],
            ],
        ),
        "",
        "Who asked: " + ", ".join(f"{k} {v}" for k, v in data["asked_by"].items()) + ".",
        "",
        "## Every question",
        "",
    ]
    for r in data["questions"]:
        mark = "asked back" if r["asked_back"] else "answered"
        asked = f" — {' / '.join(r['asked'])}" if r["asked_back"] else ""
        lines.append(
            f"- {'vague' if r['vague'] else 'clear'}, {r['db_id']}: {r['question']} → **{mark}**{asked}"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="benchmarks/ask_back.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="llamacpp:qwen2.5-coder-1.5b")
    p.add_argument("--questions", default=str(VAGUE))
    p.add_argument(
        "--replies",
        default=str(REPLIES),
        help="the store of the model's replies, .jsonl or .jsonl.gz ('' for none)",
    )
    p.add_argument("--replay-only", action="store_true", help="answer only from the stored replies")
    p.add_argument("--data-dir", type=Path, default=c.DEFAULT_DATA)
    p.add_argument("--results-dir", type=Path, default=c.DEFAULT_RESULTS)
    p.add_argument("--out", default="ask_back")
    args = p.parse_args(argv)
    data = run(args, log=lambda m: print(m, flush=True))
    md, js = c.write_results(args.out, args.results_dir, markdown(data), data)
    print(f"wrote {md} and {js}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
