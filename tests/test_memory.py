"""The memory of accepted answers: database fingerprints (never a password), the lexical
ranking, the SQLite store, the agent's prompt, and the front doors (``%%sql`` cells written
by ``%%ask``, ``%sqlnb remember``, ``%sqlnb memory``, ``sqlnb memory``) through a real
InteractiveShell against real engines, with a scripted model."""

from __future__ import annotations

import io
import json
import logging
import os
import stat
import threading

import pytest
from IPython.utils.capture import capture_output

from sqlnb import errors
from sqlnb.agent.memory import (
    MemoryStore,
    database_fingerprint,
    database_identity,
    memory_path,
    provenance_question,
    similar_pairs,
    without_provenance,
)
from sqlnb.kernel import kernel_session
from sqlnb.sql.format import pretty
from tests.doubles import script, sql_block

COUNT = "SELECT count(*) AS n FROM customers"
PAID = "SELECT id, amount FROM orders WHERE status = 'paid' ORDER BY id"
SECRET = "Pw-n0t-in-the-memory"


def seen_by(shell, model: str) -> str:
    """Every prompt the scripted model ``model`` received, as one text."""
    client = kernel_session(shell).ask.agent.client(model)
    return "\n".join(content for prompt in client.model.prompts for _, content in prompt)


def first_prompt(shell, model: str) -> str:
    """What the scripted model ``model`` was asked first (before any attempt of its own)."""
    return kernel_session(shell).ask.agent.client(model).model.prompts[0][-1][1]


def run(shell, cell: str):
    with capture_output() as cap:
        result = shell.run_cell(cell)
    return result, cap.stdout + cap.stderr


def with_password(url: str, password: str) -> str:
    """``url`` with ``password`` (trust auth and fakesnow accept any)."""
    scheme, rest = url.split("://", 1)
    user, host = rest.split("@", 1)
    user = user.split(":", 1)[0]
    return f"{scheme}://{user}:{password}@{host}"


# ---------------------------------------------------------------------------------------
# similarity (a pure function)
# ---------------------------------------------------------------------------------------

PAIRS = [
    {"question": "How many customers are there?", "sql": COUNT},
    {
        "question": "Total amount of paid orders",
        "sql": "SELECT sum(amount) FROM orders WHERE status = 'paid'",
    },
    {
        "question": "Customers without an email address",
        "sql": "SELECT name FROM customers WHERE email IS NULL",
    },
    {
        "question": "Average order amount per month",
        "sql": "SELECT date_trunc('month', ordered_on), avg(amount) FROM orders GROUP BY 1",
    },
]


def test_similar_pairs_ranks_by_shared_words():
    best = similar_pairs("what is the total amount of the paid orders?", PAIRS)
    assert best[0]["question"] == "Total amount of paid orders"
    assert [b["score"] for b in best] == sorted((b["score"] for b in best), reverse=True)
    assert all(b["score"] > 0 for b in best) and len(best) <= 3
    # stems: "emails" meets "email", "customer" meets "Customers"
    assert similar_pairs("customer emails", PAIRS, k=1)[0]["question"] == "Customers without an email address"
    # a word of the SQL counts, less than one of the question
    monthly = similar_pairs("amount by month", PAIRS, k=4)
    assert monthly[0]["question"] == "Average order amount per month"
    only_sql = similar_pairs("status", PAIRS)
    assert [p["question"] for p in only_sql] == ["Total amount of paid orders"]
    assert only_sql[0]["score"] < similar_pairs("paid", PAIRS)[0]["score"]
    # nothing in common, only stop words, nothing to rank, k
    assert similar_pairs("weather in Lisbon", PAIRS) == []
    assert similar_pairs("how many are there?", PAIRS) == []
    assert similar_pairs("customers", []) == []
    assert len(similar_pairs("orders amount customers", PAIRS, k=2)) == 2
    # the pairs are copies with extra keys kept
    first = similar_pairs("paid orders", [{**PAIRS[1], "id": 7}])[0]
    assert first["id"] == 7 and "score" not in PAIRS[1]


