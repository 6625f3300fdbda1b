"""The magics through a real IPython InteractiveShell."""

from __future__ import annotations

import pytest
from IPython.utils.capture import capture_output

from sqlnb.kernel import kernel_session
from tests.doubles import loaded_shell


@pytest.fixture
def shell(shell):
    """The shared shell (tests/conftest.py: fresh magics and connections per test), without
    an earlier test's ``df``."""
    shell.user_ns.pop("df", None)
    return shell


def run(shell, cell: str):
    """Run a cell as the notebook would; return (ok, stdout+stderr text, rich outputs)."""
    with capture_output() as cap:
        result = shell.run_cell(cell)
    return result.success, cap.stdout + cap.stderr, cap.outputs


def html_of(outputs) -> str:
    return "".join(o.data.get("text/html", "") for o in outputs)


@pytest.fixture
def demo_db(tmp_path):
    from sqlnb.demo import create_sample_database

    return create_sample_database(tmp_path / "sample.duckdb")


def test_connect_use_list_close(shell, tmp_path):
    ok, out, _ = run(shell, f"%sqlnb connect duckdb:///{tmp_path}/a.duckdb --name a")
    assert ok and "'a'" in out and "active" in out
    ok, out, _ = run(shell, "%sqlnb connect sqlite:// --name b")
    assert ok
    magics = kernel_session(shell).magics
    assert magics.manager.active == "b"
    ok, out, _ = run(shell, "%sqlnb use a")
    assert ok and magics.manager.active == "a"
    names = shell.run_line_magic("sqlnb", "list")
    assert list(names.index) == ["a", "b"] and bool(names.loc["a", "active"])
    ok, out, _ = run(shell, "%sqlnb close a")
    assert ok and magics.manager.active == "b"
    ok, out, _ = run(shell, "%sqlnb use a")
    assert not ok and "No open connection named 'a'" in out


def test_quoted_arguments_use_shlex(shell, tmp_path):
    path = tmp_path / "with space.duckdb"
    ok, out, _ = run(shell, f'%sqlnb connect "duckdb:///{path}" --name spaced')
    assert ok, out
    ok, out, _ = run(shell, "%%sql\nSELECT 'a b' AS x")
    assert ok and "a b" in html_of(_)


def test_cell_shows_result_rowcount_and_elapsed(shell, demo_db):
    run(shell, f"%sqlnb connect duckdb:///{demo_db} --name sample")
    ok, out, outputs = run(shell, "%%sql\nSELECT id, name FROM customers ORDER BY id")
    assert ok, out
    page = html_of(outputs)
    assert "6,000 rows × 2 columns" in page and " ms" in page
    assert "Showing the first 20 of 6,000 rows" in page
    assert page.count("<tr>") <= 21  # header + display limit


def test_display_limit_is_a_traitlet(shell, demo_db):
    run(shell, f"%sqlnb connect duckdb:///{demo_db}")
    run(shell, "%config SqlMagic.display_limit = 3")
    ok, _out, outputs = run(shell, "%%sql\nSELECT id FROM customers ORDER BY id")
    assert ok and "Showing the first 3 of 6,000 rows" in html_of(outputs)


def test_output_variable_holds_the_full_result(shell, demo_db):
    run(shell, f"%sqlnb connect duckdb:///{demo_db}")
    ok, out, outputs = run(shell, "%%sql -o df\nSELECT * FROM orders")
    assert ok, out
    df = shell.user_ns["df"]
    assert len(df) == 60000 and list(df.columns) == [
        "id",
        "customer_id",
        "employee_id",
        "ordered_at",
        "shipped_at",
        "status",
        "channel",
    ]
    assert "Full result stored in df" in html_of(outputs)
    run(shell, "%%sql -o df\nSELECT id FROM orders WHERE id <= 10")
    assert len(shell.user_ns["df"]) == 10


def test_failed_rerun_says_the_output_variable_was_cleared(shell, demo_db):
    run(shell, f"%sqlnb connect duckdb:///{demo_db}")
    run(shell, "%%sql -o df\nSELECT id FROM orders")
    ok, out, _ = run(shell, "%%sql -o df\nSELECT id FROM ordersss")
    assert not ok and "df was cleared when the cell started" in out
    assert shell.user_ns["df"] is None


def test_limit_option_and_notice(shell, demo_db):
    run(shell, f"%sqlnb connect duckdb:///{demo_db}")
    ok, _out, outputs = run(shell, "%%sql --limit 7 -o df\nSELECT * FROM orders")
    assert ok and len(shell.user_ns["df"]) == 7
    assert "stopped at the row limit" in html_of(outputs)


