"""Writes one small ONNX model per importer diagnostic not covered by
make_models.py or make_hostile.py: make_node_errors.py OUTDIR

Each model is wrong in exactly one way (an operand of the wrong rank, type
or kind, control flow the importer cannot unroll, a graph boundary it
cannot exchange, ...). test/Import/onnx/node-errors.mlir lists what the
importer must say about each; CASES below says what each case is.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper, numpy_helper

OPSET = 17
n = helper.make_node


def vi(name, dtype=T.FLOAT, shape=(2, 3)):
    return helper.make_tensor_value_info(name, dtype, None if shape is None else list(shape))


def untyped(name):
    return onnx.ValueInfoProto(name=name)


def arr(name, values, dtype=np.int64):
    return numpy_helper.from_array(np.array(values, dtype), name)


def model(nodes, inputs=None, outputs=None, inits=(), opset=OPSET):
    inputs = [vi("x")] if inputs is None else inputs
    outputs = [untyped(nodes[-1].output[0])] if outputs is None else outputs
    graph = helper.make_graph(nodes, "errors", inputs, outputs, list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def body(nodes, inputs, outputs):
    return helper.make_graph(nodes, "body", inputs, outputs)


def counting_body(extra_nodes=(), outputs=("cond_out", "acc_out"), acc="x"):
    """A Loop body carrying one float [2, 3] value: acc + x each iteration."""
    return body([n("Identity", ["cond_in"], ["cond_out"]),
                 n("Add", ["acc_in", acc], ["acc_out"])] + list(extra_nodes),
                [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []), vi("acc_in")],
                [untyped(o) for o in outputs])


def loop(trips, cond, carried="x", body_graph=None, outputs=("y",), inits=(),
         inputs=None, extra=()):
    attrs = {} if body_graph is False else {"body": body_graph or counting_body()}
    node = n("Loop", [trips, cond, carried], list(outputs), name="/loop", **attrs)
    return model(list(extra) + [node], inputs, [untyped(outputs[0])], inits)


def split_seq(name="s", axis=1):
    return n("SplitToSequence", ["x"], [name], name="/split_seq", axis=axis)


CASES = {
    # --- sequences and loops ---
    "seq-not-seq": model([n("SequenceAt", ["x", "zero"], ["y"], name="/at")],
                         inits=[arr("zero", 0)]),
    "seq-not-tensor": model([n("SequenceEmpty", [], ["s"], name="/empty"),
                             n("SequenceInsert", ["s", "s"], ["t"], name="/insert"),
                             n("ConcatFromSequence", ["t"], ["y"], name="/cat", axis=0)]),
    "seq-pos-scalar": model([split_seq(), n("SequenceAt", ["s", "pos"], ["y"], name="/at")],
                            inits=[arr("pos", [0, 1])]),
    "seq-pos-range": model([split_seq(), n("SequenceAt", ["s", "pos"], ["y"], name="/at")],
                           inits=[arr("pos", 5)]),
    "seq-split-zero": model([n("SplitToSequence", ["x", "sz"], ["s"], name="/split_seq"),
                             n("ConcatFromSequence", ["s"], ["y"], name="/cat", axis=0)],
                            inits=[arr("sz", 0)]),
    "seq-split-cover": model([n("SplitToSequence", ["x", "sz"], ["s"], name="/split_seq", axis=1),
                              n("ConcatFromSequence", ["s"], ["y"], name="/cat", axis=1)],
                             inits=[arr("sz", [1, 1])]),
    "seq-split-axis": model([split_seq(axis=4)]),
    "seq-empty": model([n("SequenceEmpty", [], ["s"], name="/empty"),
                        n("ConcatFromSequence", ["s"], ["y"], name="/cat", axis=0)]),
    "seq-cat-axis": model([split_seq(), n("ConcatFromSequence", ["s"], ["y"], name="/cat", axis=3)]),
    "seq-cat-shapes": model([n("Transpose", ["x"], ["xt"], name="/t"),
                             n("SequenceConstruct", ["x", "xt"], ["s"], name="/construct"),
                             n("ConcatFromSequence", ["s"], ["y"], name="/cat", axis=0)]),
    "seq-as-tensor": model([split_seq(), n("Identity", ["s"], ["y"], name="/id")]),
    "seq-output": model([split_seq()]),
    "loop-cond-runtime": loop("trips", "c", inits=[arr("trips", 2)],
                              inputs=[vi("x"), vi("c", T.BOOL, [])]),
    "loop-cond-elements": loop("trips", "c", inits=[arr("trips", 2), arr("c", [True, False], bool)]),
    "loop-trips-elements": loop("trips", "", inits=[arr("trips", [2, 3])]),
    "loop-trips-runtime": loop("m", "", inputs=[vi("x"), vi("m", T.INT64, [])]),
    "loop-body-cond-runtime": loop("trips", "", inits=[arr("trips", 2)], body_graph=body(
        [n("ReduceSum", ["acc_in"], ["total"], keepdims=0),
         n("Greater", ["total", "zero_f"], ["cond_out"]),
         n("Add", ["acc_in", "x"], ["acc_out"])],
        [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []), vi("acc_in")],
        [untyped("cond_out"), untyped("acc_out")]),
        extra=[n("Constant", [], ["zero_f"], value=numpy_helper.from_array(np.array(0, np.float32)))]),
    "loop-body-ghost": loop("trips", "", inits=[arr("trips", 2)],
                            body_graph=counting_body(outputs=("cond_out", "ghost"))),
    "loop-scan-shape": loop("trips", "", inits=[arr("trips", 2)], outputs=("y", "scan"),
                            body_graph=counting_body(
                                extra_nodes=[n("Unsqueeze", ["i", "zero_1d"], ["i_1d"]),
                                             n("Add", ["i_1d", "one_1d"], ["end"]),
                                             n("Slice", ["x", "zero_1d", "end", "one_1d"], ["piece"])],
                                outputs=("cond_out", "acc_out", "piece")),
                            extra=[n("Constant", [], ["zero_1d"], value=arr("z", [0])),
                                   n("Constant", [], ["one_1d"], value=arr("o", [1]))]),
    "loop-body-arity": loop("trips", "", inits=[arr("trips", 2)], body_graph=body(
        [n("Identity", ["cond_in"], ["cond_out"])],
        [vi("i", T.INT64, []), vi("cond_in", T.BOOL, [])], [untyped("cond_out")])),
    "loop-no-body": loop("trips", "", inits=[arr("trips", 2)], body_graph=False),
    "loop-too-long": loop("trips", "", inits=[arr("trips", 5000)]),
    "loop-no-iteration": loop("trips", "", inits=[arr("trips", 0)], outputs=("y", "scan"),
                              body_graph=counting_body(outputs=("cond_out", "acc_out", "acc_out"))),
    "loop-carried-novalue": loop("trips", "", carried="mask", inits=[arr("trips", 2)],
                                 extra=[n("Dropout", ["c"], ["c2", "mask"], name="/drop"),
                                        n("Constant", [], ["c"], value=numpy_helper.from_array(
                                            np.ones((2, 3), np.float32)))][::-1]),
    "if": model([n("If", ["c"], ["y"], name="/branch",
                   then_branch=body([n("Identity", ["x"], ["t"])], [], [vi("t")]),
                   else_branch=body([n("Neg", ["x"], ["e"])], [], [vi("e")]))],
                inputs=[vi("x"), vi("c", T.BOOL, [])]),
    # --- elementwise, logic ---
    "pow-int": model([n("Pow", ["m", "x"], ["y"], name="/pow")],
                     inputs=[vi("x"), vi("m", T.INT64)]),
    "gelu-approximate": model([n("Gelu", ["x"], ["y"], name="/gelu", approximate="fast")], opset=20),
    "dropout-mask": model([n("Dropout", ["x"], ["y", "mask"], name="/drop")]),
    "cast-string": model([n("Cast", ["x"], ["y"], name="/cast", to=T.STRING)]),
    "types": model([n("Add", ["x", "m"], ["y"], name="/add")], inputs=[vi("x"), vi("m", T.INT64)]),
    "broadcast": model([n("Add", ["x", "z"], ["y"], name="/add")], inputs=[vi("x"), vi("z", shape=(4,))]),
    "where-broadcast": model([n("Where", ["c", "x", "z"], ["y"], name="/where")],
                             inputs=[vi("x"), vi("z", shape=(4,)), vi("c", T.BOOL)]),
    "trilu-rank-host": model([n("Trilu", ["v"], ["y"], name="/trilu")], inits=[arr("v", [1, 2, 3])]),
    "trilu-rank": model([n("Trilu", ["x1"], ["y"], name="/trilu")], inputs=[vi("x1", shape=(3,))]),
    "not-float": model([n("Softmax", ["m"], ["y"], name="/softmax")], inputs=[vi("m", T.INT64)]),
    "host-only": model([n("Mod", ["m", "three"], ["y"], name="/mod")],
                       inputs=[vi("m", T.INT64)], inits=[arr("three", 3)]),
    "float64-runtime": model([n("Constant", [], ["d"], value=numpy_helper.from_array(
        np.array(2.0, np.float64))), n("Add", ["x", "d"], ["y"], name="/add")]),
    "variadic-missing": model([n("Sum", ["x", "", "x"], ["y"], name="/sum")]),
    "takes-at-most": model([n("Identity", ["x", "x"], ["y"], name="/id")]),
    "input-novalue": model([n("Constant", [], ["c"], value=numpy_helper.from_array(np.ones((2, 3), np.float32))),
                            n("Dropout", ["c"], ["c2", "mask"], name="/drop"),
                            n("Identity", ["mask"], ["y"], name="/id")]),
    # --- contractions, normalisation, reductions ---
    "matmul-scalar": model([n("MatMul", ["s", "x"], ["y"], name="/matmul")],
                           inputs=[vi("x"), vi("s", shape=())]),
    "matmul-contract": model([n("MatMul", ["x", "x"], ["y"], name="/matmul")]),
    "matmul-batch": model([n("MatMul", ["a", "b"], ["y"], name="/matmul")],
                          inputs=[vi("a", shape=(2, 2, 3)), vi("b", shape=(3, 3, 4))]),
    "gemm-rank": model([n("Gemm", ["a", "x"], ["y"], name="/gemm")], inputs=[vi("x"), vi("a", shape=(2, 2, 3))]),
    "gemm-contract": model([n("Gemm", ["x", "x"], ["y"], name="/gemm")]),
    "gemm-c": model([n("Gemm", ["x", "w", "c"], ["y"], name="/gemm", transB=1)],
                    inputs=[vi("x"), vi("w"), vi("c", shape=(5,))]),
    "softmax-axis": model([n("Softmax", ["x"], ["y"], name="/softmax", axis=2)]),
    "layernorm-scale": model([n("LayerNormalization", ["x", "g"], ["y"], name="/ln")],
                             inputs=[vi("x"), vi("g", shape=(4,))]),
    "layernorm-axis": model([n("LayerNormalization", ["x", "g"], ["y"], name="/ln", axis=-3)],
                            inputs=[vi("x"), vi("g", shape=(3,))]),
    "reduce-axis": model([n("ReduceSum", ["x", "ax"], ["y"], name="/sum")], inits=[arr("ax", [3])]),
    "reduceprod-rank": model([n("ReduceProd", ["v"], ["y"], name="/prod")], inits=[arr("v", [[1, 2], [3, 4]])]),
    "cumsum-axis-scalar": model([n("CumSum", ["x", "ax"], ["y"], name="/cumsum")], inits=[arr("ax", [0, 1])]),
    "cumsum-axis-range": model([n("CumSum", ["x", "ax"], ["y"], name="/cumsum")], inits=[arr("ax", 5)]),
    # --- constants, shapes, data movement ---
    "constant-novalue": model([n("Constant", [], ["y"], name="/const")]),
    "range-delta-zero": model([n("Range", ["a", "b", "d"], ["y"], name="/range")],
                              inits=[arr("a", 0), arr("b", 4), arr("d", 0)]),
    "reshape-allowzero": model([n("Reshape", ["x", "s"], ["y"], name="/reshape", allowzero=1)],
                               inits=[arr("s", [0, 6])]),
    "reshape-two-inferred": model([n("Reshape", ["x", "s"], ["y"], name="/reshape")], inits=[arr("s", [-1, -1])]),
    "reshape-runtime-shape": model([n("Reshape", ["x", "s"], ["y"], name="/reshape")],
                                   inputs=[vi("x"), vi("s", T.INT64, (2,))]),
    "squeeze": model([n("Squeeze", ["x", "ax"], ["y"], name="/squeeze")], inits=[arr("ax", [0])]),
    "expand": model([n("Expand", ["x", "s"], ["y"], name="/expand")], inits=[arr("s", [4])]),
    "slice-axis": model([n("Slice", ["x", "st", "en", "ax"], ["y"], name="/slice")],
                        inits=[arr("st", [0]), arr("en", [1]), arr("ax", [5])]),
    "gather-index": model([n("Gather", ["x", "idx"], ["y"], name="/gather")], inits=[arr("idx", [7])]),
    "gather-float-indices": model([n("Gather", ["x", "f"], ["y"], name="/gather")],
                                  inputs=[vi("x"), vi("f", shape=(2,))]),
    "gather-elements-rank": model([n("GatherElements", ["x", "idx"], ["y"], name="/ge")], inits=[arr("idx", [1])]),
    "gather-elements-shape": model([n("GatherElements", ["x", "idx"], ["y"], name="/ge", axis=1)],
                                   inits=[arr("idx", [[0], [1], [2]])]),
    "gather-elements-index": model([n("GatherElements", ["x", "idx"], ["y"], name="/ge", axis=1)],
                                   inits=[arr("idx", [[0, 3], [1, 2]])]),
    "gathernd-index": model([n("GatherND", ["x", "idx"], ["y"], name="/gnd")],
                            inits=[arr("idx", [[1, 0], [0, 5]])]),
    "gathernd-index-host": model([n("GatherND", ["v", "idx"], ["y"], name="/gnd")],
                                 inits=[arr("v", [[1, 2], [3, 4]]), arr("idx", [[-3]])]),
    "gathernd-depth": model([n("GatherND", ["x", "idx"], ["y"], name="/gnd")],
                            inits=[arr("idx", [[0, 1, 2]])]),
    "gathernd-batch": model([n("GatherND", ["x", "idx"], ["y"], name="/gnd", batch_dims=1)],
                            inits=[arr("idx", [[0], [1], [2]])]),
    "gathernd-batch-dims": model([n("GatherND", ["x", "idx"], ["y"], name="/gnd", batch_dims=2)],
                                 inits=[arr("idx", [[0], [1]])]),
    "gathernd-float-indices": model([n("GatherND", ["x", "idx"], ["y"], name="/gnd")],
                                    inits=[arr("idx", [[0.0]], np.float32)]),
    "gathernd-runtime-indices": model([n("GatherND", ["x", "idx"], ["y"], name="/gnd")],
                                      inputs=[vi("x"), vi("idx", T.INT64, (2, 2))]),
    "isnan-int": model([n("IsNaN", ["m"], ["b"], name="/isnan"),
                        n("Cast", ["b"], ["y"], to=T.FLOAT)], inputs=[vi("m", T.INT64)]),
    "topk-runtime-k": model([n("TopK", ["x", "k"], ["v", "i"], name="/topk")],
                            inputs=[vi("x"), vi("k", T.INT64, (1,))]),
    "topk-k": model([n("Constant", [], ["v"], value=arr("v", [[1.0, 2.0]], np.float32)),
                     n("TopK", ["v", "k"], ["y", "i"], name="/topk")], inits=[arr("k", [3])]),
    "nonzero-runtime": model([n("NonZero", ["x"], ["y"], name="/nonzero")]),
    "nonzero-empty": model([n("NonZero", ["v"], ["y"], name="/nonzero")], inits=[arr("v", [0, 0])]),
    "onehot-depth": model([n("OneHot", ["m", "d", "oo"], ["y"], name="/onehot")],
                          inputs=[vi("m", T.INT64)], inits=[arr("d", 0), arr("oo", [0, 1])]),
    "scatter-runtime": model([n("ScatterElements", ["x", "i", "x"], ["y"], name="/scatter")],
                             inits=[arr("i", [[0, 1, 0], [1, 0, 1]])]),
    "scatter-index": model([n("ScatterElements", ["v", "i", "u"], ["y"], name="/scatter", axis=1)],
                           inits=[arr("v", [[1, 2]]), arr("i", [[2]]), arr("u", [[5]])]),
    "tile-rank": model([n("Tile", ["x", "r"], ["y"], name="/tile")], inits=[arr("r", [2])]),
    "tile-zero": model([n("Tile", ["x", "r"], ["y"], name="/tile")], inits=[arr("r", [0, 1])]),
    "tile-overflow": model([n("Tile", ["x", "r"], ["y"], name="/tile")], inits=[arr("r", [2 ** 62, 2 ** 62])]),
    "tile-runtime-repeats": model([n("Tile", ["x", "r"], ["y"], name="/tile")],
                                  inputs=[vi("x"), vi("r", T.INT64, (2,))]),
    "split-cover": model([n("Split", ["x", "sz"], ["a", "b"], name="/split", axis=1)],
                         inits=[arr("sz", [1, 1])]),
    "concat-axis": model([n("Concat", ["x", "x"], ["y"], name="/concat", axis=2)]),
    "concat-rank": model([n("Concat", ["x", "z"], ["y"], name="/concat", axis=0)],
                         inputs=[vi("x"), vi("z", shape=(3,))]),
    "reshape-count": model([n("Reshape", ["x", "s"], ["y"], name="/reshape")], inits=[arr("s", [5])]),
    "result-overflow": model([n("Expand", ["x", "s"], ["y"], name="/expand")],
                             inits=[arr("s", [2 ** 40, 2 ** 40, 1, 1])]),
    "split-num-outputs-opset17": model([n("Split", ["x"], ["a", "b"], name="/split", axis=1,
                                          num_outputs=2)]),
    "flatten-axis": model([n("Flatten", ["x"], ["y"], name="/flatten", axis=5)]),
    # --- the graph's boundary ---
    "input-sequence": model([n("ConcatFromSequence", ["s"], ["y"], name="/cat", axis=0)], inputs=[
        helper.make_value_info("s", helper.make_sequence_type_proto(
            helper.make_tensor_type_proto(T.FLOAT, [2, 3])))]),
    "input-no-shape": model([n("Neg", ["x"], ["y"], name="/neg")], inputs=[vi("x", shape=None)]),
    "input-zero-dim": model([n("Neg", ["x"], ["y"], name="/neg")], inputs=[vi("x", shape=(0, 3))]),
    "input-no-size": model([n("Neg", ["x"], ["y"], name="/neg")], inputs=[vi("x", shape=(None, 3))]),
    "input-uint8": model([n("Cast", ["x"], ["y"], name="/cast", to=T.FLOAT)], inputs=[vi("x", T.UINT8)]),
    "output-bool": model([n("Cast", ["x"], ["y"], name="/cast", to=T.BOOL)], outputs=[vi("y", T.BOOL)]),
    "output-shape": model([n("Neg", ["x"], ["y"], name="/neg")], outputs=[vi("y", shape=(3, 2))]),
    "output-novalue": model([n("Constant", [], ["c"], value=numpy_helper.from_array(np.ones((2, 3), np.float32))),
                             n("Dropout", ["c"], ["c2", "mask"], name="/drop")],
                            outputs=[untyped("mask")]),
    "output-undefined": model([n("Neg", ["x"], ["y"], name="/neg")], outputs=[untyped("z")]),
    "initializer-string": model([n("Identity", ["x"], ["y"], name="/id")],
                                inits=[helper.make_tensor("names", T.STRING, [1], [b"a"])]),
}


def special_cases(out):
    # No ir_version: what a cut-off file parses to.
    m = model([n("Neg", ["x"], ["y"])])
    m.ir_version = 0
    onnx.save(m, f"{out}/no-ir-version.onnx")
    # Only a custom domain's opset.
    m = model([n("Neg", ["x"], ["y"])])
    del m.opset_import[:]
    m.opset_import.append(helper.make_opsetid("com.example", 1))
    onnx.save(m, f"{out}/no-onnx-opset.onnx")
    # External data: a location with a NUL byte, and one that does not exist.
    for name, location in (("ext-nul", "w\0.bin"), ("ext-missing", "missing.bin")):
        t = T()
        t.name, t.data_type = "w", T.FLOAT
        t.dims.extend([3, 4])
        t.data_location = T.EXTERNAL
        entry = t.external_data.add()
        entry.key, entry.value = "location", location
        m = model([n("MatMul", ["x", "w"], ["y"], name="/matmul")], inits=[t])
        onnx.save(m, f"{out}/{name}.onnx")


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, m in CASES.items():
        onnx.save(m, f"{out}/{name}.onnx")
    special_cases(out)


main()
