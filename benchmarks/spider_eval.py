"""Execution match for Spider-style text-to-SQL, after taoyds/test-suite-sql-eval.

:func:`execution_match` runs the gold and the predicted SQL on one SQLite database and
says whether their results are the same denotation, with the rules of the official
scorer (``exec_eval.py``):

- the gold query must run (an ``AssertionError`` otherwise: the data set is broken);
- a prediction that fails, or runs past ``timeout`` seconds (enforced with a sqlite3
  progress handler), is wrong;
- results compare as **multisets of rows** (duplicates count); the order of the rows
  matters only when the gold query has an ORDER BY at its top level;
- columns may come in another order: a permutation of the predicted columns that makes
  the results equal is searched for, pruned by matching each gold column to predicted
  columns with the same set of values;
- two empty results are equal whatever their columns;
- numbers compare numerically, rounded to 6 significant digits whatever their type: ``1``
  equals ``1.0``, ``0.1 + 0.2`` equals ``0.3``, and a sum rounded to the cent that came out
  whole (``1510517.0``) equals the same sum unrounded (``1510517.0005``);
- ``> =``, ``< =`` and ``! =`` are closed up in both queries, as the official scorer does.

Where it differs from the official scorer, on purpose:

- "order matters" is decided by a top-level ORDER BY (parsed with sqlglot), not by the
  substring ``order by`` anywhere in the gold query (an ORDER BY inside a subquery, e.g.
  ``WHERE x = (SELECT ... ORDER BY ... LIMIT 1)``, says nothing about the outer rows);
- the column permutation search uses every row, not 20 random ones (deterministic);
- DISTINCT is kept by default.  The official scorer removes every DISTINCT keyword from
  both queries unless run with ``--keep_distinct`` (its default); ``keep_distinct=False``
  does the same here.
- float values are rounded (the official scorer compares them exactly).
"""

from __future__ import annotations

import math
import sqlite3
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_TIMEOUT = 30.0
SIGNIFICANT_DIGITS = 6
MAX_PERMUTATIONS = 100_000  # column permutations tried before giving up (wrong)


class QueryTimeout(Exception):
    pass


@dataclass
class Match:
    """The outcome of comparing one prediction with its gold query."""

    correct: bool
    order_matters: bool
    gold_rows: int
    pred_rows: int | None = None  # None: the prediction did not run
    error: str | None = None  # why the prediction did not run
    reason: str | None = None  # why the results differ
    extra: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------
# running queries
# ---------------------------------------------------------------------------


def connect(db_path: str | Path) -> sqlite3.Connection:
    """A read-only connection to a Spider database (text decoded leniently, as the
    official scorer does: a few Spider databases hold bytes that are not UTF-8)."""
    path = Path(db_path).resolve()
    if not path.is_file():
        raise FileNotFoundError(f"no SQLite database at {path}")
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, check_same_thread=False)
    conn.text_factory = lambda b: b.decode(errors="ignore")
    return conn


def run_query(
    conn: sqlite3.Connection,
    sql: str,
    *,
    timeout: float | None = DEFAULT_TIMEOUT,
    max_rows: int | None = None,
) -> tuple[list[tuple], int | None]:
    """All rows of ``sql`` (at most ``max_rows``: then the second value is the count
    fetched when it went past, else None) and raises on error or past ``timeout``."""
    if timeout is not None:
        deadline = time.monotonic() + timeout
        timed_out = [False]

        def handler() -> int:
            if time.monotonic() > deadline:
                timed_out[0] = True
                return 1
            return 0

        conn.set_progress_handler(handler, 10_000)
    try:
        cur = conn.cursor()
        try:
            cur.execute(sql)
            if max_rows is None:
                return cur.fetchall(), None
            rows: list[tuple] = []
            while True:
                chunk = cur.fetchmany(1000)
                if not chunk:
                    return rows, None
                rows.extend(chunk)
                if len(rows) > max_rows:
                    return rows[: max_rows + 1], len(rows)
        except sqlite3.OperationalError as exc:
            if timeout is not None and timed_out[0]:
                raise QueryTimeout(f"ran past {timeout:g} s") from None
            raise exc
        finally:
            cur.close()
    finally:
        if timeout is not None:
            conn.set_progress_handler(None, 0)


# ---------------------------------------------------------------------------
# normalising SQL and values
# ---------------------------------------------------------------------------


