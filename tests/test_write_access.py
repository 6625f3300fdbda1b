"""What a connection's credentials may write (sqlnb.adapters.privileges), on every local
engine with a read-only role and a writable one, and where sqlnb shows it: ``%sqlnb
list`` (a real InteractiveShell), ``sqlnb sql --json`` (a subprocess), the panel's
connection rows, and ``AskMagic.require_readonly_role`` refusing the agent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest
from IPython.utils.capture import capture_output

import sqlnb.adapters as adapters
from sqlnb import errors
from sqlnb.adapters import privileges
from sqlnb.adapters.privileges import (
    ADVICE,
    WriteAccess,
    cached_write_access,
    inspect_write_access,
    write_access,
)
from sqlnb.kernel import kernel_session
from sqlnb.session import ConnectionManager
from tests.doubles import script
from tests.engines import (
    MY_HOST,
    MY_PORT,
    PG_HOST,
    PG_PORT,
    PGB_PASSWORD,
    PGB_PORT,
    PGB_USER,
    DuckDBEnv,
    MySQLEnv,
    PostgresEnv,
    SnowflakeEnv,
    SQLiteEnv,
)


def _name(prefix: str) -> str:
    return f"{prefix}_{os.getpid()}_{uuid.uuid4().hex[:6]}"


# ---------------------------------------------------------------------------------------
# PostgreSQL: a fresh database, a read-only role and writable ones
# ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pg(workdir):
    """A database with five tables and a view in two schemas, dblink installed, and roles:
    ``ro`` (SELECT / USAGE only), ``rw`` (INSERT on a, UPDATE of one column of b, TRUNCATE
    on c, CREATE in schema extra), ``files`` (read-only but in pg_write_server_files)."""
    env = PostgresEnv(workdir)
    env.create()
    roles = {k: _name(f"sqlnb_wa_{k}") for k in ("ro", "rw", "files")}
    env.admin(
        [
            "CREATE SCHEMA extra",
            "CREATE TABLE a (id int PRIMARY KEY, x text)",
            "CREATE TABLE b (id int, x text)",
            "CREATE TABLE c (id int)",
            "CREATE TABLE d (id int)",
            "CREATE TABLE extra.e (id int)",
            "CREATE VIEW v AS SELECT id FROM a",
            "INSERT INTO a VALUES (1, 'one'), (2, 'two')",
            "CREATE EXTENSION dblink",
            *[f'CREATE ROLE "{r}" LOGIN' for r in roles.values()],
            *[f'GRANT USAGE ON SCHEMA public, extra TO "{r}"' for r in roles.values()],
            *[f'GRANT SELECT ON ALL TABLES IN SCHEMA public, extra TO "{r}"' for r in roles.values()],
            f'GRANT INSERT ON a TO "{roles["rw"]}"',
            f'GRANT UPDATE (x) ON b TO "{roles["rw"]}"',
            f'GRANT TRUNCATE ON c TO "{roles["rw"]}"',
            f'GRANT CREATE ON SCHEMA extra TO "{roles["rw"]}"',
            f'GRANT pg_write_server_files TO "{roles["files"]}"',
        ]
    )
    env.roles = roles
    yield env
    env.drop()
    env_admin = PostgresEnv(workdir)
    env_admin.db = "postgres"
    env_admin.admin([f'DROP ROLE IF EXISTS "{r}"' for r in roles.values()])


def pg_url(env, role: str) -> str:
    return f"postgresql://{role}@{PG_HOST}:{PG_PORT}/{env.db}"


def pg_access(env, role: str) -> WriteAccess:
    a = adapters.connect(pg_url(env, role))
    try:
        return inspect_write_access(a)
    finally:
        a.close()


def test_postgres_read_only_role(pg):
    access = pg_access(pg, pg.roles["ro"])
    assert access.can_write is False and access.read_only
    assert access.label == "read-only role"
    assert access.writable_tables == 0 and access.create_schemas == ()
    assert access.superuser is False and access.server_files is False
    assert access.role == pg.roles["ro"] and access.engine == "postgresql"
    # dblink is installed: said, but it does not make this role writable
    assert access.remote_links == ("dblink",)
    assert access.summary.startswith("read-only role: this role") and "dblink" in access.summary


def test_postgres_writable_role_counts_exactly(pg):
    access = pg_access(pg, pg.roles["rw"])
    # a (INSERT), b (UPDATE of a column), c (TRUNCATE); not d, extra.e or the view
    assert access.can_write is True and access.writable_tables == 3
    assert access.create_schemas == ("extra",)
    assert access.superuser is False and access.server_files is False
    assert access.label == "can write 3 tables"
    assert access.summary == (
        f"this role ({pg.roles['rw']}) can write 3 tables and can create "
        "tables in schema extra; dblink is installed, which can reach other "
        f"servers — {ADVICE}"
    )


def test_postgres_superuser_and_server_files(pg):
    access = pg_access(pg, "postgres")
    assert access.can_write is True and access.superuser is True and access.server_files is True
    assert access.label == "superuser role" and "is a superuser" in access.summary
    assert access.writable_tables == 6  # every table and the view
    assert set(access.create_schemas) >= {"public", "extra"}
    # no table to write, but files on the server: writable
    access = pg_access(pg, pg.roles["files"])
    assert access.can_write is True and access.server_files is True
    assert access.writable_tables == 0 and access.superuser is False
    assert access.label == "can write"
    assert "can write files on the database server" in access.summary


def test_postgres_thousand_tables_inspection_is_cheap(workdir):
    """The measured cost: a database of 1,000 tables, a role that may write all of them."""
    import time

    env = PostgresEnv(workdir)
    env.create()
    role = _name("sqlnb_wa_big")
    try:
        env.admin(
            [
                "DO $$ BEGIN FOR i IN 1..1000 LOOP EXECUTE format('CREATE TABLE t%s (id int "
                "PRIMARY KEY, a text, b numeric, c date)', i); END LOOP; END $$",
                f'CREATE ROLE "{role}" LOGIN',
                f'GRANT INSERT ON ALL TABLES IN SCHEMA public TO "{role}"',
            ]
        )
        a = adapters.connect(pg_url(env, role))
        try:
            start = time.perf_counter()
            access = write_access(a)
            first = time.perf_counter() - start
            start = time.perf_counter()
            assert write_access(a) is access  # cached: no query the second time
            again = time.perf_counter() - start
        finally:
            a.close()
        assert access.writable_tables == 1000 and access.label == "can write 1,000 tables"
        assert first < 5 and again < 0.001, (first, again)
    finally:
        env.drop()
        env.db = "postgres"
        env.admin([f'DROP ROLE IF EXISTS "{role}"'])


# ---------------------------------------------------------------------------------------
# Redshift (redshift-connector through PgBouncer to PostgreSQL)
# ---------------------------------------------------------------------------------------


def test_redshift_roles_through_pgbouncer(pg):
    """PgBouncer knows one user (a superuser); the session then takes the other roles with
    SET SESSION AUTHORIZATION, so the Redshift queries run as each of them."""
    url = f"redshift://{PGB_USER}:{PGB_PASSWORD}@{PG_HOST}:{PGB_PORT}/{pg.db}?ssl=false"
    a = adapters.connect(url)
    try:
        access = inspect_write_access(a)
        assert access.engine == "redshift" and access.superuser is True and access.can_write is True
        assert "IAM roles" in access.reason
        a.execute(f'SET SESSION AUTHORIZATION "{pg.roles["ro"]}"')
        access = inspect_write_access(a)
        assert access.can_write is False and access.role == pg.roles["ro"]
        assert access.writable_tables == 0 and access.label == "read-only role"
        a.execute("RESET SESSION AUTHORIZATION")
        a.execute(f'SET SESSION AUTHORIZATION "{pg.roles["rw"]}"')
        access = inspect_write_access(a)
        # Redshift asks table privileges only (INSERT / UPDATE / DELETE): a; b's grant is
        # on a column, c's is TRUNCATE
        assert access.can_write is True and access.writable_tables == 1
        assert access.create_schemas == ("extra",) and access.superuser is False
    finally:
        a.close()


# ---------------------------------------------------------------------------------------
# MariaDB: users made through the sqlnb admin account
# ---------------------------------------------------------------------------------------

MY_PW = "Wa-test-pw1"


@pytest.fixture(scope="module")
def my(workdir):
    env = MySQLEnv(workdir)
    env.create()
    users = {k: _name(f"wa_{k}")[:32] for k in ("ro", "rw", "schema", "create", "role")}
    role = _name("wa_r")[:32]
    db = env.db
    env.admin(
        [
            "CREATE TABLE t1 (id INT PRIMARY KEY, a INT)",
            "CREATE TABLE t2 (id INT, a INT)",
            "CREATE TABLE t3 (id INT)",
            *[
                f"CREATE USER '{u}'@'%' IDENTIFIED VIA mysql_native_password USING PASSWORD('{MY_PW}')"
                for u in users.values()
            ],
            *[f"GRANT SELECT ON `{db}`.* TO '{u}'@'%'" for u in users.values()],
            f"GRANT INSERT ON `{db}`.t1 TO '{users['rw']}'@'%'",
            f"GRANT UPDATE (a) ON `{db}`.t2 TO '{users['rw']}'@'%'",
            f"GRANT INSERT, DELETE ON `{db}`.* TO '{users['schema']}'@'%'",
            f"GRANT CREATE ON `{db}`.* TO '{users['create']}'@'%'",
            f"CREATE ROLE `{role}`",
            f"GRANT INSERT ON `{db}`.* TO `{role}`",
            f"GRANT `{role}` TO '{users['role']}'@'%'",
        ]
    )
    env.users, env.role = users, role
    yield env
    env.admin([f"DROP USER IF EXISTS '{u}'@'%'" for u in users.values()] + [f"DROP ROLE IF EXISTS `{role}`"])
    env.drop()


def my_access(env, user: str) -> WriteAccess:
    a = adapters.connect(f"mysql://{user}:{MY_PW}@{MY_HOST}:{MY_PORT}/{env.db}")
    try:
        return inspect_write_access(a)
    finally:
        a.close()


def test_mariadb_select_only_user(my):
    access = my_access(my, my.users["ro"])
    assert access.can_write is False and access.label == "read-only role"
    assert access.writable_tables == 0 and access.superuser is False and access.server_files is False
    assert access.role == f"{my.users['ro']}@%" and "this user" in access.summary


def test_mariadb_writable_users(my):
    access = my_access(my, my.users["rw"])  # INSERT on t1, UPDATE of a column of t2
    assert access.can_write is True and access.writable_tables == 2
    assert access.label == "can write 2 tables" and access.create_schemas == ()
    access = my_access(my, my.users["schema"])  # INSERT, DELETE on the database
    assert access.can_write is True and access.writable_tables == 3
    access = my_access(my, my.users["create"])  # CREATE on the database, no table written
    assert access.can_write is True and access.writable_tables == 0
    assert access.create_schemas == (my.db,) and access.label == "can create tables"


def test_mariadb_admin_and_hidden_role(my, connect_to):
    admin = inspect_write_access(connect_to(my))  # the sqlnb account: ALL ON *.*
    assert admin.can_write is True and admin.superuser is True and admin.server_files is True
    assert admin.create_schemas == ("*",) and admin.label == "superuser role"
    assert admin.summary.startswith("this user (sqlnb@")
    # a user whose only write grant comes through a role information_schema does not
    # show it: sqlnb cannot tell, and says why
    access = my_access(my, my.users["role"])
    assert access.can_write is None and access.label == "write access unknown"
    assert my.role in access.reason and "information_schema" in access.reason


# ---------------------------------------------------------------------------------------
# SQLite and DuckDB: the file and the mode
# ---------------------------------------------------------------------------------------


@pytest.fixture(params=["sqlite", "duckdb"])
def file_db(request, workdir):
    env = (SQLiteEnv if request.param == "sqlite" else DuckDBEnv)(workdir)
    env.create()
    env.admin(
        ["CREATE TABLE a (id INTEGER)", "CREATE TABLE b (id INTEGER)", "CREATE VIEW v AS SELECT id FROM a"]
    )
    yield env
    env.drop()


def test_file_read_write_vs_read_only(file_db):
    rw = adapters.connect(file_db.url())
    try:
        access = inspect_write_access(rw)
    finally:
        rw.close()
    assert access.can_write is True and access.writable_tables == 2  # tables, not the view
    assert access.label == "can write 2 tables" and access.engine == file_db.name
    assert os.path.basename(str(file_db.path)) in access.summary and "--readonly" in access.summary
    ro = adapters.connect(file_db.url(), readonly=True)
    try:
        access = inspect_write_access(ro)
    finally:
        ro.close()
    assert access.can_write is False and access.label == "read-only connection"
    assert access.writable_tables == 0 and "opened read-only" in access.summary


@pytest.mark.parametrize("url", ["sqlite://", "duckdb://"])
def test_in_memory_database(url):
    a = adapters.connect(url)
    try:
        a.execute("CREATE TABLE t (x INTEGER)")
        access = inspect_write_access(a)
    finally:
        a.close()
    assert access.can_write is True and access.label == "in-memory database"
    assert access.writable_tables == 1


def test_file_the_process_may_not_write(file_db, monkeypatch):
    """os.access says no (tests run as root, who may write anything: the answer is
    replaced, the connection is real)."""
    a = adapters.connect(file_db.url())
    monkeypatch.setattr(privileges.os, "access", lambda path, mode: False)
    try:
        access = inspect_write_access(a)
    finally:
        a.close()
    assert access.can_write is False and access.label == "read-only file"
    assert "--readonly" in access.summary


# ---------------------------------------------------------------------------------------
# Snowflake (fakesnow): no privilege views, so sqlnb cannot tell
# ---------------------------------------------------------------------------------------


def test_snowflake_fakesnow_cannot_tell(workdir, connect_to):
    env = SnowflakeEnv(workdir)
    env.create()
    env.admin(["CREATE TABLE t (id INTEGER)"])
    access = inspect_write_access(connect_to(env))
    assert access.can_write is None and access.engine == "snowflake"
    assert "ENABLED_ROLES" in access.reason and access.label == "write access unknown"
    assert access.summary.startswith("sqlnb could not tell what this role may change")


# ---------------------------------------------------------------------------------------
# Never failing the connect; cached per connection
# ---------------------------------------------------------------------------------------


def test_inspection_failure_never_fails_the_connect(tmp_path, monkeypatch, pg):
    def broken(adapter):
        raise RuntimeError("catalog on fire")

    monkeypatch.setitem(privileges.INSPECTORS, "duckdb", broken)
    manager = ConnectionManager()
    try:
        entry = manager.connect(f"duckdb:///{tmp_path / 'x.duckdb'}", "x")
        row = manager.describe()[0]
        assert row["can_write"] is None and "RuntimeError: catalog on fire" in row["write_access"]
        assert entry.adapter.execute("SELECT 1 AS one").rows == [(1,)]  # the connection works
    finally:
        manager.close_all()
    # a closed connection: an engine error, as the reason
    a = adapters.connect(pg_url(pg, pg.roles["ro"]))
    a.close()
    access = inspect_write_access(a)
    assert access.can_write is None and "closed" in access.reason


def test_computed_at_connect_and_cached(tmp_path, monkeypatch):
    calls = []
    real = privileges.INSPECTORS["duckdb"]

    def counting(adapter):
        calls.append(adapter)
        return real(adapter)

    monkeypatch.setitem(privileges.INSPECTORS, "duckdb", counting)
    manager = ConnectionManager()
    try:
        entry = manager.connect(f"duckdb:///{tmp_path / 'x.duckdb'}", "x")
        assert len(calls) == 1 and cached_write_access(entry.adapter) is not None
        manager.describe(), manager.describe(), manager.write_access("x")
        assert len(calls) == 1  # once per connection
        later = manager.connect(f"duckdb:///{tmp_path / 'y.duckdb'}", "y", inspect=False)
        assert cached_write_access(later.adapter) is None and len(calls) == 1
        assert manager.write_access("y").can_write is True and len(calls) == 2  # on first use
        write_access(later.adapter, refresh=True)
        assert len(calls) == 3
    finally:
        manager.close_all()


# ---------------------------------------------------------------------------------------
# %sqlnb list and %sqlnb connect (a real InteractiveShell)
# ---------------------------------------------------------------------------------------


def run(shell, cell: str):
    with capture_output() as cap:
        result = shell.run_cell(cell)
    return result, cap.stdout + cap.stderr


def test_sqlnb_list_shows_write_access(shell, pg, file_db, workdir):
    res, out = run(shell, f"%sqlnb connect {file_db.url()} --name rw")
    assert res.success, out
    assert "Write access: this connection can write" in out
    other = type(file_db)(workdir)  # a second file: DuckDB opens a file one way per process
    other.create()
    other.admin(["CREATE TABLE z (id INTEGER)"])
    res, out = run(shell, f"%sqlnb connect {other.url()} --name ro --readonly")
    assert res.success, out
    assert "Write access: read-only connection" in out
    res, out = run(shell, f"%sqlnb connect {pg_url(pg, pg.roles['ro'])} --name pg_ro")
    assert res.success and "Write access: read-only role" in out, out
    res, out = run(shell, f"%sqlnb connect {pg_url(pg, pg.roles['rw'])} --name pg_rw")
    assert res.success and "can write 3 tables" in out, out
    frame = shell.run_line_magic("sqlnb", "list")
    assert list(frame.index) == ["rw", "ro", "pg_ro", "pg_rw"]
    assert {"can_write", "write_access"} <= set(frame.columns)
    assert frame.loc["rw", "can_write"] == True  # noqa: E712
    assert frame.loc["ro", "can_write"] == False  # noqa: E712
    assert frame.loc["pg_ro", "write_access"].startswith("read-only role")
    assert frame.loc["pg_rw", "write_access"].startswith(f"this role ({pg.roles['rw']}) can write 3 tables")
    assert frame.loc["rw", "write_access"].startswith("this connection can write")


# ---------------------------------------------------------------------------------------
# sqlnb sql --json (a subprocess)
# ---------------------------------------------------------------------------------------


def cli(*args: str, timeout: float = 120):
    env = {k: v for k, v in os.environ.items() if k not in ("PGPASSWORD", "SQLNB_CONNECTIONS_FILE")}
    env["SQLNB_NO_KEYRING"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "sqlnb.cli", *args], capture_output=True, text=True, timeout=timeout, env=env
    )


def test_cli_sql_json_says_what_the_connection_may_write(file_db, pg):
    p = cli("sql", "--db", file_db.url(), "--json", "SELECT count(*) AS n FROM a")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    conn = data["connection"]
    assert conn["name"] == "cli" and conn["readonly"] is False and conn["engine"] in ("SQLite", "DuckDB")
    assert conn["write_access"]["can_write"] is True and conn["write_access"]["writable_tables"] == 2
    assert conn["write_access"]["label"] == "can write 2 tables"
    p = cli("sql", "--db", file_db.url(), "--readonly", "--json", "SELECT 1 AS one")
    assert p.returncode == 0, p.stderr
    access = json.loads(p.stdout)["connection"]["write_access"]
    assert access["can_write"] is False and access["label"] == "read-only connection"
    p = cli("sql", "--db", pg_url(pg, pg.roles["rw"]), "--json", "SELECT 1 AS one")
    assert p.returncode == 0, p.stderr
    access = json.loads(p.stdout)["connection"]["write_access"]
    assert access["writable_tables"] == 3 and access["create_schemas"] == ["extra"]
    assert access["remote_links"] == ["dblink"] and access["role"] == pg.roles["rw"]
    # without --json: the table as before, nothing about write access
    p = cli("sql", "--db", file_db.url(), "SELECT 1 AS one")
    assert p.returncode == 0 and "write" not in p.stdout.lower(), p.stdout


# ---------------------------------------------------------------------------------------
# AskMagic.require_readonly_role (a scripted model)
# ---------------------------------------------------------------------------------------

COUNT_A = "SELECT count(*) AS n FROM a"


def test_require_readonly_role_refuses_a_writable_role(shell, pg, tmp_path):
    run(shell, f"%sqlnb connect {pg_url(pg, pg.roles['rw'])} --name rw")
    run(shell, f"%sqlnb connect {pg_url(pg, pg.roles['ro'])} --name ro")
    model = script(tmp_path, f"```sql\n{COUNT_A}\n```", "FINAL")
    # off by default: a writable role is asked (the agent only reads)
    assert kernel_session(shell).ask.require_readonly_role is False
    res, out = run(shell, f"%%ask --conn rw --model {model}\nHow many rows has a?")
    assert res.success and res.result.status == "success", out
    shell.run_line_magic("config", "AskMagic.require_readonly_role = True")
    res, out = run(shell, f"%%ask --conn rw --model {script(tmp_path, 'never used')}\nHow many rows has a?")
    assert not res.success and "Traceback" not in out
    assert isinstance(res.error_in_exec, errors.WritableRoleError)
    assert (
        f"Not asking on 'rw': require_readonly_role is on and this role ({pg.roles['rw']}) "
        "can write 3 tables" in out
    )
    assert "connect with a read-only role" in out and "AskMagic.require_readonly_role = False" in out
    # a read-only role is asked
    model = script(tmp_path, f"```sql\n{COUNT_A}\n```", "FINAL")
    res, out = run(shell, f"%%ask --conn ro --model {model}\nHow many rows has a?")
    assert res.success and res.result.status == "success" and res.result.sql == COUNT_A, out


def test_require_readonly_role_counts_unknown_as_writable(shell, workdir, tmp_path):
    env = SnowflakeEnv(workdir)
    env.create()
    env.admin(["CREATE TABLE t (id INTEGER)"])
    run(shell, f"%sqlnb connect {env.url()} --name sf")
    shell.run_line_magic("config", "AskMagic.require_readonly_role = True")
    res, out = run(shell, f"%%ask --model {script(tmp_path, 'never used')}\nHow many?")
    assert isinstance(res.error_in_exec, errors.WritableRoleError)
    assert "could not tell whether its role can write" in out and "counts as writable" in out


def test_require_readonly_role_on_files_and_the_cli(shell, file_db, pg, tmp_path):
    run(shell, f"%sqlnb connect {file_db.url()} --name rw")
    run(shell, f"%sqlnb connect {file_db.url()} --name ro --readonly") if file_db.name == "sqlite" else None
    shell.run_line_magic("config", "AskMagic.require_readonly_role = True")
    res, out = run(shell, f"%%ask --conn rw --model {script(tmp_path, 'never used')}\nHow many?")
    assert isinstance(res.error_in_exec, errors.WritableRoleError)
    assert "%sqlnb connect ... --readonly" in out, out
    run(shell, "%sqlnb close rw")
    if file_db.name == "duckdb":  # one way per file and process: read-only once closed
        run(shell, f"%sqlnb connect {file_db.url()} --name ro --readonly")
    model = script(tmp_path, f"```sql\n{COUNT_A}\n```", "FINAL")
    res, out = run(shell, f"%%ask --conn ro --model {model}\nHow many rows has a?")
    assert res.success and res.result.status == "success", out
    run(shell, "%sqlnb close ro")

    # sqlnb ask opens a file read-only: asked; a writable PostgreSQL role stays writable
    def cli_ask(url: str, *replies: str):
        model = script(tmp_path, *replies)
        return cli("ask", "--db", url, "--require-readonly-role", "--model", model, "How many rows has a?")

    p = cli_ask(file_db.url(), f"```sql\n{COUNT_A}\n```", "FINAL")
    assert p.returncode == 0, p.stderr
    p = cli_ask(pg_url(pg, pg.roles["rw"]), "never used")
    assert p.returncode == 2 and "require_readonly_role is on" in p.stderr, p.stderr
    assert "can write 3 tables" in p.stderr
    p = cli_ask(pg_url(pg, pg.roles["ro"]), f"```sql\n{COUNT_A}\n```", "FINAL")
    assert p.returncode == 0, p.stderr


def test_sidebar_rows_and_run_refused(shell, pg, tmp_path):
    from sqlnb.bridge.comm import Bridge
    from tests.test_bridge import FakeComm, FakeKernel

    kernel_session(shell).bridge = Bridge(shell, kernel=FakeKernel())
    try:
        run(shell, f"%sqlnb connect {pg_url(pg, pg.roles['rw'])} --name rw")
        run(shell, f"%sqlnb connect {pg_url(pg, pg.roles['ro'])} --name ro")
        comm = FakeComm()
        kernel_session(shell).bridge.open(comm, {})
        reply = comm.request("hello", client={"name": "test", "version": "0"}, protocol=1, notebook="t.ipynb")
        assert "write_access" in reply["data"]["features"]
        rows = {c["name"]: c for c in reply["data"]["connections"]}
        assert rows["ro"]["write_access"]["can_write"] is False
        assert rows["ro"]["write_access"]["label"] == "read-only role"
        assert rows["rw"]["write_access"]["label"] == "can write 3 tables"
        assert rows["rw"]["write_access"]["summary"].endswith(ADVICE)
        shell.run_line_magic("config", "AskMagic.require_readonly_role = True")
        reply = comm.request(
            "ask", question="How many rows has a?", connection="rw", model=script(tmp_path, "never used")
        )
        assert reply["ok"], reply
        done = comm.wait_done(reply["data"]["run"])
        assert done["status"] == "error" and done["error"]["kind"] == "WritableRoleError", done
        assert "require_readonly_role" in done["error"]["message"]
    finally:
        kernel_session(shell).bridge = None


def test_chat_widget_shows_the_selected_connections_write_access(shell, pg):
    import sqlnb

    run(shell, f"%sqlnb connect {pg_url(pg, pg.roles['ro'])} --name ro")
    run(shell, f"%sqlnb connect {pg_url(pg, pg.roles['rw'])} --name rw")
    chat = sqlnb.chat()
    try:
        assert chat.connection.value == "rw"
        assert "can write 3 tables" in chat.access.value and ADVICE in chat.access.value  # the tooltip
        chat.connection.value = "ro"
        assert "read-only role" in chat.access.value and "can write" not in chat.access.value
    finally:
        chat.close()
