"""Exports one model family with today's exporters and checks what a user
gets from it, printing one line per check (FileCheck reads them):

  check_export.py --bin DIR FAMILY OUTDIR [export_current.py flags]
                  [--meshes M,M,...] [--train MESH]
                  [--hf-checkpoint [M,M,...]] [--known-alias TORCH=IMPORTED]
  check_export.py --shapes       (prints the --shape flags it imports with)

DIR holds the partition tools. The model is exported by export_current.py
(with the flags after FAMILY OUTDIR that it takes), imported with its
inputs' shapes bound to batch 2 and sequence 8 (--shape), and then:

  params    the imported parameters (part.role parameter) against torch's
            named_parameters(): names and shapes (the shape weights files
            hold, part.stored_shape where the program views another), in
            any order; how many the program views transposed
            (part.stored_permutation); and their values in the weights file
            against the module's, bit for bit (--known-alias: a tied
            parameter the file names only by its other name, imported under
            that name)
  run MESH  the logits of the partitioned program against torch's (5e-5
            absolute plus 5e-5 relative, as test/Import/models), with the
            number of part.attention ops and of all-reduces over the tensor
            parallel axes of that mesh; for a mixture of experts also its
            part.expert_dispatch ops, the parameters split over ep (on
            dimension 0, the experts) and the all-to-alls over ep
  train     3 SGD steps of the cross-entropy on next tokens on MESH against
            the same on one rank: the losses (2e-5) and every trained
            parameter (1e-5 + 1e-3 relative); and the one rank's against
            torch's 3 steps on the module (a tied parameter trained as one,
            every parameter trained): the same tolerances
  hf        the weights file partition-import wrote holds, by name, the
            Hugging Face checkpoint's tensors (the module's state dict as
            safetensors), bit for bit; then, for each mesh (dp:1 when none
            is given), the plan run with that checkpoint as its weights
            file gives torch's logits

Exits non-zero after the first failed check, naming it.
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
E2E = os.path.join(HERE, "..", "..", "e2e", "Inputs")
BATCH, SEQ = 2, 8


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"FAILED ({r.returncode}): {' '.join(cmd)}\n"
                 f"{r.stdout[-3000:]}{r.stderr[-3000:]}")
    return r.stdout


def tool(args, name):
    return os.path.join(args.bin, name)


def shape_bindings(names):
    """--shape INPUT=2x8 for each input: input_ids and attention_mask are
    [batch, sequence], whatever the exporter named those dimensions (dynamo
    names them after torch's symbols, s72 and the like)."""
    return [f"--shape={name}={BATCH}x{SEQ}" for name in names]


def read_params(mlir_path):
    """name -> (shape in weights files, viewed transposed) of the function
    arguments with role parameter."""
    text = open(mlir_path).read()
    params = {}
    arg = re.compile(r"%arg\d+: tensor<([0-9x]*)x?[a-z0-9]+> \{([^}]*)\}")
    for shape, attrs in arg.findall(text):
        if "#part.role<parameter>" not in attrs:
            continue
        name = re.search(r'part\.name = "([^"]*)"', attrs).group(1)
        stored = re.search(r"part\.stored_shape = array<i64: ([0-9, ]*)>",
                           attrs)
        dims = stored.group(1).split(", ") if stored else (
            shape.split("x") if shape else [])
        params[name] = ([int(d) for d in dims if d],
                        "part.stored_permutation" in attrs)
    return params


def differing_values(out, names, aliases):
    """The parameters whose data in the imported weights file is not the
    module's (state.safetensors), bit for bit, in either layout."""
    from safetensors.numpy import load_file
    got, want = load_file(f"{out}/w.safetensors"), load_file(
        f"{out}/state.safetensors")
    differ = []
    for n in sorted(names):
        a, b = got[aliases.get(n, n)], want[n]
        same = (a.shape == b.shape and np.array_equal(a.view(np.uint32),
                                                     b.view(np.uint32)))
        same |= (a.ndim == 2 and a.T.shape == b.shape and np.array_equal(
            a.T.view(np.uint32), b.view(np.uint32)))
        if not same:
            differ.append(n)
    return differ


def check_params(out, family, aliases):
    want = {}
    for line in open(f"{out}/params.txt"):
        name, shape = line.split(" ", 1)
        want[name] = [int(d) for d in re.findall(r"\d+", shape)]
    got = read_params(f"{out}/m.mlir")
    for torch_name, imported in aliases.items():
        if imported in got and torch_name not in got:
            got[torch_name] = got.pop(imported)
    missing = sorted(set(want) - set(got))
    extra = sorted(set(got) - set(want))
    both = set(want) & set(got)
    # Weights files hold torch's layout; the program may view a weight the
    # exporter folded into its transpose as [in, out].
    shapes = sorted(n for n in both if want[n] != got[n][0])
    transposed = sorted(n for n in both if got[n][1])
    if missing or extra or shapes:
        sys.exit(f"params: {family}: not torch's named_parameters():\n"
                 f"  missing {missing}\n  not parameters in torch {extra}\n"
                 f"  other shapes {[(n, got[n][0], want[n]) for n in shapes]}")
    differ = differing_values(out, both, aliases)
    if differ:
        sys.exit(f"params: {family}: values differ from the module's: "
                 f"{', '.join(differ)}")
    known = "".join(f"; {t} imported as {i}" for t, i in aliases.items())
    print(f"params: {len(got)} equal named_parameters() "
          f"({len(transposed)} viewed transposed{known})")


def inputs(out, masked):
    args = ["--input", f"input_ids={out}/input_ids.npy"]
    if masked:
        args += ["--input", f"attention_mask={out}/attention_mask.npy"]
    return args


def compare(ref, got, atol=5e-5, rtol=5e-5):
    a, b = np.load(ref), np.load(got)
    if a.shape != b.shape:
        return f"shape {b.shape}, torch {a.shape}"
    bad = np.abs(a - b) > atol + rtol * np.abs(a)
    if not np.isfinite(b).all() or bad.any():
        return (f"{int(bad.sum())} of {a.size} differ, largest "
                f"{float(np.nanmax(np.abs(a - b))):.3g}")
    return None


def run_mesh(args, out, mesh, masked, weights):
    tag = mesh.replace(",", "_").replace(":", "")
    ir = f"{out}/{tag}.mlir"
    run([tool(args, "partition-opt"), f"{out}/m.mlir",
         f"--part-spmd=mesh={mesh}", "-o", ir])
    plan = f"{out}/{tag}.plan"
    run([tool(args, "partition-translate"), "--part-to-plan", ir, "-o", plan])
    result = f"{out}/out-{tag}"
    os.makedirs(result, exist_ok=True)
    run([tool(args, "partition-run"), plan, "--backend", "cpu",
         "--weights", weights, "--output-dir", result] +
        inputs(out, masked))
    return ir, f"{result}/logits.npy"


def check_mesh(args, out, mesh, masked):
    ir, logits = run_mesh(args, out, mesh, masked, f"{out}/w.safetensors")
    why = compare(f"{out}/logits.npy", logits)
    if why:
        sys.exit(f"run {mesh}: logits differ from torch: {why}")
    text = open(ir).read()
    # The ops (`= part.attention ...`), not the reasons of collectives that
    # name them.
    attention = len(re.findall(r"= part\.attention\b", text))
    tp = len(re.findall(r'part\.all_reduce .*axes \["tp"', text))
    print(f"run {mesh}: logits equal torch; attention {attention}; "
          f"tp all-reduces {tp}{experts_summary(text)}")


def experts_summary(text):
    """For a mixture of experts: its expert dispatches, the parameters split
    over the ep axis (the experts' weights, dimension 0) and the
    all-to-alls over ep; nothing for a dense model."""
    dispatches = len(re.findall(r"part\.expert_dispatch\b", text))
    if not dispatches:
        return ""
    signature = re.search(r"func\.func @main\((.*)", text).group(1)
    split = sum(1 for arg in signature.split("%arg")
                if "#part.role<parameter>" in arg and re.search(
                    r'part\.sharding = #part\.sharding<@mesh, \[\{"ep"\}',
                    arg))
    alltoall = len(re.findall(r'part\.all_to_all .*axes \["ep"\]', text))
    return (f"; expert dispatches {dispatches}; parameters split over ep "
            f"{split}; ep all-to-alls {alltoall}")


def check_hf(args, out, masked, meshes):
    from safetensors.numpy import load_file
    state = load_file(f"{out}/state.safetensors")
    written = load_file(f"{out}/w.safetensors")
    differ = sorted(n for n in written
                    if n not in state or state[n].shape != written[n].shape
                    or not np.array_equal(state[n], written[n]))
    if differ:
        sys.exit(f"hf: the weights file differs from the Hugging Face "
                 f"checkpoint in {differ}")
    print(f"hf: the weights file holds the Hugging Face checkpoint's "
          f"{len(written)} tensors")
    for mesh in meshes.split(","):
        mesh = mesh.replace("+", ",")
        _, logits = run_mesh(args, out, mesh, masked,
                             f"{out}/state.safetensors")
        why = compare(f"{out}/logits.npy", logits)
        if why:
            sys.exit(f"hf {mesh}: the Hugging Face checkpoint gives other "
                     f"logits: {why}")
        print(f"hf {mesh}: the Hugging Face checkpoint loads by name; "
              f"logits equal torch")


def check_train(args, out, model, bindings, mesh, masked):
    rng = np.random.default_rng(0)
    t = rng.integers(0, 96, size=(BATCH, SEQ + 1))
    np.save(f"{out}/ids.npy", t[:, :-1].astype(np.int64))
    np.save(f"{out}/labels.npy", t[:, 1:].astype(np.int32))
    run([tool(args, "partition-import"), model, *bindings, "--loss",
         "cross-entropy", "-o", f"{out}/loss.mlir", "--weights",
         f"{out}/tw.safetensors"])
    run([tool(args, "partition-opt"), f"{out}/loss.mlir", "--part-autodiff",
         "--part-optimizer=kind=sgd lr=0.1", "-o", f"{out}/step.mlir"])
    feeds = ["--input", f"input_ids={out}/ids.npy",
             "--input", f"labels={out}/labels.npy"]
    if masked:
        feeds += ["--input", f"attention_mask={out}/attention_mask.npy"]
    logs = []
    for m in ("dp:1", mesh):
        tag = m.replace(",", "_").replace(":", "")
        ir = run([tool(args, "partition-opt"), f"{out}/step.mlir",
                  f"--part-spmd=mesh={m}"])
        plan = f"{out}/train-{tag}.plan"
        run([tool(args, "partition-translate"), "--part-to-plan", "-o", plan],
            input=ir)
        log = run([tool(args, "partition-run"), plan, "--backend", "cpu",
                   "--steps", "3", "--weights", f"{out}/tw.safetensors",
                   "--output-dir", f"{out}/trained-{tag}"] + feeds)
        open(f"{out}/train-{tag}.log", "w").write(log)
        logs.append(f"{out}/train-{tag}.log")
    run([sys.executable, f"{E2E}/losses_agree.py", "2e-5", "2e-5", *logs])
    run([sys.executable, f"{E2E}/losses_agree.py", "--falling", logs[0]])
    run([sys.executable, f"{E2E}/compare_dirs.py", "1e-5", "1e-3",
         f"{out}/trained-dp1", f"{out}/trained-{mesh.replace(',', '_').replace(':', '')}"])
    print(f"train {mesh}: 3 steps equal one rank's")


def check_train_torch(out, family, masked, aliases):
    """3 SGD steps (lr 0.1) of the same loss in torch on the module, against
    partition's on one rank (check_train's trained-dp1)."""
    import torch
    import torch.nn.functional as F
    from safetensors.numpy import load_file as load_numpy
    from safetensors.torch import load_file
    sys.path.insert(0, HERE)
    from export_current import build, forward_kwargs
    model = build(family, "sdpa").eval()  # dropout off, as exported
    model.load_state_dict(load_file(f"{out}/state.safetensors"), strict=False)
    kwargs = forward_kwargs(model, masked)
    if masked:
        kwargs["attention_mask"] = torch.from_numpy(
            np.load(f"{out}/attention_mask.npy"))
    ids = torch.from_numpy(np.load(f"{out}/ids.npy"))
    labels = torch.from_numpy(np.load(f"{out}/labels.npy")).long()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        logits = model(ids, **kwargs)[0]
        F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                        labels.reshape(-1)).backward()
        opt.step()
    # The weights file says which parameters are stored transposed (a
    # square one cannot be told by its shape).
    imported = load_numpy(f"{out}/tw.safetensors")
    start = load_numpy(f"{out}/state.safetensors")
    worst = []
    for name, p in model.named_parameters():
        stored = aliases.get(name, name)
        got = np.load(f"{out}/trained-dp1/new.{stored}.npy")
        want = p.detach().numpy()
        if not np.array_equal(imported[stored], start[name]):
            got = got.T
        err = np.abs(got - want) - (1e-5 + 1e-3 * np.abs(want))
        if got.shape != want.shape or (err > 0).any():
            worst.append(name)
    if worst:
        sys.exit(f"train: torch's 3 steps give other parameters: {worst}")
    print("train dp:1: 3 steps equal torch's")


