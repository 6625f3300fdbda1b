"""Safety of the Snowflake adapter, against the fakesnow stand-in (patched in by conftest).

- One statement per call: every statement goes with ``MULTI_STATEMENT_COUNT = 1`` (the
  service's own refusal of a second statement), and a text of several statements is
  refused before the connector sees it, because fakesnow runs every statement it is given
  whatever that parameter says.
- Parameters of a guarded statement: the connector would interpolate ``%(name)s`` values
  into the text after the guard's check, so their literals are in the text the guard
  reads, and the connector sends that text unchanged; the results are those of the
  unguarded statement.

Each test checks the tables before and after.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

import sqlnb.adapters as adapters
from sqlnb import errors
from tests.engines import SnowflakeEnv, fooled_guard

RAW_MULTI = (
    "SELECT 1; COMMIT; INSERT INTO t VALUES (666)",
    "SELECT 1; DROP TABLE victim",
    "SELECT 1; SELECT 2",
    "SELECT 1;\nINSERT INTO t VALUES (667);",
)


@pytest.fixture
def db(workdir):
    env = SnowflakeEnv(workdir)
    env.create()
    env.admin(
        [
            "CREATE TABLE t (x INTEGER, s VARCHAR)",
            "CREATE TABLE victim (x INTEGER)",
            "INSERT INTO victim VALUES (1)",
            "INSERT INTO t VALUES (1, 'héllo'), (2, 'it''s'), (3, 'back\\\\slash')",
        ]
    )
    yield env
    env.drop()


def state(env) -> tuple:
    return (env.admin_query("SELECT x, s FROM t ORDER BY x"), env.admin_query("SELECT count(*) FROM victim"))


@pytest.fixture
def sent(monkeypatch):
    """What reaches the connector: (command, params, keyword arguments) of every execute."""
    from fakesnow.cursor import FakeSnowflakeCursor

    calls: list[tuple] = []
    real = FakeSnowflakeCursor.execute

    def spy(self, command, params=None, *args, **kwargs):
        calls.append((command, params, kwargs))
        return real(self, command, params, *args, **kwargs)

    monkeypatch.setattr(FakeSnowflakeCursor, "execute", spy)
    return calls


def test_fakesnow_runs_every_statement_it_is_given(db):
    """Why the adapter counts statements itself: the stand-in ignores MULTI_STATEMENT_COUNT
    (real Snowflake refuses such a text)."""
    import snowflake.connector

    con = snowflake.connector.connect(
        user="tester", password="x", account="fakeaccount", database=db.db, schema=db.schema
    )
    try:
        con.cursor().execute(
            "SELECT 1; INSERT INTO t VALUES (99, 'raw')", _statement_params={"MULTI_STATEMENT_COUNT": 1}
        )
    finally:
        con.close()
    assert (99, "raw") in db.admin_query("SELECT x, s FROM t")


def test_raw_multi_statement_is_refused_before_the_connector(db, sent):
    before = state(db)
    rw = adapters.connect(db.url())
    ro = adapters.connect(db.url(), readonly=True)
    try:
        for sql in RAW_MULTI:
            with pytest.raises(errors.UsageError, match="none of them ran"):
                rw.execute(sql)
            with pytest.raises(errors.SqlnbError), fooled_guard():  # the agent's path, guard fooled
                rw.execute(sql, readonly=True)
            with pytest.raises(errors.ReadOnlyViolation, match="statements"):
                ro.execute(sql)
            with pytest.raises(errors.SqlnbError), fooled_guard():
                ro.execute(sql)
        with pytest.raises(errors.UsageError):  # with parameters too
            rw.execute("SELECT :v; INSERT INTO t VALUES (668)", {"v": 1})
        assert not [c for c in sent if c[0] in RAW_MULTI or "668" in c[0]]  # none reached it
        assert rw.execute("SELECT count(*) FROM t").rows == [(3,)]  # the connection goes on
    finally:
        rw.close()
        ro.close()
    assert state(db) == before


def test_every_statement_goes_with_multi_statement_count_one(db, sent):
    conn = adapters.connect(db.url(), statement_timeout=2.5)
    try:
        texts = [
            "SELECT 1 AS one; -- a comment after the semicolon",
            "SELECT 1 AS one;;",
            "SELECT 1 AS one ; /* a */ ; -- b",
        ]
        for text in texts:
            assert conn.execute(text).rows == [(1,)]
            assert conn.execute(text, readonly=True, timeout=10).rows == [(1,)]
        mine = [c for c in sent if c[0] in texts]
        assert [c[0] for c in mine] == [t for t in texts for _ in (0, 1)]  # sent as written
        assert [c[2]["_statement_params"] for c in mine] == [
            {"MULTI_STATEMENT_COUNT": 1, "STATEMENT_TIMEOUT_IN_SECONDS": 3},
            {"MULTI_STATEMENT_COUNT": 1, "STATEMENT_TIMEOUT_IN_SECONDS": 10},
        ] * len(texts)
    finally:
        conn.close()
    untimed = adapters.connect(db.url(), statement_timeout=0)
    try:
        untimed.execute("SELECT 2 AS two")
    finally:
        untimed.close()
    assert sent[-1][0] == "SELECT 2 AS two"
    assert sent[-1][2]["_statement_params"] == {"MULTI_STATEMENT_COUNT": 1}


TRICKY = "x'); DROP TABLE victim; -- \\' \" %s %(s)s \n\r end"
VALUES = {
    "a": TRICKY,
    "b": "plain 'quoted'",
    "n": 7,
    "f": 1.5,
    "none": None,
    "yes": True,
    "d": dt.date(2024, 1, 2),
    "ts": dt.datetime(2024, 1, 2, 3, 4, 5, 6),
    "dec": Decimal("12.50"),
    "bin": b"\x00\xff",
}
SELECT_ALL = (
    "SELECT :a AS a, :b AS b, :n AS n, :f AS f, :none AS z, :yes AS y, :d AS d, "
    ":ts AS ts, :dec AS dec, :bin AS bin, '100%' AS pct"
)


def test_guarded_parameters_are_bound_in_the_checked_text(db, sent):
    before = state(db)
    rw = adapters.connect(db.url())
    ro = adapters.connect(db.url(), readonly=True)
    try:
        plain = rw.execute(SELECT_ALL, VALUES).rows
        assert plain[0][0] == TRICKY and plain[0][1] == "plain 'quoted'" and plain[0][-1] == "100%"
        for conn, kw in ((ro, {}), (rw, {"readonly": True, "max_rows": 10})):
            del sent[:]
            assert conn.execute(SELECT_ALL, VALUES, **kw).rows == plain
            ((command, params, _),) = [c for c in sent if "AS pct" in c[0]]
            assert params is None  # nothing left for the connector to interpolate
            assert "%(a)s" not in command and ":a" not in command
            assert command.startswith("SELECT 'x\\'); DROP TABLE victim;")  # inside a string
        for conn, kw in ((ro, {}), (rw, {"readonly": True})):
            assert conn.execute(
                "SELECT s FROM t WHERE x = :i AND s LIKE :p", {"i": 1, "p": "h%"}, **kw
            ).rows == [("héllo",)]
            assert conn.execute(
                "SELECT x FROM t WHERE x IN (:ids) ORDER BY x", {"ids": [1, 3]}, **kw
            ).rows == [(1,), (3,)]
            assert conn.execute("SELECT x FROM t WHERE s = :s", {"s": "it's"}, **kw).rows == [(2,)]
            assert conn.execute("SELECT x FROM t WHERE s = :s", {"s": "back\\slash"}, **kw).rows == [(3,)]
            with pytest.raises(errors.UsageError, match="No value for parameter :missing"):
                conn.execute("SELECT :missing", {}, **kw)
            with pytest.raises(errors.UsageError, match="cannot be sent"):
                conn.execute("SELECT :o", {"o": object()}, **kw)
            with pytest.raises(errors.UsageError, match="no SQL literal"):
                conn.execute("SELECT :f", {"f": float("nan")}, **kw)
    finally:
        rw.close()
        ro.close()
    assert state(db) == before


def test_a_value_cannot_turn_into_code(db):
    before = state(db)
    ro = adapters.connect(db.url(), readonly=True)
    try:
        for value in (
            "'; DROP TABLE victim; --",
            "\\'; DROP TABLE victim; --",
            "\\",
            "'",
            "''",
            "$$; DROP TABLE victim; $$",
            "*/ DROP TABLE victim /*",
            "\n-- x\n",
        ):
            assert ro.execute("SELECT :v AS v", {"v": value}).rows == [(value,)], value
    finally:
        ro.close()
    assert state(db) == before
