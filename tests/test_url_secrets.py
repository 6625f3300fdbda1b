"""No error message ever shows the password of a connection URL, whatever the URL looks like
and whichever front door it came in by.

Nasty passwords (``/ # ? `` space, tab, line break, ``@ : %``, a literal ``%2F``, non-ASCII,
a very long one) are put into URLs of every shape (as typed and percent-encoded, a missing or
extra slash, a misspelt scheme, a port that is not a number, an empty or missing host, no
scheme, a ``?password=``, sqlite/duckdb URLs with a user and password) and given to:

- the Python API (``parse_url``, ``sqlnb.adapters.connect``, ``ConnectionManager.connect``,
  ``sqlnb.ask``), by URL and by the name of a connection whose URL lives only in a
  connections file or only in ``SQLNB_<NAME>_URL``;
- the magics through a real IPython shell (``%sqlnb connect URL|NAME``, ``%%sql --conn URL``,
  ``--name``), the URL quoted or not;
- the command line as a subprocess (``sqlnb sql --db URL|NAME`` with and without
  ``--json``, ``sqlnb ask --db``, ``sqlnb memory list --db``).

Each password is made of distinctive words joined by the nasty characters: no word of it
(so no part of the password either) and none of its encoded forms may appear in stdout,
stderr, the cell's outputs, the exception's str/repr/args/hint/engine_message, its chained
exceptions, its traceback or a log record.  A well-formed URL whose server refuses the
password (PostgreSQL behind PgBouncer, MariaDB) is covered too.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from urllib.parse import quote, quote_plus

import sqlnb.adapters as adapters  # before pandas: see sqlnb/__init__.py

# isort: split
import pytest
from IPython.utils.capture import capture_output

import sqlnb
from sqlnb import errors
from sqlnb.adapters.spec import parse_url, redact_url
from sqlnb.session import ConnectionManager
from tests.doubles import loaded_shell
from tests.engines import MY_HOST, MY_PORT, MY_USER, PG_HOST, PGB_PORT, PGB_USER

pytestmark = pytest.mark.timeout(300)


@dataclass(frozen=True)
class Password:
    id: str
    value: str
    words: tuple[str, ...]  # distinctive parts: none may show, so no part of the password

    def forms(self) -> set[str]:
        v = self.value
        return {
            v,
            quote(v, safe=""),
            quote(v),
            quote_plus(v),
            repr(v)[1:-1],
            v.encode("unicode_escape").decode("ascii"),
            *self.words,
        }


def _password(id: str, glue: str, *words: str) -> Password:
    return Password(id, glue.join(words), words)


def _long() -> Password:
    """600 characters, a different nasty character between every two words."""
    glue = "/#? @:%"
    words = tuple(f"Lq{i:02d}w{'abcdefghij'[i % 10]}Z" for i in range(60))
    return Password("long", "".join(w + glue[i % len(glue)] for i, w in enumerate(words))[:-1], words)


PASSWORDS = [
    _password("slash", "/", "Qv7mK2", "Jx4nW8"),
    _password("hash", "#", "Hp3tR6", "Lw9cZ5"),
    _password("question", "?", "Ty8bN1", "Gf2sD4"),
    _password("space", " ", "Rk5wE7", "Pz6qM3"),
    _password("tab", "\t", "Bn4yU8", "Cx7vA2"),
    _password("newline", "\n", "Md2kS9", "We5rT1"),
    _password("at", "@", "Fj6hL3", "Nq8pY7"),
    _password("colon", ":", "Zc9gX4", "Vb1mK6"),
    _password("percent", "%", "Ue3wQ7", "Ai5oP2"),
    _password("percent-2F", "%2F", "Sd8fG1", "Hj4kL9"),
    _password("several", "/?#", "Oy2tW5", "Ik8uJ3", "Er6nB7"),
    _password("unicode", "€ñ", "Kw3Öß9", "Ωz5Þq1"),
    _password("digits-first", "/", "61357", "Yr8tE4"),
    _long(),
]


def _ambiguous_without_at(pw: Password) -> bool:
    """``postgresql://ann:61357/Yr8tE4`` is host ann, port 61357, database Yr8tE4, and
    ``postgresql://ann:Fj6hL3@Nq8pY7`` is host Nq8pY7: well-formed URLs that no parser can
    tell from a forgotten ``@host``."""
    return "@" in pw.value or pw.value.split("/")[0].isdigit()


# shape -> the URL it makes of a password (the shapes without an @ skip the passwords
# for which they would be well-formed URLs: see _ambiguous_without_at)
SHAPES = {
    "as-typed": lambda p: f"postgresql://ann:{p}@127.0.0.1:1/db",
    "encoded": lambda p: f"postgresql://ann:{quote(p, safe='')}@127.0.0.1:1/db",
    "mysql": lambda p: f"mysql://ann:{p}@127.0.0.1:1/db",
    "one-slash": lambda p: f"postgresql:/ann:{p}@127.0.0.1:1/db",
    "no-slashes": lambda p: f"postgresql:ann:{p}@127.0.0.1:1/db",
    "three-slashes": lambda p: f"postgresql:///ann:{p}@127.0.0.1:1/db",
    "scheme-typo": lambda p: f"postgressql://ann:{p}@127.0.0.1:1/db",
    "port-not-a-number": lambda p: f"postgresql://ann:{p}@127.0.0.1:port/db",
    "empty-host": lambda p: f"postgresql://ann:{p}@/db",
    "no-host": lambda p: f"postgresql://ann:{p}",
    "no-host-database": lambda p: f"postgresql://ann:{p}/db",
    "no-scheme": lambda p: f"ann:{p}@127.0.0.1:1/db",
    "query": lambda p: f"postgresql://ann@127.0.0.1:1/db?password={p}",
    "sqlite-userinfo": lambda p: f"sqlite://ann:{p}@/tmp/x.db",
    "duckdb-userinfo": lambda p: f"duckdb://ann:{p}@localhost/x.duckdb",
}
NO_AT_SHAPES = {"no-host", "no-host-database"}


def cases():
    for pw in PASSWORDS:
        for shape, make in SHAPES.items():
            if shape in NO_AT_SHAPES and _ambiguous_without_at(pw):
                continue
            yield pytest.param(pw, make(pw.value), id=f"{pw.id}-{shape}")


def leaked(texts, pw: Password) -> list[str]:
    forms = pw.forms()
    return [t for t in texts if any(f in str(t) for f in forms)]


def exception_texts(exc: BaseException, *, formatted: bool = True) -> list[str]:
    """Every text an exception shows: its str/repr/args, sqlnb's fields, IPython's lines,
    the formatted traceback, and the same for chained exceptions.  (Not the traceback of a
    cell's error: its first frame quotes the cell itself, which the user typed; what IPython
    shows of it is the cell's output.)"""
    texts = ["".join(traceback.format_exception(exc))] if formatted else []
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        texts += [str(exc), repr(exc), repr(exc.args)]
        for attr in ("message", "hint", "engine_message"):
            texts.append(str(getattr(exc, attr, None)))
        if isinstance(exc, errors.SqlnbError):
            texts += exc._render_traceback_()
        exc = exc.__cause__ or exc.__context__
    return texts


def expect_error(call) -> errors.SqlnbError:
    with pytest.raises(errors.SqlnbError) as info:
        call()
    return info.value


@pytest.fixture
def named(tmp_path, monkeypatch):
    """Put ``url`` where only a name finds it: a connections file, or SQLNB_WH_URL."""
    cfg = tmp_path / "connections.toml"
    monkeypatch.setenv("SQLNB_CONNECTIONS_FILE", str(cfg))
    monkeypatch.delenv("SQLNB_WH_URL", raising=False)
    monkeypatch.delenv("PGPASSWORD", raising=False)

    def put(where: str, url: str, password: str | None = None) -> str:
        monkeypatch.delenv("SQLNB_WH_URL", raising=False)
        cfg.unlink(missing_ok=True)
        if where == "file":
            text = f"[wh]\nurl = {json.dumps(url, ensure_ascii=False)}\n"
            if password is not None:
                text += f"password = {json.dumps(password, ensure_ascii=False)}\n"
            cfg.write_text(text, encoding="utf-8")
        else:
            assert password is None
            monkeypatch.setenv("SQLNB_WH_URL", url)
        return "wh"

    return put


# ---------------------------------------------------------------------------
# The redaction itself
# ---------------------------------------------------------------------------


def test_redact_url_shows_all_but_the_password():
    assert (
        redact_url("postgresql://ann:Qv7mK2%2FJx4nW8@db.example.com:5433/sales?sslmode=require")
        == "postgresql://ann:***@db.example.com:5433/sales?sslmode=require"
    )
    assert redact_url("mysql://root@127.0.0.1/shop") == "mysql://root@127.0.0.1/shop"
    assert (
        redact_url("snowflake://me:Qv7mK2@acct/DB/SCH?token=Jx4nW8&role=R")
        == "snowflake://me:***@acct/DB/SCH?token=***&role=R"
    )
    # malformed: the host is still shown, nothing before the last @ is
    assert (
        redact_url("postgresql://ann:Qv7mK2/Jx4nW8@db.example.com:5433/sales")
        == "postgresql://***@db.example.com:5433/sales"
    )
    assert redact_url("postgresql:/ann:Qv7mK2@db/sales") == "postgresql:/***@db/sales"
    assert redact_url("postgresql://ann:Qv7mK2/Jx4nW8") == "postgresql://ann:***"
    assert redact_url("ann:Qv7mK2") == "ann:***"
    assert redact_url("postgresql://db:5432/x?password=Qv7mK2@Jx4nW8") == "postgresql://db:5432/x?***"
    assert redact_url("localhost:5432/db") == "localhost:5432/db"


@pytest.mark.parametrize(
    "url, error, text",
    [
        ("postgresql://ann:Qv7mK2/Jx4nW8@db/sales", errors.InvalidURLError, "host or port"),
        ("postgresql://ann:61357/Yr8tE4@db/sales", errors.InvalidURLError, "an @ after the host"),
        ("postgresql://ann:61357?Yr8tE4@db/sales", errors.InvalidURLError, "an @ after the host"),
        ("postgresql://ann:61357#Yr8tE4@db/sales", errors.InvalidURLError, "an @ after the host"),
        ("postgresql://ann:Md2kS9\nWe5rT1@db/sales", errors.InvalidURLError, "control character"),
        ("postgresql://ann:Bn4yU8\tCx7vA2@db/sales", errors.InvalidURLError, "control character"),
        ("postgresql://ann:Qv7mK2@/sales", errors.InvalidURLError, "no host"),
        ("postgressql://ann:Qv7mK2@db/sales", errors.UnknownSchemeError, "postgressql"),
        ("sqlite://ann:Qv7mK2@/x.db", errors.InvalidURLError, "Malformed sqlite URL"),
    ],
)
def test_malformed_urls_are_refused_without_the_password(url, error, text):
    """A password holding / ? # no longer ends the host early and turns into a database
    name or a query (which messages would show): such a URL is refused."""
    exc = expect_error(lambda: parse_url(url))
    assert isinstance(exc, error) and text in str(exc) and exc.hint
    if error is errors.InvalidURLError:  # no ValueError (whose text may hold it) chained
        assert exc.__context__ is None and exc.__cause__ is None
    words = ("Qv7mK2", "Jx4nW8", "Yr8tE4", "Md2kS9", "We5rT1", "Bn4yU8", "Cx7vA2")
    assert leaked(exception_texts(exc), Password("x", words[0], words)) == []


def test_a_url_typo_given_as_a_name_is_a_malformed_url(named):
    named("file", "duckdb://")
    for target in ("postgresql:/ann:Qv7mK2@db/sales", "ann:Qv7mK2@db/sales"):
        exc = expect_error(partial(adapters.connect, target))
        assert isinstance(exc, errors.InvalidURLError) and "Malformed connection URL" in str(exc)
        assert "Qv7mK2" not in " ".join(exception_texts(exc))
    exc = expect_error(lambda: adapters.connect("nosuch"))
    assert isinstance(exc, errors.UnknownConnectionError) and "'nosuch'" in str(exc)


def test_the_message_says_where_a_bad_url_came_from(named):
    named("file", "postgresql://ann:Qv7mK2/Jx4nW8@db/sales")
    exc = expect_error(lambda: adapters.connect("wh"))
    assert "connection 'wh' in" in str(exc) and "connections.toml" in str(exc)
    assert exc.args == (exc.message,)
    named("env", "postgresql://ann:Qv7mK2/Jx4nW8@db/sales")
    exc = expect_error(lambda: adapters.connect("wh"))
    assert "$SQLNB_WH_URL" in str(exc)
    for e in exception_texts(exc):
        assert "Qv7mK2" not in e and "Jx4nW8" not in e


def test_toml_syntax_errors_do_not_quote_the_file(named):
    cfg = Path(os.environ["SQLNB_CONNECTIONS_FILE"])
    cfg.write_text('[wh]\nurl = "postgresql://ann@db/sales"\npassword = "Qv7m\\K2"\n')
    exc = expect_error(lambda: adapters.connect("wh"))
    assert "Cannot read" in str(exc) and "line 3" in str(exc)
    assert "\\K" not in str(exc) and "Qv7m" not in str(exc)


# ---------------------------------------------------------------------------
# The Python API
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("pw, url", cases())
def test_python_api(pw, url, named, caplog):
    caplog.set_level(logging.DEBUG)
    texts: list[str] = []
    try:
        spec = parse_url(url)
    except errors.SqlnbError as exc:
        texts += exception_texts(exc)
    else:  # well-formed: the password is the spec's Secret, never in its repr
        texts += [repr(spec), str(spec), spec.redacted_url()]
    texts += [redact_url(url)]
    calls = {
        "connect": lambda: adapters.connect(url, connect_timeout=3),
        "manager": lambda: ConnectionManager().connect(url, "x"),
        "ask": lambda: sqlnb.ask("How many?", connection=url),
        "file": lambda: adapters.connect(named("file", url), connect_timeout=3),
        "env": lambda: adapters.connect(named("env", url), connect_timeout=3),
    }
    for call in calls.values():
        texts += exception_texts(expect_error(call))
    texts += [r.getMessage() for r in caplog.records] + [str(r.args) for r in caplog.records]
    assert leaked(texts, pw) == []


# ---------------------------------------------------------------------------
# The magics, through a real IPython shell
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shell():
    """One shell for the module's cases (tests/doubles.py)."""
    with loaded_shell() as ip:
        yield ip


def run_cell(shell, cell: str) -> tuple[bool, list[str]]:
    """Run a cell; return whether it succeeded and every text it showed or raised."""
    with capture_output() as cap:
        result = shell.run_cell(cell)
    texts = [cap.stdout, cap.stderr]
    for o in cap.outputs:
        texts += [str(v) for v in o.data.values()]
    if result.error_in_exec is not None:
        texts += exception_texts(result.error_in_exec, formatted=False)
    return result.success, texts


@pytest.mark.parametrize("pw, url", cases())
def test_magics(pw, url, shell, named):
    texts: list[str] = []
    cells = [
        ("file", "%sqlnb connect wh --connect-timeout 3"),
        ("env", "%sqlnb connect wh --connect-timeout 3"),
        ("file", "%%sql --conn wh\nSELECT 1"),
    ]
    if "\n" not in url:  # a line magic ends at a line break: that password only by name
        quoted = "'" + url + "'"
        cells += [
            (None, f"%sqlnb connect {quoted} --connect-timeout 3"),
            (None, f"%sqlnb connect {url} --connect-timeout 3"),  # unquoted: split at spaces
            (None, f"%%sql --conn {quoted}\nSELECT 1"),
            (None, f"%%sql --conn {url}\nSELECT 1"),
            (None, f"%sql --conn {quoted} SELECT 1"),
            (None, f"%%ask --conn {quoted}\nHow many?"),
            (None, f"%sqlnb connect duckdb:// --name {quoted}"),
            (None, f"%sqlnb use {quoted}"),
            (None, f"%sqlnb schema --conn {quoted}"),
        ]
    for where, cell in cells:
        if where:
            named(where, url)
        ok, shown = run_cell(shell, cell)
        assert not ok, cell
        texts += shown
    assert leaked(texts, pw) == []


def test_magic_on_a_bad_named_url_says_so(shell, named):
    named("file", "postgresql://ann:Qv7mK2/Jx4nW8@127.0.0.1:1/db")
    ok, texts = run_cell(shell, "%sqlnb connect wh")
    out = " ".join(texts)
    assert not ok and "InvalidURLError" in out and "connection 'wh'" in out
    assert "Qv7mK2" not in out and "Jx4nW8" not in out


# ---------------------------------------------------------------------------
# The command line, as a subprocess
# ---------------------------------------------------------------------------

SQLNB = str(Path(sys.executable).parent / "sqlnb")


def _cli(args: list[str], extra_env: dict[str, str]) -> tuple[subprocess.CompletedProcess, list[str]]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PGPASSWORD", "SQLNB_CONNECTIONS_FILE", "SQLNB_WH_URL")
    }
    env.update(SQLNB_NO_KEYRING="1", **extra_env)
    p = subprocess.run([SQLNB, *args], capture_output=True, text=True, timeout=120, env=env)
    return p, [p.stdout, p.stderr]


