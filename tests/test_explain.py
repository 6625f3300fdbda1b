"""An answer's explanation (sqlnb.agent.explain): the facts read off the SQL, the grounding
check in code, the step's one call (two when a sentence is not grounded), and the agent's
answer carrying it on real engines, with a scripted model."""

from __future__ import annotations

import re

import pytest

from sqlnb.agent.explain import Sources, echoes, explain, sentences, sql_facts, ungrounded
from sqlnb.agent.models import ModelClient, ScriptedChatModel
from sqlnb.agent.runner import Agent
from sqlnb.agent.settings import AgentSettings
from tests.doubles import readonly_sqlite

PAID_TOTALS = (
    "SELECT c.name, SUM(o.amount) AS total FROM customers AS c JOIN orders AS o "
    "ON o.customer_id = c.id WHERE o.status = 'paid' GROUP BY c.name ORDER BY total DESC"
)
GROUNDED = (
    "This adds up the amount of the paid orders of each customer name. Only orders with "
    "status 'paid' count, and customers without orders are left out. Ada comes first with "
    "12.50, then Grace with 5.00."
)
SHOP = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id),
                     amount REAL, status TEXT, ordered_on DATE);
INSERT INTO customers VALUES (1, 'Ada'), (2, 'Grace'), (3, 'Linus');
INSERT INTO orders VALUES (10, 1, 12.5, 'paid', '2024-03-01'), (11, 1, 99.99, 'new', '2024-03-02'),
                          (12, 2, 5.0, 'paid', '2024-03-03');
