"""The Spider execution-match scorer (benchmarks/spider_eval.py) on tiny hand-made databases."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import spider_eval as se
from spider_eval import execution_match


@pytest.fixture
def db(tmp_path) -> Path:
    path = tmp_path / "shop.sqlite"
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE singer (id INTEGER PRIMARY KEY, name TEXT, country TEXT, age INTEGER,
                             rating REAL);
        INSERT INTO singer VALUES
          (1, 'Ann', 'France', 30, 4.5),
          (2, 'Bob', 'Spain', 25, 3.0),
          (3, 'Cid', 'France', 41, 2.25),
          (4, 'Dee', 'Peru', 25, 3.0);
        CREATE TABLE concert (id INTEGER PRIMARY KEY, singer_id INTEGER, year INTEGER);
        INSERT INTO concert VALUES (1, 1, 2014), (2, 1, 2015), (3, 2, 2015), (4, 3, 2014);
    """)
    con.commit()
    con.close()
    return path


def test_same_query_matches(db):
    assert execution_match(db, "SELECT name FROM singer", "SELECT name FROM singer")


def test_order_ignored_without_order_by(db):
    assert execution_match(db, "SELECT name FROM singer", "SELECT name FROM singer ORDER BY name DESC")


def test_order_matters_with_order_by(db):
    gold = "SELECT name FROM singer ORDER BY age DESC, name"
    assert execution_match(db, gold, "SELECT name FROM singer ORDER BY age DESC, name")
    assert not execution_match(db, gold, "SELECT name FROM singer ORDER BY age ASC, name")
    assert not execution_match(db, gold, "SELECT name FROM singer")  # insertion order differs


def test_order_by_in_a_subquery_only_is_not_top_level(db):
    gold = "SELECT name FROM singer WHERE age = (SELECT age FROM singer ORDER BY age LIMIT 1)"
    assert se.has_top_level_order_by("SELECT a FROM t UNION SELECT b FROM u ORDER BY a")
    assert not se.has_top_level_order_by(gold)
    assert execution_match(db, gold, "SELECT name FROM singer WHERE age = 25 ORDER BY name DESC")


def test_column_permutation(db):
    gold = "SELECT name, country FROM singer"
    assert execution_match(db, gold, "SELECT country, name FROM singer")
    # more columns than 3, with repeated values across columns
    gold4 = "SELECT id, name, age, country, rating FROM singer ORDER BY id"
    assert execution_match(db, gold4, "SELECT rating, country, age, name, id FROM singer ORDER BY id")
    # permuted columns must still pair the same values in each row
    assert not execution_match(
        db,
        "SELECT name, age FROM singer",
        "SELECT a.name, b.age FROM singer a JOIN singer b ON a.id = (b.id % 4) + 1",
    )


def test_wrong_columns_or_rows(db):
    assert not execution_match(db, "SELECT name FROM singer", "SELECT name, age FROM singer")
    assert not execution_match(db, "SELECT name FROM singer", "SELECT country FROM singer")
    assert not execution_match(db, "SELECT name FROM singer WHERE age > 26", "SELECT name FROM singer")


def test_duplicates_matter(db):
    gold = "SELECT country FROM singer"  # France twice
    assert not execution_match(db, gold, "SELECT DISTINCT country FROM singer")
    assert not execution_match(db, "SELECT DISTINCT country FROM singer", gold)
    # multisets: same set of rows, different multiplicities
    assert not execution_match(
        db,
        "SELECT country FROM singer WHERE id IN (1, 2, 3)",  # F, S, F
        "SELECT country FROM singer WHERE id IN (1, 2) UNION ALL SELECT 'Spain'",
    )  # F, S, S


def test_distinct_dropped_like_the_official_default(db):
    gold = "SELECT country FROM singer"
    assert execution_match(db, gold, "SELECT DISTINCT country FROM singer", keep_distinct=False)
    assert (
        se.remove_distinct("SELECT count(DISTINCT name) FROM t WHERE x = 'DISTINCT'")
        == "SELECT count( name) FROM t WHERE x = 'DISTINCT'"
    )


def test_failing_prediction_is_wrong(db):
    assert not execution_match(db, "SELECT name FROM singer", "SELECT nme FROM singer")
    assert not execution_match(db, "SELECT name FROM singer", "not sql at all")
    assert not execution_match(db, "SELECT name FROM singer", None)
    assert not execution_match(db, "SELECT name FROM singer", "")
    m = se.evaluate(db, "SELECT name FROM singer", "SELECT nme FROM singer")
    assert m.error and "nme" in m.error


def test_prediction_cannot_write(db):
    assert not execution_match(db, "SELECT count(*) FROM singer", "DELETE FROM singer")
    assert execution_match(db, "SELECT count(*) FROM singer", "SELECT 4")


def test_gold_must_run(db):
    with pytest.raises(AssertionError):
        execution_match(db, "SELECT nope FROM singer", "SELECT name FROM singer")


