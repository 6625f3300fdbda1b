"""Hints and suggested fixes after a failed query, from a real SQLite catalog."""

from __future__ import annotations

import sqlite3

import pytest

from sqlnb.adapters import connect
from sqlnb.agent.checks import Answer, check_named
from sqlnb.agent.hints import error_hint
from sqlnb.agent.prompts import format_attempt
from sqlnb.agent.repairs.joins import link_joins
from sqlnb.agent.repairs.labels import label_column, label_columns, label_ids
from sqlnb.agent.repairs.names import suggest_fix
from sqlnb.agent.sqltree import alias_table

# the checks that read only the query, the question and the catalog, run as the agent runs
# them on its kept query, and the one that reads stored values
_QUERY_CHECKS = ("numbers_left_out", "filters_not_asked")


def answer_doubts(sql, dialect, catalog, question, rows):
    answer = Answer(sql=sql, dialect=dialect, question=question, catalog=catalog, row_count=rows)
    return [f for name in _QUERY_CHECKS if (f := check_named(name).find(answer))]


def values_left_out(sql, dialect, catalog, question, stored):
    answer = Answer(sql=sql, dialect=dialect, question=question, catalog=catalog, stored_values=stored)
    found = check_named("values_left_out").find(answer)
    return found.split("; ") if found else []


def sqlite_catalog(tmp_path_factory, name: str, script: str):
    """The catalog of a new SQLite file made by ``script`` (the connection stays open)."""
    path = tmp_path_factory.mktemp("hints") / f"{name}.sqlite"
    con = sqlite3.connect(path)
    con.executescript(script)
    con.close()
    return connect(f"sqlite:///{path}", readonly=True)


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    conn = sqlite_catalog(
        tmp_path_factory,
        "pets",
        """
        CREATE TABLE Student (StuID INTEGER PRIMARY KEY, Fname TEXT, Age INTEGER);
        CREATE TABLE Pets (PetID INTEGER PRIMARY KEY, PetType TEXT, pet_age INTEGER, weight REAL);
        CREATE TABLE Has_Pet (StuID INTEGER REFERENCES Student(StuID), PetID INTEGER REFERENCES Pets(PetID));
    """,
    )
    yield conn.catalog()
    conn.close()


def test_a_column_taken_from_the_wrong_table_of_the_query(catalog):
    sql = "SELECT T2.weight FROM Pets AS T1 JOIN Has_Pet AS T2 ON T1.PetID = T2.PetID"
    msg = "no such column: T2.weight"
    assert (
        suggest_fix("column_not_found", msg, sql, "sqlite", catalog)
        == "SELECT T1.weight FROM Pets AS T1 JOIN Has_Pet AS T2 ON T1.PetID = T2.PetID"
    )
    hint = error_hint("column_not_found", msg, sql, "sqlite", catalog)
    assert "T2 is Has_Pet, which has no column weight (its columns: StuID, PetID)" in hint
    assert "column weight exists in: Pets" in hint
    assert alias_table(sql, "sqlite", catalog, "T1").name == "Pets"


def test_a_misspelt_column_or_table(catalog):
    assert (
        suggest_fix(
            "column_not_found",
            "no such column: pet_type",
            "SELECT pet_type, max(weight) FROM Pets GROUP BY pet_type",
            "sqlite",
            catalog,
        )
        == "SELECT PetType, MAX(weight) FROM Pets GROUP BY PetType"
    )
    assert (
        suggest_fix("table_not_found", "no such table: pet", "SELECT count(*) FROM pet", "sqlite", catalog)
        == "SELECT COUNT(*) FROM Pets"
    )


@pytest.fixture(scope="module")
def cars(tmp_path_factory):
    conn = sqlite_catalog(
        tmp_path_factory,
        "cars",
        """
        CREATE TABLE car_names (MakeId INTEGER PRIMARY KEY, Model TEXT, Make TEXT);
        CREATE TABLE cars_data (Id INTEGER PRIMARY KEY REFERENCES car_names(MakeId),
                                Horsepower TEXT, Weight INTEGER);
    """,
    )
    yield conn.catalog()
    conn.close()


def test_a_join_on_a_column_the_table_lacks_follows_the_foreign_key(cars):
    # moving T1.MakeId to T2 would join T2.MakeId = T2.MakeId (every row with every row)
    sql = "SELECT T2.Model FROM cars_data AS T1 JOIN car_names AS T2 ON T1.MakeId = T2.MakeId"
    assert (
        suggest_fix("column_not_found", "no such column: T1.MakeId", sql, "sqlite", cars)
        == "SELECT T2.Model FROM cars_data AS T1 JOIN car_names AS T2 ON T1.Id = T2.MakeId"
    )
    # the key in the other direction, and written the other way round
    sql = "SELECT T1.Model FROM car_names AS T1 JOIN cars_data AS T2 ON T2.MakeId = T1.MakeId"
    assert (
        suggest_fix("column_not_found", "no such column: T2.MakeId", sql, "sqlite", cars)
        == "SELECT T1.Model FROM car_names AS T1 JOIN cars_data AS T2 ON T2.Id = T1.MakeId"
    )


def test_a_join_without_a_key_between_the_tables_gets_no_suggestion(catalog):
    sql = "SELECT T1.Fname FROM Student AS T1 JOIN Pets AS T2 ON T1.PetID = T2.PetID"
    assert suggest_fix("column_not_found", "no such column: T1.PetID", sql, "sqlite", catalog) is None


def test_every_column_taken_from_the_wrong_table_is_fixed(cars):
    # the engine names the first one only
    sql = (
        "SELECT T1.Make FROM cars_data AS T1 JOIN car_names AS T2 ON T1.Id = T2.MakeId "
        "WHERE T1.Model = 'volvo' ORDER BY T2.Weight"
    )
    assert suggest_fix("column_not_found", "no such column: T1.Make", sql, "sqlite", cars) == (
        "SELECT T2.Make FROM cars_data AS T1 JOIN car_names AS T2 ON T1.Id = T2.MakeId "
        "WHERE T2.Model = 'volvo' ORDER BY T1.Weight"
    )


@pytest.mark.parametrize(
    "sql, msg",
    [
        # no table of the query has it, and nothing is spelt close: no guess
        ("SELECT color FROM Pets", "no such column: color"),
        # the column is in a table the query does not read: the fix is a join, not a rename
        ("SELECT Fname FROM Pets", "no such column: Fname"),
        ("SELECT * FROM zebras", "no such table: zebras"),
        ("SELEC broken", 'near "SELEC": syntax error'),
    ],
)
def test_no_suggestion_unless_one_fix_is_clear(catalog, sql, msg):
    kind = "table_not_found" if "table" in msg else "column_not_found"
    assert suggest_fix(kind, msg, sql, "sqlite", catalog) is None


