"""One measurement in a fresh interpreter: ``python worker.py '{"task": ..., "out": ...}'``.

Imports and connecting happen before the clock starts; only the operation being compared
is timed.  The result is written as JSON to ``out`` (stdout is left to the tools, which
print progress lines of their own).
"""

from __future__ import annotations

import gc
import json
import os
import resource
import sys
import time
import traceback

os.environ.setdefault("PLOOMBER_STATS_ENABLED", "false")
# this folder's modules (common, fetch, memory, catalog) must not shadow anything a tool imports
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]

QUERY = "SELECT * FROM bench"


def peak_rss() -> int:
    """Peak resident set size of this process in bytes (Linux reports KiB)."""
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kib * (1 if sys.platform == "darwin" else 1024)


def rss() -> int:
    import psutil

    return psutil.Process().memory_info().rss


def frame_info(df) -> dict:
    return {
        "rows": len(df),
        "columns": list(map(str, df.columns)),
        "dtypes": {str(k): str(v) for k, v in df.dtypes.items()},
    }


def driver_info(shell) -> dict:
    """Which driver path sqlnb's adapter is on (e.g. MySQL C extension or pure Python)."""
    if shell is None:
        return {}
    try:
        adapter = shell.magics_manager.registry["SqlMagic"].manager.get()
    except Exception:
        return {}
    info = {"sqlnb_connection": type(getattr(adapter, "conn", None)).__name__}
    for attr in ("last_path", "c_extension"):
        v = getattr(adapter, attr, None)
        if v is not None and not callable(v):
            info[f"sqlnb_{attr}"] = v
    return info


def new_shell():
    from IPython.core.interactiveshell import InteractiveShell

    return InteractiveShell.instance()


def quiet():
    from IPython.utils.capture import capture_output

    return capture_output()


# ---------------------------------------------------------------------------
# Tools: connect (untimed), then the timed operation
# ---------------------------------------------------------------------------


def sqlnb_shell(p):
    shell = new_shell()
    shell.run_line_magic("load_ext", "sqlnb")
    with quiet():
        shell.run_line_magic("sqlnb", f"connect {p['urls']['sqlnb']} --name bench")
    return shell


def jupysql_shell(p, displaylimit=None):
    shell = new_shell()
    with quiet():
        shell.run_line_magic("load_ext", "sql")
        if displaylimit is not None:
            shell.run_line_magic("config", f"SqlMagic.displaylimit = {int(displaylimit)}")
        shell.run_line_magic("sql", p["urls"]["sqlalchemy"])
    return shell


WARMUP = "SELECT 1 AS one"


def warm_up(shell, tool) -> float:
    """The "first cell": ``SELECT 1`` once, so lazy imports are paid before measuring."""
    import pandas  # noqa: F401 (a notebook has pandas loaded)

    t0 = time.perf_counter()
    with quiet():
        if tool == "sqlnb":
            shell.run_cell_magic("sql", "-o _warm", WARMUP)
        else:
            shell.run_cell_magic("sql", "_warm <<", WARMUP)
            shell.user_ns["_warm"].DataFrame()
    shell.user_ns.pop("_warm", None)
    return time.perf_counter() - t0


def fetch(p) -> dict:
    """Time one full fetch into a DataFrame.

    Before the clock starts, each tool runs ``SELECT 1`` once the same way (its "first
    cell"): lazy imports and first-use setup are then paid by every tool before timing, and
    the first cell's own time is reported separately.
    """
    import pandas as pd  # every tool ends with a DataFrame; a notebook has pandas loaded

    tool, engine = p["tool"], p["engine"]
    if tool in ("sqlnb", "sqlnb_pandas_first"):
        shell = sqlnb_shell(p)

        def step(query, var):
            with quiet():
                shell.run_cell_magic("sql", f"-o {var}", query)
            return shell.user_ns[var]
    elif tool == "jupysql":
        shell = jupysql_shell(p)

        def step(query, var):
            with quiet():
                shell.run_cell_magic("sql", f"{var} <<", query)
                return shell.user_ns[var].DataFrame()
    elif tool == "read_sql":
        if engine == "sqlite":
            import sqlite3

            con = sqlite3.connect(p["urls"]["path"])
        else:
            import sqlalchemy as sa

            con = sa.create_engine(p["urls"]["sqlalchemy"])

        def step(query, var):
            return pd.read_sql(query, con)
    else:
        raise ValueError(f"unknown tool {tool!r}")
    t0 = time.perf_counter()
    step(WARMUP, "warm")
    first_cell = time.perf_counter() - t0
    gc.collect()
    t0 = time.perf_counter()
    df = step(QUERY, "df")
    elapsed = time.perf_counter() - t0
    return {
        "seconds": elapsed,
        "first_cell_seconds": first_cell,
        "peak_rss": peak_rss(),
        **driver_info(shell if tool.startswith("sqlnb") else None),
        **frame_info(df),
    }


