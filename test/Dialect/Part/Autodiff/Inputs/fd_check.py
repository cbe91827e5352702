"""Finite-difference checks of every part-autodiff rule, run on the CPU backend.

usage: fd_check.py --bin BUILD/bin --work DIR [--only NAME,...] [--list]

For each case below, a tiny global function

    loss = reduce_sum(op(params..., inputs...) * w)

is written with the op's float operands as `parameter` arguments (random,
f32, away from kinks), its integer operands (indices, labels, conditions) and
the random weights `w` as `input` arguments; it is differentiated and lowered
by

    partition-opt f.mlir --part-autodiff --part-spmd="mesh=dp:1"
      | partition-translate --part-to-plan -o f.plan
    partition-run f.plan --backend cpu --weights p.safetensors --input ...

and each gradient the runtime writes (grad.<param>.npy) is compared with
central finite differences of a float64 numpy implementation of the op,
(L(x + h e_i) - L(x - h e_i)) / 2h with h = 1e-3, taken element by element.
Cases marked `expect` check a convention where the derivative does not
exist (ties of max, min and reduce_max split the cotangent evenly) against
the gradient that convention gives, computed in numpy.

Tolerance: |grad - fd| <= 2e-4 * s + 1e-3 * |fd|, s = max(1, max |fd|) per
gradient. The finite difference itself is exact up to its truncation error
h^2 / 6 * |L'''|, below 2e-6 for these inputs (|L'''| < 10: values of order
1, weights N(0, 1)), and float64 rounding ~1e-13 / h. The runtime's gradient
is computed in f32 (u = 6e-8): sums of at most 64 products, so n u ~ 4e-6
relative to the sum of magnitudes, times the cancellation of composite rules
(layer norm's dx = r (g - mean g - xhat mean(g xhat)) loses up to two
digits), which stays under 1e-4 of the gradient's scale; f16 casts round to
2^-11 = 4.9e-4 relative, within the 1e-3 relative term. Measured: at most
1.6e-6 s outside the f16 cast case (7.4e-4, its rounding). A wrong rule is
off by O(s): tanh's derivative with the wrong sign failed with an error of
2.9 (s = 2.9), attention's backward without its causal mask with errors of
1 to 3 in both causal cases.

Prints one line per gradient with its worst error, and exits non-zero if any
gradient is outside the tolerance or any tool fails.
"""
import argparse
import json
import math
import os
import re
import struct
import subprocess
import sys
import zlib

import numpy as np

H = 1e-3
ATOL = 2e-4
RTOL = 1e-3

rng = np.random.default_rng(2026)


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------

