"""No benchmark question is quoted in the code, its tests or its docs.

A rule that answers one benchmark question's wording measures nothing: the agent's rules
must be general (docs/agent.md), and a test or docstring that quotes a benchmark question
is the first sign of a rule written from one.  The benchmark sets are spider-dev
(tests/data/spider-dev), the unseen batches (benchmarks/unseen) and the sample set
(benchmarks/sample); only the benchmark's own files may hold their questions."""

from __future__ import annotations

import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SETS = (
    REPO / "tests" / "data" / "spider-dev" / "questions.json",
    REPO / "benchmarks" / "unseen" / "questions.json",
    REPO / "benchmarks" / "sample" / "questions.json",
)
# where a benchmark question may not appear: the package, the tests, the docs
WHERE = ("sqlnb/**/*.py", "tests/*.py", "docs/**/*.md", "docs/**/*.py", "README.md", "CONTRIBUTING.md")
# shorter questions ("How many singers are there?") are too generic to be a quotation
MIN_WORDS = 6


def words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9']+", text.lower()))


def benchmark_questions() -> dict[str, str]:
    out: dict[str, str] = {}
    for path in SETS:
        for q in json.loads(path.read_text(encoding="utf-8")):
            w = words(q["question"])
            if len(w.split()) >= MIN_WORDS:
                out[w] = f"{path.relative_to(REPO)}: {q['question']}"
    return out


def quoted(text: str, questions: dict[str, str]) -> list[str]:
    flat = words(text)
    return [source for w, source in questions.items() if w in flat]


def test_the_check_finds_a_quotation():
    questions = benchmark_questions()
    assert len(questions) > 500
    some = next(iter(questions.values())).split(": ", 1)[1]
    assert quoted(f'"""A docstring: {some.upper()}"""', questions)
    assert not quoted("How many rows has each table? Most first.", questions)


def test_no_benchmark_question_is_quoted():
    questions = benchmark_questions()
    found = {}
    for pattern in WHERE:
        for path in sorted(REPO.glob(pattern)):
            if path.resolve() == Path(__file__).resolve():
                continue
            hits = quoted(path.read_text(encoding="utf-8"), questions)
            if hits:
                found[str(path.relative_to(REPO))] = hits
    assert not found, "benchmark questions quoted (reword them):\n" + json.dumps(found, indent=1)
