#!/usr/bin/python3
"""Cross-checks `plexus-cli import` against PyTorch: models built and exported here by
torch.onnx.export are imported, and the project computes what the torch model computes.

ctest runs it as reference_onnx_import (Skipped where torch is missing); by hand:

    /usr/bin/python3 tests/reference/onnx_import_crosscheck.py [build/app/plexus-cli] [--keep DIR]

For each model (an MLP, LeNet, a small ResNet, LSTM and GRU language models — Embedding, the
recurrent layer, a Linear head at every position — and a pre-norm transformer block's
LayerNorm + MLP half with its residual, and a whole pre-norm block: LayerNorm, nn.MultiheadAttention
and the MLP with GELU or ReLU, each with its residual) and opset (13, 17):

1. torch.onnx.export writes it (evaluation mode: PyTorch folds BatchNorm into the convolution
   before it; the ResNet also in training mode, which keeps BatchNormalization nodes).
2. `plexus-cli import` writes the project and its weights.
3. A random batch (x, class labels y) goes through `plexus-cli grad --eval` (running
   statistics) and, for the models that keep their BatchNorms, `plexus-cli grad` (batch
   statistics): its output, CrossEntropy loss and every parameter's gradient are compared
   with torch's, computed in float64, within 1e-4 relative (outputs, of the largest magnitude)
   and 2e-4 (gradients). Parameters are matched by module name: the imported node named
   "layer1.0.conv1" holds torch's "layer1.0.conv1.weight" as "<its id>.weight". A model whose
   BatchNorms were folded has other parameters than torch's; its outputs and loss are compared.

Models the import must refuse (attention with a mask) are exported too, and the refusal must
name the ONNX node where the subgraph differs.

Exit status 0 when every model matches, 1 otherwise.
"""
import json
import os
import subprocess
import sys
import tempfile

import torch_or_skip  # noqa: F401  (exit 77, Skipped, without torch)
import torch
import torch.nn as nn
import torch.nn.functional as F

import grad_crosscheck as gc
from torch_blocks import BasicBlock  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT_RTOL = 1e-4
GRAD_RTOL = 2e-4
BATCH = 8
OPSETS = (13, 17)


class MLP(nn.Module):
    """A projection over the last axis (MatMul + Add), then Gemms with a BatchNorm1d between."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 8)
        self.fc1 = nn.Linear(32, 24)
        self.bn = nn.BatchNorm1d(24)
        self.fc2 = nn.Linear(24, 5)

    def forward(self, x):
        h = torch.flatten(F.relu(self.proj(x)), 1)
        return self.fc2(torch.tanh(self.bn(self.fc1(h))))


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.pool1 = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.pool2 = nn.AvgPool2d(2)
        self.fc1 = nn.Linear(64, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = self.pool1(F.relu(self.conv1(x)))
        x = self.pool2(F.relu(self.conv2(x)))
        return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))


class ResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        self.layer1 = nn.Sequential(BasicBlock(8, 8, 1), BasicBlock(8, 8, 1))
        self.layer2 = nn.Sequential(BasicBlock(8, 16, 2))
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.layer2(self.layer1(self.relu(self.bn1(self.conv1(x)))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class LanguageModel(nn.Module):
    """Embedding -> LSTM or GRU (batch first) -> Linear: class scores for every position."""

    def __init__(self, cell, bidirectional=False):
        super().__init__()
        self.emb = nn.Embedding(VOCABULARY, 6)
        self.rnn = cell(6, 8, batch_first=True, bidirectional=bidirectional)
        self.head = nn.Linear(16 if bidirectional else 8, VOCABULARY)

    def forward(self, x):
        y, _ = self.rnn(self.emb(x))
        return self.head(y)


class PreNormMLPBlock(nn.Module):
    """A transformer block's feed-forward half: x + MLP(LayerNorm(x)) over [T, E], then a head."""

    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 8)
        self.head = nn.Linear(32, 5)

    def forward(self, x):
        x = x + self.fc2(F.relu(self.fc1(self.norm(x))))
        return self.head(torch.flatten(x, 1))


