"""The agent's front doors: ``%%ask`` through a real InteractiveShell, ``sqlnb ask`` through
a subprocess, and ``sqlnb.ask()``; always with a scripted model against a real engine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from html import escape as html_escape
from types import SimpleNamespace

import pytest
from IPython.utils.capture import capture_output

import sqlnb
from sqlnb import errors
from sqlnb.kernel import kernel_session
from sqlnb.sql.format import pretty
from tests.doubles import script, sql_block
from tests.test_agent import ANSWER_KEYS, ATTEMPT_KEYS

COUNT = "SELECT count(*) AS n FROM customers"
PAID = "SELECT id, amount FROM orders WHERE status = 'paid' ORDER BY id"


def run(shell, cell: str):
    with capture_output() as cap:
        result = shell.run_cell(cell)
    return result, cap.stdout + cap.stderr, cap.outputs


def html(shell, value) -> str:
    """What the notebook shows for a cell's value (its execute_result)."""
    return shell.display_formatter.format(value)[0]["text/html"]


# ---------------------------------------------------------------------------------------
# %%ask
# ---------------------------------------------------------------------------------------


@pytest.mark.engines(["sqlite", "duckdb", "postgresql", "mysql"])
def test_ask_inserts_a_runnable_cell(shell, seeded, tmp_path):
    model = script(tmp_path, sql_block("SELECT count(*) AS n FROM customer"), sql_block(COUNT), "FINAL")
    res, out, _ = run(shell, f"%sqlnb connect {seeded.url()} --name shop")
    assert res.success, out
    res, out, outputs = run(shell, f"%%ask --model {model}\nHow many customers are there?")
    assert res.success, out
    # live progress: each attempt with its SQL and outcome
    assert "Attempt 1 of at most 5: SELECT count(*) AS n FROM customer" in out
    assert "✗ table_not_found" in out and "✓ 1 row" in out
    result = res.result
    assert result.status == "success" and result.stop_reason == "finalized"
    assert result.sql == COUNT and len(result.attempts) == 2
    assert int(result.df.iloc[0, 0]) == 3
    cell = shell.rl_next_input
    lines = cell.splitlines()
    assert lines[0] == "%%sql --conn shop"
    assert lines[1].startswith("-- sqlnb ask: How many customers are there?")
    assert "model: scripted:" in lines[1] and "attempts: 2" in lines[1]
    assert "\n".join(lines[2:]) == pretty(COUNT, seeded.dialect)  # laid out, the same query
    # the inserted cell runs as it is
    res, out, outputs = run(shell, cell)
    assert res.success, out
    assert "3" in outputs[0].data["text/html"]


@pytest.mark.engines(["sqlite"])
def test_ask_shows_the_final_sql_and_a_preview(shell, seeded, tmp_path):
    model = script(tmp_path, sql_block(PAID), "FINAL")
    run(shell, f"%sqlnb connect {seeded.url()}")
    res, _, _ = run(shell, f"%%ask --model {model}\nWhich orders are paid?")
    shown = html(shell, res.result)
    assert "success" in shown and "SELECT id, amount FROM orders" in shown and "12.5" in shown
    assert "2 rows" in shown


@pytest.mark.engines(["sqlite"])
def test_clarification_shows_questions_and_inserts_nothing(shell, seeded, tmp_path):
    model = script(tmp_path, "CLARIFY:\n- Which year?\n- Gross or net amounts?")
    run(shell, f"%sqlnb connect {seeded.url()}")
    res, _, _ = run(shell, f"%%ask --model {model}\nWhat were the sales?")
    assert res.success
    assert res.result.status == "needs_clarification"
    assert res.result.questions == ["Which year?", "Gross or net amounts?"]
    shown = html(shell, res.result)
    assert "Which year?" in shown and "Gross or net amounts?" in shown
    assert shell.rl_next_input is None


