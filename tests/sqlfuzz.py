"""A seeded generator of SQL text that engines and parsers may split differently.

Each case is a read-only ``SELECT`` head followed by fragments that are comments, strings,
quoted identifiers, dollar quotes, literals with prefixes, Unicode and control
characters, or tokens that join into a comment once a comment between them is taken
out (``-/**/-``), and a harmless second statement, the *payload* (``; SELECT 666``),
placed among them.  Whether the payload is a second statement depends on how a reader
cuts the text into strings, comments and code: when the guard reads it as part of a
comment or string and the engine does not, the engine runs two statements where the
guard checked one.  ``tests/test_guard_fuzz.py`` asks the real engines.

A case keeps its fragments (``Case.parts``: kind and text), so that a failing case can be
shrunk fragment by fragment (:func:`shrink`) and grouped by the kinds left.

Shapes of case (``Case.shape``):

- ``benign``: the payload inside a comment, string or identifier that every reader of the
  dialect ends at the same place (a correct guard accepts these, the engine sees one
  statement): the guard's acceptance rate is measured on them;
- ``wrap``: the payload inside a comment, string, quoted name or dollar quote (or one of
  SQLite's ``$name(...)`` variables) together with random fragments before and after it
  inside the wrapper (escapes, nested openers, closers, other quotes): the guard accepts
  many of these, and each is a question of where exactly the wrapper ends;
- ``hide``: an opener (one or two fragments), the payload, then closers: the payload is
  hidden from a reader that takes the opener to open something, and live for one that
  does not or ends it sooner;
- ``double``: opener, text, a first closer, a line comment, a second closer, then the
  payload: a reader that ends the opener at the first closer sees the line comment hide
  the payload; one that ends it at the second sees the payload live (nesting, escapes);
- ``line``: a line-comment starter (``--`` with each odd character after it, ``#``,
  ``//``, ``-/**/-``) followed on the same line by a continuation the engine can run
  when it does not read a comment (``x FROM (SELECT 5 AS x) q``), then the payload;
- ``chaos``: one to six fragments of any kind with the payload somewhere among them.

Everything here is harmless to run: no fragment writes, and the payload is a SELECT.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

# Characters around which readers disagree on "is this whitespace / does it end a line /
# is it part of a name": Unicode spaces (Python's str.isspace() says yes to most of them,
# the engines say no), zero-width and byte-order marks, ASCII controls.
ODD_CHARS: dict[str, str] = {
    "nbsp": "\u00a0",
    "nel": "\u0085",
    "ogham": "\u1680",
    **{f"u{cp:04x}": chr(cp) for cp in range(0x2000, 0x200B)},  # en quad ... hair space
    "zwsp": "\u200b",
    "lsep": "\u2028",
    "psep": "\u2029",
    "nnbsp": "\u202f",
    "mmsp": "\u205f",
    "ideo": "\u3000",
    "bom": "\ufeff",
    "mvs": "\u180e",
    "vt": "\x0b",
    "ff": "\x0c",
    "cr": "\r",
    "crlf": "\r\n",
    "tab": "\t",
    "lf": "\n",
    "soh": "\x01",
    "bel": "\x07",
    "bs": "\x08",
    "esc": "\x1b",
    "fs": "\x1c",
    "gs": "\x1d",
    "rs": "\x1e",
    "us": "\x1f",
    "del": "\x7f",
    "c1": "\x80",
    "c1_9f": "\x9f",
    "space": " ",
}

PAYLOADS = (
    "; SELECT 666",
    ";SELECT 666",
    "; SELECT 666 -- ",
    ";SELECT 666 --\t",
    "\n; SELECT 666 -- ",
    ";\nSELECT 666 -- ",
    "; SELECT 666 AS p -- ",
)
PAYLOAD_MARK = "666"

# A continuation that makes the rest of a line runnable when the engine reads a
# line-comment starter as operators: ``SELECT 1 --<c>x FROM (SELECT 5 AS <c>x) q``.
_CONT = "{c}x FROM (SELECT 5 AS {c}x) q"


def _odd(prefix: str, suffix: str = "") -> list[str]:
    return [f"{prefix}{c}{suffix}" for c in ODD_CHARS.values()]


# kind -> variants.  Some variants are whole (a closed comment or string), others only
# open or only close something: the mixes below pair them up.
FRAGMENTS: dict[str, list[str]] = {
    "dash_comment": ["--", "-- ", "-- x", "--x", "---", "-- -- ", "--\t", "--;"],
    "dash_odd": _odd("--") + _odd("--", "x"),
    "hash_comment": ["#", "# ", "#x", "#;", "# x"] + _odd("#"),
    "slash_comment": ["//", "// ", "//x", "///"] + _odd("//"),
    "block_comment": ["/* x */", "/**/", "/*/ */", "/* ; */", "/***/", "/* * / */", "/*x*/"],
    "nested_comment": [
        "/* /* */",
        "/* /* x */ */",
        "/*/**/*/",
        "/* a /* b */ c */",
        "/* /* /* */ */ */",
        "/*/* */",
        "/* */ */",
        "/* /*/ */",
    ],
    "block_open": ["/*", "/* ", "/*/", "/**"],
    "block_close": ["*/", " */", "**/", "*/ */"],
    "mysql_exec": [
        "/*! 1 */",
        "/*!50000 1 */",
        "/*!99999 x */",
        "/*M! 1 */",
        "/*M!100000 1 */",
        "/*!",
        "/*M!",
        "/*!50000",
        "/*! /* */",
    ],
    "hint": ["/*+ x */", "/*+", "/*+ NO_ICP() */", "/* + x */"],
    "token_join": [
        "-/**/-",
        "-/* x */-",
        "-/*/**/*/-",
        "/**//",
        "/**/-",
        "-/**/",
        "- -",
        "/ /",
        "*//*",
        "/*/-/*/",
        "-/*!*/-",
        "-\u00a0-",
    ],
    "sq_string": ["'a'", "'a''b'", "''''", "'", "';'", "'x' 'y'", "'--'", "'/*'", "'*/'"],
    "backslash": ["'\\'", "'\\''", "'\\\\'", "'a\\'b'", "\\", "'\\", '"\\"', "`\\`", "\\'", "'\\\\\\''"],
    "e_string": [
        "E'\\''",
        "e'\\\\'",
        "E'a\\'",
        "E'",
        "E''''",
        "E'\\\\'",
        "E'\\x27'",
        "1E'\\''",
        "xE'\\''",
        "_E'\\''",
        "$E'\\''",
        "E '\\''",
    ],
    "dollar": ["$$x$$", "$$", "$a$x$a$", "$a$", "$a$ $b$ $a$", "$A$x$a$", "$$;$$", "$_$ $_$", "$a$$a$"],
    "dollar_odd": [
        "$ä$x$ä$",
        "$ä$",
        "$\u00a0$",
        "$a\u00a0$",
        "$1$",
        "$_$",
        "$a$$",
        "x$$",
        "$a$b",
        "$a b$",
        "$-$",
        "$Ä$x$ä$",
        "$\u200b$",
        "$é1$",
        "1$$",
        "$a$$b$",
        "$a$ $ä$",
        "$$$",
        "1$a$",
        "x$a$",
        "$1$a$",
        "ä$a$",
        ".$a$",
        "$a$$b$a$",
    ],
    "dq_ident": ['"a"', '"a""b"', '""""', '"', '";"', '"--"', '"/*"'],
    "backtick": ["`a`", "`a``b`", "````", "`", "`;`", "`--`", "`/*`"],
    "bracket": ["[a]", "[a]]", "[", "]", "[;]", "[--]", "[a']", '[a"]'],
    "unicode_lit": [
        "U&'\\0041'",
        "U&'a'",
        'U&"a"',
        'U&"\\0041"',
        "U&'!0041' UESCAPE '!'",
        "u&'\\'",
        "U&'\\'",
        "U&'",
        'U&"',
        "U&'\\''",
        'U&"\\"',
        "U&'a' UESCAPE ''''",
        "U&'a' UESCAPE ';'",
        "U&'a' UESCAPE '\\'",
        "U& 'a'",
        "U&'a' UESCAPE '-'",
    ],
    "prefixed_lit": [
        "N'a'",
        "X'41'",
        "B'01'",
        "x'41'",
        "n'\\''",
        "b'\\'",
        "_utf8mb4'a'",
        "N'",
        "X'",
        "_latin1'\\''",
        "N''''",
        "n'a\\'",
        "R'\\'",
        "r'a'",
    ],
    # SQLite's Tcl-style variables: $name(...) runs to ")" over quotes and comment starters
    "tcl_var": [
        "$a(')",
        "@a(/*)",
        ':a(")',
        "#a('",
        "$a::b(')",
        "$a(--)",
        "$a(`)",
        "$a([)",
        "@a('",
        '$a("',
        ":a(/*",
        "$a(",
        "@a(')'",
        "$a(;)",
    ],
    # an operator character right before a comment starter (PostgreSQL cuts an operator
    # at "--" and "/*"; other lexers may not)
    "op_comment": [f"{op}--" for op in "+-*/<>=~!@#%^&|`?:"]
    + [f"{op}/*" for op in "+-*<>=~!@#%^&|`?:"]
    + ["::--", "||--", "->--", "*/--"],
    "odd_char": list(ODD_CHARS.values()),
    "line_break": ["\n", "\r", "\r\n", "\n\r", "\u2028", "\x0b\n"],
    "semicolon": [";", " ;", ";;"],
    "code": [" 1", " x", ", 1", " + 1", " AS a", "-", "/", "*", " (", ")", " q", ", 'z'"],
}

