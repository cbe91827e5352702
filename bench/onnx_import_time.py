"""Time of `partition-import` on ONNX files against model size, with baselines.

Builds GPT-2 style models with the GPT class of test/Import/models/export.py
(the model the import tests use: token + position embeddings, pre-LN blocks,
causal attention written with matmul/softmax and a mask buffer, tanh GELU,
tied LM head) at 12, 48 and 96 layers of a modest width (hidden 256, 8 heads,
vocabulary 1024: about 9.7M, 38M and 76M parameters, 40, 154 and 306 MB
files), with seeded weights, and exports each as export.py does
(torch.onnx.export, opset 17, dynamic `batch` and `seq`, constant folding)
into a temporary directory; export.py itself is only imported, its files are
not touched. Then, per model, best of 3, wall-clock and CPU time:

  partition-import     `partition-import model.onnx --dim batch=2 --dim seq=8
                       -o out.mlir --weights w.safetensors` (parse, bind the
                       dimensions, fold shape arithmetic, part-raise, verify,
                       print the IR, write the weights to a new file), and the
                       same without --weights; process start-up included.
  ORT default          onnxruntime.InferenceSession(model) with the default
                       graph optimisations (ORT_ENABLE_ALL: constant folding
                       and ORT's fusions, the counterpart of part-raise), CPU
                       provider, in a subprocess of the project's .venv
                       Python, timing the constructor only (the import of
                       onnxruntime and process start-up left out).
  ORT no opt           the same with ORT_DISABLE_ALL (load, resolve and place
                       the graph and its initializers, no rewriting).
  onnx load+check      onnx.load(model) + onnx.checker.check_model(model) in a
                       subprocess of this Python, timing those two calls only.

Prints, per model: ONNX nodes, part ops in the imported IR, parameters, file
size, partition-import's time with and without weights, its time per ONNX
node, and its time (with weights) divided by each baseline's; every tool's
wall-clock and CPU time (CPU time is the less disturbed by other load on the
machine); and the marginal time per node (extra time over the smallest model
/ extra nodes), which leaves out fixed costs: growth is linear when it stays
about flat as the model grows.

usage: /usr/bin/python3 bench/onnx_import_time.py [--build build]
           [--layers 12 48 96] [--hidden 256] [--heads 8] [--vocab 1024]
           [--repeat 3] [--ort-python .venv/bin/python] [--keep DIR]

Takes about 5 minutes on 2 cores, most of it exporting the 96-layer model
(torch's exporter is slower than linear in depth); --keep DIR keeps the
exported models in DIR and reuses them on the next run.

Needs torch and onnx for this Python (Debian: python3-torch, python3-onnx,
as for export.py and bench/gpt_forward_cpu.py, so /usr/bin/python3 where
`python3` is another Python) and onnxruntime for --ort-python
(scripts/setup.sh installs it into .venv).
"""
import argparse
import importlib.util
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPORT_PY = os.path.join(ROOT, "test", "Import", "models", "export.py")
DIMS = ["--dim", "batch=2", "--dim", "seq=8"]

# Run in a subprocess with the .venv Python: argv = repeat, paths...; prints
# one JSON object {path: {"default": [wall, cpu], "disable_all": [wall, cpu]}},
# each the best of `repeat` (CPU time: all of the process's threads).
ORT_TIMER = r"""
import json, sys, time
import onnxruntime as ort
repeat, paths = int(sys.argv[1]), sys.argv[2:]
levels = {"default": None, "disable_all": ort.GraphOptimizationLevel.ORT_DISABLE_ALL}
out = {"version": ort.__version__}
for path in paths:
    out[path] = {}
    for name, level in levels.items():
        wall = cpu = float("inf")
        for _ in range(repeat):
            options = ort.SessionOptions()
            if level is not None:
                options.graph_optimization_level = level
            w, c = time.perf_counter(), time.process_time()
            session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
            wall = min(wall, time.perf_counter() - w)
            cpu = min(cpu, time.process_time() - c)
            del session
        out[path][name] = [wall, cpu]
print(json.dumps(out))
"""

