"""A turn shown as it works: phase events, the model's text streamed as it is written
(sqlnb.agent.live), through the model client, the agent, the bridge, the widget and %%ask."""

from __future__ import annotations

import json
import threading

import pytest
from langchain_core.messages import AIMessage

from sqlnb import errors, labels
from sqlnb.adapters import connect
from sqlnb.agent.live import TEXT_EVERY, Live
from sqlnb.agent.models import ModelClient, ScriptedChatModel
from sqlnb.agent.runner import Agent
from sqlnb.bridge.runs import protocol_event
from sqlnb.display import LiveProgress

REPLY = "Counting the rows of customers answers it.\n\n```sql\nSELECT count(*) AS n FROM customers\n```"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def texts(events, call=None):
    """The text of each call, put together from its text events as a panel does."""
    out: dict[int, str] = {}
    for e in events:
        if e["type"] == "text" and (call is None or e["call"] == call):
            out[e["call"]] = out.get(e["call"], "")[: e["offset"]] + e["text"]
    return out


@pytest.fixture
def shop(tmp_path):
    adapter = connect(f"duckdb:///{tmp_path / 'shop.duckdb'}")
    adapter.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    adapter.execute("INSERT INTO customers VALUES (1, 'Ann'), (2, 'Bo'), (3, 'Cy')")
    yield adapter
    adapter.close()


# ---- the pieces of one call ---------------------------------------------------------------


def test_text_is_sent_at_most_every_tenth_of_a_second_and_whole_at_the_end():
    events: list[dict] = []
    clock = Clock()
    live = Live(events.append, clock=clock)
    call = live.call("answer")
    assert events == [{"type": "phase", "phase": "writing", "call": 1, "purpose": "answer"}]
    call("SELECT")  # held: a reply written within a tenth of a second goes as one event
    call(" count(*)")
    assert len(events) == 1
    clock.now += TEXT_EVERY
    call(" AS n")
    assert events[-1] == {"type": "text", "call": 1, "offset": 0, "text": "SELECT count(*) AS n"}
    clock.now += TEXT_EVERY / 2
    call(" FROM t")  # held: too soon after
    assert len(events) == 2
    clock.now += TEXT_EVERY
    call("")
    assert events[-1] == {"type": "text", "call": 1, "offset": 20, "text": " FROM t"}
    call(";")
    call.close()
    assert events[-1] == {"type": "text", "call": 1, "offset": 27, "text": ";"}
    assert texts(events) == {1: "SELECT count(*) AS n FROM t;"}
    call(" late")  # a stopped call's worker writing on: dropped
    assert texts(events) == {1: "SELECT count(*) AS n FROM t;"}


def test_a_retried_call_starts_its_text_over():
    events: list[dict] = []
    live = Live(events.append, clock=Clock())
    call = live.call("answer")
    call("half a rep")
    call("", restart=True)
    assert events[-1] == {"type": "text", "call": 1, "offset": 0, "text": ""}
    call("the reply")
    call.close()
    assert texts(events) == {1: "the reply"}


def test_drafts_are_counted_against_the_most_a_turn_draws():
    events: list[dict] = []
    live = Live(events.append, drafts=3)
    live.call("answer").close()
    live.call("draft").close()
    live.call("draft").close()
    live.call("explain").close()
    phases = [e for e in events if e["type"] == "phase"]
    assert [labels.phase_label(e) for e in phases] == [
        "Writing a query…",
        "Writing draft 1 of up to 3…",
        "Writing draft 2 of up to 3…",
        "Explaining the answer…",
    ]
    assert labels.phase_label({"phase": "running"}) == "Running the query…"
    assert labels.phase_label({"phase": "checking"}) == "Checking the answer against the data…"
    assert labels.phase_label({"phase": "writing", "call": 4, "purpose": "answer"}) == "Writing a reply…"


# ---- the model client streams -------------------------------------------------------------


def test_a_streamed_reply_is_the_reply_and_its_usage_and_comes_in_pieces():
    pieces: list[str] = []
    streamed = ModelClient(ScriptedChatModel(replies=[REPLY]))
    text, usage = streamed.invoke(
        [("human", "How many customers?")], on_text=lambda p, restart=False: pieces.append(p)
    )
    plain_text, plain_usage = ModelClient(ScriptedChatModel(replies=[REPLY])).invoke(
        [("human", "How many customers?")]
    )
    assert text == plain_text == REPLY
    assert "".join(pieces) == REPLY and len(pieces) > 5
    assert {k: usage[k] for k in ("input_tokens", "output_tokens", "calls")} == {
        k: plain_usage[k] for k in ("input_tokens", "output_tokens", "calls")
    }


