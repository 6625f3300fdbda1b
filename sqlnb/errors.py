"""One exception tree for sqlnb.

Every error a user (or the agent) sees is a :class:`SqlnbError`.  Engine errors are
classified into the subclasses below while keeping the engine's own message, so the
agent can show the model what went wrong and people get a message that says what to do.
"""

from __future__ import annotations


class SqlnbError(Exception):
    """Base of every sqlnb error.

    ``kind`` is a stable machine-readable name (used by the CLI's JSON output and by the
    agent); ``hint`` says what to do next.  ``engine_message`` keeps the driver's text.
    """

    kind = "error"

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        engine_message: str | None = None,
        dialect: str | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.engine_message = engine_message
        self.dialect = dialect

    def __str__(self) -> str:  # one readable line (plus hint)
        text = self.message
        if self.hint:
            text = f"{text} ({self.hint})"
        return text

    def _render_traceback_(self) -> list[str]:
        """IPython shows these lines instead of a Python traceback: errors are for people."""
        lines = [f"\x1b[0;31m{type(self).__name__}\x1b[0m: {self.message}"]
        if self.engine_message and self.engine_message not in self.message:
            lines.append(f"The database said: {self.engine_message}")
        if self.hint:
            lines.append(f"Hint: {self.hint}")
        return lines


# --- configuration and input -------------------------------------------------------
class ConfigurationError(SqlnbError):
    kind = "configuration"


class InvalidURLError(ConfigurationError):
    kind = "invalid_url"


class UnknownSchemeError(ConfigurationError):
    kind = "unknown_scheme"


class MissingDriverError(ConfigurationError):
    kind = "missing_driver"


class UnknownConnectionError(ConfigurationError):
    kind = "unknown_connection"


class NoActiveConnectionError(ConfigurationError):
    kind = "no_active_connection"


class ModelNotConfigured(ConfigurationError):
    """No language model was chosen and none can be picked by default."""

    kind = "model_not_configured"


class MemoryStoreError(ConfigurationError):
    """The memory of accepted answers (``~/.sqlnb/memory.sqlite``) cannot be read or written."""

    kind = "memory"


class UsageError(SqlnbError):
    """Bad arguments to a magic or the CLI, an empty cell, a missing parameter."""

    kind = "usage"


# --- safety -----------------------------------------------------------------------
class WritableRoleError(ConfigurationError):
    """``AskMagic.require_readonly_role`` is on and the connection's credentials may write
    (or sqlnb could not tell whether they may): the agent does not start."""

    kind = "writable_role"


class ReadOnlyViolation(SqlnbError):
    """The read-only guard refused a statement before it reached the database."""

    kind = "read_only"

    def __init__(self, message: str, *, reason: str | None = None, **kw):
        super().__init__(message, **kw)
        self.reason = reason or message


# --- engine errors (classified) -----------------------------------------------------
class DatabaseError(SqlnbError):
    """An error reported by the database engine, not otherwise classified."""

    kind = "database"


class TableNotFound(DatabaseError):
    kind = "table_not_found"


class ColumnNotFound(DatabaseError):
    kind = "column_not_found"


class SQLSyntaxError(DatabaseError):
    kind = "syntax"


class TypeMismatch(DatabaseError):
    kind = "type_mismatch"


class PermissionDenied(DatabaseError):
    kind = "permission"


class QueryTimeout(DatabaseError):
    kind = "timeout"


class QueryCancelled(DatabaseError):
    kind = "cancelled"


class ConnectionLost(DatabaseError):
    kind = "connection_lost"


class AuthenticationFailed(DatabaseError):
    kind = "authentication"


class ConnectFailed(DatabaseError):
    """The server could not be reached (down, wrong host/port, connect timeout)."""

    kind = "connect_failed"


# --- language models ----------------------------------------------------------------
class ModelError(SqlnbError):
    """The language model failed to answer (after retries), timed out or refused us."""

    kind = "model"


class ScriptExhausted(ModelError):
    """A scripted (test) model was asked for more replies than its script holds."""

    kind = "script_exhausted"


class ContextTooLong(ModelError):
    """The prompt was longer than the model's context window (``requested`` and ``window``
    in tokens, where the model said them).  The agent answers it by showing the model a
    smaller part of the schema (:func:`sqlnb.agent.fit.smaller_budget`)."""

    kind = "context_too_long"

    def __init__(
        self,
        message: str,
        *,
        requested: int | None = None,
        window: int | None = None,
        hint: str | None = None,
    ):
        super().__init__(
            message,
            hint=hint or "the prompt is longer than the model's context: use a model with a larger context",
        )
        self.requested = requested
        self.window = window


class ModelDownloadError(SqlnbError):
    """A local model file could not be downloaded, or the download was corrupt."""

    kind = "model_download"


ERROR_KINDS = {
    cls.kind: cls
    for cls in (
        SqlnbError,
        ConfigurationError,
        InvalidURLError,
        UnknownSchemeError,
        MissingDriverError,
        UnknownConnectionError,
        NoActiveConnectionError,
        UsageError,
        ReadOnlyViolation,
        DatabaseError,
        TableNotFound,
        ColumnNotFound,
        SQLSyntaxError,
        TypeMismatch,
        PermissionDenied,
        QueryTimeout,
        QueryCancelled,
        ConnectionLost,
        AuthenticationFailed,
        ConnectFailed,
        ModelNotConfigured,
        ModelError,
        ScriptExhausted,
        ContextTooLong,
        ModelDownloadError,
        MemoryStoreError,
        WritableRoleError,
    )
}


# --- warnings ------------------------------------------------------------------------
class RetiredRuleWarning(UserWarning):
    """A setting names an agent rule (a rewrite or a check) that sqlnb no longer has: the
    name is ignored, and the message says when and why the rule went."""
