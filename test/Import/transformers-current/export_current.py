"""Builds a Hugging Face transformers 5 model from a small config and exports
it to ONNX with torch 2.x, as users export theirs today:

  export_current.py FAMILY OUTDIR [--exporter dynamo|legacy] [--mask]
                    [--attn sdpa|eager] [--static] [--no-optimize]
                    [--no-fold]

FAMILY: gpt2, llama (GQA 8/2), qwen2, qwen3, mistral (sliding window),
gemma, gemma3 (sliding-window layers), phi3 (fused unequal qkv_proj), bert,
mixtral (mixture of experts, top-2 of 4, renormalised), qwen2_moe (top-3
of 6 softmax probabilities, not renormalised, plus a gated shared expert);
the experts as transformers' batched_mm writes them.

--exporter dynamo (the default of torch.onnx.export in torch 2.x: opset 18,
weights in OUTDIR/FAMILY.onnx.data) or legacy (the TorchScript exporter,
opset 17, constant folding on). Batch and sequence are dynamic (`batch`,
`seq`) unless --static. --mask adds an int64 attention_mask input with the
second sequence's last two tokens padded. --attn picks the attention
implementation (sdpa, the default, or eager). --no-optimize exports with
the dynamo exporter's optimizer off (optimize=False), --no-fold with the
legacy exporter's constant folding off (do_constant_folding=False): both
keep each parameter an initializer of its own (Gemma's RMSNorm otherwise
has 1 + weight folded into a new one).

Writes OUTDIR/FAMILY.onnx, input_ids.npy (int64 [2, 8]) [attention_mask.npy],
logits.npy (torch's f32 logits for them), params.txt (named_parameters: one
"name shape" line each, in the module's order) and state.safetensors (the
module's state dict as safetensors, the Hugging Face checkpoint format).
Weights are random from a seeded generator and moved by seeded noise, so no
two tensors are equal by accident.
"""
import argparse
import inspect
import os
import warnings

import numpy as np
import torch
import transformers as T

VOCAB = 96


def build(family, attn):
    common = dict(vocab_size=VOCAB, max_position_embeddings=32,
                  attn_implementation=attn)
    small = dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                 num_attention_heads=8, num_key_value_heads=2, **common)
    if family == "gpt2":
        return T.GPT2LMHeadModel(T.GPT2Config(
            vocab_size=VOCAB, n_positions=32, n_embd=32, n_layer=2, n_head=4,
            attn_implementation=attn))
    if family == "llama":
        return T.LlamaForCausalLM(T.LlamaConfig(**small))
    if family == "qwen2":
        return T.Qwen2ForCausalLM(T.Qwen2Config(**small))
    if family == "qwen3":
        return T.Qwen3ForCausalLM(T.Qwen3Config(head_dim=8, **small))
    if family == "mistral":
        return T.MistralForCausalLM(T.MistralConfig(sliding_window=4, **small))
    if family == "gemma":
        return T.GemmaForCausalLM(T.GemmaConfig(head_dim=8, **small))
    if family == "gemma3":
        return T.Gemma3ForCausalLM(T.Gemma3TextConfig(
            head_dim=8, sliding_window=4, layer_types=[
                "sliding_attention", "full_attention"], **small))
    if family == "phi3":
        return T.Phi3ForCausalLM(T.Phi3Config(pad_token_id=0, **small))
    if family == "bert":
        return T.BertForMaskedLM(T.BertConfig(
            vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
            num_attention_heads=4, intermediate_size=64,
            max_position_embeddings=32, attn_implementation=attn))
    # Mixtures of experts: the batched_mm experts (the default grouped_mm
    # has no ONNX form, and the eager loop over the experts hit is
    # data-dependent: the dynamo exporter cannot trace it).
    if family == "mixtral":
        return T.MixtralForCausalLM(T.MixtralConfig(
            num_local_experts=4, num_experts_per_tok=2,
            experts_implementation="batched_mm", **small))
    if family == "qwen2_moe":
        return T.Qwen2MoeForCausalLM(T.Qwen2MoeConfig(
            num_experts=6, num_experts_per_tok=3, moe_intermediate_size=48,
            shared_expert_intermediate_size=80,
            experts_implementation="batched_mm", **small))
    raise SystemExit(f"export_current.py: unknown family {family!r}")


