"""sqlnb.sql.text: the scanner, statement splitting and :name parameters."""

from __future__ import annotations

import sqlite3
from types import MappingProxyType

import duckdb
import pytest

from sqlnb.errors import SqlnbError, UsageError
from sqlnb.sql.dialects import DIALECTS
from sqlnb.sql.text import bind_params, find_params, scan, split_statements, strip_comments

# ------------------------------------------------------------------------------- scan

TRICKY = [
    "SELECT 'a;b', \"c;d\", `e;f` -- g;h\n/* i;j */ FROM t WHERE x = :x;",
    "SELECT $$ ; $$, $tag$ ' $tag$, E'a\\'b', 'c\\', :p::int, @v := 1 # z",
    "SELECT [a;b], v:name, a[1:2] // c\n FROM t /* nested /* ; */ still */ ;",
    "SELECT 'unterminated ; SELECT 2",
    "SELECT 1 /* unterminated ; SELECT 2",
    "",
    ";;",
]


@pytest.mark.parametrize("dialect", ["", *DIALECTS])
@pytest.mark.parametrize("sql", TRICKY)
def test_scan_gives_back_the_text_in_order(dialect, sql):
    tokens = list(scan(sql, dialect))
    assert "".join(t.text for t in tokens) == sql
    pos = 0
    for tok in tokens:
        assert tok.start == pos and tok.end == pos + len(tok.text)
        pos = tok.end


def _kinds(sql, dialect):
    return [(t.kind, t.text) for t in scan(sql, dialect) if t.kind != "code"]


def test_scan_follows_each_dialect():
    assert _kinds("SELECT 'a\\'b'", "mysql") == [("string", "'a\\'b'")]
    assert _kinds("SELECT 'a\\'", "sqlite") == [("string", "'a\\'")]
    assert _kinds("SELECT 'a\\'", "postgres") == [("string", "'a\\'")]
    assert _kinds("SELECT E'a\\'b'", "postgres") == [("string", "'a\\'b'")]
    assert _kinds("SELECT 'a\\'b'", "snowflake") == [("string", "'a\\'b'")]
    assert _kinds("SELECT 1 # c", "mysql") == [("comment", "# c")]
    assert _kinds("SELECT 1 # c", "postgres") == []
    assert _kinds("SELECT 1 // c", "snowflake") == [("comment", "// c")]
    assert _kinds("SELECT 7 // 2", "duckdb") == []  # integer division
    assert _kinds("SELECT 1 --x", "mysql") == []  # 1 - -x
    assert _kinds("SELECT 1 -- x", "mysql") == [("comment", "-- x")]
    assert _kinds("SELECT 1 --x", "sqlite") == [("comment", "--x")]
    assert _kinds("SELECT [a b]", "sqlite") == [("ident", "[a b]")]
    assert _kinds("SELECT $$x$$", "snowflake") == [("string", "$$x$$")]
    assert _kinds("SELECT $a$x$a$", "snowflake") == []  # only $$ quotes there
    assert _kinds("SELECT $é$ ; $é$", "postgres") == [("string", "$é$ ; $é$")]
    assert _kinds("SELECT a$$b$$", "postgres") == []  # an identifier with $ in it
    nested = "/* a /* b */ c */"
    assert _kinds(f"SELECT 1 {nested}", "postgres") == [("comment", nested)]
    assert _kinds(f"SELECT 1 {nested}", "sqlite") == [("comment", "/* a /* b */")]
    # PostgreSQL ends a -- comment at a carriage return, SQLite only at a newline
    assert _kinds("SELECT 1 --a\rb", "postgres") == [("comment", "--a")]
    assert _kinds("SELECT 1 --a\rb", "sqlite") == [("comment", "--a\rb")]


def test_scan_readings_can_be_overridden():
    sql = "SELECT 'a\\'; DROP TABLE t; --'"
    assert [t.kind for t in scan(sql, "mysql")].count("semicolon") == 0
    no_escapes = list(scan(sql, "mysql", backslash_escapes=False))
    assert [t.kind for t in no_escapes].count("semicolon") == 2
    assert _kinds("SELECT 1 /* a /* b */ c */", "postgres")[0][1] == "/* a /* b */ c */"
    flat = [
        t.text
        for t in scan("SELECT 1 /* a /* b */ c */", "postgres", nested_comments=False)
        if t.kind == "comment"
    ]
    assert flat == ["/* a /* b */"]


