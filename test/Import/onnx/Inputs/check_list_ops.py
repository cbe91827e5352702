"""Checks `partition-import --list-ops` against the importer itself:
check_list_ops.py PARTITION_IMPORT WORK_DIR

For every op the listing prints, a one-node model (a few for the sequence
ops, which need a tensor at each end) is built at the first opset the
listing gives and imported: it must import (exit 0). Every listed op needs a
recipe here and every recipe a listed op, so an op added to or dropped from
the importer's table without the other side fails this test. An op the
listing does not print must be reported unsupported, naming its node.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper, numpy_helper

tool, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
listing = subprocess.run([tool, "--list-ops"], capture_output=True, text=True,
                         check=True).stdout
listed = {}
for line in listing.splitlines():
    name, opsets = line.split()[:2]
    listed[name] = int(opsets.split("-")[0])

rng = np.random.default_rng(0)
X = rng.random((2, 3), dtype=np.float32) + 0.5   # a run-time float input
M = np.array([[1, 0, 1], [0, 1, 1]], dtype=np.int64)  # a run-time int input
B = np.array([[True, False, True], [False, True, True]])  # a run-time bool


def i64(*v):
    return np.array(v, dtype=np.int64)


def model(op, inputs, attrs=None, outputs=1, extra=()):
    """inputs: numpy arrays; names starting with 'in' become graph inputs,
    the rest initializers. `extra` nodes follow the op (their last output is
    the graph output)."""
    graph_inputs, inits, names = [], [], []
    for i, (kind, value) in enumerate(inputs):
        if kind is None:
            names.append("")
            continue
        name = f"{kind}{i}"
        names.append(name)
        if kind == "in":
            dtype = {np.float32: T.FLOAT, np.int64: T.INT64,
                     np.bool_: T.BOOL}[value.dtype.type]
            graph_inputs.append(helper.make_tensor_value_info(name, dtype, value.shape))
        else:
            inits.append(numpy_helper.from_array(value, name))
    outs = [f"out{i}" for i in range(outputs)]
    nodes = [helper.make_node(op, names, outs, name=f"the_{op}", **(attrs or {}))]
    nodes += list(extra)
    final = nodes[-1].output[0] if extra else outs[0]
    graph = helper.make_graph(nodes, op, graph_inputs, [onnx.ValueInfoProto(name=final)], inits)
    return graph


run, const = "in", "c"
unary = [(run, X)]
binary = [(run, X), (run, X * 2)]
to_tensor = lambda src: [helper.make_node("ConcatFromSequence", [src], ["t"], axis=0)]

RECIPES = {
    "Abs": ([(const, i64(-2, 3))], {}),
    "Add": (binary, {}), "Sub": (binary, {}), "Mul": (binary, {}),
    "Div": (binary, {}), "Pow": (binary, {}), "Max": (binary, {}),
    "Min": (binary, {}), "Sum": (binary, {}),
    "And": ([(run, B), (run, B)], {}), "Or": ([(run, B), (run, B)], {}),
    "Xor": ([(run, B), (run, B)], {}), "Not": ([(run, B)], {}),
    "Cast": (unary, {"to": T.INT64}),
    "CastLike": ([(run, X), (run, M)], {}),
    "Ceil": ([(const, i64(2, 3))], {}), "Floor": ([(const, i64(2, 3))], {}),
    "Sign": ([(const, i64(-2, 3))], {}), "Mod": ([(const, i64(7)), (const, i64(3))], {}),
    "Concat": (binary, {"axis": 1}),
    "Constant": ([], {"value_ints": [1, 2]}),
    "ConstantOfShape": ([(const, i64(2, 3))], {}),
    "CumSum": ([(run, M), (const, i64(1))], {"exclusive": 1}),
    "Dropout": (unary, {}),
    "Equal": ([(run, M), (run, M)], {}), "Less": (binary, {}),
    "LessOrEqual": (binary, {}), "Greater": (binary, {}),
    "GreaterOrEqual": (binary, {}),
    "Erf": (unary, {}), "Exp": (unary, {}), "Log": (unary, {}),
    "Neg": (unary, {}), "Reciprocal": (unary, {}), "Relu": (unary, {}),
    "Sigmoid": (unary, {}), "Sin": (unary, {}), "Cos": (unary, {}),
    "Sqrt": (unary, {}), "Tanh": (unary, {}), "Gelu": (unary, {}),
    "Identity": (unary, {}), "Softmax": (unary, {"axis": -1}),
    "Expand": ([(run, X), (const, i64(4, 2, 3))], {}),
    "Flatten": (unary, {"axis": 1}),
    "Gather": ([(run, X), (const, i64(1, 0))], {"axis": 1}),
    "GatherElements": ([(run, X), (run, i64([1, 0, 2], [0, 0, 1]))], {"axis": 1}),
    "GatherND": ([(run, X), (const, i64([1], [0]))], {}),
    "IsNaN": (unary, {}, 1, [helper.make_node("Cast", ["out0"], ["t"], to=T.FLOAT)]),
    "IsInf": (unary, {}, 1, [helper.make_node("Cast", ["out0"], ["t"], to=T.FLOAT)]),
    "TopK": ([(const, i64([3, 1, 2])), (const, i64(2))], {}, 2),
    "OneHot": ([(run, M), (const, i64(3)), (const, np.array([0, 1], np.float32))], {}),
    "ScatterElements": ([(const, i64([1, 2, 3])), (const, i64([0])), (const, i64([7]))], {}),
    "NonZero": ([(const, i64(0, 2, 3))], {}),
    "Tile": ([(run, X), (const, i64(2, 1))], {}),
    "Gemm": ([(run, X), (run, X.T.copy())], {}),
    "MatMul": ([(run, X), (run, X.T.copy())], {}),
    "LayerNormalization": ([(run, X), (run, np.ones(3, np.float32))], {}),
    "Range": ([(const, i64(0)), (const, i64(5)), (const, i64(2))], {}),
    "ReduceMax": (unary, {}), "ReduceMean": (unary, {}),
    "ReduceSum": (unary, {}), "ReduceProd": ([(const, i64(2, 3))], {}),
    "Reshape": ([(run, X), (const, i64(3, 2))], {}),
    "Shape": (unary, {}), "Size": (unary, {}),
    "Slice": ([(run, X), (const, i64(1)), (const, i64(3)), (const, i64(1))], {}),
    "Split": ([(run, X), (const, i64(1, 2))], {"axis": 1}, 2),
    "Squeeze": ([(run, X[:1]), (const, i64(0))], {}),
    "Unsqueeze": ([(run, X), (const, i64(0))], {}),
    "Transpose": (unary, {}),
    "Trilu": ([(run, X), (const, i64(1))], {"upper": 0}),
    "Where": ([(run, B), (run, X), (run, X * 2)], {}),
    "SequenceEmpty": ([], {}, 1, [
        helper.make_node("SequenceInsert", ["out0", "in_x"], ["s"]),
        helper.make_node("ConcatFromSequence", ["s"], ["t"], axis=0)]),
    "SequenceConstruct": (binary, {}, 1, to_tensor("out0")),
    "SequenceInsert": None,  # with SequenceEmpty
    "SequenceAt": None,  # with SplitToSequence
    "SequenceLength": None,  # with SplitToSequence
    "ConcatFromSequence": None,  # everywhere
    "SplitToSequence": (unary, {"axis": 1}, 1, [
        helper.make_node("SequenceLength", ["out0"], ["n"]),
        helper.make_node("Sub", ["n", "one"], ["last"]),
        helper.make_node("SequenceAt", ["out0", "last"], ["t"])]),
    "Loop": None,  # below
}


def loop_model():
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["acc_in", "in0"], ["acc_out"])],
        "body",
        [helper.make_tensor_value_info("i", T.INT64, []),
         helper.make_tensor_value_info("cond_in", T.BOOL, []),
         helper.make_tensor_value_info("acc_in", T.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("cond_out", T.BOOL, []),
         helper.make_tensor_value_info("acc_out", T.FLOAT, [2, 3])])
    node = helper.make_node("Loop", ["trips", "", "in0"], ["out0"], name="the_Loop", body=body)
    return helper.make_graph(
        [node], "loop", [helper.make_tensor_value_info("in0", T.FLOAT, [2, 3])],
        [onnx.ValueInfoProto(name="out0")], [numpy_helper.from_array(i64(3), "trips")])


def build(op):
    if op == "Loop":
        return loop_model()
    recipe = RECIPES[op]
    inputs, attrs = recipe[0], recipe[1]
    outputs = recipe[2] if len(recipe) > 2 else 1
    extra = recipe[3] if len(recipe) > 3 else ()
    graph = model(op, inputs, attrs, outputs, extra)
    if op == "SequenceEmpty":
        graph.input.append(helper.make_tensor_value_info("in_x", T.FLOAT, [2, 3]))
    if op == "SplitToSequence":
        graph.initializer.append(numpy_helper.from_array(i64(1), "one"))
    return graph


failures = []
if set(RECIPES) != set(listed):
    failures.append(f"listed but no recipe: {sorted(set(listed) - set(RECIPES))}; "
                    f"recipe but not listed: {sorted(set(RECIPES) - set(listed))}")
for op in sorted(set(listed) & set(RECIPES)):
    if RECIPES[op] is None and op != "Loop":
        continue  # imported as part of another op's model
    opset = max(listed[op], 17)
    m = helper.make_model(build(op), opset_imports=[helper.make_opsetid("", opset)])
    path = os.path.join(work, f"{op}.onnx")
    onnx.save(m, path)
    p = subprocess.run([tool, path, "-o", os.devnull], capture_output=True, text=True)
    if p.returncode != 0:
        failures.append(f"{op} (opset {opset}) does not import: {p.stderr.strip()}")
    print(f"{op}: {'ok' if p.returncode == 0 else 'FAILED'}")

# An op the listing leaves out is reported unsupported, naming its node.
absent = "HardSwish"
assert absent not in listed
m = helper.make_model(model(absent, [(run, X)]), opset_imports=[helper.make_opsetid("", 17)])
onnx.save(m, os.path.join(work, "absent.onnx"))
p = subprocess.run([tool, os.path.join(work, "absent.onnx"), "-o", os.devnull],
                   capture_output=True, text=True)
if p.returncode == 0 or f"{absent} (1 node): the_{absent}" not in p.stderr:
    failures.append(f"{absent} is not reported unsupported: {p.stderr.strip()}")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
