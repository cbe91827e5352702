"""GEMM-bound transformer forward on one CPU rank: partition vs PyTorch.

Builds an L-layer GPT-2 block stack (pre-LN, causal multi-head attention,
tanh-GELU MLP) as a one-device part program, lowers it with
partition-translate, runs it with partition-run (one rank, one BLAS thread),
runs the same model with the same weights in PyTorch on one thread, checks
that the outputs agree, and prints the time ratio.

usage: python3 bench/gpt_forward_cpu.py [--build build] [--layers 2]
           [--batch 4] [--seq 256] [--hidden 768] [--heads 12] [--steps 5]

Needs numpy and torch (Debian: python3-numpy, python3-torch).
"""
import os

# One BLAS thread for both sides, set before numpy or torch load OpenBLAS
# (torch.set_num_threads does not limit OpenBLAS's own threads).
os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["OMP_NUM_THREADS"] = "1"

import argparse
import json
import re
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np


def tensor(shape):
    return "tensor<" + "x".join(str(s) for s in shape) + "xf32>"


def program(L, B, S, E, H, F, spmd=True):
    """The part IR of the stack: the per-device program of a 1-device mesh,
    or (spmd=False) an unannotated global program to be partitioned."""
    D = E // H
    args, body = [], []
    counter = [0]

    def arg(name, shape, role="parameter"):
        args.append(f'%{name}: {tensor(shape)} {{part.name = "{name}", '
                    f'part.role = #part.role<{role}>}}')
        return f"%{name}", shape

    def op(text, shape):
        counter[0] += 1
        name = f"%v{counter[0]}"
        body.append(f"  {name} = {text}")
        return name, shape

    def linear(x, w, b):
        out = x[1][:-1] + [w[1][1]]
        y = op(f"part.matmul {x[0]}, {w[0]} : ({tensor(x[1])}, {tensor(w[1])}) "
               f"-> {tensor(out)}", out)
        return op(f"part.add {y[0]}, {b[0]} : ({tensor(out)}, {tensor(b[1])}) "
                  f"-> {tensor(out)}", out)

    def layer_norm(x, g, b):
        return op(f"part.layer_norm {x[0]}, {g[0]}, {b[0]} : ({tensor(x[1])}, "
                  f"{tensor(g[1])}, {tensor(b[1])}) -> {tensor(x[1])}", x[1])

    def add(a, b):
        return op(f"part.add {a[0]}, {b[0]} : ({tensor(a[1])}, {tensor(b[1])}) "
                  f"-> {tensor(a[1])}", a[1])

    def to_heads(x):
        r = op(f"part.reshape {x[0]} : {tensor(x[1])} -> {tensor([B, S, H, D])}",
               [B, S, H, D])
        return op(f"part.transpose {r[0]} [0, 2, 1, 3] : {tensor(r[1])} -> "
                  f"{tensor([B, H, S, D])}", [B, H, S, D])

    x = arg("x", [B, S, E], "input")
    for l in range(L):
        p = lambda n, s: arg(f"h{l}_{n}", s)
        g1, b1 = p("ln1_g", [E]), p("ln1_b", [E])
        wq, bq, wk, bk = p("wq", [E, E]), p("bq", [E]), p("wk", [E, E]), p("bk", [E])
        wv, bv, wo, bo = p("wv", [E, E]), p("bv", [E]), p("wo", [E, E]), p("bo", [E])
        g2, b2 = p("ln2_g", [E]), p("ln2_b", [E])
        w1, c1, w2, c2 = p("w1", [E, F]), p("b1", [F]), p("w2", [F, E]), p("b2", [E])
        h = layer_norm(x, g1, b1)
        q, k, v = (to_heads(linear(h, w, b)) for w, b in ((wq, bq), (wk, bk), (wv, bv)))
        a = op(f"part.attention {q[0]}, {k[0]}, {v[0]} causal : ({tensor(q[1])}, "
               f"{tensor(k[1])}, {tensor(v[1])}) -> {tensor(q[1])}", q[1])
        t = op(f"part.transpose {a[0]} [0, 2, 1, 3] : {tensor(a[1])} -> "
               f"{tensor([B, S, H, D])}", [B, S, H, D])
        m = op(f"part.reshape {t[0]} : {tensor(t[1])} -> {tensor([B, S, E])}",
               [B, S, E])
        x = add(x, linear(m, wo, bo))
        h = layer_norm(x, g2, b2)
        h = linear(h, w1, c1)
        h = op(f"part.gelu {h[0]} tanh : {tensor(h[1])}", h[1])
        x = add(x, linear(h, w2, c2))
    text = ['part.mesh @mesh = <["dp"=1]>', ""] if spmd else []
    text += ["func.func @gpt(\n    " + ",\n    ".join(args) +
             f")\n    -> ({tensor(x[1])} {{part.name = \"y\"}})" +
             (" attributes {part.spmd = @mesh}" if spmd else "") + " {"]
    text += body
    text += [f"  return {x[0]} : {tensor(x[1])}", "}"]
    return "\n".join(text) + "\n"


