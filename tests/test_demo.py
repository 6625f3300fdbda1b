"""The sample database of ``sqlnb demo``, its SQLite copy, the demo notebook and the
gold SQL of the sample question set (benchmarks/sample/questions.json)."""

from __future__ import annotations

import datetime as dt
import json
import math
import sqlite3
from pathlib import Path

import duckdb
import pytest

from sqlnb import demo
from sqlnb.demo.databases import sqlite_value

REPO = Path(__file__).resolve().parents[1]
QUESTIONS = json.loads((REPO / "benchmarks" / "sample" / "questions.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Path:
    return demo.create_sample_database(tmp_path_factory.mktemp("demo") / "sample.duckdb")


@pytest.fixture(scope="module")
def engines(sample):
    d = duckdb.connect(str(sample), read_only=True)
    s = sqlite3.connect(f"{demo.sqlite_path_for(sample).as_uri()}?mode=ro", uri=True)
    yield d, s
    d.close()
    s.close()


@pytest.fixture(scope="module")
def pg_sample():
    """The sample database's PostgreSQL copy (:func:`demo.write_postgres`) in a database of
    its own on the local server; its URL."""
    import os
    import uuid

    import psycopg

    db = f"sqlnb_sample_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    admin = {"host": "127.0.0.1", "port": 5432, "user": "postgres", "dbname": "postgres", "autocommit": True}
    with psycopg.connect(**admin) as con:
        con.execute(f'CREATE DATABASE "{db}"')
    url = f"postgresql://postgres@127.0.0.1:5432/{db}"
    try:
        demo.write_postgres(url)
        yield url
    finally:
        with psycopg.connect(**admin) as con:
            con.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')


@pytest.fixture(scope="module")
def pg(pg_sample):
    import psycopg

    with psycopg.connect(pg_sample, autocommit=True) as con:
        con.execute("SET default_transaction_read_only = on")
        yield con


def one(con, sql):
    return con.execute(sql).fetchall()[0][0]


# ---------------------------------------------------------------------------
# the database
# ---------------------------------------------------------------------------


def test_build_is_deterministic(sample, tmp_path):
    again = demo.create_sample_database(tmp_path / "again.duckdb")
    # SQLite: the same bytes; DuckDB stamps each file with its own identifiers, so the
    # same data is checked through a digest of every row of every table
    assert demo.sqlite_path_for(again).read_bytes() == demo.sqlite_path_for(sample).read_bytes()
    digest = demo.content_digest(sample)
    assert demo.content_digest(again) == digest
    assert demo.content_digest(demo.sqlite_path_for(sample)) == digest  # the copy holds the same rows
    other = demo.create_sample_database(tmp_path / "other.duckdb", sqlite=False, seed=7)
    assert not demo.sqlite_path_for(other).exists()
    assert demo.content_digest(other) != digest  # the digest sees the data


ROW_RANGES = {
    "regions": (5, 10),
    "employees": (40, 100),
    "customers": (4000, 10000),
    "categories": (10, 30),
    "suppliers": (20, 80),
    "products": (300, 1000),
    "orders": (40000, 80000),
    "order_items": (100000, 250000),
    "payments": (40000, 80000),
    "returns": (2000, 10000),
}


def test_row_counts_in_range(engines):
    d, s = engines
    assert set(demo.table_names()) == set(ROW_RANGES)
    total = 0
    for table, (lo, hi) in ROW_RANGES.items():
        n = one(d, f"SELECT count(*) FROM {table}")
        assert lo <= n <= hi, (table, n)
        assert one(s, f"SELECT count(*) FROM {table}") == n
        total += n
    assert 200_000 <= total <= 500_000
    # three years of orders, each year busier than the one before
    per_year = d.execute("SELECT year(ordered_at), count(*) FROM orders GROUP BY 1 ORDER BY 1").fetchall()
    assert [y for y, _ in per_year] == [2023, 2024, 2025]
    assert per_year[0][1] < per_year[1][1] < per_year[2][1]
    assert one(d, "SELECT min(ordered_at) FROM orders") >= dt.datetime(2023, 1, 1)
    assert one(d, "SELECT max(ordered_at) FROM orders") <= dt.datetime(2025, 12, 31, 23, 59, 59)
    # order ids follow time, like a real shop's
    assert (
        one(
            d,
            "SELECT count(*) FROM (SELECT ordered_at < lag(ordered_at) OVER (ORDER BY id) AS back "
            "FROM orders) WHERE back",
        )
        == 0
    )


def test_names_look_real(engines):
    d, _ = engines
    names = [
        r[0] for r in d.execute("SELECT name FROM customers WHERE segment = 'consumer' LIMIT 50").fetchall()
    ]
    assert all(len(n.split()) == 2 and n.split()[0] in demo.FIRST_NAMES for n in names)
    assert one(d, "SELECT count(DISTINCT name) FROM products") == one(d, "SELECT count(*) FROM products")
    assert one(d, "SELECT count(DISTINCT city) FROM customers") > 30


@pytest.mark.parametrize(
    "table, column",
    [
        ("customers", "email"),
        ("employees", "manager_id"),
        ("employees", "region_id"),
        ("categories", "parent_id"),
        ("suppliers", "contact_email"),
        ("orders", "employee_id"),
        ("orders", "shipped_at"),
        ("order_items", '"DiscountPct"'),
        ("returns", "reason"),
    ],
)
def test_nulls_where_the_comments_say(engines, table, column):
    for con in engines:
        nulls = one(con, f"SELECT count(*) FROM {table} WHERE {column} IS NULL")
        assert 0 < nulls < one(con, f"SELECT count(*) FROM {table}"), (table, column)


def test_features_mixed_case_column_view_and_comments(engines):
    d, s = engines
    cols = [
        r[0]
        for r in d.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_name = 'order_items' ORDER BY ordinal_position"
        ).fetchall()
    ]
    assert "DiscountPct" in cols  # mixed case, kept by quoting it in the DDL
    assert [r[1] for r in s.execute("PRAGMA table_info(order_items)")] == cols
    for con in engines:
        assert one(con, 'SELECT count(*) FROM order_items WHERE "DiscountPct" BETWEEN 0 AND 25') > 0
        assert one(con, "SELECT count(*) FROM order_totals") == one(con, "SELECT count(*) FROM orders")
    assert one(d, "SELECT count(*) FROM duckdb_views() WHERE view_name = 'order_totals'") == 1
    assert one(s, "SELECT count(*) FROM sqlite_master WHERE type = 'view' AND name = 'order_totals'") == 1
    # comments on every table and the view (DuckDB; SQLite has none)
    comments = dict(d.execute("SELECT table_name, comment FROM duckdb_tables()").fetchall())
    assert set(comments) == set(demo.table_names()) and all(comments.values())
    assert one(d, "SELECT comment FROM duckdb_views() WHERE view_name = 'order_totals'")
    col_comment = one(
        d,
        "SELECT comment FROM duckdb_columns() WHERE table_name = 'order_items' "
        "AND column_name = 'DiscountPct'",
    )
    assert "percent" in col_comment and "NULL" in col_comment
    assert "shipped" in one(
        d, "SELECT comment FROM duckdb_columns() WHERE table_name = 'orders' AND column_name = 'status'"
    )


def test_sqlite_schema_matches_duckdb(engines):
    d, s = engines
    for table in demo.table_names():
        dcols = d.execute(
            "SELECT column_name, is_nullable FROM information_schema.columns "
            "WHERE table_name = ? ORDER BY ordinal_position",
            [table],
        ).fetchall()
        info = s.execute(f"PRAGMA table_info({table})").fetchall()
        assert [c[0] for c in dcols] == [c[1] for c in info], table
        # NOT NULL alike (SQLite reports a primary key column's NOT NULL only when declared)
        assert [c[1] == "NO" for c in dcols] == [bool(c[3]) or bool(c[5]) for c in info], table
        dfks = {
            (r[0], r[1])
            for r in d.execute(
                "SELECT kcu.column_name, ccu.table_name FROM information_schema.referential_constraints rc "
                "JOIN information_schema.key_column_usage kcu ON kcu.constraint_name = rc.constraint_name "
                "JOIN information_schema.key_column_usage ccu ON ccu.constraint_name = rc.unique_constraint_name "
                "WHERE kcu.table_name = ?",
                [table],
            ).fetchall()
        }
        sfks = {(r[3], r[2]) for r in s.execute(f"PRAGMA foreign_key_list({table})")}
        assert dfks == sfks, table
    vcols = [
        r[0]
        for r in d.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_name = 'order_totals' ORDER BY ordinal_position"
        ).fetchall()
    ]
    assert vcols == [r[1] for r in s.execute("PRAGMA table_info(order_totals)")]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT count(*), count(DISTINCT customer_id), sum(CASE WHEN status = 'shipped' THEN 1 ELSE 0 END) FROM orders",
        "SELECT round(sum(amount), 2), round(avg(amount), 2), min(paid_at), max(paid_at) FROM payments",
        'SELECT sum(quantity), round(avg("DiscountPct"), 4), count("DiscountPct") FROM order_items',
        "SELECT segment, count(*), min(signed_up) FROM customers GROUP BY segment ORDER BY segment",
        "SELECT status, count(*), round(sum(total), 2) FROM order_totals GROUP BY status ORDER BY status",
    ],
)
def test_sqlite_copy_matches_duckdb_on_aggregates(engines, sql):
    d, s = engines
    assert_same(d.execute(sql).fetchall(), s.execute(sql).fetchall(), ordered=True)


