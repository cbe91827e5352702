#!/usr/bin/env python3
"""The planner against published Megatron runs, and its search time.

For each row of Narayanan et al., "Efficient Large-Scale Language Model
Training on GPU Clusters Using Megatron-LM" (SC21), Table 1 (GPT, sequence
2048, vocabulary 51200, mixed precision, A100-80GB DGX nodes), this:
- builds the model's graph (`partition-import --model gpt --shapes-only`,
  batch 1: the planner scales it to the global batch);
- runs `partition-plan --cluster dgx-a100 --fix` with the published tp, pp
  and data parallelism and the rest of SC21's program (full recomputation,
  1F1B, no ZeRO, no sequence parallelism, and -- Megatron's DDP of 2021 --
  the fp16 gradients all-reduced after backward: `dp-overlap=0` and
  `--grad-reduce-dtype bf16`, partition's 16-bit type; the micro-batch
  size, which the table does not give, searched) and compares the
  predicted TFLOP/s per GPU (the paper's FLOP count, which includes
  recomputation's extra forward) with the published one;
- runs the unconstrained search and checks that its best plan's predicted
  throughput is at least the published configuration's and that it fits;
- times the search (best of 3 for the largest rows).

With --scaling it instead times the search for GPT-3 175B's widths at 24,
48, 96 and 192 layers on 1024 devices (batch 1536) and 1T on 3072: search
time against layers, with the size of the space searched.

With --consistency it sets the planner's composed prediction (--fix, every
choice fixed) against part-estimate on the plan compiled whole, for eight
plans of GPT-2 small's shapes on 8 dgx-a100 devices: how far composing a
step from a three-layer probe strays from costing the whole program.

With --table2 it sets SC21 Table 2 (175B and 530B, ZeRO-3 without model
parallelism against PTD-P, at equal global batch) the same way, every
choice fixed.

With --others: Korthikanti et al. (2022) Table 5 (full recomputation
against sequence parallelism with selective recomputation, A100), Llama
3 405B's pretraining MFU on H100s (Dubey et al. 2024, Table 4) and
torchtitan's Llama 3.1 8B with FSDP on H100s (its docs/performance.md).

Usage: python3 bench/planner_published.py --build build [--rows 1.7B,1T]
       python3 bench/planner_published.py --build build --table2
       python3 bench/planner_published.py --build build --scaling
       python3 bench/planner_published.py --build build --consistency
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

# params, heads, hidden, layers, tp, pp, gpus, batch, published TFLOP/s/GPU
SC21 = [
    ("1.7B", 24, 2304, 24, 1, 1, 32, 512, 137),
    ("3.6B", 32, 3072, 30, 2, 1, 64, 512, 138),
    ("7.5B", 32, 4096, 36, 4, 1, 128, 512, 142),
    ("18.4B", 48, 6144, 40, 8, 1, 256, 1024, 135),
    ("39.1B", 64, 8192, 48, 8, 2, 512, 1536, 138),
    ("76.1B", 80, 10240, 60, 8, 4, 1024, 1792, 140),
    ("145.6B", 96, 12288, 80, 8, 8, 1536, 2304, 148),
    ("310.1B", 128, 16384, 96, 8, 16, 1920, 2160, 155),
    ("529.6B", 128, 20480, 105, 8, 35, 2520, 2520, 163),
    ("1T", 160, 25600, 128, 8, 64, 3072, 3072, 163),
]
SEQ, VOCAB = 2048, 51200
# SC21 Table 2, PTD-P against ZeRO-3 (DeepSpeed, no model parallelism) at
# the same global batch: params, heads, hidden, layers, tp, pp, GPUs, batch,
# micro-batch size, ZeRO stage, published TFLOP/s per GPU. The ZeRO-3 runs
# are data parallel over every GPU with one micro-batch per step (the batch
# is GPUs x micro-batch size); the 640-GPU run's batch is 2560.
SC21_ZERO3 = [
    ("174.6B", 96, 12288, 96, 1, 1, 384, 1536, 4, 3, 144),
    ("174.6B", 96, 12288, 96, 1, 1, 768, 1536, 2, 3, 88),
    ("174.6B", 96, 12288, 96, 1, 1, 1536, 1536, 1, 3, 44),
    ("529.6B", 128, 20480, 105, 1, 1, 640, 2560, 4, 3, 138),
    ("529.6B", 128, 20480, 105, 1, 1, 1120, 2240, 2, 3, 98),
    ("529.6B", 128, 20480, 105, 1, 1, 2240, 2240, 1, 3, 48),
    ("174.6B", 96, 12288, 96, 8, 12, 384, 1536, 1, 0, 153),
    ("174.6B", 96, 12288, 96, 8, 12, 768, 1536, 1, 0, 149),
    ("174.6B", 96, 12288, 96, 8, 12, 1536, 1536, 1, 0, 141),
    ("529.6B", 128, 20480, 105, 8, 35, 560, 2240, 1, 0, 171),
    ("529.6B", 128, 20480, 105, 8, 35, 1120, 2240, 1, 0, 167),
    ("529.6B", 128, 20480, 105, 8, 35, 2240, 2240, 1, 0, 159),
]
# SC21's Megatron (fp16 mixed precision, DDP-impl local) all-reduced its
# fp16 gradient buffer once after backward (no --overlap-grad-reduce, which
# came later; --accumulate-allreduce-grads-in-fp32 off for fp16): the same
# program is fixed with dp-overlap=0 and 16-bit reductions.
MEGATRON_2021 = ["--grad-reduce-dtype", "bf16"]

# Checks, not used to calibrate: Smith et al., "Using DeepSpeed and
# Megatron to Train Megatron-Turing NLG 530B" (2022), 530B on 280 DGX A100
# nodes: 113-126 TFLOP/s per GPU; the 2240-GPU run is the 126.
CHECKS = [
    ("MT-NLG 530B", 128, 20480, 105, 8, 35, 2240, 1920, 126),
]


def run(cmd):
    started = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr[-2000:]}")
    return r, elapsed


def gpt_shapes(bin_dir, path, layers, hidden, heads):
    """Writes the shapes of a GPT of SC21's sequence and vocabulary (batch
    1: the planner scales it to the global batch) to `path`."""
    run([os.path.join(bin_dir, "partition-import"), "--model", "gpt",
         "--layers", str(layers), "--hidden", str(hidden),
         "--heads", str(heads), "--vocab", str(VOCAB), "--seq", str(SEQ),
         "--batch", "1", "--shapes-only", "-o", path])


def llama_shapes(bin_dir, path, layers, hidden, heads, kv_heads, ffn):
    """Writes the shapes of a Llama 3 of vocabulary 128256 and sequence
    8192 (batch 1) to `path`."""
    run([os.path.join(bin_dir, "partition-import"), "--model", "llama",
         "--layers", str(layers), "--hidden", str(hidden),
         "--heads", str(heads), "--kv-heads", str(kv_heads),
         "--ffn", str(ffn), "--vocab", "128256", "--seq", "8192",
         "--batch", "1", "--shapes-only", "-o", path])


def needed_gib(why):
    """The least memory a plan needs, from partition-plan's refusal."""
    need = re.search(r"needs is ([0-9.]+) GiB", why)
    return f"{float(need.group(1)):.1f} GiB" if need else "?"


