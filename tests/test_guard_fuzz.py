"""Differential fuzz test of the read-only guard against the real engines.

The guard (:func:`sqlnb.sql.guard.check_read_only`) decides from its own reading of the
text that a statement is one read-only query.  If the engine cuts the same text into
strings, comments and statements differently, the engine may run a second statement the
guard never checked.  This test generates thousands of seeded cases per engine
(:mod:`tests.sqlfuzz`: a read-only SELECT, comments of every kind, nested and unbalanced
comments, strings and quoted names with every escape, dollar quotes, prefixed literals,
Unicode and control characters, tokens that join once a comment between them goes, and a
harmless second statement ``SELECT 666`` placed among them) and, for every case the guard
accepts, asks the engine itself how many statements it sees.  Nothing here uses sqlnb's
scanner, splitter or adapters to answer that:

- PostgreSQL: the extended protocol's Parse message (``PQprepare``).  The server runs its
  raw parser over the whole text and refuses more than one statement with "cannot insert
  multiple commands into a prepared statement"; a syntax error anywhere means the server
  runs nothing of the text (simple protocol included), so it counts as no statement;
  other errors (unknown column, operator) come after the count: one statement.  A case
  the guard accepts is parsed with standard_conforming_strings on and off (the guard
  says it is right under both): the larger count stands.
- Redshift: no local engine; the guard's ``redshift`` reading is checked against
  PostgreSQL's, off and on standard_conforming_strings (off: '...' strings take
  backslash escapes, as Redshift's do), on the cases where the two engines read text
  alike as far as is known here: no ``U&`` (Redshift has no Unicode-escaped strings) and
  at most one ``/*`` (whether Redshift nests comments is not known).
- DuckDB: ``duckdb.extract_statements`` (its parser).  Where the parser refuses the
  text, DuckDB's client still runs the statements before the one that fails (tried:
  ``CREATE TABLE t (a INT); SELEC 2`` creates ``t``), so the count then comes from
  DuckDB's own tokenizer (``duckdb.tokenize``): pieces between ``;`` tokens that hold
  anything but comments.  An unterminated string, quoted name or comment is the
  exception: DuckDB then runs nothing (``CREATE TABLE t (a INT); SELECT 'x`` creates no
  ``t``), which counts as no statement.
- SQLite: ``sqlite3_prepare_v2`` of the SQLite library Python's ``sqlite3`` uses, called
  through ctypes in a loop over the tail it returns: each call compiles one statement
  with SQLite's own tokenizer and parser.  A statement that fails with a semantic error
  (no such column) still ends where SQLite's parser ended it, and the loop goes on; a
  syntax error stops it (SQLite runs nothing from there), and a syntax error in the
  first statement counts as no statement.
- MariaDB (the ``mysql`` dialect): the text runs on a connection with the
  CLIENT_MULTI_STATEMENTS flag, in a throwaway database; each result set is a statement,
  and an error ends the run (counted as the statement that failed, except a syntax error
  in the first statement: nothing ran).  MariaDB answers a piece that holds only
  comments (``SELECT 1; -- x``) with a bare OK packet: that is not counted (no fragment
  holds a statement other than SELECT).  A case the guard accepts runs under the
  server's sql_mode and with NO_BACKSLASH_ESCAPES, ANSI_QUOTES and both added (a user
  or server may set them; they move where strings and quoted names end): the largest
  count stands.
- Snowflake: no oracle.  There is no local Snowflake; fakesnow (what the rest of the
  suite uses) runs DuckDB behind sqlglot, so asking it would test sqlglot against itself.

Failures name every case the guard accepts that an engine sees as more than one
statement, shrunk to the fewest fragments and characters that still do so, grouped by
the kinds of fragment left.  Two more checks keep the test honest: the guard must accept
most of the ``benign`` cases (the payload inside a comment, string or name that every
reader of the dialect ends at the same place; a guard that refused everything would pass
the main check), and the generator must produce every kind of fragment.

``SQLNB_FUZZ_CASES`` (default 6000 per engine) and ``SQLNB_FUZZ_SEED`` (default 0) change
the run; the failure message gives the seed.
"""

