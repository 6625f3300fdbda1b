"""The adapter contract: connect, execute, catalog, cancel, close.

One subclass per engine lives next to this module.  Engine differences are data on the
subclass (``dialect``, ``extra``, capability flags such as ``native_timeout`` and
``interpolates_parameters``) plus a handful of small hooks (``_connect``, ``_execute``,
``_load_catalog``, ``_cancel``, ``_close``, ``_read_only_scope``; optionally
``_classify``, ``_catalog_rows``, ``_after_cancel``).  Everything that is the same for
every engine — timing, the read-only guard, timeouts by interruption, kernel-interrupt
cancellation, catalog caching — lives here once.

What an adapter hands out and uses lives in modules of its own: results and the Arrow
conversion (:mod:`sqlnb.adapters.result`), the catalog types
(:mod:`sqlnb.adapters.catalog`), error classification (:mod:`sqlnb.adapters.classify`),
and keeping passwords out of messages and logs (:mod:`sqlnb.adapters.scrub`).
"""

from __future__ import annotations

import atexit
import contextlib
import threading
import time
import weakref
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from sqlnb import errors
from sqlnb.adapters.catalog import Catalog
from sqlnb.adapters.classify import classify_error, connect_error
from sqlnb.adapters.interrupt import interrupt_watcher
from sqlnb.adapters.result import Result, gc_paused
from sqlnb.adapters.scrub import filter_driver_logs, scrub, watch_password
from sqlnb.adapters.spec import ConnectionSpec, ConnectOptions, is_secret_key
from sqlnb.sql.statement import Statement, accept, unchecked
from sqlnb.sql.text import bind_literals, bind_params

if TYPE_CHECKING:  # pragma: no cover
    from sqlnb.sql.functions import FunctionPolicy
    from sqlnb.sql.live import SessionFunctions

_OPEN: weakref.WeakSet[Adapter] = weakref.WeakSet()


@atexit.register
def _close_open_adapters() -> None:
    """Close what is still open while the interpreter can still run driver code (ADBC
    and others complain from their finalizers during interpreter teardown)."""
    for adapter in list(_OPEN):
        adapter.close()


_DEFAULT_PORTS = {"postgresql": 5432, "mysql": 3306, "redshift": 5439}


