"""The text-to-SQL agent (sqlnb.agent) against real engines, with a scripted model.

Every test talks to a real database through the ``engine`` fixtures; the model is always
:class:`ScriptedChatModel`, which records each prompt it receives, so the tests assert on
what the model was shown as well as on how the turn ended.

- the reply protocol (``parse_reply``) and the per-dialect system prompts;
- a question answered and finalized, the read-only guard, the read-only session, data
  sharing, errors with hints, and conversation memory: on every engine;
- each routing rule of ``decide_next_step``: on SQLite and PostgreSQL;
- unrecoverable errors: a session killed between attempts, a missing privilege.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.outputs import ChatResult

from sqlnb import errors
from sqlnb.agent.models import ModelClient, ScriptedChatModel
from sqlnb.agent.prompts import DIALECT_NAMES, dialect_notes, format_attempt, system_prompt
from sqlnb.agent.protocol import parse_reply
from sqlnb.agent.runner import Agent, AskResult
from sqlnb.agent.settings import AgentSettings
from sqlnb.agent.state import STOP_REASONS
from sqlnb.display import ask_progress_line
from sqlnb.labels import STOP_REASONS as STOP_REASON_WORDS
from sqlnb.sql.format import pretty
from tests.engines import PG_HOST, PG_PORT

RULE_ENGINES = pytest.mark.engines(["sqlite", "postgresql"])  # the full rule matrix
SERVER_SESSIONS = pytest.mark.engines(["postgresql", "mysql", "redshift"])

ENGINE_NAMES = {
    "sqlite": "SQLite",
    "duckdb": "DuckDB",
    "postgresql": "PostgreSQL",
    "mysql": "MySQL",
    "snowflake": "Snowflake",
    "redshift": "Amazon Redshift",
}

# values stored in the seeded tables (tests/engines.py): with data sharing off, none of
# them may reach the model
# what AskResult.to_dict gives (sqlnb ask --json): the keys of every answer, of each attempt
ANSWER_KEYS = frozenset(
    {"status", "stop_reason", "sql", "iterations", "attempts", "columns", "rows", "questions", "usage"}
)
ATTEMPT_KEYS = frozenset({"sql", "ok", "error_kind", "error", "row_count"})
# the progress events (all but "context") of an answer corrected once: a failed query, the
# corrected one, the model's FINAL
CORRECTED_ONCE_EVENTS = ["reply", "executing", "attempt"] * 2 + ["reply", "stopped", "done"]
DATA_VALUES = ("Ada", "Grace", "Linus", "example.com", "99.99", "12.5", "paid")

COUNT_CUSTOMERS = "SELECT count(*) AS n FROM customers"
COUNT_ORDERS = "SELECT count(*) AS n FROM orders"
NAMES = "SELECT name FROM customers ORDER BY id"
BAD_COLUMN = "SELECT nope FROM customers"
BAD_TABLE = "SELECT * FROM no_such_table"
BAD_COLUMN_2 = "SELECT missing_col FROM orders"
BAD_COLUMN_3 = "SELECT id, wrong FROM customers"


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def sql(text: str) -> str:
    """A model reply proposing ``text`` in a fenced sql block."""
    return f"```sql\n{text}\n```"


@dataclass
class Run:
    """One ``Agent.ask`` with a scripted model: its result, the model, the events."""

    result: AskResult
    model: ScriptedChatModel
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def prompts(self) -> list[list[tuple[str, str]]]:
        return self.model.prompts

    def system(self, call: int = 0) -> str:
        role, content = self.prompts[call][0]
        assert role == "system"
        return content

    def user(self, call: int) -> str:
        """The last user message of model call ``call`` (0-based)."""
        role, content = self.prompts[call][-1]
        assert role == "user"
        return content

    def seen(self) -> str:
        """Everything the model was sent, all calls together."""
        return "\n".join(content for prompt in self.prompts for _, content in prompt)

    @property
    def attempts(self) -> list[dict[str, Any]]:
        return self.result.attempts


def ask_with(
    model: ScriptedChatModel,
    adapter,
    question: str,
    *,
    agent: Agent | None = None,
    connection: str = "shop",
    wrap: bool = True,
    **options: Any,
) -> Run:
    """Ask ``question`` on ``adapter`` with the scripted ``model`` (in a ``ModelClient``
    unless not ``wrap``), keeping the progress events."""
    events: list[dict[str, Any]] = []
    result = (agent or Agent()).ask(
        question,
        adapter,
        connection=connection,
        model=ModelClient(model) if wrap else model,
        on_event=events.append,
        **options,
    )
    return Run(result, model, events)


def ask(adapter, *replies: str, question: str = "How many customers are there?", **options: Any) -> Run:
    """Ask ``question`` on ``adapter`` with a model that gives ``replies`` in order."""
    return ask_with(ScriptedChatModel(replies=list(replies)), adapter, question, **options)


def outcome(run: Run) -> tuple:
    r = run.result
    return r.status, r.stop_reason, r.sql


def kinds(run: Run) -> list[str | None]:
    return [a["error_kind"] for a in run.attempts]


def lowered(names) -> list[str]:
    return [n.lower() for n in names]


@pytest.fixture
def db(seeded, connect_to):
    """A read-write connection to the module's seeded database (the agent never writes)."""
    return connect_to(seeded)


# ---------------------------------------------------------------------------
# the reply protocol
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        (sql("SELECT 1"), "SELECT 1"),
        (sql("SELECT 1;;"), "SELECT 1"),
        ("Try this:\n```SQL\nSELECT 1\n```\nthen this:\n```sql\nSELECT 2\n```", "SELECT 2"),
        ("```postgresql\nSELECT now()\n```", "SELECT now()"),
        ("```\nSELECT name FROM customers\n```", "SELECT name FROM customers"),
        ("```sql\nSELECT 1\n```\n```python\nprint('x')\n```", "SELECT 1"),
        ("```\nWITH t AS (SELECT 1 AS x) SELECT x FROM t\n```", "WITH t AS (SELECT 1 AS x) SELECT x FROM t"),
        ("```sql\nSELECT 3", "SELECT 3"),  # an unterminated fence still holds the query
        ("SELECT name FROM customers;", "SELECT name FROM customers"),
        ("  select *\n  from orders\n", "select *\n  from orders"),
        ("WITH t AS (SELECT 1 AS x) SELECT x FROM t", "WITH t AS (SELECT 1 AS x) SELECT x FROM t"),
        (
            "with recursive r(n) as (select 1 union all select n + 1 from r where n < 3) select n from r",
            "with recursive r(n) as (select 1 union all select n + 1 from r where n < 3) select n from r",
        ),
        ("SELECT 1\nFINAL", "SELECT 1"),
    ],
)
def test_reply_proposes_sql(text, expected):
    assert parse_reply(text).sql == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "I am not sure which table holds that.",
        "Here is the query: SELECT * FROM customers",
        "You could run\nSELECT count(*) FROM customers\nto find out.",
        "```python\nprint('SELECT 1')\n```",
        "```\nprint(1)\n```",  # an untagged fence counts only when it holds a query
        "With the last result the question is answered.",  # prose, not a WITH statement
    ],
)
def test_reply_without_sql(text):
    reply = parse_reply(text)
    assert reply.sql is None and reply.clarify is None


@pytest.mark.parametrize(
    "text",
    [
        "FINAL",
        "final",
        "Final.",
        "**FINAL**",
        "__FINAL__",
        "`FINAL`",
        "FINAL!",
        "  FINAL  ",
        "> FINAL",
        "## Final",
        "The result answers the question.\n\n**Final**",
    ],
)
def test_final_variants(text):
    reply = parse_reply(text)
    assert reply.final and reply.sql is None and reply.kind == "final"


@pytest.mark.parametrize(
    "text",
    [
        "The result is final.",
        "FINAL answer: 3 customers",
        "```sql\nSELECT 1\nFINAL\n```",  # inside a sql block: not a FINAL line
        "```sql\nSELECT 1\n-- FINAL\n```",
        "```\nFINAL\n```",
    ],
)
def test_final_must_be_a_line_of_its_own_outside_sql(text):
    assert not parse_reply(text).final


def test_final_with_new_sql():
    reply = parse_reply("Corrected:\n```sql\nSELECT 2\n```\n**FINAL**")
    assert (reply.sql, reply.final, reply.kind) == ("SELECT 2", True, "final_sql")
    # prose starting with "With" is no SQL, so this is a plain FINAL
    reply = parse_reply("With that result the question is answered.\nFINAL")
    assert (reply.sql, reply.final, reply.kind) == (None, True, "final")


@pytest.mark.parametrize(
    "text, questions",
    [
        ("CLARIFY: Which year do you mean?", ["Which year do you mean?"]),
        (
            "CLARIFY:\n- Which year do you mean?\n- Only paid orders?",
            ["Which year do you mean?", "Only paid orders?"],
        ),
        (
            "clarify:\n1. Which year?\n2) Which region?\n* Paid only?\n• Net or gross?",
            ["Which year?", "Which region?", "Paid only?", "Net or gross?"],
        ),
        ("**CLARIFY:** Which year?\n- Paid only?", ["Which year?", "Paid only?"]),
        ("**CLARIFY**: Which year?", ["Which year?"]),
        ("  CLARIFY:\n\n  - Which year?\n\n", ["Which year?"]),
    ],
)
def test_clarify(text, questions):
    reply = parse_reply(text)
    assert reply.clarify == questions and reply.kind == "clarify"


def test_clarify_wins_over_sql_and_must_come_first():
    reply = parse_reply("CLARIFY: Which year?\n" + sql("SELECT 1") + "\nFINAL")
    assert reply.kind == "clarify"
    assert parse_reply("I need to know more.\nCLARIFY: Which year?").clarify is None


# ---------------------------------------------------------------------------
# system prompts
# ---------------------------------------------------------------------------

DIALECT_NEEDLES = {
    "sqlite": ["strftime", "GROUP_CONCAT"],
    "duckdb": ["QUALIFY", "GROUP BY ALL"],
    "postgres": ["ILIKE", "DISTINCT ON"],
    "mysql": ["backticks", "GROUP_CONCAT"],
    "snowflake": ["QUALIFY", "UPPER case"],
    "redshift": ["LISTAGG", "DISTINCT ON"],
}


@pytest.mark.parametrize("dialect", sorted(DIALECT_NEEDLES))
def test_system_prompt_per_dialect(dialect):
    schema = "CREATE TABLE customers (\n  id integer PRIMARY KEY\n);"
    prompt = system_prompt(dialect, schema, max_iterations=7, failure_cutoff=2)
    assert DIALECT_NAMES[dialect] in prompt
    assert dialect_notes(dialect) in prompt
    for needle in DIALECT_NEEDLES[dialect]:
        assert needle in prompt, needle
    for other in DIALECT_NEEDLES:  # only its own notes
        if dialect_notes(other) != dialect_notes(dialect):
            assert dialect_notes(other) not in prompt
    # the reply protocol
    for needle in ("```sql", "FINAL", "CLARIFY:"):
        assert needle in prompt, needle
    # the termination rules, with this session's limits
    assert re.search(r"\b7 replies", prompt)
    assert re.search(r"\b2 failed quer", prompt)
    assert "same query" in prompt
    assert schema in prompt
    assert not re.search(r"\$\{?[a-z_]+", prompt), "a template placeholder was left"


def test_system_prompt_aliases_and_empty_schema():
    assert system_prompt("postgresql", "") == system_prompt("postgres", "")
    assert system_prompt("mariadb", "x") == system_prompt("mysql", "x")
    assert "(no tables)" in system_prompt("sqlite", "  ")
    assert re.search(r"\b5 replies", system_prompt("sqlite", ""))  # the defaults
    assert re.search(r"\b3 failed quer", system_prompt("sqlite", ""))


# ---------------------------------------------------------------------------
# every engine: a question answered and finalized
# ---------------------------------------------------------------------------

PER_CUSTOMER = (
    "SELECT c.name, count(*) AS n_orders\nFROM customers c\n"
    "JOIN orders o ON o.customer_id = c.id\nGROUP BY c.name\nORDER BY c.name"
)