@pytest.mark.engines(["sqlite"])
def test_failed_ask_inserts_nothing_and_says_why(shell, seeded, tmp_path):
    bad = sql_block("SELECT nope FROM customers")
    model = script(
        tmp_path, bad, sql_block("SELECT nope2 FROM customers"), sql_block("SELECT nope3 FROM customers")
    )
    run(shell, f"%sqlnb connect {seeded.url()}")
    res, out, _ = run(shell, f"%%ask --model {model}\nlist them")
    assert res.success  # the cell itself did not fail: the outcome is shown
    assert res.result.status == "failed" and res.result.stop_reason == "consecutive_failures"
    assert "No cell inserted" in out
    assert shell.rl_next_input is None


@pytest.mark.engines(["sqlite"])
def test_options_no_insert_no_review_max_iterations(shell, seeded, tmp_path):
    run(shell, f"%sqlnb connect {seeded.url()}")
    model = script(tmp_path, sql_block(COUNT), "FINAL")
    res, _, _ = run(shell, f"%%ask --model {model} --no-review --no-insert\nhow many customers")
    assert res.result.stop_reason == "executed" and res.result.iterations == 1
    assert shell.rl_next_input is None
    model = script(tmp_path, sql_block("SELECT 1"), sql_block("SELECT 2"), sql_block("SELECT 3"))
    res, _, _ = run(shell, f"%%ask --model {model} --max-iterations 2\nnumbers")
    assert res.result.stop_reason == "max_iterations" and res.result.iterations == 2
    assert res.result.sql == "SELECT 2"


@pytest.mark.engines(["sqlite"])
def test_retry_drafts_from_a_scripted_file_and_config(shell, seeded, tmp_path):
    run(shell, f"%sqlnb connect {seeded.url()}")
    path = tmp_path / "drafting.json"
    bad = sql_block("SELECT nope FROM customers")
    path.write_text(
        json.dumps(
            {
                "replies": [bad, bad, "FINAL"],
                "drafts": [sql_block(COUNT), sql_block("SELECT nope2 FROM customers")],
            }
        )
    )
    shell.run_line_magic("config", "AskMagic.retry_drafts = 2")
    shell.run_line_magic("config", "AskMagic.first_drafts = 0")  # retry drafts only
    res, out, _ = run(shell, f"%%ask --model scripted:{path}\nhow many customers")
    assert res.result.status == "success" and res.result.sql == COUNT, out
    assert "Trying 2 candidate queries; the result most of them agree on is kept…" in out
    assert "Attempt 2 of at most 5 (kept 1 of 2 candidates): SELECT count(*)" in out
    # turned off: the repeated failing query ends the ask
    shell.run_line_magic("config", "AskMagic.retry_drafts = 0")
    again = tmp_path / "drafting-again.json"
    again.write_text(path.read_text())
    res, out, _ = run(shell, f"%%ask --model scripted:{again} --new\nhow many customers")
    assert res.result.stop_reason == "duplicate_sql" and res.result.sql is None


