"""Checks that every program's arena in one memory report is smaller than in
another (partition-translate --part-memory-report output).

usage: arenas_smaller.py LARGER.txt SMALLER.txt
"""
import re
import sys


def arenas(path):
    return [int(x) for x in re.findall(r"^  arena +([0-9]+)", open(path).read(), re.M)]


larger, smaller = arenas(sys.argv[1]), arenas(sys.argv[2])
print("arenas:", larger, "then", smaller)
if not larger or len(larger) != len(smaller):
    sys.exit(f"{sys.argv[1]} and {sys.argv[2]}: {len(larger)} and {len(smaller)} programs")
for i, (a, b) in enumerate(zip(larger, smaller)):
    if not b < a:
        sys.exit(f"program {i}: arena {b} is not below {a}")
