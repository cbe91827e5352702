"""Time of `partition-import --model gpt --shapes-only` at GPT-3 175B sizes.

Generates and prints GPT models of 12, 48 and 96 layers at GPT-3 175B's
sizes (hidden 12288, 96 heads, FFN 49152, vocabulary 50257, sequence 2048,
batch 1; 96 layers is the full 175B-parameter model) with no weight data,
best of 5 including process start-up and writing the IR. Prints the time
per op, and the marginal time per op (the extra time over the smallest graph
divided by the extra ops), which leaves out the fixed start-up: building
must stay linear in the number of ops (no per-op symbol look-ups or walks),
so the marginal time per op should stay about flat as the model grows.

usage: python3 bench/import_time.py [--build build] [--layers 12 48 96]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

SIZES = ["--hidden", "12288", "--heads", "96", "--vocab", "50257",
         "--seq", "2048", "--batch", "1"]


def best_of(n, command):
    best = float("inf")
    for _ in range(n):
        start = time.perf_counter()
        out = subprocess.run(command, capture_output=True, text=True)
        best = min(best, time.perf_counter() - start)
        if out.returncode:
            sys.exit(out.stderr)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--layers", type=int, nargs="+", default=[12, 48, 96])
    o = ap.parse_args()
    tool = f"{o.build}/bin/partition-import"
    rows = []
    with tempfile.TemporaryDirectory() as d:
        path = f"{d}/gpt.mlir"

        def command(layers):
            return [tool, "--model", "gpt", "--layers", str(layers), *SIZES,
                    "--shapes-only", "-o", path]

        for L in o.layers:
            t = best_of(5, command(L))
            ops = sum(1 for line in open(path) if " = part." in line)
            params = 0
            with open(path) as f:
                header = f.readline() + f.readline()
            for shape in header.split("tensor<")[1:]:
                dims = shape.split("xf32>")[0]
                if "part.role = #part.role<parameter>" in shape.split("}")[0]:
                    n = 1
                    for x in dims.split("x"):
                        n *= int(x)
                    params += n
            rows.append((L, ops, params, os.path.getsize(path), t))
    print(f"{'layers':>6} {'ops':>6} {'parameters':>11} {'IR bytes':>10} "
          f"{'time (ms)':>10} {'us per op':>10} {'marginal us per op':>19}")
    _, ops0, _, _, t0 = rows[0]
    for L, ops, params, size, t in rows:
        marginal = f"{(t - t0) * 1e6 / (ops - ops0):.1f}" if ops > ops0 else "-"
        print(f"{L:>6} {ops:>6} {params / 1e9:>10.1f}B {size:>10} {t * 1e3:>10.1f} "
              f"{t * 1e6 / ops:>10.1f} {marginal:>19}")


if __name__ == "__main__":
    main()