# Closers the ``hide`` and ``double`` shapes put after the payload or between.
CLOSERS = [
    "*/",
    "'",
    '"',
    "`",
    "]",
    "$$",
    "$a$",
    "$ä$",
    "*/ */",
    "''",
    "\n",
    "\\'",
    "'\\'",
    "*/'",
    "\r\n",
    "\r",
    ")",
    "')",
    "*/)",
    '")',
    "`)",
    "\n)",
]
# What hides the rest of a line from a reader that sees it as code.
HIDERS = ["-- ", "--", "#", "//", "/*", "--\u00a0", "-- \r", "#\r"]

HEADS = {
    "expr": "SELECT 1",
    "expr_space": "SELECT 1 ",
    "value": "SELECT ",
    "alias": "SELECT 1 AS ",
    "list": "SELECT 1, ",
}

# Per dialect: wrappers every reader of that dialect ends at the same place.  The payload
# goes inside; a correct guard accepts the result as one read-only query.
BENIGN: dict[str, list[str]] = {
    "common": [
        "SELECT 1 /* {p} */",
        "SELECT 1 -- {p}\n",
        "SELECT '{p}'",
        'SELECT 1 AS "{p}"',
        "SELECT 'a''{p}'",
        "SELECT 1 /*{p}*/ + 2",
        "SELECT 1 -- {p}",
        "SELECT 'x', 1 /* a */ -- {p}\n",
    ],
    "postgres": [
        "SELECT $${p}$$",
        "SELECT $a${p}$a$",
        "SELECT E'\\'{p}'",
        "SELECT 1 /* a /* {p} */ b */",
        "SELECT $ä${p}$ä$",
        "SELECT U&'{p}'",
    ],
    "duckdb": ["SELECT $${p}$$", "SELECT $a${p}$a$", "SELECT E'\\'{p}'", "SELECT 1 /* a /* {p} */ b */"],
    "redshift": ["SELECT $${p}$$"],
    "sqlite": ["SELECT 1 AS [{p}]", "SELECT 1 AS `{p}`", "SELECT X'41', '{p}'"],
    "mysql": [
        "SELECT 1 # {p}\n",
        'SELECT "{p}"',
        "SELECT 1 AS `{p}`",
        "SELECT 1 -- {p}",
        "SELECT N'{p}'",
        "SELECT 1 #{p}",
    ],
}


