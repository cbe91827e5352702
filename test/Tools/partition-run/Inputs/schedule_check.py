"""Helpers of schedule.mlir (a plan of format 12 written by hand).

usage: schedule_check.py checksum FLATBUFFER PLAN   append the plan checksum
       schedule_check.py inputs DIR                 write x.npy and c.npy
       schedule_check.py check DIR                  compare DIR/out/sum.npy
                                                    with numpy's sum
"""
import os
import sys

import numpy as np


def inputs():
    x = np.array([[r + j + 1 for j in range(3)] for r in range(8)], np.float32)
    c = np.array([[r + 1 + 0.5 * j for j in range(3)] for r in range(4)],
                 np.float32)
    return x, c


def main():
    what = sys.argv[1]
    if what == "checksum":
        data = open(sys.argv[2], "rb").read()
        h = 0xcbf29ce484222325  # FNV-1a 64 (Plan.h, appendPlanChecksum)
        for byte in data:
            h = ((h ^ byte) * 0x100000001b3) % (1 << 64)
        open(sys.argv[3], "wb").write(data + h.to_bytes(8, "little"))
        return
    folder = sys.argv[2]
    x, c = inputs()
    if what == "inputs":
        np.save(os.path.join(folder, "x.npy"), x)
        np.save(os.path.join(folder, "c.npy"), c)
        return
    # Micro-batch m: rows 2m, 2m + 1 of x and row m of c. Small integers
    # and halves: every sum is exact in f32, so the match is bitwise.
    expected = sum(c[m] * (x[2 * m:2 * m + 2] ** 2).sum(0) for m in range(4))
    got = np.load(os.path.join(folder, "out", "sum.npy"))
    print("sum", got.ravel().tolist(), "expected", expected.tolist())
    sys.exit(0 if np.array_equal(got.ravel(), expected) else 1)


if __name__ == "__main__":
    main()
