"""Checks a partition-run trace of a data-parallel training run with buckets.

usage: check_overlap.py TRACE RANKS

The trace must be Chrome trace JSON with, for every rank 0..RANKS-1, a
process of that number with a "compute" and a "communication" thread,
complete ("X") events with non-negative durations whose instruction events
carry an origin, and:
  - every collective on the communication track was issued on the compute
    track (an "issue" event of the same step and instruction) no later than
    it started;
  - for at least one bucket's all_reduce (the AllReduce right after a Concat
    in the program) some compute kernel started after the issue ended and
    before the wait that covers the all_reduce ended.
Only the order of events on the rank's compute thread is compared (and a
collective's start with its issue), never durations: the outcome depends on
where the executor waits, not on how fast anything ran.
"""
import collections
import json
import sys


def fail(message):
    print(f"BAD: {message}")
    sys.exit(1)


def main():
    trace = json.load(open(sys.argv[1]))
    ranks = int(sys.argv[2])
    events = trace["traceEvents"]
    names = {(e["pid"], e.get("tid")): e["args"]["name"]
             for e in events if e.get("ph") == "M" and e["name"] == "thread_name"}
    spans = [e for e in events if e.get("ph") == "X"]
    overlapped = 0
    for rank in range(ranks):
        if names.get((rank, 0)) != "compute" or \
                names.get((rank, 1)) != "communication":
            fail(f"rank {rank}: no compute and communication threads")
        mine = [e for e in spans if e["pid"] == rank]
        if not any(e["tid"] == 0 for e in mine) or \
                not any(e["tid"] == 1 for e in mine):
            fail(f"rank {rank}: an empty track")
        for e in mine:
            if e["dur"] < 0:
                fail(f"rank {rank}: negative duration: {e}")
            if e["cat"] != "wait" and not e["args"].get("origin"):
                fail(f"rank {rank}: an instruction without origin: {e}")
        by_step = collections.defaultdict(list)
        for e in mine:
            by_step[e["args"]["step"]].append(e)
        for step, group in sorted(by_step.items()):
            compute = sorted((e for e in group if e["tid"] == 0),
                             key=lambda e: (e["ts"], e["ts"] + e["dur"]))
            kind = {e["args"]["instruction"]: e["name"]
                    for e in compute if e["cat"] != "wait"}
            issues = {e["args"]["instruction"]: e
                      for e in compute if e["cat"] == "issue"}
            for c in (e for e in group if e["tid"] == 1):
                i = c["args"]["instruction"]
                if i not in issues:
                    fail(f"rank {rank} step {step}: {c['name']} {i} on the "
                         "communication track was never issued")
                if c["ts"] < issues[i]["ts"]:
                    fail(f"rank {rank} step {step}: {c['name']} {i} started "
                         "before it was issued")
            for i, issue in sorted(issues.items()):
                if issue["name"] != "AllReduce" or kind.get(i - 1) != "Concat":
                    continue
                issued = issue["ts"] + issue["dur"]
                # The first wait after the issue that covers instruction i
                # (a wait for a later collective covers the earlier ones;
                # -1 is the end of the step).
                later = [e for e in compute if e["ts"] >= issued]
                wait = next((e for e in later if e["cat"] == "wait" and
                             (e["args"]["instruction"] >= i or
                              e["args"]["instruction"] == -1)), None)
                if wait is None:
                    fail(f"rank {rank} step {step}: no wait for the "
                         f"all_reduce at instruction {i}")
                end = wait["ts"] + wait["dur"]
                between = [e for e in later if e["cat"] == "kernel" and
                           e["ts"] <= end and e["ts"] < wait["ts"]]
                if between:
                    overlapped += 1
    print(f"{len(spans)} events, {overlapped} bucket all_reduces overlapped "
          "by compute")
    if not overlapped:
        fail("no bucket all_reduce ran while compute went on")


main()
