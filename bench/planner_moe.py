#!/usr/bin/env python3
"""The planner with expert parallelism: Mixtral 8x7B on 64 H100s.

Mixtral 8x7B's shapes (32 layers, hidden 4096, 32 heads, 8 key/value
heads, FFN 14336, 8 experts, top-2, vocabulary 32000, sequence 4096;
`partition-import --model mixtral --shapes-only`, batch 8 so that every
ep degree divides it; the planner scales it to the global batch 256), with
a capacity factor of 1 (each expert computes its share of the tokens, as a
dropless run with balanced routing does), on the dgx-h100 preset:

- the search: its time, its best plans, and that the chosen one fits;
- Megatron-Core's published mapping for this model (its MoE README,
  "Reference Best Parallel Mapping": 64 H100s, TP1 EP8 PP4 VP8, MBS 1,
  GBS 256, bf16, dropless all-to-all; 468 TFLOP/s per GPU with MCore
  v0.9) planned with --fix, its predicted TFLOP/s per GPU against the
  published one -- with attention decomposed (the presets' default) and
  as if attention ran fused at --attention's efficiency;
- consistency: for smaller shapes (8 layers, hidden 1024, sequence 1024,
  8 experts) on 8 devices, the planner's composed step against
  part-estimate's on the plan compiled whole, for plans with ep;
- scaling: search time against layers (16, 32, 64) and devices (64, 128,
  256).

Usage: python3 bench/planner_moe.py --build build [--attention 0.5]
"""
import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from planner_published import (add_attention_option, compiled_step,  # noqa
                               preset, run, use_attention_option)

PUBLISHED = ("tp=1,pp=4,ep=8,vpp=8,mbs=1", 468)
CONSISTENCY = [
    "tp=1,pp=1,dp=1,ep=8,mbs=1,zero=0,recompute=none,sp=0",
    "tp=1,pp=1,dp=2,ep=4,mbs=1,zero=1,recompute=none,sp=0",
    "tp=2,pp=1,dp=1,ep=4,mbs=1,zero=0,recompute=none,sp=0",
    "tp=1,pp=2,dp=1,ep=4,mbs=1,schedule=1f1b,zero=0,recompute=none,sp=0",
    "tp=1,pp=1,dp=4,ep=2,mbs=1,zero=3,recompute=full,sp=0",
]


def mixtral(bin_dir, path, layers=32, hidden=4096, heads=32, kv=8, ffn=14336,
            seq=4096):
    run([os.path.join(bin_dir, "partition-import"), "--model", "mixtral",
         "--layers", str(layers), "--hidden", str(hidden), "--heads",
         str(heads), "--kv-heads", str(kv), "--ffn", str(ffn), "--experts",
         "8", "--top-k", "2", "--vocab", "32000", "--seq", str(seq),
         "--batch", "8", "--capacity-factor", "1", "--shapes-only", "-o",
         path])


def plan(bin_dir, model, cluster, devices, batch, fix=None, top=1):
    """partition-plan's plans (its --json) and the seconds it took."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        cmd = [os.path.join(bin_dir, "partition-plan"), model, "--cluster",
               cluster, "--devices", str(devices), "--global-batch",
               str(batch), "--top", str(top), "--json", out.name]
        if fix:
            cmd += ["--fix", fix]
        _, seconds = run(cmd)
        return json.load(open(out.name))["plans"], seconds


def label(p):
    text = (f"tp={p['tp']} pp={p['pp']} dp={p['dp']} ep={p['ep']} "
            f"mbs={p['micro_batch_size']} {p['schedule']}")
    if p["virtual_stages"] > 1:
        text += f" vpp={p['virtual_stages']}"
    return text + f" zero={p['zero']} recompute={p['recompute']}"


def gib(b):
    return f"{b / 2 ** 30:.1f} GiB"


def search_and_published(bin_dir, tmp):
    model = os.path.join(tmp, "mixtral-8x7b.mlir")
    mixtral(bin_dir, model)
    cluster = preset(bin_dir, "dgx-h100")
    plans, seconds = plan(bin_dir, model, cluster, 64, 256, top=5)
    print(f"search, 64 dgx-h100 devices, global batch 256: {seconds:.2f} s")
    print("| # | plan | step | TFLOP/s/GPU | memory |")
    print("|---|---|---|---|---|")
    for i, p in enumerate(plans):
        print(f"| {i + 1} | {label(p)} | {p['step_seconds']:.3f} s | "
              f"{p['tflops_per_device']:.0f} | "
              f"{gib(p['memory_bytes']['total'])} |")
    fix, published = PUBLISHED
    p, _ = plan(bin_dir, model, cluster, 64, 256, fix=fix)
    p = p[0]
    off = 100 * (p["tflops_per_device"] / published - 1)
    print(f"\nMegatron-Core's mapping ({fix}): predicted "
          f"{p['tflops_per_device']:.0f} TFLOP/s/GPU ({label(p)}, "
          f"{gib(p['memory_bytes']['total'])}) against {published} "
          f"published: {off:+.1f}%")


def consistency(bin_dir, tmp):
    model = os.path.join(tmp, "mixtral-small.mlir")
    mixtral(bin_dir, model, layers=8, hidden=1024, heads=16, kv=4,
            ffn=3584, seq=1024)
    cluster = preset(bin_dir, "dgx-h100")
    print("\n| plan (8 dgx-h100 devices) | planner (composed) | "
          "part-estimate (compiled) | ratio |")
    print("|---|---|---|---|")
    for fix in CONSISTENCY:
        p, _ = plan(bin_dir, model, cluster, 8, 8, fix=fix)
        compiled = compiled_step(bin_dir, model, p[0], cluster)
        print(f"| {fix} | {1e3 * p[0]['step_seconds']:.1f} ms | "
              f"{1e3 * compiled:.1f} ms | "
              f"{p[0]['step_seconds'] / compiled:.2f} |", flush=True)


def scaling(bin_dir, tmp):
    cluster = preset(bin_dir, "dgx-h100")
    print("\n| layers | devices | global batch | search | plans |")
    print("|---|---|---|---|---|")
    for layers, devices in [(16, 64), (32, 64), (64, 64), (32, 128),
                            (32, 256)]:
        model = os.path.join(tmp, f"mixtral-{layers}.mlir")
        if not os.path.exists(model):
            mixtral(bin_dir, model, layers=layers)
        batch = 4 * devices
        started = time.perf_counter()
        plans, _ = plan(bin_dir, model, cluster, devices, batch)
        seconds = time.perf_counter() - started
        print(f"| {layers} | {devices} | {batch} | {seconds:.2f} s | "
              f"{label(plans[0])} |", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    add_attention_option(ap)
    args = ap.parse_args()
    bin_dir = os.path.join(args.build, "bin")
    use_attention_option(args)
    with tempfile.TemporaryDirectory() as tmp:
        search_and_published(bin_dir, tmp)
        if args.attention is None:
            consistency(bin_dir, tmp)
            scaling(bin_dir, tmp)


if __name__ == "__main__":
    main()
