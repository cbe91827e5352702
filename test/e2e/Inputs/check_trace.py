"""Checks a partition-run trace: check_trace.py TRACE RANKS NAME...

The file must be Chrome trace JSON with complete ("X") events for every rank
0..RANKS-1, each rank having an event for every NAME, with non-negative
start times and durations.
"""
import json
import sys

trace = json.load(open(sys.argv[1]))
ranks, names = int(sys.argv[2]), sys.argv[3:]
events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
ok = True
for rank in range(ranks):
    mine = [e for e in events if e["pid"] == rank]
    for name in names:
        if not any(e["name"] == name for e in mine):
            print(f"rank {rank}: no {name} event")
            ok = False
    if any(e["ts"] < 0 or e["dur"] < 0 for e in mine):
        print(f"rank {rank}: negative time")
        ok = False
print(f"{len(events)} events, {'ok' if ok else 'BAD'}")
sys.exit(0 if ok else 1)