def test_the_model_sees_the_suggestion(catalog):
    attempt = {
        "n": 1,
        "sql": "SELECT pet_type FROM Pets",
        "ok": False,
        "error_kind": "column_not_found",
        "error": "no such column: pet_type",
        "hint": "closest: PetType",
        "suggestion": "SELECT PetType FROM Pets",
    }
    text = format_attempt(attempt)
    assert "no such column: pet_type" in text and "```sql\nSELECT PetType FROM Pets\n```" in text


def test_repeated_rows_are_counted_not_shown(catalog, tmp_path):
    from sqlnb.agent.hints import repeated_rows_hint

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
    text = format_attempt(
        {
            "n": 1,
            "sql": "SELECT 1 WHERE 0",
            "ok": True,
            "row_count": 0,
            "columns": [["x", "integer"]],
            "preview": [],
        }
    )
    assert "No rows matched" in text and "check the filters" in text


def test_null_safe_not_in_leaves_the_nulls_out_of_each_not_in_subquery():
    from sqlnb.agent.repairs.empty import null_safe_not_in

    assert null_safe_not_in(
        "SELECT Fname FROM Student WHERE StuID NOT IN (SELECT StuID FROM Has_Pet)", "sqlite"
    ) == (
        "SELECT Fname FROM Student WHERE StuID NOT IN (SELECT StuID FROM Has_Pet WHERE StuID IS NOT NULL)",
        ["StuID"],
    )
    # the subquery's own filter kept, an alias on its column, two of them, another dialect
    sql = (
        "SELECT T1.Fname FROM Student AS T1 WHERE T1.StuID NOT IN (SELECT H.StuID AS s FROM Has_Pet AS H "
        "WHERE H.PetID > 1) AND T1.Age NOT IN (SELECT pet_age FROM Pets)"
    )
    fixed, what = null_safe_not_in(sql, "postgresql")
    assert (
        "WHERE H.PetID > 1 AND H.StuID IS NOT NULL)" in fixed
        and "FROM Pets WHERE pet_age IS NOT NULL)" in fixed
    )
    assert "T1.StuID NOT IN (" in fixed and what == ["H.StuID", "pet_age"]
    # nothing to leave out: a list of values, IN, NOT EXISTS, a subquery of two columns
    for sql in (
        "SELECT Fname FROM Student WHERE StuID NOT IN (1, 2)",
        "SELECT Fname FROM Student WHERE StuID IN (SELECT StuID FROM Has_Pet)",
        "SELECT Fname FROM Student AS S WHERE NOT EXISTS (SELECT 1 FROM Has_Pet AS H WHERE H.StuID = S.StuID)",
        "SELECT Fname FROM Student WHERE (StuID, Age) NOT IN (SELECT StuID, PetID FROM Has_Pet)",
        "not sql at all (",
    ):
        assert null_safe_not_in(sql, "sqlite") is None, sql


@pytest.mark.parametrize(
    "code, word",
    [
        ("MUS", "musicals"),
        ("SEAS", "season"),
        ("TNK", "tankers"),
        ("MTG", "meeting"),
        ("SOFT", "software"),
        ("STE", "suites"),
        ("DRM", "dramas"),
        ("PHN", "phone"),
        ("IMP", "imported"),
    ],
)
def test_a_code_reads_as_a_short_form_of_a_word(code, word):
    from sqlnb.agent.lexicon import abbreviates

    assert abbreviates(code, word)


@pytest.mark.parametrize(
    "code, word",
    [
        ("MUS", "mus"),  # not longer than the code
        ("TNK", "stank"),  # another first letter
        ("MTG", "magnet"),  # the letters out of order
        ("DES", "desk"),  # the start of a word only one letter longer
        ("SW", "software"),  # two-letter codes are read only as initials: 'CS' in "cheapest"
        ("CS", "cheapest"),
        ("CXL", "cancelled"),  # no x: not read
    ],
)
def test_a_code_does_not_read_as_any_word_with_its_letters(code, word):
    from sqlnb.agent.lexicon import abbreviates

    assert not abbreviates(code, word)


def test_value_named_reads_codes_only_when_asked_and_not_in_asking_words_or_names():
    from sqlnb.agent.lexicon import value_named

    q = "List the names of all software companies."
    assert not value_named(q)("SOFT")  # whole words only, by default
    assert value_named(q, codes=True)("SOFT")
    assert not value_named(q, codes=True)("soft")  # a code is capital letters
    assert value_named(q, codes=True)("COMP")  # "companies" starts with it…
    assert not value_named(q, codes=True, names=["company", "ind"])("COMP")  # …but names a table
    assert value_named("Show the titles of the comedies", codes=True)("COM")
    assert not value_named("Show the total of each, ordered by name", codes=True)("ORD")  # asking words
    # two-letter codes: the initials of two words in a row
    assert value_named("How many full-time staff?", codes=True)("FT")
    assert value_named("How many part time staff?", codes=True)("PT")
    assert value_named("Which grants has the principal investigator?", codes=True)("PI")
    assert not value_named("What is the cheapest red wine?", codes=True)("CS")
    assert not value_named("Show the total of each", codes=True)("ST")  # asking words
    # a code that is also an everyday word is named only as stored, in capitals, or as a plural
    q = "How many orders were placed in each country?"
    assert not value_named(q)("IN") and not value_named(q, codes=True)("IN")
    assert value_named("How many customers are in IN?", codes=True)("IN")
    assert value_named("How many customers live in the US?")("US")
    assert not value_named("Show its staff", codes=True)("IT")
    assert not value_named("Which customers can order?", codes=True)("CAN")
    assert value_named("Which customers ordered kegs but never cans?", codes=True)("CAN")
    assert value_named("In which country?")("Country") and value_named("in what?")("in")  # not codes
    assert not value_named("How many customers are there per country?", codes=True)("CA")  # "customers are"
    # a word of four letters or more named as a verb's form; a shorter one only as itself
    assert value_named("Which of the orders were cancelled last week?")("cancel")
    assert value_named("Which invoices were refunded?")("refund")
    assert value_named("All approved loans")("approve")
    assert value_named("Orders still shipping")("ship") and value_named("the cancels")("cancel")
    assert not value_named("Which invoices were refunded?")("fund")
    assert not value_named("Who was tagged?")("tag")
    assert not value_named("the newest")("new") and not value_named("the cancellation")("cancel")
    # and the other way: a stored verb's form named by its stem
    assert value_named("How many subscriptions are in their free trial?")("trialing")
    assert value_named("Which payments were refunds?")("refunded") and value_named("Ship it")("shipping")
    assert not value_named("Which orders were sent?")("pending")