def memory(p) -> dict:
    """Re-run the same full-result cell ``reruns`` times, as a notebook user would."""
    import psutil  # noqa: F401 (fail early when missing)

    tool, reruns = p["tool"], int(p.get("reruns", 5))
    if tool == "sqlnb":
        shell = sqlnb_shell(p)
        cells = [f"%%sql -o df\n{QUERY}"]
    elif tool == "jupysql":
        shell = jupysql_shell(p)
        cells = [f"%%sql rs <<\n{QUERY}", "df = rs.DataFrame()"]
    else:
        raise ValueError(f"unknown tool {tool!r}")
    warm_up(shell, tool)
    gc.collect()
    baseline = rss()
    runs = []
    for _ in range(reruns):
        t0 = time.perf_counter()
        for cell in cells:
            with quiet():
                res = shell.run_cell(cell, store_history=True)
            if not res.success:
                err = res.error_in_exec or res.error_before_exec
                raise RuntimeError(f"cell failed: {type(err).__name__}: {err}")
        elapsed = time.perf_counter() - t0
        gc.collect()
        runs.append({"rss": rss(), "seconds": elapsed})
    df = shell.user_ns["df"]
    return {
        "baseline_rss": baseline,
        "runs": runs,
        "peak_rss": peak_rss(),
        "df_bytes": int(df.memory_usage(deep=True).sum()),
        **frame_info(df),
    }


def display(p) -> dict:
    """Bytes of HTML a result without -o puts into the notebook."""
    tool = p["tool"]
    if tool == "sqlnb":
        shell = sqlnb_shell(p)
        warm_up(shell, tool)
        gc.collect()
        t0 = time.perf_counter()
        with quiet() as cap:
            shell.run_cell_magic("sql", "", QUERY)
        elapsed = time.perf_counter() - t0
        html = [o.data.get("text/html", "") for o in cap.outputs]
        html_bytes = sum(len(h.encode("utf-8")) for h in html)
        import re

        # the summary line says how many rows were fetched ("100,000+ rows × 5 columns")
        m = re.search(r"([\d,]+)(\+?) rows? ×", " ".join(html))
        rows_fetched = int(m.group(1).replace(",", "")) if m else None
        return {
            "seconds": elapsed,
            "html_bytes": html_bytes,
            "outputs": sum(1 for h in html if h),
            "rows_fetched": rows_fetched,
            "truncated": bool(m and m.group(2)),
            "peak_rss": peak_rss(),
            "rss": rss(),
        }
    if tool == "jupysql":
        shell = jupysql_shell(p, displaylimit=p.get("displaylimit"))
        warm_up(shell, tool)
        gc.collect()
        t0 = time.perf_counter()
        with quiet():
            rs = shell.run_cell_magic("sql", "", QUERY)
            html = rs._repr_html_() or ""
        elapsed = time.perf_counter() - t0
        return {
            "seconds": elapsed,
            "html_bytes": len(html.encode("utf-8")),
            "outputs": 1,
            "rows_fetched": None,
            "peak_rss": peak_rss(),
            "rss": rss(),
        }
    raise ValueError(f"unknown tool {tool!r}")