"""


def sources(question: str = "", sql: str = "", columns=(), rows=(), row_count=None) -> Sources:
    return Sources.of(question, sql, list(columns), ["" for _ in columns], [list(r) for r in rows], row_count)


def client(*explanations: str, replies: tuple[str, ...] = ()) -> ModelClient:
    return ModelClient(ScriptedChatModel(replies=list(replies), explanations=list(explanations)))


@pytest.fixture
def shop(tmp_path):
    conn = readonly_sqlite(tmp_path, SHOP)
    yield conn
    conn.close()


# ---- the facts of the SQL ------------------------------------------------------------------
def test_sql_facts_name_the_joins_filters_grouping_nulls_order_and_limit():
    facts = sql_facts(PAID_TOTALS + " LIMIT 5", "sqlite")
    assert facts == [
        "leaves out rows without a matching orders row",
        "only rows where status = 'paid'",
        "one result row per name",
        "SUM(amount) ignores missing (NULL) values",
        "sorted by total, largest first",
        "only the first 5 rows are kept",
    ]


def test_sql_facts_say_when_there_is_no_filter_and_how_counts_count():
    facts = sql_facts(
        "SELECT status, COUNT(*) AS n, COUNT(DISTINCT customer_id) AS buyers, AVG(amount) AS a FROM orders "
        "LEFT JOIN customers ON customers.id = orders.customer_id GROUP BY status HAVING COUNT(*) > 1 "
        "ORDER BY n, a DESC",
        "postgres",
    )
    assert facts == [
        "keeps the orders rows without a matching customers row",
        "no filter: all rows of orders count",
        "one result row per status",
        "only groups where COUNT(*) > 1",
        "COUNT(DISTINCT customer_id), AVG(amount) ignore missing (NULL) values",
        "sorted by n, smallest first; then a, largest first",
    ]


def test_sql_facts_of_a_union_and_of_what_does_not_parse():
    assert sql_facts("SELECT 1 UNION SELECT 2", "duckdb") == [
        "combines two queries with UNION (duplicates removed)"
    ]
    assert sql_facts("SELEC nothing FROM", "sqlite") == []


# ---- grounding --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "sentence",
    [
        "The total is 87,716.23 across 3 rows.",  # rounded to its decimals, thousands separated
        "The total is 87716 in all.",  # rounded to a whole number
        "About 0.09 million was paid.",  # in millions
        "That is 45% of all orders.",  # a share as a percentage
        "Orders of March 2024 count, from the first of the month.",  # a month of a stored date
        "Only orders with status 'paid' count, grouped by customer name.",  # a quoted value of the SQL
        "Of the orders, the Germany customers come first.",  # a name in the result
        "The SUM leaves NULL amounts out, and five rows are shown.",  # SQL words; a number word of the question
    ],
)
def test_grounded_sentences(sentence):
    src = sources(
        "Which five countries paid most?",
        "SELECT country, SUM(amount) AS total, AVG(share) AS s FROM orders WHERE status = 'paid' "
        "AND ordered_on >= '2024-03-01' GROUP BY country",
        ["country", "total", "s"],
        [["Germany", 87716.229, 0.45], ["France", 1.5, 0.2], ["Spain", 1.0, 0.1]],
        3,
    )
    assert ungrounded(sentence, src) == []


@pytest.mark.parametrize(
    "sentence, missing",
    [
        ("The total is 87,717.23 in all.", ["87,717.23"]),  # a number not in the result
        ("Together they make up 62% of the revenue.", ["62%"]),  # a share the model computed
        ("The leader is Italy, ahead of Germany.", ["Italy"]),  # a name that is nowhere
        ("Only 'shipped' orders count.", ["'shipped'"]),  # a value the SQL does not filter on
        ("The figures cover January only.", ["January"]),  # a month no date holds
        ("It ran SELECT country FROM orders for this.", ["SQL code"]),
    ],
)
def test_ungrounded_sentences_name_what_was_not_found(sentence, missing):
    src = sources(
        "Which countries paid most?",
        "SELECT country, SUM(amount) AS total FROM orders WHERE status = 'paid' "
        "AND ordered_on >= '2024-03-01' GROUP BY country",
        ["country", "total"],
        [["Germany", 87716.229], ["France", 1.5]],
        2,
    )
    assert ungrounded(sentence, src) == missing


def test_a_reply_as_sentences_without_markdown_or_labels():
    reply = "Explanation: **This** counts orders.\n\n- It keeps 2.5% of rows. It groups by status!\n1. Done"
    assert sentences(reply) == [
        "This counts orders.",
        "It keeps 2.5% of rows.",
        "It groups by status!",
        "Done",
    ]


# ---- the step ---------------------------------------------------------------------------------
def run(shop, sql: str):
    return shop.execute(sql)


def test_a_grounded_reply_takes_one_call(shop):
    model = client(GROUNDED)
    out = explain(
        model,
        question="Paid totals per customer?",
        sql=PAID_TOTALS,
        dialect="sqlite",
        result=run(shop, PAID_TOTALS),
    )
    assert out is not None and out.first_try and out.calls == 1 and out.dropped == []
    assert out.text == GROUNDED
    assert out.usage["calls"] == 1
    ((system, user),) = [[c for _, c in p] for p in model.model.explain_prompts]
    assert "2 to 4 short sentences" in system
    # the model is shown the question, the SQL, its facts and the rows
    assert "Question: Paid totals per customer?" in user and PAID_TOTALS in user
    assert "- only rows where status = 'paid'" in user
    assert "Result: 2 rows; columns: name (text), total" in user and "Grace | 5.00" in user


def test_an_ungrounded_sentence_is_written_again_once_then_dropped(shop):
    result = run(shop, PAID_TOTALS)
    # the first reply makes up a share; the second fixes it but adds a made-up name
    first = "This adds up the paid orders per customer. Grace holds 31% of the total."
    second = (
        "This adds up the paid orders per customer. The top customer, Ada, spent 12.50. It leaves out Bob."
    )
    model = client(first, second)
    out = explain(
        model, question="Paid totals per customer?", sql=PAID_TOTALS, dialect="sqlite", result=result
    )
    assert out is not None and not out.first_try and out.calls == 2
    assert out.not_found == ["31%"]
    assert out.text == "This adds up the paid orders per customer. The top customer, Ada, spent 12.50."
    assert out.dropped == ["It leaves out Bob."]
    feedback = model.model.explain_prompts[1][-1][1]
    assert feedback.startswith("These are not in the question, the query or the result: 31%.")


def test_no_grounded_sentence_gives_no_explanation(shop):
    model = client("Bob spent 7.77.", "Then Carol spent 8.88.")
    out = explain(
        model, question="Paid totals?", sql=PAID_TOTALS, dialect="sqlite", result=run(shop, PAID_TOTALS)
    )
    assert out is None and model.model.explain_position == 2


def test_a_private_result_is_explained_from_its_shape_only(shop):
    model = client("This adds up the paid orders of each customer name, in 2 rows.", "x")
    out = explain(
        model,
        question="Paid totals per customer?",
        sql=PAID_TOTALS,
        dialect="sqlite",
        result=run(shop, PAID_TOTALS),
        share_data=False,
    )
    assert out is not None and out.first_try
    user = model.model.explain_prompts[0][-1][1]
    assert "Ada" not in user and "12.5" not in user
    assert "The rows are private: do not state any value of the result." in user
    # a value it could not have seen is not grounded
    src = Sources.of("Paid totals per customer?", PAID_TOTALS, ["name", "total"], ["text", "real"], [], 2)
    assert ungrounded("Ada leads, and Grace follows with 5.00.", src) == ["5.00", "Grace"]


# ---- in the agent's answer ---------------------------------------------------------------
def test_the_answer_carries_its_explanation(shop):
    model = ScriptedChatModel(replies=[f"```sql\n{PAID_TOTALS}\n```", "FINAL"], explanations=[GROUNDED])
    agent = Agent(memory=False, settings=AgentSettings(first_drafts=0, retry_drafts=0))
    events = []
    answer = agent.ask("Paid totals per customer?", shop, model=model, on_event=events.append)
    assert answer.ok and answer.explanation == GROUNDED
    assert answer.explained is not None and answer.explained.calls == 1
    kinds = [e["type"] for e in events]
    assert kinds[-2:] == ["explaining", "done"]
    assert answer.usage["calls"] == 3  # the answer's two calls and the explanation's
    data = answer.to_dict()
    assert data["explanation"] == GROUNDED and data["explained"]["first_try"] is True
    assert str(answer).splitlines()[1] == GROUNDED  # under the outcome line, above the SQL


def test_explanations_off_a_script_without_them_and_a_failing_call(shop):
    replies = [f"```sql\n{PAID_TOTALS}\n```", "FINAL"]
    off = Agent(memory=False, settings=AgentSettings(first_drafts=0, retry_drafts=0, explain=False))
    model = ScriptedChatModel(replies=list(replies), explanations=[GROUNDED])
    assert off.ask("Paid totals?", shop, model=model).explanation is None
    assert model.explain_position == 0
    on = Agent(memory=False, settings=AgentSettings(first_drafts=0, retry_drafts=0))
    plain = ScriptedChatModel(replies=list(replies))  # writes no explanations: none asked
    answer = on.ask("Paid totals?", shop, model=plain)
    assert answer.ok and answer.explanation is None and answer.usage["calls"] == 2
    used_up = ScriptedChatModel(replies=list(replies), explanations=[])  # the call fails
    answer = Agent(memory=False, settings=AgentSettings(first_drafts=0, retry_drafts=0)).ask(
        "Paid totals?", shop, model=used_up
    )
    assert answer.ok and answer.sql and answer.explanation is None


def test_no_explanation_without_an_answer(shop):
    model = ScriptedChatModel(replies=["CLARIFY: Which year?"], explanations=[GROUNDED])
    answer = Agent(memory=False, settings=AgentSettings(first_drafts=0, retry_drafts=0)).ask(
        "Totals?", shop, model=model
    )
    assert answer.status == "needs_clarification" and answer.explanation is None
    assert model.explain_position == 0


@pytest.mark.engines(["sqlite", "duckdb", "postgresql", "mysql"])
def test_explained_on_every_engine(seeded, connect_to):
    conn = connect_to(seeded, readonly=True)
    query = (
        "SELECT customers.name, SUM(orders.amount) AS total FROM customers JOIN orders "
        "ON orders.customer_id = customers.id WHERE orders.status = 'paid' GROUP BY customers.name "
        "ORDER BY total DESC"
    )
    text = (
        "This adds up the paid orders of each customer name. Ada comes first with 12.50 and Grace has 5.00."
    )
    model = ScriptedChatModel(replies=[f"```sql\n{query}\n```", "FINAL"], explanations=[text])
    answer = Agent(memory=False, settings=AgentSettings(first_drafts=0, retry_drafts=0)).ask(
        "Paid totals per customer?", conn, model=model
    )
    assert answer.ok and answer.explanation == text, answer.explained
    shown = model.explain_prompts[0][-1][1]
    assert re.search(r"Ada \| 12\.5", shown)


def test_a_sentence_that_repeats_the_instructions_is_not_an_explanation():
    from sqlnb.agent.prompts import template

    instructions = template("explain")
    assert echoes("The headline: the first one or two rows of the result, with values.", instructions)
    assert not echoes("This counts the paid orders of each region, as in the example.", instructions)
    assert not echoes("Ada comes first with 12.50, then Grace with 5.00.", instructions)


def test_an_echo_is_written_again(shop):
    echo = "This adds up the paid orders per customer. Never compute a number yourself, no percentages."
    model = client(echo, GROUNDED)
    out = explain(
        model, question="Paid totals?", sql=PAID_TOTALS, dialect="sqlite", result=run(shop, PAID_TOTALS)
    )
    assert out is not None and out.not_found == ["words of the instructions"] and out.text == GROUNDED
    feedback = model.model.explain_prompts[1][-1][1]
    assert feedback.startswith("Do not repeat the instructions: explain this result.")


def test_a_clause_or_a_common_word_capitalized_is_no_name_and_quotes_keep_no_punctuation():
    src = sources("Which songs?", "SELECT song FROM songs", ["song"], [["Gentleman"], ["Sun"]], 2)
    assert ungrounded("Two songs: Only these count. The list has “Gentleman,” and 'Sun.'", src) == []
    assert ungrounded("It lists Gentleman, Sun and Moon.", src) == ["Moon"]


def test_a_sentence_that_says_the_opposite_of_a_filter_is_not_grounded():
    keeps = sources(
        "Revenue of 2025, cancelled orders left out?", "SELECT SUM(total) FROM o WHERE status = 'cancelled'"
    )
    assert ungrounded("This is the revenue of 2025, excluding cancelled orders.", keeps) == [
        "'cancelled' said to be left out"
    ]
    assert ungrounded("The query excludes rows where the status is 'cancelled'.", keeps) == [
        "'cancelled' said to be left out"
    ]
    assert ungrounded("This is the revenue of the cancelled orders.", keeps) == []
    leaves = sources(
        "Revenue?", "SELECT SUM(total) FROM o WHERE status <> 'cancelled' AND region NOT IN ('north')"
    )
    assert ungrounded("It counts only cancelled orders.", leaves) == [
        "'cancelled' said to be the only one kept"
    ]
    assert ungrounded("It leaves out the cancelled orders and the north.", leaves) == []


# ---- a follow-up read on its own ("answered as") --------------------------------------------
PAID_2024 = (
    "SELECT c.name, SUM(o.amount) AS total FROM customers AS c JOIN orders AS o ON o.customer_id = c.id "
    "WHERE o.status = 'paid' AND o.ordered_on >= '2024-01-01' GROUP BY c.name ORDER BY total DESC"
)
ON_ITS_OWN = "Question on its own: What did each customer spend on paid orders since 2024?"


def test_a_follow_up_is_given_on_its_own_by_the_explanation_call(shop):
    model = client(f"{ON_ITS_OWN}\n{GROUNDED}")
    out = explain(
        model,
        question="only the paid ones, since 2024",
        sql=PAID_2024,
        dialect="sqlite",
        result=run(shop, PAID_2024),
        earlier=["What did each customer spend?"],
    )
    assert out is not None and out.calls == 1 and out.first_try
    assert out.standalone == "What did each customer spend on paid orders since 2024?"
    assert out.text == GROUNDED  # the line is not a sentence of the explanation
    assert out.to_dict()["standalone"] == out.standalone
    user = model.model.explain_prompts[0][-1][1]
    assert user.startswith("Earlier questions of this conversation:\n- What did each customer spend?")
    assert "Start your reply with one line: 'Question on its own: '" in user


@pytest.mark.parametrize(
    "line",
    [
        # a name and a number found nowhere in the conversation or the SQL
        "Question on its own: What did Bob spend on paid orders in 2023?",
        # the follow-up as it was asked: nothing read on its own
        "Question on its own: only the paid ones, since 2024",
    ],
)
def test_a_reading_that_is_not_grounded_or_says_nothing_new_is_left_out(shop, line):
    out = explain(
        client(f"{line}\n{GROUNDED}"),
        question="only the paid ones, since 2024",
        sql=PAID_2024,
        dialect="sqlite",
        result=run(shop, PAID_2024),
        earlier=["What did each customer spend?"],
    )
    assert out is not None and out.text == GROUNDED and out.standalone is None


def test_a_first_question_is_not_asked_to_stand_alone(shop):
    model = client(f"{ON_ITS_OWN}\n{GROUNDED}")
    out = explain(
        model, question="Paid totals?", sql=PAID_2024, dialect="sqlite", result=run(shop, PAID_2024)
    )
    assert out is not None and out.standalone is None
    assert "Question on its own" not in model.model.explain_prompts[0][-1][1]


def test_the_answer_to_a_follow_up_says_how_it_was_read(shop):
    first = f"```sql\n{PAID_TOTALS}\n```"
    second = f"```sql\n{PAID_2024}\n```"
    model = ScriptedChatModel(
        replies=[first, "FINAL", second, "FINAL"], explanations=[GROUNDED, f"**{ON_ITS_OWN}**\n\n{GROUNDED}"]
    )
    agent = Agent(memory=False, settings=AgentSettings(first_drafts=0, retry_drafts=0))
    answer = agent.ask("What did each customer spend?", shop, model=model)
    assert answer.ok and answer.answered_as is None
    follow = agent.ask("only the paid ones, since 2024", shop, model=model)
    assert follow.ok and follow.answered_as == "What did each customer spend on paid orders since 2024?"
    assert follow.to_dict()["answered_as"] == follow.answered_as
    assert "What did each customer spend?" in model.explain_prompts[1][-1][1]
    assert f"Answered as: {follow.answered_as}" in str(follow).splitlines()
    from sqlnb.bridge.runs import done_event
    from sqlnb.bridge.widget import done_html
    from sqlnb.display import ask_summary_html

    assert done_event(follow)["answered_as"] == follow.answered_as
    assert "<i>Answered as:</i> What did each customer spend on paid orders since 2024?" in done_html(
        done_event(follow)
    )
    assert done_event(answer)["answered_as"] is None
    assert "<i>Answered as:</i> What did each customer spend on paid orders since 2024?" in ask_summary_html(
        follow
    )
