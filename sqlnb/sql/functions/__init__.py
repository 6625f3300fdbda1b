"""Which functions the read-only guard refuses, from what the engine says about them.

A hand-kept list of dangerous function names always trails the engines, so where an engine
publishes which functions are volatile or have side effects, the guard builds its policy
from that metadata instead:

- PostgreSQL (and Redshift, which keeps PostgreSQL's catalog): every function whose
  ``pg_proc.provolatile`` is ``'v'`` (VOLATILE: it may write, change the session or give a
  different answer each call), in any schema, user-defined ones included, is refused,
  unless it is on the short reviewed allowlist of volatile-but-harmless functions below.
  Functions that cannot be called from a query (trigger functions, index/table access
  method and language handlers, anything taking an ``internal`` argument) are left out.
- DuckDB: every scalar function that ``duckdb_functions()`` reports as ``VOLATILE`` or
  ``has_side_effects`` is refused unless allowlisted; every table function (DuckDB
  publishes no stability for them: ``checkpoint()``, ``enable_logging()``, file readers,
  ...) is refused unless it is on the reviewed list of read-only table functions; a macro
  is refused when its definition calls a refused function.

A name is refused when any function of that name (any overload, any schema) is refused.

The policy comes from two places.  A connected adapter reads the live metadata (once per
session, through a query callable it hands :mod:`sqlnb.sql.live`, and then, for each
statement, the user's functions of the names it calls, so a function created, replaced or
overloaded after connecting is judged by what it is now):
that covers new engine versions, extensions and user-defined functions.  A user's
function is refused by name: a volatile ``public.random(int)`` makes ``random()`` refused
in that database too.  PostgreSQL calls a function of one row-type argument by attribute
notation as well (``t.f`` is ``f(t)``): such a refused function is refused there too.
DuckDB user macros are checked whole, as a query (a macro reading a file is refused).
Without a connection the guard uses the snapshot shipped in this folder
(``postgres.txt``, ``duckdb.txt``), which ``python -m sqlnb.sql.functions.generate``
writes from live engines; for DuckDB, which runs in-process, the installed release's own
built-ins are read too (a newer release's new functions are refused).

Engines that publish no such metadata (MySQL/MariaDB, SQLite, Snowflake) rely on the
hand-kept name lists of :mod:`sqlnb.sql.forbidden`, which apply everywhere.

This package never imports the guard (:mod:`sqlnb.sql.guard` imports it): where a DuckDB
macro's body must be judged as a query, the caller passes the guard in as a
:data:`MacroCheck`.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any

from sqlnb import errors
from sqlnb.sql.forbidden import FORBIDDEN_FUNCTIONS

_log = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent

# ---- the reviewed allowlists --------------------------------------------------------------
# Volatile (by the engine's metadata) but harmless: they only read, or only draw random
# numbers / read clocks.  Each entry says why.  Keep these short: anything not here that the
# engine calls volatile is refused.

POSTGRES_ALLOWED: Mapping[str, str] = {
    "random": "a random number (setseed, which changes the session's generator, stays refused)",
    "gen_random_uuid": "a random UUID",
    "clock_timestamp": "reads the clock",
    "timeofday": "reads the clock, as text",
    "pg_relation_size": "reads the size of a table's files",
    "pg_table_size": "reads the size of a table's files",
    "pg_indexes_size": "reads the size of a table's index files",
    "pg_total_relation_size": "reads the size of a table's files",
    "pg_database_size": "reads the size of a database's files",
    "pg_tablespace_size": "reads the size of a tablespace's files",
}

DUCKDB_ALLOWED: Mapping[str, str] = {
    "random": "a random number (setseed, which changes the session's generator, stays refused)",
    "uuid": "a random UUID",
    "gen_random_uuid": "a random UUID",
    "uuidv4": "a random UUID",
    "uuidv7": "a time-ordered random UUID",
    "current_query": "reads the text of the running query",
    "current_query_id": "reads the id of the running query",
    "current_connection_id": "reads the id of the connection",
    "current_transaction_id": "reads the id of the running transaction",
    "error": "raises an error with the given message",
}

# DuckDB publishes no stability or side effects for table functions, so table functions
# are refused unless reviewed as read-only here: generators, unnesting, JSON, and catalog
# introspection (not secrets, logs, caches, external resources, or duckdb_extensions(),
# which lists the extension directory on disk).
DUCKDB_READ_ONLY_TABLE_FUNCTIONS: frozenset[str] = frozenset(
    {
        "range",
        "generate_series",
        "unnest",
        "repeat",
        "repeat_row",
        "json_each",
        "json_tree",
        "duckdb_columns",
        "duckdb_constraints",
        "duckdb_databases",
        "duckdb_dependencies",
        "duckdb_functions",
        "duckdb_indexes",
        "duckdb_keywords",
        "duckdb_schemas",
        "duckdb_sequences",
        "duckdb_settings",
        "duckdb_tables",
        "duckdb_types",
        "duckdb_views",
        "duckdb_optimizers",
        "duckdb_memory",
        "pragma_table_info",
        "pragma_version",
        "pragma_collations",
        "pragma_database_size",
        "pragma_platform",
        "pragma_storage_info",
        "pragma_show",
        "pg_timezone_names",
        "icu_calendar_names",
        "test_all_types",
    }
)

# Return types and argument types that make a PostgreSQL function impossible to call from a
# query (pseudo-types), by OID (the same in every PostgreSQL and in Redshift): trigger,
# event_trigger, language_handler, fdw_handler, index_am_handler, tsm_handler,
# table_am_handler; and an ``internal`` argument.
_PG_UNCALLABLE_RETURNS = frozenset({2279, 3838, 2280, 3115, 325, 3310, 269})
_PG_INTERNAL = 2281
_PG_BUILTIN_SCHEMAS = frozenset({"pg_catalog", "information_schema"})

#: why a name is refused, by kind (snapshot files store the kind)
REASONS = {
    "postgres:volatile": "is VOLATILE in PostgreSQL (pg_proc.provolatile = 'v'): it may write, "
    "change the session or reach outside the query",
    "duckdb:volatile": "is VOLATILE in DuckDB (duckdb_functions().stability): it may write or "
    "change the session",
    "duckdb:side_effects": "has side effects in DuckDB (duckdb_functions().has_side_effects)",
    "duckdb:table": "is a DuckDB table function that is not on sqlnb's list of read-only table "
    "functions (DuckDB publishes no side effects for table functions; this one "
    "may write, change settings or read files)",
}


#: what a live lookup answers: {name: why} for the refused names among those asked, and
#: which of them PostgreSQL can call by attribute notation
Lookup = Callable[[frozenset[str]], tuple[Mapping[str, str], frozenset[str]]]

#: runs a query of sqlnb's own on the connected engine's metadata and returns its rows
Query = Callable[[str], Sequence[Sequence[Any]]]


@dataclass(frozen=True)
class FunctionPolicy:
    """Function names the guard refuses for one engine, with the reason for each.

    ``lookup`` (a policy read from a live connection has one) asks the engine about the
    names a statement calls, each time: a function the user created, replaced or
    overloaded (a user's ``random(int)``, a DuckDB macro shadowing a built-in) after the
    policy was read is judged by what it is now.
    """

    engine: str
    refused: Mapping[str, str]
    source: str
    _: KW_ONLY
    #: refused only where called as a table (FROM, JOIN, LATERAL): names that are also a
    #: harmless scalar or aggregate (DuckDB's histogram() aggregate and table macro)
    table_only: frozenset[str] = frozenset()
    #: refused functions PostgreSQL also calls by attribute notation: ``t.f`` (or
    #: ``(t).f``) is ``f(t)`` when f takes one argument of a row type
    on_row: frozenset[str] = frozenset()
    lookup: Lookup | None = field(default=None, compare=False, repr=False)
    #: {relation name: why} for the relations among those asked that a guarded statement
    #: must not read: a foreign table (it runs a query on another server), or a view over
    #: one or over a function the policy refuses (PostgreSQL; None elsewhere)
    relation_lookup: Callable[[frozenset[str]], Mapping[str, str]] | None = field(
        default=None, compare=False, repr=False
    )

    def relation_refusals(self, names: Iterable[str]) -> dict[str, str]:
        """{name: why} for the relations a statement reads that a guarded statement must
        not read (lower-case names; empty where the engine is not asked)."""
        names = frozenset(n.lower() for n in names if n)
        if self.relation_lookup is None or not names:
            return {}
        try:
            return dict(self.relation_lookup(names))
        except errors.ConnectionLost:
            raise
        except Exception as exc:
            _log.debug("relation lookup failed: %s", exc)
            return dict.fromkeys(
                names, f"could not be checked: reading what it depends on from {self.engine} failed"
            )

    def refusals(
        self, names: Iterable[str], ask: Iterable[str] = (), on_row: Iterable[str] = ()
    ) -> dict[str, str]:
        """{name: why} for the functions a statement calls that this policy refuses.

        ``names``: every name called (as written and as sqlglot reads it); ``ask``: the
        names written as calls, which could be the user's own functions (the live lookup
        asks the engine about them); ``on_row``: names after a dot (``t.f``), which
        PostgreSQL may read as a call of ``f(t)``."""
        names = {n.lower() for n in names if n}
        ask = {n.lower() for n in ask if n}
        row = {n.lower() for n in on_row if n}
        out = {n: self.refused[n] for n in names if n in self.refused}
        refused: Mapping[str, str] = self.refused
        callable_on_row = set(self.on_row)
        if self.lookup is not None and (ask | row):
            try:
                found, found_on_row = self.lookup(frozenset(ask | row))
            except errors.ConnectionLost:
                raise  # the statement's own error: the session is gone, not the query's fault
            except Exception as exc:  # the statement is not known to be read-only
                _log.debug("function lookup failed: %s", exc)
                why = f"could not be checked: reading its volatility from {self.engine} failed"
                out.update({n: why for n in ask if n not in out})
            else:
                out.update({n: why for n, why in found.items() if n in ask})
                refused = {**self.refused, **found}
                callable_on_row |= found_on_row
        for n in row & callable_on_row:
            if n in refused and n not in out:
                out[n] = f"{refused[n]} (x.{n} calls it: attribute notation, {n}(x))"
        return out


# ---- PostgreSQL / Redshift ----------------------------------------------------------------

#: one row per function: name, schema, provolatile, return type OID, argument type OIDs
#: (text), whether its one argument is a row type; portable to Redshift (no prokind, no
#: regtype arrays)
POSTGRES_FUNCTIONS_SQL = """
SELECT p.proname, n.nspname, p.provolatile, p.prorettype::int8, p.proargtypes::text,
       p.pronargs = 1 AND EXISTS (SELECT 1 FROM pg_catalog.pg_type ty
                                  WHERE ty.oid = p.proargtypes[0] AND ty.typtype = 'c')
