"""Engine adapters behind one small contract (see :mod:`sqlnb.adapters.base`).

The package: ``base`` (the :class:`Adapter` contract), one module per engine, ``result``
(results and the Arrow conversion), ``catalog`` (tables, columns and keys), ``classify``
(driver errors to :mod:`sqlnb.errors`), ``scrub`` (passwords out of messages and logs),
``spec`` (URLs, options and credentials), ``privileges`` (can this login write?),
``interrupt`` and ``registry``.
"""

from __future__ import annotations

from typing import Any

from sqlnb.adapters.base import Adapter
from sqlnb.adapters.catalog import Catalog, Column, ForeignKey, Index, Table
from sqlnb.adapters.result import Result, ResultColumn
from sqlnb.adapters.spec import ConnectionSpec, ConnectOptions, Secret, parse_url, spec_for

__all__ = [
    "Adapter",
    "Catalog",
    "Column",
    "ConnectOptions",
    "ConnectionSpec",
    "ForeignKey",
    "Index",
    "Result",
    "ResultColumn",
    "Secret",
    "Table",
    "connect",
    "parse_url",
]


def connect(
    target: str | ConnectionSpec, options: ConnectOptions | None = None, **option_overrides: Any
) -> Adapter:
    """Open a connection from a URL, a configured connection name or a parsed spec."""
    from sqlnb.adapters.registry import adapter_class

    named_options: dict[str, Any] = {}
    if isinstance(target, ConnectionSpec):
        spec = target
    else:
        named = spec_for(target)
        spec, named_options = named.spec, named.options
    opts = options or ConnectOptions()
    merged = {**named_options, **{k: v for k, v in option_overrides.items() if v is not None}}
    if merged:
        opts = opts.replace(**merged)
    return adapter_class(spec.scheme)(spec, opts)
