"""IPython front doors: ``%load_ext sqlnb`` registers ``%sqlnb``, ``%%sql``, ``%sql`` and
``%%ask``."""

from __future__ import annotations

from sqlnb.magics.ask import AskMagic
from sqlnb.magics.sql import SqlMagic

__all__ = ["AskMagic", "SqlMagic", "load_ipython_extension", "unload_ipython_extension"]


def load_ipython_extension(ipython) -> None:
    """Register sqlnb in ``ipython``; idempotent, so that the JupyterLab panel can load it
    (``sqlnb.load_ipython_extension(get_ipython())``) before the notebook's own
    ``%load_ext sqlnb`` runs, which then neither says "already loaded" nor loses the
    connections opened meanwhile."""
    if getattr(ipython, "_sqlnb_magics", None) is not None:
        return
    magics = SqlMagic(shell=ipython)
    ipython.register_magics(magics)
    if magics not in ipython.configurables:
        ipython.configurables.append(magics)
    ipython._sqlnb_magics = magics
    ask = AskMagic(shell=ipython, manager=magics.manager)
    ipython.register_magics(ask)
    if ask not in ipython.configurables:
        ipython.configurables.append(ask)
    ipython._sqlnb_ask = ask
    from sqlnb.bridge import register

    register(ipython)  # the JupyterLab panel's comm target (nothing without a kernel)


def unload_ipython_extension(ipython) -> None:
    magics = getattr(ipython, "_sqlnb_magics", None)
    if magics is not None:
        magics.manager.close_all()
        ipython._sqlnb_magics = None  # %reload_ext: the next load starts afresh