def test_question_answered_and_finalized(engine, db):
    question = "How many orders did each customer make?"
    run = ask(
        db,
        "Let me look at the orders first.\n" + sql("SELECT id, amount FROM orders ORDER BY id"),
        sql(PER_CUSTOMER) + "\nThis counts the orders per customer.",
        "**FINAL**",
        question=question,
        connection="shop",
    )
    r = run.result
    assert outcome(run) == ("success", "finalized", PER_CUSTOMER)
    assert r.ok and r.iterations == 3 and r.model_error is None
    assert [a["ok"] for a in r.attempts] == [True, True]
    assert [a["row_count"] for a in r.attempts] == [3, 2]
    assert [a["n"] for a in r.attempts] == [1, 2]

    # the final result
    assert lowered(r.columns) == ["name", "n_orders"]
    assert r.rows() == [["Ada", 2], ["Grace", 1]]
    df = r.df
    assert isinstance(df, pd.DataFrame) and df.shape == (2, 2)
    assert lowered(df.columns) == ["name", "n_orders"]
    assert list(df.iloc[:, 0]) == ["Ada", "Grace"] and list(df.iloc[:, 1]) == [2, 1]

    # the first prompt: this engine's system prompt with the schema, then the question
    assert [role for role, _ in run.prompts[0]] == ["system", "user"]
    system = run.system(0)
    assert ENGINE_NAMES[engine] in system
    assert dialect_notes(db.dialect) in system
    assert "```sql" in system and "FINAL" in system and "CLARIFY:" in system
    assert "customers" in system.lower() and "customer_id" in system.lower()
    assert r.context is not None and r.context.complete and r.context.text in system
    assert question in run.user(0)
    # later prompts restate the question and show each attempt with its result
    second = run.user(1)
    assert question in second and "SELECT id, amount FROM orders ORDER BY id" in second
    assert format_attempt(r.attempts[0]) in second
    assert "The query ran: 3 rows." in second and "10 | 12.5" in second
    third = run.user(2)
    assert format_attempt(r.attempts[1]) in third and "Ada | 2" in third
    for a in r.attempts:
        for name, typ in a["columns"]:
            assert (f"{name} ({typ})" if typ else name) in third

    # to_dict: plain, JSON-ready data
    d = r.to_dict()
    assert ANSWER_KEYS.issubset(d), ANSWER_KEYS - set(d)
    assert (d["status"], d["stop_reason"], d["sql"], d["iterations"]) == (
        "success",
        "finalized",
        PER_CUSTOMER,
        3,
    )
    assert [set(a) for a in d["attempts"]] == [ATTEMPT_KEYS] * 2
    assert d["attempts"][1] == {
        "sql": PER_CUSTOMER,
        "ok": True,
        "error_kind": None,
        "error": None,
        "row_count": 2,
    }
    assert lowered(d["columns"]) == ["name", "n_orders"] and d["rows"] == [["Ada", 2], ["Grace", 1]]
    assert d["questions"] == []
    assert d["usage"]["calls"] == 3 and d["usage"]["input_tokens"] > 0
    assert d["dialect"] == db.dialect and d["connection"] == "shop"
    json.dumps(d)

    # the cell that reruns the final SQL
    cell = r.cell_source()
    lines = cell.splitlines()
    assert lines[0] == "%%sql --conn shop"
    assert lines[1].startswith("-- ") and question in lines[1]
    assert "scripted" in lines[1] and "attempts: 2" in lines[1]
    assert "\n".join(lines[2:]) == pretty(PER_CUSTOMER, db.dialect)  # laid out, the same query
    assert db.execute(PER_CUSTOMER).rows == [("Ada", 2), ("Grace", 1)]

    # progress events, in order
    types = [e["type"] for e in run.events if e["type"] != "context"]
    assert types == CORRECTED_ONCE_EVENTS


# ---------------------------------------------------------------------------
# every engine: the read-only guard and the read-only session
# ---------------------------------------------------------------------------


def orders_snapshot(env) -> list[tuple]:
    return [
        tuple(str(v) for v in row)
        for row in env.admin_query("SELECT id, customer_id, amount, status FROM orders ORDER BY id")
    ]


def test_guard_refuses_a_write_before_the_database_sees_it(engine, fresh, connect_to):
    before = fresh.fingerprint()
    conn = connect_to(fresh)
    assert not conn.options.readonly  # a connection that may write
    run = ask(
        conn,
        sql("DELETE FROM customers"),
        sql(COUNT_CUSTOMERS),
        "FINAL",
        question="Remove all customers, then count them",
    )
    first = run.attempts[0]
    assert first["error_kind"] == "read_only" and not first["ok"]
    assert first["sql"] == "DELETE FROM customers"
    assert "refused before reaching the database" in first["error"]
    assert first["row_count"] is None
    assert "(read only)" in run.user(1) and format_attempt(first) in run.user(1)
    assert outcome(run) == ("success", "finalized", COUNT_CUSTOMERS)
    assert run.result.rows() == [[3]]
    conn.close()
    assert fresh.fingerprint() == before


WRITES = [
    "DROP TABLE orders",
    "UPDATE customers SET name = 'Mallory' WHERE id = 1",
    "INSERT INTO customers (id, name) VALUES (9, 'Eve')",
    "DELETE FROM orders WHERE amount > 10",
    "SELECT 1 AS one; DELETE FROM customers",
    "CREATE TABLE stolen AS SELECT * FROM customers",
    "TRUNCATE TABLE orders",
    "ALTER TABLE customers ADD COLUMN nickname VARCHAR(20)",
    "WITH gone AS (DELETE FROM orders RETURNING id) SELECT count(*) FROM gone",
]


def test_no_write_reaches_a_read_write_connection(engine, fresh, connect_to):
    before, orders_before = fresh.fingerprint(), orders_snapshot(fresh)
    conn = connect_to(fresh)
    replies = [sql(w) for w in WRITES]
    replies.append(sql("DELETE FROM orders") + "\nFINAL")  # a FINAL carrying a write
    replies += [sql(COUNT_ORDERS), "FINAL"]
    run = ask(
        conn,
        *replies,
        question="Clean up the orders",
        max_iterations=len(replies),
        failure_cutoff=len(replies),
    )
    assert kinds(run) == ["read_only"] * (len(WRITES) + 1) + [None]
    assert [a["sql"] for a in run.attempts[:-1]] == WRITES + ["DELETE FROM orders"]
    assert outcome(run) == ("success", "finalized", COUNT_ORDERS)
    assert run.result.rows() == [[3]]
    conn.close()
    assert fresh.fingerprint() == before
    assert orders_snapshot(fresh) == orders_before
    catalog = connect_to(fresh).catalog()
    assert sorted(lowered(t.name for t in catalog.tables)) == ["big_orders", "customers", "orders"]
    assert lowered(c.name for c in catalog.find("customers").columns) == ["id", "name", "email", "created_at"]


def test_refused_writes_count_as_failures(engine, fresh, connect_to):
    before = fresh.fingerprint()
    conn = connect_to(fresh)
    run = ask(conn, sql(WRITES[0]), sql(WRITES[1]), sql(WRITES[2]), sql(COUNT_ORDERS))
    assert kinds(run) == ["read_only"] * 3
    assert outcome(run) == ("failed", "consecutive_failures", None)
    assert run.model.remaining == 1
    conn.close()
    assert fresh.fingerprint() == before


# A view over a function that deletes. On PostgreSQL the guard reads what a view calls
# (pg_depend) and refuses a volatile function, so the view calls a function its owner
# declared STABLE, which calls the deleting one from its body, where no catalog shows it.
_PG_WRITING = [
    "CREATE FUNCTION wipe() RETURNS int LANGUAGE sql AS $$ DELETE FROM orders; SELECT 1 $$",
    "CREATE FUNCTION calm() RETURNS int STABLE LANGUAGE plpgsql AS $$ BEGIN RETURN wipe(); END $$",
    "CREATE VIEW wiping AS SELECT calm() AS done",
]
WRITING_FUNCTION = {
    "postgresql": _PG_WRITING,
    "redshift": _PG_WRITING,
    "mysql": [
        "CREATE FUNCTION wipe() RETURNS INT MODIFIES SQL DATA NOT DETERMINISTIC "
        "BEGIN DELETE FROM orders; RETURN 1; END",
        "CREATE VIEW wiping AS SELECT wipe() AS done",
    ],
}


@SERVER_SESSIONS
def test_read_only_session_stops_a_write_the_guard_cannot_see(engine, fresh, connect_to):
    """A SELECT from a view over a function that deletes passes the guard (which cannot
    see into a function's body); the statement still runs in a read-only session, which
    refuses the write: a refused write, not a lost cause."""
    fresh.admin(WRITING_FUNCTION[engine])
    orders_before = orders_snapshot(fresh)
    conn = connect_to(fresh)
    assert not conn.options.readonly
    run = ask(
        conn,
        sql("SELECT done FROM wiping"),
        sql(COUNT_ORDERS),
        "FINAL",
        question="How many orders are there?",
    )
    first = run.attempts[0]
    assert first["error_kind"] == "read_only" and not first["ok"]
    assert "read-only session" in first["error"]
    assert re.search(r"read[- ]only transaction", first["error"], re.I)
    assert format_attempt(first) in run.user(1)
    assert outcome(run) == ("success", "finalized", COUNT_ORDERS)
    assert run.result.rows() == [[3]]
    assert orders_snapshot(fresh) == orders_before


@RULE_ENGINES
def test_every_statement_the_agent_runs_is_read_only(engine, db, monkeypatch):
    """Attempts, sample values and value hints all go through execute(readonly=True)."""
    calls: list[tuple[str, Any]] = []
    real = db.execute

    def spy(statement, *args, **kwargs):
        calls.append((statement, kwargs.get("readonly")))
        return real(statement, *args, **kwargs)

    monkeypatch.setattr(db, "execute", spy)
    empty = "SELECT id FROM customers WHERE name = 'Gracie'"
    run = ask(db, sql(empty), sql(NAMES), "FINAL")
    assert outcome(run) == ("success", "finalized", NAMES)
    statements = [s for s, _ in calls]
    assert empty in statements and NAMES in statements
    assert len(calls) > 2  # sample values and the value hint ran too
    assert all(readonly is True for _, readonly in calls), calls


# ---------------------------------------------------------------------------
# every engine: what the model is shown
# ---------------------------------------------------------------------------

COLUMN_ERROR = {
    "sqlite": "no such column",
    "duckdb": "not found",
    "postgresql": "does not exist",
    "mysql": "unknown column",
    "snowflake": "not found",
    "redshift": "does not exist",
}


def test_errors_and_empty_results_come_back_with_hints(engine, db):
    run = ask(
        db,
        sql("SELECT nme FROM customers"),
        sql("SELECT status FROM customers"),
        sql("SELECT * FROM customer"),
        sql("SELECT id FROM customers WHERE name = 'Gracie'"),
        sql("SELECT id FROM customers WHERE name = 'Grace'"),
        "FINAL",
        question="What is Gracie's customer id?",
        failure_cutoff=5,
        max_iterations=6,
    )
    a = run.attempts
    assert kinds(run) == ["column_not_found", "column_not_found", "table_not_found", None, None]
    # the engine's own message, classified, with hints from the catalog
    assert COLUMN_ERROR[engine] in a[0]["error"].lower() and "nme" in a[0]["error"].lower()
    assert "closest: name" in a[0]["hint"].lower()
    assert "columns of the tables used: customers(id, name, email, created_at)" in a[0]["hint"].lower()
    assert "column status exists in: orders" in a[1]["hint"].lower()
    assert "no table is named customer; closest: customers" in a[2]["hint"].lower()
    # a string filter that matched nothing: the existing values closest to it
    assert a[3]["ok"] and a[3]["row_count"] == 0
    assert "customers.name has no 'gracie'" in a[3]["hint"].lower()
    assert "closest values: 'Grace'" in a[3]["hint"]
    assert a[4]["row_count"] == 1 and run.result.rows() == [[2]]
    assert outcome(run) == ("success", "finalized", "SELECT id FROM customers WHERE name = 'Grace'")
    # all of it reached the model: kind, engine message, hint
    last = run.user(5)
    for attempt in a:
        assert format_attempt(attempt) in last
    assert "The query failed (column not found): " + a[0]["error"] in last
    assert "The query failed (table not found): " + a[2]["error"] in last
    assert "Hint: " + a[3]["hint"] in last and "No rows matched." in last


SHARING_SCRIPT = [
    sql("SELECT nme FROM customers"),
    sql("SELECT name, email FROM customers ORDER BY id"),
    sql("SELECT id FROM customers WHERE name = 'Gracie'"),  # empty: no value hint
    sql("SELECT CAST(name AS INTEGER) AS n FROM customers"),  # engines quote the bad value
    sql("SELECT * FROM customer"),
    sql("SELECT amount, status FROM orders ORDER BY id"),
    "FINAL",
]
CAST_FAILS = {"duckdb", "postgresql", "snowflake", "redshift"}  # SQLite and MySQL give 0


def test_no_data_reaches_the_model_when_sharing_is_off(engine, db):
    private = Agent(settings=AgentSettings(share_data=False))
    run = ask(
        db,
        *SHARING_SCRIPT,
        agent=private,
        question="Show the order amounts",
        max_iterations=len(SHARING_SCRIPT),
    )
    assert outcome(run) == ("success", "finalized", "SELECT amount, status FROM orders ORDER BY id")
    seen = run.seen()
    for value in DATA_VALUES:
        assert value not in seen, value
    assert "e.g." not in run.system(0)  # no sample values in the schema
    bad_column, names, empty, cast, bad_table, _ = run.attempts
    # errors keep the names they are about, and the hints still come
    assert "nme" in bad_column["error"].lower() and "closest: name" in bad_column["hint"].lower()
    assert "customer" in bad_table["error"].lower()
    assert "closest: customers" in bad_table["hint"].lower()
    assert "(value not shown)" not in bad_column["error"] + bad_table["error"]
    # a value quoted in an error message is masked
    if engine in CAST_FAILS:
        assert cast["error_kind"] == "type_mismatch" and "(value not shown)" in cast["error"]
    else:
        assert cast["ok"] and cast["preview"] == []
    # rows are counted and described, not shown
    assert names["row_count"] == 3 and names["preview"] == []
    assert lowered(c for c, _ in names["columns"]) == ["name", "email"]
    assert "The query ran: 3 rows." in run.user(2) and "rows are not shown" in run.user(2)
    assert empty["row_count"] == 0 and empty["hint"] is None
    # the user still gets the data
    assert run.result.rows() == [[12.5, "paid"], [99.99, "new"], [5, "paid"]]

    # the same script with sharing on shows rows, samples, values and hints (so the checks
    # above can fail)
    shared = ask(db, *SHARING_SCRIPT, question="Show the order amounts", max_iterations=len(SHARING_SCRIPT))
    seen = shared.seen()
    for value in ("Ada", "Grace", "example.com", "paid"):
        assert value in seen, value
    assert "e.g. 'Ada'" in shared.system(0)  # sample values in the schema
    assert "closest values: 'Grace'" in shared.attempts[2]["hint"]
    if engine in CAST_FAILS:
        assert "Ada" in shared.attempts[3]["error"]


ANALYZE = {"sqlite": "ANALYZE", "postgresql": "ANALYZE tickets", "duckdb": "ANALYZE"}


