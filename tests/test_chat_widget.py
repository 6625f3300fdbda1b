"""``sqlnb.chat()``: the chat widget driven in-process (a real InteractiveShell, scripted
models, real databases) the way a person drives it — typing into the question box and
clicking its buttons — and once through a real Jupyter kernel."""

from __future__ import annotations

import html
import json
import time

import pytest
from IPython.utils.capture import capture_output

import sqlnb
from sqlnb.agent.models import ModelClient, ScriptedChatModel
from sqlnb.bridge import widget as chat_widget
from sqlnb.bridge.runs import AskRun
from sqlnb.bridge.widget import widgets_in
from sqlnb.kernel import kernel_session
from sqlnb.sql.format import pretty
from tests.doubles import script, sql_block

COUNT = "SELECT count(*) AS n FROM customers"
CHEAP = "SELECT id, amount FROM orders WHERE amount < 50 ORDER BY id"


def run(shell, cell: str):
    """Run a cell; return what it displayed."""
    with capture_output() as cap:
        result = shell.run_cell(cell)
    assert result.success, cap.stdout + cap.stderr
    return cap.outputs


def ask(chat, question: str | None = None):
    """Type ``question`` (None: keep the box's text), click Ask, wait for the turn's end."""
    if question is not None:
        chat.question.value = question
    chat.ask_button.click()
    assert chat.wait(60), "the run did not end"
    return chat.turns[-1]


def until(predicate, what: str, timeout: float = 60):
    """Wait for a condition of a background run (a guard against hanging, not a speed bound)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.01)


def shown(chat) -> str:
    """Everything the chat's widgets hold: their synced state, as the browser gets it."""
    return json.dumps([w.get_state() for w in widgets_in(chat)], default=str, ensure_ascii=False)


def status_text(chat) -> str:
    import html
    import re

    return html.unescape(re.sub(r"<[^>]+>", "", chat.status.value))


# ---------------------------------------------------------------------------------------
# a question, its steps, the answer
# ---------------------------------------------------------------------------------------


@pytest.mark.engines(["sqlite", "duckdb"])
def test_steps_stream_in_order_then_the_sql_and_its_table(shell, seeded, tmp_path):
    run(shell, f"%sqlnb connect {seeded.url()} --name shop")
    model = script(tmp_path, sql_block("SELECT id, amount FROM order_lines"), sql_block(CHEAP), "FINAL")
    chat = sqlnb.chat(model=model)
    assert chat.connection.value == "shop" and chat.connection.options[0][0].startswith("shop · ")
    turn = ask(chat, "Which orders cost less than 50?")

    assert [e["type"] for e in turn.events] == [
        "started",
        "reply",
        "attempt",
        "reply",
        "attempt",
        "reply",
        "done",
    ]
    steps = turn.steps_view.value
    order = [
        steps.index(s)
        for s in (
            "Asking ",
            " on shop (",
            "Attempt 1 of at most 5",
            "order_lines",
            "✗ table_not_found",
            "Attempt 2 of at most 5",
            "amount &lt; 50",
            "✓ 2 rows",
            "The model confirmed the result",
        )
    ]
    assert order == sorted(order), steps
    assert "amount < 50" not in steps  # SQL is escaped, never HTML

    done = turn.done
    assert done["status"] == "success" and done["sql"] == CHEAP
    outcome = turn.outcome.value
    assert "✓ Answer" in outcome and "amount &lt; 50 ORDER BY id" in outcome
    assert "<th style='text-align:left;padding:1px 8px'>amount</th>" in outcome
    assert ">10</td>" in outcome and ">12</td>" in outcome and ">11</td>" not in outcome
    assert "12.5" in outcome and "2 rows." in outcome
    # the turn is over: Ask is back, Stop gone, the box free for the next question
    assert not chat.ask_button.disabled and chat.stop_button.layout.display == "none"
    assert chat.question.value == "" and chat.status.value == ""
    assert turn.actions.layout.display != "none"


