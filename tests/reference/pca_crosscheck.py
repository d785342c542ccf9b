#!/usr/bin/env python3
"""Cross-checks Plexus's PCA (core/explain/projection.h) against numpy's SVD.

ctest runs it as reference_pca (Skipped where numpy is missing); by hand:

    /usr/bin/python3 tests/reference/pca_crosscheck.py build/tests/test_projection

Runs `test_projection pcaCrosscheck`, which writes a fixed 12 x 6 matrix and its 3-component PCA,
and compares points, components, mean and explained variance ratios with the SVD of the centred
matrix here, each component signed as the header says (its entry of largest magnitude positive),
within 1e-5.
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("skipped: %s cannot import numpy" % sys.executable)
    sys.exit(77)


def fail(msg):
    raise SystemExit("CROSSCHECK FAILED: " + msg)


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PLEXUS_PCA_CROSSCHECK_DIR=tmp)
        subprocess.run([binary, "pcaCrosscheck"], env=env, check=True)
        rows = {}
        for line in open(os.path.join(tmp, "pca.txt")):
            name, *values = line.split()
            rows[name] = np.array([float(v) for v in values])
    x = rows["x"].reshape(12, 6).astype(np.float64)
    mean = x.mean(axis=0)
    u, s, vt = np.linalg.svd(x - mean, full_matrices=False)
    k = 3
    components = vt[:k].copy()
    for c in components:
        if c[np.argmax(np.abs(c))] < 0:
            c *= -1
    points = (x - mean) @ components.T
    ratio = (s ** 2 / np.sum(s ** 2))[:k]
    for name, expected, shape in [("components", components, (k, 6)), ("points", points, (12, k)),
                                  ("mean", mean, (6,)), ("ratio", ratio, (k,))]:
        got = rows[name].reshape(shape)
        err = np.max(np.abs(got - expected))
        print("%-10s max |plexus - numpy| = %.2e" % (name, err))
        if err > 1e-5:
            fail("%s differs from numpy's SVD by %.3g:\nplexus %s\nnumpy  %s" % (name, err, got, expected))
    print("PCA matches numpy's SVD")


if __name__ == "__main__":
    main()