from __future__ import annotations

import ctypes
import os
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import cache

import pytest

from sqlnb.sql.guard import check_read_only
from tests import sqlfuzz
from tests.engines import MY_HOST, MY_PASSWORD, MY_PORT, MY_USER, PG_HOST, PG_PORT

N_CASES = int(os.environ.get("SQLNB_FUZZ_CASES", "6000"))
SEED = os.environ.get("SQLNB_FUZZ_SEED", "0")

# engine -> the guard's dialect for it
ENGINES = {
    "postgresql": "postgres",
    "redshift": "redshift",
    "duckdb": "duckdb",
    "sqlite": "sqlite",
    "mysql": "mysql",
}

# The guard must accept at least this share of the benign cases.  They are built to be
# one read-only SELECT in every reading of the dialect (and every setting), so a correct
# guard accepts them all (it does today: 100% on every engine); the margin leaves room
# for a guard that refuses a few on purpose, say MySQL's "..." strings, which ANSI_QUOTES
# turns into names.  A guard that refused everything would pass the main test; not this.
BENIGN_ACCEPTED = 0.9
# ... and at least this share of all cases (measured today: 28-35% per engine with the
# default seed), so that the accepted cases that are not benign -- the ones built to
# split -- stay numerous enough to mean something.
ALL_ACCEPTED = 0.2
# The cases must be ones the engine can split: at least this share of all cases is more
# than one statement to the engine (measured: 10-12%, DuckDB 30%), so that the guard's
# refusals are exercised and the generator has not drifted into text nobody splits.
ENGINE_SPLITS = 0.07
# Every fragment kind appears in at least this many cases per engine.
MIN_PER_KIND = 50


# ---------------------------------------------------------------------------------------
# Oracles: how many statements the engine sees
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reading:
    statements: int  # 0: the engine refused the text before it ran anything
    how: str  # what answered: "parse", "tokenize", "run", ...
    error: str | None = None

    def __str__(self) -> str:
        err = f"; {self.error.splitlines()[0][:120]}" if self.error else ""
        return f"{self.statements} statement(s) ({self.how}{err})"


class PostgresOracle:
    # The settings that change where a string ends: the guard must be right under each.
    SETTINGS = ("standard_conforming_strings=on", "standard_conforming_strings=off")

    def __init__(self):
        import psycopg
        from psycopg import pq

        self._pq = pq
        self.cons = [
            psycopg.connect(
                host=PG_HOST,
                port=PG_PORT,
                user="postgres",
                dbname="postgres",
                autocommit=True,
                options=f"-c lc_messages=C -c {setting}",
            )
            for setting in self.SETTINGS
        ]

    def read(self, text: str, every_setting: bool = False) -> Reading:
        readings = [
            self._read(con, text, setting)
            for con, setting in zip(
                self.cons, self.SETTINGS if every_setting else self.SETTINGS[:1], strict=False
            )
        ]
        return max(readings, key=lambda r: r.statements)

    def _read(self, con, text: str, setting: str) -> Reading:
        pq = self._pq
        how = f"Parse, {setting}"
        res = con.pgconn.prepare(b"", text.encode())
        if res.status == pq.ExecStatus.COMMAND_OK:
            return Reading(1, how)
        msg = (res.error_message or b"").decode(errors="replace").strip()
        if "cannot insert multiple commands into a prepared statement" in msg:
            return Reading(2, how, msg)
        if res.error_field(pq.DiagnosticField.SQLSTATE) == b"42601":
            return Reading(0, how, msg)  # the raw parser refused the whole text
        return Reading(1, how, msg)

    def close(self):
        for con in self.cons:
            con.close()


