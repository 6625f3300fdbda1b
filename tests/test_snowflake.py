"""Snowflake adapter specifics, against the fakesnow stand-in (patched in by conftest).

- every fetch path (Arrow from the connector, ``fetch_pandas_all``, plain rows) gives the
  same Arrow table and DataFrame;
- what reaches the connector: connect arguments (role, warehouse, login timeout), the
  per-statement timeout, the cancel statement;
- error classification by the connector's error numbers;
- the catalog, including the SHOW ... KEYS route real Snowflake needs.
"""

from __future__ import annotations

import sqlnb.adapters as adapters  # before pandas: see sqlnb/__init__.py

# isort: split
from decimal import Decimal

import pandas as pd
import pytest

from sqlnb import errors
from sqlnb.adapters.snowflake import SnowflakeAdapter
from tests.engines import SnowflakeEnv

TYPED = (
    "CREATE TABLE typed (id INTEGER, amount NUMBER(12,2), big NUMBER(38,0), x FLOAT, "
    "s VARCHAR, b BOOLEAN, d DATE, tn TIMESTAMP_NTZ, tz TIMESTAMP_TZ, v VARIANT, o OBJECT, "
    "bin BINARY, t TIME)"
)
TYPED_ROWS = [
    "INSERT INTO typed SELECT 1, 12.50, 1234567, 1.5, 'héllo', TRUE, '2024-01-02', "
    "'2024-01-02 03:04:05.123456', '2024-01-02 03:04:05+02:00', PARSE_JSON('{\"a\": [1, 2]}'), "
    "OBJECT_CONSTRUCT('k', 1), TO_BINARY('00ff', 'HEX'), '12:34:56'",
    "INSERT INTO typed SELECT 2, -0.01, -5, -2.25, '', FALSE, '1970-01-01', '1999-12-31 23:59:59', "
    "'2000-01-01 00:00:00+00:00', PARSE_JSON('[]'), OBJECT_CONSTRUCT(), TO_BINARY('', 'HEX'), '00:00:00'",
    "INSERT INTO typed (id) VALUES (3)",
]
QUERY = "SELECT * FROM typed ORDER BY id"


@pytest.fixture(scope="module")
def db(workdir):
    env = SnowflakeEnv(workdir)
    env.create()
    env.admin([TYPED, *TYPED_ROWS])
    yield env
    env.drop()


@pytest.fixture
def conn(db, connect_to):
    return connect_to(db)


@pytest.fixture
def plain_conn(db, connect_to):
    return connect_to(db, arrow=False)


@pytest.fixture
def with_fetch_arrow_all(monkeypatch):
    """fakesnow has no fetch_arrow_all: give its cursor one that returns the DuckDB Arrow
    result, as the real connector returns Arrow from its result chunks."""
    from fakesnow.cursor import FakeSnowflakeCursor

    def fetch_arrow_all(self, force_return_table=False, force_microsecond_precision=False):
        return self._arrow_table

    monkeypatch.setattr(FakeSnowflakeCursor, "fetch_arrow_all", fetch_arrow_all, raising=False)


@pytest.mark.parametrize(
    "sql",
    [
        QUERY,
        "SELECT * FROM typed WHERE id < 0",
        "SELECT id, amount * 2 AS twice, s || '!' AS shout, d + 1 AS next_day FROM typed ORDER BY id",
    ],
)
def test_pandas_and_row_paths_agree(conn, plain_conn, sql):
    fast = conn.execute(sql)
    assert conn.last_path == "pandas"
    plain = plain_conn.execute(sql)
    assert plain_conn.last_path == "rows"
    assert fast.columns == plain.columns
    assert fast.arrow.schema == plain.arrow.schema and fast.arrow.equals(plain.arrow)
    pd.testing.assert_frame_equal(fast.to_pandas(), plain.to_pandas())


def test_arrow_path_agrees(conn, plain_conn, with_fetch_arrow_all):
    fast = conn.execute(QUERY)
    assert conn.last_path == "arrow"
    plain = plain_conn.execute(QUERY)
    assert fast.arrow.equals(plain.arrow)
    pd.testing.assert_frame_equal(fast.to_pandas(), plain.to_pandas())


def test_types_and_values(conn):
    r = conn.execute(QUERY)
    assert {c.name: c.type for c in r.columns} == {
        "ID": "number(38,0)",
        "AMOUNT": "number(12,2)",
        "BIG": "number(38,0)",
        "X": "float",
        "S": "varchar",
        "B": "boolean",
        "D": "date",
        "TN": "timestamp_ntz",
        "TZ": "timestamp_tz",
        "V": "variant",
        "O": "variant",
        "BIN": "binary",
        "T": "time",
    }
    schema = r.arrow.schema
    assert str(schema.field("AMOUNT").type) == "decimal128(38, 2)" and str(schema.field("ID").type) == "int64"
    assert (
        str(schema.field("TZ").type) == "timestamp[us, tz=UTC]"
        and str(schema.field("TN").type) == "timestamp[us]"
    )
    df = r.to_pandas()
    first = df.iloc[0]
    assert first["AMOUNT"] == Decimal("12.50") and first["X"] == 1.5 and first["S"] == "héllo"
    assert first["TN"] == pd.Timestamp("2024-01-02 03:04:05.123456")
    assert first["TZ"] == pd.Timestamp("2024-01-02 01:04:05", tz="UTC")
    assert first["V"] == '{"a":[1,2]}' and first["O"] == '{"k":1}' and first["BIN"] == b"\x00\xff"
    assert df.iloc[2].drop("ID").isna().all()


