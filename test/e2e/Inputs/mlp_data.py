"""Writes the weights, input and numpy reference output of the e2e MLP.

usage: mlp_data.py OUT_DIR
Writes OUT_DIR/weights.safetensors (w1, b1, w2, b2), OUT_DIR/x.npy and
OUT_DIR/expected.npy (the forward pass in float64).
"""
import json
import struct
import sys

import numpy as np

B, I, H, O = 8, 16, 32, 12


def save_safetensors(path, tensors):
    names = {"float32": "F32", "float16": "F16", "int32": "I32", "int64": "I64"}
    header, blobs, offset = {}, [], 0
    for name, array in tensors.items():
        data = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": names[array.dtype.name],
                        "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def main(out):
    rng = np.random.default_rng(7)
    w = {
        "w1": rng.standard_normal((I, H)).astype(np.float32) / np.sqrt(I),
        "b1": rng.standard_normal(H).astype(np.float32) * 0.1,
        "w2": rng.standard_normal((H, O)).astype(np.float32) / np.sqrt(H),
        "b2": rng.standard_normal(O).astype(np.float32) * 0.1,
    }
    x = rng.standard_normal((B, I)).astype(np.float32)
    save_safetensors(f"{out}/weights.safetensors", w)
    np.save(f"{out}/x.npy", x)
    f64 = {k: v.astype(np.float64) for k, v in w.items()}
    h = gelu_tanh(x.astype(np.float64) @ f64["w1"] + f64["b1"])
    np.save(f"{out}/expected.npy", h @ f64["w2"] + f64["b2"])


if __name__ == "__main__":
    main(sys.argv[1])