def forward_kwargs(model, masked):
    """What the model is called with besides input_ids: no caches, tuples."""
    kwargs = {"return_dict": False}
    if not isinstance(model, T.BertForMaskedLM):
        kwargs["use_cache"] = False
    return kwargs


def dynamic_shapes(model, kwargs, dims):
    """torch.export's dynamic_shapes for model(input_ids, **kwargs): `dims`
    for input_ids and attention_mask, None for the flags (those that the
    signature does not name go to its **kwargs)."""
    params = inspect.signature(model.forward).parameters
    shapes = {"input_ids": dims}
    for k in kwargs:
        shape = dims if k == "attention_mask" else None
        if k in params:
            shapes[k] = shape
        else:
            shapes.setdefault("kwargs", {})[k] = shape
    return shapes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("family")
    ap.add_argument("out")
    ap.add_argument("--exporter", choices=["dynamo", "legacy"],
                    default="dynamo")
    ap.add_argument("--mask", action="store_true")
    ap.add_argument("--attn", choices=["sdpa", "eager"], default="sdpa")
    ap.add_argument("--static", action="store_true")
    ap.add_argument("--no-optimize", action="store_true")
    ap.add_argument("--no-fold", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(0)
    model = build(a.family, a.attn).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.02)
    with open(f"{a.out}/params.txt", "w") as f:
        for name, p in model.named_parameters():
            f.write(f"{name} {list(p.shape)}\n")
    from safetensors.torch import save_file
    state = {k: v.contiguous() for k, v in model.state_dict().items()}
    # Tied tensors share storage; safetensors wants each once.
    seen, unique = set(), {}
    for k, v in state.items():
        if v.data_ptr() not in seen:
            seen.add(v.data_ptr())
            unique[k] = v
    save_file(unique, f"{a.out}/state.safetensors")
    ids = torch.from_numpy(np.random.default_rng(1).integers(
        0, VOCAB, size=(2, 8)).astype(np.int64))
    np.save(f"{a.out}/input_ids.npy", ids.numpy())
    names = ["input_ids"]
    if a.mask:
        mask = torch.ones(2, 8, dtype=torch.int64)
        mask[1, 6:] = 0
        np.save(f"{a.out}/attention_mask.npy", mask.numpy())
        names.append("attention_mask")
    kwargs = forward_kwargs(model, a.mask)
    if a.mask:
        kwargs["attention_mask"] = mask
    with torch.no_grad():
        logits = model(ids, **kwargs)[0]
    np.save(f"{a.out}/logits.npy", logits.float().numpy())
    path = f"{a.out}/{a.family}.onnx"
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        if a.exporter == "dynamo":
            dims = None
            if not a.static:
                batch, seq = torch.export.Dim("batch"), torch.export.Dim(
                    "seq", max=32)
                dims = dynamic_shapes(model, kwargs, {0: batch, 1: seq})
            torch.onnx.export(model, (ids,), path, kwargs=kwargs, dynamo=True,
                              input_names=names, output_names=["logits"],
                              dynamic_shapes=dims, external_data=True,
                              optimize=not a.no_optimize)
        else:
            axes = None if a.static else {
                n: {0: "batch", 1: "seq"} for n in names + ["logits"]}
            # The TorchScript exporter makes every keyword argument an input
            # (logits_to_keep among them): bind the flags instead, and pass
            # the tensors by position.
            flags = {k: v for k, v in kwargs.items() if k != "attention_mask"}
            cls = type(model)

            def forward(self, input_ids, attention_mask=None):
                return cls.forward(self, input_ids,
                                   attention_mask=attention_mask, **flags)
            # The same module (its parameters keep their names), with a
            # forward of the tensors only.
            model.__class__ = type(cls.__name__, (cls,), {"forward": forward})
            args = (ids, mask) if a.mask else (ids,)
            torch.onnx.export(model, args, path, dynamo=False,
                              opset_version=17, input_names=names,
                              output_names=["logits"], dynamic_axes=axes,
                              do_constant_folding=not a.no_fold)


if __name__ == "__main__":
    main()
