"""The correction of an answer the checks doubt (``AgentSettings.correct_findings``,
``Agent._correct``): the model is shown the answer checks' findings against the kept query
and writes one correction, run read-only; it is the answer only where it found something
and the checks find strictly less against it.  Asked through the real agent on a small
SQLite database, with a scripted model whose drafts agree on the first answer."""

from __future__ import annotations

import pytest

from sqlnb.agent.models import ModelClient, ScriptedChatModel
from sqlnb.agent.repairs import REWRITE_NAMES
from sqlnb.agent.runner import Agent
from sqlnb.agent.settings import AgentSettings
from sqlnb.bridge.runs import protocol_event
from sqlnb.labels import correcting_label, progress_line
from tests.doubles import readonly_sqlite
from tests.test_agent import ask_with
from tests.test_agent import sql as block
from tests.test_checks import CASES, SHOP

EACH = "How many orders has each customer placed? Most first."
FIRST = "SELECT customer_id, COUNT(*) AS n FROM orders GROUP BY customer_id ORDER BY n DESC LIMIT 1"
FIXED = "SELECT customer_id, COUNT(*) AS n FROM orders GROUP BY customer_id ORDER BY n DESC"
LIMIT_FINDING = 'the question asks for "each customer", the query keeps only the first 1 row'


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    conn = readonly_sqlite(tmp_path_factory.mktemp("correction"), SHOP)
    yield conn
    conn.close()


def ask(
    shop, *corrections: str, first: str = FIRST, question: str = EACH, agent: Agent | None = None, **settings
):
    """``question`` asked with a model whose reply and three drafts write ``first`` (so they
    agree), and whose corrections are ``corrections``; the answer, the model, the events."""
    model = ScriptedChatModel(
        replies=[block(first)], drafts=[block(first)] * 3, corrections=list(corrections)
    )
    settings.setdefault("disabled_rewrites", frozenset(REWRITE_NAMES))
    settings.setdefault("explain", False)
    run = ask_with(
        model, shop, question, agent=agent or Agent(memory=False), settings=AgentSettings(**settings)
    )
    return run.result, run.model, run.events


def test_a_correction_that_answers_the_findings_is_the_answer(shop):
    agent = Agent(memory=False)
    result, model, events = ask(shop, block(FIXED), agent=agent)
    assert result.status == "success" and result.sql == FIXED
    assert result.stop_reason == "executed"
    first, corrected = result.attempts
    assert first["sql"] == FIRST and first["checks"] == {"limit_not_asked": LIMIT_FINDING}
    assert corrected["corrects"] == {"limit_not_asked": LIMIT_FINDING} and corrected["checks"] == {}
    assert result.df.shape == (3, 2)  # every customer with an order, not the first one
    # rated low (one query, no drafts agree with it), and says why
    assert result.confidence["level"] == "low"
    assert any(r.startswith("the model corrected the first answer") for r in result.confidence["reasons"])
    # the model was shown the findings, in the request after the first result
    (_, request) = model.correct_prompts[-1][-1]
    assert "Checks of the last query against the question found:" in request
    assert f"- {LIMIT_FINDING}. Remove the LIMIT: the question asks for every group." in request
    # the doubted query as plain indented text, not a block a small model copies
    assert f"\n    {FIRST}\n" in request and f"```sql\n{FIRST}" not in request
    assert "FINAL" not in request.split("found:")[1]
    # the conversation holds one turn for the question, answered with the correction
    (turn,) = agent.history("shop")
    assert turn["sql"] == FIXED and turn["status"] == "success"
    # the front doors see the step
    (said,) = [e for e in events if e["type"] == "correcting"]
    assert said["findings"] == {"limit_not_asked": LIMIT_FINDING}
    assert len(model.prompts) == 1 and len(model.correct_prompts) == 1


