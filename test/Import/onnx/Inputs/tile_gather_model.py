"""Writes OUTDIR/tile_gather.onnx, its inputs OUTDIR/<name>.npy and what
onnxruntime computes from them, OUTDIR/ref/<output>.npy:
tile_gather_model.py OUTDIR

Tile, GatherElements and the shape arithmetic around them as exporters
write them, on inputs with symbolic dimensions (batch, seq; bound to 2 and 5
when imported):
  x      float [batch, seq]
  table  float [batch, 7, 3]   a sin/cos table, one per batch row
  t      float [batch, seq, 3]
  idx    int64 [batch, 2, 3]   indices into t along axis 1, some negative
  r      float [seq]
Outputs:
  tile_rows    Tile(x, [2, 1])
  tile_both    Tile(x, [3, 2])
  tile_shape   Tile(v, [1, seq]) with the repeats from Shape: [batch, seq]
  tile_host    Tile([[1, 2]], [2, 3]): folded at import
  ge_axis      GatherElements(table, Expand(Unsqueeze(seq - 1 - Range(seq),
               [1, seq, 1]), [batch, seq, 2]), axis 1): GPT-J's rows of its
               sin/cos table picked by position, the indices the same across
               batch and features (and narrower than the table)
  ge_const     GatherElements(x, [[0, 4, -1], [1, 1, 2]], axis 1): constant
               indices that differ across rows, one negative
  ge_runtime   GatherElements(t, idx, axis 1): indices computed at run time
  ge_runtime32 the same with int32 indices
  ge_host      GatherElements of two constants: folded at import
  expand_split Expand(r, Where(Equal(s, -1), 1, s)) with s = Concat(Split(
               Shape(t))[0], [-1], Split(Shape(t))[1]): CodeGen's expand
               with -1 for "keep", its shape split from a Shape
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T, helper, numpy_helper

out = sys.argv[1]
os.makedirs(f"{out}/ref", exist_ok=True)


def const(name, value, dtype=T.INT64):
    value = np.asarray(value)
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(
        name + "_v", dtype, list(value.shape), value.flatten().tolist()))


n = helper.make_node
nodes = [
    const("one", 1), const("zero", 0), const("minus1", -1),
    const("r21", [2, 1]), const("r32", [3, 2]), const("one_1d", [1]),
    const("minus1_1d", [-1]), const("ones3", [1, 1, 1]), const("two_1d", [2]),
    const("row", [[1, 2]]), const("r23", [2, 3]),
    const("ge_idx", [[0, 4, -1], [1, 1, 2]]),
    const("host_data", [[1.5, 2.5], [3.5, 4.5]], T.FLOAT),
    const("host_idx", [[1, 0], [0, 0]]), const("split111", [1, 1, 1]),
    n("Shape", ["x"], ["shape_x"]),
    n("Gather", ["shape_x", "zero"], ["batch"], axis=0),
    n("Gather", ["shape_x", "one"], ["seq"], axis=0),
    n("Unsqueeze", ["batch", "zero"], ["batch_1d"]),
    n("Unsqueeze", ["seq", "zero"], ["seq_1d"]),
    # tiles
    n("Tile", ["x", "r21"], ["tile_rows"]),
    n("Tile", ["x", "r32"], ["tile_both"]),
    n("Slice", ["x", "zero_1d", "one_1d", "one_1d"], ["v"]),
    n("Concat", ["one_1d", "seq_1d"], ["rep_1s"], axis=0),
    n("Tile", ["v", "rep_1s"], ["tile_shape"]),
    n("Tile", ["row", "r23"], ["tile_host"]),
    # GPT-J's positions: reversed here so that the gather is not the identity
    n("Range", ["zero", "seq", "one"], ["pos"]),
    n("Sub", ["seq", "one"], ["last"]),
    n("Sub", ["last", "pos"], ["rpos"]),
    n("Unsqueeze", ["rpos", "zero_and_two"], ["rpos3"]),
    n("Concat", ["batch_1d", "seq_1d", "two_1d"], ["shape_bs2"], axis=0),
    n("Expand", ["rpos3", "shape_bs2"], ["pos_idx"]),
    n("GatherElements", ["table", "pos_idx"], ["ge_axis"], axis=1),
    n("GatherElements", ["x", "ge_idx"], ["ge_const"], axis=1),
    n("GatherElements", ["t", "idx"], ["ge_runtime"], axis=1),
    n("Cast", ["idx"], ["idx32"], to=T.INT32),
    n("GatherElements", ["t", "idx32"], ["ge_runtime32"], axis=1),
    n("GatherElements", ["host_data", "host_idx"], ["ge_host"], axis=0),
    # CodeGen's Where(Equal(shape, -1), 1, shape) over a Split shape
    n("Shape", ["t"], ["shape_t"]),
    n("Split", ["shape_t", "split111"], ["s0", "s1", "s2"], axis=0),
    n("Concat", ["s0", "minus1_1d", "s1"], ["s"], axis=0),
    n("Equal", ["s", "minus1"], ["is_keep"]),
    n("Where", ["is_keep", "ones3", "s"], ["expand_to"]),
    n("Expand", ["r", "expand_to"], ["expand_split"]),
]
inputs = {"x": (T.FLOAT, ["batch", "seq"]), "table": (T.FLOAT, ["batch", 7, 3]),
          "t": (T.FLOAT, ["batch", "seq", 3]), "idx": (T.INT64, ["batch", 2, 3]),
          "r": (T.FLOAT, ["seq"])}
outputs = {
    "tile_rows": T.FLOAT, "tile_both": T.FLOAT, "tile_shape": T.FLOAT,
    "tile_host": T.INT64, "ge_axis": T.FLOAT, "ge_const": T.FLOAT,
    "ge_runtime": T.FLOAT, "ge_runtime32": T.FLOAT, "ge_host": T.FLOAT,
    "expand_split": T.FLOAT}
graph = helper.make_graph(
    nodes, "tile_gather",
    [helper.make_tensor_value_info(k, t, s) for k, (t, s) in inputs.items()],
    [helper.make_tensor_value_info(k, t, None) for k, t in outputs.items()],
    [numpy_helper.from_array(np.array([0], np.int64), "zero_1d"),
     numpy_helper.from_array(np.array([0, 2], np.int64), "zero_and_two")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.save(model, f"{out}/tile_gather.onnx")

rng = np.random.default_rng(16)
batch, seq = 2, 5
feeds = {
    "x": rng.uniform(-1, 1, (batch, seq)).astype(np.float32),
    "table": rng.uniform(-1, 1, (batch, 7, 3)).astype(np.float32),
    "t": rng.uniform(-1, 1, (batch, seq, 3)).astype(np.float32),
    "idx": rng.integers(-seq, seq, (batch, 2, 3)).astype(np.int64),
    "r": rng.uniform(-1, 1, (seq,)).astype(np.float32),
}
for name, value in feeds.items():
    np.save(f"{out}/{name}.npy", value)
session = ort.InferenceSession(f"{out}/tile_gather.onnx",
                               providers=["CPUExecutionProvider"])
for name, value in zip(outputs, session.run(list(outputs), feeds)):
    np.save(f"{out}/ref/{name}.npy", value)
