"""A memory of accepted answers: the questions a user kept an answer to, with that SQL.

When the user keeps an answer (runs the ``%%sql`` cell ``%%ask`` inserted, presses the
panel's thumbs-up, or ``%sqlnb remember``), the question and its SQL are stored for that
database in a local SQLite file (``$SQLNB_HOME/memory.sqlite``, else
``~/.sqlnb/memory.sqlite``, mode 0600).  Later questions on the same database get the most
similar accepted pairs as examples in the model's prompt.

What is stored: the question, the SQL (read-only queries only, checked by the read-only
guard), the connection's name, the dialect, where it came from and when, under a
fingerprint of the database.  Never result rows, never a password: the fingerprint is a
SHA-256 of the database's non-secret identity (:meth:`Adapter.identity`: engine, host,
port, database, user, or the resolved path of a database file).  The same database
reached through two connection names shares one memory.  An in-memory SQLite or DuckDB
database is a database of its own connection: its identity is a random token of that
connection, so its entries reach no other database, and they are of use only while that
connection is open (``%sqlnb memory clear`` removes them).

Similarity is lexical (BM25 over word stems, :func:`similar_pairs`); nothing leaves the
machine for it.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import logging
import math
import os
import sqlite3
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

from sqlnb import errors
from sqlnb.agent.lexicon import content_words, sql_content_words

if TYPE_CHECKING:
    from sqlnb.adapters import Adapter
    from sqlnb.sql.functions import FunctionPolicy

SOURCES = ("cell", "thumbs_up", "remember")
BUSY_TIMEOUT = 10.0  # s: another kernel writing holds the file this long at most
_log = logging.getLogger("sqlnb.memory")
_T = TypeVar("_T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS accepted (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    fingerprint TEXT NOT NULL,
    dialect TEXT NOT NULL DEFAULT '',
    connection TEXT NOT NULL DEFAULT '',
    question TEXT NOT NULL,
    question_key TEXT NOT NULL,
    sql TEXT NOT NULL,
    sql_key TEXT NOT NULL,
    source TEXT NOT NULL,
    created_at TEXT NOT NULL,
    used_at TEXT NOT NULL,
    times INTEGER NOT NULL DEFAULT 1,
    UNIQUE (fingerprint, question_key, sql_key)
);
CREATE INDEX IF NOT EXISTS accepted_fingerprint ON accepted (fingerprint);
"""
_COLUMNS = (
    "id",
    "fingerprint",
    "dialect",
    "connection",
    "question",
    "sql",
    "source",
    "created_at",
    "used_at",
    "times",
)


# ---- where, and which database -------------------------------------------------------------
def sqlnb_home() -> Path:
    """The user's sqlnb directory: ``$SQLNB_HOME``, else ``~/.sqlnb``."""
    configured = os.environ.get("SQLNB_HOME")
    return Path(configured).expanduser() if configured else Path.home() / ".sqlnb"


def memory_path() -> Path:
    """The memory's file: ``$SQLNB_HOME/memory.sqlite``, else ``~/.sqlnb/memory.sqlite``."""
    return sqlnb_home() / "memory.sqlite"


def database_identity(adapter: Adapter) -> dict[str, Any]:
    """The non-secret parts that name ``adapter``'s database (never a password)."""
    return dict(getattr(adapter, "_adapter", adapter).identity())


def database_fingerprint(adapter: Adapter) -> str:
    """A stable hex digest (SHA-256) of the dialect and :func:`database_identity`."""
    ident = {"dialect": adapter.dialect, **database_identity(adapter)}
    text = json.dumps(ident, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---- similarity -----------------------------------------------------------------------------
SQL_WEIGHT = 0.3  # a word of the stored SQL counts this much against a word of its question


def _doc_terms(pair: Mapping[str, Any]) -> dict[str, float]:
    tf: defaultdict[str, float] = defaultdict(float)
    for w in content_words(str(pair.get("question") or "")):
        tf[w] += 1.0
    for w in sql_content_words(str(pair.get("sql") or "")):
        tf[w] += SQL_WEIGHT
    return tf


def similar_pairs(
    question: str, pairs: Sequence[Mapping[str, Any]], k: int = 3, *, k1: float = 1.2, b: float = 0.75
) -> list[dict[str, Any]]:
    """The ``k`` pairs ``[{question, sql, ...}]`` most similar to ``question``, best first,
    each a copy with its ``score`` (BM25 over word stems, stop words left out: the stems and
    the stop list of :mod:`sqlnb.agent.lexicon`; a word of the pair's SQL, SQL's own words
    aside, counts :data:`SQL_WEIGHT` of one of its question).  Only scores above 0; ties
    keep the order given."""
    terms = set(content_words(question))
    if not terms or not pairs or k <= 0:
        return []
    docs = [_doc_terms(p) for p in pairs]
    n = len(docs)
    lengths = [sum(d.values()) for d in docs]
    avg = (sum(lengths) / n) or 1.0
    df = {t: sum(1 for d in docs if d.get(t)) for t in terms}
    scored = []
    for i, (pair, d, length) in enumerate(zip(pairs, docs, lengths, strict=True)):
        score = 0.0
        for t in terms:
            tf = d.get(t, 0.0)
            if tf:
                idf = math.log(1.0 + (n - df[t] + 0.5) / (df[t] + 0.5))
                score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avg))
        if score > 0:
            scored.append((-score, i, {**pair, "score": round(score, 4)}))
    scored.sort(key=lambda s: (s[0], s[1]))
    return [s[2] for s in scored[:k]]


