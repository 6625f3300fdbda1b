"""Several replies to one prompt from the in-process llama.cpp model, decoded side by side.

On a CPU a small model writes one token at a time at the speed memory can stream its
weights (~18 tokens/s for the 1.5B model on 2 cores); a batch of a few tokens costs
little more than one.  The agent's first answer is a vote of several replies to the same
prompt, so writing them together — one sequence each, all sharing the prompt in the KV
cache — costs about what one reply costs, instead of one reply each.

:func:`load_llama` makes a ``Llama`` whose context holds :data:`SEQUENCES` sequences in
one KV cache; :func:`chat_prompt` gives the prompt tokens and stop strings
``create_chat_completion`` would use; :func:`side_by_side` decodes the replies.  After it
the model holds the prompt alone (sequence 0), so the prefix cache works as before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

SEQUENCES = 4  # replies decoded together at most


def load_llama(llama_class: type, llama_low: Any, **kwargs: Any) -> Any:
    """A ``llama_class`` instance whose context holds :data:`SEQUENCES` sequences in one
    (unified) KV cache.  ``llama_low`` is ``llama_cpp.llama_cpp``, whose default context
    parameters the constructor starts from (it has no argument for them); callers
    serialize loading."""
    original = llama_low.llama_context_default_params

    def params() -> Any:
        p = original()
        p.n_seq_max = SEQUENCES
        p.kv_unified = True  # the sequences share the prompt's cells
        return p

    llama_low.llama_context_default_params = params
    try:
        return llama_class(**kwargs)
    finally:
        llama_low.llama_context_default_params = original


class _Captured(Exception):
    def __init__(self, prompt: Any, stop: Any) -> None:
        super().__init__("prompt captured")
        self.prompt, self.stop = prompt, stop


class _PromptOnly:
    """Stands in for the Llama given to a chat handler: everything is the model's, but
    the completion call hands back its prompt and stop strings instead of running."""

    def __init__(self, llama: Any) -> None:
        self._llama = llama

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llama, name)

    def create_completion(self, prompt: Any = None, stop: Any = None, **_: Any) -> Any:
        raise _Captured(prompt, stop)


def chat_prompt(
    llama: Any, messages: list[dict[str, str]], stop: Sequence[str]
) -> tuple[list[int], list[str]]:
    """The prompt tokens and stop strings ``llama.create_chat_completion(messages,
    stop=stop)`` would use (its chat format, the model's template included)."""
    from llama_cpp import llama_chat_format

    # called with a stand-in for the Llama and the messages as plain dicts, which its
    # annotations (a Llama, llama.cpp's message TypedDicts) do not name
    handler: Callable[..., object] = (
        llama.chat_handler
        or llama._chat_handlers.get(llama.chat_format)
        or llama_chat_format.get_chat_completion_handler(llama.chat_format)
    )
    try:
        handler(llama=_PromptOnly(llama), messages=messages, stop=list(stop))
    except _Captured as got:
        prompt = got.prompt
        if isinstance(prompt, str):
            prompt = llama.tokenize(prompt.encode("utf-8"), special=True)
        stops = [got.stop] if isinstance(got.stop, str) else list(got.stop or [])
        return list(prompt), stops
    raise RuntimeError("the chat format did not ask for a completion")


def side_by_side(
    llama: Any,
    prompt: Sequence[int],
    specs: Sequence[Mapping[str, Any]],
    *,
    max_tokens: int,
    stop: Sequence[str],
) -> list[tuple[str, int]]:
    """One reply per spec (``temperature``, ``seed``) to ``prompt``, decoded together:
    each reply's text (cut at its first stop string) and its number of tokens.

    The prompt is evaluated once on sequence 0 (what the model last evaluated is reused
    as far as it matches), then shared with the others; each step decodes one token of
    every unfinished reply in one batch.  Samplers are the ones ``create_completion``
    builds (top-k 40, top-p 0.95, min-p 0.05, the temperature, the seed)."""
    from llama_cpp import _internals
    from llama_cpp import llama_cpp as low

    n = len(specs)
    if not 1 <= n <= SEQUENCES:
        raise ValueError(f"{n} replies asked for; 1 to {SEQUENCES} can be decoded together")
    prompt = list(prompt)
    if len(prompt) >= llama.n_ctx():
        raise ValueError(f"Requested tokens ({len(prompt)}) exceed context window of {llama.n_ctx()}")
    # within the context, with room for a character's last bytes
    max_tokens = max(1, min(max_tokens, llama.n_ctx() - len(prompt) - 4))
    ctx = llama._ctx
    # the prompt on sequence 0, reusing the cached prefix (at least its last token is
    # evaluated again: its logits are what the first tokens are sampled from)
    same = 0
    for a, b in zip(llama._input_ids.tolist(), prompt, strict=False):
        if a != b:
            break
        same += 1
    same = min(same, len(prompt) - 1)
    ctx.kv_cache_seq_rm(-1, same, -1)
    llama.n_tokens = same
    llama._requires_eval = True
    try:
        llama.eval(prompt[same:])
    except BaseException:
        # a prompt half evaluated: nothing of it is reused by the next call
        ctx.kv_cache_seq_rm(-1, 0, -1)
        llama.reset()
        raise
    n_prompt = len(prompt)
    outs: list[list[int]] = [[] for _ in specs]
    texts: list[str | None] = [None] * n
    pending = [0] * n  # bytes still to come of a character split across tokens
    stops = [s.encode("utf-8") for s in stop if s]
    batch: Any = _internals.LlamaBatch(n_tokens=n, embd=0, n_seq_max=n, verbose=False)  # untyped in llama_cpp
    vocab = llama._model.vocab
    try:
        for s in range(1, n):
            ctx.kv_cache_seq_cp(0, s, 0, n_prompt)
        samplers = []
        for spec in specs:
            temperature = float(spec.get("temperature") or 0.0)
            if spec.get("seed") is not None:
                llama.set_seed(int(spec["seed"]))
            samplers.append(
                llama._init_sampler(
                    top_k=40, top_p=0.95, min_p=0.05, typical_p=1.0, temp=temperature, repeat_penalty=1.0
                )
            )
        tokens = [smp.sample(ctx, -1) for smp in samplers]
        step = 0
        while True:
            # each unfinished reply takes its sampled token, as create_completion does: the
            # end of generation, then a stop string or max_tokens, neither checked while a
            # character is incomplete
            active = []
            for i in range(n):
                if texts[i] is not None:
                    continue
                if low.llama_vocab_is_eog(vocab, tokens[i]):
                    texts[i] = _text(llama, prompt, outs[i])
                    continue
                outs[i].append(tokens[i])
                raw = llama.detokenize(outs[i], prev_tokens=prompt)
                for k, char in enumerate(raw[-3:]):
                    k = 3 - k
                    for size, lead in ((2, 192), (3, 224), (4, 240)):
                        if size > k and lead & char == lead:
                            pending[i] = size - k
                if pending[i] > 0:
                    pending[i] -= 1
                else:
                    hit = [x for x in stops if x in raw]
                    if hit:
                        texts[i] = raw[: raw.index(hit[0])].decode("utf-8", errors="ignore")
                        continue
                    if len(outs[i]) >= max_tokens:
                        texts[i] = raw.decode("utf-8", errors="ignore")
                        continue
                active.append(i)
            if not active:
                break
            b = batch.batch
            b.n_tokens = len(active)
            for j, i in enumerate(active):
                b.token[j] = tokens[i]
                b.pos[j] = n_prompt + step
                b.n_seq_id[j] = 1
                b.seq_id[j][0] = i
                b.logits[j] = True
            ctx.decode(batch)
            for j, i in enumerate(active):
                tokens[i] = samplers[i].sample(ctx, j)
            step += 1
    finally:
        # back to the prompt alone on sequence 0: the next call reuses it as a prefix
        for s in range(1, n):
            ctx.kv_cache_seq_rm(s, -1, -1)
        ctx.kv_cache_seq_rm(0, n_prompt, -1)
        llama.n_tokens = n_prompt
        llama._requires_eval = True
        batch.close()
    return [(texts[i] or "", len(outs[i])) for i in range(n)]


def _text(llama: Any, prompt: list[int], tokens: list[int]) -> str:
    raw: bytes = llama.detokenize(tokens, prev_tokens=prompt)
    return raw.decode("utf-8", errors="ignore")
