"""accuracy: execution accuracy (EX) of the agent on a Spider-layout directory.

The same model answers the same questions in the configurations asked for, in one run:

- ``agent``: ``Agent.ask`` as a user gets it (review on, ``max_iterations`` 5): the model
  sees each attempt's result or error and either says FINAL or corrects the SQL;
- ``no-review``: ``Agent.ask(no_review=True)``: errors are fed back, but the first SQL
  that runs is the answer;
- ``one-by-one``: the agent with the offline model's replies written one after another
  (``LlamaCppChatModel.parallel`` off; the same as ``agent`` for other models), to
  measure what writing the first answer and its drafts side by side saves;
- ``single-shot``: one model call with the same system prompt and first user prompt as
  the agent's first generate call (same schema context, sample values included), its
  SQL taken with ``parse_reply``; no execution, no feedback.

Each question gets a fresh :class:`~sqlnb.agent.runner.Agent` (no conversation memory);
one model client serves everything (a llama.cpp model loads once).  Each database is
opened once, read-only, through ``sqlnb.adapters.connect``.  Predictions are scored by
``spider_eval.Scorer`` (execution match, after test-suite-sql-eval).

A Spider-layout directory holds ``questions.json`` (``[{db_id, question, query}]``) and
``database/<db_id>/<db_id>.sqlite``.  Results go one line per (question, configuration)
to a JSONL file as they come, so an interrupted run resumes (``--resume``).

``--dataset sample``: the 40 questions of ``benchmarks/sample/questions.json`` over the
sample database of ``sqlnb demo`` (built into ``--data-dir``), asked on DuckDB and on its
SQLite copy (``--engines``, default both), each engine with its own gold SQL and scored on
that engine.  Five of them are ambiguous on purpose: their gold is that the agent asks
back (status ``needs_clarification``); they are scored apart from EX ("clarification").
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import common as c
import spider_eval

from sqlnb.demo.databases import sqlite_value

CONFIGS = ("agent", "agent+memory", "no-review", "one-by-one", "single-shot")
CONFIG_LABELS = {
    "agent": "agent (a vote of drafts, then corrections; max 5 iterations)",
    "agent+memory": "agent with memory (3 accepted answers of other questions as examples)",
    "no-review": "no-review (errors fed back; first SQL that runs)",
    "one-by-one": "agent, the offline model's replies one after another (not side by side)",
    "single-shot": "single-shot (one call, no execution)",
}
# the Spider dev subset shipped with the repository (CC BY-SA 4.0, see its README.md)
DEFAULT_SPIDER_DIR = c.REPO / "tests" / "data" / "spider-dev"
DEFAULT_MODEL = "llamacpp:qwen2.5-coder-1.5b"
DEFAULT_MAX_ITERATIONS = 5
DATASETS = ("spider", "sample", "unseen")
SAMPLE_DIR = c.REPO / "benchmarks" / "sample"
# small SQLite databases and their questions (six batches), written for measuring the agent on
# schemas it was never tuned on (benchmarks/unseen/README.md)
UNSEEN_DIR = c.REPO / "benchmarks" / "unseen"
SAMPLE_ENGINES = ("duckdb", "sqlite", "postgresql")
# the PostgreSQL copy of the sample database (on the local server of scripts/services.sh)
SAMPLE_PG_DB = "sqlnb_sample"
# each engine's gold SQL in questions.json: its own key where the DuckDB query does not
# run there or gives another result, else "query"
GOLD_KEYS = {"duckdb": "query", "sqlite": "query_sqlite", "postgresql": "query_postgres"}


# ---------------------------------------------------------------------------
# questions and databases
# ---------------------------------------------------------------------------


def load_questions(
    spider_dir: str | Path,
    *,
    db_ids: Iterable[str] | None = None,
    offset: int = 0,
    limit: int | None = None,
    indexes: Iterable[int] | None = None,
) -> list[dict[str, Any]]:
    """The questions of ``spider_dir/questions.json`` (each with its position there as
    ``index``, the ``#N`` of the reports), those of ``db_ids`` only (and of ``indexes``
    only, when given), from ``offset``, at most ``limit``."""
    spider_dir = Path(spider_dir)
    data = json.loads((spider_dir / "questions.json").read_text(encoding="utf-8"))
    wanted = set(db_ids or ())
    chosen = set(indexes or ())
    out = [
        dict(q, index=i)
        for i, q in enumerate(data)
        if (not wanted or q["db_id"] in wanted) and (not chosen or i in chosen)
    ]
    if wanted - {q["db_id"] for q in data}:
        raise ValueError(
            f"no questions for database(s) {', '.join(sorted(wanted - {q['db_id'] for q in data}))}"
            f" in {spider_dir / 'questions.json'}"
        )
    if chosen - set(range(len(data))):
        raise ValueError(
            f"no question #{', #'.join(str(i) for i in sorted(chosen - set(range(len(data)))))}"
            f" in {spider_dir / 'questions.json'} ({len(data)} questions, #0–#{len(data) - 1})"
        )
    out = out[max(0, offset) :]
    return out if limit is None else out[: max(0, limit)]


def db_path(spider_dir: str | Path, db_id: str) -> Path:
    return Path(spider_dir) / "database" / db_id / f"{db_id}.sqlite"


def load_sample_questions(
    engines: Sequence[str] = SAMPLE_ENGINES,
    *,
    offset: int = 0,
    limit: int | None = None,
    ids: Iterable[int] | None = None,
    path: str | Path | None = None,
) -> list[dict[str, Any]]:
    """The sample set's questions (from ``offset``, at most ``limit``, or those of ``ids``),
    once per engine, engine by engine: ``db_id`` is the engine, ``index`` ``engine/id``,
    ``query`` that engine's gold SQL (None for an ambiguous question)."""
    data = json.loads(Path(path or SAMPLE_DIR / "questions.json").read_text(encoding="utf-8"))
    if ids:
        wanted = set(ids)
        data = [q for q in data if q["id"] in wanted]
    data = data[max(0, offset) :]
    data = data if limit is None else data[: max(0, limit)]
    bad = [e for e in engines if e not in SAMPLE_ENGINES]
    if bad:
        raise ValueError(f"the sample set runs on {', '.join(SAMPLE_ENGINES)}, not {', '.join(bad)}")
    out = []
    for engine in engines:
        for q in data:
            gold = q.get(GOLD_KEYS[engine]) or q["query"]
            out.append(
                {
                    "index": f"{engine}/{q['id']}",
                    "id": q["id"],
                    "db_id": engine,
                    "question": q["question"],
                    "query": gold,
                    "ambiguous": bool(q.get("ambiguous")),
                    "tags": q.get("tags", []),
                }
            )
    return out


