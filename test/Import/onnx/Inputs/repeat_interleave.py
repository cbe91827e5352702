"""Exports grouped-query attention's key/value repetition as torch writes it,
and torch's result: repeat_interleave.py OUTDIR

torch.repeat_interleave(k, 2, dim=1) over the key/value heads, with the
batch, head and sequence dimensions dynamic, exports at opset 17 as a Loop
over a sequence (SplitToSequence, SequenceEmpty, a body of SequenceAt /
SequenceInsert, ConcatFromSequence). Writes OUTDIR/gqa.onnx, the inputs
OUTDIR/{q,k,v}.npy and torch's output OUTDIR/ref.npy (batch 2, 4 query
heads, 2 key/value heads, 5 positions, head size 8).
"""
import os
import sys
import warnings

import numpy as np
import torch

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
warnings.filterwarnings("ignore")


def repeat_heads(x, groups):
    # torch 1.13 exports repeat_interleave over a dimension followed by more
    # than one other with a wrong Reshape (onnxruntime rejects the model
    # too), so the heads are repeated with [position, head size] flattened.
    b, h, s, d = x.shape
    x = torch.repeat_interleave(x.flatten(2), groups, dim=1)
    return x.view(b, h * groups, s, d)


class Gqa(torch.nn.Module):
    def forward(self, q, k, v):
        k, v = repeat_heads(k, 2), repeat_heads(v, 2)
        scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
        return torch.softmax(scores, dim=-1) @ v


torch.manual_seed(15)
q = torch.randn(2, 4, 5, 8)
k = torch.randn(2, 2, 5, 8)
v = torch.randn(2, 2, 5, 8)
dims = {0: "batch", 1: "kv_heads", 2: "seq"}
torch.onnx.export(Gqa(), (q, k, v), f"{out}/gqa.onnx", opset_version=17,
                  input_names=["q", "k", "v"], output_names=["y"],
                  dynamic_axes={"q": {0: "batch", 1: "heads", 2: "seq"},
                                "k": dims, "v": dims,
                                "y": {0: "batch", 1: "heads", 2: "seq"}})
for name, value in {"q": q, "k": k, "v": v}.items():
    np.save(f"{out}/{name}.npy", value.numpy())
with torch.no_grad():
    np.save(f"{out}/ref.npy", Gqa()(q, k, v).numpy())