class DuckDBOracle:
    def __init__(self):
        import duckdb

        self.duckdb = duckdb

    def read(self, text: str, every_setting: bool = False) -> Reading:
        duckdb = self.duckdb
        try:
            return Reading(len(duckdb.extract_statements(text)), "parse")
        except duckdb.Error as exc:
            error = str(exc)
        except UnicodeDecodeError as exc:  # the statements' text came back cut (X'...')
            error = f"extract_statements: {exc}"
        if "unterminated" in error:  # the tokenizer failed: DuckDB runs none of the text
            return Reading(0, "parse", error)
        try:
            tokens = duckdb.tokenize(text)
        except duckdb.Error as exc:
            return Reading(0, "tokenize", f"{error}; {exc}")
        raw = text.encode()  # token positions are byte offsets
        pieces, current = 0, False
        for start, kind in tokens:
            if kind == duckdb.token_type.operator and raw[start : start + 1] == b";":
                pieces += current
                current = False
            elif kind != duckdb.token_type.comment:
                current = True
        return Reading(pieces + current, "tokenize", error)

    def close(self):
        pass


class SQLiteOracle:
    _SYNTAX = ("syntax error", "unrecognized token", "incomplete input")

    def __init__(self):
        import _sqlite3

        try:
            lib = ctypes.CDLL(_sqlite3.__file__)
            lib.sqlite3_prepare_v2  # noqa: B018  (linked in, or reachable through it)
        except (OSError, AttributeError):
            from ctypes.util import find_library

            lib = ctypes.CDLL(find_library("sqlite3"))
        vp = ctypes.c_void_p
        lib.sqlite3_open_v2.argtypes = [ctypes.c_char_p, ctypes.POINTER(vp), ctypes.c_int, ctypes.c_char_p]
        lib.sqlite3_prepare_v2.argtypes = [vp, vp, ctypes.c_int, ctypes.POINTER(vp), ctypes.POINTER(vp)]
        lib.sqlite3_finalize.argtypes = [vp]
        lib.sqlite3_close.argtypes = [vp]
        lib.sqlite3_errmsg.argtypes = [vp]
        lib.sqlite3_errmsg.restype = ctypes.c_char_p
        lib.sqlite3_libversion.restype = ctypes.c_char_p
        self.lib = lib
        self.db = vp()
        assert lib.sqlite3_open_v2(b":memory:", ctypes.byref(self.db), 0x2 | 0x4, None) == 0

    def read(self, text: str, every_setting: bool = False) -> Reading:
        lib = self.lib
        raw = text.encode()
        buf = ctypes.create_string_buffer(raw)
        pos = base = ctypes.addressof(buf)
        end = base + len(raw)
        count, error = 0, None
        while pos < end:
            stmt, tail = ctypes.c_void_p(), ctypes.c_void_p()
            rc = lib.sqlite3_prepare_v2(self.db, pos, end - pos, ctypes.byref(stmt), ctypes.byref(tail))
            if stmt.value:
                lib.sqlite3_finalize(stmt)
            if rc != 0:
                error = lib.sqlite3_errmsg(self.db).decode(errors="replace")
                if any(s in error for s in self._SYNTAX):
                    # SQLite stops at the token it could not parse: a second statement
                    # counts (it was reached), a broken first one means nothing runs
                    return Reading(count + 1 if count else 0, "prepare", error)
                count += 1  # a statement that compiles to an error still ended here
            elif stmt.value:
                count += 1
            if not tail.value or tail.value <= pos:
                break
            pos = tail.value
        return Reading(count, "prepare", error)

    def close(self):
        self.lib.sqlite3_close(self.db)


