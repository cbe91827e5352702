"""The cost model against measured step times on this machine.

usage: python3 bench/cost_model_fidelity.py [--build DIR] [--steps N] [--out DIR]

Calibrates this machine (partition-run --calibrate, 2 ranks), then for each
plan of a small generated GPT -- meshes of at most 2 ranks (one per core),
ZeRO stages, recomputation, sequence parallelism and pipeline schedules --
compiles it, asks part-estimate for the predicted step time on the
calibrated cluster, runs it with partition-run (ranks as threads) and reads
the measured time per step. Prints a table (predicted, measured, their
ratio), the Spearman rank correlation of predicted against measured, and
whether the peak memory partition-translate plans for each program equals
the peak each rank allocated.

A benchmark, not a test: its figures go to docs/benchmarks.md.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

PLANS = [
    ("dp:1", ""),
    ("dp:1", "recompute"),
    ("dp:2", ""),
    ("dp:2 zero=1", ""),
    ("dp:2 zero=2", ""),
    ("dp:2 zero=3", ""),
    ("dp:2", "recompute"),
    ("dp:2 zero=3", "recompute"),
    ("tp:2", ""),
    ("tp:2 sequence-parallel=true", ""),
    ("tp:2", "recompute"),
    ("pp:2 micro-batches=2 schedule=gpipe", ""),
    ("pp:2 micro-batches=4 schedule=gpipe", ""),
    ("pp:2 micro-batches=8 schedule=gpipe", ""),
    ("pp:2 micro-batches=2 schedule=1f1b", ""),
    ("pp:2 micro-batches=4 schedule=1f1b", ""),
    ("pp:2 micro-batches=8 schedule=1f1b", ""),
    ("pp:2 micro-batches=4 schedule=zero-bubble", ""),
    ("pp:2 micro-batches=8 schedule=zero-bubble", ""),
    ("pp:2 micro-batches=4 schedule=interleaved-1f1b", ""),
    ("pp:2 micro-batches=8 schedule=interleaved-1f1b", ""),
    ("pp:2 micro-batches=4 schedule=1f1b", "recompute"),
]


def run(args, **kw):
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"{' '.join(args)} failed:\n{r.stdout[-3000:]}")
    return r.stdout


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):  # ties share their mean rank
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (va * vb)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default="build")
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--out", default=None)
    a = p.parse_args()
    bin_ = os.path.join(a.build, "bin")
    tool = lambda name: os.path.join(bin_, name)
    out = a.out or tempfile.mkdtemp(prefix="cost-fidelity-")
    os.makedirs(out, exist_ok=True)
    cluster = os.path.join(out, "local-cpu.json")
    print(run([tool("partition-run"), "--calibrate", "-o", cluster,
               "--backend", "cpu", "--ranks", "2"]).strip().splitlines()[-1])

    model = os.path.join(out, "gpt.mlir")
    run([tool("partition-import"), "--model", "gpt", "--layers", "4",
         "--hidden", "128", "--heads", "4", "--vocab", "512", "--seq", "64",
         "--batch", "16", "--seed", "1", "-o", model])
    steps = {}
    for variant, passes in (("", []), ("recompute", ["--part-recompute"])):
        path = os.path.join(out, f"step{variant}.mlir")
        run([tool("partition-opt"), model, "--part-append-loss=kind=cross-entropy",
             "--part-autodiff"] + passes + ["--part-optimizer=kind=adamw", "-o", path])
        steps[variant] = path

    rows = []
    for mesh, variant in PLANS:
        name = f"mesh={mesh}" + (f" +{variant}" if variant else "")
        mlir = os.path.join(out, "plan.mlir")
        plan = os.path.join(out, "plan.plan")
        est = run([tool("partition-opt"), steps[variant], f"--part-spmd=mesh={mesh}",
                   f"--part-estimate=cluster={cluster}", "-o", mlir])
        predicted = re.search(r"^  step ([0-9.e+-]+) (s|ms|us):", est, re.M)
        scale = {"s": 1, "ms": 1e-3, "us": 1e-6}[predicted.group(2)]
        predicted = float(predicted.group(1)) * scale
        report = run([tool("partition-translate"), "--part-to-plan",
                      "--part-memory-report", mlir, "-o", plan])
        planned = max(int(x) for x in re.findall(r", peak ([0-9]+) bytes", report))
        log = run([tool("partition-run"), plan, "--backend", "cpu", "--steps",
                   str(a.steps), "--random-weights", "1", "--synthetic", "2",
                   "--vocab", "512"])
        per_step = [float(x) for x in re.findall(r"([0-9.]+) ms per step", log)]
        allocated = max(int(x) for x in re.findall(r"peak memory ([0-9]+) bytes", log))
        measured = max(per_step) * 1e-3
        rows.append((name, predicted, measured, planned == allocated))
        print(f"{name:60s} predicted {predicted * 1e3:9.2f} ms  measured "
              f"{measured * 1e3:9.2f} ms  ratio {predicted / measured:5.2f}  "
              f"memory {planned} planned, {allocated} allocated", flush=True)
    rho = spearman([r[1] for r in rows], [r[2] for r in rows])
    ratios = sorted(r[1] / r[2] for r in rows)
    print(f"{len(rows)} plans: Spearman rank correlation {rho:.3f}; "
          f"predicted/measured median {ratios[len(ratios) // 2]:.2f}, "
          f"range {ratios[0]:.2f}-{ratios[-1]:.2f}; planned peak memory "
          f"equals the allocated peak on {sum(r[3] for r in rows)} of "
          f"{len(rows)}")


if __name__ == "__main__":
    main()
