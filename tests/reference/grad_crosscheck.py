#!/usr/bin/python3
"""Cross-checks `plexus-cli init` and `plexus-cli grad` against PyTorch.

ctest runs it as reference_grad (Skipped where torch is missing); by hand, with Debian's PyTorch:

    /usr/bin/python3 tests/reference/grad_crosscheck.py [build/app/plexus-cli] [project.plexus ...]

For each project (default: examples/mnist_mlp.plexus, residual_mlp.plexus, mnist_lenet.plexus,
housing_regression.plexus and fashion_resnet.plexus, and tests/reference/projects/ broadcast_merges.plexus,
reordered_dims.plexus and normalizations.plexus):

1. `plexus-cli init --project P --seed S --out w.safetensors` writes the initial weights.
2. The weights file is parsed here by hand (8-byte little-endian header length, JSON header,
   F32 data), and the same network is built in torch from the project file's graph: every
   node of a supported type (Input, Flatten, Reshape, Permute, Squeeze, Unsqueeze, Mean, Sum,
   Linear, Conv2d, Conv1d, ConvTranspose2d, Upsample, ZeroPad2d, MaxPool2d, AvgPool2d, MaxPool1d, AvgPool1d, AdaptiveMaxPool2d, AdaptiveAvgPool2d, ReLU, LeakyReLU, PReLU, ELU, SELU, Tanh, Sigmoid, GELU,
   SiLU, Mish, Softplus, Hardswish, Hardsigmoid, LogSoftmax, Identity, Add, Mul, Sub, Concat,
   Embedding, PositionalEmbedding, LayerNorm, BatchNorm1d, BatchNorm2d, GroupNorm, InstanceNorm2d,
   RMSNorm, LSTM, GRU, RNN (their outputs and final state), MultiheadAttention, SequenceLengths,
   SequencePool, Split, Chunk, Slice (edges from every output port), and the losses CrossEntropy,
   NLL, MSE, L1, SmoothL1,
   Huber, KLDiv and BCEWithLogits) with its weights; the
   recurrent and attention layers are torch's own kernels and modules run on our tensors, so
   names and layouts must match torch's. torch 1.13 has no RMSNorm: PyTorch 2.4's formula
   stands in for it.
3. A random batch (x, y) is written by hand as a safetensors file, `plexus-cli grad` runs on
   it, and its loss and gradients are compared with torch's, computed in float64, with a
   relative tolerance of 1e-5 (of the largest magnitude in each tensor), both in training mode
   (the normalisations' batch or instance statistics). The running-statistics buffers `init`
   writes are read, not differentiated.

Exit status 0 when every project matches, 1 otherwise.
"""
import json
import math
import os
import random
import struct
import subprocess
import sys
import tempfile

import torch_or_skip  # noqa: F401  (exit 77, Skipped, without torch)
import torch
import torch.nn.functional as F
from torch.nn.utils import stateless

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_PROJECTS = ["mnist_mlp", "residual_mlp", "mnist_lenet", "housing_regression", "fashion_resnet"]
# tests/reference/projects: layer types no example uses
TEST_PROJECTS = ["broadcast_merges", "reordered_dims", "normalizations"]
# A tensor name's last part: not learned (pe: the fixed table of sinusoidal positions).
BUFFERS = ("running_mean", "running_var", "num_batches_tracked", "pe")
RTOL = 1e-5
BATCH = 16


# ---- for the scripts that cross-check random graphs (activation_, window_, loss_, split_,
# sequence_crosscheck) ---------------------------------------------------------------------------
TABLE_ROWS = 40  # rows of a random table: batches of 16, one of them partial


def node(nid, kind, params=None):
    return {"id": nid, "type": kind, "name": nid, "params": params or {}, "position": [0.0, 0.0]}


def edge(src, dst, port="input", out="output"):
    return {"from": [src, out], "to": [dst, port]}