def test_autolimit_protects_the_kernel_from_huge_results(shell):
    run(shell, "%sqlnb connect duckdb://")
    run(shell, "%config SqlMagic.autolimit = 1000")
    ok, _out, outputs = run(shell, "%%sql\nSELECT * FROM range(10000000)")
    page = html_of(outputs)
    assert ok and "1,000+ rows" in page and "Use --limit 0" in page
    assert page.count("<tr>") <= 21


def test_several_statements_run_in_order_and_show_the_last(shell):
    run(shell, "%sqlnb connect duckdb://")
    ok, out, outputs = run(
        shell,
        "%%sql\nCREATE TABLE t (x INTEGER);\nINSERT INTO t VALUES (1), (2);\n"
        "-- the last one is shown\nSELECT sum(x) AS total FROM t;",
    )
    assert ok, out
    assert "[1/3]" in out and "[2/3] 2 rows affected" in out
    assert ">3<" in html_of(outputs)


def test_failure_in_a_later_statement_says_which(shell):
    run(shell, "%sqlnb connect duckdb://")
    ok, out, _ = run(shell, "%%sql\nCREATE TABLE t2 (x INTEGER);\nSELECT nope FROM t2")
    assert not ok and "Statement 2 of 2 failed; statement 1 already ran" in out


def test_parameters_come_from_the_namespace(shell, demo_db):
    run(shell, f"%sqlnb connect duckdb:///{demo_db}")
    shell.user_ns["country"] = "DE"
    shell.user_ns["evil"] = "DE' OR '1'='1"
    ok, _, _ = run(shell, "%%sql -o df\nSELECT count(*) AS n FROM customers WHERE country = :country")
    assert ok and 0 < int(shell.user_ns["df"].n[0]) < 6000
    ok, _, _ = run(shell, "%%sql -o df\nSELECT count(*) AS n FROM customers WHERE country = :evil")
    assert ok and int(shell.user_ns["df"].n[0]) == 0
    ok, out, _ = run(shell, "%%sql\nSELECT * FROM customers WHERE id = :undefined_var")
    assert not ok and "undefined_var" in out and "Traceback" not in out


def test_line_magic_returns_a_dataframe(shell):
    run(shell, "%sqlnb connect duckdb://")
    df = shell.run_line_magic("sql", "SELECT 'it''s' AS s, 2 AS n")
    assert df.s[0] == "it's" and df.n[0] == 2
    ok, _out, _ = run(shell, "x = %sql --limit 2 SELECT * FROM range(10)")
    assert ok and len(shell.user_ns["x"]) == 2


@pytest.mark.parametrize(
    "cell, message",
    [
        ("%%sql\n", "cell body is empty"),
        ("%%sql\n-- only a comment\n", "no SQL"),
        ("%%sql --conn nowhere\nSELECT 1", "No open connection named 'nowhere'"),
        ("%%sql --limit -3\nSELECT 1", "--limit"),
        ("%%sql --bogus\nSELECT 1", "unrecognized arguments"),
        ("%%sql -o 1bad\nSELECT 1", "variable name"),
        ("%%sql\nSELEC 1", "SQLSyntaxError"),
        ("%%sql\nSELECT * FROM missing_table", "TableNotFound"),
        ("%sqlnb", "needs a command"),
        ("%sqlnb frobnicate", "invalid choice"),
        ("%sqlnb connect", "required"),
        ("%sqlnb connect nosuchname", "No connection named 'nosuchname'"),
        ("%sqlnb connect oracle://u@h/db", "Unknown database scheme"),
        ("%sqlnb connect 'duckdb:///x", "No closing quotation"),
    ],
)
def test_errors_are_one_readable_line_and_leave_the_kernel_usable(shell, cell, message):
    run(shell, "%sqlnb connect duckdb:// --name mem")
    ok, out, _ = run(shell, cell)
    assert not ok
    assert message in out
    assert "Traceback" not in out and 'File "' not in out
    ok, out, outputs = run(shell, "%%sql --conn mem\nSELECT 1 AS still_fine")
    assert ok and "still_fine" in html_of(outputs)


def test_no_active_connection(shell):
    ok, out, _ = run(shell, "%%sql\nSELECT 1")
    assert not ok and "No active connection" in out and "%sqlnb connect" in out


