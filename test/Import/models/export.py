"""Exports the small ONNX models the import tests use: export.py [OUTDIR]

Not run by the test suite: the .onnx files it writes are committed next to it
and CI only reads them (torch is not needed to run the tests). Run it to
regenerate them after changing a model here:

    apt-get install -y python3-torch python3-onnx   # torch 1.13, onnx 1.12
    /usr/bin/python3 test/Import/models/export.py

Four families, each written out in this file (nothing is downloaded) with
seeded weights, so the files are the same on every run:

  gpt    GPT-2 style: token + position embeddings, pre-LN blocks, causal
         self-attention written with matmul/softmax and a causal-mask buffer
         (masked_fill -> Where), tanh GELU, final LN, LM head tied to the token
         embedding.
  bert   BERT style encoder: token + position + token-type embeddings, post-LN,
         erf GELU (nn.GELU()), an int64 attention_mask made additive, and a
         tanh pooler over the first token (an nn.Linear on 2-D input: Gemm).
  llama  Llama style: RMSNorm (x * rsqrt(mean(x^2) + eps) * w), SiLU-gated
         MLP, rotary embeddings (rotate-half with cos/sin buffers),
         grouped-query attention (4 query heads, 2 kv heads, repeat_kv), a
         causal mask made with triu (Trilu), untied LM head.
  mlp    Linear/ReLU on [batch, seq, 16], then a mean over seq and an
         nn.Linear on the 2-D result (Gemm).

gpt8 is the gpt family with 8 layers (the pipeline tests cut it into 4
stages of 2 chunks), exported at opset 17 only.

Each is exported at opsets 14 and 17 (17 has LayerNormalization) as
<family>-opset<N>.onnx, with dynamic batch and sequence dimensions named
`batch` and `seq` (bind them with `partition-import --dim batch=2 --dim
seq=8`), constant folding on and the weights as initializers.

With --convert-from DIR (a Python with PyPI onnx 1.23.2, whose
version_converter reaches opset 21; torch 1.13 cannot export past opset 17
and Debian's onnx 1.12 stops at 17) it instead converts three of the opset-17
files in DIR with onnx.version_converter.convert_version, writing them next
to their sources:

  llama-opset17.onnx -> llama-opset18.onnx   RMSNorm's ReduceMean takes its
                                              axes as an input (opset 18)
  bert-opset17.onnx  -> bert-opset20.onnx    Cast, Constant, Reshape and Shape
                                              at their opset-19 versions
  gpt-opset17.onnx   -> gpt-opset21.onnx     Split at 18, Equal at 19, Cast,
                                              Constant, Identity, Reshape,
                                              Shape, Transpose, Unsqueeze at 21

The converter keeps each node's computation (it does not fuse BERT's erf
GELU into the opset-20 Gelu op: test/Import/onnx/gelu.mlir covers that op).
Each converted model must pass onnx.checker.check_model(full_check=True)
(schemas and strict shape inference at the target opset) before it is
written; the conversion is deterministic, so with the same onnx version the
files are the same bytes on every run. When the Python also has onnxruntime,
each converted model and its source are run on the same seeded inputs and
must agree to 1e-4 (otherwise check it with reference.py, as the tests do):

    python3 -m venv /tmp/onnx-new && /tmp/onnx-new/bin/pip install onnx==1.23.2
    /tmp/onnx-new/bin/python test/Import/models/export.py --convert-from \\
        test/Import/models/

(--opset18-from DIR is the old name of --convert-from.)
"""
import argparse
import math
import os
import sys

# Sizes (in each model's constructor) keep every .onnx file under 300 KB,
# and every dimension the partitioner splits (heads, kv heads, ffn, vocab)
# divisible by 2, the tp of the tests. MAX_SEQ is the length of the position
# tables and mask buffers; the tests bind seq to 8.
MAX_SEQ = 16

OPSETS = (14, 17)


