"""IPython front doors: ``%load_ext sqlnb`` registers ``%sqlnb``, ``%%sql``, ``%sql`` and
``%%ask``."""

from __future__ import annotations

from sqlnb.display import show_answers
from sqlnb.kernel import kernel_session
from sqlnb.magics.ask import AskMagic
from sqlnb.magics.sql import SqlMagic

__all__ = ["AskMagic", "SqlMagic", "load_ipython_extension", "unload_ipython_extension"]


def load_ipython_extension(ipython) -> None:
    """Register the magics in ``ipython`` (``sqlnb.load_ipython_extension``, which
    ``%load_ext sqlnb`` calls, also registers the panel's comm target); idempotent, so that
    the JupyterLab panel can load sqlnb (``sqlnb.load_ipython_extension(get_ipython())``)
    before the notebook's own ``%load_ext sqlnb`` runs, which then neither says "already
    loaded" nor loses the connections opened meanwhile.  What it registers is kept in the
    shell's :class:`~sqlnb.kernel.KernelSession`.  An answer (``%%ask``'s value, or
    ``sqlnb.ask()``'s) shows as :func:`sqlnb.display.show_answers` registers."""
    show_answers(ipython)
    session = kernel_session(ipython, create=True)
    if session.loaded:
        return
    magics = SqlMagic(shell=ipython)
    ipython.register_magics(magics)
    if magics not in ipython.configurables:
        ipython.configurables.append(magics)
    session.magics = magics
    ask = AskMagic(shell=ipython, manager=magics.manager)
    ipython.register_magics(ask)
    if ask not in ipython.configurables:
        ipython.configurables.append(ask)
    session.ask = ask


def unload_ipython_extension(ipython) -> None:
    session = kernel_session(ipython)
    if session is not None and session.magics is not None:
        session.magics.manager.close_all()
        session.unload()  # %reload_ext: the next load starts afresh
