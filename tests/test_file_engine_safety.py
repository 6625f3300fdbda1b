"""Safety of the file engines, on real DuckDB and SQLite files.

- One statement per call at the driver, below the guard: a raw ``SELECT 1; COMMIT;
  INSERT ...`` handed to ``execute`` on a read-write connection fails before any of it
  runs (DuckDB: its own parser counts the statements; SQLite: sqlite3 refuses a second
  one), while a trailing comment or ``;;`` after one statement still runs.
- DuckDB: a guarded statement (``readonly=True`` as the agent runs it, or a read-only
  connection) reads only the connected database.  Names DuckDB would read by a
  replacement scan (another database file, a JSON or GeoJSON file, a file without an
  extension, a Python DataFrame) and tables of another attached database are refused;
  the connected database's tables and views (one created after the catalog was read
  too), the statement's CTEs and DuckDB's catalog views still run.

Each test checks the files (and where it matters, the tables) before and after.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import duckdb
import pandas as pd
import pytest

import sqlnb.adapters as adapters
from sqlnb import errors
from sqlnb.adapters.duckdb import _Lookup, _search_path
from sqlnb.agent.execution import run_statement as _run
from sqlnb.agent.nodes import AgentContext
from sqlnb.session import run_statements
from tests.engines import fooled_guard

RAW_MULTI = (
    "SELECT 1; COMMIT; INSERT INTO t VALUES (666)",
    "SELECT 1; DROP TABLE victim",
    "SELECT 1; SELECT 2",
    "SELECT 1;\nINSERT INTO t VALUES (667);",
)
ONE_STATEMENT = (
    "SELECT 1 AS one; -- a comment after the semicolon",
    "SELECT 1 AS one;;",
    "SELECT 1 AS one ; /* a */ ; -- b",
    "SELECT 1 AS one -- no semicolon",
)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---- one statement per call -------------------------------------------------------------


@pytest.fixture
def duck_file(tmp_path):
    path = tmp_path / "a.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE t (x INTEGER); CREATE TABLE victim (x INTEGER); INSERT INTO victim VALUES (1)")
    con.close()
    return path


@pytest.fixture
def sqlite_file(tmp_path):
    path = tmp_path / "a.sqlite"
    con = sqlite3.connect(path)
    con.executescript(
        "CREATE TABLE t (x INTEGER); CREATE TABLE victim (x INTEGER); INSERT INTO victim VALUES (1);"
    )
    con.close()
    return path


def _state(scheme: str, path: Path) -> tuple:
    if scheme == "duckdb":
        con = duckdb.connect(str(path), read_only=True)
        try:
            names = sorted(r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall())
            return names, con.execute("SELECT count(*) FROM t").fetchall()
        finally:
            con.close()
    con = sqlite3.connect(path)
    try:
        names = sorted(r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
        return names, con.execute("SELECT count(*) FROM t").fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("scheme", ["duckdb", "sqlite"])
def test_raw_multi_statement_fails_at_the_driver(scheme, duck_file, sqlite_file):
    """Below the guard: a read-write connection runs what it is given, and a read-only one
    with a fooled guard runs what the guard let through; neither runs a second statement."""
    path = duck_file if scheme == "duckdb" else sqlite_file
    before = _state(scheme, path)
    assert before == (["t", "victim"], [(0,)])
    rw = adapters.connect(f"{scheme}:///{path}")
    try:
        for sql in RAW_MULTI:
            with pytest.raises(errors.UsageError, match="none of them ran"):
                rw.execute(sql)
            with pytest.raises(errors.SqlnbError), fooled_guard():  # the agent's path, guard fooled
                rw.execute(sql, readonly=True)
        with pytest.raises(errors.UsageError):  # with parameters too
            rw.execute("SELECT :v; INSERT INTO t VALUES (668)", {"v": 1})
        assert rw.execute("SELECT count(*) FROM t").rows == [(0,)]  # the connection goes on
    finally:
        rw.close()
    assert _state(scheme, path) == before
    ro = adapters.connect(f"{scheme}:///{path}", readonly=True)
    try:
        for sql in RAW_MULTI:
            with pytest.raises(errors.ReadOnlyViolation, match="statements"):
                ro.execute(sql)
            with pytest.raises(errors.SqlnbError), fooled_guard():
                ro.execute(sql)
    finally:
        ro.close()
    assert _state(scheme, path) == before


@pytest.mark.parametrize("scheme", ["duckdb", "sqlite"])
def test_one_statement_with_a_trailing_comment_or_semicolons_runs(scheme, duck_file, sqlite_file):
    path = duck_file if scheme == "duckdb" else sqlite_file
    for readonly in (False, True):
        conn = adapters.connect(f"{scheme}:///{path}", readonly=readonly)
        try:
            for sql in ONE_STATEMENT:
                assert conn.execute(sql).rows == [(1,)], sql
                assert conn.execute(sql, readonly=True, max_rows=5).rows == [(1,)], sql
        finally:
            conn.close()


class _Recording:
    """A DuckDB connection that records the texts ``sql()`` is given."""

    def __init__(self, real):
        self._real = real
        self.sent: list[str] = []

    def sql(self, text, **kw):
        self.sent.append(text)
        return self._real.sql(text, **kw)

    def __getattr__(self, name):
        return getattr(self._real, name)


def test_duckdb_sends_the_statement_byte_for_byte(duck_file):
    conn = adapters.connect(f"duckdb:///{duck_file}")
    try:
        conn.conn = _Recording(conn.conn)
        texts = [
            "SELECT 1 AS one ; -- tail ; DROP TABLE victim",
            "SELECT 1 AS one;;",
            "  SELECT /* c */ :v AS one\n",
        ]
        for text in texts:
            assert conn.execute(text, {"v": 1}).rows == [(1,)]
        assert conn.conn.sent == [texts[0], texts[1], "  SELECT /* c */ $v AS one\n"]
        assert all(type(s) is str for s in conn.conn.sent)
    finally:
        conn.conn = conn.conn._real
        conn.close()


# ---- DuckDB reads only the connected database -------------------------------------------

SECRETS = (
    "123456",
    "Ada",
    "geo-secret",
    "json-secret",
    "data-secret",
    "csv-secret",
    "parquet-secret",
    "df-secret",
)


@pytest.fixture
def files(tmp_path, monkeypatch):
    """The connected database main.duckdb, and beside it, in the working directory, what
    a replacement scan would read: another database (hr.duckdb, also as hr.ddb and hr.db),
    GeoJSON, JSON, a CSV file with and without an extension, a Parquet file."""
    monkeypatch.chdir(tmp_path)
    hr = duckdb.connect("hr.duckdb")
    hr.execute("CREATE TABLE employees AS SELECT 'Ada' AS name, 123456 AS salary")
    hr.close()
    (tmp_path / "hr.ddb").write_bytes((tmp_path / "hr.duckdb").read_bytes())
    (tmp_path / "hr.db").write_bytes((tmp_path / "hr.duckdb").read_bytes())
    (tmp_path / "notes.geojson").write_text(
        '{"type": "FeatureCollection", "features": [{"type": "Feature", "geometry": null, '
        '"properties": {"secret": "geo-secret"}}]}'
    )
    (tmp_path / "notes.json").write_text('[{"secret": "json-secret"}]')
    (tmp_path / "data").write_text("secret\ndata-secret\n")
    (tmp_path / "data.csv").write_text("secret\ncsv-secret\n")
    main = duckdb.connect("main.duckdb")
    main.execute(
        "CREATE TABLE customers AS SELECT 1 AS id, 'Grace' AS name; "
        "CREATE VIEW customer_names AS SELECT name FROM customers; "
        "CREATE SCHEMA sales; CREATE TABLE sales.orders AS SELECT 10 AS id, 1 AS customer_id"
    )
    main.execute("COPY (SELECT 'parquet-secret' AS secret) TO 'x.parquet' (FORMAT parquet)")
    main.close()
    return tmp_path


def _digests(root: Path) -> dict[str, str]:
    return {p.name: digest(p) for p in sorted(root.iterdir()) if p.is_file()}


# what the agent might be led to write, each read by DuckDB from outside the database
OUTSIDE = [
    "SELECT * FROM 'hr.duckdb'",
    'SELECT * FROM "hr.duckdb"',
    "SELECT * FROM 'hr.ddb'",
    "SELECT * FROM 'hr.db'",
    'SELECT * FROM "notes.geojson"',
    "SELECT * FROM 'notes.json'",
    'SELECT * FROM "data"',
    "SELECT * FROM data",
    "SELECT * FROM 'x.parquet'",
    "SELECT * FROM data.csv",
    "SELECT * FROM read_csv('data.csv')",
    "SELECT * FROM 'https://example.com/notes.json'",
    "SELECT * FROM 'note*.json'",
    'SELECT * FROM "hr"',
    "SELECT name FROM customers UNION ALL SELECT secret FROM 'notes.json'",
    'SELECT * FROM customers WHERE name IN (SELECT secret FROM "notes.geojson")',
    "SELECT (SELECT max(salary) FROM 'hr.duckdb') AS s",
    "SELECT * FROM (SUMMARIZE 'hr.duckdb')",
    # a CTE is visible only after its definition: here DuckDB reads the file
    'WITH a AS (SELECT * FROM "hr.duckdb"), "hr.duckdb" AS (SELECT 1 AS name) SELECT * FROM a',
    # a qualified name is never a CTE
    "WITH employees AS (SELECT 1 AS x) SELECT * FROM hr.employees",
]


@pytest.mark.parametrize("mode", ["agent-on-read-write", "read-only-connection"])
def test_duckdb_guarded_statements_read_only_the_connected_database(files, mode):
    before = _digests(files)
    rw = adapters.connect("duckdb:///main.duckdb") if mode == "agent-on-read-write" else None
    conn = rw or adapters.connect("duckdb:///main.duckdb", readonly=True)
    try:
        if rw is not None:  # the replacement scans are real: unguarded, DuckDB reads them
            assert rw.execute("SELECT * FROM 'hr.duckdb'").rows == [("Ada", 123456)]
            assert rw.execute('SELECT secret FROM "notes.geojson"').rows == [("geo-secret",)]
            assert rw.execute(OUTSIDE[-2]).rows == [("Ada", 123456)]
            rw.execute("ATTACH 'hr.duckdb' AS hr (READ_ONLY)")
        for sql in OUTSIDE:
            with pytest.raises((errors.ReadOnlyViolation, errors.TableNotFound)) as info:
                conn.execute(sql, readonly=True, max_rows=1000)
            text = f"{info.value} {info.value.engine_message or ''}"
            assert not any(s in text for s in SECRETS), text
        # the connected database still reads: tables, views, other schemas, CTEs
        assert conn.execute("SELECT name FROM customer_names", readonly=True).rows == [("Grace",)]
        assert conn.execute(
            "SELECT c.name, o.id FROM customers c JOIN sales.orders o ON o.customer_id = c.id", readonly=True
        ).rows == [("Grace", 10)]
        assert conn.execute(
            'WITH "hr.duckdb" AS (SELECT 7 AS n) SELECT n FROM "hr.duckdb"', readonly=True
        ).rows == [(7,)]
        assert conn.execute(
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r "
            "WHERE n < 3) SELECT count(*) FROM r",
            readonly=True,
        ).rows == [(3,)]
        assert conn.execute(
            "WITH a AS (SELECT id FROM customers), b AS (SELECT * FROM a) SELECT * FROM b", readonly=True
        ).rows == [(1,)]
    finally:
        conn.close()
    assert _digests(files) == before


def test_duckdb_attached_database_is_refused_on_a_read_write_connection(files):
    before = _digests(files)
    conn = adapters.connect("duckdb:///main.duckdb")
    try:
        conn.execute("ATTACH 'hr.duckdb' AS hr (READ_ONLY)")
        assert conn.execute("SELECT salary FROM hr.employees").rows == [(123456,)]  # unguarded
        for sql in (
            "SELECT * FROM hr.employees",
            "SELECT * FROM hr.main.employees",
            "SELECT * FROM customers, hr.employees",
        ):
            with pytest.raises(errors.ReadOnlyViolation, match="attached database hr") as info:
                conn.execute(sql, readonly=True)
            assert "123456" not in str(info.value)
        with pytest.raises(errors.TableNotFound, match="does not exist in the connected database"):
            conn.execute("SELECT * FROM employees", readonly=True)  # not on the search path
        # the connected database by its own name, and DuckDB's own catalog
        db = conn.connected_database
        assert conn.execute(f"SELECT id FROM {db}.customers", readonly=True).rows == [(1,)]
        assert conn.execute(f"SELECT id FROM {db}.main.customers", readonly=True).rows == [(1,)]
        assert conn.execute("SELECT count(*) > 0 FROM information_schema.tables", readonly=True).rows == [
            (True,)
        ]
        assert conn.execute("SELECT count(*) > 0 FROM duckdb_tables()", readonly=True).rows == [(True,)]
        assert conn.execute("SELECT count(*) > 0 FROM duckdb_views", readonly=True).rows == [(True,)]
        assert conn.execute("SELECT count(*) > 0 FROM pg_catalog.pg_class", readonly=True).rows == [(True,)]
    finally:
        conn.close()
    assert _digests(files) == before


def test_duckdb_search_path_into_another_database_is_followed(files):
    """DuckDB's own lookup order (asked of DuckDB: the search path, the current database):
    a search path or USE that leads a bare name into another database is refused."""
    con = duckdb.connect("main.duckdb")
    try:
        home = con.execute("SELECT current_database()").fetchall()[0][0]
        con.execute("ATTACH 'hr.duckdb' AS hr (READ_ONLY)")
        con.execute("CREATE TABLE employees AS SELECT 'nobody' AS name")  # also in main
        assert _Lookup(con, home).resolve(("", "", "employees")) == ("ok", home)
        con.execute("SET search_path = 'hr.main'")
        assert con.execute("SELECT name FROM employees").fetchall() == [("Ada",)]  # DuckDB's choice
        assert _Lookup(con, home).resolve(("", "", "employees")) == ("elsewhere", "hr")
        assert _Lookup(con, home).resolve(("", "main", "employees")) == ("elsewhere", "hr")
        # the current database is hr now: DuckDB does not find customers by its bare name
        assert _Lookup(con, home).resolve(("", "", "customers")) == ("missing", None)
        with pytest.raises(duckdb.CatalogException):
            con.execute("SELECT * FROM customers").fetchall()
        assert _Lookup(con, home).resolve((home, "main", "customers")) == ("ok", home)
        con.execute(f"SET search_path = 'hr.main,{home}.sales'")
        assert _Lookup(con, home).resolve(("", "", "orders")) == ("ok", home)
        assert _Lookup(con, home).resolve(("", "sales", "orders")) == ("ok", home)
        assert _Lookup(con, home).resolve((home, "", "orders")) == ("ok", home)  # its search-path schema
        assert _Lookup(con, home).resolve((home, "", "customers")) == ("missing", None)
        with pytest.raises(duckdb.CatalogException):  # DuckDB looks in main_db.sales only
            con.execute(f"SELECT * FROM {home}.customers").fetchall()
        # DuckDB takes main_db's employees first here, but with another database on a
        # search path set in the session a name that database holds is refused outright
        con.execute(f"SET search_path = '{home}.main,hr.main'")
        assert con.execute("SELECT name FROM employees").fetchall() == [("nobody",)]
        assert _Lookup(con, home).resolve(("", "", "employees")) == ("elsewhere", "hr")
        assert _Lookup(con, home).resolve(("", "", "customers")) == ("ok", home)
        con.execute("RESET search_path")
        con.execute("USE hr")
        assert _Lookup(con, home).resolve(("", "", "employees")) == ("elsewhere", "hr")
        assert _Lookup(con, home).resolve((home, "", "customers")) == ("ok", home)
        assert _Lookup(con, home).resolve(("", "", "customers")) == ("missing", None)
        assert _Lookup(con, home).resolve(("", "", "duckdb_tables")) == ("ok", "system")
    finally:
        con.close()


def test_search_path_setting_is_read_as_duckdb_writes_it():
    assert _search_path("") == []
    assert _search_path("hr.main,s2") == [("hr", "main"), ("", "s2")]
    assert _search_path('"we,ird"."a.b",hr.main') == [("we,ird", "a.b"), ("hr", "main")]
    assert _search_path('"say ""hi""".main') == [('say "hi"', "main")]
    con = duckdb.connect()
    try:
        con.execute('ATTACH \':memory:\' AS "we,ird"; CREATE SCHEMA "we,ird"."a.b"')
        con.execute('SET search_path = \'"we,ird"."a.b",memory.main\'')
        text = con.execute("SELECT current_setting('search_path')").fetchall()[0][0]
        assert _search_path(text) == [("we,ird", "a.b"), ("memory", "main")]
    finally:
        con.close()


