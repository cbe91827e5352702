"""Lists a safetensors file: safetensors_info.py FILE [--seq S --head-dim D]

Prints one line per tensor, in file order: name, dtype, shape and what its
data looks like ("zeros", "ones", "normal std=0.02" with two significant
digits, or "other"). With --seq and --head-dim, checks rope.cos and rope.sin
against the rotary tables (base 10000, rotate-half layout) and prints
"rope: ok". Exits non-zero on a malformed file or wrong rotary tables.
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


def rope(seq, dim):
    inv = 10000.0 ** (-np.arange(0, dim // 2) * 2.0 / dim)
    angle = np.arange(seq)[:, None] * inv[None, :]
    angle = np.concatenate([angle, angle], axis=1)
    return np.cos(angle), np.sin(angle)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--seq", type=int)
    ap.add_argument("--head-dim", type=int)
    o = ap.parse_args()
    tensors = read(o.file)
    for name, dtype, a in tensors:
        shape = "x".join(str(s) for s in a.shape)
        print(f"{name} {dtype} [{shape}] {describe(a)}")
    if o.seq:
        by_name = {name: a for name, _, a in tensors}
        cos, sin = rope(o.seq, o.head_dim)
        err = max(np.abs(by_name["rope.cos"] - cos).max(),
                  np.abs(by_name["rope.sin"] - sin).max())
        # f32 rounding of values in [-1, 1]: half a unit in the last place.
        print("rope: " + ("ok" if err <= 6e-8 else f"WRONG, max error {err:.3g}"))
        if err > 6e-8:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
