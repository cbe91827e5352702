"""Checks, on a plan dump (`partition-run PLAN --dump`), that every all-gather
of a parameter is used by one instruction only and that its arena bytes are
reused after that use (a flat gather of several parameters: each slice of
it, and the flat buffer after the last slice): each gathered copy is freed after its use (ZeRO-3),
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
# A reshape the loader made a view: "%66 = alias of %65 : f32[256, 256]".
ALIAS = re.compile(r"^\s+%(\d+) = alias of %(\d+) ")


def main():
    lines = open(sys.argv[1]).read().splitlines()
    least = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    params = set()
    instrs = []  # (value, op, operands, offset, bytes)
    names = {}  # value -> the values that read its bytes (itself, aliases)
    for line in lines:
        if m := ALIAS.match(line):
            names.setdefault(m.group(2), {m.group(2)}).add(m.group(1))
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
    produced = {ins[0]: ins[1] for ins in instrs}

    def readers(value):
        """Instructions reading `value` directly or through an alias."""
        seen = names.get(value, {value})
        return [j for j, ins in enumerate(instrs) if seen & set(ins[2])]

    def freed(i, what):
        """The value of instrs[i]: its arena bytes reused after its last
        user; None, or why not."""
        value, _, _, offset, size = instrs[i]
        users = readers(value)
        if not users:
            return f"{what} has no user"
        if not any(o < offset + size and offset < o + s
                   for (_, _, _, o, s) in instrs[users[-1] + 1:]):
            return (f"{what} keeps its arena bytes [{offset}, "
                    f"{offset + size}) to the end")
        return None

    def used_once(i, what):
        users = readers(instrs[i][0])
        if len(users) != 1:
            return f"{what} has {len(users)} users, expected 1"
        return freed(i, what)

    gathers = 0
    for i, (value, op, operands, offset, size) in enumerate(instrs):
        if op != "AllGather" or not operands:
            continue
        what = f"%{value} (all-gather of %{operands[-1]})"
        if operands[-1] in params:
            gathers += 1
            if why := used_once(i, what):
                print(why)
                return 1
        elif produced.get(operands[-1]) == "Concat":
            # A flat gather (part-zero-prefetch flat=true): each parameter
            # is a Slice of it, read by one instruction (the arena frees a
            # value at its last read; a slice's few bytes at the arena's top
            # may find no later value to reuse them, so reuse is asked of
            # the flat buffer, freed after the last slice).
            slices = readers(value)
            for j in slices:
                if instrs[j][1] != "Slice":
                    print(f"{what} is read by a {instrs[j][1]}, not a Slice")
                    return 1
                gathers += 1
                if len(readers(instrs[j][0])) != 1:
                    print(f"%{instrs[j][0]} (a slice of {what}) has "
                          f"{len(readers(instrs[j][0]))} readers, expected 1")
                    return 1
            if why := freed(i, what):
                print(why)
                return 1
    if gathers < least:
        print(f"{gathers} parameter all-gathers, expected at least {least}")
        return 1
    print(f"ok, {gathers} parameter all-gathers, each used once and freed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
