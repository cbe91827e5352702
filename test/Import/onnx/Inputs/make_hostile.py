"""Writes hostile and malformed ONNX models for the importer's tests.

usage: make_hostile.py OUTDIR

Every model is small on disk and wrong in exactly one way: names that would
become paths, external data outside the model's directory, sizes whose
element counts overflow or exceed the folding budget, integer division by
zero in shape arithmetic, nodes without the inputs, outputs or attributes
they need, use before definition, names defined twice. The models are
built from raw protobuf messages where the onnx helpers would refuse.
test/Import/onnx/hostile.mlir lists what the importer must say about each.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def model(nodes, inputs, outputs, inits=(), opset=OPSET):
    graph = helper.make_graph(nodes, "hostile", inputs, outputs, list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def i64(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.INT64, shape)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, np.int64), name)


def const(output, values, dtype=np.int64):
    return helper.make_node(
        "Constant", [], [output], name="/" + output,
        value=numpy_helper.from_array(np.array(values, dtype), output))


def identity(out_name, in_name="x"):
    return model([helper.make_node("Identity", [in_name], [out_name],
                                   name="/id")],
                 [f32(in_name, [2, 3])], [f32(out_name, [2, 3])])


def reshape_by(nodes, shape_value):
    """x [2, 3] reshaped by the host value `shape_value` computed by nodes."""
    return model(nodes + [helper.make_node("Reshape", ["x", shape_value],
                                           ["y"], name="/reshape")],
                 [f32("x", [2, 3])], [f32("y", None)])


def external(location, offset=None, length=None, dims=(3, 4)):
    """An MLP-like model whose weight w [3, 4] is external data."""
    t = TensorProto()
    t.name = "w"
    t.data_type = TensorProto.FLOAT
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", offset),
                       ("length", length)):
        if value is not None:
            entry = t.external_data.add()
            entry.key, entry.value = key, str(value)
    return model([helper.make_node("MatMul", ["x", "w"], ["y"],
                                   name="/matmul")],
                 [f32("x", [2, 3])], [f32("y", [2, 4])], [t])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)

    def save(name, m):
        with open(os.path.join(out, name), "wb") as f:
            f.write(m.SerializeToString())

    # --- names that become file names ------------------------------------
    save("escape-output.onnx", identity("../../x/ESCAPE"))
    save("escape-input.onnx", identity("y", in_name="../in"))
    save("ctrl-output.onnx", identity("y\nz"))
    save("dot-output.onnx", identity(".."))
    w = numpy_helper.from_array(np.ones((3, 4), np.float32), "../../w")
    save("escape-init.onnx", model(
        [helper.make_node("MatMul", ["x", "../../w"], ["y"], name="/mm")],
        [f32("x", [2, 3])], [f32("y", [2, 4])], [w]))
    # Exporters' names with separators are kept readable: '/' becomes '.'.
    w = numpy_helper.from_array(np.ones((3, 4), np.float32), "dense/kernel")
    save("slash-names.onnx", model(
        [helper.make_node("MatMul", ["in/x", "dense/kernel"],
                          ["dense/MatMul:0"], name="/mm")],
        [f32("in/x", [2, 3])], [f32("dense/MatMul:0", [2, 4])], [w]))
    save("collide-names.onnx", model(
        [helper.make_node("Identity", ["x"], ["a/b"], name="/id1"),
         helper.make_node("Neg", ["x"], ["a.b"], name="/neg")],
        [f32("x", [2, 3])], [f32("a/b", [2, 3]), f32("a.b", [2, 3])]))

    # --- external data ---------------------------------------------------
    data = np.arange(12, dtype=np.float32).tobytes()
    os.makedirs(os.path.join(out, "data"), exist_ok=True)
    with open(os.path.join(out, "data", "w.bin"), "wb") as f:
        f.write(b"\0" * 16 + data)
    save("ext-ok.onnx", external("data/w.bin", offset=16, length=48,
                                 dims=[3, 4]))
    os.makedirs(os.path.join(out, "..", "outside"), exist_ok=True)
    with open(os.path.join(out, "..", "outside", "secret.bin"), "wb") as f:
        f.write(data)
    save("ext-absolute.onnx", external(
        os.path.abspath(os.path.join(out, "data", "w.bin")), dims=[3, 4]))
    save("ext-dotdot.onnx", external("data/../../outside/secret.bin",
                                     dims=[3, 4]))
    link = os.path.join(out, "data", "link.bin")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(os.path.join("..", "..", "outside", "secret.bin"), link)
    save("ext-symlink.onnx", external("data/link.bin", dims=[3, 4]))
    inside = os.path.join(out, "data", "inside.bin")
    if os.path.lexists(inside):
        os.remove(inside)
    os.symlink("w.bin", inside)
    save("ext-symlink-inside.onnx", external("data/inside.bin", offset=16,
                                             dims=[3, 4]))
    save("ext-dir.onnx", external("data", dims=[3, 4]))
    fifo = os.path.join(out, "data", "fifo")
    if not os.path.lexists(fifo):
        os.mkfifo(fifo)
    save("ext-fifo.onnx", external("data/fifo", dims=[3, 4]))
    save("ext-past-end.onnx", external("data/w.bin", offset=32, length=48,
                                       dims=[3, 4]))
    save("ext-overflow.onnx", external("data/w.bin", offset=2**63 - 8,
                                       length=48, dims=[3, 4]))
    save("ext-bad-offset.onnx", external("data/w.bin", offset="16x",
                                         dims=[3, 4]))
    save("ext-negative.onnx", external("data/w.bin", offset=-16, length=48,
                                       dims=[3, 4]))
    save("ext-empty.onnx", external("", dims=[3, 4]))

    # --- sizes -----------------------------------------------------------
    save("cos-huge.onnx", model(
        [const("shape", [2**20, 2**20]),
         helper.make_node("ConstantOfShape", ["shape"], ["zeros"],
                          name="/cos"),
         helper.make_node("Add", ["x", "zeros"], ["y"], name="/add")],
        [f32("x", [1])], [f32("y", None)]))
    save("cos-negative.onnx", model(
        [const("shape", [2, -3]),
         helper.make_node("ConstantOfShape", ["shape"], ["zeros"],
                          name="/cos"),
         helper.make_node("Add", ["x", "zeros"], ["y"], name="/add")],
        [f32("x", [1])], [f32("y", None)]))
    save("cos-overflow.onnx", model(
        [const("shape", [2**40, 2**40]),
         helper.make_node("ConstantOfShape", ["shape"], ["zeros"],
                          name="/cos"),
         helper.make_node("Add", ["x", "zeros"], ["y"], name="/add")],
        [f32("x", [1])], [f32("y", None)]))
    save("expand-huge.onnx", model(
        [const("one", [1.0], np.float32), const("shape", [2**18, 2**18]),
         helper.make_node("Expand", ["one", "shape"], ["big"],
                          name="/expand"),
         helper.make_node("Add", ["x", "big"], ["y"], name="/add")],
        [f32("x", [1])], [f32("y", None)]))
    save("range-huge.onnx", model(
        [const("start", 0), const("limit", 2**40), const("delta", 1),
         helper.make_node("Range", ["start", "limit", "delta"], ["r"],
                          name="/range"),
         helper.make_node("Cast", ["r"], ["rf"], name="/cast", to=1),
         helper.make_node("Add", ["x", "rf"], ["y"], name="/add")],
        [f32("x", [1])], [f32("y", None)]))
    save("range-8.onnx", model(
        [const("start", 0), const("limit", 8), const("delta", 1),
         helper.make_node("Range", ["start", "limit", "delta"], ["r"],
                          name="/range"),
         helper.make_node("Cast", ["r"], ["rf"], name="/cast", to=1),
         helper.make_node("Add", ["x", "rf"], ["y"], name="/add")],
        [f32("x", [1])], [f32("y", None)]))
    save("range-nan.onnx", model(
        [const("start", 0.0, np.float32), const("limit", 4.0, np.float32),
         const("delta", float("nan"), np.float32),
         helper.make_node("Range", ["start", "limit", "delta"], ["r"],
                          name="/range"),
         helper.make_node("Add", ["x", "r"], ["y"], name="/add")],
        [f32("x", [1])], [f32("y", None)]))
    # An initializer whose element count wraps around 2^64 to 0 bytes.
    t = TensorProto()
    t.name = "w"
    t.data_type = TensorProto.FLOAT
    t.dims.extend([2**32, 2**32])
    t.raw_data = b""
    save("init-overflow.onnx", model(
        [helper.make_node("Add", ["x", "w"], ["y"], name="/add")],
        [f32("x", [1])], [f32("y", None)], [t]))
    t = TensorProto()
    t.name = "w"
    t.data_type = TensorProto.FLOAT
    t.dims.extend([2, 3])
    t.raw_data = b"\0" * 20
    save("init-short.onnx", model(
        [helper.make_node("Add", ["x", "w"], ["y"], name="/add")],
        [f32("x", [2, 3])], [f32("y", [2, 3])], [t]))
    t = TensorProto()
    t.name = "w"
    t.data_type = TensorProto.FLOAT
    t.dims.extend([2, -3])
    save("init-negative.onnx", model(
        [helper.make_node("Add", ["x", "w"], ["y"], name="/add")],
        [f32("x", [2, 3])], [f32("y", [2, 3])], [t]))
    t = TensorProto()
    t.name = "w"
    t.data_type = TensorProto.FLOAT
    t.dims.extend([2, 3])
    t.float_data.extend([1.0] * 5)
    save("init-few-values.onnx", model(
        [helper.make_node("Add", ["x", "w"], ["y"], name="/add")],
        [f32("x", [2, 3])], [f32("y", [2, 3])], [t]))
    save("trilu-empty-k.onnx", model(
        [const("k", np.zeros((0,), np.int64)),
         helper.make_node("Trilu", ["x", "k"], ["y"], name="/trilu")],
        [f32("x", [3, 3])], [f32("y", None)]))
    save("input-overflow.onnx", model(
        [helper.make_node("Neg", ["x"], ["y"], name="/neg")],
        [f32("x", [2**40, 2**40])], [f32("y", None)]))
    save("input-symbolic.onnx", model(
        [helper.make_node("Neg", ["x"], ["y"], name="/neg")],
        [f32("x", ["n", 2**32])], [f32("y", None)]))
    # A causal mask for a run-time input of 2^40 elements per matrix.
    save("trilu-huge.onnx", model(
        [helper.make_node("Trilu", ["x"], ["y"], name="/trilu")],
        [f32("x", [2**20, 2**20])], [f32("y", None)]))

    # --- shape arithmetic ------------------------------------------------
    shape_of_x = helper.make_node("Shape", ["x"], ["s"], name="/shape")
    save("div-zero.onnx", reshape_by(
        [shape_of_x, const("zero", [0, 1]),
         helper.make_node("Div", ["s", "zero"], ["t"], name="/div")], "t"))
    save("mod-zero.onnx", reshape_by(
        [shape_of_x, const("zero", [1, 0]),
         helper.make_node("Mod", ["s", "zero"], ["t"], name="/mod")], "t"))
    save("reshape-negative.onnx", reshape_by([const("t", [-2, -3])], "t"))
    save("reshape-copy-past-rank.onnx", model(
        [const("t", [0, 0, 0]), const("c", [[1.0, 2.0]], np.float32),
         helper.make_node("Reshape", ["c", "t"], ["r"], name="/reshape"),
         helper.make_node("Add", ["x", "r"], ["y"], name="/add")],
        [f32("x", [1])], [f32("y", None)]))
    save("unsqueeze-duplicate.onnx", model(
        [const("c", [1.0, 2.0], np.float32), const("axes", [0, 0]),
         helper.make_node("Unsqueeze", ["c", "axes"], ["u"], name="/unsq"),
         helper.make_node("Add", ["x", "u"], ["y"], name="/add")],
        [f32("x", [1])], [f32("y", None)]))
    save("unsqueeze-duplicate-runtime.onnx", model(
        [const("axes", [1, 1]),
         helper.make_node("Unsqueeze", ["x", "axes"], ["y"], name="/unsq")],
        [f32("x", [2, 3])], [f32("y", None)]))
    save("transpose-bad-perm.onnx", model(
        [const("c", [[1.0, 2.0]], np.float32),
         helper.make_node("Transpose", ["c"], ["t"], name="/transpose",
                          perm=[0, 5]),
         helper.make_node("Add", ["x", "t"], ["y"], name="/add")],
        [f32("x", [1])], [f32("y", None)]))
    save("concat-mismatch.onnx", model(
        [const("a", [[1.0, 2.0]], np.float32),
         const("b", [[1.0], [2.0]], np.float32),
         helper.make_node("Concat", ["a", "b"], ["c"], name="/concat",
                          axis=0),
         helper.make_node("Add", ["x", "c"], ["y"], name="/add")],
        [f32("x", [1])], [f32("y", None)]))
    save("slice-lengths.onnx", model(
        [const("c", [1.0, 2.0, 3.0], np.float32), const("starts", [0, 0]),
         const("ends", [1]),
         helper.make_node("Slice", ["c", "starts", "ends"], ["s"],
                          name="/slice"),
         helper.make_node("Add", ["x", "s"], ["y"], name="/add")],
        [f32("x", [1])], [f32("y", None)]))
    save("slice-min-step.onnx", model(
        [const("starts", [-1]), const("ends", [-2**63]),
         const("axes", [0]), const("steps", [-2**63]),
         helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"],
                          ["y"], name="/slice")],
        [f32("x", [5])], [f32("y", None)]))
    save("split-zero.onnx", model(
        [helper.make_node("Split", ["x"], ["y"], name="/split", axis=0,
                          num_outputs=0)],
        [f32("x", [4])], [f32("y", None)], opset=18))

    # --- nodes without what they need ------------------------------------
    save("add-one-input.onnx", model(
        [const("a", [1.0], np.float32),
         helper.make_node("Add", ["a"], ["b"], name="/add1"),
         helper.make_node("Add", ["x", "b"], ["y"], name="/add2")],
        [f32("x", [1])], [f32("y", None)]))
    save("range-two-inputs.onnx", model(
        [const("start", 0), const("limit", 4),
         helper.make_node("Range", ["start", "limit"], ["r"], name="/range"),
         helper.make_node("Cast", ["r"], ["rf"], name="/cast", to=1),
         helper.make_node("Add", ["x", "rf"], ["y"], name="/add")],
        [f32("x", [1])], [f32("y", None)]))
    save("range-empty.onnx", model(
        [const("start", [], np.int64), const("limit", 4), const("delta", 1),
         helper.make_node("Range", ["start", "limit", "delta"], ["r"],
                          name="/range"),
         helper.make_node("Cast", ["r"], ["rf"], name="/cast", to=1),
         helper.make_node("Add", ["x", "rf"], ["y"], name="/add")],
        [f32("x", [1])], [f32("y", None)]))
    save("cast-no-to.onnx", model(
        [const("c", [1, 2]),
         helper.make_node("Cast", ["c"], ["cf"], name="/cast"),
         helper.make_node("Add", ["x", "cf"], ["y"], name="/add")],
        [f32("x", [1])], [f32("y", None)]))
    save("no-outputs.onnx", model(
        [helper.make_node("Neg", ["x"], [], name="/neg"),
         helper.make_node("Neg", ["x"], ["y"], name="/neg2")],
        [f32("x", [1])], [f32("y", None)]))

    # --- graph structure -------------------------------------------------
    save("cycle.onnx", model(
        [helper.make_node("Add", ["x", "b"], ["a"], name="/a"),
         helper.make_node("Neg", ["a"], ["b"], name="/b")],
        [f32("x", [1])], [f32("a", None)]))
    save("duplicate-output.onnx", model(
        [helper.make_node("Neg", ["x"], ["y"], name="/neg1"),
         helper.make_node("Exp", ["x"], ["y"], name="/neg2")],
        [f32("x", [1])], [f32("y", None)]))
    save("duplicate-graph-output.onnx", model(
        [helper.make_node("Neg", ["x"], ["y"], name="/neg")],
        [f32("x", [1])], [f32("y", None), f32("y", None)]))
    save("duplicate-input.onnx", model(
        [helper.make_node("Neg", ["x"], ["y"], name="/neg")],
        [f32("x", [1]), f32("x", [2])], [f32("y", None)]))
    save("input-shadows-node.onnx", model(
        [helper.make_node("Neg", ["x"], ["z"], name="/neg"),
         helper.make_node("Exp", ["z"], ["y"], name="/exp")],
        [f32("x", [1]), f32("z", [1])], [f32("y", None)]))


if __name__ == "__main__":
    main()
