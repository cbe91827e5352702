"""Compile time of partition-opt on generated GPT graphs of growing depth.

Two pipelines (best of 3 runs each, one process per run, output written to
a file so that printing is counted):

  inference  unannotated L-layer GPT-2 models (hidden 768, 12 heads, FFN
             3072, vocabulary 50304 -- GPT-2's 50257 padded to a multiple of
             128 as Megatron does, so that tp divides it -- batch 8, sequence
             1024) through --part-spmd="mesh=dp:2,tp:4";
  step       a GPT-3-sized training step (hidden 12288, 96 heads, vocabulary
             51200, sequence 2048, batch 8, cross-entropy) through
             --part-autodiff --part-optimizer --part-spmd="mesh=dp:8,tp:8
             zero=1".

Prints the time per op, which should stay about flat (linear total time),
and the ratio of each depth's time to the previous one's: doubling the
layers should about double the time (at most 2.2x for the step).

usage: python3 bench/spmd_compile_time.py [--build build]
           [--pipeline inference|step|both] [--layers 12 48 96]
"""
import argparse
import subprocess
import sys
import tempfile
import time

PIPELINES = {
    "inference": {
        "model": ["--hidden", "768", "--heads", "12", "--ffn", "3072",
                  "--vocab", "50304", "--seq", "1024", "--batch", "8"],
        "passes": ["--part-spmd=mesh=dp:2,tp:4"],
        "layers": [12, 48, 96],
    },
    "step": {
        "model": ["--hidden", "12288", "--heads", "96", "--vocab", "51200",
                  "--seq", "2048", "--batch", "8", "--loss", "cross-entropy"],
        "passes": ["--part-autodiff", "--part-optimizer",
                   "--part-spmd=mesh=dp:8,tp:8 zero=1"],
        "layers": [24, 48, 96, 192],
    },
}


def measure(build, name, layers, d):
    p = PIPELINES[name]
    rows = []
    for L in layers:
        path = f"{d}/{name}{L}.mlir"
        subprocess.run(
            [f"{build}/bin/partition-import", "--model", "gpt", "--layers",
             str(L), *p["model"], "--shapes-only", "-o", path], check=True)
        ops = sum(1 for line in open(path) if " = part." in line)
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            out = subprocess.run(
                [f"{build}/bin/partition-opt", path, *p["passes"], "-o",
                 f"{d}/out.mlir"], capture_output=True, text=True)
            best = min(best, time.perf_counter() - start)
            if out.returncode:
                sys.exit(out.stderr)
        collectives = sum(1 for line in open(f"{d}/out.mlir")
                          if "part.all_" in line or "part.reduce_scatter" in line)
        rows.append((L, ops, collectives, best))
    print(f"{name}: partition-opt " + " ".join(p["passes"]))
    print(f"{'layers':>6} {'ops':>7} {'collectives':>11} {'time (ms)':>10} "
          f"{'us per op':>10} {'x previous':>10}")
    previous = None
    for L, ops, coll, t in rows:
        ratio = f"{t / previous:.2f}" if previous else ""
        print(f"{L:>6} {ops:>7} {coll:>11} {t * 1e3:>10.1f} "
              f"{t * 1e6 / ops:>10.1f} {ratio:>10}")
        previous = t
    base = rows[0][3] / rows[0][1]
    print("time per op relative to the smallest graph: " +
          ", ".join(f"{L} layers {t / ops / base:.2f}" for L, ops, _, t in rows))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--pipeline", default="both",
                    choices=["inference", "step", "both"])
    ap.add_argument("--layers", type=int, nargs="+")
    o = ap.parse_args()
    names = ["inference", "step"] if o.pipeline == "both" else [o.pipeline]
    with tempfile.TemporaryDirectory() as d:
        for name in names:
            measure(o.build, name, o.layers or PIPELINES[name]["layers"], d)


if __name__ == "__main__":
    main()
