"""MNIST-style IDX files for the PyTorch reference scripts (torch_cpu.py, torch_gpu.py)."""
import gzip
import os
import struct

import numpy as np


def read_idx(folder, name, magic):
    """An IDX file of unsigned bytes (plain name first, then .gz; gzip detected from content).
    Raises ValueError with the file and what is wrong."""
    for path in (os.path.join(folder, name), os.path.join(folder, name + ".gz")):
        if os.path.exists(path):
            break
    else:
        raise ValueError(f"{name}[.gz] not found in {folder} (scripts/fetch-mnist downloads it)")
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    ndim = magic & 0xFF
    if len(raw) < 4 + 4 * ndim or struct.unpack(">I", raw[:4])[0] != magic:
        raise ValueError(f"{path}: not an IDX file of unsigned bytes with {ndim} dimension(s)")
    dims = struct.unpack(f">{ndim}I", raw[4:4 + 4 * ndim])
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    if data.size != int(np.prod(dims)):
        raise ValueError(f"{path}: {data.size} bytes of data for shape {dims}")
    return data.reshape(dims)
