"""The panel's comm against a REAL kernel: what JupyterLab's panel does, done by a
jupyter_client client (comm_open / comm_msg on the shell channel, everything back on
IOPub)."""

from __future__ import annotations

import json
import queue
import time
import uuid

import pytest
from jupyter_client.manager import start_new_kernel

from tests.doubles import script


class Client:
    """A kernel client that keeps every IOPub message it has read."""

    def __init__(self, kc):
        self.kc = kc
        self.iopub: list[dict] = []

    def read_until(self, predicate, timeout: float = 60) -> dict:
        """Read IOPub until a message matches ``predicate`` (also among those already read)."""
        for msg in self.iopub:
            if predicate(msg):
                return msg
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(
                    "no such IOPub message; read: "
                    + json.dumps([(m["msg_type"], m["content"]) for m in self.iopub[-20:]], default=str)[
                        :4000
                    ]
                )
            try:
                msg = self.kc.get_iopub_msg(timeout=min(left, 1))
            except queue.Empty:
                continue
            self.iopub.append(msg)
            if predicate(msg):
                return msg

    def send_shell(self, msg_type: str, content: dict, metadata: dict | None = None) -> str:
        msg = self.kc.session.msg(msg_type, content, metadata=metadata or {})
        self.kc.shell_channel.send(msg)
        return msg["header"]["msg_id"]

    def execute(
        self, code: str, metadata: dict | None = None, timeout: float = 60
    ) -> tuple[dict, dict | None]:
        """Run ``code`` (with ``metadata`` on the request, as JupyterLab sends cellId); return
        the execute_reply's content and the error output, if any."""
        msg_id = self.send_shell(
            "execute_request",
            {
                "code": code,
                "silent": False,
                "store_history": True,
                "user_expressions": {},
                "allow_stdin": False,
                "stop_on_error": True,
            },
            metadata,
        )
        self.read_until(
            lambda m: (
                m["parent_header"].get("msg_id") == msg_id
                and m["msg_type"] == "status"
                and m["content"]["execution_state"] == "idle"
            ),
            timeout,
        )
        errors = [
            m["content"]
            for m in self.iopub
            if m["parent_header"].get("msg_id") == msg_id and m["msg_type"] == "error"
        ]
        while True:
            reply = self.kc.get_shell_msg(timeout=timeout)
            if reply["parent_header"].get("msg_id") == msg_id:
                return reply["content"], (errors[0] if errors else None)

    # the comm, as the panel uses it
    def open_comm(self, target: str = "sqlnb") -> str:
        comm_id = uuid.uuid4().hex
        self.send_shell("comm_open", {"comm_id": comm_id, "target_name": target, "data": {}})
        return comm_id

    def comm_send(self, comm_id: str, data: dict) -> None:
        self.send_shell("comm_msg", {"comm_id": comm_id, "data": data})

    def comm_messages(self, comm_id: str) -> list[dict]:
        return [
            m["content"]["data"]
            for m in self.iopub
            if m["msg_type"] == "comm_msg" and m["content"].get("comm_id") == comm_id
        ]

    def request(self, comm_id: str, kind: str, timeout: float = 60, **fields) -> dict:
        rid = uuid.uuid4().hex
        self.comm_send(comm_id, {"v": 1, "type": kind, "id": rid, **fields})
        msg = self.read_until(
            lambda m: (
                m["msg_type"] == "comm_msg"
                and m["content"].get("comm_id") == comm_id
                and m["content"]["data"].get("id") == rid
            ),
            timeout,
        )
        return msg["content"]["data"]