@pytest.mark.engines(["sqlite", "duckdb"])
def test_insert_hands_the_sql_cell_to_the_notebook_and_copy_shows_the_sql(shell, seeded, tmp_path):
    run(shell, f"%sqlnb connect {seeded.url()} --name shop")
    chat = sqlnb.chat(model=script(tmp_path, sql_block(COUNT), "FINAL"))
    turn = ask(chat, "How many customers are there?")
    turn.insert_button.click()
    cell = shell.rl_next_input
    lines = cell.splitlines()
    assert lines[0] == "%%sql --conn shop"
    assert lines[1].startswith("-- sqlnb ask: How many customers are there?")
    assert "\n".join(lines[2:]) == pretty(COUNT, seeded.dialect)  # laid out, the same query
    assert "appears below the next cell you run" in turn.note.value
    outputs = run(shell, cell)  # the inserted cell runs as it is
    assert ">3</td>" in outputs[0].data["text/html"]

    assert turn.copy_box.layout.display == "none"
    turn.copy_button.click()
    assert turn.copy_box.layout.display != "none" and turn.copy_box.value == COUNT
    assert "Ctrl+C" in turn.note.value
    turn.copy_box.value = "SELECT 'edited'"  # read-only: an edit is undone
    assert turn.copy_box.value == COUNT


def test_the_other_readings_of_disagreeing_drafts_can_be_inserted_instead(shell, seeded, tmp_path):
    other = "SELECT count(*) AS n FROM orders WHERE status = 'paid'"
    path = tmp_path / "disagree.json"
    path.write_text(
        json.dumps({"replies": [sql_block(COUNT)], "drafts": [sql_block(other), sql_block(COUNT)]})
    )
    run(shell, f"%sqlnb connect {seeded.url()} --name shop")
    chat = sqlnb.chat(model=f"scripted:{path}")
    turn = ask(chat, "How many customers are there?")
    assert turn.done["sql"] == COUNT and turn.others.layout.display != "none"
    (alt,) = turn.done["alternatives"]
    assert alt["label"] == "1. 1 draft, 1 row" and alt["rows"] == [[2]]
    assert alt["cell"].endswith("\n" + pretty(other, seeded.dialect) + "\n")
    assert "The drafts also gave 1 other result:" in shown(chat)
    _head, reading = turn.others.children
    _view, use = reading.children
    use.click()
    lines = shell.rl_next_input.splitlines()
    assert "another reading (1 draft)" in lines[1] and "\n".join(lines[2:]) == pretty(other, seeded.dialect)
    # agreeing drafts: nothing else to offer
    agreed = tmp_path / "agreed.json"
    agreed.write_text(json.dumps({"replies": [sql_block(COUNT)], "drafts": [sql_block(COUNT)] * 2}))
    chat = sqlnb.chat(model=f"scripted:{agreed}")
    turn = ask(chat, "How many customers are there?")
    assert turn.done["alternatives"] == [] and turn.others.layout.display == "none"


@pytest.mark.engines(["duckdb"])
def test_a_turn_where_no_query_succeeds_says_so_and_offers_no_cell(shell, seeded, tmp_path):
    run(shell, f"%sqlnb connect {seeded.url()} --name shop")
    model = script(tmp_path, *(sql_block(f"SELECT nope{i} FROM customers") for i in range(3)))
    chat = sqlnb.chat(model=model)
    turn = ask(chat, "List them")
    assert turn.done["status"] == "failed" and turn.done["stop_reason"] == "consecutive_failures"
    assert "✗ No query succeeded" in turn.outcome.value
    assert "too many failed queries in a row" in turn.outcome.value
    assert turn.steps_view.value.count("✗ column_not_found") == 3
    assert turn.actions.layout.display == "none" and turn.clarify.layout.display == "none"
    assert turn.done["confidence"] is None and "confidence" not in turn.outcome.value
    assert not chat.ask_button.disabled