# Run in a subprocess with this Python: onnx.load + onnx.checker.check_model;
# prints {path: [wall, cpu]}.
ONNX_TIMER = r"""
import json, sys, time
import onnx
repeat, paths = int(sys.argv[1]), sys.argv[2:]
out = {"version": onnx.__version__}
for path in paths:
    wall = cpu = float("inf")
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        model = onnx.load(path)
        onnx.checker.check_model(model)
        wall = min(wall, time.perf_counter() - w)
        cpu = min(cpu, time.process_time() - c)
        del model
    out[path] = [wall, cpu]
print(json.dumps(out))
"""


def gpt_class():
    """The Gpt class of export.py. It is defined inside build_models() (which
    also builds export.py's four small test models, in milliseconds), so it
    is taken from the GPT instance that function returns."""
    sys.dont_write_bytecode = True  # no __pycache__ next to export.py
    spec = importlib.util.spec_from_file_location("export", EXPORT_PY)
    export = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(export)
    return type(export.build_models()["gpt"][0]), export.MAX_SEQ


def export_gpt(Gpt, path, layers, hidden, heads, vocab):
    """Exports the model to path unless it is there already (--keep);
    returns its parameter count (the tied embedding counted once)."""
    import torch
    torch.manual_seed(layers)
    model = Gpt(vocab=vocab, hidden=hidden, heads=heads, layers=layers).eval()
    params = sum(p.numel() for p in model.parameters())
    if os.path.exists(path):
        return params
    bs = {0: "batch", 1: "seq"}
    with torch.no_grad():
        torch.onnx.export(
            model, (torch.zeros(2, 8, dtype=torch.long),), path,
            input_names=["input_ids"], output_names=["logits"],
            dynamic_axes={"input_ids": bs, "logits": bs}, opset_version=17,
            do_constant_folding=True, export_params=True)
    return params


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def best_of(n, command, outputs):
    """[wall, cpu] seconds of the command, each the best of n runs; the
    output files are removed before each run, so that each run writes new
    files (truncating a large old one costs time of its own)."""
    wall = cpu = float("inf")
    for _ in range(n):
        for path in outputs:
            if os.path.exists(path):
                os.remove(path)
        w, c = time.perf_counter(), children_cpu()
        out = subprocess.run(command, capture_output=True, text=True)
        wall = min(wall, time.perf_counter() - w)
        cpu = min(cpu, children_cpu() - c)
        if out.returncode:
            sys.exit(f"{' '.join(command)}:\n{out.stderr}")
    return [wall, cpu]