def test_verb_stems_undo_an_ending_and_a_doubled_consonant():
    from sqlnb.agent.lexicon import verb_stems

    assert verb_stems("trialing") == ["trial"]
    assert "ship" in verb_stems("shipping") and "approve" in verb_stems("approved")
    assert "cancel" in verb_stems("cancelled") and verb_stems("thing") == [] and verb_stems("red") == []


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    conn = sqlite_catalog(
        tmp_path_factory,
        "port",
        """
        CREATE TABLE vessel (ves_id INTEGER PRIMARY KEY, ves_nm TEXT, ves_typ TEXT, built INTEGER);
        CREATE TABLE company (co_id INTEGER PRIMARY KEY, co_nm TEXT, ind TEXT);
        CREATE TABLE staff (stf_id INTEGER PRIMARY KEY, stf_nm TEXT, ctr TEXT);
        INSERT INTO vessel VALUES (1, 'Aurora', 'CNT', 2001), (2, 'Borealis', 'GEN', 2010),
            (3, 'Cygnus', 'TNK', 2015), (4, 'Draco', 'TNK', 2018), (5, 'Eos', 'BLK', 2003);
        INSERT INTO company VALUES (1, 'Bytecraft', 'SOFT'), (2, 'Ledger & Co', 'FIN'),
            (3, 'Pixel Works', 'SOFT'), (4, 'Studio Nine', 'DES');
        INSERT INTO staff VALUES (1, 'Ann', 'FT'), (2, 'Ben', 'PT'), (3, 'Cai', 'FT');
    """,
    )
    yield conn
    conn.close()


def test_a_code_the_question_spells_out_and_the_query_leaves_out_is_a_doubt(port):
    cat = port.catalog()
    q = "List the names of all software companies."
    assert values_left_out("SELECT co_nm FROM company", "sqlite", cat, q, _stored(port)) == [
        "the question names 'SOFT' (a value of company.ind), the query does not use it"
    ]
    for used in ("ind = 'SOFT'", "ind IN ('SOFT', 'DES')", 'ind = "SOFT"'):
        assert (
            values_left_out(f"SELECT co_nm FROM company WHERE {used}", "sqlite", cat, q, _stored(port)) == []
        )
    # the letters of the code inside an unquoted name of the query do not count as using it
    assert values_left_out("SELECT co_nm AS soft_name FROM company", "sqlite", cat, q, _stored(port)) != []
    assert values_left_out(
        "SELECT COUNT(*) FROM vessel", "sqlite", cat, "How many tankers are there?", _stored(port)
    ) == ["the question names 'TNK' (a value of vessel.ves_typ), the query does not use it"]


def test_value_repair_puts_in_the_stored_value_when_exactly_one_fits(catalog):
    from sqlnb.agent.repairs.empty import value_repair

    stored = {
        ("Pets", "PetType"): ["dog", "cat", "guinea pig"],
        ("Student", "Fname"): ["Johnson", "Jonson", "Bob"],
    }

    def values(table, column):
        return stored[(table.name, column)]

    # case and spacing
    assert value_repair(
        "SELECT count(*) FROM Pets WHERE PetType = 'Guinea  Pig'", "sqlite", catalog, values
    ) == ("SELECT COUNT(*) FROM Pets WHERE PetType = 'guinea pig'", "'Guinea  Pig' → 'guinea pig'")
    # one clear near match, inside IN, through an alias
    fixed = value_repair(
        "SELECT T.PetID FROM Pets AS T WHERE T.PetType IN ('dogg', 'cat')", "sqlite", catalog, values
    )
    assert fixed == ("SELECT T.PetID FROM Pets AS T WHERE T.PetType IN ('dog', 'cat')", "'dogg' → 'dog'")
    # two near matches ('Johnson', 'Jonson' for 'Johnsonn'): nothing is guessed; a value that
    # exists: nothing to do
    assert value_repair("SELECT Age FROM Student WHERE Fname = 'Johnsonn'", "sqlite", catalog, values) is None
    assert value_repair("SELECT Age FROM Student WHERE Fname = 'Bob'", "sqlite", catalog, values) is None
    # no such column in the catalog, or a literal far from every value: nothing
    assert value_repair("SELECT 1 FROM Pets WHERE colour = 'red'", "sqlite", catalog, values) is None
    assert value_repair("SELECT 1 FROM Pets WHERE PetType = 'hamster'", "sqlite", catalog, values) is None


# ---------------------------------------------------------------------------
# names for ids
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def school(tmp_path_factory):
    conn = sqlite_catalog(
        tmp_path_factory,
        "school",
        """
        CREATE TABLE regions (id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE teacher (Teacher_ID INTEGER PRIMARY KEY, Name TEXT, Hometown TEXT,
                              region_id INTEGER REFERENCES regions(id));
        CREATE TABLE course (Course_ID INTEGER PRIMARY KEY, Staring_Date TEXT, Course TEXT);
        CREATE TABLE course_arrange (Course_ID INTEGER REFERENCES course(Course_ID),
                                     Teacher_ID INTEGER REFERENCES teacher(Teacher_ID), Grade INTEGER,
                                     PRIMARY KEY (Course_ID, Teacher_ID, Grade));
        CREATE TABLE staff (id INTEGER PRIMARY KEY, first_name TEXT, last_name TEXT, title TEXT,
                            manager_id INTEGER REFERENCES staff(id));
        CREATE TABLE books (id INTEGER PRIMARY KEY, title TEXT, pages INTEGER);
        INSERT INTO regions VALUES (1, 'North'), (2, 'South');
        INSERT INTO teacher VALUES (1, 'Anne', 'Bolton', 1), (2, 'Gus', 'Ghent', 2), (3, 'Kim', 'Leeds', NULL);
        INSERT INTO course VALUES (10, '2024-01-01', 'Math'), (11, '2024-02-01', 'Art');
        INSERT INTO course_arrange VALUES (10, 1, 5), (11, 1, 6), (10, 2, 5);
    """,
    )
    yield conn
    conn.close()


def test_the_column_that_names_a_row(school):
    cat = school.catalog()
    assert [label_column(cat.find(t)) for t in ("regions", "teacher", "course", "staff", "books")] == [
        "name",
        "Name",
        "Course",
        None,
        "title",
    ]  # staff: first or last name? unclear
    assert label_columns(cat.find("staff")) == ["first_name", "last_name"]
    assert label_columns(cat.find("teacher")) == ["Name"] and label_columns(cat.find("course_arrange")) == []


