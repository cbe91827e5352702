"""Rewrites GPT-2's fused c_attn in an export without constant folding
into the other forms exporters write for it:

  fused_forms.py IN.onnx OUT.onnx

torch.onnx.export with do_constant_folding=False writes c_attn as a Gemm on
[B * S, in] followed by a Reshape to [B, S, 3 E] and a Split whose sizes
are a Constant node. The copy written to OUT.onnx computes the same: each
c_attn Gemm becomes MatMul + Add (how addmm is exported when the Gemm's
conditions are not known to hold), and each Split's sizes become an
initializer instead of a Constant node's output.
"""
import sys

import onnx
from onnx import helper, numpy_helper


def main():
    model = onnx.load(sys.argv[1])
    graph = model.graph
    constants = {n.output[0]: n for n in graph.node if n.op_type == "Constant"}
    nodes, rewritten = [], {"Gemm": 0, "Split": 0}
    for node in graph.node:
        if node.op_type == "Gemm" and "/attn/c_attn/" in node.name:
            assert all(a.name not in ("transA", "transB") or a.i == 0
                       for a in node.attribute), node.name
            product = node.output[0] + "/product"
            nodes.append(helper.make_node("MatMul", node.input[:2], [product],
                                          name=node.name + "/MatMul"))
            nodes.append(helper.make_node("Add", [product, node.input[2]],
                                          node.output, name=node.name + "/Add"))
            rewritten["Gemm"] += 1
            continue
        if node.op_type == "Split" and node.input[1] in constants:
            value = constants[node.input[1]].attribute[0].t
            name = node.name + "/sizes"
            graph.initializer.append(
                numpy_helper.from_array(numpy_helper.to_array(value), name))
            node.input[1] = name
            rewritten["Split"] += 1
        nodes.append(node)
    if not rewritten["Gemm"] or not rewritten["Split"]:
        sys.exit(f"fused_forms.py: nothing to rewrite ({rewritten})")
    used = {name for node in nodes for name in node.input}
    del graph.node[:]
    graph.node.extend(n for n in nodes
                      if n.op_type != "Constant" or n.output[0] in used)
    onnx.save(model, sys.argv[2])


if __name__ == "__main__":
    main()
