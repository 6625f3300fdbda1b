"""A tiny llama-architecture GGUF model written at test time (random weights, a byte
vocabulary): enough for llama.cpp to load and generate, so tests can run the real runtime
without a downloaded model.  Needs the ``gguf`` package (a dev dependency)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

N_EMBD, N_HEAD, N_LAYER, N_FF = 64, 4, 2, 128


def write_tiny_llama(path: Path, *, seed: int = 0) -> Path:
    import gguf

    rng = np.random.default_rng(seed)
    tokens = [b"<unk>", b"<s>", b"</s>"] + [f"<0x{b:02X}>".encode() for b in range(256)]
    tokens += [ch.encode() for ch in "abcdefghijklmnopqrstuvwxyz"]
    tokens += ["\u2581" + w for w in ("SELECT", "FROM", "WHERE", "count", "name", "age")]
    tokens = [t if isinstance(t, bytes) else t.encode() for t in tokens]
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
    types += [gguf.TokenType.BYTE] * 256
    types += [gguf.TokenType.NORMAL] * (len(tokens) - len(types))
    n_vocab = len(tokens)

    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("sqlnb-tiny-test")
    w.add_context_length(8192)
    w.add_embedding_length(N_EMBD)
    w.add_block_count(N_LAYER)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_HEAD)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_dimension_count(N_EMBD // N_HEAD)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([0.0] * 3 + [-1000.0] * 256 + [-1.0] * (n_vocab - 259))
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)

    def tensor(name: str, *shape: int, scale: float = 0.2) -> None:
        w.add_tensor(name, (rng.standard_normal(shape) * scale).astype(np.float32))

    tensor("token_embd.weight", n_vocab, N_EMBD, scale=1.0)
    for i in range(N_LAYER):
        w.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        for part in ("q", "k", "v", "output"):
            tensor(f"blk.{i}.attn_{part}.weight", N_EMBD, N_EMBD)
        w.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        tensor(f"blk.{i}.ffn_gate.weight", N_FF, N_EMBD)
        tensor(f"blk.{i}.ffn_up.weight", N_FF, N_EMBD)
        tensor(f"blk.{i}.ffn_down.weight", N_EMBD, N_FF)
    w.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    tensor("output.weight", n_vocab, N_EMBD, scale=1.0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path
