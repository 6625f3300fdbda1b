"""DuckDB through the duckdb package; results come out as Arrow natively.

- One statement per call: ``conn.sql()`` runs every statement of a text, so DuckDB's own
  parser counts them first (``extract_statements``) and a text of several is refused
  before any of it runs; the text sent is the statement itself, byte for byte.
- A guarded statement (a read-only connection, or ``readonly=True``) reads only the
  connected database.  DuckDB reads a table name it does not find in its catalog by a
  replacement scan: a file of that name (``FROM 'hr.duckdb'``, ``FROM data.csv``), a URL,
  a Python DataFrame of the caller's frame; and a qualified name may name another
  attached database.  So DuckDB's parser lists the statement's table references
  (``json_serialize_sql``) and each must name, as DuckDB resolves it (the search path,
  ``current_database()``), a table or view of the connected database, its temporary
  tables or DuckDB's own catalog views: anything else is refused before it is sent
  (:meth:`DuckDBAdapter._only_connected_database`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

import duckdb

from sqlnb import errors
from sqlnb.adapters.base import Adapter
from sqlnb.adapters.catalog import Catalog, assemble_tables
from sqlnb.adapters.result import Result, ResultColumn, empty_result, normalize_arrow
from sqlnb.sql.statement import Statement


class DuckDBAdapter(Adapter):
    scheme = "duckdb"
    dialect = "duckdb"
    extra = ""
    driver_module = "duckdb"
    display_name = "DuckDB"
    native_timeout = False  # enforced by interrupting the connection
    paramstyle = "dollar_named"

    def _connect(self) -> None:
        path = self.spec.database
        config: dict[str, Any] = {}
        ro = self.options.readonly
        if ro:
            # read_only alone still lets TEMP tables and COPY ... TO write files
            config.update(enable_external_access=False, lock_configuration=True)
        if path is None:
            self.conn = duckdb.connect(":memory:", config=config)
        else:
            self._require_file_for_readonly(path)
            try:
                self.conn = duckdb.connect(path, read_only=ro, config=config)
            except duckdb.Error as exc:
                raise self._open_error(path, exc) from None
        # the database this connection opened: the only one a guarded statement reads
        # (USE or ATTACH in a cell later do not change it)
        self.connected_database = self.conn.execute("SELECT current_database()").fetchall()[0][0]

    def _open_error(self, path: str, exc: Exception) -> errors.SqlnbError:
        msg = str(exc)
        if "different configuration" in msg:
            return errors.ConfigurationError(
                f"DuckDB file {path!r} is already open in this kernel with other settings "
                "(read-only vs read-write)",
                hint="close the other connection first (%sqlnb close NAME) or open it the same way",
                engine_message=msg,
            )
        if "lock" in msg.lower():
            return errors.ConnectFailed(
                f"DuckDB file {path!r} is locked by another process",
                hint="another notebook or program has it open for writing; close it, or open "
                "this one with --readonly if the other is read-only too",
                engine_message=msg,
            )
        return errors.ConnectFailed(f"Cannot open DuckDB database {path!r}: {msg}", engine_message=msg)

    def _execute(
        self, statement: Statement, params: Any, max_rows: int | None, timeout: float | None
    ) -> Result:
        sql = self._sendable(statement)
        parsed = self._one_statement(sql)
        query_type = parsed[0].type if parsed else None
        if self.read_only_now and query_type in _QUERY_TYPES:
            # what a query reads; any other statement the guard refuses, and the
            # read-only session refuses its writes should the guard ever be fooled
            self._only_connected_database(sql, query_type == duckdb.StatementType.MULTI)
        kind = _statement_kind(statement)
        capped = max_rows is not None and kind == "rows" and query_type == duckdb.StatementType.SELECT
        if capped:
            # the row cap as a LIMIT DuckDB plans with (a top-N instead of a full sort):
            # sqlnb's wrapper, the statement unchanged on lines of its own and checked by
            # the guard again.  (The relation API's limit() re-parses the text inside a
            # wrapper of DuckDB's own, which a comment after a final semicolon breaks.)
            sql = self._sendable(
                statement.wrap("SELECT * FROM (", f") AS sqlnb_rows LIMIT {int(max_rows) + 1}")
            )
        rel = self.conn.sql(sql, params=params) if params else self.conn.sql(sql)
        if rel is None:
            return empty_result(statement)
        if kind == "dml":
            rows = rel.fetchall()
            return empty_result(statement, int(rows[0][0]) if rows and rows[0] else -1)
        if kind == "command":
            rel.fetchall()
            return empty_result(statement)
        names, types = rel.columns, [str(t).lower() for t in rel.types]
        if max_rows is not None:
            table = (rel if capped else rel.limit(max_rows + 1)).to_arrow_table()
            truncated = table.num_rows > max_rows
            if truncated:
                table = table.slice(0, max_rows)
        else:
            table, truncated = rel.to_arrow_table(), False
        table = normalize_arrow(table)
        columns = [ResultColumn(n, t) for n, t in zip(names, types, strict=True)]
        return Result(columns, table, table.num_rows, truncated)

    def _one_statement(self, sql: str) -> list:
        """DuckDB's own parse of ``sql``, refused when it holds more than one statement:
        ``conn.sql()`` would run them all (a ``COMMIT`` and an ``INSERT`` after a
        ``SELECT`` included).  Nothing has run when this refuses."""
        parsed = self.conn.extract_statements(sql)
        count = len(parsed)
        if count > 1:
            raise self._several_statements(count, "DuckDB")
        return parsed

    def _only_connected_database(self, sql: str, several: bool = False) -> None:
        """Refuse a guarded statement that names a relation outside the connected
        database.  DuckDB's parser lists the statement's table references; each one that
        is not a CTE in scope must resolve, by DuckDB's own lookup (the search path,
        ``current_database()``), to a table or view that exists now in the connected
        database, in ``temp`` (this session's temporary tables) or in ``system``
        (DuckDB's catalog views: ``information_schema``, ``pg_catalog``,
        ``duckdb_tables``).  A name DuckDB does not find there it would read by a
        replacement scan (a file, a URL, a Python variable), so it is refused, as is a
        name that resolves to another attached database."""
        where = "on a read-only connection" if self.options.readonly else "as read-only"
        if several:
            reason = (
                "DuckDB runs it as several statements (a PIVOT first queries the "
                "values that become its columns), so sqlnb cannot list the tables it reads"
            )
            raise errors.ReadOnlyViolation(
                f"Refused {where}: {reason}",
                reason=reason,
                dialect=self.dialect,
                hint="write the pivot with GROUP BY and FILTER or CASE",
            )
        refs = _table_references(self.conn, sql, where)
        if not refs:
            return
        lookup = _Lookup(self.conn, self.connected_database)
        for ref in refs:
            shown = ".".join(p for p in ref if p)
            status, database = lookup.resolve(ref)
            if status == "elsewhere":
                reason = (
                    f"it reads {shown}, which is in the attached database {database}, "
                    f"not in the connected database {self.connected_database}"
                )
                raise errors.ReadOnlyViolation(
                    f"Refused {where}: {reason}",
                    reason=reason,
                    dialect=self.dialect,
                    hint="sqlnb reads only the connected database here; query other "
                    "databases from a %%sql cell on a connection without --readonly",
                )
            if status == "missing":
                raise errors.TableNotFound(
                    f'Table with name "{shown}" does not exist in the connected database '
                    f"{self.connected_database}: refused rather than let DuckDB read that "
                    "name from anywhere else (a file, a URL, a Python variable, another "
                    "database)",
                    dialect=self.dialect,
                    hint=self._closest_hint(shown),
                )

    def _load_catalog(self) -> Catalog:
        q = self.conn.execute
        db = q("SELECT current_database(), current_schema()").fetchone()
        database, schema = db[0], db[1]
        tables = q(
            "SELECT schema_name, table_name, 'table', estimated_size, comment FROM duckdb_tables() "
            "WHERE database_name = $db AND NOT internal AND NOT temporary "
            "UNION ALL SELECT schema_name, view_name, 'view', NULL, comment FROM duckdb_views() "
            "WHERE database_name = $db AND NOT internal AND NOT temporary "
            "ORDER BY 1, 2",
            {"db": database},
        ).fetchall()
        columns = q(
            "SELECT schema_name, table_name, column_name, data_type, is_nullable, column_default, "
            "comment FROM duckdb_columns() WHERE database_name = $db AND NOT internal "
            "ORDER BY schema_name, table_name, column_index",
            {"db": database},
        ).fetchall()
        constraints = []
        for sch, tbl, ctype, cols, ref_table, ref_cols, name in q(
            "SELECT schema_name, table_name, constraint_type, constraint_column_names, "
            "referenced_table, referenced_column_names, constraint_name FROM duckdb_constraints() "
            "WHERE database_name = $db AND constraint_type IN ('PRIMARY KEY', 'UNIQUE', 'FOREIGN KEY')",
            {"db": database},
        ).fetchall():
            kind = {"PRIMARY KEY": "p", "UNIQUE": "u", "FOREIGN KEY": "f"}[ctype]
            constraints.append(
                (sch, tbl, name, kind, cols, sch if kind == "f" else None, ref_table, ref_cols or [])
            )
        indexes = []
        for sch, tbl, name, unique, expressions in q(
            "SELECT schema_name, table_name, index_name, is_unique, expressions FROM duckdb_indexes() "
            "WHERE database_name = $db",
            {"db": database},
        ).fetchall():
            indexes.append((sch, tbl, name, unique, _index_columns(expressions)))
        return Catalog(
            self.dialect, assemble_tables(tables, columns, constraints, indexes), default_schema=schema
        )

    def _catalog_rows(self, sql: str) -> list:
        return self.conn.execute(sql).fetchall()

    def _cancel(self) -> None:
        self.conn.interrupt()

    @contextlib.contextmanager
    def _read_only_scope(self):
        # A duplicate connection to the same database (its own transaction context, so an
        # open transaction of the user's is left alone) in a read-only transaction, which
        # DuckDB keeps from every write, TEMP tables included.  Cancel reaches it too,
        # since it stands in self.conn while the statement runs.
        main, ro = self.conn, self.conn.cursor()
        try:
            ro.execute("BEGIN TRANSACTION READ ONLY")
            self.conn = ro
            yield
        finally:
            self.conn = main
            try:
                ro.close()  # ends (rolls back) the read-only transaction
            except duckdb.Error:
                pass

    def _close(self) -> None:
        self.conn.close()

    def _classify(self, exc: BaseException) -> errors.SqlnbError | None:
        msg = str(exc)
        if isinstance(exc, duckdb.InterruptException) or "interrupted" in msg.lower():
            return errors.QueryCancelled("Query interrupted")
        if isinstance(exc, duckdb.CatalogException):
            low = msg.lower()
            if "table" in low and ("does not exist" in low or "not exist" in low):
                return errors.TableNotFound(msg)
            return errors.DatabaseError(msg)
        if isinstance(exc, duckdb.BinderException):
            if "column" in msg.lower():
                return errors.ColumnNotFound(msg)
            return errors.TypeMismatch(msg) if "type" in msg.lower() else errors.DatabaseError(msg)
        if isinstance(exc, duckdb.ParserException):
            return errors.SQLSyntaxError(msg)
        if isinstance(exc, (duckdb.ConversionException, duckdb.TypeMismatchException)):
            return errors.TypeMismatch(msg)
        if (
            isinstance(exc, duckdb.PermissionException)
            or "read-only" in msg.lower()
            or "read only" in msg.lower()
        ):
            return errors.PermissionDenied(msg)
        return None


def _index_columns(expressions: Any) -> list[str]:
    if isinstance(expressions, (list, tuple)):
        return [str(e).strip('"') for e in expressions]
    text = str(expressions or "").strip("[]")
    return [p.strip().strip('"') for p in text.split(",") if p.strip()]


# ---- which relations a statement reads ------------------------------------------------

# DuckDB's statement types of a query: SELECT (SUMMARIZE and DESCRIBE too) and MULTI (a
# PIVOT runs a query for its columns first, so sqlnb cannot list what it reads: refused)
_QUERY_TYPES = (duckdb.StatementType.SELECT, duckdb.StatementType.MULTI)
_SYSTEM, _TEMP = "system", "temp"
_DEFAULT_SCHEMAS = ("information_schema", "pg_catalog")  # always in DuckDB's system catalog
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _fold(name: str) -> str:
    """A name as DuckDB's catalog compares it: ASCII letters case-insensitively, every
    other character as it is (a wider folding could match a name DuckDB would not)."""
    return name.translate(_ASCII_LOWER)


def _table_references(conn, sql: str, where: str) -> list[tuple[str, str, str]]:
    """The (catalog, schema, table) of every table reference in ``sql`` that is not a CTE
    in scope there, as DuckDB's own parser reads the statement (``json_serialize_sql``;
    the text travels as a parameter value, it is not run).  Missing parts are ''."""
    raw = conn.execute("SELECT json_serialize_sql($1)", [sql]).fetchall()[0][0]
    tree = json.loads(raw)
    if tree.get("error"):
        reason = (
            "DuckDB cannot list the tables it reads "
            f"({tree.get('error_message') or tree.get('error_type') or 'no reason given'}), "
            "so it is not known to read only the connected database"
        )
        raise errors.ReadOnlyViolation(
            f"Refused {where}: {reason}",
            reason=reason,
            dialect="duckdb",
            hint="write it as a plain SELECT over the database's tables",
        )
    return list(dict.fromkeys(_walk(tree.get("statements", []), frozenset())))


def _walk(node: Any, ctes: frozenset) -> Iterator[tuple[str, str, str]]:
    """Table references under ``node``; ``ctes``: the (folded) CTE names visible there.

    Scoping as DuckDB binds CTEs: a node's CTEs are visible in its body and in later CTEs
    of the same WITH, not in earlier ones nor in their own body (DuckDB reads those names
    as tables), except the recursive side of a recursive CTE; only an unqualified name
    can be a CTE.  Where this is unsure it reads a name as a table, which is then looked
    up in the catalog: a refusal, never a name let through unchecked."""
    if isinstance(node, list):
        for item in node:
            yield from _walk(item, ctes)
        return
    if not isinstance(node, dict):
        return
    cte_map = node.get("cte_map")
    if isinstance(cte_map, dict):
        visible = ctes
        for entry in cte_map.get("map") or []:
            yield from _walk(entry.get("value"), visible)
            visible = visible | {_fold(str(entry.get("key", "")))}
        ctes = visible
    kind = node.get("type")
    if kind in ("RECURSIVE_CTE_NODE", "CTE_NODE"):
        # a recursive CTE sees itself on its recursive side; a CTE node (how some DuckDB
        # versions write a materialized CTE) makes its CTE visible in its main query
        name = _fold(str(node.get("cte_name") or node.get("ctename") or ""))
        inside = "right" if kind == "RECURSIVE_CTE_NODE" else "child"
        for key, value in node.items():
            if key != "cte_map":
                yield from _walk(value, ctes | {name} if key == inside and name else ctes)
        return
    if (
        "table_name" in node
        and isinstance(node.get("table_name"), str)
        and (kind == "BASE_TABLE" or node["table_name"])
    ):
        catalog = str(node.get("catalog_name") or "")
        schema = str(node.get("schema_name") or "")
        table = node["table_name"]
        if catalog or schema or kind != "BASE_TABLE" or _fold(table) not in ctes:
            yield (catalog, schema, table)
    for key, value in node.items():
        if key != "cte_map":
            yield from _walk(value, ctes)


class _Lookup:
    """DuckDB's lookup of a table name, asked of DuckDB: the databases attached, the
    search path (``current_setting('search_path')``, ``current_database()``) and the
    tables and views that exist now (``duckdb_tables()``, ``duckdb_views()``), so a table
    created after the catalog was read is found too.

    The order follows DuckDB's ``CatalogSearchPath``: ``temp.main``, the paths set with
    ``SET search_path``/``USE``, the current database's ``main``, ``system.main`` and
    ``system.pg_catalog``; a two-part name ``a.b`` names the database ``a`` when one is
    attached by that name, else the schema ``a``."""

    def __init__(self, conn, home: str):
        row = conn.execute(
            "SELECT current_database(), current_setting('search_path'), "
            "(SELECT list(database_name) FROM duckdb_databases())"
        ).fetchall()[0]
        self.current = row[0]
        self.databases = {_fold(d): d for d in row[2] or []}
        self.allowed = {home, _TEMP, _SYSTEM}
        self._allowed = {_fold(d) for d in self.allowed}
        # '' stands for DuckDB's INVALID_CATALOG: the current database at lookup time
        self.paths = [
            (_TEMP, "main"),
            *_search_path(row[1] or ""),
            ("", "main"),
            (_SYSTEM, "main"),
            (_SYSTEM, "pg_catalog"),
        ]
        self.custom_path = bool(row[1])  # SET search_path or USE: read more warily
        self._conn = conn
        self._relations: dict[str, set[tuple[str, str]]] = {}

    def _where(self, table: str) -> set[tuple[str, str]]:
        """The (database, schema) pairs, folded, that hold a table or view ``table``."""
        key = _fold(table)
        if key not in self._relations:
            rows = self._conn.execute(
                "SELECT database_name, schema_name, table_name FROM duckdb_tables() "
                "WHERE lower(table_name) = lower($1) UNION ALL "
                "SELECT database_name, schema_name, view_name FROM duckdb_views() "
                "WHERE lower(view_name) = lower($1)",
                [table],
            ).fetchall()
            self._relations[key] = {(_fold(d), _fold(s)) for d, s, t in rows if _fold(t) == key}
        return self._relations[key]

    def _candidates(self, catalog: str, schema: str) -> list[tuple[str, str]]:
        """Where DuckDB looks, in order (its ``GetCatalogEntries``)."""
        if catalog and schema:
            found = [(catalog, schema)]
        elif catalog:  # the database's schemas on the search path, else its main schema
            found = [(c, s) for c, s in self.paths if c and _fold(c) == _fold(catalog)] or [(catalog, "main")]
        elif schema:
            found = [(_SYSTEM, schema)] if _fold(schema) in _DEFAULT_SCHEMAS else []
            found += [(c, s) for c, s in self.paths if _fold(s) == _fold(schema)]
            found = found or [(self.current, schema)]
        else:
            found = list(self.paths)
        return [(c or self.current, s) for c, s in found]

    def resolve(self, ref: tuple[str, str, str]) -> tuple[str, str | None]:
        """How DuckDB would read ``ref``: ("ok", database) from a table or view of an
        allowed database; ("elsewhere", database) when any way it could read the name
        leads to another attached database; ("missing", None) when the catalog does not
        hold it where DuckDB looks (DuckDB would try a replacement scan)."""
        catalog, schema, table = ref
        if not catalog and schema and _fold(schema) in self.databases:
            catalog, schema = schema, ""  # a.b: the database a (DuckDB's BindSchemaOrCatalog)
        if catalog:
            if _fold(catalog) not in self.databases:
                return "missing", None
            if _fold(catalog) not in self._allowed:
                return "elsewhere", self.databases[_fold(catalog)]
        held = self._where(table)
        hits = [c for c, s in self._candidates(catalog, schema) if (_fold(c), _fold(s)) in held]
        outside = next((c for c in hits if _fold(c) not in self._allowed), None)
        if outside is None and not catalog and self.custom_path:
            # a search path set in the session may lead anywhere: a name another database
            # holds (in that schema, if one is given) is refused whatever the order
            outside = next(
                (d for d, s in sorted(held) if d not in self._allowed and (not schema or s == _fold(schema))),
                None,
            )
        if outside is not None:
            return "elsewhere", self.databases.get(_fold(outside), outside)
        if not hits:
            return "missing", None
        return "ok", self.databases.get(_fold(hits[0]), hits[0])


def _search_path(text: str) -> list[tuple[str, str]]:
    """``current_setting('search_path')`` as (catalog, schema) pairs ('' catalog: the
    current database), read as DuckDB's ``CatalogSearchEntry::ParseList`` writes and
    reads it: comma-separated ``[catalog.]schema``, each part optionally in double quotes."""
    entries: list[tuple[str, str]] = []
    parts: list[str] = []
    word, i, quoted = "", 0, False
    while i <= len(text):
        ch = text[i] if i < len(text) else ","
        if quoted:
            if ch == '"':
                if text[i + 1 : i + 2] == '"':
                    word += '"'
                    i += 1
                else:
                    quoted = False
            else:
                word += ch
        elif ch == '"':
            quoted = True
        elif ch in ".,":
            parts.append(word)
            word = ""
            if ch == ",":
                if len(parts) == 1 and parts[0]:
                    entries.append(("", parts[0]))
                elif len(parts) == 2:
                    entries.append((parts[0], parts[1]))
                parts = []
        else:
            word += ch
        i += 1
    return entries


def _statement_kind(sql: str) -> str:
    """'dml' (affected-row count), 'command' (no rows) or 'rows'; 'rows' when unsure."""
    import logging

    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import SqlglotError

    log = logging.getLogger("sqlglot")
    level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except (SqlglotError, ValueError):
        return "rows"
    finally:
        log.setLevel(level)
    if isinstance(tree, (exp.Insert, exp.Update, exp.Delete, exp.Merge)):
        return "rows" if tree.args.get("returning") else "dml"
    if isinstance(
        tree,
        (
            exp.Create,
            exp.Drop,
            exp.Alter,
            exp.Set,
            exp.Attach,
            exp.Detach,
            exp.Transaction,
            exp.Commit,
            exp.Rollback,
            exp.Use,
            exp.Copy,
            exp.TruncateTable,
        ),
    ):
        return "command"
    return "rows"
