"""Table examples against PyTorch: the same data, split, preparation and network shape.

    /usr/bin/python3 bench/reference/torch_tables.py examples/penguins_species.plexus [more.plexus ...]
        [--seeds 1,2,3] [--cli build/app/plexus-cli] [--threads 1]

For each project (a CSV dataset, a chain of Linear and ReLU layers ending in CrossEntropy or MSE)
and each seed, from the repository root:
1. Plexus, as a user runs it: `plexus-cli train P --seed S --run-dir D`, then
   `plexus-cli eval --checkpoint D/final.safetensors --json --predictions F` (the project inside
   the checkpoint, so its seed splits): test accuracy, or MAE, RMSE and R², with the baseline's.
2. PyTorch (torch.nn, torch's own initial weights seeded by S): the same rows (a missing target
   leaves a row out), the same split (Plexus's seeded permutations, tests/reference's replay:
   80% training, of which the project's validation_fraction is held out, 20% test), and the
   preparation written here again in Python from data/table_prep.h's rules, fitted on the
   training rows: a column's type detected over the whole file (numbers, dates, few distinct
   values: categories, else free text, left out), a missing number or date component filled
   with the training mean, a missing category with the most frequent one, a was-missing column
   where training had missing cells, categories one-hot with an "(other)" column, dates as
   year, month, day and weekday; numbers and date components then standardised with the
   training rows' mean and (population) std. The optimizer (Adam or SGD), learning rate, batch
   size and epochs are the project's; the final model is evaluated on the test rows.
   Checked against Plexus: the test rows (their lines, from eval --predictions) and the fitted
   preparation (input names and fill values, from the checkpoint's "table_preparation") must be
   Plexus's own, else the script stops.
Prints one line per seed and side, then the mean and spread over the seeds (markdown).
"""
import argparse
import csv
import datetime
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
import torch

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(REPO, "tests", "reference"))
from example_reference import mix_seed, split_indices  # noqa: E402

MISSING = {"na", "n/a", "nan", "null", "?"}  # csv_format::default_missing_values, without case


def is_missing(cell):
    return cell.strip(" \t") == "" or cell.strip(" \t").lower() in MISSING


def number(cell):
    try:
        v = float(cell.strip(" \t"))
    except ValueError:
        return None
    return float(np.float32(v)) if math.isfinite(v) else None


def date(cell):
    try:
        return datetime.date.fromisoformat(cell.strip(" \t").replace("/", "-")[:10]) if len(cell.strip()) == 10 else None
    except ValueError:
        return None


def column_type(cells):
    present = [c for c in cells if not is_missing(c)]
    if all(number(c) is not None for c in present):
        return "numeric"
    if all(date(c) is not None for c in present):
        return "date"
    distinct = len(set(c.strip(" \t") for c in present))
    return "categorical" if distinct <= 50 or distinct * 10 <= len(present) else "text"


def read_table(path):
    """(header, rows, lines): the cells of each record and the line it starts on."""
    with open(path, newline="", encoding="utf-8") as f:
        text = f.read()
    reader = csv.reader(text.splitlines(keepends=True))
    header = next(reader)
    rows, lines = [], []
    while True:
        line = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        if row:
            rows.append(row)
            lines.append(line)
    return header, rows, lines


def date_parts(d):
    return [d.year, d.month, d.day, d.weekday()]


def fit_preparation(header, rows, features, types, fit):
    """Per feature column: (name, type, fill, categories, indicator), fitted on rows `fit`."""
    prep = []
    for name in features:
        c = header.index(name)
        cells = [rows[r][c] for r in fit]
        present = [x for x in cells if not is_missing(x)]
        indicator = len(present) < len(cells)
        if types[name] == "numeric":
            values = [number(x) for x in present]
            prep.append((name, "numeric", [sum(values) / len(values)], None, indicator))
        elif types[name] == "date":
            parts = np.array([date_parts(date(x)) for x in present], dtype=np.float64)
            prep.append((name, "date", list(parts.mean(axis=0)), None, indicator))
        else:
            counts = {}
            for x in present:
                counts[x.strip(" \t")] = counts.get(x.strip(" \t"), 0) + 1
            categories = sorted(counts, key=lambda s: s.encode("utf-8"))
            fill = max(categories, key=lambda k: (counts[k], -categories.index(k)))
            prep.append((name, "categorical", fill, categories, indicator))
    return prep


def input_names(prep):
    names = []
    for name, kind, _, categories, indicator in prep:
        if kind == "categorical":
            names += ["%s=%s" % (name, k) for k in categories] + ["%s=(other)" % name]
        elif kind == "date":
            names += ["%s:%s" % (name, p) for p in ("year", "month", "day", "weekday")]
        else:
            names.append(name)
        if indicator:
            names.append("%s=(missing)" % name)
    return names


