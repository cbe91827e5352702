"""Writes a safetensors file with some of its f32 tensors transposed, as a
file holding them in torch's Linear layout would (test/e2e/
stored-permutation.mlir).

usage: transpose_weights.py IN.safetensors OUT.safetensors NAME...
"""
import json
import struct
import sys

import numpy as np

from linreg_reference import save_safetensors


def load(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    out = {}
    for name, info in header.items():
        assert info["dtype"] == "F32", name
        begin, end = info["data_offsets"]
        out[name] = np.frombuffer(data[8 + n + begin:8 + n + end],
                                  np.float32).reshape(info["shape"])
    return out


def main():
    tensors = load(sys.argv[1])
    for name in sys.argv[3:]:
        tensors[name] = tensors[name].T
    save_safetensors(sys.argv[2], tensors)


if __name__ == "__main__":
    main()