def random_graph_args(seed, graphs):
    """[plexus-cli] [--seed S] [--graphs G] -> (cli, seed, graphs), the defaults given."""
    args = sys.argv[1:]
    cli = os.path.join(REPO, "build", "app", "plexus-cli")
    while args:
        a = args.pop(0)
        if a == "--seed":
            seed = int(args.pop(0))
        elif a == "--graphs":
            graphs = int(args.pop(0))
        else:
            cli = a
    return cli, seed, graphs


def write_table(path, rng, features, target="target", label=None):
    """A CSV of TABLE_ROWS rows: columns f0.. of random values, then `target`, label(row) or a
    random value."""
    with open(path, "w") as f:
        f.write(",".join(["f%d" % i for i in range(features)] + [target]) + "\n")
        for row in range(TABLE_ROWS):
            values = ["%.4f" % rng.gauss(0, 1) for _ in range(features)]
            f.write(",".join(values + [label(row) if label else "%.4f" % rng.gauss(0, 1)]) + "\n")


def table_project(nodes, edges, dataset=None):
    """The project of a random graph: one epoch of SGD on the CPU over `dataset`, by default the
    regression table that run_random_graphs writes (table.csv)."""
    return {"format": 1, "nodes": nodes, "edges": edges,
            "dataset": dataset or {"kind": "csv", "path": "table.csv", "target": "target", "task": "regression"},
            "training": {"optimizer": "sgd", "lr": 0.1, "batch_size": 16, "epochs": 1, "seed": 1,
                         "validation_fraction": 0.1, "device": "cpu"}}


def run_random_graphs(name, seed, graphs, make, check_seed, setup=None, random_weights=True):
    """A random-graph cross-check's main: the command line (random_graph_args, with these
    defaults), then in a temporary folder the data `setup(workdir, rng)` writes (by default a
    table of 3 to 8 features, table.csv) and `graphs` projects make(rng, i) -> (project,
    description) draws, each written as <name>NN.plexus and checked (check, seed check_seed + i).
    Returns the exit status: 0 when every graph matches."""
    cli, seed, graphs = random_graph_args(seed, graphs)
    rng = random.Random(seed)
    print("torch %s, %s, seed %d" % (torch.__version__, cli, seed))
    all_ok = True
    with tempfile.TemporaryDirectory() as workdir:
        if setup:
            setup(workdir, rng)
        else:
            write_table(os.path.join(workdir, "table.csv"), rng, rng.randint(3, 8))
        for i in range(graphs):
            project, description = make(rng, i)
            path = os.path.join(workdir, "%s%02d.plexus" % (name, i))
            with open(path, "w") as f:
                json.dump(project, f, indent=1)
            print("%s%02d: %s" % (name, i, description))
            all_ok = check(cli, path, workdir, seed=check_seed + i, random_weights=random_weights) and all_ok
    print("CROSSCHECK %s" % ("PASSED" if all_ok else "FAILED"))
    return 0 if all_ok else 1


# ---- safetensors, by hand ----------------------------------------------------------------
def read_safetensors(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n].decode("utf-8"))
    header.pop("__metadata__", None)
    buf = data[8 + n:]
    out = {}
    for name, e in header.items():
        if e["dtype"] != "F32":
            raise SystemExit("%s: tensor %s has dtype %s, expected F32" % (path, name, e["dtype"]))
        b, end = e["data_offsets"]
        count = (end - b) // 4
        values = struct.unpack("<%df" % count, buf[b:end])
        out[name] = torch.tensor(values, dtype=torch.float32).reshape(e["shape"])
    return out


def write_safetensors(path, tensors, metadata=None):
    """metadata: a dict of strings, the file's "__metadata__" (a weights file's input description)."""
    header, data = ({"__metadata__": metadata} if metadata else {}), b""
    for name, t in tensors.items():
        t = t.detach().to(torch.float32).contiguous()
        raw = struct.pack("<%df" % t.numel(), *t.flatten().tolist())
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