def prepare_sample_databases(
    data_dir: str | Path, engines: Sequence[str] = ("duckdb", "sqlite")
) -> dict[str, Path | str]:
    """Build the sample database (DuckDB and its SQLite copy) under ``data_dir/sample`` and,
    with ``postgresql`` among ``engines``, its copy in database ``sqlnb_sample`` of the local
    PostgreSQL server (its URL)."""
    from sqlnb.demo import create_sample_database, sqlite_path_for, write_postgres

    d = Path(data_dir) / "sample"
    d.mkdir(parents=True, exist_ok=True)
    duck = create_sample_database(d / "sample.duckdb")
    out: dict[str, Path | str] = {"duckdb": duck, "sqlite": sqlite_path_for(duck)}
    if "postgresql" in engines:
        out["postgresql"] = sample_postgres_url()
        write_postgres(str(out["postgresql"]))
    return out


def build_unseen(data_dir: str | Path, source: str | Path = UNSEEN_DIR) -> Path:
    """A Spider-layout directory under ``data_dir/unseen`` built from ``source``: each
    ``<db_id>.sql`` there (schema and rows) becomes ``database/<db_id>/<db_id>.sqlite``,
    rebuilt every time, and ``questions.json`` is copied beside them."""
    import sqlite3

    source, out = Path(source), Path(data_dir) / "unseen"
    for script in sorted(source.glob("*.sql")):
        db = out / "database" / script.stem / f"{script.stem}.sqlite"
        db.parent.mkdir(parents=True, exist_ok=True)
        tmp = db.with_name(db.name + ".tmp")
        tmp.unlink(missing_ok=True)
        conn = sqlite3.connect(tmp)
        try:
            conn.executescript(script.read_text(encoding="utf-8"))
            conn.commit()
        finally:
            conn.close()
        tmp.replace(db)
    shutil.copyfile(source / "questions.json", out / "questions.json")
    return out


def sample_postgres_url(db: str = SAMPLE_PG_DB) -> str:
    """The URL of the sample database's PostgreSQL copy, the database created if absent."""
    import psycopg

    with psycopg.connect(
        host=c.PG_HOST, port=c.PG_PORT, user=c.PG_USER, dbname="postgres", autocommit=True
    ) as con:
        if not con.execute("SELECT 1 FROM pg_database WHERE datname = %s", (db,)).fetchone():
            con.execute(f'CREATE DATABASE "{db}"')
    return f"postgresql://{c.PG_USER}@{c.PG_HOST}:{c.PG_PORT}/{db}"


def is_url(database: str | Path) -> bool:
    return isinstance(database, str) and "://" in database


class DuckDBScorer:
    """The execution match of ``spider_eval`` on a DuckDB file: the same rules (result
    multisets, order only under a top-level ORDER BY, column permutations, floats to 6
    significant digits), a prediction interrupted past ``timeout``.  It reads a private
    copy of the file, so the agent's own read-only connection is never in its way."""

    def __init__(self, timeout: float | None = spider_eval.DEFAULT_TIMEOUT):
        self.timeout = timeout
        self._conns: dict[str, Any] = {}
        self._gold: dict[tuple[str, str, bool], list[tuple]] = {}
        self._tmp: list[Path] = []

    def _conn(self, db_path: str | Path):
        import tempfile

        import duckdb

        key = str(Path(db_path).resolve())
        if key not in self._conns:
            tmp = Path(tempfile.mkdtemp(prefix="sqlnb-score-"))
            self._tmp.append(tmp)
            shutil.copyfile(key, tmp / "score.duckdb")
            self._conns[key] = duckdb.connect(str(tmp / "score.duckdb"), read_only=True)
        return self._conns[key]

    def _run(self, conn, sql: str, *, timeout: float | None, max_rows: int | None = None):
        timer = threading.Timer(timeout, conn.interrupt) if timeout else None
        if timer is not None:
            timer.start()
        try:
            cur = conn.execute(sql)
            rows = cur.fetchall() if max_rows is None else cur.fetchmany(max_rows + 1)
        except Exception as exc:
            if timer is not None and not timer.is_alive() and "interrupt" in str(exc).lower():
                raise spider_eval.QueryTimeout(f"ran past {timeout:g} s") from None
            raise
        finally:
            if timer is not None:
                timer.cancel()
        over = len(rows) if max_rows is not None and len(rows) > max_rows else None
        return [tuple(sqlite_value(v) for v in r) for r in rows], over

    def evaluate(
        self, db_path: str | Path, gold_sql: str, pred_sql: str | None, *, keep_distinct: bool = True
    ) -> spider_eval.Match:
        conn = self._conn(db_path)
        gold = spider_eval.postprocess(gold_sql)
        if not keep_distinct:
            gold = spider_eval.remove_distinct(gold)
        order = spider_eval.has_top_level_order_by(gold)
        gkey = (str(db_path), gold, keep_distinct)
        if gkey not in self._gold:
            try:
                raw, _ = self._run(conn, gold, timeout=None)
            except Exception as exc:
                raise AssertionError(f"the gold query fails on {db_path}: {exc}\n{gold_sql}") from exc
            self._gold[gkey] = spider_eval.normalize_rows(raw)
        gold_rows = self._gold[gkey]
        if not pred_sql or not pred_sql.strip():
            return spider_eval.Match(False, order, len(gold_rows), error="no SQL")
        pred = spider_eval.postprocess(pred_sql)
        if not keep_distinct:
            pred = spider_eval.remove_distinct(pred)
        try:
            raw, over = self._run(conn, pred, timeout=self.timeout, max_rows=len(gold_rows))
        except spider_eval.QueryTimeout as exc:
            return spider_eval.Match(False, order, len(gold_rows), error=f"timeout: {exc}")
        except Exception as exc:
            return spider_eval.Match(False, order, len(gold_rows), error=f"{type(exc).__name__}: {exc}")
        if over is not None:
            if not gold_rows:
                return spider_eval.Match(False, order, 0, pred_rows=over, reason=f"{over}+ rows, expected 0")
            return spider_eval.Match(
                False, order, len(gold_rows), pred_rows=over, reason=f"more than {len(gold_rows)} rows"
            )
        pred_rows = spider_eval.normalize_rows(raw)
        ok, reason = spider_eval.result_eq(gold_rows, pred_rows, order)
        return spider_eval.Match(ok, order, len(gold_rows), pred_rows=len(pred_rows), reason=reason)

    def close(self) -> None:
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()
        for tmp in self._tmp:
            shutil.rmtree(tmp, ignore_errors=True)
        self._tmp.clear()


