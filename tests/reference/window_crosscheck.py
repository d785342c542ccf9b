#!/usr/bin/python3
"""Cross-checks the sliding-window and resampling layers against PyTorch's functional forms: random
graphs around Conv2d, Conv1d, ConvTranspose2d, Upsample, ZeroPad2d, MaxPool1d, AvgPool1d,
AdaptiveMaxPool2d and AdaptiveAvgPool2d (and the 2-D windowed poolings beside them), `plexus-cli init` + `plexus-cli grad` against torch in float64.

ctest runs it as reference_windows (Skipped where torch is missing); by hand, with Debian's
PyTorch:

    /usr/bin/python3 tests/reference/window_crosscheck.py [build/app/plexus-cli] [--seed S] [--graphs K]

It writes, in a temporary folder, a small CSV table (a regression dataset of F random features)
and K project files (default 40) drawn from a seeded generator:

    Input [N, F] -> Linear -> Reshape to a random [N, C, L] or [N, C, H, W]
      -> the layer (random kernel, stride, padding, output padding, dilation, groups, output size,
         scale factor or mode)
      -> Flatten -> Linear(1) -> MSE

The 2-D windows' kernel, stride, padding, dilation and output padding are one number or a
random [h, w] (rectangular kernels such as 5x1 among them); every other Conv2d and some Conv1d
pad "same" (odd and even kernels, with dilation: PyTorch's extra zero at the end), some "valid".

The adaptive poolings get output sizes that divide the input and ones that do not (overlapping
windows), down to [1, 1] (global pooling). Each project goes through grad_crosscheck.check: our
loss and every parameter gradient (the transposed convolution's weight and bias among them)
against torch's F.conv2d, F.conv1d, F.conv_transpose2d, F.interpolate, F.pad, F.max_pool1d, F.avg_pool1d,
F.adaptive_max_pool2d, F.adaptive_avg_pool2d, F.max_pool2d and F.avg_pool2d, relative tolerance
1e-5 of each tensor's largest magnitude.

Exit status 0 when every graph matches, 1 otherwise.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grad_crosscheck  # noqa: E402

TYPES = ["Conv2d", "Conv1d", "ConvTranspose2d", "Upsample", "ZeroPad2d", "MaxPool1d", "AvgPool1d", "AdaptiveMaxPool2d", "AdaptiveAvgPool2d", "MaxPool2d",
         "AvgPool2d"]

node, edge = grad_crosscheck.node, grad_crosscheck.edge


def pair(h, w):
    """A 2-D window's value as a project writes it: one number when both axes agree, else [h, w]."""
    return h if h == w else [h, w]


def random_pair(rng, lo, hi):
    """[h, w] drawn per axis, or one number for both."""
    if rng.random() < 0.3:
        return [rng.randint(lo, hi)] * 2
    return [rng.randint(lo, hi), rng.randint(lo, hi)]


