"""Write the shipped snapshots of the function policy from live engines.

    python -m sqlnb.sql.functions.generate [--postgres CONNINFO] [--no-duckdb]

PostgreSQL: connects with ``CONNINFO`` (default ``host=127.0.0.1 port=5432 user=postgres
dbname=postgres``) and reads ``pg_proc`` of the built-in schemas; DuckDB: an in-memory
database of the installed ``duckdb`` package.  The files go next to this module
(``postgres.txt``, ``duckdb.txt``); the guard reads them when it runs without a connection.
"""

from __future__ import annotations

import argparse
import re

from sqlnb.sql.functions import (
    DUCKDB_FUNCTIONS_SQL,
    HERE,
    POSTGRES_FUNCTIONS_SQL,
    REASONS,
    duckdb_refusals,
    postgres_refusals,
    write_snapshot,
)

_MACRO = re.compile(r"^is a DuckDB macro whose definition calls (.+?)\(\)")


def _kind(why: str) -> str:
    m = _MACRO.match(why)
    if m:
        return f"macro\t{m.group(1)}"
    for kind, text in REASONS.items():
        if why == text:
            return kind
    raise ValueError(f"no snapshot kind for the reason {why!r}")


def postgres_snapshot(conninfo: str) -> int:
    import psycopg

    with psycopg.connect(conninfo, autocommit=True) as conn:
        row = conn.execute("SELECT version()").fetchone()
        assert row is not None  # SELECT version() gives one row
        version = row[0].split(" on ")[0]
        rows = conn.execute(
            POSTGRES_FUNCTIONS_SQL + "\nWHERE n.nspname IN ('pg_catalog', 'information_schema')"
        ).fetchall()
    refused, _, _ = postgres_refusals(rows)
    write_snapshot(
        HERE / "postgres.txt",
        version,
        refused,
        {n: _kind(w) for n, w in refused.items()},
        "python -m sqlnb.sql.functions.generate",
    )
    return len(refused)


def duckdb_snapshot() -> int:
    import duckdb

    conn = duckdb.connect(":memory:")
    try:
        rows = conn.execute(DUCKDB_FUNCTIONS_SQL + "\nWHERE internal").fetchall()
    finally:
        conn.close()
    refused, _, table_only = duckdb_refusals(rows)
    write_snapshot(
        HERE / "duckdb.txt",
        f"DuckDB {duckdb.__version__}",
        refused,
        {n: _kind(w) for n, w in refused.items()},
        "python -m sqlnb.sql.functions.generate",
        table_only,
    )
    return len(refused)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--postgres", default="host=127.0.0.1 port=5432 user=postgres dbname=postgres", metavar="CONNINFO"
    )
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--no-duckdb", action="store_true")
    args = parser.parse_args(argv)
    if not args.no_postgres:
        print(f"postgres.txt: {postgres_snapshot(args.postgres)} functions refused")
    if not args.no_duckdb:
        print(f"duckdb.txt: {duckdb_snapshot()} functions refused")


if __name__ == "__main__":
    main()
