"""overhead: the agent's own time per iteration, with an instant scripted model on SQLite.

A SQLite file of 10 related tables (``overhead.sqlite`` in the data directory, built once)
is asked the same question N times by one :class:`~sqlnb.agent.runner.Agent` (the
conversation reset before each ask, as for independent questions in one notebook).  The
model is a :class:`~sqlnb.agent.models.ScriptedChatModel` whose script per ask is:

1. SQL naming a column that does not exist → the database's error, with a hint;
2. the corrected SQL → 10 rows;
3. ``FINAL``.

So each ask is 3 iterations (model calls) and 2 executions.  The model client is wrapped
to time its calls; the agent's own time is the ask's wall time minus the time inside the
model client's ``invoke``, divided by the iterations.  The breakdown times, with
exclusive attribution (a timed call inside another counts only for itself), the schema
context (``build_context``, sample values included), prompt rendering
(``model_messages``), reply parsing, error and empty-result hints, and every
``adapter.execute`` (the read-only guard, the session scope, the query and the Arrow
conversion); the rest is LangGraph (streaming, checkpointing, routing) and the agent's
glue (state updates, result assembly).  The first ask (catalog read, sample values) is
reported apart and left out of the statistics.
"""

from __future__ import annotations

import random
import sqlite3
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import common as c

QUESTION = "Which ten customers placed the most orders?"
SCRIPT = [
    "```sql\nSELECT c.full_name, count(*) AS orders\nFROM customers c\n"
    "JOIN orders o ON o.customer_id = c.id\nGROUP BY c.full_name\nORDER BY orders DESC\nLIMIT 10\n```",
    "The column is first_name/last_name.\n```sql\nSELECT c.first_name, c.last_name, count(*) AS orders\n"
    "FROM customers c\nJOIN orders o ON o.customer_id = c.id\nGROUP BY c.id\nORDER BY orders DESC\n"
    "LIMIT 10\n```",
    "FINAL",
]
EXPECTED = {"status": "success", "stop_reason": "finalized", "calls": 3, "attempts": 2}
TARGET_MS = 20.0
DB_VERSION = 2
CATEGORIES = ("context", "prompt", "parse", "hints", "execute", "catalog")
CATEGORY_LABELS = {
    "context": "schema context (`build_context`)",
    "prompt": "prompt rendering (`model_messages`)",
    "parse": "reply parsing (`parse_reply`)",
    "hints": "error / empty-result hints",
    "execute": "SQL execution (`adapter.execute`: guard, read-only scope, query, Arrow)",
    "catalog": "`adapter.catalog()` (cached)",
    "graph": "LangGraph + agent glue (the rest)",
}


# ---------------------------------------------------------------------------
# the database
# ---------------------------------------------------------------------------

SCHEMA = """
CREATE TABLE regions (id INTEGER PRIMARY KEY, name TEXT NOT NULL, code TEXT);
CREATE TABLE countries (id INTEGER PRIMARY KEY, region_id INTEGER REFERENCES regions(id),
  name TEXT NOT NULL, iso_code TEXT, population INTEGER);
CREATE TABLE customers (id INTEGER PRIMARY KEY, country_id INTEGER REFERENCES countries(id),
  first_name TEXT, last_name TEXT, email TEXT, signup_date TEXT, segment TEXT);
CREATE TABLE categories (id INTEGER PRIMARY KEY, name TEXT NOT NULL, description TEXT);
CREATE TABLE suppliers (id INTEGER PRIMARY KEY, country_id INTEGER REFERENCES countries(id),
  name TEXT NOT NULL, contact_email TEXT, rating REAL);
CREATE TABLE products (id INTEGER PRIMARY KEY, category_id INTEGER REFERENCES categories(id),
  supplier_id INTEGER REFERENCES suppliers(id), name TEXT NOT NULL, sku TEXT,
  unit_price REAL, discontinued INTEGER);
CREATE TABLE employees (id INTEGER PRIMARY KEY, manager_id INTEGER REFERENCES employees(id),
  first_name TEXT, last_name TEXT, title TEXT, hire_date TEXT, salary REAL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id),
  employee_id INTEGER REFERENCES employees(id), order_date TEXT, status TEXT,
  ship_city TEXT, total REAL);
CREATE TABLE order_items (id INTEGER PRIMARY KEY, order_id INTEGER REFERENCES orders(id),
  product_id INTEGER REFERENCES products(id), quantity INTEGER, unit_price REAL, discount REAL);
CREATE TABLE payments (id INTEGER PRIMARY KEY, order_id INTEGER REFERENCES orders(id),
  paid_at TEXT, method TEXT, amount REAL);
CREATE INDEX orders_customer ON orders(customer_id);
CREATE INDEX items_order ON order_items(order_id);
"""
ROWS = {
    "regions": 5,
    "countries": 40,
    "customers": 2000,
    "categories": 12,
    "suppliers": 60,
    "products": 500,
    "employees": 50,
    "orders": 10000,
    "order_items": 30000,
    "payments": 9000,
}


