"""The agent's schema context (sqlnb.agent.context) on real catalogs.

A 1,000-table database (SQLite, DuckDB and PostgreSQL) with realistic names such as
``sales_orders_2019`` or ``hr_timesheets`` and a few foreign keys: the context for a
question stays within its token budget, renders the tables the question names plus their
foreign-key neighbours, and lists the names of the others.  Small schemas go in whole.
"""

from __future__ import annotations

import re

import pytest

from sqlnb.agent.context import build_context, estimate_tokens, render_table
from sqlnb.agent.models import ScriptedChatModel
from sqlnb.agent.prompts import system_prompt
from sqlnb.agent.runner import Agent
from sqlnb.agent.settings import AgentSettings
from tests.engines import ENV_CLASSES

BIG_ENGINES = pytest.mark.engines(["sqlite", "duckdb", "postgresql"])
BUDGET = 6000

DOMAINS = [
    "sales",
    "hr",
    "finance",
    "marketing",
    "inventory",
    "support",
    "logistics",
    "billing",
    "crm",
    "analytics",
]
SUFFIXES = ["", "_2019", "_2020", "_2021", "_archive"]
ENTITY_COLUMNS = {
    "orders": [
        ("ordered_at", "DATE"),
        ("amount", "DECIMAL(12,2)"),
        ("currency", "VARCHAR(3)"),
        ("channel", "VARCHAR(20)"),
        ("status", "VARCHAR(20)"),
    ],
    "customers": [
        ("full_name", "VARCHAR(100)"),
        ("email", "VARCHAR(200)"),
        ("country", "VARCHAR(2)"),
        ("signed_up", "DATE"),
    ],
    "employees": [
        ("full_name", "VARCHAR(100)"),
        ("job_title", "VARCHAR(50)"),
        ("hired_on", "DATE"),
        ("salary", "DECIMAL(10,2)"),
    ],
    "invoices": [
        ("issued_on", "DATE"),
        ("due_on", "DATE"),
        ("total", "DECIMAL(12,2)"),
        ("status", "VARCHAR(20)"),
    ],
    "payments": [("paid_on", "DATE"), ("amount", "DECIMAL(12,2)"), ("method", "VARCHAR(20)")],
    "shipments": [
        ("shipped_on", "DATE"),
        ("carrier", "VARCHAR(30)"),
        ("tracking_code", "VARCHAR(40)"),
        ("weight_kg", "DECIMAL(8,2)"),
    ],
    "products": [
        ("sku", "VARCHAR(20)"),
        ("title", "VARCHAR(100)"),
        ("list_price", "DECIMAL(10,2)"),
        ("category", "VARCHAR(40)"),
    ],
    "tickets": [
        ("opened_at", "DATE"),
        ("priority", "VARCHAR(10)"),
        ("subject", "VARCHAR(200)"),
        ("resolved", "BOOLEAN"),
    ],
    "campaigns": [
        ("title", "VARCHAR(100)"),
        ("starts_on", "DATE"),
        ("ends_on", "DATE"),
        ("spend", "DECIMAL(12,2)"),
    ],
    "accounts": [("account_name", "VARCHAR(100)"), ("industry", "VARCHAR(50)"), ("tier", "VARCHAR(10)")],
    "vendors": [("vendor_name", "VARCHAR(100)"), ("country", "VARCHAR(2)"), ("rating", "INTEGER")],
    "contracts": [("signed_on", "DATE"), ("contract_value", "DECIMAL(12,2)"), ("term_months", "INTEGER")],
    "refunds": [("refunded_on", "DATE"), ("amount", "DECIMAL(12,2)"), ("reason", "VARCHAR(100)")],
    "leads": [("full_name", "VARCHAR(100)"), ("source", "VARCHAR(30)"), ("score", "INTEGER")],
    "warehouses": [("city", "VARCHAR(50)"), ("capacity", "INTEGER"), ("manager", "VARCHAR(100)")],
    "budgets": [("fiscal_year", "INTEGER"), ("department", "VARCHAR(50)"), ("planned", "DECIMAL(14,2)")],
    "timesheets": [("worked_on", "DATE"), ("hours", "DECIMAL(5,2)"), ("project", "VARCHAR(50)")],
    "returns": [("returned_on", "DATE"), ("reason", "VARCHAR(100)"), ("quantity", "INTEGER")],
    "subscriptions": [("plan", "VARCHAR(30)"), ("started_on", "DATE"), ("monthly_fee", "DECIMAL(8,2)")],
    "events": [("happened_at", "DATE"), ("event_type", "VARCHAR(30)"), ("payload", "VARCHAR(200)")],
}
# table -> (column, referenced table); referenced tables are created first
FOREIGN_KEYS = {
    "sales_orders": ("account_id", "crm_accounts"),
    "billing_invoices": ("order_id", "sales_orders"),
    "billing_payments": ("invoice_id", "billing_invoices"),
    "logistics_shipments": ("order_id", "sales_orders"),
    "support_tickets": ("account_id", "crm_accounts"),
    "hr_timesheets": ("employee_id", "hr_employees"),
}
FIRST = ["crm_accounts", "hr_employees", "sales_orders", "billing_invoices"]