@pytest.mark.engines(["sqlite", "postgresql"])
def test_the_other_readings_of_disagreeing_drafts_are_shown_and_one_can_be_inserted(shell, seeded, tmp_path):
    # the reply and one draft count the customers, another draft counts the paid orders
    other = "SELECT count(*) AS n FROM orders WHERE status = 'paid'"
    path = tmp_path / "disagree.json"
    path.write_text(
        json.dumps({"replies": [sql_block(COUNT)], "drafts": [sql_block(other), sql_block(COUNT)]})
    )
    run(shell, f"%sqlnb connect {seeded.url()} --name shop")
    res, out, _ = run(shell, f"%%ask --model scripted:{path} --new\nHow many customers are there?")
    result = res.result
    assert result.status == "success" and result.sql == COUNT, out
    (alt,) = result.alternatives
    assert alt == {"sql": other, "drafts": 1, "row_count": 1, "columns": ["n"], "rows": [[2]]}
    assert result.to_dict()["alternatives"] == [alt]
    shown = html(shell, result)
    assert "The drafts also gave 1 other result:" in shown and "%ask pick 1" in shown
    assert html_escape(other) in shown
    assert "1. 1 draft, 1 row" in str(result) and "→ n=2" in str(result)
    # picked: its cell is inserted as the answer's was, marked as another reading
    res, out, _ = run(shell, "%ask pick 1")
    assert res.success and "Inserted the other reading 1" in out, out
    lines = shell.rl_next_input.splitlines()
    assert lines[0] == "%%sql --conn shop" and "another reading (1 draft)" in lines[1]
    assert "\n".join(lines[2:]) == pretty(other, seeded.dialect)
    # a number it does not have, or an answer without other readings: said how to
    for bad in ("%ask pick 2", "%ask pick", "%ask pick x"):
        res, out, _ = run(shell, bad)
        assert "1 to 1" in out, (bad, out)
    agreed = tmp_path / "agreed.json"
    agreed.write_text(json.dumps({"replies": [sql_block(COUNT)], "drafts": [sql_block(COUNT)] * 2}))
    res, _, _ = run(
        shell, f"%%ask --model scripted:{agreed} --new --no-insert\nHow many customers are there?"
    )
    assert res.result.alternatives == [] and "sqlnb-alternatives" not in html(shell, res.result)
    res, out, _ = run(shell, "%ask pick 1")
    assert "has no other readings" in out


@pytest.mark.engines(["sqlite"])
def test_the_draft_rewrites_and_the_memory_second_pass_can_be_turned_off_in_config(shell, seeded, tmp_path):
    from sqlnb.agent.repairs import REWRITE_NAMES

    run(shell, f"%sqlnb connect {seeded.url()}")
    names = (
        "names_for_ids",
        "link_joins",
        "named_filters",
        "subset_averages",
        "date_difference",
        "epoch_dates",
        "date_part_as_number",
        "percent_scale",
        "self_join_side",
        "group_by_key",
    )
    assert sorted(REWRITE_NAMES) == sorted(names)
    settings = kernel_session(shell).ask.settings(no_data=False, connection="x")
    assert [settings.rewrite_on(n) for n in names] == [True] * len(names) and settings.memory_when_unsure
    by_id = "SELECT customer_id, COUNT(*) AS n FROM orders GROUP BY customer_id ORDER BY n DESC LIMIT 1"
    question = "Which customer has the most orders, and how many are they?"

    def ask():
        path = tmp_path / f"drafting-{len(list(tmp_path.glob('drafting-*')))}.json"
        path.write_text(json.dumps({"replies": [sql_block(by_id)], "drafts": [sql_block(by_id)]}))
        res, out, _ = run(shell, f"%%ask --model scripted:{path} --new --no-insert\n{question}")
        assert res.result.status == "success", out
        return res.result

    # on (the default): the draft's ids shown as the customers' names
    assert ask().rows() == [["Ada", 2]]
    shell.run_line_magic("config", f"AskMagic.disabled_rewrites = {list(names)!r}")
    shell.run_line_magic("config", "AskMagic.memory_when_unsure = False")
    settings = kernel_session(shell).ask.settings(no_data=False, connection="x")
    assert [settings.rewrite_on(n) for n in names] == [False] * len(names) and not settings.memory_when_unsure
    assert ask().rows() == [[1, 2]]  # off: the id stays
    # a name no rewrite has is refused, naming the ones there are
    shell.run_line_magic("config", "AskMagic.disabled_rewrites = ['names_for_id']")
    with pytest.raises(errors.ConfigurationError, match="names_for_id") as refused:
        kernel_session(shell).ask.settings(no_data=False, connection="x")
    assert all(n in str(refused.value) for n in names)
    # a rewrite sqlnb retired: ignored, with a warning that says so
    shell.run_line_magic("config", "AskMagic.disabled_rewrites = ['missing_as_none', 'link_joins']")
    with pytest.warns(errors.RetiredRuleWarning, match="missing_as_none"):
        settings = kernel_session(shell).ask.settings(no_data=False, connection="x")
    assert settings.disabled_rewrites == frozenset({"link_joins"})
    shell.run_line_magic("config", "AskMagic.disabled_rewrites = []")
    # the answer checks likewise, by name
    shell.run_line_magic("config", "AskMagic.disabled_checks = ['fan_out', 'merged_entities']")
    settings = kernel_session(shell).ask.settings(no_data=False, connection="x")
    assert settings.disabled_checks == frozenset({"fan_out", "merged_entities"})
    shell.run_line_magic("config", "AskMagic.disabled_checks = ['fanout']")
    with pytest.raises(errors.ConfigurationError, match="fanout"):
        kernel_session(shell).ask.settings(no_data=False, connection="x")
    shell.run_line_magic("config", "AskMagic.disabled_checks = []")


