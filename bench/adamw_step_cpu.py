"""One AdamW training step of a GPT on one CPU rank: partition vs PyTorch.

Generates a GPT with `partition-import --model gpt` (random weights from
--seed, written to a safetensors file), appends its cross-entropy loss,
differentiates it and appends an AdamW update (`partition-opt
--part-append-loss --part-autodiff --part-optimizer`), partitions it for a
one-device mesh, lowers it with partition-translate and trains it with
`partition-run --steps N` (one rank, one BLAS thread). Builds the same model
in PyTorch from the same safetensors file, with torch.optim.AdamW and the
same hyper-parameters, on one thread, and trains it on the same batch.

Checks that both print the same loss at every step (the loss of step k is
computed from the weights after k - 1 updates, so equal losses mean equal
forward passes, gradients and AdamW updates: the two sides do the same
work), and prints the median time of a step after the warm-up steps on both
sides and their ratio. Exits with 1 when a loss differs by more than 1e-4
relative: both compute in f32 with different summation orders, which moves
a loss by about 1e-6 over these steps, while a wrong bias correction,
weight decay or learning rate moves it by 1e-3 or more from step 2 on.

partition-run's time of each step is the interval between the loss lines it
prints (it flushes one line per step, after the step's loss is read back);
PyTorch's is zero_grad + forward + loss + backward + optimizer step. The two
sides run in turn, --rounds times, so that a shared machine's load falls on
both; the ratio is of the medians over every timed step of every round.

usage: /usr/bin/python3 bench/adamw_step_cpu.py [--build build] [--layers 4]
           [--hidden 768] [--heads 12] [--vocab 8192] [--seq 128] [--batch 4]
           [--steps 8] [--warmup 2] [--rounds 3] [--lr 3e-4]
           [--partition-run PATH] [--unfused] [--trace FILE.json]

Needs numpy and torch (Debian: python3-numpy, python3-torch).
"""
import os

# One BLAS thread for both sides, set before numpy or torch load OpenBLAS
# (torch.set_num_threads does not limit OpenBLAS's own threads).
os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["OMP_NUM_THREADS"] = "1"

import argparse
import json
import re
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np


