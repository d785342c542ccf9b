#!/usr/bin/env python3
"""The PyTorch twin of bench/bench_gpu.cpp: the same training workload, timed the same way.

    python3 bench/reference/torch_gpu.py [--device cuda:0|cpu] [--models a,b,...]
                                         [--epochs E] [--mnist DIR] [--graphs]

Works with torch 1.13 (Debian's CPU build) and torch 2.x with CUDA.

Workloads: bench_gpu.cpp's, with identical layer shapes, batch sizes, optimizers and data
shapes: mlp, mlp64, lenet (batch 100, SGD lr 0.1), lenet-b1024 (batch 1024, SGD lr 0.1),
mlp1024-adam (784-1024-1024-10, batch 1024, Adam lr 1e-3), resnet8 (CIFAR ResNet-8, batch
1024, SGD lr 0.1 momentum 0.9), lstm (Embedding(64 -> 64), nn.LSTM(hidden 256, one layer,
batch_first; cuDNN on CUDA), Linear(256 -> 64)) and transformer (Embedding(64 -> 128) plus
learned positions [64, 128], two pre-norm blocks of nn.MultiheadAttention(128, 4 heads,
batch_first, causal bool mask, need_weights=False) and a 512-wide GELU MLP, LayerNorm,
Linear(128 -> 64)), both batch 32 of 64 tokens, Adam lr 1e-3, logits [N, 64, 64] flattened
for cross-entropy against the next tokens.
Data: MNIST-shaped, the MNIST training split from DIR (train-images-idx3-ubyte[.gz] and
train-labels-idx1-ubyte[.gz], parsed here) standardised with its own mean and std, or else
60,000 synthetic N(0, 1) inputs [1, 28, 28] with random classes 0..9 from a fixed seed;
CIFAR-shaped, 25,600 synthetic N(0, 1) inputs [3, 32, 32]; tokens, 3,200 sequences of 65
uniformly random tokens 0..63 (the first 64 the input, the last 64 the targets). Each set is
copied to the device once, before any timing.

Training: cross-entropy. A step takes batch i as a slice of the resident tensors (in order,
no copy), runs forward and the loss, reads the loss with .item(), then
zero_grad(set_to_none=True), backward, step. One warm-up epoch, then E timed epochs (default
3), each timed by wall clock from a device synchronisation to the next; the median is
reported.

PyTorch runs in its best eager configuration: cudnn.benchmark on, the optimizer tried with
foreach=False and foreach=True (the faster is reported). TF32 is switched off so that both
sides do FP32 math. With --graphs (CUDA only), a second variant captures the whole step
(forward, loss, backward, optimizer step; Adam with capturable=True) in one CUDA graph,
replayed per batch after copying the batch into static input/target buffers, and reported as
"torch-graphs" If a capture fails (not yet tried on a GPU for lstm and transformer) a
"# torch-graphs <model>: capture failed: ..." line says so and the run goes on.

Output: the device and versions, then per model "torch <model> <device> <s/epoch> <loss>"
(and "torch-graphs ..." with --graphs); lines starting with '#' are commentary. A CUDA device
requested where none is usable prints "skipped: no CUDA device (<why>)" and exits 0.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import idx  # bench/reference/idx.py, beside this script

SYNTHETIC_SAMPLES = 60000
CIFAR_SAMPLES = 25600
SEQUENCES, SEQ, VOCAB = 3200, 64, 64
# name: (batch, optimizer, data)
WORKLOADS = {
    "mlp": (100, "sgd", "mnist"),
    "mlp64": (100, "sgd", "mnist"),
    "lenet": (100, "sgd", "mnist"),
    "lenet-b1024": (1024, "sgd", "mnist"),
    "mlp1024-adam": (1024, "adam", "mnist"),
    "resnet8": (1024, "sgd-momentum", "cifar"),
    "lstm": (32, "adam", "tokens"),
    "transformer": (32, "adam", "tokens"),
}


# ---- data ----------------------------------------------------------------------------------
def read_idx(folder, name, magic):
    try:
        return idx.read_idx(folder, name, magic)
    except ValueError as e:
        sys.exit(f"error: {e}")


def load_data(mnist_dir, device):
    if mnist_dir:
        images = read_idx(mnist_dir, "train-images-idx3-ubyte", 0x803).astype(np.float32) / 255.0
        labels = read_idx(mnist_dir, "train-labels-idx1-ubyte", 0x801).astype(np.int64)
        if len(images) != len(labels):
            sys.exit(f"error: {len(images)} images but {len(labels)} labels")
        mean = float(images.mean(dtype=np.float64))
        std = float(images.std(dtype=np.float64))
        inputs = torch.from_numpy((images - np.float32(mean)) / np.float32(std)).unsqueeze(1)
        targets = torch.from_numpy(labels)
        description = f"MNIST {mnist_dir} (mean {mean:.6g}, std {std:.6g})"
    else:
        gen = torch.Generator().manual_seed(1)
        inputs = torch.randn(SYNTHETIC_SAMPLES, 1, 28, 28, generator=gen)
        targets = torch.randint(0, 10, (SYNTHETIC_SAMPLES,), generator=gen)
        description = "synthetic N(0, 1), random labels"
    inputs, targets = inputs.contiguous().to(device), targets.to(device)
    sync(device)
    return inputs, targets, description


def cifar_data(device):
    gen = torch.Generator().manual_seed(1)
    inputs = torch.randn(CIFAR_SAMPLES, 3, 32, 32, generator=gen)
    targets = torch.randint(0, 10, (CIFAR_SAMPLES,), generator=gen)
    inputs, targets = inputs.to(device), targets.to(device)
    sync(device)
    return inputs, targets, "synthetic N(0, 1) [3, 32, 32], random labels"


def token_data(device):
    gen = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, VOCAB, (SEQUENCES, SEQ + 1), generator=gen)
    inputs, targets = tokens[:, :-1].contiguous().to(device), tokens[:, 1:].contiguous().to(device)
    sync(device)
    return inputs, targets, f"uniformly random tokens 0..{VOCAB - 1}, sequences of {SEQ}"


# ---- models (core/train/builtin.cpp) --------------------------------------------------------
class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = None
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        return F.relu(y + (self.shortcut(x) if self.shortcut is not None else x))


class LstmModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 64)
        self.lstm = nn.LSTM(64, 256, batch_first=True)
        self.out = nn.Linear(256, VOCAB)

    def forward(self, x):
        return self.out(self.lstm(self.embed(x))[0])


class PreNormBlock(nn.Module):
    def __init__(self, embed, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(embed)
        self.attn = nn.MultiheadAttention(embed, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(embed)
        self.mlp = nn.Sequential(nn.Linear(embed, 4 * embed), nn.GELU(), nn.Linear(4 * embed, embed))

    def forward(self, x, mask):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class Transformer(nn.Module):
    def __init__(self, embed=128, heads=4):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, embed)
        self.pos = nn.Parameter(torch.randn(SEQ, embed))
        self.blocks = nn.ModuleList([PreNormBlock(embed, heads) for _ in range(2)])
        self.ln = nn.LayerNorm(embed)
        self.out = nn.Linear(embed, VOCAB)
        # True = may not attend: query i sees keys j <= i only.
        self.register_buffer("mask", torch.triu(torch.ones(SEQ, SEQ, dtype=torch.bool), diagonal=1))

    def forward(self, x):
        t = x.shape[1]
        h = self.embed(x) + self.pos[:t]
        for block in self.blocks:
            h = block(h, self.mask[:t, :t])
        return self.out(self.ln(h))


def make_model(name):
    if name == "lstm":
        return LstmModel()
    if name == "transformer":
        return Transformer()
    if name in ("mlp", "mlp64"):
        hidden = 128 if name == "mlp" else 64
        return nn.Sequential(nn.Flatten(), nn.Linear(784, hidden), nn.ReLU(), nn.Linear(hidden, 10))
    if name == "mlp1024-adam":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                             nn.Linear(1024, 10))
    if name == "resnet8":
        return nn.Sequential(
            nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
            BasicBlock(16, 16, 1), BasicBlock(16, 32, 2), BasicBlock(32, 64, 2),
            nn.AvgPool2d(8), nn.Flatten(), nn.Linear(64, 10))
    return nn.Sequential(
        nn.Conv2d(1, 20, 5), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(20, 50, 5), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(800, 500), nn.ReLU(), nn.Linear(500, 10))


# ---- timing ---------------------------------------------------------------------------------
def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed_epochs(run_epoch, device, epochs):
    """One warm-up epoch, then the median seconds of `epochs` timed ones."""
    run_epoch()
    seconds = []
    for _ in range(epochs):
        sync(device)
        t0 = time.perf_counter()
        run_epoch()
        sync(device)
        seconds.append(time.perf_counter() - t0)
    return statistics.median(seconds)


def loss_fn(out, y):
    """Cross-entropy averaged over every position: [N, C] against [N], or [N, T, C] against [N, T]."""
    return F.cross_entropy(out.flatten(0, -2), y.flatten())


def make_optimizer(name, params, foreach, capturable=False):
    kind = WORKLOADS[name][1]
    if kind == "adam":
        return torch.optim.Adam(params, lr=1e-3, foreach=foreach, capturable=capturable)
    return torch.optim.SGD(params, lr=0.1, momentum=0.9 if kind == "sgd-momentum" else 0.0, foreach=foreach)


def bench_eager(name, inputs, targets, device, epochs, foreach):
    torch.manual_seed(1)
    model = make_model(name).to(device)
    opt = make_optimizer(name, model.parameters(), foreach)
    BATCH = WORKLOADS[name][0]
    steps = inputs.shape[0] // BATCH
    last = [0.0]

    def run_epoch():
        for i in range(steps):
            x = inputs[i * BATCH:(i + 1) * BATCH]
            y = targets[i * BATCH:(i + 1) * BATCH]
            loss = loss_fn(model(x), y)
            last[0] = loss.item()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

    return timed_epochs(run_epoch, device, epochs), last[0]


def bench_graphs(name, inputs, targets, device, epochs, foreach):
    """The whole step in one CUDA graph, as in the PyTorch docs ("whole-network capture")."""
    torch.manual_seed(1)
    model = make_model(name).to(device)
    opt = make_optimizer(name, model.parameters(), foreach, capturable=True)
    BATCH = WORKLOADS[name][0]
    steps = inputs.shape[0] // BATCH
    static_x = inputs[:BATCH].clone()
    static_y = targets[:BATCH].clone()

    # Warm-up on a side stream (cudnn.benchmark picks its algorithms, the optimizer and the
    # autograd engine set themselves up) before capture.
    side = torch.cuda.Stream(device)
    side.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            loss_fn(model(static_x), static_y).backward()
            opt.step()
    torch.cuda.current_stream(device).wait_stream(side)

    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)  # the grads are then allocated from the graph's pool
    with torch.cuda.graph(graph):
        static_loss = loss_fn(model(static_x), static_y)
        static_loss.backward()
        opt.step()

    last = [0.0]

    def run_epoch():
        for i in range(steps):
            static_x.copy_(inputs[i * BATCH:(i + 1) * BATCH])
            static_y.copy_(targets[i * BATCH:(i + 1) * BATCH])
            graph.replay()
            last[0] = static_loss.item()

    return timed_epochs(run_epoch, device, epochs), last[0]


def open_device(text, parser):
    """The device `text` names, its name and torch's version printed; None (after a "skipped: no CUDA
    device (...)" line) where a CUDA device is asked for and none is usable."""
    device = torch.device(text)
    if device.type == "cuda":
        if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
            print(f"skipped: no CUDA device (torch {torch.__version__}, CUDA build {torch.version.cuda})")
            return None
        device = torch.device("cuda", device.index if device.index is not None else 0)
        torch.cuda.set_device(device)
        print(f"device: {torch.cuda.get_device_name(device)} ({device})")
        print(f"# torch {torch.__version__}, CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}")
    elif device.type == "cpu":
        print(f"device: cpu ({torch.get_num_threads()} threads)")
        print(f"# torch {torch.__version__}")
    else:
        parser.error(f"unsupported device {text}")
    return device