@dataclass(frozen=True)
class Case:
    parts: tuple[tuple[str, str], ...]  # (kind, text), joined in order
    shape: str

    @property
    def text(self) -> str:
        return "".join(t for _, t in self.parts)

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset(k for k, _ in self.parts)

    def without(self, index: int) -> Case:
        return Case(self.parts[:index] + self.parts[index + 1 :], self.shape)


def _plain(text: str) -> bool:
    return all(" " <= ch <= "~" or ch in "\t\n" for ch in text)


# The variants of each kind that hold only printable ASCII, tab and newline.  Most mixes
# draw from these: a guard refuses any text with an odd character outside strings, so a
# mix with one in it tests nothing else.
PLAIN = {kind: [v for v in variants if _plain(v)] or variants for kind, variants in FRAGMENTS.items()}


def _frag(rng: random.Random, kinds: list[str]) -> tuple[str, str]:
    kind = rng.choice(kinds)
    return kind, rng.choice(FRAGMENTS[kind] if rng.random() < 0.3 else PLAIN[kind])


def _payload(rng: random.Random) -> tuple[str, str]:
    return "payload", rng.choice(PAYLOADS)


def _head(rng: random.Random, names: Iterable[str] | None = None) -> tuple[str, str]:
    name = rng.choice(list(names or HEADS))
    return "head", HEADS[name]


