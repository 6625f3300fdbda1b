"""Hints and suggested fixes after a failed query, from a real SQLite catalog."""

from __future__ import annotations

import sqlite3

import pytest

from sqlnb.adapters import connect
from sqlnb.agent.hints import alias_table, error_hint, suggest_fix
from sqlnb.agent.prompts import format_attempt


def sqlite_catalog(tmp_path_factory, name: str, script: str):
    """The catalog of a new SQLite file made by ``script`` (the connection stays open)."""
    path = tmp_path_factory.mktemp("hints") / f"{name}.sqlite"
    con = sqlite3.connect(path)
    con.executescript(script)
    con.close()
    return connect(f"sqlite:///{path}", readonly=True)


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    conn = sqlite_catalog(tmp_path_factory, "pets", """
        CREATE TABLE Student (StuID INTEGER PRIMARY KEY, Fname TEXT, Age INTEGER);
        CREATE TABLE Pets (PetID INTEGER PRIMARY KEY, PetType TEXT, pet_age INTEGER, weight REAL);
        CREATE TABLE Has_Pet (StuID INTEGER REFERENCES Student(StuID), PetID INTEGER REFERENCES Pets(PetID));
    """)
    yield conn.catalog()
    conn.close()


def test_a_column_taken_from_the_wrong_table_of_the_query(catalog):
    sql = "SELECT T2.weight FROM Pets AS T1 JOIN Has_Pet AS T2 ON T1.PetID = T2.PetID"
    msg = "no such column: T2.weight"
    assert suggest_fix("column_not_found", msg, sql, "sqlite", catalog) == \
        "SELECT T1.weight FROM Pets AS T1 JOIN Has_Pet AS T2 ON T1.PetID = T2.PetID"
    hint = error_hint("column_not_found", msg, sql, "sqlite", catalog)
    assert "T2 is Has_Pet, which has no column weight (its columns: StuID, PetID)" in hint
    assert "column weight exists in: Pets" in hint
    assert alias_table(sql, "sqlite", catalog, "T1").name == "Pets"


def test_a_misspelt_column_or_table(catalog):
    assert suggest_fix("column_not_found", "no such column: pet_type",
                       "SELECT pet_type, max(weight) FROM Pets GROUP BY pet_type", "sqlite", catalog) == \
        "SELECT PetType, MAX(weight) FROM Pets GROUP BY PetType"
    assert suggest_fix("table_not_found", "no such table: pet", "SELECT count(*) FROM pet",
                       "sqlite", catalog) == "SELECT COUNT(*) FROM Pets"


@pytest.fixture(scope="module")
def cars(tmp_path_factory):
    conn = sqlite_catalog(tmp_path_factory, "cars", """
        CREATE TABLE car_names (MakeId INTEGER PRIMARY KEY, Model TEXT, Make TEXT);
        CREATE TABLE cars_data (Id INTEGER PRIMARY KEY REFERENCES car_names(MakeId),
                                Horsepower TEXT, Weight INTEGER);
    """)
    yield conn.catalog()
    conn.close()


def test_a_join_on_a_column_the_table_lacks_follows_the_foreign_key(cars):
    # moving T1.MakeId to T2 would join T2.MakeId = T2.MakeId (every row with every row)
    sql = "SELECT T2.Model FROM cars_data AS T1 JOIN car_names AS T2 ON T1.MakeId = T2.MakeId"
    assert suggest_fix("column_not_found", "no such column: T1.MakeId", sql, "sqlite", cars) == \
        "SELECT T2.Model FROM cars_data AS T1 JOIN car_names AS T2 ON T1.Id = T2.MakeId"
    # the key in the other direction, and written the other way round
    sql = "SELECT T1.Model FROM car_names AS T1 JOIN cars_data AS T2 ON T2.MakeId = T1.MakeId"
    assert suggest_fix("column_not_found", "no such column: T2.MakeId", sql, "sqlite", cars) == \
        "SELECT T1.Model FROM car_names AS T1 JOIN cars_data AS T2 ON T2.Id = T1.MakeId"


def test_a_join_without_a_key_between_the_tables_gets_no_suggestion(catalog):
    sql = "SELECT T1.Fname FROM Student AS T1 JOIN Pets AS T2 ON T1.PetID = T2.PetID"
    assert suggest_fix("column_not_found", "no such column: T1.PetID", sql, "sqlite", catalog) is None