def test_big_integers_with_nulls_are_not_rounded(conn, db):
    db.admin(["CREATE TABLE bigs (n NUMBER(38,0))", "INSERT INTO bigs VALUES (12345678901234567), (NULL)"])
    try:
        r = conn.execute("SELECT n FROM bigs ORDER BY n")
        assert r.rows[0][0] == 12345678901234567  # through pandas it would be ...568
        assert conn.last_path == "rows"
    finally:
        db.admin(["DROP TABLE bigs"])


def test_row_cap_and_dml(conn, db):
    r = conn.execute(QUERY, max_rows=2)
    assert r.row_count == 2 and r.truncated and conn.last_path == "rows"
    db.admin(["CREATE TABLE scratch (n INTEGER)"])
    try:
        r = conn.execute("INSERT INTO scratch VALUES (1), (2), (3)")
        assert r.row_count == 3 and not r.returns_rows
        r = conn.execute("UPDATE scratch SET n = n + 1 WHERE n > 1")
        assert r.row_count == 2 and not r.returns_rows
        r = conn.execute("DELETE FROM scratch")
        assert r.row_count == 3 and not r.returns_rows
    finally:
        db.admin(["DROP TABLE scratch"])


def test_parameters_are_bound(conn):
    r = conn.execute("SELECT s FROM typed WHERE id = :i AND s LIKE :p", {"i": 1, "p": "h%"})
    assert r.rows == [("héllo",)]


# ---- what reaches the connector ------------------------------------------------------