@pytest.mark.engines(["sqlite", "duckdb", "postgresql"])
def test_a_column_of_codes_shows_every_value_in_the_schema(engine, fresh, connect_to):
    """A column that repeats a few short values (codes, categories) shows them all, so that
    a code the question names in words is in the context even when the first rows lack it;
    a table larger than the rows read is looked up with one DISTINCT query when the
    catalog counts it small, and a column with many values keeps three examples."""
    rows = [
        f"({i}, '{'STD' if i % 2 else 'VIP'}', 'note {i}', '{'FT' if i % 3 else 'PT'}')"
        for i in range(1, 231)
    ]
    rows += ["(231, 'CMP', 'note 231', 'FT')", "(232, 'CMP', 'note 232', 'FT')"]  # past the rows read
    fresh.admin(
        [
            "CREATE TABLE tickets (id INTEGER PRIMARY KEY, kind VARCHAR(10), note VARCHAR(40), "
            "shift VARCHAR(2))",
            f"INSERT INTO tickets VALUES {', '.join(rows)}",
            ANALYZE[engine],
        ]
    )
    conn = connect_to(fresh)
    agent = Agent()
    if conn.catalog().find("tickets").row_count is None:
        pytest.fail(f"{engine}: the catalog counts no rows after {ANALYZE[engine]}")
    text = agent.schema_context("How many complimentary tickets?", conn).text
    assert "values: 'STD', 'VIP', 'CMP'" in text  # CMP only past the first 200 rows
    assert "values: 'FT', 'PT'" in text
    assert re.search(r"note .*e\.g\. 'note 1', 'note 2', 'note 3'", text)
    # the customers' statuses: three orders, two values, not repeated enough to be codes
    assert "values: 'paid'" not in text and "e.g. " in text
    # without data sharing, no values at all
    assert "values:" not in agent.schema_context("x", conn, AgentSettings(share_data=False)).text


@RULE_ENGINES
def test_preview_rows_and_row_cap(engine, db):
    every_pair = "SELECT c.name, o.id FROM customers c CROSS JOIN orders o ORDER BY c.id, o.id"
    run = ask(db, sql(every_pair), "FINAL")
    a = run.attempts[0]
    assert a["row_count"] == 9 and not a["truncated"]
    assert len(a["preview"]) == 5 and a["preview"][:2] == [["Ada", 10], ["Ada", 11]]
    shown = run.user(1)
    assert "The query ran: 9 rows." in shown and "First 5 rows:" in shown
    assert "Grace | 11" in shown and "Linus" not in shown  # rows 6-9 are not shown
    assert len(run.result.rows(20)) == 9  # the user gets every row

    run = ask(db, sql(every_pair), "FINAL", settings=AgentSettings(preview_rows=2))
    assert run.attempts[0]["preview"] == [["Ada", 10], ["Ada", 11]]
    assert "First 2 rows:" in run.user(1) and "Ada | 12" not in run.user(1)

    run = ask(db, sql(every_pair), "FINAL", agent=Agent(settings=AgentSettings(row_cap=4)))
    a = run.attempts[0]
    assert a["row_count"] == 4 and a["truncated"] and format_attempt(a) in run.user(1)
    assert "more rows were not fetched" in run.user(1)
    assert run.result.df.shape == (4, 2)


@RULE_ENGINES
def test_value_hints_can_be_turned_off(engine, db):
    empty = "SELECT id FROM customers WHERE name = 'Gracie'"
    run = ask(db, sql(empty), "FINAL", settings=AgentSettings(value_hints=False))
    assert run.attempts[0]["row_count"] == 0 and run.attempts[0]["hint"] is None
    assert "Grace'" not in run.user(1)


# ---------------------------------------------------------------------------
# every engine: conversation memory
# ---------------------------------------------------------------------------


def test_memory_per_connection(engine, db):
    agent = Agent()
    first = ask(
        db,
        sql(COUNT_CUSTOMERS),
        "FINAL",
        agent=agent,
        connection="shop",
        question="How many customers are there?",
    )
    assert first.result.ok and "Earlier in this conversation" not in first.user(0)

    second = ask(
        db, sql(COUNT_ORDERS), "FINAL", agent=agent, connection="shop", question="And how many orders?"
    )
    prompt = second.user(0)
    assert "How many customers are there?" in prompt and COUNT_CUSTOMERS in prompt
    assert prompt.index("How many customers are there?") < prompt.index("And how many orders?")
    assert [t["question"] for t in agent.history("shop")] == [
        "How many customers are there?",
        "And how many orders?",
    ]
    assert [t["sql"] for t in agent.history("shop")] == [COUNT_CUSTOMERS, COUNT_ORDERS]

    # another connection name is another conversation, even on the same database
    other = ask(
        db, sql(COUNT_ORDERS), "FINAL", agent=agent, connection="warehouse", question="How many orders?"
    )
    assert "How many customers are there?" not in other.seen()
    assert COUNT_CUSTOMERS not in other.seen()

    # reset forgets one connection's conversation, not the others
    agent.reset("shop")
    assert agent.history("shop") == []
    assert len(agent.history("warehouse")) == 1
    after = ask(db, sql(COUNT_ORDERS), "FINAL", agent=agent, connection="shop", question="How many orders?")
    assert "How many customers are there?" not in after.seen()
    assert "And how many orders?" not in after.seen()


@RULE_ENGINES
def test_reset_without_a_name_forgets_every_conversation(engine, db):
    agent = Agent()
    for name in ("shop", "warehouse"):
        ask(
            db,
            sql(COUNT_CUSTOMERS),
            "FINAL",
            agent=agent,
            connection=name,
            question=f"How many customers in {name}?",
        )
        assert len(agent.history(name)) == 1
    agent.reset()
    assert agent.history("shop") == [] and agent.history("warehouse") == []
    run = ask(db, sql(COUNT_ORDERS), "FINAL", agent=agent, connection="shop", question="How many orders?")
    assert "How many customers in shop?" not in run.seen()


@RULE_ENGINES
def test_clarification_is_remembered(engine, db):
    agent = Agent()
    first = ask(
        db, "CLARIFY: Which year do you mean?", agent=agent, question="How many orders were there last year?"
    )
    assert first.result.status == "needs_clarification"
    second = ask(
        db,
        sql("SELECT count(*) AS n FROM orders WHERE ordered_on >= '2024-01-01'"),
        "FINAL",
        agent=agent,
        question="2024",
    )
    prompt = second.user(0)
    assert "How many orders were there last year?" in prompt
    assert "Which year do you mean?" in prompt
    assert second.result.ok and second.result.rows() == [[3]]
    # the answer stands for the whole question: in its cell and in the memory
    assert second.result.full_question == "How many orders were there last year? (2024)"
    assert "-- sqlnb ask: How many orders were there last year? (2024) |" in second.result.cell_source()
    assert first.result.full_question == first.result.question
    third = ask(db, sql(COUNT_ORDERS), "FINAL", agent=agent, question="And all years?")
    assert third.result.full_question == "And all years?"


@RULE_ENGINES
def test_chat_rendering_shows_the_history(engine, db):
    run = ask(db, sql(COUNT_CUSTOMERS), "FINAL", settings=AgentSettings(rendering="chat"))
    assert outcome(run) == ("success", "finalized", COUNT_CUSTOMERS)
    roles = [role for role, _ in run.prompts[1]]
    assert roles == ["system", "user", "assistant", "user"]
    assert run.prompts[1][1][1] == "How many customers are there?"
    assert run.prompts[1][2][1] == sql(COUNT_CUSTOMERS)
    assert run.prompts[1][3][1].startswith("Result of your query:")
    assert format_attempt(run.attempts[0]) in run.prompts[1][3][1]


# ---------------------------------------------------------------------------
# decide_next_step, rule by rule (SQLite and PostgreSQL)
# ---------------------------------------------------------------------------


@RULE_ENGINES
def test_clarify_ends_the_turn_with_questions(engine, db):
    run = ask(
        db,
        "CLARIFY:\n- Which year do you mean?\n- Only paid orders?",
        sql(COUNT_ORDERS),
        question="How many orders last year?",
    )
    r = run.result
    assert (r.status, r.stop_reason, r.sql) == ("needs_clarification", "clarification", None)
    assert r.questions == ["Which year do you mean?", "Only paid orders?"]
    assert r.attempts == [] and r.iterations == 1 and run.model.remaining == 1
    assert r.to_dict()["questions"] == r.questions
    assert r.cell_source() is None and r.df.empty and not r.ok


@RULE_ENGINES
def test_clarify_after_a_result_still_asks(engine, db):
    run = ask(db, sql(COUNT_ORDERS), "**CLARIFY:** Do you mean paid orders only?")
    r = run.result
    # the successful query stays available as the best answer so far
    assert (r.status, r.stop_reason, r.sql) == ("needs_clarification", "clarification", COUNT_ORDERS)
    assert r.cell_source().endswith("\n" + pretty(COUNT_ORDERS, db.dialect) + "\n")
    assert int(r.df.iloc[0, 0]) == 3
    assert r.questions == ["Do you mean paid orders only?"]
    assert [a["ok"] for a in r.attempts] == [True]


@RULE_ENGINES
@pytest.mark.parametrize(
    "reply",
    [
        "CLARIFY: How many customers are there?",  # the user's question, echoed
        "CLARIFY: how many customers are there",
        "**CLARIFY:** Question: How many customers are there?",
        "CLARIFY:",  # asks nothing
        "CLARIFY:\n- Which customers?\n" + sql("SELECT count(*) FROM customers"),  # carries SQL
        "CLARIFY: SELECT count(*) FROM customers",
        "CLARIFY: Write one SQL query that answers the question, in a ```sql block.",  # the prompt
    ],
)
def test_a_clarification_that_asks_nothing_is_a_failed_turn(engine, db, reply):
    run = ask(db, reply, sql(COUNT_CUSTOMERS), "FINAL")
    assert outcome(run) == ("success", "finalized", COUNT_CUSTOMERS)
    assert run.result.iterations == 3 and run.result.questions == []
    assert [a["sql"] for a in run.attempts] == [COUNT_CUSTOMERS]  # SQL in it never ran
    # the next prompt tells the model why, and what to do instead
    assert "not a question for the user" in run.user(1)
    assert "not a question for the user" not in run.user(2)  # only right after it


@RULE_ENGINES
@pytest.mark.parametrize(
    "reply",
    [
        "CLARIFY: The query ran: 1 row.",
        "CLARIFY: Attempt 2:",
        "CLARIFY:\nAttempt 1:\n" + sql(COUNT_CUSTOMERS) + "\nThe query ran: 1 row.",
        "CLARIFY: Columns: n",
        "CLARIFY: Check the last result against the question: the right rows, columns, order and filters.",
    ],
)
def test_a_clarification_repeating_the_feedback_is_a_failed_turn(engine, db, reply):
    run = ask(db, sql(COUNT_CUSTOMERS), reply, "FINAL")
    assert outcome(run) == ("success", "finalized", COUNT_CUSTOMERS)
    assert run.result.iterations == 3 and len(run.attempts) == 1
    assert "not a question for the user" in run.user(2)


@RULE_ENGINES
def test_a_clarification_keeps_only_its_real_questions(engine, db):
    run = ask(
        db,
        sql(COUNT_ORDERS),
        "CLARIFY:\n- The query ran: 1 row.\n- Do you mean paid orders only?",
        question="How many orders?",
    )
    r = run.result
    assert (r.status, r.stop_reason) == ("needs_clarification", "clarification")
    assert r.questions == ["Do you mean paid orders only?"]


@RULE_ENGINES
def test_clarifications_that_ask_nothing_never_end_as_one(engine, db):
    run = ask(db, "CLARIFY: How many customers are there?", "CLARIFY:", max_iterations=2)
    assert outcome(run) == ("failed", "max_iterations", None)
    assert run.result.questions == [] and run.result.iterations == 2
    # after a successful query, its result stays the answer
    run = ask(db, sql(COUNT_CUSTOMERS), "CLARIFY: The query ran: 1 row.", max_iterations=2)
    assert outcome(run) == ("success", "max_iterations", COUNT_CUSTOMERS)


@RULE_ENGINES
@pytest.mark.parametrize("reply", ["FINAL", "**FINAL**", "final."])
def test_final_before_anything_ran_is_ignored(engine, db, reply):
    run = ask(db, reply, sql(COUNT_CUSTOMERS))
    assert outcome(run) == ("failed", "no_sql", None)
    assert run.result.attempts == [] and run.result.iterations == 1


@RULE_ENGINES
def test_final_after_a_success(engine, db):
    run = ask(db, sql(COUNT_CUSTOMERS), "Final.")
    assert outcome(run) == ("success", "finalized", COUNT_CUSTOMERS)
    assert run.result.iterations == 2 and len(run.attempts) == 1


@RULE_ENGINES
def test_final_with_new_sql_is_no_finalisation_before_the_model_saw_the_result(engine, db):
    # a first reply that is SQL and FINAL at once: the SQL runs, the model is shown its
    # result, and only its next FINAL finalises
    run = ask(db, sql(COUNT_ORDERS) + "\nFINAL", "FINAL")
    assert outcome(run) == ("success", "finalized", COUNT_ORDERS)
    assert run.result.iterations == 2 and len(run.attempts) == 1 and run.model.remaining == 0
    assert "The query ran: 1 row." in run.user(1) and COUNT_ORDERS in run.user(1)
    # a corrected query with FINAL, after a result: the same
    run = ask(db, sql(COUNT_CUSTOMERS), "Corrected:\n" + sql(COUNT_ORDERS) + "\nFINAL", "FINAL")
    assert outcome(run) == ("success", "finalized", COUNT_ORDERS)
    assert [a["sql"] for a in run.attempts] == [COUNT_CUSTOMERS, COUNT_ORDERS]
    assert run.result.iterations == 3 and run.result.rows() == [[3]]
    assert "Attempt 2:" in run.user(2)
    # having seen the result, the model may still correct it
    run = ask(db, sql(COUNT_ORDERS) + "\nFINAL", sql(COUNT_CUSTOMERS), "FINAL")
    assert outcome(run) == ("success", "finalized", COUNT_CUSTOMERS)
    assert run.result.iterations == 3
    # no model call left to review it: the query ran, but nothing was finalised
    run = ask(db, sql(COUNT_ORDERS) + "\nFINAL", "unused", max_iterations=1)
    assert outcome(run) == ("success", "max_iterations", COUNT_ORDERS)
    assert run.model.remaining == 1