def prepare(header, rows, prep):
    """The prepared inputs of `rows` [N, width] and which inputs are standardised."""
    out, standardised = [], []
    for name, kind, fill, categories, indicator in prep:
        c = header.index(name)
        missing = np.array([is_missing(r[c]) for r in rows], dtype=np.float32)[:, None]
        if kind == "numeric":
            block = np.array([[fill[0] if is_missing(r[c]) else number(r[c])] for r in rows], dtype=np.float32)
            standardised.append(True)
        elif kind == "date":
            block = np.array([fill if is_missing(r[c]) else date_parts(date(r[c])) for r in rows], dtype=np.float32)
            standardised += [True] * 4
        else:
            block = np.zeros((len(rows), len(categories) + 1), dtype=np.float32)
            for i, r in enumerate(rows):
                v = fill if is_missing(r[c]) else r[c].strip(" \t")
                block[i, categories.index(v) if v in categories else len(categories)] = 1
            standardised += [False] * (len(categories) + 1)
        out.append(block)
        if indicator:
            out.append(missing)
            standardised.append(False)
    return np.concatenate(out, axis=1), np.array(standardised)


def checkpoint_preparation(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    return json.loads(header["__metadata__"]["table_preparation"])


def check_preparation(prep, plexus, where):
    ours = [(name, kind, fill, indicator) for name, kind, fill, _, indicator in prep]
    theirs = [(c["name"], c["type"], c["fill"], c["indicator"]) for c in plexus["columns"]]
    for a, b in zip(ours, theirs):
        same_fill = (a[2] == b[2]) if a[1] == "categorical" else np.allclose(a[2], b[2], rtol=1e-9, atol=0)
        if a[0] != b[0] or a[1] != b[1] or a[3] != b[3] or not same_fill:
            raise SystemExit("%s: the preparation differs from Plexus's: %s against %s" % (where, a, b))
    if len(ours) != len(theirs):
        raise SystemExit("%s: %d prepared columns here, %d in Plexus's" % (where, len(ours), len(theirs)))


def chain(project, width, classes):
    """The project's chain of Linear and ReLU layers as torch.nn, and its loss."""
    nodes = {n["id"]: n for n in project["nodes"]}
    nxt = {e["from"][0]: e["to"][0] for e in project["edges"] if e["from"][1] != "y"}
    layers, node, features = [], nxt["in"], width
    while nodes[node]["type"] in ("Linear", "ReLU"):
        if nodes[node]["type"] == "Linear":
            out = nodes[node]["params"]["out_features"]
            layers.append(torch.nn.Linear(features, out))
            features = out
        else:
            layers.append(torch.nn.ReLU())
        node = nxt[node]
    loss = nodes[node]["type"]
    if loss not in ("CrossEntropy", "MSE") or (loss == "CrossEntropy" and features != classes):
        raise SystemExit("torch_tables: %s after Linear/ReLU layers is not supported here" % loss)
    return torch.nn.Sequential(*layers), loss


def torch_run(project, seed, threads):
    """(figures, test lines, fitted preparation) of the PyTorch twin."""
    ds, tr = project["dataset"], project["training"]
    header, rows, lines = read_table(ds["path"])
    t = header.index(ds["target"])
    kept = [i for i, r in enumerate(rows) if not is_missing(r[t])]
    types = {name: column_type([r[c] for r in rows]) for c, name in enumerate(header)}
    features = ds.get("features") or [n for n in header if n != ds["target"] and types[n] != "text"]
    rest, test = split_indices(len(kept), 0.8, seed)
    fit, _ = split_indices(len(rest), 1.0 - tr.get("validation_fraction", 0.1), mix_seed(seed, 0x76616C))
    fit = [rest[i] for i in fit]
    rows_of = lambda idx: [rows[kept[i]] for i in idx]
    prep = fit_preparation(header, rows, features, types, [kept[i] for i in fit])
    x_fit, standardised = prepare(header, rows_of(fit), prep)
    x_test, _ = prepare(header, rows_of(test), prep)
    mean = np.where(standardised, x_fit.astype(np.float64).mean(axis=0), 0).astype(np.float32)
    std = (x_fit.astype(np.float64) - mean).std(axis=0)  # as CsvDataset::feature_stats: about the float mean
    std = np.where(standardised & (std > 0), std, 1).astype(np.float32)
    x_fit, x_test = torch.from_numpy((x_fit - mean) / std), torch.from_numpy((x_test - mean) / std)

    classify = ds["task"] == "classification"
    targets = [rows[i][t].strip(" \t") for i in kept]
    if classify:
        names = sorted(set(targets), key=lambda s: s.encode("utf-8"))
        y = torch.tensor([names.index(v) for v in targets])
    else:
        y = torch.tensor([number(v) for v in targets], dtype=torch.float32)
    y_fit, y_test = y[fit], y[test]

    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    model, loss_name = chain(project, x_fit.shape[1], len(names) if classify else 1)
    loss_fn = torch.nn.CrossEntropyLoss() if loss_name == "CrossEntropy" else torch.nn.MSELoss()
    if tr.get("optimizer", "sgd") == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=tr.get("lr", 0.1), weight_decay=tr.get("weight_decay", 0.0))
    else:
        opt = torch.optim.SGD(model.parameters(), lr=tr.get("lr", 0.1), momentum=tr.get("momentum", 0.0))
    batch = tr.get("batch_size", 100)
    for _ in range(tr.get("epochs", 5)):
        order = torch.randperm(len(x_fit))
        for b in range(0, len(order), batch):
            idx = order[b:b + batch]
            opt.zero_grad()
            out = model(x_fit[idx])
            loss = loss_fn(out, y_fit[idx]) if classify else loss_fn(out[:, 0], y_fit[idx])
            loss.backward()
            opt.step()
    with torch.no_grad():
        out = model(x_test)
    if classify:
        figures = {"accuracy": (out.argmax(1) == y_test).double().mean().item()}
    else:
        figures = regression_figures(out[:, 0].double().numpy(), y_test.double().numpy())
    return figures, [lines[kept[i]] for i in test], prep