@pytest.mark.engines(["sqlite", "duckdb"])
def test_an_answer_shows_its_confidence_and_the_thumbs_up_remembers_it(shell, seeded, tmp_path, monkeypatch):
    from sqlnb.agent.memory import MemoryStore

    run(shell, f"%sqlnb connect {seeded.url()} --name shop")
    chat = sqlnb.chat(model=script(tmp_path, sql_block(CHEAP), "FINAL"))
    turn = ask(chat, "Which orders cost less than 50?")
    confidence = turn.done["confidence"]
    assert confidence == turn.run.result.confidence and confidence["level"] == "medium"
    outcome = turn.outcome.value
    badge = 'class="sqlnb-confidence-badge" data-level="medium"'
    assert badge in outcome and ">Medium confidence<" in outcome
    assert 'aria-label="Medium confidence (score ' in outcome
    for reason in confidence["reasons"]:  # on hover (title) and on expand (the list)
        shown_as = html.escape(reason[:1].upper() + reason[1:])
        assert f"• {shown_as}" in outcome and f"<li>{shown_as}</li>" in outcome
    assert outcome.index("✓ Answer") < outcome.index(badge) < outcome.index("amount &lt; 50")

    agent = kernel_session(shell).ask.agent
    calls = []
    real = agent.remember
    monkeypatch.setattr(agent, "remember", lambda *a, **k: calls.append(a) or real(*a, **k))
    button = turn.remember_button
    assert button.description == "Remember" and button.icon == "thumbs-up"
    assert button.tooltip == "Remember this answer" and not button.disabled
    button.click()
    (entry,) = MemoryStore().entries()  # under SQLNB_HOME
    assert (entry["question"], entry["sql"], entry["connection"], entry["source"]) == (
        "Which orders cost less than 50?",
        CHEAP,
        "shop",
        "thumbs_up",
    )
    assert turn.remembered == entry["id"]
    assert button.description == "Remembered" and button.disabled and button.button_style == "success"
    assert "Remembered" in turn.note.value
    button.click()  # pressed again: nothing is sent twice
    turn.remember()
    assert len(calls) == 1 and len(MemoryStore().entries()) == 1
    assert chat.status.value == ""


@pytest.mark.engines(["sqlite", "duckdb"])
def test_a_second_pass_with_remembered_answers_shows_why_between_the_attempts(shell, seeded, tmp_path):
    # a count for each status: it leaves out 'paid' (a doubt) while reading its column, so
    # no filter on it is added for the draft
    every = "SELECT status, count(*) AS n FROM orders GROUP BY status"
    paid = "SELECT count(*) AS n FROM orders WHERE status = 'paid'"
    run(shell, f"%sqlnb connect {seeded.url()} --name shop")
    entry = kernel_session(shell).magics.manager.get_entry("shop")
    kernel_session(shell).ask.agent.remember(
        entry.adapter,
        "Which orders are paid?",
        "SELECT id FROM orders WHERE status = 'paid'",
        connection="shop",
        source="thumbs_up",
    )
    path = tmp_path / "drafts.json"  # drafts that agree on a count leaving out 'paid' (low)
    path.write_text(
        json.dumps(
            {"replies": [sql_block(every), sql_block(paid)], "drafts": [sql_block(every), sql_block(paid)]}
        )
    )
    chat = sqlnb.chat(model=f"scripted:{path}")
    turn = ask(chat, "How many paid orders are there?")
    assert turn.done["status"] == "success" and turn.done["sql"] == paid
    steps = turn.steps_view.value
    line = (
        "Not sure of that answer (low confidence): asking again with 1 remembered answer of "
        "this database as examples…"
    )
    assert steps.count(line) == 1
    first, second = steps.index("Attempt 1 of at most 5"), steps.rindex("Attempt 1 of at most 5")
    assert first < steps.index(line) < second, steps


@pytest.mark.engines(["duckdb"])
def test_a_clarification_with_a_best_query_offers_insert_copy_and_remember(shell, seeded, tmp_path):
    run(shell, f"%sqlnb connect {seeded.url()} --name shop")
    model = script(tmp_path, sql_block(COUNT), "CLARIFY: Customers of which country?")
    chat = sqlnb.chat(model=model)
    turn = ask(chat, "How many customers do we have?")
    assert turn.done["status"] == "needs_clarification" and turn.done["sql"] == COUNT
    outcome = turn.outcome.value
    assert "Customers of which country?" in outcome and "Best guess:" in outcome
    assert "sqlnb-confidence-badge" in outcome and COUNT in outcome
    # the query is usable as it is: the buttons are there beside the answer box
    assert turn.actions.layout.display != "none" and turn.clarify.layout.display != "none"
    turn.insert_button.click()
    assert shell.rl_next_input.startswith("%%sql --conn shop\n")
    assert shell.rl_next_input.endswith("\n" + pretty(COUNT, seeded.dialect) + "\n")
    turn.copy_button.click()
    assert turn.copy_box.value == COUNT
    turn.remember_button.click()
    (entry,) = kernel_session(shell).ask.agent.memory.entries()
    assert entry["question"] == "How many customers do we have?" and entry["sql"] == COUNT