def normal(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def positive(*shape, low=0.5, high=2.0):
    return rng.uniform(low, high, shape).astype(np.float32)


def away(*shape, margin=0.1, scale=1.0):
    """Normal values at least `margin` from 0 (for relu)."""
    x = rng.standard_normal(shape) * scale
    x = np.where(np.abs(x) < margin, np.sign(x + 1e-9) * margin + x, x)
    return x.astype(np.float32)


def apart(shape_a, shape_b, margin=0.1):
    """Two arrays whose broadcast elements differ by at least `margin`."""
    a = rng.standard_normal(shape_a).astype(np.float64)
    b = rng.standard_normal(shape_b).astype(np.float64)
    while np.min(np.abs(a - b)) < margin:
        a = rng.standard_normal(shape_a)
        b = rng.standard_normal(shape_b)
    return a.astype(np.float32), b.astype(np.float32)


def distinct(*shape, gap=0.05):
    """Values whose any two differ by at least `gap` (unique maxima)."""
    n = int(np.prod(shape))
    v = rng.permutation(n) * gap + rng.uniform(0, gap / 4, n) - n * gap / 2
    return v.reshape(shape).astype(np.float32)


# ---------------------------------------------------------------------------
# numpy references (float64)
# ---------------------------------------------------------------------------

erf = np.vectorize(math.erf)


def softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def mm(a, b, ta=False, tb=False):
    if ta:
        a = np.swapaxes(a, -1, -2)
    if tb:
        b = np.swapaxes(b, -1, -2)
    return a @ b


def layer_norm(x, g, b=None, eps=1e-5):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    y = (x - m) / np.sqrt(v + eps) * g
    return y if b is None else y + b


def rms_norm(x, g, eps=1e-5):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * g


def rotary(x, cos, sin):
    half = x.shape[-1] // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos + rotated * sin


def attention(q, k, v, causal=False, scale=None, window=0, qpos=None,
              kpos=None):
    """Query i sees key j where kpos[j] <= qpos[i] (within the window);
    without positions they are the row and column indices."""
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    s = q @ np.swapaxes(k, -1, -2) * (scale or 1 / np.sqrt(q.shape[-1]))
    if causal:
        qp = np.arange(q.shape[2]) if qpos is None else np.asarray(qpos)
        kp = np.arange(k.shape[2]) if kpos is None else np.asarray(kpos)
        distance = qp[:, None] - kp[None, :]
        kept = distance >= 0
        if window:
            kept &= distance < window
        s = np.where(kept, s, -np.inf)
    return softmax(s, -1) @ v


def cross_entropy(logits, labels, reduction):
    m = logits.max(-1, keepdims=True)
    lse = np.log(np.exp(logits - m).sum(-1)) + m[..., 0]
    picked = np.take_along_axis(logits, labels[..., None].astype(np.int64), -1)
    loss = lse - picked[..., 0]
    return {"mean": loss.mean(), "sum": loss.sum(), "none": loss}[reduction]


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def scatter_add(updates, indices, axis, size):
    shape = list(updates.shape[:axis]) + [size] + \
        list(updates.shape[axis + indices.ndim:])
    out = np.zeros(shape)
    idx = indices.reshape(-1)
    u = updates.reshape(updates.shape[:axis] + (idx.size,) +
                        updates.shape[axis + indices.ndim:])
    for i, j in enumerate(idx):
        sl = [slice(None)] * len(shape)
        sl[axis] = j
        ul = [slice(None)] * u.ndim
        ul[axis] = i
        out[tuple(sl)] += u[tuple(ul)]
    return out


def routed_slots(idx, experts, capacity):
    """Per slot (g, s, k) of idx [G, S, K], its (expert, position) in the
    dispatch buffer or None when dropped: k-major within each group."""
    where = {}
    for g in range(idx.shape[0]):
        filled = [0] * experts
        for k in range(idx.shape[2]):
            for s in range(idx.shape[1]):
                e = int(idx[g, s, k])
                if filled[e] < capacity:
                    where[(g, s, k)] = (e, filled[e])
                filled[e] += 1
    return where


def dispatch(x, idx, experts, capacity):
    out = np.zeros((experts, idx.shape[0], capacity, x.shape[-1]))
    for (g, s, k), (e, p) in routed_slots(idx, experts, capacity).items():
        out[e, g, p] = x[g, s] if x.ndim == 3 else x[g, s, k]
    return out


def combine(y, idx):
    out = np.zeros(idx.shape + (y.shape[-1],))
    for (g, s, k), (e, p) in routed_slots(idx, y.shape[0], y.shape[2]).items():
        out[g, s, k] = y[e, g, p]
    return out


def pad(x, shape, offsets, strides=None):
    out = np.zeros(shape)
    strides = strides or [1] * x.ndim
    out[tuple(slice(o, o + (n - 1) * s + 1, s)
              for o, n, s in zip(offsets, x.shape, strides))] = x
    return out


# ---------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------

class Case:
    def __init__(self, name, params, body, ref, inputs=None, expect=None,
                 prelude="", rounding=0.0):
        self.name = name
        self.params = params          # {name: f32 array}
        self.inputs = inputs or {}    # {name: array} (not differentiated)
        self.body = body              # MLIR defining %out
        self.ref = ref                # numpy float64 of (params | inputs)
        self.expect = expect          # {param: gradient} instead of fd
        self.prelude = prelude        # module-level ops (a mesh)
        self.rounding = rounding      # relative rounding of op() the
                                      # reference leaves out (f16 casts)


CASES = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


def t(shape, elt="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + elt + ">"


def elementwise(name, op, ref, sample):
    x = sample(3, 5)
    case(name, {"x": x}, f"%out = part.{op} %x : {t(x.shape)}",
         lambda a: ref(a["x"]))


def binary(name, op, ref, a, b):
    out = np.broadcast_shapes(a.shape, b.shape)
    case(name, {"a": a, "b": b},
         f"%out = part.{op} %a, %b : ({t(a.shape)}, {t(b.shape)}) -> {t(out)}",
         lambda v: ref(v["a"], v["b"]))


# Constants and casts.
x = normal(3, 4)
case("constant", {"x": x},
     f"""%c = part.constant dense<[0.5, -1.5, 2.0, 3.0]> : {t([4])}
  %out = part.mul %x, %c : ({t([3, 4])}, {t([4])}) -> {t([3, 4])}""",
     lambda v: v["x"] * np.array([0.5, -1.5, 2.0, 3.0]))
case("cast", {"x": x},
     f"""%h = part.cast %x : {t([3, 4])} -> {t([3, 4], "f16")}
  %out = part.cast %h : {t([3, 4], "f16")} -> {t([3, 4])}""",
     lambda v: v["x"], rounding=2.0**-11)

# Binary ops, both operands broadcast in some case.
binary("add", "add", np.add, normal(2, 3, 4), normal(3, 1))
binary("sub", "sub", np.subtract, normal(4), normal(3, 4))
binary("mul", "mul", np.multiply, normal(3, 1, 4), normal(5, 1))
binary("div", "div", np.divide, normal(3, 4), positive(4))
binary("max", "max", np.maximum, *apart((3, 4), (4,)))
binary("min", "min", np.minimum, *apart((2, 3, 4), (3, 1)))
binary("pow", "pow", np.power, positive(3, 4), normal(4, scale=0.7))

# Ties split evenly (no derivative exists: the convention's gradient).
a = np.array([[1.0, 2.0, -1.0], [0.5, 0.5, 3.0]], np.float32)
b = np.array([[1.0, 1.0, -1.0], [0.5, 2.0, 3.0]], np.float32)


def tie_expect(pick, a=a, b=b):
    def expect(w):
        g = w
        eq = (a == b).astype(np.float64)
        left = (pick(a, b)).astype(np.float64) + 0.5 * eq
        right = (pick(b, a)).astype(np.float64) + 0.5 * eq
        return {"a": g * left, "b": g * right}
    return expect


case("max-tie", {"a": a, "b": b},
     f"%out = part.max %a, %b : ({t([2, 3])}, {t([2, 3])}) -> {t([2, 3])}",
     lambda v: np.maximum(v["a"], v["b"]),
     expect=tie_expect(np.greater))
case("min-tie", {"a": a, "b": b},
     f"%out = part.min %a, %b : ({t([2, 3])}, {t([2, 3])}) -> {t([2, 3])}",
     lambda v: np.minimum(v["a"], v["b"]),
     expect=tie_expect(np.less))
r = np.array([[2.0, 1.0, 2.0, 2.0], [0.0, 3.0, -1.0, 3.0]], np.float32)


def reduce_max_tie(w, r=r):
    m = r.max(1, keepdims=True)
    hit = (r == m).astype(np.float64)
    return {"x": hit / hit.sum(1, keepdims=True) * w[:, None]}


case("reduce_max-tie", {"x": r},
     f"%out = part.reduce_max %x dims [1] : {t([2, 4])} -> {t([2])}",
     lambda v: v["x"].max(1), expect=reduce_max_tie)

# Select (integer condition, all three broadcast) and compare (no gradient).
cond = np.array([[1], [0], [-2]], np.int32)
case("select", {"t": normal(3, 4), "f": normal(4)},
     f"%out = part.select %c, %t, %f : ({t([3, 1], 'i32')}, {t([3, 4])}, "
     f"{t([4])}) -> {t([3, 4])}",
     lambda v: np.where(v["c"] != 0, v["t"], v["f"]), inputs={"c": cond})
ca, cb = apart((3, 4), (3, 4))
case("compare", {"a": ca, "b": cb},
     f"""%m = part.compare gt, %a, %b : ({t([3, 4])}, {t([3, 4])}) -> {t([3, 4], 'i32')}
  %mf = part.cast %m : {t([3, 4], 'i32')} -> {t([3, 4])}
  %out = part.add %mf, %a : ({t([3, 4])}, {t([3, 4])}) -> {t([3, 4])}""",
     lambda v: (v["a"] > v["b"]) + v["a"])

# Unary ops.
elementwise("neg", "neg", lambda x: -x, normal)
elementwise("exp", "exp", np.exp, normal)
elementwise("log", "log", np.log, positive)
elementwise("sqrt", "sqrt", np.sqrt, positive)
elementwise("rsqrt", "rsqrt", lambda x: 1 / np.sqrt(x), positive)
elementwise("tanh", "tanh", np.tanh, normal)
elementwise("erf", "erf", erf, normal)
# Scale 2: the samples cover about two periods, both signs of each derivative.
elementwise("cos", "cos", np.cos, lambda *s: normal(*s, scale=2.0))
elementwise("sin", "sin", np.sin, lambda *s: normal(*s, scale=2.0))
elementwise("sigmoid", "sigmoid", sigmoid, lambda *s: normal(*s, scale=2.0))
elementwise("relu", "relu", lambda x: np.maximum(x, 0), away)
elementwise("silu", "silu", lambda x: x * sigmoid(x),
            lambda *s: normal(*s, scale=2.0))
x = normal(3, 5, scale=2.0)
case("gelu-erf", {"x": x}, f"%out = part.gelu %x erf : {t(x.shape)}",
     lambda v: 0.5 * v["x"] * (1 + erf(v["x"] / np.sqrt(2))))
case("gelu-tanh", {"x": x}, f"%out = part.gelu %x tanh : {t(x.shape)}",
     lambda v: gelu_tanh(v["x"]))

# Contractions, every transpose flag.
for ta in (False, True):
    for tb in (False, True):
        flags = ("transpose_a " if ta else "") + ("transpose_b" if tb else "")
        suffix = ("-ta" if ta else "") + ("-tb" if tb else "")
        for lead in ([2], []):
            lhs = normal(*lead, *((4, 3) if ta else (3, 4)))
            rhs = normal(*((5, 4) if tb else (4, 5)))
            out = (*lead, 3, 5)
            case(f"matmul{'' if lead else '-2d'}{suffix}", {"a": lhs, "b": rhs},
                 f"%out = part.matmul %a, %b {flags} : ({t(lhs.shape)}, "
                 f"{t(rhs.shape)}) -> {t(out)}",
                 lambda v, ta=ta, tb=tb: mm(v["a"], v["b"], ta, tb))
        lhs = normal(2, 2, *((4, 3) if ta else (3, 4)))
        rhs = normal(2, 2, *((5, 4) if tb else (4, 5)))
        case(f"batch_matmul{suffix}", {"a": lhs, "b": rhs},
             f"%out = part.batch_matmul %a, %b {flags} : ({t(lhs.shape)}, "
             f"{t(rhs.shape)}) -> {t([2, 2, 3, 5])}",
             lambda v, ta=ta, tb=tb: mm(v["a"], v["b"], ta, tb))

# Softmax, norms, rotary embedding.
x = normal(2, 5, 3)
case("softmax", {"x": x}, f"%out = part.softmax %x dim 1 : {t(x.shape)}",
     lambda v: softmax(v["x"], 1))
x = normal(3, 6)
case("softmax-last", {"x": x}, f"%out = part.softmax %x dim 1 : {t(x.shape)}",
     lambda v: softmax(v["x"], 1))
x, g, bias = normal(2, 3, 8), normal(8), normal(8)
case("layer_norm", {"x": x, "g": g, "b": bias},
     f"%out = part.layer_norm %x, %g, %b : ({t(x.shape)}, {t([8])}, {t([8])}) "
     f"-> {t(x.shape)}",
     lambda v: layer_norm(v["x"], v["g"], v["b"]))
case("layer_norm-nobias", {"x": x, "g": g},
     f"%out = part.layer_norm %x, %g epsilon 1.0e-03 : ({t(x.shape)}, {t([8])}) "
     f"-> {t(x.shape)}",
     lambda v: layer_norm(v["x"], v["g"], eps=1e-3))
case("rms_norm", {"x": x, "g": g},
     f"%out = part.rms_norm %x, %g : ({t(x.shape)}, {t([8])}) -> {t(x.shape)}",
     lambda v: rms_norm(v["x"], v["g"]))
x, cos, sin = normal(2, 2, 4, 6), normal(4, 6), normal(4, 6)
case("rotary_embedding", {"x": x, "cos": cos, "sin": sin},
     f"%out = part.rotary_embedding %x, %cos, %sin : ({t(x.shape)}, "
     f"{t([4, 6])}, {t([4, 6])}) -> {t(x.shape)}",
     lambda v: rotary(v["x"], v["cos"], v["sin"]))

# Attention: plain, causal, with a scale, grouped-query, Sq != Sk, sliding
# windows (query i sees keys i - w + 1 .. i).
for name, hq, hkv, sq, sk, attrs, kw in [
        ("attention", 2, 2, 4, 4, "", {}),
        ("attention-causal", 2, 2, 5, 5, "causal", {"causal": True}),
        ("attention-scale", 2, 2, 3, 4, "scale 0.7", {"scale": 0.7}),
        ("attention-gqa", 4, 2, 4, 4, "", {}),
        ("attention-gqa-causal", 6, 2, 4, 4, "causal scale 0.5",
         {"causal": True, "scale": 0.5}),
        ("attention-window", 2, 2, 5, 5, "causal window 2",
         {"causal": True, "window": 2}),
        ("attention-gqa-window", 6, 2, 6, 6, "causal window 3 scale 0.5",
         {"causal": True, "window": 3, "scale": 0.5})]:
    q, k, v_ = normal(2, hq, sq, 3), normal(2, hkv, sk, 3), normal(2, hkv, sk, 5)
    case(name, {"q": q, "k": k, "v": v_},
         f"%out = part.attention %q, %k, %v {attrs} : ({t(q.shape)}, "
         f"{t(k.shape)}, {t(v_.shape)}) -> {t([2, hq, sq, 5])}",
         lambda v, kw=kw: attention(v["q"], v["k"], v["v"], **kw))

# Attention with positions (context parallelism): a device's queries are
# two chunks of the sequence, its keys the whole sequence in the balanced
# order (here 8 positions over 2 devices: device 1's queries 2 3 4 5 and
# the keys in the order 0 1 6 7 2 3 4 5), with and without a window and
# with grouped-query heads.
order = [0, 1, 6, 7, 2, 3, 4, 5]
for name, hq, hkv, qpos, attrs, kw in [
        ("attention-positions", 2, 2, [2, 3, 4, 5], "causal", {}),
        ("attention-positions-first", 2, 2, [0, 1, 6, 7], "causal scale 0.5",
         {"scale": 0.5}),
        ("attention-positions-gqa-window", 4, 2, [2, 3, 4, 5],
         "causal window 3", {"window": 3})]:
    q, k, v_ = normal(2, hq, 4, 3), normal(2, hkv, 8, 3), normal(2, hkv, 8, 5)
    case(name, {"q": q, "k": k, "v": v_},
         f"%qp = part.constant dense<{qpos}> : {t([4], 'i64')}\n"
         f"  %kp = part.constant dense<{order}> : {t([8], 'i64')}\n"
         f"  %out = part.attention %q, %k, %v {attrs} positions(%qp, %kp) : "
         f"({t(q.shape)}, {t(k.shape)}, {t(v_.shape)}, {t([4], 'i64')}, "
         f"{t([8], 'i64')}) -> {t([2, hq, 4, 5])}",
         lambda v, kw=kw, qpos=qpos: attention(
             v["q"], v["k"], v["v"], causal=True, qpos=qpos, kpos=order,
             **kw))

# Cross-entropy against integer labels.
labels = rng.integers(0, 7, (2, 3)).astype(np.int32)
logits = normal(2, 3, 7, scale=2.0)
for red in ("mean", "sum", "none"):
    out = "tensor<2x3xf32>" if red == "none" else "tensor<f32>"
    case(f"softmax_cross_entropy-{red}", {"x": logits},
         f"%out = part.softmax_cross_entropy %x, %l {red} : ({t(logits.shape)}, "
         f"{t([2, 3], 'i32')}) -> {out}",
         lambda v, red=red: cross_entropy(v["x"], v["l"], red),
         inputs={"l": labels})

# Reductions.
x = normal(2, 3, 4)
case("reduce_sum", {"x": x},
     f"%out = part.reduce_sum %x dims [0, 2] : {t(x.shape)} -> {t([3])}",
     lambda v: v["x"].sum((0, 2)))
case("reduce_mean", {"x": x},
     f"%out = part.reduce_mean %x dims [1] keep_dims : {t(x.shape)} -> "
     f"{t([2, 1, 4])}",
     lambda v: v["x"].mean(1, keepdims=True))
x = distinct(2, 3, 4)
case("reduce_max", {"x": x},
     f"%out = part.reduce_max %x dims [1, 2] : {t(x.shape)} -> {t([2])}",
     lambda v: v["x"].max((1, 2)))
case("reduce_max-keep", {"x": x},
     f"%out = part.reduce_max %x dims [0] keep_dims : {t(x.shape)} -> "
     f"{t([1, 3, 4])}",
     lambda v: v["x"].max(0, keepdims=True))

# Data movement.
x = normal(2, 3, 4)
case("reshape", {"x": x},
     f"%out = part.reshape %x : {t(x.shape)} -> {t([6, 4])}",
     lambda v: v["x"].reshape(6, 4))
case("transpose", {"x": x},
     f"%out = part.transpose %x [2, 0, 1] : {t(x.shape)} -> {t([4, 2, 3])}",
     lambda v: v["x"].transpose(2, 0, 1))
x = normal(3, 1)
case("broadcast", {"x": x},
     f"%out = part.broadcast %x : {t(x.shape)} -> {t([2, 3, 4])}",
     lambda v: np.broadcast_to(v["x"], (2, 3, 4)))
x = normal(5, 7)
case("slice", {"x": x},
     f"%out = part.slice %x offsets [1, 2] strides [2, 1] : {t(x.shape)} -> "
     f"{t([2, 4])}",
     lambda v: v["x"][1:5:2, 2:6])
x = normal(2, 3)
case("pad", {"x": x},
     f"%out = part.pad %x offsets [1, 0] strides [2, 2] : {t(x.shape)} -> "
     f"{t([4, 6])}",
     lambda v: pad(v["x"], (4, 6), [1, 0], [2, 2]))
c1, c2, c3 = normal(2, 3), normal(2, 1), normal(2, 4)
case("concat", {"a": c1, "b": c2, "c": c3},
     f"%out = part.concat %a, %b, %c dim 1 : ({t([2, 3])}, {t([2, 1])}, "
     f"{t([2, 4])}) -> {t([2, 8])}",
     lambda v: np.concatenate([v["a"], v["b"], v["c"]], 1))
ids = np.array([[1, 3, 1], [0, 1, 4]], np.int32)  # duplicates accumulate
table = normal(5, 3)
case("gather", {"x": table},
     f"%out = part.gather %x, %i axis 0 : ({t([5, 3])}, {t([2, 3], 'i32')}) -> "
     f"{t([2, 3, 3])}",
     lambda v: v["x"][v["i"]], inputs={"i": ids})
data = normal(2, 5, 3)
cols = np.array([4, 4, 0, 2], np.int64)
case("gather-axis1", {"x": data},
     f"%out = part.gather %x, %i axis 1 : ({t([2, 5, 3])}, {t([4], 'i64')}) -> "
     f"{t([2, 4, 3])}",
     lambda v: v["x"][:, v["i"]], inputs={"i": cols})
upd = normal(2, 4, 3)
case("scatter_add", {"u": upd},
     f"%out = part.scatter_add %u, %i axis 1 : ({t([2, 4, 3])}, "
     f"{t([4], 'i64')}) -> {t([2, 5, 3])}",
     lambda v: scatter_add(v["u"], v["i"], 1, 5), inputs={"i": cols})
# Mixture-of-experts routing. Expert 1 gets more than its capacity of 3
# in group 0 (slots dropped, no gradient); expert 3 none in group 1.
x = distinct(4, 6)
case("top_k", {"x": x},
     f"%out, %idx = part.top_k %x : ({t([4, 6])}) -> ({t([4, 2])}, "
     f"{t([4, 2], 'i64')})",
     lambda v: -np.sort(-v["x"], axis=-1)[:, :2])
route = np.array([[[1, 0], [1, 2], [3, 1], [1, 0], [2, 1]],
                  [[0, 2], [2, 1], [1, 0], [0, 2], [2, 0]]], np.int64)
tokens, slots = normal(2, 5, 3), normal(2, 5, 2, 3)
case("expert_dispatch", {"x": tokens},
     f"%out = part.expert_dispatch %x, %i : ({t([2, 5, 3])}, "
     f"{t([2, 5, 2], 'i64')}) -> {t([4, 2, 3, 3])}",
     lambda v: dispatch(v["x"], v["i"], 4, 3), inputs={"i": route})
case("expert_dispatch-slots", {"x": slots},
     f"%out = part.expert_dispatch %x, %i : ({t([2, 5, 2, 3])}, "
     f"{t([2, 5, 2], 'i64')}) -> {t([4, 2, 3, 3])}",
     lambda v: dispatch(v["x"], v["i"], 4, 3), inputs={"i": route})
case("expert_combine", {"y": normal(4, 2, 3, 3)},
     f"%out = part.expert_combine %y, %i : ({t([4, 2, 3, 3])}, "
     f"{t([2, 5, 2], 'i64')}) -> {t([2, 5, 2, 3])}",
     lambda v: combine(v["y"], v["i"]), inputs={"i": route})
x = normal(4, 3)
case("sharding_constraint", {"x": x},
     f"""%y = part.sharding_constraint %x <@mesh, [{{"dp"}}, {{}}]> : {t(x.shape)}
  %out = part.mul %y, %y : ({t(x.shape)}, {t(x.shape)}) -> {t(x.shape)}""",
     lambda v: v["x"] ** 2, prelude="part.mesh @mesh = <{mesh}>")


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------

def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, a in tensors.items():
        data = np.ascontiguousarray(a, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def mlir_type(a):
    elt = {np.dtype(np.float32): "f32", np.dtype(np.int32): "i32",
           np.dtype(np.int64): "i64"}[a.dtype]
    return t(a.shape, elt)


def module_text(c, out_shape, mesh):
    args = []
    for name, a in c.params.items():
        args.append(f'%{name}: {mlir_type(a)} {{part.name = "{name}", '
                    f'part.role = #part.role<parameter>}}')
    for name, a in c.inputs.items():
        args.append(f'%{name}: {mlir_type(a)} {{part.name = "{name}", '
                    f'part.role = #part.role<input>}}')
    args.append(f'%w: {t(out_shape)} {{part.name = "w", '
                f'part.role = #part.role<input>}}')
    ot = t(out_shape)
    if out_shape:
        dims = ", ".join(str(d) for d in range(len(out_shape)))
        tail = (f"%lw = part.mul %out, %w : ({ot}, {ot}) -> {ot}\n"
                f"  %loss = part.reduce_sum %lw dims [{dims}] : {ot} -> "
                f"tensor<f32>")
    else:
        tail = f"%loss = part.mul %out, %w : ({ot}, {ot}) -> {ot}"
    sig = ",\n             ".join(args)
    axes = ", ".join(f'"{a}"={n}' for a, n in
                     (p.split(":") for p in mesh.split(",")))
    return (c.prelude.format(mesh=f"[{axes}]") + "\n"
            f"func.func @{c.name.replace('-', '_')}({sig})\n"
            f"    -> (tensor<f32> {{part.name = \"loss\"}}) {{\n"
            f"  {c.body}\n  {tail}\n  return %loss : tensor<f32>\n}}\n")


def loss64(c, values, w):
    return float(np.sum(np.asarray(c.ref(values), np.float64) * w))


def finite_differences(c, w):
    base = {k: v.astype(np.float64) for k, v in c.params.items()}
    base.update(c.inputs)
    grads = {}
    for name, p in c.params.items():
        g = np.zeros(p.shape)
        for i in np.ndindex(p.shape):
            plus = dict(base)
            minus = dict(base)
            plus[name] = base[name].copy()
            minus[name] = base[name].copy()
            plus[name][i] += H
            minus[name][i] -= H
            g[i] = (loss64(c, plus, w) - loss64(c, minus, w)) / (2 * H)
        grads[name] = g
    return grads


def rule_ops(td_path):
    """Mnemonics of the ops PartOps.td declares with VjpOpInterface, directly
    or through their base class."""
    text = open(td_path).read()
    chunks = re.split(r"\n(?=def |class )", text)
    headers = [c[:c.find("{")] if "{" in c else c for c in chunks]
    classes = {re.match(r"class (\w+)", h).group(1) for h in headers
               if h.startswith("class ") and "Part_VjpOpInterface" in h}
    ops = set()
    for h in headers:
        m = re.match(r'def Part_\w+Op\s*:\s*(\w+)<"(\w+)"', h)
        if m and ("Part_VjpOpInterface" in h or m.group(1) in classes):
            ops.add(m.group(2))
    return ops


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}):\n"
                           f"{p.stdout}{p.stderr}")
    return p.stdout


