"""The demo: an embedded DuckDB sample database and a notebook connected to it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

SAMPLE_SQL = [
    "SELECT setseed(0.42)",
    """CREATE TABLE customers (
        id INTEGER PRIMARY KEY,
        name VARCHAR NOT NULL,
        email VARCHAR UNIQUE,
        country VARCHAR NOT NULL,
        signed_up DATE NOT NULL)""",
    "COMMENT ON TABLE customers IS 'People who have an account in the shop'",
    """CREATE TABLE products (
        id INTEGER PRIMARY KEY,
        name VARCHAR NOT NULL,
        category VARCHAR NOT NULL,
        price DECIMAL(10, 2) NOT NULL)""",
    """CREATE TABLE orders (
        id INTEGER PRIMARY KEY,
        customer_id INTEGER NOT NULL REFERENCES customers (id),
        ordered_at TIMESTAMP NOT NULL,
        status VARCHAR NOT NULL)""",
    "COMMENT ON COLUMN orders.status IS 'new, paid, shipped or cancelled'",
    """CREATE TABLE order_items (
        order_id INTEGER NOT NULL REFERENCES orders (id),
        product_id INTEGER NOT NULL REFERENCES products (id),
        quantity INTEGER NOT NULL,
        PRIMARY KEY (order_id, product_id))""",
    """INSERT INTO customers
       SELECT i,
              ['Ada', 'Grace', 'Linus', 'Barbara', 'Ken', 'Margaret', 'Dennis', 'Frances'][1 + i % 8]
                || ' ' || ['Lovelace', 'Hopper', 'Torvalds', 'Liskov', 'Thompson', 'Hamilton', 'Ritchie', 'Allen'][1 + (i // 8) % 8]
                || ' ' || chr(CAST(65 + (i // 64) % 26 AS INTEGER)) || '.',
              'customer' || i || '@example.com',
              ['DE', 'FR', 'GB', 'US', 'JP', 'BR', 'IN', 'NL'][1 + CAST(floor(random() * 8) AS INTEGER)],
              DATE '2022-01-01' + CAST(floor(random() * 900) AS INTEGER)
       FROM range(1, 501) t(i)""",
    """INSERT INTO products
       SELECT i,
              ['Widget', 'Gadget', 'Gizmo', 'Doohickey', 'Sprocket'][1 + i % 5] || ' ' || i,
              ['tools', 'toys', 'garden', 'kitchen', 'office'][1 + (i * 3) % 5],
              CAST(round(2 + random() * 198, 2) AS DECIMAL(10, 2))
       FROM range(1, 51) t(i)""",
    """INSERT INTO orders
       SELECT i, 1 + CAST(floor(random() * 500) AS INTEGER),
              TIMESTAMP '2024-01-01' + to_seconds(CAST(floor(random() * 365 * 86400) AS BIGINT)),
              ['new', 'paid', 'paid', 'shipped', 'shipped', 'shipped', 'cancelled'][1 + CAST(floor(random() * 7) AS INTEGER)]
       FROM range(1, 5001) t(i)""",
    """INSERT INTO order_items
       SELECT DISTINCT ON (order_id, product_id) order_id, product_id, quantity FROM (
           SELECT o.id AS order_id, 1 + CAST(floor(random() * 50) AS INTEGER) AS product_id,
                  1 + CAST(floor(random() * 4) AS INTEGER) AS quantity
           FROM orders o, range(3))""",
]

NOTEBOOK_CELLS = [
    ("markdown", "# sqlnb demo\n\nA notebook connected to an embedded DuckDB sample shop "
                 "(`sample.duckdb`: customers, products, orders, order_items). "
                 "Run the cells from the top."),
    ("code", "%load_ext sqlnb\n%sqlnb connect duckdb:///sample.duckdb --name sample --readonly"),
    ("code", "%sqlnb schema"),
    ("code", "%sqlnb schema orders --sample 3"),
    ("code", "%%sql\n-- revenue per month of 2024\n"
             "SELECT date_trunc('month', o.ordered_at) AS month,\n"
             "       sum(p.price * i.quantity) AS revenue,\n"
             "       count(DISTINCT o.id) AS orders\n"
             "FROM orders o\n"
             "JOIN order_items i ON i.order_id = o.id\n"
             "JOIN products p ON p.id = i.product_id\n"
             "WHERE o.status <> 'cancelled'\n"
             "GROUP BY month\nORDER BY month"),
    ("code", "country = 'DE'"),
    ("code", "%%sql -o top_customers\n-- :country is bound from the Python variable above\n"
             "SELECT c.name, count(*) AS orders\n"
             "FROM customers c JOIN orders o ON o.customer_id = c.id\n"
             "WHERE c.country = :country\n"
             "GROUP BY c.name ORDER BY orders DESC LIMIT 10"),
    ("code", "top_customers.plot.barh(x='name', y='orders')"),
    ("markdown", "## Ask a question\n\n`%%ask` turns a question into a read-only query it has "
                 "run and checked, and inserts it as a new `%%sql` cell below. It uses your model "
                 "when one is configured (`ANTHROPIC_API_KEY`, `SQLNB_MODEL` or "
                 "`%config AskMagic.model = \"provider:model\"`); otherwise the next cell points it "
                 "at `demo-replies.json`, a scripted model that replays a fixed answer, so the "
                 "notebook also runs offline."),
    ("code", "import os\n"
             "if not (os.environ.get('SQLNB_MODEL') or os.environ.get('ANTHROPIC_API_KEY')):\n"
             "    get_ipython().run_line_magic('config', 'AskMagic.model = \"scripted:demo-replies.json\"')"),
    ("code", "%%ask\nWhich five customers placed the most orders, and how many each?"),
]

# What the scripted model answers in the demo (a query, then FINAL after seeing the result).
DEMO_REPLIES = [
    "```sql\nSELECT c.name, count(*) AS orders\nFROM customers c\n"
    "JOIN orders o ON o.customer_id = c.id\nGROUP BY c.name\nORDER BY orders DESC\nLIMIT 5\n```",
    "FINAL",
]


def create_sample_database(path: str | os.PathLike) -> Path:
    """Write the sample shop to ``path`` (replacing an older copy)."""
    import duckdb

    path = Path(path)
    for p in (path, Path(f"{path}.wal")):
        p.unlink(missing_ok=True)
    con = duckdb.connect(str(path))
    try:
        for stmt in SAMPLE_SQL:
            con.execute(stmt)
        con.execute("CHECKPOINT")
    finally:
        con.close()
    return path


def notebook_json() -> dict:
    cells = []
    for i, (kind, source) in enumerate(NOTEBOOK_CELLS):
        cell = {"cell_type": kind, "id": f"sqlnb-demo-{i}", "metadata": {}, "source": source}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        cells.append(cell)
    return {"cells": cells, "metadata": {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}


def prepare_demo(directory: str | os.PathLike) -> Path:
    """Create ``sample.duckdb``, ``sqlnb-demo.ipynb`` and ``demo-replies.json`` in
    ``directory``; keep an edited notebook."""
    d = Path(directory).expanduser().resolve()
    d.mkdir(parents=True, exist_ok=True)
    create_sample_database(d / "sample.duckdb")
    replies = d / "demo-replies.json"
    if not replies.exists():
        replies.write_text(json.dumps(DEMO_REPLIES, indent=1))
    nb = d / "sqlnb-demo.ipynb"
    if not nb.exists():  # never overwrite the user's work
        nb.write_text(json.dumps(notebook_json(), indent=1))
    return nb


def launch_lab(notebook: Path, port: int = 8888, open_browser: bool = True) -> int:
    """Run JupyterLab on the notebook (blocks until JupyterLab exits)."""
    if shutil.which("jupyter") is None and not (Path(sys.executable).parent / "jupyter").exists():
        print('JupyterLab is not installed: pip install "sqlnb[lab]"', file=sys.stderr)
        return 2
    jupyter = shutil.which("jupyter") or str(Path(sys.executable).parent / "jupyter")
    cmd = [jupyter, "lab", notebook.name, f"--port={port}", f"--ServerApp.root_dir={notebook.parent}"]
    if not open_browser:
        cmd.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    return subprocess.call(cmd, cwd=notebook.parent)
