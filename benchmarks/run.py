"""Run the sqlnb benchmarks and write markdown + JSON results.

    .venv/bin/python benchmarks/run.py [fetch|memory|catalog|all] [--rows N] [--tables N]
        [--repeat K] [--engines postgresql,mysql,duckdb,sqlite] [--results-dir DIR]

See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common as c  # noqa: E402

BENCHMARKS = ("fetch", "memory", "catalog")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="benchmarks/run.py", description=__doc__.split("\n\n")[0])
    p.add_argument("benchmark", nargs="?", default="all", choices=(*BENCHMARKS, "all"))
    p.add_argument("--rows", type=int, default=1_000_000, help="rows of the fetch/memory table (default 1,000,000)")
    p.add_argument("--tables", type=int, default=1000, help="tables of the catalog schema (default 1,000)")
    p.add_argument("--repeat", type=int, default=3, help="runs per measurement; the median is reported (default 3)")
    p.add_argument("--engines", default=",".join(c.ENGINES),
                   help="comma-separated subset of postgresql,mysql,duckdb,sqlite (default: all); "
                        "memory runs on postgresql and duckdb among them, catalog on postgresql")
    p.add_argument("--memory-engines", default=None,
                   help="engines for the memory benchmark (default: postgresql,duckdb)")
    p.add_argument("--results-dir", type=Path, default=c.DEFAULT_RESULTS,
                   help=f"where <name>.md and <name>.json go (default {c.DEFAULT_RESULTS})")
    p.add_argument("--data-dir", type=Path, default=c.DEFAULT_DATA,
                   help=f"where the DuckDB and SQLite files live (default {c.DEFAULT_DATA})")
    p.add_argument("--timeout", type=float, default=3600,
                   help="seconds one measurement subprocess may take (default 3600)")
    args = p.parse_args(argv)
    engines = [e.strip().lower() for e in args.engines.split(",") if e.strip()]
    aliases = {"postgres": "postgresql", "pg": "postgresql", "mariadb": "mysql"}
    engines = [aliases.get(e, e) for e in engines]
    bad = [e for e in engines if e not in c.ENGINES]
    if bad:
        p.error(f"unknown engine(s) {', '.join(bad)}; choose from {', '.join(c.ENGINES)}")
    args.engines = engines
    if args.memory_engines:
        args.memory_engines = [aliases.get(e.strip().lower(), e.strip().lower())
                               for e in args.memory_engines.split(",") if e.strip()]
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
        print(f"wrote {args.results_dir / (name + '.md')} and {name}.json", flush=True)
    print(f"done in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
