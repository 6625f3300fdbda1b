"""Database values in a JSON-safe form, the way ``sqlnb sql --json`` and the panel's result
previews carry them."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import math
from typing import Any

__all__ = ["json_value"]


def json_value(v: Any) -> Any:
    """A JSON-safe form of a database value (decimals as strings keep their precision)."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, (dt.datetime, dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, dt.timedelta):
        return v.total_seconds()
    if isinstance(v, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(v)).decode("ascii")
    if isinstance(v, (list, tuple)):
        return [json_value(x) for x in v]
    if isinstance(v, dict):
        return {str(k): json_value(x) for k, x in v.items()}
    return str(v)
