#!/usr/bin/python3
"""Cross-checks `plexus-cli explain` against PyTorch: Grad-CAM, saliency and integrated gradients
on MNIST models, and a MultiheadAttention node's attention weights.

ctest runs it as reference_explain (Skipped where torch is missing); by hand, with Debian's PyTorch:

    /usr/bin/python3 tests/reference/explain_crosscheck.py [build/app/plexus-cli]

1. LeNet (examples/mnist_lenet.plexus) with `plexus-cli init`'s weights, written back with the
   metadata a run stores (MNIST's normalisation, class names), so no dataset is needed; a
   random 28x28 gray PNG as the INPUT. `explain --values` gives our numbers and the raw input
   the model read; torch recomputes them in float64 from the same weights with its own conv,
   pool and linear layers and torch.autograd:
   - gradcam (node conv2, and the default node, pool2): alpha_k = spatial mean of d logit / d A_k,
     ReLU(sum_k alpha_k A_k) [h, w], and that map placed over the 28x28 picture where its cells
     look: cell j's centre, derived here from LeNet's layers (kernel, stride, no padding), at
     pixel offset + stride * j; grid_sample(align_corners=True, padding_mode="border") reads the map
     at ((y - offset) / stride, (x - offset) / stride);
   - saliency: d logit / d raw input, through (x - mean) / std;
   - integrated gradients, on examples/mnist_mlp.plexus (see check_lenet for why not LeNet): 64 points
     alpha = i/63 on the path from 0, trapezoid weights, times the input.
   All within 1e-4 of the largest magnitude of each tensor.
2. examples/names_transformer.plexus on a corpus of its 54 symbols with `init`'s weights, a typed prompt: node attn1's weights [H, T, T] against
   torch.nn.MultiheadAttention(need_weights=True, average_attn_weights=False) on the same input
   (the node's input, which explain writes as "query") with the causal mask, within 1e-5.

Exit status 0 when everything matches, 1 otherwise.
"""
import json
import os
import random
import struct
import subprocess
import sys
import tempfile
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_or_skip  # noqa: F401,E402  (exit 77, Skipped, without torch)
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import grad_crosscheck  # noqa: E402

REPO = grad_crosscheck.REPO
RTOL = 1e-4
MEAN, STD = 0.1307, 0.3081


def write_gray_png(path, pixels, size):
    rows = b"".join(b"\x00" + bytes(pixels[r * size:(r + 1) * size]) for r in range(size))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 0, 0, 0, 0)) +
                chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def rel_error(ours, ref):
    return (ours.to(torch.float64) - ref).abs().max().item() / max(ref.abs().max().item(), 1e-30)


def explain(cli, project, weights, extra, workdir, name):
    values = os.path.join(workdir, name + ".safetensors")
    out = subprocess.run([cli, "explain", project, "--checkpoint", weights, "--out",
                          os.path.join(workdir, name + ".png"), "--values", values, "--json"] + extra,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out), grad_crosscheck.read_safetensors(values)


def report(name, err, tolerance):
    ok = err <= tolerance
    print("%s %-34s relative error %.2e (tolerance %g)" % ("PASS" if ok else "FAIL", name, err, tolerance))
    return ok


def lenet(w, x_raw, maps_at=None):
    """The logits [1, 10] of raw pictures [1, 1, 28, 28], and the output of node `maps_at`."""
    h = F.conv2d((x_raw - MEAN) / STD, w["conv1.weight"], w["conv1.bias"])
    h = F.max_pool2d(F.relu(h), 2)
    conv2 = F.conv2d(h, w["conv2.weight"], w["conv2.bias"])
    pool2 = F.max_pool2d(F.relu(conv2), 2)
    h = F.relu(F.linear(pool2.flatten(1), w["fc1.weight"], w["fc1.bias"]))
    return F.linear(h, w["fc2.weight"], w["fc2.bias"]), {"conv2": conv2, "pool2": pool2}.get(maps_at)