@pytest.mark.engines(["sqlite"])
def test_no_data_keeps_rows_from_the_model(shell, seeded, tmp_path):
    run(shell, f"%sqlnb connect {seeded.url()}")
    model = script(tmp_path, sql_block("SELECT name, email FROM customers"), "FINAL")
    res, _, _ = run(shell, f"%%ask --model {model} --no-data\nemails")
    assert res.result.status == "success"
    client = kernel_session(shell).ask.agent.client(model)
    seen = "\n".join(content for prompt in client.model.prompts for _, content in prompt)
    for value in ("ada@example.com", "Grace", "Linus"):
        assert value not in seen
    # the same connection configured as private
    shell.run_line_magic(
        "config", f"AskMagic.private_connections = [{kernel_session(shell).magics.manager.active!r}]"
    )
    model = script(tmp_path, sql_block("SELECT name FROM customers"), "FINAL")
    res, _, _ = run(shell, f"%%ask --model {model}\nnames")
    client = kernel_session(shell).ask.agent.client(model)
    seen = "\n".join(content for prompt in client.model.prompts for _, content in prompt)
    assert "Grace" not in seen and "rows are not shown" in seen


@pytest.mark.engines(["sqlite", "postgresql"])
def test_follow_up_sees_the_earlier_turn(shell, seeded, tmp_path):
    run(shell, f"%sqlnb connect {seeded.url()} --name shop")
    model = script(
        tmp_path,
        sql_block(PAID),
        "FINAL",
        sql_block(PAID.replace("ORDER BY id", "AND amount > 10 ORDER BY id")),
        "FINAL",
    )
    shell.run_line_magic("config", f"AskMagic.model = {model!r}")
    res, _, _ = run(shell, "%%ask\nWhich orders are paid?")
    assert res.result.status == "success"
    res, _, _ = run(shell, "%%ask\nnow only those above 10")
    assert res.result.status == "success"
    client = kernel_session(shell).ask.agent.client(model)
    follow_up_prompt = client.model.prompts[2][-1][1]
    assert "Which orders are paid?" in follow_up_prompt and PAID in follow_up_prompt
    assert list(shell.run_line_magic("ask", "history")["question"]) == [
        "Which orders are paid?",
        "now only those above 10",
    ]
    # %ask --new forgets
    run(shell, "%ask --new")
    model2 = script(tmp_path, sql_block(COUNT), "FINAL")
    res, _, _ = run(shell, f"%%ask --model {model2}\nhow many customers")
    first = kernel_session(shell).ask.agent.client(model2).model.prompts[0][-1][1]
    assert "Which orders are paid?" not in first


