"""Reading ahead: a local model reads the start of the next question's prompt (the system
prompt with the schema, the conversation so far) before the question comes
(``Agent.warm``, ``Agent.warm_soon``), from every front door: ``%%ask``, the panel's hello,
use, connect and each answer, and the widget.  A scripted model that stands for a local
one (``read_ahead``) records what it was given to read; the tiny llama.cpp model shows that
the question's prompt is then read from its question on."""

from __future__ import annotations

import time

import pytest
from IPython.utils.capture import capture_output

from sqlnb.agent.models import ModelClient, ScriptedChatModel
from sqlnb.agent.prompts import QUESTION_LEAD, model_messages, prompt_before_question
from sqlnb.agent.runner import Agent
from sqlnb.agent.settings import AgentSettings
from sqlnb.agent.state import AgentState
from sqlnb.bridge.comm import Bridge
from sqlnb.kernel import kernel_session
from tests.doubles import readonly_sqlite, script_file, sql_block
from tests.test_bridge import FakeComm, FakeKernel, ask, connect

SHOP = """
    CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT);
    INSERT INTO customers VALUES (1, 'Ada', 'UK'), (2, 'Grace', 'US'), (3, 'Linus', 'FI');
"""


@pytest.fixture
def bridge(shell):
    """A bridge on a fake kernel (there is no kernel here)."""
    bridge = Bridge(shell, kernel=FakeKernel())
    kernel_session(shell).bridge = bridge
    yield bridge
    for run in list(bridge.runs.values()):
        run.stop()
        run.wait(10)
    kernel_session(shell).bridge = None


@pytest.fixture
def shop(tmp_path):
    conn = readonly_sqlite(tmp_path, SHOP)
    yield conn
    conn.close()


def local(*replies: str) -> ModelClient:
    """A scripted model standing for a local one: it keeps prompt states."""
    return ModelClient(ScriptedChatModel(replies=list(replies), read_ahead=True))


def wait_idle(agent: Agent, timeout: float = 20, bridge: Bridge | None = None) -> None:
    if bridge is not None and bridge.reading_ahead is not None:
        bridge.reading_ahead.join(timeout)  # the panel's read-ahead starts in a thread of its own
    end = time.monotonic() + timeout
    while agent.warming():
        assert time.monotonic() < end, "the background read-ahead did not end"
        time.sleep(0.02)


# ---- the prompt's beginning --------------------------------------------------------------


@pytest.mark.parametrize(
    "turns", [[], [{"question": "How many customers?", "sql": "SELECT 1", "status": "success"}]]
)
def test_the_text_before_the_question_begins_the_questions_prompt(turns):
    state: AgentState = {
        "dialect": "sqlite",
        "schema_context": "CREATE TABLE t (a INT);",
        "max_iterations": 5,
        "failure_cutoff": 3,
        "turns": turns,
        "question": "Which customers are from the UK?",
        "attempts": [],
    }
    system, lead = prompt_before_question(state)
    full = model_messages(state)
    assert full[0].content == system.content
    assert lead.content.endswith(QUESTION_LEAD)
    assert full[1].content.startswith(lead.content + " Which customers")
    assert ("Earlier in this conversation" in lead.content) == bool(turns)


def test_the_agent_reads_ahead_exactly_the_start_of_the_next_questions_prompt(shop):
    agent = Agent(memory=False)
    client = local(
        sql_block("SELECT count(*) FROM customers"), "FINAL", sql_block("SELECT name FROM customers"), "FINAL"
    )
    model = client.model
    # before the first question: the system prompt and the schema
    assert agent.warm(shop, connection="shop", model=client) is not None
    agent.ask("How many customers are there?", shop, connection="shop", model=client)
    (before_first,) = model.read_ahead_prompts[:1]
    first_call = model.prompts[0]
    assert first_call[0] == before_first[0]  # the same system prompt, schema included
    assert first_call[1][1].startswith(before_first[1][1] + " How many customers")
    # after it: the conversation so far is read too
    agent.warm(shop, connection="shop", model=client)
    ahead = model.read_ahead_prompts[-1]
    assert "Earlier in this conversation" in ahead[1][1] and "How many customers are there?" in ahead[1][1]
    agent.ask("And their names?", shop, connection="shop", model=client)
    second_call = model.prompts[2]
    assert second_call[0] == ahead[0] and second_call[1][1].startswith(ahead[1][1] + " And their names?")
    assert model.position == 4  # reading ahead took none of the script's replies


def test_no_read_ahead_for_a_model_that_keeps_no_prompt_states_or_the_chat_rendering(shop):
    agent = Agent(memory=False)
    hosted = ModelClient(ScriptedChatModel(replies=[]))  # stands for a hosted model: never called for it
    assert agent.warm(shop, model=hosted) is None and hosted.model.prompts == []
    client = local()
    assert agent.warm(shop, model=client, settings=AgentSettings(rendering="chat")) is None
    assert client.model.read_ahead_prompts == []


def test_warm_soon_runs_in_the_background_and_the_last_request_wins(shop, tmp_path):
    agent = Agent(memory=False)
    client = local()
    started, release = [], []

    class Slow(ScriptedChatModel):
        def _answer(self, prompt, stop, options):
            started.append(1)
            while not release:
                time.sleep(0.01)
            return super()._answer(prompt, stop, options)

    slow = ModelClient(Slow(replies=[], read_ahead=True))
    agent.warm_soon(shop, connection="shop", model=slow)
    end = time.monotonic() + 10
    while not started and time.monotonic() < end:
        time.sleep(0.01)
    assert agent.warming()
    agent.warm_soon(shop, connection="a", model=client)  # waits for the first
    agent.warm_soon(shop, connection="b", model=client, max_iterations=2)  # replaces it
    release.append(1)
    wait_idle(agent)
    assert len(slow.model.read_ahead_prompts) == 1
    (ahead,) = client.model.read_ahead_prompts
    assert "after 2 replies" in ahead[0][1]  # the last request's settings