def pool_params(rng, kind, shape, same=False):
    """Random parameters of `kind` for per-example input `shape` ([C, L] or [C, H, W]); `same`:
    a convolution pads "same"."""
    if kind == "Conv2d":
        groups = rng.choice([g for g in (1, 2, 3) if shape[0] % g == 0])
        d = random_pair(rng, 1, 2)
        # the dilated kernel fits the input unpadded, so any padding and stride do
        k = [rng.randint(1, max(1, min(5, (n - 1) // di + 1))) for n, di in zip(shape[1:], d)]
        if same:
            stride, padding = [1, 1], "same"
        else:
            stride = random_pair(rng, 1, 3)
            padding = rng.choice(["valid", random_pair(rng, 0, 2)])
        return {"out_channels": groups * rng.randint(1, 3), "kernel_size": pair(*k), "stride": pair(*stride),
                "padding": padding if isinstance(padding, str) else pair(*padding), "dilation": pair(*d),
                "groups": groups, "bias": rng.random() < 0.7}
    if kind == "ConvTranspose2d":
        groups = rng.choice([g for g in (1, 2, 3) if shape[0] % g == 0])
        k, stride = random_pair(rng, 1, 4), random_pair(rng, 1, 3)
        return {"out_channels": groups * rng.randint(1, 3), "kernel_size": pair(*k), "stride": pair(*stride),
                "padding": pair(*[rng.randint(0, (ki - 1) // 2) for ki in k]),
                "output_padding": pair(*[rng.randint(0, s - 1) for s in stride]),
                "dilation": pair(*random_pair(rng, 1, 2)), "groups": groups, "bias": rng.random() < 0.7}
    if kind == "Conv1d":
        groups = rng.choice([g for g in (1, 2, 3) if shape[0] % g == 0])
        d = rng.randint(1, 2)
        k = rng.randint(1, max(1, min(4, (shape[1] - 1) // d + 1)))
        stride, padding = rng.randint(1, 3), rng.choice([rng.randint(0, 2), rng.randint(0, 2), "valid"])
        if same:
            stride, padding = 1, "same"
        return {"out_channels": groups * rng.randint(1, 3), "kernel_size": k, "stride": stride,
                "padding": padding, "dilation": d, "groups": groups, "bias": rng.random() < 0.7}
    if kind == "Upsample":
        mode = rng.choice(["nearest", "bilinear"])
        return {"scale_factor": rng.randint(1, 3), "mode": mode,
                "align_corners": mode == "bilinear" and rng.random() < 0.5}
    if kind == "ZeroPad2d":
        return {"padding": rng.choice([[rng.randint(0, 3)], [rng.randint(0, 3) for _ in range(4)]])}
    if kind.startswith("Adaptive"):
        h, w = shape[1], shape[2]
        return {"output_size": rng.choice([[1, 1], [rng.randint(1, h), rng.randint(1, w)], [rng.randint(1, min(h, w))]])}
    if kind.endswith("1d"):
        k = rng.randint(1, shape[1])
        return {"kernel_size": k, "stride": rng.choice([0, 1, 2, 3]), "padding": rng.randint(0, k // 2)}
    k = [rng.randint(1, n) for n in shape[1:]] if rng.random() < 0.6 else [rng.randint(1, min(shape[1:]))] * 2
    return {"kernel_size": pair(*k), "stride": pair(*[rng.choice([0, 1, 2, 3]) for _ in k]),
            "padding": pair(*[rng.randint(0, ki // 2) for ki in k])}


def project(rng, kind, same=False):
    if kind.endswith("1d"):
        shape = [rng.randint(1, 4), rng.randint(2, 12)]
    else:
        shape = [rng.randint(1, 3), rng.randint(2, 9), rng.randint(2, 9)]
    size = 1
    for d in shape:
        size *= d
    nodes = [node("in", "Input"), node("fc", "Linear", {"out_features": size}),
             node("shape", "Reshape", {"shape": shape}), node("pool", kind, pool_params(rng, kind, shape, same)),
             node("flat", "Flatten"), node("out", "Linear", {"out_features": 1}), node("loss", "MSE")]
    edges = [edge("in", "fc", out="x"), edge("fc", "shape"), edge("shape", "pool"), edge("pool", "flat"),
             edge("flat", "out"), edge("out", "loss"), edge("in", "loss", "target", "y")]
    return grad_crosscheck.table_project(nodes, edges), shape


def main():
    def make(rng, i):
        kind = TYPES[i % len(TYPES)]
        # every other Conv2d, and every third Conv1d, pads "same"
        p, shape = project(rng, kind, same=(i // len(TYPES)) % (2 if kind == "Conv2d" else 3) == 0)
        return p, "[N, %s] -> %s %s" % (", ".join(map(str, shape)), kind, json.dumps(p["nodes"][3]["params"]))

    return grad_crosscheck.run_random_graphs("window", 11, 6 * len(TYPES), make, check_seed=53)


if __name__ == "__main__":
    sys.exit(main())
