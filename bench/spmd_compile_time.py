"""Time of the part-spmd pipeline on generated GPT graphs of growing depth.

Generates unannotated L-layer GPT-2 models with
`partition-import --model gpt --shapes-only` (hidden 768, 12 heads, FFN
3072, vocabulary 50304 -- GPT-2's 50257 padded to a multiple of 128 as
Megatron does, so that tp divides it -- batch 8, sequence 1024) and times
`partition-opt --part-spmd="mesh=dp:2,tp:4"` on each (best of 3), printing
the time per op so that growth with model size can be read off: it should
stay about flat (linear total time).

usage: python3 bench/spmd_compile_time.py [--build build] [--layers 12 48 96]
"""
import argparse
import subprocess
import sys
import tempfile
import time


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
            subprocess.run(
                [f"{o.build}/bin/partition-import", "--model", "gpt",
                 "--layers", str(L), "--hidden", "768", "--heads", "12",
                 "--ffn", "3072", "--vocab", "50304", "--seq", "1024",
                 "--batch", "8", "--shapes-only", "-o", path], check=True)
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
