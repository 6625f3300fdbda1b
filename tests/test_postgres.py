"""PostgreSQL and Redshift specifics: the two fetch paths agree, session state, cancel,
timeouts, connect failures and the pg_catalog catalog."""

from __future__ import annotations

import os
import re
import signal
import socket
import threading
import time
from decimal import Decimal

import pandas as pd
import pyarrow as pa
import pytest

import sqlnb.adapters as adapters
from sqlnb import errors
from sqlnb.sql.statement import accept, unchecked
from tests.engines import PG_HOST, PGB_PASSWORD, PGB_PORT, PGB_USER, PostgresEnv, RedshiftEnv, fooled_guard
from tests.test_contract import assert_within_2_s, later

TYPED_DDL = """
CREATE TABLE typed (
    id integer PRIMARY KEY, i2 smallint, i4 integer, i8 bigint,
    n numeric, n2 numeric(12, 3), f4 real, f8 double precision,
    b boolean, t text, vc varchar(20), c char(3), nm name,
    d date, ts timestamp, tstz timestamptz, tm time,
    u uuid, j json, jb jsonb, by bytea)
"""
TYPED_ROWS = """
INSERT INTO typed VALUES
 (1, 1, 10, 10000000000, 1.5, 12.345, 1.25, 2.5, true, 'Ada', 'x', 'ab', 'n1',
  '2024-01-02', '2024-01-02 03:04:05.123456', '2024-01-02 03:04:05.5+02', '12:34:56.789',
  'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"a": [1, 2], "b": null}', '{"k": "v", "n": 1.50}', '\\x00ff10'),
 (2, -32768, -2147483648, -9223372036854775808, -123456789.000001, -999999999.999, -0.5, -1e300, false,
  'Grâce ✓', '', 'a', 'n2', '1970-01-01', '1999-12-31 23:59:59', '1999-12-31 23:59:59-08', '00:00:00',
  '00000000-0000-0000-0000-000000000000', '[]', '[1, "two", {"3": true}]', ''),
 (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
 (4, 32767, 2147483647, 9223372036854775807, 0, 0, 'NaN', 'Infinity', true, 'line1
line2', 'tab	sep', 'xyz', 'n4', '2400-02-29', '0001-01-01 00:00:00', '2262-04-11 23:47:16Z', '23:59:59.999999',
  'ffffffff-ffff-ffff-ffff-ffffffffffff', '"just a string"', 'null', '\\xdeadbeef')
"""


@pytest.fixture(scope="module")
def pg(workdir):
    env = PostgresEnv(workdir)
    env.create()
    env.admin(
        [
            TYPED_DDL,
            TYPED_ROWS,
            "CREATE TABLE wide AS SELECT i AS id, (i * 1.5)::float8 AS f, 'row ' || i AS t, "
            "timestamp '2024-01-01' + i * interval '1 minute' AS ts, (i / 7.0)::numeric(12, 2) AS n "
            "FROM generate_series(1, 50000) i",
            "CREATE SEQUENCE seq",
        ]
    )
    yield env
    env.drop()


@pytest.fixture
def conn(pg, connect_to):
    return connect_to(pg)


def both_paths(c, sql, **kw):
    """The same statement through the ADBC fast path and through plain psycopg."""
    fast = c.execute(sql, **kw)
    assert c.last_path == "adbc", "the fast path should have taken this query"
    c.fast_path = False
    try:
        plain = c.execute(sql, **kw)
        assert c.last_path == "psycopg"
    finally:
        c.fast_path = True
    return fast, plain


def assert_same(fast, plain):
    assert fast.columns == plain.columns
    assert fast.arrow.schema == plain.arrow.schema, (fast.arrow.schema, plain.arrow.schema)
    assert fast.row_count == plain.row_count and fast.truncated == plain.truncated
    pd.testing.assert_frame_equal(fast.to_pandas(), plain.to_pandas())
    assert _nan_safe(fast.rows) == _nan_safe(plain.rows)


def _nan_safe(rows):
    return [tuple("NaN" if isinstance(v, float) and v != v else v for v in row) for row in rows]


# ---------------------------------------------------------------------------
# The two fetch paths give the same result
# ---------------------------------------------------------------------------


def test_fast_and_plain_paths_give_the_same_dataframe(conn):
    fast, plain = both_paths(conn, "SELECT * FROM typed ORDER BY id")
    assert_same(fast, plain)
    df = fast.to_pandas()
    assert df["i4"].isna().tolist() == [False, False, True, False]
    # decimals that fit 15 significant digits become float64 (exactly), wider ones stay Decimal
    assert df["n"][0] == 1.5 and df["n2"][0] == 12.345 and str(df["n2"].dtype) == "float64"
    assert fast.rows[0][fast.column_names.index("n2")] == Decimal("12.345")
    assert df["j"][0] == '{"a": [1, 2], "b": null}' and df["jb"][0] == '{"k": "v", "n": 1.50}'
    assert df["u"][0] == "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
    assert df["by"][0] == b"\x00\xff\x10"
    assert str(df["tstz"].dtype).endswith("UTC]")
    assert df["tstz"][0] == pd.Timestamp("2024-01-02 01:04:05.5", tz="UTC")
    schema = fast.arrow.schema
    assert schema.field("i2").type == pa.int64() and schema.field("f4").type == pa.float64()
    assert schema.field("n2").type == pa.decimal128(12, 3)
    assert pa.types.is_decimal(schema.field("n").type)
    types = {c.name: c.type for c in fast.columns}
    assert types["i4"] == "integer" and types["n"] == "numeric" and types["n2"] == "numeric"
    assert types["tstz"] == "timestamp with time zone" and types["ts"] == "timestamp without time zone"
    assert types["vc"] == "character varying" and types["jb"] == "jsonb" and types["b"] == "boolean"


