"""numpy float64 reference of make_models.py's good.onnx.

usage: mlp_reference.py WEIGHTS.npz X.npy OUT.npy
"""
import sys

import numpy as np

w = {k: v.astype(np.float64) for k, v in np.load(sys.argv[1]).items()}
x = np.load(sys.argv[2]).astype(np.float64)
h = np.maximum(x @ w["fc1.weight"].T + w["fc1.bias"], 0)
np.save(sys.argv[3], h @ w["fc2.weight"] + w["fc2.bias"])
