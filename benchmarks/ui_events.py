"""ui_events: how long the JupyterLab panel takes to show a step of a run once the kernel
has sent it (target: under 50 ms).

    .venv/bin/python benchmarks/ui_events.py [--questions N] [--delay S] [--results-dir DIR]

Runs the Galata benchmark spec labextension/ui-tests/tests/bench/ui_events.spec.ts (the
`bench` Playwright project: Debian's Chromium against a real JupyterLab serving the
extension built in sqlnb/labextension), which asks N questions in the panel and records,
for every step event, the kernel's send time and the time the step appeared in the page.
Writes results/ui_events.md and results/ui_events.json. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common as c

TARGET_MS = 50.0
MIN_EVENTS = 50


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="benchmarks/ui_events.py", description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--questions",
        type=int,
        default=20,
        help="questions asked in the panel, 4 step events each (default 20: 80 events)",
    )
    p.add_argument(
        "--delay",
        type=float,
        default=0.2,
        help="seconds the scripted model waits before each reply (default 0.2)",
    )
    p.add_argument(
        "--results-dir",
        type=Path,
        default=c.DEFAULT_RESULTS,
        help=f"where ui_events.md and ui_events.json go (default {c.DEFAULT_RESULTS})",
    )
    p.add_argument(
        "--timeout", type=float, default=900, help="seconds the browser run may take (default 900)"
    )
    return p.parse_args(argv)


def stats(values: list[float]) -> dict[str, float | int | None]:
    if not values:
        return {"n": 0, "median": None, "p95": None, "min": None, "max": None, "mean": None}
    p95 = statistics.quantiles(values, n=100, method="inclusive")[94] if len(values) > 1 else values[0]
    return {
        "n": len(values),
        "median": statistics.median(values),
        "p95": p95,
        "min": min(values),
        "max": max(values),
        "mean": statistics.fmean(values),
    }


def run_browser(args: argparse.Namespace, out: Path) -> None:
    c.run_bench_spec(
        "ui_events",
        "tests/bench/ui_events.spec.ts",
        {
            "SQLNB_BENCH_OUT": str(out),
            "SQLNB_BENCH_QUESTIONS": str(args.questions),
            "SQLNB_BENCH_DELAY": str(args.delay),
        },
        args.timeout,
    )


def report(raw: dict, info: dict, load_after: list[float] | None) -> tuple[str, dict]:
    events = raw["events"]
    overall = stats([e["latency_ms"] for e in events])
    painted = stats([e["frame_latency_ms"] for e in events])
    transport = stats([e["transport_ms"] for e in events])
    handling = stats([e["panel_ms"] for e in events])

    def queued(of: list[dict]) -> dict:
        """Of the transport: the wait in the kernel for its IOPub thread to send."""
        return stats([e["kernel_queue_ms"] for e in of if e.get("kernel_queue_ms") is not None])

    queue = queued(events)
    kinds = {}
    for kind in ("started", "reply", "attempt"):
        of = [e for e in events if e["type"] == kind]
        kinds[kind] = {
            "dom": stats([e["latency_ms"] for e in of]),
            "frame": stats([e["frame_latency_ms"] for e in of]),
            "transport": stats([e["transport_ms"] for e in of]),
            "panel": stats([e["panel_ms"] for e in of]),
            "queue": queued(of),
        }
    meets = overall["median"] is not None and overall["p95"] < TARGET_MS

    def f(v):
        return "—" if v is None else f"{v:.1f}"

    rows = [
        [
            "all step events",
            overall["n"],
            f(overall["median"]),
            f(overall["p95"]),
            f(overall["min"]),
            f(overall["max"]),
            f(painted["median"]),
            f(painted["p95"]),
        ]
    ]
    split = [
        [
            "all step events",
            f(transport["median"]),
            f(transport["p95"]),
            f(queue["median"]),
            f(queue["p95"]),
            f(handling["median"]),
            f(handling["p95"]),
        ]
    ]
    for kind, label in (
        ("started", "`started` (the run's first step)"),
        ("reply", "`reply`"),
        ("attempt", "`attempt`"),
    ):
        d, fr = kinds[kind]["dom"], kinds[kind]["frame"]
        rows.append(
            [
                label,
                d["n"],
                f(d["median"]),
                f(d["p95"]),
                f(d["min"]),
                f(d["max"]),
                f(fr["median"]),
                f(fr["p95"]),
            ]
        )
        tr, pa, qu = kinds[kind]["transport"], kinds[kind]["panel"], kinds[kind]["queue"]
        split.append(
            [
                label,
                f(tr["median"]),
                f(tr["p95"]),
                f(qu["median"]),
                f(qu["p95"]),
                f(pa["median"]),
                f(pa["p95"]),
            ]
        )
    split_table = "\n".join("| " + " | ".join(str(x) for x in r) + " |" for r in split)
    md = (
        f"""# ui_events: kernel step event → step shown in the JupyterLab panel