@pytest.mark.engines(["sqlite"])
def test_the_thumbs_up_shows_why_it_could_not_remember(shell, seeded, tmp_path):
    run(shell, f"%sqlnb connect {seeded.url()} --name shop")
    chat = sqlnb.chat(model=script(tmp_path, sql_block(COUNT), "FINAL"))
    turn = ask(chat, "How many customers are there?")
    kernel_session(shell).ask.agent.use_memory = False
    turn.remember_button.click()
    assert "memory of accepted answers is off" in turn.note.value
    assert turn.remembered is None and turn.remember_button.description == "Remember"
    assert not turn.remember_button.disabled
    kernel_session(shell).ask.agent.use_memory = True  # turned on again: the same button works
    turn.remember_button.click()
    assert turn.remembered is not None and turn.remember_button.description == "Remembered"
    assert len(kernel_session(shell).ask.agent.memory.entries()) == 1


def test_confidence_html_escapes_and_shows_nothing_without_a_confidence():
    from sqlnb.bridge.widget import confidence_html, done_html

    assert confidence_html(None) == "" and confidence_html({"level": "unsure"}) == ""
    low = confidence_html({"level": "low", "score": 0.2, "reasons": ["value <b>x</b> not found"]})
    assert ">Low confidence — check this answer<" in low and "<b>x</b>" not in low
    assert "Value &lt;b&gt;x&lt;/b&gt; not found" in low and "<details" in low
    assert 'aria-label="Low confidence — check this answer (score 20%); 1 reason, expand to read it"' in low
    assert "var(--jp-error-color1" in low  # JupyterLab's theme where it is shown there
    high = confidence_html({"level": "high", "score": 0.9, "reasons": []})
    assert 'role="note"' in high and ">High confidence<" in high and "<details" not in high
    plain = done_html({"status": "success", "sql": "SELECT 1", "columns": [], "rows": [], "confidence": None})
    assert "confidence" not in plain


@pytest.mark.engines(["sqlite"])
def test_switching_the_connection_uses_it(shell, seeded, tmp_path):
    run(shell, f"%sqlnb connect {seeded.url()} --name first")
    run(shell, f"%sqlnb connect {seeded.url()} --name second")
    chat = sqlnb.chat(model=script(tmp_path, sql_block(COUNT), "FINAL"))
    assert [v for _, v in chat.connection.options] == ["first", "second"]
    assert chat.connection.value == "second"
    chat.connection.value = "first"
    assert chat.manager.active == "first"
    turn = ask(chat, "How many customers?")
    assert turn.connection == "first" and turn.done["cell"].startswith("%%sql --conn first\n")
    run(shell, "%sqlnb use second")
    chat.refresh_button.click()
    assert chat.connection.value == "second"


# ---------------------------------------------------------------------------------------
# clarification, stop, double clicks
# ---------------------------------------------------------------------------------------


@pytest.mark.engines(["duckdb"])
def test_a_clarification_is_answered_as_a_follow_up(shell, seeded, tmp_path):
    run(shell, f"%sqlnb connect {seeded.url()} --name shop")
    model = script(
        tmp_path,
        "CLARIFY:\n- Which status counts as sold?",
        sql_block("SELECT count(*) AS n FROM orders WHERE status = 'paid'"),
        "FINAL",
    )
    chat = sqlnb.chat(model=model)
    first = ask(chat, "How many orders were sold?")
    assert first.done["status"] == "needs_clarification"
    assert "Which status counts as sold?" in first.outcome.value
    assert first.clarify.layout.display != "none" and first.actions.layout.display == "none"

    first.answer.value = "Only paid ones."
    first.answer_button.click()
    assert chat.wait(60)
    second = chat.turns[-1]
    assert second is not first and second.question == "Only paid ones."
    assert second.done["status"] == "success" and ">2</td>" in second.outcome.value
    assert first.answer.disabled and first.answer.value == ""
    history = kernel_session(shell).ask.agent.history("shop")  # one conversation: the answer followed up
    assert [t["question"] for t in history] == ["How many orders were sold?", "Only paid ones."]
    assert history[0]["status"] == "needs_clarification"


