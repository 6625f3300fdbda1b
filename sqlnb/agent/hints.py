"""Concrete hints for the model after a failed or empty query: which table really has a
column, the closest existing names, the columns of the tables a query used, and the
values a filter could have matched."""

from __future__ import annotations

import difflib
import logging
import re
from typing import Callable, Iterable, Sequence

import sqlglot
from sqlglot import exp

from sqlnb.adapters import Catalog, Table
from sqlnb.sql.dialects import sqlglot_dialect

_log = logging.getLogger("sqlglot")

_MISSING_COLUMN = [
    re.compile(r"no such column:\s*([\w.\"`$]+)", re.I),  # SQLite
    re.compile(r'column\s+"?([\w.$]+)"?\s+does not exist', re.I),  # PostgreSQL, Redshift
    re.compile(r"unknown column\s+'([^']+)'", re.I),  # MySQL
    re.compile(r'referenced column\s+"([^"]+)"\s+not found', re.I),  # DuckDB
    re.compile(r"invalid identifier\s+'([^']+)'", re.I),  # Snowflake
    re.compile(r'column\s+"([^"]+)"\s+not found', re.I),
    re.compile(r'column "([^"]+)" must appear in the group by', re.I),
    re.compile(r'table "([^"]+)" does not have a column named "([^"]+)"', re.I),  # DuckDB, qualified
]
_MISSING_TABLE = [
    re.compile(r"no such table:\s*([\w.\"`$]+)", re.I),
    re.compile(r'relation\s+"([^"]+)"\s+does not exist', re.I),
    re.compile(r"table\s+'([^']+)'\s+doesn't exist", re.I),
    re.compile(r'table with name\s+"?([\w.$]+)"?\s+does not exist', re.I),
    re.compile(r"object\s+'([^']+)'\s+does not exist", re.I),
]


def _unquote(name: str) -> str:
    return name.strip().strip('"`[]')


def missing_name(message: str, patterns) -> str | None:
    for p in patterns:
        m = p.search(message or "")
        if m:
            # a pattern naming the table apart: ``table.column``
            return ".".join(_unquote(g) for g in m.groups())
    return None


def query_tables(sql: str, dialect: str, catalog: Catalog) -> list[Table]:
    """The catalog tables a query reads (CTE names aside), in order of appearance."""
    tree = _parse(sql, dialect)
    if tree is None:
        return []
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    out: list[Table] = []
    for t in tree.find_all(exp.Table):
        if t.name.lower() in ctes:
            continue
        found = catalog.find(f"{t.db}.{t.name}" if t.db else t.name)
        if found is not None and found not in out:
            out.append(found)
    return out


def _table_refs(tree: exp.Expression, catalog: Catalog) -> list[tuple[str, str, Table]]:
    """The query's table references found in the catalog: (alias as written, table name
    as written, catalog table)."""
    refs = []
    for t in tree.find_all(exp.Table):
        found = catalog.find(f"{t.db}.{t.name}" if t.db else t.name)
        if found is not None:
            refs.append((t.alias or t.name, t.name, found))
    return refs


def alias_table(sql: str, dialect: str, catalog: Catalog, alias: str) -> Table | None:
    """The catalog table an alias (or table name) of the query stands for."""
    tree = _parse(sql, dialect)
    if tree is None:
        return None
    low = alias.lower()
    return next((t for a, name, t in _table_refs(tree, catalog) if low in (a.lower(), name.lower())), None)


def error_hint(kind: str, message: str, sql: str, dialect: str, catalog: Catalog | None) -> str | None:
    """Hints for a failed query, from the catalog (no data)."""
    if catalog is None:
        return None
    hints: list[str] = []
    used = query_tables(sql, dialect, catalog)
    if kind == "column_not_found" or missing_name(message, _MISSING_COLUMN):
        name = missing_name(message, _MISSING_COLUMN)
        if name:
            qualifier, _, bare = name.rpartition(".")
            owners = [t for t in catalog.tables if t.column(bare) is not None]
            aliased = alias_table(sql, dialect, catalog, qualifier) if qualifier else None
            if aliased is not None and aliased.column(bare) is None:
                where = f"{qualifier} is {aliased.name}" if qualifier.lower() != aliased.name.lower() \
                    else aliased.name
                hints.append(f"{where}, which has no column {bare} (its columns: "
                             f"{', '.join(c.name for c in aliased.columns[:30])})")
            if owners:
                names = ", ".join(t.qualified_name if t.schema and t.schema != catalog.default_schema
                                  else t.name for t in owners[:6])
                hints.append(f"column {bare} exists in: {names}")
                if used and not any(t in used for t in owners):
                    hints.append("join one of those tables, or take the column from the table that has it")
            else:
                pool = sorted({c.name for t in (used or catalog.tables) for c in t.columns})
                close = difflib.get_close_matches(bare, pool, n=3, cutoff=0.5) or \
                    difflib.get_close_matches(bare.lower(), [p.lower() for p in pool], n=3, cutoff=0.5)
                if close:
                    hints.append(f"no column is named {bare}; closest: {', '.join(close)}")
    if kind == "table_not_found" or missing_name(message, _MISSING_TABLE):
        name = missing_name(message, _MISSING_TABLE)
        if name:
            bare = name.split(".")[-1]
            pool = [t.name for t in catalog.tables]
            close = difflib.get_close_matches(bare, pool, n=3, cutoff=0.5) or \
                [p for p in pool if p.lower() == bare.lower()]
            if close:
                hints.append(f"no table is named {bare}; closest: {', '.join(close)}")
    if used and kind not in ("timeout", "cancelled", "read_only"):
        cols = "; ".join(f"{t.name}({', '.join(c.name for c in t.columns[:30])})" for t in used[:4])
        hints.append(f"columns of the tables used: {cols}")
    return "; ".join(hints) or None


def _string_filters(tree: exp.Expression, catalog: Catalog, kinds: tuple, *, unique_owner: bool = False):
    """The filters of a parsed query that compare a catalog column with string literals
    (``col = 'x'``, ``col IN ('x', 'y')``, ...; ``kinds``: the expression classes): each
    as (node, column, its table, the literals).  A column without a qualifier belongs to
    the first table of the query that has it (``unique_owner``: only when one has it)."""
    aliases: dict[str, Table] = {}
    for alias, name, found in _table_refs(tree, catalog):
        aliases[alias.lower()] = found
        aliases.setdefault(name.lower(), found)
    for node in list(tree.find_all(*kinds)):
        col = node.this if isinstance(node.this, exp.Column) else None
        if col is None:
            continue
        if isinstance(node, exp.In):
            literals = [e for e in node.expressions if isinstance(e, exp.Literal) and e.is_string]
        else:
            lit = node.expression
            literals = [lit] if isinstance(lit, exp.Literal) and lit.is_string else []
        if not literals:
            continue
        table = aliases.get(col.table.lower()) if col.table else None
        if table is None:
            owners = [t for t in aliases.values() if t.column(col.name) is not None]
            table = owners[0] if owners and (len(owners) == 1 or not unique_owner) else None
        if table is None or table.column(col.name) is None:
            continue
        yield node, col, table, literals


def empty_result_hint(sql: str, dialect: str, catalog: Catalog | None,
                      distinct_values: Callable[[Table, str], Sequence[object]]) -> str | None:
    """When a filter matched nothing: the existing values closest to each string literal
    compared with a column (``col = 'x'``, ``col LIKE 'x'``, ``col IN (...)``)."""
    if catalog is None:
        return None
    tree = _parse(sql, dialect)
    if tree is None:
        return None
    hints: list[str] = []
    seen: set[tuple[str, str]] = set()
    for node, col, table, literals in _string_filters(tree, catalog, (exp.EQ, exp.Like, exp.ILike, exp.In)):
        key = (table.name, col.name.lower())
        if key in seen:
            continue
        seen.add(key)
        try:
            values = [str(v) for v in distinct_values(table, table.column(col.name).name) if v is not None]
        except Exception:
            continue
        wanted = [str(lit.this) for lit in literals]
        pattern = isinstance(node, (exp.Like, exp.ILike))
        picks: list[str] = []
        for w in wanted:
            core = w.strip("%_") if pattern else w
            picks += [v for v in values if v.lower() == core.lower() and v not in picks]
            picks += [v for v in values if core.lower() in v.lower() and v not in picks][:3]
            picks += [v for v in difflib.get_close_matches(core, values, n=3, cutoff=0.4) if v not in picks]
        shown = picks[:5] or values[:5]
        if shown:
            label = "closest values" if picks else "some values"
            quoted = ", ".join("'" + v.replace("'", "''") + "'" for v in shown)
            hints.append(f"{table.name}.{col.name} has no {', '.join(repr(w) for w in wanted)}; {label}: {quoted}")
    return "; ".join(hints) or None


