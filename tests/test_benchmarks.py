"""Smoke test of benchmarks/: each benchmark runs at tiny size and writes its results.

No timing assertions: only that the scripts run end to end and report a number for every
engine and tool.  Needs the ``bench`` extra (JupySQL, SQLAlchemy, duckdb-engine, psycopg2,
psutil) and the PostgreSQL server of ``scripts/services.sh``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

# the bench extra (installed by scripts/test): a missing one fails here, loudly
import duckdb_engine  # noqa: E402,F401
import psutil  # noqa: E402,F401
import psycopg2  # noqa: E402,F401
import sql  # noqa: E402,F401  (JupySQL)
import sqlalchemy  # noqa: E402,F401

REPO = Path(__file__).resolve().parent.parent
ROWS, TABLES = 2000, 20
ENGINES = ("duckdb", "sqlite", "postgresql")


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("bench-data")


def run_benchmark(name: str, results: Path, data_dir: Path) -> dict:
    cmd = [sys.executable, str(REPO / "benchmarks" / "run.py"), name, "--rows", str(ROWS),
           "--tables", str(TABLES), "--repeat", "1", "--engines", ",".join(ENGINES),
           "--results-dir", str(results), "--data-dir", str(data_dir), "--timeout", "240"]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=540)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    md, js = results / f"{name}.md", results / f"{name}.json"
    assert md.is_file() and js.is_file(), proc.stdout[-3000:]
    text = md.read_text()
    assert "error" not in text.lower(), text
    assert "Machine:" in text
    return json.loads(js.read_text())


def is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0


@pytest.mark.timeout(600)
def test_fetch(tmp_path, data_dir):
    data = run_benchmark("fetch", tmp_path, data_dir)
    assert data["rows"] == ROWS
    assert set(data["engines"]) == set(ENGINES)
    for engine, e in data["engines"].items():
        for tool in ("sqlnb", "jupysql", "read_sql"):
            t = e["tools"][tool]
            assert not t["errors"], (engine, tool, t["errors"])
            assert is_number(t["median_s"]), (engine, tool)
            assert [r["rows"] for r in t["runs"]] == [ROWS], (engine, tool)
            assert len(t["dtypes"]) == 5
        assert is_number(e["jupysql_over_sqlnb"]) and is_number(e["read_sql_over_sqlnb"])
    text = (tmp_path / "fetch.md").read_text()
    for label in ("PostgreSQL", "DuckDB", "SQLite", "JupySQL / sqlnb", "read_sql / sqlnb"):
        assert label in text


@pytest.mark.timeout(600)
def test_memory(tmp_path, data_dir):
    data = run_benchmark("memory", tmp_path, data_dir)
    assert set(data["engines"]) == {"postgresql", "duckdb"}
    for engine, e in data["engines"].items():
        for tool in ("sqlnb", "jupysql"):
            r = e["reruns"][tool]
            assert "error" not in r, (engine, tool, r)
            assert len(r["runs"]) == data["reruns"] == 5
            assert all(is_number(x["rss"]) and x["rss"] > 0 for x in r["runs"])
            assert isinstance(r["growth"], int)
            assert r["rows"] == ROWS
        for key in ("sqlnb", "jupysql_all", "jupysql_default"):
            d = e["display"][key]
            assert "error" not in d, (engine, key, d)
            assert is_number(d["html_bytes"]) and d["html_bytes"] > 0
        # sqlnb renders at most its display limit; JupySQL with displaylimit = 0 renders all rows
        assert e["display"]["jupysql_all"]["html_bytes"] > e["display"]["sqlnb"]["html_bytes"]
        assert e["display"]["sqlnb"]["rows_fetched"] == ROWS
    text = (tmp_path / "memory.md").read_text()
    assert "Growth run 1 → 5" in text and "HTML bytes" in text


@pytest.mark.timeout(600)
def test_catalog(tmp_path, data_dir):
    data = run_benchmark("catalog", tmp_path, data_dir)
    assert data["tables"] == TABLES
    expected = data["expected"]
    assert expected["tables"] == TABLES and expected["columns"] == TABLES * 20
    for tool in ("sqlnb", "sqla_reflect", "sqla_multi", "sqla_multi_full"):
        t = data["tools"][tool]
        assert not t["errors"], (tool, t["errors"])
        assert is_number(t["median_s"]), tool
        assert t["counts"]["tables"] == TABLES and t["counts"]["columns"] == TABLES * 20, tool
        assert t["counts"]["foreign_keys"] == expected["foreign_keys"], tool
    assert all(v["ok"] for v in data["complete"].values()), data["complete"]
    assert all(is_number(v) for v in data["ratios"].values())
    assert "complete: **yes**" in (tmp_path / "catalog.md").read_text()