_FILLER = ["", "", " ", "x", " a b ", "1, 2", "(", ")", ".", "+", "'", "--", "/", "*"]


def _benign(rng: random.Random, dialect: str) -> Case:
    template = rng.choice(BENIGN["common"] + BENIGN.get(dialect, []))
    payload = rng.choice(["; SELECT 666", ";SELECT 666", ";\nSELECT 666", "; SELECT 666;"])
    line_comment = "-- {p}" in template or "#" in template
    if line_comment:
        payload = payload.replace("\n", " ")  # a line comment holds no line break
    before, after = template.split("{p}")
    # filler inside the wrapper: quotes only where they cannot close it
    fill = [f for f in _FILLER if f != "'" or "'{p}" not in template]
    fill = [f for f in fill if f not in ("/", "*", "+") or "/*" not in template]
    fill = [f for f in fill if f != "--" or "--" in template or "#" in template]
    parts = [("head", before + rng.choice(fill)), ("payload", payload), ("closer", rng.choice(fill) + after)]
    return Case(tuple(parts), "benign")


# (where it stands, kind, opener, closer): a comment, string or quoted name around the
# payload.  "expr" wrappers follow "SELECT 1 ", "value" ones follow "SELECT ".
WRAPPERS: list[tuple[str, str, str, str]] = [
    ("expr", "block_comment", "/*", "*/"),
    ("expr", "block_comment", "/* ", " */"),
    ("expr", "block_comment", "/*/", "*/"),
    ("expr", "block_comment", "/**", "**/"),
    ("expr", "nested_comment", "/* /* */", "*/"),
    ("expr", "nested_comment", "/* /*", "*/ */"),
    ("expr", "dash_comment", "--", "\n"),
    ("expr", "dash_comment", "-- ", "\n"),
    ("expr", "dash_comment", "-- ", "\r\n"),
    ("expr", "dash_comment", "-- ", "\r"),
    ("expr", "hash_comment", "#", "\n"),
    ("expr", "slash_comment", "//", "\n"),
    ("expr", "mysql_exec", "/*!", "*/"),
    ("expr", "mysql_exec", "/*M!", "*/"),
    ("expr", "mysql_exec", "/*!99999", "*/"),
    ("expr", "hint", "/*+", "*/"),
    ("expr", "dq_ident", 'AS "', '"'),
    ("expr", "dq_ident", '"', '"'),
    ("expr", "backtick", "AS `", "`"),
    ("expr", "backtick", "`", "`"),
    ("expr", "bracket", "AS [", "]"),
    ("expr", "bracket", "[", "]"),
    ("expr", "unicode_lit", 'AS U&"', '"'),
    ("expr", "sq_string", "'", "'"),
    ("value", "sq_string", "'", "'"),
    ("value", "e_string", "E'", "'"),
    ("value", "e_string", "e'", "'"),
    ("value", "prefixed_lit", "N'", "'"),
    ("value", "prefixed_lit", "X'", "'"),
    ("value", "prefixed_lit", "B'", "'"),
    ("value", "prefixed_lit", "_utf8mb4'", "'"),
    ("value", "unicode_lit", "U&'", "'"),
    ("value", "dollar", "$$", "$$"),
    ("value", "dollar", "$a$", "$a$"),
    ("value", "dollar_odd", "$ä$", "$ä$"),
    ("value", "dollar_odd", "$_$", "$_$"),
    ("value", "dollar_odd", "$a\u00a0$", "$a\u00a0$"),
    ("value", "dollar_odd", "$é1$", "$é1$"),
    ("value", "dq_ident", '"', '"'),
    ("value", "backtick", "`", "`"),
    ("value", "bracket", "[", "]"),
    ("value", "tcl_var", "$a('", "')"),
    ("value", "tcl_var", "$a(/*", "*/)"),
    ("value", "tcl_var", '@a("', '")'),
    ("value", "tcl_var", "$a(--", "\n)"),
    ("value", "tcl_var", "$a(`", "`)"),
]
_TAILS = ["", "", "", " + 1", " AS b", "\n", " FROM (SELECT 1) q", ", 2", " -- end\n", ")", "\n)"]