def big_tables() -> list[tuple[str, list[tuple[str, str]]]]:
    """1,000 (name, columns) pairs, referenced tables first."""
    tables = {}
    for domain in DOMAINS:
        for entity, columns in ENTITY_COLUMNS.items():
            for suffix in SUFFIXES:
                tables[f"{domain}_{entity}{suffix}"] = [("id", "INTEGER")] + columns
    assert len(tables) == 1000
    order = FIRST + [n for n in tables if n not in FIRST]
    return [(name, tables[name]) for name in order]


def _value(table: str, column: str, typ: str) -> str:
    if typ == "DATE":
        return "'2021-03-04'"
    if typ == "BOOLEAN":
        return "TRUE"
    if typ == "INTEGER":
        return "1" if column == "id" or column.endswith("_id") else "7"
    if typ.startswith("DECIMAL"):
        return "12.5"
    size = int(re.search(r"\d+", typ).group())
    text = {2: "NL", 3: "EUR"}.get(size) or f"{column.replace('_', ' ')} of {table}"[:size]
    return f"'{text}'"


def big_schema_statements() -> list[str]:
    """CREATE TABLE and one row for each of the 1,000 tables, in one transaction."""
    creates, inserts = [], []
    for name, columns in big_tables():
        defs = [f"{c} {t} PRIMARY KEY" if c == "id" else f"{c} {t}" for c, t in columns]
        values = [_value(name, c, t) for c, t in columns]
        if name in FOREIGN_KEYS:
            col, ref = FOREIGN_KEYS[name]
            defs.append(f"{col} INTEGER REFERENCES {ref}(id)")
            values.append("1")
        creates.append(f"CREATE TABLE {name} ({', '.join(defs)})")
        inserts.append(f"INSERT INTO {name} VALUES ({', '.join(values)})")
    return ["BEGIN", *creates, *inserts, "COMMIT"]


@pytest.fixture(scope="module")
def big(engine, workdir):
    """A database of 1,000 tables with one row each (module-scoped: read it only)."""
    env = ENV_CLASSES[engine](workdir)
    env.create()
    env.admin(big_schema_statements())
    yield env
    env.drop()


@pytest.fixture
def big_catalog(big, connect_to):
    return connect_to(big).catalog()


def bare(names) -> set[str]:
    return {n.split(".")[-1] for n in names}


def assert_within_budget(ctx, budget: int = BUDGET) -> None:
    assert ctx.tokens == estimate_tokens(ctx.text)
    assert ctx.tokens <= budget, (ctx.tokens, budget)


def other_names(ctx) -> list[str]:
    """The table names listed (not rendered) at the end of the context."""
    m = re.search(r"Other tables in the database[^\n]*:\n(.*)\Z", ctx.text, re.S)
    assert m, "no list of other tables"
    return [n.strip() for n in m.group(1).split(",") if n.strip()]


# ---------------------------------------------------------------------------
# 1,000 tables
# ---------------------------------------------------------------------------


@BIG_ENGINES
def test_the_large_catalog(engine, big_catalog):
    names = [t.name for t in big_catalog.tables]
    assert len(names) == 1000 and len(set(names)) == 1000
    sales_orders = big_catalog.find("sales_orders")
    assert [fk.ref_table for fk in sales_orders.foreign_keys] == ["crm_accounts"]
    full = sum(estimate_tokens(render_table(t, big_catalog, big_catalog.dialect)) for t in big_catalog.tables)
    assert full > 5 * BUDGET  # far too large to send whole


