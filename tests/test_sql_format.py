"""SQL laid out for people (sqlnb.sql.format.pretty): the same query in every dialect, the
same rows on real engines, comments kept, quotes and case as they were or plainer, and the
original text whenever the layout cannot be shown to mean the same."""

from __future__ import annotations

import sqlite3

import pytest
import sqlglot

from sqlnb.sql import format as sqlformat
from sqlnb.sql.dialects import DIALECTS
from sqlnb.sql.format import pretty

# queries every dialect reads: joins, a CTE, a window, CASE, a subquery, grouping, order
QUERIES = [
    "SELECT name, count(*) AS n FROM customers GROUP BY name ORDER BY n DESC LIMIT 10",
    "SELECT c.name, sum(o.amount) AS total FROM customers AS c JOIN orders AS o ON o.customer_id = c.id "
    "WHERE o.status <> 'cancelled' AND o.amount > 10 GROUP BY c.name HAVING sum(o.amount) > 100",
    "WITH big AS (SELECT customer_id, max(amount) AS largest FROM orders GROUP BY customer_id) "
    "SELECT b.customer_id, b.largest FROM big AS b WHERE b.largest >= (SELECT avg(amount) FROM orders)",
    "SELECT id, CASE WHEN amount >= 100 THEN 'large' WHEN amount >= 10 THEN 'medium' ELSE 'small' END "
    "AS size, row_number() OVER (PARTITION BY customer_id ORDER BY amount DESC) AS rank_in_customer "
    "FROM orders",
    "SELECT DISTINCT status FROM orders WHERE customer_id IN (SELECT id FROM customers WHERE name LIKE 'A%')",
    "SELECT count(DISTINCT customer_id) FROM orders LEFT JOIN customers ON customers.id = orders.customer_id",
]


def tree(sql: str, dialect: str):
    return sqlglot.parse_one(sql, read=dialect)


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("query", QUERIES, ids=range(len(QUERIES)))
def test_the_layout_is_the_same_query_in_every_dialect(dialect, query):
    out = pretty(query, dialect)
    assert out != query and "\n" in out  # laid out, not handed back
    assert tree(out, dialect) == tree(query, dialect)  # quotes and all: none needed dropping
    assert pretty(out, dialect) == out  # laying out again changes nothing


@pytest.mark.parametrize("dialect", DIALECTS)
def test_names_keep_their_case_and_get_no_quotes(dialect):
    out = pretty(
        "SELECT Customers.Name, c2.City FROM Customers JOIN Cities AS c2 ON c2.Id = Customers.CityId", dialect
    )
    assert '"' not in out and "`" not in out
    for name in ("Customers.Name", "c2.City", "FROM Customers", "Cities AS c2", "c2.Id", "Customers.CityId"):
        assert name in out, out


def test_needless_quotes_and_aliases_go():
    sql = (
        'SELECT "customers"."name", count(orders."customer_id") AS "n" FROM "customers" AS customers '
        'JOIN "orders" AS "orders" ON orders."customer_id" = customers."id" GROUP BY "customers"."name"'
    )
    out = pretty(sql, "duckdb")
    assert '"' not in out, out
    assert "AS customers" not in out and "AS orders" not in out
    assert "FROM customers" in out and "JOIN orders" in out and "orders.customer_id" in out
    # lower-case names read the same unquoted in PostgreSQL too (``name``, one of its
    # keywords, keeps its quotes there: quote_identifier's list is cautious)
    assert pretty(sql, "postgres").replace('"name"', "name") == out


@pytest.mark.parametrize(
    "dialect, sql, kept",
    [
        ("postgres", 'SELECT "Name" FROM "Customers"', ['"Name"', '"Customers"']),  # case folds to lower
        ("redshift", 'SELECT "Name" FROM t', ['"Name"']),
        ("snowflake", 'SELECT "name" FROM t', ['"name"']),  # folds to upper there
        ("duckdb", 'SELECT "order", "first name" FROM t', ['"order"', '"first name"']),  # keyword, space
        ("mysql", "SELECT `select`, `a b` FROM t", ["`select`", "`a b`"]),
        ("sqlite", 'SELECT "group" FROM "t-1"', ['"group"', '"t-1"']),
    ],
)
def test_quotes_that_matter_stay(dialect, sql, kept):
    out = pretty(sql, dialect)
    assert "\n" in out
    for q in kept:
        assert q in out, out


