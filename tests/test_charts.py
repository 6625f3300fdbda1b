"""Charts of results (sqlnb.charts): which shapes get which Vega-Lite chart, which get none
and why, the data inlined JSON-safe, ``sqlnb.chart(df)``, and the cell "Insert chart"
writes."""

from __future__ import annotations

import datetime as dt
import decimal
import json

import pandas as pd
import pytest

import sqlnb
from sqlnb import errors
from sqlnb.charts import MAX_CATEGORIES, MAX_ROWS, MIME, Chart, chart_code, chart_spec, why_no_chart


def enc(spec, channel):
    return spec["encoding"][channel]


def test_a_category_and_a_measure_make_bars_sorted_by_the_measure():
    df = pd.DataFrame({"region": ["North", "South", "East"], "total": [120.5, 80.25, 300.0]})
    spec = chart_spec(df)
    assert spec["$schema"].endswith("/vega-lite/v5.json")
    assert spec["mark"]["type"] == "bar"
    assert enc(spec, "y") == {"field": "region", "type": "nominal", "sort": "-x", "title": "region"}
    assert enc(spec, "x") == {"field": "total", "type": "quantitative", "title": "total"}
    assert spec["data"]["values"] == [
        {"region": "North", "total": 120.5},
        {"region": "South", "total": 80.25},
        {"region": "East", "total": 300.0},
    ]
    json.dumps(spec, allow_nan=False)


def test_ids_are_no_measure_and_a_second_measure_is_not_drawn():
    df = pd.DataFrame(
        {
            "customer_id": [1, 2, 3],
            "name": ["Ada", "Grace", "Alan"],
            "orders": [3, 1, 2],
            "spent": [9.5, 1.0, 4.0],
        }
    )
    spec = chart_spec(df)
    assert spec["mark"]["type"] == "bar" and enc(spec, "y")["field"] == "name"
    assert enc(spec, "x")["field"] == "orders"
    assert spec["data"]["values"][0] == {"name": "Ada", "orders": 3}  # only the columns drawn


def test_a_repeated_category_with_a_second_one_is_coloured_by_it():
    df = pd.DataFrame(
        {"region": ["N", "N", "S", "S"], "channel": ["web", "shop", "web", "shop"], "n": [1, 2, 3, 4]}
    )
    spec = chart_spec(df)
    assert spec["mark"]["type"] == "bar"
    assert enc(spec, "y")["field"] == "region" and enc(spec, "color")["field"] == "channel"


def test_a_time_and_a_measure_make_a_line():
    df = pd.DataFrame(
        {"month": pd.to_datetime(["2024-01-01", "2024-02-01", "2024-03-01"]), "revenue": [10.0, 12.5, 9.0]}
    )
    spec = chart_spec(df)
    assert spec["mark"]["type"] == "line"
    assert enc(spec, "x") == {"field": "month", "title": "month", "type": "temporal"}
    assert enc(spec, "y")["field"] == "revenue"
    assert spec["data"]["values"][0] == {"month": "2024-01-01T00:00:00", "revenue": 10.0}


def test_several_measures_over_time_are_folded_into_one_line_each():
    df = pd.DataFrame(
        {
            "day": [dt.date(2024, 1, 1), dt.date(2024, 1, 2), dt.date(2024, 1, 3)],
            "orders": [3, 4, 5],
            "revenue": [decimal.Decimal("10.50"), decimal.Decimal("11.25"), None],
        }
    )
    spec = chart_spec(df)
    assert spec["mark"]["type"] == "line"
    assert spec["transform"] == [{"fold": ["orders", "revenue"], "as": ["measure", "value"]}]
    assert enc(spec, "y")["field"] == "value" and enc(spec, "color")["field"] == "measure"
    assert spec["data"]["values"][0] == {"day": "2024-01-01", "orders": 3, "revenue": 10.5}
    assert spec["data"]["values"][2]["revenue"] is None  # NULL stays null, not NaN
    json.dumps(spec, allow_nan=False)


