"""Runs ONNX node tests through partition: run_node_tests.py [options] TEST|OP...

ONNX ships one small model per operator case with inputs and expected
outputs (Debian's libonnx-testdata: DATA/<test>/model.onnx and
test_data_set_0/{input,output}_N.pb). For each test this script

  1. makes the model static: operands that `part` needs at compile time (a
     Reshape's shape, Unsqueeze/Squeeze/Reduce* axes, Slice bounds, Split
     sizes, an Expand shape, Trilu's k, ConstantOfShape's shape, Range's
     bounds, GatherND's indices) and that the test feeds as graph inputs
     become Constant nodes holding the test's values; symbolic dimensions
     are bound to the test data's sizes;
  2. imports it (partition-import), makes a 1-device program
     (partition-opt --part-spmd="mesh=dp:1") and plan (partition-translate
     --part-to-plan), runs it on the CPU backend (partition-run) with the
     test's inputs as .npy files, and
  3. compares every output with output_N.pb.

Arguments are test names (test_add) or ONNX op types (Add: every test whose
graph is that op alone). In a --list file, '#' starts a comment and a line
`-test_name  # why` leaves that test out: it is still printed, as SKIP with
that reason, so a curated exclusion is never silent. One line per test: PASS, FAIL with the reason, or
SKIP with the reason; then a summary; exit status 1 when any test failed.

SKIP is reserved for reasons outside the op's semantics, and only when the
importer rejects the model cleanly (an error message, non-zero exit, no
crash):
  - an input or output dtype `part` does not have (double, string, bool
    outputs (bool inputs are fed as .npy '|b1', read as i32 0 / 1),
    uint8/16/32/64, int8/16, optional/sequence types): the importer must
    reject the model with a diagnostic; accepting it is a FAIL;
  - bfloat16 inputs or outputs: `part` has bf16, but partition-run exchanges
    .npy files, which have no bf16 (SKIP without importing);
  - a model opset below 13 (the importer takes 13..21) with an op whose
    schema changed since; when every op's schema is the same at 13 the model
    is declared opset 13 and run.

Tolerances, |out - ref| <= atol + rtol * |ref| (NaN must match NaN):
  f32: atol 1e-5, rtol 1e-5. Each test is one op on O(1) random inputs; its
       longest f32 reduction has about 120 terms (LayerNormalization over a
       2x3x4x5 tensor), so reordered sums stay within about 1e-6, and f32
       exp/log/tanh/erf/pow are within a few ulp (1e-5 relative is ~80 ulp).
  f16: atol 2e-3, rtol 2e-3: two f16 ulps at 1.0 (2^-9 = 1.95e-3), for a
       result rounded once from f32 against a reference rounded once too.
  integers: exact.
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

DEFAULT_DATA = "/usr/share/libonnx-testdata/data/node"

# Operand positions that must be compile-time constants in `part`, by op.
STATIC_OPERANDS = {
    "Reshape": (1,),
    "Expand": (1,),
    "Unsqueeze": (1,),
    "Squeeze": (1,),
    "Slice": (1, 2, 3, 4),
    "Split": (1,),
    "ReduceSum": (1,),
    "ReduceMean": (1,),
    "ReduceMax": (1,),
    "ReduceMin": (1,),
    "ReduceProd": (1,),
    "Trilu": (1,),
    "ConstantOfShape": (0,),
    "Range": (0, 1, 2),
    "Tile": (1,),
    "CumSum": (1,),
    # Indices that select data: partition gathers at constant indices.
    "GatherND": (1,),
}

# ONNX element types partition-run can exchange as .npy.
RUNNABLE = {
    TensorProto.FLOAT: "f32",
    TensorProto.FLOAT16: "f16",
    TensorProto.INT32: "i32",
    TensorProto.INT64: "i64",
}

# Graph inputs may also be bool: .npy '|b1', read as i32 0 / 1 (booleans in
# `part`). Outputs may not (they would come back as i32).
RUNNABLE_INPUTS = set(RUNNABLE) | {TensorProto.BOOL}

TOLERANCE = {"f32": (1e-5, 1e-5), "f16": (2e-3, 2e-3)}

MIN_OPSET, MAX_OPSET = 13, 21


class Result:
    def __init__(self, status, reason=""):
        self.status, self.reason = status, reason


def type_name(value_info):
    t = value_info.type
    kind = t.WhichOneof("value")
    if kind != "tensor_type":
        return kind or "unknown"
    return TensorProto.DataType.Name(t.tensor_type.elem_type).lower()


def elem_type(value_info):
    t = value_info.type
    return t.tensor_type.elem_type if t.WhichOneof("value") == "tensor_type" else None


def load_tensors(case_dir, prefix):
    files = sorted((f for f in os.listdir(case_dir) if re.fullmatch(prefix + r"_\d+\.pb", f)),
                   key=lambda f: int(f[len(prefix) + 1:-3]))
    out = []
    for f in files:
        tensor = TensorProto()
        with open(os.path.join(case_dir, f), "rb") as fh:
            tensor.ParseFromString(fh.read())
        out.append(tensor)
    return out


def ai_onnx_opset(model):
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            return imp
    return None


def upgrade_opset(model):
    """Declares a model below opset 13 as opset 13 when none of its ops
    changed in between. Returns None when done (or not needed), else why not."""
    imp = ai_onnx_opset(model)
    if imp is None or imp.version >= MIN_OPSET:
        return None
    for node in model.graph.node:
        if node.domain not in ("", "ai.onnx"):
            continue
        since = onnx.defs.get_schema(node.op_type, MIN_OPSET, "").since_version
        if since > imp.version:
            return (f"opset {imp.version} is below the importer's {MIN_OPSET}..{MAX_OPSET} and "
                    f"{node.op_type} changed at opset {since}")
    imp.version = MIN_OPSET
    return None


def freeze_static_operands(model, feeds):
    """Turns graph inputs used as static operands into Constant nodes holding
    the test's values. Returns the names frozen."""
    graph = model.graph
    inputs = {i.name for i in graph.input}
    frozen = []
    for node in graph.node:
        for pos in STATIC_OPERANDS.get(node.op_type, ()):
            if pos < len(node.input) and node.input[pos] in inputs and node.input[pos] not in frozen:
                frozen.append(node.input[pos])
    if not frozen:
        return frozen
    constants = [helper.make_node("Constant", [], [name], name=f"frozen_{name}",
                                  value=numpy_helper.from_array(feeds[name], name))
                 for name in frozen]
    kept = [i for i in graph.input if i.name not in frozen]
    del graph.input[:]
    graph.input.extend(kept)
    nodes = constants + list(graph.node)
    del graph.node[:]
    graph.node.extend(nodes)
    return frozen


