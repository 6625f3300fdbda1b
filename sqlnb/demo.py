"""The demo: a sample company database (DuckDB plus a SQLite copy) and a notebook.

``create_sample_database(path)`` writes a small company — regions, employees, customers,
categories, suppliers, products, orders and their lines, payments and returns — a few
hundred thousand rows over three years (2023-2025), generated from name lists with a fixed
seed, so every build holds the same data.  Next to the DuckDB file it writes a SQLite copy
(``sample.sqlite``) with the same tables, columns, view and data; only DuckDB keeps the
comments on tables and columns (SQLite has none).
"""

from __future__ import annotations

import bisect
import datetime as dt
import hashlib
import itertools
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any, Iterator

SEED = 20231
START = dt.date(2023, 1, 1)
END = dt.date(2025, 12, 31)  # the data covers three full years
ORDER_STATUSES = ("new", "paid", "shipped", "cancelled")

# ---------------------------------------------------------------------------
# the schema: the same DDL on both engines (SQLite keeps the declared types)
# ---------------------------------------------------------------------------

TABLES: list[tuple[str, str]] = [
    ("regions", """CREATE TABLE regions (
        id INTEGER PRIMARY KEY,
        name VARCHAR NOT NULL UNIQUE)"""),
    ("employees", """CREATE TABLE employees (
        id INTEGER PRIMARY KEY,
        first_name VARCHAR NOT NULL,
        last_name VARCHAR NOT NULL,
        email VARCHAR NOT NULL UNIQUE,
        title VARCHAR NOT NULL,
        region_id INTEGER REFERENCES regions (id),
        manager_id INTEGER REFERENCES employees (id),
        hired_on DATE NOT NULL,
        salary DECIMAL(10, 2) NOT NULL)"""),
    ("customers", """CREATE TABLE customers (
        id INTEGER PRIMARY KEY,
        name VARCHAR NOT NULL,
        email VARCHAR UNIQUE,
        country VARCHAR NOT NULL,
        city VARCHAR NOT NULL,
        region_id INTEGER NOT NULL REFERENCES regions (id),
        segment VARCHAR NOT NULL,
        signed_up DATE NOT NULL)"""),
    ("categories", """CREATE TABLE categories (
        id INTEGER PRIMARY KEY,
        name VARCHAR NOT NULL UNIQUE,
        parent_id INTEGER REFERENCES categories (id))"""),
    ("suppliers", """CREATE TABLE suppliers (
        id INTEGER PRIMARY KEY,
        name VARCHAR NOT NULL UNIQUE,
        country VARCHAR NOT NULL,
        contact_email VARCHAR)"""),
    ("products", """CREATE TABLE products (
        id INTEGER PRIMARY KEY,
        name VARCHAR NOT NULL,
        category_id INTEGER NOT NULL REFERENCES categories (id),
        supplier_id INTEGER NOT NULL REFERENCES suppliers (id),
        price DECIMAL(10, 2) NOT NULL,
        cost DECIMAL(10, 2) NOT NULL,
        discontinued BOOLEAN NOT NULL,
        launched_on DATE NOT NULL)"""),
    ("orders", """CREATE TABLE orders (
        id INTEGER PRIMARY KEY,
        customer_id INTEGER NOT NULL REFERENCES customers (id),
        employee_id INTEGER REFERENCES employees (id),
        ordered_at TIMESTAMP NOT NULL,
        shipped_at TIMESTAMP,
        status VARCHAR NOT NULL,
        channel VARCHAR NOT NULL)"""),
    ("order_items", """CREATE TABLE order_items (
        order_id INTEGER NOT NULL REFERENCES orders (id),
        product_id INTEGER NOT NULL REFERENCES products (id),
        quantity INTEGER NOT NULL,
        unit_price DECIMAL(10, 2) NOT NULL,
        "DiscountPct" DECIMAL(5, 2),
        PRIMARY KEY (order_id, product_id))"""),
    ("payments", """CREATE TABLE payments (
        id INTEGER PRIMARY KEY,
        order_id INTEGER NOT NULL REFERENCES orders (id),
        paid_at TIMESTAMP NOT NULL,
        amount DECIMAL(12, 2) NOT NULL,
        method VARCHAR NOT NULL)"""),
    ("returns", """CREATE TABLE returns (
        id INTEGER PRIMARY KEY,
        order_id INTEGER NOT NULL REFERENCES orders (id),
        product_id INTEGER NOT NULL REFERENCES products (id),
        returned_on DATE NOT NULL,
        quantity INTEGER NOT NULL,
        reason VARCHAR)"""),
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
    ("VIEW order_totals", "Each order with its number of lines, items and total in EUR after discounts (not rounded)"),
]

