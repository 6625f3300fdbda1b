"""Passwords stay secret in memory, in reprs, in logs and in error messages.

On each real engine with a real password (MariaDB user sqlnb, PgBouncer user sqlnb, a
PostgreSQL role created here), after connecting, running queries on every path and forcing
failures: no attribute reachable from the adapter (walked recursively through instance
dicts, slots, dicts, lists and tuples; a :class:`Secret` is the one allowed holder), no
repr, no log record (DEBUG, every logger) and no error message holds the password, and
pickling gives it away neither.  The adapter still reconnects with it after the session
was killed, so the password is revealed where the driver needs it.
"""

from __future__ import annotations

import copy
import logging
import pickle
import uuid
from urllib.parse import quote

import sqlnb.adapters as adapters  # before pandas: see sqlnb/__init__.py

# isort: split
import pytest

from sqlnb import errors
from sqlnb.adapters.spec import Secret, parse_url
from tests.engines import (
    MY_HOST,
    MY_PASSWORD,
    MY_PORT,
    MY_USER,
    PG_HOST,
    PG_PORT,
    PGB_PASSWORD,
    PGB_PORT,
    PGB_USER,
    MySQLEnv,
    PostgresEnv,
)

pytestmark = pytest.mark.timeout(120)

PG_ROLE = f"sqlnb_secret_{uuid.uuid4().hex[:8]}"
PG_ROLE_PASSWORD = f"Pg-s3cret-{uuid.uuid4().hex[:10]}"


def _forms(password: str) -> list[str]:
    return sorted({password, quote(password, safe=""), quote(password)})


def find_password(root, password: str) -> list[str]:
    """Paths from ``root`` to every str/bytes that holds ``password`` (any of its forms)."""
    forms = _forms(password)
    bforms = [f.encode() for f in forms]
    found: list[str] = []
    seen: set[int] = set()
    stack = [(root, "adapter", 0)]
    while stack:
        obj, path, depth = stack.pop()
        if isinstance(obj, Secret):
            continue  # the one place a password may live
        if isinstance(obj, str):
            if any(f in obj for f in forms):
                found.append(path)
            continue
        if isinstance(obj, (bytes, bytearray, memoryview)):
            data = bytes(obj)
            if any(f in data for f in bforms):
                found.append(path)
            continue
        if obj is None or isinstance(obj, (int, float, bool, complex, type)) or depth > 25:
            continue
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, dict):
            for k, v in list(obj.items()):
                stack.append((k, f"{path}[key {k!r}]", depth + 1))
                stack.append((v, f"{path}[{k!r}]", depth + 1))
            continue
        if isinstance(obj, (list, tuple, set, frozenset)):
            for i, v in enumerate(list(obj)):
                stack.append((v, f"{path}[{i}]", depth + 1))
            continue
        if type(obj).__module__ in ("builtins",) or (callable(obj) and not hasattr(obj, "__dict__")):
            continue
        attrs = getattr(obj, "__dict__", None)
        if isinstance(attrs, dict):
            for k, v in list(attrs.items()):
                stack.append((v, f"{path}.{k}", depth + 1))
        for cls in type(obj).__mro__:
            for slot in getattr(cls, "__slots__", ()) or ():
                if isinstance(slot, str) and slot not in ("__dict__", "__weakref__"):
                    try:
                        stack.append((getattr(obj, slot), f"{path}.{slot}", depth + 1))
                    except AttributeError:
                        pass
    return found


# ---------------------------------------------------------------------------
# Engines with real passwords
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pg_env(workdir):
    env = PostgresEnv(workdir)
    env.create()
    env.admin(
        [
            f"CREATE ROLE {PG_ROLE} LOGIN PASSWORD '{PG_ROLE_PASSWORD}'",
            f'GRANT ALL ON DATABASE "{env.db}" TO {PG_ROLE}',
            f"GRANT ALL ON SCHEMA public TO {PG_ROLE}",
            "CREATE TABLE t AS SELECT i AS id, 'v' || i AS v FROM generate_series(1, 20000) i",
            f"GRANT SELECT ON t TO {PG_ROLE}, sqlnb",
        ]
    )
    yield env
    env.drop()
    import psycopg

    with psycopg.connect(
        host=PG_HOST, port=PG_PORT, user="postgres", dbname="postgres", autocommit=True
    ) as con:
        con.execute(f"DROP ROLE IF EXISTS {PG_ROLE}")


@pytest.fixture(scope="module")
def my_env():
    env = MySQLEnv(None)
    env.create()
    env.admin(
        [
            "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))",
            "INSERT INTO t SELECT seq, CONCAT('v', seq) FROM seq_1_to_20000",
        ]
    )
    yield env
    env.drop()


CASES = ["postgresql-role", "postgresql-pgbouncer", "redshift-pgbouncer", "mysql"]