def test_duckdb_python_variables_are_not_read(files):
    """DuckDB's Python replacement scan reads a DataFrame of the caller's frames by its
    name; a name the database does not hold is refused, and a table beats a DataFrame."""
    before = _digests(files)
    secret_df = pd.DataFrame({"secret": ["df-secret"]})  # noqa: F841  read by its name
    customers = pd.DataFrame({"id": [999], "name": ["not the table"]})  # noqa: F841
    conn = adapters.connect("duckdb:///main.duckdb")
    try:
        conn.conn.execute("SET GLOBAL python_scan_all_frames = true")  # as far as this test's frame
        assert conn.execute("SELECT * FROM secret_df").rows == [("df-secret",)]  # unguarded
        with pytest.raises(errors.TableNotFound) as info:
            conn.execute("SELECT * FROM secret_df", readonly=True)
        assert "df-secret" not in str(info.value)
        assert conn.execute("SELECT id, name FROM customers", readonly=True).rows == [(1, "Grace")]
    finally:
        conn.close()
    assert _digests(files) == before


def test_duckdb_table_created_after_the_catalog_was_read(files):
    conn = adapters.connect("duckdb:///main.duckdb")
    try:
        assert conn.catalog().find("later") is None
        conn.execute("CREATE TABLE later AS SELECT 5 AS n")
        assert conn.execute("SELECT n FROM later", readonly=True).rows == [(5,)]
        assert conn.execute("SELECT n FROM main.later", readonly=True).rows == [(5,)]
    finally:
        conn.close()


