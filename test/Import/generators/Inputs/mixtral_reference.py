"""Hugging Face's Mixtral (transformers 5, float64, eager attention) on the
weights of `partition-import --model mixtral`: the independent reference
of e2e-mixtral.mlir.

usage: mixtral_reference.py HEADS KV_HEADS TOP_K WEIGHTS.safetensors
                            TOKENS.npy OUT.npy
       mixtral_reference.py HEADS KV_HEADS TOP_K WEIGHTS.safetensors
                            TOKENS.npy OUTDIR --train LABELS.npy LR COEF

The first form saves the logits. The second takes one SGD step of lr LR
on the mean cross-entropy against LABELS plus COEF times the load-balancing
loss (Hugging Face's load_balancing_loss_func over all layers, for each
sequence, averaged over the batch), and writes
OUTDIR/loss.npy (before the step) and OUTDIR/new.<name>.npy for every
trained parameter, in the generated layout and names (as partition-run
writes them; the rotary tables are buffers in torch and constants in the
generated program).

The generated weights are stored [in, out] and each expert's projections
as one [X, in, out] tensor; Hugging Face stores nn.Linear weights [out,
in], the router as `mlp.gate.weight` [X, E] and the experts as
`mlp.experts.gate_up_proj` [X, 2F, E] (gate rows first) and `down_proj`
[X, E, F]. Every parameter is mapped (a missing or unused one is an error),
so the reference computes Mixtral with exactly these numbers: a token's
top-k experts from the router's softmax, their weights renormalised, no
token dropped.
"""
import os
import sys

import numpy as np
import torch
from transformers import MixtralConfig, MixtralForCausalLM
from transformers.models.mixtral.modeling_mixtral import \
    load_balancing_loss_func

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from safetensors_info import read  # noqa: E402


def hf_state(w):
    """Generated names and layouts -> Hugging Face's."""
    state = {"model.embed_tokens.weight": w.pop("embed_tokens.weight"),
             "model.norm.weight": w.pop("norm.weight"),
             "lm_head.weight": w.pop("lm_head.weight").T}
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


def generated_layout(model):
    """The inverse of hf_state: the trained weights under generated names."""
    out = {}
    sd = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    out["embed_tokens.weight"] = sd["model.embed_tokens.weight"]
    out["norm.weight"] = sd["model.norm.weight"]
    out["lm_head.weight"] = sd["lm_head.weight"].T
    i = 0
    while f"model.layers.{i}.input_layernorm.weight" in sd:
        g, h = f"layers.{i}.", f"model.layers.{i}."
        for n in ("input_layernorm", "post_attention_layernorm"):
            out[g + n + ".weight"] = sd[h + n + ".weight"]
        for n in "qkvo":
            out[g + f"self_attn.{n}_proj.weight"] = \
                sd[h + f"self_attn.{n}_proj.weight"].T
        m = g + "block_sparse_moe."
        out[m + "gate.weight"] = sd[h + "mlp.gate.weight"].T
        gate_up = sd[h + "mlp.experts.gate_up_proj"]
        F = gate_up.shape[1] // 2
        out[m + "experts.w1"] = gate_up[:, :F].transpose(0, 2, 1)
        out[m + "experts.w3"] = gate_up[:, F:].transpose(0, 2, 1)
        out[m + "experts.w2"] = \
            sd[h + "mlp.experts.down_proj"].transpose(0, 2, 1)
        i += 1
    return out


def sequence_aux_loss(router_logits, B, S, top_k):
    """Hugging Face's load_balancing_loss_func for each sequence alone,
    averaged over the batch (the generated Mixtral's aux_loss); each
    sequence's term is checked against Hugging Face's function."""
    X = router_logits[0].shape[-1]
    slots, mass = 0, 0
    for layer in router_logits:
        probs = torch.softmax(layer.reshape(B, S, X), dim=-1)
        _, chosen = torch.topk(probs, top_k, dim=-1)
        hot = torch.nn.functional.one_hot(chosen, X).to(probs.dtype)
        slots = slots + hot.sum(dim=(1, 2))
        mass = mass + probs.sum(dim=1)
    n = len(router_logits) * S
    per_sequence = X * ((slots / n) * (mass / n)).sum(dim=1)
    for b in range(B):
        hf = load_balancing_loss_func(
            tuple(l.reshape(B, S, X)[b] for l in router_logits), X, top_k)
        if not torch.allclose(per_sequence[b].float(), hf.float(),
                              rtol=1e-6):
            sys.exit(f"sequence {b}: {per_sequence[b].item()} but Hugging "
                     f"Face's load_balancing_loss_func gives {hf.item()}")
    return per_sequence.mean()


def train_step(model, ids, labels, lr, coef, outdir):
    out = model(input_ids=ids, output_router_logits=True)
    V = out.logits.shape[-1]
    ce = torch.nn.functional.cross_entropy(out.logits.reshape(-1, V),
                                           labels.reshape(-1))
    B, S = ids.shape
    aux = sequence_aux_loss(out.router_logits, B, S,
                            model.config.num_experts_per_tok)
    loss = ce + coef * aux
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            if p.grad is not None:
                p -= lr * p.grad
    os.makedirs(outdir, exist_ok=True)
    np.save(os.path.join(outdir, "loss.npy"), np.float64(loss.item()))
    for name, a in generated_layout(model).items():
        np.save(os.path.join(outdir, "new." + name + ".npy"), a)


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
    if len(sys.argv) > 7 and sys.argv[7] == "--train":
        labels = torch.from_numpy(np.load(sys.argv[8]).astype(np.int64))
        train_step(model, ids, labels, float(sys.argv[9]),
                   float(sys.argv[10]), out)
        return
    with torch.no_grad():
        logits = model(input_ids=ids).logits
    np.save(out, logits.numpy())


if __name__ == "__main__":
    main()
