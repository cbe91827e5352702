"""Writes OUTDIR/logic.onnx, OUTDIR/x.npy, OUTDIR/m.npy and the expected
outputs OUTDIR/ref/<name>.npy (numpy): logic_model.py OUTDIR

A graph of comparisons, boolean logic and casts to bool on its inputs (so
they run in the program, not folded at import): x, float [2, 4]; m, int64
[2, 4] (a 0/1/2 mask). Its outputs (bool results cast back to a number, as
ONNX outputs of partition are never bool):
  nonzero = Cast(Cast(x, BOOL), FLOAT)                 x != 0, NaN true
  notm    = Cast(Not(Cast(m, BOOL)), INT64)            m == 0 (2 counts as true)
  inside  = Cast(And(Greater(x, 0), Less(x, 1)), FLOAT)
  outside = Cast(Or(LessOrEqual(x, -1), GreaterOrEqual(x, 1)), FLOAT)
  differ  = Cast(Xor(Equal(m, 1), Greater(x, 0)), FLOAT)
  chosen  = Where(Cast(m, BOOL), x, Neg(x))
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
os.makedirs(f"{out}/ref", exist_ok=True)
F, I, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def const(name, value, dtype):
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(
        name + "_v", dtype, [], [value]))


nodes = [
    const("zero", 0.0, F), const("one", 1.0, F), const("minus1", -1.0, F),
    const("ione", 1, I),
    helper.make_node("Cast", ["x"], ["xb"], to=B),
    helper.make_node("Cast", ["xb"], ["nonzero"], to=F),
    helper.make_node("Cast", ["m"], ["mb"], to=B),
    helper.make_node("Not", ["mb"], ["nmb"]),
    helper.make_node("Cast", ["nmb"], ["notm"], to=I),
    helper.make_node("Greater", ["x", "zero"], ["gt0"]),
    helper.make_node("Less", ["x", "one"], ["lt1"]),
    helper.make_node("And", ["gt0", "lt1"], ["in_b"]),
    helper.make_node("Cast", ["in_b"], ["inside"], to=F),
    helper.make_node("LessOrEqual", ["x", "minus1"], ["le"]),
    helper.make_node("GreaterOrEqual", ["x", "one"], ["ge"]),
    helper.make_node("Or", ["le", "ge"], ["out_b"]),
    helper.make_node("Cast", ["out_b"], ["outside"], to=F),
    helper.make_node("Equal", ["m", "ione"], ["m1"]),
    helper.make_node("Xor", ["m1", "gt0"], ["xor_b"]),
    helper.make_node("Cast", ["xor_b"], ["differ"], to=F),
    helper.make_node("Neg", ["x"], ["negx"]),
    helper.make_node("Where", ["mb", "x", "negx"], ["chosen"]),
]
outputs = {"nonzero": F, "notm": I, "inside": F, "outside": F, "differ": F,
           "chosen": F}
graph = helper.make_graph(
    nodes, "logic",
    [helper.make_tensor_value_info("x", F, [2, 4]),
     helper.make_tensor_value_info("m", I, [2, 4])],
    [helper.make_tensor_value_info(n, t, [2, 4]) for n, t in outputs.items()])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(model)
onnx.save(model, f"{out}/logic.onnx")

x = np.array([[-1.5, -1.0, 0.0, 0.25], [0.5, 1.0, 2.0, -0.0]], np.float32)
m = np.array([[0, 1, 2, 0], [1, 1, 0, 2]], np.int64)
np.save(f"{out}/x.npy", x)
np.save(f"{out}/m.npy", m)
ref = {
    "nonzero": (x != 0).astype(np.float32),
    "notm": (m == 0).astype(np.int64),
    "inside": ((x > 0) & (x < 1)).astype(np.float32),
    "outside": ((x <= -1) | (x >= 1)).astype(np.float32),
    "differ": ((m == 1) ^ (x > 0)).astype(np.float32),
    "chosen": np.where(m != 0, x, -x).astype(np.float32),
}
for name, value in ref.items():
    np.save(f"{out}/ref/{name}.npy", value)
