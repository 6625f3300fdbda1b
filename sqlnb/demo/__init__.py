"""The demo: a sample company database (DuckDB plus a SQLite copy) and a notebook.

``create_sample_database(path)`` writes a small company — regions, employees, customers,
categories, suppliers, products, orders and their lines, payments and returns — a few
hundred thousand rows over three years (2023-2025), generated from name lists with a fixed
seed, so every build holds the same data.  Next to the DuckDB file it writes a SQLite copy
(``sample.sqlite``) with the same tables, columns, view and data; only DuckDB keeps the
comments on tables and columns (SQLite has none).

One module per job: :mod:`~sqlnb.demo.schema` (the tables), :mod:`~sqlnb.demo.data` (the
rows), :mod:`~sqlnb.demo.databases` (writing them), :mod:`~sqlnb.demo.notebook` (the demo
notebook and folder) and :mod:`~sqlnb.demo.lab` (launching JupyterLab).
"""

from __future__ import annotations

from sqlnb.demo.data import FIRST_NAMES, LAST_NAMES, SEED, generate
from sqlnb.demo.databases import (
    content_digest,
    create_sample_database,
    sqlite_path_for,
    write_duckdb,
    write_postgres,
    write_sqlite,
)
from sqlnb.demo.lab import launch_lab
from sqlnb.demo.notebook import NOTEBOOK_CELLS, notebook_json, prepare_demo
from sqlnb.demo.schema import COMMENTS, TABLES, VIEW_SQL, table_names

__all__ = [
    "COMMENTS",
    "FIRST_NAMES",
    "LAST_NAMES",
    "NOTEBOOK_CELLS",
    "SEED",
    "TABLES",
    "VIEW_SQL",
    "content_digest",
    "create_sample_database",
    "generate",
    "launch_lab",
    "notebook_json",
    "prepare_demo",
    "sqlite_path_for",
    "table_names",
    "write_duckdb",
    "write_postgres",
    "write_sqlite",
]