class PreNormBlock(nn.Module):
    """A pre-norm transformer block over [T, E]: x + attention(LayerNorm(x)), then x + MLP(LayerNorm(x)),
    then a head. Biases and norms random, so that their layouts are checked too."""

    def __init__(self, act):
        super().__init__()
        self.norm1 = nn.LayerNorm(8)
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)
        self.norm2 = nn.LayerNorm(8)
        self.fc1 = nn.Linear(8, 16)
        self.act = act()
        self.fc2 = nn.Linear(16, 8)
        self.head = nn.Linear(32, 5)
        with torch.no_grad():
            for p in (self.attn.in_proj_bias, self.attn.out_proj.bias, self.norm1.bias, self.norm2.bias):
                p.normal_(0, 0.3)
            for p in (self.norm1.weight, self.norm2.weight):
                p.uniform_(0.5, 1.5)

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h)[0]
        x = x + self.fc2(self.act(self.fc1(self.norm2(x))))
        return self.head(torch.flatten(x, 1))


class MaskedAttention(nn.Module):
    """Attention with a causal attn_mask, which the import refuses (naming where the subgraph differs)."""

    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)

    def forward(self, x):
        return self.attn(x, x, x, attn_mask=torch.triu(torch.full((4, 4), float("-inf")), 1))[0]


VOCABULARY = 11
# name, model, per-example input shape (ids: token indices), export modes
MODELS = [
    ("mlp", MLP, [4, 6], ["eval"]),
    ("lenet", LeNet, [1, 16, 16], ["eval"]),
    ("resnet", ResNet, [3, 16, 16], ["eval", "train"]),
    ("lstm_lm", lambda: LanguageModel(nn.LSTM), "ids", ["eval"]),
    ("gru_lm", lambda: LanguageModel(nn.GRU), "ids", ["eval"]),
    ("bilstm_lm", lambda: LanguageModel(nn.LSTM, bidirectional=True), "ids", ["eval"]),
    ("prenorm_mlp", PreNormMLPBlock, [4, 8], ["eval"]),
    ("prenorm_block_gelu", lambda: PreNormBlock(nn.GELU), [4, 8], ["eval"]),
    ("prenorm_block_relu", lambda: PreNormBlock(nn.ReLU), [4, 8], ["eval"]),
]
# name, model, per-example input shape, what the refusal must say
REFUSED = [
    ("masked_attention", MaskedAttention, [4, 8], "'/attn/MatMul' (MatMul): read as nn.MultiheadAttention's"),
]
STEPS = 5  # positions of a language model's input


def randomise_statistics(model, gen):
    """Running statistics away from 0 and 1, so that evaluation mode differs from training's."""
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(m.running_var.shape, generator=gen) + 0.5)
            m.weight.data.copy_(torch.rand(m.weight.shape, generator=gen) + 0.5)
            m.bias.data.copy_(torch.randn(m.bias.shape, generator=gen) * 0.1)


def rel_error(a, b):
    a, b = a.double(), b.double()
    return ((a - b).abs().max() / max(b.abs().max().item(), 1e-30)).item()


def torch_pass(model, x, y, train, ids):
    """Output, loss and gradients by parameter name, in float64."""
    m = model.double()
    m.train(train)
    m.zero_grad()
    out = m(x.long() if ids else x.double())
    loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y.long().reshape(-1))
    loss.backward()
    grads = {name: p.grad.detach().clone() for name, p in m.named_parameters()}
    m.float()
    return out.detach(), loss.detach(), grads