def _cli_runs(runs) -> list[tuple[subprocess.CompletedProcess, list[str]]]:
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        return list(pool.map(lambda r: _cli(*r), runs))


CLI_COMMANDS = [
    ["sql", "--db", "{db}", "--connect-timeout", "3", "SELECT 1"],
    ["sql", "--db", "{db}", "--json", "--connect-timeout", "3", "SELECT 1"],
    ["ask", "--db", "{db}", "--connect-timeout", "3", "--json", "How many?"],
    ["memory", "list", "--db", "{db}", "--json"],
]


def _command(i: int, db: str) -> list[str]:
    return [db if a == "{db}" else a for a in CLI_COMMANDS[i]]


@pytest.mark.parametrize("pw, url", cases())
def test_command_line_every_shape(pw, url, named, capsys, monkeypatch):
    """Every shape, by URL and by name, through ``sqlnb.cli.main`` (what the console script
    runs) with its real stdout and stderr."""
    from sqlnb import cli

    texts = []
    for where in (None, "file", "env"):
        db = named(where, url) if where else url
        for i in range(len(CLI_COMMANDS)):
            code = cli.main(_command(i, db))
            out, err = capsys.readouterr()
            assert code in (1, 2) and err.startswith("sqlnb: error: "), (where, i, code, err)
            assert len(err.strip().splitlines()) == 1, err
            texts += [out, err]
    if "\n" not in url:  # pasted unquoted into a shell: split at its spaces
        for i in (0, 3):
            code = cli.main([w for a in _command(i, url) for w in (a.split() if a == url else [a])])
            out, err = capsys.readouterr()
            assert code in (1, 2), err
            texts += [out, err]
    assert leaked(texts, pw) == []