def paper_flops(batch, layers, hidden):
    # SC21, eq. 3: with recomputation.
    return (96 * batch * SEQ * layers * hidden ** 2 *
            (1 + SEQ / (6 * hidden) + VOCAB / (16 * layers * hidden)))


# Korthikanti et al., "Reducing Activation Recomputation in Large
# Transformer Models" (2022), Table 5 (A100-80GB, sequence 2048, vocabulary
# 51200, tp 8, micro-batch 1): iteration time with full recomputation
# against sequence parallelism with selective recomputation (the attention
# core only). name, heads, hidden, layers, tp, pp, GPUs, batch, seconds
# (full), seconds (selective + sp).
KORTHIKANTI = [
    ("22B", 64, 6144, 48, 8, 1, 8, 4, 1.42, 1.10),
    ("175B", 96, 12288, 96, 8, 8, 64, 64, 18.13, 13.75),
    ("530B", 128, 20480, 105, 8, 35, 280, 280, 49.05, 37.83),
    ("1T", 160, 25600, 128, 8, 64, 512, 512, 94.42, 71.49),
]
# Dubey et al., "The Llama 3 Herd of Models" (2024), Table 4: Llama 3 405B
# on H100-80GB (bf16, sequence 8192, 16M tokens per batch: 2048 sequences),
# tp 8, pp 16, no context parallelism. GPUs, dp, published BF16 MFU.
LLAMA3 = [(8192, 64, 0.43), (16384, 128, 0.41)]
# torchtitan's docs/performance.md (2024-12): Llama 3.1 8B (sequence 8192)
# with FSDP (ZeRO-3), local batch 2, selective activation checkpointing,
# bf16 parameters and f32 reductions, eager (the rows without torch.compile
# or Float8) on Grand Teton H100s: HBM2e, 96 GB at 2.4 TB/s, 500 W (a peak
# between the SXM's and the NVL's, unknown: the SXM preset's is used, as
# torchtitan's MFU does). GPUs, published tokens/s per GPU, GiB.
TORCHTITAN = [(8, 5762, 82.4), (128, 5605, 67.0)]


