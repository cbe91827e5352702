"""Compares the per-step losses partition-run printed with reference ones.

usage: compare_losses.py ATOL RTOL REFERENCE.txt RUN.log [RUN.log ...]
Each run log has lines "step K: loss VALUE ..."; all K steps must be there.
"""
import re
import sys


def main():
    atol, rtol = float(sys.argv[1]), float(sys.argv[2])
    ref = [float(line) for line in open(sys.argv[3]) if line.strip()]
    status = 0
    for path in sys.argv[4:]:
        got = {}
        for line in open(path):
            m = re.match(r"step (\d+):.* loss (\S+)", line)
            if m:
                got[int(m.group(1))] = float(m.group(2))
        if sorted(got) != list(range(1, len(ref) + 1)):
            print(f"{path}: steps {sorted(got)}, expected 1..{len(ref)}")
            status = 1
            continue
        worst = max(abs(got[k + 1] - r) - (atol + rtol * abs(r)) for k, r in enumerate(ref))
        bad = [k + 1 for k, r in enumerate(ref) if abs(got[k + 1] - r) > atol + rtol * abs(r)]
        if bad:
            print(f"{path}: losses differ at steps {bad}: "
                  + ", ".join(f"{got[k]:.7g} vs {ref[k - 1]:.7g}" for k in bad))
            status = 1
        else:
            print(f"{path}: ok, {len(ref)} steps")
    sys.exit(status)


if __name__ == "__main__":
    main()