# ---------------------------------------------------------------------------
# the question set
# ---------------------------------------------------------------------------


def assert_same(a, b, *, ordered: bool):
    """Rows of DuckDB and SQLite alike: dates as ISO text, decimals as floats; sums of
    money may differ by cents (SQLite adds floats, DuckDB decimals, and a view rounds
    each order's total), so floats compare to 1e-8 relative."""
    a = [tuple(sqlite_value(v) for v in r) for r in a]
    b = [tuple(sqlite_value(v) for v in r) for r in b]
    if not ordered:
        key = lambda r: tuple((0, round(v, 1)) if isinstance(v, (int, float)) else (1, str(v)) for v in r)  # noqa: E731
        a, b = sorted(a, key=key), sorted(b, key=key)
    assert len(a) == len(b), (a[:5], b[:5])
    for ra, rb in zip(a, b, strict=True):
        assert len(ra) == len(rb)
        for va, vb in zip(ra, rb, strict=True):
            if isinstance(va, float) or isinstance(vb, float):
                assert math.isclose(va, vb, rel_tol=1e-8, abs_tol=0.011), (ra, rb)
            else:
                assert va == vb, (ra, rb)


def test_question_set_shape():
    assert len(QUESTIONS) == 40
    assert [q["id"] for q in QUESTIONS] == list(range(1, 41))
    assert len({q["question"] for q in QUESTIONS}) == 40
    ambiguous = [q for q in QUESTIONS if q.get("ambiguous")]
    assert len(ambiguous) == 5
    assert all(q["query"] is None and q["why"] for q in ambiguous)
    tags = {t for q in QUESTIONS for t in q["tags"]}
    assert {"joins", "aggregate", "window", "dates", "nulls", "quoted column", "view", "ambiguous"} <= tags
    assert all(q["db_id"] == "sample" for q in QUESTIONS)