def test_ask_errors_are_one_line_and_keep_the_kernel(shell, tmp_path):
    res, out, _ = run(shell, "%%ask --model scripted:/nonexistent.json\nhow many?")
    assert not res.success and "No active connection" in out and "Traceback" not in out
    run(shell, f"%sqlnb connect sqlite:///{tmp_path}/x.db")
    res, out, _ = run(shell, "%%ask\nhow many?")
    # no model: one error line saying how to set one up; the cell does not fail, so a
    # notebook's "Run All" goes on (the demo notebook runs top to bottom without a model)
    assert res.success and res.result is None and res.error_in_exec is None
    assert "no language model is configured" in out
    assert "ANTHROPIC_API_KEY" in out and "--model" in out and "Traceback" not in out
    res, out, _ = run(shell, "%%ask --model scripted:replies.json\n   ")
    assert not res.success and "needs a question" in out
    res, out, _ = run(shell, "%%ask --bogus\nq")
    assert not res.success and "unrecognized arguments" in out
    res, out, _ = run(shell, "%%ask --max-iterations 0 --model x:y\nq")
    assert not res.success and "at least 1" in out
    shell.run_line_magic("config", "AskMagic.rendering = 'bogus'")
    res, out, _ = run(shell, "%%ask --model scripted:replies.json\nq")
    assert not res.success and "AskMagic.rendering must be one of fresh, chat" in out
    res, out, _ = run(shell, "%sql SELECT 41 + 1 AS x")  # the kernel still works
    assert res.success


# ---------------------------------------------------------------------------------------
# sqlnb ask (subprocess)
# ---------------------------------------------------------------------------------------


def cli(*args: str, timeout: float = 120):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("SQLNB_MODEL", "ANTHROPIC_API_KEY", "SQLNB_CONNECTIONS_FILE")
    }
    env["SQLNB_NO_KEYRING"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "sqlnb.cli", *args], capture_output=True, text=True, timeout=timeout, env=env
    )


@pytest.mark.engines(["sqlite", "postgresql"])
def test_cli_ask_json(seeded, tmp_path):
    model = script(tmp_path, sql_block("SELECT amount FROM order"), sql_block(PAID), "**Final**")
    p = cli("ask", "--db", seeded.url(), "--model", model, "--json", "Which", "orders are paid?")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert ANSWER_KEYS.issubset(data), ANSWER_KEYS - set(data)
    assert data["status"] == "success" and data["stop_reason"] == "finalized"
    assert data["sql"] == PAID and data["iterations"] == 3
    assert [set(a) for a in data["attempts"]] == [ATTEMPT_KEYS] * 2
    assert data["attempts"][0]["ok"] is False and data["attempts"][0]["error_kind"] == "syntax"
    assert data["attempts"][1] == {"sql": PAID, "ok": True, "error_kind": None, "error": None, "row_count": 2}
    assert data["columns"] == ["id", "amount"]
    assert [r[0] for r in data["rows"]] == [10, 12] and float(data["rows"][0][1]) == 12.5
    assert data["questions"] == [] and data["usage"]["calls"] == 3


@pytest.mark.engines(["sqlite"])
def test_cli_ask_exit_codes_and_text(seeded, tmp_path):
    p = cli(
        "ask",
        "--db",
        seeded.url(),
        "--model",
        script(tmp_path, sql_block(COUNT), "FINAL"),
        "how many customers",
    )
    assert p.returncode == 0, p.stderr
    assert "SUCCESS" in p.stdout and COUNT in p.stdout and "Attempt 1 of at most 5" in p.stderr
    p = cli(
        "ask", "--db", seeded.url(), "--model", script(tmp_path, "CLARIFY: Which year?"), "--json", "sales"
    )
    assert p.returncode == 3 and json.loads(p.stdout)["questions"] == ["Which year?"]
    p = cli("ask", "--db", seeded.url(), "--model", script(tmp_path, "I don't know."), "--json", "sales")
    assert p.returncode == 1 and json.loads(p.stdout)["stop_reason"] == "no_sql"
    p = cli("ask", "--db", seeded.url(), "how many customers")
    assert p.returncode == 2 and "ANTHROPIC_API_KEY" in p.stderr and "Traceback" not in p.stderr
    p = cli("ask", "--db", seeded.url(), "--model", "nocolon", "q")
    assert p.returncode == 2 and "provider:model" in p.stderr


