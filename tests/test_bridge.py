"""The panel's comm protocol (docs/protocol.md) driven in-process: a fake comm records what
the kernel sends, requests go through :class:`sqlnb.bridge.comm.Bridge` on a real
InteractiveShell with sqlnb loaded, against real engines and scripted models."""

from __future__ import annotations

import json
import os
import re
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from IPython.utils.capture import capture_output

import sqlnb
from sqlnb.agent.runner import Agent
from sqlnb.agent.stop import StopToken
from sqlnb.bridge.comm import Bridge
from sqlnb.bridge.runs import AskRun
from sqlnb.kernel import kernel_session
from tests.doubles import script, sql_block
from tests.engines import PG_HOST, PG_PORT
from tests.test_contract import LONG_QUERY

COUNT = "SELECT count(*) AS n FROM customers"
PAID = "SELECT id, amount FROM orders WHERE status = 'paid' ORDER BY id"
STOP_BOUND = 2.0 + 0.5  # the documented "stop ends the run within 2 s", with a margin
# a statement that runs for minutes unless cancelled
SLOW_SQL = {
    "duckdb": LONG_QUERY["duckdb"],
    "sqlite": LONG_QUERY["sqlite"],
    "postgresql": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
}


class FakeComm:
    """What the bridge needs of a comm: send, close, on_msg, on_close."""

    def __init__(self):
        self.sent: list[dict] = []
        self._closed = False
        self.msg_callback = None
        self.close_callback = None
        self.cond = threading.Condition()

    def send(self, data=None, metadata=None, buffers=None):
        json.dumps(data)  # what goes over the wire must be JSON
        with self.cond:
            self.sent.append(data)
            self.cond.notify_all()

    def close(self, data=None, metadata=None, buffers=None, deleting=False):
        self._closed = True

    def on_msg(self, callback):
        self.msg_callback = callback

    def on_close(self, callback):
        self.close_callback = callback

    # helpers -------------------------------------------------------------------------
    def request(self, kind: str, **fields) -> dict:
        """Send a request as the panel does; return its reply."""
        rid = f"r{len(self.sent)}-{time.monotonic_ns()}"
        self.msg_callback({"content": {"comm_id": "x", "data": {"v": 1, "type": kind, "id": rid, **fields}}})
        replies = [m for m in self.sent if m.get("type") == "reply" and m.get("id") == rid]
        assert len(replies) == 1, self.sent
        return replies[0]

    def events(self, run: str, live: bool = False) -> list[dict]:
        """The run's events; the live line's ``phase`` and ``text`` only with ``live``."""
        with self.cond:
            return [
                m["event"]
                for m in self.sent
                if m.get("type") == "event"
                and m.get("run") == run
                and (live or m["event"].get("type") not in ("phase", "text"))
            ]

    def wait_done(self, run: str, timeout: float = 60) -> dict:
        with self.cond:
            ok = self.cond.wait_for(lambda: any(e["type"] == "done" for e in self.events(run)), timeout)
        assert ok, f"no done event for {run}: {self.events(run)}"
        return self.events(run)[-1]

    def wait_event(self, run: str, kind: str, timeout: float = 60) -> dict:
        with self.cond:
            ok = self.cond.wait_for(lambda: any(e["type"] == kind for e in self.events(run)), timeout)
        assert ok, f"no {kind} event for {run}: {self.events(run)}"
        return next(e for e in self.events(run) if e["type"] == kind)


class FakeKernel:
    """The kernel's current parent header, as JupyterLab's execute request makes it."""

    def __init__(self):
        self.parent = {"header": {}, "metadata": {}}

    def get_parent(self, channel=None):
        return self.parent


@pytest.fixture
def shell(shell):
    """The shared shell (tests/conftest.py) with a bridge on a fake kernel: there is no
    kernel here."""
    kernel = FakeKernel()
    kernel_session(shell).bridge = Bridge(shell, kernel=kernel)
    yield shell
    bridge = kernel_session(shell).bridge
    for run in list(bridge.runs.values()):
        run.stop()
        run.wait(10)
    kernel_session(shell).bridge = None


@pytest.fixture
def bridge(shell) -> Bridge:
    return kernel_session(shell).bridge


@pytest.fixture
def panel(bridge) -> FakeComm:
    comm = FakeComm()
    bridge.open(comm, {})
    reply = comm.request("hello", client={"name": "test", "version": "0"}, protocol=1, notebook="t.ipynb")
    assert reply["ok"], reply
    return comm


def connect(shell, url: str, name: str = "db") -> None:
    with capture_output():
        res = shell.run_cell(f"%sqlnb connect '{url}' --name {name}")
    res.raise_error()


def ask(panel: FakeComm, question: str, **fields) -> str:
    reply = panel.request("ask", question=question, **fields)
    assert reply["ok"], reply
    return reply["data"]["run"]


# ---------------------------------------------------------------------------------------
# hello, versions, connections, use, schema
# ---------------------------------------------------------------------------------------


def test_hello_answers_versions_and_connections(shell, bridge, tmp_path):
    connect(shell, f"duckdb:///{tmp_path / 'a.duckdb'}", "a")
    comm = FakeComm()
    bridge.open(comm, {})
    reply = comm.request("hello", client={"name": "test", "version": "0"}, protocol=1, notebook="x.ipynb")
    assert reply["v"] == 1 and reply["ok"] is True
    data = reply["data"]
    assert data["protocol"] == 1 and data["sqlnb"] == sqlnb.__version__ and data["python"].count(".") == 2
    assert set(data["features"]) >= {"confidence", "remember"}
    # every feature docs/protocol.md lists is announced
    listed = re.findall(
        r"^- `(\w+)`:", (Path(__file__).parents[1] / "docs" / "protocol.md").read_text(), re.M
    )
    assert set(listed) <= set(data["features"]), listed
    assert data["active"] == "a"
    assert [c["name"] for c in data["connections"]] == ["a"]
    assert bridge.panel is comm


def test_protocol_version_mismatch(bridge):
    comm = FakeComm()
    bridge.open(comm, {})
    comm.msg_callback({"content": {"data": {"v": 2, "type": "hello", "id": "h1", "protocol": 2}}})
    (reply,) = comm.sent
    assert reply == {"v": 1, "type": "reply", "id": "h1", "ok": False, "error": reply["error"]}
    assert reply["error"]["kind"] == "protocol_mismatch" and "version 2" in reply["error"]["message"]
    assert reply["error"]["hint"]
    reply = comm.request("hello", protocol=3, client={}, notebook="")
    assert reply["error"]["kind"] == "protocol_mismatch"
    assert bridge.panel is None  # a mismatched hello does not open the panel


