"""The prompt states a local llama.cpp model keeps, in the memory they are given.

llama-cpp-python keeps the model's state after each prompt (``Llama.set_cache`` with a
``LlamaRAMCache``), so a later prompt that begins the same way is read from where it parts.
Its cache counts only the llama.cpp state in a state's size, not the copy of the scores
array each state holds: a row of the vocabulary's logits per token, up to the model's batch
(512 rows of Qwen2.5's 151,936 floats: 311 MB a state), or its whole context with
``logits_all`` (1.1 GB a state for a 2,000-token prompt). A cache given 1 GB held several GB,
and the shared model process was killed for memory after a few questions.

Without ``logits_all`` the scores hold nothing that is used (llama.cpp samples from its own
logits, and a state loaded is read again from its last token), so :func:`prompt_state_cache`
keeps one row of them (the shape ``load_state`` fills) and counts every byte a state holds.
No heavy import here: the shared model process (:mod:`sqlnb.server.child`) uses it too.
"""

from __future__ import annotations

import functools
from typing import Any


def state_bytes(state: Any) -> int:
    """The memory a llama-cpp-python ``LlamaState`` holds: its llama.cpp state, its scores and
    its tokens."""
    size = int(getattr(state, "llama_state_size", 0) or 0)
    for name in ("scores", "input_ids"):
        array = getattr(state, name, None)
        size += int(getattr(array, "nbytes", 0) or 0)
    return size


@functools.cache
def prompt_state_cache_class(base: type) -> type:
    """``base`` (llama-cpp-python's ``LlamaRAMCache``) with each state's unused scores cut to
    one row and its size counted in full, so that the states kept stay within the capacity."""

    class PromptStates(base):  # type: ignore[misc]
        """Prompt states, least recently used out first, within ``capacity_bytes`` in all."""

        def __setitem__(self, key: Any, value: Any) -> None:
            scores = getattr(value, "scores", None)
            if scores is not None and getattr(scores, "ndim", 0) == 2 and scores.shape[0] > 1:
                value.scores = scores[-1:].copy()
            super().__setitem__(key, value)

        @property
        def cache_size(self) -> int:
            return sum(state_bytes(s) for s in self.cache_state.values())

    PromptStates.__qualname__ = PromptStates.__name__ = "PromptStates"
    return PromptStates


def prompt_state_cache(llama_cpp: Any, capacity_bytes: int) -> Any:
    """A cache of prompt states for a model loaded without ``logits_all`` (the default), in
    ``capacity_bytes`` of memory (``llama_cpp``: the llama-cpp-python module)."""
    return prompt_state_cache_class(llama_cpp.LlamaRAMCache)(capacity_bytes=capacity_bytes)
