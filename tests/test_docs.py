"""The documentation stays true: the README's first screen says what a user runs (and its
notebook example runs), every relative link of the README and the docs reaches a file and a
heading that exist, the README's headline figures are the reports' figures, every setting
in the code is documented, the agent graph drawn in docs/architecture.md is the compiled
graph's, the benchmark chart is drawn from the committed results, and the Binder setup
opens the demo."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import re
import shutil
import stat
import sys
from pathlib import Path

import pytest
from IPython.utils.capture import capture_output

from sqlnb.sql.format import pretty
from tests.doubles import script, sql_block

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BENCHMARKS = ROOT / "benchmarks" / "README.md"
RESULTS = ROOT / "benchmarks" / "results"
CONFIGURATION = ROOT / "docs" / "configuration.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
# every markdown page a reader is sent to: the README, the top-level guides, the docs' pages
PAGES = [README, ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md", BENCHMARKS, *DOCS]


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
    assert committed == expected, (
        "docs/architecture.md's agent graph is out of date: run python docs/agent_graph.py"
    )
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
    doc.write_text(
        doc.read_text().replace(
            "execute --> decide_next_step;", "execute --> decide_next_step;\n\texecute --> generate;"
        )
    )
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
    assert (
        data["fetch"]["PostgreSQL"]["sqlnb %%sql -o"]
        == fetch["engines"]["postgresql"]["tools"]["sqlnb"]["median_s"]
    )
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
_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)


def _prose(markdown: str) -> str:
    """The markdown without its fenced blocks (code, and MyST directives such as toctree)."""
    return _FENCE.sub("", markdown)


def _anchors(markdown: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens (the
    docs site's MyST builds the same)."""
    out = set()
    for line in _prose(markdown).splitlines():
        m = re.match(r"#{1,6} (.+)", line)
        if m:
            title = m.group(1).strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return out


def _broken_links(doc: Path) -> list[str]:
    broken = []
    for target in _LINK.findall(_prose(doc.read_text())):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        file = (doc.parent / path) if path else doc
        if not file.exists() or (
            anchor and file.suffix == ".md" and anchor not in _anchors(file.read_text())
        ):
            broken.append(target)
    return broken