@pytest.mark.parametrize(
    "question, sql, expected, replaced",
    [
        (
            "Show the names of teachers and the courses they teach.",
            "SELECT T1.Name, T2.Course_ID FROM teacher AS T1 JOIN course_arrange AS T2 "
            "ON T1.Teacher_ID = T2.Teacher_ID",
            'SELECT T1.Name, "course"."Course" FROM teacher AS T1 JOIN course_arrange AS T2 ON T1.Teacher_ID = '
            'T2.Teacher_ID LEFT JOIN "course" AS "course" ON "course"."Course_ID" = T2.Course_ID',
            "course_arrange.Course_ID → course.Course",
        ),
        # grouped by the id: still grouped by it (names may repeat), the name shown; the
        # unqualified columns are qualified, since the joined table has a Course_ID too
        (
            "How many teachers teach each course?",
            "SELECT Course_ID, count(*) AS teachers FROM course_arrange GROUP BY Course_ID ORDER BY teachers DESC",
            'SELECT "course"."Course", COUNT(*) AS teachers FROM course_arrange LEFT JOIN "course" AS "course" '
            'ON "course"."Course_ID" = course_arrange.Course_ID GROUP BY course_arrange.Course_ID, '
            '"course"."Course" ORDER BY teachers DESC',
            "course_arrange.Course_ID → course.Course",
        ),
        # the table's own key: its name column is right there
        (
            "List the courses.",
            "SELECT Course_ID FROM course",
            'SELECT "Course" FROM course',
            "course.Course_ID → course.Course",
        ),
        # people: a first and a last name
        (
            "Which staff have no manager?",
            "SELECT id FROM staff WHERE manager_id IS NULL",
            'SELECT "first_name", "last_name" FROM staff WHERE manager_id IS NULL',
            "staff.id → staff.first_name, staff.last_name",
        ),
        # a key to another row of the same table: that row's name, not the row's own
        (
            "Give each staff member's first name and the name of their manager.",
            "SELECT first_name, manager_id FROM staff",
            'SELECT staff.first_name, "staff_2"."first_name", "staff_2"."last_name" FROM staff LEFT JOIN "staff" '
            'AS "staff_2" ON "staff_2"."id" = staff.manager_id',
            "staff.manager_id → staff.first_name, staff.last_name",
        ),
        (
            "For each staff member with a manager, give the first name and the name of the manager.",
            "SELECT M.first_name, M.manager_id FROM staff AS M JOIN staff AS B ON M.manager_id = B.id",
            'SELECT M.first_name, "staff_2"."first_name", "staff_2"."last_name" FROM staff AS M JOIN staff AS B '
            'ON M.manager_id = B.id LEFT JOIN "staff" AS "staff_2" ON "staff_2"."id" = M.manager_id',
            "staff.manager_id → staff.first_name, staff.last_name",
        ),
        (
            "How many teachers are there in each region?",
            "SELECT region_id AS region, count(*) FROM teacher GROUP BY region_id",
            'SELECT "regions"."name" AS region, COUNT(*) FROM teacher LEFT JOIN "regions" AS "regions" ON '
            '"regions"."id" = teacher.region_id GROUP BY teacher.region_id, "regions"."name"',
            "teacher.region_id → regions.name",
        ),
    ],
)
def test_names_shown_for_the_ids_the_question_asks_about(school, question, sql, expected, replaced):
    named = label_ids(sql, "sqlite", school.catalog(), question)
    assert named == (expected, replaced)
    plain = school.execute(sql)
    assert school.execute(named[0]).row_count == plain.row_count  # no row lost


@pytest.mark.parametrize(
    "question, sql",
    [
        # the question asks for the ids
        (
            "Show the course ids of each teacher.",
            "SELECT T2.Course_ID FROM teacher AS T1 JOIN course_arrange AS T2 ON T1.Teacher_ID = T2.Teacher_ID",
        ),
        ("What are the IDs of the courses?", "SELECT Course_ID FROM course"),
        # the question does not name what the id identifies
        (
            "Which grades are taught by Anne?",
            "SELECT T2.Grade, T2.Course_ID FROM teacher AS T1 JOIN course_arrange AS T2 "
            "ON T1.Teacher_ID = T2.Teacher_ID WHERE T1.Name = 'Anne'",
        ),
        # the row is already named by a text column the query shows
        (
            "Which staff have no manager?",
            "SELECT id, first_name, last_name FROM staff WHERE manager_id IS NULL",
        ),
        ("Show the courses with their names.", "SELECT Course_ID, Course FROM course"),
        (
            "For each staff member, give the first name and the manager.",
            "SELECT M.first_name, M.manager_id, B.first_name FROM staff AS M JOIN staff AS B ON M.manager_id = B.id",
        ),
        # no name column at all
        ("List the books by pages.", "SELECT pages FROM books"),
        # not a plain column, or not a plain SELECT
        ("How many courses are there?", "SELECT count(Course_ID) FROM course"),
        ("List the courses.", "SELECT Course_ID FROM course UNION SELECT Course_ID FROM course_arrange"),
        ("List the courses.", "this is not SQL"),
    ],
)
def test_ids_stay_unless_the_question_asks_for_the_names(school, question, sql):
    assert label_ids(sql, "sqlite", school.catalog(), question) is None


# ---------------------------------------------------------------------------
# joins along the foreign keys
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    conn = sqlite_catalog(
        tmp_path_factory,
        "shop",
        """
        CREATE TABLE regions (id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE stores (id INTEGER PRIMARY KEY, name TEXT, region_id INTEGER REFERENCES regions(id));
        CREATE TABLE products (id INTEGER PRIMARY KEY, title TEXT, price REAL);
        CREATE TABLE sales (id INTEGER PRIMARY KEY, store_id INTEGER REFERENCES stores(id),
                            product_id INTEGER REFERENCES products(id), qty INTEGER);
        CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);
        CREATE TABLE shipments (id INTEGER PRIMARY KEY, ordered_on DATE, shipped_at TIMESTAMP, days INTEGER);
        INSERT INTO regions VALUES (1, 'North'), (2, 'South');
        INSERT INTO stores VALUES (10, 'Oslo', 1), (11, 'Bergen', 1), (12, 'Rome', 2);
        INSERT INTO products VALUES (100, 'Tea', 3.5), (101, 'Jam', 5.0);
        INSERT INTO sales VALUES (1, 10, 100, 2), (2, 12, 101, 1), (3, 12, 100, 4);
    """,
    )
    yield conn
    conn.close()


def rows(conn, sql):
    return sorted(tuple(r) for r in conn.execute(sql).rows)


@pytest.mark.parametrize(
    "sql, expected, changed",
    [
        # the one key between the two tables, whichever way the condition is written
        (
            "SELECT r.name, COUNT(*) FROM regions AS r JOIN stores AS s ON r.id = s.id GROUP BY r.name",
            [("North", 2), ("South", 1)],
            "r.id = s.id → regions.id = stores.region_id",
        ),
        (
            "SELECT r.name, COUNT(*) FROM stores AS s JOIN regions AS r ON s.id = r.id GROUP BY r.name",
            [("North", 2), ("South", 1)],
            "s.id = r.id → stores.region_id = regions.id",
        ),
        # no key between them: the one table that links them is joined in between
        (
            "SELECT s.name, COUNT(*) FROM stores AS s JOIN products AS p ON s.id = p.id GROUP BY s.name",
            [("Oslo", 1), ("Rome", 2)],
            "s.id = p.id → stores.id = sales.store_id, sales.product_id = products.id",
        ),
        # both sides of the condition on the earlier table: nothing linked the joined one
        (
            "SELECT name, qty FROM stores JOIN sales ON stores.id = stores.region_id",
            [("Oslo", 2), ("Rome", 1), ("Rome", 4)],
            "stores.id = stores.region_id → stores.id = sales.store_id",
        ),
    ],
)
def test_a_join_on_columns_no_key_links_follows_the_foreign_keys(shop, sql, expected, changed):
    fixed, what = link_joins(sql, "sqlite", shop.catalog())
    assert what == changed
    assert rows(shop, fixed) == expected
    assert rows(shop, sql) != expected