class PostgresScorer(DuckDBScorer):
    """The same execution match on a PostgreSQL database (``db_path``: its URL), through a
    read-only session of its own with the timeout as ``statement_timeout``."""

    def _conn(self, db_path: str | Path):
        import psycopg

        key = str(db_path)
        if key not in self._conns:
            con = psycopg.connect(key, autocommit=True)
            con.execute("SET default_transaction_read_only = on")
            self._conns[key] = con
        return self._conns[key]

    def _run(self, conn, sql: str, *, timeout: float | None, max_rows: int | None = None):
        import psycopg

        conn.execute(f"SET statement_timeout = {int(timeout * 1000) if timeout else 0}")
        try:
            cur = conn.execute(sql)
            rows = cur.fetchall() if max_rows is None else cur.fetchmany(max_rows + 1)
        except psycopg.errors.QueryCanceled:
            raise spider_eval.QueryTimeout(f"ran past {timeout:g} s") from None
        over = len(rows) if max_rows is not None and len(rows) > max_rows else None
        return [tuple(sqlite_value(v) for v in r) for r in rows], over


class Scorers:
    """SQLite files through ``spider_eval.Scorer``, DuckDB files through DuckDBScorer,
    PostgreSQL URLs through PostgresScorer."""

    def __init__(self, timeout: float | None = spider_eval.DEFAULT_TIMEOUT):
        self.sqlite = spider_eval.Scorer(timeout=timeout)
        self.duckdb = DuckDBScorer(timeout=timeout)
        self.postgres = PostgresScorer(timeout=timeout)

    def evaluate(
        self, db_path: str | Path, gold_sql: str, pred_sql: str | None, *, keep_distinct: bool = True
    ) -> spider_eval.Match:
        if is_url(db_path):
            scorer: Any = self.postgres
        else:
            scorer = self.duckdb if Path(db_path).suffix == ".duckdb" else self.sqlite
        return scorer.evaluate(db_path, gold_sql, pred_sql, keep_distinct=keep_distinct)

    def close(self) -> None:
        self.sqlite.close()
        self.duckdb.close()
        self.postgres.close()


# ---------------------------------------------------------------------------
# the model
# ---------------------------------------------------------------------------


def make_client(model: Any):
    """One ModelClient for a spec string, a LangChain chat model or a client."""
    from sqlnb.agent.models import ModelClient, resolve_model

    if isinstance(model, str):
        model = resolve_model(model)
    if hasattr(model, "invoke") and hasattr(model, "retries"):
        return model
    return ModelClient(model)


def model_info(client: Any, spec: str | None = None) -> dict[str, Any]:
    from sqlnb.agent.models import describe_model

    chat = getattr(client, "model", client)
    info: dict[str, Any] = {"spec": spec, "name": describe_model(chat), "class": type(chat).__name__}
    for attr in (
        "model_path",
        "n_ctx",
        "n_threads",
        "temperature",
        "max_tokens",
        "repeat_penalty",
        "parallel",
    ):
        v = getattr(chat, attr, None)
        if isinstance(v, (str, int, float)):
            info[attr] = Path(v).name if attr == "model_path" else v
    return info


# ---------------------------------------------------------------------------
# one question in one configuration
# ---------------------------------------------------------------------------


def _usage_fields(usage: dict[str, Any]) -> dict[str, Any]:
    return {
        "llm_calls": int(usage.get("calls", 0) or 0),
        # replies written beside another in the same call (the offline model, side by side)
        "replies_beside": int(usage.get("replies_beside", 0) or 0),
        "prompt_tokens": int(usage.get("input_tokens", 0) or 0),
        "completion_tokens": int(usage.get("output_tokens", 0) or 0),
        "model_seconds": round(float(usage.get("seconds", 0.0) or 0.0), 3),
    }


def ask_agent(
    question: str,
    adapter,
    client,
    *,
    connection: str,
    no_review: bool,
    max_iterations: int,
    settings=None,
    examples=None,
) -> dict[str, Any]:
    """The ``agent`` / ``agent+memory`` / ``no-review`` configurations: a fresh Agent whose
    memory is off (the user's own remembered answers never enter a benchmark), one ask;
    ``examples``: the accepted answers ``agent+memory`` shows (see :func:`memory_examples`)."""
    from sqlnb.agent.runner import Agent

    agent = Agent(settings=unexplained(settings), memory=False)
    res = agent.ask(
        question,
        adapter,
        connection=connection,
        model=client,
        max_iterations=max_iterations,
        no_review=no_review,
        examples=examples if examples is not None else [],
    )
    conf = res.confidence or {}
    return {
        "pred_sql": res.sql,
        "status": res.status,
        "stop_reason": res.stop_reason,
        "confidence": conf.get("level"),
        "confidence_score": conf.get("score"),
        # the answer checks' findings about the kept query, by check name (sqlnb.agent.checks)
        "checks": next(
            (dict(a["checks"]) for a in reversed(res.attempts) if "checks" in a and a["sql"] == res.sql), {}
        ),
        # the findings a correction of the model answered (sqlnb.agent.runner.Agent._correct)
        **({"corrects": dict(fixed)} if (fixed := res.attempts and res.attempts[-1].get("corrects")) else {}),
        "examples": [e.get("index") for e in examples or []],
        # the examples the answer was written with (none when the answer without them
        # was rated high: see AgentSettings.memory_when_unsure)
        "examples_used": len(res.examples or []),
        "attempts": len(res.attempts),
        "attempts_ok": sum(1 for a in res.attempts if a.get("ok")),
        "model_error": res.model_error,
        **_usage_fields(res.usage),
        "attempt_log": [
            {k: a.get(k) for k in ("sql", "ok", "error_kind", "error", "row_count")} for a in res.attempts
        ],
        **({"clarify": list(res.questions)} if res.questions else {}),
    }


def unexplained(settings=None):
    """``settings`` (None: the defaults) without the answers' explanations: an accuracy run
    measures the answers, and its stored replies hold no explanation calls
    (``benchmarks/explain.py`` measures those)."""
    import dataclasses

    from sqlnb.agent.settings import AgentSettings

    return dataclasses.replace(settings or AgentSettings(), explain=False)


def first_messages(
    question: str, adapter, *, connection: str, max_iterations: int, failure_cutoff: int = 3, settings=None
):
    """What the agent's first generate call sends for ``question`` (a fresh Agent, no
    earlier turns): the same schema context (sample values included) and state."""
    return first_prompt(
        question,
        adapter,
        connection=connection,
        max_iterations=max_iterations,
        failure_cutoff=failure_cutoff,
        settings=settings,
    )[0]


