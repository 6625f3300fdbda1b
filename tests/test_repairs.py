"""The answer rewrites' registry (sqlnb.agent.repairs.REWRITES), walked rule by rule.

For every rule of the registry: a small SQLite database, a question and a draft where the
rule fires through the real agent (a scripted model whose reply and draft both write the
draft), proving that it is reachable (the answer is the rewritten query's), switchable (with
its name in ``disabled_rewrites`` the draft stands as written) and reported (the attempt
record carries the rule's name with what it changed, the confidence its reason).  The
tests are parametrized over the registry: a rule added without a case here fails."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from types import SimpleNamespace

import pytest

from sqlnb import errors
from sqlnb.agent.first_round import FirstRound
from sqlnb.agent.repairs import REWRITE_NAMES, REWRITES, Rewrite, rewrite_named
from sqlnb.agent.repairs.rewrite import KEEPS
from sqlnb.agent.runner import Agent
from sqlnb.agent.settings import AgentSettings
from tests.doubles import readonly_sqlite

# three customers and their orders; Ada has a paid and a new order, Grace a paid one, Linus
# none; two suppliers called Acme and one called Zenith, and what each delivered (the
# registry's cases run on it, here and in tests/test_benchmarks.py); two shipments, one of 3.5
# days and one of a day; five order lines, two with no discount recorded (NULL), one with 0 and
# two with a percentage; tools and garden categories with their subcategories; three
# accounts created at moments stored as seconds since 1970 (2023-01-01, 2024-01-01, 2024-06-10)
SHOP = """
    CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
    CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
                         amount REAL, status TEXT);
    INSERT INTO customers VALUES (1, 'Ada'), (2, 'Grace'), (3, 'Linus');
    INSERT INTO orders VALUES (10, 1, 12.5, 'paid'), (11, 1, 99.99, 'new'), (12, 2, 5.0, 'paid');
    CREATE TABLE suppliers (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
    CREATE TABLE deliveries (id INTEGER PRIMARY KEY, supplier_id INTEGER NOT NULL REFERENCES suppliers(id),
                             qty INTEGER);
    INSERT INTO suppliers VALUES (1, 'Acme'), (2, 'Acme'), (3, 'Zenith');
    INSERT INTO deliveries VALUES (1, 1, 5), (2, 2, 4), (3, 3, 7);
    CREATE TABLE shipments (id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL REFERENCES orders(id),
                            sent_at TIMESTAMP NOT NULL, arrived_at TIMESTAMP);
    INSERT INTO shipments VALUES (1, 10, '2024-03-01 08:00:00', '2024-03-04 20:00:00'),
                                 (2, 12, '2024-03-02 09:00:00', '2024-03-03 09:00:00');
    CREATE TABLE order_lines (id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL REFERENCES orders(id),
                              qty INTEGER NOT NULL, price REAL NOT NULL, discount_pct REAL);
    INSERT INTO order_lines VALUES (1, 10, 2, 10.0, NULL), (2, 10, 1, 20.0, 25), (3, 11, 4, 5.0, 10),
                                   (4, 12, 1, 8.0, NULL), (5, 12, 3, 2.0, 0);
    CREATE TABLE categories (id INTEGER PRIMARY KEY, name TEXT NOT NULL,
                             parent_id INTEGER REFERENCES categories(id));
    INSERT INTO categories VALUES (1, 'Tools', NULL), (2, 'Hammers', 1), (3, 'Saws', 1),
                                  (4, 'Garden', NULL), (5, 'Hoses', 4);
    CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT NOT NULL, created INTEGER NOT NULL);
    INSERT INTO accounts VALUES (1, 'ada', 1672531200), (2, 'grace', 1704067200), (3, 'linus', 1718000000);