@pytest.fixture(scope="module")
def client():
    km, kc = start_new_kernel(kernel_name="python3")
    try:
        yield Client(kc)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_panel_through_a_real_kernel(client, tmp_path):
    # before %load_ext sqlnb there is no target: the kernel closes the comm at once
    early = client.open_comm()
    closed = client.read_until(
        lambda m: m["msg_type"] == "comm_close" and m["content"].get("comm_id") == early
    )
    assert closed["content"]["comm_id"] == early

    reply, error = client.execute(
        f"%load_ext sqlnb\n%sqlnb connect duckdb:///{tmp_path / 'k.duckdb'} --name k\n"
        "%sql CREATE TABLE t AS SELECT 1 AS a UNION ALL SELECT 2"
    )
    assert reply["status"] == "ok", error

    comm = client.open_comm()
    hello = client.request(
        comm, "hello", protocol=1, client={"name": "test", "version": "0"}, notebook="k.ipynb"
    )
    assert hello["ok"] is True and hello["v"] == 1, hello
    assert hello["data"]["active"] == "k" and hello["data"]["connections"][0]["engine"] == "DuckDB"
    # the comm stays open (no comm_close for it)
    assert not any(
        m["msg_type"] == "comm_close" and m["content"].get("comm_id") == comm for m in client.iopub
    )

    schema = client.request(comm, "schema")
    assert schema["ok"] and [t["name"] for t in schema["data"]["tables"]] == ["t"]

    model = script(tmp_path, "```sql\nSELECT a FROM t ORDER BY a\n```", "FINAL")
    asked = client.request(comm, "ask", question="Which a?", model=model)
    assert asked["ok"], asked
    run = asked["data"]["run"]
    client.read_until(
        lambda m: (
            m["msg_type"] == "comm_msg"
            and m["content"]["data"].get("run") == run
            and m["content"]["data"]["event"]["type"] == "done"
        )
    )
    everything = [
        d["event"] for d in client.comm_messages(comm) if d.get("type") == "event" and d["run"] == run
    ]
    events = [e for e in everything if e["type"] not in ("phase", "text")]
    assert [e["type"] for e in events] == ["started", "reply", "attempt", "reply", "done"]
    # through a real kernel's IOPub, the model's text streams in before the step it makes
    kinds = [e["type"] for e in everything]
    assert kinds.index("text") < kinds.index("reply")
    first = "".join(e["text"] for e in everything if e["type"] == "text" and e["call"] == 1)
    assert first == "```sql\nSELECT a FROM t ORDER BY a\n```"
    assert events[-1]["status"] == "success" and events[-1]["rows"] == [[1], [2]]
    assert events[-1]["cell"].startswith("%%sql --conn k\n")

    # %%ask in a cell of the notebook holding the panel: the panel inserts the cell below
    cell_model = script(tmp_path, "```sql\nSELECT count(*) AS n FROM t\n```", "FINAL")
    before = len(client.comm_messages(comm))
    reply, error = client.execute(
        f"%%ask --model {cell_model}\nHow many rows?", metadata={"cellId": "cell-42"}
    )
    assert reply["status"] == "ok", error
    assert not [p for p in reply.get("payload", []) if p.get("source") == "set_next_input"]
    inserts = [d for d in client.comm_messages(comm)[before:] if d.get("type") == "insert_cell"]
    assert len(inserts) == 1, client.comm_messages(comm)[before:]
    assert inserts[0]["cell_id"] == "cell-42" and inserts[0]["v"] == 1
    assert inserts[0]["source"].startswith("%%sql --conn k\n-- sqlnb ask: How many rows?")
    assert inserts[0]["source"].endswith("\nSELECT\n  COUNT(*) AS n\nFROM t\n")  # laid out

    # a second panel takes over; the first one is told and closed
    newer = client.open_comm()
    assert client.request(newer, "hello", protocol=1, client={}, notebook="k.ipynb")["ok"]
    client.read_until(lambda m: m["msg_type"] == "comm_close" and m["content"].get("comm_id") == comm)
    assert {"v": 1, "type": "superseded"} in client.comm_messages(comm)

    # the panel closes: %%ask falls back to set_next_input
    client.send_shell("comm_close", {"comm_id": newer, "data": {}})
    fallback_model = script(tmp_path, "```sql\nSELECT max(a) AS m FROM t\n```", "FINAL")
    before_new = len(client.comm_messages(newer))
    reply, error = client.execute(
        f"%%ask --model {fallback_model}\nLargest a?", metadata={"cellId": "cell-43"}
    )
    assert reply["status"] == "ok", error
    payload = [p for p in reply.get("payload", []) if p.get("source") == "set_next_input"]
    assert len(payload) == 1 and payload[0]["text"].endswith("\nSELECT\n  MAX(a) AS m\nFROM t\n")
    assert not [d for d in client.comm_messages(newer)[before_new:] if d.get("type") == "insert_cell"]


def test_stop_through_a_real_kernel_leaves_the_shell_free(client, tmp_path):
    reply, error = client.execute(
        f"%load_ext sqlnb\n%sqlnb connect duckdb:///{tmp_path / 's.duckdb'} --name s"
    )
    assert reply["status"] == "ok", error
    comm = client.open_comm()
    assert client.request(comm, "hello", protocol=1, client={}, notebook="s.ipynb")["ok"]
    run = client.request(comm, "ask", question="Slow?", model=script(tmp_path, "FINAL", delay=120))["data"][
        "run"
    ]
    client.read_until(lambda m: m["msg_type"] == "comm_msg" and m["content"]["data"].get("run") == run)
    # the agent waits on its model in its own thread: cells run meanwhile
    reply, error = client.execute("%%sql -o df\nSELECT 40 + 2 AS answer")
    assert reply["status"] == "ok", error
    reply, error = client.execute("assert int(df.answer[0]) == 42")
    assert reply["status"] == "ok", error
    busy = client.request(comm, "ask", question="Another?", model=script(tmp_path, "FINAL"))
    assert busy["ok"] is False and busy["error"]["kind"] == "busy"
    stopped_at = time.monotonic()
    assert client.request(comm, "stop", run=run)["data"] == {"stopping": True}
    done = client.read_until(
        lambda m: (
            m["msg_type"] == "comm_msg"
            and m["content"]["data"].get("run") == run
            and m["content"]["data"]["event"]["type"] == "done"
        )
    )
    took = time.monotonic() - stopped_at
    assert done["content"]["data"]["event"]["status"] == "stopped"
    assert took < 2.5, f"stop took {took:.2f} s"  # the documented 2 s, with a margin


def test_bridge_benchmark_at_tiny_size(tmp_path):
    """benchmarks/run.py bridge runs end to end and writes its report (no timing asserted)."""
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parent.parent
    results = tmp_path / "results"
    proc = subprocess.run(
        [
            sys.executable,
            str(repo / "benchmarks" / "run.py"),
            "bridge",
            "--cell-runs",
            "5",
            "--results-dir",
            str(results),
            "--data-dir",
            str(tmp_path / "data"),
        ],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads((results / "bridge.json").read_text())
    r = data["result"]
    assert r["idle_s"]["n"] == 5 and r["asking_s"]["n"] == 5 and len(r["asking_runs"]) == 5
    assert r["stop_s"]["n"] == 10 and all(v > 0 for v in r["idle_runs"] + r["asking_runs"])
    text = (results / "bridge.md").read_text()
    assert "asking / idle" in text and "Machine:" in text
