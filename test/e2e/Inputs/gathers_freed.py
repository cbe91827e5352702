"""Checks, on a plan dump (`partition-run PLAN --dump`), that every all-gather
of a parameter is used by one instruction only and that its arena bytes are
reused after that use: each gathered copy is freed after its use (ZeRO-3),
not shared by forward and backward nor kept to the end of the step.

Usage: gathers_freed.py DUMP [MIN_GATHERS]
"""
import re
import sys

# "%5 = Op {attrs}(%1, %2) : f32[4, 8] @arena+64"; a Fused kernel has
# several results ("%7, %8 = Fused ...(%5, %6) : f32[4] @arena+0, f32[4]
# @param 2"); what follows the operand list is each result's type and place.
INSTR = re.compile(r"^\s+%(\d+)((?:, %\d+)*) = (\w+)(.*)\) : (.*)$")
RESULT = re.compile(r"\S+\[([0-9, ]*)\] @(?:arena\+(\d+)|.*)")
PARAM = re.compile(r'^\s+param "[^"]*" %(\d+) : (\w+)\[')


def main():
    lines = open(sys.argv[1]).read().splitlines()
    least = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    params = set()
    instrs = []  # (value, op, operands, offset, bytes)
    for line in lines:
        if m := PARAM.match(line):
            params.add(m.group(1))
        elif m := INSTR.match(line):
            value, _, op, rest, results = m.groups()
            operands = re.findall(r"%(\d+)", rest)
            # The place of the first result (only single-result gathers
            # are checked; other instructions only read them).
            r = RESULT.match(re.findall(r"\S+\[[0-9, ]*\] @\S+", results)[0])
            offset, n = -1, 0
            if r and r.group(2) is not None:
                offset, n = int(r.group(2)), 1
                for d in r.group(1).split(","):
                    if d.strip():
                        n *= int(d)
            instrs.append((value, op, operands, offset, 4 * n))
    gathers = 0
    for i, (value, op, operands, offset, size) in enumerate(instrs):
        if op != "AllGather" or not operands or operands[-1] not in params:
            continue
        gathers += 1
        users = [j for j, ins in enumerate(instrs) if value in ins[2]]
        if len(users) != 1:
            print(f"%{value} (all-gather of %{operands[-1]}) has "
                  f"{len(users)} users, expected 1")
            return 1
        reused = any(o < offset + size and offset < o + s
                     for (_, _, _, o, s) in instrs[users[0] + 1:])
        if not reused:
            print(f"%{value} (all-gather of %{operands[-1]}) keeps its "
                  f"arena bytes [{offset}, {offset + size}) to the end")
            return 1
    if gathers < least:
        print(f"{gathers} parameter all-gathers, expected at least {least}")
        return 1
    print(f"ok, {gathers} parameter all-gathers, each used once and freed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