@pytest.mark.parametrize(
    "sql",
    [
        # joined along the key already, either way round
        "SELECT s.name FROM stores AS s JOIN regions AS r ON s.region_id = r.id",
        "SELECT s.name FROM stores AS s JOIN regions AS r ON r.id = s.region_id",
        # the same column name on both sides: a link the catalog may not declare
        "SELECT s.name FROM stores AS s JOIN regions AS r ON s.name = r.name",
        # a table without keys: nothing says what links it
        "SELECT n.body FROM notes AS n JOIN stores AS s ON n.id = s.id",
        # a condition that is more than one equality, or a filter on the joined table only
        "SELECT s.name FROM stores AS s JOIN regions AS r ON s.id = r.id AND r.name = 'North'",
        "SELECT s.name FROM stores AS s JOIN regions AS r ON r.id = r.id",
        # the linking table is in the query already
        "SELECT s.name FROM stores AS s JOIN sales AS x ON s.id = x.store_id JOIN products AS p ON s.id = p.id",
        # not a query the rewrite reads
        "SELECT 1",
        "SELEC broken",
    ],
)
def test_joins_stay_unless_the_link_is_clear(shop, sql):
    assert link_joins(sql, "sqlite", shop.catalog()) is None


def test_a_join_on_a_column_its_table_lacks_follows_the_foreign_keys_when_allowed(shop):
    # stores has no product_id (the query fails on it): the one table linking the two
    sql = "SELECT p.title FROM stores AS s JOIN products AS p ON s.product_id = p.id WHERE s.name = 'Rome'"
    assert link_joins(sql, "sqlite", shop.catalog()) is None  # a draft that ran is left alone
    fixed, what = link_joins(sql, "sqlite", shop.catalog(), allow_missing=True)
    assert what == "s.product_id = p.id → stores.id = sales.store_id, sales.product_id = products.id"
    assert rows(shop, fixed) == [("Jam",), ("Tea",)]
    # the same name on both sides, neither table having it, and one key between them
    fixed, what = link_joins(
        "SELECT s.name FROM stores AS s JOIN regions AS r ON s.reg_no = r.reg_no WHERE r.name = 'North'",
        "sqlite",
        shop.catalog(),
        allow_missing=True,
    )
    assert what == "s.reg_no = r.reg_no → stores.region_id = regions.id"
    assert rows(shop, fixed) == [("Bergen",), ("Oslo",)]
    # an alias the query does not have, or no link: nothing
    for bad in (
        "SELECT s.name FROM stores AS s JOIN regions AS r ON x.region_id = r.id",
        "SELECT n.body FROM notes AS n JOIN stores AS s ON n.store_id = s.id",
    ):
        assert link_joins(bad, "sqlite", shop.catalog(), allow_missing=True) is None, bad


def test_a_join_in_a_subquery_is_linked_too(shop):
    sql = (
        "SELECT name FROM regions WHERE id IN "
        "(SELECT r.id FROM regions AS r JOIN stores AS s ON r.id = s.id WHERE s.name = 'Rome')"
    )
    fixed, what = link_joins(sql, "sqlite", shop.catalog())
    assert what == "r.id = s.id → regions.id = stores.region_id"
    assert rows(shop, fixed) == [("South",)]


def test_a_column_of_a_table_the_query_does_not_read_joins_that_table(shop):
    cat = shop.catalog()
    # price is a column of products, which sales links to by its one key
    sql = "SELECT AVG(price) FROM sales WHERE qty > 1"
    fixed = suggest_fix("column_not_found", "no such column: price", sql, "sqlite", cat)
    assert fixed == (
        'SELECT AVG(products.price) FROM sales JOIN "products" AS products '
        'ON sales."product_id" = products."id" WHERE sales.qty > 1'
    )
    assert rows(shop, fixed) == [(3.5,)]
    # qualified with a table of the query that lacks it; every such column gets its table
    sql = "SELECT s.name, s.title FROM stores AS s JOIN sales AS x ON s.id = x.store_id WHERE s.price > 4"
    fixed = suggest_fix("column_not_found", "no such column: s.title", sql, "sqlite", cat)
    assert rows(shop, fixed) == [("Rome", "Jam")]
    # a name in a subquery: the subquery's own tables get the join
    sql = "SELECT name FROM stores WHERE id IN (SELECT store_id FROM sales WHERE title = 'Tea')"
    fixed = suggest_fix("column_not_found", "no such column: title", sql, "sqlite", cat)
    assert rows(shop, fixed) == [("Oslo",), ("Rome",)]


@pytest.mark.parametrize(
    "sql, msg, expected",
    [
        # <table>_<column>: the table joined along its key, the column taken from it
        (
            "SELECT name, region_name FROM stores",
            "no such column: region_name",
            [("Bergen", "North"), ("Oslo", "North"), ("Rome", "South")],
        ),
        (
            "SELECT COUNT(*) FROM stores AS s WHERE s.regions_name = 'South'",
            "no such column: s.regions_name",
            [(1,)],
        ),
        # the table read already: the column taken from it
        (
            "SELECT s.name FROM stores AS s JOIN regions AS r ON r.id = s.region_id WHERE region_name = 'North'",
            "no such column: region_name",
            [("Bergen",), ("Oslo",)],
        ),
    ],
)
def test_a_column_named_after_a_table_and_its_column_is_taken_from_that_table(shop, sql, msg, expected):
    fixed = suggest_fix("column_not_found", msg, sql, "sqlite", shop.catalog())
    assert fixed is not None and "region" not in fixed.lower().replace("region_id", "").replace("regions", "")
    assert rows(shop, fixed) == expected


@pytest.mark.parametrize(
    "sql, msg",
    [
        # the owner is linked to no table of the query
        ("SELECT body FROM sales", "no such column: body"),
        # the owner is two links away from the query's tables
        ("SELECT title FROM regions", "no such column: title"),
        # a table and a column of it, but two links away
        ("SELECT product_title FROM regions", "no such column: product_title"),
    ],
)
def test_no_join_for_a_column_unless_one_link_is_clear(shop, sql, msg):
    assert suggest_fix("column_not_found", msg, sql, "sqlite", shop.catalog()) is None