def test_paths_agree_in_another_session_time_zone(pg):
    c = adapters.connect(pg.url() + "?options=-c%20TimeZone%3DAmerica/New_York")
    try:
        assert c.execute("SHOW TimeZone").rows == [("America/New_York",)]
        assert_same(*both_paths(c, "SELECT id, ts, tstz, d FROM typed ORDER BY id"))
    finally:
        c.close()


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT id, n, n2 FROM typed WHERE id < 0",  # no rows: the types still agree
        "SELECT NULL::numeric AS a, NULL::integer AS b, NULL::timestamptz AS c",
        "SELECT 1.5::numeric AS a UNION ALL SELECT 'NaN' UNION ALL SELECT NULL",
        "SELECT '-Infinity'::numeric AS a, 'Infinity'::numeric AS b",
        "SELECT 12345678901234567890123456789012345678901234.5::numeric AS wide, "
        "0.000000000000000000001::numeric AS tiny",
        "SELECT 1 AS x, 2 AS x, 'a' AS \"?column?\"",
        "SELECT * FROM wide ORDER BY id",
    ],
)
def test_paths_agree(conn, sql):
    assert_same(*both_paths(conn, sql))


def test_narrow_numerics_travel_as_float8_and_come_back_exact(pg, conn):
    """numeric(p <= 15, s) columns are read through float8 on the fast path; every value
    comes back digit for digit, in the query's order, equal to the plain path."""
    import random

    rnd = random.Random(7)
    rows = []
    for i in range(3000):
        a = f"{rnd.randint(-(10**10), 10**10 - 1) / 100:.2f}"
        b = f"{rnd.randint(-(10**15) + 1, 10**15 - 1) / 10**6:.6f}"
        rows.append(f"({i}, {a}, {b}, {'NULL' if i % 17 == 0 else a})")
    pg.admin(
        [
            "CREATE TABLE narrow (id int, a numeric(12, 2), b numeric(15, 6), c numeric(12, 2))",
            "INSERT INTO narrow VALUES " + ", ".join(rows),
        ]
    )
    sql = "SELECT id, a, b, c, a + 1 AS a1, b * 2 AS wide FROM narrow ORDER BY id DESC -- a trailing comment"
    wrapped = conn._narrow_numerics(unchecked(sql, "postgres"))
    assert wrapped is not None and sorted(wrapped[1]) == [1, 2, 3]  # a + 1, b * 2: unconstrained
    fast, plain = both_paths(conn, sql)
    assert_same(fast, plain)
    assert [r[0] for r in fast.rows] == list(range(2999, -1, -1))
    assert [str(r[1]) for r in fast.rows[:3]] == [r.split(", ")[1] for r in reversed(rows[-3:])]
    assert fast.arrow.schema.field("b").type == pa.decimal128(15, 6)
    # duplicate names cannot be wrapped: the query runs as written
    assert conn._narrow_numerics(unchecked("SELECT a, a FROM narrow", "postgres")) is None
    dup_fast, dup_plain = both_paths(conn, "SELECT a, a FROM narrow ORDER BY id")
    assert_same(dup_fast, dup_plain)


def test_numeric_values_survive_both_paths(pg, conn):
    """Every declared scale, and unconstrained numerics of mixed scales, digit for digit."""
    cols = ", ".join(f"s{k} numeric(20, {k})" for k in range(16))
    values = [
        "0",
        "1",
        "1.01",
        "1.012",
        "1.0123",
        "1.01234",
        "1.012345",
        "1.0123456",
        "1.01234567",
        "1.012345678",
        "1.0123456789",
        "-98765.4321",
        "12345.000001",
        "0.00001",
        "-0.5",
    ]
    pg.admin(
        [f"CREATE TABLE nums (id serial, {cols}, free numeric)"]
        + [
            f"INSERT INTO nums ({', '.join(f's{k}' for k in range(16))}, free) VALUES "
            f"({', '.join([v] * 16)}, {v})"
            for v in values
        ]
    )
    fast, plain = both_paths(conn, "SELECT * FROM nums ORDER BY id")
    assert_same(fast, plain)
    truth = conn.execute(
        "SELECT " + ", ".join(f"s{k}::text" for k in range(16)) + ", free::text FROM nums ORDER BY id", {}
    )
    for got, want in zip(fast.rows, truth.rows, strict=True):
        for k, (value, text) in enumerate(zip(got[1:], want, strict=True)):
            assert value == Decimal(text), (k, value, text)
            if k < 16:
                assert value.as_tuple().exponent == -k  # numeric(20, k) keeps its scale