# --attention E: the presets with a fused attention kernel of efficiency E
# (cluster field efficiency.attention), written once by --print-cluster.
ATTENTION = {"efficiency": None, "files": {}}


def add_attention_option(ap):
    """--attention: plan as if attention ran fused at that efficiency
    (read back by use_attention_option)."""
    ap.add_argument("--attention", type=float, default=None,
                    help="plan as if attention ran on a fused kernel of this "
                         "efficiency (cluster field efficiency.attention)")


def use_attention_option(args):
    ATTENTION["efficiency"] = args.attention


def preset(bin_dir, name):
    """The preset `name`, or a file of it with --attention's efficiency."""
    e = ATTENTION["efficiency"]
    if e is None:
        return name
    if name not in ATTENTION["files"]:
        r, _ = run([os.path.join(bin_dir, "partition-plan"), "--cluster", name,
                    "--print-cluster"])
        c = json.loads(r.stdout)
        c["efficiency"]["attention"] = e
        path = os.path.join(tempfile.mkdtemp(), name + ".json")
        with open(path, "w") as f:
            json.dump(c, f)
        ATTENTION["files"][name] = path
    return ATTENTION["files"][name]


def step_of(bin_dir, model, cluster, gpus, batch, fix, extra=()):
    """The step seconds and the plan partition-plan gives with `fix`, or
    None and why not."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        r = subprocess.run(
            [os.path.join(bin_dir, "partition-plan"), model, "--cluster",
             cluster, "--devices", str(gpus), "--global-batch", str(batch),
             "--fix", fix, "--top", "1", "--json", out.name, *extra],
            capture_output=True, text=True)
        if r.returncode != 0:
            return None, r.stderr.strip().split("; the least memory")[-1]
        return json.load(open(out.name))["plans"][0], ""


def others(bin_dir):
    """Korthikanti et al. Table 5 (A100) and Llama 3 405B (H100)."""
    print("Korthikanti et al. (2022), Table 5, dgx-a100: step seconds, "
          "published against predicted\n")
    print("| model | GPUs | full recomputation | predicted | error | "
          "selective + sp | predicted (none + sp) | error | predicted "
          "(selective + sp) |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for (name, heads, hidden, layers, tp, pp, gpus, batch, full,
             selective) in KORTHIKANTI:
            model = os.path.join(tmp, f"{name}.mlir")
            gpt_shapes(bin_dir, model, layers, hidden, heads)
            fix = f"tp={tp},pp={pp},mbs=1,zero=0"
            if pp > 1:
                fix += ",schedule=1f1b"
            cells = []
            for rc, sp, published in (("full", 0, full),
                                      ("none", 1, selective),
                                      ("selective", 1, selective)):
                plan, why = step_of(bin_dir, model, preset(bin_dir, "dgx-a100"), gpus, batch,
                                    fix + f",recompute={rc},sp={sp}")
                if plan is None:
                    cells.append(f"does not fit: {needed_gib(why)}")
                    if rc != "selective":
                        cells.append("")
                    continue
                t = plan["step_seconds"]
                cells.append(f"{t:.2f} s")
                if rc != "selective":
                    cells.append(f"{100 * (published / t - 1):+.1f}%")
            print(f"| {name} | {gpus} | {full} s | {cells[0]} | {cells[1]} | "
                  f"{selective} s | {' | '.join(cells[2:])} |", flush=True)

        print("\nLlama 3 405B (Dubey et al. 2024, Table 4), dgx-h100, "
              "--fix tp=8,pp=16,mbs=1: the search's best plan's MFU against "
              "Meta's\n")
        print("| GPUs | dp | published MFU | predicted MFU | error | plan |")
        print("|---|---|---|---|---|---|")
        model = os.path.join(tmp, "llama405b.mlir")
        llama_shapes(bin_dir, model, 126, 16384, 128, 8, 53248)
        for gpus, dp, mfu in LLAMA3:
            plan, why = step_of(bin_dir, model, preset(bin_dir, "dgx-h100"), gpus, 2048,
                                f"tp=8,pp=16,dp={dp},mbs=1")
            if plan is None:
                print(f"| {gpus} | {dp} | {mfu:.0%} | does not fit{why} | | |")
                continue
            print(f"| {gpus} | {dp} | {mfu:.0%} | {plan['mfu']:.1%} | "
                  f"{100 * (plan['mfu'] / mfu - 1):+.1f}% | "
                  f"{plan['schedule']}"
                  f"{' vpp=' + str(plan['virtual_stages']) if plan['virtual_stages'] > 1 else ''}"
                  f" zero{plan['zero']}"
                  f"{' sync=step' if plan.get('grad_sync') == 'step' else ''}"
                  f" rc={plan['recompute']} sp{int(plan['sequence_parallel'])}"
                  f"{' tp-overlap=' + str(plan['tp_overlap']) if plan.get('tp_overlap') else ''}"
                  f", {plan['step_seconds']:.1f} s, "
                  f"{plan['memory_bytes']['total'] / 2 ** 30:.1f} GiB |",
                  flush=True)
        torchtitan(bin_dir, tmp)


def grand_teton(bin_dir, path):
    """The dgx-h100 preset with torchtitan's H100 part (HBM2e, 96 GB: as
    the 80 GB part, less what the driver keeps; 2.4 TB/s) and eager
    PyTorch's unfused elementwise ops."""
    r, _ = run([os.path.join(bin_dir, "partition-plan"), "--cluster",
                preset(bin_dir, "dgx-h100"), "--print-cluster"])
    c = json.loads(r.stdout)
    c["name"] = "grand-teton-h100"
    c["device"]["name"] = "H100-SXM5-96GB-HBM2e-500W"
    c["device"]["memory_bytes"] *= 96 / 80
    c["device"]["memory_bandwidth"] = 2.4e12
    # The eager rows (no torch.compile): PyTorch runs op by op, each
    # elementwise result through memory.
    c["efficiency"]["fusion"] = False
    with open(path, "w") as f:
        json.dump(c, f)


