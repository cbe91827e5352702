"""Compares every .npy file (and single-tensor .safetensors file, as
partition-run writes bf16 outputs) of a reference directory with the same
file in other directories.

usage: compare_dirs.py ATOL RTOL REFDIR DIR [DIR ...]
A file passes when |x - ref| <= ATOL + RTOL * |ref| everywhere; prints the
worst file per directory and exits non-zero on any failure or missing file.
"""
import json
import os
import struct
import sys

import numpy as np


def load(path):
    """The array in a .npy file or a one-tensor .safetensors file."""
    if path.endswith(".npy"):
        return np.load(path)
    with open(path, "rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(size))
        data = f.read()
    header.pop("__metadata__", None)
    ((_, entry),) = header.items()
    start, end = entry["data_offsets"]
    raw = data[start:end]
    if entry["dtype"] == "BF16":
        bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
        return bits.view(np.float32).reshape(entry["shape"])
    types = {"F32": "<f4", "F16": "<f2", "I32": "<i4", "I64": "<i8"}
    return np.frombuffer(raw, dtype=types[entry["dtype"]]).reshape(entry["shape"])


def main():
    atol, rtol, ref = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
    names = sorted(n for n in os.listdir(ref)
                   if n.endswith(".npy") or n.endswith(".safetensors"))
    if not names:
        sys.exit(f"{ref}: no .npy or .safetensors files")
    status = 0
    for d in sys.argv[4:]:
        worst, worst_name = 0.0, ""
        for n in names:
            path = os.path.join(d, n)
            if not os.path.exists(path):
                print(f"{path}: missing")
                status = 1
                continue
            a = load(os.path.join(ref, n)).astype(np.float64)
            b = load(path).astype(np.float64)
            if a.shape != b.shape:
                print(f"{path}: shape {b.shape}, expected {a.shape}")
                status = 1
                continue
            excess = np.abs(a - b) - (atol + rtol * np.abs(a))
            if excess.size and excess.max() > 0:
                i = np.unravel_index(np.argmax(excess), a.shape)
                print(f"{path}: off at {i}: {b[i]:.9g} vs {a[i]:.9g}")
                status = 1
            err = np.abs(a - b).max() if a.size else 0.0
            if err >= worst:
                worst, worst_name = err, n
        print(f"{d}: {len(names)} files, max abs difference {worst:.3g} ({worst_name})")
    sys.exit(status)


if __name__ == "__main__":
    main()
