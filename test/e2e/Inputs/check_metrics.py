"""Checks a partition-run --metrics file (one JSON object per logged step).

usage: check_metrics.py FILE.jsonl --steps 1,2,3 (--mfu | --no-mfu)
                        [--tokens | --no-tokens]

Every line must parse as a JSON object with the documented fields: "step"
(the logged steps, exactly those given, increasing), "loss" (a finite
number), "step_ms" (> 0), "tokens_per_s" (> 0, or null with --no-tokens),
"mfu" (in (0, 1) with --mfu, null with --no-mfu), "peak_bytes" (an integer
> 0) and "eta_s" (>= 0, and 0 at the last step).
"""
import argparse
import json
import math
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--steps", required=True)
    ap.add_argument("--mfu", dest="mfu", action="store_true")
    ap.add_argument("--no-mfu", dest="mfu", action="store_false")
    ap.add_argument("--no-tokens", dest="tokens", action="store_false")
    ap.set_defaults(mfu=None, tokens=True)
    a = ap.parse_args()
    if a.mfu is None:
        sys.exit("give --mfu or --no-mfu")
    want = [int(s) for s in a.steps.split(",")]
    errors = []
    rows = []
    with open(a.path) as f:
        for n, line in enumerate(f, 1):
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                errors.append(f"line {n}: not JSON ({e}): {line!r}")
                continue
            if not isinstance(row, dict):
                errors.append(f"line {n}: not an object")
                continue
            rows.append((n, row))
    fields = ["step", "loss", "step_ms", "tokens_per_s", "mfu", "peak_bytes",
              "eta_s"]
    for n, row in rows:
        missing = [k for k in fields if k not in row]
        if missing:
            errors.append(f"line {n}: missing {missing}")
            continue

        def bad(what):
            errors.append(f"line {n} (step {row['step']}): {what}: {row}")

        if not isinstance(row["step"], int):
            bad("step is not an integer")
        if not (isinstance(row["loss"], float) and math.isfinite(row["loss"])):
            bad("loss is not a finite number")
        if not (isinstance(row["step_ms"], (int, float)) and row["step_ms"] > 0):
            bad("step_ms is not > 0")
        tps = row["tokens_per_s"]
        if a.tokens and not (isinstance(tps, (int, float)) and tps > 0):
            bad("tokens_per_s is not > 0")
        if not a.tokens and tps is not None:
            bad("tokens_per_s is not null")
        mfu = row["mfu"]
        if a.mfu and not (isinstance(mfu, (int, float)) and 0 < mfu < 1):
            bad("mfu is not in (0, 1)")
        if not a.mfu and mfu is not None:
            bad("mfu is not null without --cluster")
        if not (isinstance(row["peak_bytes"], int) and row["peak_bytes"] > 0):
            bad("peak_bytes is not an integer > 0")
        if not (isinstance(row["eta_s"], (int, float)) and row["eta_s"] >= 0):
            bad("eta_s is not >= 0")
    steps = [row.get("step") for _, row in rows]
    if steps != want:
        errors.append(f"steps {steps}, expected {want}")
    if rows and rows[-1][1].get("eta_s") != 0:
        errors.append(f"eta_s at the last step is {rows[-1][1].get('eta_s')}")
    if errors:
        print("\n".join(errors))
        sys.exit(1)
    print(f"{a.path}: ok, steps {steps}")


if __name__ == "__main__":
    main()
