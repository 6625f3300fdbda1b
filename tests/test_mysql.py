"""MySQL/MariaDB adapter specifics: the C extension, the connectorx fast path agreeing with
the driver path, what keeps a query off the fast path, timeouts/cancel/read-only on the
fast path, the read-only session's second mechanisms, connect errors and secrets.

Runs against the MariaDB of ``scripts/services.sh`` (127.0.0.1:3306, user sqlnb).
"""

from __future__ import annotations

import os
import signal
import threading
import uuid
from decimal import Decimal
from urllib.parse import quote

import sqlnb.adapters as adapters  # before pandas: see sqlnb/__init__.py

# isort: split
import pandas as pd
import pytest

from sqlnb import errors
from sqlnb.sql.statement import unchecked
from tests.engines import MY_HOST, MY_PASSWORD, MY_PORT, MY_USER, MySQLEnv, fooled_guard
from tests.test_contract import assert_within_2_s, later

pytestmark = pytest.mark.timeout(120)

LONG = "SELECT count(*) FROM seq_1_to_100000000000 WHERE seq % 7 = 3"

TYPED = """CREATE TABLE typed (
  id INT PRIMARY KEY,
  n_int INT NULL,
  big BIGINT UNSIGNED,
  small SMALLINT,
  amount DECIMAL(12,2),
  ratio DECIMAL(20,10),
  dt DATETIME(6),
  ts TIMESTAMP NULL,
  d DATE,
  j JSON,
  bl BLOB,
  vb VARBINARY(16),
  vc VARCHAR(50),
  flag TINYINT(1),
  b BOOLEAN,
  x DOUBLE,
  yr YEAR,
  e ENUM('red', 'green'),
  txt TEXT,
  ch CHAR(3)
)"""
TYPED_ROWS = [
    "INSERT INTO typed VALUES (1, 7, 18446744073709551615, -3, 12.50, 0.1234567891, "
    "'2024-01-02 03:04:05.123456', '2024-01-02 03:04:05', '2024-01-02', '{\"a\": [1, 2]}', "
    "x'00ff10', x'0102', 'héllo wörld', 1, TRUE, 1.5, 2024, 'green', 'long text', 'abc')",
    "INSERT INTO typed VALUES (2, NULL, 0, 0, -99999.99, -1.0000000001, '1999-12-31 23:59:59', "
    "'2038-01-19 03:14:07', '1970-01-01', '[]', x'', x'', '', 0, FALSE, -0.0, 1901, 'red', '', 'x')",
    "INSERT INTO typed (id) VALUES (3)",
]


@pytest.fixture(scope="module")
def db():
    env = MySQLEnv(None)
    env.create()
    env.admin(
        [
            TYPED,
            *TYPED_ROWS,
            "CREATE TABLE wide (t TIME, d3012 DECIMAL(30,12), st SET('b', 'a'), bits BIT(9), fl FLOAT)",
            "INSERT INTO wide VALUES ('-01:30:00', 123456789012345678.123456789012, 'a,b', b'100000001', 0.1), "
            "('100:00:00', NULL, '', NULL, NULL)",
            "CREATE TABLE counter (n INT)",
            "INSERT INTO counter VALUES (0)",
            "CREATE FUNCTION bump() RETURNS INT MODIFIES SQL DATA "
            "BEGIN UPDATE counter SET n = n + 1; RETURN 1; END",
        ]
    )
    yield env
    env.drop()


@pytest.fixture
def conn(db, connect_to):
    return connect_to(db)


@pytest.fixture
def plain_conn(db, connect_to):
    return connect_to(db, arrow=False)


@pytest.fixture
def ro_conn(db, connect_to):
    return connect_to(db, readonly=True)


@pytest.fixture
def cx_calls(monkeypatch):
    """Count calls of connectorx.read_sql (to know which path a failing query took)."""
    import connectorx

    calls = []
    real = connectorx.read_sql

    def spy(*args, **kwargs):
        calls.append(args[1] if len(args) > 1 else kwargs.get("query"))
        return real(*args, **kwargs)

    monkeypatch.setattr(connectorx, "read_sql", spy)
    return calls


# ---- the driver --------------------------------------------------------------------


def test_c_extension_is_used(conn):
    assert conn.c_extension
    assert type(conn.conn).__name__ == "CMySQLConnection"
    assert conn.is_mariadb and "mariadb" in conn.server_version.lower()


