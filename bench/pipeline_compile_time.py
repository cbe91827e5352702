"""Compile time and plan size of a pipelined GPT-3 175B training step.

The step: partition-import --model gpt at GPT-3 175B's widths (hidden
12288, 96 heads, vocabulary 51200, sequence 2048), then
--part-append-loss=cross-entropy --part-mixed-precision --part-autodiff
--part-optimizer (AdamW), made once per model and not timed. Measured, one
process per run, output written to a file so that printing is counted:

  opt        partition-opt --part-spmd="mesh=pp:8,dp:16,tp:8
             micro-batches=M zero=1" (1024 devices): wall time, size of the
             IR it writes, peak RSS;
  translate  partition-translate --part-to-plan on that IR: wall time,
             plan size, peak RSS.

Configurations: layers 24, 48, 96 and 192 at M = 96 (Megatron's run), and
M = 8, 32, 96 and 512 at 96 layers, with the pipeline written as fragments
and a schedule table (the default); and as the reference M = 8 and 96 at 96
layers with the schedule unrolled (`unroll=true`). The micro-batch stays one
sequence per device: batch = dp x M = 16 M (M = 96: Megatron's 1536).

Rounds go over every configuration in turn, so that a busy spell on this
shared machine slows a round's configurations alike; medians (and the best)
of the rounds are printed, then the ratios: M = 96 against M = 8 (time and
sizes; the acceptance: at most 1.5x, and M = 96 under 60 s in all), and the
time per layer when the layers double (1.0 is linear), each the median of
the rounds' ratios, beside that of MLIR parsing and printing the
partitioned IR (partition-opt --verify-each=false, linear work by
construction: how this machine's time grows with the size of the IR
alone). Sizes are in MB (10^6 bytes), peak RSS in MiB.

usage: python3 bench/pipeline_compile_time.py [--build build] [--rounds 3]
           [--layers 24 48 96 192] [--micro-batches 8 32 96 512]
           [--unrolled 8 96]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

MODEL = ["--model", "gpt", "--hidden", "12288", "--heads", "96", "--vocab",
         "51200", "--seq", "2048", "--shapes-only"]
STEP = ["--part-append-loss=kind=cross-entropy", "--part-mixed-precision",
        "--part-autodiff", "--part-optimizer"]
MESH = "mesh=pp:8,dp:16,tp:8"
DP = 16
BASE_LAYERS, BASE_M, SMALL_M = 96, 96, 8


def run(cmd):
    """Wall time (s) and peak RSS (bytes) of one process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    # wait4 gives this child's own rusage (getrusage(RUSAGE_CHILDREN) would
    # give the maximum over every child so far).
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if status:
        sys.exit(f"{' '.join(cmd)} failed:\n{err}")
    return elapsed, usage.ru_maxrss * 1024


def make_step(build, d, layers, m):
    """The training step of `layers` layers for M micro-batches."""
    path = f"{d}/step-{layers}-{m}.mlir"
    if not os.path.exists(path):
        model = f"{d}/gpt-{layers}-{m}.mlir"
        subprocess.run([f"{build}/bin/partition-import", "--layers",
                        str(layers), "--batch", str(DP * m), *MODEL, "-o",
                        model], check=True)
        subprocess.run([f"{build}/bin/partition-opt", model, *STEP, "-o",
                        path], check=True)
    return path


def compile_once(build, d, config):
    layers, m, unroll = config
    step = make_step(build, d, layers, m)
    spmd = f"{d}/spmd.mlir"
    plan = f"{d}/step.plan"
    options = f"{MESH} micro-batches={m} zero=1" + (
        " unroll=true" if unroll else "")
    opt_s, opt_rss = run([f"{build}/bin/partition-opt", step,
                          f"--part-spmd={options}", "-o", spmd])
    ir = os.path.getsize(spmd)
    # The baseline for growth with the layers: MLIR parsing and printing the
    # partitioned IR, linear work by construction, which shows how this
    # machine's time grows with the size of the IR alone (caches, memory).
    # Not for the unrolled form (300 MB of IR), whose layers stay fixed.
    base_s = None if unroll else run(
        [f"{build}/bin/partition-opt", spmd, "--verify-each=false", "-o",
         f"{d}/copy.mlir"])[0]
    tr_s, tr_rss = run([f"{build}/bin/partition-translate", spmd,
                        "--part-to-plan", "-o", plan])
    size = os.path.getsize(plan)
    os.remove(spmd)
    os.remove(plan)
    return {"opt": opt_s, "IR": ir, "translate": tr_s, "plan": size,
            "total": opt_s + tr_s, "rss": max(opt_rss, tr_rss),
            "baseline": base_s}


