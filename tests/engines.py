"""Real engines for the test suite: one environment class per engine.

Each environment creates its own fresh database on a real server (or file), gives the
URL sqlnb connects to, and runs administrative SQL through the raw driver (independent of
the sqlnb code under test).  Servers are started by ``scripts/services.sh``.

- PostgreSQL 127.0.0.1:5432 (trust), MariaDB 127.0.0.1:3306 (user sqlnb/sqlnb),
- Redshift: redshift-connector → PgBouncer 127.0.0.1:6432 (md5, user sqlnb/sqlnb) → PostgreSQL,
- Snowflake: snowflake-connector-python patched by fakesnow onto DuckDB.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import uuid
from collections.abc import Iterable
from pathlib import Path

ENGINES = ("sqlite", "duckdb", "postgresql", "mysql", "snowflake", "redshift")

PG_HOST, PG_PORT = "127.0.0.1", 5432
MY_HOST, MY_PORT, MY_USER, MY_PASSWORD = "127.0.0.1", 3306, "sqlnb", "Sq1nb-pw"
PGB_PORT, PGB_USER, PGB_PASSWORD = 6432, "sqlnb", "Sq1nb-pw"


def _unique(prefix: str) -> str:
    return f"{prefix}_{os.getpid()}_{uuid.uuid4().hex[:8]}"


class EngineEnv:
    name: str
    dialect: str

    def __init__(self, workdir: Path):
        self.workdir = workdir

    # a fresh database for one test module / test
    def create(self) -> None: ...

    def drop(self) -> None: ...

    def url(self) -> str:
        raise NotImplementedError

    def admin(self, statements: Iterable[str]) -> None:
        raise NotImplementedError

    def admin_query(self, sql: str) -> list[tuple]:
        raise NotImplementedError

    def fingerprint(self) -> str:
        """Something that changes when the data changes (file bytes or a data digest)."""
        rows = self.admin_query(self.digest_sql())
        return hashlib.sha256(repr(rows).encode()).hexdigest()

    def digest_sql(self) -> str:
        return "SELECT id, name, email FROM customers ORDER BY id"


class SQLiteEnv(EngineEnv):
    name, dialect = "sqlite", "sqlite"

    def create(self) -> None:
        self.path = self.workdir / f"{_unique('sqlite')}.db"

    def drop(self) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    def url(self) -> str:
        return f"sqlite:///{self.path}"

    def admin(self, statements: Iterable[str]) -> None:
        import sqlite3

        con = sqlite3.connect(self.path)
        try:
            for s in statements:
                con.execute(s)
            con.commit()
        finally:
            con.close()

    def admin_query(self, sql: str) -> list[tuple]:
        import sqlite3

        con = sqlite3.connect(self.path)
        try:
            return con.execute(sql).fetchall()
        finally:
            con.close()

    def fingerprint(self) -> str:
        return hashlib.sha256(Path(self.path).read_bytes()).hexdigest()


class DuckDBEnv(EngineEnv):
    name, dialect = "duckdb", "duckdb"

    def create(self) -> None:
        self.path = self.workdir / f"{_unique('duckdb')}.duckdb"

    def drop(self) -> None:
        for suffix in ("", ".wal"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    def url(self) -> str:
        return f"duckdb:///{self.path}"

    def admin(self, statements: Iterable[str]) -> None:
        import duckdb

        con = duckdb.connect(str(self.path))
        try:
            for s in statements:
                con.execute(s)
        finally:
            con.close()

    def admin_query(self, sql: str) -> list[tuple]:
        import duckdb

        con = duckdb.connect(str(self.path), read_only=True)
        try:
            return con.execute(sql).fetchall()
        finally:
            con.close()

    def fingerprint(self) -> str:
        return hashlib.sha256(Path(self.path).read_bytes()).hexdigest()


class PostgresEnv(EngineEnv):
    name, dialect = "postgresql", "postgres"
    port = PG_PORT

    def create(self) -> None:
        import psycopg

        self.db = _unique("sqlnb")
        with psycopg.connect(
            host=PG_HOST, port=PG_PORT, user="postgres", dbname="postgres", autocommit=True
        ) as con:
            con.execute(f'CREATE DATABASE "{self.db}"')

    def drop(self) -> None:
        import psycopg

        with psycopg.connect(
            host=PG_HOST, port=PG_PORT, user="postgres", dbname="postgres", autocommit=True
        ) as con:
            con.execute(f'DROP DATABASE IF EXISTS "{self.db}" WITH (FORCE)')

    def url(self) -> str:
        return f"postgresql://postgres@{PG_HOST}:{PG_PORT}/{self.db}"

    def _con(self):
        import psycopg

        return psycopg.connect(host=PG_HOST, port=PG_PORT, user="postgres", dbname=self.db, autocommit=True)

    def admin(self, statements: Iterable[str]) -> None:
        with self._con() as con:
            for s in statements:
                con.execute(s)

    def admin_query(self, sql: str) -> list[tuple]:
        with self._con() as con:
            return con.execute(sql).fetchall()


class RedshiftEnv(PostgresEnv):
    """PostgreSQL behind PgBouncer, reached with redshift-connector."""

    name, dialect = "redshift", "redshift"

    def url(self) -> str:
        return f"redshift://{PGB_USER}:{PGB_PASSWORD}@{PG_HOST}:{PGB_PORT}/{self.db}?ssl=false"


class MySQLEnv(EngineEnv):
    name, dialect = "mysql", "mysql"

    def _con(self, db: str | None = None):
        import mysql.connector

        return mysql.connector.connect(
            host=MY_HOST, port=MY_PORT, user=MY_USER, password=MY_PASSWORD, database=db, autocommit=True
        )

    def create(self) -> None:
        self.db = _unique("sqlnb")
        con = self._con()
        try:
            con.cursor().execute(f"CREATE DATABASE `{self.db}`")
        finally:
            con.close()

    def drop(self) -> None:
        con = self._con()
        try:
            con.cursor().execute(f"DROP DATABASE IF EXISTS `{self.db}`")
        finally:
            con.close()

    def url(self) -> str:
        return f"mysql://{MY_USER}:{MY_PASSWORD}@{MY_HOST}:{MY_PORT}/{self.db}"

    def admin(self, statements: Iterable[str]) -> None:
        con = self._con(self.db)
        try:
            cur = con.cursor()
            for s in statements:
                cur.execute(s)
        finally:
            con.close()

    def admin_query(self, sql: str) -> list[tuple]:
        con = self._con(self.db)
        try:
            cur = con.cursor()
            cur.execute(sql)
            return cur.fetchall()
        finally:
            con.close()


class SnowflakeEnv(EngineEnv):
    """fakesnow: the Snowflake connector patched onto DuckDB files under ``workdir``."""

    name, dialect = "snowflake", "snowflake"

    def create(self) -> None:
        self.db = _unique("SQLNB").upper()
        self.schema = "PUBLIC"

    def url(self) -> str:
        return f"snowflake://tester@fakeaccount/{self.db}/{self.schema}?warehouse=TEST_WH"

    def _con(self):
        import snowflake.connector

        return snowflake.connector.connect(
            user="tester", password="x", account="fakeaccount", database=self.db, schema=self.schema
        )

    def admin(self, statements: Iterable[str]) -> None:
        con = self._con()
        try:
            cur = con.cursor()
            for s in statements:
                cur.execute(s)
        finally:
            con.close()

    def admin_query(self, sql: str) -> list[tuple]:
        con = self._con()
        try:
            cur = con.cursor()
            cur.execute(sql)
            return cur.fetchall()
        finally:
            con.close()


ENV_CLASSES = {
    cls.name: cls for cls in (SQLiteEnv, DuckDBEnv, PostgresEnv, MySQLEnv, SnowflakeEnv, RedshiftEnv)
}


# ---------------------------------------------------------------------------
# The standard test data set, in each engine's DDL
# ---------------------------------------------------------------------------


def seed_statements(engine: str) -> list[str]:
    """customers / orders / a view, with keys, an index and comments where supported."""
    ts = {"mysql": "DATETIME", "snowflake": "TIMESTAMP_NTZ"}.get(engine, "TIMESTAMP")
    text = "VARCHAR(100)"
    stmts = [
        f"CREATE TABLE customers (id INTEGER PRIMARY KEY, name {text} NOT NULL, "
        f"email {text} UNIQUE, created_at {ts})",
        f"CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL "
        f"REFERENCES customers(id), amount DECIMAL(10,2), status {text} DEFAULT 'new', "
        f"ordered_on DATE)",
        "CREATE INDEX orders_customer_idx ON orders (customer_id)",
        "INSERT INTO customers VALUES (1, 'Ada', 'ada@example.com', '2024-01-02 03:04:05'), "
        "(2, 'Grace', 'grace@example.com', '2024-02-03 04:05:06'), (3, 'Linus', NULL, NULL)",
        "INSERT INTO orders VALUES (10, 1, 12.50, 'paid', '2024-03-01'), "
        "(11, 1, 99.99, 'new', '2024-03-02'), (12, 2, 5.00, 'paid', '2024-03-03')",
        "CREATE VIEW big_orders AS SELECT id, amount FROM orders WHERE amount > 10",
    ]
    if engine == "mysql":
        stmts[1] = (
            stmts[1]
            .replace("REFERENCES customers(id)", "")
            .replace(
                "ordered_on DATE)", "ordered_on DATE, FOREIGN KEY (customer_id) REFERENCES customers(id))"
            )
        )
    if engine in ("postgresql", "redshift", "snowflake"):
        stmts.append("COMMENT ON TABLE customers IS 'People who buy things'")
        stmts.append("COMMENT ON COLUMN customers.email IS 'Contact address'")
    if engine == "mysql":
        stmts.append("ALTER TABLE customers COMMENT = 'People who buy things'")
        stmts.append("ALTER TABLE customers MODIFY email VARCHAR(100) COMMENT 'Contact address'")
    if engine == "duckdb":
        stmts.append("COMMENT ON TABLE customers IS 'People who buy things'")
        stmts.append("COMMENT ON COLUMN customers.email IS 'Contact address'")
    if engine == "snowflake":  # fakesnow: no CREATE INDEX
        stmts = [s for s in stmts if not s.startswith("CREATE INDEX")]
    return stmts


@contextlib.contextmanager
def fooled_guard():
    """The read-only guard accepts everything while this lasts: a first layer fooled by a
    parser differential, to show what the second layer (the engine's read-only session,
    one statement per call) does on its own.  Wrappers sqlnb builds around a statement
    are checked by the same function, so they are fooled too, as they would be."""
    from sqlnb.sql import guard

    real = guard.check_read_only

    def fooled(sql, dialect="", functions=None):
        return guard.Verdict(True, "a guard fooled by the test", "SELECT")

    guard.check_read_only = fooled
    try:
        yield
    finally:
        guard.check_read_only = real
