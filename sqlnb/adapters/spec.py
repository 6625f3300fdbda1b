"""Connection URLs and options: parsing, credentials and redaction.

A :class:`ConnectionSpec` is what an adapter connects from.  Its password is a
:class:`Secret`, whose ``repr``/``str`` never show the value, and ``redacted_url()`` is the
only form of the URL that sqlnb ever prints.  A URL that does not parse (or a target that is
not a name) is only ever shown as :func:`redact_url` gives it: nothing between ``scheme:``
and the last ``@``, whatever the URL looks like.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from sqlnb.errors import ConfigurationError, InvalidURLError, UnknownConnectionError


class Secret:
    """A credential that never shows itself in a repr, a log or a traceback."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __bool__(self) -> bool:
        return bool(self._value)

    def __reduce__(self):
        # a pickle (or anything built on it) would carry the value in clear text
        raise TypeError("a Secret cannot be pickled: it would write the password out")

    def __copy__(self) -> Secret:
        return self  # immutable

    def __deepcopy__(self, memo) -> Secret:
        return self


def revealed(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Driver keyword arguments with every :class:`Secret` revealed: call it in the driver
    call itself, so the clear-text password lives only as long as that call."""
    return {k: v.reveal() if isinstance(v, Secret) else v for k, v in kwargs.items()}


@dataclass(frozen=True)
class ConnectOptions:
    """Session options every adapter honours."""

    readonly: bool = False
    statement_timeout: float | None = 30.0  # seconds; None or 0 = no timeout
    connect_timeout: float = 10.0  # seconds
    # Use the engine's Arrow fast path for large results where it has one (ADBC,
    # connectorx, fetch_pandas_all); False forces the plain driver path.
    arrow: bool = True

    def replace(self, **changes: Any) -> ConnectOptions:
        return dataclasses.replace(self, **changes)


SCHEME_ALIASES = {
    "postgres": "postgresql",
    "postgresql+psycopg": "postgresql",
    "pg": "postgresql",
    "mariadb": "mysql",
    "mysql+mysqlconnector": "mysql",
    "sqlite3": "sqlite",
}


@dataclass(frozen=True)
class ConnectionSpec:
    scheme: str
    host: str | None = None
    port: int | None = None
    user: str | None = None
    password: Secret | None = field(default=None, repr=False)
    database: str | None = None  # a file path for sqlite/duckdb, else a database name
    path: tuple[str, ...] = ()  # remaining path segments (e.g. snowflake schema)
    params: Mapping[str, str] = field(default_factory=dict)

    def redacted_url(self) -> str:
        """The URL with any password replaced by ``***``; safe to print."""
        if self.scheme in ("sqlite", "duckdb"):
            return f"{self.scheme}://" + (f"/{self.database}" if self.database else "")
        auth = ""
        if self.user:
            auth = quote(self.user, safe="")
            if self.password:
                auth += ":***"
            auth += "@"
        hostport = self.host or ""
        if self.port:
            hostport += f":{self.port}"
        segments = [s for s in ((self.database,) + self.path) if s]
        path = "/" + "/".join(segments) if segments else ""
        query = ""
        safe_params = {k: ("***" if is_secret_key(k) else v) for k, v in self.params.items()}
        if safe_params:
            query = "?" + "&".join(f"{k}={v}" for k, v in safe_params.items())
        return f"{self.scheme}://{auth}{hostport}{path}{query}"

    def __repr__(self) -> str:
        return f"ConnectionSpec({self.redacted_url()!r})"

    def with_password(self, password: str | None) -> ConnectionSpec:
        return dataclasses.replace(self, password=Secret(password) if password else None)


_SECRET_KEYS = re.compile(r"pass|secret|token|key", re.I)


def is_secret_key(key: str) -> bool:
    """Whether a connection parameter named ``key`` holds a secret (never shown)."""
    return bool(_SECRET_KEYS.search(key))


_ENCODE_HINT = (
    "percent-encode the password in a URL: / is %2F, ? is %3F, # is %23, @ is %40, "
    "a space %20 (urllib.parse.quote(password, safe='')), or keep the password out "
    "of the URL: connections.toml, SQLNB_<NAME>_PASSWORD or the keyring"
)


def parse_url(url: str) -> ConnectionSpec:
    """Parse a connection URL.  Raises :class:`InvalidURLError` with a hint on bad input.

    No message ever holds the URL itself: only :func:`redact_url`'s form of it, which never
    shows what could be a password."""
    from sqlnb.adapters import registry  # late: registry imports this module

    if not isinstance(url, str) or not url.strip():
        raise InvalidURLError(
            "Empty connection URL", hint="use e.g. duckdb:///path/to.db or postgresql://user@host/db"
        )
    url = url.strip()
    if re.search(r"[\x00-\x1f\x7f]", url):  # urlsplit would silently drop tabs and line breaks
        raise InvalidURLError(
            f"Malformed connection URL {_redact_unparsed(url)!r}: it holds a tab, "
            "line break or other control character",
            hint=_ENCODE_HINT,
        )
    m = re.match(r"^([A-Za-z][A-Za-z0-9+.\-]*)://(.*)$", url, re.S)
    if not m:
        raise InvalidURLError(
            f"Malformed connection URL {_redact_unparsed(url)!r}",
            hint="a URL looks like scheme://[user@]host[:port]/database, "
            "e.g. postgresql://analyst@localhost/sales or sqlite:///data.db",
        )
    scheme = m.group(1).lower()
    scheme = SCHEME_ALIASES.get(scheme, scheme)
    registry.check_scheme(scheme)  # UnknownSchemeError listing the schemes sqlnb knows

    if scheme in ("sqlite", "duckdb"):
        return _parse_file_url(scheme, m.group(2), url)

    parts = port = None
    try:
        parts = urlsplit(f"{scheme}://{m.group(2)}")
        port = parts.port
    except ValueError:
        parts = None  # raised below, outside this block: the ValueError (whose text can
        # hold the password) must not stay behind as the error's __context__
    if parts is None:
        raise InvalidURLError(
            f"Malformed connection URL {_redact_unparsed(url)!r}: the host or port cannot be read",
            hint="check the host, and that the port is a number; " + _ENCODE_HINT,
        )
    if "@" in parts.path + parts.query + parts.fragment:
        # e.g. postgresql://ann:12/x@db/sales: a password holding / ? or # ended the host early
        raise InvalidURLError(
            f"Malformed connection URL {_redact_unparsed(url)!r}: an @ after the host", hint=_ENCODE_HINT
        )
    if not parts.hostname:
        raise InvalidURLError(
            f"Connection URL {_redact_unparsed(url)!r} has no host", hint=f"use {scheme}://user@host/database"
        )
    segments = tuple(unquote(s) for s in parts.path.split("/") if s)
    params = dict(parse_qsl(parts.query, keep_blank_values=True))
    password = params.pop("password", None)
    if parts.password is not None:
        password = unquote(parts.password)
    return ConnectionSpec(
        scheme=scheme,
        host=parts.hostname,
        port=port,
        user=unquote(parts.username) if parts.username else None,
        password=Secret(password) if password else None,
        database=segments[0] if segments else None,
        path=segments[1:],
        params=params,
    )


def _parse_file_url(scheme: str, rest: str, url: str) -> ConnectionSpec:
    rest, _, query = rest.partition("?")
    params = dict(parse_qsl(query, keep_blank_values=True))
    if rest in ("", "/", ":memory:", "/:memory:"):
        return ConnectionSpec(scheme=scheme, database=None, params=params)
    if not rest.startswith("/"):
        raise InvalidURLError(
            f"Malformed {scheme} URL {_redact_unparsed(url)!r}",
            hint=f"use {scheme}:///relative/path.db, {scheme}:////absolute/path.db "
            f"or {scheme}:// for an in-memory database",
        )
    path = unquote(rest[1:])  # sqlite:///rel.db -> rel.db ; sqlite:////abs.db -> /abs.db
    return ConnectionSpec(scheme=scheme, database=os.path.expanduser(path), params=params)


def redact_url(url: str) -> str:
    """The form of a connection URL (or of anything given where one was expected) that
    sqlnb shows: scheme, user, host, port and database of a URL that parses, with any
    password as ``***``; for anything else :func:`_redact_unparsed`'s form, which hides more."""
    try:
        spec = parse_url(url)
    except (ConfigurationError, ValueError, TypeError):
        return _redact_unparsed(url)
    return spec.redacted_url()


def _redact_unparsed(url: str) -> str:
    """A URL that did not parse, with nothing shown that could be a password.

    Everything between ``scheme:`` (and its slashes) and the last ``@`` is ``***`` (the user
    too: in a malformed URL it cannot be told from the password); without an ``@``, whatever
    follows a ``:`` that is not a port number is ``***`` up to the end; a query or fragment is
    ``***`` (and a ``password=`` anywhere ends what is shown)."""
    text = str(url).strip()
    secret = re.search(r"[?&;#][^=&#]*(?:pass|secret|token|key|pwd)[^=&#]*=", text, re.I)
    if secret:  # ?password=... : hidden, and all that follows (it may hold & or @)
        text = text[: secret.end()]
    m = re.match(r"([A-Za-z][A-Za-z0-9+.\-]*):(/*)", text)
    if m and (m.group(2) or _known_scheme(m.group(1))):
        head, rest = text[: m.end()], text[m.end() :]
    else:  # no scheme: "ann:pw" is not the scheme "ann"
        m = re.match(r"/*", text)
        head, rest = m.group(0), text[m.end() :]
    if "@" in rest:
        return f"{head}***@{_hide_query(rest.rpartition('@')[2])}"
    authority = re.match(r"[^/?#]*", rest).group(0)
    if authority.startswith("[") and "]" in authority:  # [IPv6]:port
        host, _, after = authority.partition("]")
        host += "]"
        if after and not after.startswith(":"):
            return f"{head}{host}***"
        colon, port = after[:1], after[1:]
    else:
        host, colon, port = authority.partition(":")
    if colon and not (re.fullmatch(r"[0-9]{1,5}", port) and int(port) <= 65535):
        return f"{head}{host}:***"  # maybe user:password: hide it and all that follows
    return head + _hide_query(rest)


def _known_scheme(name: str) -> bool:
    from sqlnb.adapters import registry  # late: registry imports this module

    name = name.lower()
    return SCHEME_ALIASES.get(name, name) in registry.ADAPTERS


def _hide_query(text: str) -> str:
    m = re.search(r"[?#;&]", text)
    return text if m is None else f"{text[: m.start()]}{m.group(0)}***"


def shown_name(target: str) -> str:
    """``target`` as a connection name in a message: as given when it looks like one,
    else :func:`redact_url`'s form (it may be a URL with a password in it)."""
    target = str(target)
    if re.fullmatch(r"[A-Za-z0-9_.\-]{1,200}", target):
        return target
    return redact_url(target)


def hide_unrecognized(message: str) -> str:
    """argparse's "unrecognized arguments: ..." without the arguments themselves: an
    unquoted URL whose password holds a space arrives in pieces, and the pieces are the
    password.  Options (``--x``) are still named."""
    head, sep, rest = message.partition("unrecognized arguments:")
    if not sep:
        return message
    words = rest.split()
    options = [w for w in words if re.fullmatch(r"--[a-z][a-z0-9\-]{0,29}", w)]
    others = len(words) - len(options)
    shown = options + (
        [
            f"{others} more word{'s' * (others != 1)} (not shown: they may be part "
            "of a password; quote a URL that holds spaces)"
        ]
        if others
        else []
    )
    return f"{head}{sep} {', '.join(shown)}"


# ---------------------------------------------------------------------------
# Named connections: ~/.sqlnb/connections.toml, environment and keyring
# ---------------------------------------------------------------------------


def connections_file() -> Path:
    return Path(os.environ.get("SQLNB_CONNECTIONS_FILE", "~/.sqlnb/connections.toml")).expanduser()


@dataclass(frozen=True)
class NamedConnection:
    name: str
    spec: ConnectionSpec
    options: dict[str, Any]


def _env_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "_", name).upper()


