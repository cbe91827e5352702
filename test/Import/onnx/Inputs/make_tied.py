"""Writes small models with tied and folded parameters, as today's
exporters write them (see lib/Import/TiedParameters.cpp):

  legacy.onnx        an embedding 'wte' [6, 4] (a Gather) and its transpose
                     folded into 'onnx::MatMul_9' [4, 6] (the head), as the
                     TorchScript exporter writes a tied head
  legacy-near.onnx   the same, with one bit of the folded copy flipped: not
                     the transpose, so two parameters
  legacy-ones.onnx   the same with every element 1: any transpose of that
                     shape matches, so nothing is tied
  dynamo.onnx        torch.export's metadata: both uses read the placeholder
                     p_lm_head_weight, the embedding's own module 'wte'
                     reads it, and 'wte.weight' is listed but unread
  dynamo-near.onnx   the same with the folded copy one bit off
  folded.onnx        'norm.weight' listed but unread, its module 'norm'
                     using add_3 (1 + weight, folded by the optimizer)

usage: make_tied.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TIED_SIGNATURE = """
# inputs
p_wte_weight: PARAMETER target='wte.weight'
p_lm_head_weight: PARAMETER target='lm_head.weight'
ids: USER_INPUT
"""

FOLDED_SIGNATURE = """
# inputs
p_norm_weight: PARAMETER target='norm.weight'
x: USER_INPUT
"""


def node(op, ins, outs, fx=None, scopes=None):
    n = helper.make_node(op, ins, outs, name="node_" + outs[0])
    props = {}
    if fx:
        props["pkg.torch.onnx.fx_node"] = fx
    if scopes:
        props["pkg.torch.onnx.name_scopes"] = repr(scopes)
    if props:
        helper.set_metadata_props(n, props)
    return n


def save(out, name, nodes, inputs, outputs, inits, signature=None):
    graph = helper.make_graph(
        nodes, name, inputs, outputs,
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    if signature:
        helper.set_metadata_props(graph, {
            "pkg.torch.export.ExportedProgram.graph_signature": signature})
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 10
    onnx.save(model, os.path.join(out, name + ".onnx"))


def flip_one_bit(a):
    a = a.copy()
    a.view(np.uint32)[1, 2] ^= 1
    return a


def tied(out, name, wte, head, names, metadata):
    """ids -> Gather(table) -> MatMul(head) -> logits."""
    table, folded = names
    fx_gather = fx_head = None
    if metadata:
        fx_gather = ("%embedding : = call_function[target=torch.ops.aten."
                     "embedding.default](args = (%p_lm_head_weight, %ids))")
        fx_head = ("%linear : = call_function[target=torch.ops.aten.linear."
                   "default](args = (%embedding, %p_lm_head_weight))")
    nodes = [
        node("Gather", [table, "ids"], ["h"], fx_gather,
             ["", "wte", "embedding"] if metadata else None),
        node("MatMul", ["h", folded], ["logits"], fx_head,
             ["", "lm_head", "linear"] if metadata else None),
    ]
    save(out, name, nodes,
         [helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 3])],
         [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                        [2, 3, 6])],
         {table: wte, folded: head},
         TIED_SIGNATURE if metadata else None)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(7)
    wte = rng.standard_normal((6, 4)).astype(np.float32)
    legacy = ("wte", "onnx::MatMul_9")
    tied(out, "legacy", wte, wte.T.copy(), legacy, False)
    tied(out, "legacy-near", wte, flip_one_bit(wte.T.copy()), legacy, False)
    ones = np.ones((6, 4), np.float32)
    tied(out, "legacy-ones", ones, ones.T.copy(), legacy, False)
    dynamo = ("lm_head.weight", "val_5")
    tied(out, "dynamo", wte, wte.T.copy(), dynamo, True)
    tied(out, "dynamo-near", wte, flip_one_bit(wte.T.copy()), dynamo, True)
    weight = rng.standard_normal(4).astype(np.float32)
    save(out, "folded",
         [node("Mul", ["x", "add_3"], ["y"],
               "%mul : = call_function[target=torch.ops.aten.mul.Tensor]"
               "(args = (%x, %add_3))", ["", "norm", "mul"])],
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
         {"add_3": np.float32(1) + weight}, FOLDED_SIGNATURE)


if __name__ == "__main__":
    main()
