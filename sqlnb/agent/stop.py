"""Stopping a turn from another thread: the panel's Stop button, a chat widget's.

A :class:`StopToken` is handed to :meth:`sqlnb.agent.runner.Agent.ask`.  Calling
:meth:`StopToken.stop` (from any thread) wakes the model call in flight (the
:class:`~sqlnb.agent.models.ModelClient` waits on the token beside its deadline), cancels
the statement that runs at that moment (the runner registers ``adapter.cancel`` as a
callback only while one of the agent's statements holds the connection), and the graph
ends the turn with status ``stopped`` at its next decision.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["StopToken"]


class StopToken:
    """A one-way flag: once stopped, stopped for good.  Thread-safe.

    Callbacks run once, in the thread that calls :meth:`stop` (or at once, in the
    registering thread, when the token is already stopped).  A callback that raises does
    not keep the others from running.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._event = threading.Event()
        self._callbacks: list[Callable[[], None]] = []

    @property
    def stopped(self) -> bool:
        return self._event.is_set()

    def stop(self) -> None:
        """Stop (idempotent): the callbacks registered so far run now, once."""
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for fn in callbacks:
            _call(fn)

    def add_callback(self, fn: Callable[[], None]) -> None:
        """Run ``fn()`` on stop; at once when the token is already stopped."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(fn)
                return
        _call(fn)

    def remove_callback(self, fn: Callable[[], None]) -> None:
        """Forget ``fn`` (no error when it is not registered or already ran)."""
        with self._lock:
            try:
                self._callbacks.remove(fn)
            except ValueError:
                pass

    def wait(self, timeout: float | None = None) -> bool:
        """Sleep until stopped or ``timeout`` seconds passed; True when stopped."""
        return self._event.wait(timeout)

    def __repr__(self) -> str:
        return f"<StopToken {'stopped' if self.stopped else 'running'}>"


def _call(fn: Callable[[], None]) -> None:
    try:
        fn()
    except Exception:
        pass
