"""sqlnb.sql.quoting (identifiers per dialect) and sqlnb.sql.normalize."""

from __future__ import annotations

import sqlite3

import duckdb
import pytest
import sqlglot
from sqlglot import exp

from sqlnb.sql.dialects import DIALECTS
from sqlnb.sql.normalize import normalize_sql
from sqlnb.sql.quoting import qualified, quote_identifier

NASTY = [
    "users",
    "MyTable",
    "UPPER",
    "my table",
    'a"b',
    "a`b",
    "select",
    "order",
    "user",
    "group by",
    "1abc",
    "naïve",
    "x;DROP TABLE t",
    "a.b",
    "'quoted'",
    "$dollar",
    "-- c",
]


@pytest.mark.parametrize(
    "dialect,name,expected",
    [
        ("sqlite", "users", '"users"'),
        ("postgres", "MyTable", '"MyTable"'),
        ("snowflake", "MyTable", '"MyTable"'),
        ("redshift", "my table", '"my table"'),
        ("duckdb", 'a"b', '"a""b"'),
        ("postgres", 'say "hi"', '"say ""hi"""'),
        ("mysql", "users", "`users`"),
        ("mysql", "a`b", "`a``b`"),
        ("mysql", 'a"b', '`a"b`'),
        ("mysql", "my table", "`my table`"),
        ("snowflake", "select", '"select"'),
    ],
)
def test_quote_identifier(dialect, name, expected):
    assert quote_identifier(name, dialect) == expected


@pytest.mark.parametrize(
    "dialect,name,expected",
    [
        ("postgres", "users", "users"),
        ("postgres", "Users", '"Users"'),  # PostgreSQL folds unquoted names to lower case
        ("redshift", "USERS", '"USERS"'),
        ("snowflake", "USERS", "USERS"),  # Snowflake folds to upper case
        ("snowflake", "users", '"users"'),
        ("sqlite", "Users", "Users"),  # case-insensitive either way
        ("duckdb", "Users", "Users"),
        ("mysql", "Users", "Users"),
        ("sqlite", "my table", '"my table"'),
        ("mysql", "1abc", "`1abc`"),
        ("postgres", "customer_id", "customer_id"),
    ],
)
def test_quote_identifier_only_when_needed(dialect, name, expected):
    assert quote_identifier(name, dialect, always=False) == expected


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("word", ["select", "order", "group", "user", "from", "table", "where"])
def test_reserved_words_are_always_quoted(dialect, word):
    quoted = quote_identifier(word, dialect, always=False)
    assert quoted[0] in '"`' and quoted[-1] in '"`'
    sql = f"SELECT {quoted} FROM t"
    column = sqlglot.parse_one(sql, read=dialect).expressions[0]
    assert isinstance(column, exp.Column) and column.name == word


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("name", NASTY)
def test_quoted_names_parse_back_to_themselves(dialect, name):
    for always in (True, False):
        ident = quote_identifier(name, dialect, always=always)
        table = sqlglot.parse_one(f"SELECT * FROM {ident}", read=dialect).find(exp.Table)
        assert table.name == name


@pytest.mark.parametrize("dialect", DIALECTS)
def test_qualified(dialect):
    q = "`" if dialect == "mysql" else '"'
    assert qualified("my schema", "t", dialect) == f"{q}my schema{q}.{q}t{q}"
    assert qualified(None, "t", dialect) == f"{q}t{q}"
    assert qualified("", "t", dialect) == f"{q}t{q}"
    table = sqlglot.parse_one(f"SELECT * FROM {qualified('S x', 'Odd.Name', dialect)}", read=dialect).find(
        exp.Table
    )
    assert (table.db, table.name) == ("S x", "Odd.Name")


def test_empty_identifier_is_refused():
    with pytest.raises(ValueError, match="an identifier cannot be empty"):
        quote_identifier("", "postgres")


@pytest.mark.parametrize("name", NASTY)
def test_quoted_names_work_in_sqlite_and_duckdb(name):
    for con, dialect in ((sqlite3.connect(":memory:"), "sqlite"), (duckdb.connect(), "duckdb")):
        for always in (True, False):
            table = quote_identifier(name, dialect, always=always)
            column = quote_identifier(name + "_c", dialect, always=always)
            con.execute(f"CREATE TABLE {table} ({column} INTEGER)")
            con.execute(f"INSERT INTO {table} VALUES (7)")
            assert con.execute(f"SELECT {column} FROM {qualified(None, name, dialect)}").fetchall() == [(7,)]
            con.execute(f"DROP TABLE {table}")


# --------------------------------------------------------------------------- normalize


@pytest.mark.parametrize(
    "dialect,a,b",
    [
        ("postgres", "SELECT  a ,b FROM t\nWHERE x=1", "select a, b from t where x = 1"),
        ("sqlite", "SELECT count(*) FROM singer;", "select COUNT(*) from SINGER"),
        ("mysql", "SELECT a FROM t -- why\n", "/* note */ SELECT a FROM t"),
        (
            "snowflake",
            "select a from t qualify row_number() over (order by a) = 1",
            "SELECT A FROM T QUALIFY ROW_NUMBER() OVER (ORDER BY A) = 1",
        ),
        ("duckdb", "SELECT 1;", "SELECT 1"),
        ("sqlite", "SELECT 1; -- trailing comment", "SELECT 1"),
        ("postgres", "SELECT x::int", "SELECT CAST(x AS INT)"),
        ("postgres", "VACUUM   FULL t", "vacuum full t"),  # a Command: text is folded
        ("postgres", "SELECT (1", "select  (1 ;"),  # unparsable: text is folded
    ],
)
def test_normalize_equal(dialect, a, b):
    assert normalize_sql(a, dialect) == normalize_sql(b, dialect)


@pytest.mark.parametrize(
    "dialect,a,b",
    [
        ("postgres", "SELECT a FROM t", "SELECT b FROM t"),
        ("postgres", "SELECT a FROM t WHERE x = 'A'", "SELECT a FROM t WHERE x = 'a'"),
        ("postgres", 'SELECT "A" FROM t', "SELECT a FROM t"),  # a quoted name keeps its case
        ("sqlite", "SELECT 1", "SELECT 1; SELECT 2"),
        ("mysql", "SELECT a FROM t LIMIT 1", "SELECT a FROM t LIMIT 2"),
        ("postgres", "SELECT (1", "SELECT (2"),
    ],
)
def test_normalize_different(dialect, a, b):
    assert normalize_sql(a, dialect) != normalize_sql(b, dialect)


def test_normalize_falls_back_on_unparsable_input():
    assert normalize_sql("SELECT  (\n1 FROM", "postgres") == "select ( 1 from"
    assert normalize_sql("  ", "postgres") == ""
    assert normalize_sql("SELECT 1", "no-such-dialect") == "select 1"


def test_normalize_is_a_parse_and_regenerate():
    assert normalize_sql("select a from t where b = 1", "postgres") == "SELECT a FROM t WHERE b = 1"
