"""The README's benchmark chart, drawn from the committed results.

    python benchmarks/chart.py [--results benchmarks/results] [--out docs/images/benchmarks.png]

Reads ``fetch.json`` (1M rows into pandas, per engine and tool), ``catalog.json`` (a
1,000-table PostgreSQL schema) and ``accuracy.json`` (Spider dev execution accuracy per
agent configuration) and draws one figure with three panels. Re-run it after
``benchmarks/run.py`` writes new results; ``tests/test_docs.py`` runs it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
OUT = ROOT / "docs" / "images" / "benchmarks.png"

ENGINES = {"postgresql": "PostgreSQL", "mysql": "MariaDB", "duckdb": "DuckDB", "sqlite": "SQLite"}
FETCH_TOOLS = {"sqlnb": "sqlnb %%sql -o", "jupysql": "JupySQL 0.11", "read_sql": "pandas.read_sql"}
CATALOG_TOOLS = {
    "sqlnb": "sqlnb catalog",
    "sqla_multi": "SQLAlchemy 2\nmulti-table",
    "sqla_reflect": "SQLAlchemy\nMetaData.reflect",
}
# the configurations a run has, in this order (a run need not have all of them; single-shot
# and agent it must)
ACCURACY_CONFIGS = {
    "single-shot": "single-shot",
    "no-review": "agent\n--no-review",
    "agent": "agent",
    "agent+memory": "agent\nwith memory",
}
ACCURACY_REQUIRED = ("single-shot", "agent")


class ResultsError(Exception):
    """A results file is missing or lacks what the chart needs."""


def _load(results: Path, name: str) -> dict:
    path = results / f"{name}.json"
    if not path.exists():
        raise ResultsError(f"{path} is missing: run `python benchmarks/run.py {name}` first")
    return json.loads(path.read_text())


def chart_data(results: Path = RESULTS) -> dict:
    """The numbers the chart shows, read from the results JSON."""
    try:
        fetch = _load(results, "fetch")
        catalog = _load(results, "catalog")
        accuracy = _load(results, "accuracy")
        return {
            "fetch": {
                ENGINES[e]: {FETCH_TOOLS[t]: fetch["engines"][e]["tools"][t]["median_s"] for t in FETCH_TOOLS}
                for e in ENGINES
                if e in fetch["engines"]
            },
            "fetch_rows": fetch["rows"],
            "catalog": {label: catalog["tools"][t]["median_s"] for t, label in CATALOG_TOOLS.items()},
            "catalog_tables": catalog["tables"],
            "accuracy": {
                label: accuracy["configs"][c]["ex"]
                for c, label in ACCURACY_CONFIGS.items()
                if c in ACCURACY_REQUIRED or c in accuracy["configs"]
            },
            "accuracy_n": accuracy["configs"]["agent"]["n"],
        }
    except KeyError as exc:
        raise ResultsError(f"the results in {results} lack {exc}: re-run benchmarks/run.py") from exc


def draw(results: Path = RESULTS, out: Path = OUT) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = chart_data(results)
    colors = ["#5b4fd6", "#f0a33a", "#9aa0a6"]
    fig, (ax1, ax2, ax3) = plt.subplots(
        1, 3, figsize=(13, 4.2), gridspec_kw={"width_ratios": [2.2, 1.3, 1.1]}
    )

    engines = list(data["fetch"])
    width = 0.26
    for i, tool in enumerate(FETCH_TOOLS.values()):
        xs = [j + (i - 1) * width for j in range(len(engines))]
        values = [data["fetch"][e][tool] for e in engines]
        bars = ax1.bar(xs, values, width, label=tool, color=colors[i])
        ax1.bar_label(bars, labels=[f"{v:.2f}" for v in values], fontsize=7, padding=1)
    ax1.set_xticks(range(len(engines)), engines)
    ax1.set_yscale("log")
    ax1.set_ylabel("seconds (log scale, lower is better)")
    ax1.set_title(f"{data['fetch_rows']:,} rows into pandas", fontsize=10)
    ax1.legend(fontsize=8, frameon=False)

    labels = list(data["catalog"])
    values = list(data["catalog"].values())
    bars = ax2.bar(labels, values, color=colors)
    ax2.bar_label(bars, labels=[f"{v:.2f} s" for v in values], fontsize=8, padding=1)
    ax2.set_ylabel("seconds (lower is better)")
    ax2.set_title(f"Catalog of {data['catalog_tables']:,} PostgreSQL tables", fontsize=10)
    ax2.tick_params(axis="x", labelsize=8)

    labels = list(data["accuracy"])
    values = list(data["accuracy"].values())
    palette = {
        "single-shot": colors[2],
        "agent\n--no-review": colors[1],
        "agent": colors[0],
        "agent\nwith memory": "#2f8f5b",
    }
    bars = ax3.bar(labels, values, color=[palette.get(label, colors[0]) for label in labels])
    ax3.bar_label(bars, labels=[f"{v:.1f}%" for v in values], fontsize=8, padding=1)
    ax3.set_ylim(0, 100)
    ax3.set_ylabel("execution accuracy, % (higher is better)")
    ax3.set_title(f"Spider dev ({data['accuracy_n']} q), 1.5B local model", fontsize=10)
    ax3.tick_params(axis="x", labelsize=8)

    for ax in (ax1, ax2, ax3):
        ax.spines[["top", "right"]].set_visible(False)
    fig.suptitle("sqlnb benchmarks (benchmarks/results/, 2-core machine, median of 5 runs)", fontsize=11)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Draw docs/images/benchmarks.png from benchmarks/results/")
    p.add_argument("--results", type=Path, default=RESULTS)
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    try:
        print(draw(args.results, args.out))
    except ResultsError as exc:
        print(f"benchmarks/chart.py: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
