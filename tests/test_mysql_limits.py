"""MySQL/MariaDB: statement timeouts and row caps that hold on the server.

- MySQL's ``max_execution_time`` times out SELECT only: a ``KILL QUERY`` backstop ends DML,
  DDL and CALL at the timeout.  Only MariaDB runs here, whose ``max_statement_time`` covers
  every statement, so the tests force the backstop on and switch the session's server-side
  timeout off behind the adapter's back: the situation of a MySQL server for those
  statements.
- A capped result must not cross the wire whole: the bytes the server sent to the session
  (``Bytes_sent``, the server's own count) stay far below the full result.

Runs against the MariaDB of ``scripts/services.sh`` (127.0.0.1:3306, user sqlnb).
"""

from __future__ import annotations

import time

import sqlnb.adapters as adapters  # before pandas: see sqlnb/__init__.py

# isort: split
import pytest

from sqlnb import errors
from tests.engines import MySQLEnv

pytestmark = pytest.mark.timeout(120)

# 10 million rows of two integers (MariaDB's sequence engine): over 100 MB on the wire
TEN_MILLION = "SELECT a.seq AS a, b.seq AS b FROM seq_1_to_10000 a, seq_1_to_1000 b"


@pytest.fixture(scope="module")
def db():
    env = MySQLEnv(None)
    env.create()
    env.admin(
        [
            "CREATE TABLE counter (n INT) ENGINE=InnoDB",
            # a long statement inside a procedure (a SLEEP() alone in a statement would
            # return early when killed and let the procedure go on: MySQL semantics)
            "CREATE PROCEDURE slow_proc() "
            "BEGIN INSERT INTO counter SELECT SLEEP(5); INSERT INTO counter VALUES (2); END",
        ]
    )
    yield env
    env.drop()


def _without_server_timeout(c) -> None:
    """Switch the session's max_statement_time off through the raw driver connection (the
    adapter still believes it set): as on MySQL, nothing on the server times out DML,
    DDL or CALL."""
    cur = c.conn.cursor()
    cur.execute("SET SESSION max_statement_time = 0")
    cur.close()


def test_mariadb_needs_no_backstop(db, connect_to):
    c = connect_to(db, statement_timeout=1)
    assert c.is_mariadb and c.has_set_statement and not c.uses_kill_backstop
    with pytest.raises(errors.QueryTimeout):  # max_statement_time covers DML
        c.execute("INSERT INTO counter SELECT SLEEP(5)")
    assert db.admin_query("SELECT count(*) FROM counter") == [(0,)]


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO counter SELECT SLEEP(5)",  # DML: interrupted with an error
        "CALL slow_proc()",  # CALL: the procedure ends with its interrupted statement
        "DO SLEEP(5)",  # ends early without an error: still a timeout
    ],
)
def test_kill_backstop_ends_statements_the_server_does_not_time_out(db, connect_to, statement):
    c = connect_to(db, statement_timeout=1)
    c.kill_backstop = True
    _without_server_timeout(c)
    start = time.monotonic()
    with pytest.raises(errors.QueryTimeout, match="1 s"):
        c.execute(statement)
    # the documented bound: stopped within 2 s of the timeout (the statements run 5 s)
    assert time.monotonic() - start < 1 + 2.0
    assert c.execute("SELECT 1 AS one").rows == [(1,)]  # the session is usable
    assert db.admin_query("SELECT count(*) FROM counter") == [(0,)]  # nothing was written


def test_kill_backstop_leaves_quick_statements_alone(db, connect_to):
    c = connect_to(db, statement_timeout=1)
    c.kill_backstop = True
    _without_server_timeout(c)
    assert c.execute("INSERT INTO counter VALUES (3)").row_count == 1
    assert c.execute("SELECT SLEEP(0.2) AS s").rows == [(0,)]
    with pytest.raises(errors.QueryTimeout):
        c.execute("DO SLEEP(5)", timeout=0.5)  # a per-statement timeout too
    assert c.execute("SELECT count(*) AS n FROM counter WHERE n = 3").rows == [(1,)]
    c.execute("DELETE FROM counter WHERE n = 3")


def _bytes_sent(c) -> int:
    return int(c.execute("SHOW SESSION STATUS LIKE 'Bytes_sent'").rows[0][1])


@pytest.mark.parametrize("set_statement", [True, False], ids=["set-statement", "session-limit"])
@pytest.mark.parametrize(
    "sql", [TEN_MILLION, TEN_MILLION + " LIMIT 10000000"], ids=["query", "explicit-limit"]
)
def test_row_cap_is_applied_on_the_server(db, connect_to, set_statement, sql):
    """``set_statement=False`` takes MySQL's way (a session sql_select_limit around the
    statement); an explicit LIMIT beyond the cap wins over sql_select_limit, so the
    adapter stops the server once the cap is reached."""
    c = connect_to(db)
    c.set_statement = set_statement
    before = _bytes_sent(c)
    r = c.execute(sql, max_rows=10)
    sent = _bytes_sent(c) - before
    assert r.truncated and r.row_count == 10 and r.column_names == ["a", "b"]
    # all rows: 128 MB; stopped: what the socket buffers held meanwhile (about 1 MB here)
    assert sent < 16_000_000, f"{sent} bytes crossed for a 10-row display"
    # the session is usable and its row limit is back to the default
    assert c.execute("SELECT @@sql_select_limit AS l").rows == [(18446744073709551615,)]
    assert c.execute("SELECT count(*) AS n FROM seq_1_to_100").rows == [(100,)]
    r = c.execute("SELECT seq FROM seq_1_to_5", max_rows=10)
    assert not r.truncated and r.rows == [(1,), (2,), (3,), (4,), (5,)]


def test_pure_python_driver_stops_a_capped_result_too(db, monkeypatch):
    """The pure-Python driver (no C extension) reads a capped result through the cursor:
    it stops the server the same way."""
    import mysql.connector

    real = mysql.connector.connect

    def no_cext(*args, **kwargs):
        if kwargs.get("use_pure") is False:
            raise ImportError("no C extension here")
        return real(*args, **kwargs)

    monkeypatch.setattr(mysql.connector, "connect", no_cext)
    with pytest.warns(RuntimeWarning):
        c = adapters.connect(db.url())
    try:
        assert not c.c_extension
        before = _bytes_sent(c)
        r = c.execute(TEN_MILLION + " LIMIT 10000000", max_rows=10)
        assert r.truncated and r.row_count == 10
        assert _bytes_sent(c) - before < 16_000_000  # all rows: 128 MB
        assert c.execute("SELECT 1 AS one").rows == [(1,)]
    finally:
        c.close()
