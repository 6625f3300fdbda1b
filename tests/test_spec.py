"""Connection URLs, named connections, credentials and their redaction."""

from __future__ import annotations

import logging

import pytest

import sqlnb.adapters as adapters
from sqlnb import errors
from sqlnb.adapters.spec import Secret, parse_url, spec_for


@pytest.mark.parametrize(
    "url, scheme, host, port, user, database",
    [
        ("postgresql://ann@db.example.com:5433/sales", "postgresql", "db.example.com", 5433, "ann", "sales"),
        ("postgres://ann@db/sales", "postgresql", "db", None, "ann", "sales"),
        ("mysql://root@127.0.0.1/shop", "mysql", "127.0.0.1", None, "root", "shop"),
        ("mariadb://root@127.0.0.1/shop", "mysql", "127.0.0.1", None, "root", "shop"),
        ("redshift://me@cluster.example:5439/dev", "redshift", "cluster.example", 5439, "me", "dev"),
        ("snowflake://me@acct-1/DB/SCH?warehouse=WH&role=R", "snowflake", "acct-1", None, "me", "DB"),
    ],
)
def test_server_urls(url, scheme, host, port, user, database):
    spec = parse_url(url)
    assert (spec.scheme, spec.host, spec.port, spec.user, spec.database) == (
        scheme,
        host,
        port,
        user,
        database,
    )


def test_snowflake_path_and_params():
    spec = parse_url("snowflake://me@acct/DB/SCH?warehouse=WH&role=R")
    assert spec.path == ("SCH",) and spec.params == {"warehouse": "WH", "role": "R"}


@pytest.mark.parametrize(
    "url, database",
    [
        ("sqlite:///rel/path.db", "rel/path.db"),
        ("sqlite:////abs/path.db", "/abs/path.db"),
        ("sqlite://", None),
        ("sqlite:///:memory:", None),
        ("duckdb://", None),
        ("duckdb:///data.duckdb", "data.duckdb"),
    ],
)
def test_file_urls(url, database):
    assert parse_url(url).database == database


@pytest.mark.parametrize(
    "url, error, text",
    [
        ("", errors.InvalidURLError, "Empty"),
        ("localhost:5432/db", errors.InvalidURLError, "Malformed"),
        ("oracle://u@h/db", errors.UnknownSchemeError, "oracle"),
        ("postgresql://u@h:notaport/db", errors.InvalidURLError, "port"),
        ("postgresql:///db", errors.InvalidURLError, "no host"),
        ("sqlite://relative.db", errors.InvalidURLError, "sqlite"),
    ],
)
def test_bad_urls_say_what_to_do(url, error, text):
    with pytest.raises(error) as info:
        parse_url(url)
    assert text in str(info.value)
    assert info.value.hint


def test_password_is_never_shown():
    spec = parse_url("postgresql://ann:Hunter2-secret@db.example.com/sales?sslmode=require")
    assert spec.password.reveal() == "Hunter2-secret"
    for text in (repr(spec), str(spec), spec.redacted_url(), repr(spec.password), str(spec.password)):
        assert "Hunter2" not in text
    assert spec.redacted_url() == "postgresql://ann:***@db.example.com/sales?sslmode=require"


def test_malformed_url_error_hides_password():
    with pytest.raises(errors.InvalidURLError) as info:
        parse_url("postgresql://ann:Hunter2-secret@db:bad/x")
    assert "Hunter2" not in str(info.value)


def test_connections_file(tmp_path, monkeypatch):
    db = tmp_path / "x.duckdb"
    cfg = tmp_path / "connections.toml"
    cfg.write_text(
        f'[local]\nurl = "duckdb:///{db}"\nreadonly = false\n\n'
        '[warehouse]\nurl = "postgresql://ann@db.example.com/sales"\npassword_env = "WH_PW"\n'
    )
    monkeypatch.setenv("SQLNB_CONNECTIONS_FILE", str(cfg))
    monkeypatch.setenv("WH_PW", "Hunter2-secret")
    wh = spec_for("warehouse")
    assert wh.spec.password.reveal() == "Hunter2-secret"
    assert "Hunter2" not in repr(wh)
    con = adapters.connect("local")
    try:
        assert con.execute("SELECT 42").rows == [(42,)]
    finally:
        con.close()
    with pytest.raises(errors.UnknownConnectionError) as info:
        spec_for("nope")
    assert "local" in str(info.value) and "warehouse" in str(info.value)


