"""The read-only guard: does this SQL only read?

A statement is read-only when sqlglot parses it for the dialect into exactly one tree, the
root is a query (SELECT, set operation, VALUES), and nothing anywhere inside it writes or
escapes: no DML or DDL (including data-modifying CTEs), no Command (what sqlglot falls back
to for syntax it does not model: CALL, EXPLAIN, DO, ...), no INTO, no locking clause, no
session or transaction statement, and no call of a function known to write, run SQL from a
string, or reach outside the database.  Anything sqlglot cannot parse is not read-only.

This is the first of two layers: every read-only connection also runs in a read-only
session of the engine (see the adapters), because no parser can know every side effect
(``SELECT nextval('s')`` writes).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from sqlnb.sql.dialects import sqlglot_dialect


@dataclass(frozen=True)
class Verdict:
    read_only: bool
    reason: str
    statement_type: str | None = None

    def __bool__(self) -> bool:
        return self.read_only


# Expression types that may never appear anywhere in a read-only statement.
_FORBIDDEN: tuple[type[exp.Expression], ...] = tuple(
    getattr(exp, name) for name in (
        "DML", "DDL", "Insert", "Update", "Delete", "Merge", "Create", "Drop", "Alter",
        "TruncateTable", "Command", "Into", "Lock", "Copy", "Set", "Pragma", "Attach",
        "Detach", "Grant", "Revoke", "Use", "Transaction", "Commit", "Rollback", "Analyze",
        "Export", "Install", "LoadData", "Cache", "Uncache", "Refresh", "Kill", "Comment",
        "Declare", "Execute", "Describe", "Show",
    ) if hasattr(exp, name)
)

# Root types that count as a query.
_QUERY_ROOTS: tuple[type[exp.Expression], ...] = (exp.Query, exp.Values)

# Functions that write, change session state, run SQL given as text, sleep the server or
# reach files/hosts outside the database.  Lower-case names; any dialect.
_FORBIDDEN_FUNCTIONS = frozenset({
    # PostgreSQL / Redshift
    "nextval", "setval", "lastval", "set_config", "pg_advisory_lock", "pg_advisory_xact_lock",
    "pg_try_advisory_lock", "pg_try_advisory_xact_lock", "pg_advisory_lock_shared",
    "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile",
    "pg_read_file", "pg_read_binary_file", "pg_ls_dir", "pg_stat_file", "pg_sleep",
    "pg_sleep_for", "pg_sleep_until", "pg_notify", "pg_logical_emit_message", "pg_switch_wal",
    "pg_create_restore_point", "pg_promote", "pg_export_snapshot", "pg_file_write",
    "lo_import", "lo_export", "lo_create", "lo_unlink", "lo_from_bytea", "lo_put",
    "dblink", "dblink_exec", "dblink_connect", "query_to_xml", "query_to_xml_and_xmlschema",
    "cursor_to_xml", "table_to_xml", "txid_current", "pg_current_xact_id",
    "pg_create_logical_replication_slot", "pg_create_physical_replication_slot",
    "pg_drop_replication_slot",
    # MySQL / MariaDB
    "load_file", "sleep", "benchmark", "get_lock", "release_lock", "release_all_locks",
    "sys_exec", "sys_eval", "master_pos_wait", "source_pos_wait",
    # SQLite
    "load_extension", "readfile", "writefile", "edit", "fts3_tokenizer",
    # DuckDB (file and network access)
    "read_csv", "read_csv_auto", "read_parquet", "parquet_scan", "read_json", "read_json_auto",
    "read_json_objects", "read_ndjson", "read_ndjson_auto", "read_text", "read_blob", "glob",
    "sniff_csv", "parquet_metadata", "parquet_schema", "read_xlsx", "query", "query_table",
    "sqlite_scan", "postgres_scan", "mysql_scan", "getenv",
})

_SYSTEM_FUNCTION = re.compile(r"^system\$", re.I)  # Snowflake SYSTEM$... functions

_log = logging.getLogger("sqlglot")


def check_read_only(sql: str, dialect: str = "") -> Verdict:
    """The read-only verdict for ``sql`` in ``dialect`` (a sqlglot dialect name)."""
    d = sqlglot_dialect(dialect)
    if not sql or not sql.strip():
        return Verdict(False, "the statement is empty")

    lexical = _lexical_tricks(sql, d)
    if lexical:
        return Verdict(False, lexical)

    previous = _log.level
    _log.setLevel(logging.CRITICAL)  # sqlglot warns when it falls back to Command
    try:
        trees = [t for t in sqlglot.parse(sql, read=d) if t is not None]
    except (SqlglotError, ValueError, RecursionError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return Verdict(False, f"sqlglot could not parse it as {d or 'generic'} SQL ({first}), "
                              "so it is not known to be read-only")
    finally:
        _log.setLevel(previous)

    if not trees:
        return Verdict(False, "there is no statement, only comments")
    if len(trees) > 1:
        return Verdict(False, f"it holds {len(trees)} statements; exactly one is allowed")
    root = trees[0]
    kind = type(root).__name__.upper()
    if not isinstance(root, _QUERY_ROOTS):
        what = _describe(root)
        return Verdict(False, f"it is {what}, not a query", kind)
    for node in root.walk():
        if isinstance(node, _FORBIDDEN):
            return Verdict(False, f"it contains {_describe(node)}", kind)
        if isinstance(node, exp.Func):
            name = _function_name(node)
            if name and (name in _FORBIDDEN_FUNCTIONS or _SYSTEM_FUNCTION.match(name)):
                return Verdict(False, f"it calls {name}(), which can write, change the session "
                                      "or reach outside the database", kind)
    return Verdict(True, "a single read-only query", kind)


def is_read_only(sql: str, dialect: str = "") -> bool:
    return check_read_only(sql, dialect).read_only


def _function_name(node: exp.Func) -> str | None:
    if isinstance(node, exp.Anonymous):
        name = node.name
    else:
        try:
            name = node.sql_name()
        except Exception:
            name = type(node).__name__
    return name.lower() if name else None


def _describe(node: exp.Expression) -> str:
    if isinstance(node, exp.Command):
        word = str(node.this).split()[0].upper() if node.this else "a command"
        return f"a {word} command"
    if isinstance(node, exp.Into):
        return "an INTO clause (it writes a table or file)"
    if isinstance(node, exp.Lock):
        return "a locking clause (FOR UPDATE/SHARE)"
    names = {
        "Insert": "an INSERT", "Update": "an UPDATE", "Delete": "a DELETE", "Merge": "a MERGE",
        "Create": "a CREATE", "Drop": "a DROP", "Alter": "an ALTER", "TruncateTable": "a TRUNCATE",
        "Copy": "a COPY", "Set": "a SET", "Pragma": "a PRAGMA", "Attach": "an ATTACH",
        "Detach": "a DETACH", "Grant": "a GRANT", "Revoke": "a REVOKE", "Use": "a USE",
        "Transaction": "a transaction statement", "Commit": "a COMMIT", "Rollback": "a ROLLBACK",
        "Analyze": "an ANALYZE", "Export": "an EXPORT", "Install": "an INSTALL",
        "LoadData": "a LOAD DATA", "Cache": "a CACHE", "Kill": "a KILL", "Comment": "a COMMENT",
        "Declare": "a DECLARE", "Execute": "an EXECUTE", "Describe": "a DESCRIBE", "Show": "a SHOW",
    }
    return names.get(type(node).__name__, f"a {type(node).__name__.upper()} statement")


_MYSQL_EXEC_COMMENT = re.compile(r"/\*[M]?!", re.I)


def _lexical_tricks(sql: str, dialect: str) -> str | None:
    """Tricks where the engine reads the text differently from sqlglot."""
    from sqlnb.sql.text import scan

    for tok in scan(sql, dialect):
        if tok.kind != "comment":
            continue
        if dialect == "mysql":
            if _MYSQL_EXEC_COMMENT.match(tok.text):
                return "it contains a MySQL executable comment (/*! ... */), which the server runs"
            if tok.text.startswith("--") and len(tok.text) > 2 and not tok.text[2].isspace():
                return ("it contains '--' not followed by a space, which MySQL does not treat as "
                        "a comment")
        if tok.text.startswith("/*") and not tok.text.endswith("*/"):
            return "it contains an unterminated /* comment"
    return None
