"""SQL laid out for people: one clause per line, in the query's own dialect (sqlglot).

    >>> pretty('SELECT "customers".name, count(*) AS n FROM "customers" AS customers GROUP BY 1', "duckdb")
    'SELECT\\n  customers.name,\\n  COUNT(*) AS n\\nFROM customers\\nGROUP BY\\n  1'

The laid-out text must mean what the original means, or the original comes back
unchanged: :func:`pretty` parses its own output again and compares the two trees
(identifiers resolved as the dialect resolves them), the comments, and the function names
written (sqlglot may spell a function another way that it reads back as the same one but
the engine may not know).  Text that does not parse, several statements, or anything that
differs: the original text, untouched.

Besides the layout it changes two things that do not change the meaning: quotes that a
name does not need are dropped (``"customers"`` → ``customers`` where the dialect folds
unquoted names to the same case and the name is no keyword; ``"Customers"`` in
PostgreSQL keeps them) and a table's alias that only repeats its name (``customers AS
customers``) goes.  Quotes are never added, and names keep their case.

Only text for people goes through here (the inserted cell, the panel's SQL): what the agent
runs is the text the guard accepted, never this one.
"""

from __future__ import annotations

import logging
from collections import Counter
from itertools import pairwise

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers
from sqlglot.tokens import Token, TokenType

from sqlnb.sql.dialects import sqlglot_dialect
from sqlnb.sql.quoting import quote_identifier

__all__ = ["pretty"]

_log = logging.getLogger("sqlglot")

# function-like words the layout may write that the original did not (``x::int`` is
# written ``CAST(x AS INT)``, which every engine reads)
_ADDED_CALLS = frozenset({"CAST"})
# the widest line sqlglot aims for
WIDTH = 72


def pretty(sql: str, dialect: str | None) -> str:
    """``sql`` laid out one clause per line in ``dialect`` (sqlglot's name, or an alias such
    as ``postgresql``), meaning the same; the original text when it cannot be (it does not
    parse, holds several statements, or the laid-out text would read differently)."""
    if not isinstance(sql, str) or not sql.strip():
        return sql
    previous = _log.level
    _log.setLevel(logging.CRITICAL)  # sqlglot's warnings are no news to the user
    try:
        out = _laid_out(sql.strip(), sqlglot_dialect(dialect))
    except Exception:  # sqlglot failed somewhere: the original text is always right
        return sql
    finally:
        _log.setLevel(previous)
    return out if out is not None else sql


def _laid_out(text: str, dialect: str) -> str | None:
    tree = _parse_one(text, dialect)
    if tree is None:
        return None
    out = _tidy(tree.copy(), dialect).sql(
        dialect=dialect,
        pretty=True,
        max_text_width=WIDTH,
        unsupported_level=ErrorLevel.RAISE,
    )
    again = _parse_one(out, dialect)
    if again is None or _canonical(again, dialect) != _canonical(tree, dialect):
        return None
    before, after = _tokens(text, dialect), _tokens(out, dialect)
    if _comments(before) != _comments(after):
        return None
    if not _calls(after) <= _calls(before) | _ADDED_CALLS:
        return None
    return out


def _parse_one(text: str, dialect: str) -> exp.Expr | None:
    """The one statement of ``text``; None for none, several, or text that does not parse."""
    try:
        trees = [t for t in sqlglot.parse(text, read=dialect or None) if t is not None]
    except Exception:
        return None
    return trees[0] if len(trees) == 1 else None


def _tidy(tree: exp.Expr, dialect: str) -> exp.Expr:
    """Quotes a name does not need dropped, and ``t AS t`` written ``t`` (in place)."""
    for ident in tree.find_all(exp.Identifier):
        if ident.quoted and _plain(ident.name, dialect):
            ident.set("quoted", False)
    for table in tree.find_all(exp.Table):
        _drop_same_alias(table)
    return tree


def _plain(name: str, dialect: str) -> bool:
    """Whether ``name`` reads as the same name without quotes in ``dialect``."""
    try:
        return bool(name) and quote_identifier(name, dialect, always=False) == name
    except ValueError:
        return False


def _drop_same_alias(table: exp.Table) -> None:
    """``customers AS customers`` → ``customers`` (a table of no schema, aliased by its own
    name written the same way, quotes and all, with no column aliases)."""
    alias = table.args.get("alias")
    if not isinstance(alias, exp.TableAlias) or alias.args.get("columns"):
        return
    name, own = alias.this, table.this
    if not isinstance(name, exp.Identifier) or not isinstance(own, exp.Identifier):
        return
    if table.args.get("db") or table.args.get("catalog"):
        return
    if name.name == own.name and bool(name.quoted) == bool(own.quoted):
        table.set("alias", None)


def _canonical(tree: exp.Expr, dialect: str) -> exp.Expr:
    """The tree as the engine resolves it: names folded the way ``dialect`` folds them,
    then quotes ignored, and aliases that only repeat their table's name left out."""
    tree = normalize_identifiers(tree.copy(), dialect=dialect or None)
    for ident in tree.find_all(exp.Identifier):
        ident.set("quoted", False)
    for table in tree.find_all(exp.Table):
        _drop_same_alias(table)
    return tree


def _tokens(text: str, dialect: str) -> list[Token]:
    return sqlglot.tokenize(text, read=dialect or None)


def _comments(tokens: list[Token]) -> Counter[str]:
    """Every comment's words (a ``--`` comment may come back as ``/* */``)."""
    return Counter(" ".join(c.split()) for t in tokens for c in t.comments if c.strip())


def _calls(tokens: list[Token]) -> set[str]:
    """The words written right before an opening parenthesis (function names, mostly; not
    operators: ``a != (SELECT ...)`` may come back as ``a <> (SELECT ...)``)."""
    return {
        a.text.upper()
        for a, b in pairwise(tokens)
        if b.token_type == TokenType.L_PAREN and (a.text[:1].isalpha() or a.text[:1] == "_")
    }