@BIG_ENGINES
@pytest.mark.parametrize(
    "question, named, neighbours",
    [
        (
            "What is the total amount of sales_orders per month?",
            {"sales_orders"},
            {"crm_accounts", "billing_invoices", "logistics_shipments"},
        ),
        ("How many hours did each employee log in hr_timesheets?", {"hr_timesheets"}, {"hr_employees"}),
        ("Which support tickets were opened for each account?", {"support_tickets"}, {"crm_accounts"}),
    ],
)
def test_context_has_the_named_tables_and_their_neighbours(engine, big_catalog, question, named, neighbours):
    ctx = build_context(big_catalog, question, big_catalog.dialect, budget=BUDGET)
    assert_within_budget(ctx)
    assert ctx.total_tables == 1000 and not ctx.complete
    rendered = bare(ctx.tables)
    assert named <= rendered and neighbours <= rendered, rendered
    for name in named | neighbours:
        assert re.search(rf"CREATE TABLE {name} \(", ctx.text), name
    # the foreign keys that make them neighbours are shown
    for table, (column, ref) in FOREIGN_KEYS.items():
        if {table, ref} <= rendered:
            assert f"FOREIGN KEY ({column}) REFERENCES {ref}(id)" in ctx.text
    # every other table is at least named, as far as the budget allows
    listed = other_names(ctx)
    assert len(listed) == ctx.listed_names >= 200
    assert not set(listed) & rendered
    assert len(rendered) + ctx.listed_names + ctx.omitted_names == 1000
    assert set(listed) <= {t.name for t in big_catalog.tables}
    if ctx.omitted_names:
        assert f"(and {ctx.omitted_names} more not listed)" in ctx.text


@BIG_ENGINES
def test_join_paths_of_the_chosen_tables(engine, big_catalog):
    ctx = build_context(
        big_catalog, "total amount of sales_orders per month", big_catalog.dialect, with_join_paths=True
    )
    assert "sales_orders.account_id = crm_accounts.id" in ctx.text
    assert "billing_invoices.order_id = sales_orders.id" in ctx.text
    assert_within_budget(ctx)
    plain = build_context(big_catalog, "total amount of sales_orders per month", big_catalog.dialect)
    assert "Join paths" not in plain.text  # the default: foreign keys only in CREATE TABLE
    assert "REFERENCES crm_accounts(id)" in plain.text


@BIG_ENGINES
def test_context_when_the_question_names_nothing(engine, big_catalog):
    ctx = build_context(big_catalog, "Why is the sky blue?", big_catalog.dialect)
    assert_within_budget(ctx)
    assert 0 < len(ctx.tables) < 1000 and ctx.listed_names > 0
    assert "CREATE TABLE" in ctx.text and other_names(ctx)


@BIG_ENGINES
@pytest.mark.parametrize("budget", [6000, 3000, 1200])
def test_context_with_sample_values_stays_within_budget(engine, big_catalog, budget):
    def samples(table):  # long example values for every text column
        return {
            c.name: [f"{c.name} example value number {i} of {table.name}" for i in range(3)]
            for c in table.columns
            if "char" in c.type or "text" in c.type
        }

    question = "What is the total amount of sales_orders per month?"
    ctx = build_context(big_catalog, question, big_catalog.dialect, budget=budget, samples=samples)
    assert_within_budget(ctx, budget)
    assert "sales_orders" in bare(ctx.tables)
    plain = build_context(big_catalog, question, big_catalog.dialect, budget=budget)
    assert bare(plain.tables) == bare(ctx.tables)  # samples never push a table out


@BIG_ENGINES
def test_the_agent_on_a_large_database(engine, big, connect_to):
    conn = connect_to(big)
    agent = Agent()
    model = ScriptedChatModel(replies=["```sql\nSELECT count(*) AS n FROM sales_orders\n```", "FINAL"])
    first = agent.ask(
        "What is the total amount of sales_orders per month?", conn, connection="big", model=model
    )
    assert (first.status, first.stop_reason) == ("success", "finalized")
    assert first.rows() == [[1]]
    # the context the model got: within budget although data sharing is on (sample values
    # may only fill what room the tables leave), with the named table, its neighbour and
    # the names of other tables
    assert_within_budget(first.context)
    system = model.prompts[0][0][1]
    assert first.context.text in system
    assert estimate_tokens(system) <= BUDGET + estimate_tokens(system_prompt(conn.dialect, ""))
    assert re.search(r"CREATE TABLE sales_orders \(", system)
    assert re.search(r"CREATE TABLE crm_accounts \(", system)
    assert "Other tables in the database" in system

    # a follow-up that names no table: the earlier question keeps its tables in view
    follow_up = ScriptedChatModel(replies=["```sql\nSELECT count(*) AS n FROM sales_orders\n```", "FINAL"])
    second = agent.ask("And broken down by week?", conn, connection="big", model=follow_up)
    assert "sales_orders" in bare(second.context.tables)
    assert_within_budget(second.context)
    # ... which a new conversation does not have
    alone = Agent().ask(
        "And broken down by week?", conn, connection="big", model=ScriptedChatModel(replies=["FINAL"])
    )
    assert "sales_orders" not in bare(alone.context.tables)
    assert_within_budget(alone.context)

    # with data sharing off there are no sample values
    private = Agent(settings=AgentSettings(share_data=False))
    model = ScriptedChatModel(replies=["CLARIFY: Which month?"])
    r = private.ask("What is the total amount of sales_orders per month?", conn, model=model)
    assert "e.g." not in model.prompts[0][0][1] and "of sales_orders'" not in model.prompts[0][0][1]
    assert_within_budget(r.context)