def test_max_rows_on_both_paths(conn):
    conn.fast_path_min_rows = 100  # let the fast path stream a capped query
    fast, plain = both_paths(conn, "SELECT * FROM wide ORDER BY id", max_rows=1000)
    assert fast.truncated and fast.row_count == 1000
    assert_same(fast, plain)
    fast, plain = both_paths(conn, "SELECT * FROM wide WHERE id <= 1000 ORDER BY id", max_rows=1000)
    assert not fast.truncated
    assert_same(fast, plain)
    # below the threshold, psycopg streams: a huge result stops early (fetching its 2.5e9
    # rows would not end within the test's timeout) and the session is fine
    r = conn.execute("SELECT a.id FROM wide a, wide b", max_rows=5)
    assert conn.last_path == "psycopg" and r.truncated and r.row_count == 5
    assert conn.execute("SELECT 1").rows == [(1,)]


def test_types_the_fast_path_does_not_convert_run_on_psycopg(conn):
    r = conn.execute("SELECT ARRAY[1, 2] AS a, interval '1 day' AS i, 1 AS n")
    assert conn.last_path == "psycopg"
    assert r.rows[0][2] == 1
    assert [c.type for c in r.columns] == ["integer[]", "interval", "integer"]
    conn.execute("SELECT 1")
    assert conn.last_path == "adbc"  # the fallback does not switch the fast path off


def test_arrow_option_off_forces_psycopg(pg):
    c = adapters.connect(pg.url(), arrow=False)
    try:
        assert c.execute("SELECT count(*) FROM typed").rows == [(4,)]
        assert c.last_path == "psycopg" and c._adbc_conn is None
    finally:
        c.close()


def test_user_defined_type_names_are_looked_up(pg, conn):
    pg.admin(["CREATE TYPE mood AS ENUM ('sad', 'happy')"])
    r = conn.execute("SELECT 'happy'::mood AS m")
    assert r.columns[0].type == "mood" and r.rows == [("happy",)]


def test_parameters_use_psycopg(conn):
    r = conn.execute("SELECT id FROM typed WHERE t = :name AND :pct = '%'", {"name": "Ada", "pct": "%"})
    assert conn.last_path == "psycopg" and r.rows == [(1,)]


@pytest.mark.parametrize(
    "setup, check",
    [
        ("SET search_path TO pg_catalog", "SELECT current_setting('search_path')"),
        ("CREATE TEMP TABLE scratch AS SELECT 41 + 1 AS x", "SELECT x FROM scratch"),
        ("BEGIN", "SELECT 1"),
        ("PREPARE p AS SELECT 1", "SELECT 1"),
        ("SELECT set_config('sqlnb.x', 'y', false)", "SELECT current_setting('sqlnb.x')"),
    ],
)
def test_session_state_switches_the_fast_path_off(pg, setup, check):
    c = adapters.connect(pg.url())
    try:
        c.execute("SELECT 1")
        assert c.last_path == "adbc"
        c.execute(setup)
        r = c.execute(check)
        assert c.last_path == "psycopg"
        if "scratch" in check:
            assert r.rows == [(42,)]
        if "sqlnb.x" in check:
            assert r.rows == [("y",)]
        if "search_path" in check:
            assert r.rows == [("pg_catalog",)]
    finally:
        c.close()


def test_writes_do_not_switch_the_fast_path_off(pg):
    c = adapters.connect(pg.url())
    try:
        c.execute("CREATE TABLE w (x integer)")
        c.execute("INSERT INTO w VALUES (1)")
        c.execute("SELECT * FROM w")
        assert c.last_path == "adbc"
        c.execute("DROP TABLE w")
    finally:
        c.close()


# ---------------------------------------------------------------------------
# Sessions, timeouts, cancel
# ---------------------------------------------------------------------------


def test_readonly_session_refuses_nextval_on_both_connections(pg):
    c = adapters.connect(pg.url(), readonly=True)
    try:
        with pytest.raises(errors.ReadOnlyViolation):
            c.execute("SELECT nextval('seq')")
        for run in (
            lambda: c._execute_psycopg(accept("SELECT nextval('seq')", "postgres"), None, None, 30),
            lambda: c._execute_adbc(accept("SELECT nextval('seq')", "postgres"), None, 30),
        ):
            with (
                pytest.raises(Exception, match="read-only transaction") as info,
                fooled_guard(),  # past the guard
            ):
                run()
            err = c.classify(info.value)
            assert isinstance(err, errors.PermissionDenied), err
            assert "read-only" in err.message
        assert c.execute("SELECT count(*) FROM typed").rows == [(4,)]
    finally:
        c.close()
    assert pg.admin_query("SELECT last_value, is_called FROM seq") == [(1, False)]


SLOW_READ = "SELECT count(*) FROM generate_series(1, 2000000000) i"