def divides(c, out_shape, ranks):
    """True when every `input` argument (split over dp by part-spmd) has a
    leading dimension `ranks` divides."""
    shapes = [np.shape(a) for a in c.inputs.values()] + [out_shape]
    return all(len(s) == 0 or s[0] % ranks == 0 for s in shapes)


def check(c, tools, work, mesh, ranks):
    d = os.path.join(work, c.name)
    os.makedirs(os.path.join(d, "out"), exist_ok=True)
    values = {k: v.astype(np.float64) for k, v in c.params.items()}
    values.update(c.inputs)
    out_shape = tuple(np.shape(c.ref(values)))
    if not divides(c, out_shape, ranks):
        return None
    # Weights from the case's own generator: a case checks the same numbers
    # whether it runs alone (--only) or with the others.
    w = np.random.default_rng(zlib.crc32(c.name.encode())).standard_normal(
        out_shape).astype(np.float32)
    with open(os.path.join(d, "f.mlir"), "w") as f:
        f.write(module_text(c, out_shape, mesh))
    write_safetensors(os.path.join(d, "p.safetensors"), c.params)
    feeds = []
    for name, a in list(c.inputs.items()) + [("w", w)]:
        np.save(os.path.join(d, f"{name}.npy"), a)
        feeds += ["--input", f"{name}={os.path.join(d, name + '.npy')}"]
    mlir = run([tools["partition-opt"], os.path.join(d, "f.mlir"),
                "--part-autodiff", f"--part-spmd=mesh={mesh}"])
    with open(os.path.join(d, "train.mlir"), "w") as f:
        f.write(mlir)
    run([tools["partition-translate"], "--part-to-plan",
         os.path.join(d, "train.mlir"), "-o", os.path.join(d, "f.plan")])
    run([tools["partition-run"], os.path.join(d, "f.plan"), "--backend", "cpu",
         "--weights", os.path.join(d, "p.safetensors"), *feeds,
         "--output-dir", os.path.join(d, "out")])
    w64 = w.astype(np.float64)
    expected = c.expect(w64) if c.expect else finite_differences(c, w64)
    ok = True
    # The loss: an f32 sum of at most 120 terms, within n u sum|terms| <
    # 1e-5 sum|terms| of the float64 one, plus any rounding of op() itself.
    loss = np.load(os.path.join(d, "out", "loss.npy"))
    want = loss64(c, values, w64)
    terms = float(np.sum(np.abs(np.asarray(c.ref(values)) * w64)))
    if abs(float(loss) - want) > (1e-5 + c.rounding) * terms + 1e-6:
        print(f"{c.name}: loss {float(loss)!r}, expected {want!r}: MISMATCH")
        ok = False
    for name in c.params:
        got = np.load(os.path.join(d, "out", f"grad.{name}.npy"))
        ref = expected[name]
        if got.shape != ref.shape:
            print(f"{c.name}: grad.{name} has shape {got.shape}, expected "
                  f"{ref.shape}: MISMATCH")
            ok = False
            continue
        scale = max(1.0, float(np.abs(ref).max()))
        err = np.abs(got.astype(np.float64) - ref)
        bound = ATOL * scale + RTOL * np.abs(ref)
        good = bool(np.all(err <= bound))
        ok &= good
        how = "convention" if c.expect else "finite differences"
        print(f"{c.name}: grad.{name} {'ok' if good else 'MISMATCH'} against "
              f"{how}, max error {err.max():.2g} (scale {scale:.3g})")
        if not good:
            worst = np.unravel_index(np.argmax(err - bound), err.shape)
            print(f"  worst at {tuple(int(i) for i in worst)}: got "
                  f"{got[worst]!r}, expected {ref[worst]!r}")
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=False, default="")
    ap.add_argument("--work", required=False, default="/tmp/fd_check")
    ap.add_argument("--only", default="")
    ap.add_argument("--mesh", default="dp:1",
                    help="part-spmd mesh; with more than one device, only the "
                    "cases whose inputs it divides run")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--ops-td", default="",
                    help="PartOps.td: check every op with a rule has a case")
    o = ap.parse_args()
    if o.list:
        for c in CASES:
            print(c.name)
        return 0
    ok = True
    if o.ops_td:
        ops = rule_ops(o.ops_td)
        tested = {m for c in CASES for m in re.findall(r"part\.(\w+)", c.body)}
        missing = sorted(ops - tested)
        if missing:
            print("ops with a rule but no case: " + ", ".join(missing))
            ok = False
        else:
            print(f"every op with a rule has a case ({len(ops)} ops)")
    tools = {n: os.path.join(o.bin, n) for n in
             ("partition-opt", "partition-translate", "partition-run")}
    only = set(filter(None, o.only.split(",")))
    ranks = int(np.prod([int(p.split(":")[1]) for p in o.mesh.split(",")]))
    ran = 0
    for c in CASES:
        if only and c.name not in only:
            continue
        try:
            result = check(c, tools, o.work, o.mesh, ranks)
            if result is None:
                continue
            ok &= result
            ran += 1
        except RuntimeError as e:
            print(f"{c.name}: FAILED\n{e}")
            ok = False
    print(f"{ran} cases on mesh {o.mesh}")
    print("all gradients ok" if ok else "SOME GRADIENTS ARE WRONG")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
