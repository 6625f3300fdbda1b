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
from sqlnb.agent.models import LlamaCppChatModel, ModelClient, describe_model, llamacpp, resolve_model
from tests.tiny_gguf import write_tiny_llama

MESSAGES = [("system", "You write SQL for a SQLite database."), ("human", "How many singers?")]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    return write_tiny_llama(tmp_path_factory.mktemp("gguf") / "tiny.gguf")


@pytest.fixture
def loaded(monkeypatch):
    """A clean table of loaded models, freed after the test."""
    monkeypatch.setattr(llamacpp, "_LLAMAS", {})
    yield llamacpp._LLAMAS
    llamacpp._close_llamas()


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
    with pytest.raises(errors.ContextTooLong) as info:
        client.invoke([("human", "count the rows " * 200)])
    assert "exceed context window of 256" in str(info.value)
    assert "n_ctx=256" in info.value.hint
    assert info.value.window == 256 and info.value.requested > 256  # the prompt's own tokens
    assert client.invoke(MESSAGES)[0]  # the model still answers afterwards


def test_instances_with_the_same_settings_share_one_loaded_model(tiny_model, loaded):
    a = LlamaCppChatModel(model_path=str(tiny_model), n_ctx=256, n_threads=1, max_tokens=8)
    b = LlamaCppChatModel(model_path=str(tiny_model), n_ctx=256, n_threads=1, max_tokens=16)
    a.invoke(MESSAGES)
    b.invoke(MESSAGES)
    assert len(loaded) == 1
    LlamaCppChatModel(model_path=str(tiny_model), n_ctx=128, n_threads=1, max_tokens=8).invoke(
        [("human", "How many?")]
    )
    assert len(loaded) == 2


def test_an_agent_turn_on_noise_ends_cleanly(tmp_path, tiny_model, loaded):
    """Replies that hold no query (the first answer and its sampled drafts, all on the
    real runtime): the turn ends with a status and its usage, never an exception."""
    from sqlnb.agent.runner import Agent

    db = tmp_path / "shop.sqlite"
    import sqlite3

    con = sqlite3.connect(db)
    con.executescript(
        "CREATE TABLE singer (id INTEGER PRIMARY KEY, name TEXT, age INT);"
        "INSERT INTO singer VALUES (1, 'Ann', 30), (2, 'Bo', 41);"
    )
    con.close()
    adapter = connect(f"sqlite:///{db}")
    # the agent's prompt is long in this model's byte-sized tokens: a larger context
    client = ModelClient(
        resolve_model(f"llamacpp:{tiny_model}", n_ctx=8192, n_threads=1, max_tokens=24, parallel=True)
    )
    try:
        res = Agent(memory=False).ask("How many singers are there?", adapter, connection="shop", model=client)
    finally:
        adapter.close()
    assert res.status in ("failed", "needs_clarification", "success")
    assert res.model_error is None, res.model_error
    # the first answer and two drafts written side by side: one call, two replies beside it
    assert res.usage["calls"] >= 1 and res.usage["replies_beside"] == 2
    assert res.usage["input_tokens"] > 3 * 1000
    for a in res.attempts:  # whatever ran went through the read-only guard and the engine
        assert a.get("ok") in (True, False)


def test_a_schema_too_long_for_the_context_is_cut_until_the_prompt_fits(tmp_path, tiny_model, loaded):
    """A database whose schema context, with its identifier columns' example values, is
    longer in the model's tokens than its context: the runtime refuses the first prompt, the
    agent asks again with fewer tables, and the turn goes on (noise replies, so no answer is
    expected: only that no call failed for the prompt's length)."""
    import sqlite3
    import uuid

    from sqlnb.agent.runner import Agent

    db = tmp_path / "wide.sqlite"
    con = sqlite3.connect(db)
    for i in range(30):
        cols = ", ".join(f"ref_{j} TEXT" for j in range(8))
        con.execute(f"CREATE TABLE ledger_{i} (id TEXT PRIMARY KEY, {cols})")
        for _ in range(3):
            con.execute(
                f"INSERT INTO ledger_{i} VALUES ({', '.join('?' * 9)})", [str(uuid.uuid4()) for _ in range(9)]
            )
    con.commit()
    con.close()
    adapter = connect(f"sqlite:///{db}")
    # one call at a time, so that every prompt is the runtime's to refuse
    model = resolve_model(f"llamacpp:{tiny_model}", n_ctx=8192, n_threads=1, max_tokens=24)
    try:
        agent = Agent(memory=False)
        whole = agent.schema_context("What is in ledger_7?", adapter)
        res = agent.ask("What is in ledger_7?", adapter, connection="wide", model=ModelClient(model))
    finally:
        adapter.close()
    assert res.model_error is None, res.model_error
    assert res.usage["failed_calls"] >= 1 and res.usage["input_tokens"] < 8192 * res.usage["calls"]
    assert "ledger_7" in {t.rsplit(".", 1)[-1] for t in res.context.tables}
    assert len(res.context.tables) < len(whole.tables)