def test_pure_python_fallback_when_the_extension_cannot_load(db, monkeypatch):
    """In a notebook that imported pandas before sqlnb the extension cannot load (see
    sqlnb/__init__.py): the adapter says so and works on the pure-Python driver."""
    import mysql.connector

    real = mysql.connector.connect

    def no_cext(*args, use_pure=False, **kwargs):
        if not use_pure:
            raise ImportError("MySQL Connector/Python C Extension not available")
        return real(*args, use_pure=True, **kwargs)

    monkeypatch.setattr(mysql.connector, "connect", no_cext)
    with pytest.warns(RuntimeWarning, match="C extension"):
        c = adapters.connect(db.url())
    try:
        assert not c.c_extension and type(c.conn).__name__ == "MySQLConnection"
        monkeypatch.setattr(mysql.connector, "connect", real)
        ref = adapters.connect(db.url(), arrow=False)
        try:
            for sql in ("SELECT * FROM typed ORDER BY id", "SELECT * FROM wide"):
                got, want = c.execute(sql), ref.execute(sql)
                assert got.arrow.equals(want.arrow), sql
                assert got.columns == want.columns
            assert c.execute("SELECT id FROM typed ORDER BY id", max_rows=2).rows == [(1,), (2,)]
            # the pure-Python driver knows DECIMAL scales too, so big results keep the fast path
            probe = unchecked("SELECT amount FROM typed", "mysql")
            assert c._probe(probe)[0].decimals == ref._probe(probe)[0].decimals
            got = c.execute("SELECT id, amount FROM typed ORDER BY id")
            assert c.last_path == "connectorx"
            assert got.arrow.equals(ref.execute("SELECT id, amount FROM typed ORDER BY id").arrow)
        finally:
            ref.close()
    finally:
        c.close()


# ---- both paths give the same DataFrame ---------------------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM typed ORDER BY id",
        "SELECT * FROM typed WHERE id < 0",
        "SELECT id, amount * 2 AS twice, amount / 3 AS third, sum(x) OVER () AS total, "
        "CAST(dt AS DATE) AS day, concat(vc, '!') AS shout, n_int + 1 AS next FROM typed ORDER BY id",
    ],
)
def test_fast_and_plain_paths_agree(conn, plain_conn, sql):
    fast = conn.execute(sql)
    assert conn.last_path == "connectorx"
    plain = plain_conn.execute(sql)
    assert plain_conn.last_path == "driver"
    assert fast.columns == plain.columns
    assert fast.arrow.schema == plain.arrow.schema
    assert fast.arrow.equals(plain.arrow)
    pd.testing.assert_frame_equal(fast.to_pandas(), plain.to_pandas())
    capped = conn.execute(sql, max_rows=100)  # a row cap takes the driver path
    assert conn.last_path == "driver"
    pd.testing.assert_frame_equal(fast.to_pandas(), capped.to_pandas())


def test_canonical_values_and_types(conn):
    r = conn.execute("SELECT * FROM typed ORDER BY id")
    types = {c.name: c.type for c in r.columns}
    assert types["id"] == "int" and types["big"] == "bigint unsigned" and types["amount"] == "decimal"
    assert types["dt"] == "datetime" and types["ts"] == "timestamp" and types["d"] == "date"
    assert types["vb"] == "varbinary" and types["bl"] == "blob" and types["vc"] == "varchar"
    assert types["flag"] == "tinyint" and types["x"] == "double" and types["e"] == "enum"
    row = dict(zip(r.column_names, r.rows[0], strict=True))  # exact values, as Arrow holds them
    assert row["amount"] == Decimal("12.50") and str(row["amount"]) == "12.50"
    assert row["ratio"] == Decimal("0.1234567891") and row["big"] == 18446744073709551615
    df = r.to_pandas()
    first = df.iloc[0]
    assert first["amount"] == Decimal("12.50") and first["big"] == 18446744073709551615
    assert first["dt"] == pd.Timestamp("2024-01-02 03:04:05.123456")
    assert str(df["dt"].dtype) == "datetime64[us]" and str(df["ts"].dtype) == "datetime64[us]"
    assert first["j"] == '{"a": [1, 2]}' and first["bl"] == b"\x00\xff\x10" and first["vb"] == b"\x01\x02"
    assert first["vc"] == "héllo wörld" and first["flag"] == 1 and first["b"] == 1
    assert first["x"] == 1.5 and first["yr"] == 2024 and first["e"] == "green"
    assert pd.isna(df["n_int"][1]) and df["n_int"][0] == 7  # NULL ints: float64 with NaN
    assert df.iloc[2].drop("id").isna().all()  # the all-NULL row
    assert str(r.arrow.schema.field("amount").type) == "decimal128(38, 2)"
    assert str(r.arrow.schema.field("flag").type) == "int64"  # the canonical width
    assert str(r.arrow.schema.field("big").type) == "uint64"


