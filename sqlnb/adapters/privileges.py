"""What the credentials of a connection may change: its write access.

sqlnb's agent only ever runs guarded read-only queries, whatever the role may do; this
module tells people what the role itself could do, so that they can choose a read-only
one.  One function per engine (keyed by the adapter's scheme) asks the engine through the
adapter's public ``execute(sql, readonly=True, ...)`` — so every query passes the
read-only guard and runs in a read-only session like any other — and condenses the answer
into a :class:`WriteAccess`:

- PostgreSQL: superuser, CREATEROLE / CREATEDB, CREATE on the database, the tables and
  views the role may INSERT / UPDATE / DELETE / TRUNCATE / TRIGGER (column grants
  included), the schemas it may CREATE in, membership of ``pg_write_server_files`` /
  ``pg_execute_server_program``, and whether dblink or a foreign-data wrapper is installed;
- Redshift: the same from its PostgreSQL 8 catalog (no extensions there; COPY and UNLOAD
  reach S3 through the cluster's IAM roles, which no query shows);
- MySQL / MariaDB: ``information_schema.USER_PRIVILEGES`` / ``SCHEMA_PRIVILEGES`` /
  ``TABLE_PRIVILEGES`` / ``COLUMN_PRIVILEGES`` of the user and of its roles
  (``APPLICABLE_ROLES``) — ``SHOW GRANTS`` is no query, the guard refuses it;
- Snowflake: the enabled roles' grants in ``INFORMATION_SCHEMA.TABLE_PRIVILEGES`` and
  ``OBJECT_PRIVILEGES`` of the current database, and whether an administrator role is
  among them;
- SQLite / DuckDB: a read-only connection, an in-memory database, or a database file this
  process may write (``os.access``), with its number of tables.

An inspection that fails never fails the connection: it gives ``can_write=None`` with the
reason.  :func:`write_access` computes it once per connection and caches it (the
connection manager asks for it at connect time).
"""

from __future__ import annotations

import os
import re
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from sqlnb import errors

if TYPE_CHECKING:  # pragma: no cover
    from sqlnb.adapters.base import Adapter

#: what every "can write" summary ends with
ADVICE = "the agent stays read-only; a read-only role is safer"
FILE_ADVICE = "the agent stays read-only; a --readonly connection is safer"
_TIMEOUT = 10.0  # seconds per inspection query
_LISTED = 3  # schema names spelled out in a summary


@dataclass(frozen=True)
class WriteAccess:
    """What a connection's credentials may change (not what sqlnb's agent does: it only
    reads).  ``can_write`` is None when sqlnb could not tell (``reason`` says why)."""

    can_write: bool | None
    label: str  # a few words, for a narrow indicator ("read-only role", "can write 37 tables")
    summary: str  # one line for people
    engine: str = ""  # the adapter's scheme
    role: str | None = None  # the role / user the engine reports
    writable_tables: int | None = None  # tables and views the role may change (None: unknown)
    create_schemas: tuple[str, ...] = ()  # schemas it may create objects in ("*": any)
    superuser: bool | None = None  # superuser, SUPER, an administrator role
    # may write files on the database server (SQLite / DuckDB: on this machine, through
    # ATTACH or COPY ... TO)
    server_files: bool | None = None
    remote_links: tuple[str, ...] = ()  # installed extensions that reach other servers
    powers: tuple[str, ...] = ()  # other things it may change ("create roles", ...)
    reason: str = ""  # what the engine said / how sqlnb found out
    elapsed: float = 0.0  # seconds the inspection took

    @property
    def read_only(self) -> bool:
        return self.can_write is False

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["create_schemas"] = list(self.create_schemas)
        data["remote_links"] = list(self.remote_links)
        data["powers"] = list(self.powers)
        data["elapsed"] = round(self.elapsed, 4)
        return data


# ---------------------------------------------------------------------------------------
# Caching: once per connection
# ---------------------------------------------------------------------------------------

_CACHE: weakref.WeakKeyDictionary[Any, WriteAccess] = weakref.WeakKeyDictionary()
_CACHE_LOCK = threading.Lock()


def write_access(adapter: Adapter, *, refresh: bool = False) -> WriteAccess:
    """The write access of ``adapter``'s credentials, inspected on first use and cached for
    the connection's life (``refresh=True`` asks the engine again).  Never raises."""
    if not refresh:
        with _CACHE_LOCK:
            cached = _CACHE.get(adapter)
        if cached is not None:
            return cached
    found = inspect_write_access(adapter)
    with _CACHE_LOCK:
        _CACHE[adapter] = found
    return found


