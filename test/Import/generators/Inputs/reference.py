"""float64 numpy forward of a model made by `partition-import --model`.

usage: reference.py gpt HEADS WEIGHTS.safetensors TOKENS.npy OUT.npy
       reference.py llama HEADS WEIGHTS.safetensors TOKENS.npy OUT.npy
       reference.py mlp - WEIGHTS.safetensors X.npy OUT.npy

Written from the models' definitions (GPT-2: pre-LN blocks, tanh GELU, LM
head tied to wte; Llama: RMSNorm, rotary embeddings, grouped-query
attention, SwiGLU), reading every parameter by its name, so that it checks
the generated IR computes the model it claims to. Sizes come from the
weights' shapes; the number of (key/value) heads from HEADS and the shapes.
"""
import sys

import numpy as np

from safetensors_info import read


def layer_norm(x, g, b, eps=1e-5):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * g + b


def rms_norm(x, g, eps=1e-5):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * g


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def silu(x):
    return x / (1 + np.exp(-x))


def heads(x, n):
    """[B, S, n*D] -> [B, n, S, D]."""
    B, S, E = x.shape
    return x.reshape(B, S, n, E // n).transpose(0, 2, 1, 3)


def merge(x):
    B, H, S, D = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, S, H * D)


def causal_attention(q, k, v):
    """q [B, H, S, D]; k, v [B, K, S, D] with K dividing H."""
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    S = q.shape[2]
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
    s = np.where(np.tril(np.ones((S, S), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def rotate(x, cos, sin):
    half = x.shape[-1] // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos + rotated * sin


def gpt(w, tokens, H):
    x = w["wte"][tokens] + w["wpe"]
    i = 0
    while f"h.{i}.ln_1.weight" in w:
        p = lambda n: w[f"h.{i}.{n}"]
        lin = lambda v, n: v @ p(n + ".weight") + p(n + ".bias")
        h = layer_norm(x, p("ln_1.weight"), p("ln_1.bias"))
        q, k, v = (heads(lin(h, "attn." + c), H) for c in "qkv")
        x = x + lin(merge(causal_attention(q, k, v)), "attn.proj")
        h = layer_norm(x, p("ln_2.weight"), p("ln_2.bias"))
        x = x + lin(gelu_tanh(lin(h, "mlp.fc")), "mlp.proj")
        i += 1
    x = layer_norm(x, w["ln_f.weight"], w["ln_f.bias"])
    return x @ w["wte"].T


def rope(seq, dim):
    """Llama's rotary tables: base 10000, rotate-half layout."""
    inv = 10000.0 ** (-np.arange(0, dim // 2) * 2.0 / dim)
    angle = np.arange(seq)[:, None] * inv[None, :]
    angle = np.concatenate([angle, angle], axis=1)
    return np.cos(angle), np.sin(angle)


def llama(w, tokens, H):
    x = w["embed_tokens.weight"][tokens]
    D = w["layers.0.self_attn.q_proj.weight"].shape[1] // H
    cos, sin = rope(tokens.shape[1], D)
    i = 0
    while f"layers.{i}.input_layernorm.weight" in w:
        p = lambda n: w[f"layers.{i}.{n}.weight"]
        h = rms_norm(x, p("input_layernorm"))
        q = rotate(heads(h @ p("self_attn.q_proj"), H), cos, sin)
        K = p("self_attn.k_proj").shape[1] // D
        k = rotate(heads(h @ p("self_attn.k_proj"), K), cos, sin)
        v = heads(h @ p("self_attn.v_proj"), K)
        x = x + merge(causal_attention(q, k, v)) @ p("self_attn.o_proj")
        h = rms_norm(x, p("post_attention_layernorm"))
        x = x + (silu(h @ p("mlp.gate_proj")) * (h @ p("mlp.up_proj"))) @ p("mlp.down_proj")
        i += 1
    return rms_norm(x, w["norm.weight"]) @ w["lm_head.weight"]


def mlp(w, x):
    i = 0
    while f"layers.{i}.weight" in w:
        x = x @ w[f"layers.{i}.weight"] + w[f"layers.{i}.bias"]
        i += 1
        if f"layers.{i}.weight" in w:
            x = np.maximum(x, 0)
    return x


def main():
    family, H, weights, inp, out = sys.argv[1:6]
    w = {name: a.astype(np.float64) for name, _, a in read(weights)}
    x = np.load(inp)
    if family == "gpt":
        y = gpt(w, x, int(H))
    elif family == "llama":
        y = llama(w, x, int(H))
    else:
        y = mlp(w, x.astype(np.float64))
    np.save(out, y)


if __name__ == "__main__":
    main()
