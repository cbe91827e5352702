"""Input, weight and float64 reference for Inputs/reshards-global.mlir."""
import sys

import numpy as np

sys.path.insert(0, __import__("os").path.dirname(__file__))
from mlp_data import save_safetensors  # noqa: E402

out = sys.argv[1]
r = np.random.default_rng(11)
x = r.standard_normal((8, 16)).astype(np.float32)
w = r.standard_normal((16, 8)).astype(np.float32)
np.save(f"{out}/x.npy", x)
save_safetensors(f"{out}/w.safetensors", {"w": w})


def softmax(a, axis):
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


np.save(f"{out}/expected.npy",
        softmax(softmax(x.astype(np.float64) @ w.astype(np.float64), 1), 0))
