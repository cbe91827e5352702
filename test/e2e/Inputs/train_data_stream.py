"""Batch files for partition-run --data (test/e2e/train-data.mlir), the way a
PyTorch user writes them: one safetensors array per input binding, a
leading dimension of batches, [S, ...one batch].

usage:
  train_data_stream.py linreg OUTDIR BATCHES STEPS [--lr LR]
      data.safetensors (x [S, 8, 4], y [S, 8, 3]), weights.safetensors
      (w, b) and a float64 numpy AdamW reference (PyTorch's defaults,
      weight decay 0.01) of STEPS steps, step k on batch k mod S: losses.txt
      (the loss before each update) and w.npy, b.npy after the last.
  train_data_stream.py gpt OUTDIR BATCHES BATCH SEQ VOCAB
      data.safetensors with tokens and labels [S, BATCH, SEQ], int32: windows
      of one token stream, labels the next token (as GPT training cuts a
      corpus).
  train_data_stream.py echo OUTDIR BATCHES
      echo.safetensors (x [S, 8, 4] float32, t [S, 8, 6] int32) for
      Inputs/echo-batches.mlir, whose outputs x.seen and t.seen are the
      batch it was fed.
  train_data_stream.py seen DATA K DIR...
      each DIR/NAME.seen.npy equals batch K of DATA's array NAME exactly.
  train_data_stream.py distinct DIR1 DIR2
      every NAME.seen.npy of DIR1 differs from DIR2's (the stream moved on).
  train_data_stream.py range DIR NAME N
      DIR/NAME.seen.npy holds integers in [0, N) only.
  train_data_stream.py bad OUTDIR
      files with one mistake each for the diagnostics of the linreg plan.
"""
import json
import struct
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from mlp_data import save_safetensors  # noqa: E402


def linreg(out, batches, steps, lr):
    rng = np.random.default_rng(17)
    true_w = rng.standard_normal((4, 3))
    x = rng.standard_normal((batches, 8, 4)).astype(np.float32)
    # Each batch its own offset: a model seeing one batch only would fit it.
    y = (x @ true_w + rng.standard_normal((batches, 1, 3))).astype(np.float32)
    w = (0.5 * rng.standard_normal((4, 3))).astype(np.float32)
    b = (0.5 * rng.standard_normal(3)).astype(np.float32)
    save_safetensors(f"{out}/data.safetensors", {"x": x, "y": y})
    save_safetensors(f"{out}/weights.safetensors", {"w": w, "b": b})

    wd, p = 0.01, {"w": w.astype(np.float64), "b": b.astype(np.float64)}
    state = {k: (np.zeros_like(v), np.zeros_like(v)) for k, v in p.items()}
    losses = []
    for t in range(1, steps + 1):
        X = x[(t - 1) % batches].astype(np.float64)
        Y = y[(t - 1) % batches].astype(np.float64)
        d = X @ p["w"] + p["b"] - Y
        losses.append((d * d).mean())
        g = d * (2.0 / d.size)
        grads = {"w": X.T @ g, "b": g.sum(axis=0)}
        for k in p:
            m = 0.9 * state[k][0] + 0.1 * grads[k]
            v = 0.999 * state[k][1] + 0.001 * grads[k] ** 2
            state[k] = (m, v)
            mhat, vhat = m / (1 - 0.9**t), v / (1 - 0.999**t)
            p[k] = p[k] * (1 - lr * wd) - lr * mhat / (np.sqrt(vhat) + 1e-8)
    with open(f"{out}/losses.txt", "w") as f:
        f.write("".join(f"{l:.9g}\n" for l in losses))
    np.save(f"{out}/w.npy", p["w"])
    np.save(f"{out}/b.npy", p["b"])


def gpt(out, batches, batch, seq, vocab):
    rng = np.random.default_rng(23)
    stream = rng.integers(0, vocab, size=batches * batch * seq + 1)
    starts = np.arange(batches * batch) * seq
    windows = np.stack([stream[s:s + seq + 1] for s in starts]).astype(np.int32)
    windows = windows.reshape(batches, batch, seq + 1)
    save_safetensors(f"{out}/data.safetensors",
                     {"tokens": windows[..., :-1], "labels": windows[..., 1:]})


def load_safetensors(path):
    dtypes = {"F32": np.float32, "F16": np.float16, "I32": np.int32, "I64": np.int64}
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header, data = json.loads(raw[8:8 + n]), raw[8 + n:]
    return {name: np.frombuffer(data[t["data_offsets"][0]:t["data_offsets"][1]],
                                dtypes[t["dtype"]]).reshape(t["shape"])
            for name, t in header.items() if name != "__metadata__"}


def echo(out, batches):
    rng = np.random.default_rng(29)
    save_safetensors(f"{out}/echo.safetensors", {
        "x": rng.standard_normal((batches, 8, 4)).astype(np.float32),
        "t": rng.integers(0, 1000, size=(batches, 8, 6)).astype(np.int32)})


def seen(data, k, dirs):
    arrays, ok = load_safetensors(data), True
    for d in dirs:
        for name, a in arrays.items():
            got = np.load(f"{d}/{name}.seen.npy")
            if got.dtype != a.dtype or not np.array_equal(got, a[k]):
                print(f"{d}/{name}.seen.npy is not batch {k} of {data}")
                ok = False
    sys.exit(0 if ok else 1)


def distinct(d1, d2):
    names = sorted(n for n in os.listdir(d1) if n.endswith(".seen.npy"))
    same = [n for n in names
            if np.array_equal(np.load(f"{d1}/{n}"), np.load(f"{d2}/{n}"))]
    if not names or same:
        sys.exit(f"{d1} and {d2} hold the same {', '.join(same) or 'nothing'}")


def in_range(d, name, n):
    a = np.load(f"{d}/{name}.seen.npy")
    if a.dtype.kind != "i" or a.min() < 0 or a.max() >= n:
        sys.exit(f"{d}/{name}.seen.npy: {a.dtype} in [{a.min()}, {a.max()}], "
                 f"not integers in [0, {n})")


def bad(out):
    x = np.zeros((3, 8, 4), np.float32)
    y = np.zeros((3, 8, 3), np.float32)
    save_safetensors(f"{out}/no-y.safetensors", {"x": x})
    save_safetensors(f"{out}/y-shape.safetensors", {"x": x, "y": np.zeros((3, 8, 2), np.float32)})
    save_safetensors(f"{out}/y-i32.safetensors", {"x": x, "y": y.astype(np.int32)})
    save_safetensors(f"{out}/unbatched.safetensors", {"x": x[0], "y": y})
    save_safetensors(f"{out}/counts.safetensors", {"x": x, "y": y[:2]})


def main():
    kind, out = sys.argv[1], sys.argv[2]
    if kind == "linreg":
        lr = float(sys.argv[6]) if len(sys.argv) > 6 and sys.argv[5] == "--lr" else 0.01
        linreg(out, int(sys.argv[3]), int(sys.argv[4]), lr)
    elif kind == "gpt":
        gpt(out, *map(int, sys.argv[3:7]))
    elif kind == "echo":
        echo(out, int(sys.argv[3]))
    elif kind == "seen":
        seen(out, int(sys.argv[3]), sys.argv[4:])
    elif kind == "distinct":
        distinct(out, sys.argv[3])
    elif kind == "range":
        in_range(out, sys.argv[3], int(sys.argv[4]))
    else:
        bad(out)


if __name__ == "__main__":
    main()
