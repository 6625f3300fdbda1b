"""The read-only guard: does this SQL only read?

A statement is read-only when all of these hold (checked in this order; the first that
fails gives the reason):

1. it is not empty, holds no NUL character, and sqlnb's own scanner
   (:mod:`sqlnb.sql.text`, which follows each engine's rules for strings, quoted
   identifiers, comments and dollar quotes) finds no trick where the engine reads the
   text differently from how it looks: no unterminated string or comment, no MySQL
   executable comment (``/*! ... */``, ``/*M! ... */``, which the server runs), no MySQL
   ``--`` without a following space (not a comment there), no carriage return inside a
   line comment (engines disagree on whether it ends the comment), no ``/*`` inside a
   comment where engines disagree on whether it nests (MySQL, Snowflake, Redshift), and
   no ``U&"..."`` identifier (its escapes can spell any function name), and no MySQL
   optimizer hint comment (``/*+ ... */``): hints such as ``MAX_EXECUTION_TIME`` and
   ``SET_VAR`` override the statement timeout and session settings, and whether MySQL reads
   the comment as a hint depends on where it stands, so the guard refuses every one rather
   than strip it (remove the hint and run the query again);
2. it is exactly one statement, as the engine splits it (a comment after the last
   semicolon is no statement);
3. sqlglot parses it for the dialect into exactly one tree (anything sqlglot cannot parse
   is not read-only) whose root is a query (SELECT, set operation, VALUES);
4. nothing anywhere inside the tree writes or escapes: no DML or DDL (including
   data-modifying CTEs), no Command (what sqlglot falls back to for syntax it does not
   model: CALL, EXPLAIN, DO, ...), no INTO (SELECT INTO, INTO OUTFILE, INTO @var), no
   locking clause (FOR UPDATE/SHARE), no session or transaction statement, no assignment
   to a user variable (MySQL ``@v := ...``), no table that is really a file (DuckDB's
   replacement scans: ``FROM 'x.csv'``, ``FROM data.parquet``, ``FROM "s3://..."``) or a
   Snowflake stage (``FROM @stage``), no Snowflake ``seq.NEXTVAL``, no call of a
   function named through Snowflake's ``IDENTIFIER('...')``, no MySQL ``LAST_INSERT_ID(expr)``
   (it sets what the next ``LAST_INSERT_ID()`` returns), and no call of a function known to
   write, change the session, run SQL given as text, sleep or lock, or reach files or hosts
   outside the database (the names and prefixes of :mod:`sqlnb.sql.forbidden`, including
   every Snowflake ``SYSTEM$`` function and DuckDB's ``read_*`` and ``*_scan``);
5. no call of a function the engine's own metadata marks as volatile or side-effecting
   (:mod:`sqlnb.sql.functions`): PostgreSQL's and Redshift's ``pg_proc.provolatile = 'v'``
   (user-defined functions included), DuckDB's ``duckdb_functions()`` ``VOLATILE`` /
   ``has_side_effects`` and every DuckDB table function not reviewed as read-only, except
   a short reviewed allowlist of harmless ones (``random()``, clocks, UUIDs, sizes).  A
   connected adapter hands the guard its live metadata (``functions=``); without it the
   guard uses the snapshot shipped with sqlnb.  A function counts as called when its name
   comes before a ``(`` (as the engine reads the text) or sqlglot reads a call of it;
6. sqlglot's tokenizer cuts the text into exactly the strings, identifiers and comments
   that the engine does (sqlnb's scanner), under every setting the engine may run with:
   a backslash before a quote ends a string or not depending on standard_conforming_strings
   (PostgreSQL, Redshift) and NO_BACKSLASH_ESCAPES (MySQL), so such text is refused there.
   Otherwise the tree checked in 3 and 4 might not be what the engine runs.

This is the first of two layers: every read-only connection also runs in a read-only
session of the engine (see the adapters), because no parser can know every side effect:
views over volatile functions, functions declared STABLE that still change the session,
user-defined functions of engines that publish no volatility (MySQL, SQLite, Snowflake),
and functions no list here names.
"""

from __future__ import annotations

import bisect
import itertools
import logging
import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError
from sqlglot.tokens import Token, TokenType

from sqlnb.sql.dialects import sqlglot_dialect
from sqlnb.sql.forbidden import refused_by_name
from sqlnb.sql.functions import FunctionPolicy, snapshot_policy

if TYPE_CHECKING:  # at run time sqlnb.sql.text loads where it is used
    from sqlnb.sql.text import Token as Piece


