"""Lists a safetensors file: safetensors_info.py FILE

Prints one line per tensor, in file order: name, dtype, shape and what its
data looks like ("zeros", "ones", "normal std=0.02" with two significant
digits, or "other"). Exits non-zero on a malformed file.
The format: an 8-byte little-endian header length, a JSON header of
{name: {dtype, shape, data_offsets}}, then the data.
"""
import argparse
import json
import struct
import sys

import numpy as np


def read(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    header.pop("__metadata__", None)
    data = blob[8 + n:]
    tensors = []
    for name, t in header.items():
        assert t["dtype"] == "F32", (name, t["dtype"])
        begin, end = t["data_offsets"]
        a = np.frombuffer(data[begin:end], dtype="<f4").reshape(t["shape"])
        tensors.append((begin, name, t["dtype"], a))
    tensors.sort(key=lambda t: t[0])
    return [(name, dtype, a) for _, name, dtype, a in tensors]


def describe(a):
    if np.all(a == 0):
        return "zeros"
    if np.all(a == 1):
        return "ones"
    mean, std = float(a.mean()), float(a.std())
    if a.size >= 64 and abs(mean) < 4 * std / np.sqrt(a.size):
        return f"normal std={std:.2g}"
    return "other"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    o = ap.parse_args()
    tensors = read(o.file)
    for name, dtype, a in tensors:
        shape = "x".join(str(s) for s in a.shape)
        print(f"{name} {dtype} [{shape}] {describe(a)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
