"""The sample company's rows: regions, employees, customers, categories, suppliers, products,
orders and their lines, payments and returns over three years (2023-2025), generated from
name lists with a fixed seed, so every build holds the same data."""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
import random
from decimal import Decimal

__all__ = ["END", "FIRST_NAMES", "LAST_NAMES", "ORDER_STATUSES", "SEED", "START", "generate"]

SEED = 20231
START = dt.date(2023, 1, 1)
END = dt.date(2025, 12, 31)  # the data covers three full years
ORDER_STATUSES = ("new", "paid", "shipped", "cancelled")

# ---------------------------------------------------------------------------
# name lists
# ---------------------------------------------------------------------------


def _words(text: str) -> list[str]:
    """A name list written as one string, split at spaces."""
    return text.split()


FIRST_NAMES = _words(
    "Ada Aiko Alejandro Amara Anna Arjun Astrid Beatriz Ben Carlos Chen Chiara Chloe Daniel Diego "
    "Elena Emma Farah Felix Fatima Giulia Grace Hannah Hiro Ines Isabel Ivan Jakob James Jana Javier "
    "Jonas Julia Kenji Lars Laura Leon Lina Lucas Luis Maja Marco Maria Mateo Mei Mia Nadia Noah "
    "Nora Olga Omar Pablo Priya Rafael Ravi Rosa Sara Sofia Tariq Thomas Tom Valentina Wei Yara Yusuf Zoe"
)
LAST_NAMES = _words(
    "Abe Almeida Andersson Bauer Becker Bianchi Brown Campbell Chen Costa Dubois Eriksen Fischer "
    "Garcia Gomez Gupta Hansen Hoffmann Ito Jansen Johnson Kim Klein Kowalski Kumar Larsen Laurent "
    "Lopez Martin Meyer Moreau Moretti Mueller Nakamura Nguyen Novak Olsen Patel Perez Petit Rossi "
    "Santos Sato Schmidt Schneider Silva Singh Smith Suzuki Tanaka Taylor Thompson Visser Wagner "
    "Walker Weber Williams Wong Yamamoto Zimmermann"
)
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
    (
        "Office",
        [
            ("Paper", ["Notebook", "Printer Paper", "Sticky Notes", "Envelopes"], (2, 25)),
            ("Writing", ["Pen Set", "Marker", "Fountain Pen", "Pencil Case"], (3, 60)),
            ("Furniture", ["Desk", "Office Chair", "Bookshelf", "Monitor Stand"], (40, 600)),
        ],
    ),
    (
        "Electronics",
        [
            ("Computers", ["Laptop", "Tablet", "Mini PC"], (250, 2200)),
            ("Accessories", ["Keyboard", "Mouse", "USB Hub", "Webcam", "Headset"], (10, 180)),
            ("Audio", ["Speaker", "Headphones", "Microphone"], (25, 450)),
        ],
    ),
    (
        "Home & Kitchen",
        [
            ("Cookware", ["Frying Pan", "Saucepan", "Dutch Oven", "Wok"], (15, 220)),
            ("Appliances", ["Kettle", "Toaster", "Blender", "Coffee Grinder"], (20, 320)),
            ("Tableware", ["Mug", "Plate Set", "Glasses", "Cutlery Set"], (5, 90)),
        ],
    ),
    (
        "Garden",
        [
            ("Tools", ["Shovel", "Pruning Shears", "Rake", "Hose"], (8, 120)),
            ("Plants", ["Seed Pack", "Planter", "Fertilizer"], (3, 70)),
        ],
    ),
    (
        "Sports",
        [
            ("Fitness", ["Yoga Mat", "Dumbbell Set", "Jump Rope", "Kettlebell"], (8, 250)),
            ("Outdoor", ["Tent", "Backpack", "Sleeping Bag", "Water Bottle"], (10, 400)),
        ],
    ),
]
ADJECTIVES = _words(
    "Classic Compact Deluxe Eco Essential Flex Nordic Premium Pro Smart Studio Travel Ultra Urban Vintage"
)
SUPPLIER_WORDS = _words(
    "Acme Apex Atlas Blue Cedar Delta Everest Falcon Global Harbor Horizon Iron Lumen "
    "Maple Nova Orbit Pioneer Polar Quantum Summit Sterling Terra Vertex Zenith"
)
SUPPLIER_KINDS = _words("Trading Supply Goods Industries Works Imports Manufacturing Partners")
SUPPLIER_FORMS = {
    "DE": "GmbH",
    "FR": "SARL",
    "GB": "Ltd",
    "US": "Inc.",
    "JP": "K.K.",
    "IT": "S.r.l.",
    "ES": "S.L.",
    "NL": "B.V.",
    "CN": "Co., Ltd",
    "SE": "AB",
    "IN": "Pvt Ltd",
    "PL": "Sp. z o.o.",
}
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
        employees.append(
            (
                len(employees) + 1,
                first,
                last,
                f"{email}@company.example",
                title,
                region,
                manager,
                _day(rng, dt.date(2014, 1, 1), dt.date(2025, 6, 30)),
                _money(rng.randrange(*salary) * 100),
            )
        )

    employee("Chief Executive Officer", None, None, (1800, 2200))
    managers = {}
    for rid, _name in regions:
        employee("Regional Sales Manager", rid, 1, (950, 1300))
        managers[rid] = len(employees)
    for title in (
        "Chief Financial Officer",
        "Accountant",
        "Buyer",
        "Buyer",
        "Data Analyst",
        "Office Manager",
    ):
        employee(title, None, 1, (450, 1400) if title.startswith("Chief") else (420, 700))
    reps: dict[int, list[int]] = {rid: [] for rid, _ in regions}
    for k in range(47):
        rid = regions[k % len(regions)][0]
        employee(
            "Senior Sales Representative" if rng.random() < 0.25 else "Sales Representative",
            rid,
            managers[rid],
            (480, 820),
        )
        reps[rid].append(len(employees))
    all_reps = [e for ids in reps.values() for e in ids]
    out["employees"] = (
        ["id", "first_name", "last_name", "email", "title", "region_id", "manager_id", "hired_on", "salary"],
        employees,
    )

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
            name = (
                f"{last} & {rng.choice(LAST_NAMES)}"
                if rng.random() < 0.4
                else f"{rng.choice(SUPPLIER_WORDS)} {rng.choice(SUPPLIER_KINDS)}"
            )
            email = f"orders.{i}@{name.split()[0].lower()}.example"
        if rng.random() < 0.08:
            email = None
        customers.append((i, name, email, country, rng.choice(cities), region_id[region], segment, signed_up))
        segments.append(segment)
        cust_region.append(region_id[region])
    out["customers"] = (
        ["id", "name", "email", "country", "city", "region_id", "segment", "signed_up"],
        customers,
    )

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
        contact = (
            None if rng.random() < 0.15 else f"sales@{name.split()[0].lower()}-{len(suppliers) + 1}.example"
        )
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
        products.append(
            (
                len(products) + 1,
                name,
                cat,
                rng.randint(1, len(suppliers)),
                _money(price),
                _money(price * rng.uniform(0.35, 0.7)),
                rng.random() < 0.08,
                _day(rng, dt.date(2020, 1, 1), dt.date(2025, 6, 30)),
            )
        )
    out["products"] = (
        ["id", "name", "category_id", "supplier_id", "price", "cost", "discontinued", "launched_on"],
        products,
    )

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
        moments.append(
            dt.datetime.combine(day, dt.time(rng.randint(7, 22), rng.randrange(60), rng.randrange(60)))
        )
    moments.sort()  # order ids follow time
    for ordered_at in moments:
        day = ordered_at.date()
        signed = bisect.bisect_right(signups, day)
        cid = min(1 + int(signed * rng.random() ** 1.3), signed)
        oid = len(orders) + 1
        r = rng.random()
        channel = "web" if r < 0.6 else "phone" if r < 0.75 else "field sales"
        employee_id = (
            None
            if channel == "web"
            else rng.choice(all_reps)
            if channel == "phone"
            else rng.choice(reps[cust_region[cid - 1]])
        )
        age = (last_day - ordered_at).days
        if rng.random() < 0.06:
            status = "cancelled"
        elif age < 3:
            status = rng.choice(("new", "new", "paid"))
        elif age < 10:
            status = rng.choice(("paid", "shipped", "shipped"))
        else:
            status = "paid" if rng.random() < 0.01 else "shipped"
        shipped_at = (
            ordered_at + dt.timedelta(hours=rng.randint(20, 150), minutes=rng.randrange(60))
            if status == "shipped"
            else None
        )
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
            total += qty * unit * (100 - (disc or 0)) / 100
        total = total.quantize(_CENT)

        if status in ("paid", "shipped"):
            method = (
                "invoice"
                if segment != "consumer" and rng.random() < 0.7
                else rng.choice(("card", "card", "paypal"))
            )
            delay = (
                dt.timedelta(days=rng.randint(5, 40))
                if method == "invoice"
                else dt.timedelta(minutes=rng.randint(1, 30))
            )
            paid_at = min(ordered_at + delay, last_day)
            if method == "invoice" and total > 1000 and rng.random() < 0.3:
                first = (total * Decimal("0.5")).quantize(_CENT)
                payments.append((len(payments) + 1, oid, paid_at, first, method))
                payments.append(
                    (
                        len(payments) + 1,
                        oid,
                        min(paid_at + dt.timedelta(days=30), last_day),
                        total - first,
                        method,
                    )
                )
            else:
                payments.append((len(payments) + 1, oid, paid_at, total, method))
        if status == "shipped":
            for pid, qty in lines:
                if rng.random() < 0.04:
                    when = shipped_at.date() + dt.timedelta(days=rng.randint(3, 30))
                    if when <= END:
                        reason = None if rng.random() < 0.3 else rng.choice(RETURN_REASONS)
                        returns.append((len(returns) + 1, oid, pid, when, rng.randint(1, qty), reason))
    out["orders"] = (
        ["id", "customer_id", "employee_id", "ordered_at", "shipped_at", "status", "channel"],
        orders,
    )
    out["order_items"] = (["order_id", "product_id", "quantity", "unit_price", "DiscountPct"], items)
    out["payments"] = (["id", "order_id", "paid_at", "amount", "method"], payments)
    out["returns"] = (["id", "order_id", "product_id", "returned_on", "quantity", "reason"], returns)
    return out
