"""sqlnb: ask your database a question inside a Jupyter notebook."""

from __future__ import annotations

__version__ = "0.1.0"


def load_ipython_extension(ipython):  # %load_ext sqlnb
    from sqlnb.magics import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython):
    from sqlnb.magics import unload_ipython_extension as _unload

    _unload(ipython)
