"""prompt_states: the offline model's kept prompt states (SQLNB_LLAMA_CACHE_MB), on and off.

    .venv/bin/python benchmarks/prompt_states.py [--results-dir DIR]

Asks three questions one after another on the `sqlnb demo` database with the offline model
in this process, as the panel asks them (the agent's live events, explanations on), once with
the prompt states kept and once with none (each in a fresh process, so each starts cold).
For each question: the seconds to the first words of the model's reply and to the answer.
Writes results/prompt_states.md and results/prompt_states.json. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common as c

QUESTIONS = [
    "How many customers do we have?",
    "How many products cost more than 100?",
    "What is the total amount of all orders?",
]

# one run: a fresh process (a cold model), the questions in one conversation
RUN = r"""
import json, sys, time
from sqlnb.adapters import connect
from sqlnb.agent.runner import Agent

db, questions = sys.argv[1], json.loads(sys.argv[2])
adapter = connect(f"duckdb:///{db}")
agent = Agent(memory=False)
out = []
for q in questions:
    start = time.perf_counter()
    first = []

    def on(event):
        if event["type"] == "text" and event["text"] and not first:
            first.append(time.perf_counter() - start)

    answer = agent.ask(q, adapter, model="llamacpp:qwen2.5-coder-1.5b", on_event=on, live=True)
    out.append({"question": q, "first_text_s": first[0] if first else None,
                "answer_s": time.perf_counter() - start, "status": answer.status,
                "input_tokens": answer.usage.get("input_tokens")})
print(json.dumps(out))
"""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="benchmarks/prompt_states.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--results-dir", type=Path, default=c.DEFAULT_RESULTS)
    return p.parse_args(argv)


def run(db: Path, cache_mb: int) -> list[dict]:
    env = {**os.environ, "SQLNB_LLAMA_CACHE_MB": str(cache_mb)}
    done = subprocess.run(
        [sys.executable, "-c", RUN, str(db), json.dumps(QUESTIONS)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=3600,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    info = c.machine_info()
    info["packages"] = c.package_versions(["sqlnb", "llama-cpp-python", "duckdb"])
    with tempfile.TemporaryDirectory(prefix="sqlnb-prompt-states-") as tmp:
        demo = Path(tmp) / "demo"
        subprocess.run(
            [sys.executable, "-m", "sqlnb.cli", "demo", "--no-lab", "--dir", str(demo)],
            check=True,
            timeout=600,
        )
        kept = run(demo / "sample.duckdb", 1024)
        none = run(demo / "sample.duckdb", 0)

    def f(v: float | None) -> str:
        return "—" if v is None else f"{v:.2f}"

    rows = "\n".join(
        f"| {i + 1}{' (cold)' if i == 0 else ''} | {k['question']} | **{f(k['first_text_s'])}** | "
        f"{f(n['first_text_s'])} | {f(k['answer_s'])} | {f(n['answer_s'])} |"
        for i, (k, n) in enumerate(zip(kept, none, strict=True))
    )
    warm_kept = [r["first_text_s"] for r in kept[1:] if r["first_text_s"] is not None]
    warm_none = [r["first_text_s"] for r in none[1:] if r["first_text_s"] is not None]
    md = f"""# prompt_states: the offline model's kept prompt states, on and off

Three questions asked one after another in one conversation on the `sqlnb demo` database
(DuckDB), with the offline model (Qwen2.5-Coder-1.5B, Q4_K_M, llama.cpp in the process) and the
agent as the panel runs it (live events, explanations on); once with the model's prompt states
kept in memory (`SQLNB_LLAMA_CACHE_MB=1024`, the default) and once with none (`0`), each run in
a fresh process. Seconds from asking to the first words of the model's reply, and to the answer.

| # | question | first words, kept (s) | first words, none (s) | answer, kept (s) | answer, none (s) |
|---|---|---|---|---|---|
{rows}

- After the first question the first words come after {", ".join(f(v) for v in warm_kept)} s with the
  states kept, {", ".join(f(v) for v in warm_none)} s without: each question's prompt shares the system
  prompt and the schema with the one before, but the explanation written in between took the
  model elsewhere, so without a kept state the whole prompt is read again.
- The first question reads its whole prompt either way (the model's load included).

## Machine

{c.machine_markdown(info, load_after=c.load_average())}
"""
    data = {"benchmark": "prompt_states", "kept": kept, "none": none, "questions": QUESTIONS, "machine": info}
    md_path, js_path = c.write_results("prompt_states", args.results_dir, md, data)
    print(f"prompt_states → {md_path}, {js_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
