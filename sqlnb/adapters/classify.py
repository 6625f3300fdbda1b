"""Error classification: a driver's exception becomes one of :mod:`sqlnb.errors`' classes,
with a secret-free message, the engine's own message and a hint.

An engine maps what its driver tells precisely (SQLSTATEs, error numbers) in its
``Adapter._classify`` hook; :func:`classify_message` reads the message text for the rest;
:func:`classify_error` puts the two together with what the adapter knows of the statement
(it timed out, it was cancelled), and :func:`connect_error` words a failed connect.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlnb import errors
from sqlnb.adapters.spec import ENGINE_PASSWORD_ENV

#: the hint of every statement timeout
TIMEOUT_HINT = "raise the timeout (%config SqlMagic.statement_timeout, --timeout) or narrow the query"


def classify_error(
    exc: BaseException,
    specific: errors.SqlnbError | None,
    *,
    dialect: str,
    scrub: Callable[[str], str],
    timed_out: bool,
    cancel_requested: bool,
    timeout: float | None,
    closest_hint: Callable[[str], str | None],
) -> errors.SqlnbError:
    """The classified, secret-free error for the driver exception ``exc``.

    ``specific``: what the engine's own rules made of it (None: the generic rules);
    ``scrub``: removes the connection's password from a text; ``timed_out`` /
    ``cancel_requested``: the statement ran past ``timeout`` seconds or was cancelled,
    whatever the driver says; ``closest_hint``: a "did you mean" for a missing table."""
    err = specific
    message = scrub(exc_message(exc))
    if err is None or type(err) is errors.DatabaseError:
        generic = classify_message(message, dialect=dialect)
        if err is None or type(generic) is not errors.DatabaseError:
            err = generic
    if timed_out and not isinstance(err, errors.QueryTimeout):
        err = errors.QueryTimeout(
            f"Query exceeded the statement timeout of {timeout:g} s",
            engine_message=message,
            dialect=dialect,
            hint=TIMEOUT_HINT,
        )
    elif cancel_requested and not isinstance(err, (errors.QueryCancelled, errors.QueryTimeout)):
        err = errors.QueryCancelled(
            "Query cancelled", engine_message=message, dialect=dialect, hint="the connection is still usable"
        )
    if isinstance(err, errors.QueryTimeout) and err.hint is None:
        err.hint = TIMEOUT_HINT
    err.message = scrub(" ".join(err.message.split()))
    err.args = (err.message,)  # repr() and pickling show the args, not .message
    if err.engine_message is None:
        err.engine_message = message
    else:
        err.engine_message = scrub(err.engine_message)
    if err.hint:
        err.hint = scrub(err.hint)
    err.dialect = dialect
    if isinstance(err, (errors.TableNotFound,)) and err.hint is None:
        err.hint = closest_hint(quoted_name(message) or "")
    return err


def connect_error(
    err: errors.SqlnbError, *, where: str, scheme: str, dialect: str, has_password: bool
) -> errors.SqlnbError:
    """``err`` (classified) worded as a failed connect to ``where`` (a redacted URL): an
    authentication failure says where a password is looked for, anything else that the
    server could not be reached."""
    if (
        not has_password
        and "password" in err.message.lower()
        and not isinstance(err, errors.AuthenticationFailed)
    ):
        err = errors.AuthenticationFailed(err.message, engine_message=err.engine_message, dialect=dialect)
    if isinstance(err, errors.AuthenticationFailed) and not has_password:
        env = ENGINE_PASSWORD_ENV.get(scheme)
        err.message = f"Authentication failed for {where}: no password was found ({err.message})"
        err.hint = (
            f"set {env + ' or ' if env else ''}SQLNB_<NAME>_PASSWORD, add it to "
            "~/.sqlnb/connections.toml, or store it in the keyring (service 'sqlnb')"
        )
    elif isinstance(err, errors.AuthenticationFailed):
        err.message = f"Authentication failed for {where}: {err.message}"
        err.hint = err.hint or "check the user and password (environment, connections file or keyring)"
    elif (
        isinstance(err, (errors.ConnectionLost, errors.ConnectFailed, errors.QueryTimeout))
        or type(err) is errors.DatabaseError
    ):
        err = errors.ConnectFailed(
            f"Cannot connect to {where}: {err.message}",
            engine_message=err.engine_message,
            dialect=dialect,
            hint="check that the server is running and reachable, and the host, port and database name",
        )
    return err


def exc_message(exc: BaseException) -> str:
    """A driver exception's message on one line (its first 2,000 characters when longer)."""
    msg = str(exc).strip() or type(exc).__name__
    return " ".join(msg.split()) if len(msg) < 2000 else msg[:2000]


