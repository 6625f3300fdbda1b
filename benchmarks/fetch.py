"""fetch: ``SELECT * FROM bench`` (N rows × 5 columns) into a pandas DataFrame.

Three ways, on the same data on the same server, each measurement in a fresh subprocess:

- sqlnb: ``%%sql -o df`` through a real IPython InteractiveShell,
- JupySQL 0.11 with its default settings: ``%%sql rs <<`` then ``rs.DataFrame()``,
- ``pandas.read_sql`` with a SQLAlchemy engine (the DB-API connection for SQLite).

The order of the tools rotates from one repeat to the next; the median is reported.
"""

from __future__ import annotations

from typing import Any

import common as c

TOOLS = ("sqlnb", "jupysql", "read_sql")
TOOL_LABELS = {
    "sqlnb": "sqlnb `%%sql -o df`",
    "jupysql": "JupySQL `rs <<` + `rs.DataFrame()`",
    "read_sql": "`pandas.read_sql`",
    "sqlnb_pandas_first": "sqlnb `%%sql -o df`, `import pandas` before `%load_ext sqlnb`",
}
# Measured too, outside the ratios: on MariaDB the import order decides whether
# mysql-connector's C extension loads (sqlnb preloads it; pyarrow loaded first blocks it).
EXTRA_TOOLS = {"mysql": ("sqlnb_pandas_first",)}
# how many times faster than JupySQL sqlnb should be (1.0: not slower)
TARGETS = {"postgresql": 4.0, "mysql": 8.0, "duckdb": 1.0, "sqlite": 1.0}


def run(args, log=print) -> dict[str, Any]:
    info = c.machine_info()
    engines = list(args.engines)
    data: dict[str, Any] = {
        "benchmark": "fetch",
        "rows": args.rows,
        "repeat": args.repeat,
        "query": c.QUERY,
        "machine": info,
        "engines": {},
    }
    servers = {}
    for engine in engines:
        log(f"fetch: {c.LABELS[engine]}")
        tools = TOOLS + EXTRA_TOOLS.get(engine, ())
        entry: dict[str, Any] = {"tools": {t: {"runs": [], "errors": []} for t in tools}}
        data["engines"][engine] = entry
        try:
            ds = c.ensure_fetch_data(engine, args.rows, args.data_dir, log=log)
        except Exception as exc:
            entry["error"] = f"data set: {type(exc).__name__}: {exc}"
            log(f"  {entry['error']}")
            continue
        servers[engine] = ds["server"]
        entry["dataset"] = ds
        urls = c.urls(engine, args.rows, args.data_dir)
        for k in range(args.repeat):
            order = tools[k % len(tools) :] + tools[: k % len(tools)]
            for tool in order:
                t = entry["tools"][tool]
                if t["errors"] and not t["runs"]:
                    continue  # failed before: do not spend the time again
                try:
                    r = c.run_worker(
                        "fetch", {"tool": tool, "engine": engine, "urls": urls}, timeout=args.timeout
                    )
                except c.WorkerError as exc:
                    t["errors"].append(str(exc))
                    log(f"  {tool}: ERROR {exc}")
                    continue
                if r["rows"] != args.rows:
                    t["errors"].append(f"returned {r['rows']} rows, expected {args.rows}")
                t["runs"].append(r)
                how = ", ".join(f"{k_[6:]}={v}" for k_, v in r.items() if k_.startswith("sqlnb_"))
                log(
                    f"  {tool:9s} run {k + 1}: {r['seconds']:.3f} s, peak RSS {c.fmt_mib(r['peak_rss'])} MiB"
                    + (f" ({how})" if how else "")
                )
        for t in entry["tools"].values():
            t["median_s"] = c.median([r["seconds"] for r in t["runs"]])
            t["median_peak_rss"] = c.median([r["peak_rss"] for r in t["runs"]])
            t["median_first_cell_s"] = c.median([r.get("first_cell_seconds") for r in t["runs"]])
            if t["runs"]:
                t["dtypes"] = t["runs"][-1]["dtypes"]
                t["driver"] = {k_: v for k_, v in t["runs"][-1].items() if k_.startswith("sqlnb_")}
        base = entry["tools"]["sqlnb"]["median_s"]
        entry["jupysql_over_sqlnb"] = c.ratio(entry["tools"]["jupysql"]["median_s"], base)
        entry["read_sql_over_sqlnb"] = c.ratio(entry["tools"]["read_sql"]["median_s"], base)
        entry["target_jupysql_over_sqlnb"] = TARGETS.get(engine)
        r = entry["jupysql_over_sqlnb"]
        entry["target_met"] = None if r is None else r >= TARGETS.get(engine, 1.0)
    data["servers"] = servers
    data["load_average_end"] = c.load_average()
    c.write_results("fetch", args.results_dir, markdown(data), data)
    return data


