"""Runs partition-run on random one-byte mutations of a plan.

usage: mutate_plan.py COUNT SEED WORKDIR PLAN PARTITION-RUN -- ARGS...

Runs the plan once as it is (with --output-dir WORKDIR/ref), then COUNT
mutants, each with one byte changed to another value at a random position.
Every mutant must be rejected (a non-zero exit, no signal) or give outputs
identical, byte for byte, to the reference. Prints the tally and exits 1
when a mutant ran and gave other results, crashed or timed out.
"""
import concurrent.futures
import os
import random
import subprocess
import sys


def outputs(folder):
    return {name: open(os.path.join(folder, name), "rb").read()
            for name in sorted(os.listdir(folder))}


def run(tool, plan, args, out):
    os.makedirs(out, exist_ok=True)
    try:
        p = subprocess.run([tool, plan, *args, "--output-dir", out],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=120)
    except subprocess.TimeoutExpired:
        return "timeout", b""
    return p.returncode, p.stderr


def main():
    count, seed, work, plan = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    tool = sys.argv[5]
    args = sys.argv[sys.argv.index("--") + 1:]
    code, err = run(tool, plan, args, os.path.join(work, "ref"))
    if code != 0:
        sys.exit(f"the unmutated plan failed ({code}): {err.decode()}")
    reference = outputs(os.path.join(work, "ref"))
    original = open(plan, "rb").read()
    rng = random.Random(seed)
    mutations = [(rng.randrange(len(original)), rng.randrange(1, 256))
                 for _ in range(count)]

    def trial(i):
        data = bytearray(original)
        at, flip = mutations[i]
        data[at] ^= flip
        path = os.path.join(work, f"m{i}.plan")
        open(path, "wb").write(data)
        out = os.path.join(work, f"out{i}")
        code, err = run(tool, path, args, out)
        if code == "timeout":
            return "hung", f"byte {at}: timed out"
        if code < 0:
            return "crashed", f"byte {at}: signal {-code}"
        if code != 0:
            if not err.strip():
                return "silent", f"byte {at}: exit {code} without a message"
            return "rejected", ""
        if outputs(out) != reference:
            return "different", f"byte {at}: ran and gave other results"
        return "same", ""

    tally, bad = {}, []
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        for kind, why in pool.map(trial, range(count)):
            tally[kind] = tally.get(kind, 0) + 1
            if why:
                bad.append(why)
    print(" ".join(f"{k} {v}" for k, v in sorted(tally.items())))
    for why in bad[:20]:
        print(why)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
