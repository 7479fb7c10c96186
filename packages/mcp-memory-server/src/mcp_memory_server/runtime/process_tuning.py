"""Process-wide settings the server applies when it starts, before numpy or the model load. Each one is
measured (docs/benchmarks.md); an explicit value in the environment always wins."""

from __future__ import annotations

import ctypes
import os
import sys

# onnxruntime sizes its own thread pool to the cores. numpy's OpenBLAS keeps a second pool that spins
# after every matrix product (the vector cache's KNN) and steals those cores from the next embedding:
# measured at 10k memories, store_memory took 13.7 ms with it and 7.6 ms without.
SINGLE_THREADED_BLAS = {"OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

# glibc's malloc raises its mmap threshold (up to 32 MB) each time a large mmapped block is freed, so
# later blocks of that size come from the heap, where freed memory stays resident. The model load and
# the vector cache load free many such blocks: the server with 100k memories held 308 MB after 24
# searches with the dynamic threshold and 273 MB with it fixed at glibc's default of 128 KiB (the same
# as MALLOC_MMAP_THRESHOLD_=131072). mallopt's parameter number is M_MMAP_THRESHOLD from <malloc.h>.
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 128 * 1024
MMAP_THRESHOLD_ENV = "MALLOC_MMAP_THRESHOLD_"


def fix_mmap_threshold() -> bool:
    """Fix glibc's mmap threshold at 128 KiB; True if it was set (False off Linux, without glibc's
    mallopt, or when ``MALLOC_MMAP_THRESHOLD_`` is already in the environment)."""
    if not sys.platform.startswith("linux") or MMAP_THRESHOLD_ENV in os.environ:
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library this process runs on
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES))


def tune_process() -> None:
    """Apply every setting above (call before numpy is imported)."""
    for name, value in SINGLE_THREADED_BLAS.items():
        os.environ.setdefault(name, value)
    fix_mmap_threshold()