def torchtitan(bin_dir, tmp):
    print("\ntorchtitan (docs/performance.md, 2024-12), Llama 3.1 8B, FSDP, "
          "local batch 2, selective checkpointing, on H100 HBM2e 96 GB: "
          "tokens/s per GPU and memory, published against predicted\n")
    print("| GPUs | published TPS/GPU | predicted | error | published memory "
          "| predicted memory |")
    print("|---|---|---|---|---|---|")
    model = os.path.join(tmp, "llama8b.mlir")
    llama_shapes(bin_dir, model, 32, 4096, 32, 8, 14336)
    cluster = os.path.join(tmp, "grand-teton.json")
    grand_teton(bin_dir, cluster)
    for gpus, tps, gib in TORCHTITAN:
        plan, why = step_of(bin_dir, model, cluster, gpus, 2 * gpus,
                            f"tp=1,pp=1,dp={gpus},mbs=2,zero=3,"
                            f"recompute=selective,sp=0")
        if plan is None:
            print(f"| {gpus} | {tps} | does not fit | | {gib} GiB | "
                  f"{needed_gib(why)} |")
            continue
        predicted = 2 * 8192 / plan["step_seconds"]
        print(f"| {gpus} | {tps} | {predicted:.0f} | "
              f"{100 * (predicted / tps - 1):+.1f}% | {gib} GiB | "
              f"{plan['memory_bytes']['total'] / 2 ** 30:.1f} GiB |",
              flush=True)


