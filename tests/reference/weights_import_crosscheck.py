#!/usr/bin/python3
"""Cross-checks `plexus-cli import-weights` against PyTorch: state dicts of torch models written
in PyTorch's own names load into example projects named otherwise, and give torch's outputs.

ctest runs it as reference_weights_import (Skipped where torch is missing); by hand:

    /usr/bin/python3 tests/reference/weights_import_crosscheck.py build/app/plexus-cli

For each case, a torch model with random weights (BatchNorm's running statistics and affine
parameters random too, so that a mix-up shows):
  lenet   examples/mnist_lenet.plexus as an nn.Sequential: "0.weight", "3.bias", ... match by order,
          also from a header sorted by name as the safetensors package writes it ("0.bias" first);
  resnet  examples/fashion_resnet.plexus as torchvision names its BasicBlocks ("conv1", "bn1",
          "layer2.0.downsample.1.running_var", "fc"): "fc" exactly, the rest by order (the
          project's tensors come depth first, as torchvision registers a block's modules); its
          num_batches_tracked are I64, as PyTorch keeps them: listed as left out;
  lstm    examples/names_lstm.plexus (without its dropout, whose draws differ) as a module of
          embed, rnn (nn.LSTM) and out, saved under "model." as a wrapper would: embed and out by
          name, the LSTM's weight_ih_l0 ... by order; gate order i, f, g, o on both sides.
1. The state dict is written by hand as safetensors in its own order (8-byte little-endian header
   length, JSON header, raw data) and `plexus-cli import-weights P SD --out W --json` runs; its
   report must be complete and say how each tensor was matched as expected here.
2. W holds every torch tensor bit for bit under the Plexus name it belongs to.
3. A random batch through `plexus-cli grad` (training mode) gives torch's loss and gradients
   (torch in float64) within 1e-4 relative.
Exit status 0 when every case holds, 1 otherwise.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grad_crosscheck as gc  # noqa: E402  (exits 77, Skipped, without torch)
from torch_blocks import BasicBlock  # noqa: E402

torch = gc.torch
nn = torch.nn
F = torch.nn.functional
REPO = gc.REPO
RTOL = 1e-4


def write_state_dict(path, state):
    """Safetensors in the state dict's order: F32, and I64 for integer tensors (PyTorch's counters)."""
    header, data = {}, b""
    for name, t in state.items():
        t = t.detach().contiguous()
        if t.dtype == torch.int64:
            dtype, raw = "I64", struct.pack("<%dq" % t.numel(), *t.flatten().tolist())
        else:
            dtype, raw = "F32", struct.pack("<%df" % t.numel(), *t.to(torch.float32).flatten().tolist())
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def randomise(model, gen):
    """Every parameter U(-b, b), b = 1/sqrt(fan-in) for a matrix or kernel (PyTorch's default scale,
    which keeps the LSTM out of saturation), 0.5 for a vector; BatchNorm's running statistics
    random (variances positive)."""
    with torch.no_grad():
        for p in model.parameters():
            bound = 1 / (p[0].numel() ** 0.5) if p.dim() > 1 else 0.5
            p.copy_((torch.rand(p.shape, generator=gen) * 2 - 1) * bound)
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=gen))
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=gen) + 0.5)
                m.num_batches_tracked.fill_(7)


# ---- the cases --------------------------------------------------------------------------------
def lenet():
    model = nn.Sequential(nn.Conv2d(1, 20, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(20, 50, 5), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(800, 500), nn.ReLU(), nn.Linear(500, 10))
    ids = {"0": "conv1", "3": "conv2", "7": "fc1", "9": "fc2"}
    plexus = {k: ids[k.split(".")[0]] + "." + k.split(".")[1] for k in model.state_dict()}
    return model, "", plexus, {k: "order" for k in plexus}


class ResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.layer1 = nn.Sequential(BasicBlock(16, 16, 1))
        self.layer2 = nn.Sequential(BasicBlock(16, 32, 2))
        self.layer3 = nn.Sequential(BasicBlock(32, 64, 2))
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        x = self.layer3(self.layer2(self.layer1(F.relu(self.bn1(self.conv1(x))))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def resnet():
    model = ResNet()
    plexus, how = {}, {}
    for k in model.state_dict():
        if k.endswith("num_batches_tracked"):
            continue  # I64: left out
        path, param = k.rsplit(".", 1)
        if path == "fc":
            node = "fc"
        elif path in ("conv1", "bn1"):
            node = {"conv1": "stem_conv", "bn1": "stem_bn"}[path]
        else:
            layer, _, rest = path.split(".", 2)  # layer2, 0, downsample.1
            block = "block" + layer[len("layer"):]
            node = block + "_" + {"conv1": "conv1", "bn1": "bn1", "conv2": "conv2", "bn2": "bn2",
                                  "downsample.0": "proj", "downsample.1": "proj_bn"}[rest]
        plexus[k] = node + "." + param
        how[k] = "exact" if node == "fc" else "order"
    return model, "", plexus, how


class CharModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(54, 32)
        self.rnn = nn.LSTM(32, 256, batch_first=True)
        self.out = nn.Linear(256, 54)

    def forward(self, x):
        return self.out(self.rnn(self.embed(x.long()))[0])


def lstm():
    model = CharModel()
    plexus = {k: ("lstm" + k[len("rnn"):] if k.startswith("rnn.") else k) for k in model.state_dict()}
    how = {k: "order" if k.startswith("rnn.") else "name" for k in model.state_dict()}
    return model, "model.", plexus, how


def names_lstm_without_dropout(workdir):
    project = json.load(open(os.path.join(REPO, "examples", "names_lstm.plexus")))
    text = os.path.join(REPO, project["dataset"]["path"])
    if not os.path.exists(text):
        return None
    project["dataset"]["path"] = text
    project["nodes"] = [n for n in project["nodes"] if n["id"] != "drop"]
    project["edges"] = [e for e in project["edges"] if e["to"][0] != "drop"]
    for e in project["edges"]:
        if e["from"][0] == "drop":
            e["from"] = ["lstm", "output"]
    path = os.path.join(workdir, "names_lstm_nodrop.plexus")
    json.dump(project, open(path, "w"), indent=2)
    return path


# ---- the check --------------------------------------------------------------------------------
def check(cli, name, make, project_path, workdir, seed, sort_header=False):
    """sort_header: the header sorted by name, as the safetensors package writes it."""
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model, prefix, plexus_name, how = make()
    randomise(model, gen)
    state = {prefix + k: v for k, v in model.state_dict().items()}
    if sort_header:
        state = dict(sorted(state.items()))
    sd_path = os.path.join(workdir, name + ".state.safetensors")
    w_path = os.path.join(workdir, name + ".plexus.safetensors")
    write_state_dict(sd_path, state)
    r = subprocess.run([cli, "import-weights", project_path, sd_path, "--out", w_path, "--json"], capture_output=True,
                       text=True)
    problems = []
    if r.returncode != 0:
        print("FAIL %s: import-weights exited %d\n%s%s" % (name, r.returncode, r.stdout, r.stderr))
        return False
    report = json.loads(r.stdout)
    if not report["complete"]:
        problems.append("the report is not complete")
    rows = {t["file"]: t for t in report["tensors"] if "file" in t}
    for k, target in plexus_name.items():
        row = rows.get(prefix + k)
        if not row or row["status"] != "matched" or row.get("project") != target or row.get("by") != how[k]:
            problems.append("%s%s: expected matched by %s to %s, got %s" % (prefix, k, how[k], target, row))
    for k in state:
        if k.endswith("num_batches_tracked") and rows.get(k, {}).get("status") != "left out":
            problems.append("%s: expected left out (I64), got %s" % (k, rows.get(k)))

    # 2. Bit for bit where they belong.
    ours = gc.read_safetensors(w_path)
    for k, target in plexus_name.items():
        if target not in ours or not torch.equal(ours[target], model.state_dict()[k].to(torch.float32)):
            problems.append("%s: the weights file's %s is not torch's %s" % (name, target, k))

    # 3. Loss and gradients of a random batch.
    project = json.load(open(project_path))
    x, y = gc.make_batch(project, project_path, gen)
    x_path, g_path = os.path.join(workdir, name + ".batch.safetensors"), os.path.join(workdir, name + ".grads.safetensors")
    gc.write_safetensors(x_path, {"x": x, "y": y})
    subprocess.run([cli, "grad", "--project", project_path, "--weights", w_path, "--input", x_path, "--out", g_path],
                   check=True, stdout=subprocess.DEVNULL)
    grads = gc.read_safetensors(g_path)
    reference = model.double().train()
    reference.zero_grad()
    loss_node = next(n for n in project["nodes"] if n["type"] == "CrossEntropy")
    loss = gc.torch_loss(loss_node, reference(x.double()), y.double())
    loss.backward()
    worst = abs(grads["loss"].item() - loss.item()) / max(abs(loss.item()), 1e-30)
    for k, p in reference.named_parameters():
        target = plexus_name[k]
        if target not in grads:
            problems.append("no gradient of %s" % target)
            continue
        worst = max(worst, gc.rel_error(grads[target], p.grad))
    if worst > RTOL:
        problems.append("worst relative error %.2e over %g" % (worst, RTOL))
    print("%s %s: %d tensors matched (%s), loss %.6f (torch %.6f), worst relative error of loss and gradients %.2e" %
          ("FAIL" if problems else "PASS", name, report["matched"],
           ", ".join("%d by %s" % (sum(1 for t in report["tensors"] if t.get("by") == b), b)
                     for b in ("exact", "name", "order")), grads["loss"].item(), loss.item(), worst))
    for p in problems:
        print("    " + p)
    return not problems


def main():
    cli = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "build", "app", "plexus-cli")
    ok = True
    with tempfile.TemporaryDirectory() as workdir:
        examples = os.path.join(REPO, "examples")
        ok &= check(cli, "lenet", lenet, os.path.join(examples, "mnist_lenet.plexus"), workdir, 1)
        ok &= check(cli, "lenet-sorted", lenet, os.path.join(examples, "mnist_lenet.plexus"), workdir, 4,
                    sort_header=True)
        ok &= check(cli, "resnet", resnet, os.path.join(examples, "fashion_resnet.plexus"), workdir, 2)
        lstm_project = names_lstm_without_dropout(workdir)
        if lstm_project:
            ok &= check(cli, "lstm", lstm, lstm_project, workdir, 3)
        else:
            print("skipped lstm: data/names/names.txt is missing")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
