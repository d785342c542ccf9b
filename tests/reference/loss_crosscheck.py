#!/usr/bin/python3
"""Cross-checks the loss layers against PyTorch's functional forms: random graphs ending in
CrossEntropy (class weights, ignore_index, label smoothing), NLL (after LogSoftmax; weights,
ignore_index), L1, SmoothL1 (beta), Huber (delta), KLDiv (batchmean, log_target) and
BCEWithLogits (pos_weight), `plexus-cli init` + `plexus-cli grad` against torch in float64.

ctest runs it as reference_losses (Skipped where torch is missing); by hand, with Debian's
PyTorch:

    /usr/bin/python3 tests/reference/loss_crosscheck.py [build/app/plexus-cli] [--seed S] [--graphs K]

It writes, in a temporary folder, two small CSV tables of F random features, one with a
regression target and one with class labels 0 .. C-1, and K project files (default 21: each loss
three times, with random parameters) drawn from a seeded generator:

    Input [N, F] -> Linear(H) -> Tanh -> Linear(C) [-> LogSoftmax] -> CrossEntropy or NLL
    Input [N, F] -> Linear(H) -> Tanh -> Linear(1) -> L1, SmoothL1, Huber, KLDiv or BCEWithLogits

with every weight drawn from U(-1, 1). The class weights are random (or none), ignore_index is
-100 (no target ignored) or one of the classes (the batch's targets of that class count for
nothing), and beta and delta straddle the batch's differences so that both branches are taken.
Each project goes through grad_crosscheck.check: our loss and every parameter gradient against
torch's F.cross_entropy, F.nll_loss, F.l1_loss, F.smooth_l1_loss, F.huber_loss,
F.kl_div(reduction='batchmean') and F.binary_cross_entropy_with_logits, relative tolerance 1e-5
of each tensor's largest magnitude.

Exit status 0 when every graph matches, 1 otherwise.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grad_crosscheck  # noqa: E402

TYPES = ["CrossEntropy", "NLL", "L1", "SmoothL1", "Huber", "KLDiv", "BCEWithLogits"]
CLASSIFICATION = ("CrossEntropy", "NLL")

node, edge = grad_crosscheck.node, grad_crosscheck.edge


def loss_params(rng, kind, classes):
    """Random parameters of loss `kind` (every one of its parameters set or left to its default)."""
    if kind in CLASSIFICATION:
        p = {}
        if rng.random() < 0.7:
            p["weight"] = [round(rng.uniform(0.1, 3.0), 3) for _ in range(classes)]
        if rng.random() < 0.6:
            p["ignore_index"] = rng.randrange(classes)
        if kind == "CrossEntropy" and rng.random() < 0.7:
            p["label_smoothing"] = round(rng.uniform(0.0, 0.5), 3)
        return p
    if kind == "SmoothL1":
        return {"beta": rng.choice([0.0, round(rng.uniform(0.5, 4.0), 3)])}
    if kind == "Huber":
        return {"delta": round(rng.uniform(0.5, 4.0), 3)}
    if kind == "KLDiv":
        return {"log_target": rng.random() < 0.5}
    if kind == "BCEWithLogits":
        return {"pos_weight": round(rng.uniform(0.2, 5.0), 3)}
    return {}


def project(rng, kind, classes):
    classify = kind in CLASSIFICATION
    nodes = [node("in", "Input"), node("fc", "Linear", {"out_features": rng.randint(3, 8)}), node("act", "Tanh"),
             node("out", "Linear", {"out_features": classes if classify else 1}),
             node("loss", kind, loss_params(rng, kind, classes))]
    edges = [edge("in", "fc", out="x"), edge("fc", "act"), edge("act", "out")]
    if kind == "NLL":  # log-probabilities
        nodes.append(node("lsm", "LogSoftmax"))
        edges += [edge("out", "lsm"), edge("lsm", "loss")]
    else:
        edges.append(edge("out", "loss"))
    edges.append(edge("in", "loss", "target", "y"))
    dataset = ({"kind": "csv", "path": "classes.csv", "target": "label", "task": "classification"} if classify else
               {"kind": "csv", "path": "table.csv", "target": "target", "task": "regression"})
    return grad_crosscheck.table_project(nodes, edges, dataset)


def main():
    def tables(workdir, rng):
        features, classes[0] = rng.randint(3, 8), rng.randint(3, 6)
        grad_crosscheck.write_table(os.path.join(workdir, "table.csv"), rng, features, "target",
                                    lambda _: "%.4f" % rng.gauss(3, 1))
        grad_crosscheck.write_table(os.path.join(workdir, "classes.csv"), rng, features, "label",
                                    lambda row: str(row % classes[0]))

    def make(rng, i):
        kind = TYPES[i % len(TYPES)]
        p = project(rng, kind, classes[0])
        return p, "%s %s" % (kind, json.dumps(p["nodes"][4]["params"]))

    classes = [0]  # drawn with the tables
    return grad_crosscheck.run_random_graphs("loss", 5, 3 * len(TYPES), make, check_seed=61, setup=tables)


if __name__ == "__main__":
    sys.exit(main())
