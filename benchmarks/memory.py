"""memory: what re-running a full-result cell and displaying a big result cost.

1. Re-runs: in one fresh process with an IPython InteractiveShell, run the same
   full-result cell 5 times (``run_cell`` with history, as a notebook does) and record the
   resident set size after each run (after ``gc.collect()``):
   sqlnb ``%%sql -o df``; JupySQL ``%%sql rs <<`` then ``df = rs.DataFrame()``.
2. Display cost: the bytes of HTML a result shown without ``-o`` puts into the notebook:
   sqlnb's display (``text/html`` of the published outputs) vs JupySQL's ``_repr_html_``
   with ``%config SqlMagic.displaylimit = 0`` (show everything) and with its default.
"""

from __future__ import annotations

from typing import Any

import common as c

MEMORY_ENGINES = ("postgresql", "duckdb")
RERUNS = 5
DISPLAY_VARIANTS = (
    ("sqlnb", {"tool": "sqlnb"}, "sqlnb `%%sql` (no -o; default display_limit 20, autolimit 100,000)"),
    ("jupysql_all", {"tool": "jupysql", "displaylimit": 0}, "JupySQL `%%sql`, `SqlMagic.displaylimit = 0`"),
    ("jupysql_default", {"tool": "jupysql"}, "JupySQL `%%sql`, default displaylimit (10)"),
)


def run(args, log=print) -> dict[str, Any]:
    info = c.machine_info()
    engines = [e for e in args.engines if e in (args.memory_engines or MEMORY_ENGINES)]
    data: dict[str, Any] = {
        "benchmark": "memory",
        "rows": args.rows,
        "reruns": RERUNS,
        "query": c.QUERY,
        "machine": info,
        "engines": {},
    }
    servers = {}
    for engine in engines:
        log(f"memory: {c.LABELS[engine]}")
        entry: dict[str, Any] = {"reruns": {}, "display": {}}
        data["engines"][engine] = entry
        try:
            ds = c.ensure_fetch_data(engine, args.rows, args.data_dir, log=log)
        except Exception as exc:
            entry["error"] = f"data set: {type(exc).__name__}: {exc}"
            log(f"  {entry['error']}")
            continue
        servers[engine] = ds["server"]
        urls = c.urls(engine, args.rows, args.data_dir)
        for tool in ("sqlnb", "jupysql"):
            try:
                r = c.run_worker(
                    "memory",
                    {"tool": tool, "engine": engine, "urls": urls, "reruns": RERUNS},
                    timeout=args.timeout,
                )
            except c.WorkerError as exc:
                entry["reruns"][tool] = {"error": str(exc)}
                log(f"  re-runs {tool}: ERROR {exc}")
                continue
            rss = [x["rss"] for x in r["runs"]]
            r["growth"] = rss[-1] - rss[0]
            entry["reruns"][tool] = r
            log(
                f"  re-runs {tool:8s}: RSS MiB "
                + ", ".join(c.fmt_mib(x) for x in rss)
                + f" (growth {c.fmt_mib(r['growth'])} MiB)"
            )
        for key, params, _label in DISPLAY_VARIANTS:
            try:
                r = c.run_worker("display", {**params, "engine": engine, "urls": urls}, timeout=args.timeout)
            except c.WorkerError as exc:
                entry["display"][key] = {"error": str(exc)}
                log(f"  display {key}: ERROR {exc}")
                continue
            entry["display"][key] = r
            log(f"  display {key:15s}: {c.fmt_bytes(r['html_bytes'])} HTML in {r['seconds']:.3f} s")
        s, j = entry["display"].get("sqlnb", {}), entry["display"].get("jupysql_all", {})
        entry["display_ratio"] = c.ratio(j.get("html_bytes"), s.get("html_bytes"))
    data["servers"] = servers
    data["load_average_end"] = c.load_average()
    c.write_results("memory", args.results_dir, markdown(data), data)
    return data