def main():
    if sys.argv[1:2] == ["--shapes"]:
        print(" ".join(shape_bindings(["input_ids"])))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("family")
    ap.add_argument("out")
    ap.add_argument("--meshes", default="dp:1,dp:2+tp:2,tp:4",
                    help="meshes separated by ',' ('+' joins axes)")
    ap.add_argument("--train", default=None)
    ap.add_argument("--hf-checkpoint", nargs="?", const="dp:1", default=None,
                    metavar="MESHES",
                    help="meshes to run the Hugging Face checkpoint on")
    ap.add_argument("--known-alias", action="append", default=[])
    args, export_flags = ap.parse_known_args()
    out, family = args.out, args.family
    run([sys.executable, f"{HERE}/export_current.py", family, out,
         *export_flags])
    masked = "--mask" in export_flags
    model = f"{out}/{family}.onnx"
    names = ["input_ids"] + (["attention_mask"] if masked else [])
    bindings = shape_bindings(names)
    run([tool(args, "partition-import"), model, *bindings, "-o",
         f"{out}/m.mlir", "--weights", f"{out}/w.safetensors"])
    print(" ".join(["import", family] + export_flags) + ": ok")
    aliases = dict(a.split("=", 1) for a in args.known_alias)
    check_params(out, family, aliases)
    for mesh in args.meshes.split(","):
        check_mesh(args, out, mesh.replace("+", ","), masked)
    if args.hf_checkpoint:
        check_hf(args, out, masked, args.hf_checkpoint)
    if args.train:
        check_train(args, out, model, bindings, args.train.replace("+", ","),
                    masked)
        check_train_torch(out, family, masked, aliases)


if __name__ == "__main__":
    main()