class MariaDBOracle:
    # sql_mode flags that change where a string or quoted name ends, added to the server's
    ADD_MODES = ("", "NO_BACKSLASH_ESCAPES", "ANSI_QUOTES", "ANSI_QUOTES,NO_BACKSLASH_ESCAPES")

    def __init__(self):
        import mysql.connector
        from mysql.connector.constants import ClientFlag

        self.errors = mysql.connector.Error
        self.db = f"sqlnb_fuzz_{os.getpid()}_{uuid.uuid4().hex[:8]}"
        self._connect_to = lambda db=None: mysql.connector.connect(
            host=MY_HOST,
            port=MY_PORT,
            user=MY_USER,
            password=MY_PASSWORD,
            database=db,
            autocommit=True,
            use_pure=True,
            charset="utf8mb4",
            client_flags=[ClientFlag.MULTI_STATEMENTS],
        )
        admin = self._connect_to()
        try:
            admin.cmd_query(f"CREATE DATABASE `{self.db}`")
        finally:
            admin.close()
        self.cons = [self._connect(mode) for mode in self.ADD_MODES]

    def _connect(self, mode: str):
        con = self._connect_to(self.db)
        if mode:
            con.cmd_query(f"SET SESSION sql_mode = CONCAT_WS(',', @@sql_mode, '{mode}')")
        return con

    def read(self, text: str, every_setting: bool = False) -> Reading:
        modes = range(len(self.ADD_MODES) if every_setting else 1)
        return max((self._read(k, text) for k in modes), key=lambda r: r.statements)

    def _read(self, k: int, text: str) -> Reading:
        con = self.cons[k]
        how = f"run, sql_mode +{self.ADD_MODES[k] or ' nothing'}"
        results = 0
        try:
            for res in con.cmd_query_iter(text):
                if "columns" in res:
                    results += 1
                    con.get_rows()
        except self.errors as exc:
            if not con.is_connected():
                self.cons[k] = self._connect(self.ADD_MODES[k])
            if results == 0 and getattr(exc, "errno", None) == 1064:
                return Reading(0, how, str(exc))
            return Reading(results + 1, how, str(exc))
        return Reading(results, how)

    def close(self):
        try:
            self.cons[0].cmd_query(f"DROP DATABASE IF EXISTS `{self.db}`")
        finally:
            for con in self.cons:
                con.close()


ORACLES = {
    "postgresql": PostgresOracle,
    "redshift": PostgresOracle,
    "duckdb": DuckDBOracle,
    "sqlite": SQLiteOracle,
    "mysql": MariaDBOracle,
}


def _comparable(engine: str, case: sqlfuzz.Case) -> bool:
    """Whether the engine's oracle speaks for the dialect on this case (see the module
    docstring: Redshift through PostgreSQL)."""
    if engine == "redshift":
        return case.text.count("/*") <= 1 and "u&" not in case.text.lower()
    return True


# ---------------------------------------------------------------------------------------
# One run per engine: the guard's verdict and the engine's reading of every case
# ---------------------------------------------------------------------------------------


@dataclass
class Run:
    engine: str
    dialect: str
    cases: list
    accepted: list = field(default_factory=list)  # (case, reading)
    refused: list = field(default_factory=list)  # (case, reading)
    failures: list = field(default_factory=list)  # (case, reading) accepted, > 1 statement
    shrunk: dict = field(default_factory=dict)  # text -> (kinds, reading, original text)
    seconds: dict = field(default_factory=dict)


def _splits(reading: Reading) -> bool:
    return reading.statements > 1


@cache
def fuzz_run(engine: str) -> Run:
    dialect = ENGINES[engine]
    t0 = time.perf_counter()
    cases = [c for c in sqlfuzz.generate(dialect, N_CASES, SEED) if _comparable(engine, c)]
    run = Run(engine, dialect, cases)
    oracle = ORACLES[engine]()
    try:
        t1 = time.perf_counter()
        verdicts = [check_read_only(c.text, dialect).read_only for c in cases]
        t2 = time.perf_counter()
        for case, ok in zip(cases, verdicts, strict=True):
            reading = oracle.read(case.text, every_setting=ok)
            (run.accepted if ok else run.refused).append((case, reading))
            if ok and _splits(reading):
                run.failures.append((case, reading))
        t3 = time.perf_counter()
        run.seconds = {"generate": t1 - t0, "guard": t2 - t1, "engine": t3 - t2}
        _shrink_failures(run, oracle)
        run.seconds["shrink"] = time.perf_counter() - t3
    finally:
        oracle.close()
    return run


# Kinds that any case may hold; a shrunk failure is filed under the others it keeps.
_GENERIC_KINDS = frozenset({"head", "payload", "closer", "code", "tail", "line_break"})


