"""Training step time with collectives overlapping compute against
synchronous collectives (--sync-collectives), on dp:2 and dp:4.

Generates a GPT with `partition-import --model gpt`, appends the loss,
differentiates it, adds AdamW with `interleave=true` (each update right
after its gradient), partitions it for each mesh and adds
`--part-grad-buckets` (so the reductions over dp run inside backward), then
trains it with `partition-run --steps N` (ranks as threads), alternating the
two modes R times and taking each mode's median of rank 0's time per step.
Prints one row per mesh: both medians and the ratio async / sync (below 1:
overlap helps). Also checks that both modes printed the same losses.

usage: python3 bench/overlap_step_time.py [--build build] [--meshes dp:2 dp:4]
           [--layers 4] [--hidden 256] [--heads 8] [--vocab 1024] [--seq 64]
           [--batch 16] [--bucket-bytes 262144] [--steps 5] [--repeats 5]
           [--processes]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--meshes", nargs="+", default=["dp:2", "dp:4"])
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--vocab", type=int, default=1024)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--bucket-bytes", type=int, default=262144)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--processes", action="store_true",
                    help="ranks as processes instead of threads")
    o = ap.parse_args()
    bin_ = os.path.join(o.build, "bin")
    with tempfile.TemporaryDirectory() as d:
        rng = np.random.default_rng(5)
        tokens = rng.integers(0, o.vocab, size=(o.batch, o.seq + 1))
        np.save(f"{d}/tokens.npy", tokens[:, :-1].astype(np.int32))
        np.save(f"{d}/labels.npy", tokens[:, 1:].astype(np.int32))
        run([f"{bin_}/partition-import", "--model", "gpt",
             "--layers", str(o.layers), "--hidden", str(o.hidden),
             "--heads", str(o.heads), "--vocab", str(o.vocab),
             "--seq", str(o.seq), "--batch", str(o.batch), "--seed", "3",
             "-o", f"{d}/gpt.mlir", "--weights", f"{d}/gpt.safetensors"])
        run([f"{bin_}/partition-opt", f"{d}/gpt.mlir",
             "--part-append-loss=kind=cross-entropy", "--part-autodiff",
             "--part-optimizer=kind=adamw lr=1e-3 interleave=true",
             "-o", f"{d}/step.mlir"])
        rows = []
        for mesh in o.meshes:
            spmd = run([f"{bin_}/partition-opt", f"{d}/step.mlir",
                        f"--part-spmd=mesh={mesh}"]).stdout
            bucketed = run([f"{bin_}/partition-opt",
                            f"--part-grad-buckets=bytes={o.bucket_bytes}"],
                           input=spmd).stdout
            buckets = bucketed.count("bucket of")
            plan = f"{d}/{mesh}.plan"
            run([f"{bin_}/partition-translate", "--part-to-plan", "-o", plan],
                input=bucketed)
            times = {"async": [], "sync": []}
            losses = {}
            for _ in range(o.repeats):
                for mode in ("async", "sync"):
                    cmd = [f"{bin_}/partition-run", plan, "--backend", "cpu",
                           "--steps", str(o.steps),
                           "--weights", f"{d}/gpt.safetensors",
                           "--input", f"tokens={d}/tokens.npy",
                           "--input", f"labels={d}/labels.npy"]
                    if mode == "sync":
                        cmd.append("--sync-collectives")
                    if o.processes:
                        cmd.append("--processes")
                    out = run(cmd).stdout
                    m = re.search(r"rank 0: setup [\d.]+ ms, ([\d.]+) ms per step",
                                  out)
                    times[mode].append(float(m.group(1)))
                    losses[mode] = re.findall(r"step \d+: loss \S+", out)
            if losses["async"] != losses["sync"]:
                sys.exit(f"{mesh}: the modes printed different losses")
            a = statistics.median(times["async"])
            s = statistics.median(times["sync"])
            rows.append((mesh, buckets, a, s, min(times["async"]),
                         min(times["sync"])))
    print(f"GPT {o.layers} layers, hidden {o.hidden}, heads {o.heads}, vocab "
          f"{o.vocab}, seq {o.seq}, batch {o.batch}; buckets of "
          f"{o.bucket_bytes} bytes; {o.steps} steps x {o.repeats} repeats, "
          f"ranks as {'processes' if o.processes else 'threads'}")
    print("| mesh | buckets | async ms/step (median) | sync ms/step (median) "
          "| ratio async/sync | best async | best sync |")
    print("|---|---|---|---|---|---|---|")
    for mesh, buckets, a, s, ba, bs in rows:
        print(f"| {mesh} | {buckets} | {a:.1f} | {s:.1f} | **{a / s:.2f}** "
              f"| {ba:.1f} | {bs:.1f} |")


if __name__ == "__main__":
    main()