def test_unknown_request_and_missing_id_are_usage_errors(panel):
    reply = panel.request("frobnicate")
    assert reply["ok"] is False and reply["error"]["kind"] == "UsageError"
    panel.msg_callback({"content": {"data": {"v": 1, "type": "connections"}}})
    assert panel.sent[-1]["ok"] is False and panel.sent[-1]["error"]["kind"] == "UsageError"


def test_newer_hello_supersedes_the_older_panel(bridge, panel):
    newer = FakeComm()
    bridge.open(newer, {})
    assert newer.request("hello", protocol=1, client={}, notebook="")["ok"]
    assert panel.sent[-1] == {"v": 1, "type": "superseded"}
    assert panel._closed and not newer._closed
    assert bridge.panel is newer
    newer.close_callback({})  # the browser closed it
    assert bridge.panel is None


def test_connections_and_use_never_show_a_password(shell, bridge, tmp_path, workdir):
    from tests.engines import PostgresEnv

    pg = PostgresEnv(workdir)
    pg.create()
    try:
        secret = "S3cret-Pa55word"
        # the local server trusts 127.0.0.1, so the password is accepted and ignored
        connect(shell, f"postgresql://postgres:{secret}@{PG_HOST}:{PG_PORT}/{pg.db}", "pg")
        connect(shell, f"sqlite:///{tmp_path / 'b.sqlite'}", "lite")
        comm = FakeComm()
        bridge.open(comm, {})
        hello = comm.request("hello", protocol=1, client={}, notebook="")
        assert hello["data"]["active"] == "lite"
        listed = comm.request("connections")["data"]
        assert {c["name"]: c["engine"] for c in listed["connections"]} == {
            "pg": "PostgreSQL",
            "lite": "SQLite",
        }
        pg_row = next(c for c in listed["connections"] if c["name"] == "pg")
        assert pg.db in pg_row["url"] and pg_row["readonly"] is False and pg_row["active"] is False
        used = comm.request("use", name="pg")["data"]
        assert used["active"] == "pg" and kernel_session(shell).magics.manager.active == "pg"
        assert next(c for c in used["connections"] if c["name"] == "pg")["active"] is True
        bad = comm.request("use", name="nope")
        assert bad["ok"] is False and bad["error"]["kind"] == "UnknownConnectionError"
        assert "pg" in bad["error"]["hint"]
        schema = comm.request("schema")["data"]
        assert schema["connection"] == "pg"
        # an error from the server while the URL carries the password
        run = ask(comm, "anything?", model="scripted:/nonexistent/replies.json")
        done = comm.wait_done(run)
        assert done["status"] == "error" and done["error"]["kind"] == "ConfigurationError"
        assert secret not in json.dumps(comm.sent)
    finally:
        kernel_session(shell).magics.manager.close_all()
        pg.drop()


@pytest.mark.engines(["duckdb", "sqlite", "postgresql"])
def test_schema_lists_columns_with_keys(shell, panel, engine, seeded):
    connect(shell, seeded.url())
    reply = panel.request("schema", connection="db", refresh=True)
    assert reply["ok"], reply
    data = reply["data"]
    assert (
        data["connection"] == "db"
        and data["dialect"] == kernel_session(shell).magics.manager.get("db").dialect
    )
    tables = {t["name"]: t for t in data["tables"]}
    assert {"customers", "orders", "big_orders"} <= set(tables)
    assert tables["big_orders"]["kind"] == "view" and tables["customers"]["kind"] == "table"
    cols = {c["name"]: c for c in tables["orders"]["columns"]}
    assert cols["id"]["pk"] is True and cols["id"]["fk"] is None
    assert cols["customer_id"]["fk"] == "customers.id" and cols["customer_id"]["pk"] is False
    assert cols["customer_id"]["nullable"] is False and cols["amount"]["nullable"] is True
    assert "int" in cols["customer_id"]["type"].lower()
    if engine != "sqlite":
        assert tables["customers"]["comment"] == "People who buy things"
    # the same catalog %sqlnb schema shows
    assert len(data["tables"]) == len(kernel_session(shell).magics.manager.get("db").catalog().tables)


def test_schema_without_a_connection_is_an_error_for_people(panel):
    reply = panel.request("schema")
    assert reply["ok"] is False
    assert reply["error"]["kind"] == "NoActiveConnectionError" and "connect" in reply["error"]["hint"]
    assert "Traceback" not in json.dumps(reply)


# ---------------------------------------------------------------------------------------
# ask: streaming, clarification, errors
# ---------------------------------------------------------------------------------------


@pytest.mark.engines(["duckdb", "sqlite", "postgresql"])
def test_ask_streams_started_reply_attempt_done(shell, panel, engine, seeded, tmp_path):
    connect(shell, seeded.url())
    model = script(
        tmp_path,
        sql_block("SELECT id, amount, ordered_on FROM orders WHERE status = 'paid' ORDER BY id"),
        "FINAL",
    )
    run = ask(panel, "Which orders are paid?", model=model, rows=1)
    done = panel.wait_done(run)
    events = panel.events(run)
    assert [e["type"] for e in events] == ["started", "reply", "attempt", "reply", "done"]
    started = events[0]
    assert started["question"] == "Which orders are paid?" and started["connection"] == "db"
    assert started["model"].startswith("scripted:") and started["max_iterations"] == 5
    assert (
        events[1]["iteration"] == 1 and "status = 'paid'" in events[1]["sql"] and events[1]["final"] is False
    )
    attempt = events[2]
    assert attempt["n"] == 1 and attempt["ok"] is True and attempt["row_count"] == 2
    assert attempt["error_kind"] is None and attempt["candidates"] == 1
    assert events[3]["final"] is True
    assert done["status"] == "success" and done["stop_reason"] == "finalized"
    assert done["columns"] == ["id", "amount", "ordered_on"]
    amount = 12.5 if engine == "sqlite" else "12.50"  # SQLite keeps DECIMAL as REAL; decimals as text
    assert done["row_count"] == 2 and done["rows"] == [[10, amount, "2024-03-01"]]  # rows=1, JSON-safe
    assert done["cell"].startswith("%%sql --conn db\n-- sqlnb ask: Which orders are paid?")
    assert done["error"] is None and done["iterations"] == 2 and done["usage"]["calls"] == 2
    # every message of the run carries its id; the reply came before the first event
    ids = [m.get("run") for m in panel.sent if m["type"] == "event"]
    assert set(ids) == {run}
    reply_at = next(i for i, m in enumerate(panel.sent) if m.get("data", {}).get("run") == run)
    assert reply_at < next(i for i, m in enumerate(panel.sent) if m["type"] == "event")


