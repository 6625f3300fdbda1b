"""first_text: with a real model, how soon the JupyterLab panel shows the first words of the
model's reply after a question is sent (target: within 2 s on a warm model).

    .venv/bin/python benchmarks/first_text.py [--model SPEC] [--pause S] [--out NAME] [--results-dir DIR]

Runs the Galata benchmark spec labextension/ui-tests/tests/bench/first_text.spec.ts
(Debian's Chromium against a real JupyterLab serving the extension built in
sqlnb/labextension) on the `sqlnb demo` database: six questions asked one after another in
the panel, the first of them loading the model (cold), each after ``--pause`` seconds from
the answer before it (a person reading the answer and typing the next question; 0: at once).
For each: Enter → the live line's first phase, → the first words of the reply in the panel,
→ the answer. Writes results/NAME.md and results/NAME.json (``--out``, default first_text).
See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common as c

SPEC = "tests/bench/first_text.spec.ts"
TARGET_S = 2.0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="benchmarks/first_text.py", description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--model", default="llamacpp:qwen2.5-coder-1.5b", help="the model spec (default: the offline model)"
    )
    p.add_argument(
        "--results-dir",
        type=Path,
        default=c.DEFAULT_RESULTS,
        help=f"where first_text.md and first_text.json go (default {c.DEFAULT_RESULTS})",
    )
    p.add_argument(
        "--pause",
        type=float,
        default=5.0,
        help="seconds from an answer to the next question: a person reading it and typing (default 5; 0: at once)",
    )
    p.add_argument("--out", default="first_text", help="the results' name (default first_text)")
    p.add_argument(
        "--restart",
        action="store_true",
        help="then restart the kernel, reconnect from the panel, run the model's cell again and ask "
        "the second question once more (the first question after a restart)",
    )
    p.add_argument(
        "--shared",
        action="store_true",
        help="the Jupyter server shares the model (SQLNB_MODEL set for it: one model process, "
        "kept over kernel restarts); default: the kernel loads it",
    )
    p.add_argument("--timeout", type=float, default=2400, help="seconds the browser run may take")
    return p.parse_args(argv)


def model_spec(spec: str) -> str:
    """``llamacpp:NAME`` of a downloaded catalog model as its file (the browser tests' server
    looks for models in a folder of its own)."""
    from sqlnb.agent.download.catalog import MODELS, model_path

    provider, _, name = spec.partition(":")
    if provider == "llamacpp" and name in MODELS:
        path = model_path(name)
        if not path.is_file():
            sys.exit(f"first_text: {name} is not downloaded: sqlnb model download {name}")
        return f"llamacpp:{path}"
    return spec


def run_browser(args: argparse.Namespace, db: Path, out: Path) -> None:
    c.run_bench_spec(
        "first_text",
        SPEC,
        {
            "SQLNB_BENCH_OUT": str(out),
            "SQLNB_BENCH_MODEL": model_spec(args.model),
            "SQLNB_BENCH_DB": str(db),
            "SQLNB_BENCH_PAUSE": str(args.pause),
            "SQLNB_BENCH_RESTART": "1" if args.restart else "0",
            # the server shares the model when it is told which (sqlnb.server); kernels it
            # starts then use that process
            **({"SQLNB_MODEL": model_spec(args.model)} if args.shared else {"SQLNB_MODEL_SERVER": "off"}),
        },
        args.timeout,
    )


def report(raw: dict, info: dict, load_after: list[float] | None) -> tuple[str, dict]:
    rows = raw["questions"]
    restarted = [r for r in rows if r.get("after_restart")]
    rows_before = [r for r in rows if not r.get("after_restart")]
    warm = [r for r in rows_before if r["warm"]]
    cold = [r for r in rows_before if not r["warm"]]
    first = [r["first_text_s"] for r in warm if r["first_text_s"] is not None]
    median = statistics.median(first) if first else None
    meets = median is not None and max(first) <= TARGET_S

    def f(v: float | None) -> str:
        return "—" if v is None else f"{v:.2f}"

    shared = bool(raw.get("shared"))
    where = (
        "the Jupyter server's model process had loaded the model when the server started"
        if shared
        else "the kernel loads the model first"
    )
    after = ""
    if restarted:
        r = restarted[0]
        same = next((w for w in warm if w["question"] == r["question"]), None)
        after = (
            f"- After a kernel restart (Kernel › Restart, the panel's Reconnect and the model's cell "
            f"run again: {f(raw.get('restart_s'))} s), the question asked again: first words after "
            f"**{f(r['first_text_s'])} s**, the answer after **{f(r['answer_s'])} s**"
            + (f", against {f(same['answer_s'])} s when it was asked warm before" if same else "")
            + f" ({'the model process kept over the restart' if shared else 'the new kernel loads the model again'}).\n"
        )
    waited = float(raw.get("pause_s") or 0)
    pause = (
        f"{waited:g} s after the answer before it (a person reading the answer and typing the next "
        "question; the first after the connection's cell ran)."
        if waited
        else "as soon as the answer before it is shown (no time to read it: the model may still be "
        "reading ahead when the question comes, and the question waits for it)."
    )

    def kind(r: dict) -> str:
        if r.get("after_restart"):
            return "after a kernel restart"
        return "warm" if r["warm"] else "cold (first question)"

    table = "\n".join(
        f"| {kind(r)} | {r['question']} | {f(r['phase_s'])} | "
        f"**{f(r['first_text_s'])}** | {f(r['answer_s'])} | {r['status']} |"
        for r in rows
    )
    md = f"""# first_text: question sent → the reply's first words in the JupyterLab panel