def test_provenance_comment():
    cell = "-- sqlnb ask: How many customers? | model: scripted:r.json | attempts: 2\nSELECT 1\n"
    assert provenance_question(cell) == "How many customers?"
    assert without_provenance(cell) == "SELECT 1"
    assert provenance_question("SELECT 1 -- sqlnb ask: no | model: x") is None
    assert provenance_question("SELECT 1\n-- sqlnb ask: after the SQL | model: x") is None
    assert (
        provenance_question("-- a note\n-- sqlnb ask: a | b? | model: m | attempts: 1\nSELECT 1") == "a | b?"
    )


# ---------------------------------------------------------------------------------------
# fingerprints: real engines
# ---------------------------------------------------------------------------------------


@pytest.mark.engines(["sqlite", "duckdb", "postgresql", "mysql", "redshift", "snowflake"])
def test_fingerprint_names_the_database_never_the_password(engine, seeded, empty_db, tmp_path):
    from sqlnb.session import ConnectionManager

    url = seeded.url()
    if engine in ("postgresql", "snowflake"):  # trust auth / fakesnow: any password goes
        url = with_password(url, SECRET)
    password = SECRET if SECRET in url else ("Sq1nb-pw" if engine in ("mysql", "redshift") else None)
    manager = ConnectionManager()
    try:
        a = manager.connect(url, "first").adapter
        b = manager.connect(url, "second").adapter  # the same database under another name
        other = manager.connect(empty_db.url(), "other").adapter
        assert database_fingerprint(a) == database_fingerprint(b)
        assert database_fingerprint(a) != database_fingerprint(other)
        fp = database_fingerprint(a)
        assert len(fp) == 64 and int(fp, 16) >= 0
        ident = json.dumps(database_identity(a))
        assert ident and json.loads(ident)["engine"] == a.spec.scheme
        if password:
            assert password not in ident and password not in fp
        # what the store keeps, byte for byte: no password, no rows
        store = MemoryStore(tmp_path / "memory.sqlite")
        entry_id = store.remember(
            fp, "How many customers?", COUNT, source="remember", connection="first", dialect=a.dialect
        )
        assert store.similar(database_fingerprint(b), "customers count")[0]["id"] == entry_id
        assert store.similar(database_fingerprint(other), "customers count") == []
        blob = (tmp_path / "memory.sqlite").read_bytes()
        assert b"How many customers?" in blob
        if password:
            assert password.encode() not in blob
        for row_value in (b"ada@example.com", b"Grace"):
            assert row_value not in blob
    finally:
        manager.close_all()


def test_file_databases_by_resolved_path_and_in_memory_ones_apart(tmp_path, monkeypatch):
    import sqlnb.adapters as adapters

    (tmp_path / "data").mkdir()
    db = tmp_path / "data" / "shop.db"
    os.symlink(db.parent, tmp_path / "link")
    monkeypatch.chdir(tmp_path)
    opened = [
        adapters.connect(f"sqlite:///{db}"),
        adapters.connect("sqlite:///data/shop.db"),
        adapters.connect("sqlite:///link/shop.db"),
        adapters.connect("sqlite://"),
        adapters.connect("sqlite://"),
        adapters.connect(f"duckdb:///{tmp_path}/shop.duckdb"),
    ]
    try:
        absolute, relative, linked, mem1, mem2, duck = opened
        assert (
            database_fingerprint(absolute) == database_fingerprint(relative) == database_fingerprint(linked)
        )
        # two in-memory databases are two databases; each keeps its identity while open
        assert database_fingerprint(mem1) != database_fingerprint(mem2)
        assert database_fingerprint(mem1) == database_fingerprint(mem1)
        assert len({database_fingerprint(a) for a in (absolute, mem1, duck)}) == 3
    finally:
        for a in opened:
            a.close()


# ---------------------------------------------------------------------------------------
# the store
# ---------------------------------------------------------------------------------------