def drafting_script(tmp_path, name: str) -> str:
    """A failing query, the same again, then FINAL; one draft that answers."""
    bad = sql_block("SELECT nope FROM customers")
    return script(tmp_path, bad, bad, "FINAL", drafts=[sql_block(COUNT)], name=f"{name}.json")


@pytest.mark.engines(["sqlite"])
def test_cli_and_api_retry_drafts(seeded, tmp_path):
    p = cli(
        "ask",
        "--db",
        seeded.url(),
        "--model",
        drafting_script(tmp_path, "a"),
        "--retry-drafts",
        "1",
        "--first-drafts",
        "0",
        "--json",
        "how many customers",
    )
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data["sql"] == COUNT and data["usage"]["calls"] == 4
    assert [a["sql"] for a in data["attempts"]] == ["SELECT nope FROM customers", COUNT]
    p = cli(
        "ask",
        "--db",
        seeded.url(),
        "--model",
        drafting_script(tmp_path, "b"),
        "--retry-drafts",
        "1",
        "--first-drafts",
        "0",
        "how many customers",
    )
    assert "Trying another query in place of one that already failed…" in p.stderr
    assert p.returncode == 0 and f"Attempt 2 of at most 5: {COUNT}" in p.stderr
    assert "2 attempts, 4 model calls" in p.stdout  # the draft call counted too
    p = cli(
        "ask",
        "--db",
        seeded.url(),
        "--model",
        drafting_script(tmp_path, "c"),
        "--retry-drafts",
        "0",
        "--first-drafts",
        "0",
        "--json",
        "how many customers",
    )
    assert p.returncode == 1 and json.loads(p.stdout)["stop_reason"] == "duplicate_sql"
    p = cli(
        "ask", "--db", seeded.url(), "--model", drafting_script(tmp_path, "d"), "--retry-drafts", "-1", "q"
    )
    assert p.returncode == 2 and "--retry-drafts must be 0 or more" in p.stderr
    r = sqlnb.ask(
        "how many customers?", seeded.url(), drafting_script(tmp_path, "e"), retry_drafts=1, first_drafts=0
    )
    assert (r.sql, r.stop_reason, len(r.attempts)) == (COUNT, "finalized", 2)
    r = sqlnb.ask(
        "how many customers?", seeded.url(), drafting_script(tmp_path, "f"), retry_drafts=0, first_drafts=0
    )
    assert r.stop_reason == "duplicate_sql"


@pytest.mark.engines(["sqlite"])
def test_cli_ask_never_writes(fresh, tmp_path):
    before = fresh.fingerprint()
    model = script(
        tmp_path, sql_block("DELETE FROM orders"), sql_block("SELECT count(*) FROM orders"), "FINAL"
    )
    p = cli("ask", "--db", fresh.url(), "--model", model, "--json", "delete the orders")
    data = json.loads(p.stdout)
    assert data["attempts"][0]["error_kind"] == "read_only"
    assert data["status"] == "success" and fresh.fingerprint() == before


def test_cli_model_commands():
    p = cli("model", "list")
    assert p.returncode == 0 and "qwen2.5-coder-1.5b" in p.stdout
    p = cli("model", "download", "no-such-model")
    assert p.returncode == 2 and "qwen2.5-coder-1.5b" in p.stderr


# ---------------------------------------------------------------------------------------
# sqlnb.ask()
# ---------------------------------------------------------------------------------------


@pytest.mark.engines(["sqlite", "duckdb"])
def test_api_with_a_url_and_with_an_adapter(seeded, connect_to, tmp_path, monkeypatch):
    monkeypatch.delenv("SQLNB_MODEL", raising=False)
    r = sqlnb.ask("how many customers?", seeded.url(), script(tmp_path, sql_block(COUNT), "FINAL"))
    assert r.status == "success" and r.sql == COUNT and int(r.df.iloc[0, 0]) == 3
    assert r.to_dict()["rows"] == [[3]]
    conn = connect_to(seeded)
    monkeypatch.setenv("SQLNB_MODEL", script(tmp_path, sql_block(PAID), "FINAL"))
    r = sqlnb.ask("paid orders", conn)
    assert r.status == "success" and list(r.df["id"]) == [10, 12]
    assert not conn.closed  # the caller's connection stays open