def _parse(sql: str, dialect: str):
    previous = _log.level
    _log.setLevel(logging.CRITICAL)
    try:
        return sqlglot.parse_one(sql, read=sqlglot_dialect(dialect))
    except Exception:
        return None
    finally:
        _log.setLevel(previous)


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _closest(name: str, candidates: Sequence[str]) -> str | None:
    """The one candidate that is clearly meant: equal but for case and underscores, else
    a single close spelling."""
    exact = [c for c in candidates if _norm(c) == _norm(name)]
    if len(set(exact)) == 1:
        return exact[0]
    if exact:
        return None
    normed = {_norm(c): c for c in candidates}
    close = difflib.get_close_matches(_norm(name), list(normed), n=2, cutoff=0.8)
    if len(close) == 1 or (len(close) == 2 and difflib.SequenceMatcher(None, _norm(name), close[0]).ratio()
                           - difflib.SequenceMatcher(None, _norm(name), close[1]).ratio() > 0.1):
        return normed[close[0]]
    return None


def _compared_with(col: exp.Column) -> exp.Column | None:
    """The column on the other side of an equality ``col = other``, if that is one."""
    parent = col.parent
    if isinstance(parent, exp.EQ):
        other = parent.expression if parent.this is col else parent.this
        if isinstance(other, exp.Column):
            return other
    return None


def _key_column(table: Table | None, other: Table, other_column: str) -> str | None:
    """The column of ``table`` that a foreign key pairs with ``other.other_column`` (either
    direction), or None."""
    if table is None:
        return None
    want = other_column.lower()
    for fk in table.foreign_keys:
        if fk.ref_table.lower() == other.name.lower():
            for mine, theirs in zip(fk.columns, fk.ref_columns):
                if theirs.lower() == want:
                    return mine
    for fk in other.foreign_keys:
        if fk.ref_table.lower() == table.name.lower():
            for theirs, mine in zip(fk.columns, fk.ref_columns):
                if theirs.lower() == want:
                    return mine
    return None


def _fix_column(tree: exp.Expression, qualifier: str, bare: str, aliases: dict[str, Table],
                spelled: dict[str, str], *, misspelt: bool) -> bool:
    """Fix the references to column ``bare`` (of ``qualifier`` when given) in place: moved to
    the one table of the query that has it, or, with ``misspelt``, renamed to the closest
    existing name.  Whether anything changed."""
    changed = False
    owners = {a: t for a, t in aliases.items() if t.column(bare) is not None}
    for col in list(tree.find_all(exp.Column)):
        if col.name.lower() != bare.lower() or (qualifier and col.table.lower() != qualifier.lower()):
            continue
        # the tables of the column's own SELECT first (``T2.Form`` beside ``Work AS T1``,
        # while a subquery reads Work too), else of the whole query
        select = col.find_ancestor(exp.Select)
        own = _spelling(select) if select is not None else {}
        local = {a: t for a, t in owners.items() if a in own}
        mine = local if len(local) == 1 else owners
        if qualifier and len(mine) == 1:  # taken from the wrong table of the query
            owner = next(iter(mine))
            other = _compared_with(col)
            if other is not None and other.table.lower() == owner and other.name.lower() == bare.lower():
                # a join condition: moving the column would compare it with itself;
                # the foreign key between the two tables says what was meant
                key = _key_column(aliases.get(qualifier.lower()), aliases[owner], bare)
                if key is not None:
                    col.set("this", exp.to_identifier(key))
                    changed = True
                continue
            col.set("table", exp.to_identifier(spelled[owner]))
            changed = True
            continue
        if not misspelt:
            continue
        pool = [c.name for a, t in aliases.items() if not qualifier or a == qualifier.lower()
                for c in t.columns] or [c.name for t in aliases.values() for c in t.columns]
        fixed = _closest(bare, pool)
        if fixed is not None and fixed != bare:
            col.set("this", exp.to_identifier(fixed))
            changed = True
    return changed


def suggest_fix(kind: str, message: str, sql: str, dialect: str, catalog: Catalog | None) -> str | None:
    """The failed query with the name the engine did not find replaced by the one clearly
    meant — a column taken from the wrong table of the query, a misspelt column or table —
    or None when no single fix is clear.  The model sees it as a suggestion; it runs only
    if the model proposes it."""
    if catalog is None:
        return None
    tree = _parse(sql, dialect)
    if tree is None:
        return None
    d = sqlglot_dialect(dialect)
    refs = _table_refs(tree, catalog)
    aliases = {alias.lower(): found for alias, _, found in refs}
    spelled = {alias.lower(): alias for alias, _, _ in refs}  # alias as the query writes it
    changed = False
    column = missing_name(message, _MISSING_COLUMN)
    table = missing_name(message, _MISSING_TABLE) if kind == "table_not_found" else None
    if column:
        qualifier, _, bare = column.rpartition(".")
        # a column of a table the query does not use: that table joined along its foreign
        # key; else a column taken from the wrong table of the query, or misspelt
        joined = _join_owner(tree, bare, catalog)
        if not joined and not any(t.column(bare) is not None for t in catalog.tables) \
                and (spelt := _split_name(bare, catalog)) is not None:
            # a name no table has that spells a table and its column (property_type)
            joined = _join_owner(tree, bare, catalog, spelt=spelt)
        changed = joined or _fix_column(tree, qualifier, bare, aliases, spelled, misspelt=True)
        # the engine names the first missing column only: others taken from the wrong
        # table of the query get the same fix
        changed = _requalify(tree, aliases, spelled) or changed
        # and columns of tables the query does not use yet, one owner joined for each;
        # then the columns qualified with a table that lacks them go to the joined one
        for other in _unresolved(tree, catalog):
            joined = _join_owner(tree, other, catalog) or joined
        if joined:
            changed = True
            refs = _table_refs(tree, catalog)
            aliases = {alias.lower(): found for alias, _, found in refs}
            spelled = {alias.lower(): alias for alias, _, _ in refs}
            # not the links to a table joined later (a JOIN condition)
            _requalify(tree, aliases, spelled, outside_joins=True)
    elif table:
        bare = table.split(".")[-1]
        fixed = _closest(bare, [t.name for t in catalog.tables])
        if fixed is not None and fixed != bare:
            for t in tree.find_all(exp.Table):
                if t.name.lower() == bare.lower():
                    t.set("this", exp.to_identifier(fixed))
                    changed = True
    if not changed:
        return None
    try:
        return tree.sql(dialect=d)
    except Exception:
        return None


def _requalify(tree: exp.Expression, aliases: dict[str, Table], spelled: dict[str, str], *,
               outside_joins: bool = False) -> bool:
    """Columns qualified with a table of the query that lacks them, moved to the table of
    the query that has them (``_fix_column``); ``outside_joins``: not those inside a JOIN
    condition.  Whether any moved."""
    changed = False
    for col in list(tree.find_all(exp.Column)):
        q = col.table.lower()
        if q and q in aliases and aliases[q].column(col.name) is None \
                and not (outside_joins and col.find_ancestor(exp.Join) is not None):
            changed = _fix_column(tree, col.table, col.name, aliases, spelled, misspelt=False) or changed
    return changed


def _plain_text(value: str) -> str:
    return " ".join(value.lower().split())


def value_repair(sql: str, dialect: str, catalog: Catalog | None,
                 distinct_values: Callable[[Table, str], Sequence[object]]) -> tuple[str, str] | None:
    """When a filter matched nothing because a string literal differs from the value
    stored in its column only in case or spacing (``= 'new york'`` for 'New York'), or is
    one clear near match of it: the query with the stored values put in, and what was
    replaced (``'new york' → 'New York'``).  None when no literal has exactly one such
    stored value."""
    if catalog is None:
        return None
    tree = _parse(sql, dialect)
    if tree is None:
        return None
    changes: list[str] = []
    for node, col, table, literals in _string_filters(tree, catalog, (exp.EQ, exp.In, exp.NEQ),
                                                      unique_owner=True):
        try:
            values = [str(v) for v in distinct_values(table, table.column(col.name).name) if v is not None]
        except Exception:
            continue
        if not values:
            continue
        for lit in literals:
            wanted = str(lit.this)
            if wanted in values:
                continue
            same = [v for v in values if _plain_text(v) == _plain_text(wanted)]
            if len(same) != 1:
                near = difflib.get_close_matches(wanted, values, n=2, cutoff=0.85)
                same = near if len(near) == 1 else []
            if len(same) == 1:
                lit.replace(exp.Literal.string(same[0]))
                changes.append(f"'{wanted}' → '{same[0]}'")
    if not changes:
        return None
    return _readable(tree.sql(dialect=sqlglot_dialect(dialect))), ", ".join(changes)