def test_timeout_on_the_fast_path_and_per_statement_timeouts(pg):
    c = adapters.connect(pg.url(), statement_timeout=30)
    try:
        with pytest.raises(errors.QueryTimeout, match="1 s"):  # the per-statement 1 s, not 30
            c.execute(SLOW_READ, timeout=1)
        assert c.last_path == "adbc"
        with pytest.raises(errors.QueryTimeout):
            c.execute("SELECT pg_sleep(5)", timeout=0.5)
        assert c.last_path == "psycopg"
        # back to the connection's 30 s on both connections
        assert c.execute("SELECT current_setting('statement_timeout')").rows == [("30s",)]
        assert c.last_path == "adbc"
        c.fast_path = False
        assert c.execute("SELECT current_setting('statement_timeout')").rows == [("30s",)]
    finally:
        c.close()


def test_no_timeout(pg):
    c = adapters.connect(pg.url(), statement_timeout=0)
    try:
        assert c.execute("SHOW statement_timeout").rows == [("0",)]
    finally:
        c.close()


def test_cancel_on_the_fast_path(conn):
    at = later(conn.cancel)
    with pytest.raises(errors.QueryCancelled):
        conn.execute(SLOW_READ, timeout=60)
    assert_within_2_s(at)
    assert conn.last_path == "adbc"
    assert conn.execute("SELECT 1").rows == [(1,)]


def test_kernel_interrupt_on_the_fast_path(conn):
    at = later(os.kill, os.getpid(), signal.SIGINT)
    with pytest.raises(errors.QueryCancelled):
        conn.execute(SLOW_READ, timeout=60)
    assert_within_2_s(at)
    assert conn.execute("SELECT 1").rows == [(1,)]


@pytest.mark.parametrize(
    "sql, kind",
    [
        ("SELECT 'abc'::integer", errors.TypeMismatch),
        ("SELECT 1 + 'a'::text", errors.TypeMismatch),
        ("SELECT nosuch FROM typed", errors.ColumnNotFound),
        ("SELECT * FROM nosuch.typed", errors.TableNotFound),
        ("SELECT 1 FROM", errors.SQLSyntaxError),
    ],
)
@pytest.mark.parametrize("fast", [True, False])
def test_errors_on_both_paths(conn, sql, kind, fast):
    conn.fast_path = fast
    with pytest.raises(kind) as info:
        conn.execute(sql)
    assert info.value.engine_message and "SQLSTATE" not in info.value.message
    assert conn.execute("SELECT 1").rows == [(1,)]


def test_permission_denied(pg):
    pg.admin(
        [
            "DO $$BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'sqlnb_nopriv') "
            "THEN CREATE ROLE sqlnb_nopriv LOGIN; END IF; END$$"
        ]
    )
    c = adapters.connect(pg.url().replace("postgres@", "sqlnb_nopriv@"))
    try:
        for fast in (True, False):
            c.fast_path = fast
            with pytest.raises(errors.PermissionDenied, match="permission denied"):
                c.execute("SELECT * FROM typed")
    finally:
        c.close()


def test_close_closes_both_connections(pg):
    def sessions():
        return pg.admin_query(
            f"SELECT count(*) FROM pg_stat_activity WHERE datname = '{pg.db}' AND application_name = 'sqlnb'"
        )[0][0]

    before = sessions()
    c = adapters.connect(pg.url())
    c.execute("SELECT 1")
    assert c.last_path == "adbc" and sessions() == before + 2
    c.close()
    deadline = time.monotonic() + 30  # the server notices the closed sockets asynchronously
    while sessions() != before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sessions() == before


def test_postgresql_through_pgbouncer(pg):
    """PgBouncer refuses startup options: read-only and the timeout are SET after connecting."""
    c = adapters.connect(
        _pgbouncer_url("postgresql", PGB_PASSWORD, pg.db), readonly=True, statement_timeout=1
    )
    try:
        assert c.execute("SELECT current_setting('transaction_read_only')").rows == [("on",)]
        for fast in (True, False):
            c.fast_path = fast
            with pytest.raises(errors.QueryTimeout):
                c.execute(SLOW_READ)
            assert c.last_path == ("adbc" if fast else "psycopg")
            threading.Timer(0.5, c.cancel).start()
            with pytest.raises(errors.QueryCancelled):
                c.execute(SLOW_READ, timeout=60)
        c.fast_path = True
        threading.Timer(0.5, c.cancel).start()
        with pytest.raises(errors.QueryCancelled):
            c.execute(SLOW_READ, timeout=60)
        assert c.last_path == "adbc"
        c._cancel_requested = False  # execute() resets it; this bypasses execute()

        def nextval_classified():
            try:
                c._execute_psycopg(accept("SELECT nextval('seq')", "postgres"), None, None, 1)
            except Exception as exc:
                raise c.classify(exc) from None

        with pytest.raises(errors.PermissionDenied), fooled_guard():
            nextval_classified()
        assert c.execute("SELECT count(*) FROM typed").rows == [(4,)]
    finally:
        c.close()


# ---------------------------------------------------------------------------
# Connecting
# ---------------------------------------------------------------------------


