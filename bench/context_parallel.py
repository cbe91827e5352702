"""Context parallelism's three forms, compiled: the bytes each device moves
over cp per training step, against the count by hand, and the compile time
against cp and the sequence.

Generates a Llama (shapes only: `partition-import --model llama
--shapes-only`), appends the loss, differentiates it, adds SGD, and
compiles the step with `part-spmd="mesh=cp:N cp-attention=FORM"` and
`--part-explain`, whose remarks give each collective's bytes per device.
Per form, cp and sequence it prints the bytes over cp that carry
attention's operands (queries, keys, values, their positions and
gradients: the collectives --part-explain says attention or context
parallelism needed) and the count by hand, per layer and device, with
KV = B Hkv S D x 4 bytes (one of the whole sequence's keys or values, f32)
and G = H / Hkv:

  all-gather  forward K, V gathered: 2 KV (cp-1)/cp; backward gathered
              again but in the last layer (the shard is kept, as Megatron
              keeps it): 2 KV (cp-1)/cp (L-1)/L, and the gradients
              reduce-scattered: 2 KV (cp-1)/cp.
  ring        forward cp-1 steps of K, V blocks: 2 KV (cp-1)/cp; backward
              the same, and the per-query-head gradient blocks cp steps:
              2 G KV. Total 4 KV (cp-1)/cp + 2 G KV.
  all-to-all  forward Q (G KV), K, V (KV each, or G KV where cp does not
              divide Hkv: repeated to the query heads) and the result
              (G KV), each (cp-1)/cp of a device's share (1/cp of it);
              backward Q, K, V, dO in and dQ, dK, dV (per query head) out.

(The positions the ring passes, 8 bytes a token, are left out of the
count and of the measure.) Then the compile time of each form against cp
and the sequence, as ratios: a cost that doubles with the work must no
more than double.

usage: python3 bench/context_parallel.py [--build build] [--layers 2]
           [--hidden 512] [--heads 8] [--kv-heads 2] [--seqs 2048 4096]
           [--cps 2 4 8]
"""
import argparse
import os
import re
import subprocess
import tempfile
import time

FORMS = ("all-gather", "ring", "all-to-all")
REMARK = re.compile(r'remark: (\w+) over "cp" \((\d+) devices\) of (\d+) bytes '
                    r'moves (\d+) bytes per device; needed by (.*)')


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True)


def attention_bytes(stderr):
    """Bytes per device of the collectives over cp that attention's operands
    need (not the weights' gradients nor the loss), without positions."""
    total = 0
    for line in stderr.splitlines():
        m = REMARK.search(line)
        if not m:
            continue
        why = m.group(5)
        kind = m.group(1)
        # The keys' and values' gradients reduce-scattered (all-gather
        # form) are needed by what reads them, not by attention.
        if "positions" in why or ("attention" not in why and
                                  kind != "reduce_scatter"):
            continue
        total += int(m.group(4))
    return total


def by_hand(form, cp, a):
    kv = a.batch * a.kv_heads * a.seq * (a.hidden // a.heads) * 4
    g = a.heads // a.kv_heads
    share = (cp - 1) / cp
    if form == "all-gather":
        # Backward gathers again but in the last layer, whose forward
        # gather is still there.
        return (4 + 2 * (a.layers - 1) / a.layers) * kv * share
    if form == "ring":
        return 4 * kv * share + 2 * g * kv
    # Keys and values repeated to the query heads where cp does not
    # divide theirs.
    kvr = kv * (1 if a.kv_heads % cp == 0 else g)
    # forward: q, k, v, o; backward: q, k, v, dO, dQ, dK, dV (dK, dV per
    # query head), each (cp-1)/cp of a device's share.
    forward = (g * kv + 2 * kvr + g * kv) / cp * share
    backward = (2 * g * kv + 2 * kvr + 3 * g * kv) / cp * share
    return forward + backward


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--seqs", type=int, nargs="+", default=[2048, 4096])
    ap.add_argument("--cps", type=int, nargs="+", default=[2, 4, 8])
    ap.add_argument("--batch", type=int, default=1)
    a = ap.parse_args()
    bin_dir = os.path.join(a.build, "bin")
    tool = lambda name: os.path.join(bin_dir, name)
    times = {}
    print("| form | cp | sequence | attention bytes per layer and device "
          "| by hand | ratio | compile s |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for seq in a.seqs:
            model = os.path.join(tmp, f"llama{seq}.mlir")
            step = os.path.join(tmp, f"step{seq}.mlir")
            run([tool("partition-import"), "--model", "llama", "--layers",
                 str(a.layers), "--hidden", str(a.hidden), "--heads",
                 str(a.heads), "--kv-heads", str(a.kv_heads), "--vocab",
                 "1024", "--seq", str(seq), "--batch", str(a.batch),
                 "--shapes-only", "-o", model])
            run([tool("partition-opt"), model,
                 "--part-append-loss=kind=cross-entropy", "--part-autodiff",
                 "--part-optimizer=kind=sgd", "-o", step])
            a.seq = seq
            for form in FORMS:
                for cp in a.cps:
                    if form == "all-to-all" and a.heads % cp:
                        continue
                    start = time.perf_counter()
                    r = run([tool("partition-opt"), step,
                             f"--part-spmd=mesh=cp:{cp} cp-attention={form}",
                             "--part-explain", "-o", os.devnull])
                    seconds = time.perf_counter() - start
                    times[form, cp, seq] = seconds
                    measured = attention_bytes(r.stderr) / a.layers
                    hand = by_hand(form, cp, a)
                    print(f"| {form} | {cp} | {seq} | {measured:.0f} | "
                          f"{hand:.0f} | {measured / hand:.3f} | "
                          f"{seconds:.2f} |", flush=True)
    print("\nCompile time against the work (each row: the larger over the "
          "smaller)\n")
    print("| form | cp x2 (at the longest sequence) | sequence x2 (at the "
          "largest cp) |")
    print("|---|---|---|")
    seq_hi, cp_hi = max(a.seqs), max(a.cps)
    for form in FORMS:
        cps = sorted(c for (f, c, s) in times if f == form and s == seq_hi)
        seqs = sorted(s for (f, c, s) in times if f == form and c == cps[-1])
        dc = (times[form, cps[-1], seq_hi] / times[form, cps[-2], seq_hi]
              if len(cps) > 1 else float("nan"))
        ds = (times[form, cps[-1], seqs[-1]] / times[form, cps[-1], seqs[-2]]
              if len(seqs) > 1 else float("nan"))
        print(f"| {form} | {dc:.2f} | {ds:.2f} |")


if __name__ == "__main__":
    main()
