"""Builds a Hugging Face transformers model from a small config, exports it
to ONNX as its users do, and writes the reference: export_transformers.py
ARCH OUTDIR [--mask] [--no-fold]

ARCH is one of:
  gpt2   GPT2LMHeadModel: fused c_attn ([Q|K|V] in one Conv1D), learned
         positions, tanh GELU, tied LM head
  llama  LlamaForCausalLM: RMSNorm, rotary embeddings, SwiGLU MLP, grouped
         query attention (8 query heads, 2 kv heads)
  bert   BertForMaskedLM: post-LN encoder, erf GELU, token types, MLM head
  gpt_neox
         GPTNeoXForCausalLM: rotary embeddings on the first quarter of each
         head's dimensions (rotary_pct 0.25), the rest passed through; a
         fused QKV projection viewed as [B, S, heads, 3 * head_dim]; parallel
         residual; untied LM head
  phi    PhiForCausalLM: rotary embeddings on half of each head's dimensions
         (partial_rotary_factor 0.5); a fused QKV projection viewed as
         [B, S, heads, 3, head_dim]; one LayerNorm feeding attention and MLP
         in parallel; tanh GELU; LM head with a bias
  opt    OPTForCausalLM: learned positions offset by 2 and computed from
         the (all-ones) attention mask by a cumulative sum; queries scaled
         before the product; scores over [B * heads, S, S], masked as
         [B, heads, S, S] by an additive finfo.min mask, clamped by
         max(., finfo.min) and merged again for the softmax; ReLU MLP;
         tied LM head
  bloom  BloomForCausalLM: ALiBi (a per-head linear bias added to the
         scores by baddbmm over [B * heads, S, S]); embedding LayerNorm;
         fused QKV projection viewed as [B, S, heads, 3, head_dim]; tanh
         GELU with its argument factored as 0.79788456 * x *
         (1 + 0.044715 * x * x); tied LM head
  gptj   GPTJForCausalLM: interleaved rotary embeddings on the first 4 of
         each head's 8 dimensions, the sin/cos rows picked by position with
         GatherElements and repeated with Tile (repeat_interleave); one
         LayerNorm feeding attention and MLP in parallel; LM head with a
         bias
  codegen
         CodeGenForCausalLM: GPT-J's attention and rotary embeddings, Q, K
         and V fused in one projection split into 4 blocks (mp_num) of
         heads; the expand of the sin/cos table has its shape computed by
         Where(Equal(shape, -1), 1, shape)
  falcon FalconForCausalLM with the multi-query layout (multi_query,
         not new_decoder_architecture): 8 query heads and one key/value
         head in one query_key_value projection viewed as
         [B, S, heads + 2, head_dim]; attention and MLP in parallel

The model is built with random weights from a seeded generator (nothing is
downloaded), then every parameter is moved by seeded noise: freshly
initialised models have equal tensors (zero biases, unit norm weights) that
torch.onnx.export's constant folding merges into one initializer, which a
trained model never has and which would tie every bias of the model
together. Exported with torch.onnx.export at opset 17, dynamic batch and
sequence dimensions named `batch` and `seq`, as OUTDIR/ARCH.onnx. Writes
OUTDIR/input_ids.npy (int64 [2, 8], seeded) and OUTDIR/logits.npy, the
model's logits for them computed by torch in f32 (the reference the tests
compare with; Llama's mask cannot be built in float64 by this version).

With --mask the model also takes `attention_mask` (int64 [batch, seq], 1
for tokens, 0 for padding; written as OUTDIR/attention_mask.npy with the
second sequence's last two tokens padded), as exports for batched
generation do: the exporters turn it into comparisons, casts to bool,
Where and arithmetic on the mask at run time.

With --no-fold the export runs with do_constant_folding=False (GPT-2's
c_attn is then a Gemm on [B * S, in], a Reshape and a Split with its sizes
as an input).

Needs torch (Debian's python3-torch 1.13) and transformers 4.36.2 (PyPI),
which scripts/setup.sh installs in .venv.
"""
import os
import sys
import warnings

import numpy as np
import torch
import transformers as T