def weights(L, E, F, rng):
    w = {}
    for l in range(L):
        for n, s in [("ln1_g", [E]), ("ln1_b", [E]), ("wq", [E, E]), ("bq", [E]),
                     ("wk", [E, E]), ("bk", [E]), ("wv", [E, E]), ("bv", [E]),
                     ("wo", [E, E]), ("bo", [E]), ("ln2_g", [E]), ("ln2_b", [E]),
                     ("w1", [E, F]), ("b1", [F]), ("w2", [F, E]), ("b2", [E])]:
            if n.endswith("_g"):
                a = 1 + 0.1 * rng.standard_normal(s)
            elif len(s) == 1:
                a = 0.02 * rng.standard_normal(s)
            else:
                a = rng.standard_normal(s) / np.sqrt(s[0])
            w[f"h{l}_{n}"] = a.astype(np.float32)
    return w


def save_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, a in tensors.items():
        data = np.ascontiguousarray(a).tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def torch_forward(x, w, L, H, steps):
    import torch
    torch.set_num_threads(1)
    t = {k: torch.from_numpy(v) for k, v in w.items()}
    B, S, E = x.shape
    D = E // H
    mask = torch.full((S, S), float("-inf")).triu(1)

    def run(x):
        for l in range(L):
            p = lambda n: t[f"h{l}_{n}"]
            h = torch.nn.functional.layer_norm(x, (E,), p("ln1_g"), p("ln1_b"))
            q, k, v = (torch.addmm(p("b" + c), h.reshape(-1, E), p("w" + c))
                       .reshape(B, S, H, D).transpose(1, 2) for c in "qkv")
            s = torch.matmul(q, k.transpose(-1, -2)) / np.sqrt(D) + mask
            a = torch.matmul(torch.softmax(s, -1), v).transpose(1, 2)
            x = x + torch.addmm(p("bo"), a.reshape(-1, E), p("wo")).reshape(B, S, E)
            h = torch.nn.functional.layer_norm(x, (E,), p("ln2_g"), p("ln2_b"))
            h = torch.addmm(p("b1"), h.reshape(-1, E), p("w1"))
            h = torch.nn.functional.gelu(h, approximate="tanh")
            x = x + torch.addmm(p("b2"), h, p("w2")).reshape(B, S, E)
        return x

    with torch.inference_mode():
        xt = torch.from_numpy(x)
        out = run(xt)  # warm-up
        start = time.perf_counter()
        for _ in range(steps):
            out = run(xt)
        return out.numpy(), (time.perf_counter() - start) / steps * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--hidden", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--steps", type=int, default=5)
    o = ap.parse_args()
    L, B, S, E, H = o.layers, o.batch, o.seq, o.hidden, o.heads
    F = 4 * E
    rng = np.random.default_rng(0)
    w = weights(L, E, F, rng)
    x = rng.standard_normal((B, S, E)).astype(np.float32)
    with tempfile.TemporaryDirectory() as d:
        with open(f"{d}/gpt.mlir", "w") as f:
            f.write(program(L, B, S, E, H, F))
        save_safetensors(f"{d}/w.safetensors", w)
        np.save(f"{d}/x.npy", x)
        os.makedirs(f"{d}/out")
        subprocess.run([f"{o.build}/bin/partition-translate", "--part-to-plan",
                        f"{d}/gpt.mlir", "-o", f"{d}/gpt.plan"], check=True)
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
        run = subprocess.run(
            [f"{o.build}/bin/partition-run", f"{d}/gpt.plan", "--weights",
             f"{d}/w.safetensors", "--input", f"x={d}/x.npy", "--output-dir",
             f"{d}/out", "--steps", str(o.steps)],
            check=True, capture_output=True, text=True, env=env)
        ours_ms = float(re.search(r"([0-9.]+) ms per step", run.stdout).group(1))
        ours = np.load(f"{d}/out/y.npy")
    theirs, torch_ms = torch_forward(x, w, L, H, o.steps)
    err = float(np.max(np.abs(ours - theirs)))
    flops = L * (2 * B * S * (4 * E * E + 2 * E * F) + 4 * B * S * S * E)
    print(f"model: {L} layers, batch {B}, seq {S}, hidden {E}, heads {H}, "
          f"ffn {F}; {flops / 1e9:.1f} GFLOP per forward")
    print(f"partition-run (1 rank, 1 BLAS thread): {ours_ms:.1f} ms per step "
          f"({flops / ours_ms / 1e6:.1f} GFLOP/s)")
    print(f"PyTorch {__import__('torch').__version__} (1 thread): "
          f"{torch_ms:.1f} ms per step ({flops / torch_ms / 1e6:.1f} GFLOP/s)")
    print(f"ratio partition / PyTorch: {ours_ms / torch_ms:.2f} "
          f"(target <= 1.2); max |difference| {err:.2e}")
    return 0 if err < 1e-2 else 1


if __name__ == "__main__":
    sys.exit(main())