# ---------------------------------------------------------------------------
# name lists
# ---------------------------------------------------------------------------

FIRST_NAMES = (
    "Ada Aiko Alejandro Amara Anna Arjun Astrid Beatriz Ben Carlos Chen Chiara Chloe Daniel Diego "
    "Elena Emma Farah Felix Fatima Giulia Grace Hannah Hiro Ines Isabel Ivan Jakob James Jana Javier "
    "Jonas Julia Kenji Lars Laura Leon Lina Lucas Luis Maja Marco Maria Mateo Mei Mia Nadia Noah "
    "Nora Olga Omar Pablo Priya Rafael Ravi Rosa Sara Sofia Tariq Thomas Tom Valentina Wei Yara Yusuf Zoe"
).split()
LAST_NAMES = (
    "Abe Almeida Andersson Bauer Becker Bianchi Brown Campbell Chen Costa Dubois Eriksen Fischer "
    "Garcia Gomez Gupta Hansen Hoffmann Ito Jansen Johnson Kim Klein Kowalski Kumar Larsen Laurent "
    "Lopez Martin Meyer Moreau Moretti Mueller Nakamura Nguyen Novak Olsen Patel Perez Petit Rossi "
    "Santos Sato Schmidt Schneider Silva Singh Smith Suzuki Tanaka Taylor Thompson Visser Wagner "
    "Walker Weber Williams Wong Yamamoto Zimmermann"
).split()
# region, country code, cities
GEOGRAPHY = [
    ("Northern Europe", "SE", ["Stockholm", "Gothenburg", "Malmo"]),
    ("Northern Europe", "DK", ["Copenhagen", "Aarhus"]),
    ("Northern Europe", "NO", ["Oslo", "Bergen"]),
    ("Western Europe", "DE", ["Berlin", "Hamburg", "Munich", "Cologne", "Frankfurt"]),
    ("Western Europe", "FR", ["Paris", "Lyon", "Marseille", "Toulouse"]),
    ("Western Europe", "NL", ["Amsterdam", "Rotterdam", "Utrecht"]),
    ("Western Europe", "GB", ["London", "Manchester", "Edinburgh", "Bristol"]),
    ("Southern Europe", "ES", ["Madrid", "Barcelona", "Valencia"]),
    ("Southern Europe", "IT", ["Rome", "Milan", "Turin", "Naples"]),
    ("Southern Europe", "PT", ["Lisbon", "Porto"]),
    ("North America", "US", ["New York", "Chicago", "Austin", "Seattle", "Boston", "Denver"]),
    ("North America", "CA", ["Toronto", "Montreal", "Vancouver"]),
    ("Latin America", "BR", ["Sao Paulo", "Rio de Janeiro", "Curitiba"]),
    ("Latin America", "MX", ["Mexico City", "Guadalajara", "Monterrey"]),
    ("Asia Pacific", "JP", ["Tokyo", "Osaka", "Kyoto"]),
    ("Asia Pacific", "IN", ["Bengaluru", "Mumbai", "Pune"]),
    ("Asia Pacific", "AU", ["Sydney", "Melbourne", "Brisbane"]),
]
REGIONS = list(dict.fromkeys(g[0] for g in GEOGRAPHY))
# top-level category, its subcategories with product nouns, price range
CATALOG = [
    ("Office", [("Paper", ["Notebook", "Printer Paper", "Sticky Notes", "Envelopes"], (2, 25)),
                ("Writing", ["Pen Set", "Marker", "Fountain Pen", "Pencil Case"], (3, 60)),
                ("Furniture", ["Desk", "Office Chair", "Bookshelf", "Monitor Stand"], (40, 600))]),
    ("Electronics", [("Computers", ["Laptop", "Tablet", "Mini PC"], (250, 2200)),
                     ("Accessories", ["Keyboard", "Mouse", "USB Hub", "Webcam", "Headset"], (10, 180)),
                     ("Audio", ["Speaker", "Headphones", "Microphone"], (25, 450))]),
    ("Home & Kitchen", [("Cookware", ["Frying Pan", "Saucepan", "Dutch Oven", "Wok"], (15, 220)),
                        ("Appliances", ["Kettle", "Toaster", "Blender", "Coffee Grinder"], (20, 320)),
                        ("Tableware", ["Mug", "Plate Set", "Glasses", "Cutlery Set"], (5, 90))]),
    ("Garden", [("Tools", ["Shovel", "Pruning Shears", "Rake", "Hose"], (8, 120)),
                ("Plants", ["Seed Pack", "Planter", "Fertilizer"], (3, 70))]),
    ("Sports", [("Fitness", ["Yoga Mat", "Dumbbell Set", "Jump Rope", "Kettlebell"], (8, 250)),
                ("Outdoor", ["Tent", "Backpack", "Sleeping Bag", "Water Bottle"], (10, 400))]),
]
ADJECTIVES = ("Classic Compact Deluxe Eco Essential Flex Nordic Premium Pro Smart Studio Travel "
              "Ultra Urban Vintage").split()