def print_table(configs, results, rounds):
    print(f"GPT-3 175B step, --part-spmd=\"{MESH} micro-batches=M zero=1\" "
          f"(median of {rounds} rounds; best in brackets)")
    print(f"{'form':>9} {'layers':>6} {'M':>4} {'batch':>5} {'opt (s)':>13} "
          f"{'IR (MB)':>8} {'translate (s)':>14} {'plan (MB)':>9} "
          f"{'total (s)':>14} {'peak RSS (MiB)':>14}")
    for c in configs:
        layers, m, unroll = c
        rs = results[c]

        def med(key):
            values = [r[key] for r in rs]
            return statistics.median(values), min(values)

        o, ob = med("opt")
        t, tb = med("translate")
        a, ab = med("total")
        print(f"{'unrolled' if unroll else 'fragments':>9} {layers:>6} "
              f"{m:>4} {DP * m:>5} {o:>6.2f} ({ob:>4.2f}) "
              f"{med('IR')[0] / 1e6:>8.1f} {t:>6.2f} ({tb:>5.2f}) "
              f"{med('plan')[0] / 1e6:>9.2f} {a:>6.2f} ({ab:>5.2f}) "
              f"{med('rss')[0] / 2**20:>14.0f}")


def ratio(results, a, b, key):
    """Median over the rounds of a's value over b's."""
    return statistics.median(x[key] / y[key]
                             for x, y in zip(results[a], results[b]))


def print_ratios(o, results):
    keys = ["opt", "translate", "total", "IR", "plan"]
    for unroll in (False, True):
        big, small = (BASE_LAYERS, BASE_M, unroll), (BASE_LAYERS, SMALL_M,
                                                     unroll)
        if big in results and small in results:
            print(f"{'unrolled' if unroll else 'fragments'}: M={BASE_M} / "
                  f"M={SMALL_M}: " + ", ".join(
                      f"{k} {ratio(results, big, small, k):.2f}x"
                      for k in keys))
    base, small = (BASE_LAYERS, BASE_M, False), (BASE_LAYERS, SMALL_M, False)
    if base in results and small in results:
        total = statistics.median(r["total"] for r in results[base])
        time_x = ratio(results, base, small, "total")
        plan_x = ratio(results, base, small, "plan")
        holds = total < 60 and time_x <= 1.5 and plan_x <= 1.5
        print(f"acceptance ({BASE_LAYERS} layers, M={BASE_M}: under 60 s, "
              f"at most 1.5x M={SMALL_M}'s time and plan size): {total:.2f} "
              f"s, time {time_x:.2f}x, plan {plan_x:.2f}x -- "
              + ("holds" if holds else "FAILS"))
    layers = sorted(o.layers)
    parts = []
    for small, big in zip(layers, layers[1:]):
        a, b = (big, BASE_M, False), (small, BASE_M, False)
        per_layer = ratio(results, a, b, "total") * small / big
        parts.append(f"{small}->{big} {per_layer:.2f} "
                     f"(opt {ratio(results, a, b, 'opt') * small / big:.2f}, "
                     f"translate "
                     f"{ratio(results, a, b, 'translate') * small / big:.2f}, "
                     f"baseline "
                     f"{ratio(results, a, b, 'baseline') * small / big:.2f})")
    if parts:
        print(f"time per layer when the layers grow (M={BASE_M}; 1.00 is "
              "linear): " + ", ".join(parts))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--layers", type=int, nargs="+",
                    default=[24, 48, 96, 192])
    ap.add_argument("--micro-batches", type=int, nargs="+",
                    default=[8, 32, 96, 512])
    ap.add_argument("--unrolled", type=int, nargs="*", default=[8, 96],
                    help="micro-batch counts (at 96 layers) to compile "
                         "unrolled as the reference; none to skip")
    o = ap.parse_args()
    configs = [(L, BASE_M, False) for L in o.layers]
    configs += [(BASE_LAYERS, m, False) for m in o.micro_batches]
    configs += [(BASE_LAYERS, m, True) for m in o.unrolled]
    configs = sorted(set(configs), key=lambda c: (c[2], c[0], c[1]))
    results = {c: [] for c in configs}
    with tempfile.TemporaryDirectory() as d:
        for _ in range(o.rounds):
            for c in configs:
                results[c].append(compile_once(o.build, d, c))
    print_table(configs, results, o.rounds)
    print_ratios(o, results)


if __name__ == "__main__":
    main()