@pytest.mark.parametrize("q", [q for q in QUESTIONS if not q.get("ambiguous")], ids=lambda q: f"q{q['id']}")
def test_gold_sql_runs_on_duckdb_sqlite_and_postgresql_and_agrees(engines, pg, q):
    import sqlglot
    from sqlglot import exp

    d, s = engines
    rows_d = d.execute(q["query"]).fetchall()
    rows_s = s.execute(q.get("query_sqlite") or q["query"]).fetchall()
    rows_p = pg.execute(q.get("query_postgres") or q["query"]).fetchall()
    assert rows_d, "the gold query returns no rows"
    assert all(any(v is not None for v in row) for row in rows_d), "a row of only NULLs"
    ordered = sqlglot.parse_one(q["query"], read="duckdb").args.get("order") is not None
    assert_same(rows_d, rows_s, ordered=ordered)
    assert_same(rows_d, rows_p, ordered=ordered)
    if "quoted column" in q["tags"]:
        assert '"DiscountPct"' in q["query"]
    if "window" in q["tags"]:
        assert sqlglot.parse_one(q["query"], read="duckdb").find(exp.Window) is not None


# ---------------------------------------------------------------------------
# the notebook
# ---------------------------------------------------------------------------


def test_prepare_demo_writes_no_canned_replies_and_keeps_an_edited_notebook(tmp_path):
    nb_path = demo.prepare_demo(tmp_path / "d")
    assert sorted(p.name for p in nb_path.parent.iterdir()) == [
        "sample.duckdb",
        "sample.sqlite",
        "sqlnb-demo.ipynb",
    ]
    nb = json.loads(nb_path.read_text())
    sources = [c["source"] for c in nb["cells"]]
    text = "\n".join(sources)
    assert "scripted" not in text and "demo-replies" not in text
    asks = [s for s in sources if s.startswith("%%ask")]
    assert len(asks) == 3  # a question, a follow-up, an ambiguous one
    assert any(s.startswith("%%sql -o monthly") for s in sources) and "plt.show()" in text
    assert "%sqlnb schema" in sources and "View › Ask sqlnb" in text
    nb_path.write_text(nb_path.read_text().replace("Which five", "Which six"))
    again = demo.prepare_demo(tmp_path / "d")
    assert "Which six" in again.read_text()