SUPPLIER_WORDS = ("Acme Apex Atlas Blue Cedar Delta Everest Falcon Global Harbor Horizon Iron Lumen "
                  "Maple Nova Orbit Pioneer Polar Quantum Summit Sterling Terra Vertex Zenith").split()
SUPPLIER_KINDS = ("Trading Supply Goods Industries Works Imports Manufacturing Partners").split()
SUPPLIER_FORMS = {"DE": "GmbH", "FR": "SARL", "GB": "Ltd", "US": "Inc.", "JP": "K.K.", "IT": "S.r.l.",
                  "ES": "S.L.", "NL": "B.V.", "CN": "Co., Ltd", "SE": "AB", "IN": "Pvt Ltd", "PL": "Sp. z o.o."}
RETURN_REASONS = ("damaged", "wrong item", "not as described", "changed mind", "arrived late")

# ---------------------------------------------------------------------------
# the data
# ---------------------------------------------------------------------------

_CENT = Decimal("0.01")


def _money(x: float) -> Decimal:
    return Decimal(f"{x:.2f}")


def _day(rng: random.Random, start: dt.date, end: dt.date) -> dt.date:
    return start + dt.timedelta(days=rng.randrange((end - start).days + 1))


def generate(seed: int = SEED) -> dict[str, tuple[list[str], list[tuple]]]:
    """Every table's columns and rows (Python values: int, str, Decimal, date, datetime,
    bool, None), the same for the same ``seed``."""
    rng = random.Random(seed)
    out: dict[str, tuple[list[str], list[tuple]]] = {}

    regions = [(i, name) for i, name in enumerate(REGIONS, 1)]
    region_id = {name: i for i, name in regions}
    out["regions"] = (["id", "name"], regions)

    # employees: the chief executive, a manager per region, head office, sales reps
    employees: list[tuple] = []
    used_emails: set[str] = set()

    def employee(title: str, region: int | None, manager: int | None, salary: tuple[int, int]) -> None:
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        email = f"{first}.{last}".lower()
        n = 2
        while email in used_emails:
            email, n = f"{first}.{last}{n}".lower(), n + 1
        used_emails.add(email)
        employees.append((len(employees) + 1, first, last, f"{email}@company.example", title, region,
                          manager, _day(rng, dt.date(2014, 1, 1), dt.date(2025, 6, 30)),
                          _money(rng.randrange(*salary) * 100)))

    employee("Chief Executive Officer", None, None, (1800, 2200))
    managers = {}
    for rid, _name in regions:
        employee("Regional Sales Manager", rid, 1, (950, 1300))
        managers[rid] = len(employees)
    for title in ("Chief Financial Officer", "Accountant", "Buyer", "Buyer", "Data Analyst", "Office Manager"):
        employee(title, None, 1, (450, 1400) if title.startswith("Chief") else (420, 700))
    reps: dict[int, list[int]] = {rid: [] for rid, _ in regions}
    for k in range(47):
        rid = regions[k % len(regions)][0]
        employee("Senior Sales Representative" if rng.random() < 0.25 else "Sales Representative",
                 rid, managers[rid], (480, 820))
        reps[rid].append(len(employees))
    all_reps = [e for ids in reps.values() for e in ids]
    out["employees"] = (["id", "first_name", "last_name", "email", "title", "region_id", "manager_id",
                         "hired_on", "salary"], employees)

    # customers, numbered in the order they signed up
    n_customers = 6000
    signups = sorted(_day(rng, dt.date(2021, 1, 1), dt.date(2025, 11, 30)) for _ in range(n_customers))
    geo_weights = [5 if g[1] in ("US", "DE", "GB", "FR") else 2 for g in GEOGRAPHY]
    customers: list[tuple] = []
    segments: list[str] = []
    cust_region: list[int] = []
    for i, signed_up in enumerate(signups, 1):
        region, country, cities = rng.choices(GEOGRAPHY, geo_weights)[0]
        r = rng.random()
        segment = "consumer" if r < 0.7 else "small business" if r < 0.92 else "enterprise"
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        if segment == "consumer":
            name = f"{first} {last}"
            email = f"{first}.{last}.{i}@mail.example".lower()
        else:
            name = (f"{last} & {rng.choice(LAST_NAMES)}" if rng.random() < 0.4 else
                    f"{rng.choice(SUPPLIER_WORDS)} {rng.choice(SUPPLIER_KINDS)}")
            email = f"orders.{i}@{name.split()[0].lower()}.example"
        if rng.random() < 0.08:
            email = None
        customers.append((i, name, email, country, rng.choice(cities), region_id[region], segment, signed_up))
        segments.append(segment)
        cust_region.append(region_id[region])
    out["customers"] = (["id", "name", "email", "country", "city", "region_id", "segment", "signed_up"],
                        customers)

    # categories: five top-level ones, then their subcategories
    categories: list[tuple] = [(i, top, None) for i, (top, _subs) in enumerate(CATALOG, 1)]
    subcats: list[tuple[int, list[str], tuple[int, int]]] = []
    for parent, (_top, subs) in enumerate(CATALOG, 1):
        for name, nouns, prices in subs:
            categories.append((len(categories) + 1, name, parent))
            subcats.append((len(categories), nouns, prices))
    out["categories"] = (["id", "name", "parent_id"], categories)

    suppliers: list[tuple] = []
    names: set[str] = set()
    while len(suppliers) < 40:
        country = rng.choice(sorted(SUPPLIER_FORMS))
        name = f"{rng.choice(SUPPLIER_WORDS)} {rng.choice(SUPPLIER_KINDS)} {SUPPLIER_FORMS[country]}"
        if name in names:
            continue
        names.add(name)
        contact = None if rng.random() < 0.15 else f"sales@{name.split()[0].lower()}-{len(suppliers) + 1}.example"
        suppliers.append((len(suppliers) + 1, name, country, contact))
    out["suppliers"] = (["id", "name", "country", "contact_email"], suppliers)

    products: list[tuple] = []
    names = set()
    suffixes = ("", "", " Mini", " Plus", " Max", " 2", " 3", " Air", " One", " XL")
    while len(products) < 500:
        cat, nouns, (lo, hi) = rng.choice(subcats)
        name = f"{rng.choice(ADJECTIVES)} {rng.choice(nouns)}{rng.choice(suffixes)}"
        if name in names:
            continue
        names.add(name)
        price = lo * (hi / lo) ** rng.random()
        price = int(price) + rng.choice((0.49, 0.99, 0.99, 0.0))
        products.append((len(products) + 1, name, cat, rng.randint(1, len(suppliers)), _money(price),
                         _money(price * rng.uniform(0.35, 0.7)), rng.random() < 0.08,
                         _day(rng, dt.date(2020, 1, 1), dt.date(2025, 6, 30))))
    out["products"] = (["id", "name", "category_id", "supplier_id", "price", "cost", "discontinued",
                        "launched_on"], products)

    # orders: more each year, busier before Christmas, from customers who had signed up
    orders: list[tuple] = []
    items: list[tuple] = []
    payments: list[tuple] = []
    returns: list[tuple] = []
    days = (END - START).days + 1
    last_day = dt.datetime.combine(END, dt.time(23, 59, 59))
    n_products = len(products)
    product_weights = [rng.paretovariate(1.2) for _ in products]
    cum_weights = list(itertools.accumulate(product_weights))
    moments: list[dt.datetime] = []
    while len(moments) < 60000:
        day = START + dt.timedelta(days=int(days * rng.random() ** 0.8))
        if day.month < 11 and rng.random() < 0.3:
            continue
        moments.append(dt.datetime.combine(day, dt.time(rng.randint(7, 22), rng.randrange(60),
                                                        rng.randrange(60))))
    moments.sort()  # order ids follow time
    for ordered_at in moments:
        day = ordered_at.date()
        signed = bisect.bisect_right(signups, day)
        cid = min(1 + int(signed * rng.random() ** 1.3), signed)
        oid = len(orders) + 1
        r = rng.random()
        channel = "web" if r < 0.6 else "phone" if r < 0.75 else "field sales"
        employee_id = (None if channel == "web" else rng.choice(all_reps) if channel == "phone"
                       else rng.choice(reps[cust_region[cid - 1]]))
        age = (last_day - ordered_at).days
        if rng.random() < 0.06:
            status = "cancelled"
        elif age < 3:
            status = rng.choice(("new", "new", "paid"))
        elif age < 10:
            status = rng.choice(("paid", "shipped", "shipped"))
        else:
            status = "paid" if rng.random() < 0.01 else "shipped"
        shipped_at = (ordered_at + dt.timedelta(hours=rng.randint(20, 150), minutes=rng.randrange(60))
                      if status == "shipped" else None)
        if shipped_at is not None and shipped_at > last_day:
            shipped_at = last_day
        orders.append((oid, cid, employee_id, ordered_at, shipped_at, status, channel))

        segment = segments[cid - 1]
        chosen: list[int] = []
        for _ in range(rng.choices((1, 2, 3, 4, 5, 6), (30, 25, 18, 12, 9, 6))[0]):
            pid = 1 + bisect.bisect_left(cum_weights, rng.random() * cum_weights[-1])
            if pid <= n_products and pid not in chosen:
                chosen.append(pid)
        total = Decimal(0)
        lines = []
        for pid in chosen:
            qty = rng.randint(1, 20 if segment == "enterprise" else 5)
            unit = products[pid - 1][4]
            if day.year == 2025:  # prices went up 4% in 2025
                unit = (unit * Decimal("1.04")).quantize(_CENT)
            disc = None
            if rng.random() < (0.6 if segment == "enterprise" else 0.25):
                disc = Decimal(rng.choice((0, 5, 5, 10, 10, 15, 20, 25)))
                disc = disc.quantize(_CENT)
            items.append((oid, pid, qty, unit, disc))
            lines.append((pid, qty))
            total += (qty * unit * (100 - (disc or 0)) / 100)
        total = total.quantize(_CENT)

        if status in ("paid", "shipped"):
            method = ("invoice" if segment != "consumer" and rng.random() < 0.7
                      else rng.choice(("card", "card", "paypal")))
            delay = (dt.timedelta(days=rng.randint(5, 40)) if method == "invoice"
                     else dt.timedelta(minutes=rng.randint(1, 30)))
            paid_at = min(ordered_at + delay, last_day)
            if method == "invoice" and total > 1000 and rng.random() < 0.3:
                first = (total * Decimal("0.5")).quantize(_CENT)
                payments.append((len(payments) + 1, oid, paid_at, first, method))
                payments.append((len(payments) + 1, oid, min(paid_at + dt.timedelta(days=30), last_day),
                                 total - first, method))
            else:
                payments.append((len(payments) + 1, oid, paid_at, total, method))
        if status == "shipped":
            for pid, qty in lines:
                if rng.random() < 0.04:
                    when = shipped_at.date() + dt.timedelta(days=rng.randint(3, 30))
                    if when <= END:
                        reason = None if rng.random() < 0.3 else rng.choice(RETURN_REASONS)
                        returns.append((len(returns) + 1, oid, pid, when, rng.randint(1, qty), reason))
    out["orders"] = (["id", "customer_id", "employee_id", "ordered_at", "shipped_at", "status", "channel"],
                     orders)
    out["order_items"] = (["order_id", "product_id", "quantity", "unit_price", "DiscountPct"], items)
    out["payments"] = (["id", "order_id", "paid_at", "amount", "method"], payments)
    out["returns"] = (["id", "order_id", "product_id", "returned_on", "quantity", "reason"], returns)
    return out


