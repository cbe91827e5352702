"""Checks partition-plan's --json file: ranked by step time, every plan
fits the device memory and uses the devices and the global batch exactly.
With --ep, at least one plan splits experts over ep; with --cp, at least
one splits the sequence over cp (and with --cp=N every plan has cp N).

usage: check_plans.py PLANS.json DEVICES GLOBAL_BATCH MEMORY_BYTES COUNT
           [--ep] [--cp | --cp=N]
"""
import json
import sys

path, devices, batch, memory, count = sys.argv[1:6]
flags = sys.argv[6:]
want_ep = "--ep" in flags
want_cp = [f for f in flags if f.startswith("--cp")]
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
    # The devices are tp x pp x dp x cp x ep; the batch is split over dp x
    # ep (ep 1 without experts), each sequence over cp.
    assert q["tp"] * q["pp"] * q["dp"] * q["cp"] * q["ep"] == int(devices), q
    assert (q["micro_batch_size"] * q["micro_batches"] * q["dp"] * q["ep"]
            == int(batch)), q
    # The mesh part-spmd is given names cp where it is above 1.
    assert (f"cp:{q['cp']}" in q["spmd_options"]) == (q["cp"] > 1), q
    parts = (q["compute_seconds"] + q["exposed_communication_seconds"] +
             q["bubble_seconds"])
    assert abs(parts - q["step_seconds"]) <= 1e-9 + 1e-6 * q["step_seconds"], q
if want_ep:
    assert any(q["ep"] > 1 for q in p), [q["ep"] for q in p]
for f in want_cp:
    if "=" in f:
        n = int(f.split("=")[1])
        assert all(q["cp"] == n for q in p), [q["cp"] for q in p]
    else:
        assert any(q["cp"] > 1 for q in p), [q["cp"] for q in p]
print("json ok")