@pytest.mark.parametrize(
    "reply",
    [
        # a new finding (a filter on a value the question does not name): not better
        block(FIXED.replace("FROM orders", "FROM orders WHERE status = 'new'")),
        block("SELECT nothing_here FROM orders"),  # fails
        block("SELECT customer_id, COUNT(*) FROM orders WHERE status = 'gone' GROUP BY customer_id"),  # empty
        "FINAL",  # keeps the answer
        "CLARIFY: which customers?",  # not a question for the user now
        block(FIRST),  # the same query again
    ],
    ids=["new_finding", "fails", "empty", "final", "clarify", "same"],
)
def test_a_correction_that_does_not_answer_the_findings_leaves_the_answer(shop, reply):
    agent = Agent(memory=False)
    result, model, _ = ask(shop, reply, agent=agent)
    assert result.status == "success" and result.sql == FIRST and result.stop_reason == "voted"
    assert result.attempts[0]["checks"] == {"limit_not_asked": LIMIT_FINDING}
    assert result.confidence["level"] == "low" and LIMIT_FINDING in result.confidence["reasons"]
    assert not any(a.get("corrects") for a in result.attempts)
    assert len(model.correct_prompts) == 1 and len(model.prompts) == 1  # nothing after
    (turn,) = agent.history("shop")
    assert turn["sql"] == FIRST and turn["status"] == "success"
    # the conversation goes on from the answer: a follow-up sees it
    follow, follow_model, _ = ask(shop, question="And only the paid orders?", first=FIXED + "", agent=agent)
    assert follow.status == "success" and FIRST in follow_model.prompts[0][-1][1]
    assert [t["question"] for t in agent.history("shop")] == [EACH, "And only the paid orders?"]


def test_a_failing_model_call_leaves_the_answer(shop):
    result, _, _ = ask(shop)  # no reply left for the correction: the call fails
    assert result.status == "success" and result.sql == FIRST and result.stop_reason == "voted"
    assert result.model_error is None and len(result.attempts) == 1


def test_no_correction_when_it_is_off_the_answer_is_not_doubted_or_the_finding_asks_back(shop):
    # off
    off, model, events = ask(shop, block(FIXED), correct_findings=False)
    assert (
        off.sql == FIRST and not model.correct_prompts and not any(e["type"] == "correcting" for e in events)
    )
    # nothing found against the answer
    fine, model, _ = ask(shop, block(FIRST), first=FIXED)
    assert fine.sql == FIXED and fine.confidence["level"] == "high" and not model.correct_prompts
    # a finding that is a question for the user: asked back, no correction
    vague = CASES["criterion_not_named"]
    asked, model, _ = ask(shop, block(FIXED), first=vague.draft, question=vague.question)
    assert asked.status == "needs_clarification" and asked.sql == vague.draft and not model.correct_prompts
    # one reply allowed: none is left for a correction
    capped = Agent(memory=False).ask(
        EACH,
        shop,
        connection="shop",
        model=ModelClient(
            ScriptedChatModel(replies=[block(FIRST)], drafts=[block(FIRST)] * 3, corrections=[block(FIXED)])
        ),
        max_iterations=1,
        settings=AgentSettings(disabled_rewrites=frozenset(REWRITE_NAMES), explain=False),
    )
    assert capped.sql == FIRST and capped.iterations == 1
    # a scripted model without corrections in its script is never asked for one
    plain = ScriptedChatModel(replies=[block(FIRST)], drafts=[block(FIRST)] * 3)
    assert not ModelClient(plain).corrects


def test_the_correction_is_said_in_words():
    event = {"type": "correcting", "findings": {"limit_not_asked": LIMIT_FINDING}}
    line = correcting_label(event)
    assert line == f"The checks doubt the answer: {LIMIT_FINDING}. Asking the model for a correction…"
    assert progress_line(event) == line
    assert protocol_event(event) == {"type": "phase", "phase": "correcting", "label": line}


def test_a_script_file_gives_corrections(tmp_path):
    from sqlnb.agent.models.scripted import ScriptedChatModel as Model

    path = tmp_path / "script.json"
    path.write_text('{"replies": ["FINAL"], "corrections": ["```sql\\nSELECT 1\\n```"]}')
    model = Model.from_file(path)
    assert model.corrections == ["```sql\nSELECT 1\n```"] and model.corrects
    path.write_text('{"replies": ["FINAL"], "corrections": "x"}')
    with pytest.raises(Exception, match='"corrections" must be a list of reply strings, not a JSON str'):
        Model.from_file(path)
    path.write_text('{"replies": ["FINAL"], "corrections": [1]}')
    with pytest.raises(Exception, match="correction 1 is a JSON int"):
        Model.from_file(path)