def _wrap(rng: random.Random, kinds: list[str]) -> Case:
    """A wrapper around the payload with random fragments inside it, before and after."""
    where, kind, opener, closer = rng.choice(WRAPPERS)
    parts = [("head", "SELECT 1 " if where == "expr" else "SELECT "), (kind, opener)]
    parts += [_inner(rng, kinds) for _ in range(rng.choice([0, 1, 1, 1, 2, 2, 3]))]
    parts.append(_payload(rng))
    parts += [_inner(rng, kinds) for _ in range(rng.choice([0, 0, 1, 1, 2]))]
    parts.append(("closer", closer))
    tail = rng.choice(_TAILS)
    if tail:
        parts.append(("tail", tail))
    return Case(tuple(parts), "wrap")


def _inner(rng: random.Random, kinds: list[str]) -> tuple[str, str]:
    if rng.random() < 0.25:
        return "closer", rng.choice(CLOSERS)
    return _frag(rng, kinds)


def _hide(rng: random.Random, kinds: list[str]) -> Case:
    parts = [_head(rng)]
    parts += [_frag(rng, kinds) for _ in range(rng.randint(1, 2))]
    if rng.random() < 0.3:
        parts.append(("code", rng.choice(FRAGMENTS["code"])))
    parts.append(_payload(rng))
    for _ in range(rng.randint(0, 2)):
        parts.append(("closer", rng.choice(CLOSERS)))
    if rng.random() < 0.3:
        parts.append(("line_break", "\n"))
        parts.append(_frag(rng, kinds))
    tail = rng.choice(_TAILS + ["\n1", "\n 1 AS b", "\n+ 1"])
    if tail:
        parts.append(("tail", tail))
    return Case(tuple(parts), "hide")


def _double(rng: random.Random, kinds: list[str]) -> Case:
    parts = [_head(rng, ["expr_space", "value", "alias"]), _frag(rng, kinds)]
    if rng.random() < 0.5:
        parts.append(("code", rng.choice(["x", " ", ";", " a "])))
    parts.append(("closer", rng.choice(CLOSERS)))
    parts.append(("hider", rng.choice(HIDERS)))
    parts.append(("closer", rng.choice(CLOSERS)))
    parts.append(_payload(rng))
    tail = rng.choice(_TAILS)
    if tail:
        parts.append(("tail", tail))
    return Case(tuple(parts), "double")


_LINE_STARTERS = {
    "dash_comment": ["--", "---"],
    "hash_comment": ["#"],
    "slash_comment": ["//"],
    "token_join": ["-/**/-", "-/* x */-", "-/*/**/*/-", "- -", "-/*!*/-"],
}


