"""The offline model's runtime for real: llama-cpp-python running a tiny GGUF model that
the tests write (tests/tiny_gguf.py; random weights, so its replies are noise).  What is
checked is sqlnb's side: resolution of a model file, usage, reproducible sampled calls,
a prompt too long for the context, one loaded model shared by instances, and an agent
turn on a database that never breaks on replies that are not SQL."""

from __future__ import annotations

import pytest

from sqlnb import errors
from sqlnb.adapters import connect
from sqlnb.agent import models
from sqlnb.agent.models import LlamaCppChatModel, ModelClient, describe_model, resolve_model
from tests.tiny_gguf import write_tiny_llama

MESSAGES = [("system", "You write SQL for a SQLite database."), ("human", "How many singers?")]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    return write_tiny_llama(tmp_path_factory.mktemp("gguf") / "tiny.gguf")


@pytest.fixture
def loaded(monkeypatch):
    """A clean table of loaded models, freed after the test."""
    monkeypatch.setattr(models, "_LLAMAS", {})
    yield models._LLAMAS
    models._close_llamas()


@pytest.fixture
def client(tiny_model, loaded):
    model = resolve_model(f"llamacpp:{tiny_model}", n_ctx=256, n_threads=1, max_tokens=24)
    return ModelClient(model)


def test_a_model_file_resolves_and_answers_with_its_usage(tiny_model, client):
    assert isinstance(client.model, LlamaCppChatModel)
    assert describe_model(client.model) == "llamacpp:tiny"
    text, usage = client.invoke(MESSAGES)
    assert isinstance(text, str) and text
    assert usage["calls"] == 1 and usage["input_tokens"] > 10
    assert 0 < usage["output_tokens"] <= 24 + 4  # max_tokens (a few more after detokenizing)
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]


def test_greedy_replies_repeat_and_seeds_make_samples_reproducible(client):
    greedy = client.invoke(MESSAGES)[0]
    assert client.invoke(MESSAGES)[0] == greedy  # temperature 0: the same reply again
    one = client.invoke(MESSAGES, temperature=0.9, seed=1)[0]
    assert client.invoke(MESSAGES, temperature=0.9, seed=1)[0] == one
    others = {client.invoke(MESSAGES, temperature=0.9, seed=s)[0] for s in (2, 3, 4)}
    assert others - {one}, "other seeds should give other samples"


def test_a_prompt_longer_than_the_context_is_a_model_error_with_a_hint(client):
    with pytest.raises(errors.ModelError) as info:
        client.invoke([("human", "count the rows " * 200)])
    assert "exceed context window of 256" in str(info.value)
    assert "n_ctx=256" in info.value.hint
    assert client.invoke(MESSAGES)[0]  # the model still answers afterwards


def test_instances_with_the_same_settings_share_one_loaded_model(tiny_model, loaded):
    a = LlamaCppChatModel(model_path=str(tiny_model), n_ctx=256, n_threads=1, max_tokens=8)
    b = LlamaCppChatModel(model_path=str(tiny_model), n_ctx=256, n_threads=1, max_tokens=16)
    a.invoke(MESSAGES)
    b.invoke(MESSAGES)
    assert len(loaded) == 1
    LlamaCppChatModel(model_path=str(tiny_model), n_ctx=128, n_threads=1, max_tokens=8).invoke(
        [("human", "How many?")])
    assert len(loaded) == 2


def test_an_agent_turn_on_noise_ends_cleanly(tmp_path, tiny_model, loaded):
    """Replies that hold no query (the first answer and its sampled drafts, all on the
    real runtime): the turn ends with a status and its usage, never an exception."""
    from sqlnb.agent.runner import Agent

    db = tmp_path / "shop.sqlite"
    import sqlite3

    con = sqlite3.connect(db)
    con.executescript("CREATE TABLE singer (id INTEGER PRIMARY KEY, name TEXT, age INT);"
                      "INSERT INTO singer VALUES (1, 'Ann', 30), (2, 'Bo', 41);")
    con.close()
    adapter = connect(f"sqlite:///{db}")
    # the agent's prompt is long in this model's byte-sized tokens: a larger context
    client = ModelClient(resolve_model(f"llamacpp:{tiny_model}", n_ctx=8192, n_threads=1,
                                       max_tokens=24))
    try:
        res = Agent(memory=False).ask("How many singers are there?", adapter,
                                      connection="shop", model=client)
    finally:
        adapter.close()
    assert res.status in ("failed", "needs_clarification", "success")
    assert res.model_error is None, res.model_error
    assert res.usage["calls"] >= 2 and res.usage["input_tokens"] > 2000  # drafts were drawn
    for a in res.attempts:  # whatever ran went through the read-only guard and the engine
        assert a.get("ok") in (True, False)