# ---- the graph, in torch -------------------------------------------------------------------
def param(node, name, default):
    return node.get("params", {}).get(name, default)


LOSSES = ("CrossEntropy", "NLL", "MSE", "L1", "SmoothL1", "Huber", "KLDiv", "BCEWithLogits")


def pool_stride(k, s):
    """A pooling's stride: 0 is the kernel's size, along each axis of a pair [h, w]."""
    if not isinstance(k, list) and not isinstance(s, list):
        return s or k
    k, s = (x if isinstance(x, list) else [x, x] for x in (k, s))
    return [si or ki for si, ki in zip(s, k)]


def torch_loss(n, pred, target):
    """The loss node `n` of prediction `pred` against the batch's `target`, as torch's functional form."""
    t = n["type"]
    if t in ("CrossEntropy", "NLL"):
        # Class scores last ([N, ..., C]) against [N, ...]: every position counts.
        weight = param(n, "weight", [])
        kw = {"weight": torch.tensor(weight, dtype=pred.dtype) if weight else None,
              "ignore_index": param(n, "ignore_index", -100)}
        scores, classes = pred.reshape(-1, pred.shape[-1]), target.reshape(-1).long()
        if t == "NLL":
            return F.nll_loss(scores, classes, **kw)
        return F.cross_entropy(scores, classes, label_smoothing=param(n, "label_smoothing", 0.0), **kw)
    pred = pred.reshape(target.shape)  # [N, 1] against a regression column [N]
    if t == "MSE":
        return F.mse_loss(pred, target)
    if t == "L1":
        return F.l1_loss(pred, target)
    if t == "SmoothL1":
        return F.smooth_l1_loss(pred, target, beta=param(n, "beta", 1.0))
    if t == "Huber":
        return F.huber_loss(pred, target, delta=param(n, "delta", 1.0))
    if t == "KLDiv":
        return F.kl_div(pred, target, reduction="batchmean", log_target=param(n, "log_target", False))
    return F.binary_cross_entropy_with_logits(pred, target,
                                              pos_weight=torch.tensor(param(n, "pos_weight", 1.0), dtype=pred.dtype))


