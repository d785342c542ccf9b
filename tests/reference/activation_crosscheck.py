#!/usr/bin/python3
"""Cross-checks the activation layers against PyTorch's functional forms: random graphs around
PReLU, ELU, SELU, SiLU, Mish, Softplus, Hardswish, Hardsigmoid, LogSoftmax and Identity,
`plexus-cli init` + `plexus-cli grad` against torch in float64.

ctest runs it as reference_activations (Skipped where torch is missing); by hand, with Debian's
PyTorch:

    /usr/bin/python3 tests/reference/activation_crosscheck.py [build/app/plexus-cli] [--seed S] [--graphs K]

It writes, in a temporary folder, a small CSV table (a regression dataset of F random features)
and K project files (default 30: each type three times, with random parameters) drawn from a
seeded generator:

    Input [N, F] -> Linear -> Reshape to a random [N, H], [N, C, L] or [N, C, H, W]
      -> the activation (sometimes two) -> Flatten -> Linear(1) -> MSE

with every weight drawn from U(-1, 1) (wide enough to reach every branch: ELU's negative side,
Softplus's threshold, Hardswish's flat sides beyond ±3). Each project goes through
grad_crosscheck.check: our loss and every parameter gradient (PReLU's slopes among them, one or
one per channel) against torch's F.prelu, F.elu, F.selu, F.silu, F.mish, F.softplus,
F.hardswish, F.hardsigmoid and F.log_softmax, relative tolerance 1e-5 of each tensor's largest
magnitude.

Exit status 0 when every graph matches, 1 otherwise.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grad_crosscheck  # noqa: E402

TYPES = ["PReLU", "ELU", "SELU", "SiLU", "Mish", "Softplus", "Hardswish", "Hardsigmoid", "LogSoftmax", "Identity"]


node, edge = grad_crosscheck.node, grad_crosscheck.edge


def activation_params(rng, kind, shape):
    """Random parameters of `kind` for per-example input `shape`."""
    if kind == "PReLU":
        return {"num_parameters": rng.choice([1, shape[0]])}  # dim 1 of the batch
    if kind == "ELU":
        return {"alpha": round(rng.uniform(0.2, 2.0), 3)}
    if kind == "Softplus":
        return {"beta": round(rng.uniform(0.5, 3.0), 3), "threshold": round(rng.uniform(0.5, 20.0), 3)}
    if kind == "LogSoftmax":
        rank = len(shape) + 1
        return {"dim": rng.choice([d for d in range(1, rank)] + [d - rank for d in range(1, rank)])}
    return {}


def project(rng, kinds):
    shape = rng.choice([[rng.randint(2, 9)], [rng.randint(2, 5), rng.randint(2, 6)],
                        [rng.randint(2, 4), rng.randint(2, 4), rng.randint(2, 4)]])
    size = 1
    for d in shape:
        size *= d
    nodes = [node("in", "Input"), node("fc", "Linear", {"out_features": size}),
             node("shape", "Reshape", {"shape": shape})]
    edges = [edge("in", "fc", out="x"), edge("fc", "shape")]
    last = "shape"
    for i, kind in enumerate(kinds):
        nid = "act%d" % i
        nodes.append(node(nid, kind, activation_params(rng, kind, shape)))
        edges.append(edge(last, nid))
        last = nid
    nodes += [node("flat", "Flatten"), node("out", "Linear", {"out_features": 1}), node("loss", "MSE")]
    edges += [edge(last, "flat"), edge("flat", "out"), edge("out", "loss"), edge("in", "loss", "target", "y")]
    return grad_crosscheck.table_project(nodes, edges), shape


def main():
    def make(rng, i):
        kinds = [TYPES[i % len(TYPES)]]  # every type in turn, sometimes followed by another
        if rng.random() < 0.3:
            kinds.append(rng.choice(TYPES))
        p, shape = project(rng, kinds)
        described = ", ".join("%s %s" % (n["type"], json.dumps(n["params"])) for n in p["nodes"] if n["type"] in TYPES)
        return p, "[N, %s] -> %s" % (", ".join(map(str, shape)), described)

    return grad_crosscheck.run_random_graphs("act", 7, 3 * len(TYPES), make, check_seed=41)


if __name__ == "__main__":
    sys.exit(main())
