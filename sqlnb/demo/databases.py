"""The sample company written as databases: a DuckDB file with its SQLite copy
(:func:`create_sample_database`), a PostgreSQL database (:func:`write_postgres`), and a digest
of the rows that is the same on every engine (:func:`content_digest`)."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import sqlite3
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

from sqlnb.demo.data import SEED, generate
from sqlnb.demo.schema import COMMENTS, SELF_REFERENCES, TABLES, VIEW_SQL, column_types

__all__ = [
    "content_digest",
    "create_sample_database",
    "sqlite_path_for",
    "sqlite_value",
    "write_duckdb",
    "write_postgres",
    "write_sqlite",
]


def _arrow_table(columns: list[tuple[str, str]], rows: list[tuple]):
    import pyarrow as pa

    def arrow_type(decl: str):
        if decl.startswith("DECIMAL"):
            p, s = decl[8:-1].split(",")
            return pa.decimal128(int(p), int(s))
        return {
            "INTEGER": pa.int32(),
            "VARCHAR": pa.string(),
            "DATE": pa.date32(),
            "TIMESTAMP": pa.timestamp("us"),
            "BOOLEAN": pa.bool_(),
        }[decl]

    data = list(zip(*rows, strict=True)) if rows else [() for _ in columns]
    return pa.table(
        {
            name: pa.array(list(values), type=arrow_type(decl))
            for (name, decl), values in zip(columns, data, strict=True)
        }
    )


def sqlite_value(v: Any) -> Any:
    """A value as the SQLite copy stores it: decimals as floats, booleans as 0 and 1, dates
    and timestamps as ISO text (the DuckDB file keeps their types)."""
    if isinstance(v, Decimal):
        return float(v)
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, dt.datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, dt.date):
        return v.isoformat()
    return v


def _parents_first(table: str, data: tuple[list[str], list[tuple]]) -> Iterator[list[tuple]]:
    """The rows in batches, each row after the row it points to (DuckDB checks a foreign
    key against the rows already in the table)."""
    cols, rows = data
    if table not in SELF_REFERENCES:
        yield rows
        return
    k = cols.index(SELF_REFERENCES[table])
    done: set[Any] = {None}
    left = rows
    while left:
        batch = [r for r in left if r[k] in done]
        yield batch
        done.update(r[0] for r in batch)
        left = [r for r in left if r[0] not in done]


def write_duckdb(path: Path, data: dict[str, tuple[list[str], list[tuple]]]) -> None:
    import duckdb

    types = column_types()
    con = duckdb.connect(str(path))
    try:
        con.execute("SET threads TO 1")  # the same file every time
        for table, ddl in TABLES:
            con.execute(ddl)
            for batch in _parents_first(table, data[table]):
                con.register("sqlnb_src", _arrow_table(types[table], batch))
                con.execute(f"INSERT INTO {table} SELECT * FROM sqlnb_src")
                con.unregister("sqlnb_src")
        con.execute(VIEW_SQL)
        for target, text in COMMENTS:
            quoted = text.replace("'", "''")
            con.execute(f"COMMENT ON {target} IS '{quoted}'")
        con.execute("CHECKPOINT")
    finally:
        con.close()


def write_sqlite(path: Path, data: dict[str, tuple[list[str], list[tuple]]]) -> None:
    con = sqlite3.connect(str(path))
    try:
        con.execute("PRAGMA journal_mode = OFF")
        con.execute("PRAGMA synchronous = OFF")
        for table, ddl in TABLES:
            con.execute(ddl)
            cols, rows = data[table]
            marks = ", ".join("?" * len(cols))
            con.executemany(
                f"INSERT INTO {table} VALUES ({marks})", ([sqlite_value(v) for v in row] for row in rows)
            )
        con.execute(VIEW_SQL)
        con.commit()
    finally:
        con.close()


def write_postgres(
    url: str, data: dict[str, tuple[list[str], list[tuple]]] | None = None, *, seed: int = SEED
) -> None:
    """Write the sample company into the PostgreSQL database at ``url`` (a
    ``postgresql://`` URL; the database must exist): the same tables, view, data and
    comments as the DuckDB file, replacing the sample's tables where they exist.  One
    transaction: an interrupted load leaves the database as it was."""
    import psycopg
    from psycopg import sql as pgsql

    data = data if data is not None else generate(seed)
    with psycopg.connect(url) as con:  # commits at the end of the block, rolls back on error
        con.execute("DROP VIEW IF EXISTS order_totals")
        for table, _ in reversed(TABLES):
            con.execute(pgsql.SQL("DROP TABLE IF EXISTS {} CASCADE").format(pgsql.Identifier(table)))
        for table, ddl in TABLES:
            con.execute(ddl)
            cols, rows = data[table]
            copy = pgsql.SQL("COPY {} ({}) FROM STDIN").format(
                pgsql.Identifier(table), pgsql.SQL(", ").join(map(pgsql.Identifier, cols))
            )
            with con.cursor().copy(copy) as cp:
                for row in rows:
                    cp.write_row(row)
        con.execute(VIEW_SQL)
        for target, text in COMMENTS:
            con.execute(pgsql.SQL("COMMENT ON " + target + " IS {}").format(pgsql.Literal(text)))
        con.execute("ANALYZE")


def sqlite_path_for(path: str | os.PathLike) -> Path:
    """Where :func:`create_sample_database` puts the SQLite copy of ``path``."""
    return Path(path).with_suffix(".sqlite")


def create_sample_database(
    path: str | os.PathLike, *, sqlite: bool | str | os.PathLike = True, seed: int = SEED
) -> Path:
    """Write the sample company to the DuckDB file ``path`` and, unless ``sqlite`` is
    False, a SQLite copy (``sqlite``: its path; default ``path`` with suffix ``.sqlite``),
    replacing older copies.  Returns ``path``."""
    path = Path(path)
    data = generate(seed)
    for p in (path, Path(f"{path}.wal")):
        p.unlink(missing_ok=True)
    write_duckdb(path, data)
    if sqlite is not False:
        lite = sqlite_path_for(path) if sqlite is True else Path(sqlite)
        for p in (lite, Path(f"{lite}-journal"), Path(f"{lite}-wal")):
            p.unlink(missing_ok=True)
        write_sqlite(lite, data)
    return path


def content_digest(path: str | os.PathLike) -> str:
    """A sha256 over every table's rows (in key order, values as text) of a sample
    database, DuckDB or SQLite: the same data gives the same digest on both engines."""
    path = Path(path)
    h = hashlib.sha256()
    types = column_types()
    if path.suffix == ".sqlite":
        con: Any = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    else:
        import duckdb

        con = duckdb.connect(str(path), read_only=True)
    try:
        for table, cols in types.items():
            exprs = []
            for name, decl in cols:
                q = f'"{name}"'
                if decl.startswith("DECIMAL"):
                    exprs.append(f"CAST(round({q} * 100) AS BIGINT)")  # cents
                elif decl == "BOOLEAN":
                    exprs.append(f"CAST({q} AS INTEGER)")
                else:
                    exprs.append(f"CAST({q} AS VARCHAR)")
            order = ", ".join(f'"{n}"' for n, _ in cols[:2])
            h.update(table.encode())
            for row in con.execute(f"SELECT {', '.join(exprs)} FROM {table} ORDER BY {order}").fetchall():
                h.update(repr(tuple(row)).encode())
    finally:
        con.close()
    return h.hexdigest()