def test_store_file_lives_under_sqlnb_home_mode_0600(tmp_path, monkeypatch):
    monkeypatch.setenv("SQLNB_HOME", str(tmp_path / "home" / "deeper"))
    assert memory_path() == tmp_path / "home" / "deeper" / "memory.sqlite"
    monkeypatch.delenv("SQLNB_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert memory_path() == tmp_path / "user" / ".sqlnb" / "memory.sqlite"
    store = MemoryStore()
    assert store.entries() == []
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600
    # a file left wider by hand is narrowed again
    os.chmod(store.path, 0o644)
    store.remember("f" * 64, "q", "SELECT 1", source="cell")
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600


def test_store_remembers_updates_deletes_and_exports(tmp_path):
    store = MemoryStore(tmp_path / "m.sqlite")
    fp, other = "a" * 64, "b" * 64
    first = store.remember(
        fp, "How many customers?", COUNT, source="cell", connection="shop", dialect="duckdb"
    )
    # the same question with the same SQL (up to layout and case): updated, not duplicated
    again = store.remember(
        fp,
        "how many   customers?",
        "select COUNT(*) as n\nfrom customers;",
        source="thumbs_up",
        connection="shop2",
        dialect="duckdb",
    )
    assert again == first
    [e] = store.entries(fp)
    assert e["source"] == "thumbs_up" and e["connection"] == "shop2" and e["times"] == 2
    assert set(e) >= {"id", "connection", "question", "sql", "source", "created_at"}
    paid = store.remember(fp, "Which orders are paid?", PAID, source="remember", dialect="duckdb")
    elsewhere = store.remember(other, "Which orders are paid?", PAID, source="cell", dialect="duckdb")
    assert len({first, paid, elsewhere}) == 3
    assert [x["id"] for x in store.similar(fp, "paid orders")] == [paid]
    assert [x["id"] for x in store.entries()] == [first, paid, elsewhere]
    # a corrected answer to the same question: only the latest is shown
    newer = store.remember(
        fp, "Which orders are paid?", PAID.replace("ORDER BY id", ""), source="cell", dialect="duckdb"
    )
    assert [x["id"] for x in store.similar(fp, "paid orders")] == [newer]
    # export: JSON, one database or all
    out = tmp_path / "export.json"
    assert store.export(out, fp) == 3
    data = json.loads(out.read_text())
    assert data["format"] == "sqlnb-memory" and {e["question"] for e in data["entries"]} == {
        "how many customers?",
        "Which orders are paid?",
    }
    buf = io.StringIO()
    assert store.export(buf) == 4 and len(json.loads(buf.getvalue())["entries"]) == 4
    # delete by id, by database
    assert store.delete([paid, 999]) == 1
    assert store.delete(fingerprint=fp) == 2
    assert [x["id"] for x in store.entries()] == [elsewhere]
    with pytest.raises(errors.UsageError):
        store.delete()


def test_only_read_only_queries_are_remembered(tmp_path):
    store = MemoryStore(tmp_path / "m.sqlite")
    for sql in (
        "DELETE FROM orders",
        "SELECT 1; DROP TABLE orders",
        "CREATE TABLE t AS SELECT 1",
        "SELECT pg_terminate_backend(1)",
    ):
        with pytest.raises(errors.UsageError, match="only read-only queries are remembered"):
            store.remember("a" * 64, "q", sql, source="cell", dialect="postgres")
    with pytest.raises(errors.UsageError, match="source"):
        store.remember("a" * 64, "q", "SELECT 1", source="liked")
    with pytest.raises(errors.UsageError, match="No question"):
        store.remember("a" * 64, "  ", "SELECT 1", source="cell")
    assert store.entries() == []


def test_several_writers_at_once(tmp_path):
    path = tmp_path / "m.sqlite"
    failures: list[BaseException] = []

    def writer(n: int) -> None:
        store = MemoryStore(path)  # as another kernel would: its own store, its own connections
        try:
            for i in range(15):
                store.remember(
                    "c" * 64,
                    f"question {n} number {i}",
                    f"SELECT {n} AS a, {i} AS b",
                    source="cell",
                    dialect="sqlite",
                )
        except BaseException as exc:  # pragma: no cover - reported below
            failures.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
    assert len(MemoryStore(path).entries()) == 60


def test_a_corrupt_file_is_a_clear_error(tmp_path):
    path = tmp_path / "memory.sqlite"
    path.write_bytes(b"this is not a database, " * 200)
    store = MemoryStore(path)
    with pytest.raises(errors.MemoryStoreError) as info:
        store.entries()
    assert str(path) in str(info.value) and "delete it" in str(info.value)
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("x")
    with pytest.raises(errors.MemoryStoreError):
        MemoryStore(blocked / "memory.sqlite").remember("a" * 64, "q", "SELECT 1", source="cell")


# ---------------------------------------------------------------------------------------
# the agent
# ---------------------------------------------------------------------------------------


@pytest.mark.engines(["duckdb", "postgresql"])
def test_the_agent_shows_remembered_answers_of_this_database(seeded, empty_db, connect_to, tmp_path):
    from sqlnb.agent.models import ScriptedChatModel
    from sqlnb.agent.runner import Agent

    adapter = connect_to(seeded)
    agent = Agent(memory=MemoryStore(tmp_path / "m.sqlite"))
    kept = agent.remember(adapter, "Which orders are paid?", PAID, connection="shop", source="thumbs_up")
    agent.remember(adapter, "How many customers are there?", COUNT, connection="shop", source="remember")
    with pytest.raises(errors.UsageError, match="read-only"):
        agent.remember(adapter, "wipe", "DELETE FROM orders", connection="shop", source="remember")

    model = ScriptedChatModel(replies=[sql_block(PAID + " LIMIT 10"), "FINAL"])
    result = agent.ask("Show the paid orders", adapter, connection="shop", model=model)
    assert result.status == "success"
    prompt = model.prompts[0][-1][1]
    assert "Which orders are paid?" in prompt and PAID in prompt
    assert result.examples[0] == {"id": kept, "question": "Which orders are paid?"}
    assert result.to_dict()["examples"][0]["id"] == kept

    # examples given: those, not the memory's; use_memory=False: none
    model = ScriptedChatModel(replies=[sql_block(COUNT), "FINAL"])
    result = agent.ask(
        "paid orders",
        adapter,
        connection="a2",
        model=model,
        examples=[{"question": "Count them", "sql": COUNT}],
    )
    assert "Count them" in model.prompts[0][-1][1] and "Which orders are paid?" not in model.prompts[0][-1][1]
    model = ScriptedChatModel(replies=[sql_block(COUNT), "FINAL"])
    result = agent.ask("paid orders", adapter, connection="a3", model=model, use_memory=False)
    assert "Which orders are paid?" not in model.prompts[0][-1][1] and result.examples == []

    # another database: nothing of this one's
    other = connect_to(empty_db)
    model = ScriptedChatModel(replies=["CLARIFY: which table?"])
    result = agent.ask("Which orders are paid?", other, connection="other", model=model)
    assert result.examples == [] and PAID not in model.prompts[0][-1][1]

    # off: nothing remembered, nothing shown
    agent.use_memory = False
    with pytest.raises(errors.UsageError, match="off"):
        agent.remember(adapter, "q", COUNT, connection="shop", source="thumbs_up")
    model = ScriptedChatModel(replies=[sql_block(PAID), "FINAL"])
    result = agent.ask("Which orders are paid?", adapter, connection="a4", model=model)
    assert result.examples == [] and "answered before" not in model.prompts[0][-1][1]


@pytest.mark.engines(["sqlite"])
def test_chat_rendering_and_the_python_api_show_remembered_answers(seeded, connect_to, tmp_path):
    import sqlnb
    from sqlnb.agent.models import ScriptedChatModel
    from sqlnb.agent.runner import Agent
    from sqlnb.agent.settings import AgentSettings

    adapter = connect_to(seeded)
    agent = Agent(memory=MemoryStore(tmp_path / "m.sqlite"))
    agent.remember(adapter, "Which orders are paid?", PAID, connection="shop", source="remember")
    model = ScriptedChatModel(replies=[sql_block(PAID), "FINAL"])
    agent.ask(
        "Show the paid orders",
        adapter,
        connection="chat",
        model=model,
        settings=AgentSettings(rendering="chat"),
    )
    role, system = model.prompts[0][0]
    assert role == "system" and "Which orders are paid?" in system and PAID in system
    # sqlnb.ask(use_memory=False): nothing shown; default: the agent's memory
    model = ScriptedChatModel(replies=[sql_block(PAID), "FINAL"])
    r = sqlnb.ask("Show the paid orders", adapter, model, agent=agent, use_memory=False)
    assert r.examples == [] and "answered before" not in model.prompts[0][-1][1]
    model = ScriptedChatModel(replies=[sql_block(PAID), "FINAL"])
    r = sqlnb.ask("Show the paid orders", adapter, model, agent=agent)
    assert [e["question"] for e in r.examples] == ["Which orders are paid?"]


@pytest.mark.engines(["sqlite"])
def test_a_corrupt_memory_fails_no_question(seeded, connect_to, tmp_path, caplog):
    from sqlnb.agent.models import ScriptedChatModel
    from sqlnb.agent.runner import Agent

    path = tmp_path / "memory.sqlite"
    path.write_bytes(b"\x00garbage" * 512)
    adapter = connect_to(seeded)
    agent = Agent(memory=MemoryStore(path))
    with caplog.at_level(logging.WARNING, logger="sqlnb.memory"):
        for i in range(2):
            model = ScriptedChatModel(replies=[sql_block(COUNT), "FINAL"])
            result = agent.ask("How many customers?", adapter, connection=f"c{i}", model=model)
            assert result.status == "success" and result.examples == []
    warnings = [r for r in caplog.records if r.name == "sqlnb.memory"]
    assert len(warnings) == 1 and "without the memory" in warnings[0].getMessage()
    with pytest.raises(errors.MemoryStoreError):
        agent.remember(adapter, "How many customers?", COUNT, connection="c", source="thumbs_up")


# ---------------------------------------------------------------------------------------
# the front doors: %%ask, %%sql, %sqlnb remember / memory
# ---------------------------------------------------------------------------------------


@pytest.mark.engines(["sqlite", "duckdb", "postgresql"])
def test_running_the_inserted_cell_keeps_the_answer_for_the_next_question(shell, seeded, tmp_path):
    run(shell, f"%sqlnb connect {seeded.url()} --name shop")
    model = script(tmp_path, sql_block(PAID), "FINAL")
    res, out = run(shell, f"%%ask --model {model}\nWhich orders are paid?")
    assert res.success and res.result.examples == [], out
    cell = shell.rl_next_input
    store = kernel_session(shell).ask.memory
    assert store.entries() == []  # asking alone keeps nothing
    res, out = run(shell, cell)
    assert res.success, out
    [entry] = store.entries()
    # what ran is what is kept: the cell's SQL, laid out (the same query as the answer's)
    assert entry["question"] == "Which orders are paid?" and entry["sql"] == pretty(PAID, seeded.dialect)
    assert entry["source"] == "cell" and entry["connection"] == "shop"

    # the same database under another name: the next question shows the kept answer
    run(shell, f"%sqlnb connect {seeded.url()} --name shop_again")
    model = script(tmp_path, sql_block(PAID.replace("ORDER BY id", "AND amount > 10 ORDER BY id")), "FINAL")
    res, out = run(shell, f"%%ask --model {model}\nWhich paid orders are above 10?")
    assert res.success and res.result.status == "success", out
    seen = seen_by(shell, model)
    assert "Which orders are paid?" in seen and pretty(PAID, seeded.dialect) in first_prompt(shell, model)
    assert res.result.examples == [{"id": entry["id"], "question": "Which orders are paid?"}]

    # --no-data: the examples are SQL the user accepted, not rows: still shown
    model = script(tmp_path, sql_block(PAID), "FINAL")
    res, out = run(shell, f"%%ask --model {model} --no-data --new\npaid orders please")
    prompt = first_prompt(shell, model)
    assert pretty(PAID, seeded.dialect) in prompt and "Which orders are paid?" in prompt
    assert res.result.examples, out
    # --no-memory: not shown
    model = script(tmp_path, sql_block(PAID), "FINAL")
    res, out = run(shell, f"%%ask --model {model} --no-memory --new\npaid orders please")
    assert "answered before" not in seen_by(shell, model) and res.result.examples == []


@pytest.mark.engines(["sqlite"])
def test_a_failing_or_plain_cell_keeps_nothing(shell, seeded):
    run(shell, f"%sqlnb connect {seeded.url()} --name shop")
    res, _ = run(
        shell, "%%sql\n-- sqlnb ask: Paid orders? | model: m | attempts: 1\nSELECT id FROM order_table"
    )
    assert not res.success
    res, _ = run(shell, f"%%sql\n{COUNT}")  # no provenance comment: not an accepted answer
    assert res.success
    # a cell %%ask wrote, edited into a write: runs, but is not remembered
    res, out = run(
        shell,
        "%%sql\n-- sqlnb ask: Make a table | model: m | attempts: 1\n"
        "CREATE TEMP TABLE scratch AS SELECT 1 AS x",
    )
    assert res.success, out
    assert kernel_session(shell).ask.memory.entries() == []


@pytest.mark.engines(["duckdb"])
def test_memory_off_stores_and_shows_nothing(shell, seeded, tmp_path):
    run(shell, f"%sqlnb connect {seeded.url()} --name shop")
    store = kernel_session(shell).ask.memory
    fp = database_fingerprint(kernel_session(shell).magics.manager.get("shop"))
    store.remember(fp, "Which orders are paid?", PAID, source="remember", dialect="duckdb")
    shell.run_line_magic("config", "AskMagic.use_memory = False")
    res, out = run(shell, f"%%sql\n-- sqlnb ask: How many customers? | model: m | attempts: 1\n{COUNT}")
    assert res.success, out
    model = script(tmp_path, sql_block(PAID), "FINAL")
    res, out = run(shell, f"%%ask --model {model}\nWhich orders are paid?")
    assert res.result.status == "success" and res.result.examples == [], out
    assert "answered before" not in seen_by(shell, model)
    res, out = run(shell, '%sqlnb remember "How many customers?"')
    assert not res.success and "memory of accepted answers is off" in out
    assert [e["question"] for e in store.entries()] == ["Which orders are paid?"]
    # on again: the agent created meanwhile follows the setting
    shell.run_line_magic("config", "AskMagic.use_memory = True")
    model = script(tmp_path, sql_block(PAID), "FINAL")
    res, out = run(shell, f"%%ask --model {model} --new\nWhich orders are paid?")
    assert PAID in first_prompt(shell, model)


@pytest.mark.engines(["sqlite", "postgresql"])
def test_remember_list_export_delete_clear(shell, seeded, empty_db, tmp_path):
    res, out = run(shell, '%sqlnb remember "anything"')
    assert not res.success and "No %%sql cell has run" in out
    run(shell, f"%sqlnb connect {seeded.url()} --name shop")
    run(shell, f"%%sql\n{COUNT}")
    res, out = run(shell, "%sqlnb remember")
    assert not res.success and "Which question" in out and "%sqlnb remember" in out
    res, out = run(shell, '%sqlnb remember "How many customers are there?"')
    assert res.success and "Remembered #" in out, out
    run(shell, f"%%sql\n-- sqlnb ask: Which orders are paid? | model: m | attempts: 3\n{PAID}")
    res, out = run(shell, "%sqlnb remember")  # the question from the comment (already kept by the run)
    assert res.success and "Which orders are paid?" in out, out
    run(shell, "%%sql\nCREATE TEMP TABLE scratch AS SELECT 1 AS x")
    res, out = run(shell, '%sqlnb remember "make scratch"')
    assert not res.success and "only read-only queries are remembered" in out

    # another database's answer
    run(shell, f"%sqlnb connect {empty_db.url()} --name other")
    run(shell, "%%sql\nSELECT 1 AS one")
    run(shell, '%sqlnb remember "Just one"')
    run(shell, "%sqlnb use shop")

    frame = shell.run_line_magic("sqlnb", "memory")
    assert list(frame.columns) == ["question", "sql", "source", "date"]
    assert list(frame["question"]) == ["How many customers are there?", "Which orders are paid?"]
    assert list(frame["source"]) == ["remember", "remember"]  # the run, then remember again
    assert frame["sql"].iloc[1] == PAID
    everything = shell.run_line_magic("sqlnb", "memory --all")
    assert len(everything) == 3 and "connection" in everything.columns
    assert "other" in list(everything["connection"])
    other_frame = shell.run_line_magic("sqlnb", "memory --conn other")
    assert list(other_frame["question"]) == ["Just one"]

    target = tmp_path / "kept.json"
    res, out = run(shell, f"%sqlnb memory export '{target}'")
    assert res.success and "Exported 2" in out, out
    assert len(json.loads(target.read_text())["entries"]) == 2
    res, out = run(shell, f"%sqlnb memory export '{tmp_path / 'all.json'}' --all")
    assert "Exported 3" in out

    first = int(frame.index[0])
    res, out = run(shell, f"%sqlnb memory delete {first}")
    assert res.success and "Deleted 1" in out
    res, out = run(shell, "%sqlnb memory delete x")
    assert not res.success and "ids" in out
    res, out = run(shell, "%sqlnb memory clear")
    assert "Deleted 1" in out
    res, out = run(shell, "%sqlnb memory")
    assert "No remembered answers" in out
    assert len(shell.run_line_magic("sqlnb", "memory --all")) == 1  # the other database's


@pytest.mark.engines(["sqlite"])
def test_corrupt_memory_in_the_notebook(shell, seeded, tmp_path):
    path = memory_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not sqlite at all " * 100)
    run(shell, f"%sqlnb connect {seeded.url()} --name shop")
    model = script(tmp_path, sql_block(COUNT), "FINAL")
    res, out = run(shell, f"%%ask --model {model}\nHow many customers?")
    assert res.success and res.result.status == "success", out
    res, out = run(shell, shell.rl_next_input)  # the cell runs; it says once why nothing is kept
    assert res.success and "Not remembered" in out and str(path) in out
    res, out = run(shell, "%sqlnb memory")
    assert not res.success and "MemoryStoreError" in out and "delete it" in out


# ---------------------------------------------------------------------------------------
# the command line
# ---------------------------------------------------------------------------------------


@pytest.mark.engines(["duckdb"])
def test_cli_memory_list_export_delete(seeded, tmp_path, capsys):
    import sqlnb.adapters as adapters
    from sqlnb.cli import main

    adapter = adapters.connect(seeded.url())
    try:
        fp = database_fingerprint(adapter)
    finally:
        adapter.close()
    store = MemoryStore()
    kept = store.remember(
        fp, "Which orders are paid?", PAID, source="cell", connection="shop", dialect="duckdb"
    )
    store.remember("d" * 64, "elsewhere", "SELECT 1", source="cell")
    assert main(["memory", "list", "--db", seeded.url(), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [e["id"] for e in listed] == [kept]
    assert main(["memory", "list"]) == 0
    out = capsys.readouterr().out
    assert "Which orders are paid?" in out and "elsewhere" in out
    target = tmp_path / "out.json"
    assert main(["memory", "export", str(target), "--db", seeded.url()]) == 0
    assert len(json.loads(target.read_text())["entries"]) == 1
    assert main(["memory", "delete", str(kept)]) == 0
    assert "Deleted 1" in capsys.readouterr().out
    assert main(["memory", "delete", str(kept)]) == 0  # gone already: said so
    got = capsys.readouterr()
    assert "Deleted 0" in got.out and "not found" in got.err
    assert main(["memory", "delete"]) == 2
    assert [e["question"] for e in store.entries()] == ["elsewhere"]
    # nothing remembered for this database: said how answers get remembered
    assert main(["memory", "list", "--db", seeded.url()]) == 0
    got = capsys.readouterr()
    assert got.out == "" and "No remembered answers of this database" in got.err
    assert "%sqlnb remember" in got.err


@pytest.mark.engines(["sqlite"])
def test_cli_ask_uses_the_memory_unless_told_not_to(seeded, tmp_path, capsys):
    import sqlnb.adapters as adapters
    from sqlnb.cli import main

    adapter = adapters.connect(seeded.url())
    try:
        kept = MemoryStore().remember(
            database_fingerprint(adapter),
            "Which orders are paid?",
            PAID,
            source="thumbs_up",
            dialect="sqlite",
        )
    finally:
        adapter.close()
    for flags, expected in (
        ([], [{"id": kept, "question": "Which orders are paid?"}]),
        (["--no-memory"], []),
    ):
        model = script(tmp_path, sql_block(PAID), "FINAL")
        code = main(["ask", "--db", seeded.url(), "--model", model, "--json", *flags, "paid orders"])
        assert code == 0
        assert json.loads(capsys.readouterr().out)["examples"] == expected
