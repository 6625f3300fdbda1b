"""What the benchmark scripts share: engines, data sets, fresh-subprocess runs, reports.

Not a package: ``run.py`` puts this folder on ``sys.path`` and imports the modules by name.
Every timed measurement runs in a fresh Python subprocess (``worker.py``) so that one
tool's caches, imports and memory never affect another's.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_RESULTS = HERE / "results"
DEFAULT_DATA = HERE / ".work"  # DuckDB and SQLite files (ignored by git)

PG_HOST, PG_PORT, PG_USER = "127.0.0.1", 5432, "postgres"
MY_HOST, MY_PORT, MY_USER, MY_PASSWORD = "127.0.0.1", 3306, "sqlnb", "Sq1nb-pw"

ENGINES = ("postgresql", "mysql", "duckdb", "sqlite")
LABELS = {
    "postgresql": "PostgreSQL",
    "mysql": "MariaDB",
    "duckdb": "DuckDB (file)",
    "sqlite": "SQLite (file)",
}
QUERY = "SELECT * FROM bench"
DATA_VERSION = 1  # bump when the generated data changes: old data sets are rebuilt


# ---------------------------------------------------------------------------
# Data sets: table ``bench`` with 5 columns, in a database (or file) named for its size
# ---------------------------------------------------------------------------


def fetch_db_name(rows: int) -> str:
    return f"sqlnb_bench_{rows}"


def file_path(engine: str, rows: int, data_dir: Path) -> Path:
    return Path(data_dir) / f"bench_{rows}.{'duckdb' if engine == 'duckdb' else 'sqlite'}"


def urls(engine: str, rows: int, data_dir: Path) -> dict[str, str]:
    """Connection strings for one engine's data set.

    ``sqlnb``: what ``%sqlnb connect`` takes (the MariaDB password comes from MYSQL_PWD, as a
    notebook would have it); ``sqlalchemy``: what JupySQL and ``pandas.read_sql`` take;
    ``path``: the file, for the file engines.
    """
    if engine == "postgresql":
        db = fetch_db_name(rows)
        return {
            "sqlnb": f"postgresql://{PG_USER}@{PG_HOST}:{PG_PORT}/{db}",
            "sqlalchemy": f"postgresql+psycopg2://{PG_USER}@{PG_HOST}:{PG_PORT}/{db}",
        }
    if engine == "mysql":
        db = fetch_db_name(rows)
        return {
            "sqlnb": f"mysql://{MY_USER}@{MY_HOST}:{MY_PORT}/{db}",
            "sqlalchemy": f"mysql+pymysql://{MY_USER}:{MY_PASSWORD}@{MY_HOST}:{MY_PORT}/{db}",
        }
    path = file_path(engine, rows, data_dir).resolve()
    return {"sqlnb": f"{engine}:///{path}", "sqlalchemy": f"{engine}:///{path}", "path": str(path)}


def _bench_sql(engine: str, rows: int) -> list[str]:
    """Server-side generation of the same 5 columns on every engine: an integer id, a
    float, a text of 10-30 characters, a timestamp and a numeric(12,2)."""
    n = int(rows)
    if engine == "postgresql":
        return [
            "DROP TABLE IF EXISTS bench_meta",
            "DROP TABLE IF EXISTS bench",
            "CREATE TABLE bench (id bigint NOT NULL, x double precision, name text, "
            "ts timestamp, amount numeric(12,2))",
            "INSERT INTO bench SELECT i, (i % 10007) * 0.731, "
            "'customer_' || i || '_' || substr('abcdefghijklmnopqrst', 1, (i % 20)::int), "
            "timestamp '2020-01-01' + i * interval '37 seconds', ((i % 100000) / 100.0)::numeric(12,2) "
            f"FROM generate_series(1, {n}) AS g(i)",
            "VACUUM ANALYZE bench",
        ]
    if engine == "mysql":
        return [
            "DROP TABLE IF EXISTS bench_meta",
            "DROP TABLE IF EXISTS bench",
            "CREATE TABLE bench (id bigint NOT NULL, x double, name varchar(64), "
            "ts datetime, amount decimal(12,2)) ENGINE=InnoDB",
            "INSERT INTO bench SELECT seq, (seq % 10007) * 0.731, "
            "CONCAT('customer_', seq, '_', SUBSTR('abcdefghijklmnopqrst', 1, seq % 20)), "
            "TIMESTAMP '2020-01-01 00:00:00' + INTERVAL (seq * 37) SECOND, (seq % 100000) / 100.0 "
            f"FROM seq_1_to_{n}",
            "ANALYZE TABLE bench",
        ]
    if engine == "duckdb":
        return [
            "DROP TABLE IF EXISTS bench_meta",
            "DROP TABLE IF EXISTS bench",
            "CREATE TABLE bench (id bigint NOT NULL, x double, name varchar, ts timestamp, "
            "amount decimal(12,2))",
            "INSERT INTO bench SELECT i, (i % 10007) * 0.731, "
            "'customer_' || i || '_' || substr('abcdefghijklmnopqrst', 1, (i % 20)::int), "
            "TIMESTAMP '2020-01-01' + to_seconds(i * 37), ((i % 100000) / 100.0)::decimal(12,2) "
            f"FROM range(1, {n + 1}) AS t(i)",
            "CHECKPOINT",
        ]
    if engine == "sqlite":
        return [
            "DROP TABLE IF EXISTS bench_meta",
            "DROP TABLE IF EXISTS bench",
            "CREATE TABLE bench (id INTEGER NOT NULL, x REAL, name TEXT, ts TIMESTAMP, amount NUMERIC(12,2))",
            "WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < "
            f"{n}) INSERT INTO bench SELECT i, (i % 10007) * 0.731, "
            "'customer_' || i || '_' || substr('abcdefghijklmnopqrst', 1, i % 20), "
            "datetime('2020-01-01', '+' || (i * 37) || ' seconds'), round((i % 100000) / 100.0, 2) FROM g",
        ]
    raise ValueError(engine)


class _Admin:
    """Raw-driver administration (independent of the sqlnb code under test)."""

    def __init__(self, engine: str, rows: int, data_dir: Path):
        self.engine, self.rows, self.data_dir = engine, rows, Path(data_dir)
        self._lock = None
        self.conn = None
        self.conn = self._connect()

    def _connect(self):
        e = self.engine
        if e == "postgresql":
            import psycopg

            db = fetch_db_name(self.rows)
            # held until close(): a concurrent run waits instead of loading the same table
            self._lock = psycopg.connect(
                host=PG_HOST, port=PG_PORT, user=PG_USER, dbname="postgres", autocommit=True
            )
            pg_lock(self._lock, db)
            if not self._lock.execute("SELECT 1 FROM pg_database WHERE datname = %s", (db,)).fetchone():
                self._lock.execute(f'CREATE DATABASE "{db}"')
            return psycopg.connect(host=PG_HOST, port=PG_PORT, user=PG_USER, dbname=db, autocommit=True)
        if e == "mysql":
            import pymysql

            db = fetch_db_name(self.rows)
            c = pymysql.connect(
                host=MY_HOST, port=MY_PORT, user=MY_USER, password=MY_PASSWORD, autocommit=True
            )
            cur = c.cursor()
            cur.execute("SELECT GET_LOCK(%s, 3600)", (f"sqlnb-bench:{db}",))  # released on close
            cur.fetchall()
            cur.execute(f"CREATE DATABASE IF NOT EXISTS `{db}`")
            c.select_db(db)
            return c
        if e in ("duckdb", "sqlite"):
            import fcntl

            self.data_dir.mkdir(parents=True, exist_ok=True)
            path = file_path(e, self.rows, self.data_dir)
            self._lock = open(f"{path}.lock", "w")  # noqa: SIM115  the lock lives until close()
            fcntl.flock(self._lock, fcntl.LOCK_EX)  # released on close
        if e == "duckdb":
            import duckdb

            return duckdb.connect(str(file_path(e, self.rows, self.data_dir)))
        if e == "sqlite":
            import sqlite3

            return sqlite3.connect(str(file_path(e, self.rows, self.data_dir)), isolation_level=None)
        raise ValueError(e)

    def run(self, sql: str) -> None:
        if self.engine in ("mysql", "postgresql"):
            cur = self.conn.cursor()
            cur.execute(sql)
            if cur.description is not None:
                cur.fetchall()
            cur.close()
        else:
            self.conn.execute(sql)

    def query(self, sql: str) -> list[tuple]:
        cur = self.conn.cursor()
        cur.execute(sql)
        rows = list(cur.fetchall())
        cur.close()
        return rows

    def version(self) -> str:
        if self.engine in ("postgresql", "mysql"):
            return str(self.query("SELECT version()")[0][0])
        if self.engine == "duckdb":
            import duckdb

            return f"DuckDB {duckdb.__version__}"
        import sqlite3

        return f"SQLite {sqlite3.sqlite_version}"

    def close(self) -> None:
        for thing in (self.conn, self._lock):
            try:
                if thing is not None:
                    thing.close()
            except Exception:
                pass


def pg_lock(conn, name: str) -> None:
    """A session-level advisory lock on ``name`` (released when ``conn`` closes)."""
    conn.execute("SELECT pg_advisory_lock(hashtext(%s))", (f"sqlnb-bench:{name}",))


def ensure_fetch_data(engine: str, rows: int, data_dir: Path, log=print) -> dict[str, Any]:
    """Create ``bench`` with ``rows`` rows unless a complete copy is already there.

    Completeness is a marker row in ``bench_meta`` written after the load; then one full
    server-side scan warms the server's cache so the first tool timed is not penalised.
    """
    admin = _Admin(engine, rows, data_dir)
    try:
        try:
            meta = admin.query("SELECT nrows, version FROM bench_meta")
        except Exception:  # no marker table yet (autocommit: nothing to roll back)
            meta = []
        complete = bool(meta) and int(meta[0][0]) == rows and int(meta[0][1]) == DATA_VERSION
        created_s = None
        if not complete:
            log(f"  creating {rows:,} rows on {LABELS[engine]} ...")
            t0 = time.perf_counter()
            for sql in _bench_sql(engine, rows):
                admin.run(sql)
            admin.run("CREATE TABLE bench_meta (nrows bigint, version integer)")
            admin.run(f"INSERT INTO bench_meta VALUES ({int(rows)}, {DATA_VERSION})")
            if engine == "duckdb":
                admin.run("CHECKPOINT")
            created_s = time.perf_counter() - t0
            log(f"  created in {created_s:.1f} s")
        count = int(admin.query("SELECT count(*), max(length(name)) FROM bench")[0][0])
        if count != rows:
            raise RuntimeError(f"{engine}: bench has {count} rows, expected {rows}")
        return {"engine": engine, "rows": rows, "created_s": created_s, "server": admin.version()}
    finally:
        admin.close()


# ---------------------------------------------------------------------------
# Fresh-subprocess measurements
# ---------------------------------------------------------------------------


class WorkerError(RuntimeError):
    pass


def worker_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "PLOOMBER_STATS_ENABLED": "false",  # JupySQL telemetry off (there is no network)
            "SQLNB_NO_KEYRING": "1",
            "MYSQL_PWD": MY_PASSWORD,  # sqlnb reads the MariaDB password from here
            "PYTHONUNBUFFERED": "1",
            "PYTHONWARNINGS": "ignore",
        }
    )
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    return env


def run_worker(task: str, params: dict[str, Any], timeout: float = 3600) -> dict[str, Any]:
    """Run ``worker.py TASK`` in a fresh interpreter and return the JSON it writes."""
    with tempfile.TemporaryDirectory(prefix="sqlnb-bench-") as tmp:
        out = Path(tmp) / "result.json"
        payload = dict(params, task=task, out=str(out))
        cmd = [sys.executable, str(HERE / "worker.py"), json.dumps(payload)]
        try:
            proc = subprocess.run(
                cmd, cwd=str(REPO), env=worker_env(), capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            raise WorkerError(
                f"{task} {params.get('tool')} {params.get('engine')}: timed out after {timeout:.0f} s"
            ) from None
        if proc.returncode != 0 or not out.exists():
            tail = (proc.stderr or proc.stdout or "").strip().splitlines()
            last = next((line for line in reversed(tail) if line.strip()), "no output")
            raise WorkerError(
                f"{task} {params.get('tool')} {params.get('engine') or ''}: {last.strip()}"
                + ("\n" + "\n".join(tail[-25:]) if os.environ.get("BENCH_VERBOSE") else "")
            )
        return json.loads(out.read_text())


def median(values: list[float]) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b <= 0:
        return None
    return a / b


# ---------------------------------------------------------------------------
# Reports
# ---------------------------------------------------------------------------


def git(*args: str, timeout: float = 30) -> str | None:
    """What ``git ARGS`` prints in the repository (None when git could not run)."""
    try:
        return subprocess.run(
            ["git", *args], cwd=REPO, capture_output=True, text=True, timeout=timeout
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None


def package_versions(names: list[str]) -> dict[str, str]:
    from importlib import metadata

    out = {}
    for n in names:
        try:
            out[n] = metadata.version(n)
        except metadata.PackageNotFoundError:
            out[n] = "not installed"
    return out


def machine_info() -> dict[str, Any]:
    info: dict[str, Any] = {
        "date": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "host": platform.node(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
    }
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        info["cpu"] = platform.processor()
    try:
        import psutil

        info["memory_gib"] = round(psutil.virtual_memory().total / 2**30, 1)
    except ImportError:
        pass
    try:
        info["load_average"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        pass
    info["packages"] = package_versions(
        [
            "sqlnb",
            "jupysql",
            "sqlalchemy",
            "pandas",
            "pyarrow",
            "ipython",
            "duckdb",
            "duckdb-engine",
            "psycopg",
            "psycopg2-binary",
            "adbc-driver-postgresql",
            "pymysql",
            "mysql-connector-python",
            "connectorx",
            "psutil",
        ]
    )
    return info


def machine_markdown(
    info: dict[str, Any], servers: dict[str, str] | None = None, load_after: list[float] | None = None
) -> str:
    pk = info.get("packages", {})
    lines = [
        f"- Date: {info['date']}",
        f"- Machine: {info.get('cpu', '?')}, {info.get('cpu_count')} cores, "
        f"{info.get('memory_gib', '?')} GiB RAM; {info['os']}; Python {info['python']}",
        f"- Load average (1/5/15 min) at start: {info.get('load_average')}"
        + (f", at end: {load_after}" if load_after else "")
        + " — timings are only comparable on a quiet machine",
        "- Packages: " + ", ".join(f"{k} {v}" for k, v in pk.items() if v != "not installed"),
    ]
    for engine, version in (servers or {}).items():
        lines.append(f"- {LABELS.get(engine, engine)}: {version}")
    return "\n".join(lines)


def fmt_s(v: float | None) -> str:
    if v is None:
        return "—"
    return f"{v:.3f}" if v < 10 else f"{v:.1f}"


def fmt_x(v: float | None) -> str:
    return "—" if v is None else f"{v:.2f}×"


def fmt_bytes(n: float | None) -> str:
    if n is None:
        return "—"
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return str(n)


def fmt_mib(n: float | None) -> str:
    return "—" if n is None else f"{n / 2**20:,.0f}"


def table(headers: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def write_results(name: str, results_dir: Path, markdown: str, data: dict[str, Any]) -> tuple[Path, Path]:
    results_dir = Path(results_dir)
    results_dir.mkdir(parents=True, exist_ok=True)
    md, js = results_dir / f"{name}.md", results_dir / f"{name}.json"
    md.write_text(markdown.rstrip() + "\n")
    js.write_text(json.dumps(data, indent=2, default=str) + "\n")
    return md, js


def load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


UI_TESTS = REPO / "labextension" / "ui-tests"


def run_bench_spec(name: str, spec: str, env: dict[str, str], timeout: float) -> None:
    """Run the Galata benchmark ``spec`` (relative to labextension/ui-tests, project
    ``bench``: Debian's Chromium against a real JupyterLab serving the built extension)
    with ``env`` added to this environment and this Python's scripts first on PATH; exits
    with a message naming benchmark ``name`` when the extension is not built or jlpm is
    missing."""
    import shutil

    if not (REPO / "sqlnb" / "labextension" / "static" / "style.js").exists():
        sys.exit(
            f"{name}: the extension is not built (sqlnb/labextension/static is missing); "
            "build it first: cd labextension && jlpm install && jlpm build:prod"
        )
    full = dict(os.environ)
    full["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{full.get('PATH', '')}"
    full.update(PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1", **env)
    jlpm = shutil.which("jlpm", path=full["PATH"])
    if jlpm is None:
        sys.exit(f"{name}: jlpm not found; install JupyterLab in this environment (pip install jupyterlab)")
    subprocess.run([jlpm, "install"], cwd=UI_TESTS, env=full, check=True, timeout=timeout)
    subprocess.run(
        [jlpm, "playwright", "test", "--project=bench", spec],
        cwd=UI_TESTS,
        env=full,
        check=True,
        timeout=timeout,
    )