def test_demo_notebook_runs_without_any_model(tmp_path, monkeypatch):
    """No SQLNB_MODEL, no API key, no offline model: the ask cells say how to set one up
    and every cell still runs (Run All goes through)."""
    for var in ("ANTHROPIC_API_KEY", "SQLNB_MODEL"):
        monkeypatch.delenv(var, raising=False)  # the kernel inherits the environment
    monkeypatch.setenv("SQLNB_MODEL_DIR", str(tmp_path / "no-models"))
    import nbformat
    from nbclient import NotebookClient

    notebook = demo.prepare_demo(tmp_path / "demo")
    nb = nbformat.read(notebook, as_version=4)
    NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(notebook.parent)}}
    ).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code)
    outputs = [o for c in code for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs)
    for cell in (c for c in code if c.source.startswith("%%ask")):
        err = "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stderr")
        assert "no language model is configured" in err and "ANTHROPIC_API_KEY" in err
        assert len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------------------
# the accuracy benchmark on the sample set (benchmarks/accuracy.py --dataset sample)
# ---------------------------------------------------------------------------


class SampleOracle:
    """A chat model for the benchmark: the gold SQL of the question in the prompt, for
    the engine the system prompt names (or ``wrong`` SQL), CLARIFY for an ambiguous
    question (or SQL when ``guess``), FINAL once it has seen its attempt."""

    def __new__(cls, *, wrong: bool = False, guess: bool = False):
        import re

        from langchain_core.language_models import BaseChatModel
        from langchain_core.messages import AIMessage
        from langchain_core.outputs import ChatGeneration, ChatResult

        by_question = {q["question"]: q for q in QUESTIONS}

        class _Oracle(BaseChatModel):
            calls: int = 0

            @property
            def _llm_type(self) -> str:
                return "test-sample-oracle"

            def _generate(self, messages, stop=None, run_manager=None, **kwargs):
                self.calls += 1
                system, text = str(messages[0].content), str(messages[-1].content)
                q = by_question[re.findall(r"^Question: (.*)$", text, re.M)[-1].strip()]
                if "Your attempts so far" in text:
                    reply = "FINAL"
                elif q.get("ambiguous") and not guess:
                    reply = f"CLARIFY:\n{q['why'][0].upper()}{q['why'][1:]}"
                elif wrong or q.get("ambiguous"):
                    reply = "```sql\nSELECT count(*) AS n FROM regions\n```"
                else:
                    engine = (
                        "sqlite"
                        if "about a SQLite database" in system
                        else "postgres"
                        if "about a PostgreSQL database" in system
                        else None
                    )
                    sql = (engine and q.get(f"query_{engine}")) or q["query"]
                    reply = f"```sql\n{sql}\n```"
                return ChatResult(generations=[ChatGeneration(message=AIMessage(content=reply))])

        return _Oracle()