def table2(bin_dir, cluster, reduce_dtype):
    """SC21 Table 2: each published configuration fixed whole (tp, pp, dp,
    micro-batch size, ZeRO stage, full recomputation), predicted TFLOP/s
    per GPU at the paper's FLOP count against the published."""
    print(f"Gradients reduced in {reduce_dtype} (--grad-reduce-dtype):\n")
    print("| model | scheme | tp | pp | dp | mbs | batch | published TFLOP/s "
          "| predicted | error | exposed communication | memory |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        for (name, heads, hidden, layers, tp, pp, gpus, batch, mbs, zero,
             published) in SC21_ZERO3:
            model = os.path.join(tmp, f"gpt-{name}.mlir")
            if not os.path.exists(model):
                gpt_shapes(bin_dir, model, layers, hidden, heads)
            dp = gpus // (tp * pp)
            fix = (f"tp={tp},pp={pp},dp={dp},mbs={mbs},recompute=full,sp=0,"
                   f"zero={zero}")
            if pp > 1:
                fix += ",schedule=1f1b"
            if zero == 0:  # Megatron's gradients all-reduced after backward
                fix += ",dp-overlap=0"
            out = os.path.join(tmp, "fixed.json")
            # DeepSpeed reduced the ZeRO-3 runs' fp16 gradients in fp16;
            # Megatron (PTD-P) reduces in fp32.
            r = subprocess.run(
                [os.path.join(bin_dir, "partition-plan"), model, "--cluster",
                 cluster, "--devices", str(gpus), "--global-batch",
                 str(batch), "--fix", fix, "--top", "1", "--json", out,
                 "--grad-reduce-dtype", reduce_dtype],
                capture_output=True, text=True)
            scheme = "ZeRO-3" if zero == 3 else "PTD-P"
            if r.returncode != 0:
                print(f"| {name} | {scheme} | {tp} | {pp} | {dp} | {mbs} | "
                      f"{batch} | {published} | does not fit: "
                      f"{r.stderr.strip()[-300:]} | | | |", flush=True)
                continue
            plan = json.load(open(out))["plans"][0]
            predicted = (paper_flops(batch, layers, hidden) / gpus /
                         plan["step_seconds"] / 1e12)
            error = predicted / published - 1
            errors.append(error)
            print(f"| {name} | {scheme} | {tp} | {pp} | {dp} | {mbs} | "
                  f"{batch} | {published} | {predicted:.1f} | "
                  f"{100 * error:+.1f}% | "
                  f"{plan.get('exposed_communication_seconds', 0):.2f} s | "
                  f"{plan['memory_bytes']['total'] / 2 ** 30:.1f} GiB |",
                  flush=True)
    if errors:
        print(f"\nSC21 Table 2: worst error "
              f"{100 * max(errors, key=abs):+.1f}%, mean absolute "
              f"{100 * sum(map(abs, errors)) / len(errors):.1f}%")


def scaling(bin_dir):
    print("| model | layers | devices | search time (best of 3) | plans "
          "considered | fit | probes |")
    print("|---|---|---|---|---|---|---|")
    cases = [("175B widths", 12288, 96, layers, 1024, 1536)
             for layers in (24, 48, 96, 192)]
    cases.append(("1T", 25600, 160, 128, 3072, 3072))
    with tempfile.TemporaryDirectory() as tmp:
        for name, hidden, heads, layers, devices, batch in cases:
            model = os.path.join(tmp, "m.mlir")
            gpt_shapes(bin_dir, model, layers, hidden, heads)
            out = os.path.join(tmp, "p.json")
            best = None
            for _ in range(3):
                _, elapsed = run([os.path.join(bin_dir, "partition-plan"),
                                  model, "--cluster", "dgx-a100", "--devices",
                                  str(devices), "--global-batch", str(batch),
                                  "--json", out])
                best = elapsed if best is None else min(best, elapsed)
            d = json.load(open(out))
            fit = d["considered"] - d["pruned"].get("memory", 0)
            print(f"| {name} | {layers} | {devices} | {best:.2f} s | "
                  f"{d['considered']} | {fit} | {d['probes']} |", flush=True)


