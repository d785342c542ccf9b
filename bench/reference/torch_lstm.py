"""The PyTorch twin of bench/bench_lstm.cpp: the same LSTM language-model training step,
timed the same way.

    /usr/bin/python3 bench/reference/torch_lstm.py --threads T [--runs R] [--steps S]

Written for Debian's python3-torch 1.13 (CPU build: OpenMP intra-op threads, BLAS from the
system OpenBLAS); works with torch 2.x too. scripts/bench-lstm runs it once per candidate
configuration and compares it with build/bench/bench_lstm. --threads T sets torch's intra-op
threads; OPENBLAS_NUM_THREADS and OMP_WAIT_POLICY come from the environment (read when the
libraries load) and are printed.

Model: nn.Embedding(64, 64), nn.LSTM(64, 256, batch_first=True), nn.Linear(256, 64); logits
[32, 64, 64] reshaped to [32*64, 64] for F.cross_entropy (mean) against the next tokens
[32*64]. Adam lr 1e-3. Batch 32, sequence 64, vocabulary 64.
Data: 8 batches of uniformly random tokens, resident before timing, taken in turn. A step:
forward, loss, loss.item(), zero_grad(set_to_none=True), backward, step. A run: S steps
(default 20) timed by wall clock (time.perf_counter), after a warm-up of 10 untimed steps
before the first run. One model trains through all runs.

Output:
  device: cpu (torch T intra-op threads, OPENBLAS_NUM_THREADS=.., OMP_WAIT_POLICY=..)
  # torch <version>
  run torch <run index> <seconds per step> <last loss>
"""
import argparse
import time

import torch
import torch.nn.functional as F
from torch import nn

from torch_threads import set_threads  # bench/reference/torch_threads.py, beside this script

BATCH, SEQ, VOCAB, EMBED, HIDDEN, BATCHES = 32, 64, 64, 64, 256, 8


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMBED)
        self.lstm = nn.LSTM(EMBED, HIDDEN, batch_first=True)
        self.out = nn.Linear(HIDDEN, VOCAB)

    def forward(self, x):
        y, _ = self.lstm(self.embed(x))
        return self.out(y)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--steps", type=int, default=20)
    a = p.parse_args()
    set_threads(a.threads)
    g = torch.Generator().manual_seed(1234)
    data = []
    for _ in range(BATCHES):
        whole = torch.randint(0, VOCAB, (BATCH, SEQ + 1), generator=g)
        data.append((whole[:, :SEQ].contiguous(), whole[:, 1:].reshape(BATCH * SEQ)))
    torch.manual_seed(1000)
    model = Model()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    step = 0

    def train(steps):
        nonlocal step
        loss_value = 0.0
        for _ in range(steps):
            x, y = data[step % BATCHES]
            step += 1
            loss = F.cross_entropy(model(x).reshape(BATCH * SEQ, VOCAB), y)
            loss_value = loss.item()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        return loss_value

    train(10)
    for r in range(a.runs):
        t0 = time.perf_counter()
        loss = train(a.steps)
        seconds = time.perf_counter() - t0
        print(f"run torch {r} {seconds / a.steps:.6f} {loss:.4f}", flush=True)


if __name__ == "__main__":
    main()
