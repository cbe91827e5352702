"""Input, weights and float64 reference for Inputs/pending-global.mlir."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from mlp_data import save_safetensors  # noqa: E402

out = sys.argv[1]
r = np.random.default_rng(13)
x = r.standard_normal((8, 16)).astype(np.float32)
w1 = r.standard_normal((16, 8)).astype(np.float32)
w2 = r.standard_normal((16, 8)).astype(np.float32)
np.save(f"{out}/x.npy", x)
save_safetensors(f"{out}/w.safetensors", {"w1": w1, "w2": w2})
f = lambda a: a.astype(np.float64)
np.save(f"{out}/expected.npy", (-(f(x) @ f(w1) + f(x) @ f(w2))).T)