CONSISTENCY = [
    "tp=1,pp=1,dp=8,mbs=1,zero=0,recompute=none,sp=0",
    "tp=2,pp=2,dp=2,mbs=1,schedule=1f1b,zero=0,recompute=none,sp=0",
    "tp=1,pp=4,dp=2,mbs=1,schedule=1f1b,zero=0,recompute=full,sp=0",
    "tp=2,pp=1,dp=4,mbs=2,zero=1,recompute=none,sp=1",
    "tp=1,pp=2,dp=4,mbs=1,schedule=gpipe,zero=1,recompute=none,sp=0",
    "tp=4,pp=2,dp=1,mbs=2,schedule=interleaved-1f1b,vpp=2,zero=0,"
    "recompute=none,sp=1",
    "tp=2,pp=4,dp=1,mbs=1,schedule=zero-bubble,zero=0,recompute=none,sp=0",
    "tp=1,pp=1,dp=8,mbs=1,zero=3,recompute=full,sp=0",
    # 14 chunks for 12 layers: the embedding and the head a chunk each.
    "tp=2,pp=2,dp=2,mbs=1,schedule=interleaved-1f1b,vpp=7,zero=0,"
    "recompute=none,sp=0",
    # A V: the head on the first stage, beside the embedding.
    "tp=1,pp=4,dp=2,mbs=1,schedule=v-half,zero=0,recompute=none,sp=0",
]


def compiled_step(bin_dir, model, plan, cluster):
    """part-estimate's step seconds for `model` compiled whole as `plan`
    (a plan of partition-plan's --json) says: the passes
    part-auto-partition would run."""
    passes = ["--part-append-loss", "--part-mixed-precision",
              "--part-autodiff"]
    if plan["recompute"] != "none":
        passes.append(f"--part-recompute=mode={plan['recompute']}")
    passes += ["--part-optimizer", "--part-spmd=" + plan["spmd_options"]]
    # And those after it, as the plan says ("a{x=1},b").
    for item in re.findall(r"[\w-]+(?:\{[^}]*\})?", plan["after_spmd"]):
        name, _, opts = item.partition("{")
        passes.append(f"--{name}" + (f"={opts[:-1]}" if opts else ""))
    r, _ = run([os.path.join(bin_dir, "partition-opt"), model] + passes +
               ["--part-estimate=cluster=" + cluster, "-o", os.devnull])
    m = re.search(r"^  step ([0-9.e+-]+) (s|ms|us)", r.stdout, re.M)
    return float(m.group(1)) * {"s": 1, "ms": 1e-3, "us": 1e-6}[m.group(2)]