@pytest.mark.parametrize(
    "question, sql, rows, doubt",
    [
        (
            "What were the sales per store in 2024?",
            "SELECT store_id, SUM(amount) FROM sales GROUP BY store_id",
            3,
            "the question names 2024, the query does not use it",
        ),
        # a filter value the question does not name
        (
            "How many stores are in the north?",
            "SELECT COUNT(*) FROM stores JOIN regions ON regions.id = stores.region_id WHERE regions.name = 'South'",
            1,
            "it filters on 'South', which the question does not name",
        ),
        (
            "Which products sold, apart from jam?",
            "SELECT title FROM products WHERE title NOT IN ('Jam', 'Tea') AND title <> 'Coffee'",
            0,
            "it filters on 'Coffee', 'Tea', which the question does not name",
        ),
        # a code the question does not spell out
        (
            "How many stores sell tea?",
            "SELECT COUNT(*) FROM stores WHERE name = 'CFE'",
            1,
            "it filters on 'CFE', which the question does not name",
        ),
        # a number that ends the sentence
        (
            "List the sales per store of 2024.",
            "SELECT store_id, SUM(amount) FROM sales GROUP BY store_id",
            3,
            "the question names 2024, the query does not use it",
        ),
    ],
)
def test_doubts_a_query_raises_about_itself(shop, question, sql, rows, doubt):
    assert answer_doubts(sql, "sqlite", shop.catalog(), question, rows) == [doubt]


@pytest.mark.parametrize(
    "question, sql, rows",
    [
        # the one group asked for
        (
            "Which region has the most stores?",
            "SELECT region_id, COUNT(*) FROM stores GROUP BY region_id ORDER BY 2 DESC LIMIT 1",
            1,
        ),
        # every group kept
        (
            "How many stores are there in each region?",
            "SELECT region_id, COUNT(*) FROM stores GROUP BY region_id",
            2,
        ),
        # numbers, not dates
        ("How many days on average?", "SELECT AVG(days - id) FROM shipments", 1),
        (
            "How many days on average?",
            "SELECT AVG(julianday(shipped_at) - julianday(ordered_on)) FROM shipments",
            1,
        ),
        ("Broken?", "SELEC nothing", None),
        # rows kept in order, a number of rows asked for, any rows asked for, a LIMIT inside
        ("Which store opened last?", "SELECT name FROM stores ORDER BY opened DESC LIMIT 1", 1),
        ("Show 5 stores.", "SELECT name FROM stores LIMIT 5", 5),
        # a number at the end of a sentence is named too
        ("List the stores, show 5.", "SELECT name FROM stores LIMIT 5", 5),
        ("Stores of region 2.", "SELECT name FROM stores WHERE region_id = 2", 2),
        (
            "Which stores are in region 2? Show three.",
            "SELECT name FROM stores WHERE region_id = 2 LIMIT 3",
            3,
        ),
        ("Show me some stores", "SELECT name FROM stores LIMIT 10", 10),
        ("Name one store in region 2.", "SELECT name FROM stores WHERE region_id = 2 LIMIT 1", 1),
        # filter values the question names: in another case, plural, abbreviated, with an
        # underscore for a space; values of short words or digits only are not judged
        (
            "How many stores are in the north region?",
            "SELECT COUNT(*) FROM stores JOIN regions ON regions.id = stores.region_id WHERE regions.name = 'North'",
            1,
        ),
        ("Which stores sold teas?", "SELECT name FROM stores WHERE name LIKE '%Tea%'", 1),
        (
            "How many furniture products in progress?",
            "SELECT COUNT(*) FROM products WHERE title IN ('FURN', 'IN_PROGRESS')",
            1,
        ),
        ("How many stores?", "SELECT COUNT(*) FROM stores WHERE name <> 'NA' AND name <> 'x1'", 1),
        # the numbers named are used: in a date, as a number, as a decimal, as the LIMIT
        (
            "Sales on 2024-03-05 above 12.50, the top 3",
            "SELECT id FROM sales WHERE day = '2024-03-05' AND amount > 12.5 ORDER BY amount DESC LIMIT 3",
            3,
        ),
        (
            "Which stores sold more than 1,000 in 2023?",
            "SELECT store_id FROM sales WHERE day >= '2023-01-01' GROUP BY store_id HAVING SUM(amount) > 1000",
            2,
        ),
        (
            "Which stores are in the region with the fewest?",
            "SELECT name FROM stores WHERE region_id = (SELECT region_id FROM regions LIMIT 1)",
            2,
        ),
    ],
)
def test_no_doubt_about_a_query_that_answers_what_was_asked(shop, question, sql, rows):
    assert answer_doubts(sql, "sqlite", shop.catalog(), question, rows) == []


@pytest.mark.parametrize(
    "question, sql",
    [
        ("How many stores sell coffee?", "SELECT COUNT(*) FROM stores WHERE name = 'CFE'"),
        ("How many tankers?", "SELECT COUNT(*) FROM stores WHERE name IN ('TNK')"),
    ],
)
def test_no_doubt_about_a_code_the_question_spells_out(shop, question, sql):
    rows = 1
    assert answer_doubts(sql, "sqlite", shop.catalog(), question, rows) == []


def _stored(conn):
    return lambda table, column: [
        r[0] for r in conn.execute(f'SELECT DISTINCT "{column}" FROM "{table.name}"').rows
    ]


@pytest.mark.parametrize(
    "question, sql, doubts",
    [
        # a region the question names, left out of the query that reads its table
        (
            "How many stores are in the North region?",
            "SELECT COUNT(*) FROM stores JOIN regions ON regions.id = stores.region_id",
            ["the question names 'North' (a value of regions.name), the query does not use it"],
        ),
        # a plural of the stored value; only the values of the query's tables are looked at
        (
            "Which stores sold teas?",
            "SELECT DISTINCT s.name FROM stores AS s JOIN sales ON sales.store_id = s.id "
            "JOIN products AS p ON p.id = sales.product_id",
            ["the question names 'Tea' (a value of products.title), the query does not use it"],
        ),
        # used, in another case or inside a pattern
        (
            "How many stores are in the North region?",
            "SELECT COUNT(*) FROM stores JOIN regions ON regions.id = stores.region_id WHERE regions.name = 'north'",
            [],
        ),
        (
            "Stores of the north?",
            "SELECT s.name FROM stores AS s JOIN regions AS r ON r.id = s.region_id WHERE r.name LIKE '%north%'",
            [],
        ),
        # named only inside another word ("Romeo"), or not at all
        ("Which store did Romeo visit?", "SELECT name FROM stores", []),
        ("How many stores are there?", "SELECT name FROM stores", []),
    ],
)
def test_a_stored_value_the_question_names_and_the_query_leaves_out_is_a_doubt(shop, question, sql, doubts):
    assert values_left_out(sql, "sqlite", shop.catalog(), question, _stored(shop)) == doubts