def cached_write_access(adapter: Adapter) -> WriteAccess | None:
    """The cached write access of ``adapter``, or None when it was never inspected."""
    with _CACHE_LOCK:
        return _CACHE.get(adapter)


def inspect_write_access(adapter: Adapter) -> WriteAccess:
    """Ask the engine what ``adapter``'s credentials may change (uncached).  A failure
    gives ``can_write=None`` with the reason; it never raises."""
    scheme = getattr(adapter, "scheme", "") or getattr(getattr(adapter, "spec", None), "scheme", "")
    inspector = INSPECTORS.get(scheme)
    start = time.perf_counter()
    if inspector is None:
        found = unknown(scheme, f"sqlnb has no privilege inspection for {scheme or 'this engine'}")
    else:
        try:
            found = inspector(adapter)
        except errors.SqlnbError as exc:
            found = unknown(scheme, _why(exc))
        except Exception as exc:  # a driver's surprise must not fail the connection
            found = unknown(scheme, f"{type(exc).__name__}: {' '.join(str(exc).split())}")
    return _with(found, elapsed=time.perf_counter() - start)


def _why(exc: errors.SqlnbError) -> str:
    """The error in one line: its message (classified errors keep the engine's words)."""
    return " ".join(exc.message.split()) or type(exc).__name__


def _with(found: WriteAccess, **changes: Any) -> WriteAccess:
    import dataclasses

    return dataclasses.replace(found, **changes)


# ---------------------------------------------------------------------------------------
# Building the verdict and its sentences
# ---------------------------------------------------------------------------------------


def unknown(engine: str, reason: str, role: str | None = None) -> WriteAccess:
    """Could not tell: counted as writable where that matters (``require_readonly_role``)."""
    reason = reason.strip().rstrip(".") or "no answer"
    return WriteAccess(
        None,
        "write access unknown",
        f"sqlnb could not tell what this role may change ({reason}) — {ADVICE}",
        engine=engine,
        role=role,
        reason=reason,
    )


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _names(names: tuple[str, ...], word: str) -> str:
    if "*" in names:
        return f"any {word}"
    shown = ", ".join(names[:_LISTED])
    more = f" and {len(names) - _LISTED} more" if len(names) > _LISTED else ""
    return f"{word}{'' if len(names) == 1 else 's'} {shown}{more}"


def role_verdict(
    engine: str,
    role: str | None,
    *,
    writable_tables: int | None,
    create_schemas: tuple[str, ...] = (),
    superuser: bool | None = False,
    server_files: bool | None = False,
    remote_links: tuple[str, ...] = (),
    powers: tuple[str, ...] = (),
    reason: str = "",
    schema_word: str = "schema",
    who_word: str = "role",
) -> WriteAccess:
    """The verdict for a server engine's role from what its catalog said."""
    if superuser:
        here = f", {_plural(writable_tables, 'table')} included" if writable_tables else ""
        clauses = [f"is a superuser: it may change anything on the server{here}"]
    else:
        clauses = []
        if writable_tables:
            clauses.append(f"can write {_plural(writable_tables, 'table')}")
        if create_schemas:
            clauses.append(f"can create tables in {_names(create_schemas, schema_word)}")
        if server_files:
            clauses.append("can write files on the database server")
        clauses += [f"can {p}" for p in powers]
    links = ""
    if remote_links:
        links = (
            f"; {' and '.join(remote_links)} {'is' if len(remote_links) == 1 else 'are'} "
            "installed, which can reach other servers"
        )
    who = f"this {who_word} ({role})" if role else f"this {who_word}"
    common: dict[str, Any] = {
        "engine": engine,
        "role": role,
        "writable_tables": writable_tables,
        "create_schemas": create_schemas,
        "superuser": superuser,
        "server_files": server_files,
        "remote_links": remote_links,
        "powers": powers,
        "reason": reason,
    }
    if not clauses:
        return WriteAccess(
            False,
            "read-only role",
            f"read-only role: {who} may change no table and create nothing{links}",
            **common,
        )
    if superuser:
        label = "superuser role"
    elif writable_tables:
        label = f"can write {_plural(writable_tables, 'table')}"
    elif create_schemas:
        label = "can create tables"
    else:
        label = "can write"
    return WriteAccess(True, label, f"{who} {_join(clauses)}{links} — {ADVICE}", **common)


