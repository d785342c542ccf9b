#!/usr/bin/python3
"""Example projects against PyTorch: the same graph, initial weights, data and schedule.

    /usr/bin/python3 tests/reference/example_reference.py examples/mnist_autoencoder.plexus [more.plexus ...]
        [--cli build/app/plexus-cli] [--threads 2] [--epochs E] [--skip-plexus]

For each project on an IDX image dataset (`mnist` or `fashion-mnist`) or on labelled texts
(`text_classes`, e.g. examples/names_gender.plexus):
1. `plexus-cli train P --metrics F` trains it as a user would (unless --skip-plexus); the final
   model's test figures (the "test" line: loss, accuracy, each loss node's loss) are read back.
2. PyTorch trains the same graph: the initial weights are Plexus's own (`plexus-cli init` with the
   project's seed), the network is grad_crosscheck.run_graph (torch's functional forms on those
   weights, float32; BatchNorm updates its running statistics as it trains; several loss nodes
   sum, each times its loss_weight), the inputs are standardised with the training split's mean
   and std, the split holds out the project's validation_fraction of the training images, and
   the optimizer, learning rate, weight decay, schedule, batch size and epochs are the project's.
   Images: the held-out images and the shuffling are drawn from torch's own generator, so they
   are not the same images as Plexus's (the test split is the same 10,000). Labelled texts: the
   examples are read, lowercased and encoded as Plexus does (data/text_classes.h) and split with
   Plexus's own seeded permutations (data/sampling.h, replayed here), so the test, validation
   and training names are the very same; only the shuffling and dropout draw from torch.
3. Both sides' test figures are printed with their differences: accuracy (points) for a
   classification, and each loss, with its relative difference.
"""
import json
import math
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "reference"))
import grad_crosscheck as gc  # noqa: E402
import names_reference as nr  # noqa: E402
from idx import read_idx  # noqa: E402

torch = gc.torch


def load_images(project, project_path):
    """(train x, train y), (test x, test y): raw pixels / 255 as float32 [N, 1, 28, 28], labels."""
    ds = project["dataset"]
    if ds["kind"] not in ("mnist", "fashion-mnist"):
        raise SystemExit("image_reference: dataset kind %s is not an IDX image set" % ds["kind"])
    folder = ds["path"] if os.path.isabs(ds["path"]) else os.path.join(gc.REPO, ds["path"])

    def split(prefix):
        x = read_idx(folder, prefix + "-images-idx3-ubyte", 2051)
        y = read_idx(folder, prefix + "-labels-idx1-ubyte", 2049)
        return (torch.tensor(x, dtype=torch.float32).unsqueeze(1) * (1 / 255.0),
                torch.tensor(y.astype("int64"), dtype=torch.float32))

    return split("train"), split("t10k")


# ---- Plexus's seeded splits (data/sampling.h, tensor/generator.h), replayed -------------------
M64 = (1 << 64) - 1


def splitmix(x):
    x = (x + 0x9e3779b97f4a7c15) & M64
    x = ((x ^ (x >> 30)) * 0xbf58476d1ce4e5b9) & M64
    x = ((x ^ (x >> 27)) * 0x94d049bb133111eb) & M64
    return x ^ (x >> 31)


def mix_seed(a, b, c=0):
    return splitmix(splitmix(splitmix(a) ^ b) ^ c)


class Xoshiro:
    """Generator: xoshiro256** seeded by splitmix64."""
    def __init__(self, seed):
        self.s, x = [], seed
        for _ in range(4):
            x = (x + 0x9e3779b97f4a7c15) & M64
            self.s.append(splitmix((x - 0x9e3779b97f4a7c15) & M64))

    def next(self):
        s = self.s
        rotl = lambda v, k: ((v << k) | (v >> (64 - k))) & M64
        result = (rotl((s[1] * 5) & M64, 7) * 9) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result


def split_indices(n, train_fraction, seed):
    p, gen = list(range(n)), Xoshiro(seed)
    for i in range(n - 1, 0, -1):
        bound = i + 1
        limit = M64 - M64 % bound
        x = gen.next()
        while x >= limit:
            x = gen.next()
        j = x % bound
        p[i], p[j] = p[j], p[i]
    k = int(math.floor(train_fraction * n + 0.5))  # llround
    return sorted(p[:k]), sorted(p[k:])


