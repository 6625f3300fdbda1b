"""bridge: does a question asked from the JupyterLab panel slow the notebook's cells down?

A real kernel (``jupyter_client.start_new_kernel``) loads sqlnb and opens a DuckDB file
with a 200,000-row table; a client-side comm speaks the panel's protocol to it
(docs/protocol.md).  The same ``%%sql`` cell (an aggregate over the table, into a
DataFrame) is timed from the client — execute request sent to execute reply received, what
a user waits — in two conditions, in alternating blocks so that drift of the machine's
load hits both alike:

- **idle**: no question under way;
- **asking**: a question sent through the comm is being answered: its agent thread waits
  on a slow scripted model (``{"delay": 600}``), as it does for most of a real question's
  time.  The block starts 0.5 s after the run's ``started`` event (once the schema context
  is built); after it the question is stopped (and its ``done`` awaited).  An idle block
  starts after the same 0.5 s pause.

Reports the median and p95 per condition and asking/idle; target: asking no slower than
1.2× idle (the agent runs in its own thread and waits without holding the GIL or the
connection).
"""

from __future__ import annotations

import json
import queue
import statistics
import time
import uuid
from pathlib import Path
from typing import Any

import common as c

ROWS = 200_000
CELL = (
    "%%sql -o df\nSELECT category, count(*) AS n, sum(amount) AS total, avg(amount) AS mean\n"
    "FROM sales GROUP BY category ORDER BY category"
)
TARGET_RATIO = 1.2
MODEL_DELAY = 600.0
BLOCKS = 10  # alternating idle / asking blocks
SETTLE = 0.5  # s after `started` before the asking block's first cell (and before an idle block)


class _Kernel:
    """A kernel and a client that reads IOPub into a list."""

    def __init__(self):
        from jupyter_client.manager import start_new_kernel

        self.km, self.kc = start_new_kernel(kernel_name="python3")
        self.iopub: list[dict] = []

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)

    def _read_until(self, predicate, timeout: float = 120) -> dict:
        for msg in self.iopub:
            if predicate(msg):
                return msg
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                msg = self.kc.get_iopub_msg(timeout=1)
            except queue.Empty:
                continue
            self.iopub.append(msg)
            if predicate(msg):
                return msg
        raise RuntimeError("the kernel did not answer in time")

    def send_shell(self, msg_type: str, content: dict) -> str:
        msg = self.kc.session.msg(msg_type, content)
        self.kc.shell_channel.send(msg)
        return msg["header"]["msg_id"]

    def execute(self, code: str, timeout: float = 120) -> float:
        """Run ``code``; the seconds from request to reply.  Raises on an error."""
        start = time.perf_counter()
        msg_id = self.send_shell(
            "execute_request",
            {
                "code": code,
                "silent": False,
                "store_history": False,
                "user_expressions": {},
                "allow_stdin": False,
                "stop_on_error": True,
            },
        )
        while True:
            reply = self.kc.get_shell_msg(timeout=timeout)
            if reply["parent_header"].get("msg_id") == msg_id:
                break
        took = time.perf_counter() - start
        if reply["content"]["status"] != "ok":
            raise RuntimeError(
                f"cell failed: {reply['content'].get('ename')}: {reply['content'].get('evalue')}"
            )
        # keep IOPub drained (outputs of the cell) so it never backs up
        self._read_until(
            lambda m: (
                m["parent_header"].get("msg_id") == msg_id
                and m["msg_type"] == "status"
                and m["content"]["execution_state"] == "idle"
            )
        )
        self.iopub = [m for m in self.iopub if m["msg_type"] == "comm_msg"]
        return took

    def open_comm(self) -> str:
        comm_id = uuid.uuid4().hex
        self.send_shell("comm_open", {"comm_id": comm_id, "target_name": "sqlnb", "data": {}})
        return comm_id

    def request(self, comm_id: str, kind: str, **fields) -> dict:
        rid = uuid.uuid4().hex
        self.send_shell("comm_msg", {"comm_id": comm_id, "data": {"v": 1, "type": kind, "id": rid, **fields}})
        msg = self._read_until(
            lambda m: m["msg_type"] == "comm_msg" and m["content"]["data"].get("id") == rid
        )
        data = msg["content"]["data"]
        if not data.get("ok"):
            raise RuntimeError(f"{kind} failed: {data.get('error')}")
        return data["data"]

    def wait_event(self, run: str, kind: str) -> dict:
        msg = self._read_until(
            lambda m: (
                m["msg_type"] == "comm_msg"
                and m["content"]["data"].get("run") == run
                and m["content"]["data"]["event"]["type"] == kind
            )
        )
        return msg["content"]["data"]["event"]


def _stats(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered)) - 1))]
    return {
        "median": statistics.median(ordered),
        "p95": p95,
        "min": ordered[0],
        "max": ordered[-1],
        "n": len(ordered),
    }


