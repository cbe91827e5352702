"""Hugging Face's Mixtral (transformers 5, float64, eager attention) on the
weights of `partition-import --model mixtral`: the independent reference
of e2e-mixtral.mlir.

usage: mixtral_reference.py HEADS KV_HEADS TOP_K WEIGHTS.safetensors
                            TOKENS.npy OUT.npy

The generated weights are stored [in, out] and each expert's projections
as one [X, in, out] tensor; Hugging Face stores nn.Linear weights [out,
in], the router as `mlp.gate.weight` [X, E] and the experts as
`mlp.experts.gate_up_proj` [X, 2F, E] (gate rows first) and `down_proj`
[X, E, F]. Every parameter is mapped (a missing or unused one is an error),
so the reference computes Mixtral with exactly these numbers: a token's
top-k experts from the router's softmax, their weights renormalised, no
token dropped.
"""
import sys

import numpy as np
import torch
from transformers import MixtralConfig, MixtralForCausalLM

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from safetensors_info import read  # noqa: E402


def hf_state(w):
    """Generated names and layouts -> Hugging Face's."""
    state = {"model.embed_tokens.weight": w.pop("embed_tokens.weight"),
             "model.norm.weight": w.pop("norm.weight"),
             "lm_head.weight": w.pop("lm_head.weight").T}
    w.pop("rope.cos")
    w.pop("rope.sin")
    i = 0
    while f"layers.{i}.input_layernorm.weight" in w:
        g, h = f"layers.{i}.", f"model.layers.{i}."
        for n in ("input_layernorm", "post_attention_layernorm"):
            state[h + n + ".weight"] = w.pop(g + n + ".weight")
        for n in "qkvo":
            state[h + f"self_attn.{n}_proj.weight"] = \
                w.pop(g + f"self_attn.{n}_proj.weight").T
        m = g + "block_sparse_moe."
        state[h + "mlp.gate.weight"] = w.pop(m + "gate.weight").T
        w1 = w.pop(m + "experts.w1").transpose(0, 2, 1)
        w3 = w.pop(m + "experts.w3").transpose(0, 2, 1)
        state[h + "mlp.experts.gate_up_proj"] = np.concatenate([w1, w3], 1)
        state[h + "mlp.experts.down_proj"] = \
            w.pop(m + "experts.w2").transpose(0, 2, 1)
        i += 1
    if w:
        sys.exit(f"parameters the reference does not map: {sorted(w)}")
    return {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in
            state.items()}


def main():
    heads, kv_heads, top_k = (int(a) for a in sys.argv[1:4])
    weights, tokens, out = sys.argv[4:7]
    w = {name: a.astype(np.float64) for name, _, a in read(weights)}
    V, E = w["embed_tokens.weight"].shape
    X, _, F = w["layers.0.block_sparse_moe.experts.w1"].shape
    layers = sum(1 for n in w if n.endswith(".input_layernorm.weight"))
    config = MixtralConfig(
        vocab_size=V, hidden_size=E, intermediate_size=F,
        num_hidden_layers=layers, num_attention_heads=heads,
        num_key_value_heads=kv_heads, num_local_experts=X,
        num_experts_per_tok=top_k, rms_norm_eps=1e-5,
        max_position_embeddings=4096, tie_word_embeddings=False,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
        attn_implementation="eager", experts_implementation="eager")
    model = MixtralForCausalLM(config).double().eval()
    missing, unexpected = model.load_state_dict(hf_state(w), strict=False)
    missing = [m for m in missing if "rotary_emb" not in m]
    if missing or unexpected:
        sys.exit(f"state mismatch: missing {missing}, unexpected {unexpected}")
    ids = torch.from_numpy(np.load(tokens).astype(np.int64))
    with torch.no_grad():
        logits = model(input_ids=ids).logits
    np.save(out, logits.numpy())


if __name__ == "__main__":
    main()
