"""Inputs and float64 references for Inputs/erf-select-global.mlir.

usage: erf_select_data.py OUT_DIR
"""
import math
import sys

import numpy as np

out = sys.argv[1]
r = np.random.default_rng(17)
x = (r.standard_normal((4, 8)) * 1.5).astype(np.float32)
c = np.array([1, 0, -3, 0, 2, 0, 0, 1], dtype=np.int32)  # nonzero: take x's side
y = (r.standard_normal((4, 1)) * 40).astype(np.float32)
h = (r.standard_normal((4, 8)) * 1.5).astype(np.float16)
for name, value in {"x": x, "c": c, "y": y, "h": h}.items():
    np.save(f"{out}/{name}.npy", value)

erf = np.vectorize(math.erf)
e = erf(x.astype(np.float64))
s0 = np.where(c != 0, e, y.astype(np.float64))
s = np.where(np.array([1, 0]).reshape(2, 1, 1) != 0, s0, -1.0e9)
np.save(f"{out}/e_ref.npy", e)
np.save(f"{out}/s_ref.npy", s)
np.save(f"{out}/eh_ref.npy", erf(h.astype(np.float64)))
row = np.arange(10, 90, 10, dtype=np.int64)
np.save(f"{out}/si_ref.npy",
        np.where(c != 0, np.trunc(y).astype(np.int64), row).astype(np.float64))
