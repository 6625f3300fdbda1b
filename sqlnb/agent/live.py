"""What a turn shows while it works: the phase it is in and the model's text as it is written.

:class:`Live` turns a turn's model calls and statements into ``phase`` and ``text`` events for
the front doors (the panel, the widget, ``%%ask``):

- ``{"type": "phase", "phase": "writing", "call": 3, "purpose": "draft", "draft": 2,
  "drafts": 4}``: a model call starts (``purpose``: ``answer``, ``draft`` or ``explain``;
  ``draft``/``drafts``: which draft of how many at most);
- ``{"type": "phase", "phase": "running"}``: a query of the agent's starts;
- ``{"type": "phase", "phase": "checking"}``: the answer's checks start;
- ``{"type": "text", "call": 3, "offset": 120, "text": "..."}``: the text of call 3 from
  character ``offset`` on (``offset`` 0 after a retry: the text so far is void).

Text comes in pieces at most every :data:`TEXT_EVERY` seconds from the call's start (and at
the end of the call), so a fast model does not flood the kernel's channel.  Pieces that arrive after their call
returned (a stopped call's worker thread writing on) are dropped.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["TEXT_EVERY", "Live", "LiveClient"]

Event = dict[str, Any]
TEXT_EVERY = 0.1  # s between two text events of one call


class Live:
    """The live events of one turn, sent through ``emit`` (thread-safe: model calls write
    from worker threads)."""

    def __init__(
        self, emit: Callable[[Event], None], *, drafts: int = 0, clock: Callable[[], float] = time.monotonic
    ):
        self._emit, self._clock = emit, clock
        self._lock = threading.Lock()
        self.drafts = max(0, int(drafts))  # the most drafts a turn draws (for "2 of 4")
        self.calls = 0
        self.draft = 0

    def emit(self, event: Event) -> None:
        with self._lock:
            self._emit(event)

    def phase(self, phase: str, **info: Any) -> None:
        self.emit({"type": "phase", "phase": phase, **info})

    def client(self, client: Any) -> LiveClient:
        return LiveClient(client, self)

    def call(self, purpose: str) -> _Call:
        """A model call starts: its ``writing`` phase event, and where its text goes."""
        with self._lock:
            self.calls += 1
            info: Event = {"call": self.calls, "purpose": purpose}
            if purpose == "draft":
                self.draft += 1
                info["draft"] = self.draft
                if self.drafts:
                    info["drafts"] = max(self.drafts, self.draft)
        self.phase("writing", **info)
        return _Call(self, self.calls)


class _Call:
    """One model call's text: handed to the model client as its ``on_text``."""

    def __init__(self, live: Live, n: int):
        self._live, self.n = live, n
        self._lock = threading.Lock()
        self._sent = 0  # characters sent
        self._held = ""  # written, not sent yet
        # the first piece waits too: a reply written within TEXT_EVERY goes as one event
        self._last = live._clock()
        self.closed = False

    def __call__(self, piece: str, *, restart: bool = False) -> None:
        with self._lock:
            if self.closed:
                return
            if restart:
                self._sent, self._held, self._last = 0, "", float("-inf")
                self._send_locked(force=True)
                return
            self._held += piece
            if self._live._clock() - self._last >= TEXT_EVERY:
                self._send_locked()

    def close(self) -> None:
        """The call returned: what is held is sent, and nothing after."""
        with self._lock:
            if not self.closed:
                if self._held:
                    self._send_locked()
                self.closed = True

    def _send_locked(self, force: bool = False) -> None:
        if not self._held and not force:
            return
        event = {"type": "text", "call": self.n, "offset": self._sent, "text": self._held}
        self._sent += len(self._held)
        self._held, self._last = "", self._live._clock()
        self._live.emit(event)


class LiveClient:
    """The model client of a turn whose progress is shown live: each call announces itself
    (``writing``) and streams its text where the client can (:class:`ModelClient`'s
    ``on_text``); everything else is the client's own."""

    def __init__(self, client: Any, live: Live):
        self._client, self._live = client, live

    def invoke(self, messages: Sequence[Any], **kwargs: Any) -> tuple[str, Mapping[str, object]]:
        if kwargs.get("purpose") in ("explain", "correct"):
            purpose = kwargs["purpose"]
        elif kwargs.get("draft") or kwargs.get("temperature") is not None:
            purpose = "draft"
        else:
            purpose = "answer"
        call = self._live.call(purpose)
        try:
            if _takes(self._client.invoke, "on_text"):
                result: tuple[str, Mapping[str, object]] = self._client.invoke(
                    messages, on_text=call, **kwargs
                )
                return result
            return self._client.invoke(messages, **kwargs)  # type: ignore[no-any-return]
        finally:
            call.close()

    def invoke_many(
        self, messages: Sequence[Any], specs: Sequence[dict[str, Any]], **kwargs: Any
    ) -> Sequence[tuple[str, Mapping[str, object]]]:
        # replies written side by side come whole (not streamed)
        self._live.call("answer")
        return self._client.invoke_many(messages, specs, **kwargs)  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def _takes(fn: Callable[..., Any], name: str) -> bool:
    """Whether ``fn`` takes the keyword ``name`` (a client of another shape is called without)."""
    import inspect

    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
