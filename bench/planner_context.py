#!/usr/bin/env python3
"""The planner with context parallelism: Llama 3 405B's long-context phase.

Llama 3 405B's shapes (126 layers, hidden 16384, 128 heads, 8 key/value
heads, FFN 53248, vocabulary 128256; `partition-import --model llama
--shapes-only`, batch 1: the planner scales it to the global batch) on
16,384 H100s of the dgx-h100 preset, 16M tokens a step:

- the plan Meta ran for its 131,072-token phase (Dubey et al. 2024, Table
  4: TP 8, CP 16, PP 16, DP 8, 128 sequences a step, 380 TFLOP/s per GPU,
  BF16 MFU 38%), `--fix tp=8,pp=16,cp=16`: the predicted step, TFLOP/s per
  GPU, MFU and memory of the best plan with it, with attention decomposed
  (the presets' default) and as if attention ran fused at --attention's
  efficiency (0.5 unless given);
- the search, unconstrained, at sequences 8192, 32768 and 131072 (2048,
  512 and 128 sequences): its time (the search's own, best of 3), the
  probes compiled, the plans considered and fitting, the cp degrees among
  the plans that fit, and the best plan.

Usage: python3 bench/planner_context.py --build build [--attention 0.5]
"""
import argparse
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import planner_published  # noqa: E402
from planner_published import add_attention_option, preset, run  # noqa: E402

LAYERS, HIDDEN, HEADS, KV_HEADS, FFN, VOCAB = 126, 16384, 128, 8, 53248, 128256
GPUS, TOKENS = 16384, 16 * 2 ** 20
# Dubey et al. 2024, Table 4, the 131,072-token row.
PUBLISHED = {"fix": "tp=8,pp=16,cp=16", "tflops": 380, "mfu": 0.38}


def shapes(bin_dir, path, seq):
    run([os.path.join(bin_dir, "partition-import"), "--model", "llama",
         "--layers", str(LAYERS), "--hidden", str(HIDDEN), "--heads",
         str(HEADS), "--kv-heads", str(KV_HEADS), "--ffn", str(FFN),
         "--vocab", str(VOCAB), "--seq", str(seq), "--batch", "1",
         "--shapes-only", "-o", path])


def plan(bin_dir, model, cluster, batch, fix=None, top=1):
    """partition-plan's result: (its stdout, its JSON)."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        cmd = [os.path.join(bin_dir, "partition-plan"), model, "--cluster",
               cluster, "--devices", str(GPUS), "--global-batch", str(batch),
               "--top", str(top), "--json", out.name]
        if fix:
            cmd += ["--fix", fix]
        r, _ = run(cmd)
        return r.stdout, json.load(open(out.name))


def describe(p):
    return (f"tp{p['tp']} pp{p['pp']} dp{p['dp']} cp{p['cp']}"
            f" {p['schedule']}"
            f"{' vpp' + str(p['virtual_stages']) if p['virtual_stages'] > 1 else ''}"
            f" mbs{p['micro_batch_size']} zero{p['zero']}"
            f"{' sync=step' if p.get('grad_sync') == 'step' else ''}"
            f" rc={p['recompute']} sp{int(p['sequence_parallel'])}"
            f"{' tp-overlap=' + str(p['tp_overlap']) if p.get('tp_overlap') else ''}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    add_attention_option(ap)
    args = ap.parse_args()
    bin_dir = os.path.join(args.build, "bin")
    fused = args.attention if args.attention is not None else 0.5
    with tempfile.TemporaryDirectory() as tmp:
        models = {}
        for seq in (8192, 32768, 131072):
            models[seq] = os.path.join(tmp, f"llama405b-{seq}.mlir")
            shapes(bin_dir, models[seq], seq)

        print(f"Llama 3 405B, sequence 131072, 128 sequences a step, "
              f"{GPUS} H100s (dgx-h100), --fix {PUBLISHED['fix']}: "
              f"published {PUBLISHED['tflops']} TFLOP/s per GPU, "
              f"{PUBLISHED['mfu']:.0%} MFU\n")
        print("| attention | plan | step | TFLOP/s/GPU | MFU | error | "
              "memory |")
        print("|---|---|---|---|---|---|---|")
        for name, e in (("decomposed (the preset)", None),
                        (f"fused at {fused} of peak", fused)):
            planner_published.ATTENTION["efficiency"] = e
            _, j = plan(bin_dir, models[131072], preset(bin_dir, "dgx-h100"),
                        128, PUBLISHED["fix"])
            p = j["plans"][0]
            print(f"| {name} | {describe(p)} | {p['step_seconds']:.1f} s | "
                  f"{p['tflops_per_device']:.0f} | {p['mfu']:.1%} | "
                  f"{100 * (p['mfu'] / PUBLISHED['mfu'] - 1):+.1f}% | "
                  f"{p['memory_bytes']['total'] / 2 ** 30:.1f} GiB |",
                  flush=True)
        planner_published.ATTENTION["efficiency"] = None

        print(f"\nThe search, unconstrained, {GPUS} H100s, 16M tokens a step "
              f"(best of 3 of the search's own time)\n")
        print("| sequence | sequences | search | probes | plans considered "
              "| fit | cp of the plans that fit | best plan |")
        print("|---|---|---|---|---|---|---|---|")
        for seq, model in models.items():
            batch = TOKENS // seq
            best = None
            for _ in range(3):
                out, j = plan(bin_dir, model, "dgx-h100", batch, top=GPUS)
                m = re.search(r"searched (\d+) plans \((\d+) probes\) in "
                              r"([0-9.]+) s; (\d+) fit", out)
                seconds = float(m.group(3))
                best = seconds if best is None else min(best, seconds)
            cps = sorted({p["cp"] for p in j["plans"]})
            first = j["plans"][0]
            print(f"| {seq} | {batch} | {best:.2f} s | {m.group(2)} | "
                  f"{m.group(1)} | {m.group(4)} | "
                  f"{', '.join(map(str, cps))} | {describe(first)}, "
                  f"{first['step_seconds']:.1f} s, {first['mfu']:.1%} MFU |",
                  flush=True)


if __name__ == "__main__":
    main()
