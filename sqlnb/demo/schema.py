"""The sample company's schema: the same DDL on DuckDB, SQLite and PostgreSQL (SQLite keeps
the declared types), its view, and the comments on its tables and columns."""

from __future__ import annotations

import re

__all__ = ["COMMENTS", "SELF_REFERENCES", "TABLES", "VIEW_SQL", "column_types", "table_names"]

TABLES: list[tuple[str, str]] = [
    (
        "regions",
        """CREATE TABLE regions (
        id INTEGER PRIMARY KEY,
        name VARCHAR NOT NULL UNIQUE)""",
    ),
    (
        "employees",
        """CREATE TABLE employees (
        id INTEGER PRIMARY KEY,
        first_name VARCHAR NOT NULL,
        last_name VARCHAR NOT NULL,
        email VARCHAR NOT NULL UNIQUE,
        title VARCHAR NOT NULL,
        region_id INTEGER REFERENCES regions (id),
        manager_id INTEGER REFERENCES employees (id),
        hired_on DATE NOT NULL,
        salary DECIMAL(10, 2) NOT NULL)""",
    ),
    (
        "customers",
        """CREATE TABLE customers (
        id INTEGER PRIMARY KEY,
        name VARCHAR NOT NULL,
        email VARCHAR UNIQUE,
        country VARCHAR NOT NULL,
        city VARCHAR NOT NULL,
        region_id INTEGER NOT NULL REFERENCES regions (id),
        segment VARCHAR NOT NULL,
        signed_up DATE NOT NULL)""",
    ),
    (
        "categories",
        """CREATE TABLE categories (
        id INTEGER PRIMARY KEY,
        name VARCHAR NOT NULL UNIQUE,
        parent_id INTEGER REFERENCES categories (id))""",
    ),
    (
        "suppliers",
        """CREATE TABLE suppliers (
        id INTEGER PRIMARY KEY,
        name VARCHAR NOT NULL UNIQUE,
        country VARCHAR NOT NULL,
        contact_email VARCHAR)""",
    ),
    (
        "products",
        """CREATE TABLE products (
        id INTEGER PRIMARY KEY,
        name VARCHAR NOT NULL,
        category_id INTEGER NOT NULL REFERENCES categories (id),
        supplier_id INTEGER NOT NULL REFERENCES suppliers (id),
        price DECIMAL(10, 2) NOT NULL,
        cost DECIMAL(10, 2) NOT NULL,
        discontinued BOOLEAN NOT NULL,
        launched_on DATE NOT NULL)""",
    ),
    (
        "orders",
        """CREATE TABLE orders (
        id INTEGER PRIMARY KEY,
        customer_id INTEGER NOT NULL REFERENCES customers (id),
        employee_id INTEGER REFERENCES employees (id),
        ordered_at TIMESTAMP NOT NULL,
        shipped_at TIMESTAMP,
        status VARCHAR NOT NULL,
        channel VARCHAR NOT NULL)""",
    ),
    (
        "order_items",
        """CREATE TABLE order_items (
        order_id INTEGER NOT NULL REFERENCES orders (id),
        product_id INTEGER NOT NULL REFERENCES products (id),
        quantity INTEGER NOT NULL,
        unit_price DECIMAL(10, 2) NOT NULL,
        "DiscountPct" DECIMAL(5, 2),
        PRIMARY KEY (order_id, product_id))""",
    ),
    (
        "payments",
        """CREATE TABLE payments (
        id INTEGER PRIMARY KEY,
        order_id INTEGER NOT NULL REFERENCES orders (id),
        paid_at TIMESTAMP NOT NULL,
        amount DECIMAL(12, 2) NOT NULL,
        method VARCHAR NOT NULL)""",
    ),
    (
        "returns",
        """CREATE TABLE returns (
        id INTEGER PRIMARY KEY,
        order_id INTEGER NOT NULL REFERENCES orders (id),
        product_id INTEGER NOT NULL REFERENCES products (id),
        returned_on DATE NOT NULL,
        quantity INTEGER NOT NULL,
        reason VARCHAR)""",
    ),
]

VIEW_SQL = """CREATE VIEW order_totals AS
SELECT o.id AS order_id, o.customer_id, o.ordered_at, o.status,
       count(*) AS lines,
       sum(i.quantity) AS items,
       sum(i.quantity * i.unit_price * (100 - coalesce(i."DiscountPct", 0))) / 100.0 AS total
FROM orders o
JOIN order_items i ON i.order_id = o.id
GROUP BY o.id, o.customer_id, o.ordered_at, o.status"""

COMMENTS: list[tuple[str, str]] = [
    ("TABLE regions", "Sales regions; every customer and most employees belong to one"),
    ("TABLE employees", "Staff: sales representatives, their managers and the head office"),
    ("COLUMN employees.manager_id", "The employee's manager; NULL for the chief executive"),
    ("COLUMN employees.region_id", "NULL for head-office staff"),
    ("TABLE customers", "Companies and people who have an account in the shop"),
    ("COLUMN customers.email", "NULL when the customer gave none"),
    ("COLUMN customers.segment", "consumer, small business or enterprise"),
    ("TABLE categories", "Product categories; a subcategory points to its parent"),
    ("COLUMN categories.parent_id", "NULL for a top-level category"),
    ("TABLE suppliers", "Companies the products are bought from"),
    ("TABLE products", "What the shop sells"),
    ("COLUMN products.price", "List price in EUR"),
    ("COLUMN products.cost", "Purchase cost in EUR"),
    ("TABLE orders", "One row per order a customer placed"),
    ("COLUMN orders.status", "new, paid, shipped or cancelled"),
    ("COLUMN orders.employee_id", "The sales representative; NULL for orders placed online"),
    ("COLUMN orders.shipped_at", "NULL until the order is shipped"),
    ("COLUMN orders.channel", "web, phone or field sales"),
    ("TABLE order_items", "The lines of an order: one product each"),
    ("COLUMN order_items.unit_price", "Price per unit in EUR when the order was placed"),
    ('COLUMN order_items."DiscountPct"', "Discount on the line in percent (0-100); NULL when none was given"),
    ("TABLE payments", "Money received for orders; an order can be paid in several payments"),
    ("COLUMN payments.method", "card, invoice or paypal"),
    ("TABLE returns", "Products customers sent back"),
    ("COLUMN returns.reason", "NULL when the customer gave no reason"),
    (
        "VIEW order_totals",
        "Each order with its number of lines, items and total in EUR after discounts (not rounded)",
    ),
]

# tables that point to themselves, and the column that does
SELF_REFERENCES = {"employees": "manager_id", "categories": "parent_id"}


def table_names() -> list[str]:
    return [t for t, _ in TABLES]


def column_types() -> dict[str, list[tuple[str, str]]]:
    """(column, declared type) of every table, read from its DDL."""
    out = {}
    for table, ddl in TABLES:
        body = ddl[ddl.index("(") + 1 : ddl.rindex(")")]
        cols = []
        for line in body.split("\n"):
            m = re.match(
                r'\s*("?)(\w+)\1\s+(INTEGER|VARCHAR|DATE|TIMESTAMP|BOOLEAN|DECIMAL\(\d+, \d+\))', line
            )
            if m:
                cols.append((m.group(2), m.group(3)))
        out[table] = cols
    return out