def first_prompt(
    question: str,
    adapter,
    *,
    connection: str,
    max_iterations: int,
    failure_cutoff: int = 3,
    settings=None,
    budget: int | None = None,
):
    """:func:`first_messages` and the schema context in them, within ``budget`` tokens of
    schema where the model refused a longer one."""
    from sqlnb.agent.prompts import model_messages
    from sqlnb.agent.runner import Agent
    from sqlnb.agent.state import new_turn

    agent = Agent(settings=settings)
    s = agent.settings
    question = question.strip()
    ctx = agent.schema_context(question, adapter, budget=budget)  # exactly as ask() builds it
    state = new_turn(
        question,
        connection=connection,
        dialect=adapter.dialect,
        schema_context=ctx.text,
        max_iterations=max_iterations,
        failure_cutoff=failure_cutoff,
        no_review=False,
    )
    return model_messages(state, s.rendering), ctx.text


def single_shot(
    question: str, adapter, client, *, connection: str, max_iterations: int, settings=None
) -> dict[str, Any]:
    """The ``single-shot`` configuration: one call with the agent's first prompt (made
    smaller as the agent makes it when the model refuses it as too long: the call that
    answers is the one counted)."""
    from sqlnb import errors
    from sqlnb.agent.fit import TRIES, smaller_budget
    from sqlnb.agent.protocol import parse_reply

    budget: int | None = None
    try:
        for tried in range(TRIES + 1):
            messages, schema = first_prompt(
                question,
                adapter,
                connection=connection,
                max_iterations=max_iterations,
                settings=settings,
                budget=budget,
            )
            try:
                text, usage = client.invoke(messages)
                break
            except errors.ContextTooLong as exc:
                prompt = "\n".join(str(m.content) for m in messages)
                smaller = smaller_budget(schema, prompt, exc) if tried < TRIES else None
                if smaller is None:
                    raise
                budget = smaller
    except errors.SqlnbError as exc:
        return {
            "pred_sql": None,
            "status": "failed",
            "stop_reason": "model_error",
            "attempts": 0,
            "attempts_ok": 0,
            "model_error": str(exc),
            "llm_calls": 1,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "model_seconds": 0.0,
        }
    reply = parse_reply(text)
    if reply.clarify is not None:
        status, stop = "needs_clarification", "clarification"
    elif reply.sql:
        status, stop = "success", "single_shot"
    else:
        status, stop = "failed", "no_sql"
    return {
        "pred_sql": reply.sql if reply.clarify is None else None,
        "status": status,
        "stop_reason": stop,
        "attempts": 0,
        "attempts_ok": 0,
        "model_error": None,
        **_usage_fields(usage),
        **({"reply": text} if not reply.sql else {}),
        **({"clarify": list(reply.clarify)} if reply.clarify is not None else {}),
    }


def memory_examples(
    q: dict[str, Any], pool: Sequence[dict[str, Any]], dialect: str, k: int = 3
) -> list[dict[str, Any]]:
    """The ``agent+memory`` configuration's examples for question ``q``: as for a user who
    accepted the answers to the other questions of the same database earlier, the ``k`` of
    them most like ``q`` by the memory's own ranking (``similar_pairs``), their gold SQL as
    the accepted SQL.  Left out: ``q`` itself, every question whose gold SQL normalises to
    the same query as ``q``'s (its answer would be given away), ambiguous questions."""
    from sqlnb.agent.memory import similar_pairs
    from sqlnb.sql.normalize import normalize_sql

    def norm(sql: str) -> str:
        try:
            return normalize_sql(sql, dialect)
        except Exception:
            return " ".join(sql.lower().split())

    own = norm(q["query"]) if q.get("query") else None  # an ambiguous question has none
    pairs = [
        {"question": o["question"], "sql": o["query"], "index": o["index"]}
        for o in pool
        if o["db_id"] == q["db_id"]
        and o["index"] != q["index"]
        and not o.get("ambiguous")
        and o.get("query")
        and norm(o["query"]) != own
    ]
    return similar_pairs(q["question"], pairs, k=k)


# ---------------------------------------------------------------------------
# the run
# ---------------------------------------------------------------------------