def lookup_named(name: str) -> NamedConnection | None:
    """Find a connection by name: ``SQLNB_<NAME>_URL`` or the connections file."""
    env_url = os.environ.get(f"SQLNB_{_env_name(name)}_URL")
    if env_url:
        spec = _parse_url_from(env_url, "$SQLNB_" + _env_name(name) + "_URL")
        return NamedConnection(name, resolve_credentials(spec, name), {})
    path = connections_file()
    if not path.exists():
        return None
    entries = _read_connections_file(path)
    entry = entries.get(name)
    if entry is None:
        return None
    if not isinstance(entry, dict) or "url" not in entry:
        raise ConfigurationError(
            f"Connection {name!r} in {path} has no url", hint='add a line: url = "postgresql://user@host/db"'
        )
    spec = _parse_url_from(str(entry["url"]), f"connection {name!r} in {path}")
    password = entry.get("password")
    if password is None and entry.get("password_env"):
        password = os.environ.get(str(entry["password_env"]))
        if password is None:
            raise ConfigurationError(
                f"Connection {name!r} reads its password from ${entry['password_env']}, which is not set",
                hint="export it before starting Jupyter",
            )
    if password:
        spec = spec.with_password(str(password))
    options = {k: v for k, v in entry.items() if k in ("readonly", "statement_timeout", "connect_timeout")}
    return NamedConnection(name, resolve_credentials(spec, name), options)