FROM pg_catalog.pg_proc p
JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
""".strip()

#: the same for the functions outside the built-in schemas (the live lookup)
POSTGRES_USER_FUNCTIONS_SQL = (
    POSTGRES_FUNCTIONS_SQL + "\nWHERE n.nspname NOT IN ('pg_catalog', 'information_schema')"
)

# names that can stand in a SQL string literal as they are (any setting, any engine)
_PLAIN_NAME = re.compile(r"^[a-z_][a-z0-9_$]*$")


def _names_filter(column: str, names: frozenset[str]) -> str:
    """`` AND lower(column) IN (...)``, or nothing when a name is not plain (then every
    row is read and filtered here)."""
    if not names or not all(_PLAIN_NAME.match(n) for n in names):
        return ""
    return f" AND lower({column}) IN ({', '.join(repr(n) for n in sorted(names))})"


def _pg_callable(rettype: int, argtypes: str | None) -> bool:
    if int(rettype) in _PG_UNCALLABLE_RETURNS:
        return False
    return str(_PG_INTERNAL) not in str(argtypes or "").split()


def postgres_refusals(
    rows: Iterable[Sequence[Any]],
    *,
    engine: str = "PostgreSQL",
    allowed: Mapping[str, str] = POSTGRES_ALLOWED,
) -> tuple[dict[str, str], frozenset[str], frozenset[str]]:
    """({name: why} refused, built-in names, refused names callable as ``t.name``) from rows
    of :data:`POSTGRES_FUNCTIONS_SQL`."""
    refused: dict[str, str] = {}
    builtin: set[str] = set()
    on_row: set[str] = set()
    for name, schema, volatility, rettype, argtypes, takes_row in rows:
        name = str(name).lower()
        if schema in _PG_BUILTIN_SCHEMAS:
            builtin.add(name)
        # the allowlist holds built-ins: a user's public.random() that writes is refused
        if (
            volatility != "v"
            or (name in allowed and schema in _PG_BUILTIN_SCHEMAS)
            or not _pg_callable(rettype, argtypes)
        ):
            continue
        if takes_row:
            on_row.add(name)
        if schema in _PG_BUILTIN_SCHEMAS:
            refused.setdefault(name, REASONS["postgres:volatile"].replace("PostgreSQL", engine))
        else:
            refused[name] = (
                f"is a VOLATILE function of this database ({schema}.{name}), "
                "which may write; declare it STABLE or IMMUTABLE if it only reads"
            )
    return refused, frozenset(builtin), frozenset(on_row)


#: Extensions whose functions run SQL on another connection or server (their work is
#: outside the read-only transaction of sqlnb's session): refused wherever installed.
OUTBOUND_EXTENSIONS: Mapping[str, str] = {
    "dblink": "runs SQL through another connection",
    "postgres_fdw": "reaches another PostgreSQL server",
    "mysql_fdw": "reaches a MySQL server",
    "oracle_fdw": "reaches an Oracle server",
    "tds_fdw": "reaches a SQL Server",
    "odbc_fdw": "reaches another database",
    "jdbc_fdw": "reaches another database",
    "multicorn": "runs Python foreign data wrappers",
    "http": "sends HTTP requests",
    "pgsql_http": "sends HTTP requests",
    "file_fdw": "reads server files",
}

#: every function that belongs to an extension: extension, function name, schema (no
#: pg_extension in Redshift: the query fails there and no extension is assumed)
POSTGRES_EXTENSION_FUNCTIONS_SQL = """
SELECT e.extname, p.proname, n.nspname
FROM pg_catalog.pg_extension e
JOIN pg_catalog.pg_depend d ON d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass
 AND d.refobjid = e.oid AND d.deptype = 'e'
 AND d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass
JOIN pg_catalog.pg_proc p ON p.oid = d.objid
JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
""".strip()

#: functions outside the built-in schemas with their language and whether it is trusted,
#: and the extension each belongs to (the live lookup, see postgres_policy)
POSTGRES_USER_FUNCTION_LANGUAGES_SQL = """
SELECT p.proname, n.nspname, l.lanname, l.lanpltrusted,
       (SELECT e.extname FROM pg_catalog.pg_depend d
        JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid
        WHERE d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objid = p.oid
          AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass
          AND d.deptype = 'e' LIMIT 1),
       EXISTS (SELECT 1 FROM pg_catalog.pg_extension e WHERE e.extname IN ({outbound}))
FROM pg_catalog.pg_proc p
JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
JOIN pg_catalog.pg_language l ON l.oid = p.prolang
WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
""".strip()

#: for the relations named (lower-case, {names}), what they read through views, however
#: deep: foreign tables, and the functions the views call (a view's rule depends on them)
POSTGRES_RELATION_DEPENDENCIES_SQL = """
WITH RECURSIVE rel(oid, top, depth) AS (
    SELECT c.oid, lower(c.relname::text), 0 FROM pg_catalog.pg_class c
    WHERE lower(c.relname::text) IN ({names}) AND c.relkind IN ('r', 'v', 'm', 'f', 'p')
  UNION
    SELECT d.refobjid, rel.top, rel.depth + 1
    FROM rel
    JOIN pg_catalog.pg_rewrite r ON r.ev_class = rel.oid
    JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass
     AND d.objid = r.oid AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
     AND d.refobjid <> rel.oid
    WHERE rel.depth < 32
)
SELECT rel.top, 'relation', n.nspname, c.relname, c.relkind::text
FROM rel JOIN pg_catalog.pg_class c ON c.oid = rel.oid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind = 'f'
UNION ALL
SELECT rel.top, 'function', n.nspname, p.proname, p.provolatile::text
FROM rel
JOIN pg_catalog.pg_rewrite r ON r.ev_class = rel.oid
JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass
 AND d.objid = r.oid AND d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass
JOIN pg_catalog.pg_proc p ON p.oid = d.refobjid
JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
""".strip()


def _outbound_functions(rows: Iterable[Sequence[Any]]) -> dict[str, str]:
    """{function name: why} of the installed outbound extensions' functions, from rows of
    :data:`POSTGRES_EXTENSION_FUNCTIONS_SQL`."""
    refused: dict[str, str] = {}
    for extname, proname, schema in rows:
        what = OUTBOUND_EXTENSIONS.get(str(extname))
        if what is None:
            continue
        refused[str(proname).lower()] = (
            f"belongs to the {extname} extension ({schema}.{proname}), which {what}: "
            "outside the read-only transaction of this session"
        )
    return refused


def postgres_policy(query: Query, *, engine: str = "PostgreSQL") -> FunctionPolicy:
    """The live policy of a PostgreSQL-family connection; ``query(sql)`` returns its rows.

    Besides volatile functions it refuses, wherever they are installed and under whatever
    name, the functions of extensions that reach another connection or server
    (:data:`OUTBOUND_EXTENSIONS`); where one is installed, every function of the database
    that no extension provides (its owner may have declared it STABLE and still call
    dblink from it); a function of the database written in an untrusted language
    (plpython3u, plperlu, C: it can write files or reach other hosts whatever its
    volatility says); and, through :attr:`FunctionPolicy.relation_lookup`, reading a
    foreign table or a view over one or over a refused function."""
    refused, _, on_row = postgres_refusals(query(POSTGRES_FUNCTIONS_SQL), engine=engine)
    try:
        outbound = _outbound_functions(query(POSTGRES_EXTENSION_FUNCTIONS_SQL))
    except errors.ConnectionLost:
        raise
    except Exception:  # Redshift has no pg_extension (and no extensions)
        outbound = {}
    refused.update(outbound)

    def user_function_refusals(names: frozenset[str]) -> dict[str, str]:
        """What the engine says now of the database's own functions of these names: a
        function of an outbound extension, one in an untrusted language, or any function
        no extension provides where an outbound extension is installed."""
        outbound_list = ", ".join(repr(e) for e in sorted(OUTBOUND_EXTENSIONS))
        sql = POSTGRES_USER_FUNCTION_LANGUAGES_SQL.format(outbound=outbound_list)
        try:
            rows = query(sql + _names_filter("p.proname", names))
        except errors.ConnectionLost:
            raise
        except Exception:
            if engine == "PostgreSQL":
                raise
            return {}  # Redshift: no pg_extension, no extensions
        out: dict[str, str] = {}
        for name, schema, language, trusted, extension, outbound_here in rows:
            name = str(name).lower()
            if name not in names:
                continue
            if extension in OUTBOUND_EXTENSIONS:
                out[name] = (
                    f"belongs to the {extension} extension ({schema}.{name}), which "
                    f"{OUTBOUND_EXTENSIONS[extension]}: outside the read-only "
                    "transaction of this session"
                )
            elif extension:
                continue
            elif not trusted and language not in ("sql", "internal"):
                out.setdefault(
                    name,
                    (
                        f"is a function of this database ({schema}.{name}) written in {language}, "
                        "an untrusted language: it can write files or reach other hosts outside "
                        "the read-only transaction, whatever its volatility says"
                    ),
                )
            elif outbound_here:
                out.setdefault(
                    name,
                    (
                        f"is a function of this database ({schema}.{name}), and an extension that "
                        "reaches other connections (dblink or a foreign-data wrapper) is installed "
                        "here: the function could write through it, outside the read-only "
                        "transaction, whatever its volatility says"
                    ),
                )
        return out

    def lookup(names: frozenset[str]) -> tuple[dict[str, str], frozenset[str]]:
        rows = query(POSTGRES_USER_FUNCTIONS_SQL + _names_filter("p.proname", names))
        now, _, now_on_row = postgres_refusals(rows, engine=engine)
        found = user_function_refusals(names)  # the more telling reason first
        for n, why in now.items():
            if n in names:
                found.setdefault(n, why)
        return found, now_on_row & names

    def relation_lookup(names: frozenset[str]) -> dict[str, str]:
        literals = ", ".join(
            "E'" + n.replace("\\", "\\\\").replace("'", "''") + "'" for n in sorted(names) if "\x00" not in n
        )
        if not literals:
            return {}
        try:
            rows = query(POSTGRES_RELATION_DEPENDENCIES_SQL.format(names=literals))
        except errors.ConnectionLost:
            raise
        except Exception:
            if engine == "PostgreSQL":
                raise
            return {}  # Redshift: no view dependencies to read (and no foreign tables)
        out: dict[str, str] = {}
        called: dict[str, set[str]] = {}  # the database's own functions views call
        for top, kind, schema, name, _detail in rows:
            name = str(name)
            if kind == "relation":
                out.setdefault(
                    top,
                    f"reads the foreign table {schema}.{name}, which runs a "
                    "query on another server, outside the read-only "
                    "transaction of this session",
                )
            elif name.lower() in refused:
                out.setdefault(top, f"is a view that calls {schema}.{name}(), which {refused[name.lower()]}")
            elif schema not in _PG_BUILTIN_SCHEMAS:
                called.setdefault(name.lower(), set()).add(top)
        if called:  # judged as a direct call of each would be
            found, _ = lookup(frozenset(called))
            for fn, why in found.items():
                for top in called[fn]:
                    out.setdefault(top, f"is a view that calls {fn}(), which {why}")
        return out

    return FunctionPolicy(
        engine,
        refused,
        f"the connected {engine} server's pg_proc",
        on_row=on_row,
        lookup=lookup,
        relation_lookup=relation_lookup,
    )


# ---- DuckDB -------------------------------------------------------------------------------

#: the guard's word on a DuckDB macro's body, as a query under the given policy: why it is
#: not read-only, or None when it is (:mod:`sqlnb.sql.live` passes the guard in)
MacroCheck = Callable[[str, FunctionPolicy], str | None]

# what sqlnb's hand-kept list refuses (a macro calling one of these is refused too)
_BY_LIST: Mapping[str, str] = dict.fromkeys(FORBIDDEN_FUNCTIONS, "is refused by sqlnb's list")

#: one row per function: name, type, stability, has_side_effects, internal, macro definition
DUCKDB_FUNCTIONS_SQL = """
SELECT function_name, function_type, stability, has_side_effects, internal, macro_definition
FROM duckdb_functions()
""".strip()


def duckdb_refusals(
    rows: Iterable[Sequence[Any]],
    *,
    allowed: Mapping[str, str] = DUCKDB_ALLOWED,
    table_functions: frozenset[str] = DUCKDB_READ_ONLY_TABLE_FUNCTIONS,
    also_refused: Mapping[str, str] | None = None,
    check_macro: MacroCheck | None = None,
) -> tuple[dict[str, str], frozenset[str], frozenset[str]]:
    """({name: why} refused, built-in names, names refused only as tables) from rows of
    :data:`DUCKDB_FUNCTIONS_SQL`.
    ``also_refused`` adds names already refused elsewhere (a macro calling one of them is
    refused too).  ``check_macro`` judges a user's macro body as a query (the guard); a
    user's macro is refused when there is none to judge it."""
    if also_refused is None:
        also_refused = _BY_LIST
    rows = list(rows)
    refused: dict[str, str] = {}
    builtin: set[str] = set()
    macros: list[tuple[str, str, str, bool]] = []
    plain: set[str] = set()  # harmless scalar, aggregate and window functions
    for name, ftype, stability, side_effects, internal, definition in rows:
        name = str(name).lower()
        if internal:
            builtin.add(name)
        if ftype in ("scalar", "aggregate", "window") and not side_effects and stability != "VOLATILE":
            plain.add(name)
        if name in allowed and internal:  # the allowlists hold built-ins only
            continue
        if ftype in ("macro", "table_macro"):
            macros.append((name, ftype, definition or "", bool(internal)))
        elif ftype == "table":
            if name not in table_functions or not internal:
                refused.setdefault(name, REASONS["duckdb:table"])
        elif side_effects:
            refused[name] = REASONS["duckdb:side_effects"]
        elif stability == "VOLATILE":
            refused.setdefault(name, REASONS["duckdb:volatile"])
    # macros: refused when the body calls a refused name (macros may call macros: repeat
    # until nothing changes)
    bad = dict(also_refused or {})
    bad.update(refused)
    calls: dict[str, set[str]] = {}
    for name, ftype, definition, _ in macros:
        calls.setdefault(name, set()).update(_called_names(definition, ftype))
    changed = True
    while changed:
        changed = False
        for name, called in calls.items():
            if name in bad:
                continue
            hit = sorted(c for c in called if c in bad and c != name)
            if hit:
                bad[name] = refused[name] = (
                    f"is a DuckDB macro whose definition calls {hit[0]}(), which {bad[hit[0]]}"
                )
                changed = True
    # a user's macro is also checked whole, as the guard checks a query: its body may read
    # a file (FROM 'x.csv') or do anything else a query may not
    policy = FunctionPolicy("DuckDB", bad, "the macros' check")
    for name, ftype, definition, internal in macros:
        if internal or name in refused:
            continue
        if check_macro is None:
            refused[name] = "is a DuckDB macro of this database whose definition was not checked"
            continue
        problem = check_macro(definition if ftype == "table_macro" else f"SELECT {definition}", policy)
        if problem is not None:
            refused[name] = f"is a DuckDB macro whose definition is not read-only: {problem}"
    tables = {name for name, ftype, _, _ in macros if ftype == "table_macro"} | {
        str(r[0]).lower() for r in rows if r[1] == "table"
    }
    table_only = frozenset(n for n in refused if n in tables and n in plain)
    return refused, frozenset(builtin), table_only


