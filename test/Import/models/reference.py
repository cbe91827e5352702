"""onnxruntime reference for an ONNX model: reference.py MODEL OUTDIR [--dim NAME=VALUE]...

Makes seeded inputs for every graph input, runs the model with onnxruntime on
the CPU (one thread, so the result does not depend on the machine), and
writes OUTDIR/<input name>.npy and OUTDIR/<output name>.npy, in the model's
dtypes, so that a test can pass the same files to `partition-run --input
NAME=OUTDIR/NAME.npy` and compare its outputs with the reference ones.

Inputs, by kind (seed 0 unless --seed):
  - an integer input used as the indices of a Gather on an initializer (token
    ids, token-type ids): uniform in [0, rows of that initializer);
  - an integer input whose name contains "mask": 1 everywhere except that
    batch row r > 0 has its last r * seq / (2 * batch) positions set to 0
    (padding), the first position always 1;
  - a float input: standard normal;
  - any other integer input needs --range NAME=LO:HI (uniform in [LO, HI)).
Every symbolic dimension must be bound with --dim. Exits non-zero when an
output has a NaN or an infinity, naming it.

Run it with the interpreter that has onnxruntime (scripts/setup.sh installs
it in .venv; lit calls it %ort_python).
"""
import argparse
import os
import sys

import numpy as np

ONNX_TO_NUMPY = {
    "tensor(float)": np.float32,
    "tensor(float16)": np.float16,
    "tensor(double)": np.float64,
    "tensor(int32)": np.int32,
    "tensor(int64)": np.int64,
    "tensor(bool)": np.bool_,
}


def parse_pairs(pairs, what):
    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            sys.exit(f"reference.py: {what} '{pair}' is not NAME=VALUE")
        out[name] = value
    return out


def gather_rows(model_path):
    """Graph input name -> rows of the initializer it indexes in a Gather."""
    import onnx
    model = onnx.load(model_path)
    inits = {t.name: list(t.dims) for t in model.graph.initializer}
    rows = {}
    for node in model.graph.node:
        if node.op_type == "Gather" and len(node.input) == 2 and node.input[0] in inits:
            axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
            rows[node.input[1]] = inits[node.input[0]][axis]
    return rows


def make_input(name, dtype, shape, rows, ranges, rng):
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(shape).astype(dtype)
    if not np.issubdtype(dtype, np.integer):
        sys.exit(f"reference.py: input {name} has dtype {np.dtype(dtype).name}, "
                 "which this script does not generate")
    if name in ranges:
        lo, _, hi = ranges[name].partition(":")
        return rng.integers(int(lo), int(hi), shape).astype(dtype)
    if name in rows:
        return rng.integers(0, rows[name], shape).astype(dtype)
    if "mask" in name and len(shape) == 2:
        batch, seq = shape
        mask = np.ones(shape, dtype)
        for r in range(1, batch):
            pad = min(seq - 1, r * seq // (2 * batch))
            if pad:
                mask[r, seq - pad:] = 0
        return mask
    sys.exit(f"reference.py: cannot tell the range of integer input {name}: "
             f"give --range {name}=LO:HI")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("outdir")
    parser.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE",
                        help="bind a symbolic dimension")
    parser.add_argument("--range", action="append", default=[], metavar="NAME=LO:HI",
                        help="range of an integer input")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import onnxruntime as ort

    dims = {k: int(v) for k, v in parse_pairs(args.dim, "--dim").items()}
    ranges = parse_pairs(args.range, "--range")
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(args.model, options, providers=["CPUExecutionProvider"])
    rows = gather_rows(args.model)
    rng = np.random.default_rng(args.seed)
    os.makedirs(args.outdir, exist_ok=True)

    feeds = {}
    for info in session.get_inputs():
        if info.type not in ONNX_TO_NUMPY:
            sys.exit(f"reference.py: input {info.name} has type {info.type}")
        shape = []
        for i, d in enumerate(info.shape):
            if isinstance(d, int):
                shape.append(d)
            elif d in dims:
                shape.append(dims[d])
            else:
                sys.exit(f"reference.py: input {info.name} dimension {i} is "
                         f"symbolic ('{d}'): bind it with --dim {d}=N")
        value = make_input(info.name, ONNX_TO_NUMPY[info.type], shape, rows, ranges, rng)
        feeds[info.name] = value
        np.save(os.path.join(args.outdir, info.name + ".npy"), value)
        print(f"input {info.name}: {value.dtype}{list(value.shape)} "
              f"min {value.min()} max {value.max()}")

    names = [o.name for o in session.get_outputs()]
    ok = True
    for name, value in zip(names, session.run(names, feeds)):
        if os.sep in name:
            sys.exit(f"reference.py: output name {name!r} cannot be a file name")
        np.save(os.path.join(args.outdir, name + ".npy"), value)
        finite = np.isfinite(value).all() if np.issubdtype(value.dtype, np.floating) else True
        ok &= bool(finite)
        print(f"output {name}: {value.dtype}{list(value.shape)} "
              f"min {value.min():.4g} max {value.max():.4g} "
              f"mean |x| {np.abs(value).mean():.4g}{'' if finite else ' NOT FINITE'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
