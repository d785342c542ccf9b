#!/usr/bin/python3
"""The names examples against PyTorch: the same model, initial weights, data split and budget.

    /usr/bin/python3 tests/reference/names_reference.py examples/names_lstm.plexus [more.plexus ...]
        [--cli build/app/plexus-cli] [--threads 1] [--epochs E] [--skip-plexus]

For each project (a character model on a `text` dataset):
1. `plexus-cli train P --metrics F` trains it as a user would (unless --skip-plexus); its
   validation loss per epoch is read back from the metrics file.
2. PyTorch trains the same graph: the initial weights are Plexus's own (`plexus-cli init` with the
   project's seed), the network is grad_crosscheck.run_graph (torch's nn.LSTM/GRU/RNN and
   MultiheadAttention modules on those weights, float32), the data are the same windows of the
   same text split the same way (text.h: the first 1 - validation_fraction of the characters
   train, the rest validate; non-overlapping windows of seq_len characters, targets shifted by
   one), the optimizer, learning rate, schedule, batch size and epochs are the project's. Only
   the shuffling and dropout draw from torch's own generator.
3. Both validation losses (nats per character, the mean over every position of the validation
   windows) are printed per epoch, with the final difference; exit status 1 when a final
   difference is over 0.03 nats/char (the issue's tolerance).
"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grad_crosscheck as gc  # noqa: E402

torch = gc.torch
TOLERANCE = 0.03


def text_path(project, project_path):
    path = project["dataset"]["path"]
    beside = os.path.join(os.path.dirname(project_path), path)
    return beside if os.path.exists(beside) else path  # as Plexus looks it up


def windows(ids, seq_len):
    """x [W, T] and y [W, T] of a part's ids: non-overlapping windows, targets shifted by one."""
    count = (len(ids) - 1) // seq_len
    t = torch.tensor(ids[:count * seq_len + 1], dtype=torch.float32)
    x = t[:count * seq_len].reshape(count, seq_len)
    y = t[1:count * seq_len + 1].reshape(count, seq_len)
    return x, y


def load_text(project, project_path):
    ds, tr = project["dataset"], project["training"]
    text = open(text_path(project, project_path), encoding="utf-8").read()
    if text.startswith("\ufeff"):
        text = text[1:]
    vocab = sorted(set(text))
    index = {c: i for i, c in enumerate(vocab)}
    ids = [index[c] for c in text]
    cut = int(math.floor((1.0 - tr.get("validation_fraction", 0.1)) * len(ids) + 0.5))  # std::round
    seq_len = ds.get("seq_len", 64)
    return windows(ids[:cut], seq_len), windows(ids[cut:], seq_len), vocab


def make_optimizer(tr, params):
    name, lr, decay = tr.get("optimizer", "sgd"), tr.get("lr", 0.1), tr.get("weight_decay", 0.0)
    if name == "adam":
        return torch.optim.Adam(params, lr=lr, weight_decay=decay)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr, weight_decay=decay)
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=tr.get("momentum", 0.0), nesterov=tr.get("nesterov", False),
                               weight_decay=decay)
    raise SystemExit("names_reference: optimizer %s is not supported here" % name)


def make_schedule(tr, opt, epochs):
    kind = tr.get("schedule", "none")
    if kind == "cosine":
        return torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    if kind == "step":
        return torch.optim.lr_scheduler.StepLR(opt, step_size=tr.get("step_size", 1), gamma=tr.get("gamma", 0.1))
    return None


def torch_run(project, project_path, weights_path, epochs):
    tr = project["training"]
    (xt, yt), (xv, yv), vocab = load_text(project, project_path)
    weights = {k: v.clone().requires_grad_(True) for k, v in gc.read_safetensors(weights_path).items()}
    opt = make_optimizer(tr, list(weights.values()))
    schedule = make_schedule(tr, opt, epochs)
    gen = torch.Generator().manual_seed(tr.get("seed", 1))
    batch = tr.get("batch_size", 100)
    losses = []
    for _ in range(epochs):
        order = torch.randperm(len(xt), generator=gen)
        for b in range(0, len(order), batch):
            idx = order[b:b + batch]
            opt.zero_grad()
            loss = gc.run_graph(project, weights, xt[idx], yt[idx], training=True)
            loss.backward()
            opt.step()
        if schedule:
            schedule.step()
        with torch.no_grad():
            total = 0.0
            for b in range(0, len(xv), 500):
                total += gc.run_graph(project, weights, xv[b:b + 500], yv[b:b + 500]).item() * len(xv[b:b + 500])
            losses.append(total / len(xv))
    return losses, len(xt), len(xv), len(vocab)


