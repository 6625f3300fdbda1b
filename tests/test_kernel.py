"""A real Jupyter kernel: 'Interrupt kernel' cancels the running statement on the server."""

from __future__ import annotations

import time

import pytest
from jupyter_client.manager import start_new_kernel

from tests.test_contract import LONG_QUERY


@pytest.fixture(scope="module")
def kernel():
    km, kc = start_new_kernel(kernel_name="python3")
    try:
        yield km, kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def wait_until_idle(kc, msg_id: str, timeout: float = 60):
    """Follow the output of one request until the kernel is idle; return (reply content,
    the error output's content or None)."""
    error = None
    while True:
        msg = kc.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "error":
            error = msg["content"]
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    return kc.get_shell_msg(timeout=timeout)["content"], error


def execute(kc, code: str, timeout: float = 60):
    return wait_until_idle(kc, kc.execute(code), timeout)


@pytest.mark.engines(["sqlite", "duckdb", "postgresql", "mysql"])
def test_interrupt_cancels_on_the_server_and_keeps_the_connection(engine, seeded, kernel):
    km, kc = kernel
    reply, error = execute(kc, f"%load_ext sqlnb\n%sqlnb connect '{seeded.url()}' --name db_{engine}")
    assert reply["status"] == "ok", error
    msg_id = kc.execute(f"%%sql --timeout 120\n{LONG_QUERY[engine]}")
    time.sleep(1.5)  # let the statement reach the server
    interrupted_at = time.monotonic()
    km.interrupt_kernel()
    _, error = wait_until_idle(kc, msg_id, timeout=30)
    took = time.monotonic() - interrupted_at
    assert error is not None and error["ename"] == "QueryCancelled", error
    assert took < 2.0, f"cancel took {took:.2f} s"
    reply, error = execute(kc, "%%sql -o df\nSELECT count(*) AS n FROM customers")
    assert reply["status"] == "ok", error
    reply, error = execute(kc, "assert int(df.iloc[0, 0]) == 3")
    assert reply["status"] == "ok", error