def _join(clauses: list[str]) -> str:
    return clauses[0] if len(clauses) == 1 else ", ".join(clauses[:-1]) + " and " + clauses[-1]


def _rows(adapter: Adapter, sql: str, max_rows: int | None = 10_000) -> tuple[list[tuple], bool]:
    result = adapter.execute(sql, readonly=True, max_rows=max_rows, timeout=_TIMEOUT)
    return result.rows, result.truncated


def _one(adapter: Adapter, sql: str) -> tuple:
    rows, _ = _rows(adapter, sql, max_rows=1)
    if not rows:
        raise errors.DatabaseError(f"no row from: {sql.split()[0]} ...")
    return rows[0]


# ---------------------------------------------------------------------------------------
# PostgreSQL
# ---------------------------------------------------------------------------------------

# Relations of the user's schemas (not the catalogs, TOAST or other sessions' temp schemas).
_PG_USER_SCHEMA = (
    "n.nspname NOT IN ('pg_catalog', 'information_schema') "
    "AND left(n.nspname, 8) NOT IN ('pg_toast', 'pg_temp_')"
)

# One statement (each costs a guard check and a read-only transaction): the role's
# attributes, the tables and views it may change, the schemas it may create in (a JSON
# list), membership of the server-file roles, and the installed dblink / FDW extensions.
_PG_ACCESS = f"""
SELECT current_user AS role, r.rolsuper, r.rolcreaterole, r.rolcreatedb,
       has_database_privilege(current_database(), 'CREATE') AS create_in_database,
       (SELECT count(*) FROM pg_catalog.pg_class c
          JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
         WHERE c.relkind IN ('r', 'p', 'f', 'v') AND {_PG_USER_SCHEMA}
           AND (has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE, TRIGGER')
                OR has_any_column_privilege(c.oid, 'INSERT, UPDATE'))) AS writable_tables,
       (SELECT json_agg(n.nspname ORDER BY n.nspname) FROM pg_catalog.pg_namespace n
         WHERE has_schema_privilege(n.oid, 'CREATE') AND {_PG_USER_SCHEMA})::text AS create_schemas,
       (SELECT count(*) FROM pg_catalog.pg_roles s
         WHERE s.rolname IN ('pg_write_server_files', 'pg_execute_server_program')
           AND pg_has_role(current_user, s.oid, 'MEMBER')) AS server_file_roles,
       (SELECT json_agg(e.extname ORDER BY e.extname) FROM pg_catalog.pg_extension e
         WHERE e.extname = 'dblink' OR e.extname LIKE '%fdw')::text AS remote_links
  FROM pg_catalog.pg_roles r
 WHERE r.rolname = current_user
"""


def _json_names(text: Any) -> tuple[str, ...]:
    import json

    return tuple(str(v) for v in json.loads(text)) if text else ()


def postgres_access(adapter: Adapter) -> WriteAccess:
    (role, superuser, createrole, createdb, create_db, tables, schemas, file_roles, links) = _one(
        adapter, _PG_ACCESS
    )
    powers = []
    if create_db and not superuser:
        powers.append("create schemas (CREATE on the database)")
    if createrole and not superuser:
        powers.append("create roles (CREATEROLE)")
    if createdb and not superuser:
        powers.append("create databases (CREATEDB)")
    return role_verdict(
        "postgresql",
        role,
        writable_tables=int(tables),
        create_schemas=_json_names(schemas),
        superuser=bool(superuser),
        server_files=bool(superuser) or int(file_roles) > 0,
        remote_links=_json_names(links),
        powers=tuple(powers),
        reason="pg_roles, has_table_privilege / has_any_column_privilege over the tables and "
        "views, has_schema_privilege, has_database_privilege, pg_write_server_files "
        "membership, pg_extension",
    )


# ---------------------------------------------------------------------------------------
# Redshift (its PostgreSQL 8 catalog; no pg_roles, no extensions)
# ---------------------------------------------------------------------------------------