# ---- the store ------------------------------------------------------------------------------
def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _question_key(question: str) -> str:
    return " ".join(question.lower().split())


def _broken(path: Path, exc: BaseException) -> errors.MemoryStoreError:
    what = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return errors.MemoryStoreError(
        f"The memory of accepted answers ({path}) cannot be used: {what}",
        hint="move the file away or delete it (it holds only remembered questions and their "
        "SQL; sqlnb starts a new one), or turn the memory off: "
        "%config AskMagic.use_memory = False",
    )


class MemoryStore:
    """Accepted question/SQL pairs per database fingerprint, in one SQLite file.

    Every call opens the file, runs one short transaction and closes it, with a busy
    timeout, so several kernels can write to it.  Problems with the file raise
    :class:`sqlnb.errors.MemoryStoreError`."""

    def __init__(self, path: str | os.PathLike[str] | None = None):
        self.path = Path(path).expanduser() if path is not None else memory_path()
        self._ready = False
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"MemoryStore({str(self.path)!r})"

    # ---- the file ------------------------------------------------------------------
    def _open(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)  # never wider than 0600
            try:
                if os.fstat(fd).st_mode & 0o077:
                    os.fchmod(fd, 0o600)
            finally:
                os.close(fd)
            con = sqlite3.connect(
                str(self.path), timeout=BUSY_TIMEOUT, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as exc:
            raise _broken(self.path, exc) from None
        try:
            con.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
            if not self._ready:
                with self._lock:
                    con.executescript(_SCHEMA)
                    self._ready = True
        except sqlite3.Error as exc:
            con.close()
            raise _broken(self.path, exc) from None
        return con

    def _run(self, work: Callable[[sqlite3.Connection], _T], write: bool = True) -> _T:
        con = self._open()
        try:
            con.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                out = work(con)
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")
            return out
        except sqlite3.Error as exc:
            raise _broken(self.path, exc) from None
        finally:
            con.close()

    # ---- writing -------------------------------------------------------------------
    def remember(
        self,
        fingerprint: str,
        question: str,
        sql: str,
        *,
        source: str,
        connection: str = "",
        dialect: str = "",
        functions: FunctionPolicy | None = None,
    ) -> int:
        """Store ``question`` and its ``sql`` for the database ``fingerprint``; returns the
        entry's id.  The same question with the same SQL (normalised) again updates that
        entry (source, connection, time, count).  Only a single read-only query is
        remembered (the read-only guard of ``dialect``, with the engine's function policy
        ``functions`` when given)."""
        from sqlnb.sql.guard import check_read_only
        from sqlnb.sql.normalize import normalize_sql

        if source not in SOURCES:
            raise errors.UsageError(f"unknown memory source {source!r}", hint=f"one of {', '.join(SOURCES)}")
        question = " ".join((question or "").split())
        sql = (sql or "").strip()
        if not question:
            raise errors.UsageError(
                "No question to remember", hint='give it: %sqlnb remember "How many orders are paid?"'
            )
        if not sql:
            raise errors.UsageError("No SQL to remember")
        if not fingerprint:
            raise errors.UsageError("No database fingerprint to remember the answer under")
        verdict = check_read_only(sql, dialect, functions)
        if not verdict.read_only:
            raise errors.UsageError(
                f"Not remembered: only read-only queries are remembered, and this one is "
                f"not ({verdict.reason})",
                hint="the memory keeps the questions and SELECT queries you accepted",
            )
        now = _now()
        row = (
            fingerprint,
            dialect,
            connection,
            question,
            _question_key(question),
            sql,
            normalize_sql(sql, dialect),
            source,
            now,
            now,
        )

        def work(con: sqlite3.Connection) -> int:
            con.execute(
                "INSERT INTO accepted (fingerprint, dialect, connection, question, question_key,"
                " sql, sql_key, source, created_at, used_at) VALUES (?,?,?,?,?,?,?,?,?,?)"
                " ON CONFLICT (fingerprint, question_key, sql_key) DO UPDATE SET"
                " question = excluded.question, sql = excluded.sql, source = excluded.source,"
                " connection = excluded.connection, used_at = excluded.used_at,"
                " times = times + 1",
                row,
            )
            entry_id: int = con.execute(
                "SELECT id FROM accepted WHERE fingerprint = ? AND question_key = ? AND sql_key = ?",
                (row[0], row[4], row[6]),
            ).fetchone()[0]
            return entry_id

        return self._run(work)

    def delete(self, ids: Iterable[int] | None = None, *, fingerprint: str | None = None) -> int:
        """Delete entries by id (within ``fingerprint`` when given too), or every entry of
        ``fingerprint``; returns how many went."""
        if ids is None and fingerprint is None:
            raise errors.UsageError(
                "Say which remembered answers to delete",
                hint="give their ids, or a database fingerprint for all of one database",
            )
        clauses: list[str] = []
        params: list[int | str] = []
        if ids is not None:
            ids = [int(i) for i in ids]
            if not ids:
                return 0
            clauses.append(f"id IN ({','.join('?' * len(ids))})")
            params += ids
        if fingerprint is not None:
            clauses.append("fingerprint = ?")
            params.append(fingerprint)
        return self._run(
            lambda con: con.execute(f"DELETE FROM accepted WHERE {' AND '.join(clauses)}", params).rowcount
        )

    # ---- reading -------------------------------------------------------------------
    def entries(self, fingerprint: str | None = None) -> list[dict[str, Any]]:
        """Every entry (of ``fingerprint``), oldest first: id, connection, question, sql,
        source, created_at, and fingerprint, dialect, used_at, times."""
        where, params = ("WHERE fingerprint = ?", (fingerprint,)) if fingerprint else ("", ())

        def work(con: sqlite3.Connection) -> list[dict[str, Any]]:
            rows = con.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM accepted {where} ORDER BY id", params
            ).fetchall()
            return [dict(zip(_COLUMNS, r, strict=True)) for r in rows]

        return self._run(work, write=False)

    def similar(self, fingerprint: str, question: str, k: int = 3) -> list[dict[str, Any]]:
        """The ``k`` entries of ``fingerprint`` whose questions are most like ``question``
        (:func:`similar_pairs`), best first; of several answers to one question, the latest."""
        latest: dict[str, dict[str, Any]] = {}
        for e in sorted(self.entries(fingerprint), key=lambda e: (e["used_at"], e["id"]), reverse=True):
            latest.setdefault(_question_key(e["question"]), e)
        return similar_pairs(question, list(latest.values()), k)

    def export(self, path_or_file: str | os.PathLike[str] | IO[str], fingerprint: str | None = None) -> int:
        """Write the entries (of ``fingerprint``) as JSON ``{"format": "sqlnb-memory",
        "version": 1, "entries": [...]}``; returns how many."""
        items = self.entries(fingerprint)
        text = (
            json.dumps(
                {"format": "sqlnb-memory", "version": 1, "entries": items}, indent=2, ensure_ascii=False
            )
            + "\n"
        )
        if hasattr(path_or_file, "write"):
            path_or_file.write(text)
        else:
            target = Path(path_or_file).expanduser()
            try:
                target.write_text(text, encoding="utf-8")
            except OSError as exc:
                raise errors.UsageError(
                    f"Cannot write {target}: {exc.strerror or exc}", hint="choose a writable file path"
                ) from None
        return len(items)


