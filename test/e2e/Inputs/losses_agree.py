"""Checks the per-step losses partition-run printed ("step K: loss V").

usage: losses_agree.py ATOL RTOL REF RUN.log [RUN.log ...]
       losses_agree.py --falling RUN.log   (the last loss is below the first)
REF is another run's log, or a .txt file with one reference loss per line.
"""
import re
import sys


def losses(path):
    if path.endswith(".txt"):
        return [float(line) for line in open(path) if line.strip()]
    out = {}
    for line in open(path):
        m = re.match(r"step (\d+):.* loss (\S+)", line)
        if m:
            out[int(m.group(1))] = float(m.group(2))
    if not out:
        sys.exit(f"{path}: no per-step losses")
    return [out[k] for k in sorted(out)]


def main():
    if sys.argv[1] == "--falling":
        l = losses(sys.argv[2])
        print(f"{sys.argv[2]}: losses " + " ".join(f"{v:.5f}" for v in l))
        sys.exit(0 if l[-1] < l[0] else 1)
    atol, rtol = float(sys.argv[1]), float(sys.argv[2])
    ref = losses(sys.argv[3])
    status = 0
    for path in sys.argv[4:]:
        got = losses(path)
        if len(got) != len(ref):
            print(f"{path}: {len(got)} steps, reference {len(ref)}")
            status = 1
            continue
        bad = [(k + 1, g, r) for k, (g, r) in enumerate(zip(got, ref))
               if abs(g - r) > atol + rtol * abs(r)]
        if bad:
            print(f"{path}: steps differ: " + ", ".join(f"{k}: {g:.7g} vs {r:.7g}" for k, g, r in bad))
            status = 1
        else:
            print(f"{path}: ok, {len(got)} steps, max difference "
                  f"{max(abs(g - r) for g, r in zip(got, ref)):.3g}")
    sys.exit(status)


if __name__ == "__main__":
    main()
