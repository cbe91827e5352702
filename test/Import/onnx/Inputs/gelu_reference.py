"""float64 numpy reference of make_models.py's gelu-opset*.onnx.

usage: gelu_reference.py X.npy OUTDIR

Writes OUTDIR/y_default.npy and OUTDIR/y_none.npy (the exact GELU,
0.5 x (1 + erf(x / sqrt 2)), with math.erf) and OUTDIR/y_tanh.npy (ONNX's
approximate="tanh": 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))), in
float64 from the float32 input.
"""
import math
import os
import sys

import numpy as np

x = np.load(sys.argv[1]).astype(np.float64)
erf = np.vectorize(math.erf, otypes=[np.float64])
exact = 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))
tanh = 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
for name, value in (("y_default", exact), ("y_none", exact), ("y_tanh", tanh)):
    np.save(os.path.join(sys.argv[2], name + ".npy"), value)