# ---------------------------------------------------------------------------
# writing the databases
# ---------------------------------------------------------------------------

def _column_types() -> dict[str, list[tuple[str, str]]]:
    """(column, declared type) of every table, read from its DDL."""
    import re

    out = {}
    for table, ddl in TABLES:
        body = ddl[ddl.index("(") + 1:ddl.rindex(")")]
        cols = []
        for line in body.split("\n"):
            m = re.match(r'\s*("?)(\w+)\1\s+(INTEGER|VARCHAR|DATE|TIMESTAMP|BOOLEAN|DECIMAL\(\d+, \d+\))', line)
            if m:
                cols.append((m.group(2), m.group(3)))
        out[table] = cols
    return out


def _arrow_table(columns: list[tuple[str, str]], rows: list[tuple]):
    import pyarrow as pa

    def arrow_type(decl: str):
        if decl.startswith("DECIMAL"):
            p, s = decl[8:-1].split(",")
            return pa.decimal128(int(p), int(s))
        return {"INTEGER": pa.int32(), "VARCHAR": pa.string(), "DATE": pa.date32(),
                "TIMESTAMP": pa.timestamp("us"), "BOOLEAN": pa.bool_()}[decl]

    data = list(zip(*rows)) if rows else [() for _ in columns]
    return pa.table({name: pa.array(list(values), type=arrow_type(decl))
                     for (name, decl), values in zip(columns, data)})


