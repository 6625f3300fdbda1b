"""The demo notebook (``sqlnb-demo.ipynb``): its cells, and the demo folder with the sample
database beside it (:func:`prepare_demo`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from sqlnb.demo.databases import create_sample_database

__all__ = ["NOTEBOOK_CELLS", "notebook_json", "prepare_demo"]

NOTEBOOK_CELLS = [
    (
        "markdown",
        "# sqlnb demo\n\n"
        "This notebook is connected to `sample.duckdb`, a small company's database: "
        "`customers`, `orders` and their lines (`order_items`), `products` in `categories` "
        "from `suppliers`, `payments`, `returns`, `employees` in `regions`, and a view, "
        "`order_totals` — about 280,000 rows from 2023 to 2025. `sample.sqlite` next to it "
        "holds the same data for SQLite.\n\nRun the cells from the top "
        "(**Run › Run All Cells** works too).",
    ),
    ("code", "%load_ext sqlnb\n%sqlnb connect duckdb:///sample.duckdb --name sample --readonly"),
    (
        "markdown",
        "## Look around\n\n`%sqlnb schema` lists the tables with their comments; "
        "name a table to see its columns, keys and a few rows.",
    ),
    ("code", "%sqlnb schema"),
    ("code", "%sqlnb schema orders --sample 3"),
    (
        "markdown",
        "## Write SQL\n\nA `%%sql` cell runs on the active connection. "
        '`DiscountPct` is a mixed-case column: quote it (`"DiscountPct"`) and the query works on '
        "engines that fold unquoted names to lower case too.",
    ),
    (
        "code",
        "%%sql\n-- revenue per month of 2025, after discounts\n"
        "SELECT date_trunc('month', o.ordered_at) AS month,\n"
        '       round(sum(i.quantity * i.unit_price * (100 - coalesce(i."DiscountPct", 0))) / 100.0, 2) AS revenue,\n'
        "       count(DISTINCT o.id) AS orders\n"
        "FROM orders o\n"
        "JOIN order_items i ON i.order_id = o.id\n"
        "WHERE o.status <> 'cancelled' AND o.ordered_at >= TIMESTAMP '2025-01-01'\n"
        "GROUP BY month\nORDER BY month",
    ),
    (
        "markdown",
        "`:name` binds a Python variable as a query parameter, and `-o df` keeps the whole "
        "result as a pandas DataFrame.",
    ),
    ("code", "country = 'DE'"),
    (
        "code",
        "%%sql -o top_customers\n"
        "SELECT c.name, c.city, count(*) AS orders, sum(t.total) AS spent\n"
        "FROM customers c JOIN order_totals t ON t.customer_id = c.id\n"
        "WHERE c.country = :country AND t.status <> 'cancelled'\n"
        "GROUP BY c.name, c.city ORDER BY spent DESC LIMIT 10",
    ),
    ("markdown", "## Plot a result"),
    (
        "code",
        "%%sql -o monthly\n"
        "SELECT date_trunc('month', ordered_at) AS month, sum(total) AS revenue\n"
        "FROM order_totals WHERE status <> 'cancelled'\n"
        "GROUP BY month ORDER BY month",
    ),
    (
        "code",
        "import matplotlib.pyplot as plt\n\n"
        "monthly['revenue'] = monthly['revenue'].astype(float)\n"
        "ax = monthly.plot(x='month', y='revenue', figsize=(9, 3), legend=False,\n"
        "                  title='Revenue per month (EUR)')\n"
        "plt.show()",
    ),
    (
        "markdown",
        "## Ask questions\n\n"
        "`%%ask` turns a question into a read-only query that it has run and checked, and "
        "inserts it as a new `%%sql` cell below. It uses the model you chose: "
        '`SQLNB_MODEL` or `%config AskMagic.model = "provider:model"`, else Claude when '
        "`ANTHROPIC_API_KEY` is set, else the offline model when it is installed "
        '(`pip install "sqlnb[local]"`, then `sqlnb model download qwen2.5-coder-1.5b`). '
        "With none of these, the ask cells below say how to set one up, and the rest of "
        "the notebook still runs.",
    ),
    ("code", "%%ask\nWhich five customers spent the most in 2025, and how much each?"),
    (
        "markdown",
        "A follow-up question continues the same conversation: it can refer to the previous answer.",
    ),
    ("code", "%%ask\nNow only customers from Germany"),
    (
        "markdown",
        "A question that can be read in several ways gets a question back instead of "
        "a guess: answer it in the next `%%ask` cell.",
    ),
    ("code", "%%ask\nShow me the best products"),
    (
        "markdown",
        "## The sidebar\n\n"
        "The same assistant lives in a panel: open it with **View › Ask sqlnb** "
        "(or the sqlnb tab in the right side bar). It asks on this notebook's kernel and "
        "connection, shows each step as it runs, and puts the final query into a `%%sql` "
        "cell of this notebook.",
    ),
]


def notebook_json() -> dict:
    cells = []
    for i, (kind, source) in enumerate(NOTEBOOK_CELLS):
        cell = {"cell_type": kind, "id": f"sqlnb-demo-{i}", "metadata": {}, "source": source}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        cells.append(cell)
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def prepare_demo(directory: str | os.PathLike) -> Path:
    """Create ``sample.duckdb``, its SQLite copy ``sample.sqlite`` and
    ``sqlnb-demo.ipynb`` in ``directory``; keep an edited notebook."""
    d = Path(directory).expanduser().resolve()
    d.mkdir(parents=True, exist_ok=True)
    create_sample_database(d / "sample.duckdb")
    nb = d / "sqlnb-demo.ipynb"
    if not nb.exists():  # never overwrite the user's work
        nb.write_text(json.dumps(notebook_json(), indent=1))
    return nb
