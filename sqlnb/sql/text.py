"""Lexical helpers that must never touch the inside of strings or comments.

- :func:`split_statements` splits a cell into statements on top-level semicolons.
- :func:`find_params` / :func:`bind_params` handle ``:name`` parameters: the SQL is
  rewritten into the driver's placeholder style and the values travel separately to the
  driver — values are never substituted into the SQL text.

The scanner understands '…' and "…" and `…` quoting, -- and # and /* */ comments,
PostgreSQL dollar quoting ($tag$…$tag$), ``::`` casts and MySQL's ``:=``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from sqlnb.errors import UsageError

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DOLLAR_TAG = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$")


@dataclass(frozen=True)
class Token:
    kind: str  # "code", "string", "ident", "comment", "param", "semicolon"
    text: str
    start: int


def scan(sql: str, dialect: str = "") -> Iterator[Token]:
    """Yield tokens: runs of plain code, quoted strings/identifiers, comments, ``:params``."""
    i, n = 0, len(sql)
    backslash_escapes = dialect in ("mysql",)
    hash_comments = dialect in ("mysql",)
    code_start = 0

    def flush(upto: int) -> Iterator[Token]:
        if upto > code_start:
            yield Token("code", sql[code_start:upto], code_start)

    while i < n:
        c = sql[i]
        nxt = sql[i + 1] if i + 1 < n else ""
        kind = None
        end = i
        if c in ("'", '"', "`"):
            end = _quote_end(sql, i, c, backslash_escapes and c != "`")
            kind = "string" if c == "'" else "ident"
        elif c == "-" and nxt == "-" or (c == "#" and hash_comments):
            nl = sql.find("\n", i)
            end = n if nl < 0 else nl
            kind = "comment"
        elif c == "/" and nxt == "*":
            close = sql.find("*/", i + 2)
            end = n if close < 0 else close + 2
            kind = "comment"
        elif c == "$" and dialect in ("postgres", "redshift", "duckdb", ""):
            m = _DOLLAR_TAG.match(sql, i)
            if m and (i == 0 or not (sql[i - 1].isalnum() or sql[i - 1] == "_")):
                close = sql.find(m.group(0), m.end())
                end = n if close < 0 else close + len(m.group(0))
                kind = "string"
        elif c == ":":
            if nxt == ":" or nxt == "=":  # cast or assignment
                i += 2
                continue
            prev = sql[i - 1] if i > 0 else ""
            m = _NAME.match(sql, i + 1)
            if m and prev != ":" and not (prev.isalnum() or prev == "_"):
                end = m.end()
                kind = "param"
        elif c == ";":
            end = i + 1
            kind = "semicolon"
        if kind is None:
            i += 1
            continue
        yield from flush(i)
        yield Token(kind, sql[i:end], i)
        i = code_start = end
    yield from flush(n)


def _quote_end(sql: str, start: int, q: str, backslash: bool) -> int:
    i, n = start + 1, len(sql)
    while i < n:
        c = sql[i]
        if backslash and c == "\\":
            i += 2
            continue
        if c == q:
            if i + 1 < n and sql[i + 1] == q:  # doubled quote
                i += 2
                continue
            return i + 1
        i += 1
    return n


_TRIGGER = re.compile(r"^\s*create\s+(temp|temporary\s+)?\s*trigger\b", re.I)
_END = re.compile(r"\bend\s*$", re.I)


def split_statements(sql: str, dialect: str = "") -> list[str]:
    """Split on top-level semicolons; comment-only pieces are dropped."""
    statements: list[str] = []
    current: list[str] = []
    has_code = False
    for tok in scan(sql, dialect):
        if tok.kind == "semicolon":
            text = "".join(current)
            if _TRIGGER.match(text) and not _END.search(_strip_comments(text, dialect)):
                current.append(tok.text)  # inside CREATE TRIGGER ... BEGIN ...; END
                continue
            if has_code:
                statements.append(text.strip())
            current, has_code = [], False
            continue
        current.append(tok.text)
        if tok.kind != "comment" and tok.text.strip():
            has_code = True
    if has_code:
        statements.append("".join(current).strip())
    return statements


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


def bind_params(sql: str, params: Mapping[str, Any] | None, style: str,
                dialect: str = "") -> tuple[str, Any]:
    """Rewrite ``:name`` placeholders into the driver's ``style``.

    Returns the SQL for the driver and the parameters in the form the driver takes
    (a dict for named styles, a list for positional ones).  Raises
    :class:`UsageError` naming a parameter that has no value.
    """
    names = find_params(sql, dialect)
    if not names:
        return sql, None
    params = params or {}
    missing = [n for n in names if n not in params]
    if missing:
        raise UsageError(f"No value for parameter :{missing[0]}",
                         hint=f"define {missing[0]} in the notebook before running the cell "
                              "(or write ::{0} for a cast)".format(missing[0]))
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
            elif style == "numeric":
                out.append(f"${names.index(name) + 1}")
            else:
                raise ValueError(f"unknown paramstyle {style}")
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