@pytest.mark.engines(["sqlite"])
def test_new_conversation_forgets_the_earlier_questions(shell, seeded, tmp_path):
    run(shell, f"%sqlnb connect {seeded.url()} --name shop")
    chat = sqlnb.chat(
        model=script(
            tmp_path, sql_block(COUNT), "FINAL", sql_block(COUNT), "FINAL", sql_block(COUNT), "FINAL"
        )
    )
    ask(chat, "How many customers?")
    ask(chat, "Really?")
    agent = kernel_session(shell).ask.agent
    assert [t["question"] for t in agent.history("shop")] == ["How many customers?", "Really?"]
    chat.new_button.click()
    assert "starts a new conversation" in status_text(chat)
    ask(chat, "Count the customers")
    assert [t["question"] for t in agent.history("shop")] == ["Count the customers"]
    ask(chat, "Again?")  # only the next question starts over
    assert [t["question"] for t in agent.history("shop")] == ["Count the customers", "Again?"]


@pytest.mark.engines(["sqlite", "duckdb"])
def test_stop_ends_the_turn_and_the_next_question_works(shell, seeded, tmp_path):
    run(shell, f"%sqlnb connect {seeded.url()} --name shop")
    chat = sqlnb.chat(model=script(tmp_path, sql_block(COUNT), "FINAL", delay=30))
    chat.question.value = "How many customers?"
    chat.ask_button.click()
    turn = chat.turns[-1]
    until(lambda: any(e["type"] == "started" for e in turn.events), "the run to start")
    assert chat.ask_button.disabled and chat.stop_button.layout.display != "none"
    time.sleep(0.3)  # the model call is now waiting on its 30 s delay
    clicked = time.monotonic()
    chat.stop_button.click()
    chat.stop_button.click()  # idempotent
    assert chat.wait(30)
    took = time.monotonic() - clicked
    assert took < 2.0, f"stop took {took:.2f} s"
    assert turn.done["status"] == "stopped" and "Stopped" in turn.outcome.value
    assert chat.question.value == "How many customers?"  # nothing typed is lost
    assert not chat.ask_button.disabled and chat.stop_button.layout.display == "none"
    assert chat.status.value == ""
    chat.stop_button.click()  # nothing runs: nothing happens
    assert chat.status.value == ""

    chat.model = script(tmp_path, sql_block(COUNT), "FINAL")
    again = ask(chat)
    assert again is not turn and again.done["status"] == "success" and ">3</td>" in again.outcome.value


@pytest.mark.engines(["sqlite"])
def test_a_double_click_on_ask_starts_one_run(shell, seeded, tmp_path, monkeypatch):
    started = []

    class CountingRun(AskRun):
        def start(self):
            started.append(self)
            super().start()

    monkeypatch.setattr(chat_widget, "_ask_run_class", lambda: CountingRun)
    run(shell, f"%sqlnb connect {seeded.url()} --name shop")
    chat = sqlnb.chat(model=script(tmp_path, sql_block(COUNT), "FINAL", delay=30))
    chat.question.value = "How many customers?"
    chat.ask_button.click()
    chat.ask_button.click()
    assert len(started) == 1 and len(chat.turns) == 1 and chat.ask_button.disabled
    chat.stop_button.click()
    assert chat.wait(30) and chat.turns[0].done["status"] == "stopped"
    assert len(started) == 1


