"""The curated kernels as data: KernelIndex's `MODES` and kernel registry.

Mirrors `apps/web/src/server/import/liger/kernels.ts` (the first 10 kernels and `MODES`), `kernels-extra.ts` (the next
13) and `kernels-losses.ts` (the last 12) of github.com/SamMausberg/KernelIndex at e6c5a71 (a reading copy:
../shared/reference/kernelindex, relative to the checkout). Pure data: each kernel's `bind` names its binder in
`binders.py` and the binder's parameters, since binders are code.
"""

from __future__ import annotations

from typing import Any

# kernels.ts MODES: the timed passes
MODES = {
    "forward": "the module forward pass",
    "backward": "the backward pass of the module output given a random upstream gradient",
    "full": "the forward pass plus the backward pass",
}

# Signature arguments are (name, shape, dtype); a dtype "cfg" is the workload's float dtype ("float" in the
# OperationSpec). "bind" names a binder of binders.py and its parameters: the binders are code, as in the TS.
_ROWS_HIDDEN_IO = {"inputs": (("x", ("rows", "hidden"), "cfg"),), "outputs": (("y", ("rows", "hidden"), "cfg"),)}
_MLP_IO = {
    "inputs": (
        ("x", ("batch", "seq", "hidden"), "cfg"),
        ("w_gate", ("intermediate", "hidden"), "cfg"),
        ("w_up", ("intermediate", "hidden"), "cfg"),
        ("w_down", ("hidden", "intermediate"), "cfg"),
    ),
    "outputs": (("y", ("batch", "seq", "hidden"), "cfg"),),
}
_LOSS_OUT = (("loss", (1,), "cfg"),)
_ROPE_IO = {
    "inputs": (("q", (1, "q_heads", "seq", "head_dim"), "cfg"), ("k", (1, "kv_heads", "seq", "head_dim"), "cfg")),
    "outputs": (
        ("q_out", (1, "q_heads", "seq", "head_dim"), "cfg"),
        ("k_out", (1, "kv_heads", "seq", "head_dim"), "cfg"),
    ),
    "derived": {"head_dim": "hidden // q_heads"},
}
_LLAMA4_ROPE_IO = {
    "inputs": (("q", (1, "seq", "q_heads", "head_dim"), "cfg"), ("k", (1, "seq", "kv_heads", "head_dim"), "cfg")),
    "outputs": (
        ("q_out", (1, "seq", "q_heads", "head_dim"), "cfg"),
        ("k_out", (1, "seq", "kv_heads", "head_dim"), "cfg"),
    ),
    "derived": {"head_dim": "hidden // q_heads"},
}
_PREFERENCE_IO = {
    "inputs": (
        ("x", ("batch", "seq", "hidden"), "cfg"),
        ("weight", ("vocab", "hidden"), "cfg"),
        ("target", ("batch", "seq"), "int64"),
    ),
    "outputs": _LOSS_OUT,
    "bind": ("preference", {}),
}
_DISTILL_IO = {
    "inputs": (
        ("student_input", ("tokens", "student_hidden"), "cfg"),
        ("student_weight", ("vocab", "student_hidden"), "cfg"),
        ("teacher_input", ("tokens", "hidden"), "cfg"),
        ("teacher_weight", ("vocab", "hidden"), "cfg"),
        ("target", ("tokens",), "int64"),
    ),
    "outputs": _LOSS_OUT,
    "derived": {"student_hidden": "hidden // 2"},
    "bind": ("distill", {}),
}
_MTA_IO = {
    "family": "multi-token-attention",
    "inputs": (
        ("scores", ("batch", "heads_in", "seq", "seq"), "cfg"),
        ("weight", ("heads_out", "heads_in", "k", "k"), "cfg"),
        ("bias", ("heads_out",), "cfg"),
    ),
    "outputs": (("y", ("batch", "heads_out", "seq", "seq"), "cfg"),),
    "bind": ("mta", {}),
}
_GRPO_IO = {
    "family": "grpo",
    "inputs": (
        ("logits", ("batch", "seq_next", "vocab"), "cfg"),
        ("completion_ids", ("batch", "seq"), "int64"),
        ("advantages", ("batch",), "cfg"),
    ),
    "outputs": _LOSS_OUT,
    "derived": {"seq_next": "seq + 1"},
}