def test_a_failing_read_ahead_is_forgotten(shop, caplog):
    class Broken(ScriptedChatModel):
        def _answer(self, prompt, stop, options):
            raise RuntimeError("the model process died")

    agent = Agent(memory=False)
    agent.warm_soon(shop, model=ModelClient(Broken(replies=[], read_ahead=True)))
    wait_idle(agent)
    client = local(sql_block("SELECT count(*) FROM customers"), "FINAL")
    assert agent.ask("How many customers are there?", shop, model=client).ok


# ---- the front doors ----------------------------------------------------------------------


def local_script(tmp_path, *replies: str) -> str:
    return f"scripted:{script_file(tmp_path, {'replies': list(replies), 'read_ahead': True})}"


def read_ahead_prompts(agent: Agent, spec: str) -> list:
    return agent.client(spec).model.read_ahead_prompts


def test_ask_magic_reads_ahead_after_each_answer_unless_turned_off(shell, tmp_path):
    connect(shell, f"sqlite:///{tmp_path / 'm.sqlite'}", "m")
    spec = local_script(
        tmp_path, sql_block("SELECT 1 AS one", lead=""), "FINAL", sql_block("SELECT 2", lead=""), "FINAL"
    )
    ask_magic = kernel_session(shell).ask
    agent = ask_magic.agent
    with capture_output():
        shell.run_cell_magic("ask", f"--model {spec} --no-insert", "What is one?")
    wait_idle(agent)
    (ahead,) = read_ahead_prompts(agent, spec)
    assert "What is one?" in ahead[1][1] and ahead[1][1].endswith(QUESTION_LEAD)
    ask_magic.read_ahead = False
    try:
        with capture_output():
            shell.run_cell_magic("ask", f"--model {spec} --no-insert", "What is two?")
        wait_idle(agent)
        assert len(read_ahead_prompts(agent, spec)) == 1
    finally:
        ask_magic.read_ahead = True


def test_the_panel_reads_ahead_at_hello_on_use_on_connect_and_after_each_answer(shell, bridge, tmp_path):
    spec = local_script(tmp_path, sql_block("SELECT 1 AS one", lead=""), "FINAL")
    ask_magic = kernel_session(shell).ask
    ask_magic.model = spec
    agent = ask_magic.agent
    try:
        comm = FakeComm()
        bridge.open(comm, {})
        hello = comm.request("hello", client={"name": "test", "version": "0"}, protocol=1, notebook="t.ipynb")
        assert hello["ok"] and hello["data"]["active"] is None  # no connection: nothing to read
        wait_idle(agent, bridge=bridge)
        assert read_ahead_prompts(agent, spec) == []
        connect(shell, f"sqlite:///{tmp_path / 'p.sqlite'}", "p")
        comm.request("hello", client={"name": "test", "version": "0"}, protocol=1, notebook="t.ipynb")
        wait_idle(agent, bridge=bridge)
        assert len(read_ahead_prompts(agent, spec)) == 1
        assert comm.request("use", name="p")["ok"]
        wait_idle(agent, bridge=bridge)
        assert len(read_ahead_prompts(agent, spec)) == 2
        reply = comm.request("connect", target=f"sqlite:///{tmp_path / 'q.sqlite'}", name="q")
        assert reply["ok"], reply
        wait_idle(agent, bridge=bridge)
        assert len(read_ahead_prompts(agent, spec)) == 3
        run = ask(comm, "What is one?")
        assert comm.wait_done(run)["status"] == "success"
        # the run starts reading ahead once its done went out
        end = time.monotonic() + 20
        while len(read_ahead_prompts(agent, spec)) < 4 and time.monotonic() < end:
            time.sleep(0.02)
        wait_idle(agent, bridge=bridge)
        prompts = read_ahead_prompts(agent, spec)
        assert len(prompts) == 4 and "What is one?" in prompts[-1][1][1]
    finally:
        ask_magic.model = ""


def test_a_scripted_models_read_ahead_setting_is_checked(tmp_path):
    from sqlnb import errors

    path = script_file(tmp_path, {"replies": [], "read_ahead": "yes"})
    with pytest.raises(errors.ConfigurationError, match="read_ahead"):
        ScriptedChatModel.from_file(path)


def test_one_client_per_model_whichever_thread_asks_first(tmp_path, monkeypatch):
    """A question and a read-ahead that ask for the same model at once get one client: a
    second one would be a second model (a scripted one would start its replies over)."""
    import threading

    from sqlnb.agent.models import spec as model_spec

    made = []
    real = model_spec.resolve_model

    def slow_resolve(spec=None, **kw):
        made.append(spec)
        time.sleep(0.05)  # both threads are inside before either is done
        return real(spec, **kw)

    monkeypatch.setattr("sqlnb.agent.models.resolve_model", slow_resolve)
    path = local_script(tmp_path, "FINAL")
    agent = Agent(memory=False)
    got: list = []
    threads = [threading.Thread(target=lambda: got.append(agent.client(path))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == 1 and len({id(c) for c in got}) == 1
