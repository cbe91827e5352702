"""Writes tied.onnx: one embedding table used twice (lookup and, transposed,
the output head), and a weight deduplicated through Identity, as exporters
write them; plus tied-weights.npz with its initializers.

usage: make_shared.py OUTDIR
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper
import onnx


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(3)
    inits = {
        "wte": rng.standard_normal((16, 8)).astype(np.float32),
        "proj": rng.standard_normal((8, 8)).astype(np.float32),
    }
    nodes = [
        helper.make_node("Gather", ["wte", "ids"], ["emb"], name="/wte/Gather"),
        helper.make_node("MatMul", ["emb", "proj"], ["h1"], name="/l0/MatMul"),
        # The exporter's deduplication: a second use of an equal initializer.
        helper.make_node("Identity", ["proj"], ["l1.proj"], name="/l1/Identity"),
        helper.make_node("MatMul", ["h1", "l1.proj"], ["h2"], name="/l1/MatMul"),
        # The tied head: logits = h2 @ wte^T.
        helper.make_node("Transpose", ["wte"], ["wte_t"], name="/head/Transpose",
                         perm=[1, 0]),
        helper.make_node("MatMul", ["h2", "wte_t"], ["logits"], name="/head/MatMul"),
    ]
    graph = helper.make_graph(
        nodes, "tied",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", 4])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 4, 16])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    os.makedirs(out, exist_ok=True)
    onnx.save(model, os.path.join(out, "tied.onnx"))
    np.savez(os.path.join(out, "tied-weights.npz"), **inits)
    ids = rng.integers(0, 16, size=(2, 4)).astype(np.int64)
    np.save(os.path.join(out, "ids.npy"), ids)
    w = {k: v.astype(np.float64) for k, v in inits.items()}
    h = w["wte"][ids] @ w["proj"] @ w["proj"]
    np.save(os.path.join(out, "expected.npy"), h @ w["wte"].T)


if __name__ == "__main__":
    main()
