"""catalog: reading a large PostgreSQL schema (tables × 20 columns, with keys).

A dedicated database (``sqlnb_bench_catalog`` for 1,000 tables, ``sqlnb_bench_catalog_<N>``
for other sizes) holds tables ``t0001`` … each with a primary key, a foreign key to the
previous table (and every third table one more to an earlier table), a unique constraint on
every fourth table, an index on the foreign key column and a two-column index on every
tenth table, and a comment on every tenth.  It is created when absent and reused when
complete (a marker in the database comment).

Timed, each in a fresh process and a fresh connection (connecting not timed):

- sqlnb ``connect(url).catalog(refresh=True)`` (columns, keys, FKs, indexes, row estimates),
- SQLAlchemy ``MetaData().reflect(conn)``,
- SQLAlchemy 2 multi-table reflection: ``get_multi_columns`` + ``get_multi_pk_constraint``
  + ``get_multi_foreign_keys``,
- for reference, the same plus ``get_multi_unique_constraints`` + ``get_multi_indexes``
  (which sqlnb's catalog also reads).
"""

from __future__ import annotations

import json
import time
from typing import Any

import common as c

TOOLS = ("sqlnb", "sqla_reflect", "sqla_multi", "sqla_multi_full")
TOOL_LABELS = {
    "sqlnb": "sqlnb `catalog(refresh=True)`",
    "sqla_reflect": "SQLAlchemy `MetaData().reflect()`",
    "sqla_multi": "SQLAlchemy `inspect()`: get_multi_columns + pk + foreign_keys",
    "sqla_multi_full": "… + get_multi_unique_constraints + get_multi_indexes (reference)",
}
TARGETS = {"sqla_reflect": 10.0, "sqla_multi": 1.0}  # sqlnb at least this many times faster
COLUMNS = 20
SCHEMA_VERSION = 1


def db_name(tables: int) -> str:
    return "sqlnb_bench_catalog" if tables == 1000 else f"sqlnb_bench_catalog_{tables}"


def _name(i: int, width: int) -> str:
    return f"t{i:0{width}d}"


def schema_ddl(n: int) -> tuple[list[str], dict[str, int]]:
    """DDL statements and the counts they create."""
    width = max(4, len(str(n)))
    stmts: list[str] = []
    expected = {
        "tables": n,
        "columns": n * COLUMNS,
        "primary_keys": n,
        "unique": 0,
        "foreign_keys": 0,
        "indexes": 0,
    }
    for i in range(1, n + 1):
        t = _name(i, width)
        cols = [
            "id integer PRIMARY KEY",
            "parent_id integer" + (f" REFERENCES {_name(i - 1, width)} (id)" if i > 1 else ""),
            "code varchar(32)",
            "other_id integer" + (f" REFERENCES {_name(i // 2, width)} (id)" if i % 3 == 0 else ""),
            "name text NOT NULL",
            "description text",
            "amount numeric(12,2)",
            "quantity integer DEFAULT 0",
            "ratio double precision",
            "created_at timestamp with time zone DEFAULT now()",
            "updated_at timestamp",
            "birth_date date",
            "is_active boolean NOT NULL DEFAULT true",
            "status varchar(16)",
            "score real",
            "big bigint",
            "payload jsonb",
            "uid uuid",
            "tags text[]",
            "note varchar(255)",
        ]
        assert len(cols) == COLUMNS
        expected["foreign_keys"] += (i > 1) + (i % 3 == 0)
        if i % 4 == 0:
            cols.append(f"CONSTRAINT {t}_code_key UNIQUE (code)")
            expected["unique"] += 1
        stmts.append(f"CREATE TABLE {t} ({', '.join(cols)})")
        if i > 1:
            stmts.append(f"CREATE INDEX {t}_parent_idx ON {t} (parent_id)")
            expected["indexes"] += 1
        if i % 10 == 0:
            stmts.append(f"CREATE INDEX {t}_status_created_idx ON {t} (status, created_at)")
            expected["indexes"] += 1
            stmts.append(f"COMMENT ON TABLE {t} IS 'benchmark table {i}'")
    return stmts, expected


