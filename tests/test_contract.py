"""The adapter contract, run against every engine on a real server (or file)."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

import sqlnb.adapters as adapters
from sqlnb import errors
from tests.engines import fooled_guard


def later(action, *args, delay: float = 0.5) -> list[float]:
    """Run ``action(*args)`` in another thread after ``delay`` s (the statement is running
    by then); the returned list receives the monotonic time it ran, to measure the
    documented guarantee from there: a cancel or an interrupt ends the statement within 2 s."""
    at: list[float] = []

    def run() -> None:
        at.append(time.monotonic())
        action(*args)

    threading.Timer(delay, run).start()
    return at


def assert_within_2_s(at: list[float]) -> None:
    """The documented bound, from the cancel (or interrupt) to the error; the statements
    cancelled here would run for minutes, so ending within 2 s is the cancel's doing."""
    took = time.monotonic() - at[0]
    assert took < 2.0, f"the statement ended {took:.2f} s after the cancel (documented: within 2 s)"


LONG_QUERY = {
    "sqlite": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
    "duckdb": "SELECT count(*) FROM range(100000000000) t(i) WHERE i % 7 = 3 AND hash(i) % 5 = 1",
    "postgresql": "SELECT pg_sleep(30)",
    "redshift": "SELECT pg_sleep(30)",
    # MariaDB stops recursive CTEs after max_recursive_iterations (1000 by default since
    # 10.6), so a recursive CTE returns at once; scan its Sequence engine instead
    "mysql": "SELECT count(*) FROM seq_1_to_100000000000 WHERE seq % 7 = 3",
    # fakesnow has no statement timeout, so the test marked notyet for it would run 10^11
    # rows for many minutes: a few seconds of work is enough to show it
    "snowflake": "SELECT count(*) FROM range(1000000000) t(i) WHERE i % 7 = 3",
}


@pytest.fixture
def conn(seeded, connect_to):
    return connect_to(seeded)


@pytest.fixture
def ro_conn(seeded, connect_to):
    return connect_to(seeded, readonly=True)


def test_select_returns_typed_result(conn):
    r = conn.execute("SELECT id, name FROM customers ORDER BY id")
    assert [c.name.lower() for c in r.columns] == ["id", "name"]
    assert all(c.type for c in r.columns)
    assert r.rows == [(1, "Ada"), (2, "Grace"), (3, "Linus")]
    assert r.row_count == 3
    assert r.truncated is False
    assert r.elapsed > 0
    df = r.to_pandas()
    assert list(df.iloc[:, 1]) == ["Ada", "Grace", "Linus"]


def test_max_rows_sets_truncated(conn):
    r = conn.execute("SELECT id FROM customers ORDER BY id", max_rows=2)
    assert r.rows == [(1,), (2,)]
    assert r.row_count == 2 and r.truncated is True
    r = conn.execute("SELECT id FROM customers ORDER BY id", max_rows=3)
    assert r.truncated is False and r.row_count == 3


def test_parameters_are_bound_not_substituted(conn):
    r = conn.execute("SELECT name FROM customers WHERE id = :cid", {"cid": 2})
    assert r.rows == [("Grace",)]
    r = conn.execute("SELECT count(*) FROM customers WHERE name = :n", {"n": "x'; DROP TABLE customers; --"})
    assert r.rows[0][0] == 0
    assert conn.execute("SELECT count(*) FROM customers").rows[0][0] == 3


def test_parameter_values_with_percent_and_colons(conn):
    r = conn.execute(
        "SELECT name FROM customers WHERE name LIKE :p AND ':notaparam' = ':notaparam' ORDER BY name",
        {"p": "%ce"},
    )
    assert [row[0] for row in r.rows] == ["Grace"]


def test_missing_parameter_is_a_usage_error(conn):
    with pytest.raises(errors.UsageError, match=":nope"):
        conn.execute("SELECT * FROM customers WHERE id = :nope", {})


@pytest.mark.parametrize("max_rows", [None, 10])
def test_empty_result_keeps_columns(conn, max_rows):
    r = conn.execute("SELECT id, name FROM customers WHERE id < 0 -- none", max_rows=max_rows)
    assert r.row_count == 0 and r.rows == []
    assert [c.name.lower() for c in r.columns] == ["id", "name"]
    assert [c.lower() for c in r.to_pandas().columns] == ["id", "name"]


@pytest.mark.notyet(["snowflake"], reason="fakesnow has no indexes")
def test_catalog_indexes(conn):
    orders = conn.catalog().find("orders")
    assert any(ix.columns and ix.columns[0].lower() == "customer_id" for ix in orders.indexes)