@pytest.mark.engines(["sqlite"])
def test_one_question_at_a_time_per_kernel(shell, seeded, tmp_path):
    run(shell, f"%sqlnb connect {seeded.url()} --name shop")
    slow = sqlnb.chat(model=script(tmp_path, sql_block(COUNT), "FINAL", delay=30))
    other = sqlnb.chat(model=script(tmp_path, sql_block(COUNT), "FINAL"))
    slow.question.value = "How many customers?"
    slow.ask_button.click()
    other.question.value = "And how many orders?"
    other.ask_button.click()
    assert other.turns == [] and not other.ask_button.disabled
    assert status_text(other).startswith("A question is still being answered in this kernel")
    slow.stop_button.click()
    assert slow.wait(30)
    assert ask(other).done["status"] == "success"  # the question was kept; now it runs


class PanelComm:
    """The sqlnb panel's end of the comm, as the bridge sees it: what it was sent."""

    def __init__(self):
        self.sent: list[dict] = []
        self._closed = False
        self.on_message = None

    def send(self, data=None, metadata=None, buffers=None):
        self.sent.append(json.loads(json.dumps(data)))

    def close(self, data=None, metadata=None, buffers=None, deleting=False):
        self._closed = True

    def on_msg(self, callback):
        self.on_message = callback

    def on_close(self, callback):
        pass

    def request(self, kind: str, **fields) -> dict:
        rid = f"r{len(self.sent)}"
        self.on_message(
            {"content": {"comm_id": "panel", "data": {"v": 1, "type": kind, "id": rid, **fields}}}
        )
        return next(m for m in self.sent if m.get("type") == "reply" and m.get("id") == rid)


class ExecutingKernel:
    """The kernel's parent message while JupyterLab runs the cell with id ``cell_id``."""

    def __init__(self, cell_id: str):
        self.parent = {"header": {}, "metadata": {"cellId": cell_id}}

    def get_parent(self, channel=None):
        return self.parent


@pytest.mark.engines(["sqlite"])
def test_with_the_sqlnb_panel_open_insert_goes_below_the_chat_cell_and_asks_wait(shell, seeded, tmp_path):
    from sqlnb.bridge.comm import Bridge

    bridge = kernel_session(shell).bridge = Bridge(shell, kernel=ExecutingKernel("chat-cell"))
    try:
        panel = PanelComm()
        bridge.open(panel, {})
        assert panel.request("hello", client={"name": "test"}, protocol=1, notebook="t.ipynb")["ok"]
        run(shell, f"%sqlnb connect {seeded.url()} --name shop")
        chat = sqlnb.chat(model=script(tmp_path, sql_block(COUNT), "FINAL"))
        assert chat.cell_id == "chat-cell"
        bridge.kernel.parent = {"header": {}, "metadata": {}}  # the cell finished

        # the panel's question runs: the chat's waits for it
        reply = panel.request(
            "ask", question="How many orders?", model=script(tmp_path, sql_block(COUNT), "FINAL", delay=30)
        )
        assert reply["ok"], reply
        chat.question.value = "How many customers?"
        chat.ask_button.click()
        assert chat.turns == [] and "sqlnb panel" in status_text(chat)
        assert panel.request("stop", run=reply["data"]["run"])["ok"]
        assert bridge.run.wait(30)

        # and while the chat's question runs, the panel's is told the kernel is busy
        slow = sqlnb.chat(model=script(tmp_path, sql_block(COUNT), "FINAL", delay=30))
        slow.question.value = "How many customers, slowly?"
        slow.ask_button.click()
        busy = panel.request("ask", question="How many orders?", model=script(tmp_path, "FINAL"))
        assert busy["ok"] is False and busy["error"]["kind"] == "busy"
        assert "chat" in busy["error"]["message"]
        slow.stop_button.click()
        assert slow.wait(30) and slow.turns[0].done["status"] == "stopped"

        turn = ask(chat)
        assert turn.done["status"] == "success"
        turn.insert_button.click()
        inserts = [m for m in panel.sent if m.get("type") == "insert_cell"]
        assert inserts == [
            {"v": 1, "type": "insert_cell", "source": turn.done["cell"], "cell_id": "chat-cell", "run": False}
        ]
        assert shell.rl_next_input is None and "inserted below the chat" in turn.note.value
    finally:
        kernel_session(shell).bridge = None


# ---------------------------------------------------------------------------------------
# errors: one clear line, nothing typed lost, the widget stays usable
# ---------------------------------------------------------------------------------------


