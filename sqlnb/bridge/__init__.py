"""The kernel side of sqlnb's JupyterLab panel: the ``sqlnb`` comm (docs/protocol.md).

:mod:`sqlnb.bridge.runs` runs a question in a thread and streams protocol events;
:mod:`sqlnb.bridge.comm` answers the panel's requests; :mod:`sqlnb.bridge.widget` is
``sqlnb.chat()``.  ``%load_ext sqlnb`` (``sqlnb.load_ipython_extension``) calls
:func:`register`.
"""

from __future__ import annotations


def register(ipython):
    """Register the ``sqlnb`` comm target with the kernel of ``ipython`` (no kernel, as in
    a plain IPython terminal: nothing to do)."""
    from sqlnb.bridge import comm

    return comm.register(ipython)


__all__ = ["register"]