# --- replies written side by side (sqlnb.agent.parallel) ------------------------------------
SPECS = [{"temperature": 0.0}, {"temperature": 0.9, "seed": 5}, {"temperature": 0.9, "seed": 6}]


def test_side_by_side_replies_are_the_ones_separate_calls_give(tiny_model, loaded):
    model = LlamaCppChatModel(model_path=str(tiny_model), n_ctx=1024, n_threads=1, max_tokens=30)
    one_by_one = [
        model.invoke(
            MESSAGES, temperature=s["temperature"], **({"seed": s["seed"]} if "seed" in s else {})
        ).content
        for s in SPECS
    ]
    assert len(set(one_by_one)) == 3
    together = model.replies(MESSAGES, SPECS)
    assert [text for text, _ in together] == one_by_one
    for _text, usage in together:
        # max_tokens, or a few more to finish a character split across tokens
        assert usage["input_tokens"] > 10 and 0 < usage["output_tokens"] <= 30 + 3
    # the model holds the prompt alone afterwards: the next call starts from it
    llama, _ = llamacpp._get_llama(str(tiny_model), 1024, 1)
    assert llama.n_tokens == together[0][1]["input_tokens"]
    assert model.invoke(MESSAGES).content == one_by_one[0]


def test_side_by_side_replies_stop_where_separate_calls_stop(tiny_model, loaded):
    model = LlamaCppChatModel(model_path=str(tiny_model), n_ctx=1024, n_threads=1, max_tokens=30)
    full = [text for text, _ in model.replies(MESSAGES, SPECS)]
    shortened = 0
    for piece in ("count", "age", "WHERE", "j", "```\n\n"):
        cut = [text for text, _ in model.replies(MESSAGES, SPECS, stop=[piece])]
        one_by_one = [
            model.invoke(
                MESSAGES,
                temperature=s["temperature"],
                stop=[piece],
                **({"seed": s["seed"]} if "seed" in s else {}),
            ).content
            for s in SPECS
        ]
        assert cut == one_by_one
        assert all(whole.startswith(part) for whole, part in zip(full, cut, strict=True))
        shortened += sum(part != whole for whole, part in zip(full, cut, strict=True))
    assert cut == full  # the last stop string never occurs
    assert shortened >= 3  # (a stop string is not looked for inside a split character)


def test_invoke_many_side_by_side_and_one_by_one(tiny_model, loaded, monkeypatch):
    model = LlamaCppChatModel(
        model_path=str(tiny_model), n_ctx=1024, n_threads=1, max_tokens=30, parallel=True
    )
    client = ModelClient(model)
    assert client.side_by_side
    specs = [{"temperature": None}, {"temperature": 0.9, "seed": 5}]
    together = client.invoke_many(MESSAGES, specs, draft=False)
    # one call, for the time of about one reply; the reply beside it counted apart
    assert [u["calls"] for _, u in together] == [1, 0]
    assert [u.get("replies_beside", 0) for _, u in together] == [0, 1]
    assert together[0][1]["seconds"] > 0 and together[1][1]["seconds"] == 0.0
    monkeypatch.delenv(models.LLAMA_PARALLEL_ENV, raising=False)
    apart = ModelClient(LlamaCppChatModel(model_path=str(tiny_model), n_ctx=1024, n_threads=1, max_tokens=30))
    assert not apart.side_by_side  # off unless asked for
    monkeypatch.setenv(models.LLAMA_PARALLEL_ENV, "1")
    assert LlamaCppChatModel(model_path=str(tiny_model)).parallel
    assert [t for t, _ in apart.invoke_many(MESSAGES, specs, draft=False)] == [t for t, _ in together]


def test_side_by_side_prompt_too_long_is_a_model_error(tiny_model, loaded):
    client = ModelClient(LlamaCppChatModel(model_path=str(tiny_model), n_ctx=256, n_threads=1, parallel=True))
    with pytest.raises(errors.ModelError) as info:
        client.invoke_many([("human", "count the rows " * 200)], SPECS)
    assert "exceed context window of 256" in str(info.value) and "n_ctx=256" in info.value.hint


