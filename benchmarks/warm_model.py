"""The offline model kept warm by the Jupyter server (sqlnb.server) against one per kernel.

    .venv/bin/python benchmarks/warm_model.py [--model qwen2.5-coder-1.5b] [--runs 3]
        [--out warm_model]

A *kernel* here is a fresh Python process (what a kernel restart gives): it imports sqlnb,
resolves ``llamacpp:MODEL`` as a notebook does and asks the model one simple question (one
model call: a two-table schema and a question, greedy, at most 64 tokens), then the same
question again (the warm time).  Measured:

- **Restart to answer**: from starting the process to the first reply, ``--runs`` times,
  with the model in the kernel (``SQLNB_MODEL_SERVER=off``: loaded in each process) and
  through the shared model process (``SQLNB_MODEL_SERVER_FILE``: loaded once, before);
  and how long the shared process took to load.
- **Memory of two notebooks**: two kernels open at once, each having asked its question;
  the resident memory (RSS) and the proportional set size (PSS: pages shared between
  processes, such as the model file's, counted once in all) of the kernels, plus the model
  process when shared (psutil).

Writes ``results/NAME.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common as c

# a question of no benchmark set: one model call on a schema of two tables
SYSTEM = (
    "You write one SQLite query for the question, in a ```sql block.\n"
    "Tables:\nkennel(id INTEGER, town TEXT)\npet(id INTEGER, kennel_id INTEGER, species TEXT, age INTEGER)"
)
QUESTION = "How many pets of each species live in kennels of the town Brest?"

# the kernel: prints a line when it has the first answer, then one JSON line, then waits for a line on stdin to exit (so
# that two of them can be measured side by side)
KERNEL = """
import json, sys, time
t0 = time.perf_counter()
from sqlnb.agent.models import resolve_model
spec, system, question = sys.argv[1:4]
model = resolve_model(spec, max_tokens=64)
t1 = time.perf_counter()
messages = [("system", system), ("human", question)]
first = model.invoke(messages)
t2 = time.perf_counter()
print("answered", flush=True)
again = model.invoke(messages)
t3 = time.perf_counter()
print(json.dumps({
    "model_class": type(model).__name__,
    "import_resolve_s": t1 - t0,
    "first_answer_s": t2 - t1,
    "warm_answer_s": t3 - t2,
    "reply": first.content,
    "same_reply_again": again.content == first.content,
}), flush=True)
sys.stdin.readline()
"""


class Kernel:
    """One fresh process standing in for a (restarted) kernel."""

    def __init__(self, spec: str, env: dict[str, str]):
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-c", KERNEL, spec, SYSTEM, QUESTION],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=str(c.REPO),
        )

    def answer(self, timeout: float = 900) -> dict[str, Any]:
        first = self._line(timeout)
        answered = time.perf_counter() - self.started
        assert first == "answered", first
        data: dict[str, Any] = json.loads(self._line(timeout))
        data["restart_to_answer_s"] = answered
        return data

    def _line(self, timeout: float) -> str:
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        if not line:
            self.proc.wait(timeout)
            raise RuntimeError(f"the kernel process failed: {(self.proc.stderr.read() or '')[-2000:]}")
        return line.strip()

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("exit\n")  # type: ignore[union-attr]
                self.proc.stdin.flush()  # type: ignore[union-attr]
                self.proc.wait(30)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait(10)


def memory(pid: int) -> dict[str, int]:
    import psutil

    info = psutil.Process(pid).memory_full_info()
    return {"rss": int(info.rss), "pss": int(getattr(info, "pss", 0)), "uss": int(info.uss)}


def env_for(mode: str, runtime_file: Path | None) -> dict[str, str]:
    env = c.worker_env()
    env.pop("SQLNB_MODEL_SERVER_FILE", None)
    env.pop("SQLNB_MODEL_SERVER", None)
    if mode == "in-kernel":
        env["SQLNB_MODEL_SERVER"] = "off"
    else:
        env["SQLNB_MODEL_SERVER_FILE"] = str(runtime_file)
    return env


def restarts(spec: str, mode: str, runtime_file: Path | None, runs: int, log) -> list[dict[str, Any]]:
    out = []
    for i in range(runs):
        kernel = Kernel(spec, env_for(mode, runtime_file))
        try:
            data = kernel.answer()
        finally:
            kernel.close()
        log(
            f"{mode} run {i + 1}: restart to answer {data['restart_to_answer_s']:.1f} s "
            f"(warm answer {data['warm_answer_s']:.1f} s, {data['model_class']})"
        )
        out.append(data)
    return out


def two_notebooks(spec: str, mode: str, runtime_file: Path | None, server_pid: int | None, log):
    kernels = [Kernel(spec, env_for(mode, runtime_file))]
    try:
        kernels[0].answer()
        kernels.append(Kernel(spec, env_for(mode, runtime_file)))
        kernels[1].answer()
        parts = {f"kernel {i + 1}": memory(k.proc.pid) for i, k in enumerate(kernels)}
        if server_pid:
            parts["model process"] = memory(server_pid)
    finally:
        for k in kernels:
            k.close()
    total = {key: sum(p[key] for p in parts.values()) for key in ("rss", "pss", "uss")}
    log(f"{mode}: two kernels, RSS {c.fmt_bytes(total['rss'])}, PSS {c.fmt_bytes(total['pss'])}")
    return {"parts": parts, "total": total}


def run(args: argparse.Namespace, log=print) -> dict[str, Any]:
    from sqlnb.agent.download.catalog import model_path
    from sqlnb.server.process import ModelProcess

    path = Path(args.model) if Path(args.model).suffix == ".gguf" else model_path(args.model)
    if not path.is_file():
        raise SystemExit(f"no model file {path}: run `sqlnb model download {args.model}` first")
    spec = f"llamacpp:{path}"
    machine = c.machine_info()
    data: dict[str, Any] = {
        "model": path.name,
        "commit": (c.git("rev-parse", "--short", "HEAD") or "").strip(),
        "machine": machine,
        "question": QUESTION,
        "runs": args.runs,
    }
    # the model in the kernel, as before: every restart loads it again
    data["in_kernel"] = restarts(spec, "in-kernel", None, args.runs, log)
    data["in_kernel_memory"] = two_notebooks(spec, "in-kernel", None, None, log)
    # the shared process: loaded once, when the Jupyter server starts
    with tempfile.TemporaryDirectory(prefix="sqlnb-warm-") as tmp:
        runtime_file = Path(tmp) / "sqlnb-model-bench.json"
        proc = ModelProcess(path, runtime_file)
        started = time.perf_counter()
        proc.start()
        state = proc.wait(900)
        data["server_load_s"] = time.perf_counter() - started
        if state != "ready":
            raise SystemExit(f"the model process did not start: {proc.status()}")
        log(f"shared model process ready in {data['server_load_s']:.1f} s")
        try:
            data["shared"] = restarts(spec, "shared", runtime_file, args.runs, log)
            data["shared_memory"] = two_notebooks(spec, "shared", runtime_file, proc.pid, log)
        finally:
            proc.stop()
    for key in ("in_kernel", "shared"):
        data[f"{key}_median"] = {
            k: c.median([r[k] for r in data[key]])
            for k in ("restart_to_answer_s", "first_answer_s", "warm_answer_s", "import_resolve_s")
        }
    data["load_after"] = c.load_average()
    return data


def markdown(data: dict[str, Any]) -> str:
    ik, sh = data["in_kernel_median"], data["shared_median"]
    mem_ik, mem_sh = data["in_kernel_memory"], data["shared_memory"]

    def runs(key: str) -> str:
        return ", ".join(c.fmt_s(r["restart_to_answer_s"]) for r in data[key])

    lines = [
        "# The offline model kept warm by the Jupyter server",
        "",
        f"Model `{data['model']}`, code {data['commit']}.",
        "",
        c.machine_markdown(data["machine"], load_after=data.get("load_after")),
        "",
        "A kernel is a fresh Python process (what a kernel restart gives) that resolves "
        "`llamacpp:` as a notebook does and asks one simple question (one model call, greedy, "
        "at most 64 tokens), then the same question again (warm). Restart to answer: from "
        "starting the process to the first reply (Python's start, imports, the model's "
        "resolution and, in the kernel, its load included). In the kernel: the model "
        "loaded in each process (`SQLNB_MODEL_SERVER=off`, as before). Shared: the Jupyter "
        "server's model process (`benchmarks/warm_model.py`).",
        "",
        "## Restart to answer (seconds, median of " + str(data["runs"]) + ")",
        "",
        c.table(
            ["Model", "Restart to answer", "Import and resolve", "First call", "Warm answer", "Runs"],
            [
                [
                    "in the kernel",
                    c.fmt_s(ik["restart_to_answer_s"]),
                    c.fmt_s(ik["import_resolve_s"]),
                    c.fmt_s(ik["first_answer_s"]),
                    c.fmt_s(ik["warm_answer_s"]),
                    runs("in_kernel"),
                ],
                [
                    "shared process",
                    c.fmt_s(sh["restart_to_answer_s"]),
                    c.fmt_s(sh["import_resolve_s"]),
                    c.fmt_s(sh["first_answer_s"]),
                    c.fmt_s(sh["warm_answer_s"]),
                    runs("shared"),
                ],
            ],
        ),
        "",
        f"The shared process loaded the model once in {c.fmt_s(data['server_load_s'])} s, "
        "when the Jupyter server started (before any question).",
        "",
        "## Two notebooks open, each having asked one question",
        "",
        c.table(
            ["Model", "Processes", "RSS", "PSS (shared pages counted once)"],
            [
                [
                    "in the kernel",
                    ", ".join(mem_ik["parts"]),
                    c.fmt_bytes(mem_ik["total"]["rss"]),
                    c.fmt_bytes(mem_ik["total"]["pss"]),
                ],
                [
                    "shared process",
                    ", ".join(mem_sh["parts"]),
                    c.fmt_bytes(mem_sh["total"]["rss"]),
                    c.fmt_bytes(mem_sh["total"]["pss"]),
                ],
            ],
        ),
        "",
        "Per process (RSS / PSS): "
        + "; ".join(
            f"{mode} {name} {c.fmt_bytes(m['rss'])} / {c.fmt_bytes(m['pss'])}"
            for mode, mem in (("in the kernel:", mem_ik), ("shared:", mem_sh))
            for name, m in mem["parts"].items()
        ),
        "",
        f"The question: {data['question']!r}; the shared process's reply: "
        f"{data['shared'][0]['reply'][:200]!r}",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="benchmarks/warm_model.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="qwen2.5-coder-1.5b", help="a downloaded model's name or a .gguf path")
    p.add_argument("--runs", type=int, default=3, help="kernel restarts measured per mode (default 3)")
    p.add_argument("--results-dir", type=Path, default=c.DEFAULT_RESULTS)
    p.add_argument("--out", default="warm_model")
    args = p.parse_args(argv)
    data = run(args, log=lambda m: print(m, flush=True))
    md, js = c.write_results(args.out, args.results_dir, markdown(data), data)
    print(f"wrote {md} and {js}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