def _pgbouncer_url(scheme: str, password: str, db: str) -> str:
    url = f"{scheme}://{PGB_USER}:{password}@{PG_HOST}:{PGB_PORT}/{db}"
    return url + ("?ssl=false" if scheme == "redshift" else "")


@pytest.mark.parametrize("scheme", ["postgresql", "redshift"])
def test_wrong_password_through_pgbouncer(pg, scheme):
    bad = "Wr0ng-secret-pw"
    with pytest.raises(errors.AuthenticationFailed) as info:
        adapters.connect(_pgbouncer_url(scheme, bad, pg.db))
    text = str(info.value) + repr(info.value) + (info.value.engine_message or "")
    assert bad not in text and "***" in str(info.value)
    good = adapters.connect(_pgbouncer_url(scheme, PGB_PASSWORD, pg.db))
    try:
        assert good.execute("SELECT count(*) FROM typed").rows == [(4,)]
        assert PGB_PASSWORD not in repr(good)
    finally:
        good.close()


@pytest.mark.parametrize("scheme", ["postgresql", "redshift"])
def test_server_down_fails_fast(scheme):
    with pytest.raises(errors.ConnectFailed) as info:
        adapters.connect(
            _pgbouncer_url(scheme, "pw-not-shown", "db").replace(f":{PGB_PORT}/", ":1/"), connect_timeout=5
        )
    assert "refused" in info.value.message.lower()  # at once, not after the connect timeout
    assert "pw-not-shown" not in str(info.value)


