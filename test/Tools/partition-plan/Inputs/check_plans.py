"""Checks partition-plan's --json file: ranked by step time, every plan
fits the device memory and uses the devices and the global batch exactly.

usage: check_plans.py PLANS.json DEVICES GLOBAL_BATCH MEMORY_BYTES COUNT
"""
import json
import sys

path, devices, batch, memory, count = sys.argv[1:]
d = json.load(open(path))
p = d["plans"]
assert d["format"] == "partition-plan/1", d["format"]
assert len(p) == int(count), len(p)
for a, b in zip(p, p[1:]):
    assert a["step_seconds"] <= b["step_seconds"], (a, b)
for q in p:
    assert q["memory_bytes"]["total"] <= float(memory), q
    assert q["tp"] * q["pp"] * q["dp"] == int(devices), q
    assert q["micro_batch_size"] * q["micro_batches"] * q["dp"] == int(batch), q
    parts = (q["compute_seconds"] + q["exposed_communication_seconds"] +
             q["bubble_seconds"])
    assert abs(parts - q["step_seconds"]) <= 1e-9 + 1e-6 * q["step_seconds"], q
print("json ok")
