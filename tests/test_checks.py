"""The answer checks' registry (sqlnb.agent.checks.CHECKS), walked check by check.

For every check of the registry: a small SQLite database, a question and a draft the check
finds something against, asked through the real agent (a scripted model whose reply and
drafts all write the draft, so they agree), proving that the check is reachable (its
finding is in the attempt record under its name and among the confidence's reasons, and
the answer is no longer rated high), switchable (with its name in ``disabled_checks`` the
same answer is rated high) and that no other check fires on its case.  The tests are
parametrized over the registry: a check added without a case here fails."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import pytest

from sqlnb import errors
from sqlnb.agent.checks import CHECK_NAMES, CHECKS, RETIRED_CHECKS, Answer, Check, check_named, judge
from sqlnb.agent.checks.words import WORDS_NOT_READ, unread_words
from sqlnb.agent.repairs import RETIRED_REWRITES, REWRITE_NAMES
from sqlnb.agent.runner import Agent
from sqlnb.agent.settings import AgentSettings
from tests.doubles import readonly_duckdb, readonly_sqlite

# four customers, two of them called Ada; their orders (an order's total on the order, its
# lines beside it): Ada of London spent 50, Ada of Berlin 40, Grace 15, Linus nothing; product
# groups in two levels (Tea under Drinks, Jam under Preserves); tickets whose status is a
# number keyed in statuses (one open, two closed), each with its project's title; parcels
# sent by a numbered service (0, 1, 2) that no table names; payments of the orders, paid or
# failed, some refundable
SHOP = """
    CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT);
    CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
                         total REAL, status TEXT, ordered DATE, shipped DATE);
    CREATE TABLE order_lines (id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL REFERENCES orders(id),
                              product TEXT, qty INTEGER, price REAL);
    INSERT INTO customers VALUES (1, 'Ada', 'London'), (2, 'Grace', 'Paris'), (3, 'Ada', 'Berlin'),
                                 (4, 'Linus', 'Oslo');
    INSERT INTO orders VALUES (10, 1, 30, 'paid', '2024-01-05', '2024-01-07'),
                              (11, 1, 20, 'new', '2024-02-10', NULL),
                              (12, 2, 15, 'paid', '2024-02-11', '2024-02-15'),
                              (13, 3, 40, 'paid', '2025-03-01', '2025-03-02');
    INSERT INTO order_lines VALUES (100, 10, 'Tea', 1, 10), (101, 10, 'Jam', 2, 10), (102, 11, 'Tea', 2, 10),
                                   (103, 12, 'Jam', 1, 15), (104, 13, 'Tea', 4, 10);
    CREATE TABLE product_groups (id INTEGER PRIMARY KEY, name TEXT NOT NULL,
                                 parent_id INTEGER REFERENCES product_groups(id), markup REAL);
    INSERT INTO product_groups VALUES (1, 'Drinks', NULL, 0), (3, 'Preserves', NULL, NULL);
    INSERT INTO product_groups VALUES (2, 'Tea', 1, 0.1), (4, 'Jam', 3, NULL);
    CREATE TABLE statuses (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
    INSERT INTO statuses VALUES (1, 'Open'), (2, 'Closed'), (3, 'Archived');
    CREATE TABLE tickets (id INTEGER PRIMARY KEY, status_id INTEGER REFERENCES statuses(id), title TEXT,
                          project_title TEXT);
    INSERT INTO tickets VALUES (1, 1, 'a', 'Apollo'), (2, 2, 'b', 'Apollo'), (3, 2, 'c', 'Zeus');
    CREATE TABLE parcels (id INTEGER PRIMARY KEY, order_id INTEGER REFERENCES orders(id), service INTEGER,
                          boxes INTEGER);
    INSERT INTO parcels VALUES (1, 10, 0, 1), (2, 12, 1, 1), (3, 13, 2, 2), (4, 11, 1, 3);
    CREATE TABLE payments (id INTEGER PRIMARY KEY, order_id INTEGER REFERENCES orders(id), status TEXT,
                           amount REAL, refundable INTEGER);
    INSERT INTO payments VALUES (1, 10, 'paid', 30, 1), (2, 11, 'failed', 20, 0), (3, 12, 'failed', 15, 0),
                                (4, 12, 'paid', 15, 1), (5, 13, 'paid', 40, 0);
"""


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    """The :data:`SHOP` database, read-only."""
    conn = readonly_sqlite(tmp_path_factory.mktemp("checks"), SHOP)
    yield conn
    conn.close()


@pytest.fixture(scope="module")
def shop_duckdb(tmp_path_factory):
    """The :data:`SHOP` database in DuckDB, read-only (for what SQLite has no type for)."""
    conn = readonly_duckdb(tmp_path_factory.mktemp("checks_duckdb"), SHOP)
    yield conn
    conn.close()


@dataclass(frozen=True)
class Case:
    question: str
    draft: str  # what the model writes
    finding: str  # a part of what the check says
    engine: str = "sqlite"  # the SHOP database it is asked of: sqlite or duckdb


CASES = {
    "numbers_left_out": Case(
        "What did the orders of 2024 total?", "SELECT SUM(total) FROM orders", "the question names 2024"
    ),
    "filters_not_asked": Case(
        "How many orders are there?",
        "SELECT COUNT(*) FROM orders WHERE status = 'paid'",
        "it filters on 'paid'",
    ),
    "negated_value": Case(
        "How many orders were not paid?",
        "SELECT COUNT(*) FROM orders WHERE status = 'paid'",
        "the question says \"not paid\", the query keeps only the rows where status = 'paid'",
    ),
    "included_filtered_out": Case(
        "How many tickets were raised, counting any that have since been archived?",
        "SELECT COUNT(*) FROM tickets WHERE status_id IS NOT NULL",
        'the question says "counting any", and the query keeps only the rows where status_id IS NOT NULL',
    ),
    "counted_elsewhere": Case(
        "How many order lines are there?",
        "SELECT COUNT(*) FROM orders",
        'the question asks "How many order lines", and the query does not read order_lines',
    ),
    "ranking_without_order": Case(
        "Which customer has the highest total?",
        "SELECT name, city FROM customers",
        'asks for "highest"',
    ),
    "measure_not_shown": Case(
        "Which customers have the most orders?",
        "SELECT c.id, c.name FROM customers AS c JOIN orders AS o ON o.customer_id = c.id "
        "GROUP BY c.id, c.name ORDER BY COUNT(o.id) DESC",
        "the rows are ranked by COUNT(o.id), which the result does not show",
    ),
    "rows_not_asked": Case(
        "Which two orders are the largest? Give the id and the total.",
        "SELECT id, total FROM orders ORDER BY total DESC",
        'the question asks for "Which two orders", the result has 4 rows',
    ),
    "limit_not_asked": Case(
        "How many orders has each customer placed? Most first.",
        "SELECT customer_id, COUNT(*) AS n FROM orders GROUP BY customer_id ORDER BY n DESC LIMIT 1",
        'the question asks for "each customer", the query keeps only the first 1 row',
    ),
    "interval_not_number": Case(
        "How many days did a shipped order take on average?",
        "SELECT AVG(CAST(shipped AS TIMESTAMP) - CAST(ordered AS TIMESTAMP)) AS took FROM orders "
        "WHERE shipped IS NOT NULL",
        "the question asks for a number of days, the result's took is an interval, not a number",
        engine="duckdb",
    ),
    "whole_division": Case(
        "How many pairs of boxes were sent?",
        "SELECT SUM(boxes) / 2 FROM parcels",
        "the query divides whole numbers (SUM(boxes) / 2), which drops the fraction in this engine",
    ),
    "null_group": Case(
        "How many product groups does each parent group have? Give the parent and the number.",
        "SELECT parent_id, COUNT(*) FROM product_groups GROUP BY parent_id",
        "a row of the result has no parent_id (NULL)",
    ),
    "parent_not_followed": Case(
        "Which product groups are at the root?",
        "SELECT name FROM product_groups",
        'the question speaks of a hierarchy ("root"), and the query does not use product_groups.parent_id',
    ),
    "key_not_asked": Case(
        "Which customers live in London?",
        "SELECT id, name FROM customers WHERE city = 'London'",
        "the result shows customers.id, a key the question does not ask for",
    ),
    "time_not_ordered": Case(
        "How many orders were placed on each day?",
        "SELECT ordered, COUNT(*) AS n FROM orders GROUP BY ordered",
        'the question asks about time ("each day"), and the rows come in no order (no ORDER BY on ordered)',
    ),
    "attribute_of_other": Case(
        "Show the title of the project of each ticket.",
        "SELECT title FROM tickets",
        "the question asks for the title of the project, and the query shows tickets.title, not tickets.project_title",
    ),
    "named_row_shown": Case(
        "Which product groups come under Drinks? Give their names and markups.",
        "SELECT g.name, p.markup FROM product_groups AS g JOIN product_groups AS p ON g.parent_id = p.id "
        "WHERE p.name = 'Drinks'",
        "the query shows p.markup, the markup of the product_groups row the question names",
    ),
    "code_meaning_guessed": Case(
        "How many parcels went by express delivery?",
        "SELECT COUNT(*) FROM parcels WHERE service = 2",
        "the query keeps parcels.service = 2, a numbered code (the column holds 0, 1, 2) whose meaning the "
        "database does not name",
    ),
    "time_reversed": Case(
        "What is the id of the most recent order?",
        "SELECT id FROM orders ORDER BY ordered LIMIT 1",
        'the question asks for the latest ("most recent"), and the query keeps the earliest ordered '
        "(ORDER BY ordered ascending)",
    ),
    "values_left_out": Case(
        "How many paid orders are there?",
        "SELECT COUNT(*) FROM orders",
        "the question names 'paid'",
    ),
    "flag_not_applied": Case(
        "How many refundable payments are there?",
        "SELECT COUNT(*) FROM payments",
        'the question says "refundable", and the query does not use payments.refundable',
    ),
    "kind_not_read": Case(
        "How many closed tickets are there?",
        "SELECT COUNT(*) FROM tickets",
        "the question names 'Closed' (statuses.name, which tickets.status_id refers to), and the query does not "
        "read statuses",
    ),
    "merged_entities": Case(
        "Which customer spent the most? Give the name and the total.",
        "SELECT c.name, SUM(o.total) FROM customers AS c JOIN orders AS o ON o.customer_id = c.id "
        "GROUP BY c.name ORDER BY 2 DESC LIMIT 1",
        "'Ada' names 2 different rows of customers: grouped by name and not by id",
    ),
    "fan_out": Case(
        "What is the value of all orders together?",
        "SELECT SUM(o.total) FROM orders AS o JOIN order_lines AS l ON l.order_id = o.id",
        "over a join that repeats rows of orders (5 joined rows for 4 of them)",
    ),
    "needless_join": Case(
        "How many orders has each customer placed? Give the id, the name and the number.",
        "SELECT c.id, c.name, COUNT(o.id) FROM customers AS c JOIN orders AS o ON o.customer_id = c.id "
        "JOIN order_lines AS l ON l.order_id = o.id GROUP BY c.id, c.name",
        "it joins order_lines only to match keys, and that join repeats rows (5 rows with it, 4 without)",
    ),
    "missing_as_zero": Case(
        "Which product groups have no markup?",
        "SELECT name FROM product_groups WHERE markup = 0",
        "the question asks for the rows without markup: 2 rows of product_groups have no markup at all "
        "(NULL), which markup = 0 leaves out",
    ),
    "filter_echoed": Case(
        "Which product groups are in the Drinks group?",
        "SELECT name FROM product_groups WHERE name = 'Drinks'",
        "the result shows only name, which the query's WHERE fixes to the value it was given",
    ),
    "words_not_read": Case(
        "How many orders were shipped abroad?",
        "SELECT COUNT(*) FROM orders WHERE shipped IS NOT NULL",
        "nothing in the query stands for 'abroad' of the question",
    ),
    "criterion_not_named": Case(
        "Which customers are the most important to us?",
        "SELECT c.id, c.name, SUM(o.total) AS spent FROM customers AS c JOIN orders AS o ON o.customer_id = c.id "
        "GROUP BY c.id, c.name ORDER BY spent DESC",
        '"important" by which measure? This guess goes by spent',
    ),
    "cutoff_not_named": Case(
        "Which orders were expensive?",
        "SELECT id, total FROM orders WHERE total > 25",
        'Where does "expensive" start? This guess takes total > 25; say the cutoff you mean.',
    ),
}

# the rewrites off, so that each case's draft is the answer as written
NO_REWRITES = frozenset(REWRITE_NAMES)


def ask(shop, tmp_path, case: Case, **settings):
    """``case.question`` asked through the agent with a scripted model whose reply and
    every sampled draft write ``case.draft``."""
    script = tmp_path / f"script-{len(list(tmp_path.glob('script-*')))}.json"
    block = f"```sql\n{case.draft}\n```"
    script.write_text(json.dumps({"replies": [block], "drafts": [block] * 3}))
    settings.setdefault("disabled_rewrites", NO_REWRITES)
    # words_not_read finds something in most cases of the other checks (their drafts leave a
    # word of the question unread): off unless a test says otherwise
    settings.setdefault("disabled_checks", frozenset({WORDS_NOT_READ.name}))
    return Agent(memory=False).ask(
        case.question, shop, connection="shop", model=f"scripted:{script}", settings=AgentSettings(**settings)
    )


@pytest.mark.parametrize("check", CHECKS, ids=[c.name for c in CHECKS])
def test_each_check_is_reachable_switchable_and_alone_on_its_case(shop, shop_duckdb, tmp_path, check):
    assert check.name in CASES, f"the check {check.name} has no case in tests/test_checks.py"
    case = CASES[check.name]
    shop = shop_duckdb if case.engine == "duckdb" else shop

    # words_not_read is off for the other checks' cases (see ask), so each shows its own alone
    others = frozenset() if check is WORDS_NOT_READ else frozenset({WORDS_NOT_READ.name})

    # reachable and reported: the finding under its name, among the reasons; not high (low,
    # or medium for a check whose finding only keeps an answer from high)
    on = ask(shop, tmp_path, case, disabled_checks=others)
    # a check that asks: the question is asked back, the answer kept as a guess
    status = "needs_clarification" if check.asks else "success"
    assert on.status == status and on.sql == case.draft, on.attempts
    assert on.questions == ([on.attempts[0]["checks"][check.name]] if check.asks else [])
    (attempt,) = on.attempts
    assert list(attempt["checks"]) == [check.name], attempt["checks"]
    finding = attempt["checks"][check.name]
    assert case.finding in finding
    assert finding in on.confidence["reasons"] and on.confidence["level"] == check.ceiling

    # switchable: the same answer, rated high, without the finding
    off = ask(shop, tmp_path, case, disabled_checks=others | {check.name})
    assert off.status == "success" and off.sql == case.draft and off.attempts[0]["checks"] == {}
    assert off.confidence["level"] == "high" and finding not in off.confidence["reasons"]


def test_every_case_belongs_to_a_check_of_the_registry():
    assert set(CASES) == set(CHECK_NAMES)  # a retired check takes its case with it


def test_the_registry_names_each_check_once():
    assert len(set(CHECK_NAMES)) == len(CHECKS)
    for check in CHECKS:
        assert isinstance(check, Check) and check_named(check.name) is check
        assert re.fullmatch(r"[a-z]+(_[a-z]+)*", check.name)
        assert check.summary and "\n" not in check.summary
    assert [c.name for c in CHECKS if c.reads_data] == [
        "values_left_out",
        "kind_not_read",
        "flag_not_applied",
        "merged_entities",
        "fan_out",
        "needless_join",
        "missing_as_zero",
        "code_meaning_guessed",
    ]
    with pytest.raises(KeyError):
        check_named("fan_outs")


@pytest.mark.parametrize(
    "name",
    [
        "values_left_out",
        "merged_entities",
        "fan_out",
        "needless_join",
        "missing_as_zero",
        "code_meaning_guessed",
        "kind_not_read",
        "flag_not_applied",
    ],
)
def test_the_checks_that_read_data_do_not_run_without_value_lookups(shop, tmp_path, name):
    result = ask(shop, tmp_path, CASES[name], value_hints=False)
    assert result.attempts[0]["checks"] == {} and result.confidence["level"] == "high"


def test_the_checks_lookups_stop_when_their_time_is_spent(shop, tmp_path, monkeypatch):
    from sqlnb.agent import runner as runner_module

    monkeypatch.setattr(runner_module, "CHECK_SECONDS", 0)
    for name in ("merged_entities", "fan_out", "needless_join", "values_left_out"):
        result = ask(shop, tmp_path, CASES[name])
        assert result.attempts[0]["checks"] == {}, name


def test_null_group_is_silent_when_the_question_asks_for_the_rows_without_a_label(shop):
    sql = "SELECT shipped, COUNT(*) FROM orders GROUP BY shipped"
    result = shop.execute(sql)

    def finding(question: str):
        return check_named("null_group").find(
            Answer(sql=sql, dialect="sqlite", question=question, result=result, row_count=4)
        )

    assert finding("How many orders were shipped on each day?")
    assert finding("How many orders were shipped on each day, counting those without a date as one?") is None
    assert finding("Orders per shipping day, unshipped ones included as unknown") is None
    # no label is NULL: silent
    grouped = "SELECT status, COUNT(*) FROM orders GROUP BY status"
    assert (
        check_named("null_group").find(
            Answer(sql=grouped, dialect="sqlite", question="Orders per status?", result=shop.execute(grouped))
        )
        is None
    )


def test_merged_entities_is_silent_when_the_names_shown_are_each_one_row(shop):
    cat = shop.catalog()

    def lookup(sql):
        return shop.execute(sql).rows

    def answer(sql, question="Which customers spent the most?"):
        return Answer(
            sql=sql,
            dialect="sqlite",
            question=question,
            catalog=cat,
            result=shop.execute(sql),
            lookup=lookup,
        )

    merged = check_named("merged_entities")
    # Grace and Linus are one customer each: adding by name added nobody together
    only_grace = (
        "SELECT c.name, SUM(o.total) FROM customers AS c JOIN orders AS o ON o.customer_id = c.id "
        "WHERE c.name = 'Grace' GROUP BY c.name"
    )
    assert merged.find(answer(only_grace)) is None
    # grouped by the key as well, or by the foreign key that references it: apart
    for sql in (
        "SELECT c.name, SUM(o.total) FROM customers AS c JOIN orders AS o ON o.customer_id = c.id "
        "GROUP BY c.id, c.name",
        "SELECT c.name, SUM(o.total) FROM customers AS c JOIN orders AS o ON o.customer_id = c.id "
        "GROUP BY o.customer_id, c.name",
    ):
        assert merged.find(answer(sql)) is None, sql
    # a city is not what names a customer: grouping by it is a category's total
    assert (
        merged.find(
            answer(
                "SELECT c.city, SUM(o.total) FROM customers AS c JOIN orders AS o "
                "ON o.customer_id = c.id GROUP BY c.city"
            )
        )
        is None
    )


def test_fan_out_is_silent_when_the_join_does_not_repeat_the_summed_rows(shop):
    cat = shop.catalog()
    fan = check_named("fan_out")

    def answer(sql):
        return Answer(
            sql=sql,
            dialect="sqlite",
            question="?",
            catalog=cat,
            result=shop.execute(sql),
            lookup=lambda q: shop.execute(q).rows,
        )

    for sql in (
        # the many side summed over its one side: each line once
        "SELECT SUM(l.qty * l.price) FROM order_lines AS l JOIN orders AS o ON o.id = l.order_id",
        "SELECT c.name, SUM(o.total) FROM orders AS o JOIN customers AS c ON c.id = o.customer_id GROUP BY c.id",
        # a filter that leaves one line per order
        "SELECT SUM(o.total) FROM orders AS o JOIN order_lines AS l ON l.order_id = o.id WHERE l.product = 'Jam'",
        # summed over distinct values, or no join at all
        "SELECT SUM(DISTINCT o.total) FROM orders AS o JOIN order_lines AS l ON l.order_id = o.id",
        "SELECT SUM(total) FROM orders",
    ):
        assert fan.find(answer(sql)) is None, sql


def test_judge_skips_what_cannot_be_read_and_what_fails():
    # no catalog, no data, a query that does not parse: nothing found, nothing raised
    assert judge(Answer(sql="SELEC nothing", dialect="sqlite", question="Which is the most?")) == {}

    def refused(sql):
        raise RuntimeError("permission denied")

    answer = Answer(sql="SELECT 1", dialect="sqlite", question="?", lookup=refused)
    assert judge(answer) == {}


def test_an_unknown_check_name_is_refused_with_the_known_ones():
    with pytest.raises(errors.ConfigurationError) as refused:
        AgentSettings(disabled_checks={"fan_out", "fanout"})
    text = str(refused.value)
    assert "'fanout'" in text and all(name in text for name in CHECK_NAMES)
    assert AgentSettings(disabled_checks=["fan_out"]).disabled_checks == frozenset({"fan_out"})


def test_a_retired_rule_name_is_dropped_with_a_warning_saying_what_became_of_it():
    # a configuration written for an earlier sqlnb still loads: the retired name is ignored
    with pytest.warns(errors.RetiredRuleWarning) as warned:
        settings = AgentSettings(
            disabled_rewrites={"named_values", "group_by_key"}, disabled_checks=["one_of_each"]
        )
    assert settings.disabled_rewrites == frozenset({"group_by_key"}) and settings.rewrite_on("link_joins")
    assert settings.disabled_checks == frozenset()
    texts = sorted(str(w.message) for w in warned)
    assert len(texts) == 2
    assert "'one_of_each' in disabled_checks" in texts[0] and "flagged only right answers" in texts[0]
    assert "'named_values' in disabled_rewrites" in texts[1] and "values_left_out" in texts[1]
    # a retired name is never also a live one, and an unknown name is still refused
    assert not set(RETIRED_CHECKS) & set(CHECK_NAMES) and not set(RETIRED_REWRITES) & set(REWRITE_NAMES)
    with pytest.raises(errors.ConfigurationError, match="named_value'"):
        AgentSettings(disabled_rewrites={"named_value"})


@pytest.mark.parametrize(
    "question, sql",
    [
        # left out as the question asks: NOT, NOT IN a subquery, EXCEPT, <>
        ("How many orders were not paid?", "SELECT COUNT(*) FROM orders WHERE NOT status = 'paid'"),
        (
            "Which customers have never paid an order?",
            "SELECT name FROM customers WHERE id NOT IN (SELECT customer_id FROM orders WHERE status = 'paid')",
        ),
        (
            "Which customers have no paid orders?",
            "SELECT id FROM customers EXCEPT SELECT customer_id FROM orders WHERE status = 'paid'",
        ),
        ("How many orders were not paid?", "SELECT COUNT(*) FROM orders WHERE status <> 'paid'"),
        # the value named without a negation before it
        ("How many paid orders are not shipped?", "SELECT COUNT(*) FROM orders WHERE status = 'paid'"),
    ],
)
def test_negated_value_is_silent_when_the_query_leaves_the_value_out(shop, question, sql):
    answer = Answer(sql=sql, dialect="sqlite", question=question, catalog=shop.catalog())
    assert check_named("negated_value").find(answer) is None


@pytest.mark.parametrize(
    "question, sql",
    [
        ("How many order lines are there?", "SELECT COUNT(*) FROM order_lines"),
        # "customers" counted through the orders that reference them
        ("How many customers are there?", "SELECT COUNT(*) FROM customers"),
        # a word that names no table
        ("How many products were sold?", "SELECT COUNT(DISTINCT product) FROM order_lines"),
    ],
)
def test_counted_elsewhere_is_silent_when_the_counted_table_is_read(shop, question, sql):
    answer = Answer(sql=sql, dialect="sqlite", question=question, catalog=shop.catalog())
    assert check_named("counted_elsewhere").find(answer) is None


@pytest.mark.parametrize(
    "question, sql",
    [
        # no filter on a flag
        (
            "How many tickets were raised, counting any that have since been archived?",
            "SELECT COUNT(*) FROM tickets",
        ),
        # a flag the question names
        (
            "How many tickets have a status, counting any that have since been archived?",
            "SELECT COUNT(*) FROM tickets WHERE status_id IS NOT NULL",
        ),
        # rows left out, as the question says
        (
            "How many tickets were raised, not counting those that were archived?",
            "SELECT COUNT(*) FROM tickets WHERE status_id IS NOT NULL",
        ),
        # a question that counts no other rows as well
        ("How many tickets have a known state?", "SELECT COUNT(*) FROM tickets WHERE status_id IS NOT NULL"),
    ],
)
def test_included_filtered_out_is_silent_where_no_rows_asked_for_are_left_out(shop, question, sql):
    answer = Answer(sql=sql, dialect="sqlite", question=question, catalog=shop.catalog())
    assert check_named("included_filtered_out").find(answer) is None


def test_needless_join_is_silent_when_the_joined_rows_are_what_is_counted(shop):
    cat = shop.catalog()
    needless = check_named("needless_join")
    for sql in (
        # the children of the FROM table, counted per parent: the point of the join
        "SELECT c.id, COUNT(o.id) FROM customers AS c JOIN orders AS o ON o.customer_id = c.id GROUP BY c.id",
        # lines counted per customer: order_lines' own rows are counted (its column is read)
        "SELECT c.id, SUM(l.qty) FROM customers AS c JOIN orders AS o ON o.customer_id = c.id "
        "JOIN order_lines AS l ON l.order_id = o.id GROUP BY c.id",
        # a join that only keeps the orders with lines: a filter, no row repeated
        "SELECT COUNT(*) FROM orders AS o JOIN customers AS c ON c.id = o.customer_id",
    ):
        answer = Answer(
            sql=sql, dialect="sqlite", question="?", catalog=cat, lookup=lambda q: shop.execute(q).rows
        )
        assert needless.find(answer) is None, sql


# ---- the questions with several readings: asked back, once ----------------------------------
JOINED = "customers AS c JOIN orders AS o ON o.customer_id = c.id"


@pytest.mark.parametrize(
    "question, sql",
    [
        # the measure named: in the question's words, after "by", by the judging word itself
        (
            "Which customers spent the most in total?",
            f"SELECT name FROM {JOINED} GROUP BY c.id, name ORDER BY SUM(total) DESC",
        ),
        (
            "Who are the top customers by total?",
            f"SELECT name FROM {JOINED} GROUP BY c.id, name ORDER BY SUM(total) DESC",
        ),
        (
            "What are the best selling products?",
            "SELECT product FROM order_lines GROUP BY product ORDER BY SUM(qty) DESC",
        ),
        ("Which products are the most expensive?", "SELECT product FROM order_lines ORDER BY price DESC"),
        (
            "Which customers have the most orders?",
            f"SELECT c.name FROM {JOINED} GROUP BY c.id, c.name ORDER BY COUNT(*) DESC",
        ),
        # a judging word that judges nothing here: a compound's first part, "as well as"
        (
            "What is the average total of the orders of each top-level customer?",
            "SELECT c.name, AVG(total) FROM customers AS c JOIN orders AS o ON o.customer_id = c.id GROUP BY c.name",
        ),
        (
            "List the orders as well as their customers.",
            "SELECT o.id, c.name FROM orders AS o JOIN customers AS c ON c.id = o.customer_id ORDER BY o.id",
        ),
        # the judging word a value the data stores, filtered on: a category, not a judgement
        ("How many orders were bad?", "SELECT COUNT(*) FROM orders WHERE status = 'bad'"),
        # the judging word qualifies a stored value filtered on: "a strong yes" is a category
        ("How many orders got a strong yes?", "SELECT COUNT(*) FROM orders WHERE status = 'strong_yes'"),
        ("How many orders got a strong yes?", "SELECT COUNT(*) FROM orders WHERE status = 'yes'"),
    ],
)
def test_criterion_not_named_is_silent_when_the_measure_is_named(shop, question, sql):
    assert check_named("criterion_not_named").find(Answer(sql, "sqlite", question, shop.catalog())) is None


@pytest.mark.parametrize(
    "question, sql",
    [
        ("Which orders cost more than 25?", "SELECT id FROM orders WHERE total > 25"),  # the cutoff given
        (
            "Which orders of 2024 were big?",
            "SELECT id FROM orders WHERE ordered >= '2024-01-01' ORDER BY total DESC",
        ),
        ("How many orders are there?", "SELECT COUNT(*) FROM orders WHERE total > 0"),  # no grading word; 0
        (
            "How long did shipping take?",
            "SELECT id FROM orders WHERE shipped > ordered",
        ),  # "how long"; no literal
    ],
)
def test_cutoff_not_named_is_silent_when_the_cutoff_is_given_or_not_made_up(shop, question, sql):
    assert check_named("cutoff_not_named").find(Answer(sql, "sqlite", question, shop.catalog())) is None


def test_a_vague_question_is_asked_back_once_and_the_reply_answered(shop, tmp_path):
    guess = CASES["criterion_not_named"].draft
    by_orders = (
        "SELECT c.id, c.name, COUNT(*) AS orders FROM customers AS c JOIN orders AS o "
        "ON o.customer_id = c.id GROUP BY c.id, c.name ORDER BY orders DESC"
    )
    models = []
    for name, sql in (("guess", guess), ("reply", by_orders)):
        block = f"```sql\n{sql}\n```"
        (tmp_path / f"{name}.json").write_text(json.dumps({"replies": [block], "drafts": [block] * 3}))
        models.append(f"scripted:{tmp_path / f'{name}.json'}")
    agent = Agent(memory=False)
    settings = AgentSettings(disabled_rewrites=NO_REWRITES)
    first = agent.ask(
        "Which customers are the most important to us?",
        shop,
        connection="shop",
        model=models[0],
        settings=settings,
    )
    assert first.status == "needs_clarification" and first.stop_reason == "clarification"
    assert first.sql == guess and "a guess: the question was asked back" in (first.cell_source() or "")
    (asked,) = first.questions
    assert asked.startswith('"important" by which measure? This guess goes by spent; the data also has')
    assert agent.history("shop")[-1]["status"] == "needs_clarification"
    # the reply is answered: the question with it, not asked back again
    second = agent.ask("the number of orders", shop, connection="shop", model=models[1], settings=settings)
    assert second.status == "success" and second.sql == by_orders
    assert second.full_question == "Which customers are the most important to us? (the number of orders)"


@pytest.mark.parametrize(
    "question, asked",
    [
        ("Show the top 5 products by revenue", (5, "top 5 products")),
        ("Which three customers ordered the most?", (3, "Which three customers")),
        ("List the 10 largest orders", (10, "the 10 largest")),
        ("the two most expensive products", (2, "the two most")),
        ("Top-3 regions by sales", (3, "Top-3 regions")),
        # a window of time, a threshold, a year, one thing: no number of rows asked for
        ("Revenue in the first three months of 2024", None),
        ("Customers with more than 5 orders", None),
        ("Orders of the 2024 season", None),
        ("Which customer spent the most?", None),
    ],
)
def test_the_number_of_things_a_question_asks_for(question, asked):
    from sqlnb.agent.checks.query import _asked_count

    assert _asked_count(question) == asked


def test_rows_not_asked_reads_the_limit_and_the_rows(shop):
    def finding(sql: str, rows: int | None):
        answer = Answer(
            sql=sql, dialect="sqlite", question="Which two orders are the largest?", row_count=rows
        )
        return check_named("rows_not_asked").find(answer)

    assert finding("SELECT id FROM orders ORDER BY total DESC LIMIT 3", 3) == (
        'the question asks for "Which two orders", the query keeps 3 rows'
    )
    assert finding("SELECT id FROM orders ORDER BY total DESC LIMIT 2", 2) is None
    assert finding("SELECT id FROM orders ORDER BY total DESC", 2) is None  # the data gave two
    assert finding("SELECT id FROM orders ORDER BY total DESC", 4) is not None


def test_merged_entities_is_silent_when_grouped_by_an_identifier_the_catalog_does_not_declare(tmp_path):
    # a warehouse dimension: a surrogate key per version of a customer, the business key
    # (customer_id) the same for every version; two different customers share a name
    conn = readonly_sqlite(
        tmp_path,
        """
        CREATE TABLE dim_customer (customer_key INTEGER PRIMARY KEY, customer_id TEXT, full_name TEXT);
        CREATE TABLE fact_sale (sale_id INTEGER PRIMARY KEY,
                                customer_key INTEGER REFERENCES dim_customer(customer_key), amount REAL);
        INSERT INTO dim_customer VALUES (1, 'C1', 'Ann Lee'), (2, 'C1', 'Ann Lee'), (3, 'C2', 'Ann Lee');
        INSERT INTO fact_sale VALUES (10, 1, 5), (11, 2, 7), (12, 3, 9);
        """,
    )
    try:

        def finding(sql: str):
            return check_named("merged_entities").find(
                Answer(
                    sql=sql,
                    dialect="sqlite",
                    question="What did each customer buy?",
                    catalog=conn.catalog(),
                    result=conn.execute(sql),
                    lookup=lambda q: conn.execute(q).rows,
                )
            )

        by_name = (
            "SELECT d.full_name, SUM(f.amount) FROM fact_sale AS f JOIN dim_customer AS d "
            "ON d.customer_key = f.customer_key GROUP BY d.full_name"
        )
        assert "'Ann Lee' names 3 different rows of dim_customer" in (finding(by_name) or "")
        by_business_key = (
            "SELECT d.customer_id, d.full_name, SUM(f.amount) FROM fact_sale AS f JOIN dim_customer AS d "
            "ON d.customer_key = f.customer_key GROUP BY d.customer_id, d.full_name"
        )
        assert finding(by_business_key) is None
    finally:
        conn.close()


@pytest.mark.parametrize(
    "question, sql, found",
    [
        (
            "Orders per customer, most first",
            "SELECT customer_id, COUNT(*) FROM orders GROUP BY 1 LIMIT 10",
            True,
        ),
        (
            "Orders per customer",
            "SELECT customer_id, COUNT(*) FROM orders GROUP BY customer_id LIMIT 10",
            True,
        ),
        ("Orders for every month", "SELECT ordered, COUNT(*) FROM orders GROUP BY ordered LIMIT 3", False),
        (
            "The 3 largest orders of each customer",
            "SELECT id FROM orders GROUP BY customer_id LIMIT 3",
            False,
        ),
        # "each" of what is not grouped: one customer asked for
        (
            "Which customer spent the most, counting each order line?",
            "SELECT customer_id FROM orders GROUP BY customer_id ORDER BY SUM(total) DESC LIMIT 1",
            False,
        ),
        ("Orders of each customer", "SELECT customer_id, COUNT(*) FROM orders GROUP BY 1", False),
    ],
)
def test_limit_not_asked_reads_the_question_and_the_limit(question, sql, found):
    answer = Answer(sql=sql, dialect="sqlite", question=question)
    assert bool(check_named("limit_not_asked").find(answer)) is found


def test_interval_not_number_is_silent_for_a_number_of_days_or_a_question_without_units(shop_duckdb):
    def finding(question: str, sql: str):
        return check_named("interval_not_number").find(
            Answer(sql=sql, dialect="duckdb", question=question, result=shop_duckdb.execute(sql))
        )

    interval = "SELECT AVG(CAST(shipped AS TIMESTAMP) - CAST(ordered AS TIMESTAMP)) FROM orders"
    days = "SELECT AVG(shipped - ordered) FROM orders"  # DATE - DATE: a number of days
    assert finding("How many days did shipping take on average?", interval)
    assert finding("How many days did shipping take on average?", days) is None
    assert finding("How long did shipping take on average?", interval) is None  # no unit asked


@pytest.mark.parametrize(
    "question, sql",
    [
        ("List the top-level product groups.", "SELECT name FROM product_groups WHERE parent_id IS NULL"),
        (
            "Which parent group has the most groups under it?",
            "SELECT p.name FROM product_groups AS g JOIN product_groups AS p ON g.parent_id = p.id "
            "GROUP BY p.name ORDER BY COUNT(*) DESC LIMIT 1",
        ),
        ("List the product groups.", "SELECT name FROM product_groups"),  # no level asked
        ("Which customers are the top-level spenders?", "SELECT name FROM customers"),  # no hierarchy read
    ],
)
def test_parent_not_followed_is_silent_when_the_parent_key_is_used_or_no_level_asked(shop, question, sql):
    answer = Answer(sql=sql, dialect="sqlite", question=question, catalog=shop.catalog())
    assert check_named("parent_not_followed").find(answer) is None


@pytest.mark.parametrize(
    "question, sql",
    [
        (
            "Give the ids and names of the customers in London.",
            "SELECT id, name FROM customers WHERE city = 'London'",
        ),
        (
            "Which order numbers were paid, and their totals?",
            "SELECT id, total FROM orders WHERE status = 'paid'",
        ),
        (
            "Which customers live in London?",
            "SELECT name FROM customers WHERE city = 'London'",
        ),  # no key shown
        (
            "Which customers live in London?",
            "SELECT id FROM customers WHERE city = 'London'",
        ),  # the key alone
        ("How many orders did each customer place?", "SELECT customer_id, COUNT(*) FROM orders GROUP BY 1"),
        (
            "Which customer ordered?",
            "SELECT o.customer_id, c.name FROM orders AS o JOIN customers AS c ON c.id = o.customer_id",
        ),
    ],
)
def test_key_not_asked_is_silent_when_an_identifier_is_asked_for_or_none_is_shown(shop, question, sql):
    answer = Answer(sql=sql, dialect="sqlite", question=question, catalog=shop.catalog())
    assert check_named("key_not_asked").find(answer) is None


def test_parent_not_followed_reads_a_level_below_a_named_row_and_not_a_comparison(shop):
    def finding(question: str, sql: str):
        return check_named("parent_not_followed").find(
            Answer(sql=sql, dialect="sqlite", question=question, catalog=shop.catalog())
        )

    named_row = "SELECT name FROM product_groups WHERE name = 'Drinks'"
    assert '("under")' in finding("Which product groups are under Drinks?", named_row)
    assert '("subgroups")' in finding("List the subgroups of Drinks.", named_row)
    children = (
        "SELECT g.name FROM product_groups AS g JOIN product_groups AS p ON g.parent_id = p.id "
        "WHERE p.name = 'Drinks'"
    )
    assert finding("Which product groups are under Drinks?", children) is None
    assert (
        finding("Which product groups have an id under 3?", "SELECT name FROM product_groups WHERE id < 3")
        is None
    )


def test_null_group_speaks_when_the_question_leaves_the_rows_without_a_label_out(shop):
    sql = "SELECT shipped, COUNT(*) FROM orders GROUP BY shipped"
    answer = Answer(
        sql=sql,
        dialect="sqlite",
        question="How many orders were shipped on each day? Leave out the orders with no shipping date.",
        result=shop.execute(sql),
    )
    assert check_named("null_group").find(answer)


@pytest.mark.parametrize(
    "question, sql",
    [
        (
            "How many orders were placed on each day?",
            "SELECT ordered, COUNT(*) FROM orders GROUP BY ordered ORDER BY 1",
        ),
        ("When was the first order placed?", "SELECT MIN(ordered) FROM orders"),  # one row
        ("How many orders has each customer placed?", "SELECT customer_id, COUNT(*) FROM orders GROUP BY 1"),
        (
            "Which orders were paid, and when?",
            "SELECT id, total FROM orders WHERE status = 'paid'",
        ),  # no time shown
    ],
)
def test_time_not_ordered_is_silent_when_ordered_one_row_or_no_time(shop, question, sql):
    res = shop.execute(sql)
    answer = Answer(
        sql=sql,
        dialect="sqlite",
        question=question,
        catalog=shop.catalog(),
        result=res,
        row_count=res.row_count,
    )
    assert check_named("time_not_ordered").find(answer) is None


def test_missing_as_zero_is_silent_for_is_null_a_column_without_nulls_or_another_question(shop):
    def finding(question: str, sql: str):
        lookup = lambda q: shop.execute(q).rows  # noqa: E731
        return check_named("missing_as_zero").find(
            Answer(sql=sql, dialect="sqlite", question=question, catalog=shop.catalog(), lookup=lookup)
        )

    assert finding(
        "Which product groups have no parent group?", "SELECT name FROM product_groups WHERE parent_id = 0"
    )
    assert (
        finding(
            "Which product groups have no parent?", "SELECT name FROM product_groups WHERE parent_id IS NULL"
        )
        is None
    )
    assert (
        finding("Which orders cost nothing (no total)?", "SELECT id FROM orders WHERE total = 0") is None
    )  # no NULL total
    assert (
        finding(
            "Which product groups sit under group 0?", "SELECT name FROM product_groups WHERE parent_id = 0"
        )
        is None
    )


@pytest.mark.parametrize(
    "question", ["List the top-level product groups.", "What is the markup of each top level group?"]
)
def test_ranking_without_order_reads_top_level_as_a_level_not_a_ranking(shop, question):
    sql = "SELECT name, markup FROM product_groups WHERE parent_id IS NULL"
    answer = Answer(sql=sql, dialect="sqlite", question=question, catalog=shop.catalog())
    assert check_named("ranking_without_order").find(answer) is None
    ranked = Answer(sql=sql, dialect="sqlite", question="Which are the top groups?", catalog=shop.catalog())
    assert check_named("ranking_without_order").find(ranked) is not None


def test_every_check_that_does_not_ask_back_says_what_a_correction_does():
    for check in CHECKS:
        assert check.asks or check.advice.strip(), check.name
    with pytest.raises(ValueError, match="needs its advice"):
        Check(name="no_advice", summary="s", find=lambda a: None)


@pytest.mark.parametrize(
    "question, sql",
    [
        # the right direction for each word
        ("What is the id of the most recent order?", "SELECT id FROM orders ORDER BY ordered DESC LIMIT 1"),
        ("What is the id of the oldest order?", "SELECT id FROM orders ORDER BY ordered LIMIT 1"),
        ("Which order was shipped the earliest?", "SELECT id FROM orders ORDER BY shipped ASC LIMIT 1"),
        # both ends asked, no LIMIT, or an order by no date
        ("Show the oldest and the newest order.", "SELECT id FROM orders ORDER BY ordered DESC LIMIT 1"),
        ("List the orders, the most recent first.", "SELECT id FROM orders ORDER BY ordered"),
        ("Which order has the oldest customer?", "SELECT id FROM orders ORDER BY total DESC LIMIT 1"),
        ("Which order is the latest?", "SELECT id FROM orders ORDER BY id LIMIT 1"),
    ],
)
def test_time_reversed_is_silent_for_the_right_direction_both_ends_or_no_date(shop, question, sql):
    answer = Answer(sql=sql, dialect="sqlite", question=question, catalog=shop.catalog())
    assert check_named("time_reversed").find(answer) is None


def test_time_reversed_reads_a_text_column_named_like_a_date(tmp_path):
    conn = readonly_sqlite(
        tmp_path,
        "CREATE TABLE clnt (clnt_id INTEGER PRIMARY KEY, clnt_nm TEXT, since_dt TEXT);"
        "INSERT INTO clnt VALUES (1, 'Acme', '2001-05-01'), (2, 'Borealis', '2019-02-11');",
    )
    try:
        answer = Answer(
            sql="SELECT clnt_nm FROM clnt ORDER BY since_dt DESC LIMIT 1",
            dialect="sqlite",
            question="Which client has been with the firm the longest?",
            catalog=conn.catalog(),
        )
        assert check_named("time_reversed").find(answer) == (
            'the question asks for the earliest ("longest"), and the query keeps the latest since_dt '
            "(ORDER BY since_dt DESC)"
        )
    finally:
        conn.close()


@pytest.mark.parametrize(
    "question, sql",
    [
        # the thing's own column shown, or the question asks for the row's own attribute
        ("Show the title of the project of each ticket.", "SELECT project_title FROM tickets"),
        ("Show the title of each ticket and of its project.", "SELECT title, project_title FROM tickets"),
        (
            "What is the title of the ticket in the Zeus project?",
            "SELECT title FROM tickets WHERE project_title = 'Zeus'",
        ),
        ("Show the ticket titles.", "SELECT title FROM tickets"),
    ],
)
def test_attribute_of_other_is_silent_for_the_right_column_or_the_rows_own(shop, question, sql):
    answer = Answer(sql=sql, dialect="sqlite", question=question, catalog=shop.catalog())
    assert check_named("attribute_of_other").find(answer) is None


def test_attribute_of_other_reads_a_possessive():
    from sqlnb.adapters.catalog import Catalog, Column, Table

    singer = Table(
        schema=None,
        name="singer",
        columns=[
            Column("Singer_ID", "INTEGER"),
            Column("Name", "TEXT"),
            Column("Song_Name", "TEXT"),
            Column("Age", "INTEGER"),
        ],
    )
    answer = Answer(
        sql="SELECT Name FROM singer ORDER BY Age LIMIT 1",
        dialect="sqlite",
        question="What is the youngest singer's song name?",
        catalog=Catalog(dialect="sqlite", tables=[singer]),
    )
    assert check_named("attribute_of_other").find(answer) == (
        "the question asks for the name of the song, and the query shows singer.Name, not singer.Song_Name"
    )


def _stored(conn):
    """The distinct stored values of a column, as the agent lists them."""
    return lambda table, column: [
        r[0] for r in conn.execute(f'SELECT DISTINCT "{column}" FROM "{table.name}"').rows
    ]


def _finding(shop, name: str, question: str, sql: str):
    """What the check ``name`` finds against ``sql`` asked of the SHOP database, its stored
    values readable."""
    answer = Answer(
        sql=sql, dialect="sqlite", question=question, catalog=shop.catalog(), stored_values=_stored(shop)
    )
    return check_named(name).find(answer)


@pytest.mark.parametrize(
    "question, sql",
    [
        # the question writes the number, in digits or as a word
        ("How many parcels went by service 2?", "SELECT COUNT(*) FROM parcels WHERE service = 2"),
        ("How many parcels had two boxes?", "SELECT COUNT(*) FROM parcels WHERE boxes = 2"),
        ("How many parcels went by the second service?", "SELECT COUNT(*) FROM parcels WHERE service = 2"),
        ("How many parcels went by the 2nd service?", "SELECT COUNT(*) FROM parcels WHERE service = 2"),
        ("How many parcels went with no service at all?", "SELECT COUNT(*) FROM parcels WHERE service = 0"),
        # a key, a column that refers to a table, a comparison that is no code
        ("Which parcel is the express one?", "SELECT id FROM parcels WHERE id = 3"),
        ("Which parcels are for the express order?", "SELECT id FROM parcels WHERE order_id = 13"),
        ("How many parcels had several boxes?", "SELECT COUNT(*) FROM parcels WHERE boxes > 1"),
        # a yes/no of two values, a column of more values than codes
        ("How many tickets are closed?", "SELECT COUNT(*) FROM tickets WHERE status_id = 2"),
        ("How many customers are premium?", "SELECT COUNT(*) FROM customers WHERE id IN (1, 3)"),
    ],
)
def test_code_meaning_guessed_is_silent_for_a_written_number_a_key_or_no_code(shop, question, sql):
    assert _finding(shop, "code_meaning_guessed", question, sql) is None


def test_code_meaning_guessed_reads_a_two_valued_flag_as_yes_or_no(tmp_path):
    conn = readonly_sqlite(
        tmp_path,
        "CREATE TABLE trips (id INTEGER PRIMARY KEY, bikes_allowed INTEGER, wheelchair INTEGER);"
        "INSERT INTO trips VALUES (1, 0, 0), (2, 1, 1), (3, 1, 2), (4, 0, 1);",
    )
    try:
        for sql, found in [
            ("SELECT COUNT(*) FROM trips WHERE bikes_allowed = 0", None),
            (
                "SELECT COUNT(*) FROM trips WHERE wheelchair <> 1",
                "the query keeps trips.wheelchair <> 1, a numbered code (the column holds 0, 1, 2)",
            ),
        ]:
            answer = Answer(
                sql=sql,
                dialect="sqlite",
                question="How many trips take no bicycles or wheelchairs?",
                catalog=conn.catalog(),
                stored_values=_stored(conn),
            )
            finding = check_named("code_meaning_guessed").find(answer)
            assert finding is None if found is None else found in (finding or "")
    finally:
        conn.close()


@pytest.mark.parametrize(
    "question, sql, dialect",
    [
        # a decimal on either side, a question for whole units, an engine whose "/" keeps the fraction
        ("How many pairs of boxes were sent?", "SELECT SUM(boxes) / 2.0 FROM parcels", "sqlite"),
        ("How many pairs of boxes were sent?", "SELECT CAST(SUM(boxes) AS REAL) / 2 FROM parcels", "sqlite"),
        ("How many full pairs of boxes were sent?", "SELECT SUM(boxes) / 2 FROM parcels", "sqlite"),
        ("How many pairs of boxes were sent?", "SELECT SUM(boxes) / 2 FROM parcels", "duckdb"),
        (
            "What is the average order total per box?",
            "SELECT SUM(o.total) / SUM(p.boxes) FROM orders AS o JOIN parcels AS p ON p.order_id = o.id",
            "sqlite",
        ),
        # a division in the filter, not in the result
        ("Which parcels had more than 2 boxes?", "SELECT id FROM parcels WHERE boxes / 2 >= 1", "sqlite"),
    ],
)
def test_whole_division_is_silent_for_a_decimal_whole_units_or_an_engine_that_keeps_fractions(
    shop, question, sql, dialect
):
    answer = Answer(sql=sql, dialect=dialect, question=question, catalog=shop.catalog())
    assert check_named("whole_division").find(answer) is None


def test_whole_division_reads_a_count_and_a_division_inside_a_sum_on_postgresql(shop):
    for sql, shown in [
        ("SELECT COUNT(*) / 7 FROM parcels", "COUNT(*) / 7"),
        ("SELECT SUM(boxes / 3) FROM parcels", "boxes / 3"),
    ]:
        answer = Answer(
            sql=sql, dialect="postgres", question="How many weeks' or crates' worth?", catalog=shop.catalog()
        )
        assert check_named("whole_division").find(answer) == (
            f"the query divides whole numbers ({shown}), which drops the fraction in this engine"
        )


def test_criterion_not_named_is_silent_where_the_judging_word_names_a_column_asked_for(tmp_path):
    conn = readonly_sqlite(
        tmp_path,
        'CREATE TABLE project (id INTEGER PRIMARY KEY, "key" TEXT, name TEXT);'
        "CREATE TABLE issue (id INTEGER PRIMARY KEY, project_id INTEGER REFERENCES project(id), points INTEGER);"
        "INSERT INTO project VALUES (1, 'KES', 'Kestrel'), (2, 'OPS', 'Operations');"
        "INSERT INTO issue VALUES (1, 1, 3), (2, 1, 5), (3, 2, 8);",
    )
    sql = 'SELECT p."key", COUNT(*) FROM project AS p JOIN issue AS i ON i.project_id = p.id GROUP BY p.id, p."key"'
    try:
        for question, asks in [
            (
                "For each project, how many issues are there? Give the project key and the number of issues.",
                False,
            ),
            ("Which are our key projects?", True),
        ]:
            answer = Answer(sql=sql, dialect="sqlite", question=question, catalog=conn.catalog())
            finding = check_named("criterion_not_named").find(answer)
            assert (finding is not None) == asks, finding
    finally:
        conn.close()


@pytest.mark.parametrize(
    "question, sql",
    [
        # the key used (its number names the kind through the table it refers to), the table of kinds read
        ("How many closed tickets are there?", "SELECT COUNT(*) FROM tickets WHERE status_id = 2"),
        (
            "How many closed tickets are there?",
            "SELECT COUNT(*) FROM tickets AS t JOIN statuses AS s ON s.id = t.status_id WHERE s.name = 'Closed'",
        ),
        # no kind named; a kind's word that is a word of a column the query reads
        ("How many tickets are there?", "SELECT COUNT(*) FROM tickets"),
        ("How many tickets have a project title?", "SELECT COUNT(project_title) FROM tickets"),
    ],
)
def test_kind_not_read_is_silent_where_the_kind_is_read_used_or_not_named(shop, question, sql):
    assert _finding(shop, "kind_not_read", question, sql) is None


@pytest.mark.parametrize(
    "question, sql",
    [
        # the listed rows' own column
        (
            "Which product groups come under Drinks? Give their names and markups.",
            "SELECT g.name, g.markup FROM product_groups AS g JOIN product_groups AS p ON g.parent_id = p.id "
            "WHERE p.name = 'Drinks'",
        ),
        # both rows' columns shown side by side
        (
            "Which product groups come under Drinks? Give their names and markups and the markup of Drinks.",
            "SELECT g.name, g.markup, p.markup FROM product_groups AS g JOIN product_groups AS p "
            "ON g.parent_id = p.id WHERE p.name = 'Drinks'",
        ),
        # a value the question does not name: no row is the named one
        (
            "Which product groups have a parent? Give their names and the parent's markup.",
            "SELECT g.name, p.markup FROM product_groups AS g JOIN product_groups AS p ON g.parent_id = p.id "
            "WHERE p.name <> ''",
        ),
        # two different tables: the named row's column is the other table's
        (
            "Which orders did Grace place? Give their ids and her city.",
            "SELECT o.id, c.city FROM orders AS o JOIN customers AS c ON o.customer_id = c.id WHERE c.name = 'Grace'",
        ),
    ],
)
def test_named_row_shown_is_silent_for_the_listed_rows_column_or_no_named_row(shop, question, sql):
    assert check_named("named_row_shown").find(Answer(sql, "sqlite", question, shop.catalog())) is None


def test_values_left_out_reads_underscored_values_and_not_the_names_of_columns(tmp_path):
    conn = readonly_sqlite(
        tmp_path,
        "CREATE TABLE cards (id INTEGER PRIMARY KEY, verdict TEXT);"
        "INSERT INTO cards VALUES (1, 'yes'), (2, 'strong_yes'), (3, 'no'), (4, 'strong_yes');",
    )
    try:

        def answer(sql: str) -> Answer:
            return Answer(
                sql,
                "sqlite",
                "How many cards gave a strong yes?",
                conn.catalog(),
                stored_values=lambda table, column: [
                    r[0] for r in conn.execute(f"SELECT DISTINCT {column} FROM {table.name}").rows
                ],
            )

        found = check_named("values_left_out").find(
            answer("SELECT COUNT(*) FROM cards WHERE verdict = 'yes'")
        )
        assert (
            found == "the question names 'strong_yes' (a value of cards.verdict), the query does not use it"
        )
        # a name given to a column keeps no rows: the value is still left out
        labelled = answer("SELECT COUNT(*) AS strong_yes_cards FROM cards WHERE verdict = 'yes'")
        assert check_named("values_left_out").find(labelled) == found
        assert (
            check_named("values_left_out").find(
                answer("SELECT COUNT(*) FROM cards WHERE verdict = 'strong_yes'")
            )
            is None
        )
    finally:
        conn.close()


def test_values_left_out_takes_a_verb_form_of_a_column_word_for_that_column(tmp_path):
    # "set to cancel" names the column cancel_at_period_end, not the status 'canceled'; a
    # status no column name has a word of is still looked for
    conn = readonly_sqlite(
        tmp_path,
        "CREATE TABLE subs (id INTEGER PRIMARY KEY, status TEXT, cancel_at_period_end INTEGER);"
        "INSERT INTO subs VALUES (1, 'active', 1), (2, 'canceled', 0), (3, 'active', 0), (4, 'past_due', 0);",
    )
    try:

        def found(question: str, sql: str):
            return check_named("values_left_out").find(
                Answer(sql, "sqlite", question, conn.catalog(), stored_values=_stored(conn))
            )

        sql = "SELECT id FROM subs WHERE status = 'active' AND cancel_at_period_end = 1"
        assert found("Which active subscriptions are set to cancel at the end of the period?", sql) is None
        assert found(
            "Which subscriptions are past due?", "SELECT id FROM subs WHERE cancel_at_period_end = 1"
        ) == ("the question names 'past_due' (a value of subs.status), the query does not use it")
    finally:
        conn.close()


@pytest.mark.parametrize(
    "question, sql",
    [
        # the yes/no column used, either way
        ("How many refundable payments are there?", "SELECT COUNT(*) FROM payments WHERE refundable = 1"),
        ("How many payments are not refundable?", "SELECT COUNT(*) FROM payments WHERE refundable = 0"),
        # the question counts the rows either way, or does not say the column's word
        ("How many payments are there, refundable or not?", "SELECT COUNT(*) FROM payments"),
        ("How many payments are there?", "SELECT COUNT(*) FROM payments"),
        # the word names a stored value the query keeps, not the yes/no column
        ("How many paid payments are there?", "SELECT COUNT(*) FROM payments WHERE status = 'paid'"),
    ],
)
def test_flag_not_applied_is_silent_where_the_flag_is_used_or_not_asked(shop, question, sql):
    assert _finding(shop, "flag_not_applied", question, sql) is None


def test_flag_not_applied_leaves_a_column_that_says_a_row_has_links(tmp_path):
    # has_incidents says a problem has incidents linked; a query counting the links answers
    conn = readonly_sqlite(
        tmp_path,
        "CREATE TABLE ticket (id INTEGER PRIMARY KEY, problem_id INTEGER REFERENCES ticket(id), "
        "has_incidents INTEGER, is_urgent INTEGER);"
        "INSERT INTO ticket VALUES (1, NULL, 1, 0), (2, 1, 0, 1), (3, 1, 0, 0);",
    )
    try:

        def found(question: str) -> object:
            sql = "SELECT T1.id FROM ticket AS T1 JOIN ticket AS T2 ON T1.id = T2.problem_id GROUP BY T1.id"
            return check_named("flag_not_applied").find(
                Answer(sql, "sqlite", question, conn.catalog(), stored_values=_stored(conn))
            )

        assert found("Which problem tickets have incidents linked to them?") is None
        assert "ticket.is_urgent" in str(found("Which urgent problem tickets have incidents linked to them?"))
    finally:
        conn.close()


@pytest.mark.parametrize(
    "question, sql, unread",
    [
        # names the query reads, as written, as a stem, a verb's form, a short form, run together
        ("How many orders were refunded?", "SELECT COUNT(*) FROM orders WHERE status = 'refund'", []),
        ("What did the payments returned total?", "SELECT SUM(amt) FROM pmt WHERE rtn_flg = 'Y'", []),
        ("How many e-commerce orders are there?", "SELECT COUNT(*) FROM ecommerce_orders", []),
        ("How many categories are there?", "SELECT COUNT(*) FROM category", []),
        # a word the query has nothing for, also where an alias of the query's own spells it
        (
            "How many payments were returned unpaid?",
            "SELECT COUNT(*) FROM pmt WHERE rtn_flg = 'N'",
            ["unpaid"],
        ),
        (
            "How many billable hours did each person log?",
            "SELECT user_id, SUM(hours) AS billable_hours FROM time_entry GROUP BY user_id ORDER BY billable_hours",
            ["billable", "person", "log"],
        ),
        # a month: written as its number in a date, or not at all
        (
            "How many orders came in December 2024?",
            "SELECT COUNT(*) FROM orders WHERE ordered BETWEEN '2024-12-01' AND '2024-12-31'",
            [],
        ),
        (
            "How many orders came in March 2024?",
            "SELECT COUNT(*) FROM orders WHERE strftime('%m', ordered) = '03'",
            [],
        ),
        (
            "How many orders came in December 2024?",
            "SELECT COUNT(*) FROM orders WHERE strftime('%Y', ordered) = '2024'",
            ["december"],
        ),
        # leaving out: a negation, an IS NULL, an equality with a value that says no
        (
            "Which customers never ordered?",
            "SELECT name FROM customers WHERE id NOT IN (SELECT customer_id FROM orders)",
            [],
        ),
        (
            "How many orders, leaving out unshipped?",
            "SELECT COUNT(*) FROM orders WHERE shipped IS NOT NULL",
            ["unshipped"],
        ),
        ("How many orders are not shipped?", "SELECT COUNT(*) FROM orders WHERE shipped = 0", []),
        ("How many orders are not shipped?", "SELECT COUNT(*) FROM orders WHERE shipped = 1", ["not"]),
        # a word its prefix negates is read where the query says no to the rest of it (or to
        # its opposite: "disabled", ``enabled = 0``), and unread where the query says yes
        ("How many posts are unpublished?", "SELECT COUNT(*) FROM posts WHERE is_published = 0", []),
        (
            "How many posts are unpublished?",
            "SELECT COUNT(*) FROM posts WHERE is_published = 1",
            ["unpublished"],
        ),
        (
            "How many posts are unpublished?",
            "SELECT COUNT(*) FROM wp_posts WHERE post_status <> 'publish'",
            [],
        ),
        ("Which users are disabled?", "SELECT name FROM users WHERE enabled = 0", []),
        ("Which users are disabled?", "SELECT name FROM users WHERE enabled = 1", ["disabled"]),
        ("Which users are inactive?", "SELECT name FROM users WHERE NOT active", []),
        ("Which users are inactive?", "SELECT name FROM users WHERE NOT (active = 0)", ["inactive"]),
        ("Which invoices are unpaid?", "SELECT id FROM invoices WHERE paid_at IS NULL", []),
        ("Which invoices are unpaid?", "SELECT id FROM invoices WHERE sent = 0", ["unpaid"]),
        # "leave" leaves rows out with its particle; without one it names a thing
        (
            "How many customers, leaving out guests?",
            "SELECT COUNT(*) FROM customers WHERE is_guest = 0",
            [],
        ),
        (
            "How many customers, if we leave the guests out?",
            "SELECT COUNT(*) FROM customers WHERE is_guest = 0",
            [],
        ),
        (
            "How many drivers are on leave?",
            "SELECT COUNT(*) FROM driver WHERE term_dt IS NULL",
            ["leave"],
        ),
        (
            "How many drivers are on leave?",
            "SELECT COUNT(*) FROM driver WHERE status = 'Leave'",
            [],
        ),
        (
            "How many leave applications are waiting?",
            "SELECT COUNT(*) FROM \"tabLeave Application\" WHERE status = 'Open'",
            ["waiting"],
        ),
        # comparing: any comparison
        (
            "How many orders shipped after 2024?",
            "SELECT COUNT(*) FROM orders WHERE shipped > '2024-12-31'",
            [],
        ),
        (
            "Which groups sit under Drinks?",
            "SELECT name FROM product_groups WHERE name = 'Drinks'",
            ["sit", "under"],
        ),
        # adding up: any aggregate or grouping ("together with" only lists beside)
        (
            "Which regions have over 500 beds altogether in their wards?",
            "SELECT region FROM ward GROUP BY region HAVING SUM(beds) > 500",
            [],
        ),
        ("What is the combined stock of the shops?", "SELECT SUM(stock) FROM shops", []),
        (
            "Which regions have over 500 beds altogether in their wards?",
            "SELECT region FROM ward WHERE beds > 500",
            ["altogether"],
        ),
        (
            "List each keeper together with the name of the supervisor.",
            "SELECT k.name, s.name FROM keeper AS k JOIN keeper AS s ON k.supervisor_id = s.id",
            [],
        ),
        # words that name nothing: numbers, ranking, stop and quiet words
        ("Which three customers placed the most orders in 2024?", "SELECT name FROM customers", []),
    ],
)
def test_words_not_read_finds_the_question_words_nothing_in_the_query_stands_for(question, sql, unread):
    from sqlnb.agent.sqltree import parse

    assert unread_words(question, sql, parse(sql, "sqlite")) == unread


def test_words_not_read_keeps_an_answer_from_high_without_doubting_it():
    from sqlnb.agent.confidence import assess
    from sqlnb.agent.prompts import doubts

    agreed = {
        "ok": True,
        "row_count": 3,
        "candidates": [{"ok": True, "chosen": True, "votes": 2, "weight": 2, "group": 0}],
    }
    unread = {"words_not_read": "nothing in the query stands for 'unpaid' of the question"}
    assert assess(agreed)["level"] == "high"
    alone = assess({**agreed, "checks": unread})
    assert (
        alone["level"] == "medium" and unread["words_not_read"] in alone["reasons"] and alone["score"] <= 0.8
    )
    # beside a finding that doubts the answer: low, and only that finding asks for a correction
    both = {**unread, "fan_out": "the sum repeats rows"}
    assert assess({**agreed, "checks": both})["level"] == "low"
    assert doubts({**agreed, "checks": both}) == {"fan_out": "the sum repeats rows"}
    # a check that only keeps an answer from high neither asks back nor corrects
    with pytest.raises(ValueError, match="neither asks nor corrects"):
        Check(name="x", summary="x", find=lambda a: None, advice="x", ceiling="medium")


@pytest.mark.parametrize(
    "sql",
    [
        # the rows the value stands for
        "SELECT g.name FROM product_groups AS g JOIN product_groups AS p ON g.parent_id = p.id "
        "WHERE p.name = 'Drinks'",
        # a column the filter does not fix
        "SELECT name, markup FROM product_groups WHERE name = 'Drinks'",
        # a count, every column, or a value given as one of several
        "SELECT COUNT(*) FROM product_groups WHERE name = 'Drinks'",
        "SELECT * FROM product_groups WHERE name = 'Drinks'",
        "SELECT name FROM product_groups WHERE name IN ('Drinks', 'Tea')",
    ],
)
def test_filter_echoed_is_silent_where_the_result_says_more_than_its_filter(shop, sql):
    question = "Which product groups are in the Drinks group?"
    assert check_named("filter_echoed").find(Answer(sql, "sqlite", question, shop.catalog())) is None
