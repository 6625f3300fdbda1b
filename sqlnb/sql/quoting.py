"""Identifier quoting per dialect, through sqlglot so every engine's rules apply."""

from __future__ import annotations

import re
from functools import cache

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

from sqlnb.sql.dialects import sqlglot_dialect

# Reserved in PostgreSQL / the SQL standard (some, like USER or CURRENT_DATE, mean a
# function when left unquoted); sqlglot's keyword tables do not list them all.
_RESERVED = frozenset(
    """
all analyse analyze and any array as asc asymmetric authorization between binary both case
cast check collate collation column concurrently constraint create cross current_catalog
current_date current_role current_schema current_time current_timestamp current_user default
deferrable desc distinct do else end except false fetch for foreign freeze from full grant
group having ilike in initially inner intersect into is isnull join lateral leading left like
limit localtime localtimestamp natural not notnull null offset on only or order outer
overlaps placing primary qualify references returning right select session_user similar some
symmetric system_user table tablesample then to trailing true union unique user using
variadic verbose when where window with
""".split()  # noqa: SIM905 - a hundred keywords read as a paragraph, not one per line
)

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def quote_identifier(name: str, dialect: str, always: bool = True) -> str:
    """``name`` as an identifier of ``dialect``.

    Quoted (embedded quote characters doubled) unless ``always`` is False and the name
    reads the same unquoted: letters, digits and underscores, not a keyword, and in the
    case the engine folds unquoted names to (lower in PostgreSQL and Redshift, upper in
    Snowflake).
    """
    if not name:
        raise ValueError("an identifier cannot be empty")
    d = sqlglot_dialect(dialect)
    ident = exp.to_identifier(name, quoted=always or not _plain(name, d))
    return ident.sql(dialect=d)


def _plain(name: str, dialect: str) -> bool:
    if not _PLAIN.fullmatch(name) or name.lower() in _keywords(dialect):
        return False
    if dialect == "snowflake":
        return name == name.upper()
    if dialect in ("postgres", "redshift"):
        return name == name.lower()
    return True


@cache
def _keywords(dialect: str) -> frozenset[str]:
    try:
        d = Dialect.get_or_raise(dialect or None)
    except ValueError:
        return _RESERVED
    words = {k.lower() for k in d.tokenizer_class.KEYWORDS if " " not in k}
    words |= {k.lower() for k in getattr(d.generator_class, "RESERVED_KEYWORDS", ()) or ()}
    return frozenset(words | _RESERVED)


def qualified(schema: str | None, name: str, dialect: str) -> str:
    """``schema.name`` with each part quoted (just ``name`` when there is no schema)."""
    parts = [p for p in (schema, name) if p]
    return ".".join(quote_identifier(p, dialect) for p in parts)