def test_types_connectorx_gets_wrong_stay_on_the_driver(conn):
    r = conn.execute("SELECT * FROM wide")
    assert conn.last_path == "driver"
    rows = r.rows
    assert rows[0][0] == pd.Timedelta(hours=-1, minutes=-30) and rows[1][0] == pd.Timedelta(hours=100)
    assert rows[0][1] == Decimal("123456789012345678.123456789012")  # connectorx rounds to 10 places
    assert rows[0][2] == "a,b" and rows[0][3] == 257 and rows[0][4] == 0.1
    assert conn.execute("SELECT NULL AS nothing").rows == [(None,)]
    assert conn.last_path == "driver"


def test_parameters_and_duplicate_names_take_the_driver(conn):
    assert conn.execute("SELECT vc FROM typed WHERE id = :i", {"i": 1}).rows == [("héllo wörld",)]
    assert conn.last_path == "driver"
    r = conn.execute("SELECT 1 AS a, 2 AS a")
    assert conn.last_path == "driver" and r.rows == [(1, 2)]


def test_session_state_keeps_queries_off_connectorx(db):
    c = adapters.connect(db.url())
    try:
        utc = c.execute("SELECT ts FROM typed WHERE id = 1").rows[0][0]
        assert c.last_path == "connectorx"
        c.execute("SET time_zone = '+05:00'")
        shifted = c.execute("SELECT ts FROM typed WHERE id = 1").rows[0][0]
        assert c.last_path == "driver" and (shifted - utc).total_seconds() == 5 * 3600
    finally:
        c.close()
    c = adapters.connect(db.url())
    try:
        c.execute("CREATE TEMPORARY TABLE typed (only_here INT)")
        r = c.execute("SELECT * FROM typed")
        assert c.last_path == "driver" and r.column_names == ["only_here"]
    finally:
        c.close()
    c = adapters.connect(db.url())
    try:
        c.execute("SET @v = 41")
        assert c.execute("SELECT @v + 1 AS answer").rows == [(42,)]
        assert c.last_path == "driver"
    finally:
        c.close()


def test_unreachable_connectorx_falls_back_once_and_quickly(db, monkeypatch, caplog, cx_calls):
    """connectorx retries a failing connect for 30 s: the adapter gives it the connect
    timeout once (the query is answered by the driver while connectorx still retries),
    then keeps the connection on the driver without asking connectorx again."""
    c = adapters.connect(db.url(), connect_timeout=1)
    try:
        monkeypatch.setattr(c, "_cx_url", lambda: f"mysql://{MY_USER}:{quote(MY_PASSWORD)}@127.0.0.1:1/x")
        assert c.execute("SELECT id FROM typed ORDER BY id").rows == [(1,), (2,), (3,)]
        assert c.last_path == "driver" and cx_calls == ["SELECT 1 AS ok"]  # the reachability check
        checking = [t for t in threading.enumerate() if t.name == "sqlnb-connectorx-check"]
        assert checking and checking[0].is_alive()  # answered without waiting for connectorx
        c.execute("SELECT id FROM typed ORDER BY id")
        assert c.last_path == "driver" and cx_calls == ["SELECT 1 AS ok"]  # not tried again
        assert "connectorx cannot reach" in caplog.text and MY_PASSWORD not in caplog.text
    finally:
        c.close()


# ---- timeouts, cancel and interrupts on the fast path -------------------------------


def test_fast_path_statement_timeout(db, cx_calls):
    c = adapters.connect(db.url(), statement_timeout=1)
    try:
        with pytest.raises(errors.QueryTimeout):  # LONG would run for hours
            c.execute(LONG)
        assert cx_calls and "max_statement_time=1" in cx_calls[-1]
        assert c.execute("SELECT 1 AS one").rows == [(1,)]
    finally:
        c.close()


