"""Checks the optimizer state a mixed-precision (f16) run left behind.

usage: check_loss_scale.py OUTDIR WEIGHTS STEP SCALE
OUTDIR holds partition-run's outputs (new.*.npy). Checks that the step count
is STEP and the loss scale SCALE exactly; with STEP = 0 (every step skipped
for a non-finite gradient) also that every f32 master copy still equals its
parameter's initial weights in the WEIGHTS safetensors file, bit for bit.
"""
import json
import os
import struct
import sys

import numpy as np


def read_safetensors(path):
    with open(path, "rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(size))
        data = f.read()
    header.pop("__metadata__", None)
    out = {}
    for name, entry in header.items():
        assert entry["dtype"] == "F32", (name, entry["dtype"])
        start, end = entry["data_offsets"]
        out[name] = np.frombuffer(data[start:end], "<f4").reshape(entry["shape"])
    return out


def main():
    outdir, weights, step, scale = sys.argv[1:5]
    status = 0
    got_step = float(np.load(os.path.join(outdir, "new.optimizer.step.npy")))
    got_scale = float(np.load(os.path.join(outdir, "new.loss_scale.npy")))
    if got_step != float(step):
        print(f"step count {got_step}, expected {step}")
        status = 1
    if got_scale != np.float32(float(scale)):
        print(f"loss scale {got_scale!r}, expected {np.float32(float(scale))!r}")
        status = 1
    masters = [n for n in os.listdir(outdir) if n.startswith("new.master.")]
    if not masters:
        print(f"{outdir}: no master copies")
        status = 1
    if float(step) == 0:
        initial = read_safetensors(weights)
        for n in sorted(masters):
            name = n[len("new.master."):-len(".npy")]
            if not np.array_equal(np.load(os.path.join(outdir, n)), initial[name]):
                print(f"{name}: master copy changed by a skipped step")
                status = 1
    print(f"step {got_step:g}, loss scale {got_scale:g}, {len(masters)} master copies")
    sys.exit(status)


if __name__ == "__main__":
    main()
