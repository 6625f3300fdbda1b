"""The agent's state as declared (sqlnb.agent.state) against what the nodes write.

mypy checks the nodes' own dict literals against the TypedDicts; these tests check the
state a real turn leaves behind: every checkpoint of a turn on a small SQLite database,
with a scripted model, holds only declared keys (the state's, an attempt's, a candidate's,
the reply's, a turn's) and every key a TypedDict requires.  The turns go through the first
round's vote, a rewrite, a failed query with retry drafts, a CLARIFY that asks nothing, an
empty result, a doubt, data sharing off, rows that repeat, a filter value put back as stored
and a NOT IN over a column that holds a NULL; between them they write every key declared."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, get_type_hints

import pytest

from sqlnb.adapters import connect
from sqlnb.agent.models import ModelClient, ScriptedChatModel
from sqlnb.agent.runner import Agent
from sqlnb.agent.settings import AgentSettings
from sqlnb.agent.state import AgentState, Attempt, Candidate, ReplyRecord, StateUpdate, Turn
from tests.test_repairs import SHOP


def sql(text: str) -> str:
    return f"```sql\n{text}\n```"


# notes on customers, one of them on nobody (a NULL)
NOTES = """
    CREATE TABLE notes (customer_id INTEGER, note TEXT);
    INSERT INTO notes VALUES (1, 'called'), (NULL, 'a walk-in');
"""


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    """The rewrites' shop (:data:`tests.test_repairs.SHOP`: three customers and their
    orders, Linus has none) with :data:`NOTES`, read-only."""
    path = tmp_path_factory.mktemp("state") / "shop.sqlite"
    con = sqlite3.connect(path)
    con.executescript(SHOP + NOTES)
    con.close()
    conn = connect(f"sqlite:///{path}", readonly=True)
    yield conn
    conn.close()


def keys_of(td: type) -> tuple[set[str], set[str]]:
    """A TypedDict's declared keys and its required ones."""
    return set(get_type_hints(td)), set(td.__required_keys__)


def check(record: Mapping[str, Any], td: type, where: str) -> None:
    declared, required = keys_of(td)
    assert set(record) <= declared, f"{where}: undeclared {sorted(set(record) - declared)}"
    assert required <= set(record), f"{where}: missing {sorted(required - set(record))}"


def check_state(values: Mapping[str, Any], where: str) -> None:
    """Every key of a checkpoint's state, and of the records it holds, is declared."""
    assert set(values) <= set(get_type_hints(AgentState)), where
    for a in values.get("attempts") or []:
        check(a, Attempt, f"{where}, attempt {a.get('n')}")
        for c in a.get("candidates") or []:
            check(c, Candidate, f"{where}, a candidate of attempt {a.get('n')}")
    if values.get("reply") is not None:
        check(values["reply"], ReplyRecord, f"{where}, reply")
    for t in values.get("turns") or []:
        check(t, Turn, f"{where}, turn")


def test_a_node_update_declares_the_keys_of_the_state():
    assert get_type_hints(StateUpdate) == get_type_hints(AgentState)
    assert StateUpdate.__required_keys__ == frozenset()
    # every key but the conversation's earlier turns is set when a turn starts
    assert AgentState.__optional_keys__ == frozenset({"turns"})


@dataclass(frozen=True)
class Case:
    question: str
    replies: list[str]  # the model's replies, in order
    drafts: list[str] | None  # its replies to sampled calls (None: it does not sample)
    settings: AgentSettings
    corrections: list[str] | None = None  # its corrections of doubted answers


def agreeing(question: str, query: str) -> Case:
    """``question`` answered by the first round's vote: the reply and every draft write
    ``query``."""
    return Case(
        question=question,
        replies=[sql(query)],
        drafts=[sql(query)] * 3,
        settings=AgentSettings(first_drafts=2),
    )