def dim_bindings(model, feeds):
    dims = {}
    for vi in model.graph.input:
        if vi.name not in feeds or vi.type.WhichOneof("value") != "tensor_type":
            continue
        for i, d in enumerate(vi.type.tensor_type.shape.dim):
            if d.HasField("dim_param") and d.dim_param and i < feeds[vi.name].ndim:
                dims[d.dim_param] = feeds[vi.name].shape[i]
    return dims


def run(cmd, timeout):
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"{os.path.basename(cmd[0])} timed out after {timeout} s"
    return proc, None


def first_error(text):
    for line in text.splitlines():
        if "error" in line:
            return line.strip()
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[0].strip() if lines else "(no message)"


def describe_failure(tool, proc):
    if proc.returncode < 0 or proc.returncode >= 128:
        sig = -proc.returncode if proc.returncode < 0 else proc.returncode - 128
        return f"{tool} crashed (signal {sig}): {first_error(proc.stderr)}"
    return f"{tool} failed: {first_error(proc.stderr + proc.stdout)}"


def clean_rejection(proc):
    return (proc is not None and 0 < proc.returncode < 128 and "error" in proc.stderr)


def compare(name, out, ref):
    if out.shape != ref.shape:
        return f"output {name}: shape {list(out.shape)}, expected {list(ref.shape)}"
    if out.dtype != ref.dtype:
        return f"output {name}: dtype {out.dtype}, expected {ref.dtype}"
    if np.issubdtype(ref.dtype, np.integer):
        bad = out != ref
        if bad.any():
            i = tuple(int(x) for x in np.argwhere(bad)[0])
            return f"output {name}: {int(bad.sum())} elements differ, first at {i}: {out[i]} vs {ref[i]}"
        return None
    atol, rtol = TOLERANCE["f16" if ref.dtype == np.float16 else "f32"]
    o, r = out.astype(np.float64), ref.astype(np.float64)
    nan_ok = np.isnan(o) == np.isnan(r)
    with np.errstate(invalid="ignore"):
        err = np.where(np.isnan(r), 0.0, np.abs(o - r))
        same_inf = np.isinf(r) & (o == r)
        err = np.where(same_inf, 0.0, err)
        bound = atol + rtol * np.where(np.isfinite(r), np.abs(r), 0.0)
        bad = (~nan_ok) | ~(err <= bound)
    if bad.any():
        i = tuple(int(x) for x in np.argwhere(bad)[0])
        return (f"output {name}: {int(bad.sum())} of {ref.size} elements off "
                f"(|err| {np.nanmax(np.where(np.isfinite(err), err, 0.0)):.3g}, "
                f"bound {atol:g} + {rtol:g}|ref|), first at {i}: {o[i]!r} vs {r[i]!r}")
    return None


