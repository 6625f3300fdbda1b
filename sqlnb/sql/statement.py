"""The text that runs: a statement exactly as it is sent, and the guard's word on it.

sqlnb sends a database only text built here.  A :class:`Statement` is a ``str`` that only
:func:`accept` (the read-only guard said yes to this very text) and :func:`unchecked` (a
statement of a connection that may write, which the guard does not judge) make, and that
only :meth:`Statement.wrap` turns into another: any other change to the text (a comment
stripped, a semicolon trimmed, an f-string around it) gives a plain ``str``, which the
adapters' one sending point refuses (:meth:`sqlnb.adapters.base.Adapter._sendable`).

A wrapper (a zero-row describe, a server-side cursor, MariaDB's ``SET STATEMENT ... FOR``)
embeds the original text unchanged, on lines of its own: ``prefix``, newline, the
statement up to its last token (a trailing semicolon and what follows it, comments and
whitespace, are cut: nothing the engine would run), newline, ``suffix``.  The newlines
end any line comment the statement ends with, so the wrapper's own text stays code.  A
wrapper of an accepted statement is checked again by the guard, as sent
(:func:`sqlnb.sql.guard.check_wrapped`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlnb import errors
from sqlnb.sql.dialects import sqlglot_dialect

if TYPE_CHECKING:  # at run time the guard (and sqlglot with it) loads on first use
    from sqlnb.sql.functions import FunctionPolicy
    from sqlnb.sql.guard import Verdict


class Statement(str):
    """One statement's text as the driver receives it.

    ``accepted``: the read-only guard accepted this text (``verdict`` says why);
    ``dialect``: the sqlglot dialect it was read in.  Equal to the plain string, so it can
    be compared, logged and shown as text; built only by this module's functions."""

    dialect: str
    accepted: bool
    verdict: Verdict | None
    _functions: FunctionPolicy | None

    def __new__(
        cls,
        text: str,
        *,
        _token: object = None,
        dialect: str = "",
        accepted: bool = False,
        verdict: Verdict | None = None,
        functions: FunctionPolicy | None = None,
    ) -> Statement:
        if _token is not _MINT:
            raise TypeError("a Statement is made by sqlnb.sql.statement.accept() or unchecked()")
        self = super().__new__(cls, text)
        self.dialect = dialect
        self.accepted = accepted
        self.verdict = verdict
        self._functions = functions
        return self

    def body(self) -> str:
        """The statement up to its last token: a trailing semicolon and the comments and
        whitespace after it cut off (a prefix of the text, never re-lexed)."""
        return str(self)[: _body_end(str(self), self.dialect)]

    def wrap(self, prefix: str, suffix: str = "") -> Statement:
        """``prefix``, newline, :meth:`body`, newline, ``suffix``: the statement embedded
        unchanged.  For an accepted statement the guard checks the whole text as sent and
        a refusal raises :class:`sqlnb.errors.ReadOnlyViolation`."""
        text = f"{prefix}\n{self.body()}\n{suffix}"
        if not self.accepted:
            return Statement(text, _token=_MINT, dialect=self.dialect)
        from sqlnb.sql.guard import check_wrapped

        verdict = check_wrapped(text, self.dialect, self._functions)
        if not verdict.read_only:
            raise errors.ReadOnlyViolation(
                f"Refused: sqlnb's own wrapper around the statement is not read-only ({verdict.reason})",
                reason=verdict.reason,
                dialect=self.dialect,
                hint="run the statement without a row limit, or report this to sqlnb",
            )
        return Statement(
            text,
            _token=_MINT,
            dialect=self.dialect,
            accepted=True,
            verdict=verdict,
            functions=self._functions,
        )

    # pickled as the plain text: a copy is no longer the checked one
    def __reduce__(self) -> tuple[type[str], tuple[str]]:
        return (str, (str(self),))


_MINT = object()
_ASCII_SPACE = " \t\n\r\f\v"  # what every engine takes for whitespace (not U+00A0)


def accept(
    text: str,
    dialect: str,
    functions: FunctionPolicy | None = None,
    *,
    where: str = "as read-only",
) -> Statement:
    """``text`` as a :class:`Statement` the guard accepted, or
    :class:`~sqlnb.errors.ReadOnlyViolation` with the guard's reason."""
    from sqlnb.sql.guard import check_read_only

    d = sqlglot_dialect(dialect)
    verdict = check_read_only(text, d, functions)
    if not verdict.read_only:
        raise errors.ReadOnlyViolation(
            f"Refused {where}: {verdict.reason}",
            reason=verdict.reason,
            dialect=d,
            hint="only single read-only queries run here; open a connection without --readonly to write",
        )
    return Statement(text, _token=_MINT, dialect=d, accepted=True, verdict=verdict, functions=functions)


def unchecked(text: str, dialect: str) -> Statement:
    """``text`` as the :class:`Statement` of a connection that may write: sent as written,
    not judged by the guard."""
    return Statement(text, _token=_MINT, dialect=sqlglot_dialect(dialect))


def _body_end(text: str, dialect: str) -> int:
    """Where the statement's last token ends: after it come only a semicolon, comments and
    whitespace."""
    from sqlnb.sql.text import scan

    end = 0
    for tok in scan(text, dialect):
        if (
            tok.kind == "semicolon"
            or tok.kind == "comment"
            or (tok.kind == "code" and not tok.text.strip(_ASCII_SPACE))
        ):
            continue
        end = tok.end if tok.kind != "code" else tok.start + len(tok.text.rstrip(_ASCII_SPACE))
    return end
