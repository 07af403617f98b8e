#!/usr/bin/env python3
"""Writes the small binary seeds of the fuzz harnesses (tests/fuzz/seeds/<harness>/): tiny but
complete GGUF, safetensors and llama2.c files that every reader accepts, so the fuzzers start
from inputs that reach the code past the format checks. The real files in ../shared are added
as further seeds by scripts/fuzz.sh. Run from anywhere: python3 tests/fuzz/seeds/make_seeds.py
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# GGUF value types (docs/gguf.md in ggml).
UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY = 4, 5, 6, 7, 8, 9
F32, F16, Q8_0 = 0, 1, 8


def gguf_string(text):
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def gguf_value(kind, value):
    if kind == UINT32:
        return struct.pack("<I", value)
    if kind == INT32:
        return struct.pack("<i", value)
    if kind == FLOAT32:
        return struct.pack("<f", value)
    if kind == BOOL:
        return struct.pack("<B", int(value))
    if kind == STRING:
        return gguf_string(value)
    element, items = value
    out = struct.pack("<IQ", element, len(items))
    return out + b"".join(gguf_value(element, item) for item in items)


def gguf_file(metadata, tensors):
    """metadata: [(key, type, value)]; tensors: [(name, ne (cols first), type, bytes)]."""
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(metadata))
    for key, kind, value in metadata:
        out += gguf_string(key) + struct.pack("<I", kind) + gguf_value(kind, value)
    offset = 0
    for name, ne, kind, data in tensors:
        out += gguf_string(name) + struct.pack("<I", len(ne))
        out += b"".join(struct.pack("<Q", n) for n in ne) + struct.pack("<IQ", kind, offset)
        offset += (len(data) + 31) // 32 * 32
    out += b"\0" * (-len(out) % 32)
    for _, _, _, data in tensors:
        out += data + b"\0" * (-len(data) % 32)
    return out


def floats(count, scale=0.01):
    return struct.pack(f"<{count}f", *[(i % 7 - 3) * scale for i in range(count)])


def llama_spm_gguf():
    tokens = ["<unk>", "<s>", "</s>", "<0x0A>", "\u2581", "a", "b", "\u2581a", "ab", "\u2581ab",
              "<|im_start|>", "<|im_end|>"]
    scores = [0.0, 0.0, 0.0, 0.0, -1.0, -2.0, -3.0, -1.5, -2.5, -1.0, 0.0, 0.0]
    types = [2, 3, 3, 6, 1, 1, 1, 1, 1, 1, 4, 3]
    metadata = [
        ("general.architecture", STRING, "llama"),
        ("llama.embedding_length", UINT32, 8),
        ("llama.feed_forward_length", UINT32, 16),
        ("llama.block_count", UINT32, 1),
        ("llama.attention.head_count", UINT32, 2),
        ("llama.attention.head_count_kv", UINT32, 1),
        ("llama.context_length", UINT32, 32),
        ("llama.attention.layer_norm_rms_epsilon", FLOAT32, 1e-5),
        ("llama.rope.freq_base", FLOAT32, 10000.0),
        ("tokenizer.ggml.model", STRING, "llama"),
        ("tokenizer.ggml.tokens", ARRAY, (STRING, tokens)),
        ("tokenizer.ggml.scores", ARRAY, (FLOAT32, scores)),
        ("tokenizer.ggml.token_type", ARRAY, (INT32, types)),
        ("tokenizer.ggml.bos_token_id", UINT32, 1),
        ("tokenizer.ggml.eos_token_id", UINT32, 2),
        ("tokenizer.ggml.add_bos_token", BOOL, True),
        ("tokenizer.chat_template", STRING,
         "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
         "{% endfor %}"),
    ]
    q8_block = struct.pack("<e", 0.5) + bytes(range(32))
    tensors = [
        ("token_embd.weight", [8, len(tokens)], F32, floats(8 * len(tokens))),
        ("output_norm.weight", [8], F32, floats(8)),
        ("blk.0.attn_q.weight", [32, 2], Q8_0, q8_block * 2),
        ("blk.0.attn_k.weight", [8, 4], F16, struct.pack("<32e", *[0.25] * 32)),
    ]
    return gguf_file(metadata, tensors)


def gpt2_gguf():
    tokens = ["!", "a", "b", "\u0120", "\u0120a", "ab", "\u0120ab", "<|endoftext|>"]
    metadata = [
        ("general.architecture", STRING, "qwen2"),
        ("qwen2.embedding_length", UINT32, 4),
        ("qwen2.feed_forward_length", UINT32, 8),
        ("qwen2.block_count", UINT32, 1),
        ("qwen2.attention.head_count", UINT32, 1),
        ("qwen2.context_length", UINT32, 16),
        ("qwen2.attention.layer_norm_rms_epsilon", FLOAT32, 1e-6),
        ("tokenizer.ggml.model", STRING, "gpt2"),
        ("tokenizer.ggml.pre", STRING, "qwen2"),
        ("tokenizer.ggml.tokens", ARRAY, (STRING, tokens)),
        ("tokenizer.ggml.token_type", ARRAY, (INT32, [1, 1, 1, 1, 1, 1, 1, 3])),
        ("tokenizer.ggml.merges", ARRAY, (STRING, ["\u0120 a", "a b", "\u0120a b"])),
        ("tokenizer.ggml.eos_token_id", UINT32, 7),
    ]
    return gguf_file(metadata, [])


def safetensors_file():
    header = {
        "__metadata__": {"format": "pt"},
        "a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
        "b": {"dtype": "BF16", "shape": [4], "data_offsets": [24, 32]},
        "c": {"dtype": "I64", "shape": [1], "data_offsets": [32, 40]},
        "d": {"dtype": "F16", "shape": [0, 5], "data_offsets": [40, 40]},
    }
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + bytes(range(40))


def llama2c_file(vocab_size):
    dim, hidden, layers, heads, kv_heads, seq_len = 4, 8, 1, 2, 1, 4
    head_dim = dim // heads
    kv_dim = head_dim * kv_heads
    vocab = abs(vocab_size)
    count = vocab * dim + layers * (2 * dim + 2 * dim * dim + 2 * dim * kv_dim)
    count += layers * 3 * dim * hidden + dim + seq_len * head_dim
    if vocab_size < 0:
        count += vocab * dim
    header = struct.pack("<7i", dim, hidden, layers, heads, kv_heads, vocab_size, seq_len)
    return header + floats(count)


def write(harness, name, data):
    folder = os.path.join(HERE, harness)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as out:
        out.write(data)


def main():
    write("gguf_file", "tiny-llama-spm.gguf", llama_spm_gguf())
    write("gguf_file", "tiny-gpt2.gguf", gpt2_gguf())
    write("safetensors_file", "tiny.safetensors", safetensors_file())
    write("llama2c_checkpoint", "tiny-tied.bin", llama2c_file(6))
    write("llama2c_checkpoint", "tiny-untied.bin", llama2c_file(-6))


if __name__ == "__main__":
    main()