_RS_TABLE = "quote_ident(n.nspname) || '.' || quote_ident(c.relname)"
_RS_ROLE = f"""
SELECT current_user AS role, u.usesuper, u.usecreatedb,
       has_database_privilege(current_database(), 'CREATE') AS create_in_database,
       (SELECT count(*) FROM pg_catalog.pg_class c
          JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
         WHERE c.relkind IN ('r', 'v') AND {_PG_USER_SCHEMA}
           AND (has_table_privilege({_RS_TABLE}, 'INSERT')
                OR has_table_privilege({_RS_TABLE}, 'UPDATE')
                OR has_table_privilege({_RS_TABLE}, 'DELETE'))) AS writable_tables
  FROM pg_catalog.pg_user u
 WHERE u.usename = current_user
"""

_RS_SCHEMAS = f"""
SELECT n.nspname FROM pg_catalog.pg_namespace n
 WHERE has_schema_privilege(n.nspname, 'CREATE') AND {_PG_USER_SCHEMA}
 ORDER BY 1
"""


def redshift_access(adapter: Adapter) -> WriteAccess:
    role, superuser, createdb, create_db, tables = _one(adapter, _RS_ROLE)
    schemas, more = _rows(adapter, _RS_SCHEMAS, max_rows=1000)
    powers = []
    if create_db and not superuser:
        powers.append("create schemas (CREATE on the database)")
    if createdb and not superuser:
        powers.append("create databases (CREATEDB)")
    names = tuple(r[0] for r in schemas) + (("…",) if more else ())
    return role_verdict(
        "redshift",
        role,
        writable_tables=int(tables),
        create_schemas=names,
        superuser=bool(superuser),
        server_files=bool(superuser),
        powers=tuple(powers),
        reason="pg_user, has_table_privilege over the tables and views, has_schema_privilege, "
        "has_database_privilege; COPY and UNLOAD reach S3 through the cluster's IAM "
        "roles, which no query shows",
    )


# ---------------------------------------------------------------------------------------
# MySQL / MariaDB
# ---------------------------------------------------------------------------------------

_MY_SYSTEM = ("mysql", "information_schema", "performance_schema", "sys")
# privileges that change a table's rows or the table itself
# (CREATE on a table lets its grantee create it; on a database or globally it creates new
# tables, counted as create_schemas rather than as writing the existing ones)
_MY_TABLE_WRITE = frozenset(
    {"INSERT", "UPDATE", "DELETE", "DROP", "ALTER", "INDEX", "TRIGGER", "CREATE", "DELETE HISTORY"}
)
_MY_EXISTING_WRITE = _MY_TABLE_WRITE - {"CREATE"}
_MY_CREATE = frozenset({"CREATE", "CREATE VIEW", "CREATE ROUTINE"})
_MY_POWERS = {
    "CREATE USER": "create users (CREATE USER)",
    "SHUTDOWN": "shut the server down",
    "RELOAD": "reload and flush the server (RELOAD)",
    "EVENT": "schedule events (EVENT)",
}

_MY_GRANTS = """
SELECT 'global' AS level, GRANTEE, NULL AS TABLE_SCHEMA, NULL AS TABLE_NAME, PRIVILEGE_TYPE
  FROM information_schema.USER_PRIVILEGES
UNION ALL
SELECT 'schema', GRANTEE, TABLE_SCHEMA, NULL, PRIVILEGE_TYPE
  FROM information_schema.SCHEMA_PRIVILEGES
UNION ALL
SELECT 'table', GRANTEE, TABLE_SCHEMA, TABLE_NAME, PRIVILEGE_TYPE
  FROM information_schema.TABLE_PRIVILEGES
UNION ALL
SELECT 'column', GRANTEE, TABLE_SCHEMA, TABLE_NAME, PRIVILEGE_TYPE
  FROM information_schema.COLUMN_PRIVILEGES
"""

_MY_TABLES = (
    "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES "
    f"WHERE TABLE_SCHEMA NOT IN ({', '.join(repr(s) for s in _MY_SYSTEM)})"
)


def _grantee(text: str) -> tuple[str, str]:
    """``'user'@'host'`` (information_schema's GRANTEE) or ``user@host`` (CURRENT_USER())
    as (user, host)."""
    m = re.fullmatch(r"'(.*)'@'(.*)'", text or "")
    if m:
        return m.group(1), m.group(2)
    user, _, host = (text or "").rpartition("@")
    return (user, host) if user else (text, "")


