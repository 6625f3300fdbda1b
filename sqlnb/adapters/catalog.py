"""The catalog: the tables, views, columns and keys of one database, as every engine
reports them (:func:`assemble_tables` builds them from a few set-based catalog queries)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Column:
    name: str
    type: str
    nullable: bool = True
    default: str | None = None
    comment: str | None = None


@dataclass(slots=True)
class ForeignKey:
    name: str | None
    columns: list[str]
    ref_schema: str | None
    ref_table: str
    ref_columns: list[str]


@dataclass(slots=True)
class Index:
    name: str
    columns: list[str]
    unique: bool = False


@dataclass
class Table:
    schema: str | None
    name: str
    kind: str = "table"  # "table" or "view"
    columns: list[Column] = field(default_factory=list)
    primary_key: list[str] = field(default_factory=list)
    unique: list[list[str]] = field(default_factory=list)
    foreign_keys: list[ForeignKey] = field(default_factory=list)
    indexes: list[Index] = field(default_factory=list)
    row_count: int | None = None  # estimate
    comment: str | None = None

    @property
    def qualified_name(self) -> str:
        return f"{self.schema}.{self.name}" if self.schema else self.name

    def column(self, name: str) -> Column | None:
        for c in self.columns:
            if c.name == name:
                return c
        low = name.lower()
        return next((c for c in self.columns if c.name.lower() == low), None)


@dataclass
class Catalog:
    dialect: str
    tables: list[Table]
    default_schema: str | None = None
    loaded_at: float = field(default_factory=time.time)
    elapsed: float = 0.0

    @property
    def schemas(self) -> list[str]:
        return sorted({t.schema for t in self.tables if t.schema})

    def find(self, name: str) -> Table | None:
        """Look a table up by ``name`` or ``schema.name``, exactly then case-insensitively."""
        schema, _, bare = name.rpartition(".")
        matches = [t for t in self.tables if t.name == bare and (not schema or t.schema == schema)]
        if not matches:
            low, slow = bare.lower(), schema.lower()
            matches = [
                t
                for t in self.tables
                if t.name.lower() == low and (not schema or (t.schema or "").lower() == slow)
            ]
        if len(matches) > 1 and not schema:
            preferred = [t for t in matches if t.schema == self.default_schema]
            matches = preferred or matches
        return matches[0] if matches else None


def assemble_tables(
    table_rows: Iterable[Sequence[Any]],
    column_rows: Iterable[Sequence[Any]],
    constraint_rows: Iterable[Sequence[Any]] = (),
    index_rows: Iterable[Sequence[Any]] = (),
) -> list[Table]:
    """Build :class:`Table` objects from the rows of a few set-based catalog queries.

    - ``table_rows``: (schema, name, kind, row_count_estimate, comment)
    - ``column_rows``: (schema, table, column, type, nullable, default, comment), in order
    - ``constraint_rows``: (schema, table, constraint_name, kind, columns, ref_schema,
      ref_table, ref_columns) with kind in {"p", "u", "f"} and column lists as sequences
    - ``index_rows``: (schema, table, index_name, unique, columns)
    """
    tables: dict[tuple, Table] = {}
    for schema, name, kind, rows, comment in table_rows:
        kind = "view" if str(kind).lower() in ("v", "view", "m", "materialized view") else "table"
        tables[(schema, name)] = Table(
            schema,
            name,
            kind,
            row_count=int(rows) if rows is not None and int(rows) >= 0 else None,
            comment=comment or None,
        )
    get = tables.get
    for schema, table, name, typ, nullable, default, comment in column_rows:  # the hot loop
        t = get((schema, table))
        if t is not None:
            t.columns.append(
                Column(
                    name,
                    (typ if type(typ) is str else str(typ)).lower(),
                    nullable if type(nullable) is bool else _truthy(nullable),
                    default if default is None or type(default) is str else str(default),
                    comment or None,
                )
            )
    for schema, table, cname, kind, cols, ref_schema, ref_table, ref_cols in constraint_rows:
        t = tables.get((schema, table))
        if t is None:
            continue
        cols = list(cols)
        if kind == "p":
            t.primary_key = cols
        elif kind == "u":
            t.unique.append(cols)
        elif kind == "f":
            t.foreign_keys.append(ForeignKey(cname, cols, ref_schema, ref_table, list(ref_cols)))
    for schema, table, iname, unique, cols in index_rows:
        t = tables.get((schema, table))
        if t is not None:
            t.indexes.append(Index(iname, list(cols), _truthy(unique)))
    return list(tables.values())


def _truthy(v: Any) -> bool:
    if isinstance(v, str):
        return v.strip().upper() in ("YES", "Y", "TRUE", "T", "1")
    return bool(v)