def _shrink_failures(run: Run, oracle, budget_s: float = 60.0) -> None:
    """Shrink the failures (at most a few per set of fragment kinds, within a time budget)
    and keep the distinct results."""

    def fails(text: str) -> bool:
        return check_read_only(text, run.dialect).read_only and _splits(oracle.read(text, every_setting=True))

    start = time.perf_counter()
    tried: Counter = Counter()
    for case, _ in run.failures:
        key = case.kinds
        if tried[key] >= 3 or time.perf_counter() - start > budget_s:
            continue
        tried[key] += 1
        small = sqlfuzz.shrink(case, fails)
        kinds = tuple(sorted(small.kinds - _GENERIC_KINDS))
        run.shrunk.setdefault(small.text, (kinds, oracle.read(small.text, every_setting=True), case.text))


def _report(run: Run) -> str:
    lines = [
        f"{run.engine} (guard dialect {run.dialect}, seed {SEED!r}): "
        f"{len(run.failures)} of the {len(run.accepted)} cases the guard accepts are "
        f"more than one statement to the engine.  Shrunk, by kinds of fragment:"
    ]
    groups = defaultdict(list)
    for text, (kinds, reading, original) in run.shrunk.items():
        groups[kinds].append((text, reading, original))
    for kinds in sorted(groups):
        lines.append(f"  [{', '.join(kinds) or 'closers and code only'}]")
        for text, reading, original in sorted(groups[kinds], key=lambda g: len(g[0])):
            lines.append(f"    {text!r}  -> {reading}")
            if original != text:
                lines.append(f"        from {original!r}")
    return "\n".join(lines)


def _summary(run: Run) -> str:
    splits_refused = sum(_splits(r) for _, r in run.refused)
    benign = [c for c, _ in run.accepted + run.refused if c.shape == "benign"]
    benign_ok = sum(c.shape == "benign" for c, _ in run.accepted)
    engine_refused = sum(r.statements == 0 for _, r in run.accepted)
    secs = ", ".join(f"{k} {v:.1f}s" for k, v in run.seconds.items())
    return (
        f"{run.engine}: {len(run.cases)} cases, guard accepts {len(run.accepted)} "
        f"(benign {benign_ok}/{len(benign)}; the engine refuses {engine_refused} of the "
        f"accepted), engine splits {splits_refused + len(run.failures)} (refused by the "
        f"guard: {splits_refused}, accepted: {len(run.failures)}); {secs}"
    )


# ---------------------------------------------------------------------------------------
# The tests
# ---------------------------------------------------------------------------------------

# Texts whose statement count is known, to check each oracle before trusting it.
KNOWN = {
    "common": [
        ("SELECT 1", 1),
        ("SELECT 1; SELECT 2", 2),
        ("SELECT 1;", 1),
        ("SELECT 1 /* ; SELECT 2 */", 1),
        ("SELECT 1 -- ; SELECT 2", 1),
        ("SELECT 'a;b'", 1),
        ("SELECT 1; SELECT 2; SELECT 3", 2),
    ],
    "postgresql": [
        ("SELECT 1 -/**/-1; SELECT 2", 2),
        ("SELECT 1 /* /* */ ; SELECT 2 -- */", 1),
        ("SELECT $a$ ; $a$", 1),
        ("SELECT 1; SELEC 2", 0),
        ("SELECT nosuch; SELECT 2", 2),
        ("SELECT nosuch", 1),
        ("SELECT 1 -- x\r; SELECT 2", 2),
    ],
    "duckdb": [
        ("SELECT 1 /* /* */ ; SELECT 2 -- */", 1),
        ("SELECT $a$ ; $a$", 1),
        ("SELECT 1; SELEC 2", 2),
        ("SELECT 1 -- x\r; SELECT 2", 2),
        ("SELECT 1; SELECT 'x", 0),
        ("SELECT 1 `--`; SELECT 2", 2),
    ],
    "sqlite": [
        ("SELECT 1 /* /* */ ; SELECT 2 -- */", 2),
        ("SELECT [;]", 1),
        ("SELECT 1 -- x\r; SELECT 2", 1),
        ("SELECT nosuch; SELECT 2", 2),
        ("SELECT 1; SELEC 2", 2),
        ("SELEC 1; SELECT 2", 0),
    ],
    "mysql": [
        ("SELECT 1 --\u00a0x FROM (SELECT 5 AS \u00a0x) q; SELECT 666", 2),
        ("SELECT 1 # x ; SELECT 2", 1),
        ("SELECT 1 /* /* */ ; SELECT 2 -- */", 2),
        ("SELECT 1; -- x", 1),
        ("SELECT 1; SELEC 2", 2),
        ("SELEC 1; SELECT 2", 0),
        ("SELECT '\\' ; SELECT 2 -- '", 1),
    ],
}
KNOWN["redshift"] = KNOWN["postgresql"]


