#!/usr/bin/env python3
"""The PyTorch twin of bench/bench_gpu_models.cpp: the same two models, steps timed the same way.

    python3 bench/reference/torch_gpu_models.py [--device cuda:0|cpu] [--models gpt,resnet]
        [--precisions fp32,bf16] [--batch B] [--warmup W] [--steps S] [--runs R] [--no-graphs]
        [--flops gpt=F,resnet=F] [--peak fp32=T,bf16=T]

Written for PyTorch 2.x with CUDA; also runs on Debian's torch 1.13 CPU build (the smoke run
here), which has no scaled_dot_product_attention: attention then falls back to the explicit
softmax(QK^T / sqrt(d) + causal mask) V, and the output says so (that is not the reference
issue 49 asks for).

Models (the projects' graphs, layer for layer; the parameter counts are printed and
scripts/bench-gpu-models checks them against Plexus's):
  gpt     bench/projects/gpt_char_6x384.plexus: Embedding(54, 384) plus learned positions
          [256, 384], 6 pre-norm blocks (LayerNorm, causal attention of 6 heads through
          F.scaled_dot_product_attention(is_causal=True) with one [384 -> 1152] input projection
          and a [384 -> 384] output one, residual; LayerNorm, Linear(384 -> 1536), exact GELU,
          Linear(1536 -> 384), residual), LayerNorm, Linear(384 -> 54); batch 64 of 256 tokens;
          Adam lr 3e-4 (the project's)
  resnet  examples/fashion_resnet.plexus: 3x3 stem of 16 channels with BatchNorm and ReLU, three
          basic blocks (16, 32, 64 channels, the last two halving the picture with a 1x1
          projection shortcut), global average pooling, Linear(64 -> 10); batch 256 of
          [1, 28, 28]; SGD lr 0.05, Nesterov momentum 0.9, weight decay 5e-4 (the project's)
Data: 8 synthetic batches resident on the device, used in turn (random token ids 0..53 and
next tokens; N(0, 1) images and random classes 0..9).

A step: zero_grad, forward and cross-entropy (over every position for gpt), backward,
optimizer step, loss.item(). Variants: eager (cudnn.benchmark on, the optimizer's default foreach) and, with
CUDA, graphs: the whole step (forward, loss, backward, step; Adam capturable=True) captured
once in torch.cuda.graphs after a warm-up on a side stream and replayed per batch after
copying it into static buffers, as the PyTorch docs' whole-network capture does. Precisions:
fp32 with TF32 off (matmul.allow_tf32 = cudnn.allow_tf32 = False: FP32 math, as Plexus does),
bf16 as torch.autocast(dtype=torch.bfloat16) around forward and loss (weights and optimizer
FP32). W warm-up steps (default 10), then R runs of S steps timed by wall clock from a device
synchronisation to the next; the median run gives the step time.

--flops and --peak (scripts/bench-gpu-models passes Plexus's estimate and the device's peaks)
give the model FLOP/s and MFU; without them those fields are "-".

Output: "device: ...", "# torch ..." and per model
  model <name> - parameters <P> flops_per_example <F|-> batch <B>
  result <variant> <name> <precision> <ms/step> <examples/s> <model TFLOP/s|-> <MFU %|-> <loss>
with variant torch or torch-graphs. A CUDA device asked for where none is usable prints
"skipped: no CUDA device (...)" and exits 0.
"""
import argparse
import math
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

from torch_gpu import BasicBlock, open_device  # bench/reference/torch_gpu.py, beside this script

VOCAB, SEQ, WIDTH, HEADS, LAYERS = 54, 256, 384, 6, 6
BATCHES = 8
HAS_SDPA = hasattr(F, "scaled_dot_product_attention")
# name: (batch, input shape, classes)
WORKLOADS = {"gpt": (64, (SEQ,), VOCAB), "resnet": (256, (1, 28, 28), 10)}