def build_db(path: Path) -> dict[str, Any]:
    """Create the 10-table database at ``path`` unless a complete one is there."""
    path = Path(path)
    if path.is_file():
        try:
            con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
            version = con.execute("PRAGMA user_version").fetchone()[0]  # set once complete
            con.close()
            if version == DB_VERSION:
                return {"path": str(path), "created": False}
        except sqlite3.Error:
            pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.unlink(missing_ok=True)
    rnd = random.Random(0)
    first = ["Ana", "Ben", "Chloé", "Dev", "Eun-ji", "Femi", "Gus", "Hana", "Ivan", "Jia", "Kofi", "Lena"]
    last = ["Silva", "Okafor", "Müller", "Tanaka", "Novak", "Haddad", "Kim", "Rossi", "Singh", "Moreau"]
    con = sqlite3.connect(tmp)
    con.executescript(SCHEMA)
    ins = lambda t, rows: con.executemany(  # noqa: E731
        f"INSERT INTO {t} VALUES ({', '.join('?' * len(rows[0]))})", rows
    )
    ins(
        "regions",
        [(i, n, n[:2].upper()) for i, n in enumerate(["Europe", "Asia", "Africa", "Americas", "Oceania"], 1)],
    )
    ins(
        "countries",
        [
            (i, rnd.randint(1, 5), f"Country {i}", f"C{i:02d}", rnd.randint(10**5, 10**8))
            for i in range(1, ROWS["countries"] + 1)
        ],
    )
    ins(
        "customers",
        [
            (
                i,
                rnd.randint(1, ROWS["countries"]),
                rnd.choice(first),
                rnd.choice(last),
                f"user{i}@example.com",
                f"20{rnd.randint(15, 24)}-{rnd.randint(1, 12):02d}-01",
                rnd.choice(["retail", "business", "public"]),
            )
            for i in range(1, ROWS["customers"] + 1)
        ],
    )
    ins("categories", [(i, f"Category {i}", f"Things of kind {i}") for i in range(1, ROWS["categories"] + 1)])
    ins(
        "suppliers",
        [
            (
                i,
                rnd.randint(1, ROWS["countries"]),
                f"Supplier {i}",
                f"sales{i}@example.com",
                round(rnd.uniform(1, 5), 1),
            )
            for i in range(1, ROWS["suppliers"] + 1)
        ],
    )
    ins(
        "products",
        [
            (
                i,
                rnd.randint(1, ROWS["categories"]),
                rnd.randint(1, ROWS["suppliers"]),
                f"Product {i}",
                f"SKU-{i:05d}",
                round(rnd.uniform(1, 500), 2),
                int(rnd.random() < 0.1),
            )
            for i in range(1, ROWS["products"] + 1)
        ],
    )
    ins(
        "employees",
        [
            (
                i,
                None if i <= 3 else rnd.randint(1, i - 1),
                rnd.choice(first),
                rnd.choice(last),
                rnd.choice(["Sales", "Support", "Manager"]),
                f"20{rnd.randint(10, 24)}-03-01",
                round(rnd.uniform(30000, 120000), 2),
            )
            for i in range(1, ROWS["employees"] + 1)
        ],
    )
    ins(
        "orders",
        [
            (
                i,
                rnd.randint(1, ROWS["customers"]),
                rnd.randint(1, ROWS["employees"]),
                f"202{rnd.randint(0, 4)}-{rnd.randint(1, 12):02d}-{rnd.randint(1, 28):02d}",
                rnd.choice(["shipped", "pending", "cancelled", "returned"]),
                rnd.choice(["Lisbon", "Lagos", "Osaka", "Lima", "Perth", "Oslo"]),
                round(rnd.uniform(5, 900), 2),
            )
            for i in range(1, ROWS["orders"] + 1)
        ],
    )
    ins(
        "order_items",
        [
            (
                i,
                rnd.randint(1, ROWS["orders"]),
                rnd.randint(1, ROWS["products"]),
                rnd.randint(1, 9),
                round(rnd.uniform(1, 500), 2),
                rnd.choice([0, 0, 0.05, 0.1]),
            )
            for i in range(1, ROWS["order_items"] + 1)
        ],
    )
    ins(
        "payments",
        [
            (
                i,
                rnd.randint(1, ROWS["orders"]),
                f"2024-{rnd.randint(1, 12):02d}-02",
                rnd.choice(["card", "transfer", "cash"]),
                round(rnd.uniform(5, 900), 2),
            )
            for i in range(1, ROWS["payments"] + 1)
        ],
    )
    con.execute("ANALYZE")
    con.execute(f"PRAGMA user_version = {DB_VERSION}")  # the marker of a complete database
    con.commit()
    con.close()
    tmp.replace(path)
    return {"path": str(path), "created": True}


