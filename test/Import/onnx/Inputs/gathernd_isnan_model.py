"""Writes OUTDIR/gathernd_isnan.onnx, its inputs OUTDIR/<name>.npy and what
onnxruntime computes from them, OUTDIR/ref/<output>.npy:
gathernd_isnan_model.py OUTDIR

IsNaN, IsInf and GatherND as torch 2.x exports them (SDPA's NaN guard;
aten.index in transformers' mask code), on inputs with symbolic dimensions
(batch, seq; bound to 2 and 8 when imported):
  x  float [batch, 3, 4]  with NaN, +inf and -inf among finite values
  m  int64 [batch, seq]   an attention mask (0 / 1)
  r  int64 [3]            row indices into x, one negative
Outputs (bool results cast to float or int64: outputs of partition are
never bool; none holds a NaN):
  isnan      Cast(IsNaN(x))
  guarded    Where(IsNaN(x), 0, x): the NaN guard (x's infinities pass)
  guard_fin  Where(IsNaN(x), 0, x) with x's infinities replaced first, so
             the output compares with finite values only
  isinf      Cast(IsInf(x)); isinf_pos, isinf_neg with one sign detected
  isnan_host Cast(IsNaN([nan, 1, inf, -0])): folded at import
  gnd_rows   GatherND(x, [[1], [0], [-1]]): whole rows, one index negative
  gnd_elems  GatherND(x, [[0, 2, 3], [1, -1, 0]]): single elements
  gnd_batch  GatherND(x, [[[2], [0]], [[1], [1]]], batch_dims=1)
  gnd_pairs  GatherND(Where(IsInf(x), 0, x), [[0, 1], [1, 2]]): rows of
             the last dimension
  gnd_ids    GatherND(x, Unsqueeze(r, -1)) with r a run-time input (one
             index negative): a mixture of experts' weights read at each
             token's expert ids
  gnd_mask   GatherND(Cast(m, BOOL), Concat(batch index, position) with
             both from Range and Expand over the shape of m): transformers'
             padding-mask lookup in a dynamic-shape export, data run-time
  gnd_host   GatherND(CumSum(Expand(1, [batch, seq]), 1), the same
             indices): the dynamic export's other form, data on the host
             (folded at import)
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
    return n("Constant", [], [name], value=numpy_helper.from_array(
        np.array(value, dtype), name + "_v"))


nodes = [
    const("zero_f", 0.0, np.float32),
    n("IsNaN", ["x"], ["x_nan"], name="/isnan"),
    n("Cast", ["x_nan"], ["isnan"], to=T.FLOAT),
    n("Where", ["x_nan", "zero_f", "x"], ["guarded"], name="/guard"),
    n("IsInf", ["x"], ["x_inf"], name="/isinf"),
    n("Cast", ["x_inf"], ["isinf"], to=T.FLOAT),
    n("IsInf", ["x"], ["x_pinf"], detect_negative=0),
    n("Cast", ["x_pinf"], ["isinf_pos"], to=T.FLOAT),
    n("IsInf", ["x"], ["x_ninf"], detect_positive=0),
    n("Cast", ["x_ninf"], ["isinf_neg"], to=T.FLOAT),
    n("Where", ["x_inf", "zero_f", "x"], ["x_noinf"]),
    n("IsNaN", ["x_noinf"], ["x_noinf_nan"]),
    n("Where", ["x_noinf_nan", "zero_f", "x_noinf"], ["guard_fin"]),
    const("host_v", [np.nan, 1.0, np.inf, -0.0], np.float32),
    n("IsNaN", ["host_v"], ["host_nan"], name="/isnan_host"),
    n("Cast", ["host_nan"], ["isnan_host"], to=T.FLOAT),
    const("i_rows", [[1], [0], [-1]]),
    n("GatherND", ["x", "i_rows"], ["gnd_rows"], name="/gnd_rows"),
    const("i_elems", [[0, 2, 3], [1, -1, 0]]),
    n("GatherND", ["x", "i_elems"], ["gnd_elems"], name="/gnd_elems"),
    const("i_batch", [[[2], [0]], [[1], [1]]]),
    n("GatherND", ["x", "i_batch"], ["gnd_batch"], name="/gnd_batch", batch_dims=1),
    const("i_pairs", [[0, 1], [1, 2]]),
    n("GatherND", ["guard_fin", "i_pairs"], ["gnd_pairs"], name="/gnd_pairs"),
    const("r_axes", [-1]),
    n("Unsqueeze", ["r", "r_axes"], ["r_col"]),
    n("GatherND", ["guard_fin", "r_col"], ["gnd_ids"], name="/gnd_ids"),
    # Indices [batch, seq, 2] = (b, s) from the shape of m, as the dynamic
    # export builds them: Range over each dimension, Unsqueeze, Expand, Concat.
    n("Shape", ["m"], ["m_shape"]),
    const("zero", 0), const("one", 1), const("zero_1d", [0]), const("one_1d", [1]),
    const("last_1d", [-1]), const("b_axes", [1, 2]),
    n("Gather", ["m_shape", "zero"], ["batch"]),
    n("Gather", ["m_shape", "one"], ["seq"]),
    n("Range", ["zero", "batch", "one"], ["b_range"]),
    n("Range", ["zero", "seq", "one"], ["s_range"]),
    n("Unsqueeze", ["b_range", "b_axes"], ["b_col"]),
    n("Unsqueeze", ["s_range", "zero_1d"], ["s_row0"]),
    n("Unsqueeze", ["s_row0", "last_1d"], ["s_row"]),
    n("Concat", ["m_shape", "one_1d"], ["idx_shape"], axis=0),
    n("Expand", ["b_col", "idx_shape"], ["b_idx"]),
    n("Expand", ["s_row", "idx_shape"], ["s_idx"]),
    n("Concat", ["b_idx", "s_idx"], ["i_mask"], axis=-1),
    n("Cast", ["m"], ["m_bool"], to=T.BOOL),
    n("GatherND", ["m_bool", "i_mask"], ["mask_b"], name="/gnd_mask"),
    n("Cast", ["mask_b"], ["gnd_mask"], to=T.INT64),
    n("Expand", ["one", "m_shape"], ["ones"]),
    n("CumSum", ["ones", "one"], ["positions"]),
    n("GatherND", ["positions", "i_mask"], ["gnd_host"], name="/gnd_host"),
]
outputs = ["isnan", "guarded", "guard_fin", "isinf", "isinf_pos", "isinf_neg",
           "isnan_host", "gnd_rows", "gnd_elems", "gnd_batch", "gnd_pairs", "gnd_ids",
           "gnd_mask", "gnd_host"]
graph = helper.make_graph(
    nodes, "gathernd_isnan",
    [helper.make_tensor_value_info("x", T.FLOAT, ["batch", 3, 4]),
     helper.make_tensor_value_info("m", T.INT64, ["batch", "seq"]),
     helper.make_tensor_value_info("r", T.INT64, [3])],
    [onnx.ValueInfoProto(name=o) for o in outputs])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
model.ir_version = 8
onnx.save(model, f"{out}/gathernd_isnan.onnx")

x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 4 - 2.5
x[0, 0, 1] = np.nan
x[1, 2, 3] = np.nan
x[0, 2, 0] = np.inf
x[1, 0, 2] = -np.inf
m = np.ones((2, 8), np.int64)
m[1, 6:] = 0
np.save(f"{out}/x.npy", x)
np.save(f"{out}/m.npy", m)
r = np.array([1, -2, 1], np.int64)
np.save(f"{out}/r.npy", r)
session = ort.InferenceSession(model.SerializeToString(),
                               providers=["CPUExecutionProvider"])
for name, value in zip(outputs, session.run(outputs, {"x": x, "m": m, "r": r})):
    np.save(f"{out}/ref/{name}.npy", value)