def mlp(w, x_raw):
    """examples/mnist_mlp.plexus's logits [n, 10] of raw pictures [n, 1, 28, 28]."""
    h = F.relu(F.linear(((x_raw - MEAN) / STD).flatten(1), w["fc1.weight"], w["fc1.bias"]))
    return F.linear(h, w["fc2.weight"], w["fc2.bias"])


def mnist_model(cli, name, workdir):
    """examples/NAME.plexus, `init`'s weights written back with the metadata a run stores (MNIST's
    normalisation, class names): the project, the weights' file and the weights in float64."""
    project = os.path.join(REPO, "examples", name + ".plexus")
    weights = os.path.join(workdir, name + ".safetensors")
    subprocess.run([cli, "init", "--project", project, "--seed", "5", "--out", weights], check=True,
                   stdout=subprocess.DEVNULL)
    w32 = grad_crosscheck.read_safetensors(weights)
    grad_crosscheck.write_safetensors(weights, w32, {
        "input_shape": "[1,28,28]", "classes": "10", "input_mean": json.dumps([MEAN]), "input_std": json.dumps([STD]),
        "class_names": json.dumps([str(c) for c in range(10)])})
    return project, weights, {k: v.to(torch.float64) for k, v in w32.items()}


# LeNet's windows up to each Grad-CAM node, (kernel, stride, padding) in the order they run.
LENET_WINDOWS = {"conv2": [(5, 1, 0), (2, 2, 0), (5, 1, 0)], "pool2": [(5, 1, 0), (2, 2, 0), (5, 1, 0), (2, 2, 0)]}


def placed(cam, node, size=28):
    """The map [h, w] sampled at each pixel's grid coordinate from its cells' receptive-field centres."""
    offset, stride = 0.0, 1.0
    for kernel, step, padding in LENET_WINDOWS[node]:
        offset, stride = offset + stride * ((kernel - 1) / 2 - padding), stride * step
    h, w = cam.shape
    pixels = torch.arange(size, dtype=torch.float64)
    gy, gx = (pixels - offset) / stride, (pixels - offset) / stride
    # grid_sample's coordinates: -1 at the first cell's centre, 1 at the last's (align_corners=True).
    ny, nx = 2 * gy / (h - 1) - 1, 2 * gx / (w - 1) - 1
    grid = torch.stack(torch.meshgrid(nx, ny, indexing="xy"), dim=-1)[None]  # [1, H, W, (x, y)]
    return F.grid_sample(cam[None, None], grid, mode="bilinear", padding_mode="border", align_corners=True)[0, 0]