def _key(index: int, config: str) -> str:
    return f"{index}:{config}"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The records of a JSONL file (gzip-compressed when it ends in ``.gz``)."""
    out: list[dict[str, Any]] = []
    if not path.is_file():
        return out
    data = path.read_bytes()
    if path.suffix == ".gz":
        import gzip

        data = gzip.decompress(data)
    for line in data.decode("utf-8").splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:  # a line cut by an interruption
            continue
    return out


def run_accuracy(
    questions: Sequence[dict[str, Any]],
    spider_dir: str | Path,
    model: Any,
    configs: Sequence[str] = CONFIGS,
    *,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    jsonl: str | Path | None = None,
    resume: bool = False,
    settings=None,
    timeout: float = spider_eval.DEFAULT_TIMEOUT,
    databases: dict[str, str | Path] | None = None,
    example_pool: Sequence[dict[str, Any]] | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Ask every question in every configuration and score the SQL.

    ``model``: a spec string, a LangChain chat model or a ModelClient (one client serves
    every call).  ``jsonl``: append one line per (question, configuration) as it is done;
    with ``resume`` the pairs already there are not asked again.  ``databases``: the file of
    each ``db_id`` (a ``.duckdb`` file opens with DuckDB), instead of ``spider_dir``'s
    layout.  ``example_pool``: the questions ``agent+memory`` draws its examples from (all of
    each database's questions; default: ``questions``).  Returns the summary per
    configuration and every record (see :func:`summarize`).
    """
    from sqlnb.adapters import connect

    bad = [x for x in configs if x not in CONFIGS]
    if bad:
        raise ValueError(f"unknown configuration(s) {', '.join(bad)}; choose from {', '.join(CONFIGS)}")
    configs = [x for x in CONFIGS if x in configs]
    spider_dir = Path(spider_dir)
    client = make_client(model)
    minfo = model_info(client, model if isinstance(model, str) else None)
    done: dict[str, dict[str, Any]] = {}
    path = Path(jsonl) if jsonl else None
    if path is not None and resume:
        for r in read_jsonl(path):
            if r.get("exception"):
                continue  # crashed: ask again
            if r.get("model") != minfo["name"]:
                raise ValueError(
                    f"{path} holds results of model {r.get('model')!r}, not "
                    f"{minfo['name']!r}: resume with that model or use another --jsonl"
                )
            done[_key(r["index"], r["config"])] = r
    out = None
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        out = open(path, "a", encoding="utf-8")  # noqa: SIM115 (closed in the finally below)
    adapters: dict[str, Any] = {}
    scorer = Scorers(timeout=timeout)
    records: list[dict[str, Any]] = []
    total = len(questions)
    skipped = 0
    t0 = time.perf_counter()
    try:
        for qi, q in enumerate(questions, 1):
            db_id, index = q["db_id"], q["index"]
            dbp = (
                (databases[db_id] if is_url(databases[db_id]) else Path(databases[db_id]))
                if databases
                else db_path(spider_dir, db_id)
            )
            line: dict[str, str] = {}
            # the configurations take turns going first: the model's prompt-prefix cache
            # (llama.cpp) makes the same prompt cheaper the second time
            shift = (qi - 1) % len(configs)
            for config in configs[shift:] + configs[:shift]:
                prior = done.get(_key(index, config))
                if prior is not None and prior.get("question") == q["question"]:
                    records.append(prior)
                    skipped += 1
                    line[config] = f"{config} {'✓' if prior['correct'] else '✗'} (earlier)"
                    continue
                adapter = adapters.get(db_id)
                if adapter is None:
                    if is_url(dbp):
                        adapter = adapters[db_id] = connect(dbp, readonly=True)
                    else:
                        if not dbp.is_file():
                            raise FileNotFoundError(f"no database {dbp}")
                        scheme = "duckdb" if dbp.suffix == ".duckdb" else "sqlite"
                        adapter = adapters[db_id] = connect(f"{scheme}:///{dbp}", readonly=True)
                examples = (
                    memory_examples(q, example_pool or questions, adapter.dialect)
                    if config == "agent+memory"
                    else None
                )
                rec = _one(
                    q,
                    config,
                    adapter,
                    client,
                    dbp,
                    scorer,
                    minfo["name"],
                    max_iterations=max_iterations,
                    settings=settings,
                    examples=examples,
                )
                records.append(rec)
                if out is not None:
                    out.write(json.dumps(rec, default=str) + "\n")
                    out.flush()
                calls = rec["llm_calls"]
                line[config] = (
                    f"{config} {'✓' if rec['correct'] else '✗'} {calls} call{'s' if calls != 1 else ''} "
                    f"{rec['seconds']:.1f} s" + (" (error)" if rec.get("exception") else "")
                )
            running = summarize(records, configs)
            ex = " · ".join(f"{k} {v['ex']:.1f}%" for k, v in running.items() if v["n"])
            log(f"[{qi}/{total}] {db_id} #{index}  " + " | ".join(line[k] for k in configs) + f"  — EX {ex}")
    finally:
        if out is not None:
            out.close()
        close_adapters(adapters.values())
        scorer.close()
    summary = summarize(records, configs)
    return {
        "configs": summary,
        "differences": differences(records, configs),
        "by_db": by_db(records, configs),
        "clarification": clarification(records, configs),
        "by_confidence": by_confidence(records, configs),
        "questions": total,
        "databases": sorted({q["db_id"] for q in questions}),
        "resumed_records": skipped,
        "seconds": round(time.perf_counter() - t0, 1),
        "model": minfo,
        "max_iterations": max_iterations,
        "records": records,
    }


def _one(
    q: dict[str, Any],
    config: str,
    adapter,
    client,
    dbp: Path,
    scorer,
    model_name: str,
    *,
    max_iterations: int,
    settings,
    examples=None,
) -> dict[str, Any]:
    start = time.perf_counter()
    try:
        if config == "single-shot":
            r = single_shot(
                q["question"],
                adapter,
                client,
                connection=q["db_id"],
                max_iterations=max_iterations,
                settings=settings,
            )
        else:
            chat = getattr(client, "model", client)
            apart = config == "one-by-one" and getattr(chat, "parallel", False)
            if apart:
                chat.parallel = False
            try:
                r = ask_agent(
                    q["question"],
                    adapter,
                    client,
                    connection=q["db_id"],
                    no_review=config == "no-review",
                    max_iterations=max_iterations,
                    settings=settings,
                    examples=examples,
                )
            finally:
                if apart:
                    chat.parallel = True
        exception = None
    except Exception as exc:  # one broken question must not end an hour-long run
        r = {
            "pred_sql": None,
            "status": "error",
            "stop_reason": "exception",
            "attempts": 0,
            "attempts_ok": 0,
            "model_error": None,
            "llm_calls": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "model_seconds": 0.0,
        }
        exception = f"{type(exc).__name__}: {exc}"
    seconds = time.perf_counter() - start
    asked = r["status"] == "needs_clarification"
    if q.get("ambiguous"):
        # the gold answer is a question back; SQL, however good, is a guess
        correct, correct_dd, error = asked, asked, None
        reason = None if asked else "answered without asking back"
    else:
        m = scorer.evaluate(dbp, q["query"], r["pred_sql"])
        m_dd = scorer.evaluate(dbp, q["query"], r["pred_sql"], keep_distinct=False)
        correct, correct_dd, error, reason = m.correct, m_dd.correct, m.error, m.reason
    rec = {
        "index": q["index"],
        "db_id": q["db_id"],
        "question": q["question"],
        "gold": q["query"],
        "config": config,
        "model": model_name,
        **r,
        "seconds": round(seconds, 3),
        "correct": correct,
        "correct_distinct_dropped": correct_dd,
        "pred_error": error,
        "mismatch": reason,
        "ambiguous": bool(q.get("ambiguous")),
        "asked_back": asked,
    }
    if exception:
        rec["exception"] = exception
    return rec


# ---------------------------------------------------------------------------
# summaries
# ---------------------------------------------------------------------------


def _mean(values: list[float]) -> float | None:
    return round(statistics.fmean(values), 3) if values else None


