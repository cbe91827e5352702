"""Writes variants of a cluster file for the tests of hostile clusters.

edit_cluster.py IN.json OUT_DIR: each variant sets one field of IN.json to
an extreme but finite value (or adds a key twice, or names the cluster with
control characters) and is written to OUT_DIR/<variant>.json.
"""
import json
import os
import sys

base = json.load(open(sys.argv[1]))
out = sys.argv[2]


def variant(name, edit):
    c = json.loads(json.dumps(base))
    edit(c)
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(c, f)


variant("latency", lambda c: c["inter_node"].update(latency=1.7e308))
variant("peak", lambda c: c["device"]["peak_flops"].update(bf16=1e-300))
variant("efficiency", lambda c: c["efficiency"].update(elementwise=1e-300))
variant("gemm", lambda c: c["efficiency"].update(gemm=[[1e6, 1e-300]]))
variant("bandwidth", lambda c: c["intra_node"].update(bandwidth=1e-300))
variant("memory", lambda c: c["device"].update(memory_bytes=1e300))
variant("int8", lambda c: c["device"].update(peak_flops={"int8": 1e15}))
variant("no-bf16", lambda c: c["device"].update(
    peak_flops={"f32": 1e14, "int8": 1e15}))
variant("nodes", lambda c: c.update(nodes=9223372036854775807))
variant("name", lambda c: c.update(name="red\x1b[31m\x07"))
variant("device-name", lambda c: c["device"].update(name="dev\r\x1b[2K"))
# "nodes" twice: a JSON writer cannot say it, so the text is edited.
text = json.dumps(base).replace('"nodes": 2,', '"nodes": 2, "nodes": 64,', 1)
assert '"nodes": 64' in text
with open(os.path.join(out, "twice.json"), "w") as f:
    f.write(text)