def test_values_left_out_says_nothing_it_cannot_look_up(shop):
    def refused(table, column):
        raise RuntimeError("permission denied")

    q, sql = (
        "How many stores are in the North region?",
        "SELECT COUNT(*) FROM stores JOIN regions ON regions.id = stores.region_id",
    )
    assert values_left_out(sql, "sqlite", shop.catalog(), q, refused) == []
    assert values_left_out("SELEC nothing", "sqlite", shop.catalog(), q, _stored(shop)) == []
    assert values_left_out(sql, "sqlite", None, q, _stored(shop)) == []


# ---------------------------------------------------------------------------
# filters the question names, averages over a subset, corrections of names
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def club(tmp_path_factory):
    conn = sqlite_catalog(
        tmp_path_factory,
        "club",
        """
        CREATE TABLE site (site_id INTEGER PRIMARY KEY, site_nm TEXT, city TEXT);
        CREATE TABLE member (mem_id INTEGER PRIMARY KEY, mem_nm TEXT, city TEXT, status TEXT,
                             mentor_id INTEGER REFERENCES member(mem_id),
                             home_site INTEGER REFERENCES site(site_id));
        CREATE TABLE event (evt_id INTEGER PRIMARY KEY, title TEXT, site_id INTEGER REFERENCES site(site_id),
                            kind TEXT, fee REAL);
        CREATE TABLE evt_reg (mem_id INTEGER REFERENCES member(mem_id), evt_id INTEGER REFERENCES event(evt_id),
                              stat TEXT);
        CREATE TABLE composer (composer_id INTEGER PRIMARY KEY, full_name TEXT);
        CREATE TABLE work (work_id INTEGER PRIMARY KEY, title TEXT, form TEXT, minutes INTEGER,
                           composer_id INTEGER REFERENCES composer(composer_id));
        INSERT INTO site VALUES (1, 'Confluence', 'Berlin'), (2, 'Loft', 'Oslo');
        INSERT INTO member VALUES (1, 'Ann', 'Berlin', 'ACT', NULL, 2), (2, 'Ben', 'Berlin', 'ACT', 1, 1),
            (3, 'Cai', 'Oslo', 'LAPS', 1, 1), (4, 'Dee', 'Berlin', 'LAPS', NULL, NULL);
        INSERT INTO event VALUES (1, 'Talk', 1, 'MTG', 10), (2, 'Demo', 2, 'WKSP', 30), (3, 'Chat', 1, 'MTG', 5),
            (4, 'Paws', 2, 'PET', 8);
        INSERT INTO evt_reg VALUES (1, 1, 'CONF'), (3, 2, 'CXL'), (2, 3, 'CONF');
        INSERT INTO composer VALUES (1, 'Clara'), (2, 'Amy');
        INSERT INTO work VALUES (1, 'First', 'SYM', 40, 1), (2, 'Song', 'SNG', 5, 2), (3, 'Second', 'SYM', 20, 2);
    """,
    )
    yield conn
    conn.close()


@pytest.mark.parametrize(
    "question, sql, expected, added",
    [
        # a status the question names as a word that spells the code
        (
            "Which cities have more than one active member?",
            "SELECT city FROM member GROUP BY city HAVING COUNT(*) > 1",
            "SELECT city FROM member WHERE member.\"status\" = 'ACT' GROUP BY city HAVING COUNT(*) > 1",
            "member.status = 'ACT' added",
        ),
        # on the table read, as the query spells its alias
        (
            "What is the title of the meeting with the highest fee?",
            "SELECT e.title FROM event AS e ORDER BY e.fee DESC LIMIT 1",
            "SELECT e.title FROM event AS e WHERE e.\"kind\" = 'MTG' ORDER BY e.fee DESC LIMIT 1",
            "event.kind = 'MTG' added",
        ),
        # each branch of an INTERSECT alike
        (
            "Which members have active registrations in both Berlin and Oslo?",  # 'ACT' is member.status
            "SELECT m.mem_nm FROM member AS m JOIN site AS s ON m.home_site = s.site_id WHERE s.city = 'Berlin' "
            "INTERSECT SELECT m.mem_nm FROM member AS m JOIN site AS s ON m.home_site = s.site_id "
            "WHERE s.city = 'Oslo'",
            "SELECT m.mem_nm FROM member AS m JOIN site AS s ON m.home_site = s.site_id WHERE s.city = 'Berlin' "
            "AND m.\"status\" = 'ACT' INTERSECT SELECT m.mem_nm FROM member AS m JOIN site AS s ON m.home_site = "
            "s.site_id WHERE s.city = 'Oslo' AND m.\"status\" = 'ACT'",
            "member.status = 'ACT' added",
        ),
    ],
)
def test_a_category_the_question_names_and_the_query_leaves_out_is_filtered_on(
    club, question, sql, expected, added
):
    from sqlnb.agent.repairs.values import named_value_filter

    assert named_value_filter(sql, "sqlite", club.catalog(), question, _stored(club)) == (expected, added)


@pytest.mark.parametrize(
    "question, sql",
    [
        ("How many members are there?", "SELECT COUNT(*) FROM member"),  # no value named
        ("How many members are not active?", "SELECT COUNT(*) FROM member"),  # it may be the one left out
        ("Which members have never been active?", "SELECT mem_nm FROM member"),
        ("How many active members are there?", "SELECT COUNT(*) FROM member WHERE status = 'LAPS'"),  # used
        (
            "Which active members live in Berlin?",
            "SELECT mem_nm FROM member WHERE city = 'Berlin' AND status = 'ACT'",
        ),
        # the word names a value the query uses already ("Confluence" for the site), not 'CONF'
        (
            "Which members registered for events at the Confluence site?",
            "SELECT m.mem_nm FROM member AS m JOIN evt_reg AS r ON r.mem_id = m.mem_id JOIN event AS e "
            "ON e.evt_id = r.evt_id JOIN site AS s ON s.site_id = e.site_id WHERE s.site_nm = 'Confluence'",
        ),
        # a code whose letters a word holds in order with a vowel among them ('PET' in "payments")
        ("Which event took the largest payments?", "SELECT title FROM event ORDER BY fee DESC LIMIT 1"),
        # two values of the column named: which is meant is not clear
        ("How many meetings and workshops are there?", "SELECT COUNT(*) FROM event"),
        # a self-join: which of its rows the status is of is not clear
        (
            "Which active members have a mentor?",
            "SELECT a.mem_nm FROM member AS a JOIN member AS b ON a.mentor_id = b.mem_id",
        ),
        # the table read by the query and by its subquery: where the filter goes is not clear
        (
            "Which meetings cost more than the average fee?",
            "SELECT title FROM event WHERE fee > (SELECT AVG(fee) FROM event)",
        ),
    ],
)
def test_no_category_filter_unless_one_value_is_clearly_named_and_left_out(club, question, sql):
    from sqlnb.agent.repairs.values import named_value_filter

    assert named_value_filter(sql, "sqlite", club.catalog(), question, _stored(club)) is None


