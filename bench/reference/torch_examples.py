"""The PyTorch twin of bench/bench_examples.cpp: an example project's training epochs, timed.

    /usr/bin/python3 bench/reference/torch_examples.py --project FILE --threads T [--runs R]
        [--examples N] [--cli build/app/plexus-cli]

Written for Debian's python3-torch 1.13 (CPU build: OpenMP intra-op threads, BLAS from the
system OpenBLAS). scripts/bench-examples runs it once per candidate configuration and compares it
with build/bench/bench_examples. --threads T sets torch's intra-op threads; OPENBLAS_NUM_THREADS
and OMP_WAIT_POLICY come from the environment (read when the libraries load) and are printed.

The model is the project's graph in torch's functional forms on Plexus's own initial weights
(`plexus-cli init` with the project's seed; tests/reference/grad_crosscheck.run_graph: packed
sequences for a recurrent layer over lengths, BatchNorm updating its running statistics), the
data are the project's as tests/reference/example_reference.py reads them (images standardised
and resident; labelled texts encoded and split as Plexus does, so the training examples are
Plexus's own, in the same order), the optimizer, learning rate and batch size are the project's
(the learning-rate schedule is left out: it does not change the work). --examples N trains on the
first N training examples only (as bench_examples --examples N).
Each epoch shuffles them with torch's generator and runs, per batch: gather x[idx], y[idx],
zero_grad, forward and loss, backward, step, loss.item(). 1 + R epochs: the first warms up and
is not reported; each other is timed by wall clock (time.perf_counter). Reading the dataset,
`plexus-cli init` and torch's start-up come before any timing.

Output:
  device: cpu (torch T intra-op threads, OPENBLAS_NUM_THREADS=.., OMP_WAIT_POLICY=..)
  # torch <version>
  train_examples <M>    the project's whole training split (an epoch of the project)
  samples <N>           examples per timed epoch (M, or --examples)
  run torch <i> <seconds> <mean training loss>
"""
import argparse
import json
import os
import sys
import tempfile
import time

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(REPO, "tests", "reference"))
import example_reference as er  # noqa: E402
import names_reference as nr  # noqa: E402
from torch_threads import set_threads  # noqa: E402 (beside this script)

torch = er.torch


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--project", required=True)
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--examples", type=int, default=0)
    p.add_argument("--cli", default=os.path.join(REPO, "build", "app", "plexus-cli"))
    a = p.parse_args()
    set_threads(a.threads)
    project = json.load(open(a.project))
    tr = project["training"]
    gen = torch.Generator().manual_seed(tr.get("seed", 1))
    torch.manual_seed(tr.get("seed", 1))  # dropout
    x, y, train_idx, _, _ = er.training_data(project, a.project, gen)
    print(f"train_examples {len(train_idx)}")
    if a.examples:
        train_idx = train_idx[:a.examples]
    print(f"samples {len(train_idx)}", flush=True)
    with tempfile.TemporaryDirectory() as workdir:
        weights, params = er.trainable_weights(nr.initial_weights(a.cli, a.project, project, workdir))
    opt = nr.make_optimizer(tr, params)
    batch = tr.get("batch_size", 100)
    for epoch in range(1 + a.runs):
        t0 = time.perf_counter()
        loss = er.train_epoch(project, weights, opt, x, y, train_idx, batch, gen)
        seconds = time.perf_counter() - t0
        if epoch > 0:
            print(f"run torch {epoch - 1} {seconds:.6f} {loss:.6f}", flush=True)


if __name__ == "__main__":
    main()
