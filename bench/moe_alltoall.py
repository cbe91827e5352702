#!/usr/bin/env python3
"""Expert parallelism's all-to-all bytes, compiled against counted by hand.

For Mixtral-8x7B's layer shapes (hidden 4096, 32 heads, 8 key/value heads,
FFN 14336, 8 experts, top-2, sequence 4096; 2 layers, `--shapes-only`)
this compiles one training step (cross-entropy plus the load-balancing
loss, AdamW, f32) for several meshes with an ep axis and several capacity
factors, reads `--part-explain`'s table, and sets the all-to-all bytes
each device moves per step against the analytic count:

    per layer, 4 all-to-alls (forward: tokens to experts and back;
    backward: the same two for the gradients), each moving
    (ep - 1) / ep of the device's buffer [E, G, C, H] x 4 bytes,
    with G = the sequences per device and C = min(S, ceil(S k / E x f))
    (S when f = 0, dropless: a token's k experts are distinct, so an
    expert gets at most S slots of a sequence).

It also reports the seconds `partition-opt` takes (a check that the
compile stays fast at this size), and exits non-zero when a count differs.

Usage: python3 bench/moe_alltoall.py --build build
"""
import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
import time

H, HEADS, KV, FFN, E, K, S, LAYERS = 4096, 32, 8, 14336, 8, 2, 4096, 2


def capacity(factor):
    if factor == 0:
        return S
    return max(1, min(S, math.ceil(S * K / E * factor)))


def analytic(ep, per_device, factor):
    buffer = E * per_device * capacity(factor) * H * 4
    return LAYERS * 4 * buffer * (ep - 1) // ep


def compiled(build, tmp, mesh, batch, factor):
    bin_dir = os.path.join(build, "bin")
    model = os.path.join(tmp, f"m-{batch}-{factor}.mlir")
    if not os.path.exists(model):
        subprocess.run([os.path.join(bin_dir, "partition-import"), "--model",
                        "mixtral", "--layers", str(LAYERS), "--hidden", str(H),
                        "--heads", str(HEADS), "--kv-heads", str(KV), "--ffn",
                        str(FFN), "--experts", str(E), "--top-k", str(K),
                        "--vocab", "32000", "--seq", str(S), "--batch",
                        str(batch), "--capacity-factor", str(factor),
                        "--shapes-only", "-o", model], check=True)
    start = time.perf_counter()
    p = subprocess.run(
        [os.path.join(bin_dir, "partition-opt"), model,
         "--part-append-loss", "--part-autodiff", "--part-optimizer",
         f"--part-spmd=mesh={mesh}", "--part-explain", "-o", os.devnull],
        capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - start
    m = re.search(r"^\s*all_to_all\s+\"ep\"\s+(\d+)\s+(\d+)$", p.stdout,
                  re.MULTILINE)
    count, moved = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    return count, moved, seconds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    args = ap.parse_args()
    rows = [("ep:2", 2, 2, 1.0), ("ep:4", 4, 4, 1.0), ("ep:8", 8, 8, 1.0),
            ("dp:2,ep:4", 4, 8, 1.0), ("ep:8", 8, 8, 1.25),
            ("ep:8", 8, 8, 0)]
    print("| mesh | capacity factor | slots per expert | all-to-alls | "
          "compiled bytes/device | analytic | compile |")
    print("|---|---|---|---|---|---|---|")
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for mesh, ep, batch, factor in rows:
            sizes = dict(a.split(":") for a in mesh.split(","))
            per_device = batch // (int(sizes.get("dp", 1)) * ep)
            count, moved, seconds = compiled(args.build, tmp, mesh, batch,
                                             factor)
            expect = analytic(ep, per_device, factor)
            bad += moved != expect or count != 4 * LAYERS
            print(f"| {mesh} | {factor if factor else 'dropless'} | "
                  f"{capacity(factor)} | {count} | {moved:,} | {expect:,} | "
                  f"{seconds:.1f} s |")
    if bad:
        sys.exit(f"{bad} rows differ from the analytic count")


if __name__ == "__main__":
    main()
