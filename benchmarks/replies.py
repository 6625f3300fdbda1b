"""Stored model replies: record a benchmark run's every model call once, replay it after.

A :class:`ReplyStore` wraps the model client of an accuracy run (``--replies FILE``). Each
call is keyed by what decides the reply: the messages (role and text), the temperature,
the seed and whether it is a draft (a draft stops at the end of its query); each line also
names the model that wrote it, and a store holds one model's replies. A call seen before is
answered from the file; a new one goes to the model and is appended to the file as it comes,
so an interrupted run loses nothing.

Replaying is what makes a rule's effect measurable without running the model again
(``benchmarks/ablation.py``): with the rule switched off the agent asks the same calls as
far as the rule changed nothing, and those come from the file. A call the file does not
hold is a *miss*: with a live model it is asked and stored (the store grows); in
replay-only mode (``live=False``) it raises :class:`ReplyMissing`, and the question is
reported as needing the model rather than scored.

The local model is deterministic for a prompt, a temperature and a seed, so a replayed
run of unchanged code gives the recorded run's answers exactly.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any


class ReplyMissing(LookupError):
    """A replay-only store was asked a call it does not hold."""


def _messages(messages: Any) -> list[list[str]]:
    if isinstance(messages, str):
        return [["human", messages]]
    out = []
    for m in messages:
        role = getattr(m, "type", None) or type(m).__name__
        content = getattr(m, "content", m)
        out.append([str(role), content if isinstance(content, str) else json.dumps(content, sort_keys=True)])
    return out


def call_key(
    messages: Any, *, temperature: float | None, seed: int | None, draft: bool, purpose: str | None = None
) -> str:
    """The key of one model call: what decides its reply (a call's purpose, where it has
    one, is part of it; the keys of calls without one are as they always were)."""
    fields = {"messages": _messages(messages), "temperature": temperature, "seed": seed, "draft": bool(draft)}
    if purpose is not None:
        fields["purpose"] = purpose
    blob = json.dumps(fields, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ReplyStore:
    """A model client that answers from a JSONL file of earlier replies (see the module).

    Stands in for :class:`sqlnb.agent.models.ModelClient`: ``invoke``, ``invoke_many``
    and every other attribute the agent reads come from the wrapped client."""

    def __init__(self, client: Any, path: str | Path, *, live: bool = True):
        self.client = client
        self.recorded_model: str | None = None  # the model that wrote the stored replies
        self.compressed_to: Path | None = None  # a .gz file the working copy is saved to
        self.path = Path(path)
        self.live = live
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self._replies: dict[str, dict[str, Any]] = {}
        if self.path.exists():
            with open(self.path, encoding="utf-8") as f:
                for line in f:
                    line = line.strip()
                    if not line:
                        continue
                    try:
                        rec = json.loads(line)
                    except json.JSONDecodeError:  # a line being written (a run in progress)
                        continue
                    self._replies[rec["key"]] = rec
                    self.recorded_model = self.recorded_model or rec.get("model")
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def __len__(self) -> int:
        return len(self._replies)

    def __getattr__(self, name: str) -> Any:  # everything else: the wrapped client's
        return getattr(self.client, name)

    def invoke(
        self,
        messages: Any,
        *,
        temperature: float | None = None,
        seed: int | None = None,
        stop: Any = None,
        draft: bool = False,
        purpose: str | None = None,
    ) -> tuple[str, dict[str, Any]]:
        key = call_key(messages, temperature=temperature, seed=seed, draft=draft, purpose=purpose)
        with self._lock:
            rec = self._replies.get(key)
        if rec is not None:
            self.hits += 1
            return rec["text"], dict(rec["usage"])
        if not self.live:
            self.misses += 1
            raise ReplyMissing(f"no stored reply for this call (key {key[:12]})")
        text, usage = self.client.invoke(
            messages, temperature=temperature, seed=seed, stop=stop, draft=draft, purpose=purpose
        )
        self.misses += 1
        self._keep(key, text, usage)
        return text, usage

    def invoke_many(
        self, messages: Any, specs: Sequence[dict[str, Any]], *, stop: Any = None, draft: bool = True
    ) -> list[tuple[str, dict[str, Any]]]:
        # one call per spec, each stored apart: a replay then never depends on which
        # replies were written side by side
        return [
            self.invoke(
                messages, temperature=sp.get("temperature"), seed=sp.get("seed"), stop=stop, draft=draft
            )
            for sp in specs
        ]

    @property
    def side_by_side(self) -> bool:
        return False

    def _keep(self, key: str, text: str, usage: dict[str, Any]) -> None:
        name = str(getattr(self.client, "name", "") or "")
        if self.recorded_model and name and name != self.recorded_model:
            raise ValueError(f"{self.path} holds replies of {self.recorded_model}, not {name}")
        self.recorded_model = self.recorded_model or name
        rec = {
            "key": key,
            "model": name,
            "text": text,
            "usage": {k: v for k, v in usage.items() if isinstance(v, (int, float))},
        }
        with self._lock:
            self._replies[key] = rec
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
