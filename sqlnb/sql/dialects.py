"""sqlnb dialect names are sqlglot's.  One place maps engines and aliases onto them."""

from __future__ import annotations

DIALECTS = ("sqlite", "duckdb", "postgres", "mysql", "snowflake", "redshift")

ALIASES = {
    "postgresql": "postgres",
    "pg": "postgres",
    "mariadb": "mysql",
    "sqlite3": "sqlite",
}


def sqlglot_dialect(name: str | None) -> str:
    if not name:
        return ""
    name = name.lower()
    return ALIASES.get(name, name)