def ensure_schema(n: int, log=print) -> dict[str, Any]:
    import psycopg

    db = db_name(n)
    stmts, expected = schema_ddl(n)
    marker = json.dumps({"sqlnb_bench_catalog": SCHEMA_VERSION, **expected}, sort_keys=True)
    with psycopg.connect(
        host=c.PG_HOST, port=c.PG_PORT, user=c.PG_USER, dbname="postgres", autocommit=True
    ) as admin:
        c.pg_lock(admin, db)  # a concurrent run waits instead of building the same schema
        row = admin.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s", (db,)
        ).fetchone()
        if row is not None and row[0] == marker:
            server = admin.execute("SELECT version()").fetchone()[0]
            return {"database": db, "created_s": None, "expected": expected, "server": server}
        if row is not None:
            log(f"  {db} is incomplete or stale: recreating it")
            admin.execute(f'DROP DATABASE "{db}"')
        log(f"  creating {n:,} tables × {COLUMNS} columns in {db} ...")
        t0 = time.perf_counter()
        admin.execute(f'CREATE DATABASE "{db}"')
        with psycopg.connect(host=c.PG_HOST, port=c.PG_PORT, user=c.PG_USER, dbname=db) as conn:
            for k in range(0, len(stmts), 200):  # simple-query batches in one transaction
                conn.execute(";\n".join(stmts[k : k + 200]).encode())
            conn.commit()
            conn.autocommit = True
            conn.execute("ANALYZE")
        admin.execute(f"COMMENT ON DATABASE \"{db}\" IS '{marker}'")
        created = time.perf_counter() - t0
        log(f"  created in {created:.1f} s")
        server = admin.execute("SELECT version()").fetchone()[0]
    return {"database": db, "created_s": created, "expected": expected, "server": server}


def run(args, log=print) -> dict[str, Any]:
    info = c.machine_info()
    data: dict[str, Any] = {
        "benchmark": "catalog",
        "tables": args.tables,
        "columns": COLUMNS,
        "repeat": args.repeat,
        "machine": info,
        "tools": {},
    }
    if "postgresql" not in args.engines:
        data["skipped"] = "PostgreSQL is not among --engines"
        c.write_results("catalog", args.results_dir, markdown(data), data)
        return data
    log(f"catalog: PostgreSQL, {args.tables:,} tables")
    try:
        ds = ensure_schema(args.tables, log=log)
    except Exception as exc:
        data["error"] = f"schema: {type(exc).__name__}: {exc}"
        log(f"  {data['error']}")
        c.write_results("catalog", args.results_dir, markdown(data), data)
        return data
    data["dataset"] = ds
    data["expected"] = ds["expected"]
    data["servers"] = {"postgresql": ds["server"]}
    db = ds["database"]
    urls = {
        "sqlnb": f"postgresql://{c.PG_USER}@{c.PG_HOST}:{c.PG_PORT}/{db}",
        "sqlalchemy": f"postgresql+psycopg2://{c.PG_USER}@{c.PG_HOST}:{c.PG_PORT}/{db}",
    }
    tools = {t: {"runs": [], "errors": []} for t in TOOLS}
    data["tools"] = tools
    for k in range(args.repeat):
        order = TOOLS[k % len(TOOLS) :] + TOOLS[: k % len(TOOLS)]
        for tool in order:
            t = tools[tool]
            if t["errors"] and not t["runs"]:
                continue
            try:
                r = c.run_worker("catalog", {"tool": tool, "urls": urls}, timeout=args.timeout)
            except c.WorkerError as exc:
                t["errors"].append(str(exc))
                log(f"  {tool}: ERROR {exc}")
                continue
            t["runs"].append(r)
            log(f"  {tool:15s} run {k + 1}: {r['seconds']:.3f} s  {r['counts']}")
    for t in tools.values():
        t["median_s"] = c.median([r["seconds"] for r in t["runs"]])
        t["counts"] = t["runs"][-1]["counts"] if t["runs"] else None
    base = tools["sqlnb"]["median_s"]
    data["ratios"] = {tool: c.ratio(tools[tool]["median_s"], base) for tool in TOOLS if tool != "sqlnb"}
    data["targets_met"] = {
        tool: (None if data["ratios"][tool] is None else data["ratios"][tool] >= target)
        for tool, target in TARGETS.items()
    }
    got = tools["sqlnb"]["counts"] or {}
    exp = ds["expected"]
    data["complete"] = {
        k: {"expected": exp[k], "sqlnb": got.get(k), "ok": got.get(k) == exp[k]}
        for k in ("tables", "columns", "primary_keys", "foreign_keys", "unique")
    }
    data["load_average_end"] = c.load_average()
    c.write_results("catalog", args.results_dir, markdown(data), data)
    return data


