"""Checks the gradients partition-run wrote for a generated model with a
cross-entropy loss (Inputs/append_loss.py) against a float64 numpy model:

  model_grads.py gpt HEADS WEIGHTS INPUT.npy LABELS.npy OUT [OUT...]
  model_grads.py llama HEADS WEIGHTS INPUT.npy LABELS.npy OUT [OUT...]
  model_grads.py mlp -     WEIGHTS INPUT.npy LABELS.npy OUT [OUT...]

The numpy forward is the independent one of
test/Import/generators/Inputs/reference.py (it reads every parameter by
name); the loss is the mean softmax cross-entropy of its logits against the
labels. For the first OUT directory:

- the loss equals the float64 loss within 1e-5 relative (an f32 forward of
  dot products of at most 128 terms: 128 * 2^-24 = 7.6e-6);
- every gradient has its parameter's shape, and at 8 elements of each (the
  4 largest in magnitude and 4 random ones) equals the central finite
  difference of the float64 loss, (L(w + h e) - L(w - h e)) / 2h with
  h = 1e-5, within 1e-4 s + 1e-3 |fd| + 1e-10, where s is the largest
  |gradient| of that parameter. Gradients differ in scale by orders of
  magnitude (attention's query and key weights at the generator's std of
  0.02 get 1e-4 of what the output head gets; a key bias gets exactly 0, as
  softmax ignores a shift shared by a row), so the bound scales with each
  parameter. It covers the f32 backward pass (chains of sums of at most 128
  terms: 128 * 2^-24 = 7.6e-6 of the terms' magnitudes), the difference's
  truncation h^2 / 6 |d^3 L| (2e-11 |d^3 L|) and its float64 rounding
  (1e-16 |L| / h, 4e-11). The small step also keeps the MLP's relu kinks
  out of reach: a pre-activation moves by at most h |x| ~ 1e-5. Measured: at most 1.3e-6 s. A wrong rule, a dropped accumulation
  or a missing 1 / N is off by O(s).

Every other OUT (the same step partitioned differently) must equal the
first within 1e-5 s + 1e-10 elementwise, for the loss and every gradient
(s: its largest magnitude in the first OUT): partitioning only reorders f32
sums (a gradient summed over dp, a contraction split over tp), each of at
most 128 terms and so within 7.6e-6 of the terms' magnitudes, which are of
the order of s; a sum that cancels to 0 exactly (the key bias) keeps noise
of u times its terms, below 1e-11 here. Measured: at most 6e-7 s.

Prints the worst error per gradient; exits non-zero on any mismatch.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "..", "Import", "generators", "Inputs"))
import reference  # noqa: E402
from safetensors_info import read  # noqa: E402

H = 1e-5


def cross_entropy(logits, labels):
    m = logits.max(-1, keepdims=True)
    lse = np.log(np.exp(logits - m).sum(-1)) + m[..., 0]
    picked = np.take_along_axis(logits, labels[..., None].astype(np.int64), -1)
    return float((lse - picked[..., 0]).mean())


def main():
    family, heads, weights, inp, lab = sys.argv[1:6]
    outs = sys.argv[6:]
    w = {name: a.astype(np.float64) for name, _, a in read(weights)}
    x = np.load(inp)
    labels = np.load(lab)

    def loss(params):
        if family == "gpt":
            logits = reference.gpt(params, x, int(heads))
        elif family == "llama":
            logits = reference.llama(params, x, int(heads))
        else:
            logits = reference.mlp(params, x.astype(np.float64))
        return cross_entropy(logits, labels)

    ok = True
    first = outs[0]
    got = float(np.load(os.path.join(first, "loss.npy")))
    want = loss(w)
    good = abs(got - want) <= 1e-5 * abs(want)
    ok &= good
    print(f"loss {got:.7g} against float64 {want:.7g}: "
          f"{'ok' if good else 'MISMATCH'}")
    rng = np.random.default_rng(0)
    for name in w:
        g = np.load(os.path.join(first, f"grad.{name}.npy")).astype(np.float64)
        if g.shape != w[name].shape:
            print(f"grad.{name}: shape {g.shape}, expected {w[name].shape}: "
                  "MISMATCH")
            ok = False
            continue
        flat = np.argsort(-np.abs(g).reshape(-1))[:4].tolist()
        flat += rng.integers(0, g.size, 4).tolist()
        scale = float(np.abs(g).max())
        worst = 0.0
        good = True
        for f in flat:
            i = np.unravel_index(f, g.shape)
            plus = dict(w)
            minus = dict(w)
            plus[name] = w[name].copy()
            minus[name] = w[name].copy()
            plus[name][i] += H
            minus[name][i] -= H
            fd = (loss(plus) - loss(minus)) / (2 * H)
            err = abs(g[i] - fd)
            worst = max(worst, err)
            if err > 1e-4 * scale + 1e-3 * abs(fd) + 1e-10:
                good = False
                print(f"  grad.{name}{tuple(int(k) for k in i)}: {g[i]!r}, "
                      f"finite difference {fd!r}")
        ok &= good
        print(f"grad.{name}: {'ok' if good else 'MISMATCH'} against finite "
              f"differences at {len(flat)} elements, max error {worst:.2g} = "
              f"{worst / max(scale, 1e-30):.2g} s "
              f"(largest |grad| {np.abs(g).max():.2g})")
    for other in outs[1:]:
        worst, good = 0.0, True
        for name in ["loss"] + [f"grad.{n}" for n in w]:
            a = np.load(os.path.join(first, f"{name}.npy")).astype(np.float64)
            b = np.load(os.path.join(other, f"{name}.npy")).astype(np.float64)
            if a.shape != b.shape:
                print(f"{other}/{name}: shape {b.shape}, expected {a.shape}")
                good = False
                continue
            err = np.abs(a - b)
            scale = float(np.abs(a).max(initial=0))
            bound = 1e-5 * scale + 1e-10
            worst = max(worst, float((err / bound).max(initial=0)))
            if not np.all(err <= bound):
                print(f"{other}/{name}: MISMATCH, max error {err.max():.3g}")
                good = False
        ok &= good
        print(f"{other}: {'ok' if good else 'MISMATCH'}, every gradient within "
              f"1e-5 s + 1e-10 of {first} (worst error {worst:.2g} of the bound)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