@dataclass(frozen=True)
class Verdict:
    read_only: bool
    reason: str
    statement_type: str | None = None

    def __bool__(self) -> bool:
        return self.read_only


# Expression types that may never appear anywhere in a read-only statement.
_FORBIDDEN: tuple[type[exp.Expr], ...] = tuple(
    getattr(exp, name)
    for name in (
        "DML",
        "DDL",
        "Insert",
        "Update",
        "Delete",
        "Merge",
        "Create",
        "Drop",
        "Alter",
        "TruncateTable",
        "Command",
        "Into",
        "Lock",
        "Copy",
        "Set",
        "Pragma",
        "Attach",
        "Detach",
        "Grant",
        "Revoke",
        "Use",
        "Transaction",
        "Commit",
        "Rollback",
        "Analyze",
        "Export",
        "Install",
        "LoadData",
        "Cache",
        "Uncache",
        "Refresh",
        "Kill",
        "Comment",
        "Declare",
        "Execute",
        "Describe",
        "Show",
    )
    if hasattr(exp, name)
)

# Root types that count as a query.
_QUERY_ROOTS: tuple[type[exp.Expr], ...] = (exp.Query, exp.Values)

# Snowflake's IDENTIFIER('name'), a name given as a string (absent from old sqlglot).
_DYNAMIC_IDENTIFIER = getattr(exp, "DynamicIdentifier", None)

# DuckDB's replacement scans read a file when a table name (its dotted parts joined, so
# FROM data.csv as much as FROM 'data.csv') looks like a path, a URL, a glob or a file
# name with a known extension.
_FILE_LIKE = re.compile(r"[/\\:*?]")
_FILE_EXT = re.compile(
    r"\.(?:csv|tsv|txt|dat|parquet|parq|json|jsonl|ndjson|xlsx|xls|avro|arrow|ipc|feather"
    r"|orc|gz|gzip|zst|bz2|xz|lz4|zip)$",
    re.I,
)

_log = logging.getLogger("sqlglot")