def _sqlite_value(v: Any) -> Any:
    if isinstance(v, Decimal):
        return float(v)
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, dt.datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, dt.date):
        return v.isoformat()
    return v


# tables that point to themselves, and the column that does
SELF_REFERENCES = {"employees": "manager_id", "categories": "parent_id"}


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

    types = _column_types()
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
            con.executemany(f"INSERT INTO {table} VALUES ({marks})",
                            ([_sqlite_value(v) for v in row] for row in rows))
        con.execute(VIEW_SQL)
        con.commit()
    finally:
        con.close()


def write_postgres(url: str, data: dict[str, tuple[list[str], list[tuple]]] | None = None, *,
                   seed: int = SEED) -> None:
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
                pgsql.Identifier(table), pgsql.SQL(", ").join(map(pgsql.Identifier, cols)))
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


def create_sample_database(path: str | os.PathLike, *, sqlite: bool | str | os.PathLike = True,
                           seed: int = SEED) -> Path:
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


def table_names() -> list[str]:
    return [t for t, _ in TABLES]


def content_digest(path: str | os.PathLike) -> str:
    """A sha256 over every table's rows (in key order, values as text) of a sample
    database, DuckDB or SQLite: the same data gives the same digest on both engines."""
    path = Path(path)
    h = hashlib.sha256()
    types = _column_types()
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