@pytest.fixture
def silent_server():
    """A port that accepts TCP connections and never says a word."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    yield srv.getsockname()[1]
    srv.close()


@pytest.mark.parametrize("scheme", ["postgresql", "redshift"])
def test_connect_timeout_is_honoured(scheme, silent_server):
    url = _pgbouncer_url(scheme, "not-in-messages", "db").replace(f":{PGB_PORT}/", f":{silent_server}/")
    # the server never answers: only the connect timeout can end the attempt (without it
    # the test would hang until pytest's timeout)
    with pytest.raises(errors.ConnectFailed) as info:
        adapters.connect(url, connect_timeout=2)
    assert re.search(r"time ?out|timed out", info.value.message, re.I), info.value.message


@pytest.mark.parametrize("scheme", ["postgresql", "redshift"])
def test_unknown_url_parameter(scheme):
    with pytest.raises(errors.ConfigurationError, match="nosuchoption"):
        adapters.connect(
            _pgbouncer_url(scheme, "x", "db") + ("&" if scheme == "redshift" else "?") + "nosuchoption=1"
        )


def test_url_parameters_pass_through(pg):
    c = adapters.connect(pg.url() + "?application_name=my-notebook&sslmode=disable")
    try:
        assert c.execute("SELECT current_setting('application_name')").rows == [("my-notebook",)]
    finally:
        c.close()


# ---------------------------------------------------------------------------
# Catalog
# ---------------------------------------------------------------------------

CATALOG_DDL = [
    "CREATE SCHEMA sales",
    "CREATE TABLE sales.region (code char(2), country text, name text NOT NULL, "
    "PRIMARY KEY (code, country), UNIQUE (name))",
    "CREATE TABLE public.shop (id serial PRIMARY KEY, code char(2), country text, "
    "opened date DEFAULT current_date, FOREIGN KEY (country, code) REFERENCES sales.region (country, code))",
    "COMMENT ON TABLE public.shop IS 'Shops'",
    "COMMENT ON COLUMN public.shop.opened IS 'Opening day'",
    "CREATE INDEX shop_lower_idx ON public.shop (lower(country), code)",
    "INSERT INTO sales.region SELECT 'r' || (i % 10), 'c' || i, 'n' || i FROM generate_series(1, 500) i",
    "ANALYZE sales.region",
    "CREATE MATERIALIZED VIEW sales.region_count AS SELECT count(*) AS n FROM sales.region",
    "CREATE TABLE measurements (at date NOT NULL, v float8) PARTITION BY RANGE (at)",
    "CREATE TABLE measurements_2024 PARTITION OF measurements "
    "FOR VALUES FROM ('2024-01-01') TO ('2025-01-01')",
]


@pytest.mark.parametrize("env_class", [PostgresEnv, RedshiftEnv], ids=["postgresql", "redshift"])
def test_catalog_details(workdir, env_class):
    env = env_class(workdir)
    env.create()
    try:
        env.admin(CATALOG_DDL)
        c = adapters.connect(env.url())
        try:
            c.execute("CREATE TABLE not_analyzed (x int)")
            cat = c.catalog()
            assert cat.default_schema == "public"
            assert {"public", "sales"} <= set(cat.schemas)
            assert not any(s.startswith("pg_") or s == "information_schema" for s in cat.schemas)
            region = cat.find("sales.region")
            assert region.primary_key == ["code", "country"]
            assert region.unique == [["name"]]
            assert region.row_count == 500
            assert region.column("code").type == "character(2)"
            assert region.column("name").nullable is False
            shop = cat.find("shop")
            assert shop.comment == "Shops" and shop.column("opened").comment == "Opening day"
            assert shop.column("opened").default == "CURRENT_DATE"
            assert "nextval" in shop.column("id").default
            fk = shop.foreign_keys[0]
            assert (fk.columns, fk.ref_schema, fk.ref_table, fk.ref_columns) == (
                ["country", "code"],
                "sales",
                "region",
                ["country", "code"],
            )
            idx = {i.name: i for i in shop.indexes}
            assert idx["shop_lower_idx"].columns == ["lower(country)", "code"]
            assert idx["shop_pkey"].unique and idx["shop_pkey"].columns == ["id"]
            assert cat.find("region_count").kind == "view"
            assert cat.find("not_analyzed").row_count is None
            names = {t.name for t in cat.tables}
            if env_class is PostgresEnv:
                assert "measurements" in names and "measurements_2024" not in names
        finally:
            c.close()
    finally:
        env.drop()


def test_catalog_includes_own_temp_tables(conn):
    conn.execute("CREATE TEMP TABLE mine (x integer)")
    assert conn.catalog(refresh=True).find("mine") is not None


def test_catalog_of_1000_tables_takes_a_fixed_number_of_queries(workdir):
    """Set-based: the same handful of catalog queries for 1,000 tables as for one (the
    speed itself is measured by benchmarks/run.py catalog)."""
    env = PostgresEnv(workdir)
    env.create()
    try:
        cols = ", ".join(f"c{j} {'integer' if j % 2 else 'text'}" for j in range(1, 20))
        env.admin(
            [
                "DO $$ BEGIN FOR i IN 1..1000 LOOP EXECUTE format("
                f"'CREATE TABLE t%s (id integer PRIMARY KEY, {cols})', i); END LOOP; END $$"
            ]
        )
        c = adapters.connect(env.url())
        try:
            sent = []
            real = c._catalog_queries
            c._catalog_queries = lambda queries: sent.extend(queries) or real(queries)
            cat = c.catalog(refresh=True)
            assert len(cat.tables) == 1000 and all(len(t.columns) == 20 for t in cat.tables)
            assert all(t.primary_key == ["id"] for t in cat.tables)
            assert len(sent) <= 6
        finally:
            c.close()
    finally:
        env.drop()


# ---------------------------------------------------------------------------
# Redshift specifics
# ---------------------------------------------------------------------------


@pytest.fixture
def rs(pg):
    env = RedshiftEnv(pg.workdir)
    env.db = pg.db  # same database, reached through PgBouncer with redshift_connector
    c = adapters.connect(env.url())
    yield c
    c.close()


def test_redshift_values_and_types(rs):
    r = rs.execute("SELECT id, i4, n2, tstz, b, by, jb FROM typed ORDER BY id")
    assert [c.type for c in r.columns] == [
        "integer",
        "integer",
        "numeric",
        "timestamp with time zone",
        "boolean",
        "bytea",
        "jsonb",
    ]
    assert r.arrow.schema.field("i4").type == pa.int64()
    row = r.rows[0]
    assert row[2] == Decimal("12.345") and row[5] == b"\x00\xff\x10"
    assert r.to_pandas()["tstz"][0] == pd.Timestamp("2024-01-02 01:04:05.5", tz="UTC")


def test_redshift_parameters_and_percent_literals(rs):
    r = rs.execute(
        "SELECT t, '100%' AS pct, 'a?b' AS q FROM typed WHERE id = :id AND t LIKE :p", {"id": 1, "p": "A%"}
    )
    assert r.rows == [("Ada", "100%", "a?b")]


def test_redshift_cancel_keeps_the_session(rs):
    rs.execute("CREATE TEMP TABLE keep_me AS SELECT 1 AS x")
    pid = rs.pid
    threading.Timer(0.5, rs.cancel).start()
    with pytest.raises(errors.QueryCancelled):
        rs.execute("SELECT pg_sleep(30)", timeout=60)
    assert rs.pid == pid  # a clean server-side cancel needs no new connection
    assert rs.execute("SELECT x FROM keep_me").rows == [(1,)]


def test_redshift_interrupt_replaces_the_broken_connection(rs):
    conn = rs.conn
    at = later(os.kill, os.getpid(), signal.SIGINT)
    with pytest.raises(errors.QueryCancelled):
        rs.execute("SELECT pg_sleep(30)", timeout=60)
    assert_within_2_s(at)
    assert rs.execute("SELECT 1").rows == [(1,)]
    assert rs.conn is not conn  # the broken connection was replaced
    # the old statement was cancelled on the server too
    deadline = time.monotonic() + 2  # well before pg_sleep(30) would end by itself
    while time.monotonic() < deadline:
        busy = rs.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND query = 'SELECT pg_sleep(30)' AND state = 'active'"
        ).rows[0][0]
        if busy == 0:
            break
        time.sleep(0.1)
    assert busy == 0


def test_redshift_readonly_session(pg):
    env = RedshiftEnv(pg.workdir)
    env.db = pg.db
    c = adapters.connect(env.url(), readonly=True)
    try:
        with pytest.raises(errors.PermissionDenied, match="read-only"), fooled_guard():
            c.execute("SELECT nextval('seq')")
        assert c.execute("SELECT count(*) FROM typed").rows == [(4,)]
    finally:
        c.close()


# ---------------------------------------------------------------------------
# Read-only connections: each statement in its own read-only transaction
# ---------------------------------------------------------------------------

PGB_TX_PORT = 6433  # PgBouncer in transaction pooling mode (scripts/services.sh)

RO_SETUP = [
    "CREATE TABLE ro_target (x integer)",
    # what a user-defined function may do: switch the session's read-only default and
    # statement timeout off for every later statement of the session
    """CREATE FUNCTION sqlnb_flip() RETURNS text LANGUAGE plpgsql AS $$
       BEGIN
         PERFORM set_config('default_transaction_read_only', 'off', false);
         PERFORM set_config('statement_timeout', '0', false);
         RETURN 'flipped';
       END $$""",
    "CREATE FUNCTION sqlnb_write() RETURNS integer LANGUAGE sql AS "
    "$$ INSERT INTO ro_target VALUES (1) RETURNING x $$",
    # views hide the function calls from the guard (it sees a plain SELECT of a view):
    # only the session's read-only transaction can stop them
    "CREATE VIEW flip AS SELECT sqlnb_flip() AS f",
    "CREATE VIEW write_through AS SELECT sqlnb_write() AS w",
    "CREATE VIEW slow AS SELECT pg_sleep(5)::text AS s",
]


@pytest.fixture(scope="module")
def ro_pg(workdir):
    env = PostgresEnv(workdir)
    env.create()
    env.admin(RO_SETUP)
    yield env
    env.drop()


def _pooled_url(scheme: str, db: str) -> str:
    return _pgbouncer_url(scheme, PGB_PASSWORD, db).replace(f":{PGB_PORT}/", f":{PGB_TX_PORT}/")


def _classified(c, run):
    try:
        return run()
    except errors.SqlnbError:
        raise
    except Exception as exc:
        raise c.classify(exc) from None


@pytest.mark.parametrize("fast", [True, False], ids=["adbc", "psycopg"])
def test_readonly_survives_a_function_that_switches_it_off(ro_pg, fast):
    """The guard refuses ``SELECT * FROM flip``: the view calls a VOLATILE function of the
    database (pg_depend records it).  Past a fooled guard the function switches the
    session's read-only default and timeout off, and the next statement still runs in a
    read-only transaction with the connection's timeout: the read-only transaction stops
    the write hidden in ``write_through``."""
    c = adapters.connect(ro_pg.url(), readonly=True, statement_timeout=1)
    try:
        c.fast_path = fast
        for view in ("flip", "write_through"):
            with pytest.raises(errors.ReadOnlyViolation, match=f"reads {view}, which is a view"):
                c.execute(f"SELECT * FROM {view}")
        with fooled_guard():
            assert c.execute("SELECT * FROM flip").rows == [("flipped",)]
        assert c.last_path == ("adbc" if fast else "psycopg")
        with pytest.raises(errors.PermissionDenied, match="read-only"), fooled_guard():
            c.execute("SELECT * FROM write_through")
        assert c.execute(
            "SELECT current_setting('transaction_read_only'), current_setting('statement_timeout')"
        ).rows == [("on", "1s")]
        with pytest.raises(errors.QueryTimeout), fooled_guard():
            c.execute("SELECT * FROM slow")
        # the raw adapter path, past the guard, is read-only too
        c._cancel_requested = False
        with pytest.raises(errors.PermissionDenied, match="read-only"), fooled_guard():
            c.execute("SELECT sqlnb_write()", timeout=1)
        assert c.execute("SELECT count(*) FROM ro_target").rows == [(0,)]
    finally:
        c.close()
    assert ro_pg.admin_query("SELECT count(*) FROM ro_target") == [(0,)]


def _hold_server_session(db: str, pid: int, holders: list) -> None:
    """Open clients of the transaction pool, each inside a transaction, until one of them
    holds the server session ``pid``: the adapter's next statements run elsewhere."""
    import psycopg

    for _ in range(10):
        h = psycopg.connect(
            host=PG_HOST, port=PGB_TX_PORT, user=PGB_USER, password=PGB_PASSWORD, dbname=db, autocommit=True
        )
        holders.append(h)
        h.execute("BEGIN")
        if h.execute("SELECT pg_backend_pid()").fetchone()[0] == pid:
            return
    raise AssertionError(f"no pool client got server session {pid}")