def check(cli, workdir, name, make, shape, mode, opset, seed):
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = make()
    with torch.no_grad():
        randomise_statistics(model, gen)
    tag = "%s_%s_opset%d" % (name, mode, opset)
    onnx_path = os.path.join(workdir, tag + ".onnx")
    project = os.path.join(workdir, tag + ".plexus")
    weights = os.path.join(workdir, tag + ".safetensors")
    ids = shape == "ids"
    x = torch.randint(0, VOCABULARY, [BATCH, STEPS], generator=gen) if ids else torch.randn([BATCH] + shape, generator=gen)
    model.train(mode == "train")
    training = torch.onnx.TrainingMode.TRAINING if mode == "train" else torch.onnx.TrainingMode.EVAL
    torch.onnx.export(model, x, onnx_path, opset_version=opset, training=training, input_names=["x"],
                      output_names=["logits"], dynamic_axes={"x": {0: "N"}, "logits": {0: "N"}})
    model.eval()
    r = subprocess.run([cli, "import", onnx_path, "--out", project], capture_output=True, text=True)
    if r.returncode != 0:
        print("FAIL %s: plexus-cli import exited %d:\n%s%s" % (tag, r.returncode, r.stdout, r.stderr))
        return False
    nodes = json.load(open(project))["nodes"]
    id_of = {n["name"]: n["id"] for n in nodes}
    with torch.no_grad():
        scores = model(x)
    y = torch.randint(0, scores.shape[-1], scores.shape[:-1], generator=gen).float()
    batch = os.path.join(workdir, tag + ".batch.safetensors")
    gc.write_safetensors(batch, {"x": x.float(), "y": y})
    ok = True
    for train in ([False, True] if mode == "train" else [False]):
        out_path = os.path.join(workdir, tag + (".train" if train else ".eval") + ".grad.safetensors")
        cmd = [cli, "grad", "--project", project, "--weights", weights, "--input", batch, "--out", out_path,
               "--threads", "1"] + ([] if train else ["--eval"])
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            print("FAIL %s: plexus-cli grad exited %d:\n%s%s" % (tag, r.returncode, r.stdout, r.stderr))
            return False
        ours = gc.read_safetensors(out_path)
        out, loss, grads = torch_pass(model, x, y, train, ids)
        errors = {"loss": rel_error(ours["loss"], loss)}
        if not train:
            errors["output"] = rel_error(ours["output"], out)
        # Folded into the convolutions, the BatchNorms' parameters are not torch's.
        folded = mode == "eval" and any(isinstance(m, nn.BatchNorm2d) for m in model.modules())
        matched = 0
        for pname, g in ({} if folded else grads).items():
            # The longest module path that names an imported node: attention's "attn.out_proj.weight"
            # is the node attn's "out_proj.weight".
            parts = pname.split(".")
            cut = next((i for i in range(len(parts) - 1, 0, -1) if ".".join(parts[:i]) in id_of), 0)
            key = "%s.%s" % (id_of.get(".".join(parts[:cut]), "?"), ".".join(parts[cut:]))
            if key not in ours:
                continue
            matched += 1
            errors[pname] = rel_error(ours[key], g)
        worst_out = max(errors["loss"], errors.get("output", 0))
        worst_grad = max([e for k, e in errors.items() if k not in ("loss", "output")] or [0])
        passed = worst_out <= OUT_RTOL and worst_grad <= GRAD_RTOL and (folded or matched == len(grads))
        print("%s %s (%s statistics): output/loss rel err %.2e, %d/%d parameter gradients matched, worst %.2e" %
              ("PASS" if passed else "FAIL", tag, "batch" if train else "running", worst_out, matched, len(grads),
               worst_grad))
        if not passed:
            for k, e in errors.items():
                print("    %-28s %.2e" % (k, e))
        ok = ok and passed
    return ok


def refused(cli, workdir, name, make, shape, expected, opset):
    """The import of the model fails, its message naming the node (and nothing is written)."""
    tag = "%s_opset%d" % (name, opset)
    onnx_path = os.path.join(workdir, tag + ".onnx")
    project = os.path.join(workdir, tag + ".plexus")
    torch.onnx.export(make().eval(), torch.randn([BATCH] + shape), onnx_path, opset_version=opset, input_names=["x"],
                      dynamic_axes={"x": {0: "N"}})
    r = subprocess.run([cli, "import", onnx_path, "--out", project], capture_output=True, text=True)
    ok = r.returncode != 0 and expected in r.stderr and not os.path.exists(project)
    said = next((line.strip() for line in r.stderr.splitlines() if expected in line), r.stderr.strip() or r.stdout.strip())
    print("%s %s refused: %s" % ("PASS" if ok else "FAIL", tag, said))
    return ok


def main():
    args = sys.argv[1:]
    cli = os.path.join(REPO, "build", "app", "plexus-cli")
    keep = None
    while args:
        a = args.pop(0)
        if a == "--keep":
            keep = args.pop(0)
        else:
            cli = a
    print("torch %s, %s" % (torch.__version__, cli))
    torch.set_num_threads(1)
    all_ok = True
    with tempfile.TemporaryDirectory() as tmp:
        workdir = keep or tmp
        os.makedirs(workdir, exist_ok=True)
        seed = 1
        for name, make, shape, modes in MODELS:
            for mode in modes:
                for opset in OPSETS:
                    all_ok = check(cli, workdir, name, make, shape, mode, opset, seed) and all_ok
                    seed += 1
        for name, make, shape, expected in REFUSED:
            for opset in OPSETS:
                all_ok = refused(cli, workdir, name, make, shape, expected, opset) and all_ok
    print("CROSSCHECK %s" % ("PASSED" if all_ok else "FAILED"))
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
