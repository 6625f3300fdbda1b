"""sqlnb: ask your database a question inside a Jupyter notebook."""

from __future__ import annotations

__version__ = "0.1.0"


def _preload_mysql_cext() -> None:
    """Load mysql-connector's C extension before pyarrow, when it is installed.

    Measured here (glibc 2.36, pyarrow 26): once pyarrow has loaded, importing
    ``_mysql_connector`` fails with "libstdc++.so.6: cannot allocate memory in static TLS
    block" and the driver can only fall back to pure Python (~3x slower).  Its vendored
    libssl also needs the system libssl loaded first (``import ssl``) or it fails with
    "OPENSSL_3.3.0 not found".  Importing both here, before sqlnb imports pyarrow, avoids
    both; in a notebook, ``import sqlnb`` / ``%load_ext sqlnb`` before ``import pandas``.
    """
    import importlib.util

    if importlib.util.find_spec("_mysql_connector") is None:
        return
    try:
        import ssl  # noqa: F401
        import _mysql_connector  # noqa: F401
    except ImportError:
        pass  # the MySQL adapter reports it (and falls back to pure Python) when used


_preload_mysql_cext()


def ask(question, connection=None, model=None, **options):
    """Ask a database a question; see :func:`sqlnb.api.ask`."""
    from sqlnb.api import ask as _ask

    return _ask(question, connection, model, **options)


def chat(connection=None, model=None):
    """The sqlnb chat as a widget in the output area (ipywidgets; for notebooks without
    the JupyterLab extension); see :mod:`sqlnb.bridge.widget`."""
    from sqlnb.bridge.widget import chat as _chat

    return _chat(connection, model)


def load_ipython_extension(ipython):  # %load_ext sqlnb
    from sqlnb.magics import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython):
    from sqlnb.magics import unload_ipython_extension as _unload

    _unload(ipython)


def _jupyter_labextension_paths():  # `jupyter labextension develop .` links the built sidebar
    return [{"src": "labextension", "dest": "sqlnb"}]
