"""Engine adapters behind one small contract (see :mod:`sqlnb.adapters.base`)."""

from __future__ import annotations

from typing import Any

from sqlnb.adapters.base import (Adapter, Catalog, Column, ForeignKey, Index, Result,
                                 ResultColumn, Table)
from sqlnb.adapters.spec import ConnectionSpec, ConnectOptions, Secret, parse_url, spec_for

__all__ = ["Adapter", "Catalog", "Column", "ConnectOptions", "ConnectionSpec", "ForeignKey",
           "Index", "Result", "ResultColumn", "Secret", "Table", "connect", "parse_url"]


def connect(target: str | ConnectionSpec, options: ConnectOptions | None = None,
            **option_overrides: Any) -> Adapter:
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
