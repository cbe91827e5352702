"""float64 numpy forward of test/Examples/gpt2.mlir with the weights that
`partition-run --random-weights SEED --random-scale SCALE` makes.

usage: gpt2_reference.py SEED SCALE TOKENS.npy LABELS.npy OUT.npy
Writes the mean cross-entropy loss as a 0-d float64 array.
"""
import sys

import numpy as np

M64 = (1 << 64) - 1


def random_weights(seed, scale, name, shape):
    """The formula of partition-run's RandomSource, element by element."""
    key = (seed * 0x9E3779B97F4A7C15) & M64
    for c in name.encode():
        key = ((key ^ c) * 0x100000001B3) & M64
    n = int(np.prod(shape))
    x = (np.uint64(key) + np.arange(n, dtype=np.uint64)) + np.uint64(0x9E3779B97F4A7C15)
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    u = (x >> np.uint64(40)).astype(np.float64) / float(1 << 24)
    return ((u * 2 - 1) * scale).reshape(shape)


def layer_norm(x, g, b, eps=1e-5):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * g + b


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def main():
    seed, scale = int(sys.argv[1]), float(sys.argv[2])
    tokens, labels = np.load(sys.argv[3]), np.load(sys.argv[4])
    B, S, E, H, V, L = 8, 16, 64, 4, 512, 2
    D = E // H
    arg = iter(range(2, 2 + 2 + 16 * L + 2))
    w = lambda shape: random_weights(seed, scale, f"arg{next(arg)}", shape)
    wte, wpe = w([V, E]), w([S, E])
    x = wte[tokens] + wpe
    for _ in range(L):
        g1, b1 = w([E]), w([E])
        wq, bq, wk, bk, wv, bv = w([E, E]), w([E]), w([E, E]), w([E]), w([E, E]), w([E])
        wo, bo = w([E, E]), w([E])
        g2, b2 = w([E]), w([E])
        w1, c1, w2, c2 = w([E, 4 * E]), w([4 * E]), w([4 * E, E]), w([E])
        h = layer_norm(x, g1, b1)
        q, k, v = ((h @ wm + bm).reshape(B, S, H, D).transpose(0, 2, 1, 3)
                   for wm, bm in ((wq, bq), (wk, bk), (wv, bv)))
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(D)
        s = np.where(np.tril(np.ones((S, S), bool)), s, -np.inf)
        p = np.exp(s - s.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        a = (p @ v).transpose(0, 2, 1, 3).reshape(B, S, E)
        x = x + a @ wo + bo
        h = layer_norm(x, g2, b2)
        x = x + gelu_tanh(h @ w1 + c1) @ w2 + c2
    x = layer_norm(x, w([E]), w([E]))
    logits = x @ wte.T
    m = logits.max(-1, keepdims=True)
    lse = (m + np.log(np.exp(logits - m).sum(-1, keepdims=True)))[..., 0]
    picked = np.take_along_axis(logits, labels[..., None].astype(np.int64), -1)[..., 0]
    np.save(sys.argv[5], np.array((lse - picked).mean()))


if __name__ == "__main__":
    main()