def main():
    parser = argparse.ArgumentParser(description="PyTorch twin of bench_gpu")
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--models", default="mlp,mlp64,lenet")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--mnist", default="")
    parser.add_argument("--graphs", action="store_true", help="also time the step captured in a CUDA graph")
    args = parser.parse_args()
    models = [m for m in args.models.split(",") if m]
    unknown = [m for m in models if m not in WORKLOADS]
    if unknown or not models or args.epochs < 1:
        parser.error(f"--models takes {', '.join(WORKLOADS)}; --epochs at least 1")

    device = open_device(args.device, parser)
    if device is None:
        return 0
    device_name = str(device)

    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print("# FP32 math: TF32 off (torch.backends.cuda.matmul.allow_tf32 = False, "
          "torch.backends.cudnn.allow_tf32 = False), as Plexus does not use TF32; cudnn.benchmark = True")
    if args.graphs and device.type != "cuda":
        print("# --graphs ignored: CUDA graphs need a CUDA device")

    print(f"settings: median of {args.epochs} epochs after 1 warm-up")
    datasets = {}
    for name in models:
        kind = WORKLOADS[name][2]
        if kind not in datasets:
            make = {"mnist": lambda: load_data(args.mnist, device), "cifar": lambda: cifar_data(device),
                    "tokens": lambda: token_data(device)}
            datasets[kind] = make[kind]()
            print(f"data: {datasets[kind][2]}, {datasets[kind][0].shape[0]} samples")
        inputs, targets, _ = datasets[kind]
        print(f"# {name}: batch {WORKLOADS[name][0]}, {inputs.shape[0] // WORKLOADS[name][0]} steps/epoch")
        runs = {fe: bench_eager(name, inputs, targets, device, args.epochs, fe) for fe in (False, True)}
        best = min(runs, key=lambda fe: runs[fe][0])
        print(f"# torch {name}: foreach=False {runs[False][0]:.4f} s/epoch, foreach=True {runs[True][0]:.4f} "
              f"s/epoch; reporting foreach={best}")
        print(f"torch {name} {device_name} {runs[best][0]:.4f} {runs[best][1]:.4f}")
        if args.graphs and device.type == "cuda":
            # Capture of the sequence workloads (cuDNN's LSTM, attention) has not been tried on
            # every torch version: a failure is reported and leaves their graph row missing.
            try:
                seconds, loss = bench_graphs(name, inputs, targets, device, args.epochs, best)
            except RuntimeError as e:
                print(f"# torch-graphs {name}: capture failed: {e}")
            else:
                print(f"torch-graphs {name} {device_name} {seconds:.4f} {loss:.4f}  # foreach={best}")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