@pytest.mark.parametrize(
    "scheme,fast",
    [("postgresql", True), ("postgresql", False), ("redshift", False)],
    ids=["postgresql-adbc", "postgresql-psycopg", "redshift"],
)
def test_readonly_and_timeout_hold_behind_a_transaction_pooler(ro_pg, scheme, fast):
    """Behind PgBouncer in transaction mode consecutive statements may run on different
    server sessions.  Read-only and the timeout hold on whichever one runs the statement,
    and nothing the connection sets leaks into the sessions other clients get."""
    c = adapters.connect(_pooled_url(scheme, ro_pg.db), readonly=True, statement_timeout=1)
    holders: list = []
    try:
        if scheme == "postgresql":
            c.fast_path = fast
        first = c.execute("SELECT pg_backend_pid()").rows[0][0]
        _hold_server_session(ro_pg.db, first, holders)
        # the server session the connection used before is another client's now, and
        # keeps its own settings
        assert holders[-1].execute(
            "SELECT current_setting('default_transaction_read_only'), "
            "current_setting('transaction_read_only'), "
            "current_setting('statement_timeout')"
        ).fetchone() == ("off", "off", "0")
        pid, ro, timeout = c.execute(
            "SELECT pg_backend_pid(), current_setting('transaction_read_only'), "
            "current_setting('statement_timeout')"
        ).rows[0]
        assert pid != first and (ro, timeout) == ("on", "1s")
        if scheme == "postgresql":
            assert c.last_path == ("adbc" if fast else "psycopg")
        with pytest.raises(errors.PermissionDenied, match="read-only"), fooled_guard():
            c.execute("SELECT * FROM write_through")
        with pytest.raises(errors.QueryTimeout), fooled_guard():  # cancelled by the local timeout
            c.execute("SELECT * FROM slow")
        assert c.execute("SELECT count(*) FROM ro_target").rows == [(0,)]
        assert c.catalog(refresh=True).find("ro_target") is not None  # in a transaction too
        assert not c.conn.info.transaction_status if scheme == "postgresql" else not c.conn.in_transaction
    finally:
        c.close()
        for h in holders:
            h.close()
    assert ro_pg.admin_query("SELECT count(*) FROM ro_target") == [(0,)]