def run_graph(project, weights, x, y, training=False, update_stats=False, losses=None):
    """Forward pass of the project's graph with `weights` (float64 leaves); returns the loss, the
    sum of every loss node's times its loss_weight. Dropout drops only when `training` (torch's
    generator draws, so only its rate matches ours); the normalisations use their running
    statistics only when not, and only when they track them; with `update_stats` training also
    updates them, as a training step does. `losses`, a dict, receives each loss node's
    (unweighted loss, prediction) by node id."""
    nodes = {n["id"]: n for n in project["nodes"]}
    edges = project["edges"]
    values = {}  # (node, port) -> tensor

    def inputs_of(nid, port):
        return [values[tuple(e["from"])] for e in edges if e["to"] == [nid, port]]

    # Topological order (Kahn), as the compiler does.
    indeg = {nid: 0 for nid in nodes}
    for e in edges:
        indeg[e["to"][0]] += 1
    ready = [n["id"] for n in project["nodes"] if indeg[n["id"]] == 0]
    order = []
    while ready:
        nid = ready.pop(0)
        order.append(nid)
        for e in edges:
            if e["from"][0] == nid:
                indeg[e["to"][0]] -= 1
                if indeg[e["to"][0]] == 0:
                    ready.append(e["to"][0])

    loss = None
    for nid in order:
        n = nodes[nid]
        t = n["type"]
        w = lambda p: weights[nid + "." + p]
        if t == "Input":
            values[(nid, "x")], values[(nid, "y")] = x, y
            continue
        if t == "Add":
            ins = inputs_of(nid, "inputs")
            out = ins[0]
            for v in ins[1:]:
                out = out + v
        elif t == "Mul":
            ins = inputs_of(nid, "inputs")
            out = ins[0]
            for v in ins[1:]:
                out = out * v
        elif t == "Sub":
            (a,), (b,) = inputs_of(nid, "input"), inputs_of(nid, "other")
            out = a - b
        elif t == "Concat":
            out = torch.cat(inputs_of(nid, "inputs"), dim=param(n, "dim", 1))
        elif t == "SequencePool":
            (v,) = inputs_of(nid, "input")
            lengths = inputs_of(nid, "lengths")
            out = sequence_pool(v, lengths[0] if lengths else None, param(n, "mode", "mean"))
        elif t in LOSSES:
            (pred,), (target,) = inputs_of(nid, "input"), inputs_of(nid, "target")
            part = torch_loss(n, pred, target)
            if losses is not None:
                losses[nid] = (part, pred)
            weighted = part * param(n, "loss_weight", 1.0)
            loss = weighted if loss is None else loss + weighted
            continue
        else:
            (v,) = inputs_of(nid, "input")
            if t == "Linear":
                out = F.linear(v, w("weight"), w("bias") if param(n, "bias", True) else None)
            elif t == "Conv2d":
                s, p, d = param(n, "stride", 1), param(n, "padding", 0), param(n, "dilation", 1)
                out = F.conv2d(v, w("weight"), w("bias") if param(n, "bias", True) else None, s, p, d,
                               param(n, "groups", 1))
            elif t == "Conv1d":
                out = F.conv1d(v, w("weight"), w("bias") if param(n, "bias", True) else None, param(n, "stride", 1),
                               param(n, "padding", 0), param(n, "dilation", 1), param(n, "groups", 1))
            elif t == "Upsample":
                mode = param(n, "mode", "nearest")
                out = F.interpolate(v, scale_factor=param(n, "scale_factor", 2), mode=mode,
                                    align_corners=param(n, "align_corners", False) if mode == "bilinear" else None)
            elif t == "ZeroPad2d":
                pad = param(n, "padding", [1, 1, 1, 1])
                out = F.pad(v, pad * 4 if len(pad) == 1 else pad)
            elif t == "ConvTranspose2d":
                out = F.conv_transpose2d(v, w("weight"), w("bias") if param(n, "bias", True) else None,
                                         param(n, "stride", 1), param(n, "padding", 0), param(n, "output_padding", 0),
                                         param(n, "groups", 1), param(n, "dilation", 1))
            elif t in ("MaxPool2d", "AvgPool2d", "MaxPool1d", "AvgPool1d"):
                k, p = param(n, "kernel_size", 2), param(n, "padding", 0)
                s = pool_stride(k, param(n, "stride", 0))
                pool = {"MaxPool2d": F.max_pool2d, "AvgPool2d": F.avg_pool2d,
                        "MaxPool1d": F.max_pool1d, "AvgPool1d": F.avg_pool1d}[t]
                out = pool(v, k, s, p)
            elif t in ("AdaptiveMaxPool2d", "AdaptiveAvgPool2d"):
                size = param(n, "output_size", [1, 1])
                pool = F.adaptive_max_pool2d if t == "AdaptiveMaxPool2d" else F.adaptive_avg_pool2d
                out = pool(v, (size[0], size[-1]))
            elif t == "Flatten":
                out = v.flatten(1)
            elif t == "Reshape":
                out = v.reshape([v.shape[0]] + list(param(n, "shape", [-1])))
            elif t == "Permute":
                out = v.permute(*param(n, "dims", [0, 2, 1]))
            elif t == "Squeeze":
                out = v.squeeze(param(n, "dim", 1))
            elif t == "Unsqueeze":
                out = v.unsqueeze(param(n, "dim", 1))
            elif t in ("Mean", "Sum"):
                reduce = torch.mean if t == "Mean" else torch.sum
                out = reduce(v, dim=param(n, "dim", [1]), keepdim=param(n, "keepdim", False))
            elif t == "ReLU":
                out = F.relu(v)
            elif t == "LeakyReLU":
                out = F.leaky_relu(v, param(n, "negative_slope", 0.01))
            elif t == "Tanh":
                out = torch.tanh(v)
            elif t == "Sigmoid":
                out = torch.sigmoid(v)
            elif t == "GELU":
                out = F.gelu(v)
            elif t == "PReLU":
                out = F.prelu(v, w("weight"))
            elif t == "ELU":
                out = F.elu(v, param(n, "alpha", 1.0))
            elif t == "SELU":
                out = F.selu(v)
            elif t == "SiLU":
                out = F.silu(v)
            elif t == "Mish":
                out = F.mish(v)
            elif t == "Softplus":
                out = F.softplus(v, param(n, "beta", 1.0), param(n, "threshold", 20.0))
            elif t == "Hardswish":
                out = F.hardswish(v)
            elif t == "Hardsigmoid":
                out = F.hardsigmoid(v)
            elif t == "LogSoftmax":
                out = F.log_softmax(v, param(n, "dim", -1))
            elif t == "Identity":
                out = v
            elif t == "Dropout":
                out = F.dropout(v, param(n, "p", 0.5), training)
            elif t == "Embedding":
                out = F.embedding(v.long(), w("weight"))
            elif t == "PositionalEmbedding":
                if param(n, "kind", "learned") == "learned":
                    out = v + w("weight")[:v.shape[1]]
                else:  # the fixed table of PyTorch's transformer tutorial, of the sequence's length only
                    e = v.shape[-1]
                    position = torch.arange(v.shape[1], dtype=v.dtype).unsqueeze(1)
                    div = torch.exp(torch.arange(0, e, 2, dtype=v.dtype) * (-math.log(10000.0) / e))
                    pe = torch.zeros(v.shape[1], e, dtype=v.dtype)
                    pe[:, 0::2] = torch.sin(position * div)
                    pe[:, 1::2] = torch.cos(position * div)[:, :e // 2]
                    out = v + pe
            elif t == "SequenceLengths":
                out = (v != 0).sum(1).to(v.dtype)
            elif t == "LayerNorm":
                out = F.layer_norm(v, (v.shape[-1],), w("weight"), w("bias"), param(n, "eps", 1e-5))
            elif t in ("BatchNorm1d", "BatchNorm2d", "InstanceNorm2d"):
                instance = t == "InstanceNorm2d"  # whose affine and running statistics are off by default
                wb = (w("weight"), w("bias")) if param(n, "affine", not instance) else (None, None)
                tracks = param(n, "track_running_stats", not instance)
                running = tracks and not training
                stats = (w("running_mean"), w("running_var")) if running or (tracks and update_stats) else (None, None)
                eps = param(n, "eps", 1e-5)
                out = (F.instance_norm(v, *stats, *wb, use_input_stats=not running, eps=eps,
                                       momentum=param(n, "momentum", 0.1)) if instance else
                       F.batch_norm(v, *stats, *wb, training=not running, eps=eps, momentum=param(n, "momentum", 0.1)))
            elif t == "GroupNorm":
                wb = (w("weight"), w("bias")) if param(n, "affine", True) else (None, None)
                out = F.group_norm(v, param(n, "num_groups", 2), *wb, eps=param(n, "eps", 1e-5))
            elif t == "RMSNorm":
                # PyTorch 2.4's RMSNorm over the last dim (torch 1.13 has none); eps=None is float32's epsilon.
                out = v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + param(n, "eps", 1.1920929e-07))
                if param(n, "elementwise_affine", True):
                    out = out * w("weight")
            elif t in ("LSTM", "GRU", "RNN"):
                lengths = inputs_of(nid, "lengths")
                if lengths:
                    out = recurrent_padded(t, n, own_weights(weights, nid), v, training, lengths[0])
                else:
                    out, h_n = recurrent(t, n, own_weights(weights, nid), v, training)
                    dirs = 2 if param(n, "bidirectional", False) else 1
                    out = {"output": out, "state": torch.cat(list(h_n[-dirs:]), dim=1)}  # the last layer's
            elif t == "Split":
                out = torch.split(v, param(n, "sections", [1, 1]), dim=param(n, "dim", 1))
            elif t == "Chunk":
                out = torch.chunk(v, param(n, "chunks", 2), dim=param(n, "dim", 1))
            elif t == "Slice":
                at = (slice(None),) * param(n, "dim", 1)
                out = v[at + (slice(param(n, "start", 0), param(n, "end", 1 << 24), param(n, "step", 1)),)]
            elif t == "MultiheadAttention":
                e, steps = v.shape[-1], v.shape[1]
                m = torch.nn.MultiheadAttention(e, param(n, "num_heads", 4), batch_first=True, dtype=torch.float64)
                mask = None
                if param(n, "causal", True):
                    mask = torch.triu(torch.ones(steps, steps, dtype=torch.bool), diagonal=1)
                key = (inputs_of(nid, "key") or [v])[0]
                value = (inputs_of(nid, "value") or [key])[0]
                padding = None
                lengths = inputs_of(nid, "lengths")
                if lengths:  # an empty sequence counts as one key, as Plexus has it
                    padding = torch.arange(key.shape[1]).unsqueeze(0) >= lengths[0].clamp(min=1).unsqueeze(1)
                out, _ = stateless.functional_call(m, own_weights(weights, nid), (v, key, value),
                                                   {"attn_mask": mask, "key_padding_mask": padding,
                                                    "need_weights": False})
            else:
                raise SystemExit("grad_crosscheck: node type %s is not supported here" % t)
        if isinstance(out, tuple):  # Split, Chunk: one port per piece
            out = {"output%d" % i: piece for i, piece in enumerate(out)}
        for port, value in (out.items() if isinstance(out, dict) else [("output", out)]):
            values[(nid, port)] = value
    return loss


