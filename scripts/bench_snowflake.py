"""Measure the Snowflake adapter's fetch paths against the fakesnow stand-in: 1,000,000 rows
x 5 columns into pandas through ``fetch_pandas_all`` (what fakesnow offers), through plain
rows (``arrow=False``) and through ``fetch_arrow_all`` (simulated: fakesnow's cursor given
one that returns its DuckDB Arrow result, as the real connector returns Arrow chunks).

    .venv/bin/python scripts/bench_snowflake.py [--rows N] [--repeat K]

These are fakesnow (DuckDB) numbers: they measure sqlnb's conversions, not Snowflake.
"""

from __future__ import annotations

import sqlnb  # noqa: F401

import argparse
import tempfile
import time

import fakesnow
import pandas as pd

import sqlnb.adapters as adapters


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
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d, fakesnow.patch(db_path=d, create_database_on_connect=True,
                                                            create_schema_on_connect=True):
        url = "snowflake://bench@fakeaccount/BENCH/PUBLIC?warehouse=W"
        c = adapters.connect(url)
        c.execute("CREATE TABLE big (id INTEGER, x FLOAT, s VARCHAR, ts TIMESTAMP_NTZ, amount NUMBER(12,2))")
        c.execute(f"INSERT INTO big SELECT i, i * 1.5, 'name-' || i, "
                  f"'2024-01-01'::TIMESTAMP_NTZ + INTERVAL (i) SECOND, (i % 100000) / 100 "
                  f"FROM range({args.rows}) t(i)")
        plain = adapters.connect(url, arrow=False)
        sql = "SELECT id, x, s, ts, amount FROM big"
        frames = {}
        try:
            for name, conn, patch in (("fetch_pandas_all", c, False), ("rows (fetchall)", plain, False),
                                      ("fetch_arrow_all", c, True)):
                from fakesnow.cursor import FakeSnowflakeCursor

                if patch:
                    FakeSnowflakeCursor.fetch_arrow_all = lambda self, **kw: self._arrow_table
                try:
                    def run():
                        df = conn.execute(sql).to_pandas()
                        assert len(df) == args.rows
                        frames[name] = df

                    t = best(run, args.repeat)
                finally:
                    if patch:
                        del FakeSnowflakeCursor.fetch_arrow_all
                print(f"{name:>17}: {args.rows:,} rows x 5 cols -> pandas DataFrame {t:.2f} s "
                      f"(path {conn.last_path})")
            first = frames.pop("fetch_pandas_all")
            for df in frames.values():
                pd.testing.assert_frame_equal(first, df)
            print("                   the DataFrames are equal")
        finally:
            c.close()
            plain.close()


if __name__ == "__main__":
    main()