def test_scan_marks_what_never_ends():
    assert [t.closed for t in scan("SELECT 'abc", "sqlite") if t.kind == "string"] == [False]
    assert [t.closed for t in scan("SELECT 1 /* abc", "sqlite") if t.kind == "comment"] == [False]
    # nested: ends with */ but one level is still open
    assert [t.closed for t in scan("SELECT 1 /* a /* b */", "postgres") if t.kind == "comment"] == [False]
    assert [t.closed for t in scan("SELECT $x$ abc", "postgres") if t.kind == "string"] == [False]
    assert all(t.closed for t in scan("SELECT 'a', \"b\" /* c */ -- d", "postgres"))


def test_strip_comments():
    assert strip_comments("SELECT 1 -- c\n/* d */ + 2", "sqlite") == "SELECT 1 \n + 2"
    assert strip_comments("SELECT '-- not a comment'", "sqlite") == "SELECT '-- not a comment'"


# -------------------------------------------------------------------- split_statements

SPLITS = [
    ("sqlite", "SELECT 1; SELECT 2", ["SELECT 1", "SELECT 2"]),
    ("sqlite", "SELECT 1;", ["SELECT 1"]),
    ("sqlite", "  SELECT 1 ;;; \n", ["SELECT 1"]),
    ("sqlite", "SELECT 'a;b'; SELECT \"c;d\"", ["SELECT 'a;b'", 'SELECT "c;d"']),
    ("sqlite", "SELECT 'it''s;'; SELECT 2", ["SELECT 'it''s;'", "SELECT 2"]),
    ("sqlite", "SELECT 1 -- ;\n; SELECT 2 /* ; */", ["SELECT 1 -- ;", "SELECT 2 /* ; */"]),
    ("sqlite", "SELECT 1; -- done", ["SELECT 1"]),
    ("sqlite", "SELECT 1; /* done */ ;", ["SELECT 1"]),
    ("sqlite", "-- a\n; /* b */ ;", []),
    ("sqlite", "", []),
    ("sqlite", "-- only a comment", []),
    ("sqlite", "-- leading\nSELECT 1", ["-- leading\nSELECT 1"]),
    ("sqlite", "SELECT [a;b] FROM t; SELECT 2", ["SELECT [a;b] FROM t", "SELECT 2"]),
    ("sqlite", "SELECT `a;b` FROM t; SELECT 2", ["SELECT `a;b` FROM t", "SELECT 2"]),
    ("sqlite", "SELECT 'unterminated; SELECT 2", ["SELECT 'unterminated; SELECT 2"]),
    # SQLite strings have no backslash escapes: the string ends at the second quote
    ("sqlite", "SELECT 'a\\'; SELECT 2", ["SELECT 'a\\'", "SELECT 2"]),
    ("mysql", "SELECT 'a\\'; SELECT 2'", ["SELECT 'a\\'; SELECT 2'"]),
    ("mysql", 'SELECT "a\\";b"; SELECT 2', ['SELECT "a\\";b"', "SELECT 2"]),
    ("mysql", "SELECT 1 # ;\n; SELECT 2", ["SELECT 1 # ;", "SELECT 2"]),
    ("mysql", "SELECT 1 --1; SELECT 2", ["SELECT 1 --1", "SELECT 2"]),
    ("sqlite", "SELECT 1 --1; SELECT 2", ["SELECT 1 --1; SELECT 2"]),
    ("postgres", "SELECT 1 # 2; SELECT 3", ["SELECT 1 # 2", "SELECT 3"]),
    ("snowflake", "SELECT 1 // ;\n; SELECT 2", ["SELECT 1 // ;", "SELECT 2"]),
    (
        "postgres",
        "CREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql; SELECT 2",
        ["CREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql", "SELECT 2"],
    ),
    (
        "postgres",
        "DO $body$ BEGIN PERFORM 1; END $body$; SELECT 2",
        ["DO $body$ BEGIN PERFORM 1; END $body$", "SELECT 2"],
    ),
    ("postgres", "SELECT $a$ $b$; $a$; SELECT 2", ["SELECT $a$ $b$; $a$", "SELECT 2"]),
    ("duckdb", "SELECT $$;$$ AS s; SELECT 2", ["SELECT $$;$$ AS s", "SELECT 2"]),
    ("snowflake", "SELECT $$;$$ AS s; SELECT 2", ["SELECT $$;$$ AS s", "SELECT 2"]),
    ("postgres", "SELECT E'a\\';b'; SELECT 2", ["SELECT E'a\\';b'", "SELECT 2"]),
    ("postgres", "SELECT 1 /* a /* ; */ ; */; SELECT 2", ["SELECT 1 /* a /* ; */ ; */", "SELECT 2"]),
    ("sqlite", "SELECT 1 /* a /* ; */ ; */; SELECT 2", ["SELECT 1 /* a /* ; */", "*/", "SELECT 2"]),
    (
        "sqlite",
        "CREATE TRIGGER tr AFTER INSERT ON t BEGIN UPDATE u SET n = n + 1; DELETE FROM v; END; SELECT 1",
        ["CREATE TRIGGER tr AFTER INSERT ON t BEGIN UPDATE u SET n = n + 1; DELETE FROM v; END", "SELECT 1"],
    ),
    (
        "sqlite",
        "CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT CASE WHEN NEW.a > 0 THEN 1 "
        "ELSE 0 END; END; SELECT 1",
        [
            "CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT CASE WHEN NEW.a > 0 THEN 1 ELSE 0 END; END",
            "SELECT 1",
        ],
    ),
    (
        "sqlite",
        "-- audit\nCREATE TEMP TRIGGER IF NOT EXISTS tr AFTER DELETE ON t BEGIN "
        "INSERT INTO log VALUES ('end;'); END;\nSELECT 1",
        [
            "-- audit\nCREATE TEMP TRIGGER IF NOT EXISTS tr AFTER DELETE ON t BEGIN "
            "INSERT INTO log VALUES ('end;'); END",
            "SELECT 1",
        ],
    ),
    (
        "mysql",
        "CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW BEGIN IF NEW.a < 0 THEN "
        "SET NEW.a = 0; END IF; END; SELECT 1",
        [
            "CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW BEGIN IF NEW.a < 0 THEN "
            "SET NEW.a = 0; END IF; END",
            "SELECT 1",
        ],
    ),
    (
        "postgres",
        "CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW EXECUTE FUNCTION f(); SELECT 1",
        ["CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW EXECUTE FUNCTION f()", "SELECT 1"],
    ),
    ("sqlite", "BEGIN; SELECT 1; COMMIT;", ["BEGIN", "SELECT 1", "COMMIT"]),
]