def test_failed_query_then_fix_streams_both_attempts(shell, panel, tmp_path):
    connect(shell, f"duckdb:///{tmp_path / 'x.duckdb'}")
    kernel_session(shell).magics.manager.get("db").execute("CREATE TABLE t AS SELECT 1 AS a")
    model = script(tmp_path, sql_block("SELECT b FROM t"), sql_block("SELECT a FROM t"), "FINAL")
    run = ask(panel, "a?", model=model)
    done = panel.wait_done(run)
    attempts = [e for e in panel.events(run) if e["type"] == "attempt"]
    assert [a["ok"] for a in attempts] == [False, True]
    assert attempts[0]["error_kind"] == "column_not_found" and attempts[0]["error"]
    assert done["status"] == "success" and done["sql"] == "SELECT a FROM t"


def test_clarification_then_follow_up_continues_the_conversation(shell, panel, tmp_path):
    connect(shell, f"duckdb:///{tmp_path / 'c.duckdb'}")
    kernel_session(shell).magics.manager.get("db").execute("CREATE TABLE sales AS SELECT 2024 AS y, 5 AS n")
    model = script(
        tmp_path, "CLARIFY: Which year do you mean?", sql_block("SELECT n FROM sales WHERE y = 2024"), "FINAL"
    )
    run = ask(panel, "How many sales?", model=model)
    done = panel.wait_done(run)
    assert done["status"] == "needs_clarification" and done["stop_reason"] == "clarification"
    assert done["questions"] == ["Which year do you mean?"] and done["cell"] is None
    assert panel.events(run)[1]["clarify"] == ["Which year do you mean?"]
    run2 = ask(panel, "2024", model=model)
    done2 = panel.wait_done(run2)
    assert done2["status"] == "success" and done2["rows"] == [[5]]
    prompt = kernel_session(shell).ask.agent.client(model).model.prompts[1]
    text = "\n".join(content for _, content in prompt)
    assert "How many sales?" in text and "Which year do you mean?" in text


def test_run_errors_end_with_one_done_of_status_error(shell, panel, tmp_path):
    # no connection at all
    run = ask(panel, "anything?", model=script(tmp_path, "FINAL"))
    done = panel.wait_done(run)
    assert [e["type"] for e in panel.events(run)] == ["done"]
    assert done["status"] == "error" and done["error"]["kind"] == "NoActiveConnectionError"
    assert done["error"]["hint"] and done["cell"] is None
    # no model configured
    connect(shell, f"duckdb:///{tmp_path / 'e.duckdb'}")
    run = ask(panel, "anything?")
    done = panel.wait_done(run)
    assert done["status"] == "error" and done["error"]["kind"] == "ModelNotConfigured"
    assert "ANTHROPIC_API_KEY" in done["error"]["hint"]
    # the model fails within the turn (its script runs out)
    run = ask(panel, "anything?", model=script(tmp_path))
    done = panel.wait_done(run)
    assert done["status"] == "error" and done["stop_reason"] == "model_error"
    assert done["error"]["kind"] == "ModelError" and "no reply left" in done["error"]["message"]
    assert "Traceback" not in json.dumps(panel.sent)


def test_a_model_timeout_ends_the_run_with_an_error(shell, tmp_path):
    from sqlnb.agent.models import ModelClient, ScriptedChatModel

    connect(shell, f"duckdb:///{tmp_path / 't.duckdb'}")
    events: list[dict] = []
    client = ModelClient(ScriptedChatModel(replies=["FINAL"], delay=30), timeout=0.3)
    run = AskRun(
        agent=Agent(),
        manager=kernel_session(shell).magics.manager,
        question="slow?",
        model=client,
        on_event=events.append,
    )
    run.start()
    assert run.wait(30)
    done = events[-1]
    assert done["status"] == "error" and done["error"]["kind"] == "ModelError"
    assert "did not answer within 0.3 s" in done["error"]["message"]
    assert [e["type"] for e in events].count("done") == 1


def test_bad_ask_fields_are_usage_errors(shell, panel, tmp_path):
    for fields in (
        {"question": ""},
        {"question": "x", "max_iterations": 0},
        {"question": "x", "rows": -1},
        {"question": "x", "history": "nope"},
        {"question": 3},
    ):
        reply = panel.request("ask", **fields)
        assert reply["ok"] is False and reply["error"]["kind"] == "UsageError", fields
    assert not any(m["type"] == "event" for m in panel.sent)


# ---------------------------------------------------------------------------------------
# stop and busy
# ---------------------------------------------------------------------------------------


def test_stop_while_the_model_thinks(shell, panel, tmp_path):
    connect(shell, f"duckdb:///{tmp_path / 's.duckdb'}")
    kernel_session(shell).magics.manager.get("db").execute("CREATE TABLE t AS SELECT 7 AS a")
    slow = script(tmp_path, sql_block("SELECT a FROM t"), "FINAL", delay=60)
    run = ask(panel, "First question?", model=slow)
    panel.wait_event(run, "started")
    time.sleep(0.3)  # the model call is under way
    stopped_at = time.monotonic()
    assert panel.request("stop", run=run)["data"] == {"stopping": True}
    assert panel.request("stop", run=run)["ok"]  # twice is fine
    done = panel.wait_done(run, timeout=30)
    took = time.monotonic() - stopped_at
    assert done["status"] == "stopped" and done["stop_reason"] == "stopped", done
    assert took < STOP_BOUND, f"stop took {took:.2f} s"
    assert done["sql"] is None and done["cell"] is None
    assert [e["type"] for e in panel.events(run)].count("done") == 1
    assert panel.request("stop", run=run)["data"] == {"stopping": False}  # already over
    # the conversation stays usable and keeps the stopped question
    fast = script(tmp_path, sql_block("SELECT a FROM t"), "FINAL")
    run2 = ask(panel, "Second question?", model=fast)
    done2 = panel.wait_done(run2)
    assert done2["status"] == "success" and done2["rows"] == [[7]]
    history = kernel_session(shell).ask.agent.history("db")
    assert [(t["question"], t["status"]) for t in history] == [
        ("First question?", "stopped"),
        ("Second question?", "success"),
    ]
    prompt = "\n".join(c for _, c in kernel_session(shell).ask.agent.client(fast).model.prompts[0])
    assert "First question?" in prompt
    # the slow script's first reply was not used up by the abandoned call
    assert kernel_session(shell).ask.agent.client(slow).model.position == 0