_NAME = r'(?:"[^"]+"|`[^`]+`|\w+)(?:\.(?:"[^"]+"|`[^`]+`|\w+))*'


def _readable(sql: str) -> str:
    """sqlglot's ``NOT x IN (…)`` and ``NOT x IS NULL`` as people write them (``x NOT IN``,
    ``x IS NOT NULL``) for a column ``x``: the same query."""
    sql = re.sub(rf"\bNOT ({_NAME}) IN \(", r"\1 NOT IN (", sql)
    return re.sub(rf"\bNOT ({_NAME}) IS NULL\b", r"\1 IS NOT NULL", sql)


def null_safe_not_in(sql: str, dialect: str) -> tuple[str, list[str]] | None:
    """``x NOT IN (SELECT c FROM …)`` is never true once ``c`` holds a NULL, so such a
    query comes back empty however the data looks: the query with ``c IS NOT NULL`` added
    to each such subquery (what "x is not among the c's" means), and those columns.  None
    when the query has no ``NOT IN`` over a one-column subquery."""
    tree = _parse(sql, dialect)
    if tree is None:
        return None
    changed: list[str] = []
    for node in list(tree.find_all(exp.Not)):
        inner = node.this.unnest() if isinstance(node.this, exp.Paren) else node.this
        if not isinstance(inner, exp.In) or not isinstance(inner.args.get("query"), exp.Subquery):
            continue
        select = inner.args["query"].this
        if not isinstance(select, exp.Select) or len(select.expressions) != 1:
            continue
        col = select.expressions[0].unalias()
        if not isinstance(col, exp.Column):
            continue
        select.where(exp.Not(this=exp.Is(this=col.copy(), expression=exp.Null())), copy=False)
        changed.append(col.sql(dialect=sqlglot_dialect(dialect)))
    if not changed:
        return None
    return _readable(tree.sql(dialect=sqlglot_dialect(dialect))), changed


# a stored code: two to five capital letters ('FT', 'MTG', 'TNK', 'SEAS')
_CODE = re.compile(r"[A-Z]{2,5}")
# words of a question that say what to do, not which rows: never read as a code's long form
_ASKING_WORDS = frozenset("""
    show list give find return display tell name names what which whose where when who how
    many much number numbers count total totals average sum first last least most more less
    than each every their there these those with without from that have been does done
    highest lowest largest smallest longest shortest fewest greatest order ordered sorted
    descending ascending rank ranked group grouped listed given shown different distinct
    all both either also only other others same per along
""".split())


# Codes that are also everyday English words ('IN' India, 'NO' Norway, 'US', 'CAN' cans):
# in "orders placed in each country" the word is English, so they count as named only
# where the question writes them as stored, in capitals ("customers in the US"), or as a
# plural noun ("kegs but never cans").
_WORD_CODES = frozenset("""
    am an as at be by do go he if in is it me my no of on or so to up us we
    and are can for had has its not our the was who
""".split())
# words whose initial does not start a two-letter code read as initials ('CA' not "customers are")
_NOT_INITIALS = _ASKING_WORDS | _WORD_CODES


def is_code(value: object) -> bool:
    """Whether a stored value looks like a code: two to five capital letters."""
    return isinstance(value, str) and _CODE.fullmatch(value) is not None


def abbreviates(code: str, word: str, *, strict: bool = False) -> bool:
    """Whether the stored code ``code`` (three letters or more) reads as a short form of
    the question's ``word``: the word is at least two letters longer and starts with the
    code ('MUS' for "musicals", 'SEAS' for "season"; not 'DES' for "desk"), or begins with
    the code's first letter and holds the rest of it in order ('TNK' for "tankers", 'MTG'
    for "meeting", 'STE' for "suite").  Two-letter codes are read only as initials (see
    :func:`value_named`): as short forms they fit too many words ('CS' in "cheapest").
    ``strict``: letters held in order count only as the word with vowels dropped, the
    code's letters after the first all consonants ('MTG' for "meeting", not 'PET' for
    "payments")."""
    c, w = code.lower(), word.lower()
    if len(c) < 3 or len(w) <= len(c) or w[0] != c[0]:
        return False
    if w.startswith(c):
        return len(w) >= len(c) + 2
    if strict and any(ch in "aeiou" for ch in c[1:]):
        return False
    rest = iter(w[1:])
    return all(ch in rest for ch in c[1:])


def value_named(question: str, *, codes: bool = False,
                names: Iterable[str] = (), strict: bool = False) -> Callable[[str], bool]:
    """Whether ``question`` names a stored value: the value, in any case and spacing, as
    whole words of the question (a plural ending allowed).  With ``codes``, also a code
    (:func:`is_code`) that a word of the question spells out (:func:`abbreviates`), words
    that ask rather than name (``_ASKING_WORDS``) and words whose root is one of
    ``names`` (the tables and columns of the query: "company" is a table, not 'COM') left
    out; and a two-letter code made of the initials of two content words in a row ('FT'
    for "full-time", 'PI' for "principal investigator"; not 'CA' for "customers are");
    ``strict``: as :func:`abbreviates` reads it with ``strict``.  A code that is also an
    everyday word ('IN', 'NO', 'CAN'; ``_WORD_CODES``) counts as that word only written in
    capitals, as stored, or as a plural ("cans")."""
    asked = _plain_text(question or "")
    taken = {r for n in names for r in _roots(n)}
    words = re.findall(r"[a-z]+", asked)
    longs = [w for w in words if len(w) >= 3 and w not in _ASKING_WORDS and not (_roots(w) & taken)]
    initials = {a[0] + b[0] for a, b in zip(words, words[1:])
                if len(a) >= 3 and len(b) >= 3 and not {a, b} & _NOT_INITIALS}

    def named(value: str) -> bool:
        plain = _plain_text(value)
        if plain and re.search(rf"(?<!\w){re.escape(plain)}(?:e?s)?(?!\w)", asked) is not None:
            if not (plain in _WORD_CODES and is_code(value)):
                return True
            # an everyday word: named as stored (capitals) or as a plural noun ("cans")
            if re.search(rf"(?<!\w){re.escape(value)}(?!\w)", question or "") is not None or (
                    len(plain) >= 3 and re.search(rf"(?<!\w){re.escape(plain)}e?s(?!\w)", asked) is not None):
                return True
        if not codes or not is_code(value):
            return False
        return plain in initials if len(plain) == 2 else any(abbreviates(value, w, strict=strict) for w in longs)

    return named


def table_names(tables: Iterable[Table]) -> list[str]:
    """The names of ``tables`` and of their columns."""
    return [n for t in tables for n in (t.name, *(c.name for c in t.columns))]


def named_value_swap(sql: str, dialect: str, catalog: Catalog | None, question: str,
                     distinct_values: Callable[[Table, str], Sequence[object]]) -> tuple[str, str] | None:
    """A filter on a stored value the question does not name (``Type = 'STUDENT'`` for
    "the average price of senior tickets") where the question names exactly one other
    value of that column ('SENIOR'): the query with that value put in, and what was
    replaced (``'STUDENT' → 'SENIOR'``).  A code the question spells out counts as named
    (``Genre = 'DRM'`` for "the musicals", 'MUS' stored; :func:`value_named` with
    ``codes``).  Other values shorter than three letters are not judged; None when nothing
    is replaced."""
    if catalog is None or not question:
        return None
    tree = _parse(sql, dialect)
    if tree is None:
        return None
    named = value_named(question, codes=True, names=table_names(query_tables(sql, dialect, catalog)))

    def judged(value: str) -> bool:
        return len(_plain_text(value)) >= 3 or is_code(value)

    changes: list[str] = []
    # every string of the query counts as used (the other branch of an INTERSECT has it)
    used = {_plain_text(str(lit.this)) for lit in tree.find_all(exp.Literal) if lit.is_string}
    for _node, col, table, literals in _string_filters(tree, catalog, (exp.EQ, exp.NEQ, exp.In),
                                                       unique_owner=True):
        unnamed = [lit for lit in literals if judged(str(lit.this)) and not named(str(lit.this))]
        if not unnamed:
            continue  # no stored values looked up for a filter the question names
        try:
            values = [v for v in distinct_values(table, table.column(col.name).name) if isinstance(v, str)]
        except Exception:  # a column the database cannot list: nothing to replace
            continue
        for lit in unnamed:
            wanted = str(lit.this)
            if wanted not in values:
                continue
            others = [v for v in values if _plain_text(v) not in used and judged(v) and named(v)]
            if len(others) == 1:
                lit.replace(exp.Literal.string(others[0]))
                used.add(_plain_text(others[0]))
                changes.append(f"'{wanted}' → '{others[0]}'")
    if not changes:
        return None
    return _readable(tree.sql(dialect=sqlglot_dialect(dialect))), ", ".join(changes)