def test_connections_file_readonly_option(tmp_path, monkeypatch):
    db = tmp_path / "ro.duckdb"
    adapters.connect(f"duckdb:///{db}").close()
    cfg = tmp_path / "connections.toml"
    cfg.write_text(f'[prod]\nurl = "duckdb:///{db}"\nreadonly = true\n')
    monkeypatch.setenv("SQLNB_CONNECTIONS_FILE", str(cfg))
    con = adapters.connect("prod")
    try:
        assert con.options.readonly
        with pytest.raises(errors.ReadOnlyViolation):
            con.execute("CREATE TABLE t (x INTEGER)")
    finally:
        con.close()


def test_broken_connections_file(tmp_path, monkeypatch):
    cfg = tmp_path / "connections.toml"
    cfg.write_text("[prod\nurl = ")
    monkeypatch.setenv("SQLNB_CONNECTIONS_FILE", str(cfg))
    with pytest.raises(errors.ConfigurationError, match="connections"):
        spec_for("prod")


def test_environment_url_and_password(monkeypatch):
    monkeypatch.setenv("SQLNB_SALES_URL", "postgresql://ann@db.example.com/sales")
    monkeypatch.setenv("SQLNB_SALES_PASSWORD", "Hunter2-secret")
    named = spec_for("sales")
    assert named.spec.password.reveal() == "Hunter2-secret"
    monkeypatch.delenv("SQLNB_SALES_PASSWORD")
    monkeypatch.setenv("PGPASSWORD", "from-libpq-env")
    assert spec_for("sales").spec.password.reveal() == "from-libpq-env"


def test_keyring_password(monkeypatch):
    from typing import ClassVar

    import keyring
    from keyring.backend import KeyringBackend

    class MemoryKeyring(KeyringBackend):
        priority = 1
        store: ClassVar[dict[tuple[str, str], str]] = {("sqlnb", "sales"): "from-keyring"}

        def get_password(self, service, username):
            return self.store.get((service, username))

        def set_password(self, service, username, password):
            self.store[(service, username)] = password

        def delete_password(self, service, username):
            self.store.pop((service, username), None)

    previous = keyring.get_keyring()
    keyring.set_keyring(MemoryKeyring())
    monkeypatch.delenv("SQLNB_NO_KEYRING", raising=False)
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("SQLNB_SALES_URL", "postgresql://ann@db.example.com/sales")
    try:
        assert spec_for("sales").spec.password.reveal() == "from-keyring"
    finally:
        keyring.set_keyring(previous)


def test_missing_driver_names_the_extra(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *a, **kw):
        if name.startswith("redshift_connector"):
            raise ImportError("no module")
        return real_import(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    import importlib

    monkeypatch.setattr(
        importlib,
        "import_module",
        lambda n, *a: (
            fake_import(n) if n.startswith("redshift_connector") else real_import(n, fromlist=["x"])
        ),
    )
    with pytest.raises(errors.MissingDriverError) as info:
        adapters.connect("redshift://me@h/dev")
    assert 'pip install "sqlnb[redshift]"' in str(info.value)


def test_secret_in_logs(caplog):
    spec = parse_url("mysql://me:Hunter2-secret@h/db")
    with caplog.at_level(logging.DEBUG):
        logging.getLogger("sqlnb.test").info("connecting %r %s", spec, spec.password)
    assert "Hunter2" not in caplog.text
    assert Secret("a") == Secret("a") and not Secret("")
