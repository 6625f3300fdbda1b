"""Measure the PostgreSQL adapter: 1,000,000 rows x 5 columns into pandas through the ADBC
fast path and through plain psycopg, and the catalog of 1,000 tables x 20 columns.

    .venv/bin/python scripts/bench_postgres.py [--rows N] [--repeat K]

Needs the local PostgreSQL on 127.0.0.1:5432 (``bash scripts/services.sh``); creates and
drops its own scratch databases.
"""

from __future__ import annotations

import argparse
import time
import uuid

import psycopg

import sqlnb.adapters as adapters

HOST, PORT = "127.0.0.1", 5432


def admin(db: str, *statements: str) -> None:
    with psycopg.connect(host=HOST, port=PORT, user="postgres", dbname=db, autocommit=True) as con:
        for s in statements:
            con.execute(s)


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    db = f"sqlnb_bench_{uuid.uuid4().hex[:8]}"
    admin("postgres", f'CREATE DATABASE "{db}"')
    try:
        admin(db,
              "CREATE TABLE big AS SELECT i AS id, random() * 1000 AS f, md5(i::text) AS t, "
              "timestamp '2024-01-01' + i * interval '1 second' AS ts, "
              f"(i / 7.0)::numeric(12, 2) AS n FROM generate_series(1, {args.rows}) i",
              "VACUUM ANALYZE big")
        c = adapters.connect(f"postgresql://postgres@{HOST}:{PORT}/{db}")
        try:
            sql = "SELECT id, f, t, ts, n FROM big"

            def fast():
                df = c.execute(sql).to_pandas()
                assert c.last_path == "adbc" and len(df) == args.rows

            def plain():
                c.fast_path = False
                try:
                    df = c.execute(sql).to_pandas()
                    assert c.last_path == "psycopg" and len(df) == args.rows
                finally:
                    c.fast_path = True

            print(f"{args.rows:,} rows x 5 columns (int, float8, text, timestamp, numeric) -> pandas, "
                  f"best of {args.repeat}:")
            print(f"  ADBC fast path : {best(fast, args.repeat):.3f} s")
            print(f"  plain psycopg  : {best(plain, args.repeat):.3f} s")
            for col in ("id", "f", "t", "ts", "n"):
                q = f"SELECT {col} FROM big"
                t_fast = best(lambda: c.execute(q).to_pandas(), args.repeat)
                print(f"    {col:>2} alone (fast path): {t_fast:.3f} s")
        finally:
            c.close()
    finally:
        admin("postgres", f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')

    db = f"sqlnb_bench_{uuid.uuid4().hex[:8]}"
    admin("postgres", f'CREATE DATABASE "{db}"')
    try:
        cols = ", ".join(f"c{j} {'integer' if j % 2 else 'text'}" for j in range(1, 20))
        admin(db, "DO $$ BEGIN FOR i IN 1..1000 LOOP EXECUTE format("
                  f"'CREATE TABLE t%s (id integer PRIMARY KEY, {cols})', i); END LOOP; END $$",
              "ANALYZE")
        c = adapters.connect(f"postgresql://postgres@{HOST}:{PORT}/{db}")
        try:
            c.catalog()
            t = best(lambda: c.catalog(refresh=True), 5)
            print(f"catalog of 1,000 tables x 20 columns: {t:.3f} s (best of 5)")
        finally:
            c.close()
    finally:
        admin("postgres", f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')


if __name__ == "__main__":
    main()