@RULE_ENGINES
def test_final_repeating_the_last_sql_does_not_run_it_again(engine, db):
    run = ask(db, sql(NAMES), sql("select  NAME\n  from CUSTOMERS order by ID;") + "\nFINAL")
    assert outcome(run) == ("success", "finalized", NAMES)
    assert len(run.attempts) == 1 and run.result.iterations == 2


@RULE_ENGINES
def test_final_with_new_sql_that_fails_goes_on(engine, db):
    run = ask(db, sql(COUNT_CUSTOMERS), sql(BAD_COLUMN) + "\nFINAL", "FINAL", sql(COUNT_ORDERS), "FINAL")
    # FINAL after a failure finalizes nothing: the model is asked again
    assert [a["ok"] for a in run.attempts] == [True, False, True]
    assert outcome(run) == ("success", "finalized", COUNT_ORDERS)
    assert run.result.iterations == 5 and len(run.prompts) == 5


@RULE_ENGINES
def test_final_after_only_failures_cannot_finalize(engine, db):
    run = ask(db, sql(BAD_COLUMN), "FINAL", max_iterations=2)
    assert outcome(run) == ("failed", "max_iterations", None)
    assert run.result.iterations == 2


@RULE_ENGINES
def test_same_sql_as_the_last_attempt_ends_the_turn(engine, db):
    run = ask(db, sql(NAMES), sql("select   NAME\nfrom customers\nORDER  BY id;"), sql(COUNT_ORDERS))
    assert outcome(run) == ("success", "duplicate_sql", NAMES)
    assert len(run.attempts) == 1 and run.result.iterations == 2
    assert run.model.remaining == 1
    # repeating a failed query: nothing succeeded
    run = ask(db, sql(BAD_COLUMN), sql(BAD_COLUMN.lower() + " ;"), sql(COUNT_ORDERS))
    assert outcome(run) == ("failed", "duplicate_sql", None)
    assert kinds(run) == ["column_not_found"]


@RULE_ENGINES
def test_different_sql_is_not_a_duplicate(engine, db):
    lower = "SELECT id FROM customers WHERE name = 'ada'"
    upper = "SELECT id FROM customers WHERE name = 'Ada'"
    run = ask(db, sql(lower), sql(upper), sql(lower), "FINAL")  # literals differ; A B A
    assert [a["sql"] for a in run.attempts] == [lower, upper, lower]
    assert outcome(run) == ("success", "finalized", lower)
    assert run.result.rows() == [] and run.result.df.shape[0] == 0


@RULE_ENGINES
@pytest.mark.parametrize(
    "reply",
    [
        "I am not sure what you mean.",
        "You could run SELECT count(*) FROM customers to find out.",
        "```python\nprint(len(customers))\n```",
        "CLARIFY",  # no colon: not a clarification
    ],
)
def test_no_sql_ends_the_turn(engine, db, reply):
    run = ask(db, reply, sql(COUNT_CUSTOMERS))
    assert outcome(run) == ("failed", "no_sql", None)
    assert run.result.attempts == [] and run.model.remaining == 1


@RULE_ENGINES
def test_no_sql_after_a_success_keeps_the_result(engine, db):
    run = ask(db, sql(COUNT_CUSTOMERS), "That should be it: the result looks right.")
    assert outcome(run) == ("success", "no_sql", COUNT_CUSTOMERS)
    assert run.result.rows() == [[3]]


@RULE_ENGINES
@pytest.mark.parametrize(
    "reply, expected",
    [
        ("SELECT count(*) AS n FROM customers;", COUNT_CUSTOMERS),
        (
            "WITH c AS (SELECT id FROM customers) SELECT count(*) AS n FROM c",
            "WITH c AS (SELECT id FROM customers) SELECT count(*) AS n FROM c",
        ),
        ("```\nSELECT count(*) AS n FROM customers\n```", COUNT_CUSTOMERS),
    ],
)
def test_a_bare_query_is_run(engine, db, reply, expected):
    run = ask(db, reply, "FINAL")
    assert outcome(run) == ("success", "finalized", expected)
    assert run.result.rows() == [[3]]


@RULE_ENGINES
def test_prose_starting_with_with_is_no_query(engine, db):
    run = ask(db, sql(COUNT_CUSTOMERS), "With that result the question is answered.\nFINAL")
    assert outcome(run) == ("success", "finalized", COUNT_CUSTOMERS)
    assert len(run.attempts) == 1


@RULE_ENGINES
def test_consecutive_failures_end_the_turn(engine, db):
    run = ask(db, sql(BAD_COLUMN), sql(BAD_TABLE), sql(BAD_COLUMN_2), sql(COUNT_CUSTOMERS))
    assert outcome(run) == ("failed", "consecutive_failures", None)
    assert kinds(run) == ["column_not_found", "table_not_found", "column_not_found"]
    assert run.result.iterations == 3 and run.model.remaining == 1

    run = ask(db, sql(BAD_COLUMN), sql(BAD_TABLE), sql(COUNT_CUSTOMERS), failure_cutoff=2)
    assert outcome(run) == ("failed", "consecutive_failures", None)
    assert len(run.attempts) == 2


@RULE_ENGINES
def test_a_success_resets_the_failure_count(engine, db):
    run = ask(
        db,
        sql(BAD_COLUMN),
        sql(BAD_TABLE),
        sql(COUNT_CUSTOMERS),
        sql(BAD_COLUMN_2),
        sql(BAD_COLUMN_3),
        sql(BAD_COLUMN),
        sql(COUNT_ORDERS),
        max_iterations=10,
    )
    assert [a["ok"] for a in run.attempts] == [False, False, True, False, False, False]
    assert outcome(run) == ("success", "consecutive_failures", COUNT_CUSTOMERS)
    assert run.result.rows() == [[3]] and run.model.remaining == 1


@RULE_ENGINES
def test_max_iterations_end_the_turn(engine, db):
    queries = [f"SELECT {i} AS n" for i in range(1, 7)]
    run = ask(db, *[sql(q) for q in queries])
    assert outcome(run) == ("success", "max_iterations", queries[4])  # default: 5
    assert run.result.iterations == 5 and len(run.attempts) == 5
    assert run.model.remaining == 1 and run.result.rows() == [[5]]

    run = ask(db, sql(COUNT_CUSTOMERS), sql(COUNT_ORDERS), "FINAL", max_iterations=2)
    assert outcome(run) == ("success", "max_iterations", COUNT_ORDERS)
    assert run.result.iterations == 2
    # the limits are the ones the model was told
    assert run.system(0) == system_prompt(
        db.dialect, run.result.context.text, max_iterations=2, failure_cutoff=3
    )


@RULE_ENGINES
def test_consecutive_failures_come_before_max_iterations(engine, db):
    run = ask(db, sql(BAD_COLUMN), sql(BAD_TABLE), sql(BAD_COLUMN_2), max_iterations=3)
    assert outcome(run) == ("failed", "consecutive_failures", None)


@RULE_ENGINES
def test_limits_must_make_sense(engine, db):
    with pytest.raises(errors.UsageError):
        ask(db, "FINAL", max_iterations=0)
    with pytest.raises(errors.UsageError):
        ask(db, "FINAL", question="   ")


@RULE_ENGINES
def test_no_review_ends_after_the_first_successful_execution(engine, db):
    run = ask(db, sql(COUNT_CUSTOMERS), "FINAL", no_review=True)
    assert outcome(run) == ("success", "executed", COUNT_CUSTOMERS)
    assert run.result.iterations == 1 and run.model.remaining == 1

    run = ask(db, sql(BAD_COLUMN), sql(COUNT_ORDERS), "FINAL", no_review=True)
    assert outcome(run) == ("success", "executed", COUNT_ORDERS)
    assert [a["ok"] for a in run.attempts] == [False, True]

    run = ask(db, sql(BAD_COLUMN), sql(BAD_TABLE), sql(BAD_COLUMN_2), sql(COUNT_ORDERS), no_review=True)
    assert outcome(run) == ("failed", "consecutive_failures", None)


# ---------------------------------------------------------------------------
# model failures
# ---------------------------------------------------------------------------


class FailingChatModel(BaseChatModel):
    """A provider that is down: every call raises."""

    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "failing"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        self.calls += 1
        raise RuntimeError("upstream overloaded (503)")


class LeakyClient:
    """A client whose provider exception escapes it unwrapped."""

    retries = 0

    def invoke(self, messages):
        raise ValueError("boom")


@RULE_ENGINES
def test_script_running_out_is_a_model_error(engine, db):
    run = ask(db, sql(COUNT_CUSTOMERS))
    r = run.result
    assert outcome(run) == ("success", "model_error", COUNT_CUSTOMERS)  # the earlier success
    assert "no reply left" in r.model_error and r.iterations == 2
    assert r.to_dict()["model_error"] == r.model_error and r.rows() == [[3]]
    assert [e["type"] for e in run.events][-2:] == ["stopped", "done"]

    run = ask(db, sql(BAD_COLUMN))
    assert outcome(run) == ("failed", "model_error", None)

    run = ask(db, wrap=False)  # no replies at all; the chat model passed directly
    assert outcome(run) == ("failed", "model_error", None)
    assert run.result.attempts == [] and run.result.cell_source() is None


@RULE_ENGINES
def test_provider_failure_is_a_model_error(engine, db):
    model = FailingChatModel()
    waits: list[float] = []
    client = ModelClient(model, retries=1, backoff=0.5, sleep=waits.append)
    r = Agent().ask("How many customers?", db, model=client)
    assert (r.status, r.stop_reason, r.sql) == ("failed", "model_error", None)
    assert "RuntimeError" in r.model_error and "upstream overloaded" in r.model_error
    assert model.calls == 2 and waits == [0.5]  # retried once, without really sleeping

    r = Agent().ask("How many customers?", db, model=LeakyClient())
    assert (r.status, r.stop_reason) == ("failed", "model_error")
    assert r.model_error == "ValueError: boom"


# ---------------------------------------------------------------------------
# unrecoverable errors
# ---------------------------------------------------------------------------

SESSION_ID = {
    "postgresql": "SELECT pg_backend_pid() AS pid",
    "redshift": "SELECT pg_backend_pid() AS pid",
    "mysql": "SELECT connection_id() AS pid",
}


@SERVER_SESSIONS
def test_connection_lost_between_attempts_is_unrecoverable(engine, seeded, connect_to):
    conn = connect_to(seeded)

    def kill_session(event):
        if event["type"] == "attempt" and event["attempt"]["n"] == 1:
            pid = event["attempt"]["preview"][0][0]
            # PostgreSQL: wait (up to 10 s) until the backend is gone
            seeded.admin(
                [f"KILL {pid}" if engine == "mysql" else f"SELECT pg_terminate_backend({pid}, 10000)"]
            )

    model = ScriptedChatModel(replies=[sql(SESSION_ID[engine]), sql(COUNT_CUSTOMERS), "FINAL"])
    r = Agent().ask("Which session am I?", conn, model=model, on_event=kill_session)
    assert [a["error_kind"] for a in r.attempts] == [None, "connection_lost"]
    assert (r.status, r.stop_reason, r.sql) == ("success", "unrecoverable_error", SESSION_ID[engine])
    assert r.iterations == 2 and model.remaining == 1
    # the connection re-opens for whatever comes next
    assert conn.execute(COUNT_CUSTOMERS).rows == [(3,)]


@pytest.fixture
def restricted_role(fresh):
    """A PostgreSQL login role that may read customers but not orders."""
    role = f"reader_{uuid.uuid4().hex[:10]}"
    fresh.admin([f'CREATE ROLE "{role}" LOGIN', f'GRANT SELECT ON customers TO "{role}"'])
    yield f"postgresql://{role}@{PG_HOST}:{PG_PORT}/{fresh.db}"
    fresh.admin([f'DROP OWNED BY "{role}"', f'DROP ROLE "{role}"'])


@pytest.mark.engines(["postgresql"])
def test_permission_failure_is_unrecoverable(engine, fresh, restricted_role):
    import sqlnb.adapters as adapters

    with adapters.connect(restricted_role) as conn:
        run = ask(conn, sql(COUNT_CUSTOMERS), sql(COUNT_ORDERS), sql(COUNT_CUSTOMERS), "FINAL")
        assert kinds(run) == [None, "permission"]
        assert "permission denied" in run.attempts[1]["error"]
        assert outcome(run) == ("success", "unrecoverable_error", COUNT_CUSTOMERS)
        assert run.model.remaining == 2

        run = ask(conn, sql(COUNT_ORDERS), sql(COUNT_CUSTOMERS))
        assert outcome(run) == ("failed", "unrecoverable_error", None)
        assert run.result.iterations == 1


# ---------------------------------------------------------------------------
# the result and the progress events
# ---------------------------------------------------------------------------