def measure(db: Path, script: Path, runs: int, log=print) -> dict[str, Any]:
    k = _Kernel()
    try:
        k.execute(f"%load_ext sqlnb\n%sqlnb connect duckdb:///{db} --name bench")
        k.execute(
            f"%sql CREATE OR REPLACE TABLE sales AS SELECT i AS id, 'cat_' || (i % 50) AS category, "
            f"(i % 997) * 1.25 AS amount FROM range({ROWS}) t(i)"
        )
        for _ in range(3):  # warm-up: imports, first display
            k.execute(CELL)
        comm = k.open_comm()
        k.request(
            comm,
            "hello",
            protocol=1,
            client={"name": "sqlnb-benchmark", "version": "1"},
            notebook="bench.ipynb",
        )
        idle: list[float] = []
        asking: list[float] = []
        stops: list[float] = []
        for block in range(BLOCKS):
            per_block = runs // BLOCKS + (1 if block < runs % BLOCKS else 0)
            time.sleep(SETTLE)  # the same pause as before an asking block
            for _ in range(per_block):
                idle.append(k.execute(CELL))
            run = k.request(
                comm, "ask", question="How much did each category sell?", model=f"scripted:{script}"
            )["run"]
            k.wait_event(run, "started")
            time.sleep(SETTLE)  # past the schema context: the agent now waits on its model
            for _ in range(per_block):
                asking.append(k.execute(CELL))
            stopped_at = time.perf_counter()
            k.request(comm, "stop", run=run)
            done = k.wait_event(run, "done")
            stops.append(time.perf_counter() - stopped_at)
            if done["status"] != "stopped":
                raise RuntimeError(f"the question ended with {done['status']}, not stopped: {done}")
            log(f"  block {block + 1}/{BLOCKS}: idle {len(idle)}, asking {len(asking)}")
        out = {
            "idle_s": _stats(idle),
            "asking_s": _stats(asking),
            "idle_runs": idle,
            "asking_runs": asking,
            "stop_s": _stats(stops),
        }
        out["ratio_median"] = out["asking_s"]["median"] / out["idle_s"]["median"]
        out["ratio_p95"] = out["asking_s"]["p95"] / out["idle_s"]["p95"]
        out["meets_target"] = out["ratio_median"] <= TARGET_RATIO
        return out
    finally:
        k.close()


def markdown(data: dict[str, Any]) -> str:
    r = data["result"]
    ms = lambda v: f"{v * 1000:.1f}"  # noqa: E731
    rows = [
        [
            label,
            str(r[key]["n"]),
            ms(r[key]["median"]),
            ms(r[key]["p95"]),
            ms(r[key]["min"]),
            ms(r[key]["max"]),
        ]
        for label, key in (("idle", "idle_s"), ("asking (agent waits on a slow model)", "asking_s"))
    ]
    verdict = "meets" if r["meets_target"] else "MISSES"
    return "\n".join(
        [
            "# bridge: a `%%sql` cell while the panel's question is being answered",
            "",
            __doc__.split("\n\n", 1)[1].strip(),
            "",
            "## Result",
            "",
            f"Cell: `{CELL.splitlines()[1]} ...` over {ROWS:,} rows of DuckDB (a file), into a DataFrame.",
            "",
            c.table(["condition", "cells", "median ms", "p95 ms", "min ms", "max ms"], rows),
            "",
            f"- asking / idle: median **{r['ratio_median']:.2f}×**, p95 {r['ratio_p95']:.2f}× — "
            f"{verdict} the target (median ≤ {TARGET_RATIO}×)",
            f"- stop → `done` (status stopped) through the comm: median {ms(r['stop_s']['median'])} ms, "
            f"max {ms(r['stop_s']['max'])} ms over {r['stop_s']['n']} questions",
            "",
            "## Machine",
            "",
            c.machine_markdown(data["machine"], load_after=data.get("load_after")),
            "",
        ]
    )


def run(args, log=print) -> dict[str, Any]:
    """The ``bridge`` benchmark of ``benchmarks/run.py``."""
    info = c.machine_info()
    runs = getattr(args, "cell_runs", 100)
    data_dir = Path(args.data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    db = (data_dir / "bridge.duckdb").resolve()
    db.unlink(missing_ok=True)
    script = (data_dir / "bridge-slow-model.json").resolve()
    script.write_text(json.dumps({"replies": ["FINAL"], "delay": MODEL_DELAY}))
    log(f"bridge: {runs} cells per condition, real kernel, DuckDB {db}")
    result = measure(db, script, runs, log=log)
    data = {
        "benchmark": "bridge",
        "machine": info,
        "rows": ROWS,
        "cell": CELL,
        "model_delay_s": MODEL_DELAY,
        "target_ratio": TARGET_RATIO,
        "result": result,
        "load_after": c.load_average(),
    }
    c.write_results("bridge", args.results_dir, markdown(data), data)
    log(
        f"  cell median: idle {result['idle_s']['median'] * 1000:.1f} ms, asking "
        f"{result['asking_s']['median'] * 1000:.1f} ms ({result['ratio_median']:.2f}×, target ≤ {TARGET_RATIO}×); "
        f"p95 {result['idle_s']['p95'] * 1000:.1f} / {result['asking_s']['p95'] * 1000:.1f} ms"
    )
    return data
