"""Trains a step on every pipeline configuration of a cross product and
checks each against the same step on one rank.

usage: pipeline_matrix.py --bin DIR OUTDIR ATOL RTOL STEP2 WEIGHTS2 STEP4
                          WEIGHTS4 -- INPUT...

DIR holds partition-opt, partition-translate and partition-run.

The cross product: every schedule (gpipe, 1f1b, interleaved-1f1b,
zero-bubble, zb-v, v-half) x pp 2 and 4 x every mesh with pp * dp * tp <= 8
x ZeRO 0-3 (ZeRO where dp > 1: without dp it has nothing to shard). pp:2
cuts STEP2 (at least 4 layers: 2 stages of 2 chunks) into 2 micro-batches,
pp:4 cuts STEP4 (at least 8 layers) into 4: the fewest each schedule takes
(for interleaved, a multiple of the stages; ZB-V takes 2p, and runs where
the batch of 8 divides into dp x 2p), so that the 118 plans run in minutes
on a small machine. Each plan trains 3 steps; its per-step losses must
equal the single-rank run's within 1e-5 relative, and every output (final
weights and optimizer state) within ATOL + RTOL |ref|. INPUT... are
partition-run's --input arguments (name=file.npy), a batch of 8.

Prints one line per configuration and exits non-zero, naming the failing
configurations, if any fails.
"""
import itertools
import os
import re
import subprocess
import sys

import numpy as np

SCHEDULES = ["gpipe", "1f1b", "interleaved-1f1b", "zero-bubble", "zb-v",
             "v-half"]
BATCH = 8
STEPS = 3


def configurations():
    for pp, schedule in itertools.product([2, 4], SCHEDULES):
        for dp, tp in itertools.product([1, 2, 4], [1, 2, 4]):
            if pp * dp * tp > 8:
                continue
            # ZB-V's first stage warms up with 2p - 1 forwards.
            m = 2 * pp if schedule == "zb-v" else pp
            if BATCH % (dp * m):
                continue
            zeros = [0, 1, 2, 3] if dp > 1 else [0]
            for zero in zeros:
                axes = [f"pp:{pp}"] + [f"{a}:{n}" for a, n in
                                       (("dp", dp), ("tp", tp)) if n > 1]
                yield pp, (f"mesh={','.join(axes)} micro-batches={m} "
                           f"schedule={schedule} zero={zero}")


def losses(text):
    return {int(k): float(v)
            for k, v in re.findall(r"^step (\d+):.* loss (\S+)", text, re.M)}


def run(args, out):
    result = subprocess.run(args, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, timeout=300)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:2])} failed:\n{result.stdout[-2000:]}")
    return result.stdout


BIN = ""


def tool(name):
    return os.path.join(BIN, name)


def train(outdir, name, options, step, weights, inputs):
    plan = os.path.join(outdir, name + ".plan")
    mlir = os.path.join(outdir, name + ".mlir")
    run([tool("partition-opt"), step, f"--part-spmd={options}", "-o", mlir],
        None)
    run([tool("partition-translate"), "--part-to-plan", mlir, "-o", plan],
        None)
    out = os.path.join(outdir, name)
    os.makedirs(out, exist_ok=True)
    args = [tool("partition-run"), plan, "--backend", "cpu", "--steps", str(STEPS),
            "--timeout", "60", "--weights", weights, "--output-dir", out]
    for i in inputs:
        args += ["--input", i]
    log = run(args, None)
    os.remove(mlir)
    return losses(log), out


def worst(ref_dir, out_dir, atol, rtol):
    """The largest |x - ref| / (atol + rtol |ref|) over every output file."""
    names = sorted(f for f in os.listdir(ref_dir) if f.endswith(".npy"))
    if not names:
        raise RuntimeError(f"{ref_dir}: no outputs")
    score = 0.0
    for f in names:
        ref = np.load(os.path.join(ref_dir, f)).astype(np.float64)
        x = np.load(os.path.join(out_dir, f)).astype(np.float64)
        if x.shape != ref.shape:
            raise RuntimeError(f"{f}: shape {x.shape}, reference {ref.shape}")
        if ref.size:
            score = max(score, float(np.max(np.abs(x - ref) /
                                            (atol + rtol * np.abs(ref)))))
    return score, len(names)


def main():
    global BIN
    argv = sys.argv[1:]
    if argv[:1] != ["--bin"] or len(argv) < 9:
        sys.exit(__doc__)
    BIN = argv[1]
    outdir, atol, rtol, step2, weights2, step4, weights4 = argv[2:9]
    atol, rtol = float(atol), float(rtol)
    inputs = argv[10:] if argv[9:10] == ["--"] else argv[9:]
    models = {2: (step2, weights2), 4: (step4, weights4)}
    refs = {}
    for pp, (step, weights) in models.items():
        refs[pp] = train(outdir, f"ref{pp}", "mesh=dp:1", step, weights,
                         inputs)
        if len(refs[pp][0]) != STEPS:
            sys.exit(f"reference: {len(refs[pp][0])} losses")
    failures = []
    count = 0
    for pp, options in configurations():
        count += 1
        name = "c%03d" % count
        step, weights = models[pp]
        ref_losses, ref_dir = refs[pp]
        try:
            got, out = train(outdir, name, options, step, weights, inputs)
            if sorted(got) != sorted(ref_losses):
                raise RuntimeError(f"losses for steps {sorted(got)}")
            loss_err = max(abs(got[k] - ref_losses[k]) / abs(ref_losses[k])
                           for k in ref_losses)
            score, files = worst(ref_dir, out, atol, rtol)
            ok = loss_err <= 1e-5 and score <= 1.0
            print(f"{'ok  ' if ok else 'FAIL'} {options}: losses within "
                  f"{loss_err:.1e} relative, {files} outputs at "
                  f"{score:.2f} of the tolerance", flush=True)
            if not ok:
                failures.append(options)
            else:
                for f in os.listdir(out):
                    os.remove(os.path.join(out, f))
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            print(f"FAIL {options}: {e}", flush=True)
            failures.append(options)
    print(f"{count - len(failures)} of {count} configurations agree with one "
          "rank")
    if failures:
        sys.exit("failing:\n  " + "\n  ".join(failures))


if __name__ == "__main__":
    main()
