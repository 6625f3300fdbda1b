"""Identifier quoting per dialect, through sqlglot so every engine's rules apply."""

from __future__ import annotations

from sqlglot import exp

from sqlnb.sql.dialects import sqlglot_dialect


def quote_identifier(name: str, dialect: str, always: bool = True) -> str:
    """``name`` as an identifier of ``dialect`` (quoted unless ``always`` is False and it
    is a plain lower-case name that needs no quoting)."""
    d = sqlglot_dialect(dialect)
    ident = exp.to_identifier(name, quoted=always or not _plain(name, d))
    return ident.sql(dialect=d)


def _plain(name: str, dialect: str) -> bool:
    import re

    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return False
    if dialect == "snowflake":
        return name == name.upper()
    if dialect in ("postgres", "redshift"):
        return name == name.lower()
    return True


def qualified(schema: str | None, name: str, dialect: str) -> str:
    parts = [p for p in (schema, name) if p]
    return ".".join(quote_identifier(p, dialect) for p in parts)
