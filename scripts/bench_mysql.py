"""Measure the MySQL/MariaDB adapter: 1,000,000 rows x 5 columns into pandas through the
connectorx fast path and through the driver's C extension, and the catalog of 1,000
tables x 20 columns with keys.

    .venv/bin/python scripts/bench_mysql.py [--rows N] [--tables N] [--repeat K]

Needs the MariaDB of ``scripts/services.sh`` (127.0.0.1:3306, user sqlnb); creates and
drops its own scratch databases.
"""

from __future__ import annotations

import sqlnb  # noqa: F401  first, so the driver's C extension loads (see sqlnb/__init__.py)

import argparse
import time
import uuid

import mysql.connector

import sqlnb.adapters as adapters

HOST, PORT, USER, PASSWORD = "127.0.0.1", 3306, "sqlnb", "Sq1nb-pw"


def admin(db: str | None, *statements: str) -> None:
    con = mysql.connector.connect(host=HOST, port=PORT, user=USER, password=PASSWORD, database=db,
                                  autocommit=True)
    try:
        cur = con.cursor()
        for s in statements:
            cur.execute(s)
    finally:
        con.close()


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def bench_fetch(rows: int, repeat: int) -> None:
    db = f"sqlnb_bench_{uuid.uuid4().hex[:8]}"
    admin(None, f"CREATE DATABASE `{db}`")
    try:
        admin(db, "CREATE TABLE big (id INT PRIMARY KEY, x DOUBLE, s VARCHAR(40), ts DATETIME, "
                  "amount DECIMAL(12,2))",
              f"INSERT INTO big SELECT seq, seq * 1.5, CONCAT('name-', seq), "
              f"'2024-01-01' + INTERVAL seq SECOND, (seq % 100000) / 100 FROM seq_1_to_{rows}")
        url = f"mysql://{USER}:{PASSWORD}@{HOST}:{PORT}/{db}"
        sql = "SELECT id, x, s, ts, amount FROM big"
        fast_c, plain_c = adapters.connect(url), adapters.connect(url, arrow=False)
        try:
            assert fast_c.c_extension and plain_c.c_extension
            out = {}
            for name, c, path in (("connectorx", fast_c, "connectorx"), ("driver", plain_c, "driver")):
                def arrow_only():
                    out["r"] = c.execute(sql)
                    assert c.last_path == path and out["r"].row_count == rows

                def to_df():
                    r = c.execute(sql)
                    assert c.last_path == path
                    df = r.to_pandas()
                    assert len(df) == rows

                t_arrow = best(arrow_only, repeat)
                t_df = best(to_df, repeat)
                print(f"{name:>10}: {rows:,} rows x 5 cols -> Arrow {t_arrow:.2f} s, "
                      f"-> pandas DataFrame {t_df:.2f} s")
            a = fast_c.execute(sql).to_pandas()
            b = plain_c.execute(sql).to_pandas()
            import pandas as pd

            pd.testing.assert_frame_equal(a, b)
            print("            the two DataFrames are equal")
        finally:
            fast_c.close()
            plain_c.close()
    finally:
        admin(None, f"DROP DATABASE IF EXISTS `{db}`")


def bench_catalog(tables: int, repeat: int) -> None:
    db = f"sqlnb_bench_{uuid.uuid4().hex[:8]}"
    admin(None, f"CREATE DATABASE `{db}`")
    try:
        con = mysql.connector.connect(host=HOST, port=PORT, user=USER, password=PASSWORD, database=db,
                                      autocommit=True)
        try:
            cur = con.cursor()
            start = time.perf_counter()
            for i in range(tables):
                cols = ", ".join(f"c{j} {'INT' if j % 3 == 0 else 'VARCHAR(40)' if j % 3 == 1 else 'DECIMAL(10,2)'} "
                                 f"COMMENT 'column {j}'" for j in range(2, 19))
                fk = (f", ref_id INT, KEY ix_ref (ref_id), CONSTRAINT fk_t{i} FOREIGN KEY (ref_id) "
                      f"REFERENCES t{i - 1} (id)") if i else ", ref_id INT"
                cur.execute(f"CREATE TABLE t{i} (id INT PRIMARY KEY, code VARCHAR(20) UNIQUE, {cols}{fk}) "
                            f"COMMENT 'table {i}'")
            print(f"   created {tables} tables x 20 columns in {time.perf_counter() - start:.1f} s")
        finally:
            con.close()
        c = adapters.connect(f"mysql://{USER}:{PASSWORD}@{HOST}:{PORT}/{db}")
        try:
            def load():
                cat = c.catalog(refresh=True)
                assert len(cat.tables) == tables and len(cat.tables[-1].columns) == 20

            t = best(load, repeat)
            cat = c.catalog()
            t5 = cat.find("t5")
            assert t5.primary_key == ["id"] and t5.foreign_keys[0].ref_table == "t4" and ["code"] in t5.unique
            print(f"   catalog: {tables} tables x 20 columns with keys and indexes in {t:.2f} s")
        finally:
            c.close()
    finally:
        admin(None, f"DROP DATABASE IF EXISTS `{db}`")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--tables", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    bench_fetch(args.rows, args.repeat)
    bench_catalog(args.tables, args.repeat)


if __name__ == "__main__":
    main()
