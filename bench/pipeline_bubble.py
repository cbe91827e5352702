"""The pipeline bubble: each stage's idle fraction, measured from
partition-run's trace, beside the published figure and the compiler's own
simulation of the schedule.

A generated GPT training step (AdamW) is cut into P stages with
`--part-spmd="mesh=pp:P micro-batches=M schedule=S"` and run on P CPU ranks
for a few steps with --trace. In the last step, a stage's busy time is the
time its compute track spends in the forward and backward steps (the
instructions labelled F, B, Bi or W; the optimizer's update, U, runs after
the pipeline drains and is left out, as the published figures leave it out)
and its idle fraction is 1 - busy / span, where span runs from the first
stage's first forward instruction to the last stage's last backward one.

Published figures, under unit costs (forward 1, backward 2; zero-bubble's
input and weight gradients 1 each): GPipe and 1F1B idle (p - 1) / (m + p - 1)
of the span; ZB-H1's bubble is a third of 1F1B's, (p - 1) / (p - 1 + 3 m)
(Qi et al. 2023). The compiler's simulation of the schedules
(lib/Dialect/Part/Analysis/PipelineSchedule.cpp) gives these figures; its
unit tests check them.

The ranks are threads of one process on this machine's cores: with more
ranks than cores, ranks wait for a core as well as for each other, so the
measured figure is only meaningful for P no larger than the core count.

usage: python3 bench/pipeline_bubble.py [--build build] [--stages 2]
           [--micro-batches 4 8] [--steps 3]
"""
import argparse
import json
import subprocess
import sys
import tempfile

import numpy as np

SCHEDULES = ["gpipe", "1f1b", "zero-bubble"]


def run(cmd, **kw):
    out = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if out.returncode:
        sys.exit(" ".join(cmd) + "\n" + out.stderr)
    return out.stdout


def measured_idle(trace_path, stages):
    t = json.load(open(trace_path))
    events = [e for e in t["traceEvents"]
              if e.get("ph") == "X" and e.get("tid") == 0 and "args" in e]
    last = max(e["args"]["step"] for e in events)
    pipeline = [e for e in events if e["args"]["step"] == last and
                e["args"].get("origin", "")[:1] in ("F", "B", "W")
                and e.get("cat") == "kernel"]
    begin = min(e["ts"] for e in pipeline)
    end = max(e["ts"] + e["dur"] for e in pipeline)
    idle = []
    for rank in range(stages):
        busy = sum(e["dur"] for e in pipeline if e["pid"] == rank)
        idle.append(1 - busy / (end - begin))
    return idle


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--stages", type=int, default=2)
    ap.add_argument("--micro-batches", type=int, nargs="+", default=[4, 8])
    ap.add_argument("--steps", type=int, default=3)
    o = ap.parse_args()
    p = o.stages
    with tempfile.TemporaryDirectory() as d:
        batch = max(o.micro_batches) * 2
        run([f"{o.build}/bin/partition-import", "--model", "gpt", "--layers",
             str(4 * p), "--hidden", "128", "--heads", "4", "--vocab", "256",
             "--seq", "32", "--batch", str(batch), "--seed", "1", "-o",
             f"{d}/gpt.mlir", "--weights", f"{d}/gpt.safetensors"])
        run([f"{o.build}/bin/partition-opt", f"{d}/gpt.mlir",
             "--part-append-loss=kind=cross-entropy", "--part-autodiff",
             "--part-optimizer=kind=adamw lr=1e-3", "-o", f"{d}/step.mlir"])
        rng = np.random.default_rng(0)
        ids = rng.integers(0, 256, size=(batch, 33))
        np.save(f"{d}/tokens.npy", ids[:, :-1].astype(np.int32))
        np.save(f"{d}/labels.npy", ids[:, 1:].astype(np.int32))
        print(f"GPT {4 * p} layers, hidden 128, seq 32, batch {batch}; "
              f"{p} stages on {p} CPU ranks; idle fraction of each stage")
        print(f"{'schedule':>12} {'m':>3} {'published':>10} "
              f"{'measured per stage':>30}")
        for m in o.micro_batches:
            for schedule in SCHEDULES:
                spmd = f"--part-spmd=mesh=pp:{p} micro-batches={m} " \
                       f"schedule={schedule}"
                step = run([f"{o.build}/bin/partition-opt", f"{d}/step.mlir",
                            spmd])
                run([f"{o.build}/bin/partition-translate", "--part-to-plan",
                     "-o", f"{d}/p.plan"], input=step)
                run([f"{o.build}/bin/partition-run", f"{d}/p.plan",
                     "--backend", "cpu", "--steps", str(o.steps), "--weights",
                     f"{d}/gpt.safetensors", "--input",
                     f"tokens={d}/tokens.npy", "--input",
                     f"labels={d}/labels.npy", "--trace", f"{d}/t.json"])
                idle = measured_idle(f"{d}/t.json", p)
                published = (p - 1) / (m + p - 1)
                if schedule == "zero-bubble":
                    published = (p - 1) / (p - 1 + 3 * m)
                print(f"{schedule:>12} {m:>3} {published:>10.3f} "
                      + " ".join(f"{x:.3f}" for x in idle))


if __name__ == "__main__":
    main()