def markdown(data: dict[str, Any]) -> str:
    n = data["rows"]
    out = [
        f"# memory: re-running and displaying `{data['query']}` ({n:,} rows × 5 columns)",
        "",
        c.machine_markdown(data["machine"], data.get("servers"), data.get("load_average_end")),
        "",
        f"## Resident memory after each of {data['reruns']} re-runs of the same cell (MiB)",
        "",
        "One fresh process per tool and engine; `run_cell` with history, `gc.collect()` before "
        "each reading. sqlnb: `%%sql -o df`; JupySQL: `%%sql rs <<` then `df = rs.DataFrame()`. "
        "Baseline: after connecting and a first `SELECT 1` cell (lazy imports paid), before the first run.",
        "",
    ]
    headers = (
        ["Engine", "Tool", "Baseline"]
        + [f"Run {i + 1}" for i in range(data["reruns"])]
        + ["Growth run 1 → 5", "DataFrame size (deep)", "Peak RSS"]
    )
    body = []
    for engine, e in data["engines"].items():
        if "error" in e:
            body.append([c.LABELS[engine], e["error"]] + [""] * (len(headers) - 2))
            continue
        for tool, r in e["reruns"].items():
            label = "sqlnb" if tool == "sqlnb" else "JupySQL"
            if "error" in r:
                body.append(
                    [c.LABELS[engine], label, "error: " + r["error"].replace("|", "/")[:200]]
                    + [""] * (len(headers) - 3)
                )
                continue
            body.append(
                [c.LABELS[engine], label, c.fmt_mib(r["baseline_rss"])]
                + [c.fmt_mib(x["rss"]) for x in r["runs"]]
                + [
                    ("+" if r["growth"] >= 0 else "") + c.fmt_mib(r["growth"]),
                    c.fmt_bytes(r["df_bytes"]),
                    c.fmt_mib(r["peak_rss"]),
                ]
            )
    out += [c.table(headers, body), "", "## Seconds per re-run", ""]
    body = []
    for engine, e in data["engines"].items():
        for tool, r in e.get("reruns", {}).items():
            if "runs" in r:
                body.append(
                    [c.LABELS[engine], "sqlnb" if tool == "sqlnb" else "JupySQL"]
                    + [c.fmt_s(x["seconds"]) for x in r["runs"]]
                )
    out += [
        c.table(["Engine", "Tool"] + [f"Run {i + 1}" for i in range(data["reruns"])], body),
        "",
        "## Display cost: HTML put into the notebook for the result without -o",
        "",
    ]
    headers = ["Engine", "Display", "HTML bytes", "Seconds (query + render)", "Process RSS after (MiB)"]
    body = []
    for engine, e in data["engines"].items():
        for key, _params, label in DISPLAY_VARIANTS:
            r = e.get("display", {}).get(key)
            if r is None:
                continue
            if "error" in r:
                body.append([c.LABELS[engine], label, "error: " + r["error"].replace("|", "/")[:200], "", ""])
                continue
            body.append(
                [
                    c.LABELS[engine],
                    label,
                    f"{r['html_bytes']:,} ({c.fmt_bytes(r['html_bytes'])})",
                    c.fmt_s(r["seconds"]),
                    c.fmt_mib(r["rss"]),
                ]
            )
    out += [c.table(headers, body), ""]
    for engine, e in data["engines"].items():
        if e.get("display_ratio"):
            s = e["display"]["sqlnb"]
            fetched = (
                (
                    f"; sqlnb fetched {s['rows_fetched']:,} rows"
                    + (" (stopped at its autolimit)" if s.get("truncated") else "")
                )
                if s.get("rows_fetched")
                else ""
            )
            out.append(
                f"- {c.LABELS[engine]}: JupySQL with displaylimit = 0 produces "
                f"{e['display_ratio']:,.0f}× the HTML of sqlnb{fetched}."
            )
    return "\n".join(out)