@RULE_ENGINES
def test_the_final_sql_is_the_last_successful_one(engine, db):
    run = ask(db, sql(NAMES), sql(COUNT_ORDERS), sql(BAD_COLUMN), sql(BAD_COLUMN))
    r = run.result
    assert outcome(run) == ("success", "duplicate_sql", COUNT_ORDERS)
    assert lowered(r.columns) == ["n"] and r.rows() == [[3]]
    assert r.df.shape == (1, 1) and int(r.df.iloc[0, 0]) == 3  # not the names, not the error
    assert r.cell_source().endswith("\n" + pretty(COUNT_ORDERS, db.dialect) + "\n")
    assert "attempts: 3" in r.cell_source().splitlines()[1]


def test_an_empty_final_result_keeps_its_columns(engine, db):
    empty = "SELECT id, name FROM customers WHERE id < 0"
    run = ask(db, sql(empty), "FINAL")
    assert outcome(run) == ("success", "finalized", empty)
    assert run.attempts[0]["row_count"] == 0
    assert lowered(c for c, _ in run.attempts[0]["columns"]) == ["id", "name"]
    assert "Columns: " in run.user(1) and "No rows matched." in run.user(1)
    assert lowered(run.result.columns) == ["id", "name"]
    assert run.result.df.shape == (0, 2) and lowered(run.result.df.columns) == ["id", "name"]


@RULE_ENGINES
def test_cell_source_comment_is_one_line(engine, db):
    question = "Which customers\nhave placed   orders?\n" + "Really, " * 40
    run = ask(db, sql(NAMES), "FINAL", question=question, connection="warehouse")
    cell = run.result.cell_source()
    lines = cell.splitlines()
    assert lines[0] == "%%sql --conn warehouse"
    assert lines[1].startswith("-- ") and "Which customers have placed orders?" in lines[1]
    assert "..." in lines[1] and "| model: scripted | attempts: 1" in lines[1]
    assert "\n".join(lines[2:]) == pretty(NAMES, db.dialect)


@RULE_ENGINES
def test_progress_events(engine, db):
    run = ask(db, sql(BAD_COLUMN), sql(COUNT_CUSTOMERS), "FINAL")
    events = [e for e in run.events if e["type"] != "context"]
    assert [e["type"] for e in events] == CORRECTED_ONCE_EVENTS
    replies = [e for e in events if e["type"] == "reply"]
    assert [e["iteration"] for e in replies] == [1, 2, 3]
    assert all(e["max_iterations"] == 5 for e in replies)
    assert [e["sql"] for e in replies] == [BAD_COLUMN, COUNT_CUSTOMERS, None]
    assert [e["final"] for e in replies] == [False, False, True]
    attempts = [e["attempt"] for e in events if e["type"] == "attempt"]
    assert [(a["n"], a["ok"], a["error_kind"]) for a in attempts] == [
        (1, False, "column_not_found"),
        (2, True, None),
    ]
    stopped = events[-2]
    assert (stopped["status"], stopped["stop_reason"]) == ("success", "finalized")
    assert events[-1]["result"] is run.result

    run = ask(db, "CLARIFY: Which year?")
    assert [e["type"] for e in run.events if e["type"] != "context"] == ["reply", "stopped", "done"]
    assert run.events[-2]["status"] == "needs_clarification"

    # a CLARIFY that asks nothing is shown as such, and the turn goes on
    run = ask(db, "CLARIFY: How many customers are there?", sql(COUNT_CUSTOMERS), "FINAL")
    first = next(e for e in run.events if e["type"] == "reply")
    assert first["clarify"] is None and first["not_a_question"] == "it repeats the user's question"
    assert ask_progress_line(first) == (
        "The model's CLARIFY asked the user nothing (it repeats the user's question); asking it again…"
    )