def markdown(data: dict[str, Any]) -> str:
    n = data["tables"]
    out = [
        f"# catalog: PostgreSQL schema of {n:,} tables × {data['columns']} columns with keys",
        "",
        f"Median of {data['repeat']} run{'s' if data['repeat'] != 1 else ''}, each in a fresh "
        "process and connection; connecting is not timed.",
        "",
        c.machine_markdown(data["machine"], data.get("servers"), data.get("load_average_end")),
        "",
    ]
    if data.get("skipped") or data.get("error"):
        return "\n".join(out + [f"Not run: {data.get('skipped') or data.get('error')}"])
    exp = data["expected"]
    out += [
        f"Schema: {exp['tables']:,} tables, {exp['columns']:,} columns, {exp['primary_keys']:,} primary "
        f"keys, {exp['foreign_keys']:,} foreign keys, {exp['unique']:,} unique constraints, "
        f"{exp['indexes']:,} extra indexes.",
        "",
        "## Seconds (lower is better)",
        "",
    ]
    body = []
    for tool in TOOLS:
        t = data["tools"][tool]
        secs = (
            c.fmt_s(t["median_s"])
            if t["median_s"] is not None
            else ("error: " + (t["errors"][0] if t["errors"] else "?").replace("|", "/")[:200])
        )
        if tool == "sqlnb":
            body.append([TOOL_LABELS[tool], secs, "1.00×", "", ""])
            continue
        target = TARGETS.get(tool)
        met = data["targets_met"].get(tool)
        body.append(
            [
                TOOL_LABELS[tool],
                secs,
                c.fmt_x(data["ratios"][tool]),
                (f"≥ {target:.0f}× faster" if target > 1 else "faster") if target else "(reference)",
                "" if target is None else ("—" if met is None else ("yes" if met else "**no**")),
            ]
        )
    out += [
        c.table(["Tool", "Seconds", "Tool / sqlnb", "Target for sqlnb", "Met"], body),
        "",
        "Ratios above 1 mean sqlnb is faster.",
        "",
        "## What each read back",
        "",
    ]
    keys = ["tables", "columns", "primary_keys", "foreign_keys", "unique", "indexes", "row_estimates"]
    body = [["created"] + [f"{exp[k]:,}" if k in exp else "" for k in keys]]
    for tool in TOOLS:
        cnt = data["tools"][tool].get("counts")
        if cnt:
            body.append([TOOL_LABELS[tool]] + [f"{cnt[k]:,}" if k in cnt else "" for k in keys])
    out += [
        c.table(["", *keys], body),
        "",
        "Indexes: sqlnb and SQLAlchemy may or may not count the indexes behind primary keys and "
        'unique constraints; "created" counts only the extra CREATE INDEX ones.',
        "",
    ]
    complete = data["complete"]
    ok = all(v["ok"] for v in complete.values())
    out.append(
        "sqlnb's catalog is complete: "
        + (
            "**yes**"
            if ok
            else "**NO** — "
            + ", ".join(f"{k}: {v['sqlnb']} of {v['expected']}" for k, v in complete.items() if not v["ok"])
        )
    )
    return "\n".join(out)
