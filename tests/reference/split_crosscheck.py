#!/usr/bin/python3
"""Cross-checks the layers with several output ports against PyTorch: Split (torch.split with a list
of sections), Chunk (torch.chunk) and Slice (x[:, start:end:step], negative and out-of-range bounds
included), and a recurrent layer's final state (h_n of its last layer), `plexus-cli init` +
`plexus-cli grad` against torch in float64.

ctest runs it as reference_split (Skipped where torch is missing); by hand, with Debian's PyTorch:

    /usr/bin/python3 tests/reference/split_crosscheck.py [build/app/plexus-cli] [--seed S] [--graphs K]

It writes, in a temporary folder, a small CSV table (a regression dataset of F random features)
and K project files (default 32) drawn from a seeded generator:

    Input [N, F] -> Linear -> Reshape to a random [N, A, B] or [N, A, B, C]
      -> Split / Chunk (random sections or chunks along a random dim) or Slice
      -> every piece, wired in a shuffled order -> Flatten each -> Concat -> Linear(1) -> MSE

    Input [N, F] -> Linear -> Reshape to [N, T, E] -> LSTM / GRU / RNN (random hidden size, layers,
      direction) -> its state, and its output at every step flattened -> Concat -> Linear(1) -> MSE

Each project goes through grad_crosscheck.check: our loss and every parameter gradient against
torch's (a piece wired to the wrong port, or a gradient routed back to the wrong part of the
input, shows in the Linear weights' gradients), relative tolerance 1e-5 of each tensor's largest
magnitude.

Exit status 0 when every graph matches, 1 otherwise.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grad_crosscheck  # noqa: E402

KINDS = ["Split", "Chunk", "Slice", "Recurrent"]

node, edge = grad_crosscheck.node, grad_crosscheck.edge


def cut_params(rng, kind, shape):
    """Random parameters of Split, Chunk or Slice for per-example `shape`; the pieces' port names."""
    dim = rng.randint(1, len(shape))
    n = shape[dim - 1]
    if kind == "Split":
        sections = []
        while sum(sections) < n and len(sections) < 7:
            sections.append(rng.randint(1, n - sum(sections)))
        if sum(sections) < n:
            sections.append(n - sum(sections))
        return {"sections": sections, "dim": dim}, len(sections)
    if kind == "Chunk":
        # torch.chunk gives fewer pieces than asked for where ceil(n / chunks) covers n sooner.
        chunks = rng.choice([c for c in range(1, min(n, 8) + 1) if -(-n // -(-n // c)) == c])
        return {"chunks": chunks, "dim": dim}, chunks
    while True:  # bounds past either end and negative ones, as long as something is kept
        start, end, step = rng.randint(-n - 2, n + 1), rng.randint(-n - 2, n + 3), rng.randint(1, 3)
        end = None if rng.random() < 0.2 else end
        if len(range(n)[start:end:step]):
            break
    params = {"dim": dim, "start": start, "step": step}
    if end is not None:
        params["end"] = end
    return params, 0


def project(rng, kind):
    if kind == "Recurrent":
        steps, features = rng.randint(1, 5), rng.randint(1, 4)
        shape = [steps, features]
        layer = node("cut", rng.choice(["LSTM", "GRU", "RNN"]),
                     {"hidden_size": rng.randint(1, 5), "num_layers": rng.randint(1, 2),
                      "bidirectional": rng.random() < 0.5})
        ports = ["state", "output"]
        if rng.random() < 0.4:
            ports = ["state"]
    else:
        shape = [rng.randint(1, 5) for _ in range(rng.randint(2, 3))]
        params, pieces = cut_params(rng, kind, shape)
        layer = node("cut", kind, params)
        ports = ["output%d" % i for i in range(pieces)] if pieces else ["output"]
    rng.shuffle(ports)
    size = 1
    for d in shape:
        size *= d
    nodes = [node("in", "Input"), node("fc", "Linear", {"out_features": size}),
             node("shape", "Reshape", {"shape": shape}), layer]
    edges = [edge("in", "fc", out="x"), edge("fc", "shape"), edge("shape", "cut")]
    for i, port in enumerate(ports):
        nodes.append(node("flat%d" % i, "Flatten"))
        edges += [edge("cut", "flat%d" % i, out=port), edge("flat%d" % i, "join", "inputs")]
    nodes += [node("join", "Concat"), node("out", "Linear", {"out_features": 1}), node("loss", "MSE")]
    edges += [edge("join", "out"), edge("out", "loss"), edge("in", "loss", "target", "y")]
    return grad_crosscheck.table_project(nodes, edges), shape, ports


def main():
    def make(rng, i):
        p, shape, ports = project(rng, KINDS[i % len(KINDS)])
        layer = p["nodes"][3]
        return p, "[N, %s] -> %s %s -> %s" % (", ".join(map(str, shape)), layer["type"], json.dumps(layer["params"]),
                                              ", ".join(ports))

    return grad_crosscheck.run_random_graphs("split", 17, 8 * len(KINDS), make, check_seed=71)


if __name__ == "__main__":
    sys.exit(main())