def summarize(records: Sequence[dict[str, Any]], configs: Sequence[str]) -> dict[str, dict[str, Any]]:
    out = {}
    for config in configs:
        rs = [r for r in records if r["config"] == config and not r.get("ambiguous")]
        n = len(rs)
        correct = sum(1 for r in rs if r["correct"])
        out[config] = {
            "n": n,
            "correct": correct,
            "ex": round(100.0 * correct / n, 2) if n else 0.0,
            "ex_distinct_dropped": round(
                100.0 * sum(1 for r in rs if r.get("correct_distinct_dropped")) / n, 2
            )
            if n
            else 0.0,
            "llm_calls_mean": _mean([r["llm_calls"] for r in rs]),
            "replies_mean": _mean([r["llm_calls"] + r.get("replies_beside", 0) for r in rs]),
            "prompt_tokens_mean": _mean([r["prompt_tokens"] for r in rs]),
            "completion_tokens_mean": _mean([r["completion_tokens"] for r in rs]),
            "seconds_mean": _mean([r["seconds"] for r in rs]),
            "seconds_median": round(statistics.median([r["seconds"] for r in rs]), 3) if rs else None,
            "model_seconds_mean": _mean([r.get("model_seconds") or 0.0 for r in rs]),
            "stop_reasons": dict(Counter(r["stop_reason"] for r in rs).most_common()),
            "statuses": dict(Counter(r["status"] for r in rs).most_common()),
            "ran": sum(1 for r in rs if r["pred_sql"] and not r.get("pred_error")),
            "exceptions": sum(1 for r in rs if r.get("exception")),
            "asked_back": sum(1 for r in rs if r.get("asked_back")),
        }
    return out