@pytest.mark.parametrize(
    "dialect,sql,expected", SPLITS, ids=[f"{d}-{i}" for i, (d, _, _) in enumerate(SPLITS)]
)
def test_split_statements(dialect, sql, expected):
    assert split_statements(sql, dialect) == expected


def test_split_trigger_runs_in_sqlite():
    """The pieces are what SQLite itself accepts one at a time."""
    con = sqlite3.connect(":memory:")
    script = (
        "CREATE TABLE t (a INTEGER); CREATE TABLE log (msg TEXT);\n"
        "CREATE TRIGGER tr AFTER INSERT ON t BEGIN\n"
        "  INSERT INTO log VALUES (CASE WHEN NEW.a > 0 THEN 'pos;' ELSE 'neg' END);\n"
        "  INSERT INTO log VALUES ('end');\nEND;\n"
        "INSERT INTO t VALUES (1); -- fire it\n"
    )
    pieces = split_statements(script, "sqlite")
    assert len(pieces) == 4
    for piece in pieces:
        con.execute(piece)
    assert con.execute("SELECT msg FROM log ORDER BY rowid").fetchall() == [("pos;",), ("end",)]


# ---------------------------------------------------------------------------- params

FIND = [
    ("sqlite", "SELECT * FROM t WHERE a = :a AND b = :b OR a = :a", ["a", "b"]),
    ("postgres", "SELECT a::int, b::text[] FROM t WHERE c = :c", ["c"]),
    ("mysql", "SELECT @v := 1, a FROM t WHERE b = :b", ["b"]),
    ("sqlite", "SELECT ':no', \":no\", `:no`, [:no] -- :no\n/* :no */ FROM t WHERE c = :yes", ["yes"]),
    ("postgres", "SELECT $$ :no $$, $t$ :no $t$, E'\\' :no', :yes", ["yes"]),
    ("snowflake", 'SELECT v:name, v[0]:id, parse_json(x):k, "col":f FROM t WHERE a = :p', ["p"]),
    ("duckdb", "SELECT l[1:n], struct_pack(k := 1) FROM t WHERE a = :lo", ["lo"]),
    ("sqlite", ":first, (:second), :_third3", ["first", "second", "_third3"]),
    ("sqlite", "SELECT :1, '12:30', x FROM t", []),
    ("postgres", "SELECT :a::int", ["a"]),
    ("mysql", "SELECT 'it\\'s :no', :yes", ["yes"]),
]


@pytest.mark.parametrize("dialect,sql,expected", FIND, ids=[f"{d}-{i}" for i, (d, _, _) in enumerate(FIND)])
def test_find_params(dialect, sql, expected):
    assert find_params(sql, dialect) == expected


SQL = "SELECT * FROM t WHERE a = :a AND b LIKE 'x%' /* 100% */ OR c = :b OR d = :a::int"