def run_test(test, args):
    case = os.path.join(args.data_dir, test)
    work = os.path.join(args.work_dir, test)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    tools = args.tools

    model = onnx.load(os.path.join(case, "model.onnx"))
    graph = model.graph
    data = os.path.join(case, "test_data_set_0")
    init_names = {t.name for t in graph.initializer}
    graph_inputs = [i for i in graph.input if i.name not in init_names]
    in_tensors = load_tensors(data, "input")
    out_tensors = load_tensors(data, "output")
    if len(in_tensors) != len(graph_inputs) or len(out_tensors) != len(graph.output):
        return Result("FAIL", f"test data has {len(in_tensors)} inputs and {len(out_tensors)} "
                              f"outputs, the model {len(graph_inputs)} and {len(graph.output)}")

    # Types at the program's boundary that cannot be exchanged or represented.
    boundary = [(f"input {vi.name}", vi) for vi in graph_inputs] + \
               [(f"output {vi.name}", vi) for vi in graph.output]
    exchangeable = {f"input {vi.name}": RUNNABLE_INPUTS for vi in graph_inputs}
    bf16 = [f"{what} is bfloat16" for what, vi in boundary if elem_type(vi) == TensorProto.BFLOAT16]
    if bf16:
        return Result("SKIP", f"{', '.join(bf16)}: .npy has no bfloat16, so partition-run "
                              "cannot exchange it")
    unsupported = [f"{what} is {type_name(vi)}" for what, vi in boundary
                   if elem_type(vi) not in exchangeable.get(what, RUNNABLE)]

    feeds = {vi.name: numpy_helper.to_array(tensor)
             for vi, tensor in zip(graph_inputs, in_tensors)
             if elem_type(vi) in RUNNABLE_INPUTS}
    refs = {vi.name: numpy_helper.to_array(t) if elem_type(vi) in RUNNABLE else None
            for vi, t in zip(graph.output, out_tensors)}

    declared = ai_onnx_opset(model).version if ai_onnx_opset(model) else None
    why_not_opset = upgrade_opset(model)
    frozen = freeze_static_operands(model, feeds) if not unsupported else []
    onnx_path = os.path.join(work, "model.onnx")
    onnx.save(model, onnx_path)

    cmd = [tools["partition-import"], onnx_path, "-o", os.path.join(work, "m.mlir"),
           "--weights", os.path.join(work, "w.safetensors")]
    for name, value in dim_bindings(model, feeds).items():
        cmd += ["--dim", f"{name}={value}"]
    proc, timeout = run(cmd, args.timeout)
    if timeout:
        return Result("FAIL", timeout)

    reasons = unsupported + ([why_not_opset] if why_not_opset else [])
    if reasons:
        if proc.returncode == 0:
            return Result("FAIL", f"{'; '.join(reasons)}, but partition-import accepted the model")
        if not clean_rejection(proc):
            return Result("FAIL", describe_failure("partition-import", proc))
        return Result("SKIP", f"{'; '.join(reasons)} (partition-import: {first_error(proc.stderr)})")
    if proc.returncode != 0:
        return Result("FAIL", describe_failure("partition-import", proc))

    plan = os.path.join(work, "m.plan")
    proc, timeout = run([tools["partition-opt"], os.path.join(work, "m.mlir"),
                         "--part-spmd=mesh=dp:1", "-o", os.path.join(work, "spmd.mlir")],
                        args.timeout)
    if timeout or proc.returncode != 0:
        return Result("FAIL", timeout or describe_failure("partition-opt", proc))
    proc, timeout = run([tools["partition-translate"], "--part-to-plan",
                         os.path.join(work, "spmd.mlir"), "-o", plan], args.timeout)
    if timeout or proc.returncode != 0:
        return Result("FAIL", timeout or describe_failure("partition-translate", proc))
    proc, timeout = run([tools["partition-run"], plan, "--dump"], args.timeout)
    if timeout or proc.returncode != 0:
        return Result("FAIL", timeout or describe_failure("partition-run --dump", proc))
    plan_inputs = re.findall(r'^\s*input "([^"]+)"', proc.stdout, re.M)
    plan_params = re.findall(r'^\s*param "([^"]+)"', proc.stdout, re.M)

    cmd = [tools["partition-run"], plan, "--backend", "cpu", "--output-dir",
           os.path.join(work, "out")]
    if plan_params:
        cmd += ["--weights", os.path.join(work, "w.safetensors")]
    for index, name in enumerate(plan_inputs):
        if name not in feeds:
            return Result("FAIL", f"the plan takes input {name}, which the model does not have")
        path = os.path.join(work, f"input_{index}.npy")
        np.save(path, feeds[name])
        cmd += ["--input", f"{name}={path}"]
    os.makedirs(os.path.join(work, "out"))
    proc, timeout = run(cmd, args.timeout)
    if timeout or proc.returncode != 0:
        return Result("FAIL", timeout or describe_failure("partition-run", proc))

    for name, ref in refs.items():
        path = os.path.join(work, "out", name + ".npy")
        if not os.path.exists(path):
            return Result("FAIL", f"partition-run wrote no output {name}")
        problem = compare(name, np.load(path), ref)
        if problem:
            return Result("FAIL", problem)
    notes = []
    if frozen:
        notes.append("constant " + ", ".join(frozen))
    if declared is not None and declared < MIN_OPSET:
        notes.append(f"opset {declared} declared as {MIN_OPSET}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return Result("PASS", "; ".join(notes))


def select_tests(names, data_dir):
    """Test names as given; op types expanded to every test whose graph is
    that op alone, in name order."""
    all_tests = sorted(d for d in os.listdir(data_dir)
                       if os.path.exists(os.path.join(data_dir, d, "model.onnx")))
    by_op = None
    selected, problems = [], []
    for name in names:
        if name.startswith("test_"):
            if name in all_tests:
                selected.append(name)
            else:
                problems.append(f"no node test {name} in {data_dir}")
            continue
        if by_op is None:
            by_op = {}
            for t in all_tests:
                ops = {n.op_type for n in onnx.load(os.path.join(data_dir, t, "model.onnx")).graph.node}
                if len(ops) == 1:
                    by_op.setdefault(ops.pop(), []).append(t)
        if name not in by_op:
            problems.append(f"no node test has op {name} alone")
            continue
        selected.extend(by_op[name])
    return list(dict.fromkeys(selected)), problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tests", nargs="*", metavar="TEST|OP")
    parser.add_argument("--list", action="append", default=[], metavar="FILE",
                        help="read more TEST|OP names from FILE ('#' starts a comment)")
    parser.add_argument("--data-dir", default=DEFAULT_DATA)
    parser.add_argument("--bin-dir", help="folder of the partition tools (default: PATH)")
    parser.add_argument("--tool", action="append", default=[], metavar="PATH",
                        help="path of one tool (partition-import, -opt, -translate, -run), "
                             "overriding --bin-dir for it")
    parser.add_argument("--work-dir", required=True, help="scratch folder (one subfolder a test)")
    parser.add_argument("--timeout", type=int, default=120, help="seconds per tool run")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--keep", action="store_true", help="keep the scratch files of passing tests")
    args = parser.parse_args()
    args.tools = {t: os.path.join(args.bin_dir, t) if args.bin_dir else t
                  for t in ("partition-import", "partition-opt", "partition-translate",
                            "partition-run")}
    for path in args.tool:
        if os.path.basename(path) not in args.tools:
            parser.error(f"--tool {path}: not one of {', '.join(args.tools)}")
        args.tools[os.path.basename(path)] = path

    names = list(args.tests)
    excluded = {}
    for path in args.list:
        with open(path) as fh:
            for line in fh:
                words, _, comment = line.partition("#")
                for word in words.split():
                    if word.startswith("-"):
                        excluded[word[1:]] = (f"excluded by {os.path.basename(path)}: "
                                              f"{comment.strip() or 'no reason given'}")
                    else:
                        names.append(word)
    if not names:
        parser.error("no tests given")
    tests, problems = select_tests(names, args.data_dir)
    problems += [f"excluded test {t} is not selected" for t in excluded if t not in tests]
    for p in problems:
        print(f"ERROR {p}")
    os.makedirs(args.work_dir, exist_ok=True)

    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [None if t in excluded else pool.submit(run_test, t, args) for t in tests]
        for test, future in zip(tests, futures):
            try:
                result = Result("SKIP", excluded[test]) if future is None else future.result()
            except Exception as e:  # a bug in this script or an unreadable test
                result = Result("FAIL", f"{type(e).__name__}: {e}")
            counts[result.status] += 1
            print(f"{result.status} {test}" + (f": {result.reason}" if result.reason else ""),
                  flush=True)
    print(f"node-tests: {counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
    return 1 if counts["FAIL"] or problems else 0


if __name__ == "__main__":
    sys.exit(main())
