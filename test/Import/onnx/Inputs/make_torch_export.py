"""Writes torch-export.onnx: a small graph carrying the metadata torch 2.x's
dynamo exporter writes (the graph signature on the graph, the torch node on
each node): a parameter kept under its module name, a Linear weight the
exporter folded into a transposed copy named val_7, a buffer, and a mask
folded from shapes (val_9). Also legacy.onnx, as the TorchScript exporter
writes a Linear with constant folding: its weight transposed, [in, out],
named onnx::MatMul_5, read by node /lin/MatMul.

Each comes with the weights partition-import should write, in torch's
layout (a Linear's weight [out, in]): torch-export-weights.npz and
legacy-weights.npz; and for legacy.onnx an input and its output
(legacy-x.npy, legacy-y.npy).

usage: make_torch_export.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SIGNATURE = """
# inputs
p_norm_weight: PARAMETER target='norm.weight'
p_lin_weight: PARAMETER target='lin.weight'
b_rope_inv_freq: BUFFER target='rope.inv_freq' persistent=False
x: USER_INPUT
"""


def node(op, ins, outs, fx):
    n = helper.make_node(op, ins, outs, name="node_" + outs[0])
    helper.set_metadata_props(n, {"pkg.torch.onnx.fx_node": fx})
    return n


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(5)
    inits = {
        "norm.weight": rng.standard_normal(4).astype(np.float32),
        "val_7": rng.standard_normal((4, 4)).astype(np.float32),
        "rope.inv_freq": rng.standard_normal(4).astype(np.float32),
        "val_9": rng.standard_normal((2, 4)).astype(np.float32),
    }
    nodes = [
        node("Mul", ["x", "norm.weight"], ["h"],
             "%mul : = call_function[target=torch.ops.aten.mul.Tensor]"
             "(args = (%x, %p_norm_weight), kwargs = {})"),
        node("MatMul", ["h", "val_7"], ["lin"],
             "%linear : = call_function[target=torch.ops.aten.linear.default]"
             "(args = (%h, %p_lin_weight), kwargs = {})"),
        node("Add", ["lin", "rope.inv_freq"], ["r"],
             "%add : = call_function[target=torch.ops.aten.add.Tensor]"
             "(args = (%linear, %b_rope_inv_freq), kwargs = {})"),
        node("Add", ["r", "val_9"], ["y"],
             "%add_1 : = call_function[target=torch.ops.aten.add.Tensor]"
             "(args = (%add, %expand_2), kwargs = {})"),
    ]
    graph = helper.make_graph(
        nodes, "torch_export",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    helper.set_metadata_props(
        graph, {"pkg.torch.export.ExportedProgram.graph_signature": SIGNATURE})
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 10
    os.makedirs(out, exist_ok=True)
    onnx.save(model, os.path.join(out, "torch-export.onnx"))
    np.savez(os.path.join(out, "torch-export-weights.npz"),
             **{"norm.weight": inits["norm.weight"],
                "lin.weight": inits["val_7"].T})
    write_legacy(out, rng)


def write_legacy(out, rng):
    weight = rng.standard_normal((4, 3)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "onnx::MatMul_5"], ["y"],
                          name="/lin/MatMul")],
        "legacy",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(weight, "onnx::MatMul_5")])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, os.path.join(out, "legacy.onnx"))
    np.savez(os.path.join(out, "legacy-weights.npz"),
             **{"lin.weight": weight.T})
    x = rng.standard_normal((2, 4)).astype(np.float32)
    np.save(os.path.join(out, "legacy-x.npy"), x)
    np.save(os.path.join(out, "legacy-y.npy"), x @ weight)


if __name__ == "__main__":
    main()
