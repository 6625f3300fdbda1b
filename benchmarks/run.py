"""Run the sqlnb benchmarks and write markdown + JSON results.

    .venv/bin/python benchmarks/run.py [fetch|memory|catalog|overhead|bridge|all] [--rows N] [--tables N]
        [--repeat K] [--engines postgresql,mysql,duckdb,sqlite] [--results-dir DIR] [--asks N]
        [--cell-runs N]
    .venv/bin/python benchmarks/run.py accuracy [--model SPEC] [--spider-dir DIR]
        [--configs agent,no-review,single-shot] [--limit N] [--offset N] [--db-ids a,b]
        [--out NAME] [--jsonl PATH] [--resume]

``all`` runs fetch, memory, catalog, overhead and bridge; accuracy (a local model, about an hour)
runs only when named.

See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common as c

BENCHMARKS = ("fetch", "memory", "catalog", "overhead", "bridge")  # what ``all`` runs
ONLY_BY_NAME = ("accuracy",)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="benchmarks/run.py", description=__doc__.split("\n\n")[0])
    p.add_argument("benchmark", nargs="?", default="all", choices=(*BENCHMARKS, *ONLY_BY_NAME, "all"))
    p.add_argument(
        "--rows", type=int, default=1_000_000, help="rows of the fetch/memory table (default 1,000,000)"
    )
    p.add_argument("--tables", type=int, default=1000, help="tables of the catalog schema (default 1,000)")
    p.add_argument(
        "--repeat", type=int, default=3, help="runs per measurement; the median is reported (default 3)"
    )
    p.add_argument(
        "--engines",
        default=",".join(c.ENGINES),
        help="comma-separated subset of postgresql,mysql,duckdb,sqlite (default: all); "
        "memory runs on postgresql and duckdb among them, catalog on postgresql",
    )
    p.add_argument(
        "--memory-engines", default=None, help="engines for the memory benchmark (default: postgresql,duckdb)"
    )
    p.add_argument(
        "--results-dir",
        type=Path,
        default=c.DEFAULT_RESULTS,
        help=f"where <name>.md and <name>.json go (default {c.DEFAULT_RESULTS})",
    )
    p.add_argument(
        "--data-dir",
        type=Path,
        default=c.DEFAULT_DATA,
        help=f"where the DuckDB and SQLite files live (default {c.DEFAULT_DATA})",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=3600,
        help="seconds one measurement subprocess may take (default 3600)",
    )
    # overhead
    p.add_argument("--asks", type=int, default=200, help="overhead: asks timed (default 200)")
    # bridge
    p.add_argument(
        "--cell-runs",
        type=int,
        default=100,
        help="bridge: %%%%sql cells timed per condition, idle and asking (default 100)",
    )
    # accuracy
    import accuracy as acc

    p.add_argument(
        "--spider-dir",
        type=Path,
        default=acc.DEFAULT_SPIDER_DIR,
        help="accuracy: a Spider-layout directory: questions.json + database/<db_id>/<db_id>.sqlite "
        f"(default {acc.DEFAULT_SPIDER_DIR})",
    )
    p.add_argument(
        "--model", default=acc.DEFAULT_MODEL, help=f"accuracy: model spec (default {acc.DEFAULT_MODEL})"
    )
    p.add_argument(
        "--configs",
        default=",".join(acc.CONFIGS),
        help=f"accuracy: comma-separated subset of {','.join(acc.CONFIGS)} (default: all three)",
    )
    p.add_argument("--limit", type=int, default=None, help="accuracy: the first N questions only")
    p.add_argument("--offset", type=int, default=0, help="accuracy: skip the first N questions")
    p.add_argument(
        "--db-ids", default=None, help="accuracy: questions of these databases only (comma-separated)"
    )
    p.add_argument(
        "--dataset",
        choices=acc.DATASETS,
        default="spider",
        help="accuracy: spider (--spider-dir, SQLite) or sample (benchmarks/sample/questions.json "
        "over the sqlnb demo database, on the duckdb, sqlite and postgresql of --engines; results "
        "accuracy_sample.* unless --out) or unseen (benchmarks/unseen: one hundred and sixteen SQLite databases "
        "written to measure schemas the agent was never tuned on; results accuracy_unseen.*)",
    )
    p.add_argument(
        "--ids",
        default=None,
        help="accuracy: these questions only (comma-separated): the sample "
        "set's ids, or for spider and unseen the #N of the reports "
        "(a question's position in questions.json)",
    )
    p.add_argument("--out", default="accuracy", help="accuracy: results file stem (default accuracy)")
    p.add_argument(
        "--jsonl",
        type=Path,
        default=None,
        help="accuracy: one line per (question, configuration), written as it goes "
        "(default <data-dir>/<out>.jsonl)",
    )
    p.add_argument(
        "--note",
        default=None,
        help="accuracy: a sentence put at the top of the report (what the run is, what it is not)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="accuracy: keep the --jsonl file's results and ask only the rest",
    )
    p.add_argument(
        "--replies",
        type=Path,
        default=None,
        help="accuracy: a JSONL file of stored model replies (benchmarks/replies.py): calls "
        "it holds are answered from it, new ones asked and appended",
    )
    p.add_argument(
        "--replay-only",
        action="store_true",
        help="accuracy: with --replies, never call the model: a call the file lacks fails",
    )
    p.add_argument(
        "--max-iterations",
        type=int,
        default=acc.DEFAULT_MAX_ITERATIONS,
        help="accuracy: the agent's max_iterations (default 5)",
    )
    args = p.parse_args(argv)
    configs = [x.strip() for x in args.configs.split(",") if x.strip()]
    bad = [x for x in configs if x not in acc.CONFIGS]
    if bad or not configs:
        p.error(f"--configs: choose from {', '.join(acc.CONFIGS)}")
    args.configs = configs
    if args.cell_runs < 1:
        p.error("--cell-runs must be at least 1")
    if (
        args.asks < 1
        or args.max_iterations < 1
        or (args.limit is not None and args.limit < 1)
        or args.offset < 0
    ):
        p.error("--asks, --max-iterations and --limit must be at least 1, --offset at least 0")
    engines = [e.strip().lower() for e in args.engines.split(",") if e.strip()]
    aliases = {"postgres": "postgresql", "pg": "postgresql", "mariadb": "mysql"}
    engines = [aliases.get(e, e) for e in engines]
    bad = [e for e in engines if e not in c.ENGINES]
    if bad:
        p.error(f"unknown engine(s) {', '.join(bad)}; choose from {', '.join(c.ENGINES)}")
    args.engines = engines
    if args.memory_engines:
        args.memory_engines = [
            aliases.get(e.strip().lower(), e.strip().lower())
            for e in args.memory_engines.split(",")
            if e.strip()
        ]
    if args.repeat < 1 or args.rows < 1 or args.tables < 1:
        p.error("--repeat, --rows and --tables must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    todo = BENCHMARKS if args.benchmark == "all" else (args.benchmark,)
    t0 = time.perf_counter()
    for name in todo:
        module = __import__(name)
        module.run(args, log=lambda msg: print(msg, flush=True))
        stem = args.out if name == "accuracy" else name
        print(f"wrote {args.results_dir / (stem + '.md')} and {stem}.json", flush=True)
    print(f"done in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