def test_a_stopped_turn_asks_for_no_batch(tiny_model, loaded):
    from sqlnb.agent.runner import StoppableClient
    from sqlnb.agent.stop import StopToken

    token = StopToken()
    client = StoppableClient(
        ModelClient(
            LlamaCppChatModel(
                model_path=str(tiny_model), n_ctx=1024, n_threads=1, max_tokens=8, parallel=True
            )
        ),
        token,
    )
    assert len(client.invoke_many(MESSAGES, SPECS)) == 3
    token.stop()
    with pytest.raises(errors.ModelError, match="stopped"):
        client.invoke_many(MESSAGES, SPECS)


def test_a_failure_while_writing_side_by_side_leaves_the_model_usable(tiny_model, loaded, monkeypatch):
    model = LlamaCppChatModel(model_path=str(tiny_model), n_ctx=1024, n_threads=1, max_tokens=12)
    before = [text for text, _ in model.replies(MESSAGES, SPECS)]
    llama, _ = llamacpp._get_llama(str(tiny_model), 1024, 1)
    other = [("system", "You write SQL."), ("human", "Which singers are older than 40?")]

    def broken(tokens):
        raise RuntimeError("llama_decode returned -3")

    monkeypatch.setattr(llama, "eval", broken)  # the prompt's evaluation fails
    with pytest.raises(errors.ModelError, match="llama_decode returned -3"):
        ModelClient(model.model_copy(update={"parallel": True})).invoke_many(other, SPECS)
    assert llama.n_tokens == 0  # nothing half evaluated is taken for a cached prefix
    monkeypatch.undo()
    assert [text for text, _ in model.replies(MESSAGES, SPECS)] == before
    for seq in range(1, len(SPECS)):  # only sequence 0 holds anything between calls
        assert llama_cpp_seq_empty(llama, seq)


def llama_cpp_seq_empty(llama, seq: int) -> bool:
    from llama_cpp import llama_cpp as low

    mem = low.llama_get_memory(llama._ctx.ctx)
    return low.llama_memory_seq_pos_max(mem, seq) == -1


def test_a_streamed_reply_is_written_piece_by_piece_and_is_the_same_reply(client):
    """llama.cpp writes the reply a token or so at a time; the pieces are the reply that a
    call without streaming gives (greedy), with the same token counts."""
    whole, usage = client.invoke(MESSAGES)
    pieces: list[str] = []
    streamed, streamed_usage = client.invoke(MESSAGES, on_text=lambda p, restart=False: pieces.append(p))
    assert streamed == whole and "".join(pieces) == whole
    assert len(pieces) > 3  # more than one piece: it streamed
    assert streamed_usage["output_tokens"] == pytest.approx(usage["output_tokens"], abs=2)
    assert streamed_usage["input_tokens"] == pytest.approx(usage["input_tokens"], abs=2)


def test_prompt_states_are_kept_so_a_shared_beginning_is_read_once(tiny_model, loaded, monkeypatch):
    """After another prompt (an explanation) the next question's prompt, which shares the
    system prompt and schema with the last one, starts from the kept state; the replies are
    the ones a model without kept states gives."""
    question = [("system", "You write SQL for a SQLite database. " * 4), ("human", "How many singers?")]
    other = [("system", "You explain answers."), ("human", "Explain it.")]
    client = ModelClient(resolve_model(f"llamacpp:{tiny_model}", n_ctx=512, n_threads=1, max_tokens=8))
    first = client.invoke(question)[0]
    client.invoke(other)
    llama, _ = next(iter(loaded.values()))
    assert llama.cache is not None and len(llama.cache.cache_state) == 2
    reads: list[int] = []
    monkeypatch.setattr(
        llama, "load_state", lambda state, _load=llama.load_state: reads.append(1) or _load(state)
    )
    again = [("system", "You write SQL for a SQLite database. " * 4), ("human", "How many concerts?")]
    client.invoke(again)
    assert reads == [1]  # the first prompt's state was taken up again
    assert client.invoke(question)[0] == first


