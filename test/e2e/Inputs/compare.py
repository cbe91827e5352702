"""Compares .npy outputs with a reference: compare.py ATOL RTOL REF OUT...

Exits non-zero, printing the worst element, when any output differs from the
reference by more than ATOL + RTOL * |reference|.
"""
import sys

import numpy as np

atol, rtol, ref = float(sys.argv[1]), float(sys.argv[2]), np.load(sys.argv[3])
ok = True
for path in sys.argv[4:]:
    out = np.load(path)
    if out.shape != ref.shape:
        print(f"{path}: shape {out.shape}, expected {ref.shape}")
        ok = False
        continue
    err = np.abs(out.astype(np.float64) - ref)
    bound = atol + rtol * np.abs(ref)
    worst = np.unravel_index(np.argmax(err - bound), err.shape)
    status = "ok" if np.all(err <= bound) else "MISMATCH"
    ok &= status == "ok"
    print(f"{path}: {status}, max abs error {err.max():.3g} "
          f"(worst at {tuple(int(i) for i in worst)})")
sys.exit(0 if ok else 1)
