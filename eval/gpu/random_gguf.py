"""Write a Llama-shaped F16 GGUF with random weights, to time a large model where none can be carried.

A lent GPU machine reaches no network and takes 64 MiB a call, so an 8B model cannot travel; its
time per token depends on its shape and data type, not on what the weights say. This writes the
Llama-3-8B configuration (32 layers, 4096 wide, 14336 FFN, 32 query / 8 key-value heads, 128256
tokens: 8.03 B parameters, 16 GB) with llama.cpp's own gguf-py, found in the carried sources, and numpy.

The weights are slices of one random pool (normal, std 0.02: the scale of real initialisations, so
activations stay finite), each tensor at its own random offset; drawing 8 B fresh values would cost
minutes of the lease for nothing a timing sees. Norm weights are ones. The vocabulary is a made-up
SentencePiece one (byte tokens, then letter strings), so the server can tokenise and detokenise.

    python eval/gpu/random_gguf.py --gguf-py LLAMA_CPP/gguf-py --config llama3-8b --out /dev/shm/r.gguf
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import string
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Shape:
    vocab: int
    dim: int
    ffn: int
    layers: int
    heads: int
    kv_heads: int
    context: int
    rope_theta: float
    rms_eps: float

    @property
    def head_dim(self) -> int:
        return self.dim // self.heads

    def tensors(self) -> Iterator[tuple[str, tuple[int, ...]]]:
        """Name and numpy shape (rows are outputs) of every tensor, in llama.cpp's order."""
        kv = self.kv_heads * self.head_dim
        yield "token_embd.weight", (self.vocab, self.dim)
        for i in range(self.layers):
            yield f"blk.{i}.attn_norm.weight", (self.dim,)
            yield f"blk.{i}.attn_q.weight", (self.dim, self.dim)
            yield f"blk.{i}.attn_k.weight", (kv, self.dim)
            yield f"blk.{i}.attn_v.weight", (kv, self.dim)
            yield f"blk.{i}.attn_output.weight", (self.dim, self.dim)
            yield f"blk.{i}.ffn_norm.weight", (self.dim,)
            yield f"blk.{i}.ffn_gate.weight", (self.ffn, self.dim)
            yield f"blk.{i}.ffn_up.weight", (self.ffn, self.dim)
            yield f"blk.{i}.ffn_down.weight", (self.dim, self.ffn)
        yield "output_norm.weight", (self.dim,)
        yield "output.weight", (self.vocab, self.dim)

    def parameters(self) -> int:
        return sum(int(np.prod(shape)) for _, shape in self.tensors())


CONFIGS = {
    # Meta-Llama-3-8B's config.json.
    "llama3-8b": Shape(128256, 4096, 14336, 32, 32, 8, 8192, 500000.0, 1e-5),
    # For a CPU rehearsal: the same code path, 2 MB.
    "tiny": Shape(2048, 64, 192, 2, 4, 2, 2048, 10000.0, 1e-5),
}
LABELS = {
    "llama3-8b": "Llama-3-8B-shaped model, random weights, F16",
    "tiny": "tiny Llama-shaped model, random weights, F16",
}
STD = 0.02
# SentencePiece's word-start mark.
SPACE = "\u2581"
UNKNOWN, CONTROL, BYTE, NORMAL = 2, 3, 6, 1


def pieces() -> Iterator[str]:
    """Every printable character alone and after a word start, then lowercase strings likewise."""
    yield SPACE
    for c in string.digits + string.ascii_letters + string.punctuation:
        yield from (c, SPACE + c)
    for n in itertools.count(2):
        for letters in itertools.product(string.ascii_lowercase, repeat=n):
            word = "".join(letters)
            yield from (word, SPACE + word)


def vocabulary(size: int) -> tuple[list[str], list[float], list[int]]:
    """<unk>, <s>, </s>, the 256 byte tokens, then `pieces()` up to `size` tokens."""
    tokens = ["<unk>", "<s>", "</s>", *(f"<0x{b:02X}>" for b in range(256))]
    types = [UNKNOWN, CONTROL, CONTROL, *([BYTE] * 256)]
    tokens += itertools.islice(pieces(), size - len(tokens))
    types += [NORMAL] * (size - len(types))
    # Shorter pieces come first and score higher: merges prefer them, as a trained vocabulary's would.
    scores = [0.0] * 259 + [-float(i) for i in range(size - 259)]
    return tokens, scores, types


def gguf_module(path: str | None) -> Any:
    if path:
        sys.path.insert(0, path)
    return importlib.import_module("gguf")


def write(gguf: Any, shape: Shape, name: str, out: Path, seed: int = 0) -> dict[str, Any]:
    started = time.perf_counter()
    rng = np.random.default_rng(seed)
    largest = max(int(np.prod(s)) for _, s in shape.tensors())
    pool = (rng.standard_normal(largest, dtype=np.float32) * STD).astype(np.float16)
    ones = np.ones(shape.dim, dtype=np.float32)

    partial = out.with_name(out.name + ".part")
    writer = gguf.GGUFWriter(str(partial), "llama")
    writer.add_name(LABELS[name])
    writer.add_context_length(shape.context)
    writer.add_embedding_length(shape.dim)
    writer.add_block_count(shape.layers)
    writer.add_feed_forward_length(shape.ffn)
    writer.add_head_count(shape.heads)
    writer.add_head_count_kv(shape.kv_heads)
    writer.add_rope_dimension_count(shape.head_dim)
    writer.add_rope_freq_base(shape.rope_theta)
    writer.add_layer_norm_rms_eps(shape.rms_eps)
    writer.add_vocab_size(shape.vocab)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    tokens, scores, types = vocabulary(shape.vocab)
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_unk_token_id(0)
    writer.add_add_bos_token(True)

    tensors = list(shape.tensors())
    for tensor, dims in tensors:
        f32 = len(dims) == 1
        dtype = np.dtype(np.float32 if f32 else np.float16)
        writer.add_tensor_info(tensor, dims, dtype, int(np.prod(dims)) * dtype.itemsize)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for _, dims in tensors:
        if len(dims) == 1:
            writer.write_tensor_data(ones)
            continue
        count = int(np.prod(dims))
        start = int(rng.integers(0, largest - count + 1))
        writer.write_tensor_data(pool[start : start + count].reshape(dims))
    writer.close()
    partial.replace(out)
    return {
        "config": name,
        "label": LABELS[name],
        "shape": asdict(shape),
        "parameters": shape.parameters(),
        "bytes": out.stat().st_size,
        "write_s": round(time.perf_counter() - started, 1),
        "writer": "gguf-py of the carried llama.cpp sources, numpy",
        "description": (
            f"{shape.layers} layers, {shape.dim} wide, FFN {shape.ffn}, {shape.heads} query / {shape.kv_heads} "
            f"key-value heads, vocabulary {shape.vocab}: {shape.parameters() / 1e6:,.1f} M parameters, "
            f"{out.stat().st_size / 1e6:,.1f} MB F16 GGUF"
        ),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", choices=sorted(CONFIGS), default="llama3-8b")
    parser.add_argument("--out", required=True, help="the GGUF file to write")
    parser.add_argument("--gguf-py", help="llama.cpp's gguf-py folder (default: an installed gguf package)")
    parser.add_argument("--info", help="also write what was made (shape, size, seconds) to this JSON file")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    info = write(gguf_module(args.gguf_py), CONFIGS[args.config], args.config, Path(args.out), args.seed)
    if args.info:
        Path(args.info).write_text(json.dumps(info, indent=1) + "\n")
    print(json.dumps(info))


if __name__ == "__main__":
    main()