def test_readonly_connection(shell, demo_db):
    ok, out, _ = run(shell, f"%sqlnb connect duckdb:///{demo_db} --readonly")
    assert ok and "read-only" in out
    ok, out, _ = run(shell, "%%sql\nDELETE FROM orders")
    assert not ok and "ReadOnlyViolation" in out and "DELETE" in out
    ok, out, _ = run(shell, "%%sql\nCOPY orders TO '/tmp/sqlnb-escape.csv'")
    assert not ok


def test_statement_timeout_setting(shell):
    run(shell, "%config SqlMagic.statement_timeout = 1")
    run(shell, "%sqlnb connect duckdb://")
    ok, out, _ = run(shell, "%%sql\nSELECT count(*) FROM range(100000000000) t(i) WHERE hash(i) % 7 = 1")
    assert not ok and "QueryTimeout" in out and "1 s" in out
    ok, _, _ = run(shell, "%%sql\nSELECT 1")
    assert ok


def test_schema_commands(shell, demo_db):
    run(shell, f"%sqlnb connect duckdb:///{demo_db}")
    tables = shell.run_line_magic("sqlnb", "schema")
    assert {name for _schema, name in tables.index} == {
        "regions",
        "employees",
        "customers",
        "categories",
        "suppliers",
        "products",
        "orders",
        "order_items",
        "payments",
        "returns",
        "order_totals",
    }
    ok, out, outputs = run(shell, "%sqlnb schema orders --sample 2")
    assert ok
    page = html_of(outputs)
    assert "customer_id" in page and "customers(id)" in page and "2 rows" in page
    ok, out, _ = run(shell, "%sqlnb schema order")
    assert not ok and "did you mean orders" in out


def test_password_in_a_url_is_never_echoed(shell, tmp_path):
    ok, out, _ = run(shell, "%sqlnb connect 'mysql://me:Hunter2-secret@127.0.0.1:1/x' --name bad")
    assert not ok and "Hunter2" not in out
    assert "Cannot connect" in out or "connect" in out.lower()


def test_every_engine_through_the_magics(engine, seeded):
    with loaded_shell() as ip:
        ok, out, _ = run(ip, f"%sqlnb connect '{seeded.url()}' --name db")
        assert ok, out
        assert "Sq1nb-pw" not in out
        ok, out, _outputs = run(ip, "%%sql -o df\nSELECT id, name FROM customers ORDER BY id")
        assert ok, out
        df = ip.user_ns["df"]
        assert list(df.iloc[:, 1]) == ["Ada", "Grace", "Linus"]
        ip.user_ns["wanted"] = 2
        ok, out, _ = run(ip, "%%sql -o df\nSELECT name FROM customers WHERE id = :wanted")
        assert ok and list(ip.user_ns["df"].iloc[:, 0]) == ["Grace"]
        import numpy as np
        import pandas as pd

        ip.user_ns["wanted"] = np.int64(3)  # e.g. taken from a DataFrame cell
        ip.user_ns["since"] = pd.Timestamp("2024-01-01")
        ok, out, _ = run(
            ip,
            "%%sql -o df\nSELECT name FROM customers WHERE id = :wanted OR created_at > :since ORDER BY id",
        )
        assert ok, out
        assert list(ip.user_ns["df"].iloc[:, 0]) == ["Ada", "Grace", "Linus"]
        listing = ip.run_line_magic("sqlnb", "list")
        assert "Sq1nb-pw" not in listing.to_string()


def test_loading_twice_keeps_the_connections_and_says_nothing(shell, tmp_path):
    """The JupyterLab panel loads sqlnb before the notebook's own %load_ext runs: that
    %load_ext must neither say 'already loaded' nor replace the connections."""
    ok, _, _ = run(shell, f"%sqlnb connect duckdb:///{tmp_path}/a.duckdb --name a")
    assert ok
    magics = kernel_session(shell).magics
    ok, out, _ = run(shell, "import sqlnb\nsqlnb.load_ipython_extension(get_ipython())")
    assert ok and out == ""
    shell.extension_manager.loaded.discard("sqlnb")  # as in a kernel where only the panel loaded it
    ok, out, _ = run(shell, "%load_ext sqlnb")
    assert ok and out == "", out
    assert kernel_session(shell).magics is magics and magics.manager.names() == ["a"]
    ok, out, _ = run(shell, "%reload_ext sqlnb")  # a reload starts afresh
    assert (
        ok
        and kernel_session(shell).magics is not magics
        and kernel_session(shell).magics.manager.names() == []
    )
