"""Prints the planner's step (first plan of a --json file) over the step
part-estimate printed for the compiled program, and fails outside [lo, hi].

usage: step_ratio.py PLAN.json ESTIMATE.txt LO HI
"""
import json
import re
import sys

plan, estimate, lo, hi = sys.argv[1], sys.argv[2], float(sys.argv[3]), \
    float(sys.argv[4])
composed = json.load(open(plan))["plans"][0]["step_seconds"]
m = re.search(r"^  step ([0-9.e+-]+) (s|ms|us)", open(estimate).read(), re.M)
if not m:
    sys.exit("no step in " + estimate)
compiled = float(m.group(1)) * {"s": 1, "ms": 1e-3, "us": 1e-6}[m.group(2)]
ratio = composed / compiled
print(f"composed / compiled = {ratio:.3f} ({composed * 1e3:.3f} ms / "
      f"{compiled * 1e3:.3f} ms)")
sys.exit(0 if lo <= ratio <= hi else 1)
