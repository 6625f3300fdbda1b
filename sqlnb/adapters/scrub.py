"""Passwords kept out of what sqlnb shows: error messages, and the drivers' log records.

:func:`scrub` replaces a connection's password (and its URL-encoded forms, which drivers
that take a URL may echo) with ``***`` in a text.  :func:`watch_password` and
:func:`filter_driver_logs` put a logging filter on a driver's loggers that does the same
for every record they log while the connection lives (e.g. a driver echoing a server error
at DEBUG).
"""

from __future__ import annotations

import logging
import weakref
from typing import Any
from urllib.parse import quote

from sqlnb.adapters.spec import Secret


def scrub(text: str, password: Secret | None) -> str:
    """``text`` with ``password``, plain or URL-encoded, replaced by ``***``."""
    pw = password.reveal() if password else None
    if pw and len(pw) >= 1:
        # also its URL-encoded form: drivers that take a URL may echo it
        for form in {pw, quote(pw, safe=""), quote(pw)}:
            text = text.replace(form, "***")
    return text


# Connections (anything with ``spec.password``: the adapters, open or connecting) whose
# password the drivers' log records must not show.
_WATCHED: weakref.WeakSet[Any] = weakref.WeakSet()
_FILTERED_LOGGERS: set[str] = set()


def watch_password(connection: Any) -> None:
    """Keep ``connection.spec.password`` out of every log record that passes the filter of
    :func:`filter_driver_logs`, for as long as ``connection`` lives."""
    _WATCHED.add(connection)


class _ScrubSecretsFilter:
    """A logging filter for the drivers' loggers: a record whose text holds the password of
    a watched connection gets it replaced by ``***``.  Filters run only for records that
    are logged at all, so this costs nothing while the drivers' DEBUG logging is off."""

    def filter(self, record: logging.LogRecord) -> bool:
        passwords = [c.spec.password for c in list(_WATCHED) if c.spec.password]
        if not passwords:
            return True
        try:
            text = record.getMessage()
        except Exception:
            return True
        scrubbed = text
        for password in passwords:
            scrubbed = scrub(scrubbed, password)
        if scrubbed != text:
            record.msg, record.args = scrubbed, None
        return True


_SCRUB_FILTER = _ScrubSecretsFilter()


def filter_driver_logs(package: str) -> None:
    """Put the scrubbing filter on every logger of ``package`` that exists now (filters are
    not inherited: each module logger needs its own)."""
    names = [
        n
        for n in list(logging.root.manager.loggerDict)
        if (n == package or n.startswith(package + ".")) and n not in _FILTERED_LOGGERS
    ]
    for name in names:
        logging.getLogger(name).addFilter(_SCRUB_FILTER)
        _FILTERED_LOGGERS.add(name)
