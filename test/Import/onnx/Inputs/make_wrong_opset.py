"""Writes models whose nodes do not match their declared opset (the ONNX
checker rejects them): Gelu at opset 19 (it exists from 20), ReduceMean
with axes as an input at opset 17 (an attribute before 18), and with axes
as an attribute at opset 18.

usage: make_wrong_opset.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(nodes, opset, inits=()):
    graph = helper.make_graph(
        nodes, "wrong",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    onnx.save(model([helper.make_node("Gelu", ["x"], ["y"], name="gelu")], 19),
              os.path.join(out, "gelu-opset19.onnx"))
    onnx.save(model([helper.make_node("ReduceMean", ["x", "axes"], ["y"], name="mean")],
                    17, [axes]), os.path.join(out, "reduce-input-axes-opset17.onnx"))
    onnx.save(model([helper.make_node("ReduceMean", ["x"], ["y"], name="mean", axes=[1])],
                    18), os.path.join(out, "reduce-attr-axes-opset18.onnx"))


if __name__ == "__main__":
    main()