def postprocess(sql: str) -> str:
    """What the official scorer does to both queries before running them."""
    return sql.replace("> =", ">=").replace("< =", "<=").replace("! =", "!=").strip().rstrip(";")


def remove_distinct(sql: str) -> str:
    """``sql`` without its DISTINCT keywords (the official scorer's default)."""
    from sqlglot.tokens import Tokenizer, TokenType

    try:
        tokens = Tokenizer(dialect="sqlite").tokenize(sql)
    except Exception:
        return sql
    out, pos = [], 0
    for tok in tokens:
        if tok.token_type == TokenType.DISTINCT:
            out.append(sql[pos : tok.start])
            pos = tok.end + 1
    out.append(sql[pos:])
    return "".join(out)


def has_top_level_order_by(sql: str) -> bool:
    """Whether the outermost query of ``sql`` sorts its rows."""
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
    except Exception:
        return "order by" in sql.lower()  # the official rule, when sqlglot cannot parse it
    node = tree
    while (
        isinstance(node, (exp.Paren, exp.Subquery)) and node.this is not None and not node.args.get("order")
    ):
        node = node.this
    return node is not None and node.args.get("order") is not None


def normalize_value(v: Any) -> Any:
    """A result value as compared: numbers rounded to 6 significant digits (an int of up to
    6 digits is kept as it is; a whole result is an int), booleans are ints; everything else
    is kept as it is.  (Rounding whole floats and large ints too: a sum rounded to the cent
    that came out whole must equal the same sum unrounded, and an int the float it equals.)"""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int) and abs(v) < 10**SIGNIFICANT_DIGITS:
        return v
    if isinstance(v, (int, float)):
        f = float(v)
        if math.isnan(f):
            return "NaN"  # NaN != NaN: a marker that equals itself
        if math.isinf(f):
            return f
        r = float(f"{f:.{SIGNIFICANT_DIGITS}g}")
        return int(r) if r.is_integer() else r
    return v


def normalize_rows(rows: Sequence[Sequence[Any]]) -> list[tuple]:
    return [tuple(normalize_value(v) for v in row) for row in rows]


def _sort_key(v: Any) -> tuple[str, str]:
    kind = "num" if isinstance(v, (int, float)) else type(v).__name__
    return kind, repr(v)


def _unordered(row: tuple) -> tuple:
    return tuple(sorted(row, key=_sort_key))


# ---------------------------------------------------------------------------
# comparing results
# ---------------------------------------------------------------------------


def _permutations(candidates: list[list[int]]) -> Iterator[tuple[int, ...]]:
    """Every assignment of distinct predicted columns to gold columns, each gold column
    taking one of its candidates."""
    n = len(candidates)
    chosen: list[int] = []
    used: set[int] = set()

    def walk(i: int) -> Iterator[tuple[int, ...]]:
        if i == n:
            yield tuple(chosen)
            return
        for j in candidates[i]:
            if j in used:
                continue
            used.add(j)
            chosen.append(j)
            yield from walk(i + 1)
            chosen.pop()
            used.discard(j)

    yield from walk(0)


def result_eq(gold: Sequence[tuple], pred: Sequence[tuple], order_matters: bool) -> tuple[bool, str | None]:
    """Whether two (normalised) results are the same denotation, and if not, why."""
    if not gold and not pred:
        return True, None
    if len(gold) != len(pred):
        return False, f"{len(pred)} rows, expected {len(gold)}"
    ncols = len(gold[0])
    if len(pred[0]) != ncols:
        return False, f"{len(pred[0])} columns, expected {ncols}"
    # quick rejection: a column permutation keeps each row's multiset of values
    g_unordered = [_unordered(r) for r in gold]
    p_unordered = [_unordered(r) for r in pred]
    if order_matters:
        if g_unordered != p_unordered:
            return False, "different rows (or order)"
    elif Counter(g_unordered) != Counter(p_unordered):
        return False, "different rows"
    if ncols == 1:
        ok = list(gold) == list(pred) if order_matters else Counter(gold) == Counter(pred)
        return ok, None if ok else "different rows"
    gold_sets = [{r[i] for r in gold} for i in range(ncols)]
    pred_sets = [{r[j] for r in pred} for j in range(ncols)]
    candidates = [[j for j in range(ncols) if pred_sets[j] == gold_sets[i]] for i in range(ncols)]
    if any(not c for c in candidates):
        return False, "no column of the prediction matches a gold column"
    gold_counter = None if order_matters else Counter(gold)
    for k, perm in enumerate(_permutations(candidates)):
        if k >= MAX_PERMUTATIONS:
            return False, f"gave up after {MAX_PERMUTATIONS} column permutations"
        permuted = [tuple(r[j] for j in perm) for r in pred]
        if order_matters:
            if permuted == list(gold):
                return True, None
        elif Counter(permuted) == gold_counter:
            return True, None
    return False, "no column order makes the rows equal"


