"""SQLite and DuckDB specifics: read-only escape routes and result fidelity."""

from __future__ import annotations

import datetime as dt
import decimal
import hashlib
import sqlite3
from pathlib import Path

import duckdb
import pandas as pd
import pytest

import sqlnb.adapters as adapters
from sqlnb import errors
from sqlnb.adapters.result import ResultColumn, arrow_to_pandas, rows_to_arrow
from tests.engines import fooled_guard


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def sqlite_db(tmp_path):
    path = tmp_path / "a.sqlite"
    con = sqlite3.connect(path)
    con.executescript("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'x');")
    con.close()
    return path


@pytest.fixture
def duck_db(tmp_path):
    path = tmp_path / "a.duckdb"
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE t (id INTEGER PRIMARY KEY, v VARCHAR); INSERT INTO t VALUES (1, 'x');CREATE SEQUENCE s"
    )
    con.close()
    return path


def session_execute(conn, sql):
    """Run past a fooled guard: the read-only session itself must refuse (an engine error,
    not the guard's ReadOnlyViolation)."""
    try:
        with fooled_guard():
            return conn.execute(sql)
    except errors.ReadOnlyViolation as exc:
        raise AssertionError(f"refused by sqlnb, not by the engine: {exc}") from None


@pytest.mark.parametrize(
    "sql",
    [
        "ATTACH DATABASE '{other}?mode=rwc' AS o",
        "ATTACH DATABASE '{other}' AS o",
        "CREATE TEMP TABLE tmp AS SELECT 1",
        "PRAGMA query_only = OFF",
        "PRAGMA journal_mode = DELETE",
        "INSERT INTO t VALUES (2, 'y')",
        "VACUUM INTO '{other}'",
        "SELECT load_extension('/tmp/nothing')",
    ],
)
def test_sqlite_readonly_session_blocks_escapes(sqlite_db, tmp_path, sql):
    other = tmp_path / "other.sqlite"
    before = digest(sqlite_db)
    conn = adapters.connect(f"sqlite:///{sqlite_db}", readonly=True)
    try:
        with pytest.raises(errors.SqlnbError):
            session_execute(conn, sql.format(other=other))
        with pytest.raises(errors.ReadOnlyViolation):  # and the guard refuses it first
            conn.execute(sql.format(other=other))
        assert conn.execute("SELECT v FROM t").rows == [("x",)]
    finally:
        conn.close()
    assert not other.exists()
    assert digest(sqlite_db) == before


@pytest.mark.parametrize(
    "sql",
    [
        "COPY t TO '{other}'",
        "SELECT nextval('s')",
        "INSERT INTO t VALUES (2, 'y')",
        "ATTACH '{other}' AS o",
        "SET enable_external_access = true",
        "SELECT * FROM read_csv('{other}')",
        "INSTALL httpfs",
        "EXPORT DATABASE '{otherdir}'",
    ],
)
def test_duckdb_readonly_session_blocks_escapes(duck_db, tmp_path, sql):
    other = tmp_path / "other.csv"
    otherdir = tmp_path / "export"
    before = digest(duck_db)
    conn = adapters.connect(f"duckdb:///{duck_db}", readonly=True)
    try:
        with pytest.raises(errors.SqlnbError):
            session_execute(conn, sql.format(other=other, otherdir=otherdir))
        with pytest.raises(errors.ReadOnlyViolation):
            conn.execute(sql.format(other=other, otherdir=otherdir))
        assert conn.execute("SELECT v FROM t").rows == [("x",)]
    finally:
        conn.close()
    assert not other.exists() and not otherdir.exists()
    assert digest(duck_db) == before


def test_duckdb_temp_tables_stay_in_memory(duck_db):
    """DuckDB allows TEMP tables in a read-only session; they never reach the file."""
    before = digest(duck_db)
    conn = adapters.connect(f"duckdb:///{duck_db}", readonly=True)
    try:
        with pytest.raises(errors.ReadOnlyViolation):
            conn.execute("CREATE TEMP TABLE tmp AS SELECT 1")
        session_execute(conn, "CREATE TEMP TABLE tmp AS SELECT 1")
    finally:
        conn.close()
    assert digest(duck_db) == before