@pytest.mark.engines(["duckdb", "sqlite", "postgresql"])
def test_stop_while_a_long_statement_runs(shell, panel, engine, seeded, tmp_path):
    connect(shell, seeded.url())
    model = script(tmp_path, sql_block(SLOW_SQL[engine]), "FINAL")
    run = ask(panel, "Count forever?", model=model)
    panel.wait_event(run, "reply")
    time.sleep(1.0)  # the statement reaches the engine
    stopped_at = time.monotonic()
    assert panel.request("stop", run=run)["data"] == {"stopping": True}
    done = panel.wait_done(run, timeout=60)
    took = time.monotonic() - stopped_at
    assert done["status"] == "stopped", done
    assert took < STOP_BOUND, f"stop took {took:.2f} s"
    attempt = next(e for e in panel.events(run) if e["type"] == "attempt")
    assert attempt["ok"] is False and attempt["error_kind"] == "cancelled"
    # the connection is fine for the notebook and for the next question
    with capture_output():
        res = shell.run_cell(f"%%sql -o n\n{COUNT}")
    res.raise_error()
    assert int(shell.user_ns["n"].iloc[0, 0]) == 3
    run2 = ask(panel, "How many customers?", model=script(tmp_path, sql_block(COUNT), "FINAL"))
    assert panel.wait_done(run2)["rows"] == [[3]]


def test_stop_token_cancels_only_the_agents_statement(tmp_path):
    """A stop arriving while the notebook's own statement holds the connection does not
    cancel that statement: the cancel is armed only while the agent's statement runs."""
    from sqlnb.adapters import connect as open_adapter
    from sqlnb.agent.runner import StoppableAdapter

    adapter = open_adapter(f"duckdb:///{tmp_path / 'o.duckdb'}")
    try:
        stop = StopToken()
        wrapped = StoppableAdapter(adapter, stop)
        result: dict = {}
        holding = threading.Event()

        def notebook_cell():
            with adapter._lock:  # the cell holds the connection from here on
                holding.set()
                result["cell"] = adapter.execute(
                    "SELECT count(*) FROM range(400000000) t(i) WHERE hash(i) % 3 = 0", timeout=120
                ).rows

        cell = threading.Thread(target=notebook_cell)
        cell.start()
        assert holding.wait(30)
        agent_result: dict = {}

        def agent_statement():
            try:
                agent_result["rows"] = wrapped.execute("SELECT 1")
            except Exception as exc:
                agent_result["error"] = exc

        agent = threading.Thread(target=agent_statement)
        agent.start()
        time.sleep(0.3)  # the agent's statement waits for the lock ...
        stop.stop()  # ... so the stop must not cancel the cell's, which runs on
        cell.join(60)
        agent.join(60)
        assert result["cell"][0][0] > 0
        assert type(agent_result["error"]).__name__ == "QueryCancelled"
        assert adapter.execute("SELECT 2").rows == [(2,)]
    finally:
        adapter.close()


def test_a_second_ask_while_one_runs_is_busy(shell, panel, tmp_path):
    connect(shell, f"duckdb:///{tmp_path / 'b.duckdb'}")
    run = ask(panel, "slow?", model=script(tmp_path, "FINAL", delay=60))
    reply = panel.request("ask", question="again?", model=script(tmp_path, "FINAL"))
    assert reply["ok"] is False and reply["error"]["kind"] == "busy"
    assert reply["error"]["message"] and reply["error"]["hint"]
    panel.request("stop", run=run)
    assert panel.wait_done(run, timeout=30)["status"] == "stopped"
    unknown = panel.request("stop", run="not-a-run")
    assert unknown["ok"] is False and unknown["error"]["kind"] == "UsageError"
    # after the run ended, a new question is welcome
    run2 = ask(panel, "now?", model=script(tmp_path, "CLARIFY: what?"))
    assert panel.wait_done(run2)["status"] == "needs_clarification"


def test_stop_token_callbacks():
    token = StopToken()
    calls: list[str] = []

    def a():
        calls.append("a")

    def boom():
        raise RuntimeError("a failing callback does not keep the others from running")

    token.add_callback(boom)
    token.add_callback(a)
    token.add_callback(lambda: calls.append("removed"))
    token.remove_callback(token._callbacks[-1])
    token.remove_callback(a)
    token.add_callback(a)
    assert not token.stopped and not token.wait(0.01)
    token.stop()
    token.stop()
    assert token.stopped and token.wait(0) and calls == ["a"]
    token.add_callback(lambda: calls.append("late"))  # already stopped: at once
    assert calls == ["a", "late"]


def test_scripted_delay_validation(tmp_path):
    from sqlnb import errors
    from sqlnb.agent.models import ScriptedChatModel

    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"replies": ["FINAL"], "delay": "slow"}))
    with pytest.raises(errors.ConfigurationError, match="delay"):
        ScriptedChatModel.from_file(path)
    path.write_text(json.dumps({"replies": ["FINAL"], "delay": 0.25, "drafts": []}))
    model = ScriptedChatModel.from_file(path)
    assert model.delay == 0.25 and model.drafts == []


# ---------------------------------------------------------------------------------------
# history after a kernel restart
# ---------------------------------------------------------------------------------------