def lowercase(text):
    """A-Z and the Latin-1 capitals but × to their small letters (data::lowercase_text)."""
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" or ("\u00c0" <= c <= "\u00de" and c != "\u00d7") else c
                   for c in text)


def load_labelled_texts(project):
    """(train, validation, test) as (ids [N, T], labels [N]) of a text_classes folder of <class>.txt
    files, as Plexus reads, encodes and splits it."""
    ds, tr = project["dataset"], project["training"]
    folder = ds["path"] if os.path.isabs(ds["path"]) else os.path.join(gc.REPO, ds["path"])
    texts, labels = [], []
    for k, name in enumerate(sorted(f[:-4] for f in os.listdir(folder) if f.endswith(".txt"))):
        for line in open(os.path.join(folder, name + ".txt"), encoding="utf-8").read().split("\n"):
            line = line[:-1] if line.endswith("\r") else line
            if line.strip():
                texts.append(lowercase(line) if ds.get("lowercase", False) else line)
                labels.append(k)
    vocab = sorted(set("".join(texts)))
    ids = {c: i + 1 for i, c in enumerate(vocab)}
    length = ds.get("max_length", 0) or min(max(len(t) for t in texts), 256)
    x = torch.zeros(len(texts), length)
    for i, t in enumerate(texts):
        for j, c in enumerate(t[:length]):
            x[i, j] = ids[c]
    y = torch.tensor(labels, dtype=torch.float32)
    seed = tr.get("seed", 1)
    rest, test = split_indices(len(texts), 0.8, seed)
    fit, held = split_indices(len(rest), 1.0 - tr.get("validation_fraction", 0.1), mix_seed(seed, 0x76616C))
    fit, held = [rest[i] for i in fit], [rest[i] for i in held]
    part = lambda idx: (x[idx], y[idx])
    return part(fit), part(held), part(test)


def evaluate(project, weights, x, y, primary):
    """Mean total loss, each loss node's mean loss, and the primary classification's accuracy."""
    total, parts, correct = 0.0, {}, 0
    with torch.no_grad():
        for b in range(0, len(x), 1000):
            losses = {}
            xb, yb = x[b:b + 1000], y[b:b + 1000]
            total += gc.run_graph(project, weights, xb, yb, losses=losses).item() * len(xb)
            for nid, (loss, pred) in losses.items():
                parts[nid] = parts.get(nid, 0.0) + loss.item() * len(xb)
            if primary:
                correct += (losses[primary][1].argmax(-1) == yb.long()).sum().item()
    n = len(x)
    return total / n, {k: v / n for k, v in parts.items()}, (100.0 * correct / n if primary else None)


def primary_loss(project):
    """The loss whose prediction Plexus counts accuracy on: the first classification loss."""
    for n in project["nodes"]:
        if n["type"] in ("CrossEntropy", "NLL"):
            return n["id"]
    return None


def training_data(project, project_path, gen):
    """The project's data as training reads it: (x, y, train_idx, xt, yt), the training examples
    being x[train_idx] (images: standardised; the held-out ones drawn from `gen`)."""
    tr = project["training"]
    if project["dataset"]["kind"] == "text_classes":
        (x, y), _, (xt, yt) = load_labelled_texts(project)
        return x, y, torch.arange(len(x)), xt, yt
    if project["dataset"]["kind"] == "text":  # windows of a character text (names_reference.load_text)
        (x, y), (xt, yt), _ = nr.load_text(project, project_path)
        return x, y, torch.arange(len(x)), xt, yt
    (x, y), (xt, yt) = load_images(project, project_path)
    order = torch.randperm(len(x), generator=gen)
    held = int(round(tr.get("validation_fraction", 0.1) * len(x)))
    train_idx = order[held:]
    mean, std = x[train_idx].mean().item(), x[train_idx].std(unbiased=False).item()
    return (x - mean) / std, y, train_idx, (xt - mean) / std, yt