def test_catalog(conn):
    cat = conn.catalog()
    names = {t.name.lower() for t in cat.tables}
    assert {"customers", "orders", "big_orders"} <= names
    customers = cat.find("customers")
    assert [c.name.lower() for c in customers.columns] == ["id", "name", "email", "created_at"]
    assert customers.kind == "table"
    assert [c.lower() for c in customers.primary_key] == ["id"]
    assert customers.column("name").nullable is False
    assert customers.column("email").nullable is True
    assert any([c.lower() for c in u] == ["email"] for u in customers.unique)
    orders = cat.find("orders")
    fk = orders.foreign_keys[0]
    assert [c.lower() for c in fk.columns] == ["customer_id"]
    assert fk.ref_table.lower() == "customers" and [c.lower() for c in fk.ref_columns] == ["id"]
    assert "new" in (orders.column("status").default or "")
    assert cat.find("big_orders").kind == "view"
    assert "int" in customers.column("id").type or "number" in customers.column("id").type


@pytest.mark.notimpl(["sqlite"], reason="SQLite has no table or column comments")
def test_catalog_comments(conn):
    customers = conn.catalog().find("customers")
    assert customers.comment == "People who buy things"
    assert customers.column("email").comment == "Contact address"


def test_catalog_is_cached_until_refreshed(conn, seeded):
    first = conn.catalog()
    assert conn.catalog() is first
    seeded.admin(["CREATE TABLE extra_table (x INTEGER)"])
    try:
        assert conn.catalog().find("extra_table") is None
        refreshed = conn.catalog(refresh=True)
        assert refreshed is not first and refreshed.find("extra_table") is not None
    finally:
        seeded.admin(["DROP TABLE extra_table"])


def test_sample_rows(conn):
    r = conn.sample("customers", 2)
    assert r.row_count == 2 and len(r.columns) == 4


@pytest.mark.parametrize(
    "sql, kind",
    [
        ("SELECT * FROM no_such_table", errors.TableNotFound),
        ("SELECT no_such_column FROM customers", errors.ColumnNotFound),
        ("SELEKT 1", errors.SQLSyntaxError),
    ],
)
def test_errors_are_classified(conn, sql, kind):
    with pytest.raises(kind) as info:
        conn.execute(sql)
    assert info.value.engine_message  # the engine's own words are kept
    assert conn.execute("SELECT 1").rows == [(1,)]  # still usable


def test_readonly_guard_refuses_before_the_database(ro_conn, seeded):
    before = seeded.fingerprint()
    for sql in (
        "DELETE FROM customers",
        "UPDATE customers SET name = 'x'",
        "INSERT INTO customers (id, name) VALUES (9, 'x')",
        "DROP TABLE orders",
        "SELECT 1; DELETE FROM customers",
    ):
        with pytest.raises(errors.ReadOnlyViolation) as info:
            ro_conn.execute(sql)
        assert info.value.reason
    assert ro_conn.execute("SELECT count(*) FROM customers").rows[0][0] == 3
    ro_conn.close()
    assert seeded.fingerprint() == before


def test_readonly_session_blocks_what_slips_past_the_guard(ro_conn, seeded):
    """A fooled guard (it accepts everything): the engine's read-only session itself
    refuses the writes."""
    before = seeded.fingerprint()
    for sql in (
        "INSERT INTO customers (id, name) VALUES (9, 'x')",
        "DELETE FROM orders",
        "CREATE TABLE sneaky (x INTEGER)",
    ):
        with pytest.raises(errors.SqlnbError) as info, fooled_guard():
            ro_conn.execute(sql)
        assert not isinstance(info.value, errors.ReadOnlyViolation), info.value  # the engine's
    ro_conn.close()
    assert seeded.fingerprint() == before


def test_read_only_statement_on_a_read_write_connection(fresh, connect_to):
    """execute(readonly=True) on a connection that may write: the guard refuses writes,
    reads work, and the connection still writes afterwards."""
    conn = connect_to(fresh)
    before = fresh.fingerprint()
    for sql in ("DELETE FROM customers", "UPDATE customers SET name = 'x'", "DROP TABLE orders"):
        with pytest.raises(errors.ReadOnlyViolation) as info:
            conn.execute(sql, readonly=True)
        assert "as read-only" in info.value.message
    assert conn.execute("SELECT count(*) FROM customers", readonly=True).rows[0][0] == 3
    assert fresh.fingerprint() == before
    conn.execute("DELETE FROM orders WHERE id = 12")  # the scope is gone: writes work again
    assert conn.execute("SELECT count(*) FROM orders").rows[0][0] == 2


