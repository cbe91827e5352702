"""Writes the small ONNX models of the importer's tests into a directory.

usage: make_models.py OUTDIR

good.onnx is a valid two-layer MLP (Gemm, Relu, MatMul + Add) with a
symbolic batch dimension; the files listed below are valid too, every other
file is broken in exactly one way.

gelu-opset20.onnx, gelu-opset21.onnx: the Gelu op (new in opset 20) three
times on one input x [batch, 64]: y_default without the approximate
attribute (so "none", the erf form), y_none with approximate="none" and
y_tanh with approximate="tanh" (test gelu.mlir).

opsets-opset18.onnx, opsets-opset21.onnx: the input forms opset 18
introduced, on x [batch, 6, 8] (test opsets.mlir):
  mean   ReduceMean, axes [-1] as an int64 initializer, keepdims default (1)
  sum    ReduceSum, axes [1] from a Constant node, keepdims 0
  max    ReduceMax, axes [2, 1] (unsorted) from a Constant node, keepdims 0
  maxall ReduceMax without the axes input: every axis, keepdims 1
  noop   ReduceSum of -x without axes and noop_with_empty_axes 1: -x itself
  split  Split of x on axis 2 into num_outputs 3 (8 = 3 + 3 + 2: the last
         chunk is the smaller one), concatenated back in the order 2, 0, 1
  halves Split of x on axis 1 into num_outputs 2 (6 = 3 + 3), first minus
         second
These models use only the onnx helper (no schemas), so the Debian onnx 1.12
writes them although its own schemas stop at opset 17; the IR version is the
one ONNX pairs with the opset (8 for 18, 9 for 20, 10 for 21). They pass
onnx.checker.check_model(full_check=True) of onnx 1.23 and run in
onnxruntime, which the tests do not need.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def mlp(opset=17, batch="batch", extra_nodes=(), drop_init=None):
    rng = np.random.default_rng(0)
    inits = {
        "fc1.weight": rng.standard_normal((8, 4)).astype(np.float32),
        "fc1.bias": rng.standard_normal(8).astype(np.float32),
        "fc2.weight": rng.standard_normal((8, 3)).astype(np.float32),
        "fc2.bias": rng.standard_normal(3).astype(np.float32),
    }
    nodes = [
        helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"],
                         name="/fc1/Gemm", transB=1),
        helper.make_node("Relu", ["h"], ["r"], name="/act/Relu"),
        helper.make_node("MatMul", ["r", "fc2.weight"], ["m"], name="/fc2/MatMul"),
        helper.make_node("Add", ["m", "fc2.bias"], ["y"], name="/fc2/Add"),
    ] + list(extra_nodes)
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 3])],
        [numpy_helper.from_array(v, k) for k, v in inits.items() if k != drop_init])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model, inits


# The IR version ONNX releases pair with each opset (onnx.helper.VERSION_TABLE).
IR_FOR_OPSET = {17: 8, 18: 8, 19: 9, 20: 9, 21: 10}


def model_at(graph, opset):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = IR_FOR_OPSET[opset]
    model.producer_name = "make_models.py"
    return model


def gelu(opset):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 64])
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["batch", 64])
            for n in ("y_default", "y_none", "y_tanh")]
    nodes = [
        helper.make_node("Gelu", ["x"], ["y_default"], name="/gelu_default"),
        helper.make_node("Gelu", ["x"], ["y_none"], name="/gelu_none",
                         approximate="none"),
        helper.make_node("Gelu", ["x"], ["y_tanh"], name="/gelu_tanh",
                         approximate="tanh"),
    ]
    return model_at(helper.make_graph(nodes, "gelu", [x], outs), opset)


def opsets(opset):
    def const(name, values):
        return helper.make_node(
            "Constant", [], [name], name="/" + name,
            value=numpy_helper.from_array(np.array(values, np.int64), name))

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 6, 8])
    out = {
        "mean": ["batch", 6, 1], "sum": ["batch", 8], "max": ["batch"],
        "maxall": [1, 1, 1], "noop": ["batch", 6, 8], "split": ["batch", 6, 8],
        "halves": ["batch", 3, 8],
    }
    nodes = [
        helper.make_node("ReduceMean", ["x", "axes_last"], ["mean"], name="/mean"),
        const("axes_1", [1]),
        helper.make_node("ReduceSum", ["x", "axes_1"], ["sum"], name="/sum",
                         keepdims=0),
        const("axes_21", [2, 1]),
        helper.make_node("ReduceMax", ["x", "axes_21"], ["max"], name="/max",
                         keepdims=0),
        helper.make_node("ReduceMax", ["x"], ["maxall"], name="/maxall"),
        helper.make_node("Neg", ["x"], ["neg"], name="/neg"),
        helper.make_node("ReduceSum", ["neg"], ["noop"], name="/noop",
                         noop_with_empty_axes=1),
        helper.make_node("Split", ["x"], ["s0", "s1", "s2"], name="/split",
                         axis=2, num_outputs=3),
        helper.make_node("Concat", ["s2", "s0", "s1"], ["split"], name="/concat",
                         axis=2),
        helper.make_node("Split", ["x"], ["h0", "h1"], name="/halves",
                         axis=1, num_outputs=2),
        helper.make_node("Sub", ["h0", "h1"], ["halves"], name="/sub"),
    ]
    graph = helper.make_graph(
        nodes, "opsets", [x],
        [helper.make_tensor_value_info(k, TensorProto.FLOAT, v) for k, v in out.items()],
        [numpy_helper.from_array(np.array([-1], np.int64), "axes_last")])
    return model_at(graph, opset)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)

    def save(name, model):
        onnx.save(model, os.path.join(out, name))

    good, inits = mlp()
    save("good.onnx", good)
    np.savez(os.path.join(out, "good-weights.npz"), **inits)
    data = good.SerializeToString()
    # Cut inside the last initializer's data.
    with open(os.path.join(out, "truncated.onnx"), "wb") as f:
        f.write(data[: len(data) - 20])
    with open(os.path.join(out, "garbage.onnx"), "wb") as f:
        f.write(b"this is not a protobuf message \xff\xff\xff\xff\x01\x02")
    open(os.path.join(out, "empty.onnx"), "wb").close()
    save("opset12.onnx", mlp(opset=12)[0])
    save("opset22.onnx", mlp(opset=22)[0])
    save("no-graph.onnx", helper.make_model(
        helper.make_graph([], "empty", [], []),
        opset_imports=[helper.make_opsetid("", 17)]))
    unknown, _ = mlp(extra_nodes=[
        helper.make_node("Celu", ["y"], ["c1"], name="celu_a"),
        helper.make_node("Celu", ["c1"], ["c2"], name="celu_b"),
        helper.make_node("HardSwish", ["c2"], ["c3"], name="hswish"),
        helper.make_node("FusedThing", ["c3"], ["c4"], name="custom",
                         domain="com.example"),
    ])
    unknown.opset_import.append(helper.make_opsetid("com.example", 1))
    save("unknown-op.onnx", unknown)
    save("missing-init.onnx", mlp(drop_init="fc2.weight")[0])
    # A reshape whose target does not fit the data.
    bad_reshape, _ = mlp(extra_nodes=[
        helper.make_node("Constant", [], ["shape"], name="target",
                         value=numpy_helper.from_array(np.array([5, -1], np.int64))),
        helper.make_node("Reshape", ["y", "shape"], ["z"], name="/bad/Reshape"),
    ])
    save("bad-reshape.onnx", bad_reshape)
    for opset in (20, 21):
        save(f"gelu-opset{opset}.onnx", gelu(opset))
    for opset in (18, 21):
        save(f"opsets-opset{opset}.onnx", opsets(opset))


if __name__ == "__main__":
    main()
