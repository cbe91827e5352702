"""Time of the part-spmd pipeline on generated GPT graphs of growing depth.

Generates unannotated L-layer GPT-2 block stacks (hidden 768, 12 heads,
batch 8, sequence 1024) and times
`partition-opt --part-spmd="mesh=dp:2,tp:4"` on each (best of 3), printing
the time per op so that growth with model size can be read off: it should
stay about flat (linear total time).

usage: python3 bench/spmd_compile_time.py [--build build] [--layers 12 48 96]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from gpt_forward_cpu import program  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--layers", type=int, nargs="+", default=[12, 48, 96])
    o = ap.parse_args()
    opt = f"{o.build}/bin/partition-opt"
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for L in o.layers:
            path = f"{d}/gpt{L}.mlir"
            with open(path, "w") as f:
                f.write(program(L, 8, 1024, 768, 12, 3072, spmd=False))
            ops = sum(1 for line in open(path) if " = part." in line)
            best = float("inf")
            for _ in range(3):
                start = time.perf_counter()
                out = subprocess.run(
                    [opt, path, "--part-spmd=mesh=dp:2,tp:4", "-o", f"{d}/out.mlir"],
                    capture_output=True, text=True)
                best = min(best, time.perf_counter() - start)
                if out.returncode:
                    sys.exit(out.stderr)
            collectives = sum(1 for line in open(f"{d}/out.mlir") if "part.all_" in line)
            rows.append((L, ops, collectives, best))
    print(f"{'layers':>6} {'ops':>6} {'collectives':>11} {'time (ms)':>10} {'us per op':>10}")
    for L, ops, coll, t in rows:
        print(f"{L:>6} {ops:>6} {coll:>11} {t * 1e3:>10.1f} {t * 1e6 / ops:>10.1f}")
    base = rows[0][3] / rows[0][1]
    print("time per op relative to the smallest graph: " +
          ", ".join(f"{L} layers {t / ops / base:.2f}" for L, ops, _, t in rows))


if __name__ == "__main__":
    main()