# ---------------------------------------------------------------------------
# Row caps hold on the server (Redshift: the driver would buffer the whole result)
# ---------------------------------------------------------------------------

TEN_MILLION = (
    "SELECT a.i * 10000 + b.j AS n, 'row ' || b.j AS label "
    "FROM generate_series(0, 999) a(i), generate_series(1, 10000) b(j)"
)


def _pooler_bytes_sent(db: str) -> int:
    """Bytes PgBouncer (6433) has sent to its clients of database ``db``, from its console."""
    import psycopg

    with psycopg.connect(
        host=PG_HOST,
        port=PGB_TX_PORT,
        user=PGB_USER,
        password=PGB_PASSWORD,
        dbname="pgbouncer",
        autocommit=True,
        cursor_factory=psycopg.ClientCursor,
    ) as con:
        cur = con.cursor()
        cur.execute("SHOW STATS")
        names = [d.name for d in cur.description]
        for row in cur.fetchall():
            if row[names.index("database")] == db:
                return int(row[names.index("total_sent")])
    return 0


def test_redshift_row_cap_is_applied_on_the_server(ro_pg):
    """A capped display of a 10-million-row query: the rows that cross the wire (bytes
    PgBouncer sent to the client, read from its console) are a handful, not 10 million
    (which would be over 100 MB)."""
    c = adapters.connect(_pooled_url("redshift", ro_pg.db), statement_timeout=5)
    try:
        before = _pooler_bytes_sent(ro_pg.db)
        r = c.execute(TEN_MILLION, max_rows=10)
        sent = _pooler_bytes_sent(ro_pg.db) - before
        assert r.truncated and r.row_count == 10 and r.column_names == ["n", "label"]
        assert r.rows[0] == (1, "row 1") and [c.type for c in r.columns] == ["integer", "text"]
        assert sent < 50_000, sent
        # parameters, and inside the user's own transaction (the cursor is closed, the
        # transaction stays open)
        c.execute("BEGIN")
        for _ in range(2):
            r = c.execute(TEN_MILLION + " WHERE b.j > :j ORDER BY n", {"j": 9998}, max_rows=3)
            assert r.truncated and r.rows == [(9999, "row 9999"), (10000, "row 10000"), (19999, "row 9999")]
        assert c.conn.in_transaction
        c.execute("COMMIT")
        # a result shorter than the cap, and one without rows, keep their columns
        r = c.execute("SELECT 1 AS one, 'x'::text AS x", max_rows=5)
        assert not r.truncated and r.rows == [(1, "x")]
        r = c.execute("SELECT 1 AS one WHERE false", max_rows=5)
        assert r.column_names == ["one"] and r.rows == []
        assert _pooler_bytes_sent(ro_pg.db) - before < 100_000
    finally:
        c.close()


def test_redshift_capped_query_cancel_and_interrupt(rs):
    """A capped query runs as a server-side cursor in a transaction of its own: a cancel or
    an interrupt ends it, and the connection is usable (outside any transaction) after."""
    threading.Timer(0.5, rs.cancel).start()
    with pytest.raises(errors.QueryCancelled):
        rs.execute("SELECT pg_sleep(30)::text AS s", timeout=60, max_rows=5)
    assert not rs.conn.in_transaction
    threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()
    with pytest.raises(errors.QueryCancelled):
        rs.execute("SELECT pg_sleep(30)::text AS s", timeout=60, max_rows=5)
    assert rs.execute("SELECT 1 AS one", max_rows=5).rows == [(1,)]
    assert not rs.conn.in_transaction