def build_models():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    def init_(module, seed):
        """Seeded weights of unit-scale activations: N(0, 1/fan_in) for
        matrices, N(0, 1) for embeddings, 1 + N(0, 0.1) for norm scales and
        N(0, 0.1) for biases, so that no layer is close to an identity and a
        wrong mask, scale or transpose shows in the outputs."""
        gen = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for name, p in sorted(module.named_parameters()):
                leaf = name.rsplit(".", 1)[-1]
                owner = module.get_submodule(name.rsplit(".", 1)[0]) if "." in name else module
                if isinstance(owner, nn.Embedding):
                    p.copy_(torch.randn(p.shape, generator=gen))
                elif isinstance(owner, (nn.LayerNorm, RMSNorm)) and leaf == "weight":
                    p.copy_(1 + 0.1 * torch.randn(p.shape, generator=gen))
                elif p.dim() == 1:
                    p.copy_(0.1 * torch.randn(p.shape, generator=gen))
                else:
                    p.copy_(torch.randn(p.shape, generator=gen) / math.sqrt(p.shape[-1]))

    # ---------------------------------------------------------------- GPT-2
    class GptAttention(nn.Module):
        def __init__(self, hidden, heads):
            super().__init__()
            self.heads = heads
            self.hd = hidden // heads
            self.c_attn = nn.Linear(hidden, 3 * hidden)
            self.c_proj = nn.Linear(hidden, hidden)
            self.register_buffer(
                "bias", torch.tril(torch.ones(MAX_SEQ, MAX_SEQ)).view(1, 1, MAX_SEQ, MAX_SEQ))

        def forward(self, x):
            b, t, c = x.size()
            hd = self.hd
            q, k, v = self.c_attn(x).split(c, dim=2)
            q = q.view(b, t, self.heads, hd).transpose(1, 2)
            k = k.view(b, t, self.heads, hd).transpose(1, 2)
            v = v.view(b, t, self.heads, hd).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
            att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
            return self.c_proj(y)

    def new_gelu(x):
        # GPT-2's tanh approximation, written out as in its reference code.
        return 0.5 * x * (1.0 + torch.tanh(
            math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))

    class GptBlock(nn.Module):
        def __init__(self, hidden, heads):
            super().__init__()
            self.ln_1 = nn.LayerNorm(hidden)
            self.attn = GptAttention(hidden, heads)
            self.ln_2 = nn.LayerNorm(hidden)
            self.c_fc = nn.Linear(hidden, 4 * hidden)
            self.c_proj = nn.Linear(4 * hidden, hidden)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.c_proj(new_gelu(self.c_fc(self.ln_2(x))))

    class Gpt(nn.Module):
        def __init__(self, vocab=96, hidden=32, heads=4, layers=2):
            super().__init__()
            self.wte = nn.Embedding(vocab, hidden)
            self.wpe = nn.Embedding(MAX_SEQ, hidden)
            self.h = nn.ModuleList([GptBlock(hidden, heads) for _ in range(layers)])
            self.ln_f = nn.LayerNorm(hidden)

        def forward(self, input_ids):
            t = input_ids.size(1)
            pos = torch.arange(0, t, dtype=torch.long, device=input_ids.device).unsqueeze(0)
            x = self.wte(input_ids) + self.wpe(pos)
            for block in self.h:
                x = block(x)
            # Tied LM head: the token embedding, transposed.
            return F.linear(self.ln_f(x), self.wte.weight)

    # ----------------------------------------------------------------- BERT
    class BertLayer(nn.Module):
        def __init__(self, hidden, heads, ffn):
            super().__init__()
            self.heads = heads
            self.hd = hidden // heads
            self.query = nn.Linear(hidden, hidden)
            self.key = nn.Linear(hidden, hidden)
            self.value = nn.Linear(hidden, hidden)
            self.attn_out = nn.Linear(hidden, hidden)
            self.attn_ln = nn.LayerNorm(hidden, eps=1e-12)
            self.intermediate = nn.Linear(hidden, ffn)
            self.act = nn.GELU()
            self.output = nn.Linear(ffn, hidden)
            self.out_ln = nn.LayerNorm(hidden, eps=1e-12)

        def split(self, x):
            b, t, c = x.size()
            return x.view(b, t, self.heads, self.hd).permute(0, 2, 1, 3)

        def forward(self, x, additive_mask):
            b, t, c = x.size()
            q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.hd)
            probs = F.softmax(scores + additive_mask, dim=-1)
            ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous().view(b, t, c)
            x = self.attn_ln(self.attn_out(ctx) + x)
            return self.out_ln(self.output(self.act(self.intermediate(x))) + x)

    class Bert(nn.Module):
        def __init__(self, vocab=128, hidden=32, heads=4, ffn=64, layers=2):
            super().__init__()
            self.word_embeddings = nn.Embedding(vocab, hidden)
            self.position_embeddings = nn.Embedding(MAX_SEQ, hidden)
            self.token_type_embeddings = nn.Embedding(2, hidden)
            self.emb_ln = nn.LayerNorm(hidden, eps=1e-12)
            self.layer = nn.ModuleList([BertLayer(hidden, heads, ffn) for _ in range(layers)])
            self.pooler = nn.Linear(hidden, hidden)

        def forward(self, input_ids, token_type_ids, attention_mask):
            t = input_ids.size(1)
            pos = torch.arange(t, dtype=torch.long, device=input_ids.device).unsqueeze(0)
            x = (self.word_embeddings(input_ids) + self.position_embeddings(pos)
                 + self.token_type_embeddings(token_type_ids))
            x = self.emb_ln(x)
            # [batch, seq] of 1 (attend) / 0 (padding) -> [batch, 1, 1, seq]
            # of 0 / -10000, added to every head's scores.
            additive = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
            for layer in self.layer:
                x = layer(x, additive)
            pooled = torch.tanh(self.pooler(x[:, 0]))
            return x, pooled

    # ---------------------------------------------------------------- Llama
    class RMSNorm(nn.Module):
        def __init__(self, hidden, eps=1e-6):
            super().__init__()
            self.eps = eps
            self.weight = nn.Parameter(torch.ones(hidden))

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight

    def rotate_half(x):
        x1 = x[..., : x.shape[-1] // 2]
        x2 = x[..., x.shape[-1] // 2:]
        return torch.cat((-x2, x1), dim=-1)

    def repeat_kv(x, n_rep):
        b, kvh, t, hd = x.shape
        if n_rep == 1:
            return x
        x = x[:, :, None, :, :].expand(b, kvh, n_rep, t, hd)
        return x.reshape(b, kvh * n_rep, t, hd)

    class LlamaAttention(nn.Module):
        def __init__(self, hidden, heads, kv_heads):
            super().__init__()
            self.heads, self.kv_heads = heads, kv_heads
            self.hd = hidden // heads
            self.q_proj = nn.Linear(hidden, heads * self.hd, bias=False)
            self.k_proj = nn.Linear(hidden, kv_heads * self.hd, bias=False)
            self.v_proj = nn.Linear(hidden, kv_heads * self.hd, bias=False)
            self.o_proj = nn.Linear(heads * self.hd, hidden, bias=False)

        def forward(self, x, cos, sin, mask):
            b, t, _ = x.shape
            q = self.q_proj(x).view(b, t, self.heads, self.hd).transpose(1, 2)
            k = self.k_proj(x).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
            v = self.v_proj(x).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
            k = repeat_kv(k, self.heads // self.kv_heads)
            v = repeat_kv(v, self.heads // self.kv_heads)
            scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.hd) + mask
            probs = F.softmax(scores, dim=-1)
            y = torch.matmul(probs, v).transpose(1, 2).reshape(b, t, self.heads * self.hd)
            return self.o_proj(y)

    class LlamaBlock(nn.Module):
        def __init__(self, hidden, heads, kv_heads, ffn):
            super().__init__()
            self.input_layernorm = RMSNorm(hidden)
            self.self_attn = LlamaAttention(hidden, heads, kv_heads)
            self.post_attention_layernorm = RMSNorm(hidden)
            self.gate_proj = nn.Linear(hidden, ffn, bias=False)
            self.up_proj = nn.Linear(hidden, ffn, bias=False)
            self.down_proj = nn.Linear(ffn, hidden, bias=False)

        def forward(self, x, cos, sin, mask):
            x = x + self.self_attn(self.input_layernorm(x), cos, sin, mask)
            h = self.post_attention_layernorm(x)
            return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))

    class Llama(nn.Module):
        def __init__(self, vocab=128, hidden=32, heads=4, kv_heads=2, ffn=64, layers=2):
            super().__init__()
            hd = hidden // heads
            self.embed_tokens = nn.Embedding(vocab, hidden)
            self.layers = nn.ModuleList(
                [LlamaBlock(hidden, heads, kv_heads, ffn) for _ in range(layers)])
            self.norm = RMSNorm(hidden)
            self.lm_head = nn.Linear(hidden, vocab, bias=False)
            inv_freq = 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd))
            freqs = torch.outer(torch.arange(MAX_SEQ).float(), inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1)
            self.register_buffer("cos_cached", emb.cos())
            self.register_buffer("sin_cached", emb.sin())

        def forward(self, input_ids):
            t = input_ids.shape[1]
            cos = self.cos_cached[:t][None, None]
            sin = self.sin_cached[:t][None, None]
            mask = torch.full((t, t), float("-inf"), device=input_ids.device).triu(1)
            x = self.embed_tokens(input_ids)
            for layer in self.layers:
                x = layer(x, cos, sin, mask)
            return self.lm_head(self.norm(x))

    # ------------------------------------------------------------------ MLP
    class Mlp(nn.Module):
        def __init__(self, d_in=16, hidden=32, d_out=8):
            super().__init__()
            self.fc1 = nn.Linear(d_in, hidden)
            self.fc2 = nn.Linear(hidden, hidden)
            self.head = nn.Linear(hidden, d_out)

        def forward(self, x):
            h = F.relu(self.fc2(F.relu(self.fc1(x))))
            # nn.Linear on a 2-D input exports as Gemm.
            return self.head(h.mean(dim=1))

    bs = {0: "batch", 1: "seq"}
    models = {
        "gpt": (Gpt(), ["input_ids"], ["logits"], {"input_ids": bs, "logits": bs}),
        "bert": (Bert(), ["input_ids", "token_type_ids", "attention_mask"],
                 ["last_hidden_state", "pooler_output"],
                 {"input_ids": bs, "token_type_ids": bs, "attention_mask": bs,
                  "last_hidden_state": bs, "pooler_output": {0: "batch"}}),
        "llama": (Llama(), ["input_ids"], ["logits"], {"input_ids": bs, "logits": bs}),
        "mlp": (Mlp(), ["x"], ["y"], {"x": bs, "y": {0: "batch"}}),
    }
    for seed, (name, (model, *_)) in enumerate(sorted(models.items())):
        init_(model, seed)
        model.eval()
    # Deep enough for 4 pipeline stages of 2 chunks each (interleaved 1F1B);
    # its own seed, so that adding it left the other files as they were.
    gpt8 = Gpt(layers=8)
    init_(gpt8, 100)
    gpt8.eval()
    models["gpt8"] = (gpt8, ["input_ids"], ["logits"],
                      {"input_ids": bs, "logits": bs})
    return models