_CALL = re.compile(r'("(?:[^"]|"")+"|[A-Za-z_][\w$]*)\s*\(')


def _called_names(definition: str, ftype: str) -> set[str]:
    """Names called in a macro definition: every name before a ``(`` outside strings."""
    from sqlnb.sql.text import scan

    names: set[str] = set()
    tokens = list(scan(definition, "duckdb"))
    for k, tok in enumerate(tokens):
        if tok.kind == "code":
            names.update(m.group(1).lower() for m in _CALL.finditer(tok.text))
        elif (
            tok.kind == "ident"
            and k + 1 < len(tokens)
            and tokens[k + 1].kind == "code"
            and tokens[k + 1].text.lstrip().startswith("(")
        ):
            names.add(tok.text.strip('"').replace('""', '"').lower())
    return names


def duckdb_policy(
    query: Query, *, look_up: bool = True, check_macro: MacroCheck | None = None
) -> FunctionPolicy:
    """The live policy of a DuckDB connection; ``query(sql)`` returns its rows.
    ``look_up=False``: no lookup per statement (duckdb_functions() takes about 10 ms), for
    a read-only connection, through which no macro can be created.  ``check_macro``: the
    guard, which judges a user's macro body as a query (see :func:`duckdb_refusals`)."""
    refused, _, table_only = duckdb_refusals(query(DUCKDB_FUNCTIONS_SQL), check_macro=check_macro)
    bad = dict(_BY_LIST)
    bad.update(refused)

    def lookup(names: frozenset[str]) -> tuple[dict[str, str], frozenset[str]]:
        # every user function: a macro may call another one
        now, _, _ = duckdb_refusals(
            query(DUCKDB_FUNCTIONS_SQL + "\nWHERE NOT internal"), also_refused=bad, check_macro=check_macro
        )
        return {n: why for n, why in now.items() if n in names}, frozenset()

    return FunctionPolicy(
        "DuckDB",
        refused,
        "the connected DuckDB's duckdb_functions()",
        table_only=table_only,
        lookup=lookup if look_up else None,
    )