def evaluate(
    db_path: str | Path,
    gold_sql: str,
    pred_sql: str | None,
    *,
    timeout: float | None = DEFAULT_TIMEOUT,
    keep_distinct: bool = True,
    conn: sqlite3.Connection | None = None,
    gold_rows: Sequence[tuple] | None = None,
) -> Match:
    """Compare ``pred_sql`` with ``gold_sql`` on the database at ``db_path`` (see the
    module docstring).  ``conn`` reuses an open connection; ``gold_rows`` the gold result
    already computed (normalised, with the same ``keep_distinct``)."""
    own = conn is None
    if own:
        conn = connect(db_path)
    try:
        gold = postprocess(gold_sql)
        if not keep_distinct:
            gold = remove_distinct(gold)
        order = has_top_level_order_by(gold)
        if gold_rows is None:
            try:
                raw, _ = run_query(conn, gold, timeout=None)
            except Exception as exc:
                raise AssertionError(f"the gold query fails on {db_path}: {exc}\n{gold_sql}") from exc
            gold_rows = normalize_rows(raw)
        gold_rows = list(gold_rows)
        if not pred_sql or not pred_sql.strip():
            return Match(False, order, len(gold_rows), error="no SQL")
        pred = postprocess(pred_sql)
        if not keep_distinct:
            pred = remove_distinct(pred)
        try:
            # more rows than the gold result is wrong already: never fetch a runaway join
            raw, over = run_query(conn, pred, timeout=timeout, max_rows=len(gold_rows))
        except QueryTimeout as exc:
            return Match(False, order, len(gold_rows), error=f"timeout: {exc}")
        except Exception as exc:
            return Match(False, order, len(gold_rows), error=f"{type(exc).__name__}: {exc}")
        if over is not None:
            if not gold_rows:
                # official: two empty results are equal, one empty one not is a mismatch
                return Match(False, order, 0, pred_rows=over, reason=f"{over}+ rows, expected 0")
            return Match(
                False, order, len(gold_rows), pred_rows=over, reason=f"more than {len(gold_rows)} rows"
            )
        pred_rows = normalize_rows(raw)
        ok, reason = result_eq(gold_rows, pred_rows, order)
        return Match(ok, order, len(gold_rows), pred_rows=len(pred_rows), reason=reason)
    finally:
        if own:
            conn.close()


def execution_match(
    db_path: str | Path,
    gold_sql: str,
    pred_sql: str | None,
    *,
    timeout: float | None = DEFAULT_TIMEOUT,
    keep_distinct: bool = True,
) -> bool:
    """Whether ``pred_sql`` gives the same result as ``gold_sql`` on ``db_path``."""
    return evaluate(db_path, gold_sql, pred_sql, timeout=timeout, keep_distinct=keep_distinct).correct


class Scorer:
    """Scores many predictions: one read-only connection per database, gold results
    cached."""

    def __init__(self, timeout: float | None = DEFAULT_TIMEOUT):
        self.timeout = timeout
        self._conns: dict[str, sqlite3.Connection] = {}
        self._gold: dict[tuple[str, str, bool], list[tuple]] = {}

    def evaluate(
        self, db_path: str | Path, gold_sql: str, pred_sql: str | None, *, keep_distinct: bool = True
    ) -> Match:
        key = str(Path(db_path).resolve())
        conn = self._conns.get(key)
        if conn is None:
            conn = self._conns[key] = connect(key)
        gkey = (key, gold_sql, keep_distinct)
        if gkey not in self._gold:
            gold = postprocess(gold_sql)
            if not keep_distinct:
                gold = remove_distinct(gold)
            try:
                raw, _ = run_query(conn, gold, timeout=None)
            except Exception as exc:
                raise AssertionError(f"the gold query fails on {db_path}: {exc}\n{gold_sql}") from exc
            self._gold[gkey] = normalize_rows(raw)
        return evaluate(
            key,
            gold_sql,
            pred_sql,
            timeout=self.timeout,
            keep_distinct=keep_distinct,
            conn=conn,
            gold_rows=self._gold[gkey],
        )

    def close(self) -> None:
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()