@pytest.fixture(scope="module")
def acc():
    import sys

    sys.path.insert(0, str(REPO / "benchmarks"))
    import accuracy

    return accuracy


@pytest.fixture(scope="module")
def sample_dbs(sample, pg_sample, tmp_path_factory):
    """A copy of the sample files (the benchmark opens DuckDB through sqlnb, whose settings
    differ from the raw read-only connection the tests above keep open) and the URL of the
    PostgreSQL copy."""
    import shutil

    d = tmp_path_factory.mktemp("bench")
    for f in (sample, demo.sqlite_path_for(sample)):
        shutil.copyfile(f, d / f.name)
    return {
        "duckdb": d / sample.name,
        "sqlite": d / demo.sqlite_path_for(sample).name,
        "postgresql": pg_sample,
    }


def test_sample_questions_load_once_per_engine(acc):
    qs = acc.load_sample_questions()
    assert len(qs) == 120 and [q["db_id"] for q in qs[:40]] == ["duckdb"] * 40
    assert [q["db_id"] for q in qs[80:]] == ["postgresql"] * 40
    per_dialect = [q for q in QUESTIONS if q.get("query_sqlite") or q.get("query_postgres")]
    assert any(q.get("query_postgres") for q in per_dialect)  # date functions differ
    for q in per_dialect:
        by = {x["db_id"]: x["query"] for x in qs if x["id"] == q["id"]}
        assert by == {
            "duckdb": q["query"],
            "sqlite": q.get("query_sqlite") or q["query"],
            "postgresql": q.get("query_postgres") or q["query"],
        }
    assert [q["id"] for q in acc.load_sample_questions(("sqlite",), ids=[3, 36])] == [3, 36]
    with pytest.raises(ValueError, match="duckdb, sqlite, postgresql"):
        acc.load_sample_questions(("mysql",))


def test_sample_gold_oracle_scores_100_and_asks_back(acc, sample_dbs, tmp_path):
    questions = acc.load_sample_questions()
    jsonl = tmp_path / "acc.jsonl"
    data = acc.run_accuracy(
        questions,
        acc.SAMPLE_DIR,
        SampleOracle(),
        ("agent", "single-shot"),
        databases=sample_dbs,
        jsonl=jsonl,
        log=lambda msg: None,
    )
    for name, s in data["configs"].items():
        assert (s["n"], s["correct"], s["ex"]) == (105, 105, 100.0), (name, s)
        assert s["asked_back"] == 0
    for name, v in data["clarification"].items():
        assert (v["ambiguous"], v["asked"], v["rate"], v["asked_needlessly"]) == (15, 15, 100.0, 0), name
    assert set(data["by_db"]) == {"duckdb", "sqlite", "postgresql"}
    assert len(jsonl.read_text().splitlines()) == 240


