"""sqlnb: ask your database a question inside a Jupyter notebook.

The package root imports only its version at import time: each front door (``ask``,
``chat``, ``chart``, ``%load_ext sqlnb``) imports its module when it is called, so ``import
sqlnb.agent`` or ``import sqlnb.adapters`` never loads IPython, the magics or the bridge.
"""

from __future__ import annotations

from sqlnb._version import __version__

__all__ = ["__version__", "ask", "chart", "chat", "load_ipython_extension", "unload_ipython_extension"]


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
    from sqlnb import api

    return api.ask(question, connection, model, **options)


def chart(df):
    """A query's result drawn as a chart in the notebook (Vega-Lite, which JupyterLab
    renders itself): ``%%sql -o df`` then ``sqlnb.chart(df)``.  A bar chart for a category
    and a measure, a line chart for a time and measures; see :func:`sqlnb.charts.chart`."""
    from sqlnb import charts

    return charts.chart(df)


def chat(connection=None, model=None):
    """The sqlnb chat as a widget in the output area (ipywidgets; for notebooks without
    the JupyterLab extension); see :mod:`sqlnb.bridge.widget`."""
    from sqlnb.bridge import widget

    return widget.chat(connection, model)


def load_ipython_extension(ipython):  # %load_ext sqlnb
    """Register the magics (``%sqlnb``, ``%%sql``, ``%sql``, ``%%ask``) and the JupyterLab
    panel's comm target in ``ipython`` (idempotent)."""
    from sqlnb import bridge, magics

    magics.load_ipython_extension(ipython)
    bridge.register(ipython)  # the panel's comm target (nothing without a kernel)


def unload_ipython_extension(ipython):
    from sqlnb import magics

    magics.unload_ipython_extension(ipython)


def _jupyter_labextension_paths():  # `jupyter labextension develop .` links the built sidebar
    return [{"src": "labextension", "dest": "sqlnb"}]