def test_duckdb_agent_and_read_only_cells_read_only_the_connected_database(files):
    """Through the agent's own execute path (readonly=True with its row cap) on the README's
    read-write connection, and through a %%sql cell's run_statements on a read-only one."""
    before = _digests(files)
    rw = adapters.connect("duckdb:///main.duckdb")
    try:
        ctx = AgentContext(model=None, adapter=rw)
        for sql in ("SELECT * FROM 'hr.duckdb'", 'SELECT secret FROM "notes.geojson"'):
            _, outcome, _ = _run(sql, ctx)
            assert isinstance(outcome, (errors.ReadOnlyViolation, errors.TableNotFound)), outcome
            assert not any(s in str(outcome) for s in SECRETS)
        _, outcome, _ = _run("SELECT name FROM customers", ctx)
        assert outcome.rows == [("Grace",)]
    finally:
        rw.close()
    ro = adapters.connect("duckdb:///main.duckdb", readonly=True)
    try:
        with pytest.raises(errors.SqlnbError) as info:
            run_statements(ro, "SELECT 1 AS one;\nSELECT * FROM 'hr.duckdb';")
        assert "123456" not in str(info.value)
        assert run_statements(ro, "SELECT name FROM customers;").rows == [("Grace",)]
    finally:
        ro.close()
    assert _digests(files) == before


def test_duckdb_pivot_is_refused_as_read_only(files):
    """A PIVOT runs as several statements, whose reads sqlnb cannot list."""
    conn = adapters.connect("duckdb:///main.duckdb")
    try:
        sql = "SELECT * FROM (PIVOT customers ON name USING count(*))"
        assert conn.execute(sql).rows == [(1, 1)]
        with pytest.raises(errors.ReadOnlyViolation, match="several statements"):
            conn.execute(sql, readonly=True)
    finally:
        conn.close()
