"""Shared fixtures: one contract suite parametrized over every engine.

Engine differences are explicit markers, never silent skips:

- ``@pytest.mark.notimpl(["mysql"], reason=...)``: sqlnb does not implement it for that
  engine yet;
- ``@pytest.mark.notyet(["snowflake"], reason=...)``: the engine (or its local stand-in)
  cannot do it.

Both turn into strict xfails, so a test that starts passing fails until the marker goes.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import sqlnb  # noqa: F401  first: it loads mysql-connector's C extension before pyarrow can block it
from tests.doubles import loaded_shell
from tests.engines import ENGINES, ENV_CLASSES, seed_statements

os.environ.setdefault("SQLNB_NO_KEYRING", "1")


def pytest_configure(config):
    config.addinivalue_line("markers", "notimpl(engines, reason): sqlnb lacks this for the engines")
    config.addinivalue_line("markers", "notyet(engines, reason): the engine or its stand-in lacks this")
    config.addinivalue_line("markers", "engines(names): run only for these engines")


def pytest_collection_modifyitems(config, items):
    for item in items:
        engine = getattr(item, "callspec", None) and item.callspec.params.get("engine")
        if not engine:
            continue
        for name in ("notimpl", "notyet"):
            for marker in item.iter_markers(name):
                if engine in marker.args[0]:
                    reason = marker.kwargs.get("reason", name)
                    raises = marker.kwargs.get("raises")
                    kw = {"raises": raises} if raises else {}
                    item.add_marker(pytest.mark.xfail(reason=f"{name}: {reason}", strict=True, **kw))
    # an ``engines`` marker restricts which parametrizations exist at all
    keep = []
    for item in items:
        engine = getattr(item, "callspec", None) and item.callspec.params.get("engine")
        only = item.get_closest_marker("engines")
        if engine and only and engine not in only.args[0]:
            config.hook.pytest_deselected(items=[item])
            continue
        keep.append(item)
    items[:] = keep


@pytest.fixture(scope="session")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("engines")


@pytest.fixture(scope="session", autouse=True)
def no_model_from_the_machine(tmp_path_factory):
    """The tests choose their models themselves: none comes from the developer's machine —
    no ANTHROPIC_API_KEY or SQLNB_MODEL from the environment, and an empty model directory,
    so an offline model installed there (``sqlnb demo --offline``) is not picked up.  Nor
    does the memory of accepted answers: ``SQLNB_HOME`` is a fresh folder, so no test reads
    or writes ``~/.sqlnb/memory.sqlite``.  Kernels the tests start inherit this environment."""
    import os

    saved = {
        k: os.environ.get(k) for k in ("ANTHROPIC_API_KEY", "SQLNB_MODEL", "SQLNB_MODEL_DIR", "SQLNB_HOME")
    }
    os.environ.pop("ANTHROPIC_API_KEY", None)
    os.environ.pop("SQLNB_MODEL", None)
    os.environ["SQLNB_MODEL_DIR"] = str(tmp_path_factory.mktemp("models"))
    os.environ["SQLNB_HOME"] = str(tmp_path_factory.mktemp("sqlnb_home"))
    yield
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(autouse=True)
def memory_of_this_test(tmp_path_factory, monkeypatch):
    """Each test has a memory of accepted answers of its own (``SQLNB_HOME``): an answer one
    test keeps never shows up in another test's prompts."""
    monkeypatch.setenv("SQLNB_HOME", str(tmp_path_factory.mktemp("sqlnb_home")))


@pytest.fixture(scope="session", autouse=True)
def fakesnow_patch(tmp_path_factory):
    """Snowflake has no local server: fakesnow patches the connector onto DuckDB."""
    import fakesnow

    db_path = tmp_path_factory.mktemp("fakesnow")
    with fakesnow.patch(db_path=str(db_path), create_database_on_connect=True, create_schema_on_connect=True):
        yield


@pytest.fixture(scope="session", autouse=True)
def redshift_version_patch():
    """TEST-ONLY: the local Redshift stand-in is PostgreSQL behind PgBouncer, which reports
    server_version '15.x (Debian ...)'; redshift_connector 2.2.0 parses that with
    packaging.version and fails.  Real Redshift reports '8.0.2', so sqlnb itself is never
    patched: only the test session parses the leading digits."""
    import re

    try:
        import redshift_connector.core as rs_core
    except ImportError:
        yield
        return

    real = rs_core.version

    class _LenientVersion:  # test-only stand-in for the packaging.version module
        def __getattr__(self, name):
            return getattr(real, name)

        @staticmethod
        def parse(text):
            m = re.match(r"\s*(\d+(?:\.\d+)*)", str(text))
            return real.parse(m.group(1) if m else text)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rs_core, "version", _LenientVersion())
        yield


@pytest.fixture
def shell(monkeypatch):
    """IPython's InteractiveShell with sqlnb loaded afresh for one test
    (:func:`tests.doubles.loaded_shell`), no model named by the environment."""
    monkeypatch.delenv("SQLNB_MODEL", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with loaded_shell() as ip:
        yield ip


@pytest.fixture
def connect_to():
    """Open sqlnb connections to a test database; all are closed after the test."""
    import sqlnb.adapters as adapters

    opened = []

    def open_(env, **options):
        conn = adapters.connect(env.url(), **options)
        opened.append(conn)
        return conn

    yield open_
    for conn in opened:
        conn.close()


@pytest.fixture(params=ENGINES, scope="module")
def engine(request) -> str:
    return request.param


def _make_env(engine_name: str, workdir: Path, seed: bool):
    env = ENV_CLASSES[engine_name](workdir)
    env.create()
    if seed:
        env.admin(seed_statements(engine_name))
    return env


@pytest.fixture(scope="module")
def seeded(engine, workdir):
    """A database with the standard data set, shared by a module's tests: don't write to it."""
    env = _make_env(engine, workdir, seed=True)
    yield env
    env.drop()


@pytest.fixture
def fresh(engine, workdir):
    """A database with the standard data set for one test, which may write to it."""
    env = _make_env(engine, workdir, seed=True)
    yield env
    env.drop()


@pytest.fixture
def empty_db(engine, workdir):
    env = _make_env(engine, workdir, seed=False)
    yield env
    env.drop()