@pytest.mark.engines(["sqlite"])
def test_without_a_connection_it_says_so_then_works_once_connected(shell, seeded, tmp_path):
    # sqlnb not loaded in this shell: chat() loads it
    kernel_session(shell).unload()
    chat = sqlnb.chat(model=script(tmp_path, sql_block(COUNT), "FINAL"))
    assert kernel_session(shell).magics is chat.magics
    assert chat.connection.options == () and "No connection" in status_text(chat)
    chat.question.value = "How many customers?"
    chat.ask_button.click()
    text = status_text(chat)
    assert text.startswith("No active connection") and "%sqlnb connect" in text
    assert "\n" not in text and "Traceback" not in text
    assert chat.question.value == "How many customers?" and not chat.ask_button.disabled
    assert chat.turns == []

    run(shell, f"%sqlnb connect {seeded.url()} --name shop")
    chat.refresh_button.click()
    assert chat.connection.value == "shop" and chat.status.value == ""
    turn = ask(chat)
    assert turn.done["status"] == "success"


@pytest.mark.engines(["sqlite"])
def test_no_model_and_a_model_timeout_show_one_line_each(shell, seeded, tmp_path):
    run(shell, f"%sqlnb connect {seeded.url()} --name shop")
    chat = sqlnb.chat()
    turn = ask(chat, "How many customers?")
    assert turn.done["status"] == "error" and turn.done["error"]["kind"] == "ModelNotConfigured"
    assert turn.outcome.value.count("<div") == 1 and "no language model is configured" in turn.outcome.value
    assert chat.question.value == "How many customers?" and not chat.ask_button.disabled

    chat.model = ModelClient(ScriptedChatModel(replies=[sql_block(COUNT)], delay=30), timeout=0.5, retries=0)
    turn = ask(chat)
    assert turn.done["status"] == "error" and turn.done["error"]["kind"] == "ModelError"
    assert turn.outcome.value.count("<div") == 1 and "did not answer within 0.5 s" in turn.outcome.value
    assert "Model call failed" not in turn.steps_view.value  # said once, as the outcome
    assert chat.question.value == "How many customers?" and not chat.ask_button.disabled

    chat.model = script(tmp_path, sql_block(COUNT), "FINAL")
    assert ask(chat).done["status"] == "success"


def test_without_ipywidgets_it_says_what_to_install(shell, monkeypatch):
    import sys

    from sqlnb import errors

    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # as if it were not installed
    with pytest.raises(errors.ConfigurationError) as info:
        sqlnb.chat()
    assert "ipywidgets" in str(info.value) and "sqlnb[widgets]" in str(info.value)


@pytest.mark.engines(["sqlite"])
def test_closing_the_chat_stops_its_run(shell, seeded, tmp_path):
    run(shell, f"%sqlnb connect {seeded.url()} --name shop")
    chat = sqlnb.chat(model=script(tmp_path, sql_block(COUNT), "FINAL", delay=30))
    chat.question.value = "How many customers?"
    chat.ask_button.click()
    run_ = chat.run
    chat.close()
    assert run_.wait(30) and run_.done_event["status"] == "stopped"
    assert all(w.comm is None for w in widgets_in(chat))


@pytest.mark.engines(["postgresql"])
def test_a_password_reaches_no_widget(shell, seeded, tmp_path):
    from tests.engines import PG_HOST, PGB_PASSWORD, PGB_PORT, PGB_USER

    wrong = "Wr0ng-chat-pw"
    bad_url = f"postgresql://{PGB_USER}:{wrong}@{PG_HOST}:{PGB_PORT}/{seeded.db}"
    chat = sqlnb.chat(connection=bad_url)
    assert "authentication" in status_text(chat).lower() or "password" in status_text(chat).lower()
    assert wrong not in shown(chat)

    url = f"postgresql://{PGB_USER}:{PGB_PASSWORD}@{PG_HOST}:{PGB_PORT}/{seeded.db}"
    model = script(tmp_path, sql_block("SELECT nope FROM customers"), sql_block(COUNT), "FINAL")
    chat = sqlnb.chat(connection=url, model=model)
    assert chat.connection.value == seeded.db
    turn = ask(chat, "How many customers?")
    assert turn.done["status"] == "success" and ">3</td>" in turn.outcome.value
    turn.copy_button.click()
    everything = shown(chat)
    assert PGB_PASSWORD not in everything and "Sq1nb" not in everything
    assert "nope" in everything and COUNT in everything  # the state checked is the real one


