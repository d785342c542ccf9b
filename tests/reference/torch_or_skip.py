"""Imported first by the cross-checks that ctest runs: where PyTorch is missing they exit with
status 77, which ctest reports as Skipped (not Passed)."""
import sys

try:
    import torch  # noqa: F401
except ImportError:
    print("skipped: %s cannot import torch (Debian 12: apt-get install python3-torch)" % sys.executable)
    sys.exit(77)