def test_a_qualified_table_keeps_its_alias():
    out = pretty("SELECT customers.id FROM shop.customers AS customers", "postgres")
    assert "shop.customers AS customers" in out


def test_comments_are_kept():
    sql = "SELECT a, -- the first\n  b /* the second */\nFROM t -- the table\nWHERE a > 1"
    for dialect in DIALECTS:
        out = pretty(sql, dialect)
        for words in ("the first", "the second", "the table"):
            assert words in out, (dialect, out)
        assert pretty(out, dialect) == out


@pytest.mark.parametrize(
    "sql",
    [
        "SELEC name FRM customers",  # does not parse
        "SELECT 1; SELECT 2",  # two statements
        "",
        "   ",
        "SELECT * FROM t WHERE x = (",
    ],
)
def test_text_that_cannot_be_laid_out_comes_back_unchanged(sql):
    for dialect in (*DIALECTS, None, "no-such-dialect"):
        assert pretty(sql, dialect) == sql


def test_a_layout_that_would_mean_something_else_is_not_used(monkeypatch):
    sql = "SELECT name, amount FROM orders WHERE amount > 10"

    def renaming(tree, dialect):  # a layout step gone wrong: another column
        for col in tree.find_all(sqlglot.exp.Column):
            if col.name == "amount":
                col.set("this", sqlglot.exp.to_identifier("total"))
        return tree

    monkeypatch.setattr(sqlformat, "_tidy", renaming)
    assert pretty(sql, "duckdb") == sql


def test_a_function_spelled_another_way_is_not_used(monkeypatch):
    # sqlglot reads both spellings as one function; an engine may know only one of them
    sql = "SELECT substr(name, 1, 2) AS s FROM customers"

    def respelled(tree, dialect):
        return sqlglot.parse_one(sql.replace("substr(", "substring("), read=dialect)

    monkeypatch.setattr(sqlformat, "_tidy", respelled)
    assert pretty(sql, "postgres") == sql


def test_a_lost_comment_keeps_the_original(monkeypatch):
    sql = "SELECT a -- why a\nFROM t"
    monkeypatch.setattr(sqlformat, "_tidy", lambda tree, dialect: sqlglot.parse_one("SELECT a FROM t"))
    assert pretty(sql, "duckdb") == sql


def test_sqlglot_failing_keeps_the_original(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("a sqlglot bug")

    monkeypatch.setattr(sqlformat, "_tidy", broken)
    assert pretty("SELECT a FROM t", "duckdb") == "SELECT a FROM t"


SHOP = [
    "CREATE TABLE customers (id INTEGER PRIMARY KEY, name VARCHAR, city VARCHAR)",
    "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, amount DECIMAL(10, 2), "
    "status VARCHAR, ordered_at DATE)",
    "INSERT INTO customers VALUES (1, 'Ada', 'Berlin'), (2, 'Grace', 'Paris'), (3, 'Alan', 'Berlin')",
    "INSERT INTO orders VALUES (10, 1, 12.5, 'paid', '2024-03-01'), (11, 1, 150, 'paid', '2024-04-02'), "
    "(12, 2, 7.25, 'cancelled', '2024-04-03'), (13, 3, 99, 'paid', '2024-05-04')",
]
ENGINE_QUERIES = [
    *QUERIES,
    'SELECT "customers"."name" AS "name", sum(orders."amount") AS total FROM "customers" AS customers '
    'JOIN "orders" AS orders ON orders."customer_id" = customers."id" GROUP BY "customers"."name" '
    "ORDER BY total DESC -- the best first",
]


def _rows(run, sql):
    return sorted(run(sql), key=repr)


@pytest.mark.parametrize("engine", ["sqlite", "duckdb"])
def test_the_layout_gives_the_same_rows(engine):
    if engine == "sqlite":
        conn = sqlite3.connect(":memory:")

        def run(sql):
            return conn.execute(sql).fetchall()
    else:
        duckdb = pytest.importorskip("duckdb")
        conn = duckdb.connect()

        def run(sql):
            return conn.execute(sql).fetchall()

    for statement in SHOP:
        run(statement)
    for sql in ENGINE_QUERIES:
        out = pretty(sql, engine)
        assert "\n" in out
        assert _rows(run, out) == _rows(run, sql), out
