"""Schema context for the model: the catalog as compact CREATE TABLE text.

Small schemas go in whole.  On large ones the tables relevant to the question (names,
columns and comments matched against its words, stop words aside: the stems and the stop
list of :mod:`sqlnb.agent.lexicon`, plus their foreign-key neighbours) are chosen so the
text stays within a token budget, and the names of all tables are listed so the model
knows what else exists.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from sqlnb.adapters import Catalog, Table
from sqlnb.agent.lexicon import content_words, words
from sqlnb.sql.quoting import quote_identifier

DEFAULT_BUDGET = 6000  # tokens
NAMES_SHARE = 0.35  # at most this much of the budget lists table names


def estimate_tokens(text: str) -> int:
    """A conservative token count for schema-like text (about 3.2 characters a token for
    identifiers, punctuation and types; BPE tokenizers of Claude and Qwen are close)."""
    return (len(text) * 10 + 31) // 32


@dataclass
class SchemaContext:
    text: str
    tables: list[str]  # qualified names rendered in full
    total_tables: int
    tokens: int
    listed_names: int = 0  # table names listed beyond the rendered ones
    omitted_names: int = 0  # table names not even listed (budget)

    @property
    def complete(self) -> bool:
        return len(self.tables) == self.total_tables


@dataclass
class ContextOptions:
    budget: int = DEFAULT_BUDGET
    sample_values: Mapping[str, Mapping[str, Sequence[str]]] = field(default_factory=dict)


def relevance(table: Table, question_words: set[str]) -> float:
    """How strongly the question points at ``table``."""
    if not question_words:
        return 0.0
    name_words = set(words(table.name))
    score = 3.0 * len(name_words & question_words)
    flat = table.name.lower().replace("_", "")
    score += sum(1.5 for w in question_words if len(w) >= 4 and w in flat and w not in name_words)
    col_hits = set()
    for c in table.columns:
        col_hits |= set(words(c.name)) & question_words
    score += min(len(col_hits), 4)
    if table.comment:
        score += 0.5 * len(set(words(table.comment)) & question_words)
    for c in table.columns:
        if c.comment:
            score += 0.25 * len(set(words(c.comment)) & question_words)
    return score


class AllValues(tuple[str, ...]):
    """Every value a column holds (a short list of codes or categories such as 'TNK' or
    'FT'), shown as ``values: …`` rather than as examples."""


def render_table(
    table: Table, catalog: Catalog, dialect: str, samples: Mapping[str, Sequence[str]] | None = None
) -> str:
    """One table as a compact CREATE TABLE statement with keys, comments and samples."""
    name = _table_name(table, catalog, dialect)
    lines = []
    if table.comment:
        lines.append(f"-- {_one_line(table.comment)}")
    kind = "VIEW" if table.kind == "view" else "TABLE"
    rows = f"  -- ~{table.row_count:,} rows" if table.row_count is not None and table.row_count >= 0 else ""
    lines.append(f"CREATE {kind} {name} ({rows}")
    body = []
    pk = [c.lower() for c in table.primary_key]
    single_pk = len(pk) == 1
    for c in table.columns:
        parts = [f"  {quote_identifier(c.name, dialect, always=False)} {c.type or 'UNKNOWN'}"]
        if single_pk and c.name.lower() == pk[0]:
            parts.append(" PRIMARY KEY")
        elif not c.nullable:
            parts.append(" NOT NULL")
        notes = []
        if c.comment:
            notes.append(_one_line(c.comment))
        values = (samples or {}).get(c.name)
        if values:
            lead = "values: " if isinstance(values, AllValues) else "e.g. "
            notes.append(lead + ", ".join(_literal(v) for v in values))
        body.append(("".join(parts), "; ".join(notes)))
    if len(pk) > 1:
        key = ", ".join(quote_identifier(c, dialect, always=False) for c in table.primary_key)
        body.append((f"  PRIMARY KEY ({key})", ""))
    for fk in table.foreign_keys:
        ref = _ref_name(fk.ref_schema, fk.ref_table, catalog, dialect)
        cols = ", ".join(quote_identifier(c, dialect, always=False) for c in fk.columns)
        rcols = ", ".join(quote_identifier(c, dialect, always=False) for c in fk.ref_columns)
        body.append((f"  FOREIGN KEY ({cols}) REFERENCES {ref}({rcols})", ""))
    for i, (text, note) in enumerate(body):
        comma = "," if i < len(body) - 1 else ""
        lines.append(f"{text}{comma}" + (f"  -- {note}" if note else ""))
    lines.append(");")
    return "\n".join(lines)


def join_paths(tables: Iterable[Table], catalog: Catalog, dialect: str) -> list[str]:
    included = {(t.schema, t.name) for t in tables}
    out = []

    def q(name: str) -> str:
        return quote_identifier(name, dialect, always=False)

    for t in tables:
        for fk in t.foreign_keys:
            ref = catalog.find(f"{fk.ref_schema}.{fk.ref_table}" if fk.ref_schema else fk.ref_table)
            if ref is None or (ref.schema, ref.name) not in included:
                continue
            left = _table_name(t, catalog, dialect)
            right = _table_name(ref, catalog, dialect)
            conds = " AND ".join(
                f"{left}.{q(a)} = {right}.{q(b)}" for a, b in zip(fk.columns, fk.ref_columns, strict=False)
            )
            out.append(conds)
    return out


def build_context(
    catalog: Catalog,
    question: str,
    dialect: str,
    *,
    budget: int = DEFAULT_BUDGET,
    samples: Callable[[Table], Mapping[str, Sequence[str]]] | None = None,
    with_join_paths: bool = False,
) -> SchemaContext:
    """The schema text for ``question`` within ``budget`` tokens.

    Foreign keys are always in the CREATE TABLE text; ``with_join_paths`` also lists them
    as ``a.x = b.y`` lines.  Off by default: on Spider dev with the 1.5B model that list
    made it join link tables the question did not need (the failures of 6 of 11 questions
    that went away without it).

    ``samples(table)`` gives a few example values per text column (None: no values, e.g.
    when data sharing is off for the connection)."""
    tables = list(catalog.tables)
    qwords = set(content_words(question))

    def render(t: Table) -> str:
        return render_table(t, catalog, dialect, samples(t) if samples else None)

    rendered_plain = {id(t): render_table(t, catalog, dialect) for t in tables}
    full_tokens = sum(estimate_tokens(s) for s in rendered_plain.values())
    chosen = tables if full_tokens <= budget else _choose(tables, catalog, qwords, rendered_plain, budget)
    # sample values only for the chosen tables, while they fit in the room the tables
    # were chosen for (the table names listed below get the rest of the budget)
    room = budget if len(chosen) == len(tables) else _table_room(tables, budget)
    plain_total = sum(estimate_tokens(rendered_plain[id(t)]) for t in chosen)
    texts: list[str] = []
    extra = 0
    for t in chosen:
        text = rendered_plain[id(t)]
        if samples:
            sampled = render(t)
            more = estimate_tokens(sampled) - estimate_tokens(text)
            if plain_total + extra + more <= room:
                text, extra = sampled, extra + more
        texts.append(text)
    paths = join_paths(chosen, catalog, dialect) if with_join_paths else []
    others: list[str] = []
    names: list[str] = []
    if len(chosen) < len(tables):
        chosen_ids = {id(t) for t in chosen}
        others = [_table_name(t, catalog, dialect) for t in tables if id(t) not in chosen_ids]
        names_room = max(0, int(budget * NAMES_SHARE))
        spent = 0
        for n in others:
            cost = estimate_tokens(n + ", ")
            if spent + cost > names_room:
                break
            names.append(n)
            spent += cost

    def assemble(with_paths: bool) -> str:
        parts = ["\n\n".join(texts)]
        if with_paths and paths:
            parts.append("Join paths (foreign keys):\n" + "\n".join(f"- {p}" for p in paths))
        if others:
            omitted = len(others) - len(names)
            more = f" (and {omitted} more not listed)" if omitted else ""
            parts.append(f"Other tables in the database, columns not shown{more}:\n" + ", ".join(names))
        return "\n\n".join(p for p in parts if p)

    # headings and join paths come on top of the parts measured above: within the budget,
    # drop the join paths first (the FOREIGN KEY lines say the same), then listed names
    text = assemble(with_paths=True)
    if estimate_tokens(text) > budget:
        text = assemble(with_paths=False)
    while estimate_tokens(text) > budget and names:
        names.pop()
        text = assemble(with_paths=False)
    return SchemaContext(
        text=text,
        tables=[t.qualified_name for t in chosen],
        total_tables=len(tables),
        tokens=estimate_tokens(text),
        listed_names=len(names),
        omitted_names=len(others) - len(names),
    )


def _table_room(tables: list[Table], budget: int) -> int:
    """Tokens for rendered tables when not all fit: the budget less the names' share."""
    names_room = int(budget * NAMES_SHARE)
    return budget - min(names_room, sum(estimate_tokens(t.qualified_name + ", ") for t in tables))