A real JupyterLab (Galata, Debian's Chromium {raw.get("browser") or "?"}, headless) serves the
sqlnb extension; the notebook's kernel connects to the `sqlnb demo` database (DuckDB) and asks
`{raw["model"]}`. Six questions are asked one after another in the panel, each {pause} For
each, the page notes (`performance.now()`) when Enter was pressed, when the live line first
said what the run does, when the first words of the model's reply showed under it, and when
the answer was there. The first question also loads the model (cold); the others find it
loaded (warm): the prompt states of the earlier questions are kept in memory
(`SQLNB_LLAMA_CACHE_MB`), and after each answer the model reads the start of the next
question's prompt (the schema, the conversation so far) in the background
(`AskMagic.read_ahead`), so a question's prompt is read from its question on once that is
done, or from where it parts from an earlier one.

Target: the first words within {TARGET_S:.0f} s of Enter on a warm model.

## Result

| model | question | live line (s) | first words (s) | answer (s) | status |
|---|---|---|---|---|---|
{table}

- Warm questions: first words after median **{f(median)} s** (max {f(max(first) if first else None)} s)
  — {"meets" if meets else "misses"} the target (≤ {TARGET_S:.0f} s on every warm question).
- Cold: {f(cold[0]["first_text_s"]) if cold else "—"} s to the first words ({where}).
{after}
## Machine

{c.machine_markdown(info, load_after=load_after)}
- Browser: Chromium {raw.get("browser") or "?"} (headless, `/usr/bin/chromium`)
"""
    data = {
        "benchmark": "first_text",
        "target_s": TARGET_S,
        "meets_target": meets,
        "model": raw["model"],
        "pause_s": waited,
        "shared": shared,
        "restart_s": raw.get("restart_s"),
        "after_restart_answer_s": restarted[0]["answer_s"] if restarted else None,
        "after_restart_first_text_s": restarted[0]["first_text_s"] if restarted else None,
        "warm_first_text_median_s": median,
        "warm_first_text_max_s": max(first) if first else None,
        "questions": rows,
        "browser": raw.get("browser"),
        "machine": info,
        "load_average_after": load_after,
    }
    return md, data


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    info = c.machine_info()
    info["packages"] = c.package_versions(["sqlnb", "jupyterlab", "ipykernel", "duckdb", "llama-cpp-python"])
    with tempfile.TemporaryDirectory(prefix="sqlnb-first-text-") as tmp:
        demo = Path(tmp) / "demo"
        subprocess.run(
            [sys.executable, "-m", "sqlnb.cli", "demo", "--no-lab", "--dir", str(demo)],
            check=True,
            timeout=600,
        )
        out = Path(tmp) / "raw.json"
        run_browser(args, demo / "sample.duckdb", out)
        raw = json.loads(out.read_text())
        raw["shared"] = args.shared
    md, data = report(raw, info, c.load_average())
    md_path, js_path = c.write_results(args.out, args.results_dir, md, data)
    print(
        f"first_text: warm median {data['warm_first_text_median_s']} s, max {data['warm_first_text_max_s']} s "
        f"(target ≤ {TARGET_S:.0f} s) → {md_path}, {js_path}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
