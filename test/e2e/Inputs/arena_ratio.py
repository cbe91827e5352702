"""Compares the arena peaks of two plans' memory reports.

usage: arena_ratio.py MAX_RATIO WITHOUT.txt WITH.txt

Each file is the stderr of partition-translate --part-to-plan
--part-memory-report; the "arena" row is the liveness plan's peak bytes per
device. Prints both peaks and WITH / WITHOUT, and fails unless that ratio is
at most MAX_RATIO.
"""
import re
import sys


def arena(path):
    m = re.search(r"^  arena +(\d+)", open(path).read(), re.M)
    if not m:
        sys.exit(f"arena_ratio.py: no arena row in {path}")
    return int(m.group(1))


limit = float(sys.argv[1])
without, with_ = arena(sys.argv[2]), arena(sys.argv[3])
ratio = with_ / without
print(f"arena peak {without} -> {with_} bytes per device, ratio {ratio:.3f}")
sys.exit(0 if ratio <= limit else 1)
