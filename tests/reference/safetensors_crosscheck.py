#!/usr/bin/env python3
"""Cross-checks Plexus's safetensors reader and writer against an independent Python side.

ctest runs it as reference_safetensors (Skipped where torch is missing); by hand:

    /usr/bin/python3 tests/reference/safetensors_crosscheck.py build/tests/test_safetensors

1. Runs `test_safetensors crosscheckWrite`, which saves a file with our writer, and checks it
   here: every rule of the format (https://github.com/huggingface/safetensors) is verified
   with struct + json, and the values are compared bit for bit with torch.
2. Writes a file from Python (torch tensors in F32, F16, BF16 and F64, header keys in an
   order different from the data, Rust-reference-style padding) and runs
   `test_safetensors crosscheckRead`, which loads it with our reader and compares with the
   values and with torch's own float32 conversions stored alongside.

The `safetensors` Python package is used in addition when it is importable (Debian 12 does
not package it); otherwise the format is parsed and written by hand below.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

import torch_or_skip  # noqa: F401  (exit 77, Skipped, without torch)
import torch

MAX_HEADER = 100_000_000
DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "F64": torch.float64}
SIZES = {"F32": 4, "F16": 2, "BF16": 2, "F64": 8}
INT_VIEW = {torch.float32: torch.int32, torch.float16: torch.int16, torch.bfloat16: torch.int16,
            torch.float64: torch.int64}


def fail(msg):
    raise SystemExit("CROSSCHECK FAILED: " + msg)


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        fail("duplicate JSON keys: %r" % keys)
    return dict(pairs)


def strict_parse(path):
    """Parses a safetensors file by the letter of the format; returns (tensors, metadata, header_text)."""
    data = open(path, "rb").read()
    if len(data) < 8:
        fail("file shorter than 8 bytes")
    (n,) = struct.unpack("<Q", data[:8])
    if n > MAX_HEADER or 8 + n > len(data):
        fail("bad header length %d" % n)
    raw = data[8:8 + n]
    text = raw.decode("utf-8")
    if not text.startswith("{"):
        fail("header does not start with '{'")
    header = json.loads(text, object_pairs_hook=no_duplicates)
    metadata = header.pop("__metadata__", {})
    if not isinstance(metadata, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        fail("__metadata__ is not a string->string map")
    buffer = data[8 + n:]
    entries = []
    for name, info in header.items():
        if set(info) != {"dtype", "shape", "data_offsets"}:
            fail("entry %r has keys %r" % (name, sorted(info)))
        dtype, shape, (begin, end) = info["dtype"], info["shape"], info["data_offsets"]
        if dtype not in DTYPES:
            fail("unexpected dtype %r" % dtype)
        if not all(isinstance(d, int) and d >= 0 for d in shape):
            fail("bad shape %r" % shape)
        numel = 1
        for d in shape:
            numel *= d
        if end - begin != numel * SIZES[dtype] or begin > end or end > len(buffer):
            fail("bad data_offsets %r for %r" % ([begin, end], name))
        entries.append((begin, end, name, dtype, shape))
    entries.sort(key=lambda e: (e[0], e[1]))
    pos = 0
    for begin, end, name, _, _ in entries:
        if begin != pos:
            fail("tensor %r starts at %d, expected %d (gap or overlap)" % (name, begin, pos))
        pos = end
    if pos != len(buffer):
        fail("buffer has %d bytes, tensors cover %d" % (len(buffer), pos))
    tensors = []
    for begin, end, name, dtype, shape in entries:
        chunk = bytearray(buffer[begin:end])
        t = torch.frombuffer(chunk, dtype=DTYPES[dtype]) if chunk else torch.empty(0, dtype=DTYPES[dtype])
        tensors.append((name, dtype, t.reshape(shape)))
    return tensors, metadata, text


def same_bits(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(
        a.contiguous().view(INT_VIEW[a.dtype]), b.contiguous().view(INT_VIEW[b.dtype]))


def ramp(*shape):
    n = 1
    for d in shape:
        n *= d
    return (torch.arange(n, dtype=torch.float32) * 0.25 - 1.0).reshape(shape)


def run_test(binary, function, workdir):
    env = dict(os.environ, PLEXUS_SAFETENSORS_CROSSCHECK_DIR=workdir)
    r = subprocess.run([binary, function], env=env, capture_output=True, text=True)
    out = r.stdout + r.stderr
    if r.returncode != 0 or ("PASS   : " + function + "\n") not in out:
        fail("%s %s:\n%s" % (binary, function, out))


def check_plexus_written(workdir):
    path = os.path.join(workdir, "plexus_written.safetensors")
    tensors, metadata, text = strict_parse(path)
    # Layout details of our writer: compact JSON, __metadata__ first, space padding to 8.
    body = text.rstrip(" ")
    if (8 + len(text.encode())) % 8 or len(text) - len(body) >= 8 or not body.startswith('{"__metadata__":'):
        fail("unexpected header layout: %r" % text)
    if " " in body or "\n" in body:
        fail("header is not compact: %r" % body)
    names = [name for name, _, _ in tensors]
    if names != ["matrix", "transposed", "scalar", "empty", "random", "specials"]:
        fail("file order %r" % names)
    if metadata != {"format": "pt", "producer": "plexus"}:
        fail("metadata %r" % metadata)
    got = {name: t for name, _, t in tensors}
    raw = bytearray(open(os.path.join(workdir, "plexus_random_permuted.f32"), "rb").read())
    random = torch.frombuffer(raw, dtype=torch.float32).reshape(4, 2, 3)
    specials = torch.tensor([float("nan"), -0.0, float("inf"), float("-inf"), 1e-45,
                             torch.finfo(torch.float32).max], dtype=torch.float32).reshape(2, 3)
    expected = {"matrix": ramp(3, 4), "transposed": ramp(3, 4).t(), "scalar": torch.tensor(3.5),
                "empty": torch.zeros(0, 3), "random": random, "specials": specials}
    for name, want in expected.items():
        if not same_bits(got[name], want):
            fail("tensor %r differs:\n%r\nvs\n%r" % (name, got[name], want))
    try:
        import safetensors.torch as st  # noqa: F401  (not in Debian 12; used when present)
    except ImportError:
        return "manual parser"
    loaded = st.load_file(path)
    for name, want in expected.items():
        if not same_bits(loaded[name], want):
            fail("safetensors package: tensor %r differs" % name)
    return "manual parser + safetensors package"


def write_python_file(workdir):
    f16 = torch.tensor([1.0, -2.0, 65504.0, 2.0 ** -24, float("inf"), -0.0, float("nan"), 1.0 / 3.0],
                       dtype=torch.float16)
    bf16 = torch.tensor([[1.0, -3.0, 1e-40], [float("-inf"), 3.0e38, 1.0 / 3.0]], dtype=torch.bfloat16)
    f64 = torch.tensor([1.0, 0.1, 3.4028235e38, 2.0 ** 128 - 2.0 ** 103, -1e300, 1e-50, 1.0 / 3.0],
                       dtype=torch.float64)
    # Data order: by element size, descending (keeps each tensor aligned), as the reference
    # writer does; the header keys are written in reverse order to exercise sorting by offset.
    layout = [("f64", "F64", f64), ("f64_as_f32", "F32", f64.float()),
              ("f32_matrix", "F32", ramp(3, 4)), ("f32_transposed", "F32", ramp(3, 4).t().contiguous()),
              ("f32_scalar", "F32", torch.tensor(3.5)), ("f32_empty", "F32", torch.zeros(0, 3)),
              ("f16_as_f32", "F32", f16.float()), ("bf16_as_f32", "F32", bf16.float()),
              ("bf16", "BF16", bf16), ("f16", "F16", f16)]
    header, chunks, offset = {}, [], 0
    for name, dtype, t in layout:
        b = t.contiguous().view(INT_VIEW[t.dtype]).numpy().tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(b)]}
        chunks.append(b)
        offset += len(b)
    ordered = {"__metadata__": {"producer": "python", "format": "pt"}}
    for name in reversed(list(header)):
        ordered[name] = header[name]
    text = json.dumps(ordered, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    path = os.path.join(workdir, "python_written.safetensors")
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))
    strict_parse(path)  # our own writer here must obey the rules too


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as workdir:
        run_test(binary, "crosscheckWrite", workdir)
        how = check_plexus_written(workdir)
        print("plexus -> python: OK (%s, torch %s)" % (how, torch.__version__))
        write_python_file(workdir)
        run_test(binary, "crosscheckRead", workdir)
        print("python -> plexus: OK (F32, F16, BF16, F64; metadata; header order != data order)")
    print("safetensors crosscheck passed")


if __name__ == "__main__":
    main()