def test_a_category_filter_needs_a_column_of_few_values_and_stored_values_to_read(club):
    from sqlnb.agent.repairs.values import named_value_filter

    q, sql = "Which cities have more than one active member?", "SELECT city FROM member GROUP BY city"

    def refused(table, column):
        raise RuntimeError("permission denied")

    assert named_value_filter(sql, "sqlite", club.catalog(), q, refused) is None
    assert named_value_filter(sql, "sqlite", club.catalog(), q, _stored(club), max_values=1) is None
    assert named_value_filter(sql, "sqlite", None, q, _stored(club)) is None
    assert named_value_filter("SELEC nothing", "sqlite", club.catalog(), q, _stored(club)) is None


def test_rows_compared_with_the_average_of_a_subset_are_not_limited_to_it(club):
    from sqlnb.agent.repairs.averages import average_subset_filter

    cat = club.catalog()
    both = (
        "SELECT title FROM work WHERE form = 'SYM' AND minutes > "
        "(SELECT AVG(minutes) FROM work WHERE form = 'SYM')"
    )
    q = "Which works run longer than the average length of symphonies? Give their titles."
    assert average_subset_filter(both, "sqlite", cat, q) == (
        "SELECT title FROM work WHERE minutes > (SELECT AVG(minutes) FROM work WHERE form = 'SYM')",
        "form = 'SYM' left to the average",
    )
    # a value as a whole word, and another filter kept
    kept = (
        "SELECT e.title FROM event AS e WHERE e.kind = 'MTG' AND e.site_id = 1 AND e.fee < "
        "(SELECT AVG(fee) FROM event WHERE kind = 'MTG')"
    )
    assert (
        average_subset_filter(
            kept, "sqlite", cat, "Which events at site 1 cost less than the mean fee of meetings?"
        )[0]
        == "SELECT e.title FROM event AS e WHERE e.site_id = 1 "
        "AND e.fee < (SELECT AVG(fee) FROM event WHERE kind = 'MTG')"
    )
    for question, sql in (
        # the question limits the compared rows too
        ("Which symphonies are longer than the average length of symphonies?", both),
        # no average asked about, or the subset named by no word of the question
        ("Which symphonies are long?", both),
        ("What are the titles of the works longer than the average?", both),
        # the subquery filters on something else
        (
            "Which works are longer than the average length of songs?",
            "SELECT title FROM work WHERE form = 'SYM' AND minutes > (SELECT AVG(minutes) FROM work "
            "WHERE form = 'SNG')",
        ),
        # a join: what the filter was for is not clear
        (
            "Which works are longer than the average length of symphonies?",
            "SELECT w.title FROM work AS w JOIN composer AS c ON c.composer_id = w.composer_id WHERE "
            "w.form = 'SYM' AND w.minutes > (SELECT AVG(minutes) FROM work WHERE form = 'SYM')",
        ),
    ):
        assert average_subset_filter(sql, "sqlite", cat, question) is None, question


def test_a_column_taken_from_the_wrong_table_of_its_own_select(club):
    # T2.form: composer has none; work is read by T1 and by the subquery, T1 is the one here
    sql = (
        "SELECT T1.title FROM work AS T1 JOIN composer AS T2 ON T1.composer_id = T2.composer_id "
        "WHERE T2.form = 'SYM' AND T1.minutes > (SELECT AVG(minutes) FROM work WHERE form = 'SYM')"
    )
    fixed = suggest_fix("column_not_found", "no such column: T2.form", sql, "sqlite", club.catalog())
    assert "T1.form = 'SYM'" in fixed and "T2.form" not in fixed
    assert rows(club, fixed) == [("First",)]


def test_a_join_is_linked_through_a_table_the_query_does_not_read_yet(club):
    # member links to site by its home site too, but member is read already: the event
    # registered for is the one link left
    sql = (
        "SELECT T1.mem_nm FROM member AS T1 JOIN evt_reg AS T2 ON T1.mem_id = T2.mem_id "
        "JOIN site AS T3 ON T2.site_id = T3.site_id WHERE T3.city = 'Oslo'"
    )
    fixed, changed = link_joins(sql, "sqlite", club.catalog(), allow_missing=True)
    assert changed == "T2.site_id = T3.site_id → evt_reg.evt_id = event.evt_id, event.site_id = site.site_id"
    assert rows(club, fixed) == [("Cai",)]


def test_the_missing_column_of_a_duckdb_error_is_read_with_its_table():
    from sqlnb.agent.hints import MISSING_COLUMN, missing_name

    assert (
        missing_name('Binder Error: Table "c" does not have a column named "nam"', MISSING_COLUMN) == "c.nam"
    )
    assert missing_name("no such column: T2.site_id", MISSING_COLUMN) == "T2.site_id"


def test_a_code_read_strictly_is_the_word_with_vowels_dropped_or_its_start():
    from sqlnb.agent.lexicon import abbreviates

    assert abbreviates("PET", "payments") and not abbreviates("PET", "payments", strict=True)
    for code, word in (("MTG", "meeting"), ("TNK", "tankers"), ("ACT", "active"), ("SEAS", "season")):
        assert abbreviates(code, word, strict=True), (code, word)


# ---------------------------------------------------------------------------
# the lexicon: one stemmer, one stop list
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "a, b",
    [
        ("course", "courses"),
        ("category", "categories"),
        ("class", "classes"),
        ("box", "boxes"),
        ("Course_ID", "course id"),
        ("courseId", "course_id"),
        ("match", "matches"),
    ],
)
def test_one_stemmer_reads_a_singular_and_its_plural_alike(a, b):
    from sqlnb.agent.lexicon import roots, words

    assert words(a) == words(b) and roots(a) == roots(b)


def test_the_stop_list_leaves_out_stop_words_and_their_plurals_not_words_of_the_same_stem():
    from sqlnb.agent.lexicon import content_words, sql_content_words

    assert content_words("What does this list show? Give the numbers and totals") == []
    # "theme" shares its stem with the stop word "them", but is not one
    assert content_words("Show them the themes of each course") == ["them", "cours"]
    assert content_words("customerName") == ["customer"]  # "name" is a stop word
    # SQL's own words (and their plurals: "orders" as "order") and numbers left out
    assert sql_content_words("SELECT count(*) FROM stores WHERE region IS NOT NULL AND id > 10") == [
        "stor",
        "region",
        "id",
    ]


def test_a_mixed_case_column_folded_by_the_engine_is_quoted(tmp_path_factory):
    conn = sqlite_catalog(
        tmp_path_factory,
        "folded",
        'CREATE TABLE order_items (id INTEGER PRIMARY KEY, "DiscountPct" INTEGER);',
    )
    try:
        sql = "SELECT COUNT(*) FROM order_items WHERE DiscountPct IS NULL"
        fixed = suggest_fix(
            "column_not_found", 'column "discountpct" does not exist', sql, "postgres", conn.catalog()
        )
        assert fixed == 'SELECT COUNT(*) FROM order_items WHERE "DiscountPct" IS NULL'
    finally:
        conn.close()