def test_history_seeds_a_new_agent_after_a_restart(shell, panel, bridge, tmp_path):
    connect(shell, f"duckdb:///{tmp_path / 'h.duckdb'}")
    kernel_session(shell).magics.manager.get("db").execute("CREATE TABLE t AS SELECT 1 AS a, 2 AS b")
    saved = [
        {"question": "What is a?", "status": "success", "sql": "SELECT a FROM t"},
        {
            "question": "And b?",
            "status": "needs_clarification",
            "sql": None,
            "questions": ["b of which row?"],
        },
    ]
    kernel_session(shell).ask._agent = Agent()  # what a restarted kernel has: an empty conversation
    model = script(tmp_path, sql_block("SELECT a, b FROM t"), "FINAL")
    run = ask(panel, "Now both together", model=model, history=saved)
    assert panel.wait_done(run)["status"] == "success"
    prompt = "\n".join(c for _, c in kernel_session(shell).ask.agent.client(model).model.prompts[0])
    assert "What is a?" in prompt and "SELECT a FROM t" in prompt
    assert "And b?" in prompt and "b of which row?" in prompt
    assert [t["question"] for t in kernel_session(shell).ask.agent.history("db")] == [
        "What is a?",
        "And b?",
        "Now both together",
    ]
    # a history sent again is ignored once the conversation has turns
    model2 = script(tmp_path, sql_block("SELECT b FROM t"), "FINAL")
    run2 = ask(
        panel,
        "Only b",
        model=model2,
        history=[{"question": "Ignored?", "status": "success", "sql": "SELECT 9"}],
    )
    assert panel.wait_done(run2)["status"] == "success"
    prompt2 = "\n".join(c for _, c in kernel_session(shell).ask.agent.client(model2).model.prompts[0])
    assert "Ignored?" not in prompt2 and "Now both together" in prompt2
    # new=True starts over: neither the turns nor a history
    model3 = script(tmp_path, sql_block("SELECT 1"), "FINAL")
    run3 = ask(panel, "Fresh start", model=model3, new=True, history=saved)
    assert panel.wait_done(run3)["status"] == "success"
    prompt3 = "\n".join(c for _, c in kernel_session(shell).ask.agent.client(model3).model.prompts[0])
    assert "What is a?" not in prompt3 and "Only b" not in prompt3


def test_seeded_history_in_chat_rendering(tmp_path):
    from sqlnb.adapters import connect as open_adapter
    from sqlnb.agent.models import ScriptedChatModel
    from sqlnb.agent.settings import AgentSettings

    adapter = open_adapter(f"duckdb:///{tmp_path / 'r.duckdb'}")
    try:
        agent = Agent(settings=AgentSettings(rendering="chat"))
        assert agent.seed_history("db", [{"question": "Earlier?", "status": "success", "sql": "SELECT 41"}])
        assert not agent.seed_history("db", [{"question": "Again?", "status": "success", "sql": "SELECT 1"}])
        model = ScriptedChatModel(replies=[sql_block("SELECT 42"), "FINAL"])
        result = agent.ask("Later?", adapter, connection="db", model=model)
        assert result.status == "success"
        roles = model.prompts[0]
        assert (
            roles[1] == ("user", "Earlier?")
            and "SELECT 41" in roles[2][1]
            and roles[-1][1].endswith("Later?")
        )
    finally:
        adapter.close()


# ---------------------------------------------------------------------------------------
# the notebook's cells while the agent works
# ---------------------------------------------------------------------------------------


@pytest.mark.engines(["duckdb", "sqlite", "postgresql"])
def test_sql_cells_run_correctly_while_an_ask_is_in_flight(shell, panel, engine, seeded, tmp_path):
    connect(shell, seeded.url())
    # the agent runs six statements with short model pauses between them, while the
    # notebook runs its own cells on the same connection
    queries = [f"SELECT id, amount FROM orders WHERE id >= {10 + i % 3} ORDER BY id" for i in range(6)]
    replies = [sql_block(q) for q in queries]
    run = ask(panel, "Which orders?", model=script(tmp_path, *replies, delay=0.02), max_iterations=6)
    panel.wait_event(run, "started")
    checked = 0
    while True:
        finished = any(e["type"] == "done" for e in panel.events(run))
        with capture_output():
            res = shell.run_cell(f"%%sql -o cell_df\n{PAID}")
        res.raise_error()
        df = shell.user_ns["cell_df"]
        assert [int(v) for v in df["id"]] == [10, 12], df
        assert [float(v) for v in df["amount"]] == [12.5, 5.0]
        checked += 1
        if finished:
            break
    done = panel.wait_done(run)
    attempts = [e for e in panel.events(run) if e["type"] == "attempt"]
    assert len(attempts) == 6 and all(a["ok"] for a in attempts), attempts
    assert [a["row_count"] for a in attempts] == [3 - i % 3 for i in range(6)]
    assert done["status"] == "success" and checked >= 1
    # the agent's read-only scope ended: the notebook can still write
    with capture_output():
        res = shell.run_cell("%%sql\nUPDATE orders SET status = 'paid' WHERE id = 999")
    res.raise_error()


# ---------------------------------------------------------------------------------------
# %%ask inserts through the panel
# ---------------------------------------------------------------------------------------


def test_ask_magic_inserts_through_the_open_panel(shell, bridge, tmp_path):
    connect(shell, f"duckdb:///{tmp_path / 'i.duckdb'}")
    # no panel yet: the frontend inserts (set_next_input)
    bridge.kernel.parent = {"header": {}, "metadata": {"cellId": "cell-1"}}
    with capture_output():
        shell.run_cell(f"%%ask --model {script(tmp_path, sql_block('SELECT 1 AS one'), 'FINAL')}\nOne?")
    assert shell.rl_next_input and shell.rl_next_input.startswith("%%sql --conn db")
    shell.rl_next_input = None
    comm = FakeComm()
    bridge.open(comm, {})
    comm.request("hello", protocol=1, client={}, notebook="")
    bridge.kernel.parent = {"header": {}, "metadata": {"cellId": "cell-2"}}
    with capture_output():
        shell.run_cell(f"%%ask --model {script(tmp_path, sql_block('SELECT 2 AS two'), 'FINAL')}\nTwo?")
    inserts = [m for m in comm.sent if m["type"] == "insert_cell"]
    assert len(inserts) == 1 and shell.rl_next_input is None
    assert inserts[0]["cell_id"] == "cell-2" and inserts[0]["run"] is False
    assert inserts[0]["source"].startswith("%%sql --conn db\n-- sqlnb ask: Two?")
    assert inserts[0]["source"].endswith("\nSELECT\n  2 AS two\n")
    comm.msg_callback({"content": {"data": {"v": 1, "type": "inserted", "cell_id": "cell-2"}}})
    assert bridge.inserted == ["cell-2"]
    # a frontend that sends no cell id: set_next_input again
    bridge.kernel.parent = {"header": {}, "metadata": {}}
    with capture_output():
        shell.run_cell(f"%%ask --model {script(tmp_path, sql_block('SELECT 3 AS three'), 'FINAL')}\nThree?")
    assert shell.rl_next_input and shell.rl_next_input.endswith("\nSELECT\n  3 AS three\n")
    assert len([m for m in comm.sent if m["type"] == "insert_cell"]) == 1