# ---- what the front doors call --------------------------------------------------------------
def remember_answer(
    store: MemoryStore, adapter: Adapter, question: str, sql: str, *, connection: str = "", source: str
) -> int:
    """Remember ``question`` → ``sql`` for ``adapter``'s database (fingerprint, dialect and
    the engine's read-only function policy from the adapter)."""
    functions = None
    base = getattr(adapter, "_adapter", adapter)
    if not getattr(base, "closed", False):
        try:
            functions = base.guard_functions()
        except errors.SqlnbError:
            functions = None  # the shipped snapshot stands in
    return store.remember(
        database_fingerprint(adapter),
        question,
        sql,
        source=source,
        connection=connection,
        dialect=adapter.dialect,
        functions=functions,
    )


_PROVENANCE = "-- sqlnb ask:"


def provenance_question(text: str) -> str | None:
    """The question in the provenance comment ``%%ask`` writes into its cell
    (``-- sqlnb ask: <question> | model: ... | attempts: n``), or None."""
    for line in (text or "").splitlines():
        s = line.strip()
        if s.startswith(_PROVENANCE):
            rest = s[len(_PROVENANCE) :]
            cut = rest.rfind(" | model: ")
            question = (rest[:cut] if cut >= 0 else rest).strip()
            return question or None
        if s and not s.startswith("--"):
            return None  # the comment comes before the SQL
    return None


def without_provenance(text: str) -> str:
    """The cell's SQL without the provenance comment line."""
    return "\n".join(
        line for line in (text or "").splitlines() if not line.strip().startswith(_PROVENANCE)
    ).strip()


class MemoryWarning:
    """Says once that the memory cannot be used, then stays quiet (questions go on)."""

    def __init__(self) -> None:
        self.warned = False

    def __call__(self, exc: BaseException) -> None:
        if not self.warned:
            self.warned = True
            _log.warning("sqlnb: answering without the memory of accepted answers: %s", exc)
