#!/usr/bin/env python3
"""Writes housing_batch.safetensors, the batch tests/check_cli.cmake feeds to
`plexus-cli grad --project examples/housing_regression.plexus`: tensor "x" [4, 8] (four
standardised-looking feature rows) and tensor "y" [4] (prices), float32. Standard library
only; the values are fixed, so the file is the same on every machine:

    python3 tests/cli_fixtures/gen_housing_batch.py
"""
import json
import os
import struct

X = [[0.5, -1.25, 0.75, 0.0, 1.5, -0.5, 0.25, -1.0],
     [-0.75, 0.5, -1.5, 1.25, 0.0, 0.75, -0.25, 1.0],
     [1.0, 0.25, 0.5, -0.75, -1.25, 0.0, 1.5, -0.5],
     [-1.5, -0.25, 0.0, 0.5, 0.75, 1.25, -1.0, 0.25]]
Y = [4.25, 3.5, 5.0, 2.75]


def safetensors(tensors, metadata=None):
    """The bytes of a safetensors file of float32 tensors (name, shape, values), with metadata
    (a dict of strings) when given; gen_predict_fixtures.py writes its weights with it too."""
    header, data = ({"__metadata__": metadata} if metadata else {}), b""
    for name, shape, values in tensors:
        raw = struct.pack("<%df" % len(values), *values)
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


if __name__ == "__main__":
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "housing_batch.safetensors")
    with open(out, "wb") as f:
        f.write(safetensors([("x", [4, 8], [v for row in X for v in row]), ("y", [4], Y)]))
    print("wrote", out)
