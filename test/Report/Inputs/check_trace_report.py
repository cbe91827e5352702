"""Checks partition-run --html against the --trace of the same run.

    check_trace_report.py TRACE.json REPORT.html

The page's "Time by opcode" table must list, for every (opcode, category)
of the trace's events (all ranks and steps), the same count, and the table
the largest totals first; its lanes must hold exactly the trace's events of
step 0 (rank by rank, compute and communication). Prints one line per
problem and "ok: N opcodes, M spans" when there is none.
"""
import collections
import html
import json
import re
import sys

trace = json.load(open(sys.argv[1]))
page = open(sys.argv[2]).read()
events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]

expected = collections.Counter((e["name"], e["cat"]) for e in events)
table = page[page.index('id="instructions-table"'):]
table = table[:table.index("</table>")]
rows = re.findall(r"<tr><td>([^<]*)</td><td>([^<]*)</td>"
                  r"<td class=\"num\">(\d+)</td>", table)
got = {(html.unescape(n), html.unescape(c)): int(k) for n, c, k in rows}
problems = []
for key, count in expected.items():
    if got.get(key) != count:
        problems.append(f"{key}: {count} in the trace, {got.get(key)} on the page")
for key in got:
    if key not in expected:
        problems.append(f"{key}: on the page, not in the trace")

# Step 0's events, per lane.
lanes = {}
for m in re.finditer(r'<g class="lane" data-lane="([^"]*)" data-spans="(\d+)"',
                     page):
    lanes[m.group(1)] = int(m.group(2))
step0 = collections.Counter(
    (e["pid"], e["tid"]) for e in events if e["args"]["step"] == 0)
for (pid, tid), count in step0.items():
    name = f"rank {pid}" + (" comm" if tid == 1 else "")
    if lanes.get(name) != count:
        problems.append(f"lane {name}: {count} events of step 0, "
                        f"{lanes.get(name)} spans")
if len(lanes) != len(step0):
    problems.append(f"{len(lanes)} lanes for {len(step0)} tracks")

for p in problems:
    print(p)
if problems:
    sys.exit(1)
print(f"ok: {len(expected)} opcodes, {sum(step0.values())} spans")