def consistency(bin_dir):
    print("| plan | planner (composed) | part-estimate (compiled) | ratio |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "gpt2.mlir")
        run([os.path.join(bin_dir, "partition-import"), "--model", "gpt",
             "--layers", "12", "--hidden", "768", "--heads", "12",
             "--vocab", "50304", "--seq", "1024", "--batch", "8",
             "--shapes-only", "-o", model])
        for fix in CONSISTENCY:
            out = os.path.join(tmp, "p.json")
            run([os.path.join(bin_dir, "partition-plan"), model, "--cluster",
                 preset(bin_dir, "dgx-a100"), "--devices", "8", "--fix", fix,
                 "--json", out])
            p = json.load(open(out))["plans"][0]
            compiled = compiled_step(bin_dir, model, p,
                                     preset(bin_dir, "dgx-a100"))
            print(f"| {fix} | {1e3 * p['step_seconds']:.1f} ms | "
                  f"{1e3 * compiled:.1f} ms | "
                  f"{p['step_seconds'] / compiled:.2f} |", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--rows", default="")
    ap.add_argument("--cluster", default="dgx-a100",
                    help="preset or cluster file (default dgx-a100)")
    ap.add_argument("--scaling", action="store_true")
    ap.add_argument("--consistency", action="store_true")
    ap.add_argument("--others", action="store_true",
                    help="Korthikanti et al. Table 5 and Llama 3 405B (H100)")
    ap.add_argument("--table2", action="store_true",
                    help="SC21 Table 2: ZeRO-3 and PTD-P at equal batch")
    add_attention_option(ap)
    args = ap.parse_args()
    bin_dir = os.path.join(args.build, "bin")
    use_attention_option(args)
    args.cluster = preset(bin_dir, args.cluster)
    if args.consistency:
        consistency(bin_dir)
        return
    if args.scaling:
        scaling(bin_dir)
        return
    if args.others:
        others(bin_dir)
        return
    if args.table2:
        table2(bin_dir, args.cluster, "f32")
        print()
        table2(bin_dir, args.cluster, "bf16")
        return
    wanted = set(filter(None, args.rows.split(",")))
    print("| model | tp | pp | dp | GPUs | batch | published TFLOP/s | "
          "predicted (--fix) | error | searched best: step time against "
          "--fix's | its plan | "
          "search time | plans searched |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        for (name, heads, hidden, layers, tp, pp, gpus, batch,
             published) in SC21 + CHECKS:
            if wanted and name not in wanted:
                continue
            model = os.path.join(tmp, f"gpt-{name}.mlir")
            gpt_shapes(bin_dir, model, layers, hidden, heads)
            dp = gpus // (tp * pp)
            base = [os.path.join(bin_dir, "partition-plan"), model,
                    "--cluster", args.cluster, "--devices", str(gpus),
                    "--global-batch", str(batch)]
            fixed_json = os.path.join(tmp, "fixed.json")
            fix = f"tp={tp},pp={pp},recompute=full,sp=0,zero=0,dp-overlap=0"
            if pp > 1:
                fix += ",schedule=1f1b"
            r = subprocess.run(base + ["--fix", fix, "--top", "1", "--json",
                                       fixed_json] + MEGATRON_2021,
                               capture_output=True, text=True)
            if r.returncode != 0:
                why = r.stderr.strip().split("; the least memory")[-1]
                print(f"| {name} | {tp} | {pp} | {dp} | {gpus} | {batch} | "
                      f"{published} | does not fit: the least memory{why} "
                      "| | | | | |", flush=True)
                continue
            fixed = json.load(open(fixed_json))["plans"][0]
            # The paper's FLOP count over the predicted step time.
            predicted = (paper_flops(batch, layers, hidden) / gpus /
                         fixed["step_seconds"] / 1e12)
            error = predicted / published - 1
            if (name, heads, hidden, layers, tp, pp, gpus, batch,
                    published) in SC21:
                errors.append(error)
            search_json = os.path.join(tmp, "search.json")
            best_time = None
            for _ in range(3 if layers >= 96 else 1):
                _, elapsed = run(base + ["--top", "1", "--json", search_json] +
                                 MEGATRON_2021)
                best_time = elapsed if best_time is None else min(
                    best_time, elapsed)
            searched = json.load(open(search_json))
            best = searched["plans"][0]
            speedup = fixed["step_seconds"] / best["step_seconds"]
            ok = best["step_seconds"] <= fixed["step_seconds"] * (1 + 1e-9)
            fits = best["memory_bytes"]["total"] <= 80 * 2 ** 30
            plan = (f"tp{best['tp']} pp{best['pp']} dp{best['dp']} "
                    f"mbs{best['micro_batch_size']} {best['schedule']}"
                    f"{' v' + str(best['virtual_stages']) if best['virtual_stages'] > 1 else ''}"
                    f" zero{best['zero']}"
                    f"{' sync=step' if best.get('grad_sync') == 'step' else ''}"
                    f" rc={best['recompute']}"
                    f" sp{int(best['sequence_parallel'])}"
                    f"{' tp-overlap=' + str(best['tp_overlap']) if best.get('tp_overlap') else ''}")
            print(f"| {name} | {tp} | {pp} | {dp} | {gpus} | {batch} | "
                  f"{published} | {predicted:.1f} | {100 * error:+.1f}% | "
                  f"{speedup:.2f}x{'' if ok else ' (SLOWER)'}"
                  f"{'' if fits else ' (DOES NOT FIT)'} | {plan} | "
                  f"{best_time:.2f} s | {searched['considered']} |",
                  flush=True)
    if errors:
        worst = max(errors, key=abs)
        print(f"\nSC21 Table 1: worst --fix error {100 * worst:+.1f}%, mean absolute "
              f"{100 * sum(map(abs, errors)) / len(errors):.1f}%")


if __name__ == "__main__":
    main()