def sequence_pool(v, lengths, mode):
    """v [N, T, E] pooled over each example's first lengths[n] positions (all T without), in torch ops."""
    steps = v.shape[1]
    if mode == "first":
        return v[:, 0]
    if lengths is None:
        return {"mean": lambda: v.mean(1), "max": lambda: v.amax(1), "last": lambda: v[:, -1]}[mode]()
    lengths = lengths.clamp(0, steps).long()
    valid = (torch.arange(steps).unsqueeze(0) < lengths.unsqueeze(1)).unsqueeze(2)
    nonempty = (lengths > 0).unsqueeze(1)
    if mode == "mean":
        return (v * valid).sum(1) / lengths.clamp(min=1).unsqueeze(1).to(v.dtype)
    if mode == "max":
        pooled = v.masked_fill(~valid, float("-inf")).amax(1)
    else:
        pooled = v[torch.arange(v.shape[0]), (lengths - 1).clamp(min=0)]
    return torch.where(nonempty, pooled, torch.zeros_like(pooled))


def recurrent_weights(n, w):
    """A recurrent node's weights in the order torch's kernels take them, and its settings."""
    layers, both = param(n, "num_layers", 1), param(n, "bidirectional", False)
    flat = []
    for layer in range(layers):
        for suffix in ("", "_reverse") if both else ("",):
            flat += [w["%s_l%d%s" % (k, layer, suffix)] for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    return flat, layers, both, param(n, "hidden_size", 128), param(n, "dropout", 0.0)


def recurrent(kind, n, w, v, training):
    """torch's own LSTM/GRU/RNN kernels (what nn.LSTM.forward calls) on our weights, batch first:
    the outputs and h_n (LSTM's c_n left out).
    Not through functional_call: torch 1.13's RNN modules keep a cached list of their weights."""
    flat, layers, both, hidden, dropout = recurrent_weights(n, w)
    h0 = torch.zeros(layers * (2 if both else 1), v.shape[0], hidden, dtype=v.dtype)
    if kind == "LSTM":
        return torch._VF.lstm(v, (h0, h0), flat, True, layers, dropout, training, both, True)[:2]
    run = torch._VF.gru if kind == "GRU" else torch._VF.rnn_tanh
    return run(v, h0, flat, True, layers, dropout, training, both, True)


def recurrent_padded(kind, n, w, v, training, lengths):
    """Each example its first lengths[b] steps (clamped to [1, T], as Plexus has it), as torch's
    kernels run a packed sequence (nn.GRU on pack_padded_sequence): the outputs zero-padded to T,
    and the last layer's h_n."""
    flat, layers, both, hidden, dropout = recurrent_weights(n, w)
    rnn = torch.nn.utils.rnn
    packed = rnn.pack_padded_sequence(v, lengths.clamp(1, v.shape[1]).long().cpu(), batch_first=True,
                                      enforce_sorted=False)
    h0 = torch.zeros(layers * (2 if both else 1), v.shape[0], hidden, dtype=v.dtype)
    if kind == "LSTM":
        out, h_n = torch._VF.lstm(packed.data, packed.batch_sizes, (h0, h0), flat, True, layers, dropout, training,
                                  both)[:2]
    else:
        run = torch._VF.gru if kind == "GRU" else torch._VF.rnn_tanh
        out, h_n = run(packed.data, packed.batch_sizes, h0, flat, True, layers, dropout, training, both)
    out = rnn.PackedSequence(out, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices)
    output, _ = rnn.pad_packed_sequence(out, batch_first=True, total_length=v.shape[1])
    h_n = h_n.index_select(1, packed.unsorted_indices)
    dirs = 2 if both else 1
    return {"output": output, "state": torch.cat(list(h_n[-dirs:]), dim=1)}


def own_weights(weights, nid):
    """The weights of node `nid`, named as its torch module names them ("weight_ih_l0", "out_proj.bias")."""
    prefix = nid + "."
    return {k[len(prefix):]: v for k, v in weights.items() if k.startswith(prefix)}


def make_batch(project, project_path, gen):
    ds = project["dataset"]
    if ds["kind"] == "text":
        # Ids of the file's characters, as a text run feeds them: x [N, T] and y [N, T] as floats.
        path = os.path.join(os.path.dirname(project_path), ds["path"])
        vocab = len(set(open(path, encoding="utf-8").read()))
        steps = ds.get("seq_len", 64)
        x = torch.randint(0, vocab, [BATCH, steps], generator=gen).to(torch.float32)
        y = torch.randint(0, vocab, [BATCH, steps], generator=gen).to(torch.float32)
        return x, y
    if ds["kind"] in ("mnist", "fashion-mnist"):
        x = torch.randn([BATCH, 1, 28, 28], generator=gen)
        y = torch.randint(0, 10, [BATCH], generator=gen).to(torch.float32)
        return x, y
    # CSV: as many features as the file has columns besides the target.
    path = os.path.join(os.path.dirname(project_path), ds["path"])
    columns = open(path).readline().strip().split(",")
    features = len(columns) - 1
    x = torch.randn([BATCH, features], generator=gen)
    if ds.get("task") == "classification":
        # Class indices 0 .. C-1, C the target column's distinct values (whole numbers here).
        target = columns.index(ds["target"])
        classes = len({line.strip().split(",")[target] for line in open(path).readlines()[1:] if line.strip()})
        return x, torch.randint(0, classes, [BATCH], generator=gen).to(torch.float32)
    y = (3 + torch.randn([BATCH], generator=gen)).abs()  # positive: valid KLDiv targets too
    return x, y


def is_buffer(name):
    return name.rsplit(".", 1)[-1] in BUFFERS


def rel_error(a, b):
    if b is None:
        return 0.0 if a.abs().max().item() == 0 else float("inf")  # torch: no gradient reaches it
    scale = max(b.abs().max().item(), 1e-30)
    return (a.to(torch.float64) - b).abs().max().item() / scale


def check(cli, project_path, workdir, seed, random_weights=False):
    """random_weights: every weight drawn from U(-1, 1) instead of `init`'s, so that equal initial
    values (PReLU's slopes, all 0.25) cannot hide a mix-up."""
    project = json.load(open(project_path))
    name = os.path.splitext(os.path.basename(project_path))[0]
    w_path = os.path.join(workdir, name + ".weights.safetensors")
    x_path = os.path.join(workdir, name + ".batch.safetensors")
    g_path = os.path.join(workdir, name + ".grads.safetensors")
    subprocess.run([cli, "init", "--project", project_path, "--seed", str(seed), "--out", w_path], check=True,
                   stdout=subprocess.DEVNULL)
    weights32 = read_safetensors(w_path)
    gen = torch.Generator().manual_seed(seed)
    if random_weights:
        weights32 = {k: v if is_buffer(k) else torch.rand(v.shape, generator=gen) * 2 - 1 for k, v in weights32.items()}
        write_safetensors(w_path, weights32)
    x, y = make_batch(project, project_path, gen)
    write_safetensors(x_path, {"x": x, "y": y})
    subprocess.run([cli, "grad", "--project", project_path, "--weights", w_path, "--input", x_path, "--out", g_path],
                   check=True, stdout=subprocess.DEVNULL)
    ours = read_safetensors(g_path)

    weights = {k: v.to(torch.float64).requires_grad_(not is_buffer(k)) for k, v in weights32.items()}
    # Training mode, as `plexus-cli grad` runs (no project here has dropout, whose draws differ).
    loss = run_graph(project, weights, x.to(torch.float64), y.to(torch.float64), training=True)
    loss.backward()
    weights = {k: v for k, v in weights.items() if not is_buffer(k)}

    worst, ok = 0.0, True
    lines = []
    err = abs(ours["loss"].item() - loss.item()) / max(abs(loss.item()), 1e-30)
    lines.append("    %-22s %-14s rel err %.2e  (ours %.8g, torch %.8g)" % ("loss", "[]", err, ours["loss"].item(),
                                                                            loss.item()))
    worst = max(worst, err)
    if set(ours) - {"loss"} != set(weights):
        ok = False
        lines.append("    tensor names differ: ours %s, weights %s" % (sorted(set(ours) - {"loss"}), sorted(weights)))
    for k, wt in weights.items():
        if k not in ours:
            continue
        if list(ours[k].shape) != list(wt.shape):
            ok = False
            lines.append("    %s: shape %s, expected %s" % (k, list(ours[k].shape), list(wt.shape)))
            continue
        e = rel_error(ours[k], wt.grad)
        worst = max(worst, e)
        lines.append("    %-22s %-14s rel err %.2e" % (k, str(list(wt.shape)), e))
    ok = ok and worst <= RTOL
    print("%s %s: %d parameter tensors, batch %d, worst relative error %.2e (tolerance %g)" %
          ("PASS" if ok else "FAIL", name, len(weights), BATCH, worst, RTOL))
    print("\n".join(lines))
    return ok


def main():
    args = sys.argv[1:]
    cli = os.path.join(REPO, "build", "app", "plexus-cli")
    if args and not args[0].endswith(".plexus"):
        cli = args.pop(0)
    projects = args or ([os.path.join(REPO, "examples", p + ".plexus") for p in DEFAULT_PROJECTS] +
                        [os.path.join(REPO, "tests", "reference", "projects", p + ".plexus") for p in TEST_PROJECTS])
    print("torch %s, %s" % (torch.__version__, cli))
    all_ok = True
    with tempfile.TemporaryDirectory() as workdir:
        for i, p in enumerate(projects):
            all_ok = check(cli, os.path.abspath(p), workdir, seed=11 + i) and all_ok
    print("CROSSCHECK %s" % ("PASSED" if all_ok else "FAILED"))
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