def test_register_needs_a_kernel():
    from sqlnb.bridge import register

    assert register(SimpleNamespace()) is None


def test_a_cell_question_while_the_panel_answers_one_on_that_connection(shell, panel, tmp_path):
    connect(shell, f"duckdb:///{tmp_path / 'q.duckdb'}")
    run = ask(panel, "slow?", model=script(tmp_path, "FINAL", delay=60))
    panel.wait_event(run, "started")
    with capture_output() as cap:
        res = shell.run_cell(f"%%ask --model {script(tmp_path, 'FINAL')}\nMeanwhile?")
    assert res.error_in_exec is not None and "still being answered" in cap.stdout + cap.stderr
    panel.request("stop", run=run)
    assert panel.wait_done(run, timeout=30)["status"] == "stopped"
    assert [t["question"] for t in kernel_session(shell).ask.agent.history("db")] == ["slow?"]


def test_a_newer_panel_stops_the_older_panels_question(shell, bridge, panel, tmp_path):
    connect(shell, f"duckdb:///{tmp_path / 'n.duckdb'}")
    run = ask(panel, "slow?", model=script(tmp_path, "FINAL", delay=60))
    panel.wait_event(run, "started")
    newer = FakeComm()
    bridge.open(newer, {})
    assert newer.request("hello", protocol=1, client={}, notebook="")["ok"]
    assert bridge.runs[run].wait(STOP_BOUND)
    assert bridge.runs[run].done_event["status"] == "stopped"
    run2 = ask(newer, "fast?", model=script(tmp_path, "CLARIFY: which?"))
    assert newer.wait_done(run2)["status"] == "needs_clarification"


# ---------------------------------------------------------------------------------------
# confidence in done, remember (the thumbs-up)
# ---------------------------------------------------------------------------------------


@pytest.mark.engines(["duckdb", "sqlite", "postgresql"])
def test_done_carries_the_answers_confidence(shell, panel, engine, seeded, tmp_path):
    connect(shell, seeded.url())
    bridge = kernel_session(shell).bridge
    run = ask(panel, "Which orders are paid?", model=script(tmp_path, sql_block(PAID), "FINAL"))
    done = panel.wait_done(run)
    confidence = done["confidence"]
    assert done["status"] == "success" and confidence is not None
    # the agent's own assessment, passed through as it is
    assert confidence == bridge.runs[run].result.confidence
    assert confidence["level"] == "medium" and 0 <= confidence["score"] <= 1
    assert confidence["reasons"] and all(isinstance(r, str) for r in confidence["reasons"])
    # an empty result is not to be trusted much
    empty = "SELECT id FROM orders WHERE status = 'lost'"
    run = ask(panel, "Which orders were lost?", model=script(tmp_path, sql_block(empty), "FINAL"))
    done = panel.wait_done(run)
    assert done["status"] == "success" and done["confidence"]["level"] == "low"
    assert "the result is empty" in done["confidence"]["reasons"]
    # no SQL, no confidence
    run = ask(
        panel,
        "Something else?",
        model=script(
            tmp_path,
            sql_block("SELECT nope FROM orders"),
            sql_block("SELECT nope2 FROM orders"),
            sql_block("SELECT nope3 FROM orders"),
        ),
    )
    done = panel.wait_done(run)
    assert done["status"] == "failed" and done["sql"] is None and done["confidence"] is None


def test_done_has_no_confidence_for_an_error_or_a_stop(shell, panel, tmp_path):
    run = ask(panel, "No connection?", model=script(tmp_path, "FINAL"))
    done = panel.wait_done(run)
    assert done["status"] == "error" and "confidence" in done and done["confidence"] is None
    connect(shell, f"duckdb:///{tmp_path / 'c.duckdb'}")
    run = ask(panel, "slow?", model=script(tmp_path, sql_block("SELECT 1 AS a"), "FINAL", delay=60))
    panel.wait_event(run, "started")
    panel.request("stop", run=run)
    done = panel.wait_done(run, timeout=30)
    assert done["status"] == "stopped" and done["confidence"] is None


def test_a_clarification_keeps_its_best_query_its_cell_and_confidence(shell, panel, tmp_path):
    connect(shell, f"duckdb:///{tmp_path / 'b.duckdb'}")
    kernel_session(shell).magics.manager.get("db").execute("CREATE TABLE sales AS SELECT 2024 AS y, 5 AS n")
    model = script(tmp_path, sql_block("SELECT max(n) AS n FROM sales"), "CLARIFY: Which year do you mean?")
    run = ask(panel, "How many sales?", model=model)
    done = panel.wait_done(run)
    assert done["status"] == "needs_clarification" and done["questions"] == ["Which year do you mean?"]
    assert done["sql"] == "SELECT max(n) AS n FROM sales" and done["rows"] == [[5]]
    assert done["cell"].startswith("%%sql --conn db\n")
    assert done["cell"].endswith("\nSELECT\n  MAX(n) AS n\nFROM sales\n")  # laid out
    assert done["confidence"]["level"] in ("high", "medium", "low")
    # the best query so far can be remembered too
    reply = panel.request("remember", run=run)
    assert reply["ok"], reply
    (entry,) = kernel_session(shell).ask.agent.memory.entries()
    assert entry["question"] == "How many sales?" and entry["sql"] == "SELECT max(n) AS n FROM sales"


COUNT_MARCH = "SELECT count(*) AS n FROM orders WHERE ordered_on >= DATE '2024-03-01'"


def test_confidence_info_keeps_only_a_well_formed_confidence():
    from sqlnb.bridge.runs import confidence_info

    assert confidence_info(None) is None
    assert confidence_info({"level": "certain", "score": 1}) is None
    assert confidence_info({"level": "HIGH", "score": 1.5, "reasons": ["a", "", None]}) == {
        "level": "high",
        "score": 1.0,
        "reasons": ["a"],
    }
    assert confidence_info({"level": "low", "score": "n/a", "reasons": "one"}) == {
        "level": "low",
        "score": None,
        "reasons": ["one"],
    }
    # reasons reach the browser: no secret in them
    leaked = confidence_info(
        {"level": "low", "score": 0.2, "reasons": ["filter on postgresql://u:hunter2@db/x"]}
    )
    assert "hunter2" not in json.dumps(leaked)