def test_command_line_subprocess(tmp_path):
    """The console script itself, as a user runs it: every password once, by URL, by a name
    in the connections file or by SQLNB_WH_URL in turn, each command, shapes in turn (the
    full matrix runs through ``cli.main`` above: a subprocess costs a second or more)."""
    runs = []
    for k, pw in enumerate(PASSWORDS):
        shapes = [s for s in SHAPES if not (s in NO_AT_SHAPES and _ambiguous_without_at(pw))]
        url = SHAPES[shapes[(k * 4) % len(shapes)]](pw.value)
        command = (0, 1, 3)[k % 3]
        if k % 3 == 0:
            runs.append((pw, _command(command, url), {}))
        elif k % 3 == 1:
            cfg = tmp_path / f"{pw.id}.toml"
            cfg.write_text(f"[wh]\nurl = {json.dumps(url, ensure_ascii=False)}\n", encoding="utf-8")
            runs.append((pw, _command(command, "wh"), {"SQLNB_CONNECTIONS_FILE": str(cfg)}))
        else:
            runs.append((pw, _command(command, "wh"), {"SQLNB_WH_URL": url}))
    by_id = {p.id: p for p in PASSWORDS}
    runs += [
        (by_id["slash"], _command(2, SHAPES["as-typed"](by_id["slash"].value)), {}),
        (by_id["tab"], _command(2, "wh"), {"SQLNB_WH_URL": SHAPES["encoded"](by_id["tab"].value)}),
        # pasted unquoted into a shell: split at its spaces
        (by_id["space"], ["sql", "--db", *SHAPES["as-typed"](by_id["space"].value).split(), "SELECT 1"], {}),
    ]
    results = _cli_runs([(args, env) for _, args, env in runs])
    for (pw, args, env), (p, shown) in zip(runs, results, strict=True):
        assert p.returncode in (1, 2), (args, env, p.returncode, p.stderr)
        assert p.stderr.startswith("sqlnb: error: ") and "Traceback" not in p.stderr, p.stderr
        assert leaked(shown, pw) == [], (pw.id, args, env)


