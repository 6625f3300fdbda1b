"""The shared model process itself (``python -m sqlnb.server.child``): llama.cpp's
OpenAI-compatible server (llama-cpp-python's ``llama_cpp.server``) with the settings
:class:`~sqlnb.server.process.ModelProcess` passes in ``$SQLNB_MODEL_SERVER_CONFIG`` (JSON:
host, port, api_key, model, n_ctx, n_threads, cache_bytes), which keeps the token off the command line.

It ends itself when the process that started it is gone (``$SQLNB_PARENT_PID``), so a
Jupyter server killed without its shutdown leaves no model process behind.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

CONFIG_ENV = "SQLNB_MODEL_SERVER_CONFIG"
PARENT_ENV = "SQLNB_PARENT_PID"


def _watch_parent(parent: int) -> None:
    def watch() -> None:
        while True:
            if os.getppid() != parent:
                os._exit(0)
            time.sleep(1.0)

    threading.Thread(target=watch, name="sqlnb-parent-watch", daemon=True).start()


def main() -> int:
    raw = os.environ.pop(CONFIG_ENV, "")
    if not raw:
        print(f"sqlnb: {CONFIG_ENV} is not set: this process is started by sqlnb's server", file=sys.stderr)
        return 2
    config: dict[str, Any] = json.loads(raw)
    os.environ.pop("CONFIG_FILE", None)  # llama_cpp.server would read its settings from there
    parent = int(os.environ.pop(PARENT_ENV, "0") or 0)
    if parent:
        _watch_parent(parent)

    import llama_cpp
    import uvicorn
    from llama_cpp.server.app import create_app
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    from sqlnb.agent.prompt_states import prompt_state_cache_class

    # the server makes its cache as llama_cpp.LlamaRAMCache(capacity_bytes=...): the one that
    # counts every byte of a state and keeps no unused scores (sqlnb.agent.prompt_states)
    llama_cpp.LlamaRAMCache = prompt_state_cache_class(llama_cpp.LlamaRAMCache)  # type: ignore[misc]

    server = ServerSettings(host=config["host"], port=int(config["port"]), api_key=config["api_key"])
    model = ModelSettings(
        model=config["model"],
        n_ctx=int(config.get("n_ctx", 8192)),
        n_threads=int(config.get("n_threads", 1)),
        n_threads_batch=int(config.get("n_threads", 1)),
        seed=0,
        verbose=False,
        # no logits kept per token (the server's default keeps them: a vocabulary's floats
        # for every token read, 1.1 GB for a 2,000-token prompt, and the time to copy them):
        # the replies are sampled by llama.cpp, and no caller asks for logprobs
        logits_all=False,
        # prompt states kept in memory, as in the kernel: a question's prompt is read from
        # where it parts from an earlier one
        cache=int(config.get("cache_bytes", 0)) > 0,
        cache_type="ram",
        cache_size=max(1, int(config.get("cache_bytes", 0))),
    )
    app = create_app(server_settings=server, model_settings=[model])
    print(f"sqlnb: the model is loaded; serving on {server.host}:{server.port}", file=sys.stderr, flush=True)
    uvicorn.run(app, host=server.host, port=server.port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