def load_safetensors(path):
    """The F32 tensors of a safetensors file, as numpy arrays by name."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        assert t["dtype"] == "F32", (name, t["dtype"])
        begin, end = t["data_offsets"]
        out[name] = np.frombuffer(data[begin:end], np.float32).reshape(
            t["shape"]).copy()
    return out


def compile_step(build, d, o):
    """Writes d/step.plan (the training step) and d/w.safetensors."""
    b = f"{build}/bin"
    subprocess.run(
        [f"{b}/partition-import", "--model", "gpt", "--layers", str(o.layers),
         "--hidden", str(o.hidden), "--heads", str(o.heads), "--vocab",
         str(o.vocab), "--seq", str(o.seq), "--batch", str(o.batch), "--seed",
         "1", "-o", f"{d}/gpt.mlir", "--weights", f"{d}/w.safetensors"],
        check=True)
    step = subprocess.run(
        [f"{b}/partition-opt", f"{d}/gpt.mlir",
         "--part-append-loss=kind=cross-entropy", "--part-autodiff",
         f"--part-optimizer=kind=adamw lr={o.lr} beta1={o.beta1} "
         f"beta2={o.beta2} epsilon={o.eps} weight-decay={o.weight_decay}"],
        check=True, capture_output=True, text=True).stdout
    spmd = subprocess.run([f"{b}/partition-opt", "--part-spmd=mesh=dp:1"],
                          input=step, check=True, capture_output=True,
                          text=True).stdout
    fuse = ["--part-fuse-elementwise=false"] if o.unfused else []
    subprocess.run([f"{b}/partition-translate", "--part-to-plan", *fuse, "-o",
                    f"{d}/step.plan"], input=spmd, check=True, text=True)


def partition_steps(run, d, steps, trace=None):
    """Runs the plan for `steps` steps; returns the losses and the time of
    each step after the first (s)."""
    cmd = [run, f"{d}/step.plan", "--backend", "cpu",
           "--weights", f"{d}/w.safetensors", "--input",
           f"tokens={d}/tokens.npy", "--input", f"labels={d}/labels.npy",
           "--steps", str(steps)]
    if trace:
        cmd += ["--trace", trace]
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, env=env, bufsize=1)
    losses, stamps, rest = [], [], []
    for line in p.stdout:
        m = re.match(r"step (\d+): loss (\S+)", line)
        if m:
            stamps.append(time.perf_counter())
            losses.append(float(m.group(2)))
        else:
            rest.append(line)
    if p.wait() != 0:
        sys.exit(f"partition-run failed:\n{''.join(rest)}")
    return losses, np.diff(stamps)


def torch_steps(w, tokens, labels, o, steps):
    """The same model and optimizer in PyTorch; returns the losses and the
    time of each step (s)."""
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(1)
    # Copies: the optimizer updates the parameters in place, and every round
    # starts from the file's weights.
    p = {k: torch.nn.Parameter(torch.tensor(v)) for k, v in w.items()}
    B, S, E, H = o.batch, o.seq, o.hidden, o.heads
    D = E // H
    mask = torch.full((S, S), float("-inf")).triu(1)
    tok = torch.from_numpy(tokens).long()
    lab = torch.from_numpy(labels).long().reshape(-1)

    def linear(x, name):
        return torch.addmm(p[name + ".bias"], x, p[name + ".weight"])

    def heads(x):
        return x.reshape(B, S, H, D).transpose(1, 2)

    def loss_of():
        x = (F.embedding(tok, p["wte"]) + p["wpe"]).reshape(B * S, E)
        for l in range(o.layers):
            n = f"h.{l}."
            h = F.layer_norm(x, (E,), p[n + "ln_1.weight"], p[n + "ln_1.bias"])
            q, k, v = (heads(linear(h, n + "attn." + c)) for c in "qkv")
            s = torch.matmul(q, k.transpose(-1, -2)) * (1 / np.sqrt(D)) + mask
            a = torch.matmul(torch.softmax(s, -1), v).transpose(1, 2)
            x = x + linear(a.reshape(B * S, E), n + "attn.proj")
            h = F.layer_norm(x, (E,), p[n + "ln_2.weight"], p[n + "ln_2.bias"])
            h = F.gelu(linear(h, n + "mlp.fc"), approximate="tanh")
            x = x + linear(h, n + "mlp.proj")
        x = F.layer_norm(x, (E,), p["ln_f.weight"], p["ln_f.bias"])
        return F.cross_entropy(torch.matmul(x, p["wte"].t()), lab)

    opt = torch.optim.AdamW(list(p.values()), lr=o.lr,
                            betas=(o.beta1, o.beta2), eps=o.eps,
                            weight_decay=o.weight_decay)
    losses, times = [], []
    for _ in range(steps):
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = loss_of()
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - start)
        losses.append(loss.item())
    return losses, times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--partition-run",
                    help="the partition-run to time (default: the build's)")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--steps", type=int, default=8, help="steps per run")
    ap.add_argument("--warmup", type=int, default=2,
                    help="steps of each run left out of the medians")
    ap.add_argument("--rounds", type=int, default=3,
                    help="runs of each side, alternating (a shared machine's "
                    "load then falls on both)")
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--beta1", type=float, default=0.9)
    ap.add_argument("--beta2", type=float, default=0.999)
    ap.add_argument("--eps", type=float, default=1e-8)
    ap.add_argument("--weight-decay", type=float, default=0.01)
    ap.add_argument("--unfused", action="store_true",
                    help="lower one kernel per op (partition-translate "
                    "--part-fuse-elementwise=false), the plan before "
                    "elementwise fusion")
    ap.add_argument("--trace", help="also write partition-run's trace of "
                    "the first round here")
    o = ap.parse_args()
    assert o.steps > o.warmup >= 1
    rng = np.random.default_rng(0)
    ids = rng.integers(0, o.vocab, (o.batch, o.seq + 1))
    tokens = ids[:, :-1].astype(np.int32)
    labels = ids[:, 1:].astype(np.int32)
    ours_t, theirs_t, rounds, err = [], [], [], 0.0
    with tempfile.TemporaryDirectory() as d:
        compile_step(o.build, d, o)
        np.save(f"{d}/tokens.npy", tokens)
        np.save(f"{d}/labels.npy", labels)
        w = load_safetensors(f"{d}/w.safetensors")
        run = o.partition_run or f"{o.build}/bin/partition-run"
        for r in range(o.rounds):
            ours_loss, t = partition_steps(run, d, o.steps,
                                           o.trace if r == 0 else None)
            ours = t[o.warmup - 1:]  # t[i] is step i + 2
            theirs_loss, t = torch_steps(w, tokens, labels, o, o.steps)
            theirs = t[o.warmup:]
            # Relative difference of the losses at every step.
            err = max([err] + [abs(a - b) / abs(b)
                               for a, b in zip(ours_loss, theirs_loss)])
            rounds.append((statistics.median(ours), statistics.median(theirs)))
            ours_t += list(ours)
            theirs_t += theirs

    n = sum(v.size for v in w.values())
    E, S, B, L, V = o.hidden, o.seq, o.batch, o.layers, o.vocab
    # 3 x the forward's matmul FLOPs (forward, and two matmuls in backward).
    flops = 3 * (2 * B * S * (L * 12 * E * E + V * E) + L * 4 * B * S * S * E)
    ours_ms = statistics.median(ours_t) * 1e3
    theirs_ms = statistics.median(theirs_t) * 1e3
    print(f"model: GPT, {L} layers, hidden {E}, heads {o.heads}, vocabulary "
          f"{V}, batch {B}, seq {S}: {n / 1e6:.1f}M parameters, "
          f"{flops / 1e9:.1f} GFLOP per step (matmuls)")
    print(f"AdamW lr {o.lr}, betas ({o.beta1}, {o.beta2}), eps {o.eps}, "
          f"weight decay {o.weight_decay}; {o.rounds} rounds of {o.steps} "
          f"steps per side, the first {o.warmup} of each left out")
    print("losses, partition / PyTorch (last round):")
    for k, (a, b) in enumerate(zip(ours_loss, theirs_loss), 1):
        print(f"  step {k}: {a:.6f} / {b:.6f}")
    print(f"losses agree to {err:.1e} (largest relative difference, all "
          f"rounds)")
    for r, (a, b) in enumerate(rounds, 1):
        print(f"round {r}: partition {a * 1e3:.1f} ms, PyTorch "
              f"{b * 1e3:.1f} ms, ratio {a / b:.2f}")
    print(f"partition-run (1 rank, 1 BLAS thread): {ours_ms:.1f} ms per step "
          f"(median; min {min(ours_t) * 1e3:.1f})")
    print(f"PyTorch {__import__('torch').__version__} (1 thread): "
          f"{theirs_ms:.1f} ms per step (median; min "
          f"{min(theirs_t) * 1e3:.1f})")
    print(f"ratio partition / PyTorch: {ours_ms / theirs_ms:.2f} "
          f"(target <= 1.0); of the fastest steps: "
          f"{min(ours_t) / min(theirs_t):.2f}")
    return 0 if err < 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