# ---------------------------------------------------------------------------------------
# a real kernel
# ---------------------------------------------------------------------------------------


def test_chat_displays_a_widget_in_a_real_kernel_and_answers_from_its_thread(tmp_path):
    import duckdb
    from jupyter_client.manager import start_new_kernel

    db = tmp_path / "shop.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE customers (id INTEGER, name VARCHAR)")
    con.execute("INSERT INTO customers VALUES (1, 'Ada'), (2, 'Grace'), (3, 'Linus')")
    con.close()
    model = script(tmp_path, sql_block(COUNT), "FINAL")

    km, kc = start_new_kernel(kernel_name="python3")
    try:
        # sqlnb is not loaded: chat() loads it
        msg_id = kc.execute(f"import sqlnb\nsqlnb.chat(model={model!r})")
        models, view, error = {}, None, None
        while True:
            msg = kc.get_iopub_msg(timeout=60)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            content = msg["content"]
            if msg["msg_type"] == "comm_open":
                models[content["comm_id"]] = content["data"]["state"]
            elif msg["msg_type"] in ("execute_result", "display_data"):
                view = content["data"].get("application/vnd.jupyter.widget-view+json")
            elif msg["msg_type"] == "error":
                error = content
            elif msg["msg_type"] == "status" and content["execution_state"] == "idle":
                break
        assert error is None, error
        assert kc.get_shell_msg(timeout=60)["content"]["status"] == "ok"
        assert view is not None and view["model_id"] in models
        assert models[view["model_id"]]["_model_name"] == "VBoxModel"

        # no connection yet: connect, then drive the widget as the browser does
        reply = kc.execute_interactive(f"%sqlnb connect duckdb:///{db} --name shop", timeout=60)
        assert reply["content"]["status"] == "ok"

        def comm_id(model_name: str, **state) -> str:
            return next(
                cid
                for cid, s in models.items()
                if s["_model_name"] == model_name and all(s.get(k) == v for k, v in state.items())
            )

        def send(cid: str, data: dict) -> None:
            kc.shell_channel.send(kc.session.msg("comm_msg", {"comm_id": cid, "data": data}))

        refresh = comm_id("ButtonModel", icon="refresh")
        question = comm_id("TextareaModel", placeholder="Ask the database a question…")
        ask_button = comm_id("ButtonModel", description="Ask")
        send(refresh, {"method": "custom", "content": {"event": "click"}})
        send(question, {"method": "update", "state": {"value": "How many customers?"}, "buffer_paths": []})
        send(ask_button, {"method": "custom", "content": {"event": "click"}})
        answer = None
        deadline = time.monotonic() + 60
        while answer is None:
            assert time.monotonic() < deadline, "no answer reached the widget"
            msg = kc.get_iopub_msg(timeout=60)
            if msg["msg_type"] != "comm_msg":
                continue
            value = msg["content"]["data"].get("state", {}).get("value")
            if isinstance(value, str) and "✓ Answer" in value:
                answer = value
        assert COUNT in answer and ">3</td>" in answer
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_the_answer_is_explained_first(shell, seeded, tmp_path):
    text = "This counts every customer, with no filter. There are 3."
    path = tmp_path / "explained.json"
    path.write_text(json.dumps({"replies": [sql_block(COUNT), "FINAL"], "explanations": [text]}))
    run(shell, f"%sqlnb connect {seeded.url()} --name shop")
    chat = sqlnb.chat(model=f"scripted:{path}")
    turn = ask(chat, "How many customers are there?")
    assert turn.done["explanation"] == text
    assert "Explaining the answer…" in shown(chat) and text in shown(chat)
    done = chat_widget.done_html(turn.done)
    assert done.index('class="sqlnb-explanation"') < done.index(COUNT.replace("*", "*"))