# ---------------------------------------------------------------------------
# Well-formed URLs whose server refuses the password
# ---------------------------------------------------------------------------

SERVERS = {
    "postgresql-pgbouncer": f"postgresql://{PGB_USER}:{{}}@{PG_HOST}:{PGB_PORT}/postgres",
    "mysql": f"mysql://{MY_USER}:{{}}@{MY_HOST}:{MY_PORT}/",
}


@pytest.mark.parametrize("server", SERVERS)
@pytest.mark.parametrize("pw", PASSWORDS, ids=lambda p: p.id)
def test_wrong_password_refused_by_the_server(server, pw, shell, named, tmp_path, capsys):
    encoded = SERVERS[server].format(quote(pw.value, safe=""))
    bare = SERVERS[server].format("").replace(":@", "@")
    texts: list[str] = []

    exc = expect_error(lambda: adapters.connect(encoded))
    assert isinstance(exc, errors.AuthenticationFailed), exc
    texts += exception_texts(exc)
    exc = expect_error(lambda: adapters.connect(SERVERS[server].format(pw.value)))  # as typed
    texts += exception_texts(exc)

    named("file", bare, password=pw.value)  # the password only in the connections file
    exc = expect_error(lambda: adapters.connect("wh"))
    assert isinstance(exc, errors.AuthenticationFailed), exc
    texts += exception_texts(exc)
    ok, shown = run_cell(shell, "%sqlnb connect wh")
    assert not ok and any("AuthenticationFailed" in t for t in shown)
    texts += shown
    named("env", encoded)
    ok, shown = run_cell(shell, "%sqlnb connect wh")
    assert not ok and any("AuthenticationFailed" in t for t in shown)
    texts += shown

    from sqlnb import cli

    named("env", encoded)
    assert cli.main(["ask", "--db", "wh", "How many?"]) == 1
    out, err = capsys.readouterr()
    assert "Authentication failed" in err
    texts += [out, err]

    # the console script as a subprocess: the password in the URL, or only in the file
    cfg = tmp_path / "cli.toml"
    cfg.write_text(
        f"[wh]\nurl = {json.dumps(bare)}\npassword = {json.dumps(pw.value, ensure_ascii=False)}\n",
        encoding="utf-8",
    )
    if PASSWORDS.index(pw) % 2:
        p, shown = _cli(["sql", "--db", encoded, "SELECT 1"], {})
    else:
        p, shown = _cli(["sql", "--db", "wh", "--json", "SELECT 1"], {"SQLNB_CONNECTIONS_FILE": str(cfg)})
    assert p.returncode == 1 and "Authentication failed" in p.stderr, p.stderr
    texts += shown
    assert leaked(texts, pw) == []
