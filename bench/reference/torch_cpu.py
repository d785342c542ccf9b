#!/usr/bin/env python3
"""The PyTorch twin of bench/bench_cpu.cpp: the same CPU training workloads, timed the same way.

    /usr/bin/python3 bench/reference/torch_cpu.py --workload a|b|c|d --runs R --threads T
                                                  [--mnist DIR] [--steps S]

Written for Debian's python3-torch 1.13 (CPU build: OpenMP intra-op threads, BLAS from the
system OpenBLAS); works with torch 2.x too. scripts/bench-cpu runs it, once per candidate
configuration, and compares it with build/bench/bench_cpu.

Threads: --threads T sets torch's intra-op threads (torch.set_num_threads). OpenBLAS's
thread count and libgomp's OMP_WAIT_POLICY are read when the libraries load, so they come
from the environment (OPENBLAS_NUM_THREADS, OMP_WAIT_POLICY), set by the caller before
this process starts; both are printed.

Data: the MNIST training split from DIR (default data/mnist; train-images-idx3-ubyte[.gz],
train-labels-idx1-ubyte[.gz], parsed here) as float32 [N, 1, 28, 28] in [0, 1], standardised
with its own mean and std (float64 accumulation); the test split (t10k-*) standardised with
the same train mean and std. Everything is in memory before any timing.

Workloads (cross-entropy, mean over the batch):
  a  MLP 784-128-10 (Flatten, Linear, ReLU, Linear); SGD lr 0.1, no momentum; batch 100
  b  MLP 784-64-10; SGD lr 0.1; batch 100
  c  LeNet: Conv2d(1,20,5), ReLU, MaxPool2d(2), Conv2d(20,50,5), ReLU, MaxPool2d(2),
     Flatten, Linear(800,500), ReLU, Linear(500,10); SGD lr 0.1; batch 100
  d  MLP 784-1024-1024-10 (Flatten, Linear, ReLU, Linear, ReLU, Linear); Adam lr 1e-3 with
     torch's defaults otherwise; batch 128

A step takes batch i as a slice of the resident tensors (in order, no shuffle, no copy; the
last batch is partial when N % batch != 0), runs forward and the loss, reads the loss with
.item() (as a loop that logs its loss does), then zero_grad(set_to_none=True), backward,
step. Before the first run a throwaway model trains 20 steps (warm-up: allocator, thread
pools, BLAS buffers; neither timed nor printed).

A run: torch.manual_seed(1000 + run index), a fresh model and optimizer, then exactly one
epoch timed by wall clock (time.perf_counter, from before the first step to after the last;
no data loading inside), then, untimed, the test accuracy in eval mode under torch.no_grad()
with batch 1000. With --steps S only the first S steps are timed and the evaluation is
skipped (accuracy printed as nan): the driver's quick configuration probe.

Output, one line each (lines starting with '#' are commentary):
  device: cpu (torch T intra-op threads, OPENBLAS_NUM_THREADS=.., OMP_WAIT_POLICY=..)
  # torch <version>
  run torch <workload> <run index> <seconds> <test accuracy %> <last step's loss>
Errors (missing data, ...) print a message on stderr and exit 1.
"""
import argparse
import ctypes
import ctypes.util
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import idx  # bench/reference/idx.py, beside this script
from torch_threads import set_threads  # bench/reference/torch_threads.py, beside it too

WARMUP_STEPS = 20
EVAL_BATCH = 1000

# name, batch, description (as in bench/bench_cpu.cpp)
WORKLOADS = {
    "a": (100, "MLP 784-128-10, SGD lr 0.1"),
    "b": (100, "MLP 784-64-10, SGD lr 0.1"),
    "c": (100, "LeNet (conv 20-50, fc 800-500-10), SGD lr 0.1"),
    "d": (128, "MLP 784-1024-1024-10, Adam lr 1e-3"),
}


def fail(message):
    print(f"torch_cpu.py: error: {message}", file=sys.stderr)
    sys.exit(1)


# ---- data ----------------------------------------------------------------------------------
def read_idx(folder, name, magic):
    try:
        return idx.read_idx(folder, name, magic)
    except ValueError as e:
        fail(str(e))


def load_split(folder, prefix):
    """Images as float32 [N, 28, 28] in [0, 1] and labels as int64 [N]."""
    images = read_idx(folder, f"{prefix}-images-idx3-ubyte", 0x803).astype(np.float32) / 255.0
    labels = read_idx(folder, f"{prefix}-labels-idx1-ubyte", 0x801).astype(np.int64)
    if len(images) != len(labels):
        fail(f"{prefix} split in {folder}: {len(images)} images but {len(labels)} labels")
    return images, labels