def test_keeping_prompt_states_can_be_turned_off(tiny_model, loaded, monkeypatch):
    monkeypatch.setenv("SQLNB_LLAMA_CACHE_MB", "0")
    client = ModelClient(resolve_model(f"llamacpp:{tiny_model}", n_ctx=256, n_threads=1, max_tokens=4))
    client.invoke(MESSAGES)
    llama, _ = next(iter(loaded.values()))
    assert llama.cache is None
    monkeypatch.setenv("SQLNB_LLAMA_CACHE_MB", "lots")
    loaded.clear()
    with pytest.raises(errors.ConfigurationError, match="SQLNB_LLAMA_CACHE_MB"):
        ModelClient(resolve_model(f"llamacpp:{tiny_model}", n_ctx=128, n_threads=1)).invoke(MESSAGES)


def test_reading_ahead_leaves_the_question_to_read_and_changes_no_reply(
    tmp_path, tiny_model, loaded, monkeypatch
):
    """``Agent.warm`` has the model read the system prompt, the schema and the
    conversation: the question's first call then reads only what follows (its question, the
    instruction and the chat template's end), and its reply is the one it gives unread."""
    import sqlite3

    from sqlnb.agent.runner import Agent
    from sqlnb.agent.settings import AgentSettings

    db = tmp_path / "shop.sqlite"
    con = sqlite3.connect(db)
    con.executescript("CREATE TABLE singer (id INTEGER PRIMARY KEY, name TEXT, age INT);")
    con.close()
    adapter = connect(f"sqlite:///{db}")
    settings = AgentSettings(first_drafts=0, retry_drafts=0, explain=False)
    question = "How many singers are there?"

    def first_call_reads(warm: bool) -> tuple[int, list[str]]:
        llamacpp._close_llamas()  # a model that has read nothing yet
        client = ModelClient(resolve_model(f"llamacpp:{tiny_model}", n_ctx=8192, n_threads=1, max_tokens=8))
        agent = Agent(memory=False)
        if warm:
            assert (
                agent.warm(adapter, connection="shop", model=client, max_iterations=1, settings=settings) > 0
            )
        llama, _ = llamacpp._get_llama(client.model.model_path, 8192, 1)
        evaluated: list[int] = []
        monkeypatch.setattr(
            llama, "eval", lambda tokens, _eval=llama.eval: evaluated.append(len(tokens)) or _eval(tokens)
        )
        res = agent.ask(
            question, adapter, connection="shop", model=client, max_iterations=1, settings=settings
        )
        return evaluated[0], [m.get("content", "") for m in res.attempts] + [res.status]

    try:
        cold, cold_reply = first_call_reads(warm=False)
        warm, warm_reply = first_call_reads(warm=True)
    finally:
        adapter.close()
    tail = f" {question}\n\nWrite one SQL query that answers the question, in a ```sql block."
    assert cold > 1000  # the whole prompt, in this model's byte-sized tokens
    assert len(tail) <= warm <= len(tail.encode()) + 40  # the question on, and the template's end
    assert warm_reply == cold_reply


def test_prompt_states_keep_no_unused_scores_and_count_every_byte(tiny_model, loaded, monkeypatch):
    """A state holds llama-cpp-python's scores array (a vocabulary's floats per token, up to
    the batch), which its cache did not count: a cache given 1 GB held several. The states
    kept hold one row of them, and the capacity counts all a state holds."""
    from sqlnb.agent.prompt_states import state_bytes

    client = ModelClient(resolve_model(f"llamacpp:{tiny_model}", n_ctx=512, n_threads=1, max_tokens=4))
    client.invoke([("system", "You write SQL. " * 8), ("human", "How many singers?")])
    llama, _ = next(iter(loaded.values()))
    (state,) = llama.cache.cache_state.values()
    assert state.scores.shape == (1, llama.n_vocab())  # not a row per token read
    assert llama.cache.cache_size == state_bytes(state) > state.llama_state_size
    # room for one such state: the next prompt's (a shorter one) pushes it out
    llama.cache.capacity_bytes = state_bytes(state) + 1
    client.invoke([("system", "You explain answers."), ("human", "Explain it, in a few words.")])
    assert len(llama.cache.cache_state) == 1 and llama.cache.cache_size <= llama.cache.capacity_bytes
    # a loaded state is read on from its last token: the replies are the ones given before
    first = client.invoke([("system", "You write SQL. " * 8), ("human", "How many singers?")])[0]
    llamacpp._close_llamas()
    monkeypatch.setenv("SQLNB_LLAMA_CACHE_MB", "0")
    fresh = ModelClient(resolve_model(f"llamacpp:{tiny_model}", n_ctx=512, n_threads=1, max_tokens=4))
    assert fresh.invoke([("system", "You write SQL. " * 8), ("human", "How many singers?")])[0] == first
