"""Writes OUTDIR/routing.onnx, its input OUTDIR/idx.npy and what onnxruntime
computes, OUTDIR/ref/<output>.npy: routing_model.py OUTDIR

The ops a mixture of experts exports for its routing. On constants (folded
at import): TopK (largest and smallest, ties to the lower index, axis 0 and
-1), OneHot, ScatterElements (none and add, a negative index) and NonZero.
On the run-time input idx (int64 [2, 3], one index negative, one out of
range): OneHot along the last axis and along axis 0 (a compare with a
constant iota and a select), and TopK of its float values (largest along
the last axis, smallest along axis 0).
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T, helper, numpy_helper

out = sys.argv[1]
os.makedirs(f"{out}/ref", exist_ok=True)
n = helper.make_node


def const(name, value, dtype=np.int64):
    return n("Constant", [], [name], value=numpy_helper.from_array(np.array(value, dtype), name + "_v"))


nodes = [
    const("scores", [[3, 1, 3, 2], [0, 5, 4, 5], [1, 1, 1, 1]], np.float32),
    const("k2", [2]), const("k1", [1]),
    n("TopK", ["scores", "k2"], ["top_v", "top_i"], name="/topk"),
    n("TopK", ["scores", "k2"], ["low_v", "low_i"], largest=0),
    n("TopK", ["scores", "k1"], ["col_v", "col_i"], axis=0),
    const("depth", 4), const("onoff", [0.0, 1.0], np.float32),
    const("onoff_i", [-1, 7]),
    n("OneHot", ["idx", "depth", "onoff"], ["onehot_rt"], name="/onehot"),
    n("OneHot", ["idx", "depth", "onoff_i"], ["onehot_rt0"], axis=0),
    const("host_idx", [[2, -1], [0, 3]]),
    n("OneHot", ["host_idx", "depth", "onoff"], ["onehot_host"]),
    const("data", np.zeros((3, 4), np.float32), np.float32),
    const("s_idx", [[1, 0, -1, 2], [1, 1, 0, 3]]),
    const("s_upd", [[1, 2, 3, 4], [5, 6, 7, 8]], np.float32),
    n("ScatterElements", ["data", "s_idx", "s_upd"], ["scatter_add"], axis=1, reduction="add"),
    const("s_idx0", [[1, 0, -1, 2], [0, 2, 1, 1]]),
    n("ScatterElements", ["scores", "s_idx0", "s_upd"], ["scatter_none"], axis=0),
    n("NonZero", ["host_idx"], ["nonzero"]),
    # Run-time TopK (part.top_k): the largest along the last axis, the
    # smallest along axis 0 (negated, and moved last and back).
    n("Cast", ["idx"], ["idx_f"], to=T.FLOAT),
    n("TopK", ["idx_f", "k2"], ["rt_v", "rt_i"], name="/topk_rt"),
    n("TopK", ["idx_f", "k1"], ["rt_low_v", "rt_low_i"], axis=0, largest=0),
]
outputs = ["top_v", "top_i", "low_v", "low_i", "col_v", "col_i", "onehot_rt", "onehot_rt0",
           "onehot_host", "scatter_add", "scatter_none", "nonzero",
           "rt_v", "rt_i", "rt_low_v", "rt_low_i"]
graph = helper.make_graph(nodes, "routing", [helper.make_tensor_value_info("idx", T.INT64, [2, 3])],
                          [onnx.ValueInfoProto(name=o) for o in outputs])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
model.ir_version = 8
onnx.save(model, f"{out}/routing.onnx")
idx = np.array([[0, 3, -2], [1, 9, 2]], np.int64)
np.save(f"{out}/idx.npy", idx)
session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
for name, value in zip(outputs, session.run(outputs, {"idx": idx})):
    np.save(f"{out}/ref/{name}.npy", value)