class Adapter(ABC):
    """One open connection to one engine.

    Subclasses set the class attributes and implement the underscore hooks.  The public
    methods add the behaviour every engine shares.
    """

    scheme: ClassVar[str]
    dialect: ClassVar[str]  # sqlglot dialect name
    extra: ClassVar[str]  # pip extra that installs the driver
    driver_module: ClassVar[str]  # import name of the driver, for missing-driver errors
    display_name: ClassVar[str]
    native_timeout: ClassVar[bool] = True  # engine enforces statement_timeout itself
    paramstyle: ClassVar[str] = "named"  # how the driver wants :name parameters
    #: connection parameters that are part of which database this is (see identity())
    identity_params: ClassVar[tuple[str, ...]] = ()

    def __init__(self, spec: ConnectionSpec, options: ConnectOptions | None = None):
        self.spec = spec
        self.options = options or ConnectOptions()
        self._catalog: Catalog | None = None
        self._timed_out = False
        self._cancel_requested = False
        self._lost = False  # the session died: reconnect before the next statement
        self._statement_readonly = False
        self._lock = threading.RLock()
        self._functions: SessionFunctions | None = None  # the guard's policy, per session
        self.closed = False
        if self.spec.password:
            watch_password(self)
            try:
                __import__(self.driver_module)
            except Exception:
                pass  # a missing driver says so from _connect
            filter_driver_logs(self.driver_module.split(".")[0])
        try:
            self._connect()
        except errors.SqlnbError:
            raise
        except Exception as exc:  # classify driver errors on connect too
            raise self._connect_error(exc) from None
        if self.spec.password:  # loggers of driver modules that connecting imported
            filter_driver_logs(self.driver_module.split(".")[0])
        _OPEN.add(self)

    # ---- hooks --------------------------------------------------------------------
    @abstractmethod
    def _connect(self) -> None: ...

    @abstractmethod
    def _execute(
        self, statement: Statement, params: Any, max_rows: int | None, timeout: float | None
    ) -> Result:
        """Run ``statement`` (its parameters already in the driver's form, see
        :meth:`_bind`).  Every text this sends to the driver for the statement passes
        :meth:`_sendable`: the statement itself, or one of its :meth:`Statement.wrap`
        wrappers, never a changed copy."""

    #: the driver interpolates parameter values into the text on the client (MySQL,
    #: Snowflake): the server would run a text the guard never saw, so a guarded
    #: statement's values go into the text as :meth:`_literal` writes them
    interpolates_parameters: ClassVar[bool] = False

    def _literal(self, value: Any) -> str:
        """``value`` as a SQL literal of this engine (where interpolates_parameters)."""
        raise NotImplementedError

    def _bind(self, sql: str, params: Mapping[str, Any] | None, guarded: bool) -> tuple[str, Any]:
        """The statement's text with ``:name`` parameters in the driver's placeholder style,
        and the values in the driver's form (only the placeholders change; values travel
        apart from the text).  The guard checks this text, as sent: where the driver would
        change the text itself (:attr:`interpolates_parameters`), a guarded statement's
        values are bound into the text here instead, so the guard sees them."""
        if guarded and params and self.interpolates_parameters:
            return bind_literals(sql, params, self.dialect, self._literal), None
        return bind_params(sql, params, self.paramstyle, self.dialect)

    def _statement(self, sql: str, params: Mapping[str, Any] | None, guarded: bool) -> tuple[Statement, Any]:
        """The statement to send and its bound parameters: for a guarded statement (a
        read-only connection, or ``readonly=True``) the text the guard accepted, else the
        text as written."""
        wire, bound = self._bind(sql, params, guarded)
        if not guarded:
            return unchecked(wire, self.dialect), bound
        where = "on a read-only connection" if self.options.readonly else "as read-only"
        return accept(wire, self.dialect, self.guard_functions(), where=where), bound

    def _several_statements(self, count: int, reader: str) -> errors.SqlnbError:
        """The error for a text ``reader`` (the engine's parser, or sqlnb's splitter where
        no engine can be asked) reads as ``count`` statements: nothing of it has run."""
        return errors.UsageError(
            f"{reader} reads {count} statements in this text; sqlnb sends one statement per "
            "call, so none of them ran",
            dialect=self.dialect,
            hint="run the statements one at a time (a %%sql cell splits a cell into statements)",
        )

    def _sendable(self, text: Any) -> str:
        """The one check between sqlnb and a driver for every statement a user or the
        agent runs: the text must be the :class:`Statement` this connection built for it
        (or a wrapper :meth:`Statement.wrap` made and the guard checked again), and while
        a guarded statement runs, one the guard accepted.  Anything else (a copy with
        comments stripped, a re-joined text) is refused before the driver sees it."""
        if not isinstance(text, Statement) or text.dialect != self.dialect:
            raise errors.ReadOnlyViolation(
                "Refused: sqlnb was about to send a text other than the statement it built and checked",
                reason="the text differs from the checked statement",
                dialect=self.dialect,
                hint="this is a bug in sqlnb; please report it",
            )
        if self.read_only_now and not text.accepted:
            raise errors.ReadOnlyViolation(
                "Refused: the statement was not checked by the read-only guard",
                reason="not checked by the guard",
                dialect=self.dialect,
                hint="this is a bug in sqlnb; please report it",
            )
        return str.__str__(text)

    @abstractmethod
    def _load_catalog(self) -> Catalog: ...

    @abstractmethod
    def _cancel(self) -> None: ...

    @abstractmethod
    def _close(self) -> None: ...

    def _classify(self, exc: BaseException) -> errors.SqlnbError | None:
        """Map a driver exception to a classified error (None: use the generic rules)."""
        return None

    def _require_file_for_readonly(self, path: str) -> None:
        """File engines: a read-only connection must not create a missing database."""
        import os

        if self.options.readonly and not os.path.exists(path):
            raise errors.ConfigurationError(
                f"{self.display_name} database {path!r} does not exist",
                hint="a read-only connection cannot create it; check the path",
            )

    def _reconnect(self) -> None:
        """Open a new session after the old one was lost (the catalog cache stays)."""
        try:
            self._close()
        except Exception:
            pass
        try:
            self._connect()
        except errors.SqlnbError:
            raise
        except Exception as exc:
            raise self._connect_error(exc) from None
        self._lost = False

    def _after_cancel(self) -> None:  # noqa: B027 - an optional hook: most engines need nothing
        """Restore the connection after an interrupt (e.g. reconnect); default: nothing."""

    @abstractmethod
    def _read_only_scope(self) -> contextlib.AbstractContextManager:
        """Make the session read-only for one statement on a read-write connection (a
        read-only transaction rolled back afterwards, ``PRAGMA query_only``, ...): the
        second safety layer under the guard for ``execute(..., readonly=True)``."""

    @contextlib.contextmanager
    def _read_only_transaction(self, in_transaction: bool, begin, end):
        """A read-only transaction around one statement: ``begin()`` opens it, ``end()``
        rolls it back whatever happened.  Refused inside the user's own open transaction,
        which the rollback would end."""
        if in_transaction:
            raise self._open_transaction_error()
        begin()
        try:
            yield
        finally:
            try:
                end()
            except Exception:
                pass

    def _run(self, sql: str) -> None:
        """Run a statement of sqlnb's own (no result) through a DB-API cursor."""
        cur = self.conn.cursor()
        try:
            cur.execute(sql)
        finally:
            cur.close()

    def _open_transaction_error(self, engine_message: str | None = None) -> errors.SqlnbError:
        return errors.UsageError(
            "The connection is inside an open transaction, so a query cannot run in a "
            "read-only transaction of its own",
            dialect=self.dialect,
            engine_message=engine_message,
            hint="COMMIT or ROLLBACK in a %%sql cell first",
        )

    def guard_functions(self) -> FunctionPolicy | None:
        """The function policy the read-only guard applies here: built from the engine's
        own metadata (pg_proc, duckdb_functions()) once per session, or None where the
        engine publishes none (see :mod:`sqlnb.sql.functions` and :mod:`sqlnb.sql.live`)."""
        if self._functions is None:
            from sqlnb.sql.live import SessionFunctions

            self._functions = SessionFunctions(
                self.dialect, self._metadata_rows, engine=self.display_name, readonly=self.options.readonly
            )
        return self._functions.policy(getattr(self, "conn", None))

    def _catalog_rows(self, sql: str) -> Sequence[Sequence[Any]]:
        """The rows of a query of sqlnb's own on the engine's metadata, run on the
        connection as it is (no guard, no read-only scope): the catalog queries of engines
        that share them, and the guard's function policy (engines that publish one)."""
        raise NotImplementedError(f"{type(self).__name__} reads no metadata by query")

    def _metadata_rows(self, sql: str) -> Sequence[Sequence[Any]]:
        """:meth:`_catalog_rows` one statement at a time on this connection (a driver
        connection is not safe to share between threads), for the guard's function policy;
        a lost session raises :class:`~sqlnb.errors.ConnectionLost`."""
        with self._lock:
            try:
                return self._catalog_rows(sql)
            except Exception as exc:
                err = self.classify(exc)
                if isinstance(err, errors.ConnectionLost):
                    raise err from None
                raise

    @contextlib.contextmanager
    def _statement_lock(self):
        """The connection, one statement at a time (a cell and the agent's thread take
        turns); an interrupt while waiting for it cancels this statement only."""
        try:
            self._lock.acquire()
        except KeyboardInterrupt:
            raise errors.QueryCancelled(
                "Query cancelled by interrupt while it was waiting for another statement on "
                "this connection (sqlnb's agent or another thread)",
                dialect=self.dialect,
                hint="the connection is still usable; run it again when the other statement ends",
            ) from None
        try:
            yield
        finally:
            self._lock.release()

    @property
    def read_only_now(self) -> bool:
        """Whether the statement being run must not write: a read-only connection, or a
        read-only statement on a read-write one."""
        return self.options.readonly or self._statement_readonly

    @contextlib.contextmanager
    def _statement_read_only(self, wanted: bool):
        if not wanted or self.options.readonly:
            yield  # a read-only connection already is a read-only session
            return
        self._statement_readonly = True
        try:
            with self._read_only_scope():
                yield
        finally:
            self._statement_readonly = False

    # ---- public contract -------------------------------------------------------------
    def execute(
        self,
        sql: str,
        params: Mapping[str, Any] | None = None,
        *,
        max_rows: int | None = None,
        timeout: float | None = None,
        readonly: bool = False,
    ) -> Result:
        """Run one statement.  ``max_rows`` caps the rows fetched (``truncated`` tells),
        ``timeout`` overrides the connection's statement timeout (seconds).
        ``readonly=True`` runs it like on a read-only connection: the guard first, then in
        a read-only session scope, even when the connection itself may write."""
        if self.closed:
            raise errors.ConnectionLost(
                f"Connection to {self.spec.redacted_url()} is closed", hint="reconnect with %sqlnb connect"
            )
        if not sql or not sql.strip():
            raise errors.UsageError("Empty SQL statement", hint="write a statement to run")
        reconnected = False
        guarded = bool(self.options.readonly or readonly)
        if guarded and self._lost:  # the guard's function lookup needs a live session
            with self._lock:
                if self._lost:
                    self._reconnect()
                    reconnected = True
        try:
            statement, bound = self._statement(sql, params, guarded)
        except errors.ConnectionLost as err:
            self._lost = True  # the next statement opens a new connection
            err.hint = "run it again to reconnect"
            raise err from None
        if timeout is None:
            timeout = self.options.statement_timeout
        timeout = timeout or None
        with self._statement_lock():
            if self._lost:
                self._reconnect()
                reconnected = True
            self._timed_out = False
            self._cancel_requested = False
            timer = None
            if timeout and not self.native_timeout:
                timer = threading.Timer(timeout, self._timeout_fired)
                timer.daemon = True
                timer.start()
            start = time.perf_counter()
            try:
                with (
                    interrupt_watcher(self._interrupt_fired),
                    gc_paused(),
                    self._statement_read_only(readonly),
                ):
                    result = self._execute(statement, bound, max_rows, timeout)
            except KeyboardInterrupt:
                self._recover_after_cancel()
                raise errors.QueryCancelled(
                    "Query cancelled by interrupt",
                    dialect=self.dialect,
                    hint="the connection is still usable",
                ) from None
            except Exception as exc:
                err = exc if isinstance(exc, errors.SqlnbError) else self.classify(exc, timeout=timeout)
                if isinstance(err, (errors.QueryCancelled, errors.QueryTimeout)):
                    self._recover_after_cancel()
                if isinstance(err, errors.ConnectionLost):
                    self._lost = True  # the next statement opens a new connection
                    err.hint = (
                        "run it again to reconnect; settings made with SET and "
                        "temporary tables are gone with the old session"
                    )
                raise err from None
            finally:
                if timer is not None:
                    timer.cancel()
            result.elapsed = time.perf_counter() - start
            result.statement = sql
            if reconnected:
                result.notices.append(
                    "The connection was lost and has been re-opened: settings "
                    "made with SET and temporary tables are gone."
                )
            return result

    def catalog(self, refresh: bool = False) -> Catalog:
        """The cached catalog; ``refresh=True`` reads it again from the engine."""
        if self._catalog is None or refresh:
            start = time.perf_counter()
            with self._lock, gc_paused():
                try:
                    cat = self._load_catalog()
                except errors.SqlnbError:
                    raise
                except Exception as exc:
                    raise self.classify(exc) from None
            cat.elapsed = time.perf_counter() - start
            self._catalog = cat
        return self._catalog

    def sample(self, table: str, n: int = 5) -> Result:
        """Up to ``n`` rows of ``table`` (a name from the catalog)."""
        t = self.catalog().find(table)
        if t is None:
            raise errors.TableNotFound(
                f"Table {table!r} is not in the catalog", hint=self._closest_hint(table), dialect=self.dialect
            )
        from sqlnb.sql.quoting import qualified

        return self.execute(
            f"SELECT * FROM {qualified(t.schema, t.name, self.dialect)} LIMIT {int(n)}", max_rows=n
        )

    def cancel(self) -> None:
        """Cancel the running statement, if any (safe to call from another thread)."""
        self._cancel_requested = True
        try:
            self._cancel()
        except Exception:
            pass

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            _OPEN.discard(self)
            try:
                self._close()
            except Exception:
                pass

    def identity(self) -> dict[str, Any]:
        """What names this connection's database, without any secret (no password, no
        secret parameter): the engine and the resolved file of a database file (an
        in-memory database: a random token of this connection, which no other connection
        shares), else host, port, database, user, further path segments and the
        ``identity_params``.  The memory of accepted answers is keyed by its digest."""
        import os
        import uuid

        s = self.spec
        if s.scheme in ("sqlite", "duckdb"):
            if not s.database:
                return {
                    "engine": s.scheme,
                    "in_memory": self.__dict__.setdefault("_memory_token", uuid.uuid4().hex),
                }
            return {"engine": s.scheme, "path": os.path.realpath(os.path.abspath(s.database))}
        ident: dict[str, Any] = {
            "engine": s.scheme,
            "host": (s.host or "").lower(),
            "port": s.port or _DEFAULT_PORTS.get(s.scheme),
            "database": s.database or "",
            "user": s.user or "",
            "path": list(s.path),
        }
        ident.update({k: s.params[k] for k in self.identity_params if k in s.params and not is_secret_key(k)})
        return ident

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self) -> str:
        ro = ", readonly" if self.options.readonly else ""
        return f"<{type(self).__name__} {self.spec.redacted_url()}{ro}>"

    # ---- shared machinery ----------------------------------------------------------
    def _timeout_fired(self) -> None:
        self._timed_out = True
        self.cancel()

    def _interrupt_fired(self) -> None:
        self.cancel()

    def _recover_after_cancel(self) -> None:
        try:
            self._after_cancel()
        except Exception:
            pass

    def _closest_hint(self, name: str) -> str | None:
        try:
            names = [t.name for t in (self._catalog.tables if self._catalog else [])]
        except Exception:
            return None
        import difflib

        close = difflib.get_close_matches(name.split(".")[-1], names, n=3, cutoff=0.6)
        return f"did you mean {', '.join(close)}?" if close else None

    def classify(self, exc: BaseException, timeout: float | None = None) -> errors.SqlnbError:
        """Turn a driver exception into a classified, secret-free :class:`SqlnbError`."""
        if isinstance(exc, errors.SqlnbError):
            return exc
        return classify_error(
            exc,
            self._classify(exc),
            dialect=self.dialect,
            scrub=self._scrub,
            timed_out=self._timed_out,
            cancel_requested=self._cancel_requested,
            timeout=timeout or self.options.statement_timeout,
            closest_hint=self._closest_hint,
        )

    def _connect_error(self, exc: BaseException) -> errors.SqlnbError:
        return connect_error(
            self.classify(exc),
            where=self.spec.redacted_url(),
            scheme=self.spec.scheme,
            dialect=self.dialect,
            has_password=self.spec.password is not None,
        )

    def _scrub(self, text: str) -> str:
        """``text`` without this connection's password (see :mod:`sqlnb.adapters.scrub`)."""
        return scrub(text, self.spec.password)