def check_lenet(cli, workdir):
    project, weights, w = mnist_model(cli, "mnist_lenet", workdir)
    rng = random.Random(3)
    picture = os.path.join(workdir, "digit.png")
    write_gray_png(picture, [rng.randrange(256) if 6 <= r % 28 < 22 else 0 for r in range(28 * 28)], 28)

    ok = True
    for node in ("conv2", None):
        result, ours = explain(cli, project, weights, [picture, "--method", "gradcam"] + (["--node", node] if node else []),
                               workdir, "gradcam")
        x = ours["input"].to(torch.float64).unsqueeze(0).requires_grad_()  # so the maps have a history
        logits, maps = lenet(w, x, result["node"])
        target = int(logits.argmax())
        (grads,) = torch.autograd.grad(logits[0, target], maps)
        alpha = grads.mean(dim=(2, 3), keepdim=True)
        cam = F.relu((alpha * maps).sum(1))[0]
        heat = placed(cam, result["node"])
        ok = report("gradcam %s class" % result["node"], float(result["class"] != target), 0) and ok
        ok = report("gradcam %s map [%d, %d]" % ((result["node"],) + tuple(cam.shape)), rel_error(ours["values"], cam),
                    RTOL) and ok
        ok = report("gradcam %s placed" % result["node"], float(result["stretched"]), 0) and ok
        ok = report("gradcam %s heat [28, 28]" % result["node"], rel_error(ours["heat"], heat), RTOL) and ok

    for cls in (None, 3):
        extra = ["--class", str(cls)] if cls is not None else []
        result, ours = explain(cli, project, weights, [picture, "--method", "saliency"] + extra, workdir, "saliency")
        x = ours["input"].to(torch.float64).unsqueeze(0).requires_grad_()
        logits, _ = lenet(w, x)
        target = int(logits.argmax()) if cls is None else cls
        (grad,) = torch.autograd.grad(logits[0, target], x)
        ok = report("saliency class %d" % target, rel_error(ours["values"], grad[0]), RTOL) and ok

    # Integrated gradients on the MLP: the path starts at the black picture, one value after the
    # normalisation, where every max-pool window of LeNet is an exact tie; any of its cells is a
    # valid subgradient, torch in float64 takes each window's first, and float32 sums whose
    # rounding depends on the position (OpenBLAS's products, in a batch) take others, a different
    # gradient at that point (1/126 of the integral) on some CPUs. The MLP has no ties there.
    project, weights, w = mnist_model(cli, "mnist_mlp", workdir)
    result, ours = explain(cli, project, weights, [picture, "--method", "integrated-gradients"], workdir, "ig")
    x = ours["input"].to(torch.float64).unsqueeze(0)
    steps = 64
    alphas = torch.arange(steps, dtype=torch.float64) / (steps - 1)
    path = (alphas.view(-1, 1, 1, 1) * x).requires_grad_()
    logits = mlp(w, path)
    (grads,) = torch.autograd.grad(logits[:, result["class"]].sum(), path)
    weights_ = torch.ones(steps, dtype=torch.float64) / (steps - 1)
    weights_[0] = weights_[-1] = 0.5 / (steps - 1)
    ig = (x * (weights_.view(-1, 1, 1, 1) * grads).sum(0, keepdim=True))[0]
    ok = report("integrated gradients", rel_error(ours["values"], ig), RTOL) and ok
    ok = report("integrated gradients' baseline score",
                abs(result["baseline_score"] - logits[0, result["class"]].item()) / max(abs(result["score"]), 1e-30),
                RTOL) and ok
    return ok


def check_attention(cli, workdir):
    # A corpus of the project's 54 symbols, so `init` sizes the model as for names.txt.
    symbols = sorted("\n'-" + "abcdefghijklmnopqrstuvwxyz" + "ABCDEFGHIJKLMNOPQRSTUVWXY")
    corpus = os.path.join(workdir, "corpus.txt")
    with open(corpus, "w") as f:
        f.write("".join(symbols[1:]) + "\n" + "".join(reversed(symbols[1:])) + "\n")
    project = json.load(open(os.path.join(REPO, "examples", "names_transformer.plexus")))
    project["dataset"]["path"] = corpus
    project_path = os.path.join(workdir, "names_transformer.plexus")
    json.dump(project, open(project_path, "w"))
    weights = os.path.join(workdir, "names.safetensors")
    subprocess.run([cli, "init", "--project", project_path, "--seed", "7", "--out", weights], check=True,
                   stdout=subprocess.DEVNULL)
    w = grad_crosscheck.read_safetensors(weights)
    result, ours = explain(cli, project_path, weights, ["--text", "mariana", "--method", "attention", "--node", "attn1"],
                           workdir, "attention")
    ok = report("attention tokens", float(result["tokens"] != list("mariana")), 0)
    mha = torch.nn.MultiheadAttention(64, 4, batch_first=True).to(torch.float64)
    with torch.no_grad():
        for name, p in mha.named_parameters():
            p.copy_(w["attn1." + name])
    q = ours["query"].to(torch.float64).unsqueeze(0)
    steps = q.shape[1]
    mask = torch.triu(torch.ones(steps, steps, dtype=torch.bool), diagonal=1)
    _, ref = mha(q, q, q, attn_mask=mask, need_weights=True, average_attn_weights=False)
    ok = report("attention weights [4, %d, %d]" % (steps, steps), rel_error(ours["weights"], ref[0].detach()),
                1e-5) and ok
    return ok


def main():
    cli = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "build", "app", "plexus-cli")
    print("torch %s, %s" % (torch.__version__, cli))
    with tempfile.TemporaryDirectory() as workdir:
        ok = check_lenet(cli, workdir)
        ok = check_attention(cli, workdir) and ok
    print("CROSSCHECK %s" % ("PASSED" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