def test_months_as_text_and_years_as_numbers_are_times():
    text = pd.DataFrame({"month": ["2024-01", "2024-02", "2024-03"], "n": [1, 2, 3]})
    assert enc(chart_spec(text), "x")["type"] == "temporal"
    years = pd.DataFrame({"order_year": [2022, 2023, 2024], "n": [5, 7, 6]})
    spec = chart_spec(years)
    assert spec["mark"]["type"] == "line" and enc(spec, "x")["type"] == "ordinal"
    assert enc(spec, "y")["field"] == "n"


def test_a_line_per_category_over_time():
    df = pd.DataFrame(
        {
            "month": ["2024-01", "2024-01", "2024-02", "2024-02"],
            "channel": ["web", "shop", "web", "shop"],
            "revenue": [1.0, 2.0, 3.0, 4.0],
        }
    )
    spec = chart_spec(df)
    assert spec["mark"]["type"] == "line" and enc(spec, "color")["field"] == "channel"


@pytest.mark.parametrize(
    "df, why",
    [
        (pd.DataFrame({"region": ["N"], "total": [1.0]}), "single row"),
        (pd.DataFrame({"name": ["a", "b"], "city": ["x", "y"]}), "no numeric column"),
        (pd.DataFrame({"customer_id": [1, 2], "name": ["a", "b"]}), "ids or keys"),
        (pd.DataFrame({"id": [1, 2], "OrderId": [3, 4], "key": [5, 6]}), "ids or keys"),
        (pd.DataFrame({"n": [1, 2, 3]}), "two columns"),
        (pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]}), "no category or time"),
        (pd.DataFrame({"name": ["a", "a", "b"], "n": [1, 2, 3]}), "repeat"),
        (
            pd.DataFrame(
                {"name": [f"n{i}" for i in range(MAX_CATEGORIES + 1)], "n": range(MAX_CATEGORIES + 1)}
            ),
            "more bars",
        ),
        (pd.DataFrame({"day": ["2024-01-01", "2024-01-01"], "n": [1, 2]}), "one value"),
    ],
)
def test_shapes_without_a_chart_say_why(df, why):
    assert chart_spec(df) is None
    assert why in why_no_chart(df)
    with pytest.raises(errors.UsageError, match="does not suit a chart") as info:
        sqlnb.chart(df)
    assert why in info.value.message and info.value.hint


def test_a_name_that_merely_ends_like_id_is_a_measure():
    df = pd.DataFrame({"status": ["paid", "open"], "paid": [3, 4]})
    assert enc(chart_spec(df), "x")["field"] == "paid"


def test_dotted_names_are_escaped_for_vega_lite():
    df = pd.DataFrame({"c.name": ["a", "b"], "sum(o.amount)": [1, 2]})
    spec = chart_spec(df)
    assert enc(spec, "y")["field"] == "c\\.name" and enc(spec, "y")["title"] == "c.name"
    assert enc(spec, "x")["field"] == "sum(o\\.amount)"
    assert spec["data"]["values"][0] == {"c.name": "a", "sum(o.amount)": 1}


def test_the_data_is_capped():
    n = MAX_ROWS + 10
    df = pd.DataFrame({"t": pd.date_range("2020-01-01", periods=n, freq="h"), "v": range(n)})
    assert len(chart_spec(df)["data"]["values"]) == MAX_ROWS


def test_chart_draws_itself_in_a_notebook():
    df = pd.DataFrame({"region": ["N", "S"], "total": [1, 2]})
    chart = sqlnb.chart(df)
    assert isinstance(chart, Chart) and chart.kind == "bar"
    bundle = chart._repr_mimebundle_()
    assert bundle[MIME] == chart_spec(df)
    assert bundle["text/plain"] == "<sqlnb chart: bar of region by total, 2 rows>"


def test_chart_takes_an_answer_and_refuses_what_is_no_table():
    class Answer:  # what sqlnb.ask returns: the result as .df
        df = pd.DataFrame({"region": ["N", "S"], "total": [1, 2]})

    assert sqlnb.chart(Answer()).kind == "bar"
    with pytest.raises(errors.UsageError, match="pandas DataFrame"):
        sqlnb.chart([1, 2, 3])


CELL = "%%sql --conn sample\n-- sqlnb ask: Revenue per region? | model: m | attempts: 1\nSELECT\n  region\nFROM t\n"