@pytest.mark.parametrize("engine", list(ENGINES))
def test_the_oracle_counts_known_statements(engine):
    oracle = ORACLES[engine]()
    try:
        # PostgreSQL only tells one from more than one: counts above 2 are compared as 2
        got = [(text, min(oracle.read(text).statements, 2)) for text, _ in KNOWN["common"] + KNOWN[engine]]
    finally:
        oracle.close()
    assert got == KNOWN["common"] + KNOWN[engine]


@pytest.mark.parametrize("engine", list(ENGINES))
def test_the_engine_sees_one_statement_wherever_the_guard_accepts(engine):
    run = fuzz_run(engine)
    print(_summary(run))
    if run.failures:
        pytest.fail(_report(run) + "\n" + _summary(run), pytrace=False)


@pytest.mark.parametrize("engine", list(ENGINES))
def test_the_guard_accepts_enough_cases_for_the_check_to_mean_something(engine):
    run = fuzz_run(engine)
    benign = [
        ok
        for ok, pairs in ((True, run.accepted), (False, run.refused))
        for c, _ in pairs
        if c.shape == "benign"
    ]
    refused_benign = [c.text for c, _ in run.refused if c.shape == "benign"]
    assert len(benign) >= N_CASES // 10
    assert sum(benign) / len(benign) >= BENIGN_ACCEPTED, (
        f"{engine}: the guard accepts {sum(benign)} of {len(benign)} benign cases; refused "
        f"e.g. {refused_benign[:10]!r}"
    )
    assert len(run.accepted) / len(run.cases) >= ALL_ACCEPTED, _summary(run)


@pytest.mark.parametrize("engine", list(ENGINES))
def test_the_cases_contain_splits_the_engine_sees(engine):
    """The generator is no use if the engine itself never sees the payload as a statement:
    a good share of the cases must be two statements to the engine (the guard refuses
    those, or the main test fails)."""
    run = fuzz_run(engine)
    pairs = run.accepted + run.refused
    splits = sum(_splits(r) for _, r in pairs)
    assert splits / len(pairs) >= ENGINE_SPLITS, _summary(run)


@pytest.mark.parametrize("dialect", sorted(set(ENGINES.values())))
def test_the_generator_makes_every_kind_of_fragment(dialect):
    cases = sqlfuzz.generate(dialect, N_CASES, SEED)
    counts = sqlfuzz.kind_counts(cases)
    missing = {k: counts[k] for k in sqlfuzz.FRAGMENTS if counts[k] < MIN_PER_KIND}
    assert not missing, f"too few cases with these fragment kinds: {missing}"
    shapes = Counter(c.shape for c in cases)
    assert set(shapes) == set(sqlfuzz.SHAPES) and min(shapes.values()) >= N_CASES // 20
    # every odd character stands right after "--" somewhere
    texts = "\n".join(c.text for c in cases)
    missing_chars = [name for name, ch in sqlfuzz.ODD_CHARS.items() if f"--{ch}" not in texts]
    assert not missing_chars, f"never after '--': {missing_chars}"
    assert len(cases) >= N_CASES * 0.9  # few duplicates
    assert sum(sqlfuzz.PAYLOAD_MARK in c.text for c in cases) >= len(cases) * 0.9


def test_the_cases_are_the_same_for_the_same_seed():
    a = [c.text for c in sqlfuzz.generate("postgres", 200, "x")]
    b = [c.text for c in sqlfuzz.generate("postgres", 200, "x")]
    c = [c.text for c in sqlfuzz.generate("postgres", 200, "y")]
    assert a == b and a != c
