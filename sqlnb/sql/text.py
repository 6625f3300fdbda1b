"""Lexical helpers that must never touch the inside of strings or comments.

- :func:`scan` cuts SQL into code, strings, quoted identifiers, comments, ``:name``
  parameters and semicolons, following the quoting and comment rules of each dialect.
- :func:`split_statements` splits a cell into statements on top-level semicolons.
- :func:`find_params` / :func:`bind_params` handle ``:name`` parameters: the SQL is
  rewritten into the driver's placeholder style and the values travel separately to the
  driver — values are never substituted into the SQL text.

What the scanner knows, per dialect:

- '…' strings with '' doubling everywhere; backslash escapes inside them in MySQL (also
  in its "…" strings), Snowflake and Redshift, and in E'…' strings of PostgreSQL, Redshift
  and DuckDB;
- "…" identifiers (strings in MySQL), `…` identifiers in MySQL, SQLite and DuckDB, […]
  identifiers in SQLite;
- -- comments (MySQL: only when a space or control character follows), # comments in
  MySQL, // comments in Snowflake, /* */ comments, nested in PostgreSQL, Redshift and DuckDB;
- dollar quoting: $tag$…$tag$ in PostgreSQL, Redshift and DuckDB, $$…$$ in Snowflake;
- ``::`` casts and ``:=`` assignments, which are not parameters, nor is ``:name`` right
  after an identifier, a closing bracket or a quote (Snowflake's ``v:field`` paths).

With no dialect the scanner is lenient: all three quote characters, nested comments and
dollar quoting.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from sqlnb.errors import UsageError

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# PostgreSQL's tag: a letter, underscore or non-ASCII character, then those or digits
_DOLLAR_TAG = re.compile(r"\$((?:[A-Za-z_]|[^\x00-\x7f])(?:[A-Za-z0-9_]|[^\x00-\x7f])*)?\$")


@dataclass(frozen=True)
class Token:
    kind: str  # "code", "string", "ident", "comment", "param", "semicolon"
    text: str
    start: int
    closed: bool = True  # False for a string, identifier or comment that never ends

    @property
    def end(self) -> int:
        return self.start + len(self.text)


@dataclass(frozen=True)
class _Rules:
    quotes: Mapping[str, tuple[str, str, bool, bool]]  # open: (close, kind, backslash, doubling)
    backslash: bool = False  # backslash escapes in '…' strings
    e_strings: bool = False  # E'…' strings always take backslash escapes
    hash_comments: bool = False
    slash_comments: bool = False
    mysql_dashes: bool = False  # -- is a comment only before whitespace/control characters
    line_ends: str = "\n\r"
    nested: bool = False
    dollar: str = ""  # "tag": $tag$…$tag$; "plain": $$…$$ only


_STD = {"'": ("'", "string", True, True), '"': ('"', "ident", False, True)}
_RULES: dict[str, _Rules] = {
    "": _Rules(quotes={**_STD, "`": ("`", "ident", False, True)}, e_strings=True, nested=True, dollar="tag"),
    "sqlite": _Rules(
        quotes={**_STD, "`": ("`", "ident", False, True), "[": ("]", "ident", False, False)}, line_ends="\n"
    ),
    "duckdb": _Rules(
        quotes={**_STD, "`": ("`", "ident", False, True)}, e_strings=True, nested=True, dollar="tag"
    ),
    "postgres": _Rules(quotes=_STD, e_strings=True, nested=True, dollar="tag"),
    "redshift": _Rules(quotes=_STD, backslash=True, e_strings=True, nested=True, dollar="tag"),
    "mysql": _Rules(
        quotes={
            "'": ("'", "string", True, True),
            '"': ('"', "string", True, True),
            "`": ("`", "ident", False, True),
        },
        backslash=True,
        hash_comments=True,
        mysql_dashes=True,
        line_ends="\n",
    ),
    "snowflake": _Rules(quotes=_STD, backslash=True, slash_comments=True, dollar="plain"),
}


def dialect_rules(dialect: str | None) -> _Rules:
    from sqlnb.sql.dialects import sqlglot_dialect

    return _RULES.get(sqlglot_dialect(dialect), _RULES[""])


def _mysql_comment_after_dashes(ch: str) -> bool:
    """MySQL and MariaDB read ``--`` as a comment only before an ASCII space or control
    character (``my_isspace``/``my_iscntrl`` of the connection's character set): not before
    U+00A0 or any other Unicode space, which Python's ``str.isspace`` would accept."""
    return ord(ch) <= 32 or ch == "\x7f"


def _ident_char(ch: str) -> bool:
    return ch.isalnum() or ch in "_$" or ord(ch) > 127


def scan(
    sql: str, dialect: str = "", *, backslash_escapes: bool | None = None, nested_comments: bool | None = None
) -> Iterator[Token]:
    """Yield tokens: runs of plain code, quoted strings/identifiers, comments, ``:params``
    and semicolons.  Joined, the tokens' texts give back ``sql``.

    ``backslash_escapes`` and ``nested_comments`` override the dialect's defaults (some
    engines let a server setting change them).
    """
    rules = dialect_rules(dialect)
    backslash = rules.backslash if backslash_escapes is None else backslash_escapes
    nested = rules.nested if nested_comments is None else nested_comments
    i, n = 0, len(sql)
    code_start = 0

    while i < n:
        c = sql[i]
        nxt = sql[i + 1] if i + 1 < n else ""
        kind = None
        end = i
        closed = True
        if c in rules.quotes:
            close, kind, escapes, doubling = rules.quotes[c]
            escapes = escapes and backslash
            if (
                c == "'"
                and rules.e_strings
                and i > 0
                and sql[i - 1] in "eE"
                and (i < 2 or not _ident_char(sql[i - 2]))
            ):
                escapes = True  # E'…': escapes whatever standard_conforming_strings says
            end, closed = _quote_end(sql, i, close, escapes, doubling)
        elif (
            (
                c == "-"
                and nxt == "-"
                and (not rules.mysql_dashes or i + 2 >= n or _mysql_comment_after_dashes(sql[i + 2]))
            )
            or (c == "#" and rules.hash_comments)
            or (c == "/" and nxt == "/" and rules.slash_comments)
        ):
            end = i
            while end < n and sql[end] not in rules.line_ends:
                end += 1
            kind = "comment"
        elif c == "/" and nxt == "*":
            end, closed = _block_comment_end(sql, i, nested)
            kind = "comment"
        elif c == "$" and rules.dollar and (i == 0 or not _ident_char(sql[i - 1])):
            if rules.dollar == "tag":
                m = _DOLLAR_TAG.match(sql, i)
                tag = m.group(0) if m else None
            else:
                tag = "$$" if nxt == "$" else None
            if tag:
                found = sql.find(tag, i + len(tag))
                end, closed = (n, False) if found < 0 else (found + len(tag), True)
                kind = "string"
        elif c == ":":
            if nxt == ":" or nxt == "=":  # cast or assignment
                i += 2
                continue
            prev = sql[i - 1] if i > 0 else ""
            m = _NAME.match(sql, i + 1)
            # after an identifier, a bracket or a quote it is a path (v:field), a slice
            # (a[1:n]) or a cast, never a parameter
            if m and not (prev and (_ident_char(prev) or prev in ":)]\"`'")):
                end = m.end()
                kind = "param"
        elif c == ";":
            end = i + 1
            kind = "semicolon"
        if kind is None:
            i += 1
            continue
        if i > code_start:
            yield Token("code", sql[code_start:i], code_start)
        yield Token(kind, sql[i:end], i, closed)
        i = code_start = end
    if n > code_start:
        yield Token("code", sql[code_start:n], code_start)


def _quote_end(sql: str, start: int, q: str, backslash: bool, doubling: bool = True) -> tuple[int, bool]:
    i, n = start + 1, len(sql)
    while i < n:
        c = sql[i]
        if backslash and c == "\\":
            i += 2
            continue
        if c == q:
            if doubling and i + 1 < n and sql[i + 1] == q:  # doubled quote
                i += 2
                continue
            return i + 1, True
        i += 1
    return n, False


def _block_comment_end(sql: str, start: int, nested: bool) -> tuple[int, bool]:
    i, n, depth = start + 2, len(sql), 1
    while i < n:
        if nested and sql.startswith("/*", i):
            depth += 1
            i += 2
        elif sql.startswith("*/", i):
            depth -= 1
            i += 2
            if depth == 0:
                return i, True
        else:
            i += 1
    return n, False


# CREATE TRIGGER bodies (SQLite, MySQL) hold semicolons between BEGIN and END; CASE … END
# may appear inside, and MySQL's END IF / END LOOP / … close blocks that BEGIN did not open.
_TRIGGER = re.compile(
    r"create\s+(?:or\s+replace\s+)?(?:definer\s*=\s*\S+\s+)?"
    r"(?:temp\s+|temporary\s+)?trigger\b",
    re.I,
)
_OPENS = re.compile(r"\b(?:begin|case)\b", re.I)
_CLOSES = re.compile(r"\bend\b(?!\s+(?:if|loop|while|repeat)\b)", re.I)


# the whitespace cut around a statement: ASCII only (PostgreSQL and DuckDB read U+00A0 and
# other non-ASCII characters as part of a name)
_SPACE = " \t\n\r"


def split_statements(sql: str, dialect: str = "") -> list[str]:
    """Split on top-level semicolons; comment-only pieces are dropped.

    Semicolons inside strings, quoted identifiers, comments, dollar quotes and the
    BEGIN … END body of CREATE TRIGGER do not split.
    """
    statements: list[str] = []
    current: list[str] = []
    code: list[str] = []  # the current statement without strings and comments
    has_code = False
    for tok in scan(sql, dialect):
        if tok.kind == "semicolon":
            if _inside_trigger_body(" ".join(code)):
                current.append(tok.text)
                continue
            if has_code:
                statements.append("".join(current).strip(_SPACE))
            current, code, has_code = [], [], False
            continue
        current.append(tok.text)
        if tok.kind == "code":
            code.append(tok.text)
        if tok.kind != "comment" and tok.text.strip():
            has_code = True
    if has_code:
        statements.append("".join(current).strip(_SPACE))
    return statements


def _inside_trigger_body(code: str) -> bool:
    code = code.lstrip()
    if not _TRIGGER.match(code):
        return False
    return len(_OPENS.findall(code)) > len(_CLOSES.findall(code))


def _strip_comments(sql: str, dialect: str) -> str:
    return "".join(t.text for t in scan(sql, dialect) if t.kind != "comment").strip()


def strip_comments(sql: str, dialect: str = "") -> str:
    return _strip_comments(sql, dialect)


def find_params(sql: str, dialect: str = "") -> list[str]:
    """Names of the ``:name`` parameters in ``sql``, in order of first appearance."""
    seen: list[str] = []
    for tok in scan(sql, dialect):
        if tok.kind == "param" and tok.text[1:] not in seen:
            seen.append(tok.text[1:])
    return seen


#: parameter values in a driver's form: by name, by position, or none (see bind_params)
BoundParams = dict[str, Any] | list[Any] | None


def bind_params(
    sql: str, params: Mapping[str, Any] | None, style: str, dialect: str = ""
) -> tuple[str, BoundParams]:
    """Rewrite ``:name`` placeholders into the driver's ``style``.

    Styles: ``named`` (``:name``), ``dollar_named`` (``$name``), ``pyformat``
    (``%(name)s``), ``format`` (``%s``), ``qmark`` (``?``) and ``numeric`` (``$1``, one
    number per distinct name).  In the two ``%`` styles every other ``%`` is doubled.

    Returns the SQL for the driver and the parameters in the form the driver takes
    (a dict for named styles, a list for positional ones; None when the SQL has no
    parameters, in which case the SQL comes back unchanged).  Raises
    :class:`UsageError` naming a parameter that has no value.
    """
    if style not in _STYLES:
        raise ValueError(f"unknown paramstyle {style}")
    names = find_params(sql, dialect)
    if not names:
        return sql, None
    params = params or {}
    missing = [n for n in names if n not in params]
    if missing:
        raise UsageError(
            f"No value for parameter :{missing[0]}",
            hint=f"define {missing[0]} in the notebook before running the cell "
            f"(or write ::{missing[0]} for a cast)",
        )
    out: list[str] = []
    positional: list[Any] = []
    for tok in scan(sql, dialect):
        text = tok.text
        if tok.kind == "param":
            name = text[1:]
            if style == "named":
                out.append(text)
            elif style == "dollar_named":
                out.append("$" + name)
            elif style == "pyformat":
                out.append(f"%({name})s")
            elif style == "format":
                out.append("%s")
                positional.append(params[name])
            elif style == "qmark":
                out.append("?")
                positional.append(params[name])
            else:  # numeric
                out.append(f"${names.index(name) + 1}")
            continue
        if style in ("pyformat", "format"):
            text = text.replace("%", "%%")
        out.append(text)
    rewritten = "".join(out)
    if style in ("format", "qmark"):
        return rewritten, positional
    if style == "numeric":
        return rewritten, [params[n] for n in names]
    return rewritten, {n: params[n] for n in names}


_STYLES = ("named", "dollar_named", "pyformat", "format", "qmark", "numeric")


def bind_literals(sql: str, params: Mapping[str, Any], dialect: str, literal: Callable[[Any], str]) -> str:
    """``sql`` with each ``:name`` parameter replaced by ``literal(value)``: for a driver
    that would interpolate values into the text itself after sqlnb checked it, so the text
    checked is the text sent.  Raises :class:`UsageError` naming a parameter that has no
    value."""
    bind_params(sql, params, "named", dialect)  # a missing value says which
    return "".join(
        literal(params[tok.text[1:]]) if tok.kind == "param" else tok.text for tok in scan(sql, dialect)
    )