# ---- models ---------------------------------------------------------------------------------
class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.in_proj = nn.Linear(WIDTH, 3 * WIDTH)
        self.out_proj = nn.Linear(WIDTH, WIDTH)

    def forward(self, x):
        n, t, e = x.shape
        q, k, v = (z.view(n, t, HEADS, e // HEADS).transpose(1, 2) for z in self.in_proj(x).split(e, dim=2))
        if HAS_SDPA:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # torch 1.x
            scores = q @ k.transpose(-2, -1) / math.sqrt(e // HEADS)
            mask = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
            y = scores.masked_fill(mask, float("-inf")).softmax(-1) @ v
        return self.out_proj(y.transpose(1, 2).reshape(n, t, e))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm_a = nn.LayerNorm(WIDTH)
        self.attn = CausalSelfAttention()
        self.norm_m = nn.LayerNorm(WIDTH)
        self.mlp = nn.Sequential(nn.Linear(WIDTH, 4 * WIDTH), nn.GELU(), nn.Linear(4 * WIDTH, WIDTH))

    def forward(self, x):
        x = x + self.attn(self.norm_a(x))
        return x + self.mlp(self.norm_m(x))


class Gpt(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.pos = nn.Parameter(0.02 * torch.randn(SEQ, WIDTH))
        self.blocks = nn.Sequential(*[Block() for _ in range(LAYERS)])
        self.norm = nn.LayerNorm(WIDTH)
        self.out = nn.Linear(WIDTH, VOCAB)

    def forward(self, x):
        return self.out(self.norm(self.blocks(self.embed(x) + self.pos[:x.shape[1]])))


def resnet():
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
        BasicBlock(16, 16, 1), BasicBlock(16, 32, 2), BasicBlock(32, 64, 2),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))


def make_model(name):
    return Gpt() if name == "gpt" else resnet()


def make_optimizer(name, params, capturable):
    if name == "gpt":
        return torch.optim.Adam(params, lr=3e-4, capturable=capturable)
    return torch.optim.SGD(params, lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4)


# ---- data and steps ---------------------------------------------------------------------------
def synthetic(name, batch, device):
    _, shape, classes = WORKLOADS[name]
    gen = torch.Generator().manual_seed(1)
    n = BATCHES * batch
    if name == "gpt":
        inputs = torch.randint(0, classes, (n,) + shape, generator=gen)
        targets = torch.randint(0, classes, (n,) + shape, generator=gen)
    else:
        inputs = torch.randn((n,) + shape, generator=gen)
        targets = torch.randint(0, classes, (n,), generator=gen)
    return inputs.to(device), targets.to(device)


def loss_fn(out, y):
    """Cross-entropy averaged over every position: [N, C] against [N], or [N, T, C] against [N, T]."""
    return F.cross_entropy(out.flatten(0, -2), y.flatten())


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(step, device, a):
    """a.warmup steps, then the median per-step seconds of a.runs runs of a.steps steps."""
    for i in range(a.warmup):
        step(i % BATCHES)
    seconds = []
    for _ in range(a.runs):
        sync(device)
        t0 = time.perf_counter()
        for i in range(a.steps):
            step(i % BATCHES)
        sync(device)
        seconds.append((time.perf_counter() - t0) / a.steps)
    return statistics.median(seconds)


def autocast(device, bf16, cache_enabled=True):
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=cache_enabled)


def bench_eager(name, data, batch, device, bf16, a):
    torch.manual_seed(1)
    model = make_model(name).to(device)
    opt = make_optimizer(name, model.parameters(), capturable=False)
    inputs, targets = data
    last = [0.0]

    def step(i):
        opt.zero_grad(set_to_none=True)
        rows = slice(i * batch, (i + 1) * batch)
        with autocast(device, bf16):
            loss = loss_fn(model(inputs[rows]), targets[rows])
        loss.backward()
        opt.step()
        last[0] = loss.item()

    return timed(step, device, a), last[0]


def bench_graphs(name, data, batch, device, bf16, a):
    """The whole step in one CUDA graph (the PyTorch docs' "whole-network capture")."""
    torch.manual_seed(1)
    model = make_model(name).to(device)
    opt = make_optimizer(name, model.parameters(), capturable=True)
    inputs, targets = data
    static_x, static_y = inputs[:batch].clone(), targets[:batch].clone()

    def forward_backward():
        with autocast(device, bf16, cache_enabled=False):  # autocast's cache must stay off in a capture
            loss = loss_fn(model(static_x), static_y)
        loss.backward()
        return loss

    side = torch.cuda.Stream(device)
    side.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            forward_backward()
            opt.step()
    torch.cuda.current_stream(device).wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_loss = forward_backward()
        opt.step()
    last = [0.0]

    def step(i):
        rows = slice(i * batch, (i + 1) * batch)
        static_x.copy_(inputs[rows])
        static_y.copy_(targets[rows])
        graph.replay()
        last[0] = static_loss.item()

    return timed(step, device, a), last[0]


def named_values(text, what):
    values = {}
    for part in filter(None, text.split(",")):
        key, _, value = part.partition("=")
        try:
            values[key] = float(value)
        except ValueError:
            sys.exit(f"error: {what} takes name=number,...; got '{part}'")
    return values


def main():
    p = argparse.ArgumentParser(description="PyTorch twin of bench_gpu_models")
    p.add_argument("--device", default="cuda:0")
    p.add_argument("--models", default="gpt,resnet")
    p.add_argument("--precisions", default="fp32,bf16")
    p.add_argument("--batch", type=int, default=0)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--no-graphs", action="store_true")
    p.add_argument("--flops", default="", help="training FLOPs per example by model: gpt=F,resnet=F")
    p.add_argument("--peak", default="", help="the device's peak TFLOP/s by precision: fp32=T,bf16=T")
    a = p.parse_args()
    models = [m for m in a.models.split(",") if m]
    precisions = [m for m in a.precisions.split(",") if m]
    if (not models or any(m not in WORKLOADS for m in models) or not precisions
            or any(q not in ("fp32", "bf16") for q in precisions) or a.batch < 0 or a.warmup < 0 or a.steps < 1
            or a.runs < 1):
        p.error("--models takes gpt,resnet; --precisions fp32,bf16; --steps and --runs at least 1")
    flops, peak = named_values(a.flops, "--flops"), named_values(a.peak, "--peak")

    device = open_device(a.device, p)
    if device is None:
        return 0
    major = int(torch.__version__.split(".")[0])
    if major < 2 or not HAS_SDPA:
        print(f"# torch {torch.__version__} is older than 2: no scaled_dot_product_attention, explicit attention "
              "instead; not the PyTorch 2.x reference of issue 49")
    graphs = device.type == "cuda" and not a.no_graphs
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"settings: {a.warmup} warm-up steps, median of {a.runs} runs of {a.steps} steps; variants: eager"
          f"{', CUDA graphs' if graphs else ''}; FP32 with TF32 off, bf16 by autocast")
    sys.stdout.flush()

    for name in models:
        batch = a.batch or WORKLOADS[name][0]
        torch.manual_seed(1)
        parameters = sum(t.numel() for t in make_model(name).parameters())
        per_example = flops.get(name)
        print(f"model {name} - parameters {parameters} flops_per_example {per_example or '-'} batch {batch}")
        data = synthetic(name, batch, device)
        for precision in precisions:
            bf16 = precision == "bf16"
            variants = [("torch", bench_eager)] + ([("torch-graphs", bench_graphs)] if graphs else [])
            for variant, run in variants:
                try:
                    seconds, loss = run(name, data, batch, device, bf16, a)
                except RuntimeError as e:  # a capture PyTorch refuses: reported, the table marks it missing
                    print(f"# {variant} {name} {precision}: failed: {e}")
                    continue
                examples = batch / seconds
                tflops = per_example * examples / 1e12 if per_example else None
                mfu = 100 * tflops / peak[precision] if tflops and peak.get(precision) else None
                print(f"result {variant} {name} {precision} {1e3 * seconds:.4f} {examples:.1f} "
                      f"{'-' if tflops is None else f'{tflops:.3f}'} {'-' if mfu is None else f'{mfu:.6f}'} {loss:.4f}")
                sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