def test_readonly_file_must_exist(tmp_path):
    for scheme in ("sqlite", "duckdb"):
        with pytest.raises(errors.ConfigurationError, match="does not exist"):
            adapters.connect(f"{scheme}:///{tmp_path}/missing.db", readonly=True)
        assert not (tmp_path / "missing.db").exists()


def test_duckdb_same_file_with_other_settings(duck_db):
    rw = adapters.connect(f"duckdb:///{duck_db}")
    try:
        with pytest.raises(errors.ConfigurationError, match="already open"):
            adapters.connect(f"duckdb:///{duck_db}", readonly=True)
    finally:
        rw.close()


def test_sqlite_missing_directory(tmp_path):
    with pytest.raises(errors.ConnectFailed, match="Cannot open"):
        adapters.connect(f"sqlite:///{tmp_path}/no/such/dir/x.db")


FIDELITY_SQL = """
SELECT * FROM (VALUES
  (1, NULL::INTEGER, 12.50::DECIMAL(10,2), TIMESTAMP '2024-01-02 03:04:05.123456',
   TIMESTAMPTZ '2024-01-02 03:04:05+02', DATE '2024-01-02', 'a3bb189e-8bf9-3888-9912-ace4e6543002'::UUID,
   '{"a": [1, 2]}'::JSON, '\\xAB\\x00'::BLOB, 'text', true, 1.5::DOUBLE),
  (2, 7, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
) v(id, maybe_int, amount, ts, tstz, d, u, j, b, s, flag, f)
"""


def test_duckdb_arrow_and_plain_rows_agree():
    """The Arrow path and the plain-driver path give the same DataFrame."""
    conn = adapters.connect("duckdb://")
    try:
        conn.execute("SET TimeZone = 'UTC'")
        fast = conn.execute(FIDELITY_SQL).to_pandas()
        cur = conn.conn.execute(FIDELITY_SQL)
        columns = [ResultColumn(d[0], str(d[1]).lower()) for d in cur.description]
        plain = arrow_to_pandas(rows_to_arrow(columns, cur.fetchall()))
    finally:
        conn.close()
    pd.testing.assert_frame_equal(fast, plain)
    row = fast.iloc[0]
    assert row["amount"] == decimal.Decimal("12.50")
    assert row["tstz"] == pd.Timestamp("2024-01-02 01:04:05", tz="UTC")
    assert row["d"] == dt.date(2024, 1, 2)
    assert row["u"] == "a3bb189e-8bf9-3888-9912-ace4e6543002"
    assert row["b"] == b"\xab\x00"
    assert pd.isna(fast.iloc[0]["maybe_int"]) and fast.iloc[1]["maybe_int"] == 7


def test_sqlite_values_roundtrip(tmp_path):
    conn = adapters.connect(f"sqlite:///{tmp_path}/v.db")
    try:
        conn.execute("CREATE TABLE v (i INTEGER, r REAL, t TEXT, b BLOB)")
        conn.execute("INSERT INTO v VALUES (1, 1.5, 'x', x'AB00'), (NULL, NULL, NULL, NULL)")
        r = conn.execute("SELECT * FROM v")
        assert r.rows == [(1, 1.5, "x", b"\xab\x00"), (None, None, None, None)]
        assert [c.type for c in r.columns] == ["integer", "real", "text", "blob"]
    finally:
        conn.close()


def test_interrupt_while_waiting_for_another_statement_is_a_cancel(sqlite_db):
    """A cell waiting for the agent's statement on the same connection (the adapter's lock)
    and interrupted ends as QueryCancelled, and the connection stays usable."""
    import signal
    import threading

    adapter = adapters.connect(f"sqlite:///{sqlite_db}")
    main = threading.get_ident()
    holding, release = threading.Event(), threading.Event()

    def hold_the_connection():
        with adapter._lock:  # what a statement of the agent's thread does while it runs
            holding.set()
            release.wait(60)

    holder = threading.Thread(target=hold_the_connection, daemon=True)
    holder.start()
    assert holding.wait(30)
    timer = threading.Timer(0.3, lambda: signal.pthread_kill(main, signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(errors.QueryCancelled, match="waiting for another statement"):
            adapter.execute("SELECT 1")
    finally:
        timer.cancel()
        release.set()
        holder.join(30)
    assert adapter.execute("SELECT v FROM t").rows == [("x",)]
    adapter.close()