@pytest.mark.notyet(
    ["snowflake"],
    reason="fakesnow's stand-in read-only DuckDB transaction cannot "
    "nest in the user's (real Snowflake has no read-only transaction to nest)",
)
def test_read_only_statement_inside_an_open_transaction(engine, fresh, connect_to):
    """A read-only statement never ends the user's own open transaction: engines whose
    read-only scope is a transaction on the same session refuse it; DuckDB runs it on a
    duplicate connection of its own.  The transaction's work is still there to commit."""
    conn = connect_to(fresh)
    conn.execute("BEGIN")
    conn.execute("DELETE FROM orders WHERE id = 12")
    if engine == "duckdb":  # its own snapshot: the uncommitted delete is not visible
        assert conn.execute("SELECT count(*) FROM orders", readonly=True).rows[0][0] == 3
        with pytest.raises(errors.ReadOnlyViolation):
            conn.execute("DELETE FROM orders", readonly=True)
    else:
        with pytest.raises(errors.UsageError) as info:
            conn.execute("SELECT count(*) FROM orders", readonly=True)
        assert "open transaction" in info.value.message and "COMMIT or ROLLBACK" in info.value.hint
    conn.execute("COMMIT")
    assert conn.execute("SELECT count(*) FROM orders", readonly=True).rows[0][0] == 2


def test_read_only_statement_scope_blocks_what_slips_past_the_guard(fresh, connect_to):
    """The second layer alone (guard bypassed): inside the read-only statement scope of a
    read-write connection the engine refuses writes."""
    conn = connect_to(fresh)
    before = fresh.fingerprint()
    for sql in (
        "INSERT INTO customers (id, name) VALUES (9, 'x')",
        "DELETE FROM orders",
        "CREATE TABLE sneaky (x INTEGER)",
    ):
        with pytest.raises(errors.SqlnbError) as info, fooled_guard():
            conn.execute(sql, readonly=True)
        assert not isinstance(info.value, errors.ReadOnlyViolation), info.value  # the engine's
    assert conn.execute("SELECT count(*) FROM orders").rows[0][0] == 3
    conn.close()
    assert fresh.fingerprint() == before


@pytest.mark.notyet(["snowflake"], reason="fakesnow has no STATEMENT_TIMEOUT_IN_SECONDS")
def test_statement_timeout(engine, seeded):
    c = adapters.connect(seeded.url(), statement_timeout=1)
    try:
        with pytest.raises(errors.QueryTimeout):  # the query would run for minutes
            c.execute(LONG_QUERY[engine])
        assert c.execute("SELECT 1").rows == [(1,)]
    finally:
        c.close()


def test_cancel_from_another_thread(engine, conn):
    at = later(conn.cancel)
    with pytest.raises(errors.QueryCancelled):
        conn.execute(LONG_QUERY[engine], timeout=60)
    assert_within_2_s(at)
    assert conn.execute("SELECT 1").rows == [(1,)]


def test_kernel_interrupt_cancels_on_the_server(engine, conn):
    """SIGINT (what 'Interrupt kernel' sends) cancels the statement within 2 s."""
    at = later(os.kill, os.getpid(), signal.SIGINT)
    with pytest.raises(errors.QueryCancelled):
        conn.execute(LONG_QUERY[engine], timeout=60)
    assert_within_2_s(at)
    assert conn.execute("SELECT 1").rows == [(1,)]


def test_dml_reports_affected_rows(fresh):
    c = adapters.connect(fresh.url())
    try:
        r = c.execute("UPDATE orders SET status = 'done' WHERE customer_id = 1")
        assert r.row_count == 2 and not r.returns_rows
        assert c.execute("SELECT count(*) FROM orders WHERE status = 'done'").rows[0][0] == 2
    finally:
        c.close()


def test_closed_connection_says_so(seeded):
    c = adapters.connect(seeded.url())
    c.close()
    with pytest.raises(errors.ConnectionLost, match="closed"):
        c.execute("SELECT 1")


def test_repr_and_errors_never_show_the_password(seeded):
    url = seeded.url()
    c = adapters.connect(url)
    try:
        text = repr(c) + repr(c.spec)
        if c.spec.password:
            assert c.spec.password.reveal() not in text
        with pytest.raises(errors.SqlnbError) as info:
            c.execute("SELECT * FROM no_such_table")
        if c.spec.password:
            assert c.spec.password.reveal() not in str(info.value)
    finally:
        c.close()


@pytest.mark.engines(["postgresql", "mysql", "redshift"])
def test_lost_connection_is_reported_then_reopened(engine, seeded):
    """The server ends the session: the statement fails as ConnectionLost, the next one
    runs on a new session and says so."""
    c = adapters.connect(seeded.url())
    try:
        if engine == "mysql":
            session = c.execute("SELECT connection_id()").rows[0][0]
            seeded.admin([f"KILL {session}"])
        else:
            session = c.execute("SELECT pg_backend_pid()").rows[0][0]
            seeded.admin([f"SELECT pg_terminate_backend({session})"])
        with pytest.raises(errors.ConnectionLost) as info:
            c.execute("SELECT count(*) FROM customers")
        assert "run it again to reconnect" in str(info.value)
        r = c.execute("SELECT count(*) FROM customers")
        assert r.rows[0][0] == 3 and "re-opened" in r.notices[0]
        assert not c.execute("SELECT 1").notices
    finally:
        c.close()