@pytest.mark.engines(["duckdb", "sqlite", "postgresql"])
def test_remember_stores_the_runs_question_sql_and_connection(shell, panel, engine, seeded, tmp_path):
    from sqlnb.agent.memory import MemoryStore, memory_path

    connect(shell, seeded.url(), "shop")
    run = ask(panel, "Which orders are paid?", model=script(tmp_path, sql_block(PAID), "FINAL"))
    assert panel.wait_done(run)["status"] == "success"
    reply = panel.request("remember", run=run)
    assert reply["ok"], reply
    memory_id = reply["data"]["id"]
    assert isinstance(memory_id, int) and reply["data"] == {"id": memory_id}
    # in the store file under SQLNB_HOME, as the kernel produced it
    assert memory_path().parent == Path(os.environ["SQLNB_HOME"]) and memory_path().exists()
    (entry,) = MemoryStore().entries()
    assert entry["id"] == memory_id and entry["question"] == "Which orders are paid?"
    assert entry["sql"] == PAID and entry["source"] == "thumbs_up" and entry["connection"] == "shop"
    # pressed twice: one entry, the same id; the run's fields win over what the panel says
    again = panel.request("remember", run=run, question="Something else", sql="SELECT 1")
    assert again["ok"] and again["data"]["id"] == memory_id
    assert len(MemoryStore().entries()) == 1
    # the next question on this database gets it as an example
    model = script(tmp_path, sql_block(PAID), "FINAL")
    run = ask(panel, "Which orders are paid so far?", model=model)
    assert panel.wait_done(run)["status"] == "success"
    prompt = "\n".join(c for _, c in kernel_session(shell).ask.agent.client(model).model.prompts[0])
    assert "Which orders are paid?" in prompt and PAID in prompt


@pytest.mark.engines(["duckdb", "sqlite", "postgresql"])
def test_a_second_pass_with_remembered_answers_is_announced_between_the_attempts(
    shell, panel, engine, seeded, tmp_path
):
    # a count for each status: it leaves out the value the question names (a doubt) while
    # reading its column, so no filter on it is added for the draft
    every = "SELECT status, count(*) AS n FROM orders GROUP BY status"
    paid = "SELECT count(*) AS n FROM orders WHERE status = 'paid'"
    connect(shell, seeded.url(), "shop")
    assert panel.request("remember", question="Which orders are paid?", sql=PAID, connection="shop")["ok"]
    # the drafts agree on a count that leaves out the value the question names (low): the
    # turn starts over with the remembered answer, and its answer is the one given
    model = script(tmp_path, sql_block(every), sql_block(paid), drafts=[sql_block(every), sql_block(paid)])
    run = ask(panel, "How many paid orders are there?", model=model)
    done = panel.wait_done(run)
    assert (done["status"], done["sql"], done["confidence"]["level"]) == ("success", paid, "high")
    events = [m["event"] for m in panel.sent if m.get("type") == "event" and m.get("run") == run]
    kinds = [e["type"] for e in events]
    assert kinds.count("memory") == 1 and kinds[0] == "started" and kinds[-1] == "done"
    (memory,) = [e for e in events if e["type"] == "memory"]
    assert memory == {
        "type": "memory",
        "examples": 1,
        "level": "low",
        "kept_first": False,
        "text": "Not sure of that answer (low confidence): asking again with 1 remembered "
        "answer of this database as examples…",
    }
    # an attempt before it and one after it, each numbered from 1
    at = kinds.index("memory")
    before = [e for e in events[:at] if e["type"] == "attempt"]
    after = [e for e in events[at:] if e["type"] == "attempt"]
    assert [(e["n"], e["sql"]) for e in before] == [(1, every)]
    assert [(e["n"], e["sql"]) for e in after] == [(1, paid)]
    assert done["usage"]["calls"] == 4
    # a second pass whose queries all fail: announced, and the first answer is the one given
    bad = [sql_block(f"SELECT count(*) FROM payments_{i}") for i in range(12)]
    model = script(tmp_path, sql_block(every), *bad, drafts=[sql_block(every), *bad])
    run = ask(panel, "How many paid orders are there by now?", model=model)
    done = panel.wait_done(run)
    assert (done["status"], done["sql"], done["confidence"]["level"]) == ("success", every, "low")
    memory = [
        m["event"]
        for m in panel.sent
        if m.get("type") == "event" and m.get("run") == run and m["event"]["type"] == "memory"
    ]
    assert memory[1] == {
        "type": "memory",
        "examples": 1,
        "level": "low",
        "kept_first": True,
        "text": "No answer found with the remembered answers: the first answer stands (low confidence).",
    }
    assert (
        "memory_event"
        in panel.request("hello", client={"name": "t", "version": "0"}, protocol=1, notebook="t.ipynb")[
            "data"
        ]["features"]
    )


@pytest.mark.engines(["duckdb"])
def test_remembering_an_answer_to_a_clarification_keeps_the_whole_question(
    shell, panel, engine, seeded, tmp_path
):
    from sqlnb.agent.memory import MemoryStore

    connect(shell, seeded.url(), "shop")
    run = ask(
        panel, "How many orders in the month?", model=script(tmp_path, "CLARIFY: Which month do you mean?")
    )
    assert panel.wait_done(run)["status"] == "needs_clarification"
    run = ask(panel, "March 2024", model=script(tmp_path, sql_block(COUNT_MARCH), "FINAL"))
    done = panel.wait_done(run)
    assert done["status"] == "success"
    assert "-- sqlnb ask: How many orders in the month? (March 2024) |" in done["cell"]
    assert panel.request("remember", run=run)["ok"]
    (entry,) = MemoryStore().entries()
    assert entry["question"] == "How many orders in the month? (March 2024)"


def test_remember_without_the_run_takes_the_answer_from_the_request(shell, panel, tmp_path):
    connect(shell, f"duckdb:///{tmp_path / 'r.duckdb'}", "shop")
    kernel_session(shell).magics.manager.get("shop").execute("CREATE TABLE t AS SELECT 7 AS a")
    # a reloaded page (no run id) or a restarted kernel (a run id it never saw)
    first = panel.request("remember", question="What is a?", sql="SELECT a FROM t", connection="shop")
    assert first["ok"], first
    second = panel.request(
        "remember", run="0123abcd", question="What is a?", sql="SELECT a FROM t", connection="shop"
    )
    assert second["ok"] and second["data"]["id"] == first["data"]["id"]
    (entry,) = kernel_session(shell).ask.agent.memory.entries()
    assert (entry["question"], entry["sql"], entry["connection"]) == ("What is a?", "SELECT a FROM t", "shop")
    # no connection named: the active one
    assert panel.request("remember", question="Count t?", sql="SELECT count(*) FROM t")["ok"]
    assert len(kernel_session(shell).ask.agent.memory.entries()) == 2