def _like(pattern: str) -> re.Pattern:
    """A MySQL database-name pattern of a grant (``sales\\_%``) as a regular expression."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "%" else "." if ch == "_" else re.escape(ch))
        i += 1
    return re.compile("".join(out), re.S)


def mysql_access(adapter: Adapter) -> WriteAccess:
    (current,) = _one(adapter, "SELECT CURRENT_USER()")
    me = _grantee(str(current))
    roles: list[tuple[str, str]] = []
    try:
        result = adapter.execute(
            "SELECT * FROM information_schema.APPLICABLE_ROLES",
            readonly=True,
            max_rows=1000,
            timeout=_TIMEOUT,
        )
        cols = [c.lower() for c in result.column_names]
        for row in result.rows:
            rec = dict(zip(cols, row, strict=True))
            name = rec.get("role_name")
            if name:
                roles.append((str(name), str(rec.get("role_host") or "")))
    except errors.SqlnbError:
        pass  # a server without roles (MySQL 5.7)
    grants, _ = _rows(adapter, _MY_GRANTS, max_rows=None)
    mine = {me, *roles}
    seen: set[tuple[str, str]] = set()
    global_privs: set[str] = set()
    schema_privs: list[tuple[re.Pattern, str, str]] = []  # pattern, raw name, privilege
    table_privs: set[tuple[str, str]] = set()
    for level, grantee, schema, table, privilege in grants:
        who = _grantee(str(grantee))
        if who not in mine:
            continue
        seen.add(who)
        privilege = str(privilege).upper()
        if level == "global":
            global_privs.add(privilege)
        elif level == "schema":
            schema_privs.append((_like(str(schema)), str(schema), privilege))
        elif privilege in _MY_TABLE_WRITE:
            table_privs.add((str(schema), str(table)))
    superuser = "SUPER" in global_privs
    write_everywhere = bool(global_privs & _MY_EXISTING_WRITE)
    write_schemas = [p for p, _, priv in schema_privs if priv in _MY_EXISTING_WRITE]
    create = (
        ("*",)
        if global_privs & _MY_CREATE
        else tuple(sorted({raw for _, raw, priv in schema_privs if priv in _MY_CREATE}))
    )
    writable = 0
    if write_everywhere:
        (count,) = _one(adapter, _MY_TABLES.replace("TABLE_SCHEMA, TABLE_NAME", "COUNT(*)", 1))
        writable = int(count)
    elif write_schemas or table_privs:
        tables, _ = _rows(adapter, _MY_TABLES, max_rows=None)
        writable = sum(
            1
            for schema, table in tables
            if (schema, table) in table_privs or any(p.fullmatch(schema) for p in write_schemas)
        )
    powers = tuple(text for priv, text in _MY_POWERS.items() if priv in global_privs)
    role_note = ""
    hidden = [r for r in roles if r not in seen]
    if roles:
        role_note = f"; roles {', '.join(r[0] for r in roles)}"
    found = role_verdict(
        "mysql",
        str(current),
        writable_tables=writable,
        create_schemas=create,
        superuser=superuser,
        server_files="FILE" in global_privs,
        powers=powers,
        schema_word="database",
        who_word="user",
        reason="information_schema USER_PRIVILEGES, SCHEMA_PRIVILEGES, TABLE_PRIVILEGES and "
        f"COLUMN_PRIVILEGES of {current}{role_note}",
    )
    if found.can_write is False and hidden:
        names = ", ".join(r[0] for r in hidden)
        return unknown(
            "mysql",
            f"{current} may use the role{'s' * (len(hidden) > 1)} {names}, "
            "whose privileges information_schema does not show to it",
            role=str(current),
        )
    return found


# ---------------------------------------------------------------------------------------
# Snowflake
# ---------------------------------------------------------------------------------------

_SF_ADMIN = ("ACCOUNTADMIN", "ORGADMIN", "SECURITYADMIN", "SYSADMIN")
_SF_ROLES = "SELECT ROLE_NAME FROM INFORMATION_SCHEMA.ENABLED_ROLES"
_SF_TABLES = f"""
SELECT COUNT(DISTINCT TABLE_SCHEMA || '.' || TABLE_NAME) FROM INFORMATION_SCHEMA.TABLE_PRIVILEGES
 WHERE PRIVILEGE_TYPE IN ('INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'OWNERSHIP')
   AND GRANTEE IN ({_SF_ROLES})
"""
_SF_SCHEMAS = f"""
SELECT DISTINCT OBJECT_NAME FROM INFORMATION_SCHEMA.OBJECT_PRIVILEGES
 WHERE OBJECT_TYPE = 'SCHEMA'
   AND PRIVILEGE_TYPE IN ('OWNERSHIP', 'CREATE TABLE', 'CREATE VIEW', 'CREATE STAGE',
                          'CREATE PROCEDURE', 'CREATE FUNCTION', 'CREATE TASK')
   AND GRANTEE IN ({_SF_ROLES})
 ORDER BY 1
"""


def snowflake_access(adapter: Adapter) -> WriteAccess:
    (role,) = _one(adapter, "SELECT CURRENT_ROLE()")
    try:
        enabled, _ = _rows(adapter, _SF_ROLES, max_rows=1000)
        (tables,) = _one(adapter, _SF_TABLES)
        schemas, more = _rows(adapter, _SF_SCHEMAS, max_rows=1000)
    except errors.SqlnbError as exc:
        return unknown(
            "snowflake",
            "the role's grants could not be read from "
            "INFORMATION_SCHEMA.ENABLED_ROLES, TABLE_PRIVILEGES and "
            f"OBJECT_PRIVILEGES ({_why(exc)})",
            role=role,
        )
    names = {str(r[0]).upper() for r in enabled} | {str(role or "").upper()}
    admin = tuple(a for a in _SF_ADMIN if a in names)
    return role_verdict(
        "snowflake",
        role,
        writable_tables=int(tables or 0),
        create_schemas=tuple(str(r[0]) for r in schemas) + (("…",) if more else ()),
        superuser=bool(admin),
        server_files=False,
        reason="INFORMATION_SCHEMA.ENABLED_ROLES, TABLE_PRIVILEGES and OBJECT_PRIVILEGES of the "
        "current database"
        + (f"; administrator role {', '.join(admin)}" if admin else "")
        + "; stages and other databases were not inspected",
    )


# ---------------------------------------------------------------------------------------
# SQLite / DuckDB: the file and the mode
# ---------------------------------------------------------------------------------------

_FILE_TABLES = {
    "sqlite": "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND substr(name, 1, 7) <> 'sqlite_'",
    "duckdb": "SELECT count(*) FROM information_schema.tables "
    "WHERE table_type = 'BASE TABLE' AND table_catalog = current_database()",
}
_FILE_ESCAPES = {"sqlite": "ATTACH", "duckdb": "ATTACH and COPY ... TO"}


def file_access(adapter: Adapter) -> WriteAccess:
    engine = adapter.scheme
    path = adapter.spec.database
    name = os.path.basename(path) if path else None
    escapes = _FILE_ESCAPES.get(engine, "ATTACH")
    if adapter.options.readonly:
        what = f"{name} is opened read-only" if name else "the database is read-only"
        return WriteAccess(
            False,
            "read-only connection",
            f"read-only connection: {what}, and {escapes} are refused",
            engine=engine,
            writable_tables=0,
            server_files=False,
            reason="opened with --readonly",
        )
    try:
        (count,) = _one(adapter, _FILE_TABLES[engine])
        tables: int | None = int(count)
    except errors.SqlnbError:
        tables = None
    if path is None:
        return WriteAccess(
            True,
            "in-memory database",
            f"in-memory database: this connection may change it (nothing of it "
            f"is on disk), and {escapes} can write files — {FILE_ADVICE}",
            engine=engine,
            writable_tables=tables,
            server_files=True,
            reason="in memory, not opened with --readonly",
        )
    full = os.path.abspath(path)
    target = full if os.path.exists(full) else os.path.dirname(full)
    if not os.access(target, os.W_OK):
        return WriteAccess(
            False,
            "read-only file",
            f"read-only file: this process may not write {name}; without "
            f"--readonly, {escapes} could still write other files",
            engine=engine,
            writable_tables=0,
            server_files=True,
            reason=f"os.access({full!r}, W_OK) is false",
        )
    what = f"{name} ({_plural(tables, 'table')})" if tables is not None else name
    return WriteAccess(
        True,
        f"can write {_plural(tables, 'table')}" if tables else "writable file",
        f"this connection can write {what}, and {escapes} can write other files — {FILE_ADVICE}",
        engine=engine,
        writable_tables=tables,
        server_files=True,
        reason=f"os.access({full!r}, W_OK) is true; not opened with --readonly",
    )


INSPECTORS: dict[str, Callable[[Adapter], WriteAccess]] = {
    "sqlite": file_access,
    "duckdb": file_access,
    "postgresql": postgres_access,
    "mysql": mysql_access,
    "snowflake": snowflake_access,
    "redshift": redshift_access,
}
