"""Writes the models of shapes.mlir (binding input shapes) into a directory.

usage: shapes_models.py OUTDIR

dynamo.onnx: inputs named as torch's dynamo exporter names them:
  input_ids       int64 [s72, s70]
  attention_mask  int64 [s72, s70]
  positions       int64 [?, s70] (the first dimension has neither a size
                  nor a name)
  y = float(input_ids) + float(attention_mask) [s72, s70],
  z = float(positions) (no declared shape).
fixed.onnx: an export with fixed shapes: input_ids int64 [2, 16] and a
  causal-mask initializer f32 [2, 1, 16, 16] folded for that batch and
  sequence; y = float(input_ids) [2, 16], mask = mask * 1 [2, 1, 16, 16].
partial.onnx: x float [2, seq] (batch fixed, sequence symbolic);
  y = x + x [2, seq].
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(nodes, inputs, outputs, inits=()):
    graph = helper.make_graph(nodes, "shapes", inputs, outputs,
                              initializer=list(inits))
    return helper.make_model(graph,
                             opset_imports=[helper.make_opsetid("", 17)])


def cast(x, y):
    return helper.make_node("Cast", [x], [y], to=TensorProto.FLOAT)


def dynamo():
    info = helper.make_tensor_value_info
    positions = info("positions", TensorProto.INT64, ["s70", "s70"])
    positions.type.tensor_type.shape.dim[0].Clear()
    return model(
        [cast("input_ids", "a"), cast("attention_mask", "b"),
         helper.make_node("Add", ["a", "b"], ["y"]),
         cast("positions", "z")],
        [info("input_ids", TensorProto.INT64, ["s72", "s70"]),
         info("attention_mask", TensorProto.INT64, ["s72", "s70"]),
         positions],
        [info("y", TensorProto.FLOAT, ["s72", "s70"]),
         info("z", TensorProto.FLOAT, None)])


def fixed():
    info = helper.make_tensor_value_info
    causal = np.triu(np.full((16, 16), -1e9, np.float32), 1)
    mask = numpy_helper.from_array(
        np.broadcast_to(causal, (2, 1, 16, 16)).copy(), "causal_mask")
    one = numpy_helper.from_array(np.ones((), np.float32), "one")
    return model(
        [cast("input_ids", "y"),
         helper.make_node("Mul", ["causal_mask", "one"], ["mask"])],
        [info("input_ids", TensorProto.INT64, [2, 16])],
        [info("y", TensorProto.FLOAT, [2, 16]),
         info("mask", TensorProto.FLOAT, [2, 1, 16, 16])],
        [mask, one])


def partial():
    info = helper.make_tensor_value_info
    return model([helper.make_node("Add", ["x", "x"], ["y"])],
                 [info("x", TensorProto.FLOAT, [2, "seq"])],
                 [info("y", TensorProto.FLOAT, [2, "seq"])])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, build in (("dynamo", dynamo), ("fixed", fixed),
                        ("partial", partial)):
        onnx.save(build(), os.path.join(out, name + ".onnx"))


if __name__ == "__main__":
    main()