def _line(rng: random.Random) -> Case:
    kind = rng.choice(list(_LINE_STARTERS) + ["dash_comment"])
    starter = rng.choice(_LINE_STARTERS[kind])
    c = rng.choice([c for c in ODD_CHARS.values() if "\n" not in c] + [""] * 4)
    if starter == "--" and c:
        kind = "dash_odd"
    parts = [("head", rng.choice(["SELECT 1 ", "SELECT 1"])), (kind, starter), ("code", _CONT.format(c=c))]
    parts.append(_payload(rng))
    if rng.random() < 0.3:
        parts.append(("line_break", "\n"))
    return Case(tuple(parts), "line")


def _chaos(rng: random.Random, kinds: list[str]) -> Case:
    body = [_frag(rng, kinds) for _ in range(rng.randint(1, 6))]
    if rng.random() < 0.9:
        body.insert(rng.randint(0, len(body)), _payload(rng))
    return Case((_head(rng),) + tuple(body), "chaos")


SHAPES: dict[str, tuple[float, Callable]] = {
    "benign": (0.20, lambda rng, d, kinds: _benign(rng, d)),
    "wrap": (0.35, lambda rng, d, kinds: _wrap(rng, kinds)),
    "hide": (0.10, lambda rng, d, kinds: _hide(rng, kinds)),
    "double": (0.12, lambda rng, d, kinds: _double(rng, kinds)),
    "line": (0.12, lambda rng, d, kinds: _line(rng)),
    "chaos": (0.11, lambda rng, d, kinds: _chaos(rng, kinds)),
}


def generate(dialect: str, n: int, seed: int | str = 0) -> list[Case]:
    """``n`` cases for ``dialect``, the same ones for the same seed.  Every fragment kind
    is drawn for every dialect (a character one engine ignores may be the one another
    splits on); duplicates are dropped, so slightly fewer than ``n`` may come back."""
    rng = random.Random(f"sqlnb-guard-fuzz/{dialect}/{seed}")
    kinds = sorted(FRAGMENTS)
    names = list(SHAPES)
    weights = [SHAPES[s][0] for s in names]
    seen: set[str] = set()
    cases: list[Case] = []
    for _ in range(n):
        shape = rng.choices(names, weights)[0]
        case = SHAPES[shape][1](rng, dialect, kinds)
        if case.text not in seen and "\x00" not in case.text:
            seen.add(case.text)
            cases.append(case)
    return cases


def kind_counts(cases: Iterable[Case]) -> Counter:
    """How many cases hold at least one fragment of each kind."""
    counts: Counter = Counter()
    for case in cases:
        counts.update(case.kinds)
    return counts


def shrink(case: Case, fails: Callable[[str], bool]) -> Case:
    """A smaller case that still ``fails``: fragments are dropped one at a time while the
    failure stays, then the payload becomes the shortest one that still fails and
    characters are cut from each remaining fragment (the head keeps its text, so the
    result still reads as a query plus the payload)."""
    changed = True
    while changed:
        changed = False
        for i in range(len(case.parts) - 1, -1, -1):
            if case.parts[i][0] in ("head", "payload"):
                continue
            smaller = case.without(i)
            if fails(smaller.text):
                case, changed = smaller, True
    parts = list(case.parts)
    for i, (kind, text) in enumerate(parts):
        if kind == "payload":  # the shortest payload that still does
            for payload in sorted(PAYLOADS, key=len):
                candidate = parts[:i] + [(kind, payload)] + parts[i + 1 :]
                if payload == text or fails("".join(t for _, t in candidate)):
                    parts[i] = (kind, payload)
                    break
            continue
        if kind == "head":
            continue
        j = 0
        while j < len(text) and len(text) > 1:
            trial = text[:j] + text[j + 1 :]
            candidate = parts[:i] + [(kind, trial)] + parts[i + 1 :]
            if fails("".join(t for _, t in candidate)):
                text = trial
                parts[i] = (kind, text)
            else:
                j += 1
    return Case(tuple(parts), case.shape)
