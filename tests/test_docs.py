"""The documentation stays true: the agent graph drawn in docs/architecture.md is the
compiled graph's, the benchmark chart is drawn from the committed results, every local link
and image in the README and docs/ exists, and the README's first screen and the Binder
setup say what a newcomer runs."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import stat
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


agent_graph = _load(ROOT / "docs" / "agent_graph.py", "sqlnb_docs_agent_graph")
chart = _load(ROOT / "benchmarks" / "chart.py", "sqlnb_benchmarks_chart")


# --- the agent graph -----------------------------------------------------------------------
def test_architecture_shows_the_compiled_agent_graph():
    text = (ROOT / "docs" / "architecture.md").read_text()
    committed = agent_graph.committed(text)
    expected = agent_graph.block()
    assert committed == expected, "docs/architecture.md's agent graph is out of date: run python docs/agent_graph.py"
    # the drawing names every node and edge of the graph the agent runs
    from sqlnb.agent.graph import build_graph

    graph = build_graph().get_graph()
    for node in graph.nodes:
        assert node in committed
    edges = re.findall(r"^\s*(\w+) (?:-->|-\.->) (\w+);$", committed, re.M)
    assert sorted(edges) == sorted((e.source, e.target) for e in graph.edges)


def test_the_graph_check_fails_on_a_changed_graph(tmp_path, monkeypatch):
    doc = tmp_path / "architecture.md"
    doc.write_text("# x\n\n" + agent_graph.block() + "\n")
    monkeypatch.setattr(agent_graph, "DOC", doc)
    assert agent_graph.main(["--check"]) == 0
    # an edge the compiled graph lacks: the check fails, and regenerating repairs the doc
    doc.write_text(doc.read_text().replace("execute --> decide_next_step;",
                                           "execute --> decide_next_step;\n\texecute --> generate;"))
    assert agent_graph.main(["--check"]) == 1
    assert agent_graph.main([]) == 0
    assert agent_graph.main(["--check"]) == 0
    assert "execute --> generate" not in doc.read_text()


# --- the benchmark chart -------------------------------------------------------------------
def test_benchmark_chart_is_drawn_from_the_results(tmp_path):
    results = ROOT / "benchmarks" / "results"
    data = chart.chart_data(results)
    fetch = json.loads((results / "fetch.json").read_text())
    accuracy = json.loads((results / "accuracy.json").read_text())
    assert data["fetch"]["PostgreSQL"]["sqlnb %%sql -o"] == fetch["engines"]["postgresql"]["tools"]["sqlnb"]["median_s"]
    assert data["accuracy"]["agent"] == accuracy["configs"]["agent"]["ex"]
    out = chart.draw(results, tmp_path / "chart.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert out.stat().st_size > 10_000
    assert chart.main(["--results", str(results), "--out", str(tmp_path / "again.png")]) == 0
    assert (tmp_path / "again.png").exists()


def test_benchmark_chart_says_which_results_are_missing(tmp_path, capsys):
    for name in ("fetch", "catalog"):
        shutil.copy(ROOT / "benchmarks" / "results" / f"{name}.json", tmp_path)
    assert chart.main(["--results", str(tmp_path), "--out", str(tmp_path / "c.png")]) == 2
    err = capsys.readouterr().err
    assert "accuracy.json is missing" in err and "benchmarks/run.py accuracy" in err
    assert not (tmp_path / "c.png").exists()
    # results without a tool the chart shows
    shutil.copy(ROOT / "benchmarks" / "results" / "accuracy.json", tmp_path)
    catalog = json.loads((tmp_path / "catalog.json").read_text())
    del catalog["tools"]["sqla_reflect"]
    (tmp_path / "catalog.json").write_text(json.dumps(catalog))
    with pytest.raises(chart.ResultsError, match="sqla_reflect"):
        chart.chart_data(tmp_path)


def test_committed_chart_exists():
    png = ROOT / "docs" / "images" / "benchmarks.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --- links ------------------------------------------------------------------------------------
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def _anchors(markdown: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens."""
    out = set()
    for line in markdown.splitlines():
        m = re.match(r"#{1,6} (.+)", line)
        if m:
            title = m.group(1).strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return out


@pytest.mark.parametrize("doc", [README, *DOCS], ids=lambda p: p.name)
def test_local_links_and_images_exist(doc):
    text = doc.read_text()
    anchors = _anchors(text)
    broken = []
    for target in _LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        if path:
            if not (doc.parent / path).exists():
                broken.append(target)
        elif anchor not in anchors:
            broken.append(target)
    assert broken == []


# --- the first screen and Binder ---------------------------------------------------------------
BINDER_PATH = "?urlpath=lab/tree/demo/sqlnb-demo.ipynb"


def test_readme_first_screen_sells_and_shows_the_two_commands():
    text = README.read_text()
    # what shows before scrolling: the pitch, the screenshot and the two commands
    first_screen = "\n".join(text.splitlines()[:20])
    assert "mybinder.org/badge_logo.svg" in first_screen and BINDER_PATH in first_screen
    assert "(docs/images/panel.png)" in first_screen
    assert "scripts/demo" in first_screen and "scripts/test" in first_screen
    assert "--no-browser" in first_screen


def test_binder_builds_the_sidebar_and_the_demo_the_badge_opens():
    binder = ROOT / "binder"
    post = binder / "postBuild"
    assert post.stat().st_mode & stat.S_IXUSR
    assert (binder / "check").stat().st_mode & stat.S_IXUSR
    script = post.read_text()
    assert "jlpm build:prod" in script and 'pip install -q ".[lab]"' in script
    # the notebook the badge opens is the one postBuild creates
    m = re.search(r"sqlnb demo --dir (\S+) --no-lab", script)
    assert m and BINDER_PATH.endswith(f"/{m.group(1)}/sqlnb-demo.ipynb")
    assert "jupyterlab" in (binder / "requirements.txt").read_text()


def test_demo_without_browser_starts_jupyterlab_with_no_browser(tmp_path, monkeypatch):
    """`scripts/demo --no-browser` (the newcomer test's command) reaches `jupyter lab`."""
    import subprocess

    from sqlnb import cli

    calls = []
    monkeypatch.setattr(subprocess, "call", lambda cmd, **kw: calls.append((cmd, kw)) or 0)
    assert cli.main(["demo", "--dir", str(tmp_path / "d"), "--port", "8999", "--no-browser"]) == 0
    cmd, kw = calls[0]
    assert cmd[1:3] == ["lab", "sqlnb-demo.ipynb"] and "--port=8999" in cmd and "--no-browser" in cmd
    assert Path(kw["cwd"]) == (tmp_path / "d").resolve()
    calls.clear()
    assert cli.main(["demo", "--dir", str(tmp_path / "d"), "--port", "8999"]) == 0
    assert "--no-browser" not in calls[0][0]
    assert os.path.exists(tmp_path / "d" / "sample.duckdb")
