"""benchmarks/before_after.py: two accuracy runs of the same questions compared per data
set and configuration (EX before and after, the same SQL, turned right and wrong)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import before_after


def record(config, index, correct, sql, **extra):
    return {"config": config, "db_id": "shop", "index": index, "correct": correct, "pred_sql": sql, **extra}


def test_before_after_counts_each_configuration_over_the_questions_both_answered(tmp_path):
    before = [
        record("agent", 0, True, "SELECT 1"),
        record("agent", 1, False, "SELECT 2"),
        record("agent", 2, True, "SELECT 3"),
        record("single-shot", 0, False, "SELECT 9"),
        record("agent", 3, True, "SELECT 4"),  # not answered after: left out
        record("agent", 4, False, "SELECT 5", ambiguous=True),  # ambiguous: left out
    ]
    after = [
        record("agent", 0, True, "SELECT 1"),
        record("agent", 1, True, "SELECT 22"),  # turned right
        record("agent", 2, False, "SELECT 33"),  # turned wrong
        record("single-shot", 0, False, "SELECT 9"),
        record("agent", 4, True, "SELECT 5", ambiguous=True),
        {"config": "agent", "db_id": "shop", "index": 5, "exception": "boom"},
    ]
    paths = []
    for name, rows in (("before", before), ("after", after)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        paths.append(path)
    data = before_after.main(
        ["--pair", f"unseen={paths[0]}:{paths[1]}", "--results-dir", str(tmp_path), "--out", "ba"]
    )
    agent = data["sets"]["unseen"]["agent"]
    assert agent == {
        "questions": 3,
        "right_before": 2,
        "right_after": 2,
        "same_sql": 1,
        "turned_right": 1,
        "turned_wrong": 1,
    }
    assert data["sets"]["unseen"]["single-shot"]["same_sql"] == 1
    text = (tmp_path / "ba.md").read_text()
    assert "| unseen | agent | 3 | 66.7% (2) | 66.7% (2) | 1 | 1 | 1 |" in text
    assert json.loads((tmp_path / "ba.json").read_text())["pairs"] == [f"unseen={paths[0]}:{paths[1]}"]