# ---------------------------------------------------------------------------
# timing
# ---------------------------------------------------------------------------


class Profile:
    """Exclusive time per category: a timed call inside another timed call counts for
    itself only."""

    def __init__(self):
        self.totals: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._stack: list[float] = []

    def wrap(self, category: str, fn: Callable) -> Callable:
        def timed(*args, **kwargs):
            self._stack.append(0.0)
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - t0
                inner = self._stack.pop()
                self.totals[category] += elapsed - inner
                self.calls[category] += 1
                if self._stack:
                    self._stack[-1] += elapsed

        timed.__wrapped__ = fn  # type: ignore[attr-defined]
        return timed

    def take(self) -> dict[str, float]:
        out = dict(self.totals)
        self.totals.clear()
        self.calls.clear()
        return out


class TimedClient:
    """The model client, with the time spent inside its ``invoke`` recorded."""

    def __init__(self, client, profile: Profile):
        self.client = client
        self.model = client.model
        self.retries = client.retries  # Agent.client() takes it as a ready client
        self.invoke = profile.wrap("model", client.invoke)


def _patch(profile: Profile, adapter) -> Callable[[], None]:
    """Wrap what the breakdown times; returns the undo."""
    import sqlnb.agent.nodes as nodes
    import sqlnb.agent.runner as runner

    targets = [
        (runner, "build_context", "context"),
        (nodes, "model_messages", "prompt"),
        (nodes, "parse_reply", "parse"),
        (nodes, "error_hint", "hints"),
        (nodes, "empty_result_hint", "hints"),
    ]
    saved = []
    for module, name, category in targets:
        fn = getattr(module, name, None)
        if fn is None:  # renamed in the agent: that part is counted in "graph"
            continue
        saved.append((module, name, fn))
        setattr(module, name, profile.wrap(category, fn))
    adapter.execute = profile.wrap("execute", adapter.execute)  # instance attribute
    adapter.catalog = profile.wrap("catalog", adapter.catalog)

    def undo() -> None:
        for module, name, value in saved:
            setattr(module, name, value)
        del adapter.execute
        del adapter.catalog

    return undo