# ---- the shipped snapshots ----------------------------------------------------------------

#: dialect -> snapshot file (Redshift keeps PostgreSQL's catalog: its snapshot is
#: PostgreSQL's, the closer guess without a connection)
SNAPSHOTS = {"postgres": "postgres.txt", "redshift": "postgres.txt", "duckdb": "duckdb.txt"}


@functools.cache
def snapshot_policy(dialect: str) -> FunctionPolicy | None:
    """The policy shipped with sqlnb for ``dialect`` (None where the engine publishes no
    function metadata).  A snapshot line is ``name<TAB>kind`` or, for a macro,
    ``name<TAB>macro<TAB>the refused function it calls``; a last field ``table-only``
    marks a name refused only where it is called as a table."""
    name = SNAPSHOTS.get(dialect)
    if name is None:
        return None
    engine = {"postgres": "PostgreSQL", "redshift": "Redshift", "duckdb": "DuckDB"}[dialect]
    refused: dict[str, str] = {}
    table_only: set[str] = set()
    version = "?"
    for line in (HERE / name).read_text(encoding="utf-8").splitlines():
        if line.startswith("# engine:"):
            version = line.split(":", 1)[1].strip()
        if not line.strip() or line.startswith("#"):
            continue
        fn, kind, *detail = line.split("\t")
        if detail and detail[-1] == "table-only":
            table_only.add(fn)
            detail.pop()
        if kind == "macro":
            refused[fn] = f"is a DuckDB macro whose definition calls {detail[0]}(), which is refused"
        else:
            refused[fn] = REASONS[kind]
    if dialect == "redshift":
        refused = {
            n: why.replace("in PostgreSQL", "in PostgreSQL (whose catalog Redshift keeps)")
            for n, why in refused.items()
        }
    source = f"sqlnb's snapshot of {version}"
    if dialect == "duckdb":
        # DuckDB runs in-process (a dependency of sqlnb): the installed release's own
        # built-ins join the snapshot, so functions a newer release adds are refused
        # without a connection too
        installed = _installed_duckdb_refusals()
        if installed is not None:
            release, more, more_table_only = installed
            for fn, why in more.items():
                if fn not in refused:
                    refused[fn] = why
                    if fn in more_table_only:
                        table_only.add(fn)
            source += f" and the installed DuckDB {release}"
    return FunctionPolicy(engine, refused, source, table_only=frozenset(table_only))


