"""sqlnb's state in one IPython kernel: one :class:`KernelSession` per shell, attached under
one attribute and found with :func:`kernel_session`.

It holds what ``%load_ext sqlnb`` registers (the ``%sqlnb``/``%%sql`` magics, which own the
notebook's connections, and the ``%%ask`` magic, which owns the agent) and the JupyterLab
panel's :class:`~sqlnb.bridge.comm.Bridge`.  The front doors (the magics, ``sqlnb.ask()``,
``sqlnb.chat()``, the bridge) find each other through it, never through attributes of their
own on the shell.

    session = kernel_session(get_ipython())
    if session is not None and session.loaded:
        session.magics.manager.names()
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["KernelSession", "kernel_session"]

# the one attribute sqlnb sets on an IPython shell
ATTRIBUTE = "sqlnb_session"


@dataclass
class KernelSession:
    """What sqlnb keeps in one kernel.

    ``magics`` (a :class:`~sqlnb.magics.sql.SqlMagic`) and ``ask`` (an
    :class:`~sqlnb.magics.ask.AskMagic`) are set while the extension is loaded (None before
    ``%load_ext sqlnb`` and after ``%unload_ext sqlnb``); ``bridge`` (a
    :class:`~sqlnb.bridge.comm.Bridge`) once the panel's comm target is registered (it
    outlives a reload: the comm target stays registered).  This module imports none of them:
    every front door may import it, and it leads to no other."""

    shell: Any
    magics: Any = None
    ask: Any = None
    bridge: Any = None

    @property
    def loaded(self) -> bool:
        """Whether ``%load_ext sqlnb`` has run (and no ``%unload_ext sqlnb`` since)."""
        return self.magics is not None

    def unload(self) -> None:
        """Forget the magics (``%unload_ext``, ``%reload_ext``): the next load starts afresh.
        The caller closes their connections first."""
        self.magics = None
        self.ask = None


def kernel_session(shell: Any, *, create: bool = False) -> KernelSession | None:
    """The :class:`KernelSession` of ``shell`` (None when sqlnb never set one up there,
    unless ``create``; None for a None shell)."""
    if shell is None:
        return None
    session = getattr(shell, ATTRIBUTE, None)
    if session is None and create:
        session = KernelSession(shell)
        setattr(shell, ATTRIBUTE, session)
    return session
