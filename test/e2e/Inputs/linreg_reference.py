"""Data and a float64 numpy reference for test/e2e/optimizer.mlir.

usage: linreg_reference.py OUTDIR KIND STEPS [--momentum M] [--weight-decay WD]
                           [--clip C] [--warmup W] [--lr LR]
                          [--cosine T --min-lr L]

Writes x.npy, y.npy, weights.safetensors (w, b) and the reference per-step
losses (losses.txt, one per line, the loss of the parameters before each
update) and final parameters (w.npy, b.npy) after STEPS updates with SGD or
AdamW as PyTorch defines them.
"""
import argparse
import math
import json
import struct

import numpy as np


def save_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, a in tensors.items():
        raw = np.ascontiguousarray(a, np.float32).tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("kind", choices=["sgd", "adamw"])
    ap.add_argument("steps", type=int)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--momentum", type=float, default=0.0)
    ap.add_argument("--weight-decay", type=float, default=None)
    ap.add_argument("--clip", type=float, default=0.0)
    ap.add_argument("--warmup", type=int, default=0)
    ap.add_argument("--cosine", type=int, default=0,
                    help="cosine decay reaching --min-lr at step T")
    ap.add_argument("--min-lr", type=float, default=0.0)
    o = ap.parse_args()
    rng = np.random.default_rng(11)
    x = rng.standard_normal((8, 4)).astype(np.float32)
    y = rng.standard_normal((8, 3)).astype(np.float32)
    w = (0.5 * rng.standard_normal((4, 3))).astype(np.float32)
    b = (0.5 * rng.standard_normal(3)).astype(np.float32)
    np.save(f"{o.out}/x.npy", x)
    np.save(f"{o.out}/y.npy", y)
    save_safetensors(f"{o.out}/weights.safetensors", {"w": w, "b": b})

    wd = o.weight_decay if o.weight_decay is not None else (0.01 if o.kind == "adamw" else 0.0)
    p = {"w": w.astype(np.float64), "b": b.astype(np.float64)}
    state = {k: (np.zeros_like(v), np.zeros_like(v)) for k, v in p.items()}
    X, Y = x.astype(np.float64), y.astype(np.float64)
    losses = []
    for t in range(1, o.steps + 1):
        d = X @ p["w"] + p["b"] - Y
        losses.append((d * d).mean())
        g = d * (2.0 / d.size)
        grads = {"w": X.T @ g, "b": g.sum(axis=0)}
        if o.clip > 0:
            norm = np.sqrt(sum((v * v).sum() for v in grads.values()))
            grads = {k: v * min(1.0, o.clip / (norm + 1e-6)) for k, v in grads.items()}
        lr = o.lr
        if o.cosine:  # Megatron's cosine decay after the warm-up
            p_ = min(1.0, max(0.0, (t - o.warmup) / (o.cosine - o.warmup)))
            lr = o.min_lr + (o.lr - o.min_lr) * 0.5 * (1 + math.cos(math.pi * p_))
        lr = lr * (min(1.0, t / o.warmup) if o.warmup > 0 else 1.0)
        for k in p:
            gk = grads[k]
            if o.kind == "sgd":
                if wd:
                    gk = gk + wd * p[k]
                if o.momentum:
                    buf = o.momentum * state[k][0] + gk
                    state[k] = (buf, state[k][1])
                    gk = buf
                p[k] = p[k] - lr * gk
            else:
                m = 0.9 * state[k][0] + 0.1 * gk
                v = 0.999 * state[k][1] + 0.001 * gk * gk
                state[k] = (m, v)
                mhat, vhat = m / (1 - 0.9 ** t), v / (1 - 0.999 ** t)
                p[k] = p[k] * (1 - lr * wd) - lr * mhat / (np.sqrt(vhat) + 1e-8)
    with open(f"{o.out}/losses.txt", "w") as f:
        f.write("".join(f"{l:.9g}\n" for l in losses))
    np.save(f"{o.out}/w.npy", p["w"])
    np.save(f"{o.out}/b.npy", p["b"])


if __name__ == "__main__":
    main()