class FailsOnceMidway(ScriptedChatModel):
    """Writes a few words, then fails (a dropped connection), once; then answers."""

    failed: bool = False

    def _stream(self, messages, stop=None, run_manager=None, **kwargs):
        if not self.failed:
            self.failed = True
            yield from list(super()._stream(messages, stop, run_manager, **kwargs))[:3]
            self.position -= 1  # the reply was not taken
            raise ConnectionError("connection reset")
        yield from super()._stream(messages, stop, run_manager, **kwargs)


def test_a_call_that_fails_while_writing_is_retried_and_its_text_starts_over():
    seen: list[tuple[str, bool]] = []
    client = ModelClient(FailsOnceMidway(replies=[REPLY]), backoff=0, sleep=lambda s: None)
    text, _ = client.invoke([("human", "q")], on_text=lambda p, restart=False: seen.append((p, restart)))
    assert text == REPLY
    restart = seen.index(("", True))
    assert restart == 3  # three pieces, then the retry's start over
    assert "".join(p for p, _ in seen[restart + 1 :]) == REPLY


def test_a_model_that_cannot_stream_gives_its_reply_as_one_piece():
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    pieces: list[str] = []
    client = ModelClient(FakeListChatModel(responses=["SELECT 1"]))
    text, _ = client.invoke([("human", "q")], on_text=lambda p, restart=False: pieces.append(p))
    assert text == "SELECT 1" and "".join(pieces) == "SELECT 1"


def test_stopping_a_streamed_call_ends_it_and_nothing_is_shown_after(shop, tmp_path):
    from sqlnb.agent.stop import StopToken

    script = tmp_path / "slow.json"
    script.write_text(json.dumps({"replies": [REPLY, "FINAL"], "stream_pause": 0.2}))
    events: list[dict] = []
    stop = StopToken()
    seen_text = threading.Event()

    def on_event(e):
        events.append(e)
        if e["type"] == "text" and e["text"]:
            seen_text.set()

    worker = threading.Thread(
        target=lambda: Agent().ask(
            "How many customers?", shop, model=f"scripted:{script}", on_event=on_event, stop=stop, live=True
        )
    )
    worker.start()
    assert seen_text.wait(10)
    stop.stop()
    worker.join(10)
    assert not worker.is_alive()
    assert events[-1]["type"] == "done" and events[-1]["result"].status == "stopped"
    n = len(events)
    threading.Event().wait(0.6)  # the abandoned call's words would come every 0.2 s
    assert len(events) == n


# ---- a whole turn -------------------------------------------------------------------------


def test_a_live_turn_shows_each_phase_and_the_text_and_answers_the_same(shop, tmp_path):
    script = tmp_path / "count.json"
    script.write_text(json.dumps({"replies": [REPLY, "FINAL"], "explanations": ["There are 3 customers."]}))
    events: list[dict] = []
    live = Agent().ask(
        "How many customers?", shop, model=f"scripted:{script}", on_event=events.append, live=True
    )
    quiet_events: list[dict] = []
    quiet = Agent().ask("How many customers?", shop, model=f"scripted:{script}", on_event=quiet_events.append)
    assert live.sql == quiet.sql and live.status == quiet.status == "success"
    assert live.explanation == quiet.explanation == "There are 3 customers."
    assert not [e for e in quiet_events if e["type"] in ("phase", "text")]  # only when asked

    phases = [(e["phase"], e.get("purpose")) for e in events if e["type"] == "phase"]
    assert phases == [
        ("writing", "answer"),
        ("running", None),
        ("writing", "answer"),
        ("checking", None),
        ("writing", "explain"),
    ]
    assert texts(events) == {1: REPLY, 2: "FINAL", 3: "There are 3 customers."}
    # the text of a call comes before the step that reads it
    kinds = [e["type"] for e in events]
    assert kinds.index("text") < kinds.index("reply") < kinds.index("attempt")
    # the bridge passes both kinds on, labelled
    wire = [protocol_event(e) for e in events if e["type"] in ("phase", "text")]
    assert wire[0] == {
        "type": "phase",
        "phase": "writing",
        "call": 1,
        "purpose": "answer",
        "label": "Writing a query…",
    }
    assert {"type": "phase", "phase": "running", "label": "Running the query…"} in wire
    assert all(set(w) == {"type", "call", "offset", "text"} for w in wire if w["type"] == "text")


