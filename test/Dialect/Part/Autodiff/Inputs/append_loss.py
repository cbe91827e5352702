"""Turns a generated model's logits into a loss, by hand (until
part-append-loss exists): append_loss.py IN.mlir OUT.mlir

The function's single result, logits [..., C] (whatever its name), becomes
`part.softmax_cross_entropy` (mean) against a new last argument, the i32
labels [...] with role label, named "labels"; the result is the 0-d loss,
named "loss". Works on the text partition-import writes (one function).
"""
import re
import sys

text = open(sys.argv[1]).read()
sig = re.search(r"-> \(tensor<((?:\d+x)+)f32> \{part.name = \"[\w.]+\"\}\)",
                text)
assert sig, "no single f32 result"
dims = [int(d) for d in sig.group(1).rstrip("x").split("x")]
logits = "tensor<" + "x".join(map(str, dims)) + "xf32>"
labels = "tensor<" + "x".join(map(str, dims[:-1])) + "xi32>"
text = text.replace(sig.group(0), '-> (tensor<f32> {part.name = "loss"})')
args_end = text.index(") -> (tensor<f32>")
text = (text[:args_end] + f', %labels: {labels} {{part.name = "labels", '
        f'part.role = #part.role<label>}}' + text[args_end:])
ret = re.search(r"return (%\d+) : " + re.escape(logits), text)
assert ret, "no return of the logits"
text = text.replace(
    ret.group(0),
    f"%loss = part.softmax_cross_entropy {ret.group(1)}, %labels mean : "
    f"({logits}, {labels}) -> tensor<f32>\n    return %loss : tensor<f32>")
open(sys.argv[2], "w").write(text)