def quoted_name(message: str) -> str | None:
    """The first quoted name in an engine's message (the table it did not find)."""
    m = re.search(r"""["'`]([^"'`]+)["'`]""", message)
    return m.group(1) if m else None


_PATTERNS: list[tuple[type[errors.SqlnbError], tuple[str, ...]]] = [
    (
        errors.AuthenticationFailed,
        (
            "password authentication failed",
            "access denied for user",
            "authentication failed",
            "incorrect username or password",
            "no password supplied",
            "invalid authorization",
        ),
    ),
    (
        errors.QueryTimeout,
        (
            "statement timeout",
            "canceling statement due to statement timeout",
            "max_statement_time",
            "maximum statement execution time",
            "timed out",
            "timeout",
        ),
    ),
    (
        errors.QueryCancelled,
        (
            "canceling statement due to user request",
            "interrupted",
            "query execution was interrupted",
            "cancel",
        ),
    ),
    (
        errors.TableNotFound,
        (
            "no such table",
            "does not exist",
            "doesn't exist",
            "table with name",
            "unknown table",
            "catalog error: table",
            "not found in from clause",
        ),
    ),
    (
        errors.ColumnNotFound,
        ("no such column", "unknown column", "column", "referenced column", "binder error"),
    ),
    (
        errors.PermissionDenied,
        (
            "permission denied",
            "read-only",
            "readonly",
            "read only",
            "not authorized",
            "insufficient privileges",
            "attempt to write",
            "command denied",
            "access denied",
            "cannot execute",
            "not allowed",
        ),
    ),
    (
        errors.SQLSyntaxError,
        (
            "syntax error",
            "parser error",
            "you have an error in your sql syntax",
            "incomplete input",
            "unrecognized token",
        ),
    ),
    (
        errors.TypeMismatch,
        (
            "invalid input syntax for type",
            "operator does not exist",
            "conversion",
            "could not convert",
            "cannot be cast",
            "type mismatch",
            "incorrect integer value",
            "datatype mismatch",
            "truncated incorrect",
        ),
    ),
    (
        errors.ConnectionLost,
        (
            "server closed the connection",
            "lost connection",
            "connection is closed",
            "connection already closed",
            "gone away",
            "broken pipe",
            "connection reset",
            "terminating connection",
            "connection not available",
            "no connection to the server",
            "connection was killed",
            "brokenpipe",
            "socket closed",
        ),
    ),
    (
        errors.ConnectFailed,
        (
            "connection refused",
            "could not connect",
            "can't connect",
            "could not translate host",
            "name or service not known",
            "unknown host",
            "failed to resolve",
        ),
    ),
]


def classify_message(message: str, dialect: str | None = None) -> errors.SqlnbError:
    """Generic classification by message text, for drivers that give nothing better."""
    low = message.lower()
    for cls, needles in _PATTERNS:
        if cls is errors.ColumnNotFound:
            if (
                "no such column" in low
                or "unknown column" in low
                or ("column" in low and ("does not exist" in low or "not found" in low))
            ):
                return cls(message, dialect=dialect)
            continue
        if cls is errors.TableNotFound and "column" in low and "does not exist" in low:
            continue
        if any(n in low for n in needles):
            return cls(message, dialect=dialect)
    return errors.DatabaseError(message, dialect=dialect)