# ---------------------------------------------------------------------------
# small schemas
# ---------------------------------------------------------------------------


def test_a_small_schema_is_included_whole(engine, seeded, connect_to):
    catalog = connect_to(seeded).catalog()
    ctx = build_context(catalog, "How many orders are there?", catalog.dialect)
    assert ctx.complete and ctx.total_tables == len(catalog.tables) == 3
    assert ctx.listed_names == ctx.omitted_names == 0
    assert "Other tables" not in ctx.text
    for table in catalog.tables:
        assert render_table(table, catalog, catalog.dialect) in ctx.text
    assert_within_budget(ctx)
    # whatever the question
    assert build_context(catalog, "Why is the sky blue?", catalog.dialect).text == ctx.text


def test_estimate_tokens():
    assert estimate_tokens("") == 0
    assert estimate_tokens("x") == 1
    assert estimate_tokens("x" * 32) == 10  # about 3.2 characters a token
    assert estimate_tokens("x" * 3200) == 1000


# ---------------------------------------------------------------------------
# a prompt longer than the model's context
# ---------------------------------------------------------------------------


@BIG_ENGINES
def test_a_prompt_too_long_for_the_model_is_asked_again_with_less_of_the_schema(engine, big, connect_to):
    """A model whose tokenizer cuts the schema finer than the estimate (two characters a
    token) and whose context holds 8192 tokens refuses the first prompt; the question is
    asked again with fewer tables, the named one kept, and answered.  The next question on
    the connection starts at the smaller schema; one that cannot fit at all fails with a
    hint instead of an exception."""
    conn = connect_to(big)
    agent = Agent(memory=False)
    question = "What is the total amount of sales_orders per month?"

    def model(window: int = 8192) -> ScriptedChatModel:
        return ScriptedChatModel(
            replies=["```sql\nSELECT count(*) AS n FROM sales_orders\n```", "FINAL"],
            context_window=window,
            chars_per_token=2.0,
        )

    first = model()
    r = agent.ask(question, conn, connection="big", model=first)
    assert (r.status, r.stop_reason, r.model_error) == ("success", "finalized", None)
    assert r.rows() == [[1]]
    assert len(first.refused_prompts) == 1
    refused_system, taken_system = first.refused_prompts[0][0][1], first.prompts[0][0][1]
    assert len(taken_system) / 2 < 8192 - 512  # room left for the reply
    assert r.usage["failed_calls"] == 1
    # what the model was shown is the answer's context: fewer tables, the named one kept
    assert r.context.text in taken_system and r.context.text not in refused_system
    whole = Agent(memory=False).schema_context(question, conn)
    assert len(r.context.tables) < len(whole.tables) and r.context.tokens < whole.tokens
    assert "sales_orders" in bare(r.context.tables)
    assert re.search(r"CREATE TABLE sales_orders \(", taken_system)
    assert "Other tables in the database" in taken_system
    # every later call of the turn had the smaller schema too
    assert all(p[0][1] == taken_system for p in first.prompts)

    # the next question on this connection and model starts there: nothing refused
    second = model()
    r2 = agent.ask("And the number of sales_orders per month?", conn, connection="big", model=second)
    assert (r2.status, second.refused_prompts, r2.usage.get("failed_calls", 0)) == ("success", [], 0)

    # a context too small for any schema: a model error that says what to do
    tiny = model(900)
    r3 = Agent(memory=False).ask(question, conn, connection="big", model=tiny)
    assert (r3.status, r3.stop_reason, r3.sql) == ("failed", "model_error", None)
    assert "exceed context window of 900" in r3.model_error
    assert "larger context" in r3.model_error
    assert tiny.prompts == [] and 1 <= len(tiny.refused_prompts) <= 4
