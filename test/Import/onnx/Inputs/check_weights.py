"""Checks that a safetensors file holds exactly the tensors of an .npz file.

usage: check_weights.py WEIGHTS.safetensors EXPECTED.npz
"""
import json
import struct
import sys

import numpy as np

DTYPES = {"F32": np.float32, "F16": np.float16, "I32": np.int32, "I64": np.int64}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    out = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        raw = data[8 + n + begin:8 + n + end]
        out[name] = np.frombuffer(raw, DTYPES[info["dtype"]]).reshape(info["shape"])
    return out


def main():
    got = read_safetensors(sys.argv[1])
    want = dict(np.load(sys.argv[2]))
    if sorted(got) != sorted(want):
        sys.exit(f"tensors {sorted(got)}, expected {sorted(want)}")
    for name, value in want.items():
        if got[name].shape != value.shape or not np.array_equal(got[name], value):
            sys.exit(f"{name}: data differs")
    print(f"{len(got)} tensors match")


if __name__ == "__main__":
    main()