@pytest.mark.engines(["sqlite"])
def test_api_in_a_notebook_uses_the_active_connection_and_memory(shell, seeded, tmp_path):
    run(shell, f"%sqlnb connect {seeded.url()} --name shop")
    model = script(tmp_path, sql_block(COUNT), "FINAL")
    r = sqlnb.ask("how many customers?", model=model)
    assert r.connection == "shop" and r.status == "success"
    assert list(shell.run_line_magic("ask", "history")["question"]) == ["how many customers?"]


@pytest.mark.engines(["sqlite"])
def test_an_answer_shows_as_html_where_a_front_door_registered_it(seeded, tmp_path, monkeypatch):
    """The agent renders no HTML (it imports no front door): ``%load_ext sqlnb`` and
    ``sqlnb.ask()`` register the answer's text/html with the shell's display formatter."""
    import IPython
    from IPython.core.formatters import DisplayFormatter

    from sqlnb.display import ask_summary_html, show_answers

    bare = SimpleNamespace(display_formatter=DisplayFormatter())  # no sqlnb in it yet
    r = sqlnb.ask("how many customers?", seeded.url(), script(tmp_path, sql_block(COUNT), "FINAL"))
    assert not hasattr(r, "_repr_html_") and "text/html" not in bare.display_formatter.format(r)[0]
    show_answers(bare)
    show_answers(bare)  # idempotent
    assert bare.display_formatter.format(r)[0]["text/html"] == ask_summary_html(r)
    assert bare.display_formatter.format(r)[0]["text/plain"] == repr(r)
    # sqlnb.ask() registers it in the shell it runs in
    fresh = SimpleNamespace(display_formatter=DisplayFormatter())
    monkeypatch.setattr(IPython, "get_ipython", lambda: fresh)
    r = sqlnb.ask("how many customers?", seeded.url(), script(tmp_path, sql_block(COUNT), "FINAL"))
    shown = fresh.display_formatter.format(r)[0]["text/html"]
    assert "success" in shown and COUNT in shown and shown == ask_summary_html(r)


def test_api_without_a_connection_says_what_to_do(monkeypatch):
    import IPython

    monkeypatch.setattr(IPython, "get_ipython", lambda: None)
    with pytest.raises(errors.NoActiveConnectionError) as info:
        sqlnb.ask("anything")
    assert "connection=" in str(info.value)


def voting_script(tmp_path, name: str) -> str:
    """The model's reply and two drafts of the first answer: the reply and the second draft
    give the same count (written differently), the first draft another result."""
    return script(
        tmp_path,
        sql_block(COUNT),
        drafts=[
            sql_block("SELECT count(*) FROM orders WHERE id = 1"),
            sql_block("SELECT COUNT(id) AS n FROM customers"),
        ],
        name=f"{name}.json",
    )


