"""Smoke test of benchmarks/: each benchmark runs at tiny size and writes its results.

No timing assertions: only that the scripts run end to end and report a number for every
engine and tool.  Needs the ``bench`` extra (JupySQL, SQLAlchemy, duckdb-engine, psycopg2,
psutil) and the PostgreSQL server of ``scripts/services.sh``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

# the bench extra (installed by scripts/test): a missing one fails here, loudly
import duckdb_engine  # noqa: F401
import psutil  # noqa: F401
import psycopg2  # noqa: F401
import pytest
import sql  # noqa: F401  (JupySQL)
import sqlalchemy  # noqa: F401

REPO = Path(__file__).resolve().parent.parent
ROWS, TABLES = 2000, 20
ENGINES = ("duckdb", "sqlite", "postgresql")


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("bench-data")


def run_benchmark(name: str, results: Path, data_dir: Path) -> dict:
    cmd = [
        sys.executable,
        str(REPO / "benchmarks" / "run.py"),
        name,
        "--rows",
        str(ROWS),
        "--tables",
        str(TABLES),
        "--repeat",
        "1",
        "--engines",
        ",".join(ENGINES),
        "--results-dir",
        str(results),
        "--data-dir",
        str(data_dir),
        "--timeout",
        "240",
    ]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=540)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    md, js = results / f"{name}.md", results / f"{name}.json"
    assert md.is_file() and js.is_file(), proc.stdout[-3000:]
    text = md.read_text()
    assert "error" not in text.lower(), text
    assert "Machine:" in text
    return json.loads(js.read_text())


def is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0


@pytest.mark.timeout(600)
def test_calibration_error_weighs_each_bin_by_its_answers():
    import accuracy

    rs = [{"confidence_score": 0.95, "correct": True}] * 9 + [{"confidence_score": 0.95, "correct": False}]
    assert accuracy.calibration_error(rs) == 5.0  # 90% right at 0.95
    rs += [{"confidence_score": 0.2, "correct": False}] * 10  # 0% right at 0.2: 20 points off
    assert accuracy.calibration_error(rs) == 12.5
    assert accuracy.calibration_error([{"confidence_score": None, "correct": False}]) == 0.0
    assert accuracy.calibration_error([]) is None


def test_fetch(tmp_path, data_dir):
    data = run_benchmark("fetch", tmp_path, data_dir)
    assert data["rows"] == ROWS
    assert set(data["engines"]) == set(ENGINES)
    for engine, e in data["engines"].items():
        for tool in ("sqlnb", "jupysql", "read_sql"):
            t = e["tools"][tool]
            assert not t["errors"], (engine, tool, t["errors"])
            assert is_number(t["median_s"]), (engine, tool)
            assert [r["rows"] for r in t["runs"]] == [ROWS], (engine, tool)
            assert len(t["dtypes"]) == 5
        assert is_number(e["jupysql_over_sqlnb"]) and is_number(e["read_sql_over_sqlnb"])
    text = (tmp_path / "fetch.md").read_text()
    for label in ("PostgreSQL", "DuckDB", "SQLite", "JupySQL / sqlnb", "read_sql / sqlnb"):
        assert label in text


@pytest.mark.timeout(600)
def test_memory(tmp_path, data_dir):
    data = run_benchmark("memory", tmp_path, data_dir)
    assert set(data["engines"]) == {"postgresql", "duckdb"}
    for engine, e in data["engines"].items():
        for tool in ("sqlnb", "jupysql"):
            r = e["reruns"][tool]
            assert "error" not in r, (engine, tool, r)
            assert len(r["runs"]) == data["reruns"] == 5
            assert all(is_number(x["rss"]) and x["rss"] > 0 for x in r["runs"])
            assert isinstance(r["growth"], int)
            assert r["rows"] == ROWS
        for key in ("sqlnb", "jupysql_all", "jupysql_default"):
            d = e["display"][key]
            assert "error" not in d, (engine, key, d)
            assert is_number(d["html_bytes"]) and d["html_bytes"] > 0
        # sqlnb renders at most its display limit; JupySQL with displaylimit = 0 renders all rows
        assert e["display"]["jupysql_all"]["html_bytes"] > e["display"]["sqlnb"]["html_bytes"]
        assert e["display"]["sqlnb"]["rows_fetched"] == ROWS
    text = (tmp_path / "memory.md").read_text()
    assert "Growth run 1 → 5" in text and "HTML bytes" in text


@pytest.mark.timeout(600)
def test_catalog(tmp_path, data_dir):
    data = run_benchmark("catalog", tmp_path, data_dir)
    assert data["tables"] == TABLES
    expected = data["expected"]
    assert expected["tables"] == TABLES and expected["columns"] == TABLES * 20
    for tool in ("sqlnb", "sqla_reflect", "sqla_multi", "sqla_multi_full"):
        t = data["tools"][tool]
        assert not t["errors"], (tool, t["errors"])
        assert is_number(t["median_s"]), tool
        assert t["counts"]["tables"] == TABLES and t["counts"]["columns"] == TABLES * 20, tool
        assert t["counts"]["foreign_keys"] == expected["foreign_keys"], tool
    assert all(v["ok"] for v in data["complete"].values()), data["complete"]
    assert all(is_number(v) for v in data["ratios"].values())
    assert "complete: **yes**" in (tmp_path / "catalog.md").read_text()


# ---------------------------------------------------------------------------
# accuracy (execution accuracy on a Spider-layout directory) and overhead
# ---------------------------------------------------------------------------

sys.path.insert(0, str(REPO / "benchmarks"))

import re  # noqa: E402
import sqlite3  # noqa: E402
from typing import Any  # noqa: E402

from langchain_core.language_models import BaseChatModel  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402
from pydantic import Field  # noqa: E402

SPIDER_QUESTIONS = [
    {"db_id": "music", "question": "How many singers are there?", "query": "SELECT count(*) FROM singer"},
    {
        "db_id": "music",
        "question": "List the names of singers from oldest to youngest.",
        "query": "SELECT name FROM singer ORDER BY age DESC",
    },
    {
        "db_id": "zoo",
        "question": "What are the names and species of all animals?",
        "query": "SELECT name, species FROM animal",
    },
]


@pytest.fixture
def spider_dir(tmp_path) -> Path:
    """A Spider-layout directory: questions.json + database/<db_id>/<db_id>.sqlite."""
    root = tmp_path / "spider"
    scripts = {
        "music": "CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, country TEXT, age INTEGER);"
        "INSERT INTO singer VALUES (1, 'Ann', 'France', 52), (2, 'Bob', 'Peru', 31), (3, 'Cid', 'Chad', 44);",
        "zoo": "CREATE TABLE animal (id INTEGER PRIMARY KEY, name TEXT, species TEXT);"
        "INSERT INTO animal VALUES (1, 'Rex', 'dog'), (2, 'Tom', 'cat'), (3, 'Kit', 'cat');",
    }
    for db_id, script in scripts.items():
        (root / "database" / db_id).mkdir(parents=True)
        con = sqlite3.connect(root / "database" / db_id / f"{db_id}.sqlite")
        con.executescript(script)
        con.commit()
        con.close()
    (root / "questions.json").write_text(json.dumps(SPIDER_QUESTIONS))
    return root


class QuestionOracle(BaseChatModel):
    """Finds the question in the prompt; the first call of a turn gets ``answers[question]``
    in a ```sql block, a call that already shows attempts gets FINAL."""

    answers: dict[str, str]
    prompts: list[list[str]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "test-oracle"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        self.prompts.append([str(m.content) for m in messages])
        text = str(messages[-1].content)
        question = re.findall(r"^Question: (.*)$", text, re.M)[-1].strip()
        reply = "FINAL" if "Your attempts so far" in text else f"```sql\n{self.answers[question]}\n```"
        usage = {
            "input_tokens": len(text) // 4,
            "output_tokens": len(reply) // 4,
            "total_tokens": len(text) // 4 + len(reply) // 4,
        }
        return ChatResult(
            generations=[ChatGeneration(message=AIMessage(content=reply, usage_metadata=usage))]
        )


def test_accuracy_questions_by_position(spider_dir):
    """--ids for spider and unseen: the questions at those positions (the reports' #N),
    with the other filters; a position past the end is an error, not an empty run."""
    import accuracy

    every = accuracy.load_questions(spider_dir)
    picked = accuracy.load_questions(spider_dir, indexes=[2, 0])
    assert [q["index"] for q in picked] == [0, 2]
    assert [q["question"] for q in picked] == [every[0]["question"], every[2]["question"]]
    db = every[2]["db_id"]
    assert [q["index"] for q in accuracy.load_questions(spider_dir, indexes=[0, 2], db_ids=[db])] == [
        q["index"] for q in every if q["db_id"] == db and q["index"] in (0, 2)
    ]
    with pytest.raises(ValueError, match=r"no question #7"):
        accuracy.load_questions(spider_dir, indexes=[1, 7])


def test_accuracy_gold_oracle_scores_100(spider_dir, tmp_path):
    import accuracy

    questions = accuracy.load_questions(spider_dir)
    model = QuestionOracle(answers={q["question"]: q["query"] for q in SPIDER_QUESTIONS})
    jsonl = tmp_path / "acc.jsonl"
    data = accuracy.run_accuracy(
        questions, spider_dir, model, accuracy.CONFIGS, jsonl=jsonl, log=lambda msg: None
    )
    s = data["configs"]
    assert set(s) == {"agent", "agent+memory", "no-review", "one-by-one", "single-shot"}
    for name, summary in s.items():
        assert (summary["n"], summary["correct"], summary["ex"]) == (3, 3, 100.0), (name, summary)
    assert s["agent"]["llm_calls_mean"] == 2 and s["agent"]["stop_reasons"] == {"finalized": 3}
    assert s["agent+memory"]["llm_calls_mean"] == 2
    assert s["one-by-one"]["llm_calls_mean"] == 2  # a scripted model: the agent's own calls
    # confidence per band: a model that does not sample, reviewed: medium
    assert data["by_confidence"]["agent"]["medium"] == {"n": 3, "correct": 3, "ex": 100.0}
    # every answer scored 1.0 (the one draft's result) and right: no calibration error
    assert data["by_confidence"]["agent"]["calibration_error"] == 0.0
    assert s["no-review"]["llm_calls_mean"] == 1 and s["no-review"]["stop_reasons"] == {"executed": 3}
    assert s["single-shot"]["llm_calls_mean"] == 1 and s["single-shot"]["stop_reasons"] == {"single_shot": 3}
    assert s["agent"]["prompt_tokens_mean"] > 0 and s["agent"]["completion_tokens_mean"] > 0
    assert data["differences"]["agent − single-shot"]["points"] == 0
    assert set(data["by_db"]) == {"music", "zoo"}
    lines = [json.loads(x) for x in jsonl.read_text().splitlines()]
    assert len(lines) == 15 and all(r["correct"] for r in lines)
    # agent+memory: the other question of the same database as the example, none for zoo's
    # only question; the plain agent never sees one
    examples = {r["question"]: r["examples"] for r in lines if r["config"] == "agent+memory"}
    assert examples == {
        SPIDER_QUESTIONS[0]["question"]: [1],
        SPIDER_QUESTIONS[1]["question"]: [0],
        SPIDER_QUESTIONS[2]["question"]: [],
    }
    assert all(r["examples"] == [] for r in lines if r["config"] == "agent")
    shown = [p[-1] for p in model.prompts if "answered before" in p[-1]]
    assert len(shown) == 2 * 2 and all(SPIDER_QUESTIONS[2]["question"] not in t for t in shown)
    assert {
        "pred_sql",
        "status",
        "stop_reason",
        "correct",
        "llm_calls",
        "prompt_tokens",
        "completion_tokens",
        "seconds",
    } <= set(lines[0])
    # single-shot sends exactly what the agent's first generate call sends
    for q in SPIDER_QUESTIONS:
        first = {
            tuple(p)
            for p in model.prompts
            if f"Question: {q['question']}" in p[-1]
            and "Your attempts so far" not in p[-1]
            and "answered before" not in p[-1]
        }
        assert len(first) == 1, q["question"]
    assert len(model.prompts) == 3 * (2 + 2 + 1 + 2 + 1)


def test_memory_examples_leave_out_the_question_and_its_gold_query():
    import accuracy

    pool = [
        {
            "db_id": "d",
            "index": 0,
            "question": "How many singers are there?",
            "query": "SELECT count(*) FROM singer",
        },
        {
            "db_id": "d",
            "index": 1,
            "question": "Count the singers.",
            "query": "select COUNT(*)  from singer",
        },  # the same query: left out
        {
            "db_id": "d",
            "index": 2,
            "question": "How many singers are from France?",
            "query": "SELECT count(*) FROM singer WHERE country = 'France'",
        },
        {
            "db_id": "e",
            "index": 3,
            "question": "How many singers are there in all?",
            "query": "SELECT 1",
        },  # another database
        {"db_id": "d", "index": 4, "question": "Which singers are there?", "query": None, "ambiguous": True},
    ]
    got = accuracy.memory_examples(pool[0], pool, "sqlite")
    assert [e["index"] for e in got] == [2]
    # an ambiguous question (no gold query) gets the answerable ones of its database
    got = accuracy.memory_examples(pool[4], pool, "sqlite")
    assert sorted(e["index"] for e in got) == [0, 1, 2]


def test_accuracy_wrong_sql_scores_0_and_resumes(spider_dir, tmp_path):
    import accuracy

    questions = accuracy.load_questions(spider_dir)
    wrong = QuestionOracle(answers={q["question"]: "SELECT 'nothing like it' AS x" for q in SPIDER_QUESTIONS})
    jsonl = tmp_path / "acc.jsonl"
    data = accuracy.run_accuracy(questions[:2], spider_dir, wrong, jsonl=jsonl, log=lambda msg: None)
    for name, summary in data["configs"].items():
        assert (summary["n"], summary["correct"], summary["ex"]) == (2, 0, 0.0), (name, summary)
    # resume: the pairs already in the file are not asked again, only the new question
    calls_before = len(wrong.prompts)
    logs: list[str] = []
    data = accuracy.run_accuracy(questions, spider_dir, wrong, jsonl=jsonl, resume=True, log=logs.append)
    assert data["resumed_records"] == 10
    assert len(wrong.prompts) - calls_before == 2 + 2 + 1 + 2 + 1
    assert all(s["n"] == 3 and s["ex"] == 0.0 for s in data["configs"].values())
    assert len(jsonl.read_text().splitlines()) == 15
    assert logs[-1].startswith("[3/3] zoo #2")


def test_reply_store_records_a_run_then_replays_it_without_the_model(spider_dir, tmp_path):
    """benchmarks/replies.py: every call of a run is stored as it comes; a replay-only run
    of the same code asks the model nothing and gives the same answers; a call the store
    lacks fails in replay-only mode and is asked and kept with a live model."""
    import accuracy
    from langchain_core.messages import HumanMessage
    from replies import ReplyMissing, ReplyStore

    questions = accuracy.load_questions(spider_dir)
    model = QuestionOracle(answers={q["question"]: q["query"] for q in SPIDER_QUESTIONS})
    path = tmp_path / "replies.jsonl"
    store = ReplyStore(accuracy.make_client(model), path)
    first = accuracy.run_accuracy(
        questions, spider_dir, store, ["agent", "single-shot"], log=lambda msg: None
    )
    stored = path.read_text().splitlines()
    # single-shot sends what the agent's first call sends: answered from the store
    assert store.misses == len(stored) == len({tuple(p) for p in model.prompts}) > 0
    assert store.hits == len(model.prompts) - len(stored) + 3

    class Refuses(QuestionOracle):
        def _generate(self, messages, stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
            raise AssertionError("replay-only must not call the model")

    replay = ReplyStore(accuracy.make_client(Refuses(answers={})), path, live=False)
    second = accuracy.run_accuracy(
        questions, spider_dir, replay, ["agent", "single-shot"], log=lambda msg: None
    )
    assert replay.misses == 0 and replay.hits == store.hits + store.misses
    key = [(r["index"], r["config"]) for r in first["records"]]
    assert key == [(r["index"], r["config"]) for r in second["records"]]
    assert [r["pred_sql"] for r in first["records"]] == [r["pred_sql"] for r in second["records"]]
    assert [r["correct"] for r in second["records"]] == [True] * 6
    with pytest.raises(ReplyMissing):
        replay.invoke([HumanMessage("a prompt never asked")])
    live = ReplyStore(accuracy.make_client(QuestionOracle(answers={"x": "SELECT 1"})), path)
    text, _ = live.invoke([HumanMessage("Question: x")])
    assert "SELECT 1" in text and live.misses == 1
    assert len(path.read_text().splitlines()) == len(stored) + 1
    again = ReplyStore(accuracy.make_client(Refuses(answers={})), path, live=False)
    assert again.invoke([HumanMessage("Question: x")])[0] == text and again.hits == 1


def test_accuracy_cli(spider_dir, tmp_path):
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(["```sql\nSELECT count(*) FROM singer\n```"]))
    results = tmp_path / "results"
    cmd = [
        sys.executable,
        str(REPO / "benchmarks" / "run.py"),
        "accuracy",
        "--spider-dir",
        str(spider_dir),
        "--model",
        f"scripted:{script}",
        "--configs",
        "single-shot",
        "--limit",
        "1",
        "--db-ids",
        "music",
        "--out",
        "acc-smoke",
        "--results-dir",
        str(results),
        "--data-dir",
        str(tmp_path / "data"),
        "--note",
        "a smoke run",
    ]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "[1/1] music #0" in proc.stdout
    data = json.loads((results / "acc-smoke.json").read_text())
    assert data["configs"]["single-shot"]["ex"] == 100.0 and data["questions"] == 1
    assert (tmp_path / "data" / "acc-smoke.jsonl").is_file()
    text = (results / "acc-smoke.md").read_text()
    assert "| single-shot" in text and "100.0%" in text and "Machine:" in text
    assert text.splitlines()[2] == "Note: a smoke run" and data["note"] == "a smoke run"


@pytest.mark.timeout(300)
def test_overhead(tmp_path):
    results = tmp_path / "results"
    cmd = [
        sys.executable,
        str(REPO / "benchmarks" / "run.py"),
        "overhead",
        "--asks",
        "5",
        "--results-dir",
        str(results),
        "--data-dir",
        str(tmp_path / "data"),
    ]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads((results / "overhead.json").read_text())
    r = data["result"]
    assert r["asks"] == 5 and len(r["runs"]) == 5 and not r["problems"], r["problems"]
    assert all(run["iterations"] == 3 for run in r["runs"])
    assert is_number(r["per_iteration_ms"]["median"]) and is_number(r["per_iteration_ms"]["p95"])
    assert set(r["breakdown_ms_per_ask"]) >= {"context", "execute", "graph"}
    text = (results / "overhead.md").read_text()
    assert "per iteration" in text and "Machine:" in text


def test_unseen_databases_build_and_every_gold_query_answers(tmp_path):
    """benchmarks/unseen: each database builds from its script (twice: a rebuild replaces
    it), every question names a database there and its gold SQL returns rows; superlative
    questions (LIMIT 1) have one answer, not a tie broken by row order."""
    import accuracy

    for _ in range(2):
        root = accuracy.build_unseen(tmp_path)
    questions = accuracy.load_questions(root)
    db_ids = {p.name for p in (root / "database").iterdir()}
    assert db_ids == {
        "library_loans",
        "city_clinic",
        "regional_league",
        "transit_network",
        "research_grants",
        "rental_agency",
        "film_festival",
        "warehouse_supply",
        "airline_ops",
        "school_district",
        "museum_collection",
        "hotel_chain",
        "bike_share",
        "music_label",
        "restaurant_group",
        "veterinary",
        "software_releases",
        "auction_house",
        "community_garden",
        "podcast_network",
        "ski_resort",
        "shipping_port",
        "theatre_company",
        "wine_cellar",
        "coworking_space",
        "marathon_event",
        "dental_practice",
        "craft_brewery",
        "orchestra_season",
        "auto_garage",
        "fitness_gym",
        "university_labs",
        "zoo_keeping",
        "insurance_claims",
        "video_game_studio",
        "solar_installer",
        "bakery_chain",
        "art_school",
        "ferry_service",
        "print_shop",
        "fire_service",
        "seed_bank",
        "law_firm",
        "blood_donation",
        "cinema_chain",
        "pharmacy_network",
        "sailing_club",
        "outdoor_retail_dw",
        "lab_supplier_crm",
        "water_billing",
        "taskflow_saas",
        "haulage_payroll",
        "makers_marketplace",
        "mobile_network_dw",
        "construction_erp",
        "food_delivery_app",
        "it_service_desk",
        "car_rental",
        "charity_fundraising",
        "coffee_roastery",
        "recruitment_ats",
        "housing_repairs",
        "catering_supplies",
        "library_consortium",
        "courier_dispatch",
        "dairy_cooperative",
        "rota_saas_billing",
        "hospital_omop",
        "care_training_lms",
        "marquee_hire_xero",
        "wool_shop_woocommerce",
        "fleet_telematics_hubspot",
        "calder_buses_gtfs",
        "garden_centre_mailchimp",
        "dales_broadband_zendesk",
        "pennine_league_football_data",
        "thornbury_bikes_shopify",
        "kestrel_dev_jira",
        "helmsley_workwear_salesforce",
        "tessellate_maps_greenhouse",
        "wyvern_studio_harvest",
        "ancoats_review_ghost",
        "brackenfold_oak_dolibarr",
        "wrayholme_birders_discourse",
        "kelderby_physio_openemr",
        "ravensgill_sensors_redmine",
        "corbridge_tea_prestashop",
        "ottery_schools_snipeit",
        "wick_seafoods_erpnext",
        "truro_schools_glpi",
        "enniskillen_tractors_suitecrm",
        "wirksworth_heritage_mediawiki",
        "ludlow_architects_kimai",
        "westport_kayaks_mautic",
        "dingle_knitwear_magento",
        "oban_college_canvas",
        "dundalk_digital_invoiceninja",
        "ludlow_architects_openproject",
        "clonakilty_campervans_freescout",
        "stromness_tidal_gitea",
        "kinsale_sailing_wordpress",
        "whitby_marine_bugzilla",
        "ennis_clonroad_nextcloud",
        "portree_bayfield_akeneo",
        "bantry_anglers_phpbb",
        "lerwick_shipping_zammad",
        "keswick_latrigg_matomo",
        "tobermory_ardmore_mattermost",
        "aberaeron_pantri_opencart",
        "clitheroe_pendlebridge_redmine",
        "brecon_college_moodle",
        "portsoy_boatyard_sugarcrm",
        "kilrush_scattery_odoo",
        "llanidloes_council_drupal",
        "bowmore_islay_koha",
        "tregaron_caron_dolibarr",
    }
    assert len(questions) == 1634 and {q["db_id"] for q in questions} == db_ids
    # one database is not asked the same question twice (two databases may be)
    assert len({(q["db_id"], q["question"]) for q in questions}) == len(questions)
    for q in questions:
        con = sqlite3.connect(accuracy.db_path(root, q["db_id"]))
        try:
            rows = con.execute(q["query"]).fetchall()
            assert rows, q["question"]
            if re.search(r"ORDER BY (.+?) LIMIT 1$", q["query"]):
                key = re.search(r"ORDER BY (.+?) LIMIT 1$", q["query"]).group(1)
                sql = re.sub(r"LIMIT 1$", "LIMIT 2", q["query"])
                key = re.sub(r"\s+(ASC|DESC)$", "", key, flags=re.I)  # the ordering expression
                top = con.execute(re.sub(r"^SELECT .+? FROM", f"SELECT {key} FROM", sql, count=1)).fetchall()
                assert len(top) == 1 or top[0] != top[1], f"a tie: {q['question']}"
        finally:
            con.close()


class DraftWriter(QuestionOracle):
    """Writes the draft of each question (``drafts``: question → SQL), as the reply and
    as every sampled draft."""

    samples: bool = True
    drafts: dict[str, str] = Field(default_factory=dict)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        text = str(messages[-1].content)
        question = re.findall(r"^Question: (.*)$", text, re.M)[-1].strip()
        reply = f"```sql\n{self.drafts[question]}\n```"
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=reply))])


def test_ablation_measures_each_rewrite_on_data_written_after_it(tmp_path):
    """benchmarks/ablation.py: each question asked with every rewrite on, then with each
    rewrite that proposed a query off, the replies from the store (recorded once with the
    model, replayed without it); a rule that turned an answer right earns its place on data
    written after it, and data written before it does not count for it."""
    import datetime as dt

    import ablation
    import accuracy
    from replies import ReplyStore

    from tests.test_repairs import CASES, SHOP

    db = tmp_path / "shop.sqlite"
    con = sqlite3.connect(db)
    con.executescript(SHOP)
    con.close()
    later, earlier = dt.datetime(2030, 1, 1), dt.datetime(2020, 1, 1)
    questions, drafts = [], {}
    for i, (name, case) in enumerate(sorted(CASES.items())):
        # gold: the rewritten answer (the case's rows), written as plain SQL over the rows
        gold = (
            "SELECT * FROM (VALUES "
            + ", ".join("(" + ", ".join(repr(v) for v in row) + ")" for row in case.rows)
            + ")"
        )
        questions.append(
            {
                "set": "unseen",
                "db_id": "shop",
                "index": i,
                "question": case.question,
                "query": gold,
                "db": db,
                "written": later if name != "subset_averages" else earlier,
            }
        )
        drafts[case.question] = case.draft

    path = tmp_path / "replies.jsonl"
    recorder = ReplyStore(accuracy.make_client(DraftWriter(answers={}, drafts=drafts)), path)
    recorder.client.name = "llamacpp:test"  # a local model: the agent draws drafts
    names = ablation.rule_names()
    ablation.run_ablation(questions, recorder, names, log=lambda m: None)
    assert recorder.misses > 0

    replay = ReplyStore(ablation._Named("llamacpp:test"), path, live=False)
    rows = ablation.run_ablation(questions, replay, names, log=lambda m: None)
    assert replay.misses == 0 and replay.hits > 0
    by_question = {r["index"]: r for r in rows}
    for i, (name, _case) in enumerate(sorted(CASES.items())):
        r = by_question[i]
        assert r["correct"], (name, r["sql"])
        assert name in r["fired"], (name, r["fired"])
        assert (
            r["off"][name] == {"correct": False, "sql": drafts[questions[i]["question"]]}
            or r["off"][name]["correct"] is False
        )
    summary = ablation.summarize(rows, names)
    for name in names:
        later_set = summary[name]["sets"]["unseen after it"]
        if name == "subset_averages":  # its own question was written before it: not counted for it
            assert later_set["questions"] == len(CASES) - 1 and later_set["fired"] == 0
            assert summary[name]["verdict"] == "remove (never fired)"
            assert summary[name]["sets"]["spider-dev"]["questions"] == 0
        else:
            assert later_set["wins"] >= 1 and later_set["losses"] == 0, (name, later_set)
            assert summary[name]["verdict"] == "keep"
    text = ablation.markdown(
        {
            "note": None,
            "machine": {"date": "today", "cpu": "cpu", "cpu_count": 2},
            "replies": {"file": str(path), "hits": replay.hits, "misses": 0, "live": False},
            "model": "llamacpp:test",
            "questions": len(questions),
            "by_set": {"unseen": len(CASES)},
            "missing": 0,
            "rules": summary,
            "commit": "abc",
            "seconds": 1.0,
        }
    )
    n = len(CASES) - 1  # the questions written after names_for_ids: all but one
    assert (
        f"| `names_for_ids` (2026-11-25) | unseen after it | {n} | 1 | 1 | 0 | 0 | {100 / n:+.2f} | **keep** |"
        in text
    )


def test_ablation_judges_each_check_on_data_written_after_it(tmp_path):
    """benchmarks/ablation.py's checks: one run tells, per check, the answers it found
    something against, right or wrong, and those it kept from the high rating; a check
    earns its place when it finds against more wrong answers than right ones on data
    written after it."""
    import datetime as dt

    import ablation
    import accuracy
    from replies import ReplyStore

    from tests.test_checks import CASES, SHOP

    db = tmp_path / "checks.sqlite"
    con = sqlite3.connect(db)
    con.executescript(SHOP)
    con.close()
    later, earlier = dt.datetime(2030, 1, 1), dt.datetime(2020, 1, 1)
    right_one, before_one = "numbers_left_out", "filters_not_asked"
    questions, drafts = [], {}
    for i, (name, case) in enumerate(sorted(CASES.items())):
        questions.append(
            {
                "set": "unseen",
                "db_id": "checks",
                "index": i,
                "question": case.question,
                # every draft wrong (no rows are asked for), but one
                "query": case.draft if name == right_one else "SELECT 1 WHERE 0 = 1",
                "db": db,
                "written": earlier if name == before_one else later,
            }
        )
        drafts[case.question] = case.draft
    store = ReplyStore(
        accuracy.make_client(DraftWriter(answers={}, drafts=drafts)), tmp_path / "replies.jsonl"
    )
    store.client.name = "llamacpp:test"
    rows = ablation.run_ablation(questions, store, [], log=lambda m: None)
    # with every rewrite on (as the ablation asks), two drafts are rewritten into answers
    # their checks find nothing against: the paid orders get their filter, the customers'
    # names their key
    rewritten = {
        name for (name, case), r in zip(sorted(CASES.items()), rows, strict=True) if r["sql"] != case.draft
    }
    rewritten_away = {"values_left_out", "merged_entities"}
    assert rewritten_away <= rewritten
    checks = ablation.summarize_checks(rows, ablation.check_names())
    own = {name: set(r.get("checks") or {}) for name, r in zip(sorted(CASES), rows, strict=True)}
    for name, s in checks.items():
        later_set = s["sets"]["unseen after it"]
        # rewritten away, or its own question was written before it (not counted for it)
        if name in rewritten_away or name == before_one or CASES[name].engine != "sqlite":
            # too few questions written after it to judge a check that has not fired (a check
            # whose case needs another engine, an interval, does not fire on this SQLite file)
            assert later_set["fired"] == 0 and s["verdict"] == "pending (not fired yet)", (name, s)
        elif name == right_one:  # it doubted a right answer
            assert (later_set["on_right"], later_set["high_right"]) == (1, 1) and s["verdict"] == "remove"
        elif name == "words_not_read":  # its own case, and words left unread in other checks' cases
            assert later_set["on_wrong"] >= 1 and later_set["on_right"] == 0, (name, later_set)
            assert s["verdict"] == "keep", (name, s)
        else:
            assert later_set["on_wrong"] == 1 and later_set["on_right"] == 0, (name, later_set)
            assert s["verdict"] == "keep", (name, s)
        # kept from high: answers it alone found something against (where words_not_read finds
        # a word unread as well, the answer would not be high without this one finding)
        alone = [r for r in rows if set(r.get("checks") or {}) == {name} and not r["correct"]]
        if name == "words_not_read":
            assert 1 <= later_set["high_wrong"] <= len(alone), later_set
        elif later_set["on_wrong"]:
            assert later_set["high_wrong"] == len(alone) == (0 if "words_not_read" in own[name] else 1), name
    # as many questions written after it as the policy asks, still not fired on: it leaves
    many = [
        dict(r, index=i) for i, r in enumerate(rows * (2 * ablation.CHECK_EVIDENCE_QUESTIONS // len(rows)))
    ]
    assert ablation.summarize_checks(many, [before_one])[before_one]["verdict"] == "remove (never fired)"
    band = ablation.high_band(rows)["unseen"]
    # high: only the two rewritten answers no check doubts (and they are wrong)
    assert (band["questions"], band["high"], band["high_right"]) == (len(CASES), 2, 0)


def test_explain_benchmark_reports_the_grounded_share(tmp_path):
    """benchmarks/explain.py: each recorded answer re-run on its database and explained, the
    first try's grounding and the calls counted (a scripted model: one grounded reply, one
    made-up number then a grounded rewrite)."""
    run_file = tmp_path / "run.jsonl"
    records = [
        {
            "index": 0,
            "db_id": "concert_singer",
            "question": "Count the singers for me.",
            "config": "agent",
            "status": "success",
            "pred_sql": "SELECT count(*) FROM singer",
            "correct": True,
        },
        {
            "index": 1,
            "db_id": "concert_singer",
            "question": "How many concerts are there?",
            "config": "agent",
            "status": "success",
            "pred_sql": "SELECT count(*) FROM concert",
            "correct": True,
        },
        {
            "index": 2,
            "db_id": "concert_singer",
            "question": "Skipped: no answer",
            "config": "agent",
            "status": "failed",
            "pred_sql": None,
        },
    ]
    run_file.write_text("\n".join(json.dumps(r) for r in records))
    model = tmp_path / "model.json"
    model.write_text(
        json.dumps(
            {
                "replies": [],
                "explanations": [
                    "This counts every singer, with no filter. There are 6.",
                    "There are 99 concerts.",
                    "This counts every concert, with no filter. There are 6.",
                ],
            }
        )
    )
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "explain.py"),
            "--model",
            f"scripted:{model}",
            "--runs",
            f"{run_file}:spider",
            "--results-dir",
            str(tmp_path),
            "--data-dir",
            str(tmp_path),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads((tmp_path / "explain.json").read_text())
    assert data["summary"]["spider"] | {"seconds_median": 0, "seconds_p90": 0} == {
        "answers": 2,
        "first_try": 1,
        "explained": 2,
        "dropped_sentences": 0,
        "calls": 1.5,
        "seconds_median": 0,
        "seconds_p90": 0,
    }
    (first, second) = data["explanations"]
    assert first["first_try"] and second["not_found"] == ["99"] and second["text"].endswith("There are 6.")
    assert "| spider | 2 | 50.0% (1/2) | 100.0% (2/2) |" in (tmp_path / "explain.md").read_text()


def test_ask_back_benchmark_counts_vague_and_clear_questions_asked_back(tmp_path):
    """benchmarks/ask_back.py: a vague question answered by a measure it does not name is
    asked back, a clear one answered (a scripted model writes both answers)."""
    questions = tmp_path / "questions.json"
    questions.write_text(
        json.dumps(
            [
                {
                    "db_id": "library_loans",
                    "question": "Who are our best members?",
                    "vague": True,
                    "why": "by what?",
                },
                {
                    "db_id": "library_loans",
                    "question": "How many books are there?",
                    "vague": False,
                    "why": "a count",
                },
            ]
        )
    )
    model = tmp_path / "model.json"
    model.write_text(
        json.dumps(
            {
                "replies": [
                    "```sql\nSELECT m.name FROM member AS m JOIN loan AS l ON l.member_id = m.member_id "
                    "GROUP BY m.member_id, m.name ORDER BY COUNT(*) DESC LIMIT 3\n```",
                    "FINAL",
                    "```sql\nSELECT COUNT(*) FROM book\n```",
                    "FINAL",
                ]
            }
        )
    )
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "ask_back.py"),
            "--model",
            f"scripted:{model}",
            "--questions",
            str(questions),
            "--replies",
            "",
            "--results-dir",
            str(tmp_path),
            "--data-dir",
            str(tmp_path),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads((tmp_path / "ask_back.json").read_text())
    assert (data["vague_asked"], data["vague"], data["clear_asked"], data["clear"]) == (1, 1, 0, 1)
    assert data["asked_by"] == {"model": 0, "criterion_not_named": 1}
    assert data["questions"][0]["asked"][0].startswith('"best" by which measure?')