def test_stop_reasons_are_the_documented_ones():
    """docs/agent.md's table of stop reasons has a row for each one a turn can end with,
    and no other; sqlnb.labels words each of them."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "agent.md").read_text(encoding="utf-8")
    table = text.split("A turn ends with one of these stop reasons", 1)[1].split("\n## ", 1)[0]
    documented = re.findall(r"^\| `(\w+)` \|", table, re.M)
    assert sorted(documented) == sorted(STOP_REASONS)
    assert set(STOP_REASON_WORDS) == set(STOP_REASONS)


# ---------------------------------------------------------------------------
# retry drafts: after a failure, fresh drafts of the question run beside the correction
# ---------------------------------------------------------------------------


def ask_drafting(adapter, replies, drafts, **options: Any) -> Run:
    """Ask with a scripted model that also answers sampled calls, with ``drafts`` (by
    default as retry drafts only: no drafts of the first answer)."""
    options.setdefault("settings", AgentSettings(first_drafts=0))
    model = ScriptedChatModel(replies=list(replies), drafts=list(drafts))
    return ask_with(model, adapter, options.pop("question", "How many customers are there?"), **options)


ADA = "SELECT name FROM customers WHERE id = 1"
NAMES_BY_NAME = "SELECT name FROM customers ORDER BY name"
NOTHING = "SELECT name FROM customers WHERE 1 = 0"


@RULE_ENGINES
def test_drafts_stand_in_for_a_repeated_failing_query(engine, db):
    # the correction repeats the failing query (alone: duplicate_sql); three drafts, one a
    # repeat of another, one failing: the two distinct drafts run and the one that ran is kept
    run = ask_drafting(
        db,
        [sql(BAD_COLUMN), sql(BAD_COLUMN.lower()), "FINAL"],
        [sql(BAD_COLUMN_2), sql(COUNT_CUSTOMERS), COUNT_CUSTOMERS + ";"],
    )
    assert outcome(run) == ("success", "finalized", COUNT_CUSTOMERS)
    assert run.result.rows() == [[3]]
    first, second = run.attempts
    assert first["error_kind"] == "column_not_found" and "candidates" not in first
    assert second["sql"] == COUNT_CUSTOMERS and second["ok"]
    assert [(c["sql"], c["ok"], c["error_kind"], c["votes"], c["chosen"]) for c in second["candidates"]] == [
        (BAD_COLUMN_2, False, "column_not_found", 0, False),
        (COUNT_CUSTOMERS, True, None, 1, True),
    ]
    # the drafts were asked with the question's first prompt (no attempts in it), sampled
    assert run.model.draft_prompts == [run.prompts[0]] * 3
    assert "Your attempts so far" not in run.model.draft_prompts[0][-1][1]
    assert run.result.iterations == 3 and run.result.usage["calls"] == 6
    # the review saw the kept query and its result
    assert f"Attempt 2:\n```sql\n{COUNT_CUSTOMERS}\n```\nThe query ran: 1 row." in run.user(2)


@RULE_ENGINES
def test_the_result_most_candidates_agree_on_is_kept(engine, db):
    # correction: one name; two drafts: all three names (in two orders); one draft fails
    run = ask_drafting(
        db, [sql(BAD_COLUMN), sql(ADA)], [sql(NAMES), sql(BAD_COLUMN_3), sql(NAMES_BY_NAME)], no_review=True
    )
    assert outcome(run) == ("success", "executed", NAMES)
    kept = run.attempts[-1]
    assert [(c["sql"], c["votes"], c["chosen"]) for c in kept["candidates"]] == [
        (ADA, 1, False),
        (NAMES, 2, True),
        (BAD_COLUMN_3, 0, False),
        (NAMES_BY_NAME, 2, False),
    ]
    assert run.result.rows() == [["Ada"], ["Grace"], ["Linus"]]
    text = format_attempt(kept, with_choice=True)
    assert text.startswith(
        "4 candidate queries ran, 3 without error; 2 of them gave this result. This one was kept:"
    )
    assert f"```sql\n{NAMES}\n```" in text and format_attempt(kept) in text
    assert format_attempt(kept) == format_attempt({k: v for k, v in kept.items() if k != "candidates"})
    lines = [ask_progress_line(e) for e in run.events]
    assert "Trying 4 candidate queries; the result most of them agree on is kept…" in lines
    assert any(
        line and line.startswith("Attempt 2 of at most 5 (kept 1 of 4 candidates): SELECT name")
        for line in lines
    )


@RULE_ENGINES
def test_a_result_beats_an_error_and_the_correction_wins_ties(engine, db):
    run = ask_drafting(
        db,
        [sql(BAD_COLUMN), sql(BAD_TABLE)],
        [sql(NOTHING), sql(BAD_COLUMN_2)],
        no_review=True,
        settings=AgentSettings(first_drafts=0, retry_drafts=2),
    )
    assert outcome(run) == ("success", "executed", NOTHING)  # empty, but it ran
    assert [c["ok"] for c in run.attempts[-1]["candidates"]] == [False, True, False]
    # two different one-row results: one vote each, the correction comes first
    run = ask_drafting(
        db,
        [sql(BAD_COLUMN), sql(ADA)],
        [sql(COUNT_CUSTOMERS)],
        no_review=True,
        settings=AgentSettings(first_drafts=0, retry_drafts=1),
    )
    assert outcome(run) == ("success", "executed", ADA)


@RULE_ENGINES
def test_when_no_candidate_runs_the_correction_error_counts_once(engine, db):
    run = ask_drafting(
        db,
        [sql(BAD_COLUMN), sql(BAD_TABLE), sql(BAD_COLUMN)],
        [sql(BAD_COLUMN_2), sql(BAD_COLUMN_3)] * 2,
        settings=AgentSettings(first_drafts=0, retry_drafts=2),
    )
    second = run.attempts[1]
    assert second["sql"] == BAD_TABLE and second["error_kind"] == "table_not_found"
    assert [c["sql"] for c in second["candidates"]] == [BAD_TABLE, BAD_COLUMN_2, BAD_COLUMN_3]
    # third step: the reply repeats the first attempt and the drafts repeat failed
    # candidates: none of them is a candidate, the reply runs as it is
    assert "candidates" not in run.attempts[2]
    assert kinds(run) == ["column_not_found", "table_not_found", "column_not_found"]
    assert outcome(run) == ("failed", "consecutive_failures", None)
    assert run.model.draft_position == 4


@RULE_ENGINES
def test_drafts_only_after_a_failure(engine, db):
    run = ask_drafting(db, [sql(COUNT_CUSTOMERS), "FINAL"], [sql(NAMES)])
    assert outcome(run) == ("success", "finalized", COUNT_CUSTOMERS)
    assert run.model.draft_prompts == []
    run = ask_drafting(db, [sql(BAD_COLUMN), "CLARIFY: Customers of which shop?"], [sql(NAMES)])
    assert outcome(run) == ("needs_clarification", "clarification", None)
    assert run.model.draft_prompts == []
    # turned off: the repeated failing query ends the turn as before
    run = ask_drafting(
        db,
        [sql(BAD_COLUMN), sql(BAD_COLUMN)],
        [sql(NAMES)],
        settings=AgentSettings(first_drafts=0, retry_drafts=0),
    )
    assert outcome(run) == ("failed", "duplicate_sql", None)
    assert run.model.draft_prompts == []


class HostedClient:
    """A scripted model under a hosted model's name (no network): what the per-kind
    default of retry drafts sees of an ``anthropic:`` model."""

    samples = True
    retries = 0

    def __init__(self, model: ScriptedChatModel, name: str = "anthropic:claude-sonnet-4-5"):
        self._client, self.name, self.model = ModelClient(model), name, model

    def invoke(self, messages, **kwargs):
        return self._client.invoke(messages, **kwargs)


@RULE_ENGINES
def test_retry_drafts_default_per_kind_of_model(engine, db):
    assert AgentSettings().retry_drafts is None  # None: the model's kind decides
    # a hosted model pays for every call: no drafts unless asked for
    model = ScriptedChatModel(
        replies=[sql(BAD_COLUMN), sql(COUNT_CUSTOMERS), "FINAL"], drafts=[sql(NAMES)] * 3
    )
    result = Agent().ask("How many customers are there?", db, model=HostedClient(model))
    assert (result.status, result.stop_reason, result.sql) == ("success", "finalized", COUNT_CUSTOMERS)
    assert model.draft_prompts == [] and result.usage["calls"] == 3
    # asked for: they run
    model = ScriptedChatModel(
        replies=[sql(BAD_COLUMN), sql(COUNT_CUSTOMERS), "FINAL"], drafts=[sql(NAMES)] * 3
    )
    result = Agent().ask(
        "How many customers are there?",
        db,
        model=HostedClient(model),
        settings=AgentSettings(first_drafts=0, retry_drafts=2),
    )
    assert len(model.draft_prompts) == 2 and result.usage["calls"] == 5
    # a local model (scripted counts as one): three drafts by default
    run = ask_drafting(db, [sql(BAD_COLUMN), sql(COUNT_CUSTOMERS), "FINAL"], [sql(NAMES)] * 3)
    assert len(run.model.draft_prompts) == 3 and run.result.usage["calls"] == 6


def test_default_retry_drafts_by_model_name_and_server():
    from types import SimpleNamespace as NS

    from sqlnb.agent.settings import default_retry_drafts

    assert default_retry_drafts(NS(name="llamacpp:qwen2.5-coder-1.5b-instruct-q4_k_m")) == 3
    assert default_retry_drafts(NS(name="scripted:replies.json")) == 3
    assert default_retry_drafts(NS(name="ollama:qwen2.5-coder")) == 3
    local = NS(name="openai:qwen", model=NS(openai_api_base="http://127.0.0.1:8000/v1"))
    assert default_retry_drafts(local) == 3
    assert default_retry_drafts(NS(name="openai:qwen", model=NS(base_url="http://localhost:8000/v1"))) == 3
    assert default_retry_drafts(NS(name="openai:gpt-4o-mini", model=NS(openai_api_base=None))) == 0
    remote = NS(name="openai:gpt-4o-mini", model=NS(openai_api_base="https://api.openai.com/v1"))
    assert default_retry_drafts(remote) == 0
    assert default_retry_drafts(NS(name="anthropic:claude-sonnet-4-5")) == 0
    assert default_retry_drafts(object()) == 0  # unknown: no calls it did not ask for


@RULE_ENGINES
def test_a_failing_draft_call_keeps_the_candidates_so_far(engine, db):
    # one draft in the script, three wanted: the second draft call fails
    run = ask_drafting(db, [sql(BAD_COLUMN), sql(BAD_COLUMN)], [sql(COUNT_CUSTOMERS)], no_review=True)
    assert outcome(run) == ("success", "executed", COUNT_CUSTOMERS)
    assert run.result.usage["failed_calls"] == 1 and run.result.usage["calls"] == 3
    assert run.result.model_error is None


@RULE_ENGINES
def test_a_final_with_drafts_is_not_final_before_the_model_saw_the_result(engine, db):
    # FINAL after a failure, with drafts to run: they run, and the model reviews the result
    run = ask_drafting(
        db,
        [sql(BAD_COLUMN), "FINAL", "FINAL"],
        [sql(COUNT_CUSTOMERS)],
        settings=AgentSettings(first_drafts=0, retry_drafts=1),
    )
    assert outcome(run) == ("success", "finalized", COUNT_CUSTOMERS)
    assert run.result.iterations == 3 and len(run.attempts) == 2


def test_drafts_proposing_writes_are_refused(engine, fresh, connect_to):
    before = fresh.fingerprint()
    conn = connect_to(fresh)
    assert not conn.options.readonly
    run = ask_drafting(
        conn,
        [sql(BAD_COLUMN), sql(BAD_COLUMN), "FINAL"],
        [sql("DELETE FROM customers"), sql(WRITES[0]), sql(COUNT_CUSTOMERS)],
    )
    assert outcome(run) == ("success", "finalized", COUNT_CUSTOMERS)
    assert [(c["ok"], c["error_kind"]) for c in run.attempts[1]["candidates"]] == [
        (False, "read_only"),
        (False, "read_only"),
        (True, None),
    ]
    conn.close()
    assert fresh.fingerprint() == before


@RULE_ENGINES
def test_the_suggested_fix_is_a_candidate(engine, db):
    misspelt = "SELECT nam FROM customers ORDER BY id"
    run = ask_drafting(
        db,
        [sql(misspelt), sql(BAD_COLUMN)],
        [sql(BAD_COLUMN_2)],
        no_review=True,
        settings=AgentSettings(first_drafts=0, retry_drafts=1),
    )
    first, second = run.attempts
    assert first["suggestion"] == NAMES
    assert [c["sql"] for c in second["candidates"]] == [BAD_COLUMN, NAMES, BAD_COLUMN_2]
    assert outcome(run) == ("success", "executed", NAMES)


@RULE_ENGINES
def test_drafts_take_the_question_first_prompt_in_chat_rendering_too(engine, db):
    run = ask_drafting(
        db,
        [sql(BAD_COLUMN), sql(BAD_COLUMN)],
        [sql(COUNT_CUSTOMERS)],
        no_review=True,
        settings=AgentSettings(first_drafts=0, retry_drafts=1, rendering="chat"),
    )
    assert outcome(run) == ("success", "executed", COUNT_CUSTOMERS)
    (system, draft_system), (_, draft_user) = zip(run.prompts[0], run.model.draft_prompts[0], strict=True)
    assert draft_system == system
    assert (
        draft_user[1] == "Question: How many customers are there?\n\nWrite one SQL query that "
        "answers the question, in a ```sql block."
    )
    assert len(run.model.draft_prompts[0]) == 2  # no replies or results in it


# ---------------------------------------------------------------------------
# the first answer as a vote of drafts (a model that samples: local ones, scripted drafts)
# ---------------------------------------------------------------------------

PAID = "SELECT count(*) AS n FROM orders WHERE status = 'paid'"
# the draft rewrites but the filter on a value the question names: the tests below that stand
# for a draft leaving that value out (a doubt, a second pass with the memory) keep it out
UNFILTERED = AgentSettings(disabled_rewrites={"named_filters"})


def ask_voting(adapter, replies, drafts, **options: Any) -> Run:
    """Ask with a scripted model whose sampled calls answer ``drafts`` (drafts of the first
    answer on, as for a local model)."""
    model = ScriptedChatModel(replies=list(replies), drafts=list(drafts))
    return ask_with(model, adapter, options.pop("question", "How many orders are paid?"), **options)


def rows_as_written(adapter, draft: str, rule: str, other_question: str, question: str) -> list[Any]:
    """The rows of ``draft`` asked as ``other_question`` (one that does not call for ``rule``)
    and as ``question`` with ``rule`` off: neither run rewrites it."""
    rows = []
    for q, settings in ((other_question, None), (question, AgentSettings(disabled_rewrites={rule}))):
        run = ask_voting(
            adapter, [sql(draft)], [sql(draft)], question=q, **({"settings": settings} if settings else {})
        )
        assert "rewrites" not in run.result.attempts[0], q
        rows.append(run.result.rows())
    return rows


@RULE_ENGINES
def test_two_drafts_that_agree_are_the_answer_without_a_review_call(engine, db):
    run = ask_voting(
        db, [sql(PAID)], ["```sql\nSELECT COUNT(id) FROM orders WHERE status='paid'\n```", sql("SELECT 99")]
    )
    r = run.result
    assert outcome(run) == ("success", "voted", PAID)
    assert r.rows() == [[2]] and r.usage["calls"] == 2  # the reply and one draft: settled
    assert run.model.draft_position == 1 and len(run.prompts) == 1
    (a,) = r.attempts
    assert [(c["weight"], c["votes"], c["chosen"]) for c in a["candidates"]] == [(1, 2, True), (1, 2, False)]
    assert r.confidence == {"level": "high", "score": 1.0, "reasons": ["2 of 2 drafts gave this result"]}
    assert ask_progress_line(next(e for e in run.events if e["type"] == "reply")) == (
        "Drafted the answer 2 times (2 different queries); the result most drafts gave is kept…"
    )
    # the reply and a draft the same query: one candidate of weight 2
    run = ask_voting(db, [sql(PAID)], [sql(PAID.lower())])
    (a,) = run.result.attempts
    assert [(c["weight"], c["votes"]) for c in a["candidates"]] == [(2, 2)]
    assert run.result.confidence["level"] == "high"
    assert ask_progress_line(next(e for e in run.events if e["type"] == "reply")) == (
        "Drafted the answer 2 times (1 different query); the result most drafts gave is kept…"
    )
    # the draft saw exactly the first prompt, sampled
    assert run.model.draft_prompts[0] == run.prompts[0]
    assert r.to_dict()["confidence"]["level"] == "high"


@RULE_ENGINES
def test_drafts_go_on_until_two_agree_and_outvote_the_reply(engine, db):
    other = "SELECT count(*) AS n FROM orders"
    run = ask_voting(db, [sql(other)], [sql(PAID), sql("SELECT 7"), sql(PAID + " ")], settings=UNFILTERED)
    r = run.result
    # reply 3 rows, draft 1 2 rows, draft 2 a third result, draft 3 repeats draft 1: 2 of 4
    assert outcome(run) == ("success", "voted", PAID) and r.usage["calls"] == 4
    (a,) = r.attempts
    assert [c["weight"] for c in a["candidates"]] == [1, 2, 1]
    assert r.confidence["level"] == "medium"
    assert r.confidence["reasons"][:2] == [
        "2 of 4 drafts gave this result",
        "2 other results came from the other drafts",
    ]
    assert "Drafted the answer 4 times (3 different queries)" in ask_progress_line(
        next(e for e in run.events if e["type"] == "reply")
    )


@RULE_ENGINES
def test_no_agreement_keeps_the_reply_with_low_confidence(engine, db):
    run = ask_voting(
        db, [sql(PAID)], [sql("SELECT 7"), sql("SELECT 8")], settings=AgentSettings(first_drafts=2)
    )
    r = run.result
    assert outcome(run) == ("success", "voted", PAID) and r.usage["calls"] == 3
    assert r.confidence["level"] == "low" and r.confidence["score"] < 0.5


@RULE_ENGINES
def test_a_needless_clarification_is_outvoted_by_drafts_that_agree(engine, db):
    run = ask_voting(db, ["CLARIFY: Which orders count as paid?"], [sql(PAID), sql(PAID.lower())])
    r = run.result
    assert outcome(run) == ("success", "voted", PAID) and r.questions == []
    # the reply that asked back counts against the agreement: medium, not high
    assert r.confidence["level"] == "medium" and r.confidence["reasons"][:2] == [
        "2 of 3 drafts gave this result",
        "1 draft asked back or wrote no query",
    ]


@RULE_ENGINES
def test_a_clarification_most_drafts_share_keeps_the_best_query_found(engine, db):
    run = ask_voting(
        db,
        ["CLARIFY: Paid in full, or partly paid?"],
        ["CLARIFY: Do refunds count?", sql(PAID), "CLARIFY: Which year?"],
    )
    r = run.result
    assert (r.status, r.stop_reason) == ("needs_clarification", "clarification")
    assert r.questions == ["Paid in full, or partly paid?"]
    assert r.sql == PAID and r.rows() == [[2]]  # shown with the questions


@RULE_ENGINES
def test_an_empty_result_from_a_value_in_the_wrong_case_is_repaired(engine, db):
    wrong = "SELECT id FROM orders WHERE status = 'PAID' ORDER BY id"
    run = ask_voting(
        db,
        [sql(wrong)],
        [sql(wrong), sql(wrong.lower().replace("'paid'", "'PAID'"))],
        settings=AgentSettings(first_drafts=2),
    )
    r = run.result
    assert r.status == "success" and r.stop_reason == "voted"
    assert "'paid'" in r.sql and r.rows() == [[10], [12]]
    assert r.usage["calls"] == 3  # no model call for the repair
    assert r.confidence["level"] == "low"
    assert "a filter value was replaced by the stored one ('PAID' → 'paid')" in r.confidence["reasons"]


@RULE_ENGINES
def test_an_empty_not_in_over_a_list_with_nulls_is_repaired(engine, db):
    # customers.email holds a NULL (Linus): NOT IN over it matches no row, whatever the data
    naive = "SELECT name FROM customers WHERE email NOT IN (SELECT email FROM customers WHERE id > 1)"
    question = "Which customers have an email no customer after the first one has?"
    run = ask_voting(
        db,
        [sql(naive)],
        [sql(naive), sql(naive + " ")],
        question=question,
        settings=AgentSettings(first_drafts=2),
    )
    r = run.result
    assert (r.status, r.stop_reason) == ("success", "voted") and r.rows() == [["Ada"]]
    assert "IS NOT NULL" in r.sql.upper() and r.usage["calls"] == 3  # no model call for the repair
    assert (
        "NULLs left out of NOT IN (email): a NOT IN list that holds a NULL matches no row"
        in r.confidence["reasons"]
    )
    assert r.confidence["level"] == "medium"  # what NOT IN means; the drafts as written found nothing
    # without drafts (a hosted model): the model is told why, and corrects it
    safe = (
        "SELECT name FROM customers WHERE email NOT IN (SELECT email FROM customers WHERE id > 1 "
        "AND email IS NOT NULL)"
    )
    run = ask(db, sql(naive), sql(safe), "FINAL", question=question)
    assert run.result.sql == safe and run.result.rows() == [["Ada"]]
    assert (
        "NOT IN matches no row once its list holds a NULL: add IS NOT NULL to the subquery (email)"
        in run.user(1)
    )


@RULE_ENGINES
def test_a_filter_on_a_value_the_question_does_not_name_is_doubted_not_swapped(engine, db):
    # the rewrite named_values, which swapped such a value for the one the question names,
    # left by the policy (as many answers turned wrong as right on the batches after it):
    # the answer stands and its check says which value the question named
    paid = "SELECT count(*) AS n FROM orders WHERE status = 'paid'"
    run = ask_voting(db, [sql(paid)], [sql(paid)], question="How many new orders are there?")
    r = run.result
    assert r.sql == paid and r.confidence["level"] != "high"
    assert "values_left_out" in r.attempts[-1]["checks"]
    assert "named_values" not in str(r.attempts)


@RULE_ENGINES
def test_empty_results_without_a_repair_go_back_to_the_model_with_the_stored_values(engine, db):
    none = "SELECT count(*) AS n FROM orders WHERE status = 'refunded'"  # 1 row: 0
    run = ask_voting(
        db, [sql(none), sql(PAID), "FINAL"], [sql(none), sql(none)], settings=AgentSettings(first_drafts=2)
    )
    r = run.result
    # the correction finds something: the answer, without a review call
    assert outcome(run) == ("success", "executed", PAID) and run.model.remaining == 1
    assert [a["row_count"] for a in r.attempts] == [1, 1] and r.attempts[0]["nothing_found"]
    assert "status has no 'refunded'" in run.user(1)  # the stored values, as a hint
    assert r.confidence["level"] == "low"  # one query, no draft agreeing with it


@RULE_ENGINES
def test_empty_results_with_nothing_new_to_show_end_without_a_review_call(engine, db):
    # no string filter, so no stored value to offer: the model would see nothing new
    run = ask_voting(
        db,
        [sql(NOTHING), "FINAL"],
        [sql(NOTHING), sql(NOTHING + " ")],
        settings=AgentSettings(first_drafts=2),
    )
    r = run.result
    assert outcome(run) == ("success", "voted", NOTHING) and r.rows() == []
    assert r.usage["calls"] == 3 and run.model.remaining == 1  # FINAL never asked for
    assert r.confidence["level"] == "low" and "the result is empty" in r.confidence["reasons"]


@RULE_ENGINES
def test_after_the_drafts_a_clarification_is_no_answer_and_the_best_query_stands(engine, db):
    none = "SELECT count(*) AS n FROM orders WHERE status = 'refunded'"
    run = ask_voting(
        db,
        [sql(none), "CLARIFY: Which status do you mean?"],
        [sql(none), sql(none)],
        settings=AgentSettings(first_drafts=2),
    )
    r = run.result
    # the drafts did not ask back; asking after an empty result is no clarification
    assert outcome(run) == ("success", "no_sql", none) and r.questions == []
    assert r.usage["calls"] == 4 and len(r.attempts) == 1
    # after failed drafts too: no query ran, so nothing stands
    run = ask_voting(
        db,
        [sql(BAD_COLUMN), "CLARIFY: Which column do you mean?"],
        [sql(BAD_COLUMN), sql(BAD_COLUMN)],
        settings=AgentSettings(first_drafts=2),
    )
    assert outcome(run) == ("failed", "no_sql", None) and run.result.questions == []


@RULE_ENGINES
def test_drafts_that_only_ask_back_or_write_no_query_end_in_a_clarification(engine, db):
    run = ask_voting(
        db,
        ["I am not sure which table that is."],
        [
            "CLARIFY: Which orders do you mean?",
            "Sorry, no query for that.",
            "CLARIFY: Orders of which year?",
            "No idea.",
        ],
    )
    r = run.result
    assert (r.status, r.stop_reason, r.sql) == ("needs_clarification", "clarification", None)
    assert r.questions == ["Which orders do you mean?"] and r.attempts == []
    assert r.usage["calls"] == 4 and r.confidence is None  # the reply and 3 drafts


@pytest.mark.engines(["sqlite", "postgresql", "duckdb"])
def test_a_draft_showing_ids_for_the_thing_asked_about_shows_its_name(engine, db):
    by_id = "SELECT customer_id, COUNT(*) AS n FROM orders GROUP BY customer_id ORDER BY n DESC LIMIT 1"
    question = "Which customer has the most orders, and how many are they?"
    run = ask_voting(db, [sql(by_id)], [sql(by_id.lower()), sql("SELECT 99")], question=question)
    r = run.result
    assert (r.status, r.stop_reason) == ("success", "voted")
    assert r.rows() == [["Ada", 2]] and r.usage["calls"] == 2  # both drafts: one query, named
    assert '"customers"."name"' in r.sql and "LEFT JOIN" in r.sql
    (a,) = r.attempts
    assert a["rewrites"] == {"names_for_ids": "orders.customer_id → customers.name"}
    assert [(c["weight"], c["chosen"]) for c in a["candidates"]] == [(2, True)]
    assert r.confidence["level"] == "high"
    assert (
        "names shown for the ids the query chose (orders.customer_id → customers.name)"
        in r.confidence["reasons"]
    )
    # asked for the id, or with the setting off: the id stays
    asked_for_the_id = question.replace("customer", "customer id")
    assert rows_as_written(db, by_id, "names_for_ids", asked_for_the_id, question) == [[[1, 2]]] * 2


@pytest.mark.engines(["sqlite", "postgresql", "duckdb"])
def test_a_draft_joined_on_columns_no_key_links_is_joined_along_the_key(engine, db):
    # orders.id = customers.id pairs unrelated rows (order 10 with no one): no result
    unlinked = (
        "SELECT c.name, COUNT(*) AS n FROM customers AS c JOIN orders AS o ON c.id = o.id "
        "GROUP BY c.name ORDER BY n DESC"
    )
    question = "How many orders did each customer place?"
    run = ask_voting(
        db,
        [sql(unlinked)],
        [sql(unlinked.replace("AS n", "AS orders_placed")), sql(unlinked)],
        question=question,
    )
    r = run.result
    assert (r.status, r.stop_reason) == ("success", "voted")
    assert r.rows() == [["Ada", 2], ["Grace", 1]]
    (a,) = r.attempts
    assert a["rewrites"] == {"link_joins": "c.id = o.id → customers.id = orders.customer_id"}
    assert (
        "joined along the foreign keys (c.id = o.id → customers.id = orders.customer_id)"
        in r.confidence["reasons"]
    )
    # with the setting off the draft stands as written
    run = ask_voting(
        db,
        [sql(unlinked)],
        [sql(unlinked), sql(unlinked)],
        question=question,
        settings=AgentSettings(disabled_rewrites={"link_joins"}),
    )
    assert run.result.rows() == [] and "rewrites" not in run.result.attempts[0]


@pytest.mark.engines(["sqlite", "postgresql", "duckdb"])
def test_a_draft_joining_on_a_column_its_table_lacks_is_joined_along_the_key(engine, db):
    # customers has no order_id: every draft fails on it, the one key joins them instead
    missing = (
        "SELECT c.name FROM customers AS c JOIN orders AS o ON c.order_id = o.id "
        "WHERE o.status = 'paid' ORDER BY c.name"
    )
    run = ask_voting(db, [sql(missing)], [sql(missing), sql("SELECT 99")], question="Who has a paid order?")
    r = run.result
    assert (r.status, r.stop_reason) == ("success", "voted")
    assert r.rows() == [["Ada"], ["Grace"]] and r.usage["calls"] == 2  # no correction call
    assert "customer_id" in r.sql and "order_id" not in r.sql
    # with the setting off the draft fails as written
    run = ask_voting(
        db,
        [sql(missing), sql(missing)],
        [sql(missing), sql(missing), sql(missing)],
        question="Who has a paid order?",
        settings=AgentSettings(disabled_rewrites={"link_joins"}),
    )
    assert run.result.sql is None and run.result.attempts[0]["error_kind"] == "column_not_found"


@pytest.mark.engines(["sqlite", "postgresql", "duckdb"])
def test_a_draft_failing_on_two_names_is_corrected_step_by_step(engine, db):
    # a join on a column customers lacks and a misspelt column: whichever the engine names
    # first is corrected, the corrected query fails on the other, which is corrected next
    two = (
        "SELECT c.nam FROM customers AS c JOIN orders AS o ON c.order_id = o.id "
        "WHERE o.status = 'paid' ORDER BY c.nam"
    )
    run = ask_voting(db, [sql(two)], [sql(two), sql("SELECT 99")], question="Who has a paid order?")
    r = run.result
    assert (r.status, r.stop_reason) == ("success", "voted")
    assert r.rows() == [["Ada"], ["Grace"]] and r.usage["calls"] == 2  # no correction call
    assert "customer_id" in r.sql and "order_id" not in r.sql and "c.nam " not in r.sql


@pytest.mark.engines(["sqlite", "postgresql", "duckdb"])
def test_a_draft_leaving_out_a_category_the_question_names_filters_on_it(engine, db):
    every = "SELECT count(*) AS n FROM orders"
    run = ask_voting(
        db, [sql(every)], [sql(every), sql("SELECT 99")], question="How many paid orders are there?"
    )
    r = run.result
    assert (r.status, r.stop_reason) == ("success", "voted")
    assert r.rows() == [[2]] and r.usage["calls"] == 2  # no correction call
    (a,) = r.attempts
    assert a["rewrites"] == {"named_filters": "orders.status = 'paid' added"}
    assert (
        f"a filter on the value the question names was added ({a['rewrites']['named_filters']})"
        in r.confidence["reasons"]
    )
    # a question that names no value, one that excludes, or the setting off: as written
    for question, settings in (
        ("How many orders are there?", None),
        ("How many orders are not paid?", None),
        ("How many paid orders are there?", UNFILTERED),
    ):
        run = ask_voting(
            db, [sql(every)], [sql(every)], question=question, **({"settings": settings} if settings else {})
        )
        assert run.result.rows() == [[3]] and "rewrites" not in run.result.attempts[0], question


@pytest.mark.engines(["sqlite", "postgresql", "duckdb"])
def test_rows_compared_with_a_subsets_average_are_not_limited_to_that_subset(engine, db):
    # paid orders average 8.75: orders 10 (12.50) and 11 (99.99, new) are above it
    both = (
        "SELECT id FROM orders WHERE status = 'paid' AND amount > "
        "(SELECT AVG(amount) FROM orders WHERE status = 'paid') ORDER BY id"
    )
    question = "Which orders have an amount above the average amount of paid orders?"
    run = ask_voting(db, [sql(both)], [sql(both), sql("SELECT 99")], question=question)
    r = run.result
    assert r.rows() == [[10], [11]] and r.usage["calls"] == 2
    (a,) = r.attempts
    assert a["rewrites"] == {"subset_averages": "status = 'paid' left to the average"}
    assert any(
        reason.startswith("the rows compared with a subset's average are no longer limited")
        for reason in r.confidence["reasons"]
    )
    # the question limits the compared rows too, or the setting off: as written
    limits_both = "Which paid orders have an amount above the average amount of paid orders?"
    assert rows_as_written(db, both, "subset_averages", limits_both, question) == [[[10]]] * 2


@pytest.mark.engines(["sqlite", "postgresql", "duckdb"])
def test_a_draft_naming_a_column_of_a_table_it_does_not_read_gets_that_table_joined(engine, db):
    # name is a column of customers, which orders links to by its one foreign key
    missing = "SELECT DISTINCT name FROM orders WHERE status = 'paid' ORDER BY name"
    run = ask_voting(
        db, [sql(missing)], [sql(missing), sql("SELECT 99")], question="Which customers have a paid order?"
    )
    r = run.result
    assert (r.status, r.stop_reason) == ("success", "voted")
    assert r.rows() == [["Ada"], ["Grace"]] and r.usage["calls"] == 2  # no correction call
    assert "JOIN" in r.sql and "customer_id" in r.sql


@pytest.mark.engines(["sqlite", "postgresql", "duckdb"])
def test_drafts_agreeing_on_a_query_that_leaves_out_a_value_the_question_names_are_not_trusted(
    engine, db, monkeypatch
):
    every = "SELECT count(*) AS n FROM orders"
    run = ask_voting(
        db, [sql(every)], [sql(every)], question="How many paid orders are there?", settings=UNFILTERED
    )
    r = run.result
    assert (r.status, r.stop_reason, r.sql) == ("success", "voted", every)
    assert r.confidence["level"] == "low"
    assert (
        "the question names 'paid' (a value of orders.status), the query does not use it"
        in r.confidence["reasons"]
    )
    # the answer itself is the model's: the doubt changes how far it is trusted, not what it is
    assert r.usage["calls"] == 2
    # the value used (in any case): trusted as before
    run = ask_voting(db, [sql(PAID)], [sql(PAID)], question="How many PAID orders are there?")
    assert run.result.confidence["level"] == "high"
    # value lookups off: no doubt from the data
    run = ask_voting(
        db,
        [sql(every)],
        [sql(every)],
        question="How many paid orders are there?",
        settings=AgentSettings(value_hints=False),
    )
    # ... but not high either: nothing in the query stands for the question's 'paid'
    unread = "nothing in the query stands for 'paid' of the question"
    assert run.result.confidence["level"] == "medium" and unread in run.result.confidence["reasons"]
    assert list(run.result.attempts[-1]["checks"]) == ["words_not_read"]
    # no time left for the lookups (a large database): no doubt from the data either
    import sqlnb.agent.runner as runner_module

    monkeypatch.setattr(runner_module, "CHECK_SECONDS", 0)
    run = ask_voting(
        db, [sql(every)], [sql(every)], question="How many paid orders are there?", settings=UNFILTERED
    )
    assert run.result.confidence["level"] == "medium" and unread in run.result.confidence["reasons"]


@RULE_ENGINES
def test_remembered_answers_are_shown_only_when_the_answer_without_them_is_rated_low(engine, db):
    every = "SELECT count(*) AS n FROM orders"
    remembered = [
        {"id": 7, "question": "Which orders are paid?", "sql": "SELECT id FROM orders WHERE status = 'paid'"}
    ]

    def shown(prompts) -> bool:
        return any("answered before" in content for p in prompts for _, content in p)

    # the drafts without the examples agree, but leave out the value the question names
    # (low): the turn starts over with the examples, and that answer is the one given
    run = ask_voting(
        db,
        [sql(every), sql(PAID)],
        [sql(every), sql(PAID)],
        question="How many paid orders are there?",
        examples=remembered,
        settings=UNFILTERED,
    )
    r = run.result
    assert (r.status, r.sql, r.confidence["level"]) == ("success", PAID, "high")
    assert r.usage["calls"] == 4 and r.examples == [{"id": 7, "question": "Which orders are paid?"}]
    assert not shown(run.model.prompts[:1] + run.model.draft_prompts[:1])
    assert shown(run.model.prompts[1:]) and shown(run.model.draft_prompts[1:])
    assert [e for e in run.events if e["type"] == "memory"] == [
        {"type": "memory", "examples": 1, "level": "low"}
    ]
    assert (
        "Not sure of that answer (low confidence): asking again with 1 remembered answer of this "
        "database as examples…"
    ) in [ask_progress_line(e) for e in run.events]
    # the conversation holds the question once, with the answer given
    agent = Agent()
    for question, replies, drafts in (
        ("How many orders are there?", [sql(every)], [sql(every)]),
        ("And how many paid ones?", [sql(every), sql(PAID)], [sql(every), sql(PAID)]),
    ):
        model = ScriptedChatModel(replies=replies, drafts=drafts)
        r = agent.ask(
            question,
            db,
            connection="shop",
            model=ModelClient(model),
            examples=remembered,
            settings=UNFILTERED,
        )
    assert r.sql == PAID and r.usage["calls"] == 4
    assert [(t["question"], t["sql"]) for t in agent.history("shop")] == [
        ("How many orders are there?", every),
        ("And how many paid ones?", PAID),
    ]
    assert "How many orders are there?" in str(model.prompts[1])  # the second pass sees the first turn

    # trusted without them: one pass, the examples never shown
    run = ask_voting(
        db, [sql(PAID)], [sql(PAID)], question="How many paid orders are there?", examples=remembered
    )
    assert run.result.confidence["level"] == "high" and run.result.examples == []
    assert run.result.usage["calls"] == 2 and not shown(run.model.prompts + run.model.draft_prompts)
    # rated medium (as many drafts ask back as agree on it): kept, no second pass
    run = ask_voting(
        db,
        ["CLARIFY: Which status do you mean?"],
        [sql(PAID), "CLARIFY: Paid when?", sql(PAID)],
        examples=remembered,
    )
    assert (run.result.sql, run.result.confidence["level"], run.result.examples) == (PAID, "medium", [])
    assert not any(e["type"] == "memory" for e in run.events)
    assert not shown(run.model.prompts + run.model.draft_prompts)
    # the model failing: no second pass (it would fail again, after another wait)
    run = ask_voting(db, [], [], question="How many paid orders are there?", examples=remembered)
    assert run.result.stop_reason == "model_error" and not any(e["type"] == "memory" for e in run.events)
    # the setting off: shown from the first call on, one pass
    run = ask_voting(
        db,
        [sql(every)],
        [sql(every)],
        question="How many paid orders are there?",
        examples=remembered,
        settings=AgentSettings(memory_when_unsure=False, disabled_rewrites={"named_filters"}),
    )
    assert run.result.sql == every and run.result.usage["calls"] == 2 and shown(run.model.prompts[:1])


@RULE_ENGINES
def test_a_second_pass_that_finds_no_answer_leaves_the_first_answer(engine, db):
    every = "SELECT count(*) AS n FROM orders"
    remembered = [
        {"id": 7, "question": "Which orders are paid?", "sql": "SELECT id FROM orders WHERE status = 'paid'"}
    ]
    bad = [sql(f"SELECT count(*) FROM payments_{i}") for i in range(12)]  # no such tables
    agent = Agent()
    # the first question on the connection (the second pass runs on a fresh thread), then
    # a follow-up (the second pass forks from the conversation before it)
    for question in ("How many paid orders are there?", "And how many paid ones in all?"):
        model = ScriptedChatModel(replies=[sql(every)] + bad, drafts=[sql(every)] + bad)
        events: list[dict[str, Any]] = []
        r = agent.ask(
            question,
            db,
            connection="shop",
            model=ModelClient(model),
            examples=remembered,
            on_event=events.append,
            settings=UNFILTERED,
        )
        # the answer without the examples, rated low, is better than none
        assert (r.status, r.sql, r.confidence["level"]) == ("success", every, "low")
        assert r.examples == [] and r.usage["calls"] > 4  # both passes' calls are counted
        assert [e for e in events if e["type"] == "memory"] == [
            {"type": "memory", "examples": 1, "level": "low"},
            {"type": "memory", "kept_first": True, "examples": 1, "level": "low"},
        ]
        assert [ask_progress_line(e) for e in events if e["type"] == "memory"][1] == (
            "No answer found with the remembered answers: the first answer stands (low confidence)."
        )
        # the second pass ran, with the examples, and tried the failing queries
        assert any("answered before" in content for p in model.prompts[1:] for _, content in p)
        assert any(e["type"] == "attempt" and "payments_" in (e["attempt"]["sql"] or "") for e in events)
    # the conversation goes on from the answers given, each question once
    assert [(t["question"], t["sql"], t["status"]) for t in agent.history("shop")] == [
        ("How many paid orders are there?", every, "success"),
        ("And how many paid ones in all?", every, "success"),
    ]
    model = ScriptedChatModel(replies=[sql(PAID)], drafts=[sql(PAID)])
    r = agent.ask("Only the paid ones?", db, connection="shop", model=ModelClient(model))
    assert r.sql == PAID and len(agent.history("shop")) == 3
    prompt = str(model.prompts[0])
    assert "How many paid orders are there?" in prompt and "payments_" not in prompt


@RULE_ENGINES
def test_drafts_that_found_nothing_outweigh_a_clarification(engine, db):
    none = "SELECT count(*) AS n FROM orders WHERE status = 'refunded'"
    # one draft asks back, three found nothing: not an ambiguous question
    run = ask_voting(
        db,
        ["CLARIFY: Which status do you mean?", sql(none), "FINAL"],
        [sql(none), sql(none), sql(none), sql(none)],
    )
    r = run.result
    assert r.questions == [] and r.status == "success"
    assert run.model.draft_position == 3 and r.attempts[0]["nothing_found"]
    # as many ask back as agree on an answer: the answer (asking costs the user a turn)
    run = ask_voting(
        db, ["CLARIFY: Which status do you mean?"], [sql(PAID), "CLARIFY: Paid when?", sql(PAID)]
    )
    r = run.result
    assert outcome(run) == ("success", "voted", PAID) and r.questions == []
    assert run.model.draft_position == 3 and r.confidence["level"] == "medium"
    # without one asking back, drawing stops after three drafts that found nothing
    run = ask_voting(db, [sql(none), sql(none)], [sql(none), sql(none), sql(PAID), sql(PAID)])
    assert run.model.draft_position == 2 and run.result.questions == []
    # a clarification takes a majority of the whole round: two of the first three asking
    # back do not end it; a third does
    run = ask_voting(
        db,
        [sql(none)],
        ["CLARIFY: Which status?", "CLARIFY: Refunded when?", "CLARIFY: Which year?", sql(PAID)],
    )
    r = run.result
    assert run.model.draft_position == 3 and r.status == "needs_clarification"
    assert r.questions == ["Which status?"] and r.sql == none
    # three ask back, one found nothing: a clarification, with the query found
    run = ask_voting(
        db,
        ["CLARIFY: Which status do you mean?"],
        ["CLARIFY: Refunded or returned?", sql(none), "CLARIFY: Which year?", sql(PAID)],
    )
    assert (run.result.status, run.result.questions) == ("needs_clarification", ["Which status do you mean?"])
    assert run.result.sql == none and run.model.draft_position == 3


@RULE_ENGINES
def test_drafts_whose_clarify_asks_nothing_do_not_ask_back(engine, db):
    # drafts that "ask back" with the user's question echoed, the prompt's own text or SQL:
    # no clarification, however many of them; they wrote no query
    question = "How many orders are paid?"
    bogus = [
        f"CLARIFY:\n- {question}\n- SELECT count(*) FROM orders WHERE status = 'paid'",
        f"CLARIFY: {question}",
        "CLARIFY:\n- The query ran: 1 row.\n" + sql(PAID),
    ]
    run = ask_voting(db, [sql(PAID)], bogus + [sql(PAID)], question=question)
    r = run.result
    assert (r.status, r.questions, r.sql) == ("success", [], PAID)
    assert run.model.draft_position == 3
    assert r.confidence["reasons"][:2] == [
        "1 of 4 drafts gave this result",
        "3 drafts asked back or wrote no query",
    ]
    # a draft that does ask something still counts
    run = ask_voting(
        db,
        ["CLARIFY: Paid when?"],
        ["CLARIFY: Which year?", "CLARIFY: Paid in which currency?", sql(PAID)],
        question=question,
    )
    assert run.result.status == "needs_clarification" and run.result.questions == ["Paid when?"]


@RULE_ENGINES
def test_a_draft_failing_on_a_misspelt_column_is_corrected_without_a_model_call(engine, db):
    misspelt = "SELECT count(*) AS n FROM orders WHERE stauts = 'paid'"
    run = ask_voting(db, [sql(misspelt)], [sql(PAID), sql("SELECT 7")])
    r = run.result
    # the reply's corrected query runs in its place and agrees with the first draft
    assert r.status == "success" and r.stop_reason == "voted"
    assert "status" in r.sql and "stauts" not in r.sql and r.rows() == [[2]]
    assert r.usage["calls"] == 2 and r.confidence["level"] == "high"
    (a,) = r.attempts
    assert all(c["ok"] for c in a["candidates"]) and sum(c["weight"] for c in a["candidates"]) == 2
    # a later draft with the same misspelling counts for the corrected query, run once
    run = ask_voting(db, [sql(misspelt)], [sql(misspelt), sql(PAID)])
    (a,) = run.result.attempts
    assert run.result.usage["calls"] == 2 and [c["weight"] for c in a["candidates"]] == [2]


@RULE_ENGINES
def test_after_the_drafts_a_correction_runs_without_retry_drafts_or_a_review(engine, db):
    # every draft fails (no name to correct): drawing stops after three, the model's
    # correction is the only new candidate, and once it finds something it is the answer
    run = ask_voting(
        db,
        [sql(BAD_COLUMN), sql(COUNT_CUSTOMERS), "FINAL"],
        [sql(BAD_COLUMN), sql(BAD_COLUMN_3), sql(COUNT_CUSTOMERS), sql(COUNT_CUSTOMERS)],
    )
    r = run.result
    assert outcome(run) == ("success", "executed", COUNT_CUSTOMERS) and r.rows() == [[3]]
    assert r.usage["calls"] == 4 and run.model.draft_position == 2 and run.model.remaining == 1
    assert [a["ok"] for a in r.attempts] == [False, True]
    assert r.confidence["level"] == "low"
    assert "1 earlier query of this question failed" in r.confidence["reasons"]


@RULE_ENGINES
def test_first_drafts_are_off_for_models_that_do_not_sample_and_when_set_to_0(engine, db):
    run = ask(db, sql(PAID), "FINAL", question="How many orders are paid?")  # no drafts in the script
    assert outcome(run) == ("success", "finalized", PAID) and run.result.usage["calls"] == 2
    assert run.result.confidence["level"] == "medium"
    assert run.result.confidence["reasons"] == ["the model checked the result and kept it"]
    run = ask_voting(db, [sql(PAID), "FINAL"], [], settings=AgentSettings(first_drafts=0))
    assert outcome(run) == ("success", "finalized", PAID) and run.model.draft_position == 0


def test_default_first_drafts_by_kind_of_model():
    from sqlnb.agent.settings import default_first_drafts

    class Client:
        def __init__(self, name):
            self.name = name

    assert default_first_drafts(Client("llamacpp:qwen2.5-coder-1.5b")) == 3
    assert default_first_drafts(Client("scripted:replies.json")) == 3
    assert default_first_drafts(Client("anthropic:claude-sonnet-4-5")) == 0


# ---------------------------------------------------------------------------
# the first answer and its first drafts written side by side (llama.cpp in-process)
# ---------------------------------------------------------------------------


class TogetherClient(ModelClient):
    """A scripted model that says it writes replies side by side: each batch is
    recorded, its replies come from the script as separate calls would."""

    def __init__(self, model: ScriptedChatModel):
        super().__init__(model)
        self.batches: list[list[dict[str, Any]]] = []

    @property
    def side_by_side(self) -> bool:
        return True

    def invoke_many(self, messages, specs, *, stop=None, draft=True):
        self.batches.append([dict(s) for s in specs])
        return [
            self.invoke(
                messages, temperature=s.get("temperature"), seed=s.get("seed"), stop=stop, draft=draft
            )
            for s in specs
        ]


def ask_together(adapter, replies, drafts, **options: Any) -> tuple[Run, TogetherClient]:
    model = ScriptedChatModel(replies=list(replies), drafts=list(drafts))
    client = TogetherClient(model)
    result = Agent().ask(
        options.pop("question", "How many orders are paid?"),
        adapter,
        connection="shop",
        model=client,
        **options,
    )
    return Run(result, model, []), client


@RULE_ENGINES
def test_first_answer_and_two_drafts_are_written_together_and_all_count(engine, db):
    from sqlnb.agent.first_round import draft_seed
    from sqlnb.agent.nodes import TOGETHER_DRAFTS

    # the reply and the first draft agree: the second draft, written with them, still
    # counts (it is paid for), and no draft is drawn after the batch
    run, client = ask_together(db, [sql(PAID)], [sql(PAID), sql("SELECT 7"), sql(PAID)])
    r = run.result
    assert outcome(run) == ("success", "voted", PAID)
    assert len(client.batches) == 1 and len(client.batches[0]) == 1 + TOGETHER_DRAFTS
    reply, *drafts = client.batches[0]
    assert reply["temperature"] is None
    question = "How many orders are paid?"
    assert [d["seed"] for d in drafts] == [draft_seed({"question": question}, j) for j in (0, 1)]
    assert run.model.draft_position == 2 and r.usage["calls"] == 3
    (a,) = r.attempts
    assert sorted(c["weight"] for c in a["candidates"]) == [1, 2]
    # three different results: one more draft is drawn alone, as without the batch
    run, client = ask_together(db, [sql(PAID)], [sql("SELECT 7"), sql("SELECT 8"), sql(PAID)])
    assert outcome(run) == ("success", "voted", PAID)
    assert len(client.batches) == 1 and run.model.draft_position == 3
    assert run.result.usage["calls"] == 4


@RULE_ENGINES
def test_no_batch_after_the_first_call_or_without_drafts(engine, db):
    # a failed first round: the correction is a call of its own
    run, client = ask_together(
        db,
        [sql(BAD_COLUMN), sql(COUNT_CUSTOMERS), "FINAL"],
        [sql(BAD_COLUMN), sql(BAD_COLUMN_3), sql(COUNT_CUSTOMERS)],
        question="How many customers are there?",
    )
    assert run.result.sql == COUNT_CUSTOMERS and len(client.batches) == 1
    # drafts of the first answer off: the reply alone, no batch
    run, client = ask_together(db, [sql(PAID), "FINAL"], [], settings=AgentSettings(first_drafts=0))
    assert outcome(run) == ("success", "finalized", PAID) and client.batches == []