def test_a_failing_model_streams_nothing_and_fails_as_before(shop, tmp_path):
    script = tmp_path / "empty.json"
    script.write_text(json.dumps([]))
    events: list[dict] = []
    result = Agent().ask(
        "How many customers?", shop, model=f"scripted:{script}", on_event=events.append, live=True
    )
    assert result.stop_reason == "model_error"
    assert texts(events) == {}


# ---- the front doors ----------------------------------------------------------------------


class Handle:
    def __init__(self, shown):
        self.shown = shown

    def update(self, bundle, raw=False):
        self.shown.append(bundle)


def test_ask_shows_one_live_output_that_updates_in_place_and_goes_at_the_end():
    shown: list[dict] = []

    def display(bundle, raw=False, display_id=False):
        assert raw and display_id
        shown.append(bundle)
        return Handle(shown)

    clock = Clock()
    progress = LiveProgress(display=display, clock=clock)
    assert not progress.update({"type": "reply", "sql": "SELECT 1"})  # a step: printed as before
    assert progress.update({"type": "phase", "phase": "writing", "call": 1, "purpose": "answer"})
    clock.now = 3.2
    assert progress.update({"type": "text", "call": 1, "offset": 0, "text": "SELECT <b>"})
    assert shown[-1]["text/plain"] == "Writing a query… (3.20 s)\nSELECT <b>"
    assert "SELECT &lt;b&gt;" in shown[-1]["text/html"]
    assert progress.update({"type": "text", "call": 1, "offset": 0, "text": "x" * 700})
    assert shown[-1]["text/plain"].endswith("\n…" + "x" * LiveProgress.SHOWN)
    progress.close()
    assert shown[-1] == {"text/plain": ""}


@pytest.mark.engines(["duckdb"])
def test_ask_magic_in_a_notebook_streams_into_its_output(shell, seeded, tmp_path, monkeypatch):
    """%%ask in a kernel: one live output that updates, cleared at the end; the answer as before."""
    from IPython.utils.capture import capture_output

    script = tmp_path / "magic.json"
    script.write_text(json.dumps([REPLY, "FINAL"]))
    with capture_output():
        assert shell.run_cell(f"%sqlnb connect {seeded.url()} --name shop").success
    monkeypatch.setattr(shell, "kernel", object(), raising=False)  # as in a notebook's kernel
    updates: list[dict] = []
    monkeypatch.setattr("IPython.display.DisplayHandle.update", lambda self, obj, **kw: updates.append(obj))
    with capture_output() as cap:
        res = shell.run_cell(f"%%ask --model scripted:{script} --no-memory\nHow many customers?")
    assert res.success and res.result.status == "success", cap.stdout + cap.stderr
    first = [o.data for o in cap.outputs if "text/html" in o.data and "sqlnb-live" in o.data["text/html"]]
    assert first and first[0]["text/plain"].startswith("Writing a query…")
    assert any("SELECT count(*) AS n FROM customers" in u.get("text/plain", "") for u in updates)
    assert updates[-1] == {"text/plain": ""}  # gone once the answer is there
    assert "Attempt 1 of at most 5" in cap.stdout  # the steps are printed as before


def test_the_widget_shows_the_live_line_until_the_answer():
    pytest.importorskip("ipywidgets")
    from sqlnb.bridge.widget import Turn

    class Chat:
        def __init__(self):
            import ipywidgets

            self._w = ipywidgets

        def _guard(self, fn, *args):
            return fn(*args)

    turn = Turn(Chat(), "How many customers?", "shop")
    turn.add_event({"type": "phase", "phase": "writing", "call": 1, "label": "Writing a query…"})
    turn.add_event({"type": "text", "call": 1, "offset": 0, "text": "SELECT count(*)"})
    assert "Writing a query…" in turn.live_view.value and "SELECT count(*)" in turn.live_view.value
    assert turn.events == []  # not steps
    turn.add_event({"type": "done", "status": "failed", "label": "No query succeeded."})
    assert turn.live_view.value == ""


def test_errors_of_a_streamed_call_are_for_people():
    class Refuses(ScriptedChatModel):
        def _stream(self, messages, stop=None, run_manager=None, **kwargs):
            raise ValueError("bad request")
            yield AIMessage(content="")  # pragma: no cover

    client = ModelClient(Refuses(replies=["x"]), retries=0)
    with pytest.raises(errors.ModelError) as info:
        client.invoke([("human", "q")], on_text=lambda p, restart=False: None)
    assert "failed after 1 attempt" in str(info.value)