def train_with_metrics(cli, project_path, epochs, workdir, threads):
    """`plexus-cli train` as a user runs it: (its metrics.jsonl events, seconds, the command)."""
    metrics = os.path.join(workdir, os.path.splitext(os.path.basename(project_path))[0] + ".metrics.jsonl")
    cmd = [cli, "train", project_path, "--epochs", str(epochs), "--metrics", metrics, "--threads", str(threads)]
    t0 = time.time()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    seconds = time.time() - t0
    return [json.loads(line) for line in open(metrics)], seconds, " ".join(cmd)


def plexus_run(cli, project_path, epochs, workdir, threads):
    events, seconds, cmd = train_with_metrics(cli, project_path, epochs, workdir, threads)
    losses = [e["eval_loss"] for e in events if e.get("event") == "epoch"]
    return losses, seconds, cmd


def reference_args(argv, threads):
    """The reference scripts' command line: (cli, threads, epochs or None, skip_plexus, projects)."""
    args = list(argv)
    cli = os.path.join(gc.REPO, "build", "app", "plexus-cli")
    epochs_override, skip_plexus, projects = None, False, []
    while args:
        a = args.pop(0)
        if a == "--cli":
            cli = args.pop(0)
        elif a == "--threads":
            threads = int(args.pop(0))
        elif a == "--epochs":
            epochs_override = int(args.pop(0))
        elif a == "--skip-plexus":
            skip_plexus = True
        else:
            projects.append(a)
    return cli, threads, epochs_override, skip_plexus, projects


def initial_weights(cli, path, project, workdir):
    """Plexus's initial weights of the project (`plexus-cli init` with its seed), as a file."""
    w = os.path.join(workdir, "init.safetensors")
    subprocess.run([cli, "init", "--project", path, "--seed", str(project["training"].get("seed", 1)), "--out", w],
                   check=True, stdout=subprocess.DEVNULL)
    return w


def main():
    cli, threads, epochs_override, skip_plexus, projects = reference_args(sys.argv[1:], 1)
    if not projects:
        projects = [os.path.join(gc.REPO, "examples", p) for p in ("names_lstm.plexus", "names_transformer.plexus")]
    torch.set_num_threads(threads)
    print("torch %s (%d threads), %s, OPENBLAS_CORETYPE=%s" %
          (torch.__version__, threads, cli, os.environ.get("OPENBLAS_CORETYPE", "(unset)")))
    all_ok = True
    with tempfile.TemporaryDirectory() as workdir:
        for path in projects:
            project = json.load(open(path))
            epochs = epochs_override or project["training"].get("epochs", 5)
            w = initial_weights(cli, path, project, workdir)
            t0 = time.time()
            ref, n_train, n_val, vocab = torch_run(project, path, w, epochs)
            torch_s = time.time() - t0
            print("\n%s: %d training and %d validation windows of %d characters, vocabulary %d, %d epochs" %
                  (os.path.basename(path), n_train, n_val, project["dataset"].get("seq_len", 64), vocab, epochs))
            if skip_plexus:
                for e, r in enumerate(ref, 1):
                    print("  epoch %2d  torch %.4f" % (e, r))
                print("  torch %.1f s" % torch_s)
                continue
            ours, plexus_s, cmd = plexus_run(cli, path, epochs, workdir, threads)
            print("  command: %s" % cmd)
            print("  epoch  plexus   torch    difference (validation loss, nats/char)")
            for e, (o, r) in enumerate(zip(ours, ref), 1):
                print("  %5d  %.4f   %.4f   %+.4f" % (e, o, r, o - r))
            diff = ours[-1] - ref[-1]
            ok = abs(diff) <= TOLERANCE
            all_ok = all_ok and ok
            print("  %s final: plexus %.4f, torch %.4f, difference %+.4f (tolerance %.2f); time plexus %.1f s, "
                  "torch %.1f s" % ("PASS" if ok else "FAIL", ours[-1], ref[-1], diff, TOLERANCE, plexus_s, torch_s))
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