def build(arch):
    if arch == "gpt2":
        cfg = T.GPT2Config(vocab_size=96, n_positions=32, n_embd=32, n_layer=2,
                           n_head=4)
        return T.GPT2LMHeadModel(cfg)
    if arch == "llama":
        cfg = T.LlamaConfig(vocab_size=96, hidden_size=64,
                            intermediate_size=96, num_hidden_layers=2,
                            num_attention_heads=8, num_key_value_heads=2,
                            max_position_embeddings=32)
        return T.LlamaForCausalLM(cfg)
    if arch == "bert":
        cfg = T.BertConfig(vocab_size=96, hidden_size=32, num_hidden_layers=2,
                           num_attention_heads=4, intermediate_size=64,
                           max_position_embeddings=32)
        return T.BertForMaskedLM(cfg)
    if arch == "gpt_neox":
        cfg = T.GPTNeoXConfig(vocab_size=96, hidden_size=64,
                              num_hidden_layers=2, num_attention_heads=8,
                              intermediate_size=128, rotary_pct=0.25,
                              max_position_embeddings=32)
        return T.GPTNeoXForCausalLM(cfg)
    if arch == "phi":
        cfg = T.PhiConfig(vocab_size=96, hidden_size=64, intermediate_size=128,
                          num_hidden_layers=2, num_attention_heads=8,
                          partial_rotary_factor=0.5,
                          max_position_embeddings=32)
        return T.PhiForCausalLM(cfg)
    if arch == "opt":
        cfg = T.OPTConfig(vocab_size=96, hidden_size=32, num_hidden_layers=2,
                          num_attention_heads=4, ffn_dim=64,
                          max_position_embeddings=32, word_embed_proj_dim=32)
        return T.OPTForCausalLM(cfg)
    if arch == "bloom":
        cfg = T.BloomConfig(vocab_size=96, hidden_size=32, n_layer=2,
                            n_head=4)
        return T.BloomForCausalLM(cfg)
    if arch == "gptj":
        cfg = T.GPTJConfig(vocab_size=96, n_embd=64, n_layer=2, n_head=8,
                           rotary_dim=4, n_positions=32)
        return T.GPTJForCausalLM(cfg)
    if arch == "codegen":
        cfg = T.CodeGenConfig(vocab_size=96, n_embd=64, n_layer=2, n_head=8,
                              rotary_dim=4, n_positions=32, n_ctx=32)
        return T.CodeGenForCausalLM(cfg)
    if arch == "falcon":
        cfg = T.FalconConfig(vocab_size=96, hidden_size=64,
                             num_hidden_layers=2, num_attention_heads=8,
                             multi_query=True, new_decoder_architecture=False,
                             max_position_embeddings=32)
        return T.FalconForCausalLM(cfg)
    sys.exit(f"export_transformers.py: unknown architecture {arch!r}")


class Logits(torch.nn.Module):
    """input_ids (and attention_mask) -> logits, without caches or
    dictionaries."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask=None):
        kwargs = {"input_ids": input_ids, "return_dict": False}
        if attention_mask is not None:
            kwargs["attention_mask"] = attention_mask
        if not isinstance(self.model, T.BertForMaskedLM):
            kwargs["use_cache"] = False
        return self.model(**kwargs)[0]


def main():
    arch, out = sys.argv[1], sys.argv[2]
    masked = "--mask" in sys.argv[3:]
    fold = "--no-fold" not in sys.argv[3:]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    model = build(arch).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.02)
    ids = torch.from_numpy(
        np.random.default_rng(1).integers(0, 96, size=(2, 8)).astype(np.int64))
    np.save(f"{out}/input_ids.npy", ids.numpy())
    args, names = (ids,), ["input_ids"]
    if masked:
        mask = torch.ones(2, 8, dtype=torch.int64)
        mask[1, 6:] = 0
        np.save(f"{out}/attention_mask.npy", mask.numpy())
        args, names = (ids, mask), ["input_ids", "attention_mask"]
    wrapped = Logits(model).eval()
    # Before the export: torch.onnx.export restores the wrapper's training
    # mode afterwards, which puts every submodule (dropout) in training.
    with torch.no_grad():
        logits = wrapped(*args)
    np.save(f"{out}/logits.npy", logits.numpy())
    axes = {name: {0: "batch", 1: "seq"} for name in names + ["logits"]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer warnings on shape checks
        torch.onnx.export(wrapped, args, f"{out}/{arch}.onnx",
                          opset_version=17, input_names=names,
                          output_names=["logits"], dynamic_axes=axes,
                          do_constant_folding=fold)


if __name__ == "__main__":
    main()