JOINED = "SELECT c.name, COUNT(*) AS n FROM customers AS c JOIN orders AS o ON c.id = o.id GROUP BY c.name"
BAD = "SELECT nme FROM customers"
NAMES = "SELECT name FROM customers ORDER BY id"
PAID = "SELECT DISTINCT c.name FROM customers AS c JOIN orders AS o ON o.customer_id = c.id WHERE o.status = 'Paid'"
NO_NOTES = "SELECT name FROM customers WHERE id NOT IN (SELECT customer_id FROM notes)"
TURNS = {
    # the first round's vote: a draft and the reply agree, a rewrite stands in for them
    "vote and rewrite": agreeing("How many orders did each customer place?", JOINED),
    # a failed query, its correction beside a retry draft, then FINAL
    "failure and retry drafts": Case(
        question="What are the customers' names?",
        replies=[sql(BAD), sql(NAMES), "FINAL"],
        drafts=[sql(NAMES)],
        settings=AgentSettings(first_drafts=0, retry_drafts=1),
    ),
    # a CLARIFY that asks nothing, an empty result, one row kept by a LIMIT without an
    # ORDER BY (a doubt), with data sharing off
    "no question, empty, doubt, no data shared": Case(
        question="What is the name of a customer who paid?",
        replies=[
            "CLARIFY: What is the name of a customer who paid?",
            sql("SELECT name FROM customers WHERE 1 = 0"),
            sql("SELECT c.name FROM customers AS c JOIN orders AS o ON o.customer_id = c.id LIMIT 1"),
            "FINAL",
        ],
        drafts=None,
        settings=AgentSettings(first_drafts=0, share_data=False),
    ),
    # rows that repeat (Ada has two orders)
    "repeated rows": Case(
        question="Which customers placed orders?",
        replies=[sql("SELECT c.name FROM customers AS c JOIN orders AS o ON o.customer_id = c.id"), "FINAL"],
        drafts=None,
        settings=AgentSettings(first_drafts=0),
    ),
    # every draft finds nothing: the filter value as stored ('paid') joins the vote
    "stored value": agreeing("Which customers have paid orders?", PAID),
    # every draft finds nothing: NOT IN over a column with a NULL, the NULLs left out
    "NULL in NOT IN": agreeing("Which customers have no notes?", NO_NOTES),
    # drafts agree on rows that repeat (Ada has two orders): the correction lists each once
    "corrected": Case(
        question="Which customers placed orders?",
        replies=[sql("SELECT c.name FROM customers AS c JOIN orders AS o ON o.customer_id = c.id")],
        drafts=[sql("SELECT c.name FROM customers AS c JOIN orders AS o ON o.customer_id = c.id")] * 3,
        settings=AgentSettings(first_drafts=2),
        corrections=[
            sql("SELECT DISTINCT c.name FROM customers AS c JOIN orders AS o ON o.customer_id = c.id")
        ],
    ),
    # the model asks back while the drafts agree on an answer
    "clarification overruled": Case(
        question="How many customers are there?",
        replies=["CLARIFY: Which customers do you mean, active or all?"],
        drafts=[sql("SELECT count(*) AS n FROM customers")] * 3,
        settings=AgentSettings(first_drafts=2),
    ),
}


def run_turn(shop, name: str, answered: list[Any] | None = None) -> list[dict[str, Any]]:
    """Ask the question of ``TURNS[name]``; the values of every checkpoint of its turn
    (its AskResult's attempts added to ``answered``: the kept one carries the checks'
    findings, written after the graph's last checkpoint)."""
    turn = TURNS[name]
    model = ScriptedChatModel(replies=list(turn.replies), drafts=turn.drafts, corrections=turn.corrections)
    agent = Agent(memory=False)
    result = agent.ask(
        turn.question, shop, connection="shop", model=ModelClient(model), settings=turn.settings
    )
    assert result.attempts, name
    for a in result.attempts:
        check(a, Attempt, f"{name}, AskResult attempt {a['n']}")
    if answered is not None:
        answered.extend(result.attempts)
    config = {"configurable": {"thread_id": agent.thread_id("shop")}}
    return [dict(snapshot.values) for snapshot in agent.graph.get_state_history(config)]


@pytest.mark.parametrize("name", list(TURNS))
def test_every_key_a_turn_writes_is_declared(shop, name):
    history = run_turn(shop, name)
    assert len(history) > 3
    for i, values in enumerate(history):
        check_state(values, f"{name}, checkpoint {i}")


def test_every_key_declared_is_written(shop):
    """No declaration outlives the code that wrote it: the turns above write each key."""
    seen: dict[type, set[str]] = {
        AgentState: set(),
        Attempt: set(),
        Candidate: set(),
        ReplyRecord: set(),
        Turn: set(),
    }
    answered: list[Any] = []
    for name in TURNS:
        for values in run_turn(shop, name, answered):
            seen[AgentState] |= set(values)
            for a in values.get("attempts") or []:
                seen[Attempt] |= set(a)
                for c in a.get("candidates") or []:
                    seen[Candidate] |= set(c)
            seen[ReplyRecord] |= set(values.get("reply") or {})
            for t in values.get("turns") or []:
                seen[Turn] |= set(t)
    for a in answered:
        seen[Attempt] |= set(a)
    for td, keys in seen.items():
        assert keys == set(get_type_hints(td)), (
            f"{td.__name__}: never written {set(get_type_hints(td)) - keys}"
        )
