"""Inputs and float64 references for Inputs/cos-sin-global.mlir.

usage: cos_sin_data.py OUT_DIR

The rotary angles are rounded to f32 as the program's part.mul rounds them
(numpy's f32 product is the same correctly rounded one), so the references
for c, s and r are float64 functions of the angles the kernels see; the
learning rate's reference is the exact schedule in float64.
"""
import sys

import numpy as np

out = sys.argv[1]
r = np.random.default_rng(23)
t = np.array(37.0, dtype=np.float32)
# Positions of a long sequence, not in order; Llama's frequencies
# 10000^(-2i/D) for D = 16, each used for both halves as in rotate-half.
pos = np.array([0, 1, 2, 3, 7, 31, 100, 255, 511, 640, 1000, 1023, 1500,
                1777, 2000, 2047], dtype=np.float32).reshape(16, 1)
freq = np.tile(10000.0 ** (-np.arange(4) / 4), 2).astype(np.float32)
q = r.standard_normal((2, 4, 16, 8)).astype(np.float32)
h = (r.standard_normal((4, 8)) * 3).astype(np.float16)
for name, value in {"t": t, "pos": pos, "freq": freq, "q": q,
                    "h": h}.items():
    np.save(f"{out}/{name}.npy", value)

angle = (pos * freq).astype(np.float64)  # f32 product, as in the program
c, s = np.cos(angle), np.sin(angle)
q64 = q.astype(np.float64)
rotated = np.concatenate([-q64[..., 4:], q64[..., :4]], axis=-1)
np.save(f"{out}/lr_ref.npy", np.array(0.5 * (1 + np.cos(np.pi * 37.0 / 100))))
np.save(f"{out}/c_ref.npy", c)
np.save(f"{out}/s_ref.npy", s)
np.save(f"{out}/r_ref.npy", q64 * c + rotated * s)
np.save(f"{out}/ch_ref.npy", np.cos(h.astype(np.float64)))
np.save(f"{out}/sh_ref.npy", np.sin(h.astype(np.float64)))
assert np.abs(q).max() < 5  # the bound r's tolerance assumes
