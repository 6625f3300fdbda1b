"""This session's questions added up: SessionStats, prices, %sqlnb stats, the panel's footer
(the done event's stats), with scripted models against a real engine."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from IPython.utils.capture import capture_output

from sqlnb import labels
from sqlnb.agent.runner import Agent
from sqlnb.agent.stats import SessionStats, price_of
from tests.doubles import script, sql_block

COUNT = "SELECT count(*) AS n FROM customers"


def answer(
    status="success", model="anthropic:claude-sonnet-4-5", tokens=(1000, 200), attempts=(0.5,), seconds=2.0
):
    return SimpleNamespace(
        status=status,
        model=model,
        usage={"input_tokens": tokens[0], "output_tokens": tokens[1], "calls": 2, "seconds": seconds},
        attempts=[{"elapsed": e} for e in attempts],
        elapsed=seconds + sum(attempts),
    )


def test_prices_of_hosted_local_and_unknown_models():
    assert price_of("anthropic:claude-sonnet-4-5") == (3.0, 15.0)
    assert price_of("anthropic:claude-sonnet-4-5-20250929") == (3.0, 15.0)  # a dated version
    assert price_of("openai:gpt-4o-mini") == (0.15, 0.6)  # not gpt-4o's
    assert price_of("llamacpp:qwen2.5-coder-1.5b") == (0.0, 0.0)
    assert price_of("scripted:replies.json") == (0.0, 0.0)
    assert price_of("mistralai:mistral-large") is None
    assert price_of(None) is None


def test_questions_add_up_with_the_cost_of_priced_models_only():
    stats = SessionStats()
    stats.add(answer())
    stats.add(answer(status="needs_clarification", attempts=(0.25, 0.25)))
    stats.add(answer(status="failed", model="mistralai:mistral-large", tokens=(5000, 5000)))
    d = stats.to_dict()
    assert (d["questions"], d["answered"], d["asked_back"], d["failed"], d["stopped"]) == (3, 1, 1, 1, 0)
    assert d["attempts"] == 4 and d["model_calls"] == 6
    assert d["model_seconds"] == 6.0 and d["database_seconds"] == 1.5
    assert (d["input_tokens"], d["output_tokens"]) == (7000, 5400)
    # two sonnet questions: 2 × (1000 × 3 + 200 × 15) / 1e6
    assert d["cost"] == pytest.approx(0.012)
    assert d["unpriced"] == ["mistralai:mistral-large"]
    line = labels.stats_line(d)
    assert line.startswith("3 questions · 1 answered (33%) · 1.3 attempts each · model 6.00 s")
    assert line.endswith("12.4k tokens · $0.01 + unknown")
    text = labels.stats_text(d)
    assert "Cost:" in text and "not counted: mistralai:mistral-large (price unknown)" in text
    stats.reset()
    assert stats.to_dict()["questions"] == 0
    assert labels.stats_line(stats.to_dict()) == "No questions yet in this session"


def test_a_local_model_costs_nothing():
    stats = SessionStats()
    stats.add(answer(model="llamacpp:qwen2.5-coder-1.5b"))
    assert labels.stats_line(stats.to_dict()).endswith("no cost (local model)")


@pytest.mark.engines(["duckdb"])
def test_the_agent_counts_each_question_and_sqlnb_stats_prints_them(shell, seeded, tmp_path):
    with capture_output() as cap:
        assert shell.run_cell("%sqlnb stats").success
    assert "No question asked in this session yet" in cap.stdout
    model = script(tmp_path, sql_block("SELECT count(*) FROM customer"), sql_block(COUNT), "FINAL")
    with capture_output() as cap:
        assert shell.run_cell(f"%sqlnb connect {seeded.url()} --name shop").success
        res = shell.run_cell(f"%%ask --model {model} --no-insert\nHow many customers are there?")
    assert res.success and res.result.status == "success", cap.stdout + cap.stderr
    with capture_output() as cap:
        assert shell.run_cell("%sqlnb stats").success
    out = cap.stdout
    assert "Questions:   1" in out and "Answered:    1 (100%)" in out
    assert "Attempts:    2 (2.0 per question)" in out
    assert "Model:       3 calls" in out
    assert "Cost:        $0.0000 (local models cost nothing per token)" in out
    with capture_output() as cap:
        assert shell.run_cell("%sqlnb stats --reset").success
        assert shell.run_cell("%sqlnb stats").success
    assert "No questions yet in this session." in cap.stdout


def test_a_bridge_run_reports_the_session_in_its_done_event(tmp_path):
    from sqlnb.bridge.runs import AskRun
    from sqlnb.session import ConnectionManager

    manager = ConnectionManager()
    manager.connect(f"duckdb:///{tmp_path / 'shop.duckdb'}", "shop")
    manager.get("shop").execute("CREATE TABLE customers AS SELECT range AS id FROM range(3)")
    events: list[dict] = []
    agent = Agent(memory=False)
    for i in range(2):
        model = script(tmp_path, sql_block(COUNT), "FINAL", name=f"run{i}.json")
        run = AskRun(
            agent=agent,
            manager=manager,
            question="How many customers?",
            connection="shop",
            model=model,
            on_event=events.append,
        )
        run.claim()
        run.start()
        assert run.wait(30)
    done = [e for e in events if e["type"] == "done"]
    assert [d["stats"]["questions"] for d in done] == [1, 2]
    assert done[-1]["stats_label"].startswith("2 questions · 2 answered (100%)")
    manager.close_all()
