#!/usr/bin/python3
"""Runs the PyTorch code `plexus-cli export --pytorch` writes, and compares its outputs with Plexus'.

ctest runs it as reference_pytorch_export (Skipped where torch is missing); by hand, with Debian's PyTorch:

    /usr/bin/python3 tests/reference/pytorch_export_crosscheck.py build/app/plexus-cli \\
        build/tests/model_outputs [project.plexus ...]

For each project (default: every examples/*.plexus, and tests/reference/projects/*.plexus for
layer types no example uses):

1. `model_outputs P DIR` (tests/support/model_outputs.cpp) writes initial weights moved at random,
   so that every parameter and buffer matters, and the model's outputs on the first 100 test
   examples, as `plexus-cli predict` computes them; a project whose dataset is absent is skipped.
2. `plexus-cli export P --checkpoint DIR/weights.safetensors --pytorch DIR/P.py` writes the code.
3. The file is imported here (only the standard library and torch), its load_weights reads the
   weights, and its model's forward on the same raw inputs must give every output within 1e-4 of
   the largest magnitude (at least 1) of Plexus' (float32 kernels that sum in other orders).
The first project's file is also run as a script (`python3 P.py WEIGHTS`).

Exit status 0 when every project that ran matched, 1 otherwise, 77 when none could run.

With `--check-dir DIR` it compares the files test_code_export writes, one layer type each (see
check_dir).
"""
import glob
import importlib.util
import os
import subprocess
import sys
import tempfile

import torch_or_skip  # noqa: F401  (exit 77, Skipped, without torch)
import torch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOLERANCE = 1e-4
torch.set_num_threads(1)


def class_name(stem):
    """pytorch_code.cpp's class name: the project's name in CamelCase."""
    words = "".join(ch if ch.isalnum() else " " for ch in stem).split()
    name = "".join(w[0].upper() + w[1:] for w in words)
    return name if name and not name[0].isdigit() else "Model" + name


def compare(label, code, weights, outputs):
    """Imports the exported file `code` (a module of its own), loads `weights` with its
    load_weights and compares its forward on the "x" of `outputs` with the "output.<i>" there."""
    spec = importlib.util.spec_from_file_location(label, code)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.load_weights(getattr(module, class_name(label))(), weights)
    tensors, _ = module.read_safetensors(outputs)
    expected = [tensors[f"output.{i}"] for i in range(len(tensors) - 1)]
    with torch.no_grad():
        got = model(tensors["x"])
    got = list(got) if isinstance(got, tuple) else [got]
    if len(got) != len(expected):
        print(f"FAIL {label}: forward returns {len(got)} outputs, Plexus computes {len(expected)}")
        return False
    worst = 0.0
    for i, (g, e) in enumerate(zip(got, expected)):
        if g.shape != e.shape:
            print(f"FAIL {label}: output {i} has shape {list(g.shape)}, Plexus' {list(e.shape)}")
            return False
        scale = max(1.0, e.abs().max().item())
        worst = max(worst, (g - e).abs().max().item() / scale)
    ok = worst <= TOLERANCE
    print(f"{'ok  ' if ok else 'FAIL'} {label}: {tensors['x'].shape[0]} examples, {len(expected)} output(s), "
          f"largest difference {worst:.2g} of the largest magnitude")
    return ok


def check_dir(folder):
    """--check-dir: every subfolder NAME of `folder` holds model.py (exported with the project
    name NAME, which is no name of the file's own), weights.safetensors and outputs.safetensors
    (test_code_export writes them)."""
    names = sorted(os.listdir(folder))
    results = [compare(n, *(os.path.join(folder, n, f) for f in ("model.py", "weights.safetensors",
                                                                   "outputs.safetensors"))) for n in names]
    print(f"{sum(results)} of {len(results)} match")
    sys.exit(0 if results and all(results) else 1)


def check(cli, model_outputs, project, work, run_as_script):
    stem = os.path.splitext(os.path.basename(project))[0]
    done = subprocess.run([model_outputs, project, work], capture_output=True, text=True)
    if done.returncode == 77:
        print(done.stdout.strip())
        return None
    if done.returncode != 0:
        print(f"FAIL {stem}: model_outputs: {done.stderr.strip()}")
        return False
    weights, code = os.path.join(work, "weights.safetensors"), os.path.join(work, stem + ".py")
    read = os.path.join(work, os.path.basename(project))  # the project as model_outputs read it
    done = subprocess.run([cli, "export", read, "--checkpoint", weights, "--pytorch", code],
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(f"FAIL {stem}: plexus-cli export: {done.stderr.strip()}")
        return False
    ok = compare(stem, code, weights, os.path.join(work, "outputs.safetensors"))
    if ok and run_as_script:
        done = subprocess.run([sys.executable, code, weights], capture_output=True, text=True)
        if done.returncode != 0 or "tensor(" not in done.stdout:
            print(f"FAIL {stem}: python3 {stem}.py WEIGHTS: exit {done.returncode}: {done.stderr.strip()[-500:]}")
            return False
    return ok


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check-dir":
        check_dir(sys.argv[2])
    if len(sys.argv) < 3:
        sys.exit("usage: pytorch_export_crosscheck.py PLEXUS_CLI MODEL_OUTPUTS [project.plexus ...]")
    cli, model_outputs = sys.argv[1], sys.argv[2]
    projects = sys.argv[3:] or (sorted(glob.glob(os.path.join(REPO, "examples", "*.plexus"))) +
                                sorted(glob.glob(os.path.join(REPO, "tests", "reference", "projects", "*.plexus"))))
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for project in projects:
            work = os.path.join(tmp, os.path.splitext(os.path.basename(project))[0])
            results.append(check(cli, model_outputs, project, work, run_as_script=not any(r for r in results)))
    ran = [r for r in results if r is not None]
    print(f"{sum(ran)} of {len(ran)} projects match ({len(results) - len(ran)} skipped)")
    if not ran:
        sys.exit(77)
    sys.exit(0 if all(ran) else 1)


if __name__ == "__main__":
    main()