def example_inputs(name):
    import torch
    gen = torch.Generator().manual_seed(1234)
    b, t = 2, 8
    if name in ("gpt", "gpt8"):
        return (torch.randint(0, 96, (b, t), generator=gen),)
    if name == "llama":
        return (torch.randint(0, 128, (b, t), generator=gen),)
    if name == "bert":
        mask = torch.ones(b, t, dtype=torch.long)
        mask[1, 5:] = 0
        return (torch.randint(0, 128, (b, t), generator=gen),
                torch.randint(0, 2, (b, t), generator=gen), mask)
    return (torch.randn(b, t, 16, generator=gen),)


def export_all(outdir):
    import torch
    models = build_models()
    for name, (model, inputs, outputs, dynamic) in models.items():
        for opset in OPSETS if name != "gpt8" else [17]:
            path = os.path.join(outdir, f"{name}-opset{opset}.onnx")
            with torch.no_grad():
                torch.onnx.export(
                    model, example_inputs(name), path, input_names=inputs,
                    output_names=outputs, dynamic_axes=dynamic, opset_version=opset,
                    do_constant_folding=True, export_params=True)
            print(f"{path}: {os.path.getsize(path)} bytes")


# (family, target opset): <family>-opset17.onnx -> <family>-opset<N>.onnx by
# onnx.version_converter, in --convert-from mode.
CONVERSIONS = (("llama", 18), ("bert", 20), ("gpt", 21))