def test_fast_path_cancel_from_another_thread(conn, cx_calls):
    at = later(conn.cancel)
    with pytest.raises(errors.QueryCancelled):
        conn.execute(LONG, timeout=60)
    assert_within_2_s(at)
    assert len(cx_calls) == 2 and "/* sqlnb:" in cx_calls[1]  # after the one reachability check
    assert conn.execute("SELECT id FROM typed ORDER BY id").rows == [(1,), (2,), (3,)]


def test_fast_path_kernel_interrupt(conn, cx_calls):
    at = later(os.kill, os.getpid(), signal.SIGINT)
    with pytest.raises(errors.QueryCancelled):
        conn.execute(LONG, timeout=60)
    assert_within_2_s(at)
    assert len(cx_calls) == 2 and "/* sqlnb:" in cx_calls[1]
    assert conn.execute("SELECT 1 AS one").rows == [(1,)]


def test_driver_path_interrupt_while_fetching_leaves_connection_usable(conn):
    at = later(conn.cancel, delay=0.3)
    with pytest.raises(errors.QueryCancelled):
        conn.execute("SELECT a.seq, b.seq FROM seq_1_to_100000 a, seq_1_to_100000 b", max_rows=10**10)
    assert_within_2_s(at)
    assert conn.execute("SELECT 1 AS one", max_rows=5).rows == [(1,)]


# ---- read-only ---------------------------------------------------------------------


def test_readonly_fast_path_runs_in_a_read_only_transaction(ro_conn, db, cx_calls):
    r = ro_conn.execute("SELECT id, amount FROM typed ORDER BY id")
    assert ro_conn.last_path == "connectorx" and r.row_count == 3
    assert "tx_read_only=1" in cx_calls[-1]
    # a function that writes passes the guard (it cannot see inside) but not the session
    with pytest.raises(errors.PermissionDenied):
        ro_conn.execute("SELECT bump() AS b FROM typed")
    assert db.admin_query("SELECT n FROM counter") == [(0,)]


def test_readonly_session_cannot_be_switched_back(ro_conn, db):
    """Past a fooled guard: a statement that switches the session back to read-write
    leaves the next one read-only (each runs as SET STATEMENT tx_read_only=1 FOR ...)."""
    with fooled_guard():
        ro_conn.execute("SET SESSION TRANSACTION READ WRITE")
        with pytest.raises(errors.PermissionDenied):
            ro_conn.execute("INSERT INTO counter VALUES (5)")

        def switch_back_then_write():
            ro_conn.execute("SET tx_read_only = 0")
            ro_conn.execute("UPDATE counter SET n = 9")

        with pytest.raises(errors.SqlnbError):
            switch_back_then_write()
    assert db.admin_query("SELECT n FROM counter") == [(0,)]


def test_readonly_refuses_server_file_writes(ro_conn, tmp_path):
    target = f"/tmp/sqlnb_outfile_{uuid.uuid4().hex}.txt"
    for sql in (f"SELECT 1 INTO OUTFILE '{target}'", f"SELECT 'x' INTO DUMPFILE '{target}'"):
        with pytest.raises(errors.ReadOnlyViolation):
            ro_conn.execute(sql)
        with pytest.raises(errors.ReadOnlyViolation), fooled_guard():  # past the guard
            ro_conn.execute(sql)
    assert not os.path.exists(target)


# ---- catalog -------------------------------------------------------------------------