def check_read_only(sql: str, dialect: str = "", functions: FunctionPolicy | None = None) -> Verdict:
    """The read-only verdict for ``sql`` in ``dialect`` (a sqlglot dialect name).

    ``functions`` is the engine's function policy, built from the connected engine's
    metadata (see :mod:`sqlnb.sql.functions`); without it the snapshot shipped for the
    dialect applies (PostgreSQL, Redshift, DuckDB; other engines publish none)."""
    from sqlnb.sql.text import scan, split_statements

    d = sqlglot_dialect(dialect)
    if not sql or not sql.strip():
        return Verdict(False, "the statement is empty")
    if "\x00" in sql:
        return Verdict(False, "it contains a NUL character")

    tokens = list(scan(sql, d))
    lexical = _lexical_tricks(tokens, d)
    if lexical:
        return Verdict(False, lexical)

    pieces = len(split_statements(sql, d))  # as the engine splits it
    if pieces == 0:
        return Verdict(False, "there is no statement, only comments")
    if pieces > 1:
        return Verdict(False, f"it holds {pieces} statements; exactly one is allowed")

    previous = _log.level
    _log.setLevel(logging.CRITICAL)  # sqlglot warns when it falls back to Command
    try:
        trees = [t for t in sqlglot.parse(sql, read=d) if t is not None and not isinstance(t, exp.Semicolon)]
    except (SqlglotError, ValueError, RecursionError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return Verdict(
            False,
            f"sqlglot could not parse it as {d or 'generic'} SQL ({first}), "
            "so it is not known to be read-only",
        )
    finally:
        _log.setLevel(previous)

    if len(trees) > 1:
        return Verdict(False, f"it holds {len(trees)} statements; exactly one is allowed")
    if not trees:
        return Verdict(False, "there is no statement, only comments")
    root = trees[0]
    kind = type(root).__name__.upper()
    if not isinstance(root, _QUERY_ROOTS):
        return Verdict(False, f"it is {_describe(root, tokens)}, not a query", kind)
    called: set[str] = set()  # function names as sqlglot reads the calls
    as_table: set[str] = set()  # ... of those called as a table (FROM, JOIN, LATERAL)
    after_dot: set[str] = set()  # t.f: PostgreSQL's attribute notation may call f(t)
    policy = functions if functions is not None else snapshot_policy(d)
    for node in root.walk():
        problem = _node_problem(node, d)
        if problem:
            return Verdict(False, problem, kind)
        if d in _ATTRIBUTE_CALLS and isinstance(node, (exp.Column, exp.Dot)):
            if isinstance(node, exp.Column) and node.table:
                after_dot.add(node.name.lower())
            elif isinstance(node, exp.Dot) and isinstance(node.expression, exp.Identifier):
                after_dot.add(node.expression.name.lower())
        if isinstance(node, exp.Func):
            names = _function_names(node)
            called.update(names)
            if isinstance(node.parent, (exp.Table, exp.Lateral)):
                as_table.update(names)
    # Last, because a statement refused above needs no second opinion (and sqlglot reads
    # the rest of a command such as CALL or EXPLAIN as one string): does the engine see
    # the same strings and comments as the tree we just checked?
    try:
        theirs = Dialect.get_or_raise(d or None).tokenize(sql)
    except (SqlglotError, ValueError, RecursionError):
        return Verdict(False, "sqlglot could not tokenize it, so it is not known to be read-only", kind)
    disagreement = _reading_differs(sql, tokens, d, theirs)
    if disagreement:
        return Verdict(False, disagreement, kind)
    if policy is not None:
        problem = _policy_problem(policy, called, as_table, after_dot, theirs)
        if problem:
            return Verdict(False, problem, kind)
        # every relation name read (CTE names too: one may shadow a table the engine asks)
        tables = {t.name.lower() for t in root.find_all(exp.Table) if t.name}
        refused_relations = policy.relation_refusals(tables)
        if refused_relations:
            name = sorted(refused_relations)[0]
            return Verdict(False, f"it reads {name}, which {refused_relations[name]}", kind)
    return Verdict(True, "a single read-only query", kind)


def is_read_only(sql: str, dialect: str = "", functions: FunctionPolicy | None = None) -> bool:
    return check_read_only(sql, dialect, functions).read_only


# sqlnb's own wrappers that are not queries themselves, per dialect: a prefix line, then a
# statement the guard accepts, then a newline (see sqlnb.sql.statement.Statement.wrap).
# Only these exact shapes: a server-side cursor for a row cap (PostgreSQL, Redshift), and
# MariaDB's per-statement settings (the read-only layer, the row cap and the timeout),
# optionally tagged with the comment sqlnb's cancel looks for in the process list.
_CURSOR_WRAPPER = re.compile(r"DECLARE sqlnb_cap_[0-9]+ CURSOR FOR\n")
_WRAPPERS = {
    "postgres": _CURSOR_WRAPPER,
    "redshift": _CURSOR_WRAPPER,
    "mysql": re.compile(
        r"SET STATEMENT (?:tx_read_only=1|sql_select_limit=[0-9]+|max_statement_time=[0-9.]+)"
        r"(?:, (?:tx_read_only=1|sql_select_limit=[0-9]+|max_statement_time=[0-9.]+))* FOR"
        r"(?: /\* sqlnb:[0-9a-f]{32} \*/)?\n"
    ),
}


def check_wrapped(sql: str, dialect: str = "", functions: FunctionPolicy | None = None) -> Verdict:
    """The verdict on one of sqlnb's wrappers around a statement, as sent: a query
    (``SELECT ... FROM (\n<statement>\n) AS q``) is checked like any statement; a
    server-side cursor or MariaDB's ``SET STATEMENT ... FOR`` must have exactly sqlnb's
    own first line, and what follows it must be a statement the guard accepts."""
    d = sqlglot_dialect(dialect)
    wrapper = _WRAPPERS.get(d)
    m = wrapper.match(sql) if wrapper is not None else None
    if m is None:
        return check_read_only(sql, d, functions)
    inner = sql[m.end() :]
    if not inner.endswith("\n"):
        return Verdict(False, "sqlnb's wrapper does not end its statement on a line of its own")
    verdict = check_read_only(inner[:-1], d, functions)
    return Verdict(verdict.read_only, verdict.reason, verdict.statement_type)


# Dialects where ``x.f`` can call ``f(x)`` (attribute notation).
_ATTRIBUTE_CALLS = frozenset({"postgres", "redshift"})

# Token types that name a function a user may have created (the live lookup asks the
# engine about these); keywords that happen to stand before "(" (IN, VALUES, ...) are not.
_NAME_TOKENS = frozenset({TokenType.VAR, TokenType.IDENTIFIER})


def _policy_problem(
    policy: FunctionPolicy, called: set[str], as_table: set[str], after_dot: set[str], theirs: list[Token]
) -> str | None:
    """The first function the statement calls that ``policy`` refuses.  A call is a name
    before "(" in sqlglot's tokens (which, checked above, the engine reads alike: a comment
    between the name and "(" is no token) or a call sqlglot's tree holds.  A name the
    policy refuses only as a table is refused where the tree calls it as one, or where
    sqlglot's tree does not show the call at all."""
    written: set[str] = set()
    askable: set[str] = set()
    for tok, nxt in itertools.pairwise(theirs):
        if nxt.token_type == TokenType.L_PAREN and tok.text:
            name = tok.text.lower()
            written.add(name)
            if tok.token_type in _NAME_TOKENS:
                askable.add(name)
    refusals = policy.refusals(written | called, ask=askable, on_row=after_dot)
    for name in policy.table_only & refusals.keys():
        if name not in as_table and name in called:
            del refusals[name]
    if not refusals:
        return None
    name = sorted(refusals)[0]
    return f"it calls {name}(), which {refusals[name]}"


def _node_problem(node: exp.Expr, dialect: str) -> str | None:
    if isinstance(node, _FORBIDDEN):
        return f"it contains {_describe(node)}"
    if isinstance(node, exp.Func):
        for name in sorted(_function_names(node)):
            why = refused_by_name(name, dialect)
            if why is not None:
                return f"it calls {name}(), which {why}"
    if _DYNAMIC_IDENTIFIER and isinstance(node, _DYNAMIC_IDENTIFIER):
        target = node.this
        if node.expressions:  # IDENTIFIER('system$wait')(1): a call through a string
            return "it calls a function named through IDENTIFIER(...), which the guard cannot check"
        if isinstance(target, exp.Literal) and str(target.this).startswith("@"):
            return f"it reads files from the stage {target.this}"
    if (
        dialect == "mysql"
        and isinstance(node, exp.Anonymous)
        and node.expressions
        and node.name.lower() == "last_insert_id"
    ):
        return (
            "it calls LAST_INSERT_ID() with an argument, which sets the value the "
            "session's next LAST_INSERT_ID() returns"
        )
    if dialect == "mysql" and isinstance(node, exp.Hint):
        return (
            "it has a MySQL optimizer hint (/*+ ... */), which can override the "
            "statement timeout and session settings"
        )
    if isinstance(node, exp.PropertyEQ) and isinstance(node.this, exp.Parameter):
        return "it assigns a user variable (@var := ...), which changes the session"
    if isinstance(node, exp.Table):
        name = node.name
        if name.startswith("@"):
            return f"it reads files from the stage {name}"
        if dialect == "duckdb" and isinstance(node.this, exp.Identifier):
            full = ".".join(part.name for part in node.parts)
            if _FILE_LIKE.search(full) or _FILE_EXT.search(full):
                return f"it reads the table {full!r}, which DuckDB would read as a file (a replacement scan)"
    if (
        dialect == "snowflake"
        and isinstance(node, exp.Column)
        and node.table
        and node.name.lower() == "nextval"
    ):
        return "it takes NEXTVAL of a sequence, which writes"
    return None


def _function_names(node: exp.Func) -> set[str]:
    if isinstance(node, exp.Anonymous):
        return {node.name.lower()} if node.name else set()
    names = set()
    try:
        names.add(node.sql_name().lower())
        names.update(n.lower() for n in node.sql_names())
    except Exception:
        names.add(type(node).__name__.lower())
    return names


def _describe(node: exp.Expr, tokens: list[Piece] | None = None) -> str:
    if isinstance(node, exp.Command):
        word = str(node.this).split()[0].upper() if node.this else ""
        return _a(f"{word} command") if word else "a command"
    if isinstance(node, exp.Into):
        return "an INTO clause (it writes a table, file or variable)"
    if isinstance(node, exp.Lock):
        return "a locking clause (FOR UPDATE/SHARE)"
    names = {
        "Insert": "an INSERT",
        "Update": "an UPDATE",
        "Delete": "a DELETE",
        "Merge": "a MERGE",
        "Create": "a CREATE",
        "Drop": "a DROP",
        "Alter": "an ALTER",
        "TruncateTable": "a TRUNCATE",
        "Copy": "a COPY",
        "Set": "a SET",
        "Pragma": "a PRAGMA",
        "Attach": "an ATTACH",
        "Detach": "a DETACH",
        "Grant": "a GRANT",
        "Revoke": "a REVOKE",
        "Use": "a USE",
        "Transaction": "a transaction statement",
        "Commit": "a COMMIT",
        "Rollback": "a ROLLBACK",
        "Analyze": "an ANALYZE",
        "Export": "an EXPORT",
        "Install": "an INSTALL",
        "LoadData": "a LOAD DATA",
        "Cache": "a CACHE",
        "Kill": "a KILL",
        "Comment": "a COMMENT",
        "Declare": "a DECLARE",
        "Execute": "an EXECUTE",
        "Describe": "a DESCRIBE",
        "Show": "a SHOW",
    }
    name = type(node).__name__
    if name in names:
        return names[name]
    # not a statement sqlglot models (it may have read CHECKPOINT as a column name): name
    # the statement by its first word
    first = next((t.text.split()[0] for t in tokens or () if t.kind == "code" and t.text.split()), None)
    if first and re.fullmatch(r"[A-Za-z_]+", first):
        return _a(f"{first.upper()} statement")
    return _a(f"{name.upper()} statement")


def _a(words: str) -> str:
    return ("an " if words[:1].upper() in "AEIOU" else "a ") + words


# ---- lexical checks ----------------------------------------------------------------------

_MYSQL_EXEC_COMMENT = re.compile(r"/\*M?!", re.I)

# Settings an engine may run with that change where strings end: for each dialect, the
# possible values of "backslash escapes in '...' strings", the one sqlglot reads first.
# Dialects not named have one reading.
_BACKSLASH_READINGS = {
    "postgres": (False, True),  # standard_conforming_strings on (default) / off
    "redshift": (True, False),
    "mysql": (True, False),  # default / NO_BACKSLASH_ESCAPES
}
# Dialects where it is unclear whether /* nests inside a comment (PostgreSQL and DuckDB
# nest, SQLite does not).
_UNSURE_NESTING = frozenset({"mysql", "snowflake", "redshift"})

# Dialects with U&"..." identifiers, whose escapes (\0065, or any UESCAPE character)
# spell characters the tree would not show.
_UNICODE_IDENTIFIERS = frozenset({"postgres", "redshift", "duckdb", ""})

_CODE_KINDS = frozenset({"code", "param", "semicolon"})
_QUOTED_KINDS = frozenset({"string", "ident"})


# SQLite reads a variable written Tcl-style, $name(...) (also @name(, :name(, $a::b(), as
# one token up to the next ")", across quotes, comment starts and semicolons.
_SQLITE_TCL_VARIABLE = re.compile(r"(?<![A-Za-z0-9_$])[$@:](?:[A-Za-z0-9_$]|::)*\(")


def _lexical_tricks(tokens: list[Piece], dialect: str) -> str | None:
    """Text the engine reads differently from what it looks like (sqlnb's scanner follows
    the engine's rules; ``tokens`` is its reading)."""
    if dialect == "sqlite":
        code = "".join(t.text if t.kind in ("code", "param") else " " for t in tokens)
        if _SQLITE_TCL_VARIABLE.search(code):
            return (
                "it has a variable written $name(...), which SQLite reads as one name up "
                "to the next ')', across quotes and comments"
            )
    if dialect == "mysql" and sum(t.kind == "semicolon" for t in tokens) > 1:
        return (
            "it has more than one semicolon: MariaDB reads a comment after an empty "
            "statement (;;) as one more statement"
        )
    for k, tok in enumerate(tokens):
        if not tok.closed:
            what = "comment" if tok.kind == "comment" else "string or quoted identifier"
            return f"it contains an unterminated {what}"
        if tok.kind == "comment":
            text = tok.text
            if dialect == "mysql" and _MYSQL_EXEC_COMMENT.match(text):
                return "it contains a MySQL executable comment (/*! ... */), which the server runs"
            if dialect == "mysql" and text.startswith("/*+"):
                return (
                    "it has a MySQL optimizer hint comment (/*+ ... */): hints such as "
                    "MAX_EXECUTION_TIME and SET_VAR override the statement timeout and "
                    "session settings; remove the hint"
                )
            if text.startswith("/*"):
                if dialect in _UNSURE_NESTING and ("/*" in text[2:-2] or text[2:3] == "/"):
                    return (
                        "it has a /* inside a comment; engines disagree on whether that "
                        "opens a nested comment"
                    )
            elif re.search(r"\r(?!\n)", text):
                return (
                    "it has a carriage return inside a line comment; engines disagree on "
                    "whether it ends the comment"
                )
        elif (
            tok.kind == "ident"
            and dialect in _UNICODE_IDENTIFIERS
            and k
            and tokens[k - 1].kind == "code"
            and tokens[k - 1].text[-2:].upper() == "U&"
        ):
            return (
                'it has a Unicode-escaped identifier (U&"..."), which can spell any name '
                "the guard would refuse"
            )
        elif tok.kind == "code" and dialect == "mysql" and re.search(r"--(?![\x00-\x20\x7f])", tok.text):
            return "it contains '--' not followed by a space, which MySQL does not treat as a comment"
        if tok.kind not in _QUOTED_KINDS:
            odd = _odd_character(tok.text)
            if odd:
                return _odd_character_reason(odd, tok.kind)
    return None


# Characters that engines read differently outside strings and quoted names: ASCII control
# characters but tab, newline and carriage return (form feed and vertical tab are
# whitespace to some engines and not to others), DEL, C1 controls, and every Unicode space,
# line or paragraph separator, format character (zero-width space, BOM, bidi controls),
# private-use, surrogate or unassigned code point.  MySQL's ``--`` is a comment only before
# an ASCII space; PostgreSQL and DuckDB read any non-ASCII character as part of a name;
# sqlglot and Python take U+00A0 and U+3000 for whitespace.  Letters, digits, marks,
# punctuation and symbols of any script are left alone (names and comments in any
# language).
_ASCII_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _odd_character(text: str) -> str | None:
    m = _ASCII_CONTROL.search(text)
    if m:
        return m.group()
    if text.isascii():
        return None
    for ch in text:
        if ord(ch) > 0x7F and unicodedata.category(ch)[0] in "ZC":
            return ch
    return None


def _odd_character_reason(ch: str, kind: str) -> str:
    where = "a comment" if kind == "comment" else "the SQL outside strings and quoted names"
    name = unicodedata.name(ch, "")
    label = f"U+{ord(ch):04X}" + (f" {name}" if name else "")
    return (
        f"it has the character {label} in {where}, which engines read differently (a "
        "space to some, part of a name or of a comment to others); type a plain space "
        "or move it inside a string"
    )


def _reading_differs(sql: str, tokens: list[Piece], dialect: str, theirs: list[Token]) -> str | None:
    """Whether sqlglot's tokenizer (its tokens: ``theirs``) cuts ``sql`` into other strings
    and comments than the engine does, under any setting the engine may have."""
    from sqlnb.sql.text import scan

    readings = _BACKSLASH_READINGS.get(dialect, (None,))
    for backslash in readings:
        ours = tokens if backslash == readings[0] else list(scan(sql, dialect, backslash_escapes=backslash))
        if not _same_reading(sql, ours, theirs):
            if backslash != readings[0]:
                setting = (
                    "standard_conforming_strings"
                    if dialect in ("postgres", "redshift")
                    else "NO_BACKSLASH_ESCAPES"
                )
                return (
                    "it has a backslash before a quote, which ends the string or not "
                    f"depending on the server's {setting} setting"
                )
            return (
                "sqlglot would read its strings or comments differently from the "
                f"{dialect or 'database'} engine"
            )
    return None


def _same_reading(sql: str, ours: list[Piece], theirs: list[Token]) -> bool:
    """Whether sqlglot's tokens fall on the strings, comments and code that sqlnb's scanner
    (the engine's rules) finds: no sqlglot token straddles a boundary or sits in a comment,
    and no code or string goes missing from sqlglot's tokens (read as a comment)."""
    if not ours:
        return not theirs
    starts = [t.start for t in ours]

    def at(pos: int) -> int:
        return bisect.bisect_right(starts, pos) - 1

    covered = bytearray(len(sql))
    for tok in theirs:
        a, e = tok.start, tok.end + 1
        if e <= a:
            continue
        k, m = at(a), at(e - 1)
        first, last = ours[k], ours[m]
        if tok.token_type == TokenType.HINT:
            ok = first.kind == "comment" and k == m and first.start == a and first.end == e
        elif first.kind in _CODE_KINDS:
            middle = all(t.kind in _CODE_KINDS for t in ours[k:m])
            ok = middle and (
                last.kind in _CODE_KINDS or (last.kind in _QUOTED_KINDS and last.end == e and k < m)
            )
        elif first.kind in _QUOTED_KINDS:
            ok = k == m and first.start == a and first.end == e
        else:
            ok = False
        if not ok:
            return False
        covered[a:e] = b"\x01" * (e - a)
    for t in ours:
        if t.kind == "comment":
            continue
        for i in range(t.start, t.end):
            if not covered[i] and (t.kind != "code" or not sql[i].isspace()):
                return False
    return True
