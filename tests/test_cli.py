"""The command line through a subprocess, as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def sqlnb(*args: str, timeout: float = 60):
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("PGPASSWORD", "SQLNB_CONNECTIONS_FILE")}
    env["SQLNB_NO_KEYRING"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "sqlnb.cli", *args], capture_output=True, text=True, timeout=timeout, env=env
    )


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    from sqlnb.demo import create_sample_database

    return create_sample_database(tmp_path_factory.mktemp("cli") / "sample.duckdb")


def test_table_output(sample):
    p = sqlnb(
        "sql", "--db", f"duckdb:///{sample}", "SELECT status, count(*) AS n FROM orders GROUP BY 1 ORDER BY 1"
    )
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].split("|")[0].strip() == "status" and "(4 rows)" in p.stdout


def test_json_output(sample):
    p = sqlnb(
        "sql",
        "--db",
        f"duckdb:///{sample}",
        "--json",
        "SELECT id, price, name FROM products WHERE id <= 2 ORDER BY id",
    )
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert set(data) == {"columns", "rows", "row_count", "elapsed_ms", "connection"}
    # what the connection's credentials may write (tests/test_write_access.py has the rest)
    assert data["connection"]["write_access"]["can_write"] is True
    assert data["columns"] == ["id", "price", "name"] and data["row_count"] == 2
    assert data["rows"][0][0] == 1 and isinstance(data["rows"][0][1], str)  # decimals keep precision
    assert data["elapsed_ms"] > 0


def test_several_quoted_statements_run_in_order(tmp_path):
    db = f"sqlite:///{tmp_path / 't.db'}"
    p = sqlnb(
        "sql",
        "--db",
        db,
        "CREATE TABLE t (a INTEGER);",
        "INSERT INTO t VALUES (1), (2)",
        "SELECT sum(a) AS total FROM t",
    )
    assert p.returncode == 0, p.stderr
    assert "total" in p.stdout and "3" in p.stdout
    # the words of one statement, unquoted, are one statement
    p = sqlnb("sql", "--db", db, "SELECT", "count(*)", "AS", "n", "FROM", "t")
    assert p.returncode == 0, p.stderr
    assert "2" in p.stdout


def test_sql_text_of_the_arguments():
    from sqlnb.cli import sql_texts

    assert sql_texts(["SELECT 1"]) == ["SELECT 1"]
    assert sql_texts(["SELECT", "*", "FROM", "t"]) == ["SELECT * FROM t"]
    assert sql_texts(["CREATE TABLE t (a)", "SELECT * FROM t;"]) == ["CREATE TABLE t (a)", "SELECT * FROM t;"]


def test_quoted_statements_are_never_joined(tmp_path):
    """A trailing comment of one argument does not swallow the next one's text."""
    db = tmp_path / "j.duckdb"
    p = sqlnb(
        "sql",
        "--db",
        f"duckdb:///{db}",
        "--json",
        "CREATE TABLE t (a INT) -- a table",
        "INSERT INTO t VALUES (41), (1) -- two rows",
        "SELECT CAST(sum(a) AS INTEGER) AS n FROM t -- how many",
    )
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["rows"] == [[42]]


def test_json_types(tmp_path):
    p = sqlnb(
        "sql",
        "--db",
        "duckdb://",
        "--json",
        "SELECT DATE '2024-01-02' AS d, TIMESTAMP '2024-01-02 03:04:05' AS ts, NULL AS n, "
        "'\\xAB'::BLOB AS b, 1.5::DOUBLE AS f, true AS t",
    )
    assert p.returncode == 0, p.stderr
    row = json.loads(p.stdout)["rows"][0]
    assert row[0] == "2024-01-02" and row[1] == "2024-01-02T03:04:05" and row[2] is None
    assert row[4] == 1.5 and row[5] is True


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["sql", "--db", "duckdb://", "SELEC 1"], 1, "syntax"),
        (["sql", "--db", "duckdb://", "SELECT * FROM nope"], 1, "nope"),
        (["sql", "--db", "nosuch", "SELECT 1"], 2, "No connection named 'nosuch'"),
        (["sql", "--db", "oracle://u@h/x", "SELECT 1"], 2, "Unknown database scheme"),
        (["sql", "--db", "localhost/x", "SELECT 1"], 2, "No connection named"),
        (["sql", "SELECT 1"], 2, "--db"),
        (["sql", "--db", "duckdb://", " "], 2, "no SQL"),
        (
            [
                "sql",
                "--db",
                "postgresql://me:Hunter2-secret@127.0.0.1:1/x",
                "--connect-timeout",
                "2",
                "SELECT 1",
            ],
            1,
            "Cannot connect",
        ),
        (
            ["sql", "--db", "postgresql://sqlnb:Hunter2-secret@127.0.0.1:6432/postgres", "SELECT 1"],
            1,
            "Authentication failed",
        ),
        (
            ["sql", "--db", "postgresql://sqlnb@127.0.0.1:6432/postgres", "SELECT 1"],
            1,
            "no password was found",
        ),
        (
            [
                "sql",
                "--db",
                "postgresql://postgres@127.0.0.1:5432/postgres",
                "--timeout",
                "1",
                "SELECT pg_sleep(5)",
            ],
            1,
            "statement timeout of 1 s",
        ),
    ],
)
def test_failures_exit_non_zero_with_one_line(args, code, message):
    p = sqlnb(*args)
    assert p.returncode == code, (p.stdout, p.stderr)
    assert message.lower() in p.stderr.lower()
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "Hunter2" not in p.stderr and "Traceback" not in p.stderr