KERNELS: tuple[dict[str, Any], ...] = (
    # kernels.ts
    {
        "csvName": "rms_norm",
        "slug": "liger-rms-norm",
        "family": "rmsnorm",
        "title": "RMSNorm",
        "description": "Root-mean-square normalization of a rows×hidden activation with a learned hidden-size weight.",
        "inputs": (("x", ("rows", "hidden"), "cfg"), ("weight", ("hidden",), "cfg")),
        "outputs": (("y", ("rows", "hidden"), "cfg"),),
        "bind": ("rows_hidden", {"with_eps": True}),
    },
    {
        "csvName": "fused_add_rms_norm",
        "slug": "liger-fused-add-rms-norm",
        "family": "rmsnorm",
        "title": "Fused add + RMSNorm",
        "description": "Residual add followed by RMSNorm, returning the normalized activation and the post-add "
        "residual.",
        "inputs": (
            ("x", ("rows", "hidden"), "cfg"),
            ("residual", ("rows", "hidden"), "cfg"),
            ("weight", ("hidden",), "cfg"),
        ),
        "outputs": (("y", ("rows", "hidden"), "cfg"), ("residual_out", ("rows", "hidden"), "cfg")),
        "bind": ("rows_hidden", {"with_eps": True}),
    },
    {
        "csvName": "layer_norm",
        "slug": "liger-layer-norm",
        "family": "layernorm",
        "title": "LayerNorm",
        "description": "Layer normalization of a rows×hidden activation with learned weight and bias.",
        "inputs": (("x", ("rows", "hidden"), "cfg"), ("weight", ("hidden",), "cfg"), ("bias", ("hidden",), "cfg")),
        "outputs": (("y", ("rows", "hidden"), "cfg"),),
        "bind": ("rows_hidden", {"with_eps": True}),
    },
    {
        "csvName": "softmax",
        "slug": "liger-softmax",
        "family": "softmax",
        "title": "Softmax",
        "description": "Softmax over the last dimension of a rows×hidden tensor.",
        **_ROWS_HIDDEN_IO,
        "bind": ("rows_hidden", {"with_eps": False}),
    },
    {
        "csvName": "cross_entropy",
        "slug": "liger-cross-entropy",
        "family": "cross-entropy",
        "title": "Cross-entropy loss",
        "description": "Cross-entropy loss over tokens×vocab logits against integer targets; the benchmark generates "
        "fp32 logits.",
        "inputs": (("logits", ("tokens", "vocab"), "cfg"), ("target", ("tokens",), "int64")),
        "outputs": _LOSS_OUT,
        "bind": ("tokens_vocab", {}),
    },
    {
        "csvName": "jsd",
        "slug": "liger-jsd",
        "family": "jsd",
        "title": "Jensen-Shannon divergence loss",
        "description": "Generalized JSD between student and teacher log-probabilities over tokens×vocab; the benchmark "
        "generates fp32 log-probs.",
        "inputs": (
            ("student_log_probs", ("tokens", "vocab"), "cfg"),
            ("teacher_log_probs", ("tokens", "vocab"), "cfg"),
        ),
        "outputs": _LOSS_OUT,
        "bind": ("jsd", {}),
    },
    {
        "csvName": "embedding",
        "slug": "liger-embedding",
        "family": "embedding",
        "title": "Embedding lookup",
        "description": "Embedding table lookup: batch×seq integer ids gathered from a vocab×hidden weight.",
        "inputs": (("input_ids", ("batch", "seq"), "int64"), ("weight", ("vocab", "hidden"), "cfg")),
        "outputs": (("y", ("batch", "seq", "hidden"), "cfg"),),
        "bind": ("embedding", {}),
    },
    {
        "csvName": "rope",
        "slug": "liger-rope",
        "family": "rope",
        "title": "Rotary position embedding",
        "description": "Rotary position embedding applied to query and key tensors (batch 1, Llama-style head layout).",
        **_ROPE_IO,
        "bind": ("rope", {}),
    },
    {
        "csvName": "swiglu",
        "slug": "liger-swiglu",
        "family": "swiglu",
        "title": "SwiGLU MLP",
        "description": "Llama-style SwiGLU MLP: silu(x·Wgate)·(x·Wup) projected back down, over batch×seq×hidden "
        "activations.",
        **_MLP_IO,
        "bind": ("mlp", {"batch_key": "B", "act": "silu"}),
    },
    {
        "csvName": "geglu",
        "slug": "liger-geglu",
        "family": "geglu",
        "title": "GeGLU MLP",
        "description": "GeGLU MLP (tanh-approximated GELU gate) over batch×seq×hidden activations.",
        **_MLP_IO,
        "bind": ("mlp", {"batch_key": "bsz", "act": "gelu_pytorch_tanh"}),
    },
    # kernels-extra.ts
    {
        "csvName": "relu_squared",
        "slug": "liger-relu-squared",
        "family": "relu-squared",
        "title": "ReLU squared",
        "description": "Elementwise relu(x)^2 activation over a rows×hidden tensor; the benchmark sweeps the hidden "
        "size.",
        **_ROWS_HIDDEN_IO,
        "bind": ("relu_squared", {}),
    },
    {
        "csvName": "group_norm",
        "slug": "liger-group-norm",
        "family": "groupnorm",
        "title": "GroupNorm",
        "description": "Group normalization of a batch×channels×hidden tensor with affine channel weight and bias; "
        "groups = channels / channels_per_group.",
        "inputs": (
            ("x", ("batch", "channels", "hidden"), "cfg"),
            ("weight", ("channels",), "cfg"),
            ("bias", ("channels",), "cfg"),
        ),
        "outputs": (("y", ("batch", "channels", "hidden"), "cfg"),),
        "derived": {"groups": "channels // channels_per_group"},
        "bind": ("group_norm", {}),
    },
    {
        "csvName": "sparsemax",
        "slug": "liger-sparsemax",
        "family": "sparsemax",
        "title": "Sparsemax",
        "description": "Sparsemax projection over the last dimension of a tokens×features tensor.",
        "inputs": (("x", ("tokens", "features"), "cfg"),),
        "outputs": (("y", ("tokens", "features"), "cfg"),),
        "bind": ("sparsemax", {}),
    },
    {
        "csvName": "llama4_rope",
        "slug": "liger-llama4-rope",
        "family": "rope",
        "title": "Llama 4 rotary position embedding",
        "description": "Llama-4-style rotary embedding applied to query and key tensors in batch×seq×heads×head_dim "
        "layout (batch 1, complex-frequency formulation).",
        **_LLAMA4_ROPE_IO,
        "bind": ("rope", {}),
    },
    {
        "csvName": "megatron_rms_norm",
        "slug": "liger-megatron-rms-norm",
        "family": "rmsnorm",
        "title": "RMSNorm, Megatron layout",
        "description": "RMSNorm over the hidden dimension of a seq×batch×hidden activation (Megatron sbh layout) "
        "with a "
        "learned hidden-size weight; the benchmark runs bf16.",
        "inputs": (("x", ("seq", "batch", "hidden"), "cfg"), ("weight", ("hidden",), "cfg")),
        "outputs": (("y", ("seq", "batch", "hidden"), "cfg"),),
        "bind": ("megatron_rms_norm", {}),
    },
    {
        "csvName": "megatron_swiglu",
        "slug": "liger-megatron-swiglu",
        "family": "swiglu",
        "title": "SwiGLU activation, Megatron layout",
        "description": "SwiGLU activation over a seq×batch×(2·ffn) tensor: chunk in two on the last dimension, "
        "silu(gate)·up. The projections are outside the timed region; the benchmark runs bf16 and sweeps "
        "the per-rank FFN size.",
        "inputs": (("y", ("seq", "batch", "ffn_double"), "cfg"),),
        "outputs": (("out", ("seq", "batch", "ffn"), "cfg"),),
        "derived": {"ffn_double": "ffn * 2"},
        "bind": ("megatron_swiglu", {}),
    },
    {
        "csvName": "megatron_cross_entropy",
        "slug": "liger-megatron-cross-entropy",
        "family": "cross-entropy",
        "title": "Vocab-parallel cross-entropy, Megatron layout",
        "description": "Vocab-parallel cross-entropy over seq×batch×vocab bf16 logits against integer targets, "
        "returning per-token fp32 losses. Only TP=1 rows import; sharded-vocab rows would change the "
        "local logits shape.",
        "inputs": (("logits", ("seq", "batch", "vocab"), "cfg"), ("target", ("seq", "batch"), "int64")),
        "outputs": (("loss", ("seq", "batch"), "fp32"),),
        "bind": ("megatron_cross_entropy", {}),
    },
    {
        "csvName": "fused_moe",
        "slug": "liger-fused-moe",
        "family": "moe",
        "title": "Fused MoE expert MLP",
        "description": "Top-k routed mixture-of-experts silu-gated MLP: tokens×hidden activations dispatched to "
        "experts "
        "holding fused gate/up and down projections, weighted by softmaxed router scores.",
        "inputs": (
            ("x", ("tokens", "hidden"), "cfg"),
            ("gate_up_proj", ("experts", "intermediate_double", "hidden"), "cfg"),
            ("down_proj", ("experts", "hidden", "intermediate"), "cfg"),
            ("top_k_index", ("tokens", "k"), "int32"),
            ("top_k_weights", ("tokens", "k"), "cfg"),
        ),
        "outputs": (("y", ("tokens", "hidden"), "cfg"),),
        "derived": {"intermediate_double": "intermediate * 2"},
        "bind": ("fused_moe", {}),
    },
    {
        "csvName": "fused_neighborhood_attention",
        "slug": "liger-fused-neighborhood-attention",
        "family": "neighborhood-attention",
        "title": "Fused neighborhood attention",
        "description": "Neighborhood attention module over batch×seq×hidden states: q/k/v projections, banded "
        "(kernel_size, dilation) softmax attention, and output projection — the projections are inside "
        "the timed module.",
        "inputs": (
            ("hidden_states", ("batch", "seq", "hidden"), "cfg"),
            ("q_weight", ("hidden", "hidden"), "cfg"),
            ("k_weight", ("hidden", "hidden"), "cfg"),
            ("v_weight", ("hidden", "hidden"), "cfg"),
            ("out_weight", ("hidden", "hidden"), "cfg"),
            ("q_bias", ("hidden",), "cfg"),
            ("k_bias", ("hidden",), "cfg"),
            ("v_bias", ("hidden",), "cfg"),
            ("out_bias", ("hidden",), "cfg"),
        ),
        "outputs": (("y", ("batch", "seq", "hidden"), "cfg"),),
        "derived": {"head_dim": "hidden // heads"},
        "bind": ("neighborhood_attention", {}),
    },
    {
        "csvName": "multi_token_attention",
        "slug": "liger-multi-token-attention",
        "title": "Multi-token attention",
        "description": (
            "Multi-token attention over batch×heads_in×seq×seq scores: causal mask, softmax, "
            "then a K×K convolution to heads_out with bias, re-masked causally."
        ),
        **_MTA_IO,
    },
    {
        "csvName": "sparse_multi_token_attention",
        "slug": "liger-sparse-multi-token-attention",
        "title": "Sparse multi-token attention",
        "description": (
            "Multi-token attention over batch×heads_in×seq×seq scores: causal mask, sparsemax, "
            "then a K×K convolution to heads_out with bias, re-masked causally."
        ),
        **_MTA_IO,
    },
    {
        "csvName": "tiled_swiglu",
        "slug": "liger-tiled-swiglu",
        "family": "swiglu",
        "title": "SwiGLU MLP (tiled benchmark)",
        "description": "Llama-style SwiGLU MLP over batch×seq×hidden activations; providers include seq-sharded tiled "
        "executions of the same computation.",
        **_MLP_IO,
        "bind": ("mlp", {"batch_key": "bsz", "act": "silu"}),
    },
    {
        "csvName": "tiled_geglu",
        "slug": "liger-tiled-geglu",
        "family": "geglu",
        "title": "GeGLU MLP (tiled benchmark)",
        "description": "GeGLU MLP (tanh-approximated GELU gate) over batch×seq×hidden activations; providers include "
        "seq-sharded tiled executions of the same computation.",
        **_MLP_IO,
        "bind": ("mlp", {"batch_key": "bsz", "act": "gelu_pytorch_tanh"}),
    },
    # kernels-losses.ts
    {
        "csvName": "kl_div",
        "slug": "liger-kl-div",
        "family": "kl-divergence",
        "title": "KL-divergence loss",
        "description": "KL divergence between tokens×vocab log-probabilities and target probabilities (batchmean "
        "reduction); the benchmark generates fp32 inputs.",
        "inputs": (("log_probs", ("tokens", "vocab"), "cfg"), ("target_probs", ("tokens", "vocab"), "cfg")),
        "outputs": _LOSS_OUT,
        "bind": ("tokens_vocab", {}),
    },
    {
        "csvName": "tvd",
        "slug": "liger-tvd",
        "family": "tvd",
        "title": "Total variation distance loss",
        "description": "Total variation distance between two tokens×vocab probability distributions (batchmean "
        "reduction); the benchmark generates fp32 inputs.",
        "inputs": (("p", ("tokens", "vocab"), "cfg"), ("q", ("tokens", "vocab"), "cfg")),
        "outputs": _LOSS_OUT,
        "bind": ("tokens_vocab", {}),
    },
    {
        "csvName": "fused_linear_cross_entropy",
        "slug": "liger-fused-linear-cross-entropy",
        "family": "cross-entropy",
        "title": "Fused linear + cross-entropy",
        "description": "LM-head projection of tokens×hidden activations through a vocab×hidden weight fused with "
        "cross-entropy against integer targets, without materializing the logits.",
        "inputs": (
            ("x", ("tokens", "hidden"), "cfg"),
            ("weight", ("vocab", "hidden"), "cfg"),
            ("target", ("tokens",), "int64"),
        ),
        "outputs": _LOSS_OUT,
        "bind": ("linear_bt", {}),
    },
    {
        "csvName": "fused_linear_jsd",
        "slug": "liger-fused-linear-jsd",
        "family": "jsd",
        "title": "Fused linear + JSD",
        "description": "Student and teacher tokens×hidden activations projected through separate vocab×hidden heads "
        "fused with generalized JSD (beta 0.5, batchmean) between the resulting log-distributions.",
        "inputs": (
            ("student_input", ("tokens", "hidden"), "cfg"),
            ("student_weight", ("vocab", "hidden"), "cfg"),
            ("teacher_input", ("tokens", "hidden"), "cfg"),
            ("teacher_weight", ("vocab", "hidden"), "cfg"),
        ),
        "outputs": _LOSS_OUT,
        "bind": ("linear_bt", {"scalars": {"beta": 0.5}}),
    },
    {
        "csvName": "distill_jsd_loss",
        "slug": "liger-distill-jsd-loss",
        "family": "jsd",
        "title": "Chunked distillation JSD loss",
        "description": "Distillation loss combining hard cross-entropy and soft JSD between a hidden/2 student and a "
        "hidden teacher, each projected through its own LM head (equal hard/soft weights).",
        **_DISTILL_IO,
    },
    {
        "csvName": "distill_cosine_loss",
        "slug": "liger-distill-cosine-loss",
        "family": "cosine-similarity-loss",
        "title": "Chunked distillation cosine loss",
        "description": "Distillation loss combining hard cross-entropy and a soft cosine-similarity term between a "
        "hidden/2 student and a hidden teacher, each projected through its own LM head (equal hard/soft "
        "weights).",
        **_DISTILL_IO,
    },
    {
        "csvName": "fused_linear_orpo_loss",
        "slug": "liger-fused-linear-orpo-loss",
        "family": "orpo",
        "title": "Fused linear + ORPO loss",
        "description": "ORPO preference loss over batch×seq×hidden activations projected through a vocab×hidden LM "
        "head "
        "against integer targets, computed chunked without materializing logits.",
        **_PREFERENCE_IO,
    },
    {
        "csvName": "fused_linear_cpo_loss",
        "slug": "liger-fused-linear-cpo-loss",
        "family": "cpo",
        "title": "Fused linear + CPO loss",
        "description": "CPO preference loss over batch×seq×hidden activations projected through a vocab×hidden LM head "
        "against integer targets, computed chunked without materializing logits.",
        **_PREFERENCE_IO,
    },
    {
        "csvName": "fused_linear_simpo_loss",
        "slug": "liger-fused-linear-simpo-loss",
        "family": "simpo",
        "title": "Fused linear + SimPO loss",
        "description": "SimPO preference loss over batch×seq×hidden activations projected through a vocab×hidden "
        "LM head "
        "against integer targets, computed chunked without materializing logits.",
        **_PREFERENCE_IO,
    },
    {
        "csvName": "kto_loss",
        "slug": "liger-fused-linear-kto-loss",
        "family": "kto",
        "title": "Fused linear + KTO loss",
        "description": "KTO preference loss: policy and reference batch×seq×hidden activations project through "
        "separate "
        "biased vocab×hidden LM heads against integer targets, with per-sequence boolean preference "
        "labels and a precomputed KL term (beta 0.1).",
        "inputs": (
            ("x", ("batch", "seq", "hidden"), "cfg"),
            ("ref_x", ("batch", "seq", "hidden"), "cfg"),
            ("weight", ("vocab", "hidden"), "cfg"),
            ("bias", ("vocab",), "cfg"),
            ("ref_weight", ("vocab", "hidden"), "cfg"),
            ("ref_bias", ("vocab",), "cfg"),
            ("target", ("batch", "seq"), "int64"),
            ("preference_labels", ("batch",), "bool"),
            ("kl", (1,), "cfg"),
        ),
        "outputs": _LOSS_OUT,
        "bind": ("kto", {}),
    },
    {
        "csvName": "fused_linear_grpo_loss_token",
        "slug": "liger-grpo-loss-token",
        "title": "GRPO loss, token-level importance sampling",
        "description": (
            "GRPO policy loss over batch×(seq+1)×vocab logits with per-sequence advantages "
            "and token-level importance sampling (clip 0.2, no KL reference term)."
        ),
        **_GRPO_IO,
        "bind": ("grpo", {"level": "token"}),
    },
    {
        "csvName": "fused_linear_grpo_loss_sequence",
        "slug": "liger-grpo-loss-sequence",
        "title": "GRPO loss, sequence-level importance sampling",
        "description": (
            "GRPO policy loss over batch×(seq+1)×vocab logits with per-sequence advantages "
            "and sequence-level importance sampling (clip 0.2, no KL reference term)."
        ),
        **_GRPO_IO,
        "bind": ("grpo", {"level": "sequence"}),
    },
)

KERNELS_BY_NAME: dict[str, dict[str, Any]] = {k["csvName"]: k for k in KERNELS}