"""


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    """The :data:`SHOP` database, read-only."""
    conn = readonly_sqlite(tmp_path_factory.mktemp("repairs"), SHOP)
    yield conn
    conn.close()


@dataclass(frozen=True)
class Case:
    question: str
    draft: str  # what the model writes
    rows: list  # the rewritten query's rows (sorted)
    changed: str  # what the rule says it changed


CASES = {
    "link_joins": Case(
        "How many orders did each customer place?",
        "SELECT c.name, COUNT(*) AS n FROM customers AS c JOIN orders AS o ON c.id = o.id GROUP BY c.name",
        [["Ada", 2], ["Grace", 1]],
        "c.id = o.id → customers.id = orders.customer_id",
    ),
    "named_filters": Case(
        "How many paid orders are there?",
        "SELECT count(*) AS n FROM orders",
        [[2]],
        "orders.status = 'paid' added",
    ),
    "subset_averages": Case(
        "Which orders have an amount above the average amount of paid orders?",
        "SELECT id FROM orders WHERE status = 'paid' AND amount > "
        "(SELECT AVG(amount) FROM orders WHERE status = 'paid')",
        [[10], [11]],
        "status = 'paid' left to the average",
    ),
    "date_difference": Case(
        "On average, how many days did a shipment take to arrive?",
        "SELECT AVG(arrived_at - sent_at) AS days FROM shipments",
        [[2.25]],
        "arrived_at - sent_at counted in days",
    ),
    "epoch_dates": Case(
        "How many accounts were created in 2024?",
        "SELECT COUNT(*) AS n FROM accounts WHERE strftime('%Y', created) = '2024'",
        [[2]],
        "created as seconds since 1970",
    ),
    "date_part_as_number": Case(
        "How many shipments were sent each year?",
        "SELECT strftime('%Y', sent_at) AS year, COUNT(*) AS n FROM shipments GROUP BY year",
        [[2024, 2]],
        "STRFTIME('%Y', sent_at) as a number",
    ),
    "percent_scale": Case(
        "What was the revenue of the order lines after discounts?",
        "SELECT SUM(qty * price * (1 - discount_pct)) AS revenue FROM order_lines",
        [[67.0]],
        "1 - discount_pct → 1 - COALESCE(discount_pct, 0) / 100.0 (a percentage, stored from 0 to 100)",
    ),
    "self_join_side": Case(
        "Which categories belong to Tools?",
        "SELECT T1.name FROM categories AS T1 JOIN categories AS T2 ON T1.id = T2.parent_id WHERE T1.name = 'Tools'",
        [["Hammers"], ["Saws"]],
        "T1.name → T2.name",
    ),
    "names_for_ids": Case(
        "Which customer has the most orders, and how many are they?",
        "SELECT customer_id, COUNT(*) AS n FROM orders GROUP BY customer_id ORDER BY n DESC LIMIT 1",
        [["Ada", 2]],
        "orders.customer_id → customers.name",
    ),
    "group_by_key": Case(
        "Which supplier delivered the most? Give the name.",
        "SELECT s.name FROM suppliers AS s JOIN deliveries AS d ON d.supplier_id = s.id "
        "GROUP BY s.name ORDER BY SUM(d.qty) DESC LIMIT 1",
        [["Zenith"]],
        "grouped by s.id as well",
    ),
}


def ask(shop, tmp_path, case: Case, settings: AgentSettings | None = None):
    """``case.question`` asked through the agent with a scripted model (``scripted:`` spec)
    whose reply and every sampled draft write ``case.draft``."""
    script = tmp_path / f"script-{len(list(tmp_path.glob('script-*')))}.json"
    block = f"```sql\n{case.draft}\n```"
    script.write_text(json.dumps({"replies": [block], "drafts": [block] * 3}))
    return Agent(memory=False).ask(
        case.question, shop, connection="shop", model=f"scripted:{script}", settings=settings
    )


def rows(result) -> list:
    return sorted(result.rows(100))


@pytest.mark.parametrize("rewrite", REWRITES, ids=[r.name for r in REWRITES])
def test_each_rewrite_is_reachable_switchable_and_reported(shop, tmp_path, rewrite):
    assert rewrite.name in CASES, f"the rewrite {rewrite.name} has no case in tests/test_repairs.py"
    case = CASES[rewrite.name]
    as_written = sorted([list(r) for r in shop.execute(case.draft).rows])
    assert as_written != case.rows  # the case is one where the rule changes the answer

    # reachable: the rewritten query answers, without a model call for it
    on = ask(shop, tmp_path, case)
    assert on.status == "success" and on.stop_reason == "voted", on.attempts
    assert rows(on) == case.rows and on.sql != case.draft
    assert on.usage["calls"] == 2  # the reply and one draft, both rewritten alike
    # reported: the attempt record by the rule's name, the confidence by its reason
    (attempt,) = on.attempts
    assert attempt["rewrites"] == {rewrite.name: case.changed}
    assert rewrite.reason_for(case.changed) in on.confidence["reasons"]

    # switchable: with its name disabled the draft stands as written
    off = ask(shop, tmp_path, case, AgentSettings(disabled_rewrites={rewrite.name}))
    assert off.status == "success" and off.sql == case.draft
    assert rows(off) == as_written and "rewrites" not in off.attempts[0]
    assert rewrite.reason_for(case.changed) not in off.confidence["reasons"]
    # and only its own name turns it off
    others = AgentSettings(disabled_rewrites=set(REWRITE_NAMES) - {rewrite.name})
    assert ask(shop, tmp_path, case, others).attempts[0]["rewrites"] == {rewrite.name: case.changed}


def test_every_case_belongs_to_a_rule_of_the_registry():
    assert set(CASES) == set(REWRITE_NAMES)  # a retired rule takes its case with it


def test_the_registry_names_each_rule_once_in_the_order_applied():
    assert REWRITE_NAMES == (
        "link_joins",
        "named_filters",
        "subset_averages",
        "date_difference",
        "epoch_dates",
        "date_part_as_number",
        "percent_scale",
        "self_join_side",
        "names_for_ids",
        "group_by_key",
    )
    for rewrite in REWRITES:
        assert isinstance(rewrite, Rewrite) and rewrite_named(rewrite.name) is rewrite
        assert re.fullmatch(r"[a-z]+(_[a-z]+)*", rewrite.name)
        assert rewrite.summary and "\n" not in rewrite.summary and rewrite.keeps in KEEPS
        assert "{change}" in rewrite.reason and rewrite.reason_for("X").endswith("(X)")
    # the rules that read stored values: not without them
    assert [r.name for r in REWRITES if r.needs_values] == [
        "named_filters",
        "epoch_dates",
        "percent_scale",
    ]
    with pytest.raises(KeyError):
        rewrite_named("names_for_id")


def test_a_rewrite_that_reads_stored_values_does_not_run_without_them(shop, tmp_path):
    for name in ("named_filters", "epoch_dates", "percent_scale"):
        case = CASES[name]
        for settings in (AgentSettings(value_hints=False), AgentSettings(share_data=False)):
            result = ask(shop, tmp_path, case, settings)
            assert result.sql == case.draft and "rewrites" not in result.attempts[0], (name, settings)


def test_rewrites_chain_and_each_keeps_its_record(shop, tmp_path):
    # an unlinked join whose ids the question asks the names of: joined along the key,
    # then the customer's name shown for the id
    case = Case(
        "How many orders did each customer place?",
        "SELECT o.customer_id, COUNT(*) AS n FROM orders AS o JOIN customers AS c ON c.id = o.id "
        "GROUP BY o.customer_id",
        [],
        "",
    )
    result = ask(shop, tmp_path, case)
    assert rows(result) == [["Ada", 2], ["Grace", 1]]
    assert list(result.attempts[0]["rewrites"]) == ["link_joins", "names_for_ids"]
    reasons = result.confidence["reasons"]
    joined = next(i for i, r in enumerate(reasons) if r.startswith("joined along the foreign keys"))
    named = next(i for i, r in enumerate(reasons) if r.startswith("names shown for the ids"))
    assert joined < named  # in the registry's order
    # the second one off: the first still stands
    result = ask(shop, tmp_path, case, AgentSettings(disabled_rewrites={"names_for_ids"}))
    assert rows(result) == [[1, 2], [2, 1]] and list(result.attempts[0]["rewrites"]) == ["link_joins"]


def test_an_unknown_rewrite_name_is_refused_with_the_known_ones():
    with pytest.raises(errors.ConfigurationError) as refused:
        AgentSettings(disabled_rewrites={"named_filters", "named_value"})
    text = str(refused.value)
    assert "'named_value'" in text and "'named_filters'" not in text.split("(")[0]
    assert all(name in text for name in REWRITE_NAMES)
    one_off = AgentSettings(disabled_rewrites=["named_filters"])
    assert one_off.disabled_rewrites == frozenset({"named_filters"})
    assert AgentSettings().disabled_rewrites == frozenset()


def test_stand_ins_are_followed_to_the_end_of_their_chain_and_a_cycle_stops():
    ctx = SimpleNamespace(
        settings=AgentSettings(first_drafts=2),
        model=SimpleNamespace(name="scripted:x"),
        distinct_values=None,
        catalog=None,
        prerun={},
    )
    round_ = FirstRound({"question": "q", "dialect": "sqlite"}, None, [], ctx)
    round_.stand_ins.update({"a": "b", "b": "c", "c": "d", "x": "y", "y": "x", "s": "s"})
    assert (
        round_.stand_in_of("a") == "d" and round_.stand_in_of("c") == "d" and round_.stand_in_of("d") == "d"
    )
    assert round_.stand_in_of("x") == "y" and round_.stand_in_of("y") == "x"  # no endless loop
    assert round_.stand_in_of("s") == "s"
    # longer than any fixed number of steps
    round_.stand_ins.update({f"n{i}": f"n{i + 1}" for i in range(20)})
    assert round_.stand_in_of("n0") == "n20"


# ---- date_difference on each engine's types, as a function ---------------------------------


def _trips(*columns: tuple[str, str]):
    from sqlnb.adapters.catalog import Catalog, Column, Table

    table = Table(
        schema=None, name="trips", columns=[Column("id", "INTEGER"), *[Column(n, t) for n, t in columns]]
    )
    return Catalog(dialect="x", tables=[table])


@pytest.mark.parametrize(
    "dialect, types, question, expected",
    [
        # SQLite subtracts text (a year's difference): days, by the declared type or a date's name
        (
            "sqlite",
            ("TIMESTAMP", "TIMESTAMP"),
            "How long did trips take?",
            "(JULIANDAY(ended_at) - JULIANDAY(started_at))",
        ),
        (
            "sqlite",
            ("TEXT", "TEXT"),
            "How many hours did trips take?",
            "((JULIANDAY(ended_at) - JULIANDAY(started_at)) * 24)",
        ),
        # MySQL subtracts YYYYMMDDhhmmss numbers
        (
            "mysql",
            ("DATETIME", "DATETIME"),
            "How many days did trips take?",
            "TIMESTAMPDIFF(SECOND, started_at, ended_at) / 86400",
        ),
        # DuckDB and PostgreSQL give an interval for two timestamps
        (
            "duckdb",
            ("TIMESTAMP", "TIMESTAMP"),
            "How many days did trips take?",
            "(EPOCH(ended_at) - EPOCH(started_at)) / 86400",
        ),
        (
            "postgres",
            ("timestamp without time zone", "timestamp without time zone"),
            "Trips in weeks?",
            "/ 7",
        ),
    ],
)
def test_date_difference_counts_days_where_the_engine_gives_no_number(dialect, types, question, expected):
    from sqlnb.agent.repairs.dates import date_difference

    catalog = _trips(("started_at", types[0]), ("ended_at", types[1]))
    out = date_difference("SELECT AVG(ended_at - started_at) AS t FROM trips", dialect, catalog, question)
    assert out is not None and expected in out[0], out
    assert out[1].startswith("ended_at - started_at counted in ")


@pytest.mark.parametrize(
    "dialect, types, question",
    [
        ("duckdb", ("DATE", "DATE"), "How many days did trips take?"),  # DuckDB counts days of DATEs
        ("postgres", ("date", "date"), "How many days did trips take?"),  # so does PostgreSQL
        ("duckdb", ("TIMESTAMP", "TIMESTAMP"), "How long did trips take?"),  # an interval, no unit asked
        (
            "sqlite",
            ("TIMESTAMP", "TIMESTAMP"),
            "How many years apart are the dates?",
        ),  # not counted from days
        ("sqlite", ("INTEGER", "INTEGER"), "How many days did trips take?"),  # numbers (epochs) subtract
        ("sqlite", ("TEXT", "TEXT"), "How many days did trips take?"),  # text not named as a date
        ("snowflake", ("TIMESTAMP_NTZ", "TIMESTAMP_NTZ"), "How many days did trips take?"),  # not known here
    ],
)
def test_date_difference_leaves_what_already_counts_or_is_not_a_date(dialect, types, question):
    from sqlnb.agent.repairs.dates import date_difference

    names = (
        ("started_at", "ended_at")
        if types != ("TEXT", "TEXT") or "years" in question
        else ("start_code", "end_code")
    )
    catalog = _trips((names[0], types[0]), (names[1], types[1]))
    sql = f"SELECT AVG({names[1]} - {names[0]}) AS t FROM trips"
    assert date_difference(sql, dialect, catalog, question) is None


# ---- date_part_as_number, percent_scale, self_join_side, as functions ------------------------


@pytest.mark.parametrize(
    "dialect, sql, expected",
    [
        (
            "sqlite",
            "SELECT strftime('%Y', d) AS year, strftime('%m', d) AS month, COUNT(*) FROM t GROUP BY year, month",
            "SELECT CAST(STRFTIME('%Y', d) AS INTEGER) AS year, CAST(STRFTIME('%m', d) AS INTEGER) AS month, "
            "COUNT(*) FROM t GROUP BY year, month",
        ),
        (
            "duckdb",
            "SELECT strftime(d, '%Y') AS y FROM t",
            "SELECT CAST(STRFTIME(d, '%Y') AS INT) AS y FROM t",
        ),
        ("postgres", "SELECT to_char(d, 'YYYY') FROM t", "SELECT CAST(TO_CHAR(d, 'YYYY') AS INT) FROM t"),
        ("mysql", "SELECT DATE_FORMAT(d, '%Y') FROM t", "SELECT CAST(DATE_FORMAT(d, '%Y') AS SIGNED) FROM t"),
        # a month with its year is text on every engine; a year inside the query stays as it is
        ("sqlite", "SELECT strftime('%Y-%m', d) AS month FROM t", None),
        ("sqlite", "SELECT COUNT(*) FROM t WHERE strftime('%Y', d) = '2024'", None),
        ("sqlite", "SELECT y FROM (SELECT strftime('%Y', d) AS y FROM t) AS s", None),
    ],
)
def test_date_part_as_number_casts_only_an_answer_column_of_one_date_part(dialect, sql, expected):
    from sqlnb.agent.repairs.dates import date_part_as_number

    out = date_part_as_number(sql, dialect)
    assert (out[0] if out else None) == expected


def test_a_year_the_query_compares_by_its_alias_still_finds_its_rows(shop):
    # SQLite lets WHERE name an answer's alias: the cast year has INTEGER affinity, so the
    # text '2024' compared with it is read as a number and the same rows are found
    from sqlnb.agent.repairs.dates import date_part_as_number

    sql = "SELECT strftime('%Y', sent_at) AS year FROM shipments WHERE year = '2024'"
    new, _ = date_part_as_number(sql, "sqlite")
    assert shop.execute(sql).rows == [("2024",), ("2024",)] and shop.execute(new).rows == [(2024,), (2024,)]


def _values(shop):
    return lambda table, column: [
        r[0] for r in shop.execute(f'SELECT DISTINCT "{column}" FROM "{table.name}"').rows
    ]


def _catalog(shop):
    return shop.catalog()


@pytest.mark.parametrize(
    "question, sql, expected",
    [
        # a comparison with the fraction of a percentage the question names
        (
            "How many order lines had a 25 percent discount?",
            "SELECT COUNT(*) FROM order_lines WHERE discount_pct = 0.25",
            "SELECT COUNT(*) FROM order_lines WHERE discount_pct = 25",
        ),
        (
            "Which lines got more than 5% off?",
            "SELECT id FROM order_lines WHERE discount_pct > 0.05",
            "SELECT id FROM order_lines WHERE discount_pct > 5",
        ),
        # a fraction the question does not name as a percentage is left alone
        (
            "How many order lines had a quarter off?",
            "SELECT COUNT(*) FROM order_lines WHERE discount_pct = 0.25",
            None,
        ),
        # already read as a percentage
        (
            "What was the revenue after discounts?",
            "SELECT SUM(price * (1 - discount_pct / 100.0)) FROM order_lines",
            None,
        ),
        (
            "What was the revenue after discounts?",
            "SELECT SUM(price * (100 - discount_pct) / 100) FROM order_lines",
            None,
        ),
        # a column not named for a share, though its values are from 0 to 100
        ("What is one less than each quantity?", "SELECT 1 - qty FROM order_lines", None),
    ],
)
def test_percent_scale_reads_a_percentage_column_as_stored(shop, question, sql, expected):
    from sqlnb.agent.repairs.percents import percent_scale

    out = percent_scale(sql, "sqlite", _catalog(shop), question, _values(shop))
    assert (out[0] if out else None) == expected


def test_percent_scale_leaves_a_column_of_fractions_alone(tmp_path):
    from sqlnb.agent.repairs.percents import percent_scale

    conn = readonly_sqlite(
        tmp_path,
        "CREATE TABLE lines (id INTEGER PRIMARY KEY, price REAL, discount_rate REAL);"
        "INSERT INTO lines VALUES (1, 10, 0.25), (2, 20, 0.1), (3, 5, NULL);",
    )
    try:
        values = _values(conn)
        for question, sql in [
            ("What was the revenue after discounts?", "SELECT SUM(price * (1 - discount_rate)) FROM lines"),
            ("How many lines had a 25% discount?", "SELECT COUNT(*) FROM lines WHERE discount_rate = 0.25"),
        ]:
            assert percent_scale(sql, "sqlite", conn.catalog(), question, values) is None
    finally:
        conn.close()


@pytest.mark.parametrize(
    "sql, expected",
    [
        # the manager of the employee named: the other side shown
        (
            "SELECT e.name FROM staff AS e JOIN staff AS m ON e.boss_id = m.id WHERE e.name = 'Bob'",
            "SELECT m.name FROM staff AS e JOIN staff AS m ON e.boss_id = m.id WHERE e.name = 'Bob'",
        ),
        # the shown side is not pinned, or both sides are, or it is no self-join
        ("SELECT m.name FROM staff AS e JOIN staff AS m ON e.boss_id = m.id WHERE e.name = 'Bob'", None),
        (
            "SELECT e.name FROM staff AS e JOIN staff AS m ON e.boss_id = m.id WHERE e.name = 'Bob' AND m.name = 'Ann'",
            None,
        ),
        ("SELECT d.name FROM depts AS d JOIN staff AS s ON s.dept_id = d.id WHERE d.name = 'Sales'", None),
        # a table under three names: which other side is meant is not clear
        (
            "SELECT a.name FROM staff AS a JOIN staff AS b ON a.id = b.boss_id JOIN staff AS c ON b.id = c.boss_id "
            "WHERE a.name = 'Bob'",
            None,
        ),
    ],
)
def test_self_join_side_shows_the_side_not_pinned(sql, expected):
    from sqlnb.adapters.catalog import Catalog, Column, Table
    from sqlnb.agent.repairs.sides import self_join_side

    catalog = Catalog(
        dialect="sqlite",
        tables=[
            Table(
                schema=None,
                name="staff",
                columns=[
                    Column("id", "INTEGER"),
                    Column("name", "TEXT"),
                    Column("boss_id", "INTEGER"),
                    Column("dept_id", "INTEGER"),
                ],
            ),
            Table(schema=None, name="depts", columns=[Column("id", "INTEGER"), Column("name", "TEXT")]),
        ],
    )
    out = self_join_side(sql, "sqlite", catalog)
    assert (out[0] if out else None) == expected


def _epoch_catalog():
    from sqlnb.adapters.catalog import Catalog, Column, Table

    columns = [Column("id", "INTEGER"), Column("created", "INTEGER"), Column("sent_ms", "INTEGER")]
    columns += [Column("opened", "TEXT"), Column("score", "INTEGER")]
    return Catalog(dialect="sqlite", tables=[Table(schema=None, name="events", columns=columns)])


# seconds (0 for never), milliseconds, dates as text, and small numbers
_EPOCH_VALUES = {
    "created": [1672531200, 1704067200, 0],
    "sent_ms": [1704067200000, 1718000000000],
    "opened": ["2024-01-01"],
    "score": [3, 1704067200],
}


@pytest.mark.parametrize(
    "sql, expected",
    [
        (
            "SELECT date(created), julianday(sent_ms) FROM events",
            "SELECT DATE(DATETIME(created, 'unixepoch')), JULIANDAY(DATETIME(CAST(sent_ms AS REAL) / 1000, "
            "'unixepoch')) FROM events",
        ),
        # compared with a date written as text: no number is ever >= a text in SQLite
        (
            "SELECT id FROM events WHERE created >= '2024-01-01' AND sent_ms LIKE '2024%'",
            "SELECT id FROM events WHERE DATETIME(created, 'unixepoch') >= '2024-01-01' AND "
            "DATETIME(CAST(sent_ms AS REAL) / 1000, 'unixepoch') LIKE '2024%'",
        ),
        # already read as seconds, compared with a number, ordered by: as written
        (
            "SELECT strftime('%Y', created, 'unixepoch') FROM events WHERE created > 1700000000 ORDER BY created",
            None,
        ),
        # dates stored as text, and numbers that are not all moments
        ("SELECT strftime('%Y', opened), date(score) FROM events", None),
        # the moment worked out in the query already
        ("SELECT datetime(sent_ms / 1000, 'unixepoch') FROM events", None),
    ],
)
def test_epoch_dates_reads_seconds_since_1970_as_moments(sql, expected):
    from sqlnb.agent.repairs.dates import epoch_dates

    got = epoch_dates(sql, "sqlite", _epoch_catalog(), lambda table, column: _EPOCH_VALUES[column])
    assert (got[0].replace("\n", " ") if got else None) == expected
    if got:
        assert "as seconds since 1970" in got[1] or "as milliseconds since 1970" in got[1]


def test_epoch_dates_is_for_sqlite_alone():
    # DuckDB and PostgreSQL refuse a number where a date belongs: the model sees the error
    from sqlnb.agent.repairs.dates import epoch_dates

    sql = "SELECT COUNT(*) FROM events WHERE strftime(created, '%Y') = '2024'"
    for dialect in ("duckdb", "postgres", "mysql"):
        assert (
            epoch_dates(sql, dialect, _epoch_catalog(), lambda table, column: _EPOCH_VALUES[column]) is None
        )


@pytest.mark.parametrize(
    "sql, added",
    [
        # a person's first and last name, both grouped: two Sam Patels added together
        (
            "SELECT p.first_name, p.last_name, COUNT(*) FROM people AS p JOIN visits AS v ON v.person_id = p.id "
            "GROUP BY p.first_name, p.last_name",
            "grouped by p.id as well",
        ),
        # one of the two: no name of the person is grouped whole
        ("SELECT p.first_name, COUNT(*) FROM people AS p GROUP BY p.first_name", None),
        # the key, or the foreign key to it, grouped already
        (
            "SELECT p.first_name, p.last_name, COUNT(*) FROM people AS p JOIN visits AS v ON v.person_id = p.id "
            "GROUP BY p.id, p.first_name, p.last_name",
            None,
        ),
        (
            "SELECT p.first_name, p.last_name, COUNT(*) FROM people AS p JOIN visits AS v ON v.person_id = p.id "
            "GROUP BY v.person_id, p.first_name, p.last_name",
            None,
        ),
    ],
)
def test_group_by_key_keeps_people_who_share_first_and_last_name_apart(sql, added):
    from sqlnb.adapters.catalog import Catalog, Column, ForeignKey, Table
    from sqlnb.agent.repairs.entities import group_by_key

    people = Table(
        schema=None,
        name="people",
        columns=[Column("id", "INTEGER"), Column("first_name", "TEXT"), Column("last_name", "TEXT")],
        primary_key=["id"],
    )
    visits = Table(
        schema=None,
        name="visits",
        columns=[Column("id", "INTEGER"), Column("person_id", "INTEGER")],
        primary_key=["id"],
        foreign_keys=[
            ForeignKey(
                name=None, columns=["person_id"], ref_schema=None, ref_table="people", ref_columns=["id"]
            )
        ],
    )
    got = group_by_key(sql, "sqlite", Catalog(dialect="sqlite", tables=[people, visits]))
    assert (got[1] if got else None) == added