def test_numbers_compare_numerically(db):
    assert execution_match(db, "SELECT count(*) FROM singer", "SELECT 4.0")
    assert execution_match(db, "SELECT 1", "SELECT 1.0")
    assert execution_match(db, "SELECT avg(age) FROM singer", "SELECT sum(age) * 1.0 / count(*) FROM singer")
    assert execution_match(db, "SELECT 0.3", "SELECT 0.1 + 0.2")  # float tolerance
    assert execution_match(db, "SELECT 1.0 / 3", "SELECT 0.3333333")
    assert not execution_match(db, "SELECT 1.0 / 3", "SELECT 0.3334")
    assert not execution_match(db, "SELECT 1", "SELECT '1'")  # a string is not a number
    assert execution_match(db, "SELECT 123456789", "SELECT 123456789.0")
    # a sum rounded to the cent that came out whole equals the same sum unrounded
    assert execution_match(db, "SELECT round(1510517.0005, 2)", "SELECT 1510517.0005")
    assert execution_match(db, "SELECT 1510517", "SELECT 1510517.0005")
    assert not execution_match(db, "SELECT 1510517", "SELECT 1510577")
    assert not execution_match(db, "SELECT 151051", "SELECT 151052")  # up to 6 digits exact


def test_empty_results(db):
    assert execution_match(
        db, "SELECT name FROM singer WHERE age > 100", "SELECT name, age FROM singer WHERE age > 200"
    )
    assert not execution_match(db, "SELECT name FROM singer WHERE age > 100", "SELECT name FROM singer")
    assert not execution_match(db, "SELECT name FROM singer", "SELECT name FROM singer WHERE 0")


def test_spaced_comparison_operators_are_closed_up(db):
    assert execution_match(
        db, "SELECT name FROM singer WHERE age > = 30", "SELECT name FROM singer WHERE age >= 30"
    )


def test_slow_prediction_times_out(db):
    slow = (
        "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c) SELECT count(*) FROM c"  # never ends
    )
    m = se.evaluate(db, "SELECT count(*) FROM singer", slow, timeout=0.3)
    assert not m.correct and m.error.startswith("timeout")


def test_runaway_prediction_stops_past_the_gold_row_count(db):
    huge = "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c) SELECT i FROM c"  # endless rows
    m = se.evaluate(db, "SELECT name FROM singer", huge, timeout=5)
    assert not m.correct and m.pred_rows > 4 and m.error is None and "more than 4" in m.reason


def test_scorer_reuses_connections_and_gold_results(db):
    sc = se.Scorer()
    try:
        assert sc.evaluate(db, "SELECT name FROM singer", "SELECT name FROM singer").correct
        assert not sc.evaluate(db, "SELECT name FROM singer", "SELECT age FROM singer").correct
        assert len(sc._conns) == 1 and len(sc._gold) == 1
    finally:
        sc.close()


# --------------------------------------------------------------------------- the in-repo subset
# tests/data/spider-dev: the Spider dev subset the tests and the accuracy benchmark use,
# shipped with the repository (CC BY-SA 4.0, attribution in its README.md and LICENSE)
SPIDER_DIR = Path(__file__).resolve().parent / "data" / "spider-dev"
_SPIDER_DBS = ("car_1", "concert_singer", "course_teach", "employee_hire_evaluation", "pets_1")


def test_spider_subset_ships_with_its_licence():
    import json

    questions = json.loads((SPIDER_DIR / "questions.json").read_text(encoding="utf-8"))
    assert len(questions) == 247
    assert {q["db_id"] for q in questions} == set(_SPIDER_DBS)
    readme = (SPIDER_DIR / "README.md").read_text(encoding="utf-8")
    assert "CC BY-SA 4.0" in readme and "Yu et al." in readme
    assert "Attribution-ShareAlike 4.0" in (SPIDER_DIR / "LICENSE").read_text(encoding="utf-8")
    total = sum(f.stat().st_size for f in SPIDER_DIR.rglob("*") if f.is_file())
    assert total < 2_000_000, total  # only what the tests and benchmarks need


@pytest.mark.parametrize("db_id", _SPIDER_DBS)
def test_spider_gold_queries_run_on_the_in_repo_databases(db_id):
    import json

    questions = [
        q
        for q in json.loads((SPIDER_DIR / "questions.json").read_text(encoding="utf-8"))
        if q["db_id"] == db_id
    ]
    db_file = SPIDER_DIR / "database" / db_id / f"{db_id}.sqlite"
    sc = se.Scorer()
    try:
        for q in questions:  # gold against itself: the gold runs (else AssertionError)
            assert sc.evaluate(db_file, q["query"], q["query"]).correct, q["query"]
    finally:
        sc.close()


def test_accuracy_benchmark_defaults_to_the_in_repo_subset():
    import accuracy  # benchmarks/accuracy.py

    assert Path(accuracy.DEFAULT_SPIDER_DIR).resolve() == SPIDER_DIR