def _parse_url_from(url: str, where: str) -> ConnectionSpec:
    """:func:`parse_url`, its errors saying where the URL came from."""
    try:
        return parse_url(url)
    except ConfigurationError as exc:
        error = exc
    error.message = f"{error.message} ({where})"
    error.args = (error.message,)
    raise error


def _read_connections_file(path: Path) -> dict[str, Any]:
    import tomllib

    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        # tomllib quotes the characters it stumbles on, which may be a password's
        why = re.sub(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"", "…", str(exc))
        raise ConfigurationError(
            f"Cannot read {path}: {why}", hint="fix the TOML syntax of the connections file"
        ) from None
    if isinstance(data.get("connections"), dict):  # [connections.NAME] layout
        data = data["connections"]
    return data


def known_names() -> list[str]:
    path = connections_file()
    names = list(_read_connections_file(path)) if path.exists() else []
    names += [k[6:-4].lower() for k in os.environ if k.startswith("SQLNB_") and k.endswith("_URL")]
    return sorted(set(names))


ENGINE_PASSWORD_ENV = {
    "postgresql": "PGPASSWORD",
    "redshift": "REDSHIFT_PASSWORD",
    "mysql": "MYSQL_PWD",
    "snowflake": "SNOWFLAKE_PASSWORD",
}


