#!/usr/bin/env python3
"""Writes the fixtures tests/check_cli.cmake feeds to `plexus-cli predict` with
pooled_digits.plexus (Input [1, 28, 28] -> AvgPool2d 4 -> [1, 7, 7] -> Flatten -> Linear 49 -> 10):

  pooled_digits.safetensors  a weights file built by hand, with the metadata a run stores (input
                             shape, an identity normalisation, class names "zero".."nine"), so
                             no dataset is needed: class c scores 4 x the mean of its own 4x4
                             pixel block (the pooled cell of row 1 + 4 (c // 5), column 1 + c % 5),
                             every other weight and bias is 0.
  three.png                  28 x 28 gray: class 3's block white, the rest black. Its scores are
                             4 for class 3 and 0 for the others: probability e^4 / (e^4 + 9) =
                             85.85% for "three", 1 / (e^4 + 9) = 1.57% for each other class.
  seven_rgb.png              56 x 56 RGB: class 7's block (8 x 8 pixels at this size) orange
                             (255, 160, 0), on dark blue (0, 0, 60): shrunk to 28 x 28 and
                             converted to luma by predict, still clearly class 7.
  cut.png                    three.png cut after 40 bytes: a truncated PNG.

Standard library only; the values are fixed, so the files are the same on every machine:

    python3 tests/cli_fixtures/gen_predict_fixtures.py
"""
import json
import os
import struct
import zlib

from gen_housing_batch import safetensors

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]


def cell(c):
    return 1 + 4 * (c // 5), 1 + c % 5  # (row, column) in the 7 x 7 pooled grid


def png(width, height, channels, pixel):
    """pixel(x, y) -> tuple of `channels` bytes; 8-bit gray (1) or RGB (3), no filtering."""
    rows = b"".join(b"\x00" + bytes(v for x in range(width) for v in pixel(x, y)) for y in range(height))

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    color_type = 0 if channels == 1 else 2
    ihdr = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")


def in_block(c, x, y, scale):
    row, col = cell(c)
    return row * 4 * scale <= y < (row + 1) * 4 * scale and col * 4 * scale <= x < (col + 1) * 4 * scale


weight = [0.0] * (10 * 49)
for c in range(10):
    row, col = cell(c)
    weight[c * 49 + row * 7 + col] = 4.0
meta = {"input_shape": "[1,28,28]", "classes": "10", "input_mean": "[0.0]", "input_std": "[1.0]",
        "class_names": json.dumps(NAMES)}
three = png(28, 28, 1, lambda x, y: (255,) if in_block(3, x, y, 1) else (0,))
files = {
    "pooled_digits.safetensors": safetensors([("fc.weight", [10, 49], weight), ("fc.bias", [10], [0.0] * 10)], meta),
    "three.png": three,
    "seven_rgb.png": png(56, 56, 3, lambda x, y: (255, 160, 0) if in_block(7, x, y, 2) else (0, 0, 60)),
    "cut.png": three[:40],
}
for name, content in files.items():
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(content)
    print("wrote", os.path.join(HERE, name))
