"""What the panel gets to show an answer (docs/protocol.md): the SQL laid out, the chart of
its result with the cell that draws it, and every row of the result through ``rows``
requests; driven in-process as tests/test_bridge.py does, on a real DuckDB database with a
scripted model."""

from __future__ import annotations

import pytest
from IPython.utils.capture import capture_output

from sqlnb.bridge.comm import Bridge
from sqlnb.charts import chart_code
from sqlnb.kernel import kernel_session
from sqlnb.sql.format import pretty
from tests.doubles import script, sql_block
from tests.test_bridge import FakeComm, FakeKernel, ask, connect

QUOTED = (
    'SELECT "sales"."region", sum(sales."amount") AS total FROM "sales" AS sales '
    'GROUP BY "sales"."region" ORDER BY total DESC'
)


@pytest.fixture
def hello(shell):
    """A panel's comm to a bridge on a fake kernel (there is no kernel here), after its
    hello: (the comm, the hello reply)."""
    bridge = Bridge(shell, kernel=FakeKernel())
    kernel_session(shell).bridge = bridge
    comm = FakeComm()
    bridge.open(comm, {})
    reply = comm.request("hello", client={"name": "test", "version": "0"}, protocol=1, notebook="t.ipynb")
    assert reply["ok"], reply
    yield comm, reply
    for run in list(bridge.runs.values()):
        run.stop()
        run.wait(10)
    kernel_session(shell).bridge = None


@pytest.fixture
def panel(hello) -> FakeComm:
    return hello[0]


@pytest.fixture
def sales(shell, tmp_path):
    connect(shell, f"duckdb:///{tmp_path / 'sales.duckdb'}")
    cell = (
        "%%sql\nCREATE TABLE sales AS SELECT CASE i % 3 WHEN 0 THEN 'North' WHEN 1 THEN 'South' "
        "ELSE 'East' END AS region, i AS amount, DATE '2024-01-01' + CAST(i AS INTEGER) AS day "
        "FROM range(25) t(i)"
    )
    with capture_output():
        shell.run_cell(cell).raise_error()
    return shell


def test_the_answer_comes_laid_out_with_its_chart(sales, panel, tmp_path):
    run = ask(panel, "Sales per region?", model=script(tmp_path, sql_block(QUOTED), "FINAL"))
    done = panel.wait_done(run)
    assert done["status"] == "success"
    assert done["sql"] == QUOTED  # what ran, as it ran
    laid_out = done["sql_pretty"]
    assert laid_out == pretty(QUOTED, "duckdb") and laid_out != QUOTED
    assert laid_out.splitlines()[:4] == [
        "SELECT",
        "  sales.region,",
        "  SUM(sales.amount) AS total",
        "FROM sales",
    ]
    assert done["cell"].endswith("\n" + laid_out + "\n") and '"' not in done["cell"]
    chart = done["chart"]
    assert chart["mark"]["type"] == "bar" and chart["encoding"]["y"]["field"] == "region"
    assert sorted(r["region"] for r in chart["data"]["values"]) == ["East", "North", "South"]
    assert done["chart_cell"] == chart_code(done["cell"])
    assert done["chart_cell"].startswith("%%sql --conn db -o df --chart\n-- sqlnb ask: Sales per region?")
    assert done["row_count"] == 3 and done["truncated"] is False


def test_the_chart_cell_runs_and_draws(sales, panel, tmp_path):
    run = ask(panel, "Sales per region?", model=script(tmp_path, sql_block(QUOTED), "FINAL"))
    done = panel.wait_done(run)
    with capture_output() as cap:
        sales.run_cell(done["chart_cell"]).raise_error()
    assert any(o.data.get("application/vnd.vegalite.v5+json") == done["chart"] for o in cap.outputs)
    assert len(sales.user_ns["df"]) == 3


def test_an_answer_without_a_chart_says_null(sales, panel, tmp_path):
    model = script(tmp_path, sql_block("SELECT count(*) AS n FROM sales"), "FINAL")
    done = panel.wait_done(ask(panel, "How many sales?", model=model))
    assert done["status"] == "success" and done["chart"] is None and done["chart_cell"] is None
    assert done["sql_pretty"] == "SELECT\n  COUNT(*) AS n\nFROM sales"


def test_every_row_is_reachable_page_by_page(sales, panel, tmp_path):
    every = "SELECT amount, region FROM sales ORDER BY amount"
    run = ask(panel, "Every sale?", model=script(tmp_path, sql_block(every), "FINAL"), rows=10)
    done = panel.wait_done(run)
    assert done["row_count"] == 25 and len(done["rows"]) == 10
    pages = []
    for offset in (0, 10, 20):
        reply = panel.request("rows", run=run, offset=offset, limit=10)
        assert reply["ok"], reply
        data = reply["data"]
        assert data["run"] == run and data["offset"] == offset and data["row_count"] == 25
        assert data["columns"] == ["amount", "region"] and data["truncated"] is False
        pages += data["rows"]
    assert [r[0] for r in pages] == list(range(25))
    assert pages[:10] == done["rows"]
    assert panel.request("rows", run=run, offset=25)["data"]["rows"] == []
    assert len(panel.request("rows", run=run)["data"]["rows"]) == 25  # default limit 100
    assert len(panel.request("rows", run=run, limit=10**6)["data"]["rows"]) == 25  # capped, not refused


def test_rows_requests_that_cannot_be_answered(sales, panel, tmp_path):
    unknown = panel.request("rows", run="nope")
    assert unknown["ok"] is False and unknown["error"]["kind"] == "UsageError"
    assert "no run 'nope'" in unknown["error"]["message"] and unknown["error"]["hint"]
    run = ask(panel, "Every sale?", model=script(tmp_path, sql_block("SELECT amount FROM sales"), "FINAL"))
    panel.wait_done(run)
    for bad in ({"offset": -1}, {"limit": 0}, {"limit": "ten"}, {"offset": True}):
        reply = panel.request("rows", run=run, **bad)
        assert reply["ok"] is False and reply["error"]["message"].startswith("rows: "), reply
    failed = ask(panel, "Nothing?", model=script(tmp_path, "I cannot write that.", name="none.json"))
    done = panel.wait_done(failed)
    assert done["status"] != "success" and done["chart"] is None and done["sql_pretty"] is None
    reply = panel.request("rows", run=failed)
    assert reply["ok"] is False and "no result rows" in reply["error"]["message"]


def test_hello_says_the_kernel_has_results(hello):
    assert "results" in hello[1]["data"]["features"]