@pytest.mark.parametrize("doc", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_local_links_and_images_exist(doc):
    """Every relative link and image reaches a file, and a link's #anchor a heading of it."""
    assert _broken_links(doc) == []


def test_a_broken_link_or_anchor_is_found(tmp_path):
    (tmp_path / "other.md").write_text("# Other page\n\n## A `%%sql` section\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n[ok](other.md#a-sql-section) [here](#page) "
        "[gone](missing.md) [no heading](other.md#nowhere) [not here](#elsewhere)\n\n"
        "```\n[in code](not-checked.md)\n```\n"
    )
    assert _broken_links(page) == ["missing.md", "other.md#nowhere", "#elsewhere"]


# --- the first screen and Binder ---------------------------------------------------------------
BINDER_PATH = "?urlpath=lab/tree/demo/sqlnb-demo.ipynb"


def _first_screen() -> str:
    """What a reader sees of the README before its first section heading."""
    text = README.read_text()
    return text[: text.index("\n## ")]


def _test_command() -> str:
    """The command .ci/run runs: its last line."""
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    return [line for line in lines if line and not line.startswith("#")][-1]


def test_readme_first_screen_says_what_a_user_runs():
    screen = _first_screen()
    assert len(screen.splitlines()) <= 60, "the first screen has grown past a screen"
    # what sqlnb is, how to install it, the sidebar's picture, the demo and the test command
    assert "pip install sqlnb" in screen
    assert "(docs/images/panel.png)" in screen
    assert "scripts/demo" in screen and "sqlnb demo" in screen
    assert _test_command() == "scripts/test" and _test_command() in screen
    assert "mybinder.org/badge_logo.svg" in screen and BINDER_PATH in screen
    # the extras it names are the package's
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    named = set(re.findall(r"sqlnb\[([a-z]+)\]", README.read_text()))
    named |= set(re.findall(r"`([a-z]+)` \(", screen.split("More extras:")[1].split("\n\n")[0]))
    assert {"postgres", "local", "lab"} <= named and named <= set(extras)


def _example_cells() -> list[str]:
    """The notebook example of the README's first screen: its fenced blocks, one cell each."""
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```", _first_screen(), re.M | re.S)
    return [b.strip() for b in blocks if b.lstrip().startswith("%")]


def test_readme_example_runs_on_the_demo_database(shell, tmp_path, monkeypatch):
    """The first screen's notebook example, cell by cell, on the demo's sample database, with
    a scripted model standing in for the one a user configures."""
    from sqlnb.demo import create_sample_database

    cells = _example_cells()
    assert [c.split()[0] for c in cells] == ["%load_ext", "%%sql", "%%ask"]
    assert len("\n".join(cells).splitlines()) <= 10
    monkeypatch.chdir(tmp_path)
    create_sample_database(tmp_path / "sample.duckdb")
    load, sql, ask = cells
    with capture_output() as cap:
        assert shell.run_cell(load).success, cap.stdout + cap.stderr
        assert shell.run_cell(sql).success, cap.stdout + cap.stderr
    output = re.match(r"%%sql -o (\w+)", sql).group(1)
    assert len(shell.user_ns[output]) > 0
    # %%ask answers with a %%sql cell below it, which runs
    answer = (
        "SELECT c.name, sum(t.total) AS spent FROM customers c "
        "JOIN order_totals t ON t.customer_id = c.id GROUP BY c.name ORDER BY spent DESC LIMIT 5"
    )
    shell.run_line_magic("config", f"AskMagic.model = {script(tmp_path, sql_block(answer), 'FINAL')!r}")
    with capture_output() as cap:
        result = shell.run_cell(ask)
    assert result.success and result.result.status == "success", cap.stdout + cap.stderr
    inserted = shell.rl_next_input
    # the answer's SQL, laid out for reading (the same query)
    assert inserted.startswith("%%sql --conn ") and inserted.endswith("\n" + pretty(answer, "duckdb") + "\n")
    with capture_output() as cap:
        assert shell.run_cell(inserted).success, cap.stdout + cap.stderr


# --- the headline figures -------------------------------------------------------------------
def _table(markdown: str, heading: str) -> list[str]:
    """The rows (below the header and its rule) of the first table after ``heading``."""
    table: list[str] = []
    for line in markdown[markdown.index(heading) :].splitlines()[1:]:
        if line.startswith("|"):
            table.append(line)
        elif table:
            break
    assert len(table) > 2, f"no table after {heading!r}"
    return table[2:]


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip("|").split("|")]


def _report(link: str) -> dict:
    """The JSON a report link's markdown was written with."""
    return json.loads((RESULTS / Path(link).name).with_suffix(".json").read_text())


def _unseen_totals() -> tuple[int, dict[str, tuple[int, int]]]:
    """The unseen batches' table in benchmarks/README.md, each row checked against its
    report: the number of batches and the (right, asked) totals per configuration."""
    configs = ("agent", "agent+memory", "single-shot")
    totals = {config: [0, 0] for config in configs}
    batches, total_row = 0, None
    for row in _table(BENCHMARKS.read_text(), "#### The unseen batches"):
        cells = [c.replace("**", "") for c in _cells(row)]
        links = re.findall(r"\]\((results/accuracy_unseen[^)]*\.md)\)", row)
        if not links:
            total_row = cells
            continue
        batches += 1
        data = _report(links[0])
        for config, cell in zip(configs, cells[4:7], strict=True):
            if cell == "—":  # a configuration the batch's run left out
                assert config not in data["configs"], (links[0], config)
                continue
            c = data["configs"][config]
            assert cell == f"{c['ex']:.1f}% ({c['correct']})", (links[0], config, cell)
            totals[config][0] += c["correct"]
            totals[config][1] += c["n"]
    # the table's own total row adds up too (a configuration not run on every batch says of how many)
    asked = totals["agent"][1]
    assert total_row is not None and total_row[0] == f"all {asked}"
    assert total_row[4:7] == [
        f"{100 * r / n:.1f}% ({r}{'' if n == asked else f' of {n}'})" for r, n in totals.values()
    ]
    return batches, {k: (v[0], v[1]) for k, v in totals.items()}


ENGINES = {"PostgreSQL": "postgresql", "MariaDB": "mysql", "DuckDB": "duckdb", "SQLite": "sqlite"}


def test_readme_headline_figures_are_the_reports():
    rows = _table(README.read_text(), "## Benchmarks")
    assert 3 <= len(rows) <= 6, "one short table of headline figures"
    kinds = set()
    for row in rows:
        measured, ours, against, report = _cells(row)
        link = re.search(r"\]\(([^)]+)\)", report).group(1)
        if link.startswith("benchmarks/results/"):
            data = _report(link)
            if data["benchmark"] == "accuracy":
                kinds.add("spider")
                agent, single = data["configs"]["agent"], data["configs"]["single-shot"]
                assert f"**{agent['ex']:.1f}%**" == ours and f"single-shot {single['ex']:.1f}%" == against
                assert f"({agent['n']} questions)" in measured
            else:
                assert data["benchmark"] == "fetch"
                kinds.add("fetch")
                engine = data["engines"][ENGINES[measured.rsplit(", ", 1)[1]]]
                tools = engine["tools"]
                assert ours == f"**{tools['sqlnb']['median_s']:.2f} s**"
                assert against == (
                    f"JupySQL {tools['jupysql']['median_s']:.2f} s ({engine['jupysql_over_sqlnb']:.1f}×)"
                )
                assert f"{data['rows']:,}".startswith("1,000,000") and "1M rows" in measured
        else:
            assert link == "benchmarks/README.md#the-unseen-batches"
            kinds.add("unseen")
            batches, totals = _unseen_totals()
            right, asked = totals["agent"]
            s_right, s_asked = totals["single-shot"]
            assert asked == s_asked
            assert f"{batches} batches" in measured and f"({asked} questions)" in measured
            assert ours == f"**{100 * right / asked:.1f}%**"
            assert against == f"single-shot {100 * s_right / s_asked:.1f}%"
    assert kinds == {"spider", "unseen", "fetch"}


# --- settings documented ------------------------------------------------------------------------
def test_every_setting_is_documented():
    """Every traitlet of the magics, every field of AgentSettings, every setting of the
    sidebar, every SQLNB_ variable the package reads and every command of the command line
    is in the docs."""
    from sqlnb.agent.settings import AgentSettings
    from sqlnb.cli import build_parser
    from sqlnb.magics import AskMagic, SqlMagic

    page = CONFIGURATION.read_text()
    missing = [
        f"{cls.__name__}.{name}"
        for cls in (SqlMagic, AskMagic)
        for name in cls.class_traits(config=True)
        if f"`{cls.__name__}.{name}`" not in page
    ]
    python = page[page.index("## `AgentSettings`") :]
    missing += [
        f"AgentSettings.{f.name}" for f in dataclasses.fields(AgentSettings) if f"`{f.name}`" not in python
    ]
    schema = json.loads((ROOT / "labextension" / "schema" / "plugin.json").read_text())
    missing += [f"sidebar {name}" for name in schema["properties"] if f"`{name}`" not in page]
    variables = set()
    for source in (ROOT / "sqlnb").rglob("*.py"):
        variables |= set(re.findall(r"\bSQLNB_[A-Z][A-Z_]*[A-Z]\b", source.read_text()))
    missing += sorted(v for v in variables if f"`{v}`" not in page)
    cli = (ROOT / "docs" / "cli.md").read_text()
    commands = next(a for a in build_parser()._actions if a.dest == "command").choices
    missing += [f"sqlnb {c}" for c in commands if f"`sqlnb {c}`" not in cli]
    assert missing == []


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