def run_timer(python, script, repeat, paths):
    out = subprocess.run([python, "-c", script, str(repeat), *paths],
                         capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"{python}: {out.stderr}")
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--layers", type=int, nargs="+", default=[12, 48, 96])
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--vocab", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--ort-python", default=os.path.join(ROOT, ".venv", "bin", "python"))
    ap.add_argument("--keep", metavar="DIR",
                    help="export the models into DIR and keep them; models already "
                         "there are reused (exporting 96 layers takes minutes)")
    o = ap.parse_args()
    tool = os.path.join(o.build, "bin", "partition-import")
    if not os.path.exists(tool):
        sys.exit(f"{tool}: not found (build first, or pass --build)")

    missing = [m for m in ("torch", "onnx") if importlib.util.find_spec(m) is None]
    if missing:
        sys.exit(f"{sys.executable} has no {' or '.join(missing)}: run with a Python "
                 "that has both (Debian python3-torch, python3-onnx: /usr/bin/python3)")
    import onnx
    Gpt, max_seq = gpt_class()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        models = []
        if o.keep:
            os.makedirs(o.keep, exist_ok=True)
        for L in o.layers:
            path = os.path.join(o.keep or d, f"gpt-l{L}-h{o.hidden}-n{o.heads}-v{o.vocab}.onnx")
            start, reused = time.perf_counter(), os.path.exists(path)
            params = export_gpt(Gpt, path, L, o.hidden, o.heads, o.vocab)
            print(f"{path}: " + ("reused" if reused else
                                 f"exported in {time.perf_counter() - start:.1f} s"),
                  file=sys.stderr)
            nodes = len(onnx.load(path, load_external_data=False).graph.node)
            models.append((L, path, nodes, params, os.path.getsize(path)))

        ir, weights = os.path.join(d, "out.mlir"), os.path.join(d, "w.safetensors")
        for L, path, nodes, params, size in models:
            t_w = best_of(o.repeat, [tool, path, *DIMS, "-o", ir, "--weights", weights],
                          [ir, weights])
            ops = sum(1 for line in open(ir) if " = part." in line)
            t_nw = best_of(o.repeat, [tool, path, *DIMS, "-o", ir], [ir, weights])
            rows.append(dict(L=L, path=path, nodes=nodes, params=params, size=size,
                             ops=ops, t_w=t_w, t_nw=t_nw))
        paths = [m[1] for m in models]
        ort = run_timer(o.ort_python, ORT_TIMER, o.repeat, paths)
        onx = run_timer(sys.executable, ONNX_TIMER, o.repeat, paths)
        for r in rows:
            r["ort"] = ort[r["path"]]["default"]
            r["ort0"] = ort[r["path"]]["disable_all"]
            r["onnx"] = onx[r["path"]]

    print(f"GPT (export.py), hidden {o.hidden}, {o.heads} heads, vocabulary "
          f"{o.vocab}, position table {max_seq}, opset 17; --dim batch=2 "
          f"--dim seq=8; best of {o.repeat}; onnxruntime {ort['version']}, "
          f"onnx {onx['version']}")
    ms = lambda t: f"{t * 1e3:.0f} ms"
    W, C = 0, 1
    print("\nwall-clock time; ratios = partition-import (with weights) / baseline")
    print("| layers | ONNX nodes | part ops | parameters | file MB "
          "| import (weights) | import (no weights) | per node "
          "| / ORT default | / ORT no opt | / onnx load+check |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        t = r["t_w"][W]
        print(f"| {r['L']} | {r['nodes']} | {r['ops']} | {r['params'] / 1e6:.1f}M "
              f"| {r['size'] / 1e6:.0f} | {ms(t)} | {ms(r['t_nw'][W])} "
              f"| {t * 1e6 / r['nodes']:.0f} us "
              f"| {t / r['ort'][W]:.2f} | {t / r['ort0'][W]:.2f} "
              f"| {t / r['onnx'][W]:.2f} |")
    tools = (("partition-import, weights", "t_w"),
             ("partition-import, no weights", "t_nw"),
             ("ORT session, default", "ort"),
             ("ORT session, ORT_DISABLE_ALL", "ort0"),
             ("onnx load + check_model", "onnx"))
    print("\nwall-clock (CPU) time of each; CPU time is the less disturbed by "
          "other load on the machine")
    print("| | " + " | ".join(f"{r['L']} layers" for r in rows) + " |")
    print("|---|" + "---|" * len(rows))
    for name, key in tools:
        print(f"| {name} | " + " | ".join(f"{ms(r[key][W])} ({ms(r[key][C])})"
                                          for r in rows) + " |")
    if len(rows) > 1:
        first = rows[0]
        print(f"\nmarginal time per ONNX node over the {first['L']}-layer model, "
              "wall-clock (CPU):")
        for name, key in tools:
            marg = [" (".join(f"{(r[key][i] - first[key][i]) * 1e6 / (r['nodes'] - first['nodes']):.0f}"
                              for i in (W, C)) + f") us at {r['L']}" for r in rows[1:]]
            print(f"  {name:<30} " + ", ".join(marg))


if __name__ == "__main__":
    main()
