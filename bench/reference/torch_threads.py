"""The PyTorch twins' thread set-up: torch's intra-op threads, and the line saying it."""
import os

import torch


def set_threads(threads):
    """Sets torch's intra-op threads and prints the `device:` and `# torch` lines the bench scripts
    read. OPENBLAS_NUM_THREADS and OMP_WAIT_POLICY are read when the libraries load, so they come
    from the environment: printed, not set."""
    torch.set_num_threads(threads)
    print(f"device: cpu (torch {torch.get_num_threads()} intra-op threads, "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '(unset)')}, "
          f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(unset)')})")
    print(f"# torch {torch.__version__}")