def test_chart_code_keeps_the_cell_and_adds_its_dataframe_and_chart():
    code = chart_code(CELL)
    assert code == CELL.replace("%%sql --conn sample\n", "%%sql --conn sample -o df --chart\n")
    assert chart_code(code) == code  # once is enough
    assert chart_code("%%sql -o top\nSELECT 1\n", "x") == "%%sql -o top --chart\nSELECT 1\n"
    with pytest.raises(errors.UsageError):
        chart_code("SELECT 1")
    with pytest.raises(errors.UsageError):
        chart_code(CELL, "not a name")


# ---------------------------------------------------------------------------------------
# %%sql --chart through a real InteractiveShell
# ---------------------------------------------------------------------------------------


def run_cell(shell, cell: str):
    from IPython.utils.capture import capture_output

    with capture_output() as cap:
        result = shell.run_cell(cell)
    return result.success, cap.stdout + cap.stderr, cap.outputs


SALES = (
    "CREATE TABLE sales (region VARCHAR, day DATE, amount DECIMAL(10, 2));"
    "INSERT INTO sales VALUES ('North', '2024-01-01', 10.5), ('North', '2024-01-02', 4),"
    " ('South', '2024-01-01', 7.25), ('East', '2024-01-03', 1)"
)


@pytest.fixture(params=["duckdb", "sqlite"])
def sales(request, shell, tmp_path):
    url = f"{request.param}:///{tmp_path / ('s.' + request.param)}"
    ok, out, _ = run_cell(shell, f"%sqlnb connect {url} --name s")
    assert ok, out
    for statement in SALES.split(";"):
        ok, out, _ = run_cell(shell, f"%%sql\n{statement}")
        assert ok, out
    return shell


def test_sql_chart_shows_the_chart_and_the_table(sales):
    ok, out, outputs = run_cell(
        sales, "%%sql --chart\nSELECT region, sum(amount) AS total FROM sales GROUP BY region ORDER BY region"
    )
    assert ok, out
    charts = [o.data for o in outputs if MIME in o.data]
    assert len(charts) == 1
    spec = charts[0][MIME]
    assert spec["mark"]["type"] == "bar" and enc(spec, "y")["field"] == "region"
    assert sorted((r["region"], r["total"]) for r in spec["data"]["values"]) == [
        ("East", 1.0),
        ("North", 14.5),
        ("South", 7.25),
    ]
    assert charts[0]["text/plain"].startswith("<sqlnb chart: bar")
    assert any("North" in o.data.get("text/html", "") for o in outputs)  # the table as usual


def test_sql_chart_over_time_with_the_output_variable(sales):
    ok, out, outputs = run_cell(
        sales, "%%sql -o daily --chart\nSELECT day, sum(amount) AS total FROM sales GROUP BY day ORDER BY day"
    )
    assert ok, out
    spec = next(o.data[MIME] for o in outputs if MIME in o.data)
    assert spec["mark"]["type"] == "line" and enc(spec, "x")["field"] == "day"
    assert len(sales.user_ns["daily"]) == 3
    assert sqlnb.chart(sales.user_ns["daily"]).spec == spec


def test_sql_chart_says_why_a_result_gets_none(sales):
    ok, out, outputs = run_cell(sales, "%%sql --chart\nSELECT count(*) AS n FROM sales")
    assert ok, out
    assert not any(MIME in o.data for o in outputs)
    assert "No chart: a single row" in out
    assert any("text/html" in o.data for o in outputs)  # the result still shows


def test_sql_line_magic_charts_too(sales):
    from IPython.utils.capture import capture_output

    with capture_output() as cap:
        df = sales.run_line_magic("sql", "--chart SELECT region, amount FROM sales WHERE day = '2024-01-01'")
    assert list(df.columns) == ["region", "amount"]
    assert any(MIME in o.data for o in cap.outputs)


def test_the_chart_cell_runs_on_its_own(sales):
    cell = chart_code(
        "%%sql --conn s\n-- sqlnb ask: Sales per day? | model: m | attempts: 1\n"
        "SELECT day, sum(amount) AS total FROM sales GROUP BY day\n"
    )
    ok, out, outputs = run_cell(sales, cell)
    assert ok, out
    assert any(MIME in o.data for o in outputs) and len(sales.user_ns["df"]) == 3
