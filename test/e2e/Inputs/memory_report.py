"""Checks partition-translate's --part-memory-report against the ZeRO
formulas and against partition-run's --memory-report.

usage: memory_report.py ZERO DP REPORT RUNLOG DUMP [f32|bf16]

REPORT: stderr of partition-translate --part-to-plan --part-memory-report;
RUNLOG: stdout of partition-run --memory-report; DUMP: partition-run --dump.

With Psi parameter elements (global) and N = DP, AdamW holds per device,
in f32 (the default) and in mixed precision (bf16 parameters and
gradients, f32 master copies and moments):
                 f32                      bf16
  parameters:    4 Psi (zero 0-2)         2 Psi (zero 0-2)
                 4 Psi / N (zero 3)       2 Psi / N (zero 3)
  gradients:     4 Psi (zero 0)           2 Psi (zero 0)
                 4 Psi / N (zero >= 1)    2 Psi / N (zero >= 1)
  state:         8 Psi (zero 0)           12 Psi (zero 0)
                 8 Psi / N (zero >= 1)    12 Psi / N (zero >= 1)
so mixed precision totals 16 Psi without ZeRO, 2 Psi + 14 Psi / N with
ZeRO-1 and ZeRO-2 and 16 Psi / N with ZeRO-3. (The ZeRO paper's stage 1
keeps whole gradients, 4 Psi + 12 Psi / N. Here part-zero constrains each
gradient to the state's layout right after backward produces it at stage 1
too, so it is reduce-scattered once, as at stage 2 -- the same
communication as an all-reduce -- and no whole reduced gradient exists.)
Gradients are the operands part-optimizer marks, as the update reads them;
they live in the arena. State that is not a per-parameter tensor (the step
count, a scalar ZeRO cannot split) is taken from the plan's bindings and
listed explicitly. The test's sizes make every parameter dimension 0
divisible by N, so the formulas hold exactly; a tensor ZeRO left whole
would break them.
"""
import re
import sys


def fail(msg):
    sys.exit("memory_report.py: " + msg)


zero, n = int(sys.argv[1]), int(sys.argv[2])
precision = sys.argv[6] if len(sys.argv) > 6 else "f32"
param_bytes, state_bytes = {"f32": (4, 8), "bf16": (2, 12)}[precision]
report = open(sys.argv[3]).read()
runlog = open(sys.argv[4]).read()
dump = open(sys.argv[5]).read()

m = re.search(r"memory report of @\w+ on @\w+ \((\d+) devices\), bytes per "
              r"device:\n((?:  .*\n)+)all devices (\d+) bytes; Psi (\d+) ",
              report)
if not m:
    fail("no memory report in " + sys.argv[3])
devices, psi, all_devices = int(m.group(1)), int(m.group(4)), int(m.group(3))
compiler = {}
for line in m.group(2).splitlines():
    fields = line.split()
    if fields[1].isdigit():
        compiler[fields[0]] = int(fields[1])
if devices != n:
    fail(f"report says {devices} devices, expected N = {n}")

# State that is not a moment: AdamW's step count, whatever its shape.
extra = 0
for b in re.finditer(r'param "([^"]+)" %\d+ : f32\[([\d, ]*)\] of global', dump):
    name, shape = b.group(1), b.group(2)
    if name == "optimizer.step":
        elements = 1
        for d in filter(None, shape.split(",")):
            elements *= int(d)
        extra += 4 * elements
        print(f"left whole: {name} ({4 * elements} bytes)")

want_params = param_bytes * psi // (n if zero == 3 else 1)
want_grads = param_bytes * psi // (n if zero >= 1 else 1)
want_state = state_bytes * psi // (n if zero >= 1 else 1) + extra
if compiler["parameters"] != want_params:
    fail(f"zero={zero}: parameters {compiler['parameters']} bytes per device, "
         f"the formula gives {want_params} (Psi {psi}, N {n})")
if compiler["gradients"] != want_grads:
    fail(f"zero={zero}: gradients {compiler['gradients']} bytes per device, "
         f"the formula gives {want_grads} (Psi {psi}, N {n})")
# The gradients live in the arena, but not all at once: each is updated
# right after its reduction (part-optimizer interleaves the updates with
# backward), so their sum may exceed the arena's peak.
if compiler["state"] != want_state:
    fail(f"zero={zero}: state {compiler['state']} bytes per device, the "
         f"formula gives {want_state} (Psi {psi}, N {n}, {extra} whole)")
total = sum(compiler[k] for k in
            ("parameters", "state", "constants", "inputs", "arena"))
if compiler["total"] != total or all_devices != total * n:
    fail(f"totals do not add up: {compiler}, all devices {all_devices}")

ranks = re.findall(r"rank (\d+) memory: parameters (\d+), state (\d+), "
                   r"constants (\d+), inputs (\d+), arena (\d+), scratch "
                   r"(\d+), total (\d+) bytes", runlog)
if len(ranks) != n:
    fail(f"{len(ranks)} ranks in the run's memory report, expected {n}")
for r in ranks:
    got = dict(zip(("parameters", "state", "constants", "inputs", "arena"),
                   map(int, r[1:6])))
    for k, v in got.items():
        if compiler[k] != v:
            fail(f"rank {r[0]} allocated {v} bytes of {k}, the compiler "
                 f"planned {compiler[k]}")
    if int(r[7]) != total + int(r[6]):
        fail(f"rank {r[0]}: total {r[7]} is not planned {total} + scratch "
             f"{r[6]}")
per_psi = (want_params + want_grads + want_state - extra) / psi
print(f"{precision} zero={zero} N={n} Psi={psi}: parameters {want_params}, "
      f"gradients {want_grads}, state {want_state} bytes per device "
      f"({per_psi:g} Psi + {extra}), as the formulas give; the run agrees")