def test_every_column_taken_from_the_wrong_table_is_fixed(cars):
    # the engine names the first one only
    sql = ("SELECT T1.Make FROM cars_data AS T1 JOIN car_names AS T2 ON T1.Id = T2.MakeId "
           "WHERE T1.Model = 'volvo' ORDER BY T2.Weight")
    assert suggest_fix("column_not_found", "no such column: T1.Make", sql, "sqlite", cars) == (
        "SELECT T2.Make FROM cars_data AS T1 JOIN car_names AS T2 ON T1.Id = T2.MakeId "
        "WHERE T2.Model = 'volvo' ORDER BY T1.Weight")


@pytest.mark.parametrize("sql, msg", [
    # no table of the query has it, and nothing is spelt close: no guess
    ("SELECT color FROM Pets", "no such column: color"),
    # the column is in a table the query does not read: the fix is a join, not a rename
    ("SELECT Fname FROM Pets", "no such column: Fname"),
    ("SELECT * FROM zebras", "no such table: zebras"),
    ("SELEC broken", "near \"SELEC\": syntax error"),
])
def test_no_suggestion_unless_one_fix_is_clear(catalog, sql, msg):
    kind = "table_not_found" if "table" in msg else "column_not_found"
    assert suggest_fix(kind, msg, sql, "sqlite", catalog) is None


def test_the_model_sees_the_suggestion(catalog):
    attempt = {"n": 1, "sql": "SELECT pet_type FROM Pets", "ok": False, "error_kind": "column_not_found",
               "error": "no such column: pet_type", "hint": "closest: PetType",
               "suggestion": "SELECT PetType FROM Pets"}
    text = format_attempt(attempt)
    assert "no such column: pet_type" in text and "```sql\nSELECT PetType FROM Pets\n```" in text


def test_repeated_rows_are_counted_not_shown(catalog, tmp_path):
    from sqlnb.agent.nodes import repeated_rows_hint

    conn = connect("sqlite://")
    try:
        conn.execute("CREATE TABLE t (name TEXT, n INTEGER)")
        conn.execute("INSERT INTO t VALUES ('Ada', 1), ('Ada', 1), ('Bob', 2), ('Ada', 3)")
        hint = repeated_rows_hint(conn.execute("SELECT name, n FROM t"))
        assert hint.startswith("only 3 of the 4 rows are different") and "Ada" not in hint
        assert repeated_rows_hint(conn.execute("SELECT DISTINCT name, n FROM t")) is None
        assert repeated_rows_hint(conn.execute("SELECT name FROM t WHERE n = 2")) is None
    finally:
        conn.close()


def test_empty_result_tells_the_model_to_check_filters():
    text = format_attempt({"n": 1, "sql": "SELECT 1 WHERE 0", "ok": True, "row_count": 0,
                           "columns": [["x", "integer"]], "preview": []})
    assert "No rows matched" in text and "check the filters" in text


def test_value_repair_puts_in_the_stored_value_when_exactly_one_fits(catalog):
    from sqlnb.agent.hints import value_repair

    stored = {("Pets", "PetType"): ["dog", "cat", "guinea pig"], ("Student", "Fname"): ["Johnson", "Jonson", "Bob"]}

    def values(table, column):
        return stored[(table.name, column)]

    # case and spacing
    assert value_repair("SELECT count(*) FROM Pets WHERE PetType = 'Guinea  Pig'", "sqlite", catalog, values) \
        == ("SELECT COUNT(*) FROM Pets WHERE PetType = 'guinea pig'", "'Guinea  Pig' → 'guinea pig'")
    # one clear near match, inside IN, through an alias
    fixed = value_repair("SELECT T.PetID FROM Pets AS T WHERE T.PetType IN ('dogg', 'cat')", "sqlite", catalog, values)
    assert fixed == ("SELECT T.PetID FROM Pets AS T WHERE T.PetType IN ('dog', 'cat')", "'dogg' → 'dog'")
    # two near matches ('Johnson', 'Jonson' for 'Johnsonn'): nothing is guessed; a value that
    # exists: nothing to do
    assert value_repair("SELECT Age FROM Student WHERE Fname = 'Johnsonn'", "sqlite", catalog, values) is None
    assert value_repair("SELECT Age FROM Student WHERE Fname = 'Bob'", "sqlite", catalog, values) is None
    # no such column in the catalog, or a literal far from every value: nothing
    assert value_repair("SELECT 1 FROM Pets WHERE colour = 'red'", "sqlite", catalog, values) is None
    assert value_repair("SELECT 1 FROM Pets WHERE PetType = 'hamster'", "sqlite", catalog, values) is None