def resolve_credentials(spec: ConnectionSpec, name: str | None = None) -> ConnectionSpec:
    """Fill in a missing password from environment or keyring (in that order)."""
    if spec.password or spec.scheme in ("sqlite", "duckdb"):
        return spec
    candidates = []
    if name:
        candidates.append(f"SQLNB_{_env_name(name)}_PASSWORD")
    if spec.scheme in ENGINE_PASSWORD_ENV:
        candidates.append(ENGINE_PASSWORD_ENV[spec.scheme])
    for var in candidates:
        if os.environ.get(var):
            return spec.with_password(os.environ[var])
    password = _keyring_password(spec, name)
    return spec.with_password(password) if password else spec


def _keyring_password(spec: ConnectionSpec, name: str | None) -> str | None:
    if os.environ.get("SQLNB_NO_KEYRING"):
        return None
    try:
        import keyring  # optional
    except ImportError:
        return None
    keys = [k for k in (name, f"{spec.user}@{spec.host}" if spec.user else None) if k]
    for key in keys:
        try:
            value = keyring.get_password("sqlnb", key)
        except Exception:  # no usable backend: keyring is optional
            return None
        if value:
            return value
    return None


def spec_for(target: str) -> NamedConnection:
    """A URL or the name of a configured connection."""
    if "://" in target:
        return NamedConnection("", resolve_credentials(parse_url(target)), {})
    found = lookup_named(target)
    if found is None:
        if re.match(r"[A-Za-z][A-Za-z0-9+.\-]*:", target) or "@" in target:
            # a URL with a typo (postgresql:/..., user:password@host): never echoed as a name
            raise InvalidURLError(
                f"Malformed connection URL {_redact_unparsed(target)!r}",
                hint="a URL looks like scheme://[user@]host[:port]/database, e.g. "
                "postgresql://analyst@localhost/sales or sqlite:///data.db; "
                "or give the name of a configured connection",
            )
        names = known_names()
        shown = shown_name(target)
        raise UnknownConnectionError(
            f"No connection named {shown!r}",
            hint=(
                f"configured names: {', '.join(names)}"
                if names
                else f"give a URL such as duckdb:///data.db, or add [{shown}] with a url to "
                f"{connections_file()}"
            ),
        )
    return found
