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
import random
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grad_crosscheck  # noqa: E402

TYPES = ["PReLU", "ELU", "SELU", "SiLU", "Mish", "Softplus", "Hardswish", "Hardsigmoid", "LogSoftmax", "Identity"]
ROWS = 40


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
    return {"format": 1, "nodes": nodes, "edges": edges,
            "dataset": {"kind": "csv", "path": "table.csv", "target": "target", "task": "regression"},
            "training": {"optimizer": "sgd", "lr": 0.1, "batch_size": 16, "epochs": 1, "seed": 1,
                         "validation_fraction": 0.1, "device": "cpu"}}, shape


def main():
    cli, seed, graphs = grad_crosscheck.random_graph_args(7, 3 * len(TYPES))
    rng = random.Random(seed)
    print("torch %s, %s, seed %d" % (grad_crosscheck.torch.__version__, cli, seed))
    all_ok = True
    with tempfile.TemporaryDirectory() as workdir:
        features = rng.randint(3, 8)
        with open(os.path.join(workdir, "table.csv"), "w") as f:
            f.write(",".join(["f%d" % i for i in range(features)] + ["target"]) + "\n")
            for _ in range(ROWS):
                f.write(",".join("%.4f" % rng.gauss(0, 1) for _ in range(features + 1)) + "\n")
        for i in range(graphs):
            kinds = [TYPES[i % len(TYPES)]]  # every type in turn, sometimes followed by another
            if rng.random() < 0.3:
                kinds.append(rng.choice(TYPES))
            p, shape = project(rng, kinds)
            path = os.path.join(workdir, "act%02d.plexus" % i)
            with open(path, "w") as f:
                json.dump(p, f, indent=1)
            described = ", ".join("%s %s" % (n["type"], json.dumps(n["params"]))
                                  for n in p["nodes"] if n["type"] in TYPES)
            print("act%02d: [N, %s] -> %s" % (i, ", ".join(map(str, shape)), described))
            all_ok = grad_crosscheck.check(cli, path, workdir, seed=41 + i, random_weights=True) and all_ok
    print("CROSSCHECK %s" % ("PASSED" if all_ok else "FAILED"))
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