@pytest.mark.parametrize(
    "style,expected_sql,expected_params",
    [
        ("named", SQL, {"a": 1, "b": "two"}),
        (
            "dollar_named",
            "SELECT * FROM t WHERE a = $a AND b LIKE 'x%' /* 100% */ OR c = $b OR d = $a::int",
            {"a": 1, "b": "two"},
        ),
        (
            "pyformat",
            "SELECT * FROM t WHERE a = %(a)s AND b LIKE 'x%%' /* 100%% */ OR c = %(b)s OR d = %(a)s::int",
            {"a": 1, "b": "two"},
        ),
        (
            "format",
            "SELECT * FROM t WHERE a = %s AND b LIKE 'x%%' /* 100%% */ OR c = %s OR d = %s::int",
            [1, "two", 1],
        ),
        (
            "qmark",
            "SELECT * FROM t WHERE a = ? AND b LIKE 'x%' /* 100% */ OR c = ? OR d = ?::int",
            [1, "two", 1],
        ),
        (
            "numeric",
            "SELECT * FROM t WHERE a = $1 AND b LIKE 'x%' /* 100% */ OR c = $2 OR d = $1::int",
            [1, "two"],
        ),
    ],
)
def test_bind_params_styles(style, expected_sql, expected_params):
    params = {"a": 1, "b": "two", "unused": 3}
    sql, bound = bind_params(SQL, params, style, "postgres")
    assert sql == expected_sql
    assert bound == expected_params


def test_percent_styles_survive_python_formatting():
    """What a pyformat/format driver does with the text: each %% becomes one %."""
    sql, bound = bind_params(SQL, {"a": 1, "b": "two"}, "pyformat", "postgres")
    assert sql % {k: f"<{k}>" for k in bound} == (
        "SELECT * FROM t WHERE a = <a> AND b LIKE 'x%' /* 100% */ OR c = <b> OR d = <a>::int"
    )
    sql, bound = bind_params(SQL, {"a": 1, "b": "two"}, "format", "postgres")
    assert sql % tuple(f"<{v}>" for v in bound) == (
        "SELECT * FROM t WHERE a = <1> AND b LIKE 'x%' /* 100% */ OR c = <two> OR d = <1>::int"
    )


def test_bind_params_without_parameters_leaves_the_sql_alone():
    sql = "SELECT '50%' AS pct, x::int FROM t"
    assert bind_params(sql, {"a": 1}, "pyformat", "postgres") == (sql, None)
    assert bind_params(sql, None, "qmark", "postgres") == (sql, None)


def test_bind_params_values_never_enter_the_sql():
    evil = "'; DROP TABLE t; --"
    sql, bound = bind_params("SELECT :v", {"v": evil}, "qmark", "sqlite")
    assert sql == "SELECT ?" and bound == [evil]
    assert evil not in sql


def test_bind_params_accepts_any_mapping():
    sql, bound = bind_params("SELECT :v", MappingProxyType({"v": 1}), "named", "sqlite")
    assert (sql, bound) == ("SELECT :v", {"v": 1})


def test_missing_parameter_is_a_usage_error_naming_it():
    with pytest.raises(UsageError) as info:
        bind_params("SELECT :present, :absent", {"present": 1}, "qmark", "sqlite")
    err = info.value
    assert isinstance(err, SqlnbError)
    assert ":absent" in str(err) and "absent" in err.hint
    assert "present" not in err.message
    with pytest.raises(UsageError, match=":x"):
        bind_params("SELECT :x", None, "named", "sqlite")


def test_unknown_style_is_refused():
    with pytest.raises(ValueError, match="paramstyle"):
        bind_params("SELECT :a", {"a": 1}, "colon", "sqlite")


def test_bound_sql_runs_in_sqlite():
    con = sqlite3.connect(":memory:")
    con.execute('CREATE TABLE t (a INTEGER, "b:c" TEXT)')
    con.execute("INSERT INTO t VALUES (1, 'x:y'), (2, ':a')")
    text = "SELECT a FROM t WHERE (a = :a OR \"b:c\" = ':a') AND a::text IS NOT NULL OR a = :a"
    text = text.replace("a::text IS NOT NULL", "1 = 1")  # SQLite has no :: casts
    for style in ("named", "qmark"):
        sql, bound = bind_params(text, {"a": 1}, style, "sqlite")
        assert con.execute(sql, bound).fetchall() == [(1,), (2,)]


@pytest.mark.parametrize("style", ["dollar_named", "qmark", "numeric"])
def test_bound_sql_runs_in_duckdb(style):
    con = duckdb.connect()
    sql, bound = bind_params(
        "SELECT :a::INTEGER + :b AS s, ':a' AS lit, $$:b$$ AS dq, :a AS again",
        {"a": "40", "b": 2},
        style,
        "duckdb",
    )
    assert con.execute(sql, bound).fetchall() == [(42, ":a", ":b", "40")]
