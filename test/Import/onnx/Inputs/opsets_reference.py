"""float64 numpy reference of make_models.py's opsets-opset*.onnx.

usage: opsets_reference.py X.npy OUTDIR

Writes OUTDIR/<output>.npy for every output of the model (mean, sum, max,
maxall, noop, split, halves), computed in float64 from the float32 input.
"""
import os
import sys

import numpy as np

x = np.load(sys.argv[1]).astype(np.float64)
expected = {
    "mean": x.mean(axis=-1, keepdims=True),
    "sum": x.sum(axis=1),
    "max": x.max(axis=(1, 2)),
    "maxall": x.max(keepdims=True),
    "noop": -x,
    # num_outputs 3 on 8 columns: chunks of ceil(8 / 3) = 3, the last one 2.
    "split": np.concatenate([x[:, :, 6:], x[:, :, :3], x[:, :, 3:6]], axis=2),
    "halves": x[:, :3] - x[:, 3:],
}
for name, value in expected.items():
    np.save(os.path.join(sys.argv[2], name + ".npy"), value)