def test_catalog_details_from_a_fixed_number_of_queries(db):
    db.admin(
        [
            "CREATE TABLE parent (a INT, b INT, label VARCHAR(10) DEFAULT 'x' COMMENT 'the label', "
            "PRIMARY KEY (a, b), UNIQUE KEY uq_label (label)) COMMENT 'parents'",
            "CREATE TABLE child (id INT PRIMARY KEY, pa INT, pb INT, KEY ix_p (pb, pa), "
            "CONSTRAINT fk_parent FOREIGN KEY (pa, pb) REFERENCES parent (a, b))",
            "CREATE VIEW v_child AS SELECT id FROM child",
        ]
    )
    c = adapters.connect(db.url())
    try:

        def questions():
            return int(c.execute("SHOW SESSION STATUS LIKE 'Questions'").rows[0][1])

        before = questions()
        cat = c.catalog(refresh=True)
        used = questions() - before - 1
        assert used <= 6  # SELECT DATABASE() + tables, columns, keys, indexes
        assert cat.default_schema == db.db
        parent, child = cat.find("parent"), cat.find("child")
        assert parent.primary_key == ["a", "b"] and ["label"] in parent.unique
        assert parent.comment == "parents" and parent.column("label").comment == "the label"
        assert parent.column("label").type == "varchar(10)" and "x" in parent.column("label").default
        assert parent.column("a").nullable is False and parent.column("a").default is None
        fk = child.foreign_keys[0]
        assert (fk.name, fk.columns, fk.ref_table, fk.ref_columns) == (
            "fk_parent",
            ["pa", "pb"],
            "parent",
            ["a", "b"],
        )
        ix = {i.name: i for i in child.indexes}
        assert ix["ix_p"].columns == ["pb", "pa"] and not ix["ix_p"].unique and ix["PRIMARY"].unique
        assert cat.find("v_child").kind == "view" and cat.find("v_child").row_count is None
        assert isinstance(cat.find("typed").row_count, int)
    finally:
        c.close()
        db.admin(["DROP VIEW v_child", "DROP TABLE child", "DROP TABLE parent"])


# ---- connecting, errors and secrets -------------------------------------------------


def test_wrong_password_is_authentication_failed_without_the_password(db):
    secret = "Wr0ng-" + uuid.uuid4().hex
    url = f"mysql://{MY_USER}:{secret}@{MY_HOST}:{MY_PORT}/{db.db}"
    with pytest.raises(errors.AuthenticationFailed) as info:
        adapters.connect(url)
    err = info.value
    for text in (str(err), err.message, err.engine_message or "", repr(err)):
        assert secret not in text
    assert "***" in err.message or secret not in err.message


def test_server_down_is_connect_failed_quickly():
    with pytest.raises(errors.ConnectFailed) as info:
        adapters.connect(f"mysql://{MY_USER}:{MY_PASSWORD}@127.0.0.1:1/x", connect_timeout=3)
    assert MY_PASSWORD not in str(info.value) and "127.0.0.1:1" in str(info.value)
    assert "(111)" in info.value.message  # refused at once (ECONNREFUSED), no timeout waited


def test_unknown_database_is_connect_failed():
    with pytest.raises(errors.ConnectFailed):
        adapters.connect(
            f"mysql://{MY_USER}:{MY_PASSWORD}@{MY_HOST}:{MY_PORT}/no_such_db_{uuid.uuid4().hex[:6]}"
        )


def test_errors_by_errno(conn, db):
    with pytest.raises(errors.TypeMismatch):
        conn.execute("INSERT INTO counter VALUES ('not a number')")
    with pytest.raises(errors.TableNotFound) as info:
        conn.execute("SELECT * FROM typo_table")
    assert "typo_table" in info.value.engine_message
    with pytest.raises(errors.ColumnNotFound):
        conn.execute("SELECT nope FROM typed")  # raised through connectorx's error
    with pytest.raises(errors.SQLSyntaxError):
        conn.execute("SELECT FROM WHERE")


def test_special_character_password_reaches_connectorx_and_stays_secret(db, caplog):
    user = f"sqlnb_t_{uuid.uuid4().hex[:8]}"
    password = "p@ss:w/rd%+#?&=" + uuid.uuid4().hex[:6]
    db.admin(
        [
            f"CREATE USER '{user}'@'127.0.0.1' IDENTIFIED BY '{password}'",
            f"GRANT SELECT ON `{db.db}`.* TO '{user}'@'127.0.0.1'",
        ]
    )
    try:
        url = f"mysql://{user}:{quote(password, safe='')}@{MY_HOST}:{MY_PORT}/{db.db}"
        c = adapters.connect(url)
        try:
            caplog.set_level("DEBUG")
            assert c.execute("SELECT id FROM typed ORDER BY id").rows == [(1,), (2,), (3,)]
            assert c.last_path == "connectorx"
            texts = [repr(c), repr(c.spec), c._scrub(c._cx_url())]
            for sql in ("SELECT * FROM nowhere", "INSERT INTO counter VALUES (1)"):
                with pytest.raises(errors.SqlnbError) as info:
                    c.execute(sql)
                texts += [str(info.value), info.value.engine_message or ""]
            texts.append(caplog.text)
            for text in texts:
                assert password not in text and quote(password, safe="") not in text
        finally:
            c.close()
    finally:
        db.admin([f"DROP USER '{user}'@'127.0.0.1'"])
