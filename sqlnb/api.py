"""The Python API: ``sqlnb.ask(question, connection=None, model=None, ...)``.

In a notebook with ``%load_ext sqlnb`` it uses the notebook's connections and shares the
conversation with ``%%ask``; elsewhere ``connection`` is a URL or a configured name,
opened read-only for the call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlnb import errors
from sqlnb.adapters import Adapter
from sqlnb.kernel import kernel_session


def _shell():
    """The IPython shell this runs in, else None."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return None
    return get_ipython()


def _notebook_magics(shell):
    """The notebook's ``%%ask`` magic when sqlnb is loaded in ``shell``'s kernel, else None."""
    session = kernel_session(shell)
    return session.ask if session is not None else None


def ask(
    question: str,
    connection: str | Adapter | None = None,
    model: Any = None,
    *,
    max_iterations: int = 5,
    failure_cutoff: int = 3,
    no_review: bool = False,
    share_data: bool = True,
    preview_rows: int = 5,
    retry_drafts: int | None = None,
    first_drafts: int | None = None,
    use_memory: bool | None = None,
    agent=None,
    on_event: Callable[[dict], None] | None = None,
    require_readonly_role: bool | None = None,
    explain: bool | None = None,
):
    """Ask ``question`` of a database and return an :class:`~sqlnb.agent.runner.AskResult`
    (``.sql``, ``.status``, ``.attempts``, ``.df``).

    ``connection``: an open notebook connection's name (default: the active one), a URL
    or configured connection name, or an adapter from :func:`sqlnb.adapters.connect`.
    ``model``: a spec such as ``"anthropic:claude-sonnet-4-5"`` or a LangChain chat model
    (default: ``SQLNB_MODEL``, else Claude when ``ANTHROPIC_API_KEY`` is set).
    ``retry_drafts``: after a failed query, this many fresh drafts of the question run
    beside the model's correction and the result most agree on is kept (0: off; None: by
    the kind of model, 3 for a local one, 0 for a hosted one, which pays for every draft).
    ``first_drafts``: up to this many drafts of the first answer run beside the model's own
    reply until two agree, and the result most drafts gave is kept (0: off; None: 4 for a
    local model, 0 for a hosted one).  ``use_memory``: show the model the accepted answers of
    this database most like the question (None: the agent's setting, on by default; False:
    none).  ``require_readonly_role``: refuse (:class:`~sqlnb.errors.WritableRoleError`) when
    the connection's credentials may write or sqlnb cannot tell (None: the notebook's
    ``AskMagic.require_readonly_role``, off outside a notebook).  ``explain``: two to four
    grounded sentences on what the answer computed and assumes (``.explanation``; None: the
    notebook's ``AskMagic.explain``, on outside a notebook)."""
    from sqlnb.agent.runner import Agent
    from sqlnb.agent.settings import AgentSettings
    from sqlnb.display import show_answers

    shell = _shell()
    show_answers(shell)  # in a notebook, the answer shows as the %%ask one does
    magics = _notebook_magics(shell)
    if require_readonly_role is None:
        require_readonly_role = bool(getattr(magics, "require_readonly_role", False))
    if explain is None:
        explain = bool(getattr(magics, "explain", True))
    correct_findings = bool(getattr(magics, "correct_findings", True))
    settings = AgentSettings(
        share_data=share_data,
        preview_rows=max(0, preview_rows),
        retry_drafts=None if retry_drafts is None else max(0, retry_drafts),
        first_drafts=None if first_drafts is None else max(0, first_drafts),
        require_readonly_role=require_readonly_role,
        explain=explain,
        correct_findings=correct_findings,
    )
    kwargs = {
        "model": model,
        "max_iterations": max_iterations,
        "failure_cutoff": failure_cutoff,
        "no_review": no_review,
        "settings": settings,
        "on_event": on_event,
        "use_memory": use_memory,
    }
    if isinstance(connection, Adapter):
        return (agent or Agent()).ask(question, connection, connection="default", **kwargs)
    if magics is not None and (connection is None or connection in magics.manager.names()):
        entry = magics.manager.get_entry(connection)
        return (agent or magics.agent).ask(question, entry.adapter, connection=entry.name, **kwargs)
    if connection is None:
        raise errors.NoActiveConnectionError(
            "No connection to ask",
            hint="pass connection='duckdb:///data.duckdb' (a URL or a "
            "configured name), or %sqlnb connect in a notebook first",
        )
    from sqlnb.session import ConnectionManager

    manager = ConnectionManager()
    entry = manager.connect(connection, readonly=True, inspect=require_readonly_role)
    try:
        return (agent or Agent()).ask(question, entry.adapter, connection=entry.name, **kwargs)
    finally:
        manager.close_all()