def test_remember_errors_come_back_in_the_error_shape(shell, panel, tmp_path):
    connect(shell, f"duckdb:///{tmp_path / 'e.duckdb'}")
    kernel_session(shell).magics.manager.get("db").execute("CREATE TABLE t AS SELECT 7 AS a")
    memory = kernel_session(shell).ask.agent.memory

    def error(**fields) -> dict:
        reply = panel.request("remember", **fields)
        assert reply["ok"] is False and set(reply["error"]) == {"kind", "message", "hint"}, reply
        return reply["error"]

    # SQL that writes is never remembered
    err = error(question="Drop it?", sql="DROP TABLE t", connection="db")
    assert err["kind"] == "UsageError" and "read-only" in err["message"]
    # an unknown run without the answer, missing fields, wrong types, an unknown connection
    err = error(run="feedbeef")
    assert err["kind"] == "UsageError" and "feedbeef" in err["message"] and err["hint"]
    assert error(question="What?")["kind"] == "UsageError"
    assert error(sql="SELECT a FROM t")["kind"] == "UsageError"
    assert error(run=3)["kind"] == "UsageError"
    assert (
        error(question="What?", sql="SELECT a FROM t", connection="nope")["kind"] == "UnknownConnectionError"
    )
    # a run without SQL, and a run still going
    run = ask(panel, "Nothing?", model=script(tmp_path, "CLARIFY: which?"))
    assert panel.wait_done(run)["status"] == "needs_clarification"
    assert "no SQL" in error(run=run)["message"]
    slow = ask(panel, "Slow?", model=script(tmp_path, sql_block("SELECT a FROM t"), "FINAL", delay=60))
    panel.wait_event(slow, "started")
    assert "not finished" in error(run=slow)["message"]
    panel.request("stop", run=slow)
    panel.wait_done(slow, timeout=30)
    # the memory turned off
    kernel_session(shell).ask.agent.use_memory = False
    err = error(question="What is a?", sql="SELECT a FROM t")
    assert err["kind"] == "UsageError" and "off" in err["message"]
    assert memory.entries() == []
    assert "Traceback" not in json.dumps(panel.sent)


@pytest.mark.engines(["duckdb"])
def test_an_answer_is_explained_in_its_done_event(shell, panel, seeded, tmp_path):
    text = "This lists the paid orders with their amounts. Only orders with status 'paid' count."
    path = tmp_path / "explained.json"
    path.write_text(json.dumps({"replies": [sql_block(PAID), "FINAL"], "explanations": [text]}))
    connect(shell, seeded.url(), "shop")
    run = ask(panel, "Which orders are paid?", model=f"scripted:{path}")
    done = panel.wait_done(run)
    assert done["status"] == "success" and done["explanation"] == text
    events = panel.events(run)
    assert [e["type"] for e in events][-2:] == ["explaining", "done"]
    assert events[-2] == {"type": "explaining", "label": "Explaining the answer…"}
    # the explanation's text streams in after its phase, before the done event
    live = panel.events(run, live=True)
    phase = {
        "type": "phase",
        "phase": "writing",
        "call": 3,
        "purpose": "explain",
        "label": "Explaining the answer…",
    }
    at = live.index(phase)
    assert "".join(e["text"] for e in live[at:] if e["type"] == "text") == text


# ---------------------------------------------------------------------------------------
# connect: the panel's connect form and Reconnect
# ---------------------------------------------------------------------------------------


def test_connect_opens_a_url_and_makes_it_active(shell, panel, tmp_path):
    url = f"duckdb:///{tmp_path / 'shop.duckdb'}"
    reply = panel.request("connect", target=url, name="shop")
    assert reply["ok"], reply
    data = reply["data"]
    assert data["connected"] == "shop" and data["active"] == "shop"
    assert [c["name"] for c in data["connections"]] == ["shop"]
    assert "known" in data and isinstance(data["known"], list)
    # the notebook's magics see it: one manager
    assert kernel_session(shell).magics.manager.active == "shop"
    # the same name again replaces it (Reconnect after a restart is the same request)
    again = panel.request("connect", target=url, name="shop")["data"]
    assert [c["name"] for c in again["connections"]] == ["shop"]


def test_connect_errors_are_for_people_and_change_nothing(panel):
    for fields, kind in (
        ({}, "UsageError"),
        ({"target": "  "}, "UsageError"),
        ({"target": "postgresql:/nowhere"}, "InvalidURLError"),
        ({"target": "no_such_connection"}, "UnknownConnectionError"),
        ({"target": "duckdb:///x.duckdb", "password": 7}, "UsageError"),
    ):
        reply = panel.request("connect", **fields)
        assert reply["ok"] is False and reply["error"]["kind"] == kind, (fields, reply)
        assert reply["error"]["message"]
    assert panel.request("connections")["data"]["connections"] == []


def test_a_password_typed_in_the_panel_reaches_the_server_and_nothing_else(shell, panel, workdir):
    from tests.engines import PostgresEnv

    pg = PostgresEnv(workdir)
    pg.create()
    secret = "Typed-In-Pa55"
    try:
        # the local server trusts 127.0.0.1: the password is accepted and ignored
        reply = panel.request(
            "connect", target=f"postgresql://postgres@{PG_HOST}:{PG_PORT}/{pg.db}", name="pg", password=secret
        )
        assert reply["ok"], reply
        row = reply["data"]["connections"][0]
        assert row["name"] == "pg" and "***" in row["url"]  # held, and redacted
        entry = kernel_session(shell).magics.manager.get_entry("pg")
        assert entry.adapter.spec.password is not None
        assert int(entry.adapter.execute("SELECT 1 AS one").rows[0][0]) == 1
        assert secret not in json.dumps(panel.sent)
        assert secret not in repr(entry.adapter.spec)
    finally:
        kernel_session(shell).magics.manager.close_all()
        pg.drop()


def test_configured_names_are_offered_and_connect_by_name(shell, panel, tmp_path, monkeypatch):
    monkeypatch.setenv("SQLNB_WAREHOUSE_URL", f"duckdb:///{tmp_path / 'w.duckdb'}")
    listed = panel.request("connections")["data"]
    assert "warehouse" in listed["known"]
    reply = panel.request("connect", target="warehouse")
    assert reply["ok"], reply
    assert reply["data"]["connected"] == "warehouse"
