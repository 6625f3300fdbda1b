"""The words of a run's steps, confidence and outcome come from one module (sqlnb.labels):
the terminal, the chat widget and the protocol's ``label`` fields say the same.

tests/data/labels.json holds protocol events as the kernel sends them, labels included; the
panel's unit tests (labextension/test/labels.test.ts) read the same file and check that the
panel shows exactly those labels.  After a change of wording, write it again with
``python -m tests.test_labels``.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from sqlnb import labels
from sqlnb.bridge.runs import confidence_info, confidence_labels, done_event, protocol_event
from sqlnb.display import ask_progress_line, confidence_line

FIXTURE = Path(__file__).parent / "data" / "labels.json"

SQL = "SELECT count(*) AS n FROM orders"
ATTEMPT = {
    "n": 2,
    "sql": SQL,
    "ok": True,
    "row_count": 1,
    "truncated": False,
    "elapsed": 0.0123,
    "error_kind": None,
    "error": None,
}


def reply(**fields) -> dict:
    """A ``reply`` event of the agent: the model's reply at iteration 1 of 5 that brings
    nothing (no SQL, no clarification, no candidates), but for ``fields``."""
    return {
        "type": "reply",
        "iteration": 1,
        "max_iterations": 5,
        "sql": None,
        "final": False,
        "clarify": None,
        "candidates": None,
        "model_error": None,
        **fields,
    }


def attempt(**fields) -> dict:
    """An ``attempt`` event of the agent: :data:`ATTEMPT`, but for ``fields``."""
    return {"type": "attempt", "max_iterations": 5, "attempt": {**ATTEMPT, **fields}}


# the agent's events (Agent.ask's on_event), each made into its protocol form
AGENT_EVENTS = [
    reply(sql=SQL),
    reply(clarify=["Paid orders only?"]),
    reply(iteration=2, final=True),
    reply(model_error="ModelError: " + "x" * 200),
    reply(sql=SQL, candidates=3, first_round=True, draws=4),
    reply(iteration=3, sql=SQL, candidates=1),
    reply(iteration=3, sql=SQL, candidates=3),
    reply(iteration=2, not_a_question="it repeats the question"),
    attempt(candidates=[SQL, SQL, SQL]),
    attempt(n=1, row_count=500, truncated=True, elapsed=1.5),
    attempt(n=1, ok=False, row_count=None, error_kind="table_not_found", error="no such table: order_lines"),
    {"type": "memory", "examples": 3, "level": "low"},
    {"type": "memory", "examples": 1, "level": None},
    {"type": "memory", "kept_first": True, "examples": 3, "level": "low"},
    {"type": "explaining"},
]
CONFIDENCE = {
    "level": "medium",
    "score": 0.666,
    "reasons": ["2 of 3 drafts gave this result", "the model checked the result and kept it"],
}
OUTCOMES = [
    {"status": "success", "stop_reason": "voted", "sql": SQL, "confidence": CONFIDENCE},
    {
        "status": "success",
        "stop_reason": "finalized",
        "sql": SQL,
        "confidence": {"level": "low", "score": 0.2, "reasons": ["the result is empty"]},
    },
    {
        "status": "success",
        "stop_reason": "finalized",
        "sql": SQL,
        "confidence": {"level": "high", "score": 1.0, "reasons": []},
    },
    {"status": "failed", "stop_reason": "max_iterations", "sql": None, "confidence": None},
    {"status": "stopped", "stop_reason": None, "sql": None, "confidence": None},
]


def _result(outcome: dict) -> SimpleNamespace:
    cell = f"%%sql --conn shop\n{outcome['sql']}\n" if outcome["sql"] else None
    return SimpleNamespace(
        status=outcome["status"],
        stop_reason=outcome["stop_reason"],
        sql=outcome["sql"],
        questions=[],
        columns=["n"] if cell else [],
        result=None,
        connection="shop",
        iterations=2,
        usage={"calls": 2},
        elapsed=1.25,
        confidence=outcome["confidence"],
        model_error=None,
        alternatives=[],
        explanation="This counts the orders, with no filter." if cell else None,
        cell_source=lambda: cell,
    )


def fixture() -> dict:
    """The events the kernel sends for the cases above, labels included."""
    started = {
        "type": "started",
        "question": "How many orders?",
        "connection": "shop",
        "dialect": "duckdb",
        "model": "scripted:replies.json",
        "max_iterations": 5,
    }
    events = [{**started, "label": labels.started_label(started)}]
    events += [protocol_event(e) for e in AGENT_EVENTS]
    events += [done_event(_result(o)) for o in OUTCOMES]
    return {
        "about": "protocol events as the kernel sends them (tests/test_labels.py writes this file)",
        "events": events,
    }


def test_the_fixture_is_what_the_kernel_sends():
    assert json.loads(FIXTURE.read_text()) == fixture(), "run python -m tests.test_labels to write it again"


def test_every_step_has_a_label_and_the_terminal_shows_the_same_words():
    for agent, sent in zip(AGENT_EVENTS, fixture()["events"][1:], strict=False):
        label = sent.get("label") or sent.get("text")
        assert label and label == labels.step_label(agent)
        line = ask_progress_line(agent)
        if agent["type"] == "attempt":
            # the terminal puts the SQL where the panel shows it below the label
            head, outcome = label.split(": ", 1)
            assert line == f"{head}: {SQL}\n  {outcome}"
        elif line is not None:
            assert line == label
        else:  # a reply that only brings the next query: the panel shows it, the terminal not
            assert labels.is_routine_reply(agent) and label == "The model wrote a query."


def test_the_words_of_each_step():
    events = fixture()["events"]
    said = [e.get("label") or e.get("text") for e in events]
    assert said[:9] == [
        "Asking scripted:replies.json on shop (duckdb), up to 5 attempts",
        "The model wrote a query.",
        "The model asks for clarification.",
        "The model confirmed the result.",
        f"The model call failed: ModelError: {'x' * 108}…",
        "Drafted the answer 4 times (3 different queries); the result most drafts gave is kept…",
        "Trying another query in place of one that already failed…",
        "Trying 3 candidate queries; the result most of them agree on is kept…",
        "The model's CLARIFY asked the user nothing (it repeats the question); asking it again…",
    ]
    assert said[9:16] == [
        "Attempt 2 of at most 5 (kept 1 of 3 candidates): ✓ 1 row · 12.3 ms",
        "Attempt 1 of at most 5: ✓ 500+ rows · 1.50 s",
        "Attempt 1 of at most 5: ✗ table_not_found: no such table: order_lines",
        "Not sure of that answer (low confidence): asking again with 3 remembered answers of this "
        "database as examples…",
        "Not sure of that answer (no query found): asking again with 1 remembered answer of this "
        "database as examples…",
        "No answer found with the remembered answers: the first answer stands (low confidence).",
        "Explaining the answer…",
    ]
    assert said[16:] == [
        "Answer (the result most drafts gave was kept)",
        "Answer (the model confirmed the result)",
        "Answer (the model confirmed the result)",
        "No query succeeded (the iteration limit was reached)",
        "Stopped.",
    ]


def test_confidence_words_are_the_same_in_the_terminal_the_widget_and_the_panel():
    from sqlnb.bridge.widget import confidence_html

    info = confidence_info(CONFIDENCE)
    words = confidence_labels(info)
    assert words == {
        "label": "Medium confidence",
        "aria_label": "Medium confidence (score 67%); 2 reasons, expand to read them",
        "tooltip": "Medium confidence (67%)\n• 2 of 3 drafts gave this result\n"
        "• The model checked the result and kept it",
        "reasons": ["2 of 3 drafts gave this result", "The model checked the result and kept it"],
    }
    assert confidence_line(CONFIDENCE) == (
        "Medium confidence (2 of 3 drafts gave this result; the model checked the result and kept it)"
    )
    html = confidence_html(CONFIDENCE)
    assert f">{words['label']}<" in html and f'aria-label="{words["aria_label"]}"' in html
    assert all(f"<li>{r}</li>" in html for r in words["reasons"])
    low = {"level": "low", "score": 0.125, "reasons": []}
    assert labels.confidence_label("low") == "Low confidence — check this answer"
    assert confidence_line(low) == "Low confidence — check this answer"
    assert (
        confidence_labels(confidence_info(low))["aria_label"]
        == "Low confidence — check this answer (score 13%)"
    )


def test_an_answer_in_plain_text():
    """``str(answer)`` and ``sqlnb ask``: how it ended, the explanation, the confidence, the
    SQL and its first rows; the model's questions; the last error when no query succeeded."""
    table = SimpleNamespace(
        returns_rows=True,
        row_count=7,
        column_names=["name", "n"],
        rows=[("Ada", 2), (None, 1), ("two\nlines", 0)] + [("x", 1)] * 4,
    )
    answer = SimpleNamespace(**{**vars(_result(OUTCOMES[0])), "attempts": [ATTEMPT], "result": table})
    assert labels.answer_text(answer) == "\n".join(
        [
            "SUCCESS · the result most drafts gave was kept · 1 attempt, 2 model calls, 1.25 s",
            "This counts the orders, with no filter.",
            "Medium confidence (2 of 3 drafts gave this result; the model checked the result and kept it)",
            SQL,
            "name       | n",
            "------------+---",
            "Ada        | 2",
            "NULL       | 1",
            "two\\nlines | 0",
            "x          | 1",
            "x          | 1",
            "(7 rows)",
        ]
    )
    asking = SimpleNamespace(**vars(answer))
    asking.status, asking.sql, asking.questions = "needs_clarification", None, ["Paid orders only?"]
    assert labels.answer_text(asking) == (
        "More information needed:\n  - Paid orders only?\n"
        "Answer with another %%ask (the conversation continues)."
    )
    failed = SimpleNamespace(**vars(_result(OUTCOMES[3])))
    failed.attempts = [{**ATTEMPT, "ok": False, "error_kind": "syntax", "error": "near FROM"}] * 2
    failed.model_error = "ModelError: timed out"
    assert labels.answer_text(failed).splitlines() == [
        "FAILED · the iteration limit was reached · 2 attempts, 2 model calls, 1.25 s",
        "Model error: ModelError: timed out",
        "No query succeeded; the last error: syntax: near FROM",
    ]
    written = SimpleNamespace(returns_rows=False, row_count=3, column_names=[], rows=[])
    assert labels.table_text(written) == "3 rows affected"


if __name__ == "__main__":  # python -m tests.test_labels: write the fixture again
    FIXTURE.write_text(json.dumps(fixture(), indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {FIXTURE}")