def test_readonly_refuses_writes_and_leaves_the_file_alone(sample):
    before = sample.read_bytes()
    p = sqlnb("sql", "--db", f"duckdb:///{sample}", "--readonly", "DELETE FROM orders")
    assert p.returncode == 1 and "read-only" in p.stderr and "DELETE" in p.stderr
    assert sample.read_bytes() == before


def test_several_statements_show_the_last(tmp_path):
    db = tmp_path / "w.sqlite"
    p = sqlnb(
        "sql",
        "--db",
        f"sqlite:///{db}",
        "--json",
        "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2); SELECT sum(x) AS s FROM t",
    )
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["rows"] == [[3]]


def test_console_script_is_installed():
    import shutil

    exe = shutil.which("sqlnb") or str(__import__("pathlib").Path(sys.executable).parent / "sqlnb")
    p = subprocess.run([exe, "--version"], capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout.startswith("sqlnb ")


def test_demo_creates_database_and_notebook(tmp_path):
    p = sqlnb("demo", "--dir", str(tmp_path / "demo"), "--no-lab")
    assert p.returncode == 0, p.stderr
    nb = json.loads((tmp_path / "demo" / "sqlnb-demo.ipynb").read_text())
    assert "%load_ext sqlnb" in nb["cells"][1]["source"]
    q = sqlnb(
        "sql", "--db", f"duckdb:///{tmp_path}/demo/sample.duckdb", "--json", "SELECT count(*) FROM orders"
    )
    assert json.loads(q.stdout)["rows"] == [[60000]]
    q = sqlnb(
        "sql",
        "--db",
        f"sqlite:///{tmp_path}/demo/sample.sqlite",
        "--json",
        "SELECT count(*) FROM orders WHERE status = 'paid'",
    )
    assert q.returncode == 0 and json.loads(q.stdout)["rows"][0][0] > 0  # the README's "paid" question
    assert not (tmp_path / "demo" / "demo-replies.json").exists()


def test_demo_notebook_runs_top_to_bottom_in_a_real_kernel(tmp_path, monkeypatch):
    """What `sqlnb demo` opens: every cell executes without error in a Jupyter kernel; the
    three ask cells (a question, a follow-up, an ambiguous question) get their replies
    from a scripted model that only this test sets (the notebook has no canned replies)."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # the kernel inherits the environment
    first = (
        "SELECT c.name, round(sum(t.total), 2) AS spent\nFROM customers c\n"
        "JOIN order_totals t ON t.customer_id = c.id\n"
        "WHERE t.status <> 'cancelled' AND t.ordered_at >= TIMESTAMP '2025-01-01'\n"
    )
    replies = [
        f"```sql\n{first}GROUP BY c.id, c.name\nORDER BY spent DESC\nLIMIT 5\n```",
        "FINAL",
        f"```sql\n{first}AND c.country = 'DE'\nGROUP BY c.id, c.name\nORDER BY spent DESC\nLIMIT 5\n```",
        "FINAL",
        "CLARIFY:\nBest by revenue, by units sold or by margin, and over which period?",
    ]
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(replies))
    monkeypatch.setenv("SQLNB_MODEL", f"scripted:{script}")
    import nbformat
    from nbclient import NotebookClient

    from sqlnb.demo import prepare_demo

    notebook = prepare_demo(tmp_path / "demo")
    nb = nbformat.read(notebook, as_version=4)
    nbformat.validate(nb)
    NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(notebook.parent)}}
    ).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    outputs = [o for c in code for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    html = "".join(o.get("data", {}).get("text/html", "") for o in outputs)
    assert "customer_id" in html and "revenue" in html and "rows" in html and "order_totals" in html
    assert any("image/png" in o.get("data", {}) for o in outputs)  # the plot
    asks = [c for c in code if c.source.startswith("%%ask")]
    text = ["".join(o.get("text", "") for o in c.outputs) for c in asks]
    page = ["".join(o.get("data", {}).get("text/html", "") for o in c.outputs) for c in asks]
    assert "Attempt 1 of at most 5: SELECT c.name, round(sum(t.total), 2) AS spent" in text[0]
    assert "success" in page[0] and "LIMIT 5" in page[0]
    assert "success" in page[1] and ("c.country = 'DE'" in page[1] or "c.country = &#x27;DE&#x27;" in page[1])
    assert "Best by revenue, by units sold or by margin" in text[2] + page[2]
