"""Turn a kernel interrupt (SIGINT) into a server-side cancel while a driver call blocks.

Python runs signal handlers only between bytecodes, so while the main thread waits inside
a driver's C code a Ctrl-C / "Interrupt kernel" does nothing until the query ends.  The C
level handler still writes the signal number to the *wakeup fd*; a helper thread waiting
on that fd calls the engine's own cancel, the driver call returns with a cancel error, and
the usual ``KeyboardInterrupt`` follows.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import threading
from collections.abc import Callable, Iterator


@contextlib.contextmanager
def interrupt_watcher(on_interrupt: Callable[[], None]) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # set_wakeup_fd only works in the main thread; other threads cancel explicitly
        return
    try:
        rsock, wsock = socket.socketpair()
    except OSError:
        yield
        return
    rsock.setblocking(False)
    wsock.setblocking(False)
    try:
        previous = signal.set_wakeup_fd(wsock.fileno(), warn_on_full_buffer=False)
    except (ValueError, OSError):
        rsock.close()
        wsock.close()
        yield
        return
    stop_r, stop_w = os.pipe()

    def watch() -> None:
        while True:
            ready, _, _ = select.select([rsock, stop_r], [], [])
            if stop_r in ready:
                return
            try:
                data = rsock.recv(64)
            except BlockingIOError:
                continue
            if previous >= 0:  # keep whoever listened before informed (e.g. asyncio)
                try:
                    os.write(previous, data)
                except OSError:
                    pass
            if signal.SIGINT in data:
                try:
                    on_interrupt()
                except Exception:
                    pass

    thread = threading.Thread(target=watch, name="sqlnb-interrupt-watcher", daemon=True)
    thread.start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous, warn_on_full_buffer=False) if previous >= 0 else signal.set_wakeup_fd(
            -1
        )
        os.write(stop_w, b"x")
        thread.join(timeout=1)
        for fd in (stop_r, stop_w):
            os.close(fd)
        rsock.close()
        wsock.close()