def clarification(records: Sequence[dict[str, Any]], configs: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per configuration: how many of the ambiguous questions got a question back, and how
    many of the answerable ones did (needlessly)."""
    out = {}
    for config in configs:
        amb = [r for r in records if r["config"] == config and r.get("ambiguous")]
        if not amb:
            continue
        rest = [r for r in records if r["config"] == config and not r.get("ambiguous")]
        asked = sum(1 for r in amb if r.get("asked_back"))
        out[config] = {
            "ambiguous": len(amb),
            "asked": asked,
            "rate": round(100.0 * asked / len(amb), 1),
            "answerable": len(rest),
            "asked_needlessly": sum(1 for r in rest if r.get("asked_back")),
        }
    return out


def differences(records: Sequence[dict[str, Any]], configs: Sequence[str]) -> dict[str, dict[str, Any]]:
    """EX of one configuration minus another's, in points, over the questions both
    answered, with how many questions each got right that the other did not."""
    by = {(r["index"], r["config"]): r["correct"] for r in records if not r.get("ambiguous")}
    out = {}
    for a, b in (
        ("agent", "single-shot"),
        ("agent+memory", "single-shot"),
        ("agent+memory", "agent"),
        ("no-review", "single-shot"),
        ("agent", "no-review"),
        ("agent", "one-by-one"),
    ):
        if a not in configs or b not in configs:
            continue
        both = sorted({i for i, cf in by if cf == a} & {i for i, cf in by if cf == b})
        if not both:
            continue
        ca = sum(by[(i, a)] for i in both)
        cb = sum(by[(i, b)] for i in both)
        out[f"{a} − {b}"] = {
            "points": round(100.0 * (ca - cb) / len(both), 2),
            "questions": len(both),
            "only_first_right": sum(1 for i in both if by[(i, a)] and not by[(i, b)]),
            "only_second_right": sum(1 for i in both if by[(i, b)] and not by[(i, a)]),
        }
    return out


def by_confidence(records: Sequence[dict[str, Any]], configs: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per configuration whose answers carry a confidence: for each level, how many
    answerable questions got it and how many of those were right (EX per band)."""
    out: dict[str, dict[str, Any]] = {}
    for config in configs:
        rs = [r for r in records if r["config"] == config and not r.get("ambiguous")]
        if not any(r.get("confidence") for r in rs):
            continue
        bands: dict[str, Any] = {}
        for level in ("high", "medium", "low", None):
            br = [r for r in rs if r.get("confidence") == level]
            right = sum(1 for r in br if r["correct"])
            bands[level or "none"] = {
                "n": len(br),
                "correct": right,
                "ex": round(100.0 * right / len(br), 1) if br else None,
            }
        bands["calibration_error"] = calibration_error(rs)
        out[config] = bands
    return out


def calibration_error(records: Sequence[dict[str, Any]], bins: int = 10) -> float | None:
    """The expected calibration error of answers' confidence scores
    (``AskResult.confidence["score"]``, 0..1; an answer without one counts as 0): the
    answers put in ``bins`` equal bins by score, then the mean over bins, weighted by
    their answers, of |share right − mean score|, in points (0: a score of 0.8 is right
    80% of the time).  None without answers."""
    if not records:
        return None
    groups: dict[int, list[tuple[float, bool]]] = {}
    for r in records:
        score = float(r.get("confidence_score") or 0.0)
        groups.setdefault(min(bins - 1, int(score * bins)), []).append((score, bool(r["correct"])))
    total = sum(len(g) for g in groups.values())
    err = sum(
        len(g) / total * abs(sum(ok for _, ok in g) / len(g) - sum(s for s, _ in g) / len(g))
        for g in groups.values()
    )
    return round(100.0 * err, 1)


def by_db(records: Sequence[dict[str, Any]], configs: Sequence[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for db in sorted({r["db_id"] for r in records}):
        rs = [r for r in records if r["db_id"] == db and not r.get("ambiguous")]
        row: dict[str, Any] = {"questions": len({r["index"] for r in rs})}
        for config in configs:
            cr = [r for r in rs if r["config"] == config]
            row[config] = round(100.0 * sum(r["correct"] for r in cr) / len(cr), 1) if cr else None
        out[db] = row
    return out


# ---------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------

SHOWN_SETTINGS = (
    "rendering",
    "sample_values",
    "value_hints",
    "preview_rows",
    "retry_drafts",
    "retry_temperature",
    "first_drafts",
    "first_temperature",
    "memory_when_unsure",
    "correct_findings",
)


def agent_settings() -> dict[str, Any]:
    """The agent's default settings (what every question of the run used), with the answer
    rewrites that were on (``rewrites``: the names of :data:`sqlnb.agent.repairs.REWRITES`
    not in ``disabled_rewrites``)."""
    import dataclasses

    from sqlnb.agent.repairs import REWRITE_NAMES
    from sqlnb.agent.settings import AgentSettings

    settings = unexplained(AgentSettings())
    out = dataclasses.asdict(settings)
    out["disabled_rewrites"] = sorted(settings.disabled_rewrites)
    out["rewrites"] = [n for n in REWRITE_NAMES if settings.rewrite_on(n)]
    return out


def close_adapters(adapters: Iterable[Any]) -> None:
    """Close each of a run's connections, whatever closing one of them raises."""
    for a in adapters:
        try:
            a.close()
        except Exception:
            pass


def git_commit() -> str | None:
    sha = (c.git("rev-parse", "--short=12", "HEAD", timeout=10) or "").strip()
    status = c.git("--no-optional-locks", "status", "--porcelain", "--untracked-files=no", timeout=10)
    if not sha or status is None:
        return None
    return sha + (" (with uncommitted changes)" if status.strip() else "")


def _num(v: float | None, digits: int = 1) -> str:
    return "—" if v is None else f"{v:,.{digits}f}"


def _ranges(ids: Sequence[int]) -> str:
    """1, 2, 3, 5 → "1–3, 5"."""
    spans: list[tuple[int, int]] = []
    for i in sorted(ids):
        if spans and spans[-1][1] == i - 1:
            spans[-1] = (spans[-1][0], i)
        else:
            spans.append((i, i))
    return ", ".join(f"{a}" if a == b else f"{a}–{b}" for a, b in spans)


def markdown(data: dict[str, Any]) -> str:
    info, m = data["machine"], data["model"]
    configs = data["configs"]
    model_bits = [f"`{m.get('spec') or m['name']}` ({m['name']})"]
    if m.get("model_path"):
        model_bits.append(f"file {m['model_path']}")
    for attr, label in (
        ("n_threads", "threads"),
        ("n_ctx", "n_ctx"),
        ("temperature", "temperature"),
        ("max_tokens", "max_tokens"),
    ):
        if attr in m:
            model_bits.append(f"{label} {m[attr]}")
    sample = data.get("dataset") == "sample"
    if sample:
        which = "; ".join(
            f"{e}: {_ranges(ids)}"
            for e, ids in (data.get("question_ids_by_engine") or {"all": data["question_ids"]}).items()
        )
        intro = (
            f"{data['questions']} asks: questions of `benchmarks/sample/questions.json` "
            f"({'all 40 on each engine' if data.get('all_questions') else 'a subset'} — {which}) "
            f"over the sample database of `sqlnb demo`, on {' and '.join(data['databases'])} "
            "(each engine with its own gold SQL, scored on that engine); every configuration "
            "answers the same questions with the same model in one run."
        )
    else:
        intro = (
            f"{data['questions']} questions over {len(data['databases'])} SQLite database"
            f"{'s' if len(data['databases']) != 1 else ''} ({', '.join(data['databases'])})"
            + (f", questions {data['offset']}…" if data.get("offset") else "")
            + "; every configuration answers the same questions with the same model in one run."
        )
    lines = [
        f"# accuracy: execution accuracy on {data['spider_dir_name']}",
        "",
        *([f"Note: {data['note']}", ""] if data.get("note") else []),
        intro,
        "",
        "- Model: " + ", ".join(model_bits),
        f"- Date: {info['date']}",
        f"- Machine: {info.get('cpu', '?')}, {info.get('cpu_count')} cores, {info.get('memory_gib', '?')} GiB RAM; "
        f"{info['os']}; Python {info['python']}",
        f"- Load average at start: {info.get('load_average')}, at end: {data.get('load_after')}",
        f"- Commit: {data.get('commit') or '?'}",
        "- Packages: "
        + ", ".join(f"{k} {v}" for k, v in data.get("packages", {}).items() if v != "not installed"),
        f"- Agent: max_iterations {data['max_iterations']}, default AgentSettings ("
        + ", ".join(
            f"{k} {v}"
            for k, v in (data.get("agent_settings") or agent_settings()).items()
            if k in SHOWN_SETTINGS
        )
        + "); a fresh Agent per question",
        "- Scoring: execution match (`benchmarks/spider_eval.py`, after test-suite-sql-eval): result "
        "multisets, order only under a top-level ORDER BY, column permutations allowed, floats to 6 "
        "significant digits, DISTINCT kept",
        f"- Wall time of the run: {data['seconds'] / 60:.1f} min"
        + (
            f" ({data['resumed_records']} results taken from an earlier, interrupted run)"
            if data.get("resumed_records")
            else ""
        ),
        "",
        "## Results",
        "",
    ]
    rows = []
    for name, s in configs.items():
        stops = ", ".join(f"{k} {v}" for k, v in s["stop_reasons"].items())
        rows.append(
            [
                CONFIG_LABELS.get(name, name),
                f"**{s['ex']:.1f}%**",
                f"{s['correct']}/{s['n']}",
                _num(s["llm_calls_mean"], 2),
                _num(s.get("replies_mean"), 2),
                _num(s["prompt_tokens_mean"], 0),
                _num(s["completion_tokens_mean"], 0),
                _num(s["seconds_mean"], 1),
                stops,
            ]
        )
    lines.append(
        c.table(
            [
                "Configuration",
                "EX",
                "Correct",
                "LLM calls / q",
                "Replies / q",
                "Prompt tokens / q",
                "Completion tokens / q",
                "Seconds / q",
                "Stop reasons",
            ],
            rows,
        )
    )
    lines.append("")
    for name, d in data["differences"].items():
        a, b = name.split(" − ")
        lines.append(
            f"- {name}: **{d['points']:+.1f} points** over {d['questions']} questions "
            f"({d['only_first_right']} right only with {a}, {d['only_second_right']} right only with {b})"
        )
    lines += [
        "",
        "Seconds per question are wall time, the model's included (its share is "
        "`model_seconds_mean` in the JSON). The configurations take turns going first on each "
        "question, since a local model's prompt-prefix cache makes a repeated prompt cheaper. "
        "LLM calls and tokens are per question, all calls of a question summed.",
        "",
    ]
    clar = data.get("clarification") or {}
    if clar:
        lines += [
            "## Ambiguous questions: does it ask back?",
            "",
            "The ambiguous questions (marked in `questions.json`) are left out of EX above; their "
            "gold answer is a clarifying question (status `needs_clarification`).",
            "",
            c.table(
                ["Configuration", "Asked back", "Rate", "Answerable questions asked back (needlessly)"],
                [
                    [
                        n,
                        f"{v['asked']}/{v['ambiguous']}",
                        f"**{v['rate']:.0f}%**",
                        f"{v['asked_needlessly']}/{v['answerable']}",
                    ]
                    for n, v in clar.items()
                ],
            ),
            "",
        ]
    bands = data.get("by_confidence") or {}
    if bands:
        lines += [
            "## EX by confidence",
            "",
            "Each answer's confidence (`AskResult.confidence`, from evidence: drafts that agree, "
            "empty or zeros-only results, repeated rows, replaced values, the findings of the "
            'answer checks); answerable questions only. "none": no SQL to rate. High promises '
            "at least 95% right. Calibration error: the answers in ten bins by confidence score, "
            "the mean over bins (weighted by answers) of |share right − mean score|.",
            "",
        ]
        head = ["Configuration"] + [f"{lvl} (n / EX)" for lvl in ("high", "medium", "low", "none")]
        head.append("calibration error")
        rows = []
        for name, b in bands.items():
            err = b.get("calibration_error")
            rows.append(
                [name]
                + [
                    f"{b[lvl]['n']} / {b[lvl]['ex']:.1f}%" if b[lvl]["n"] else "0 / —"
                    for lvl in ("high", "medium", "low", "none")
                ]
                + [f"{err:.1f} points" if err is not None else "—"]
            )
        lines += [c.table(head, rows), ""]
    if len(data["by_db"]) > 1:
        lines += ["## EX by engine" if sample else "## EX by database", ""]
        names = list(configs)
        lines.append(
            c.table(
                ["Database", "Questions", *names],
                [
                    [db, str(r["questions"]), *(f"{r[n]:.1f}%" if r[n] is not None else "—" for n in names)]
                    for db, r in data["by_db"].items()
                ],
            )
        )
        lines.append("")
    lines += [
        "## With DISTINCT dropped",
        "",
        "The official scorer by default removes every DISTINCT from both queries; scored that way:",
        "",
        c.table(
            ["Configuration", "EX (DISTINCT dropped)"],
            [[n, f"{s['ex_distinct_dropped']:.1f}%"] for n, s in configs.items()],
        ),
        "",
    ]
    return "\n".join(lines)


def run(args, log=print) -> dict[str, Any]:
    """The ``accuracy`` benchmark of ``benchmarks/run.py``."""
    dataset = getattr(args, "dataset", "spider") or "spider"
    databases = None
    db_ids = None
    ids = [int(x) for x in (getattr(args, "ids", None) or "").split(",") if x.strip()] or None
    if dataset == "sample":
        engines = [e for e in (args.engines or SAMPLE_ENGINES) if e in SAMPLE_ENGINES]
        if not engines:
            raise ValueError(f"--dataset sample runs on {', '.join(SAMPLE_ENGINES)}: name one in --engines")
        spider_dir = SAMPLE_DIR
        questions = load_sample_questions(engines, offset=args.offset, limit=args.limit, ids=ids)
        t = time.perf_counter()
        databases = {
            k: v for k, v in prepare_sample_databases(args.data_dir, engines).items() if k in engines
        }
        log(
            f"accuracy: sample database built in {time.perf_counter() - t:.1f} s: "
            + ", ".join(str(p) for p in databases.values())
        )
    else:
        spider_dir = build_unseen(args.data_dir) if dataset == "unseen" else Path(args.spider_dir).resolve()
        db_ids = [d.strip() for d in (args.db_ids or "").split(",") if d.strip()] or None
        questions = load_questions(
            spider_dir, db_ids=db_ids, offset=args.offset, limit=args.limit, indexes=ids
        )
    configs = args.configs
    out_name = args.out
    if dataset != "spider" and out_name == "accuracy":
        out_name = args.out = f"accuracy_{dataset}"  # never overwrite the Spider report
    jsonl = Path(args.jsonl) if args.jsonl else Path(args.data_dir) / f"{out_name}.jsonl"
    if jsonl.exists() and not args.resume and jsonl.stat().st_size:
        prev = jsonl.with_name(jsonl.name + ".prev")
        jsonl.replace(prev)
        log(f"accuracy: moved the earlier {jsonl.name} to {prev.name} (use --resume to continue a run)")
    info = c.machine_info()
    commit = git_commit()  # the code the run starts with (later commits are not what ran)
    log(
        f"accuracy: {len(questions)} questions from {spider_dir}, configurations {', '.join(configs)}, "
        f"model {args.model}; results as they come in {jsonl}"
    )
    t = time.perf_counter()
    client = make_client(args.model)
    if getattr(args, "replies", None):
        from replies import ReplyStore

        client = ReplyStore(client, args.replies, live=not getattr(args, "replay_only", False))
        log(f"  stored replies: {len(client)} in {args.replies}")
    log(f"  model ready in {time.perf_counter() - t:.1f} s: {model_info(client, args.model)}")
    if dataset == "sample":
        pool = load_sample_questions(list(databases))
    else:
        pool = load_questions(spider_dir, db_ids=sorted({q["db_id"] for q in questions}))
    data = run_accuracy(
        questions,
        spider_dir,
        client,
        configs,
        max_iterations=args.max_iterations,
        jsonl=jsonl,
        resume=args.resume,
        databases=databases,
        example_pool=pool,
        log=log,
    )
    data["model"]["spec"] = args.model
    if getattr(args, "replies", None):
        data["replies"] = {
            "file": str(args.replies),
            "hits": client.hits,
            "misses": client.misses,
            "replay_only": bool(getattr(args, "replay_only", False)),
        }
    if dataset == "sample":
        all_ids = [q["id"] for q in json.loads((SAMPLE_DIR / "questions.json").read_text(encoding="utf-8"))]
        qids = sorted({q["id"] for q in questions})
        by_engine = {
            e: ids for e in databases if (ids := sorted(q["id"] for q in questions if q["db_id"] == e))
        }
        data.update(
            {
                "dataset": "sample",
                "question_ids": qids,
                "question_ids_by_engine": by_engine,
                "all_questions": all(ids == all_ids for ids in by_engine.values()),
                "spider_dir_name": "the sample database (benchmarks/sample)",
            }
        )
    data.update(
        {
            "benchmark": "accuracy",
            "spider_dir": str(spider_dir),
            "spider_dir_name": data.get("spider_dir_name") or spider_dir.name,
            "offset": args.offset,
            "limit": args.limit,
            "db_ids": db_ids,
            "jsonl": str(jsonl),
            "note": getattr(args, "note", None),
            "commit": commit,
            "machine": info,
            "load_after": c.load_average(),
            "threads_env": os.environ.get("SQLNB_LLAMA_THREADS"),
            "packages": c.package_versions(
                ["sqlnb", "llama-cpp-python", "langgraph", "langchain-core", "sqlglot"]
            ),
            "finished": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
            "agent_settings": agent_settings(),
        }
    )
    data.setdefault("dataset", dataset)
    c.write_results(out_name, args.results_dir, markdown(data), data)
    for name, s in data["configs"].items():
        log(
            f"  {name:12s} EX {s['ex']:5.1f}% ({s['correct']}/{s['n']}), {s['llm_calls_mean']} calls/q, "
            f"{s['seconds_mean']} s/q, stops {s['stop_reasons']}"
        )
    for name, d in data["differences"].items():
        log(f"  {name}: {d['points']:+.1f} points")
    for name, v in data.get("clarification", {}).items():
        log(
            f"  {name}: asked back on {v['asked']}/{v['ambiguous']} ambiguous questions, "
            f"{v['asked_needlessly']}/{v['answerable']} answerable ones"
        )
    return data