def test_connect_arguments(db, monkeypatch):
    import snowflake.connector

    seen = {}
    real = snowflake.connector.connect

    def spy(**kwargs):
        seen.update(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(snowflake.connector, "connect", spy)
    c = adapters.connect(
        f"snowflake://tester:S3cr3t-pw@fakeaccount/{db.db}/PUBLIC?warehouse=TEST_WH&role=READER",
        readonly=True,
        connect_timeout=7,
    )
    try:
        assert seen["user"] == "tester" and seen["password"] == "S3cr3t-pw"
        assert seen["account"] == "fakeaccount" and seen["database"] == db.db and seen["schema"] == "PUBLIC"
        assert seen["warehouse"] == "TEST_WH" and seen["role"] == "READER" and seen["login_timeout"] == 7
        assert "S3cr3t-pw" not in repr(c) and "role=READER" in repr(c)
        with pytest.raises(errors.TableNotFound) as info:
            c.execute("SELECT * FROM nowhere")
        assert "S3cr3t-pw" not in str(info.value) + (info.value.engine_message or "")
    finally:
        c.close()


def test_statement_timeout_travels_with_each_statement(db, monkeypatch):
    from fakesnow.cursor import FakeSnowflakeCursor

    calls = []
    real = FakeSnowflakeCursor.execute

    def spy(self, command, params=None, *args, **kwargs):
        calls.append((command, kwargs))
        return real(self, command, params, *args, **kwargs)

    monkeypatch.setattr(FakeSnowflakeCursor, "execute", spy)
    c = adapters.connect(db.url(), statement_timeout=2.5)
    try:
        c.execute("SELECT 1")
        c.execute("SELECT 2", timeout=10)
    finally:
        c.close()
    mine = [kw for cmd, kw in calls if cmd in ("SELECT 1", "SELECT 2")]
    assert mine[0]["_statement_params"] == {"MULTI_STATEMENT_COUNT": 1, "STATEMENT_TIMEOUT_IN_SECONDS": 3}
    assert mine[0]["timeout"] == 4
    assert mine[1]["_statement_params"] == {"MULTI_STATEMENT_COUNT": 1, "STATEMENT_TIMEOUT_IN_SECONDS": 10}


def test_cancel_uses_system_cancel_all_queries_on_real_sessions(conn, monkeypatch):
    from fakesnow.cursor import FakeSnowflakeCursor

    calls = []
    monkeypatch.setattr(
        FakeSnowflakeCursor,
        "execute",
        lambda self, command, params=None, *a, **kw: calls.append((command, params)),
    )
    monkeypatch.setattr(conn.conn, "session_id", 4242, raising=False)
    conn._running = object()  # as while a statement is in flight
    conn.cancel()
    assert calls == [("SELECT SYSTEM$CANCEL_ALL_QUERIES(%s)", (4242,))]


@pytest.mark.parametrize(
    "errno, msg, kind",
    [
        (
            250001,
            "Failed to connect to DB: x.snowflakecomputing.com:443. Incorrect username or password "
            "was specified.",
            errors.AuthenticationFailed,
        ),
        (
            604,
            "SQL execution was cancelled by the client due to a timeout. Error message received from "
            "the server: SQL execution canceled",
            errors.QueryTimeout,
        ),
        (
            630,
            "Statement reached its statement or warehouse timeout of 1 second(s) and was canceled.",
            errors.QueryTimeout,
        ),
        (604, "SQL execution canceled", errors.QueryCancelled),
        (
            2003,
            "SQL compilation error: Object 'NOPE' does not exist or not authorized.",
            errors.TableNotFound,
        ),
        (
            904,
            "SQL compilation error: error line 1 at position 7 invalid identifier 'NOPE'",
            errors.ColumnNotFound,
        ),
        (
            1003,
            "SQL compilation error: syntax error line 1 at position 0 unexpected 'SELEKT'.",
            errors.SQLSyntaxError,
        ),
        (
            3001,
            "SQL access control error: Insufficient privileges to operate on table 'T'",
            errors.PermissionDenied,
        ),
        (100038, "Numeric value 'abc' is not recognized", errors.TypeMismatch),
        (250003, "Failed to get the response. Hanging?", errors.ConnectFailed),
    ],
)
def test_errors_by_number(conn, errno, msg, kind):
    from snowflake.connector.errors import ProgrammingError

    err = conn.classify(ProgrammingError(msg=msg, errno=errno, sqlstate="42000"))
    assert type(err) is kind and err.engine_message


# ---- catalog -------------------------------------------------------------------------


def test_catalog_types_keys_and_views(conn, db):
    db.admin(
        [
            "CREATE TABLE parent (a INTEGER, b INTEGER, label VARCHAR(10) DEFAULT 'x', PRIMARY KEY (a, b), "
            "UNIQUE (label))",
            "CREATE TABLE child (id INTEGER PRIMARY KEY, pa INTEGER, pb INTEGER, "
            "FOREIGN KEY (pa, pb) REFERENCES parent (a, b))",
            "COMMENT ON TABLE parent IS 'parents'",
            "CREATE VIEW v_child AS SELECT id FROM child",
        ]
    )
    try:
        cat = conn.catalog(refresh=True)
        assert cat.default_schema == "PUBLIC"
        parent, child = cat.find("parent"), cat.find("child")
        assert parent.primary_key == ["A", "B"] and ["LABEL"] in parent.unique and parent.comment == "parents"
        assert parent.column("label").type == "varchar(10)" and "x" in parent.column("label").default
        assert parent.column("a").type == "number(38,0)" and parent.column("a").nullable is False
        fk = child.foreign_keys[0]
        assert (fk.columns, fk.ref_table, fk.ref_columns) == (["PA", "PB"], "PARENT", ["A", "B"])
        assert cat.find("v_child").kind == "view" and [c.name for c in cat.find("v_child").columns] == ["ID"]
        assert cat.find("typed").row_count == 3
    finally:
        db.admin(["DROP VIEW v_child", "DROP TABLE child", "DROP TABLE parent"])


@pytest.mark.engines(["snowflake"])
@pytest.mark.notyet(
    ["snowflake"],
    reason="fakesnow has no SHOW PRIMARY/UNIQUE/IMPORTED KEYS IN DATABASE, "
    "real Snowflake's only source of key columns (it has no "
    "KEY_COLUMN_USAGE view)",
)
def test_catalog_keys_from_show_commands(engine, seeded, monkeypatch):
    monkeypatch.setattr(
        SnowflakeAdapter,
        "_constraints",
        lambda self, cur, database: self._constraints_from_show(cur, database),
    )
    c = adapters.connect(seeded.url())
    try:
        cat = c.catalog()
        customers, orders = cat.find("customers"), cat.find("orders")
        assert customers.primary_key == ["ID"] and ["EMAIL"] in customers.unique
        fk = orders.foreign_keys[0]
        assert (fk.columns, fk.ref_table, fk.ref_columns) == (["CUSTOMER_ID"], "CUSTOMERS", ["ID"])
    finally:
        c.close()


# ---- read-only ---------------------------------------------------------------------


def test_readonly_standin_layer(db):
    c = adapters.connect(db.url(), readonly=True)
    try:
        assert c.execute("SELECT count(*) FROM typed").rows == [(3,)]

        def execute_classified(sql):
            try:
                c._execute(sql, None, None, None)
            except errors.SqlnbError:
                raise
            except Exception as exc:
                raise c.classify(exc) from None

        for sql in (
            "INSERT INTO typed (id) VALUES (9)",
            "CREATE TABLE sneaky (x INTEGER)",
            "CREATE TEMPORARY TABLE sneaky_tmp (x INTEGER)",
            "DROP TABLE typed",
        ):
            with pytest.raises(errors.SqlnbError):
                execute_classified(sql)
        assert c.execute("SELECT count(*) FROM typed").rows == [(3,)]  # usable afterwards
    finally:
        c.close()
    assert db.admin_query("SELECT count(*) FROM typed") == [(3,)]