def test_first_text_report_judges_the_warm_questions_against_the_target():
    """benchmarks/first_text.py's report: the cold question apart, the warm ones' first words
    against the 2 s target (the browser run itself is the bench project's, not a test's)."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    import first_text

    raw = {
        "model": "llamacpp:/m.gguf",
        "browser": "156",
        "questions": [
            {
                "question": "a?",
                "warm": False,
                "status": "success",
                "phase_s": 3.0,
                "first_text_s": 80.0,
                "answer_s": 99.0,
            },
            {
                "question": "b?",
                "warm": True,
                "status": "success",
                "phase_s": 0.2,
                "first_text_s": 1.5,
                "answer_s": 9.0,
            },
            {
                "question": "c?",
                "warm": True,
                "status": "success",
                "phase_s": 0.3,
                "first_text_s": 2.5,
                "answer_s": 12.0,
            },
        ],
    }
    info = first_text.c.machine_info()
    md, data = first_text.report(raw, info, None)
    assert data["warm_first_text_median_s"] == 2.0 and data["warm_first_text_max_s"] == 2.5
    assert data["meets_target"] is False  # one warm question past 2 s
    assert "**1.50**" in md and "misses the target" in md and "Cold: 80.00 s" in md
    assert "as soon as the answer before it is shown" in md and data["pause_s"] == 0
    raw["questions"][2]["first_text_s"] = 1.9
    raw["pause_s"] = 5
    md, data = first_text.report(raw, info, None)
    assert data["meets_target"] is True and data["pause_s"] == 5
    assert "each 5 s after the answer before it (a person reading the answer" in md
    assert "After a kernel restart" not in md and data["after_restart_answer_s"] is None
    # the question asked again after a restart: apart from the warm ones, against its warm answer
    raw["questions"].append(
        {
            "question": "b?",
            "warm": True,
            "after_restart": True,
            "status": "success",
            "phase_s": 0.4,
            "first_text_s": 3.5,
            "answer_s": 8.0,
        }
    )
    raw.update(restart_s=6.5, shared=True)
    md, data = first_text.report(raw, info, None)
    assert data["warm_first_text_max_s"] == 1.9 and data["after_restart_answer_s"] == 8.0
    assert "run again: 6.50 s), the question asked again: first words after **3.50 s**, the answer" in md
    assert "after **8.00 s**, against 9.00 s when it was asked warm before (the model process kept" in md
    assert first_text.model_spec("openai:gpt-4o") == "openai:gpt-4o"


def test_reply_store_keys_a_calls_purpose_and_passes_it_on(tmp_path):
    """A call with a purpose (a correction, an explanation) is its own entry of the store
    and reaches the model with its purpose; the keys of calls without one stay as stored."""
    import accuracy
    from langchain_core.messages import HumanMessage
    from replies import ReplyStore, call_key

    prompt = [HumanMessage("Question: x")]
    plain = call_key(prompt, temperature=None, seed=None, draft=False)
    assert plain == call_key(prompt, temperature=None, seed=None, draft=False, purpose=None)
    assert plain != call_key(prompt, temperature=None, seed=None, draft=False, purpose="correct")
    seen: list[str | None] = []

    class Client:
        def invoke(self, messages, *, temperature=None, seed=None, stop=None, draft=False, purpose=None):
            seen.append(purpose)
            return f"reply for {purpose}", {"calls": 1}

    store = ReplyStore(Client(), tmp_path / "replies.jsonl")
    assert store.invoke(prompt, purpose="correct")[0] == "reply for correct"
    assert store.invoke(prompt)[0] == "reply for None"
    assert store.invoke(prompt, purpose="correct")[0] == "reply for correct" and store.hits == 1
    assert seen == ["correct", None]
    assert accuracy.SHOWN_SETTINGS[-1] == "correct_findings"


def test_a_check_that_only_keeps_answers_from_high_is_judged_by_the_high_band():
    """words_not_read doubts nothing (its findings keep an answer from high), so the ablation
    judges it by the high band on the batches written after it: it stays where the answers
    it kept from high were wrong at least as often as those rated high with it, and leaves
    where it kept only right ones, whatever its share of wrong answers among all it fired on."""
    import ablation

    def row(i, correct, level, kept):
        return {
            "set": "unseen",
            "db_id": "d",
            "index": i,
            "written": "2030-01-01T00:00:00",
            "correct": correct,
            "level": level,
            "checks": {"words_not_read": "high"} if kept else {},
        }

    # four right answers rated high; it kept one wrong and two right ones from high, and fired
    # on no more wrong answers than its share (a lift below 1 would have removed it)
    rows = [row(i, True, "high", False) for i in range(4)]
    rows += [row(4, False, "medium", True), row(5, True, "medium", True), row(6, True, "medium", True)]
    rows += [row(7 + i, False, "low", False) for i in range(4)]
    later = ablation.summarize_checks(rows, ["words_not_read"])["words_not_read"]
    assert later["sets"]["unseen after it"]["lift"] < 1
    assert (later["sets"]["unseen after it"]["band_high"], later["verdict"]) == (4, "keep")
    # it kept only right answers from high: it leaves
    rows[4] = row(4, False, "low", False)
    assert ablation.summarize_checks(rows, ["words_not_read"])["words_not_read"]["verdict"] == "remove"
