"""IPython front doors: ``%load_ext sqlnb`` registers ``%sqlnb``, ``%%sql`` and ``%sql``."""

from __future__ import annotations

from sqlnb.magics.sql import SqlMagic

__all__ = ["SqlMagic", "load_ipython_extension", "unload_ipython_extension"]


def load_ipython_extension(ipython) -> None:
    magics = SqlMagic(shell=ipython)
    ipython.register_magics(magics)
    if magics not in ipython.configurables:
        ipython.configurables.append(magics)
    ipython._sqlnb_magics = magics


def unload_ipython_extension(ipython) -> None:
    magics = getattr(ipython, "_sqlnb_magics", None)
    if magics is not None:
        magics.manager.close_all()