def markdown(data: dict[str, Any]) -> str:
    rows_ = data["rows"]
    out = [
        f"# fetch: `{data['query']}` ({rows_:,} rows × 5 columns) into a pandas DataFrame",
        "",
        "Median of {} run{}, each in a fresh Python process; imports and connecting are not "
        "timed. Columns: bigint, double, text, timestamp, numeric(12,2).".format(
            data["repeat"], "s" if data["repeat"] != 1 else ""
        ),
        "",
        c.machine_markdown(data["machine"], data.get("servers"), data.get("load_average_end")),
        "",
        "## Seconds (lower is better)",
        "",
    ]
    headers = (
        ["Engine"]
        + [TOOL_LABELS[t] for t in TOOLS]
        + ["JupySQL / sqlnb", "read_sql / sqlnb", "Target (JupySQL / sqlnb)", "Met"]
    )
    body = []
    for engine, e in data["engines"].items():
        if "error" in e:
            body.append([c.LABELS[engine]] + [e["error"]] + [""] * (len(headers) - 2))
            continue
        cells = []
        for t in TOOLS:
            te = e["tools"][t]
            cells.append(
                c.fmt_s(te["median_s"])
                if te["median_s"] is not None
                else "error: " + (te["errors"][0] if te["errors"] else "?").replace("|", "/")[:200]
            )
        target = e.get("target_jupysql_over_sqlnb")
        met = e.get("target_met")
        body.append(
            [c.LABELS[engine]]
            + cells
            + [
                c.fmt_x(e["jupysql_over_sqlnb"]),
                c.fmt_x(e["read_sql_over_sqlnb"]),
                f"≥ {target:.0f}× faster" if target and target > 1 else "not slower",
                "—" if met is None else ("yes" if met else "**no**"),
            ]
        )
    out += [
        c.table(headers, body),
        "",
        "Ratios above 1 mean sqlnb is faster.",
        "",
        "## Peak resident memory of the measuring process (MiB, median)",
        "",
    ]
    body = []
    for engine, e in data["engines"].items():
        if "error" in e:
            continue
        body.append([c.LABELS[engine]] + [c.fmt_mib(e["tools"][t]["median_peak_rss"]) for t in TOOLS])
    out += [c.table(["Engine"] + [TOOL_LABELS[t] for t in TOOLS], body), ""]
    extra = [
        (engine, t) for engine, e in data["engines"].items() for t in e.get("tools", {}) if t not in TOOLS
    ]
    if extra:
        out += [
            "## Import order",
            "",
            "sqlnb loads mysql-connector-python's C extension when it is imported; once pyarrow "
            "is loaded (by `import pandas`) the extension can no longer load and the driver "
            "falls back to pure Python. The main table uses the documented order "
            "(`%load_ext sqlnb` first).",
            "",
        ]
        body = []
        for engine, t in extra:
            te, base = data["engines"][engine]["tools"][t], data["engines"][engine]["tools"]["sqlnb"]
            secs = (
                c.fmt_s(te["median_s"])
                if te["median_s"] is not None
                else ("error: " + (te["errors"][0] if te["errors"] else "?").replace("|", "/")[:200])
            )
            body.append(
                [
                    c.LABELS[engine],
                    TOOL_LABELS[t],
                    secs,
                    c.fmt_x(c.ratio(te["median_s"], base["median_s"])),
                    ", ".join(f"{k[6:]}={v}" for k, v in (te.get("driver") or {}).items()),
                    ", ".join(f"{k[6:]}={v}" for k, v in (base.get("driver") or {}).items()),
                ]
            )
        out += [
            c.table(
                ["Engine", "Variant", "Seconds", "Variant / sqlnb", "Driver (variant)", "Driver (sqlnb)"],
                body,
            ),
            "",
        ]
    out += [
        "## First cell in a fresh kernel: `SELECT 1 AS one` (seconds, median, not in the timings above)",
        "",
        "Lazy imports and first-use setup; for read_sql it includes opening the pool's first "
        "connection (sqlnb and JupySQL connected in an earlier cell).",
        "",
    ]
    body = []
    for engine, e in data["engines"].items():
        if "error" in e:
            continue
        body.append([c.LABELS[engine]] + [c.fmt_s(e["tools"][t].get("median_first_cell_s")) for t in TOOLS])
    out += [c.table(["Engine"] + [TOOL_LABELS[t] for t in TOOLS], body), "", "## Resulting dtypes", ""]
    body = []
    for engine, e in data["engines"].items():
        for t in e.get("tools", {}):
            d = e["tools"][t].get("dtypes")
            if d:
                driver = ", ".join(f"{k[6:]}={v}" for k, v in (e["tools"][t].get("driver") or {}).items())
                body.append(
                    [c.LABELS[engine], TOOL_LABELS[t], ", ".join(f"{k}: {v}" for k, v in d.items()), driver]
                )
    out += [c.table(["Engine", "Tool", "dtypes", "sqlnb connection / path"], body)]
    errors = [
        (engine, t, err)
        for engine, e in data["engines"].items()
        for t, te in e.get("tools", {}).items()
        for err in te["errors"]
    ]
    if errors:
        out += ["", "## Errors", ""] + [f"- {c.LABELS[e]} / {t}: {err}" for e, t, err in errors]
    return "\n".join(out)