@pytest.fixture(params=CASES)
def case(request, pg_env, my_env):
    """(url, password, a function that kills the adapter's server session)"""
    name = request.param
    if name == "postgresql-role":
        url = f"postgresql://{PG_ROLE}:{quote(PG_ROLE_PASSWORD, safe='')}@{PG_HOST}:{PG_PORT}/{pg_env.db}"
        return name, url, PG_ROLE_PASSWORD, _pg_killer(pg_env)
    if name == "postgresql-pgbouncer":
        url = f"postgresql://{PGB_USER}:{PGB_PASSWORD}@{PG_HOST}:{PGB_PORT}/{pg_env.db}"
        return name, url, PGB_PASSWORD, _pg_killer(pg_env)
    if name == "redshift-pgbouncer":
        url = f"redshift://{PGB_USER}:{PGB_PASSWORD}@{PG_HOST}:{PGB_PORT}/{pg_env.db}?ssl=false"
        return name, url, PGB_PASSWORD, _pg_killer(pg_env)
    url = f"mysql://{MY_USER}:{MY_PASSWORD}@{MY_HOST}:{MY_PORT}/{my_env.db}"
    return name, url, MY_PASSWORD, _my_killer(my_env)


def _pg_killer(env):
    def kill(adapter) -> None:
        env.admin_query(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )

    return kill


def _my_killer(env):
    def kill(adapter) -> None:
        env.admin([f"KILL CONNECTION {int(adapter.connection_id)}"])

    return kill


def test_no_adapter_attribute_repr_log_or_error_holds_the_password(case, caplog):
    _, url, password, kill = case
    caplog.set_level(logging.DEBUG)  # every logger, drivers included
    c = adapters.connect(url)
    messages: list[str] = [repr(c), str(c), repr(c.spec), c.spec.redacted_url()]
    try:
        # every path: the fast path (large result), the plain path (capped, parameters)
        assert c.execute("SELECT id, v FROM t ORDER BY id").row_count == 20000
        assert c.execute("SELECT id, v FROM t ORDER BY id", max_rows=3).truncated
        assert c.execute("SELECT v FROM t WHERE id = :id", {"id": 7}).rows == [("v7",)]
        c.catalog()
        assert find_password(c, password) == []

        # an error that echoes the password: the message shows *** instead
        with pytest.raises(errors.SqlnbError) as info:
            c.execute(f"SELECT CAST('{password}' AS DECIMAL(5, 2)) + no_such_column FROM t")
        messages += [
            str(info.value),
            repr(info.value),
            info.value.engine_message or "",
            info.value.hint or "",
        ]

        # the session dies after connecting: the error says so, and the next statement
        # reconnects (the password is revealed for the driver only)
        kill(c)
        with pytest.raises(errors.ConnectionLost) as info:
            c.execute("SELECT id FROM t WHERE id = 1")
        messages += [
            str(info.value),
            repr(info.value),
            info.value.engine_message or "",
            info.value.hint or "",
        ]
        r = c.execute("SELECT id FROM t WHERE id = 1")
        assert r.rows == [(1,)] and r.notices
        assert c.execute("SELECT id, v FROM t ORDER BY id").row_count == 20000
        assert find_password(c, password) == []

        # pickling never carries it
        for obj in (c, c.spec, c.spec.password):
            try:
                data = pickle.dumps(obj)
            except (TypeError, AttributeError, pickle.PicklingError) as exc:
                messages.append(str(exc))
            else:
                assert not any(f.encode() in data for f in _forms(password)), type(obj)
        clone = copy.deepcopy(c.spec)  # copies keep the Secret (and stay usable)
        assert clone.password.reveal() == password and find_password(clone, password) == []
    finally:
        c.close()
    messages += [r.getMessage() for r in caplog.records]
    messages += [str(r.args) for r in caplog.records if r.args]
    leaked = [m for m in messages if any(f in m for f in _forms(password))]
    assert leaked == []


def test_wrong_password_errors_do_not_show_it(case):
    name, url, password, _ = case
    if name == "postgresql-role":  # trust authentication on loopback: any password is accepted
        url = url.replace(f":{PG_PORT}/", f":{PGB_PORT}/")
    wrong = f"Wr0ng-{uuid.uuid4().hex[:8]}"
    bad = url.replace(quote(password, safe=""), quote(wrong, safe=""), 1)
    assert bad != url
    with pytest.raises(errors.SqlnbError) as info:
        adapters.connect(bad)
    text = " ".join(
        [str(info.value), repr(info.value), info.value.engine_message or "", info.value.hint or ""]
    )
    assert wrong not in text and password not in text


def test_secret_refuses_pickling_and_shows_nothing():
    spec = parse_url("postgresql://u:Very-s3cret@h/db")
    assert "Very-s3cret" not in repr(spec) and "Very-s3cret" not in str(spec.password)
    with pytest.raises(TypeError, match="pickle"):
        pickle.dumps(spec.password)
    with pytest.raises(TypeError, match="pickle"):
        pickle.dumps(spec)
    assert copy.copy(spec.password) is spec.password
    assert copy.deepcopy(spec).password.reveal() == "Very-s3cret"