def regression_figures(pred, target):
    err = pred - target
    return {"mae": float(np.abs(err).mean()), "rmse": float(np.sqrt((err ** 2).mean())),
            "r2": float(1 - (err ** 2).sum() / ((target - target.mean()) ** 2).sum())}


def plexus_run(cli, path, seed, threads, work):
    run = os.path.join(work, "%s-%d" % (os.path.splitext(os.path.basename(path))[0], seed))
    subprocess.run([cli, "train", path, "--seed", str(seed), "--run-dir", run, "--quiet", "--threads", str(threads)],
                   check=True, stdout=subprocess.DEVNULL)
    checkpoint, predictions = os.path.join(run, "final.safetensors"), os.path.join(work, "predictions.csv")
    out = subprocess.run([cli, "eval", "--checkpoint", checkpoint, "--json", "--predictions", predictions,
                          "--threads", str(threads)], check=True, stdout=subprocess.PIPE, text=True).stdout
    figures = json.loads(out)
    with open(predictions) as f:
        test_lines = [int(r["line"]) for r in csv.DictReader(f)]
    return figures, test_lines, checkpoint_preparation(checkpoint)


def mean_spread(values):
    return "%.4g ± %.2g" % (np.mean(values), np.std(values))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("projects", nargs="+")
    p.add_argument("--seeds", default="1,2,3,4,5")
    p.add_argument("--cli", default=os.path.join(REPO, "build", "app", "plexus-cli"))
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    print("torch %s, %d thread(s), OPENBLAS_CORETYPE=%s, seeds %s" %
          (torch.__version__, a.threads, os.environ.get("OPENBLAS_CORETYPE", "(unset)"), a.seeds))
    with tempfile.TemporaryDirectory() as work:
        for path in a.projects:
            project = json.load(open(path))
            classify = project["dataset"]["task"] == "classification"
            keys = ["accuracy"] if classify else ["mae", "rmse", "r2"]
            rows = {"plexus": [], "baseline": [], "torch": []}
            for seed in seeds:
                ours, our_lines, our_prep = plexus_run(a.cli, path, seed, a.threads, work)
                theirs, their_lines, prep = torch_run(project, seed, a.threads)
                if our_lines != their_lines:
                    raise SystemExit("%s seed %d: the test rows differ from Plexus's" % (path, seed))
                check_preparation(prep, our_prep, "%s seed %d" % (path, seed))
                if classify:
                    rows["plexus"].append([ours["eval_accuracy"]])
                    rows["baseline"].append([ours["baseline"]["accuracy"]])
                else:
                    rows["plexus"].append([ours[k] for k in keys])
                    rows["baseline"].append([ours["baseline"][k] for k in keys])
                rows["torch"].append([theirs[k] for k in keys])
                print("%s seed %d (%d test rows, %d inputs): %s" % (
                    os.path.basename(path), seed, len(our_lines), len(input_names(prep)),
                    "; ".join("%s %s" % (side, " ".join("%s %.4f" % (k, v) for k, v in zip(keys, r[-1])))
                              for side, r in rows.items())))
            print("\n| %s | %s |\n| --- | %s |" % (os.path.basename(path), " | ".join(keys), " | ".join("---" for _ in keys)))
            for side, r in rows.items():
                print("| %s | %s |" % (side, " | ".join(mean_spread([v[i] for v in r]) for i in range(len(keys)))))
            print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
