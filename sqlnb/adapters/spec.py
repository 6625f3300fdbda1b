"""Connection URLs and options: parsing, credentials and redaction.

A :class:`ConnectionSpec` is what an adapter connects from.  Its password is a
:class:`Secret`, whose ``repr``/``str`` never show the value, and ``redacted_url()`` is the
only form of the URL that sqlnb ever prints.
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping
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

    def __copy__(self) -> "Secret":
        return self  # immutable

    def __deepcopy__(self, memo) -> "Secret":
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

    def replace(self, **changes: Any) -> "ConnectOptions":
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
        safe_params = {k: ("***" if _is_secret_key(k) else v) for k, v in self.params.items()}
        if safe_params:
            query = "?" + "&".join(f"{k}={v}" for k, v in safe_params.items())
        return f"{self.scheme}://{auth}{hostport}{path}{query}"

    def __repr__(self) -> str:
        return f"ConnectionSpec({self.redacted_url()!r})"

    def with_password(self, password: str | None) -> "ConnectionSpec":
        return dataclasses.replace(self, password=Secret(password) if password else None)


_SECRET_KEYS = re.compile(r"pass|secret|token|key", re.I)


def _is_secret_key(key: str) -> bool:
    return bool(_SECRET_KEYS.search(key))


def parse_url(url: str) -> ConnectionSpec:
    """Parse a connection URL.  Raises :class:`InvalidURLError` with a hint on bad input."""
    from sqlnb.adapters import registry  # late: registry imports this module

    if not isinstance(url, str) or not url.strip():
        raise InvalidURLError("Empty connection URL",
                              hint="use e.g. duckdb:///path/to.db or postgresql://user@host/db")
    url = url.strip()
    m = re.match(r"^([A-Za-z][A-Za-z0-9+.\-]*)://(.*)$", url, re.S)
    if not m:
        raise InvalidURLError(f"Malformed connection URL {_redact_raw(url)!r}",
                              hint="a URL looks like scheme://[user@]host[:port]/database, "
                                   "e.g. postgresql://analyst@localhost/sales or sqlite:///data.db")
    scheme = m.group(1).lower()
    scheme = SCHEME_ALIASES.get(scheme, scheme)
    registry.check_scheme(scheme)  # UnknownSchemeError listing the schemes sqlnb knows

    if scheme in ("sqlite", "duckdb"):
        return _parse_file_url(scheme, m.group(2))

    try:
        parts = urlsplit(f"{scheme}://{m.group(2)}")
        port = parts.port
    except ValueError as exc:
        raise InvalidURLError(f"Malformed connection URL {_redact_raw(url)!r}: {exc}",
                              hint="check the host and port (the port must be a number)") from None
    if not parts.hostname:
        raise InvalidURLError(f"Connection URL {_redact_raw(url)!r} has no host",
                              hint=f"use {scheme}://user@host/database")
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


def _parse_file_url(scheme: str, rest: str) -> ConnectionSpec:
    rest, _, query = rest.partition("?")
    params = dict(parse_qsl(query, keep_blank_values=True))
    if rest in ("", "/", ":memory:", "/:memory:"):
        return ConnectionSpec(scheme=scheme, database=None, params=params)
    if not rest.startswith("/"):
        raise InvalidURLError(
            f"Malformed {scheme} URL {scheme}://{rest!r}",
            hint=f"use {scheme}:///relative/path.db, {scheme}:////absolute/path.db "
                 f"or {scheme}:// for an in-memory database")
    path = unquote(rest[1:])  # sqlite:///rel.db -> rel.db ; sqlite:////abs.db -> /abs.db
    return ConnectionSpec(scheme=scheme, database=os.path.expanduser(path), params=params)


def _redact_raw(url: str) -> str:
    """Redact a password in a URL that could not be parsed properly."""
    return re.sub(r"(://[^:/@\s]*:)[^@/\s]*@", r"\1***@", url)


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
        return NamedConnection(name, resolve_credentials(parse_url(env_url), name), {})
    path = connections_file()
    if not path.exists():
        return None
    entries = _read_connections_file(path)
    entry = entries.get(name)
    if entry is None:
        return None
    if not isinstance(entry, dict) or "url" not in entry:
        raise ConfigurationError(f"Connection {name!r} in {path} has no url",
                                 hint='add a line: url = "postgresql://user@host/db"')
    spec = parse_url(str(entry["url"]))
    password = entry.get("password")
    if password is None and entry.get("password_env"):
        password = os.environ.get(str(entry["password_env"]))
        if password is None:
            raise ConfigurationError(
                f"Connection {name!r} reads its password from ${entry['password_env']}, "
                "which is not set", hint="export it before starting Jupyter")
    if password:
        spec = spec.with_password(str(password))
    options = {k: v for k, v in entry.items() if k in ("readonly", "statement_timeout", "connect_timeout")}
    return NamedConnection(name, resolve_credentials(spec, name), options)


def _read_connections_file(path: Path) -> dict[str, Any]:
    import tomllib

    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"Cannot read {path}: {exc}",
                                 hint="fix the TOML syntax of the connections file") from None
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
        names = known_names()
        raise UnknownConnectionError(
            f"No connection named {target!r}",
            hint=(f"configured names: {', '.join(names)}" if names else
                  f"give a URL such as duckdb:///data.db, or add [{target}] with a url to "
                  f"{connections_file()}"))
    return found