def load_data(folder):
    train_images, train_labels = load_split(folder, "train")
    test_images, test_labels = load_split(folder, "t10k")
    mean = float(train_images.mean(dtype=np.float64))
    std = float(train_images.std(dtype=np.float64))

    def standardise(images):
        return torch.from_numpy((images - np.float32(mean)) / np.float32(std)).unsqueeze(1).contiguous()

    return (standardise(train_images), torch.from_numpy(train_labels),
            standardise(test_images), torch.from_numpy(test_labels), mean, std)


# ---- models ---------------------------------------------------------------------------------
def make_model(workload):
    if workload == "a":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
    if workload == "b":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 64), nn.ReLU(), nn.Linear(64, 10))
    if workload == "c":
        return nn.Sequential(
            nn.Conv2d(1, 20, 5), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(20, 50, 5), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(800, 500), nn.ReLU(), nn.Linear(500, 10))
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 1024), nn.ReLU(),
                         nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))


def make_optimizer(workload, model):
    if workload == "d":
        return torch.optim.Adam(model.parameters(), lr=1e-3)
    return torch.optim.SGD(model.parameters(), lr=0.1)


# ---- training -------------------------------------------------------------------------------
def train_steps(model, opt, inputs, targets, batch, steps):
    """The first `steps` steps of an epoch; returns the last step's loss."""
    n = inputs.shape[0]
    loss_value = float("nan")
    for i in range(steps):
        x = inputs[i * batch:min((i + 1) * batch, n)]
        y = targets[i * batch:min((i + 1) * batch, n)]
        loss = F.cross_entropy(model(x), y)
        loss_value = loss.item()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return loss_value


def test_accuracy(model, inputs, targets):
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, inputs.shape[0], EVAL_BATCH):
            logits = model(inputs[i:i + EVAL_BATCH])
            correct += int((logits.argmax(dim=1) == targets[i:i + EVAL_BATCH]).sum())
    model.train()
    return 100.0 * correct / inputs.shape[0]


def openblas():
    """OpenBLAS's own thread count and the kernel it runs (its core name), as a check that the
    environment reached it (None, None when no OpenBLAS is found)."""
    for name in ("libopenblas.so.0", ctypes.util.find_library("openblas"), "libblas.so.3"):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
            lib.openblas_get_corename.restype = ctypes.c_char_p
            return lib.openblas_get_num_threads(), lib.openblas_get_corename().decode()
        except (OSError, AttributeError):
            continue
    return None, None


def main():
    parser = argparse.ArgumentParser(description="PyTorch twin of bench_cpu")
    parser.add_argument("--workload", required=True, choices=sorted(WORKLOADS))
    parser.add_argument("--runs", type=int, required=True)
    parser.add_argument("--threads", type=int, required=True, help="torch intra-op threads")
    parser.add_argument("--mnist", default="data/mnist")
    parser.add_argument("--steps", type=int, default=0, help="time only the first S steps; no evaluation")
    args = parser.parse_args()
    if args.runs < 1 or args.threads < 1 or args.steps < 0:
        parser.error("--runs and --threads take at least 1; --steps S takes S >= 1 (0 = the whole epoch)")

    set_threads(args.threads)
    blas, kernel = openblas()
    print(f"# openblas_get_num_threads() = {blas if blas is not None else '(not found)'}, "
          f"openblas_get_corename() = {kernel or '(not found)'}, "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")

    train_x, train_y, test_x, test_y, mean, std = load_data(args.mnist)
    batch, description = WORKLOADS[args.workload]
    n = train_x.shape[0]
    epoch_steps = math.ceil(n / batch)
    steps = min(args.steps, epoch_steps) if args.steps else epoch_steps
    print(f"# data: MNIST {args.mnist} (train mean {mean:.6g}, std {std:.6g}), {n} train / {test_x.shape[0]} "
          f"test samples; workload {args.workload}: {description}, batch {batch}, {epoch_steps} steps/epoch"
          + (f"; timing the first {steps} steps only, no evaluation" if args.steps else ""))
    sys.stdout.flush()

    # Warm-up on a throwaway model; each run reseeds, so this does not change the runs.
    torch.manual_seed(0)
    model = make_model(args.workload)
    train_steps(model, make_optimizer(args.workload, model), train_x, train_y, batch,
                min(WARMUP_STEPS, epoch_steps))

    for run in range(args.runs):
        torch.manual_seed(1000 + run)
        model = make_model(args.workload)
        opt = make_optimizer(args.workload, model)
        t0 = time.perf_counter()
        loss = train_steps(model, opt, train_x, train_y, batch, steps)
        seconds = time.perf_counter() - t0
        accuracy = float("nan") if args.steps else test_accuracy(model, test_x, test_y)
        print(f"run torch {args.workload} {run} {seconds:.6f} {accuracy:.2f} {loss:.6f}")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