def test_a_stop_while_correcting_stops_the_turn(shop):
    from sqlnb.agent.stop import StopToken

    stop = StopToken()
    model = ScriptedChatModel(replies=[block(FIRST)], drafts=[block(FIRST)] * 3, corrections=[block(FIXED)])

    def on_event(event):
        if event["type"] == "correcting":
            stop.stop()  # the Stop button, as the correction starts

    agent = Agent(memory=False)
    result = agent.ask(
        EACH,
        shop,
        connection="shop",
        model=ModelClient(model),
        settings=AgentSettings(disabled_rewrites=frozenset(REWRITE_NAMES), explain=False),
        on_event=on_event,
        stop=stop,
    )
    assert result.status == "stopped" and result.stop_reason == "stopped" and not model.correct_prompts
    # the conversation goes on
    again = agent.ask(
        EACH,
        shop,
        connection="shop",
        model=ModelClient(ScriptedChatModel(replies=[block(FIXED)], drafts=[block(FIXED)] * 3)),
        settings=AgentSettings(disabled_rewrites=frozenset(REWRITE_NAMES), explain=False),
    )
    assert again.status == "success" and again.sql == FIXED


@pytest.mark.parametrize(
    "reply",
    [
        f"CLARIFY: the query keeps one row.\n\nAttempt 2:\n    {FIXED}\nThe query ran: 3 rows.",
        "Attempt 2:\n    SELECT customer_id, COUNT(*) AS n\n    FROM orders\n"
        "    GROUP BY customer_id\n    ORDER BY n DESC\n",
        f"CLARIFY: which rows?\n```sql\n{FIXED}\n```",
        f"    {FIXED}",
    ],
    ids=["clarify_then_listed", "listed", "clarify_then_block", "indented"],
)
def test_a_correction_is_read_in_the_form_the_attempts_were_shown(shop, reply):
    result, _, _ = ask(shop, reply)
    assert result.sql is not None and "LIMIT" not in result.sql and result.attempts[-1]["corrects"]
    assert result.df.shape == (3, 2)


def test_correction_sql_reads_a_block_a_listed_attempt_or_nothing():
    from sqlnb.agent.protocol import correction_sql

    assert correction_sql("CLARIFY: What is the title?") is None
    assert correction_sql("Attempt 2:\n    the query is fine\n") is None  # not a query
    assert correction_sql("```sql\nSELECT 1;\n```") == "SELECT 1"
    listed = (
        "Attempt 1:\n    SELECT 1\nThe query ran.\n\nAttempt 2:\n    SELECT 2\n    FROM t\nThe query ran."
    )
    assert correction_sql(listed) == "SELECT 2\nFROM t"


def test_rows_that_repeat_are_a_doubt_the_correction_answers(shop):
    listing = (
        "SELECT l.product FROM order_lines AS l JOIN orders AS o ON o.id = l.order_id "
        "WHERE o.ordered LIKE '2024%'"
    )
    once = listing.replace("SELECT l.product", "SELECT DISTINCT l.product")
    result, model, events = ask(
        shop, block(once), first=listing, question="Which products were ordered in 2024?"
    )
    assert result.sql == once and sorted(result.df["product"]) == ["Jam", "Tea"]
    first, corrected = result.attempts
    assert first["checks"] == {} and first["repeated_rows"]
    assert list(corrected["corrects"]) == ["repeated_rows"]
    (_, request) = model.correct_prompts[-1][-1]
    assert "only 2 of the 4 rows are different" in request and "SELECT DISTINCT, or GROUP BY it" in request
    (said,) = [e for e in events if e["type"] == "correcting"]
    assert list(said["findings"]) == ["repeated_rows"]


def test_a_finding_of_a_check_not_corrected_asks_for_no_correction(shop):
    # values_left_out's findings are shown only beside another check's (Check.corrected)
    from sqlnb.agent.checks import CORRECTED_CHECKS, check_named

    assert not check_named("values_left_out").corrected and "values_left_out" not in CORRECTED_CHECKS
    case = CASES["values_left_out"]
    result, model, events = ask(shop, block(FIXED), first=case.draft, question=case.question)
    # words_not_read finds the same word unread: a finding that only keeps the answer from
    # high is never a reason to correct it either
    assert not check_named("words_not_read").corrected and check_named("words_not_read").ceiling == "medium"
    assert (
        list(result.attempts[0]["checks"]) == ["values_left_out", "words_not_read"]
        and result.sql == case.draft
    )
    assert not model.correct_prompts and not any(e["type"] == "correcting" for e in events)
