"""Compile time of partition-opt on generated GPT graphs of growing depth.

Two pipelines (one process per run, output written to a file so that
printing is counted; rounds over every depth in turn, medians reported):

  inference  unannotated L-layer GPT-2 models (hidden 768, 12 heads, FFN
             3072, vocabulary 50304 -- GPT-2's 50257 padded to a multiple of
             128 as Megatron does, so that tp divides it -- batch 8, sequence
             1024) through --part-spmd="mesh=dp:2,tp:4";
  step       a GPT-3-sized training step (hidden 12288, 96 heads, vocabulary
             51200, sequence 2048, batch 8, cross-entropy) through
             --part-autodiff --part-optimizer --part-spmd="mesh=dp:8,tp:8
             zero=1".

Prints the time per op, which should stay about flat (linear total time),
and the ratio of each depth's time to the previous one's (the median of
the rounds' ratios): doubling the layers should about double the time (at
most 2.2x for the step). Beside it, the same ratio for MLIR parsing and
printing the partitioned IR, linear work by construction: how this
machine's time grows with the size of the IR alone.

usage: python3 bench/spmd_compile_time.py [--build build]
           [--pipeline inference|step|both] [--layers 12 48 96] [--rounds 5]
"""
import argparse
import statistics
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


def run(cmd):
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode:
        sys.exit(out.stderr)
    return time.perf_counter() - start


def measure(build, name, layers, d, rounds):
    p = PIPELINES[name]
    opt = f"{build}/bin/partition-opt"
    ops = {}
    for L in layers:
        path = f"{d}/{name}{L}.mlir"
        subprocess.run(
            [f"{build}/bin/partition-import", "--model", "gpt", "--layers",
             str(L), *p["model"], "--shapes-only", "-o", path], check=True)
        ops[L] = sum(1 for line in open(path) if " = part." in line)
    # Rounds over all depths in turn, so that a busy spell on this shared
    # machine slows every depth of a round alike; each round's ratios are
    # taken, and their median reported. The baseline is linear work by
    # construction: MLIR parsing and printing the partitioned IR of the
    # same depth, which shows how this machine's time grows with the size
    # of the IR alone (caches, memory).
    times = {L: [] for L in layers}
    base = {L: [] for L in layers}
    for _ in range(rounds):
        for L in layers:
            out = f"{d}/{name}{L}.out.mlir"
            times[L].append(run([opt, f"{d}/{name}{L}.mlir", *p["passes"],
                                 "-o", out]))
            base[L].append(run([opt, out, "--verify-each=false", "-o",
                                f"{d}/copy.mlir"]))
    collectives = {
        L: sum(1 for line in open(f"{d}/{name}{L}.out.mlir")
               if "part.all_" in line or "part.reduce_scatter" in line)
        for L in layers}

    def ratio(series, L, prev):
        return statistics.median(a / b for a, b in zip(series[L], series[prev]))

    print(f"{name}: partition-opt " + " ".join(p["passes"]) +
          f" (median of {rounds} rounds)")
    print(f"{'layers':>6} {'ops':>7} {'collectives':>11} {'time (ms)':>10} "
          f"{'us per op':>10} {'x previous':>10} {'baseline x':>10}")
    prev = None
    for L in layers:
        t = statistics.median(times[L])
        r = f"{ratio(times, L, prev):.2f}" if prev else ""
        rb = f"{ratio(base, L, prev):.2f}" if prev else ""
        print(f"{L:>6} {ops[L]:>7} {collectives[L]:>11} {t * 1e3:>10.1f} "
              f"{t * 1e6 / ops[L]:>10.1f} {r:>10} {rb:>10}")
        prev = L
    first = layers[0]
    unit = statistics.median(times[first]) / ops[first]
    print("time per op relative to the smallest graph: " + ", ".join(
        f"{L} layers {statistics.median(times[L]) / ops[L] / unit:.2f}"
        for L in layers))
    print("baseline: partition-opt parsing and printing each depth's "
          "partitioned IR (--verify-each=false)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--pipeline", default="both",
                    choices=["inference", "step", "both"])
    ap.add_argument("--layers", type=int, nargs="+")
    ap.add_argument("--rounds", type=int, default=5)
    o = ap.parse_args()
    names = ["inference", "step"] if o.pipeline == "both" else [o.pipeline]
    with tempfile.TemporaryDirectory() as d:
        for name in names:
            measure(o.build, name, o.layers or PIPELINES[name]["layers"], d,
                    o.rounds)


if __name__ == "__main__":
    main()