def catalog(p) -> dict:
    """Read a PostgreSQL schema's catalog in a fresh connection; count what came back."""
    tool, schema = p["tool"], p.get("schema", "public")
    if tool == "sqlnb":
        from sqlnb.adapters import connect

        t0 = time.perf_counter()
        adapter = connect(p["urls"]["sqlnb"])
        connect_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        cat = adapter.catalog(refresh=True)
        elapsed = time.perf_counter() - t0
        tables = [t for t in cat.tables if t.schema == schema]
        counts = {
            "tables": len(tables),
            "columns": sum(len(t.columns) for t in tables),
            "primary_keys": sum(1 for t in tables if t.primary_key),
            "unique": sum(len(t.unique) for t in tables),
            "foreign_keys": sum(len(t.foreign_keys) for t in tables),
            "indexes": sum(len(t.indexes) for t in tables),
            "row_estimates": sum(1 for t in tables if t.row_count is not None),
        }
        adapter.close()
        return {"seconds": elapsed, "connect_seconds": connect_s, "counts": counts, "peak_rss": peak_rss()}
    import sqlalchemy as sa

    engine = sa.create_engine(p["urls"]["sqlalchemy"])
    t0 = time.perf_counter()
    conn = engine.connect()
    connect_s = time.perf_counter() - t0
    counts: dict[str, int] = {}
    if tool == "sqla_reflect":
        t0 = time.perf_counter()
        md = sa.MetaData()
        md.reflect(bind=conn, schema=None)
        elapsed = time.perf_counter() - t0
        tables = list(md.tables.values())
        counts = {
            "tables": len(tables),
            "columns": sum(len(t.columns) for t in tables),
            "primary_keys": sum(1 for t in tables if len(t.primary_key.columns)),
            "unique": sum(1 for t in tables for c in t.constraints if isinstance(c, sa.UniqueConstraint)),
            "foreign_keys": sum(len(t.foreign_key_constraints) for t in tables),
            "indexes": sum(len(t.indexes) for t in tables),
        }
    elif tool in ("sqla_multi", "sqla_multi_full"):
        t0 = time.perf_counter()
        insp = sa.inspect(conn)
        cols = insp.get_multi_columns()
        pks = insp.get_multi_pk_constraint()
        fks = insp.get_multi_foreign_keys()
        extra = {}
        if tool == "sqla_multi_full":  # also what sqlnb reads: unique constraints and indexes
            extra["unique"] = insp.get_multi_unique_constraints()
            extra["indexes"] = insp.get_multi_indexes()
        elapsed = time.perf_counter() - t0
        counts = {
            "tables": len(cols),
            "columns": sum(len(v) for v in cols.values()),
            "primary_keys": sum(1 for v in pks.values() if v.get("constrained_columns")),
            "foreign_keys": sum(len(v) for v in fks.values()),
        }
        for k, v in extra.items():
            counts[k] = sum(len(x) for x in v.values())
    else:
        raise ValueError(f"unknown tool {tool!r}")
    conn.close()
    engine.dispose()
    return {"seconds": elapsed, "connect_seconds": connect_s, "counts": counts, "peak_rss": peak_rss()}


TASKS = {"fetch": fetch, "memory": memory, "display": display, "catalog": catalog}


def main() -> int:
    p = json.loads(sys.argv[1])
    # Import order matters: sqlnb loads mysql-connector's C extension before pyarrow can block
    # it, so a notebook should run %load_ext sqlnb before importing pandas. Measure sqlnb in its
    # documented order; "sqlnb_pandas_first" is the other order (a notebook starting with
    # "import pandas as pd").
    if p.get("tool") == "sqlnb":
        import sqlnb  # noqa: F401
    elif p.get("tool") == "sqlnb_pandas_first":
        import pandas  # noqa: F401
    try:
        result = TASKS[p["task"]](p)
    except BaseException as exc:  # report one line on stderr: the parent shows it
        traceback.print_exc()
        print(f"{type(exc).__name__}: {' '.join(str(exc).split())[:500]}", file=sys.stderr)
        return 1
    with open(p["out"], "w") as fh:
        json.dump(result, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