def _pct(values: list[float], p: float) -> float:
    s = sorted(values)
    if not s:
        return float("nan")
    k = (len(s) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def _stats(values: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), 3),
        "p95": round(_pct(values, 0.95), 3),
        "mean": round(statistics.fmean(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
    }


def measure(db: Path, asks: int, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Run ``asks`` timed asks (after one cold ask) and return every measurement (ms)."""
    from sqlnb.adapters import connect
    from sqlnb.agent.models import ModelClient, ScriptedChatModel
    from sqlnb.agent.runner import Agent

    profile = Profile()
    model = ScriptedChatModel(replies=SCRIPT * (asks + 1), source="overhead")
    client = TimedClient(ModelClient(model), profile)
    adapter = connect(f"sqlite:///{Path(db).resolve()}")
    undo = _patch(profile, adapter)
    agent = Agent()
    runs: list[dict[str, Any]] = []
    problems: list[str] = []
    cold: dict[str, Any] | None = None
    try:
        for k in range(asks + 1):
            agent.reset("bench")
            profile.take()
            t0 = time.perf_counter()
            res = agent.ask(QUESTION, adapter, connection="bench", model=client)
            wall = time.perf_counter() - t0
            parts = profile.take()
            calls = int(res.usage.get("calls", 0))
            got = {
                "status": res.status,
                "stop_reason": res.stop_reason,
                "calls": calls,
                "attempts": len(res.attempts),
            }
            if got != EXPECTED:
                problems.append(f"ask {k}: {got}, expected {EXPECTED}")
            model_s = parts.pop("model", 0.0)
            agent_s = wall - model_s
            rec = {
                "wall_ms": wall * 1e3,
                "model_ms": model_s * 1e3,
                "agent_ms": agent_s * 1e3,
                "per_iteration_ms": agent_s * 1e3 / max(1, calls),
                "iterations": calls,
                "parts_ms": {cat: parts.get(cat, 0.0) * 1e3 for cat in CATEGORIES},
            }
            rec["parts_ms"]["graph"] = agent_s * 1e3 - sum(rec["parts_ms"].values())
            rec = {
                k2: (
                    round(v, 3)
                    if isinstance(v, float)
                    else {k3: round(v3, 3) for k3, v3 in v.items()}
                    if isinstance(v, dict)
                    else v
                )
                for k2, v in rec.items()
            }
            if k == 0:
                cold = rec
                cold["context_tokens"] = res.context.tokens if res.context else None
                cold["context_tables"] = len(res.context.tables) if res.context else None
                cold["error_hint"] = res.attempts[0].get("hint") if res.attempts else None
                continue
            runs.append(rec)
            if k % 50 == 0 or k == asks:
                log(
                    f"  ask {k}/{asks}: {rec['per_iteration_ms']:.2f} ms per iteration "
                    f"(ask {rec['wall_ms']:.1f} ms, model {rec['model_ms']:.2f} ms)"
                )
    finally:
        undo()
        adapter.close()
    per_iter = [r["per_iteration_ms"] for r in runs]
    breakdown = {
        cat: round(statistics.fmean(r["parts_ms"][cat] for r in runs), 3) for cat in (*CATEGORIES, "graph")
    }
    return {
        "asks": asks,
        "iterations_per_ask": EXPECTED["calls"],
        "executions_per_ask": EXPECTED["attempts"],
        "per_iteration_ms": _stats(per_iter),
        "agent_ms_per_ask": _stats([r["agent_ms"] for r in runs]),
        "no_exec_per_iteration_ms": _stats(
            [(r["agent_ms"] - r["parts_ms"]["execute"]) / r["iterations"] for r in runs]
        ),
        "wall_ms_per_ask": _stats([r["wall_ms"] for r in runs]),
        "model_ms_per_ask": _stats([r["model_ms"] for r in runs]),
        "breakdown_ms_per_ask": breakdown,
        "cold": cold,
        "problems": problems,
        "runs": runs,
    }


# ---------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------


def markdown(data: dict[str, Any]) -> str:
    info = data["machine"]
    m = data["result"]
    it = m["per_iteration_ms"]
    met = it["median"] < TARGET_MS
    lines = [
        "# overhead: the agent's own time per iteration",
        "",
        f"{m['asks']} asks on a 10-table SQLite database ({sum(ROWS.values()):,} rows), one Agent "
        "(conversation reset before each ask), an instant scripted model. Each ask: wrong SQL → "
        "error with a hint, corrected SQL → 10 rows, FINAL: 3 iterations (model calls), 2 executions. "
        "Agent time = ask wall time − time inside the model client's `invoke`; per iteration = "
        "agent time / 3. The first (cold) ask is reported apart.",
        "",
        c.machine_markdown(info, load_after=data.get("load_after")),
        "",
        "## Per iteration (ms)",
        "",
        c.table(
            ["", "Median", "p95", "Mean", "Min", "Max"],
            [
                [
                    "agent time per iteration",
                    f"**{it['median']:.2f}**",
                    f"{it['p95']:.2f}",
                    f"{it['mean']:.2f}",
                    f"{it['min']:.2f}",
                    f"{it['max']:.2f}",
                ]
            ]
            + [
                [label, *(f"{m[key][s]:.2f}" for s in ("median", "p95", "mean", "min", "max"))]
                for label, key in (
                    ("… without SQL execution", "no_exec_per_iteration_ms"),
                    ("agent time per ask", "agent_ms_per_ask"),
                    ("ask wall time", "wall_ms_per_ask"),
                    ("inside the model client (excluded)", "model_ms_per_ask"),
                )
            ],
        ),
        "",
        f"Target: under {TARGET_MS:.0f} ms per iteration — **{'met' if met else 'not met'}** "
        f"(median {it['median']:.2f} ms, p95 {it['p95']:.2f} ms).",
        "",
        "## Where an ask's agent time goes (mean ms per ask, exclusive)",
        "",
    ]
    total = sum(m["breakdown_ms_per_ask"].values()) or 1.0
    lines.append(
        c.table(
            ["Part", "ms per ask", "Share"],
            [
                [CATEGORY_LABELS[k], f"{v:.2f}", f"{100 * v / total:.0f}%"]
                for k, v in m["breakdown_ms_per_ask"].items()
            ],
        )
    )
    cold = m.get("cold") or {}
    if cold:
        lines += [
            "",
            f"First (cold) ask: {cold['agent_ms']:.1f} ms of agent time "
            f"({cold['per_iteration_ms']:.1f} ms per iteration), of which schema context "
            f"{cold['parts_ms']['context']:.1f} ms, execution {cold['parts_ms']['execute']:.1f} ms "
            "(the sample-value queries; a process's first statement also pays one-off imports), catalog "
            f"{cold['parts_ms']['catalog']:.1f} ms. Schema context: {cold.get('context_tokens')} tokens, "
            f"{cold.get('context_tables')} tables.",
        ]
    if m["problems"]:
        lines += ["", "## Problems", "", *(f"- {p}" for p in m["problems"][:20])]
    return "\n".join(lines)


def run(args, log=print) -> dict[str, Any]:
    """The ``overhead`` benchmark of ``benchmarks/run.py``."""
    info = c.machine_info()
    db = Path(args.data_dir) / "overhead.sqlite"
    log(f"overhead: {args.asks} asks, scripted model, SQLite {db}")
    ds = build_db(db)
    if ds["created"]:
        log("  created the database")
    result = measure(db, args.asks, log=log)
    data = {
        "benchmark": "overhead",
        "machine": info,
        "dataset": {**ds, "rows": ROWS},
        "question": QUESTION,
        "script": SCRIPT,
        "target_ms": TARGET_MS,
        "result": result,
        "load_after": c.load_average(),
    }
    c.write_results("overhead", args.results_dir, markdown(data), data)
    it = result["per_iteration_ms"]
    log(
        f"  per iteration: median {it['median']:.2f} ms, p95 {it['p95']:.2f} ms "
        f"(target < {TARGET_MS:.0f} ms); breakdown per ask {result['breakdown_ms_per_ask']}"
    )
    if result["problems"]:
        log(f"  PROBLEMS: {result['problems'][:3]}")
    return data
