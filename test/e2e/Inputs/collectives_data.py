"""Input and numpy reference for Inputs/collectives.mlir: OUT_DIR/x.npy and
OUT_DIR/expected.npy, emulating each collective device by device."""
import sys

import numpy as np

out = sys.argv[1]
X = np.random.default_rng(3).standard_normal((8, 8)).astype(np.float32)
np.save(f"{out}/x.npy", X)
devices = [(d, t) for d in range(2) for t in range(2)]
g = {(d, t): X[4 * d:4 * d + 4, :] for d, t in devices}               # all_gather tp, dim 1
M = np.maximum(X[0:4], X[4:8])                                       # max over dp, tp
r = {(d, t): M[:, 2 * (2 * d + t):2 * (2 * d + t) + 2] for d, t in devices}  # reduce_scatter dim 1
a = {(d, t): np.concatenate([r[d, j][2 * t:2 * t + 2] for j in range(2)], 1)
     for d, t in devices}                                            # all_to_all split 0, concat 1
p = {(d, t): a[1 - d, t] for d, t in devices}                        # permute dp 0<->1
o = {(d, t): (p[d, 0].astype(np.float64) + p[d, 1]) / 2 for d, t in devices}  # avg over tp
s = {(d, t): o[d, t][:, 2 * t:2 * t + 2] for d, t in devices}         # all_slice tp, dim 1
np.save(f"{out}/expected.npy", np.concatenate([s[k].reshape(-1) for k in devices]))