# ---------------------------------------------------------------------------
# the notebook
# ---------------------------------------------------------------------------

NOTEBOOK_CELLS = [
    ("markdown", "# sqlnb demo\n\n"
                 "This notebook is connected to `sample.duckdb`, a small company's database: "
                 "`customers`, `orders` and their lines (`order_items`), `products` in `categories` "
                 "from `suppliers`, `payments`, `returns`, `employees` in `regions`, and a view, "
                 "`order_totals` — about 280,000 rows from 2023 to 2025. `sample.sqlite` next to it "
                 "holds the same data for SQLite.\n\nRun the cells from the top "
                 "(**Run › Run All Cells** works too)."),
    ("code", "%load_ext sqlnb\n%sqlnb connect duckdb:///sample.duckdb --name sample --readonly"),
    ("markdown", "## Look around\n\n`%sqlnb schema` lists the tables with their comments; "
                 "name a table to see its columns, keys and a few rows."),
    ("code", "%sqlnb schema"),
    ("code", "%sqlnb schema orders --sample 3"),
    ("markdown", "## Write SQL\n\nA `%%sql` cell runs on the active connection. "
                 "`DiscountPct` is a mixed-case column: quote it (`\"DiscountPct\"`) and the query works on "
                 "engines that fold unquoted names to lower case too."),
    ("code", "%%sql\n-- revenue per month of 2025, after discounts\n"
             "SELECT date_trunc('month', o.ordered_at) AS month,\n"
             "       round(sum(i.quantity * i.unit_price * (100 - coalesce(i.\"DiscountPct\", 0))) / 100.0, 2) AS revenue,\n"
             "       count(DISTINCT o.id) AS orders\n"
             "FROM orders o\n"
             "JOIN order_items i ON i.order_id = o.id\n"
             "WHERE o.status <> 'cancelled' AND o.ordered_at >= TIMESTAMP '2025-01-01'\n"
             "GROUP BY month\nORDER BY month"),
    ("markdown", "`:name` binds a Python variable as a query parameter, and `-o df` keeps the whole "
                 "result as a pandas DataFrame."),
    ("code", "country = 'DE'"),
    ("code", "%%sql -o top_customers\n"
             "SELECT c.name, c.city, count(*) AS orders, sum(t.total) AS spent\n"
             "FROM customers c JOIN order_totals t ON t.customer_id = c.id\n"
             "WHERE c.country = :country AND t.status <> 'cancelled'\n"
             "GROUP BY c.name, c.city ORDER BY spent DESC LIMIT 10"),
    ("markdown", "## Plot a result"),
    ("code", "%%sql -o monthly\n"
             "SELECT date_trunc('month', ordered_at) AS month, sum(total) AS revenue\n"
             "FROM order_totals WHERE status <> 'cancelled'\n"
             "GROUP BY month ORDER BY month"),
    ("code", "import matplotlib.pyplot as plt\n\n"
             "monthly['revenue'] = monthly['revenue'].astype(float)\n"
             "ax = monthly.plot(x='month', y='revenue', figsize=(9, 3), legend=False,\n"
             "                  title='Revenue per month (EUR)')\n"
             "plt.show()"),
    ("markdown", "## Ask questions\n\n"
                 "`%%ask` turns a question into a read-only query that it has run and checked, and "
                 "inserts it as a new `%%sql` cell below. It uses the model you chose: "
                 "`SQLNB_MODEL` or `%config AskMagic.model = \"provider:model\"`, else Claude when "
                 "`ANTHROPIC_API_KEY` is set, else the offline model when it is installed "
                 "(`pip install \"sqlnb[local]\"`, then `sqlnb model download qwen2.5-coder-1.5b`). "
                 "With none of these, the ask cells below say how to set one up, and the rest of "
                 "the notebook still runs."),
    ("code", "%%ask\nWhich five customers spent the most in 2025, and how much each?"),
    ("markdown", "A follow-up question continues the same conversation: it can refer to the "
                 "previous answer."),
    ("code", "%%ask\nNow only customers from Germany"),
    ("markdown", "A question that can be read in several ways gets a question back instead of "
                 "a guess: answer it in the next `%%ask` cell."),
    ("code", "%%ask\nShow me the best products"),
    ("markdown", "## The sidebar\n\n"
                 "The same assistant lives in a panel: open it with **View › Ask sqlnb** "
                 "(or the sqlnb tab in the right side bar). It asks on this notebook's kernel and "
                 "connection, shows each step as it runs, and puts the final query into a `%%sql` "
                 "cell of this notebook."),
]


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
    """Create ``sample.duckdb``, its SQLite copy ``sample.sqlite`` and
    ``sqlnb-demo.ipynb`` in ``directory``; keep an edited notebook."""
    d = Path(directory).expanduser().resolve()
    d.mkdir(parents=True, exist_ok=True)
    create_sample_database(d / "sample.duckdb")
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
