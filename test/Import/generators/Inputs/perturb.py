"""Copies a safetensors file, replacing every one-dimensional tensor (biases
and norm scales, which the generators set to 0 and 1) with random values:
perturb.py IN OUT SEED. Scales become 1 + 0.1 N(0, 1), biases 0.1 N(0, 1),
so that a plan that drops or double-counts a bias or a scale (which zeros
and ones would hide) gives different outputs. Other tensors are kept.
"""
import json
import struct
import sys

import numpy as np

from safetensors_info import read


def main():
    src, dst, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rng = np.random.default_rng(seed)
    header, blobs, offset = {}, [], 0
    for name, _, a in read(src):
        if a.ndim == 1:
            noise = 0.1 * rng.standard_normal(a.shape)
            a = (1 + noise if name.endswith("weight") else noise).astype(np.float32)
        data = np.ascontiguousarray(a, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(dst, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


if __name__ == "__main__":
    main()
