"""The two safety layers against parser-differential attacks, on the real engines.

- The text that runs is the text the guard accepted: no re-lexed copy (the issue's
  comment-joining attack, through every path that used to strip comments: the zero-row
  describe of a capped PostgreSQL query, the ADBC fast path, the Redshift cursor; also
  behind PgBouncer in transaction mode), and every text sent for a statement passes one
  check (``Adapter._sendable``) that refuses anything else.
- One statement per call at the protocol level, below the guard: a raw
  ``SELECT 1; COMMIT; INSERT ...`` fails at the driver on every engine.
- Effects that outlive a read-only statement are released (PostgreSQL advisory locks,
  MariaDB named locks), and the outbound extensions of PostgreSQL (dblink, foreign data
  wrappers), functions that may reach them and views and foreign tables over them are
  refused.

Each test checks the database (and where it matters, the locks) before and after.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import sqlnb.adapters as adapters
from sqlnb import errors
from sqlnb.sql.guard import check_wrapped
from sqlnb.sql.statement import Statement, accept, unchecked
from tests.engines import PG_HOST, PGB_PASSWORD, PGB_USER, MySQLEnv, PostgresEnv, fooled_guard

PGB_SESSION_PORT, PGB_TX_PORT = 6432, 6433

# The review's attack: "1 -/**/- 1" is 1 minus minus 1 to the guard and to PostgreSQL,
# but "1 -- 1" once the comment is stripped, a line comment that swallows the quote that
# opens a string: what was checked as string content would run as code.
JOIN_ATTACK = (
    "SELECT 1 -/**/- 1 AS a, '\n) q; COMMIT; INSERT INTO t VALUES (666); "
    "DROP TABLE victim; SELECT * FROM (SELECT 1 AS a, NULL --'\nAS b WHERE false"
)
# the same class, other spellings of the join
JOIN_VARIANTS = (
    JOIN_ATTACK,
    JOIN_ATTACK.replace("-/**/-", "-/* x */-"),
    JOIN_ATTACK.replace("-/**/-", "-/*\n*/-"),
    "SELECT 2 -/**/- 1 AS a, '\n) q; INSERT INTO t VALUES (667); SELECT (SELECT 1 --' AS b WHERE false",
)

PG_SETUP = [
    "CREATE TABLE t (x int)",
    "CREATE TABLE victim (x int)",
    "INSERT INTO victim VALUES (1)",
    # a STABLE function that takes a session-level advisory lock (it outlives a rollback)
    "CREATE FUNCTION take_lock(k int) RETURNS int STABLE LANGUAGE sql "
    "AS 'SELECT 1 FROM (SELECT pg_advisory_lock(k)) s'",
    # ... and one that takes it, then fails
    "CREATE FUNCTION take_lock_then_fail(k int) RETURNS int STABLE LANGUAGE plpgsql "
    "AS $$BEGIN PERFORM pg_advisory_lock(k); RETURN 1 / 0; END$$",
]


def state(env) -> tuple:
    return (env.admin_query("SELECT count(*) FROM t"), env.admin_query("SELECT count(*) FROM victim"))


@pytest.fixture
def pgdb(workdir):
    env = PostgresEnv(workdir)
    env.create()
    env.admin(PG_SETUP)
    yield env
    env.drop()


@pytest.fixture
def mydb(workdir):
    env = MySQLEnv(workdir)
    env.create()
    env.admin(["CREATE TABLE t (x int)", "CREATE TABLE victim (x int)", "INSERT INTO victim VALUES (1)"])
    yield env
    env.drop()


def _pgbouncer(scheme: str, db: str, port: int) -> str:
    query = "?ssl=false" if scheme == "redshift" else ""
    return f"{scheme}://{PGB_USER}:{PGB_PASSWORD}@{PG_HOST}:{port}/{db}{query}"


def _pg_urls(env) -> dict[str, str]:
    return {
        "postgresql": env.url(),
        "postgresql-pgbouncer-tx": _pgbouncer("postgresql", env.db, PGB_TX_PORT),
        "redshift-pgbouncer-session": _pgbouncer("redshift", env.db, PGB_SESSION_PORT),
        "redshift-pgbouncer-tx": _pgbouncer("redshift", env.db, PGB_TX_PORT),
    }


PG_ROUTES = ("postgresql", "postgresql-pgbouncer-tx", "redshift-pgbouncer-session", "redshift-pgbouncer-tx")


# ---- 1. the text that was checked is the text that runs --------------------------------------

# (route, ADBC fast path): the fast path is PostgreSQL's only
ATTACK_ROUTES = [(r, False) for r in PG_ROUTES] + [("postgresql", True), ("postgresql-pgbouncer-tx", True)]


@pytest.mark.parametrize(
    "route,fast", ATTACK_ROUTES, ids=[f"{r}-{'adbc' if f else 'driver'}" for r, f in ATTACK_ROUTES]
)
def test_comment_join_attack_runs_as_one_harmless_query(pgdb, route, fast):
    """Through a read-only connection (capped as `sqlnb sql --readonly --limit 5` does, and
    uncapped) and through the agent's path (readonly=True with the row cap), on a
    read-write connection too: the statement runs as the engine reads it, one query with a
    string in it, and writes nothing."""
    url = _pg_urls(pgdb)[route]
    before = state(pgdb)
    ro = adapters.connect(url, readonly=True)
    rw = adapters.connect(url)
    try:
        for c in (ro, rw):
            if route.startswith("postgresql"):
                c.fast_path = fast
                c.fast_path_min_rows = 1 if fast else 10_000
        for sql in JOIN_VARIANTS:
            for kwargs in ({"max_rows": 5}, {}):
                res = ro.execute(sql, **kwargs)
                assert res.rows == [] and res.column_names == ["a", "b"], (sql, kwargs)
            res = rw.execute(sql, max_rows=5, readonly=True, timeout=10)  # the agent's call
            assert res.rows == [] and res.column_names == ["a", "b"]
            assert rw.execute(sql, max_rows=5).rows == []  # as written, on a writable one
    finally:
        ro.close()
        rw.close()
    assert state(pgdb) == before


def test_comment_join_attack_through_the_cli(pgdb):
    """`sqlnb sql --readonly --limit 5` prints the (empty) result and writes nothing."""
    before = state(pgdb)
    for extra in (["--limit", "5"], []):
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "sqlnb.cli",
                "sql",
                "--db",
                pgdb.url(),
                "--readonly",
                "--json",
                *extra,
                JOIN_ATTACK,
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONPATH": os.getcwd()},
        )
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["rows"] == []
    assert state(pgdb) == before


def test_statements_keep_comments_and_trailing_semicolons(pgdb):
    """What stripping used to make work still works, now with the text as written: a
    trailing line comment or semicolon on the ADBC path (COPY (...) TO STDOUT), the
    zero-row describe, the Redshift cursor."""
    sql = "SELECT 41 + /* one */ 1 AS answer -- the answer\n;  -- done"
    for route, url in _pg_urls(pgdb).items():
        for fast in (True, False):
            c = adapters.connect(url, readonly=True)
            try:
                if route.startswith("postgresql"):
                    c.fast_path, c.fast_path_min_rows = fast, 1
                assert c.execute(sql).rows == [(42,)], route
                assert c.execute(sql, max_rows=5).rows == [(42,)], route
                empty = c.execute("SELECT 1 AS one WHERE false -- none", max_rows=3)
                assert empty.rows == [] and empty.column_names == ["one"]
                if fast and route == "postgresql":
                    assert c.last_path == "adbc"
            finally:
                c.close()


def test_every_text_sent_is_the_checked_statement_or_its_checked_wrapper(pgdb, mydb, monkeypatch):
    """Every text that reaches a driver for a user's statement passes Adapter._sendable:
    recorded here, each holds the statement's text unchanged on lines of its own and is
    itself accepted by the guard as sent."""
    sent: list[tuple[str, str]] = []
    real = adapters.base.Adapter._sendable

    def spy(self, text):
        out = real(self, text)
        sent.append((self.dialect, out))
        return out

    monkeypatch.setattr(adapters.base.Adapter, "_sendable", spy)
    body = "SELECT x AS n, 'a -- b' AS s /* note */ FROM t"
    sql = body + " -- trailing\n;"
    pgdb.admin(["CREATE TABLE nums (v numeric(10, 2))", "INSERT INTO nums VALUES (1.25)"])
    for url in (*_pg_urls(pgdb).values(), mydb.url()):
        c = adapters.connect(url, readonly=True)
        try:
            if c.dialect == "postgres":
                for fast in (True, False):
                    c.fast_path, c.fast_path_min_rows = fast, 1
                    c.execute(sql)
                    c.execute(sql, max_rows=3)
                    c.execute("SELECT v FROM nums")  # the narrowed-numerics wrapper
            else:
                c.execute(sql)
                c.execute(sql, max_rows=3)
        finally:
            c.close()
    dialects = {d for d, _ in sent}
    assert dialects == {"postgres", "redshift", "mysql"}
    assert len(sent) >= 12
    for dialect, text in sent:
        assert "SELECT v FROM nums" in text or body in text, text
        if text not in (sql, "SELECT v FROM nums"):  # a wrapper: the statement on its own lines
            assert ("\n" + body + "\n") in text or "\nSELECT v FROM nums\n" in text, text
        assert check_wrapped(text, dialect).read_only, text


def test_sendable_refuses_a_changed_copy(pgdb):
    c = adapters.connect(pgdb.url(), readonly=True)
    try:
        stmt = accept("SELECT 1 -/**/- 1 AS a", "postgres")
        assert c._sendable(stmt) == "SELECT 1 -/**/- 1 AS a"
        for copy in (
            "SELECT 1 -- 1 AS a",
            str(stmt),
            stmt.replace("/**/", ""),
            stmt + " ",
            unchecked("SELECT 1", "postgres"),
            accept("SELECT 1", "mysql"),
        ):
            with pytest.raises(errors.ReadOnlyViolation):
                c._sendable(copy)
    finally:
        c.close()
    with pytest.raises(TypeError):
        Statement("SELECT 1")  # only accept() and unchecked() make one


def test_a_wrapper_of_an_accepted_statement_is_checked_again():
    stmt = accept("SELECT 1 AS a -- tail", "postgres")
    wrapped = stmt.wrap("SELECT * FROM (", ") AS q")
    assert wrapped == "SELECT * FROM (\nSELECT 1 AS a\n) AS q" and wrapped.accepted
    assert stmt.wrap("DECLARE sqlnb_cap_3 CURSOR FOR").accepted  # sqlnb's cursor, exactly
    for prefix, suffix in (
        ("DELETE FROM t WHERE x IN (", ")"),
        ("DECLARE other CURSOR WITH HOLD FOR", ""),
        ("SELECT * FROM (", ") AS q; DROP TABLE t"),
    ):
        with pytest.raises(errors.ReadOnlyViolation):
            stmt.wrap(prefix, suffix)
    my = accept("SELECT 1", "mysql")
    assert my.wrap("SET STATEMENT tx_read_only=1, sql_select_limit=6 FOR").accepted
    with pytest.raises(errors.ReadOnlyViolation):
        my.wrap("SET STATEMENT tx_read_only=0 FOR")


# ---- 2. one statement per call at the protocol level -----------------------------------------

RAW_MULTI = (
    "SELECT 1; COMMIT; INSERT INTO t VALUES (666)",
    "SELECT 1; DROP TABLE victim",
    "SELECT 1;\nINSERT INTO t VALUES (667);",
)


@pytest.mark.parametrize("route", PG_ROUTES)
def test_raw_multi_statement_fails_at_the_postgres_driver(pgdb, route):
    """Below the guard (a read-write connection runs what it is given; a read-only one
    with a fooled guard): the server refuses a second statement in one call."""
    url = _pg_urls(pgdb)[route]
    before = state(pgdb)
    rw = adapters.connect(url)
    ro = adapters.connect(url, readonly=True)
    try:
        for sql in RAW_MULTI:
            with pytest.raises(errors.SqlnbError) as info:
                rw.execute(sql)
            assert "multiple commands" in str(info.value.engine_message or info.value), info.value
            with pytest.raises(errors.SqlnbError) as info, fooled_guard():
                ro.execute(sql)
            assert "multiple commands" in str(info.value.engine_message or info.value), info.value
        with pytest.raises(errors.SqlnbError), fooled_guard():  # with parameters too
            rw.execute("SELECT :v; INSERT INTO t VALUES (668)", {"v": 1})
        assert rw.execute("SELECT 1 AS one").rows == [(1,)]  # the connection goes on
    finally:
        rw.close()
        ro.close()
    assert state(pgdb) == before


def test_raw_multi_statement_fails_at_the_mysql_driver(mydb):
    before = state(mydb)
    rw = adapters.connect(mydb.url())
    ro = adapters.connect(mydb.url(), readonly=True)
    try:
        for sql in RAW_MULTI:
            with pytest.raises(errors.SqlnbError):
                rw.execute(sql)
            with pytest.raises(errors.SqlnbError), fooled_guard():
                ro.execute(sql)
        assert rw.execute("SELECT 1 AS one").rows == [(1,)]
    finally:
        rw.close()
        ro.close()
    assert state(mydb) == before


def test_mysql_lexing_attack_is_refused_and_would_not_run(mydb):
    """MySQL's -- is a comment only before an ASCII space: the guard no longer reads
    U+00A0 as one, and the server would refuse the rest anyway (one statement per call)."""
    before = state(mydb)
    attack = "SELECT 1 --\u00a0x FROM (SELECT 5 AS \u00a0x) q; COMMIT; INSERT INTO t VALUES (666)"
    ro = adapters.connect(mydb.url(), readonly=True)
    rw = adapters.connect(mydb.url())
    try:
        with pytest.raises(errors.ReadOnlyViolation):
            ro.execute(attack)
        with pytest.raises(errors.ReadOnlyViolation):
            rw.execute(attack, readonly=True, max_rows=5)
        with pytest.raises(errors.SqlnbError), fooled_guard():
            ro.execute(attack)
        outfile = "SELECT 1 --\u00a0x INTO OUTFILE '/tmp/sqlnb_never.txt'"
        with pytest.raises(errors.ReadOnlyViolation):
            ro.execute(outfile)
    finally:
        ro.close()
        rw.close()
    assert state(mydb) == before
    assert not os.path.exists("/tmp/sqlnb_never.txt")


def test_guarded_mysql_parameters_are_bound_in_the_checked_text(mydb):
    """The driver would interpolate values after the guard's check: a guarded
    statement's values are literals in the text the guard reads, the same under every
    sql_mode."""
    mydb.admin(["INSERT INTO t VALUES (1), (2)"])
    ro = adapters.connect(mydb.url(), readonly=True)
    try:
        tricky = "x'); DROP TABLE victim; -- \\' \" \n"
        row = ro.execute(
            "SELECT :a AS a, :b AS b, :n AS n, :f AS f, :none AS z",
            {"a": tricky, "b": "plain 'quoted'", "n": 7, "f": 1.5, "none": None},
        ).rows
        assert row == [(tricky, "plain 'quoted'", 7, 1.5, None)]
        assert ro.execute("SELECT count(*) FROM t WHERE x > :v", {"v": 1}).rows == [(1,)]
        with pytest.raises(errors.UsageError):
            ro.execute("SELECT :v", {})
    finally:
        ro.close()
    assert state(mydb) == ([(2,)], [(1,)])


# ---- 4. effects that outlive the statement ---------------------------------------------------


def _advisory(env, key: int) -> int:
    return env.admin_query(
        f"SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = {key} AND granted"
    )[0][0]


@pytest.mark.parametrize("route", PG_ROUTES)
def test_advisory_locks_a_stable_function_takes_are_released(pgdb, route):
    """A STABLE function may take a session-level advisory lock, which a rollback keeps:
    it is released before the read-only transaction ends, on the same server session (so
    behind a transaction pooler too), also when the statement fails after taking it."""
    url = _pg_urls(pgdb)[route]
    ro = adapters.connect(url, readonly=True)
    rw = adapters.connect(url)
    try:
        assert ro.execute("SELECT take_lock(4201) AS a").rows == [(1,)]
        assert _advisory(pgdb, 4201) == 0
        assert ro.execute("SELECT take_lock(4202) AS a", max_rows=5).rows == [(1,)]
        assert _advisory(pgdb, 4202) == 0
        with pytest.raises(errors.SqlnbError):
            ro.execute("SELECT take_lock_then_fail(4203)")
        assert _advisory(pgdb, 4203) == 0
        # the agent's statement on a read-write connection: its lock goes ...
        assert rw.execute("SELECT take_lock(4204) AS a", readonly=True, max_rows=5).rows == [(1,)]
        assert _advisory(pgdb, 4204) == 0
        with pytest.raises(errors.SqlnbError):
            rw.execute("SELECT take_lock_then_fail(4205)", readonly=True)
        assert _advisory(pgdb, 4205) == 0
        if route == "postgresql":  # (a pooled session is not the user's to keep locks on)
            # ... the user's own lock stays, even when the agent's statement takes it again
            rw.execute("SELECT pg_advisory_lock(4206)")
            rw.execute("SELECT take_lock(4207), take_lock(4207), take_lock(4206)", readonly=True)
            assert _advisory(pgdb, 4206) == 1 and _advisory(pgdb, 4207) == 0
            rw.execute("SELECT pg_advisory_unlock(4206)")
    finally:
        ro.close()
        rw.close()


def test_mariadb_named_locks_a_function_takes_are_released(mydb):
    mydb.admin(["CREATE FUNCTION grab(n VARCHAR(64)) RETURNS INT READS SQL DATA RETURN GET_LOCK(n, 0)"])

    def held(name: str):
        return mydb.admin_query(f"SELECT IS_USED_LOCK('{name}')")[0][0]

    ro = adapters.connect(mydb.url(), readonly=True)
    rw = adapters.connect(mydb.url())
    try:
        ro.execute("SELECT grab('sqlnb_a') AS g")  # (the fast path's probe may take it first)
        assert held("sqlnb_a") is None
        assert ro.execute("SELECT grab('sqlnb_b') AS g", max_rows=2).rows == [(1,)]
        assert held("sqlnb_b") is None
        assert rw.execute("SELECT grab('sqlnb_c') AS g", readonly=True).rows == [(1,)]
        assert held("sqlnb_c") is None
        rw.execute("SELECT GET_LOCK('sqlnb_own', 0)")  # unguarded: the user's, kept
        assert held("sqlnb_own") is not None
    finally:
        ro.close()
        rw.close()


@pytest.fixture
def outbound(pgdb):
    """dblink installed in a schema of its own with a function renamed, a STABLE wrapper
    over it, a view over that, a foreign table through postgres_fdw and a view over it, a
    C function the database defines itself."""
    pgdb.admin(
        [
            "CREATE SCHEMA ext",
            "CREATE EXTENSION dblink SCHEMA ext",
            "ALTER FUNCTION ext.dblink_exec(text, text) RENAME TO harmless",
            f"CREATE FUNCTION quiet() RETURNS text STABLE LANGUAGE sql AS "
            f"$$SELECT ext.harmless('dbname={pgdb.db} host={PG_HOST} user=postgres', "
            f"'INSERT INTO t VALUES (666)')$$",
            "CREATE VIEW calm AS SELECT quiet() AS q",
            "CREATE VIEW calmer AS SELECT * FROM calm",
            "CREATE FUNCTION plain_double(i int) RETURNS int IMMUTABLE LANGUAGE sql AS 'SELECT i * 2'",
            "CREATE EXTENSION postgres_fdw",
            f"CREATE SERVER loop FOREIGN DATA WRAPPER postgres_fdw "
            f"OPTIONS (host '{PG_HOST}', dbname '{pgdb.db}')",
            "CREATE USER MAPPING FOR CURRENT_USER SERVER loop OPTIONS (user 'postgres')",
            "CREATE FOREIGN TABLE far_t (x int) SERVER loop OPTIONS (table_name 't')",
            "CREATE VIEW near AS SELECT * FROM far_t",
            "CREATE FUNCTION c_fn() RETURNS int8 STABLE LANGUAGE c AS '$libdir/dblink', "
            "'dblink_get_connections'",
        ]
    )
    return pgdb


@pytest.mark.parametrize("route", ["postgresql", "redshift-pgbouncer-tx"])
def test_outbound_extensions_and_what_reaches_them_are_refused(outbound, route):
    url = _pg_urls(outbound)[route]
    before = state(outbound)
    ro = adapters.connect(url, readonly=True)
    rw = adapters.connect(url)
    try:
        refused = {
            f"SELECT ext.harmless('dbname={outbound.db}', 'INSERT INTO t VALUES (1)')": "dblink",
            "SELECT ext.dblink_connect('x', 'dbname=postgres')": "dblink",
            "SELECT quiet()": "dblink",  # the database's own function, STABLE by its word
            "SELECT * FROM calm": "calm",
            "SELECT q FROM calmer": "calmer",
            "SELECT * FROM far_t": "foreign table",
            "SELECT count(*) FROM near": "foreign table",
            "SELECT c_fn()": "untrusted",
            "SELECT plain_double(2)": "dblink",
        }
        for sql, why in refused.items():
            for adapter, options in ((ro, {}), (rw, {"readonly": True})):
                with pytest.raises(errors.ReadOnlyViolation) as info:
                    adapter.execute(sql, **options)
                assert why in info.value.reason, (sql, info.value.reason)
        assert ro.execute("SELECT count(*) FROM victim").rows == [(1,)]  # the rest reads on
        assert rw.execute("SELECT count(*) FROM t", readonly=True).rows == [(0,)]
    finally:
        ro.close()
        rw.close()
    assert state(outbound) == before


def test_user_functions_and_views_still_run_without_outbound_extensions(pgdb):
    pgdb.admin(
        [
            "CREATE FUNCTION plain_double(i int) RETURNS int IMMUTABLE LANGUAGE sql AS 'SELECT i * 2'",
            "CREATE VIEW doubled AS SELECT plain_double(x) AS d FROM victim",
            'CREATE VIEW "Odd Name" AS SELECT 1 AS one',
        ]
    )
    ro = adapters.connect(pgdb.url(), readonly=True)
    try:
        assert ro.execute("SELECT plain_double(21)").rows == [(42,)]
        assert ro.execute("SELECT d FROM doubled").rows == [(2,)]
        assert ro.execute('SELECT one FROM "Odd Name"').rows == [(1,)]
    finally:
        ro.close()


def test_redshift_parameters_never_let_the_driver_rewrite_the_text(pgdb):
    """With parameters redshift_connector rewrites every '?' its own scanner finds outside
    a string: a statement where that scanner and the engine could disagree is refused, so
    the text sent stays the text checked."""
    rs = adapters.connect(_pg_urls(pgdb)["redshift-pgbouncer-session"], readonly=True)
    try:
        assert rs.execute('SELECT \'a?b\' AS q, "x" FROM (SELECT :v AS "x") s', {"v": 1}).rows == [("a?b", 1)]
        for sql in (
            "SELECT $$?$$ AS q, :v AS v",
            "SELECT :v AS v /* ? */",
            "SELECT :v AS v -- ?",
            "SELECT E'\\\\''?' AS q, :v AS v",
        ):
            with pytest.raises(errors.UsageError, match="'\\?'"):
                rs.execute(sql, {"v": 1})
    finally:
        rs.close()