def check_with_onnxruntime(src, dst):
    """Runs the source and the converted model with onnxruntime on the same
    seeded inputs (batch 2, seq 8) and fails if they disagree; says so and
    returns when this Python has no onnxruntime."""
    try:
        import numpy as np
        import onnxruntime as ort
    except ImportError:
        print(f"  (no onnxruntime here: run reference.py on {os.path.basename(dst)})")
        return
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    sessions = [ort.InferenceSession(p, options, providers=["CPUExecutionProvider"])
                for p in (src, dst)]
    rng = np.random.default_rng(0)
    feeds = {}
    for info in sessions[0].get_inputs():
        shape = [{"batch": 2, "seq": 8}.get(d, d) for d in info.shape]
        if "int" not in info.type:
            feeds[info.name] = rng.standard_normal(shape).astype(np.float32)
        elif "mask" in info.name:
            feeds[info.name] = np.ones(shape, np.int64)
        else:  # token ids (below every vocabulary, 96) or token types (0, 1)
            feeds[info.name] = rng.integers(0, 2 if "type" in info.name else 96, shape)
    got = [s.run(None, feeds) for s in sessions]
    for a, b in zip(*got):
        err = float(np.abs(a.astype(np.float64) - b).max())
        if err > 1e-4:
            sys.exit(f"{dst}: onnxruntime output differs from {src} by {err}")
    print(f"  onnxruntime {ort.__version__}: same outputs as the source")


def convert(indir):
    import onnx
    from onnx import version_converter
    for family, opset in CONVERSIONS:
        src = os.path.join(indir, f"{family}-opset17.onnx")
        dst = os.path.join(indir, f"{family}-opset{opset}.onnx")
        model = version_converter.convert_version(onnx.load(src), opset)
        onnx.checker.check_model(model, full_check=True)
        onnx.save(model, dst)
        print(f"{dst}: {os.path.getsize(dst)} bytes (onnx {onnx.__version__})")
        check_with_onnxruntime(src, dst)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", nargs="?", default=here)
    parser.add_argument("--convert-from", "--opset18-from", metavar="DIR",
                        help="convert DIR's opset-17 files to opsets 18, 20 and 21 "
                             "(CONVERSIONS) instead of exporting")
    args = parser.parse_args()
    if args.convert_from:
        convert(args.convert_from)
    else:
        export_all(args.outdir)


if __name__ == "__main__":
    sys.exit(main())