@pytest.mark.engines(["sqlite"])
def test_first_drafts_and_confidence_through_every_front_door(shell, seeded, tmp_path):
    # CLI --json: the vote, the confidence, the calls (1 reply + 2 drafts, no review call)
    p = cli(
        "ask", "--db", seeded.url(), "--model", voting_script(tmp_path, "a"), "--json", "how many customers"
    )
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data["sql"] == COUNT and data["stop_reason"] == "voted" and data["usage"]["calls"] == 3
    assert data["confidence"]["level"] == "medium"
    assert "2 of 3 drafts gave this result" in data["confidence"]["reasons"]
    p = cli("ask", "--db", seeded.url(), "--model", voting_script(tmp_path, "b"), "how many customers")
    assert p.returncode == 0 and "Medium confidence (2 of 3 drafts gave this result" in p.stdout
    assert "Drafted the answer 3 times (3 different queries)" in p.stderr
    p = cli("ask", "--db", seeded.url(), "--model", voting_script(tmp_path, "c"), "--first-drafts", "-1", "q")
    assert p.returncode == 2 and "--first-drafts must be 0 or more" in p.stderr
    # the API, turned off: the reply alone, then the review call (a script with no reply left)
    r = sqlnb.ask("how many customers?", seeded.url(), voting_script(tmp_path, "d"), first_drafts=0)
    assert (r.sql, r.stop_reason, r.usage["calls"]) == (COUNT, "model_error", 2)  # review failed
    assert r.confidence["level"] == "low"  # not reviewed, one draft
    # %%ask shows the confidence; AskMagic.first_drafts = 1 draws one draft only
    run(shell, f"%sqlnb connect {seeded.url()}")
    shell.run_line_magic("config", "AskMagic.first_drafts = 1")
    res, out, _ = run(shell, f"%%ask --model {voting_script(tmp_path, 'e')}\nhow many customers")
    assert res.result.confidence is not None and res.result.confidence["level"] == "low", out
    shown = "Low confidence — check this answer (1 of 2 drafts gave this result"
    assert shown in html(shell, res.result) and shown in str(res.result)
    assert res.result.usage["calls"] == 2


EXPLAINED = (
    "This lists the paid orders with their amounts. Only orders with status 'paid' count; there are 2."
)


@pytest.mark.engines(["sqlite", "postgresql"])
def test_the_explanation_through_every_front_door(shell, seeded, tmp_path):
    path = tmp_path / "explained.json"
    path.write_text(json.dumps({"replies": [sql_block(PAID), "FINAL"], "explanations": [EXPLAINED]}))
    run(shell, f"%sqlnb connect {seeded.url()} --name shop")
    # %%ask: the explanation printed while it is written, then shown first in the answer
    res, out, _ = run(shell, f"%%ask --model scripted:{path}\nWhich orders are paid?")
    result = res.result
    assert result.explanation == EXPLAINED, out
    assert "Explaining the answer…" in out
    shown = html(shell, result)
    assert f"<p class='sqlnb-explanation'>{html_escape(EXPLAINED)}</p>" in shown
    assert shown.index("sqlnb-explanation") < shown.index("SELECT id, amount")
    assert str(result).splitlines()[1] == EXPLAINED
    # turned off in the notebook's config: no call for it
    path = tmp_path / "unexplained.json"
    path.write_text(json.dumps({"replies": [sql_block(PAID), "FINAL"], "explanations": []}))
    run(shell, "%config AskMagic.explain = False")
    res, out, _ = run(shell, f"%%ask --model scripted:{path} --new\nWhich orders are paid?")
    assert res.result.ok and res.result.explanation is None and "Explaining" not in out
    assert "sqlnb-explanation" not in html(shell, res.result)
    # sqlnb.ask() outside the notebook's config, and sqlnb ask --json / --no-explain
    path = tmp_path / "explained-again.json"
    path.write_text(json.dumps({"replies": [sql_block(PAID), "FINAL"], "explanations": [EXPLAINED]}))
    r = sqlnb.ask("Which orders are paid?", seeded.url(), model=f"scripted:{path}", explain=True)
    assert r.explanation == EXPLAINED
    p = cli("ask", "--db", seeded.url(), "--model", f"scripted:{path}", "--json", "Which orders are paid?")
    data = json.loads(p.stdout)
    assert data["explanation"] == EXPLAINED and data["explained"]["first_try"] is True
    assert data["explained"]["calls"] == 1 and data["usage"]["calls"] == 3
    p = cli(
        "ask", "--db", seeded.url(), "--model", f"scripted:{path}", "--no-explain", "Which orders are paid?"
    )
    assert p.returncode == 0 and EXPLAINED not in p.stdout and "Explaining" not in p.stderr