# ---------------------------------------------------------------------------
# names for ids
# ---------------------------------------------------------------------------

_TEXT_TYPES = re.compile(r"char|text|string|clob", re.I)
_ID_WORDS = {"id", "ids", "identifier", "identifiers"}


def _roots(text: str) -> set[str]:
    """Word roots that match a noun's singular and plural (course/courses, region/regions,
    category/categories, class/classes)."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text or "")
    out = set()
    for w in re.findall(r"[a-z0-9]+", text.lower()):
        if len(w) > 4 and w.endswith("ies"):
            w = w[:-3] + "y"
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        if len(w) > 3 and w.endswith("e"):
            w = w[:-1]
        out.add(w)
    return out


def label_column(table: Table) -> str | None:
    """The column that names a row of ``table`` for a person: ``name``, ``<table>_name``,
    a text column named like the table itself (``course.Course``), the one text column
    whose name ends in "name", else ``title``; None when no single column is clear
    (``first_name`` and ``last_name``: which one is unclear, and ``title`` is then more
    likely a job's than the row's name)."""
    texts = [c for c in table.columns if _TEXT_TYPES.search(c.type or "")]
    roots = _roots(table.name)
    stem = "".join(sorted(roots)) if len(roots) == 1 else _norm(table.name)
    ranked = ({"name"}, {stem + "name", _norm(table.name) + "name"}, {stem, _norm(table.name)})
    for names in ranked:
        found = [c.name for c in texts if _norm(c.name) in names]
        if len(found) == 1:
            return found[0]
    ending = [c.name for c in texts if _norm(c.name).endswith("name")]
    if ending:
        return ending[0] if len(ending) == 1 else None
    titles = [c.name for c in texts if _norm(c.name) == "title"]
    return titles[0] if len(titles) == 1 else None


_FIRST_NAMES = {"firstname", "fname", "givenname", "forename"}
_LAST_NAMES = {"lastname", "lname", "surname", "familyname"}


def label_columns(table: Table) -> list[str]:
    """The columns that name a row of ``table`` for a person: its :func:`label_column`, else
    a first and a last name (``first_name``/``last_name``, ``Fname``/``LName``), else none."""
    one = label_column(table)
    if one is not None:
        return [one]
    texts = [c.name for c in table.columns if _TEXT_TYPES.search(c.type or "")]
    first = [c for c in texts if _norm(c) in _FIRST_NAMES]
    last = [c for c in texts if _norm(c) in _LAST_NAMES]
    return [first[0], last[0]] if len(first) == 1 and len(last) == 1 else []


def _scope_tables(select: exp.Select, catalog: Catalog) -> dict[str, Table]:
    """The catalog tables of one SELECT's own FROM and JOINs (not its subqueries), by
    alias (or name) in lower case."""
    out: dict[str, Table] = {}
    sources = [select.args.get("from_") or select.args.get("from")] + list(select.args.get("joins") or [])
    for src in sources:
        t = src.this if src is not None else None
        if not isinstance(t, exp.Table):
            continue
        found = catalog.find(f"{t.db}.{t.name}" if t.db else t.name)
        if found is not None:
            out[(t.alias or t.name).lower()] = found
    return out


def label_ids(sql: str, dialect: str, catalog: Catalog | None, question: str) -> tuple[str, str] | None:
    """A query that shows an id where the question asks for the thing it identifies
    (``SELECT region_id, count(*) … GROUP BY region_id`` for "How many employees work in
    each region?"): the same query with the referenced row's name shown instead (a LEFT
    JOIN on the foreign key, so no row is lost; grouping by the id is kept), and what was
    replaced (``employees.region_id → regions.name``); a person's id shows their first
    and last name; a key to another row of the same table (``manager_id``) shows that
    row's name, joined once more.  Only when the question names the
    thing (its table or the id column's other words) and never says "id", and the
    referenced table has one clear name column that the query does not show already.
    None otherwise."""
    if catalog is None:
        return None
    from sqlnb.agent.context import words

    qwords = _roots(question)
    if set(words(question)) & _ID_WORDS:
        return None
    tree = _parse(sql, dialect)
    if not isinstance(tree, exp.Select):
        return None
    scope = _scope_tables(tree, catalog)
    if not scope:
        return None
    d = sqlglot_dialect(dialect)

    def resolve(col: exp.Column) -> tuple[str, Table] | None:
        if col.table:
            t = scope.get(col.table.lower())
            return (col.table, t) if t is not None and t.column(col.name) is not None else None
        having = [(a, t) for a, t in scope.items() if t.column(col.name) is not None]
        return having[0] if len(having) == 1 else None

    items = [(i, item, item.this if isinstance(item, exp.Alias) else item)
             for i, item in enumerate(tree.expressions)]
    # the rows the query already names (shows a text column of): (alias, table)
    named_rows = {(r[0].lower(), id(r[1])) for _, _, col in items
                  if isinstance(col, exp.Column) and (r := resolve(col)) is not None
                  and _TEXT_TYPES.search((r[1].column(col.name).type or ""))}
    used = set(scope) | {t.name.lower() for t in tree.find_all(exp.Table)}
    changes: list[str] = []
    replaced: dict[int, list[exp.Expression]] = {}  # a projection's index -> what shows instead
    joined = False
    for i, item, col in items:
        if not isinstance(col, exp.Column) or not col.name:
            continue
        found = resolve(col)
        if found is None:
            continue
        source, owner = found
        column = owner.column(col.name)
        ref, key = _referenced(owner, column.name, catalog)
        labels = label_columns(ref) if ref is not None else []
        # a key to another row of the same table (a mentor, a manager): the name the
        # query shows of the row itself is not that row's
        other_row = ref is owner and key.lower() != column.name.lower()
        if ref is None or not labels or any(t == id(ref) and not (other_row and a == source.lower())
                                            for a, t in named_rows):
            continue  # no name to show, or the query shows a text column of that row
        thing = (_roots(column.name) - _ID_WORDS) | (set() if other_row else _roots(ref.name))
        if not thing & qwords:
            continue  # the question does not name what the id identifies
        if ref is owner and not other_row:  # the table's own key: its name columns are right there
            qualifier = (col.args["table"].copy() if col.table else exp.to_identifier(source)) \
                if col.table or len(scope) > 1 else None
            new = [exp.column(label, table=qualifier.copy() if qualifier else None, quoted=True)
                   for label in labels]
        else:
            alias, n = ref.name.lower(), 2
            while alias in used:
                alias, n = f"{ref.name.lower()}_{n}", n + 1
            used.add(alias)
            if not joined:
                # the new table may share column names: every column of this SELECT is
                # qualified first
                _qualify_own(tree, scope, {})
                joined = True
            target = _table_node(ref, catalog)
            tree.join(exp.alias_(target, exp.to_identifier(alias, quoted=True)),
                      on=exp.EQ(this=exp.column(key, table=alias, quoted=True), expression=col.copy()),
                      join_type="left", copy=False)
            new = [exp.column(label, table=alias, quoted=True) for label in labels]
        named_rows.add((source.lower() if ref is owner and not other_row else alias, id(ref)))
        group = tree.args.get("group")
        if group is not None and any(isinstance(g, exp.Column) and g.name.lower() == col.name.lower()
                                     and resolve(g) == found for g in group.expressions):
            for n in new:  # still grouped by the id: the same groups
                group.append("expressions", n.copy())
        if len(new) == 1 and isinstance(item, exp.Alias) and not set(words(item.alias)) & _ID_WORDS:
            item.set("this", new[0])
            replaced[i] = [item]
        else:
            replaced[i] = new
        changes.append(f"{owner.name}.{column.name} → " + ", ".join(f"{ref.name}.{x}" for x in labels))
    if not changes:
        return None
    tree.set("expressions", [e for i, item, _ in items for e in replaced.get(i, [item])])
    try:
        return tree.sql(dialect=d), ", ".join(changes)
    except Exception:
        return None


def _referenced(table: Table, column: str, catalog: Catalog) -> tuple[Table | None, str]:
    """The table a single-column key ``table.column`` identifies a row of, and its key
    column: the foreign key's target (``table`` itself for a key to another of its rows,
    such as a manager's id), or ``table`` itself for its own one-column primary key."""
    low = column.lower()
    for fk in table.foreign_keys:
        if len(fk.columns) == 1 and fk.columns[0].lower() == low:
            ref = _fk_target(fk, catalog)
            if ref is not None and len(fk.ref_columns) == 1 \
                    and not (ref is table and fk.ref_columns[0].lower() == low):
                return ref, fk.ref_columns[0]
    if len(table.primary_key) == 1 and table.primary_key[0].lower() == low:
        return table, column
    return None, ""


def _fk_links(a: Table, b: Table, catalog: Catalog) -> list[tuple[str, str]]:
    """The single-column foreign keys between ``a`` and ``b`` (either direction), as
    (column of ``a``, column of ``b``) pairs."""
    out: list[tuple[str, str]] = []

    def key(fk, ref: Table) -> str | None:
        if len(fk.ref_columns) == 1 and fk.ref_columns[0]:
            return fk.ref_columns[0]
        return ref.primary_key[0] if len(ref.primary_key) == 1 else None

    for src, dst, flip in ((a, b, False), (b, a, True)):
        for fk in src.foreign_keys:
            if len(fk.columns) != 1 or _fk_target(fk, catalog) is not dst or (ref := key(fk, dst)) is None:
                continue
            pair = (ref, fk.columns[0]) if flip else (fk.columns[0], ref)
            if pair not in out:
                out.append(pair)
    return out


def link_joins(sql: str, dialect: str, catalog: Catalog | None, *,
               allow_missing: bool = False) -> tuple[str, str] | None:
    """A query whose JOIN compares columns that no foreign key links, while the catalog
    says how the two tables are linked: the same query joined along the foreign key
    (``car_makers.Id = car_names.MakeId`` → the link through ``model_list``), and what
    changed.  Small models join on any two columns whose names look alike; an unlinked
    join either finds nothing or pairs unrelated rows.

    Only a JOIN whose ON is one equality of two columns, only between tables the catalog
    declares foreign keys for, and only when the link is clear: the one foreign key
    between the two tables, or else the one table that links them (one key each way) and
    that the query does not use yet.  Columns of the same name are taken as meant (a
    natural link the catalog may not declare) unless both are their tables' own keys.
    ``allow_missing``: also a JOIN whose ON names a column its table does not have
    (``vessel v JOIN berth b ON v.car_id = b.car_id``, a query that failed on it).
    None otherwise."""
    if catalog is None or not any(t.foreign_keys for t in catalog.tables):
        return None
    tree = _parse(sql, dialect)
    if tree is None:
        return None
    linked = {id(t) for t in catalog.tables if t.foreign_keys} | {
        id(r) for t in catalog.tables for fk in t.foreign_keys if (r := _fk_target(fk, catalog))}
    changes: list[str] = []
    for select in list(tree.find_all(exp.Select)):
        scope = _scope_tables(select, catalog)
        used = {a for a in scope} | {t.name.lower() for t in select.find_all(exp.Table)}
        spelled = _spelling(select)
        joins = list(select.args.get("joins") or [])
        for join in joins:
            on = join.args.get("on")
            right = join.this
            if not isinstance(on, exp.EQ) or not isinstance(right, exp.Table) or join.args.get("using"):
                continue
            if not (isinstance(on.this, exp.Column) and isinstance(on.expression, exp.Column)):
                continue
            joined = (right.alias or right.name).lower()
            if joined not in scope:
                continue

            missing: list[str] = []  # qualifiers of columns their table does not have

            def owner(col: exp.Column) -> str | None:
                if col.table:
                    q = col.table.lower()
                    if q in scope and scope[q].column(col.name) is None:
                        missing.append(q)  # ``b.car_id`` where b has none: b is what it joins
                        return q
                    return q if q in scope else None
                having = [a for a, t in scope.items() if t.column(col.name) is not None]
                return having[0] if len(having) == 1 else None

            ends = [(owner(c), c) for c in (on.this, on.expression)]
            owners = [o for o, _ in ends]
            if None in owners or (missing and not allow_missing):
                continue
            if joined in owners:
                if owners.count(joined) == 2:
                    continue  # compares two columns of one row: a filter, not a link
                other = next(o for o in owners if o != joined)
                mine = {o: c.name.lower() for o, c in ends}
                if mine[other] == mine[joined] and not missing and not all(
                        [k.lower() for k in scope[o].primary_key] == [mine[o]] for o in (other, joined)):
                    # the same name on both sides: a link the catalog may not declare
                    # (but two tables' own keys, ``a.id = b.id``, pair unrelated rows)
                    continue
            elif owners[0] == owners[1]:
                # both sides on one earlier table (``JOIN b ON a.x = a.y``): nothing links
                # the joined table yet
                other, mine = owners[0], None
            else:
                continue
            a, b = scope[other], scope[joined]
            if id(a) not in linked or id(b) not in linked or a is b:
                continue
            links = _fk_links(a, b, catalog)
            if mine and any((x.lower(), y.lower()) == (mine[other], mine[joined]) for x, y in links):
                continue  # joined along the foreign key
            qa, qb = spelled.get(other, other), spelled.get(joined, joined)
            before = f"{on.this.sql(dialect=sqlglot_dialect(dialect))} = " \
                     f"{on.expression.sql(dialect=sqlglot_dialect(dialect))}"
            if len(links) == 1:
                x, y = links[0]
                join.set("on", exp.EQ(this=_qualified(x, qa), expression=_qualified(y, qb)))
                changes.append(f"{before} → {a.name}.{x} = {b.name}.{y}")
                continue
            if links:
                continue  # several keys between them: which one is meant is not clear
            # a table the query reads already links them another way (a member's home
            # site beside the site of the event they registered for): not this link
            mids = [(t, first[0], second[0]) for t in catalog.tables
                    if t is not a and t is not b and t.name.lower() not in used
                    and len(first := _fk_links(a, t, catalog)) == 1
                    and len(second := _fk_links(t, b, catalog)) == 1]
            if len(mids) != 1:
                continue
            mid, (x, m1), (m2, y) = mids[0]
            used.add(mid.name.lower())
            # the new table may share column names: this SELECT's own columns are qualified
            _qualify_own(select, scope, spelled)
            step = exp.Join(this=_table_node(mid, catalog), on=exp.EQ(this=_qualified(x, qa),
                                                   expression=_qualified(m1, mid.name, quoted=True)))
            for arg in ("side", "kind"):
                if join.args.get(arg):
                    step.set(arg, join.args[arg])
            join.set("on", exp.EQ(this=_qualified(m2, mid.name, quoted=True), expression=_qualified(y, qb)))
            all_joins = select.args.get("joins") or []
            at = next(i for i, j in enumerate(all_joins) if j is join)
            select.set("joins", all_joins[:at] + [step] + all_joins[at:])
            changes.append(f"{before} → {a.name}.{x} = {mid.name}.{m1}, {mid.name}.{m2} = {b.name}.{y}")
    if not changes:
        return None
    try:
        return tree.sql(dialect=sqlglot_dialect(dialect)), "; ".join(changes)
    except Exception:
        return None


def _qualified(column: str, table: str, *, quoted: bool = False) -> exp.Column:
    """``table.column``: the column as the catalog spells it (quoted), the table or alias
    as the query does (``quoted``: as the catalog does)."""
    return exp.Column(this=exp.to_identifier(column, quoted=True), table=exp.to_identifier(table, quoted=quoted))


def _split_name(bare: str, catalog: Catalog) -> tuple[Table, str] | None:
    """The one table and column a missing column's name spells as ``<table>_<column>``
    (``property_type`` for ``property.type``, ``customer_city`` for ``Customer.City``),
    the table's name in singular or plural; None when no single pair is clear."""
    found = []
    parts = bare.split("_")
    for i in range(1, len(parts)):
        prefix, suffix = "_".join(parts[:i]), "_".join(parts[i:])
        for t in catalog.tables:
            col = t.column(suffix)
            if col is not None and _roots(t.name) == _roots(prefix):
                found.append((t, col.name))
    return found[0] if len(found) == 1 else None


def _join_owner(tree: exp.Expression, bare: str, catalog: Catalog, *,
                spelt: tuple[Table, str] | None = None) -> bool:
    """Join the table that has column ``bare`` to each SELECT that names the column
    although none of its tables has it (``SELECT AVG(edispl) FROM cars_data WHERE model =
    'volvo'``, model being a column of car_names): the one owner of the column that one
    foreign key links to a table of the SELECT, joined along that key, the column taken
    from it.  ``spelt``: the owner and column a name no table has stands for
    (:func:`_split_name`): the column renamed, taken from the owner, which is joined
    unless the SELECT reads it already.  Whether anything changed."""
    owners = [spelt[0]] if spelt else [t for t in catalog.tables if t.column(bare) is not None]
    if not owners:
        return False
    changed = False
    for select in list(tree.find_all(exp.Select)):
        scope = _scope_tables(select, catalog)
        if not scope:
            continue
        refs = [c for c in select.find_all(exp.Column) if c.name.lower() == bare.lower()
                and c.find_ancestor(exp.Select) is select
                and (not c.table or c.table.lower() in scope)]
        if not refs or any(t.column(bare) is not None for t in scope.values()):
            continue
        if any(c.find_ancestor(exp.Join) is not None for c in refs):
            continue  # a join condition on a column the table lacks: a wrong link, not a missing table
        if spelt and (read := [a for a, t in scope.items() if t is spelt[0]]):
            if len(read) == 1:  # the owner is read already: the column taken from it
                spelled = _spelling(select)
                for c in refs:
                    c.set("table", exp.to_identifier(spelled.get(read[0], read[0])))
                    c.set("this", exp.to_identifier(spelt[1], quoted=True))
                changed = True
            continue
        links = [(alias, owner, pair) for owner in owners if all(owner is not t for t in scope.values())
                 for alias, t in scope.items() for pair in _fk_links(t, owner, catalog)]
        if len({id(owner) for _, owner, _ in links}) != 1 or len(links) != 1:
            continue  # no owner linked to the query's tables, or not one clear link
        alias, owner, (x, y) = links[0]
        spelled = _spelling(select)
        used = set(scope) | {t.name.lower() for t in tree.find_all(exp.Table)}
        name, n = owner.name.lower(), 2
        while name in used:
            name, n = f"{owner.name.lower()}_{n}", n + 1
        # the new table may share column names: this SELECT's own columns are qualified
        _qualify_own(select, scope, spelled)
        for c in refs:
            c.set("table", exp.to_identifier(name))
            if spelt:
                c.set("this", exp.to_identifier(spelt[1], quoted=True))
        select.join(exp.alias_(_table_node(owner, catalog), exp.to_identifier(name)),
                    on=exp.EQ(this=_qualified(x, spelled.get(alias, alias)), expression=_qualified(y, name)),
                    copy=False)
        changed = True
    return changed


def _qualify_own(select: exp.Select, scope: dict[str, Table], spelled: dict[str, str]) -> None:
    """Qualify the unqualified columns of ``select`` itself (not of its subqueries) that
    one of its tables has, with that table's alias as the query spells it."""
    for c in list(select.find_all(exp.Column)):
        if c.table or c.find_ancestor(exp.Select) is not select:
            continue
        having = [a for a, t in scope.items() if t.column(c.name) is not None]
        if len(having) == 1:
            c.set("table", exp.to_identifier(spelled.get(having[0], having[0])))


def _unresolved(tree: exp.Expression, catalog: Catalog) -> list[str]:
    """The names of columns that no table of their SELECT (nor of an enclosing one) has,
    other than the SELECT's own output names, first seen first."""
    out: list[str] = []
    for select in tree.find_all(exp.Select):
        scopes = [_scope_tables(select, catalog)]
        outer = select.parent
        while outer is not None:
            if isinstance(outer, exp.Select):
                scopes.append(_scope_tables(outer, catalog))
            outer = outer.parent
        if not scopes[0]:
            continue
        names = {e.alias.lower() for e in select.expressions if isinstance(e, exp.Alias)}
        for c in select.find_all(exp.Column):
            if c.find_ancestor(exp.Select) is not select or c.name.lower() in names or not c.name:
                continue
            if c.table:
                t = scopes[0].get(c.table.lower())
                if t is None or t.column(c.name) is not None \
                        or any(x.column(c.name) is not None for x in scopes[0].values()):
                    continue
            elif any(t.column(c.name) is not None for sc in scopes for t in sc.values()):
                continue
            if c.name.lower() not in (n.lower() for n in out):
                out.append(c.name)
    return out


def _spelling(select: exp.Select) -> dict[str, str]:
    """Each table alias (or name) of ``select``'s own FROM and JOINs, in lower case, as
    the query spells it (an engine may fold case)."""
    sources = [select.args.get("from_") or select.args.get("from")] + list(select.args.get("joins") or [])
    return {(t.alias or t.name).lower(): (t.alias or t.name) for src in sources
            if src is not None and isinstance(t := src.this, exp.Table)}


def _fk_target(fk, catalog: Catalog) -> Table | None:
    """The catalog table foreign key ``fk`` references."""
    return catalog.find(f"{fk.ref_schema}.{fk.ref_table}" if fk.ref_schema else fk.ref_table)


def _table_node(table: Table, catalog: Catalog) -> exp.Table:
    """``table`` as a quoted table expression, its schema named unless it is the default."""
    schema = table.schema if table.schema and table.schema != catalog.default_schema else None
    return exp.Table(this=exp.to_identifier(table.name, quoted=True),
                     db=exp.to_identifier(schema, quoted=True) if schema else None)


# a question about things that have none of something: "students who do not have a cat",
# "artists who have never had a concert cancelled", "hotels with no suites", "without"
# (not "orders that are not cancelled": a property of the row itself)
_NEGATED_HAVING = re.compile(
    r"\bnever\b|\bwithout\b|\b(?:do|does|did|have|has|had)\s*(?:not|n't)\b|\b(?:don|doesn|didn|haven|hasn|hadn)'t\b"
    r"|\b(?:with|have|has|had)\s+no\b|\bno\s+(?!more\b|less\b|longer\b|later\b|earlier\b|fewer\b)\w+\s+(?:at all|ever)\b",
    re.I)


def _and_terms(node: exp.Expression | None) -> list[exp.Expression]:
    if node is None:
        return []
    node = node.unnest() if isinstance(node, exp.Paren) else node
    if isinstance(node, exp.And):
        return _and_terms(node.left) + _and_terms(node.right)
    return [node]


def _positive(term: exp.Expression) -> exp.Expression | None:
    """The condition a negated filter on stored values excludes (``c = 'x'`` for
    ``c <> 'x'``, ``NOT c = 'x'``; ``c IN ('x', 'y')`` for ``c NOT IN ('x', 'y')``), or
    None for any other condition."""
    if isinstance(term, exp.NEQ) and isinstance(term.left, exp.Column) and isinstance(term.right, exp.Literal):
        return exp.EQ(this=term.left.copy(), expression=term.right.copy())
    if isinstance(term, exp.Not):
        inner = term.this.unnest() if isinstance(term.this, exp.Paren) else term.this
        if isinstance(inner, exp.EQ) and isinstance(inner.left, exp.Column) and isinstance(inner.right, exp.Literal):
            return inner.copy()
        if (isinstance(inner, exp.In) and isinstance(inner.this, exp.Column) and not inner.args.get("query")
                and inner.expressions and all(isinstance(e, exp.Literal) for e in inner.expressions)):
            return inner.copy()
    return None


def _parents(table: Table, scope: dict[str, Table], catalog: Catalog) -> set[int]:
    """The tables of ``scope`` that ``table`` reaches by foreign keys alone (each row of it
    has at most one row of each): itself, its keys' targets, theirs, …"""
    inside = {id(t) for t in scope.values()}
    seen, todo = {id(table)}, [table]
    while todo:
        for fk in todo.pop().foreign_keys:
            ref = _fk_target(fk, catalog)
            if ref is not None and id(ref) in inside and id(ref) not in seen:
                seen.add(id(ref))
                todo.append(ref)
    return seen


def negated_join(sql: str, dialect: str, catalog: Catalog | None, question: str) -> tuple[str, str] | None:
    """A question about the things that have none of something ("students who do not have
    a cat", "artists who never had a concert cancelled") answered by joining their rows and
    filtering the joined rows on the other value (``JOIN pets … WHERE pettype <> 'cat'``),
    which keeps every thing with at least one row of another value: the query with that
    filter turned into ``key NOT IN (the keys of the things that do have one)``, and what
    changed.  The joins are kept where the rest of the query uses them, dropped otherwise.

    Only when the question asks about things having none ("never", "do not have", "with
    no", "without"), the query is one SELECT listing columns of one table (no grouping, no
    aggregate) with a single-column primary key, and the negated filter is on a table
    joined on the "many" side of it (not a table its own foreign keys lead to, which
    holds one row per thing: "models not built by Ford").  None otherwise."""
    if catalog is None or not question or not _NEGATED_HAVING.search(question):
        return None
    tree = _parse(sql, dialect)
    if not isinstance(tree, exp.Select) or not tree.args.get("joins") or tree.args.get("group") \
            or tree.args.get("having") or tree.args.get("limit") or tree.find(exp.AggFunc):
        return None
    if any(isinstance(j.this, exp.Subquery) or (j.side or "").upper() in ("RIGHT", "FULL")
           for j in tree.args["joins"]):
        return None
    scope = _scope_tables(tree, catalog)
    if len(scope) != 1 + len(tree.args["joins"]):
        return None  # a source that is not a catalog table
    owners = {c.table.lower() for e in tree.expressions for c in e.find_all(exp.Column)}
    if len(owners) != 1 or "" in owners or any(isinstance(e.unalias(), exp.Star) for e in tree.expressions):
        return None
    thing_alias = owners.pop()
    thing = scope.get(thing_alias)
    if thing is None or len(thing.primary_key) != 1:
        return None
    parents = _parents(thing, scope, catalog)
    terms = _and_terms(tree.args.get("where").this if tree.args.get("where") else None)
    negated = [(i, pos) for i, t in enumerate(terms) if (pos := _positive(t)) is not None
               and (owner := scope.get(pos.find(exp.Column).table.lower())) is not None
               and id(owner) not in parents]
    if len(negated) != 1:
        return None
    at, positive = negated[0]
    d = sqlglot_dialect(dialect)
    key = exp.Column(this=exp.to_identifier(thing.primary_key[0], quoted=True),
                     table=tree.expressions[0].find(exp.Column).args.get("table").copy())
    inner = tree.copy()
    inner.set("expressions", [key.copy()])
    inner.set("distinct", None)
    inner.set("order", None)
    inner.set("where", exp.Where(this=positive))
    rest = [t.copy() for i, t in enumerate(terms) if i != at]
    outer = tree.copy()
    used = {c.table.lower() for part in (outer.expressions, rest, [outer.args.get("order")])
            for e in part if e is not None for c in e.find_all(exp.Column)}
    if used <= {thing_alias}:
        # the joins were there for the negated filter alone: the things, each once
        from_ = outer.args.get("from_")
        if from_ is None or (from_.this.alias or from_.this.name).lower() != thing_alias:
            src = next(j.this for j in tree.args["joins"] if (j.this.alias or j.this.name).lower() == thing_alias)
            outer.set("from_", exp.From(this=src.copy()))
        outer.set("joins", None)
    condition = exp.Not(this=exp.In(this=key.copy(), query=exp.Subquery(this=inner)))
    where = exp.and_(*rest, condition) if rest else condition
    outer.set("where", exp.Where(this=where))
    before = terms[at].sql(dialect=d)
    return _readable(outer.sql(dialect=d)), f"{before} → {key.sql(dialect=d)} NOT IN (… WHERE {positive.sql(dialect=d)})"


# ---------------------------------------------------------------------------
# filters the question names
# ---------------------------------------------------------------------------

# a question that excludes or negates something: a value it names may be one to leave out
_EXCLUDING = re.compile(r"\b(?:not|never|no|non|nor|without|except|excluding|exclude|other than|apart from)\b"
                        r"|n't\b", re.I)
# where a question starts naming what it compares with ("… than the average price of red wines")
_AVERAGE_WORD = re.compile(r"\b(?:average|mean)\b", re.I)


def _same_filter(a: exp.Expression, b: exp.Expression) -> bool:
    """Whether two ``column = 'value'`` terms compare the same column (by name) with the
    same string."""
    def parts(term: exp.Expression):
        if isinstance(term, exp.EQ):
            for col, lit in ((term.this, term.expression), (term.expression, term.this)):
                if isinstance(col, exp.Column) and isinstance(lit, exp.Literal) and lit.is_string:
                    return col.name.lower(), str(lit.this)
        return None
    pa = parts(a)
    return pa is not None and pa == parts(b)


def average_subset_filter(sql: str, dialect: str, catalog: Catalog | None,
                          question: str) -> tuple[str, str] | None:
    """A question comparing rows with the average of a subset of them ("the wines that cost
    more than the average price of red wines") answered with the subset's filter on the
    compared rows as well (``WHERE Style = 'RED' AND Price > (SELECT AVG(Price) FROM Wine
    WHERE Style = 'RED')``: only red wines listed): the query without that outer filter,
    and what was dropped.

    Only when one SELECT over one catalog table compares a column of it with a subquery
    that averages over the same table, both filter on the same ``column = 'value'``, and
    the question names that value (as a word, or a code it spells out) only after its
    "average" and not before it ("Which red wines cost more than the average price of red
    wines?" keeps it).  None otherwise."""
    if catalog is None or not question:
        return None
    where_avg = _AVERAGE_WORD.search(question)
    if where_avg is None:
        return None
    tree = _parse(sql, dialect)
    if not isinstance(tree, exp.Select) or tree.args.get("joins") or tree.args.get("where") is None:
        return None
    scope = _scope_tables(tree, catalog)
    if len(scope) != 1:
        return None
    table = next(iter(scope.values()))
    names = table_names([table])
    before = value_named(question[:where_avg.start()], codes=True, names=names)
    after = value_named(question[where_avg.start():], codes=True, names=names)
    terms = _and_terms(tree.args["where"].this)
    d = sqlglot_dialect(dialect)
    for cmp in terms:
        if not isinstance(cmp, (exp.GT, exp.GTE, exp.LT, exp.LTE)):
            continue
        sub = next((s for s in (cmp.this, cmp.expression) if isinstance(s, exp.Subquery)), None)
        inner = sub.this if sub is not None else None
        if not isinstance(inner, exp.Select) or len(inner.expressions) != 1 \
                or not isinstance(inner.expressions[0].unalias(), exp.Avg) or inner.args.get("joins"):
            continue
        inner_scope = _scope_tables(inner, catalog)
        if list(inner_scope.values()) != [table] or inner.args.get("where") is None:
            continue
        inner_terms = _and_terms(inner.args["where"].this)
        for term in terms:
            if term is cmp or not any(_same_filter(term, t) for t in inner_terms):
                continue
            value = str(next(lit for lit in term.find_all(exp.Literal)).this)
            if not after(value) or before(value):
                continue
            rest = [t for t in terms if t is not term]
            tree.set("where", exp.Where(this=exp.and_(*[t.copy() for t in rest])))
            return _readable(tree.sql(dialect=d)), f"{term.sql(dialect=d)} left to the average"
    return None


# "both X and Y": two values the same rows must each have somewhere among their related rows
_BOTH = re.compile(r"\bboth\b", re.I)
# where a value split may sit: filters of the query or of a subquery its filter reads
_SPLIT_PATH = (exp.Where, exp.And, exp.Paren, exp.In, exp.Exists, exp.Subquery, exp.Select)


def _column_value(term: exp.Expression) -> tuple[exp.Column, exp.Literal] | None:
    """``col = value``: the column and the value."""
    term = term.unnest() if isinstance(term, exp.Paren) else term
    if isinstance(term, exp.EQ):
        for col, lit in ((term.this, term.expression), (term.expression, term.this)):
            if isinstance(col, exp.Column) and isinstance(lit, exp.Literal):
                return col, lit
    return None


def _value_pair(node: exp.Expression) -> tuple[exp.Column, exp.Literal, exp.Literal] | None:
    """``col IN (a, b)`` or ``col = a OR col = b`` (a and b different): the column and its
    two values."""
    pair = None
    if isinstance(node, exp.In) and not node.args.get("query") and not isinstance(node.parent, exp.Not):
        values = node.expressions
        if (isinstance(node.this, exp.Column) and len(values) == 2
                and all(isinstance(v, exp.Literal) for v in values)):
            pair = node.this, values[0], values[1]
    elif isinstance(node, exp.Or):
        a, b = _column_value(node.this), _column_value(node.expression)
        if a and b and a[0].sql().lower() == b[0].sql().lower():
            pair = a[0], a[1], b[1]
    return pair if pair and pair[1].sql() != pair[2].sql() else None


def _both_targets(tree: exp.Expression) -> list[tuple[exp.Expression, exp.Expression | None]]:
    """Where a query asks one column of a filter for two values at once: ``(node, None)``
    for ``col IN (a, b)`` or ``col = a OR col = b`` (rows with either value), ``(term_a,
    term_b)`` for ``col = a AND col = b`` in one filter (no row has both)."""
    found: list[tuple[exp.Expression, exp.Expression | None]] = []
    for node in tree.find_all(exp.In, exp.Or, exp.Where):
        if not isinstance(node, exp.Where):
            if _value_pair(node) and node.find_ancestor(exp.Where) is not None:
                found.append((node, None))
            continue
        terms = list(node.this.flatten()) if isinstance(node.this, exp.And) else [node.this]
        eqs = [(t, cv) for t in terms if (cv := _column_value(t))]
        for i, (ta, (ca, va)) in enumerate(eqs):
            for tb, (cb, vb) in eqs[i + 1:]:
                if ca.sql().lower() == cb.sql().lower() and va.sql() != vb.sql():
                    found.append((ta, tb))
    return found


def both_values_intersect(sql: str, dialect: str, question: str) -> tuple[str, str] | None:
    """A question asking for the things that have both of two values among their related
    rows ("customers who ordered both cakes and savoury products", "bidders who registered
    both by phone and online") answered with one filter for either value (``cat IN ('CAK',
    'SAV')``, ``cat = 'CAK' OR cat = 'SAV'``: anyone with one of them) or for both on the
    same row (``cat = 'CAK' AND cat = 'SAV'``: nobody): the query once per value, joined
    by ``INTERSECT``, and what was split.

    Only when the question says "both" and excludes nothing, the query is one SELECT
    without an aggregate, ordering or limit (a GROUP BY of its own columns only, which
    lists each row once as INTERSECT does, is dropped), and one filter of it, or of a
    subquery its filter reads, asks one column for two values.  None otherwise."""
    if not question or not _BOTH.search(question) or _EXCLUDING.search(question):
        return None
    tree = _parse(sql, dialect)
    if (not isinstance(tree, exp.Select) or tree.args.get("order") or tree.args.get("limit")
            or tree.args.get("having") or any(p.find(exp.AggFunc) for p in tree.expressions)):
        return None
    group = tree.args.get("group")
    if group is not None:
        shown = {(p.unalias() if isinstance(p, exp.Alias) else p).sql().lower() for p in tree.expressions}
        if any(g.sql().lower() not in shown for g in group.expressions):
            return None
    targets = _both_targets(tree)
    if len(targets) != 1:
        return None
    node, other = targets[0]
    parent = node.parent
    while parent is not None and parent is not tree:
        if not isinstance(parent, _SPLIT_PATH):
            return None  # a value pair in a join condition, a projection, a comparison
        parent = parent.parent
    d = sqlglot_dialect(dialect)
    branches = []
    for i in (0, 1):
        branch = tree.copy()
        branch.set("group", None)
        a, b = _both_targets(branch)[0]
        if b is None:
            col, *values = _value_pair(a)
            (a.parent if isinstance(a.parent, exp.Paren) else a).replace(
                exp.EQ(this=col.copy(), expression=values[i].copy()))
        else:
            where = a.find_ancestor(exp.Where)
            drop = b if i == 0 else a
            terms = list(where.this.flatten()) if isinstance(where.this, exp.And) else [where.this]
            where.set("this", exp.and_(*[t.copy() for t in terms if t is not drop]))
        branches.append(branch)
    both = exp.Intersect(this=branches[0], expression=branches[1], distinct=True)
    what = node.sql(dialect=d) if other is None else f"{node.sql(dialect=d)} AND {other.sql(dialect=d)}"
    return _readable(both.sql(dialect=d)), f"{what} split into an INTERSECT, one value each"


def named_value_filter(sql: str, dialect: str, catalog: Catalog | None, question: str,
                       distinct_values: Callable[[Table, str], Sequence[object]],
                       max_values: int = 10) -> tuple[str, str] | None:
    """A question naming a stored category of the rows it asks about ("Which cities have
    more than three active members?", "the meeting room with the most seats", 'ACT' and
    'MTG' stored) answered without any filter on that column: the query with ``column =
    'value'`` added to the SELECT reading the table, and what was added.

    Only for a column of at most ``max_values`` distinct values that the query does not
    use at all, when the question names exactly one of them (as words, or a code it
    spells out: :func:`value_named` with ``codes``), the value appears nowhere in the
    query and not as another column's value there, its words are not only words of the
    query's table and column names ("members" beside a table ``member``), and the
    question excludes nothing ("not", "never", "without", "except", …: the value might be
    the one to leave out).  The table must be read by one SELECT, or by each branch of a
    set operation (``INTERSECT``, ``EXCEPT``, ``UNION``) alike, and once in it.  None
    otherwise."""
    if catalog is None or not question or _EXCLUDING.search(question):
        return None
    tree = _parse(sql, dialect)
    if tree is None:
        return None
    tables = query_tables(sql, dialect, catalog)
    names = table_names(tables)
    named_words = {r for n in names for r in _roots(n)}
    # the question's words that name a value the query uses already ("Portland" for
    # city = 'Portland', "maintainers" for role = 'MAINT') name nothing else
    used = [str(lit.this) for lit in tree.find_all(exp.Literal) if lit.is_string]
    free = " ".join(w for w in re.findall(r"[\w'-]+", question)
                    if not any(value_named(w, codes=True)(v) for v in used))
    # a filter added on a code needs the code read strictly: letters of a word in order
    # fit too many of them ('PET' in "payments")
    named = value_named(free, codes=True, names=names, strict=True)
    text = _plain_text(sql).replace("''", "'")
    selects = list(tree.find_all(exp.Select))
    scopes = {id(s): _scope_tables(s, catalog) for s in selects}
    columns = {(c.table.lower(), c.name.lower()) for c in tree.find_all(exp.Column)}  # (qualifier, name)
    found: list[tuple[list[exp.Select], Table, str, str]] = []
    for table in tables:
        places = [s for s in selects if any(t is table for t in scopes[id(s)].values())]
        if any(sum(t is table for t in scopes[id(s)].values()) != 1 for s in places):
            continue  # a self-join: which of its rows is meant is not clear
        if len(places) > 1 and not (isinstance(tree, exp.SetOperation)
                                    and all(s.find_ancestor(exp.Select) is None for s in places)):
            continue
        aliases = {a for s in places for a, t in scopes[id(s)].items() if t is table}
        for col in table.columns:
            if not _TEXT_TYPES.search(col.type or ""):
                continue
            if any(name == col.name.lower() and (not q or q in aliases) for q, name in columns):
                continue  # the query uses the column: another rewrite's business
            try:
                values = [v for v in distinct_values(table, col.name) if isinstance(v, str)]
            except Exception:  # a column the database cannot list: nothing to add
                continue
            if not 2 <= len(values) <= max_values:
                continue
            hits = []
            for v in values:
                plain = _plain_text(v)
                words = re.findall(r"[a-z]+", plain)
                code = is_code(v)
                if (len(plain) < 3 and not code) or not words or _roots(plain) <= named_words:
                    continue
                if (f"'{plain}'" in text or f'"{plain}"' in text) if code else plain in text:
                    continue
                if named(v):
                    hits.append(v)
            if len(hits) == 1:
                found.append((places, table, col.name, hits[0]))
    # one value named for one column: a value two columns hold is not clearly either's
    counts: dict[str, int] = {}
    for _, _, _, v in found:
        counts[v] = counts.get(v, 0) + 1
    found = [f for f in found if counts[f[3]] == 1]
    if not found:
        return None
    d = sqlglot_dialect(dialect)
    changes = []
    for places, table, column, value in found:
        for select in places:
            alias = next(a for a, t in scopes[id(select)].items() if t is table)
            qualifier = _spelling(select).get(alias, alias)
            select.where(exp.EQ(this=_qualified(column, qualifier), expression=exp.Literal.string(value)),
                         copy=False)
        changes.append(f"{table.name}.{column} = '{value}'")
    return _readable(tree.sql(dialect=d)), ", ".join(changes) + " added"
