"""Writes OUTDIR/masks.onnx, its inputs OUTDIR/<name>.npy and what
onnxruntime computes from them, OUTDIR/ref/<output>.npy: masks_model.py OUTDIR

What exporters write for attention masks, positions and broadcasts, on
inputs with symbolic dimensions (batch, seq; bound to 2 and 5 when
imported):
  mask   int64 [batch, seq]   an attention_mask of 0 / 1
  keep   bool  [batch, seq]   the same given as bool
  x      float [batch, seq]
  scores float [batch, seq, seq]
  v      float [batch, 1]
  r      float [seq]
Outputs (bool results cast to int64, as partition's outputs are never bool):
  positions    CumSum(mask, 1) - 1 (the axis a Constant), Hugging Face's
               position_ids
  csum_ex      CumSum(x, 1, exclusive)
  csum_rev_ex  CumSum(x, -1, exclusive, reverse) (the axis an initializer)
  csum_rev     CumSum(mask, -1, reverse)
  csum_batch   CumSum(scores, 0)
  triu         Trilu(scores, k=1), upper
  tril         Trilu(scores, k=-1), lower (k an initializer)
  tril0        Trilu(scores), lower
  range        Range(0, seq, 1) with seq from Shape(x): folded at import
  frange       Range(0.5, seq, 0.75) in float
  range_mask   range + mask (a folded constant meets a run-time value)
  selected     Where(And(Equal(mask, 1), Not(keep)), x, -1)
  keep_eq      Cast(Equal(keep, Equal(mask, 1)), int64): Equal on bools
  kept         Where(keep, x, 0)
  expand_const Expand(v, [1, 4]): broadcast both ways, [batch, 4]
  expand_shape Expand(v, Shape(x)): the shape computed from Shape
  expand_rank  Expand(r, Concat([2], Shape(x))): rank 1 to rank 3
  expand_host  Expand([[1], [2]], Concat([2], [seq])): folded at import
  expand_mask  Cast(Expand(Unsqueeze(keep, 1), [batch, seq, seq]), int64)
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T, helper, numpy_helper

out = sys.argv[1]
os.makedirs(f"{out}/ref", exist_ok=True)


def const(name, value, dtype=T.INT64, dims=None):
    value = np.asarray(value)
    dims = list(value.shape) if dims is None else dims
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(
        name + "_v", dtype, dims, value.flatten().tolist()))


n = helper.make_node
nodes = [
    const("one", 1), const("zero", 0), const("two_1d", [2]), const("k1", 1),
    const("axis1", 1), const("axis0", 0), const("shape14", [1, 4]),
    const("minus1f", -1.0, T.FLOAT), const("zerof", 0.0, T.FLOAT),
    const("half", 0.5, T.FLOAT), const("step", 0.75, T.FLOAT),
    const("col", [[1], [2]]),
    # positions and scans
    n("CumSum", ["mask", "axis1"], ["cs"]),
    n("Sub", ["cs", "one"], ["positions"]),
    n("CumSum", ["x", "axis1"], ["csum_ex"], exclusive=1),
    n("CumSum", ["x", "axis_m1"], ["csum_rev_ex"], exclusive=1, reverse=1),
    n("CumSum", ["mask", "axis_m1"], ["csum_rev"], reverse=1),
    n("CumSum", ["scores", "axis0"], ["csum_batch"]),
    # triangles
    n("Trilu", ["scores", "k1"], ["triu"]),
    n("Trilu", ["scores", "k_m1"], ["tril"], upper=0),
    n("Trilu", ["scores"], ["tril0"], upper=0),
    # ranges from the bound shape
    n("Shape", ["x"], ["shape_x"]),
    n("Gather", ["shape_x", "one"], ["seq"], axis=0),
    n("Range", ["zero", "seq", "one"], ["range"]),
    n("Cast", ["seq"], ["seqf"], to=T.FLOAT),
    n("Range", ["half", "seqf", "step"], ["frange"]),
    n("Add", ["range", "mask"], ["range_mask"]),
    # booleans
    n("Not", ["keep"], ["not_keep"]),
    n("Equal", ["mask", "one"], ["is_one"]),
    n("And", ["is_one", "not_keep"], ["both"]),
    n("Where", ["both", "x", "minus1f"], ["selected"]),
    n("Equal", ["keep", "is_one"], ["keep_eq_b"]),
    n("Cast", ["keep_eq_b"], ["keep_eq"], to=T.INT64),
    n("Where", ["keep", "x", "zerof"], ["kept"]),
    # expands
    n("Expand", ["v", "shape14"], ["expand_const"]),
    n("Expand", ["v", "shape_x"], ["expand_shape"]),
    n("Concat", ["two_1d", "shape_x"], ["shape_2bs"], axis=0),
    n("Expand", ["r", "shape_2bs"], ["expand_rank"]),
    n("Unsqueeze", ["seq", "axis0"], ["seq_1d"]),
    n("Concat", ["two_1d", "seq_1d"], ["shape_2s"], axis=0),
    n("Expand", ["col", "shape_2s"], ["expand_host"]),
    n("Unsqueeze", ["keep", "axis1"], ["keep3"]),
    n("Gather", ["shape_x", "zero"], ["batch"], axis=0),
    n("Unsqueeze", ["batch", "axis0"], ["batch_1d"]),
    n("Concat", ["batch_1d", "seq_1d", "seq_1d"], ["shape_bss"], axis=0),
    n("Expand", ["keep3", "shape_bss"], ["keep_bss"]),
    n("Cast", ["keep_bss"], ["expand_mask"], to=T.INT64),
]
inputs = {"mask": (T.INT64, ["batch", "seq"]), "keep": (T.BOOL, ["batch", "seq"]),
          "x": (T.FLOAT, ["batch", "seq"]), "scores": (T.FLOAT, ["batch", "seq", "seq"]),
          "v": (T.FLOAT, ["batch", 1]), "r": (T.FLOAT, ["seq"])}
outputs = {
    "positions": T.INT64, "csum_ex": T.FLOAT, "csum_rev_ex": T.FLOAT,
    "csum_rev": T.INT64, "csum_batch": T.FLOAT, "triu": T.FLOAT, "tril": T.FLOAT,
    "tril0": T.FLOAT, "range": T.INT64, "frange": T.FLOAT, "range_mask": T.INT64,
    "selected": T.FLOAT, "keep_eq": T.INT64, "kept": T.FLOAT,
    "expand_const": T.FLOAT, "expand_shape": T.FLOAT, "expand_rank": T.FLOAT,
    "expand_host": T.INT64, "expand_mask": T.INT64}
graph = helper.make_graph(
    nodes, "masks",
    [helper.make_tensor_value_info(k, t, s) for k, (t, s) in inputs.items()],
    [helper.make_tensor_value_info(k, t, None) for k, t in outputs.items()],
    [numpy_helper.from_array(np.array(-1, np.int64), "axis_m1"),
     numpy_helper.from_array(np.array(-1, np.int64), "k_m1")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.save(model, f"{out}/masks.onnx")

rng = np.random.default_rng(15)
batch, seq = 2, 5
mask = np.array([[1, 1, 1, 0, 0], [0, 1, 1, 1, 1]], np.int64)
feeds = {
    "mask": mask, "keep": np.array([[1, 0, 1, 1, 0], [0, 1, 0, 1, 1]], bool),
    "x": rng.uniform(-1, 1, (batch, seq)).astype(np.float32),
    "scores": rng.uniform(-1, 1, (batch, seq, seq)).astype(np.float32),
    "v": rng.uniform(-1, 1, (batch, 1)).astype(np.float32),
    "r": rng.uniform(-1, 1, (seq,)).astype(np.float32),
}
for name, value in feeds.items():
    np.save(f"{out}/{name}.npy", value)
session = ort.InferenceSession(f"{out}/masks.onnx", providers=["CPUExecutionProvider"])
for name, value in zip(outputs, session.run(list(outputs), feeds)):
    np.save(f"{out}/ref/{name}.npy", value)