def trainable_weights(weights_path):
    """The weights file's tensors, the learned ones requiring grad, and the list of those."""
    weights = {k: v.clone().requires_grad_(not gc.is_buffer(k)) for k, v in gc.read_safetensors(weights_path).items()}
    return weights, [v for k, v in weights.items() if not gc.is_buffer(k)]


def train_epoch(project, weights, opt, x, y, train_idx, batch, gen):
    """One epoch over x[train_idx] in batches of `batch`, shuffled by `gen`; the mean training loss."""
    perm = train_idx[torch.randperm(len(train_idx), generator=gen)]
    total = 0.0
    for b in range(0, len(perm), batch):
        idx = perm[b:b + batch]
        opt.zero_grad()
        loss = gc.run_graph(project, weights, x[idx], y[idx], training=True, update_stats=True)
        loss.backward()
        opt.step()
        total += loss.item() * len(idx)
    return total / len(perm)


def torch_run(project, project_path, weights_path, epochs):
    tr = project["training"]
    gen = torch.Generator().manual_seed(tr.get("seed", 1))
    x, y, train_idx, xt, yt = training_data(project, project_path, gen)
    weights, params = trainable_weights(weights_path)
    opt = nr.make_optimizer(tr, params)
    schedule = nr.make_schedule(tr, opt, epochs)
    batch = tr.get("batch_size", 100)
    for _ in range(epochs):
        train_epoch(project, weights, opt, x, y, train_idx, batch, gen)
        if schedule:
            schedule.step()
    return evaluate(project, weights, xt, yt, primary_loss(project)), len(train_idx)


def plexus_run(cli, project_path, epochs, workdir, threads):
    events, seconds, cmd = nr.train_with_metrics(cli, project_path, epochs, workdir, threads)
    test = [e for e in events if e.get("event") == "test"][-1]
    parts = {p["node"]: p["loss"] for p in test.get("eval_losses", [])}
    accuracy = 100.0 * test["eval_accuracy"] if "eval_accuracy" in test else None
    return (test["eval_loss"], parts, accuracy), seconds, cmd


def main():
    cli, threads, epochs_override, skip_plexus, projects = nr.reference_args(sys.argv[1:], 2)
    if not projects:
        raise SystemExit(__doc__)
    torch.set_num_threads(threads)
    print("torch %s (%d threads), %s, OPENBLAS_CORETYPE=%s" %
          (torch.__version__, threads, cli, os.environ.get("OPENBLAS_CORETYPE", "(unset)")))
    with tempfile.TemporaryDirectory() as workdir:
        for path in projects:
            project = json.load(open(path))
            epochs = epochs_override or project["training"].get("epochs", 5)
            w = nr.initial_weights(cli, path, project, workdir)
            t0 = time.time()
            (loss, parts, accuracy), n_train = torch_run(project, path, w, epochs)
            torch_s = time.time() - t0
            print("\n%s: %d training examples, %d epochs" % (os.path.basename(path), n_train, epochs))
            if skip_plexus:
                print("  torch: test loss %.4f %s accuracy %s (%.1f s)" % (loss, parts, accuracy, torch_s))
                continue
            (our_loss, our_parts, our_accuracy), plexus_s, cmd = plexus_run(cli, path, epochs, workdir, threads)
            print("  command: %s" % cmd)
            rows = [("loss", our_loss, loss)] + [("loss " + k, our_parts.get(k, float("nan")), v)
                                                 for k, v in parts.items() if len(parts) > 1]
            for name, ours, ref in rows:
                print("  test %-22s plexus %.5f  torch %.5f  relative difference %+.1f%%" %
                      (name, ours, ref, 100.0 * (ours - ref) / ref))
            if accuracy is not None:
                print("  test accuracy           plexus %.2f%%  torch %.2f%%  difference %+.2f points" %
                      (our_accuracy, accuracy, our_accuracy - accuracy))
            print("  time: plexus %.1f s, torch %.1f s (%d threads each)" % (plexus_s, torch_s, threads))
    return 0


if __name__ == "__main__":
    sys.exit(main())