A real JupyterLab (Galata, Debian's Chromium {raw.get("browser") or "?"}, headless) serves the
sqlnb extension; the notebook's kernel loads sqlnb and connects to a DuckDB file. A cell wraps
ipykernel's comm `publish_msg` to note the kernel's `time.time()` just before each run event
goes out on the panel's comm; in the page a MutationObserver notes
`performance.timeOrigin + performance.now()` when each `.sqlnb-step` of a turn first appears in
the DOM, and again at the next animation frame (about when it is painted). A `message`
listener on the kernel's WebSocket (added before JupyterLab's) notes when each event's
message reaches the page, which splits the time into transport (the kernel's IOPub thread,
ZeroMQ, the Jupyter server, the WebSocket) and the panel's own handling; a wrapper of the
IOPub thread's send notes when each event leaves the kernel, so the transport's share spent
waiting inside the kernel (the event published on the run's thread, sent by the IOPub thread)
is given apart. Both are this
machine's wall clock (browser `Date.now()` minus its timeOrigin clock: {raw.get("clock_skew_ms", 0):.1f} ms).

{raw["questions"]} questions are asked one after another in the panel; a scripted model answers
each call after {raw["model_delay_s"]} s, so a question gives four step events (`started`, a
`reply` with SQL, its `attempt`, the `reply` FINAL), spaced as a model would space them. The
n-th event of the k-th run is matched with the n-th step of the k-th turn (the spec checks the
kinds agree).

Target: a step shows within {TARGET_MS:.0f} ms of the kernel sending it (median and p95).

## Result

| events | n | median ms | p95 ms | min ms | max ms | painted: median ms | painted: p95 ms |
|---|---|---|---|---|---|---|---|
"""
        + "\n".join("| " + " | ".join(str(x) for x in r) + " |" for r in rows)
        + f"""

Where the time goes (ms):

| events | transport: median | transport: p95 | in kernel: median | in kernel: p95 | panel: median | panel: p95 |
|---|---|---|---|---|---|---|
{split_table}

- Kernel send → step in the DOM over {overall["n"]} events: median **{f(overall["median"])} ms**,
  p95 **{f(overall["p95"])} ms** — {"meets" if meets else "misses"} the target (< {TARGET_MS:.0f} ms)
- Until the next animation frame: median {f(painted["median"])} ms, p95 {f(painted["p95"])} ms

## Machine

{c.machine_markdown(info, load_after=load_after)}
- Browser: Chromium {raw.get("browser") or "?"} (headless, `/usr/bin/chromium`)
"""
    )
    data = {
        "benchmark": "ui_events",
        "target_ms": TARGET_MS,
        "meets_target": meets,
        "summary": {
            "dom": overall,
            "frame": painted,
            "transport": transport,
            "panel": handling,
            "kernel_queue": queue,
            "by_type": kinds,
        },
        "questions": raw["questions"],
        "model_delay_s": raw["model_delay_s"],
        "browser": raw.get("browser"),
        "clock_skew_ms": raw.get("clock_skew_ms"),
        "machine": info,
        "load_average_after": load_after,
        "events": events,
    }
    return md, data


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    info = c.machine_info()
    info["packages"] = c.package_versions(
        ["sqlnb", "jupyterlab", "jupyter-server", "ipykernel", "comm", "duckdb"]
    )
    with tempfile.TemporaryDirectory(prefix="sqlnb-ui-events-") as tmp:
        out = Path(tmp) / "raw.json"
        run_browser(args, out)
        raw = json.loads(out.read_text())
    if len(raw["events"]) < MIN_EVENTS:
        sys.exit(
            f"ui_events: only {len(raw['events'])} events measured; use --questions "
            f"{-(-MIN_EVENTS // 4)} or more"
        )
    md, data = report(raw, info, c.load_average())
    md_path, js_path = c.write_results("ui_events", args.results_dir, md, data)
    s = data["summary"]["dom"]
    print(
        f"ui_events: {s['n']} events, median {s['median']:.1f} ms, p95 {s['p95']:.1f} ms "
        f"(target < {TARGET_MS:.0f} ms) → {md_path}, {js_path}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
