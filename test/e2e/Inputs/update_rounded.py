"""Checks that a run whose gradients were reduced in a narrower type moved
each tensor as the reference run did, up to that type's rounding: after one
SGD step, w = w0 - lr g, so per tensor
    max |w_run - w_ref| <= bound * max |w_ref - w0| + 1e-7
where `bound` is the relative rounding of the reduction (bf16: each rank's
partial and the sum rounded to 8 significant bits; 2^-6 leaves room for a
sum of two partials of either sign). A gradient reduced at a wrong offset,
twice or not at all moves a tensor by the size of its update, far past it.
The loss (`loss.npy`, reduced in f32: not a gradient) must agree to 1e-6.

Usage: update_rounded.py BOUND WEIGHTS0.safetensors REF_DIR RUN_DIR
"""
import json
import os
import struct
import sys

import numpy as np


def safetensors(path):
    data = open(path, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        assert info["dtype"] == "F32", (name, info["dtype"])
        out[name] = np.frombuffer(data[8 + n + start:8 + n + end],
                                  dtype=np.float32).reshape(info["shape"])
    return out


def main():
    bound = float(sys.argv[1])
    w0 = safetensors(sys.argv[2])
    ref_dir, run_dir = sys.argv[3], sys.argv[4]
    loss_ref = np.load(os.path.join(ref_dir, "loss.npy"))
    loss_run = np.load(os.path.join(run_dir, "loss.npy"))
    if abs(float(loss_run) - float(loss_ref)) > 1e-6 * (1 + abs(float(loss_ref))):
        print(f"loss {float(loss_run)} against {float(loss_ref)}")
        return 1
    checked = 0
    for name, initial in w0.items():
        path = os.path.join(ref_dir, f"new.{name}.npy")
        if not os.path.exists(path):
            continue
        ref = np.load(path)
        run = np.load(os.path.join(run_dir, f"new.{name}.npy"))
        step = np.abs(ref - initial).max()
        off = np.abs(run - ref).max()
        if off > bound * step + 1e-7:
            print(f"{name}: off by {off:.3g}, its update is {step:.3g} "
                  f"(bound {bound:g})")
            return 1
        checked += 1
    if not checked:
        print("no updated tensor found")
        return 1
    print(f"ok, {checked} tensors within {bound:g} of their update")
    return 0


if __name__ == "__main__":
    sys.exit(main())