def _choose(
    tables: list[Table], catalog: Catalog, qwords: set[str], rendered: Mapping[int, str], budget: int
) -> list[Table]:
    room = _table_room(tables, budget)
    scores = {id(t): relevance(t, qwords) for t in tables}
    by_key = {(t.schema, t.name): t for t in tables}
    neighbours: dict[int, list[Table]] = {id(t): [] for t in tables}
    for t in tables:
        for fk in t.foreign_keys:
            ref = by_key.get((fk.ref_schema if fk.ref_schema else t.schema, fk.ref_table)) or catalog.find(
                fk.ref_table
            )
            if ref is not None and ref is not t:
                neighbours[id(t)].append(ref)
                neighbours[id(ref)].append(t)
    ranked = sorted((t for t in tables if scores[id(t)] > 0), key=lambda t: -scores[id(t)])
    order: list[Table] = []
    seen: set[int] = set()
    for t in ranked:
        for cand in [t] + sorted(neighbours[id(t)], key=lambda n: -scores[id(n)]):
            if id(cand) not in seen:
                seen.add(id(cand))
                order.append(cand)
    chosen, used = [], 0
    for t in order:
        cost = estimate_tokens(rendered[id(t)])
        if used + cost > room:
            continue
        chosen.append(t)
        used += cost
    if not chosen:  # nothing matched: the smallest tables, so the model sees something
        for t in sorted(tables, key=lambda t: len(rendered[id(t)])):
            cost = estimate_tokens(rendered[id(t)])
            if used + cost > room // 2:
                break
            chosen.append(t)
            used += cost
    position = {id(t): i for i, t in enumerate(tables)}
    return sorted(chosen, key=lambda t: position[id(t)])


def _table_name(t: Table, catalog: Catalog, dialect: str) -> str:
    return _ref_name(t.schema, t.name, catalog, dialect)


def _ref_name(schema: str | None, name: str, catalog: Catalog, dialect: str) -> str:
    q = quote_identifier(name, dialect, always=False)
    if schema and schema != catalog.default_schema:
        return f"{quote_identifier(schema, dialect, always=False)}.{q}"
    return q


def _one_line(text: str) -> str:
    return " ".join(str(text).split())[:200]


def _literal(v: str) -> str:
    v = str(v)
    if len(v) > 40:
        v = v[:37] + "..."
    return "'" + v.replace("'", "''") + "'"