def _installed_duckdb_refusals() -> tuple[str, dict[str, str], frozenset[str]] | None:
    """(release, {name: why}, names refused only as tables) of the installed duckdb
    package's built-in functions, read from an in-memory database; None when it cannot
    be read."""
    try:
        import duckdb

        con = duckdb.connect(":memory:")
        try:
            rows = con.execute(DUCKDB_FUNCTIONS_SQL).fetchall()
        finally:
            con.close()
        refused, _, table_only = duckdb_refusals(rows)
        return f"v{duckdb.__version__}", refused, table_only
    except Exception as exc:  # an unusable duckdb: the snapshot alone stands
        _log.warning(
            "could not read the installed DuckDB's functions (%s); the guard uses sqlnb's snapshot alone", exc
        )
        return None


def write_snapshot(
    path: Path,
    engine_version: str,
    refused: Mapping[str, str],
    kinds: Mapping[str, str],
    generator: str,
    table_only: Iterable[str] = (),
) -> None:
    """Write a snapshot file: ``kinds`` maps each refused name to its kind line part."""
    table_only = set(table_only)
    lines = [
        f"# Functions the read-only guard refuses without a connection ({generator}).",
        "# Generated from the engine's own metadata; do not edit by hand.",
        f"# engine: {engine_version}",
    ]
    lines += [f"{n}\t{kinds[n]}" + ("\ttable-only" if n in table_only else "") for n in sorted(refused)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
