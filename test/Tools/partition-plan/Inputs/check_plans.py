"""Checks partition-plan's --json file: ranked by step time, every plan
fits the device memory and uses the devices and the global batch exactly.
With --ep, at least one plan splits experts over ep.

usage: check_plans.py PLANS.json DEVICES GLOBAL_BATCH MEMORY_BYTES COUNT [--ep]
"""
import json
import sys

path, devices, batch, memory, count = sys.argv[1:6]
want_ep = sys.argv[6:] == ["--ep"]
d = json.load(open(path))
p = d["plans"]
assert d["format"] == "partition-plan/1", d["format"]
assert len(p) == int(count), len(p)
# Faster first; plans equally fast (within a millionth: the ranking's tie)
# in any order.
for a, b in zip(p, p[1:]):
    assert a["step_seconds"] <= b["step_seconds"] * (1 + 1e-6), (a, b)
for q in p:
    assert q["memory_bytes"]["total"] <= float(memory), q
    # The batch is split over dp x ep (ep 1 without experts).
    assert q["tp"] * q["pp"] * q["dp"] * q["ep"] == int(devices), q
    assert (q["micro_batch_size"] * q["micro_batches"] * q["dp"] * q["ep"]
            == int(batch)), q
    parts = (q["compute_seconds"] + q["exposed_communication_seconds"] +
             q["bubble_seconds"])
    assert abs(parts - q["step_seconds"]) <= 1e-9 + 1e-6 * q["step_seconds"], q
if want_ep:
    assert any(q["ep"] > 1 for q in p), [q["ep"] for q in p]
print("json ok")
