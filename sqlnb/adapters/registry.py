"""Scheme → adapter class, imported lazily so a missing driver only matters when used."""

from __future__ import annotations

import importlib

from sqlnb import errors

# scheme: (module, class, driver import name, pip extra)
ADAPTERS: dict[str, tuple[str, str, str, str]] = {
    "sqlite": ("sqlnb.adapters.sqlite", "SQLiteAdapter", "sqlite3", ""),
    "duckdb": ("sqlnb.adapters.duckdb", "DuckDBAdapter", "duckdb", ""),
    "postgresql": ("sqlnb.adapters.postgres", "PostgresAdapter", "psycopg", "postgres"),
    "mysql": ("sqlnb.adapters.mysql", "MySQLAdapter", "mysql.connector", "mysql"),
    "snowflake": ("sqlnb.adapters.snowflake", "SnowflakeAdapter", "snowflake.connector", "snowflake"),
    "redshift": ("sqlnb.adapters.redshift", "RedshiftAdapter", "redshift_connector", "redshift"),
}


def schemes() -> list[str]:
    return list(ADAPTERS)


def check_scheme(scheme: str) -> tuple[str, str, str, str]:
    try:
        return ADAPTERS[scheme]
    except KeyError:
        raise errors.UnknownSchemeError(
            f"Unknown database scheme {scheme!r}",
            hint=f"sqlnb supports {', '.join(s + '://' for s in ADAPTERS)}",
        ) from None


def adapter_class(scheme: str):
    """The adapter class for ``scheme``; a clear error for unknown schemes or missing drivers."""
    module_name, class_name, driver, extra = check_scheme(scheme)
    try:
        importlib.import_module(driver)
    except ImportError:
        install = f'pip install "sqlnb[{extra}]"' if extra else f"pip install {driver}"
        raise errors.MissingDriverError(
            f"The {scheme} driver ({driver}) is not installed", hint=f"run: {install}"
        ) from None
    module = importlib.import_module(module_name)
    return getattr(module, class_name)
