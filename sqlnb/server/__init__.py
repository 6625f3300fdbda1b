"""sqlnb's Jupyter server extension: the offline model loaded once per Jupyter server.

When the Jupyter server starts and the offline model is the one sqlnb would use (``SQLNB_MODEL``
names a ``llamacpp:`` model, or no model is configured and ``qwen2.5-coder-1.5b`` is
downloaded), the extension starts llama.cpp's server in the background
(:class:`~sqlnb.server.process.ModelProcess`) and tells its kernels where it is
(``$SQLNB_MODEL_SERVER_FILE``); every notebook then shares one loaded model, which stays
loaded across kernel restarts and stops with the Jupyter server.  ``GET /sqlnb/model`` says
how it is doing (``state``: ``off``, ``none``, ``loading``, ``ready`` or ``failed``).

Turned off by ``SQLNB_MODEL_SERVER=off`` or ``c.SqlnbModelServer.enabled = False``.
Enabled by the ``jupyter_server_config.d/sqlnb.json`` that sqlnb installs.
"""

from __future__ import annotations

from typing import Any

__all__ = ["_jupyter_server_extension_points", "_load_jupyter_server_extension"]


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "sqlnb.server"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    from sqlnb.server.extension import load

    load(serverapp)


# the name jupyter_server looked for before 2.0
load_jupyter_server_extension = _load_jupyter_server_extension