def test_sample_wrong_sql_and_guesses_score_0(acc, sample_dbs, tmp_path):
    questions = acc.load_sample_questions(ids=[1, 11, 19, 36, 37])  # 36, 37: ambiguous
    data = acc.run_accuracy(
        questions,
        acc.SAMPLE_DIR,
        SampleOracle(wrong=True, guess=True),
        ("single-shot",),
        databases=sample_dbs,
        log=lambda msg: None,
    )
    s = data["configs"]["single-shot"]
    assert (s["n"], s["correct"]) == (9, 0)
    assert data["clarification"]["single-shot"]["asked"] == 0
    recs = [r for r in data["records"] if r["ambiguous"]]
    assert len(recs) == 6 and all(r["mismatch"] == "answered without asking back" for r in recs)
    # a query running past the scorer's time limit is wrong, not a hang
    for scorer, db in (
        (acc.DuckDBScorer(timeout=0.5), sample_dbs["duckdb"]),
        (acc.PostgresScorer(timeout=0.5), sample_dbs["postgresql"]),
    ):
        try:
            m = scorer.evaluate(
                db, "SELECT 1 AS x", "SELECT count(*) FROM order_items a, order_items b, order_items c"
            )
            assert not m.correct and m.error and m.error.startswith("timeout"), m
            # and a prediction that writes is refused by the scorer's read-only session
            m = scorer.evaluate(db, "SELECT 1 AS x", "CREATE TABLE scorer_wrote (x INTEGER)")
            assert not m.correct and m.error
        finally:
            scorer.close()


def test_sample_benchmark_command_line(sample_dbs, tmp_path):
    import subprocess
    import sys

    script = tmp_path / "replies.json"
    script.write_text(
        json.dumps(
            [
                "```sql\nSELECT count(*) AS orders FROM orders WHERE ordered_at >= '2024-01-01' "
                "AND ordered_at < '2025-01-01'\n```",
                "CLARIFY:\nBest by revenue or by units?",
            ]
        )
    )
    results = tmp_path / "results"
    cmd = [
        sys.executable,
        str(REPO / "benchmarks" / "run.py"),
        "accuracy",
        "--dataset",
        "sample",
        "--engines",
        "sqlite",
        "--ids",
        "1,36",
        "--model",
        f"scripted:{script}",
        "--configs",
        "single-shot",
        "--results-dir",
        str(results),
        "--data-dir",
        str(tmp_path / "data"),
    ]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads((results / "accuracy_sample.json").read_text())
    assert data["dataset"] == "sample" and data["databases"] == ["sqlite"] and data["question_ids"] == [1, 36]
    assert data["configs"]["single-shot"]["ex"] == 100.0
    assert data["clarification"]["single-shot"]["asked"] == 1
    text = (results / "accuracy_sample.md").read_text()
    assert "sample database" in text and "Asked back" in text and "1/1" in text


def test_sqlnb_demo_prints_an_address_that_opens_the_notebook(tmp_path):
    """JupyterLab, started as ``sqlnb demo --no-browser`` starts it, prints addresses whose page
    is the demo notebook itself, not the Launcher."""
    import re
    import socket
    import subprocess
    import time

    from sqlnb.demo.lab import lab_command

    notebook = tmp_path / "sqlnb demo.ipynb"  # a name that needs quoting in a URL
    notebook.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = lab_command(notebook, port=port, open_browser=False)
    assert cmd is not None and "--no-browser" in cmd
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    printed, deadline = [], time.monotonic() + 60
    try:
        assert proc.stdout is not None
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            printed.append(line)
            if "?token=" in line:
                break
    finally:
        proc.terminate()
        proc.wait(20)
    urls = re.findall(r"http://\S+\?token=\S+", "".join(printed))
    assert urls, "".join(printed)
    assert all(f":{port}/lab/tree/sqlnb%20demo.ipynb?token=" in u for u in urls), urls
