"""One identity with KernelIndex: a Liger CSV row as KernelIndex's six `kernelindex.dev/v1alpha1` objects.

A Python re-implementation (not a copy) of KernelIndex's Liger importer, github.com/SamMausberg/KernelIndex
at e6c5a71 (`apps/web/src/server/import/liger/*.ts`, `import/shared.ts`, `identity/digest.ts`,
`schemas/*.ts`; a reading copy is in /work/shared/reference/kernelindex/). One upstream CSV row becomes:

- `OperationSpec`: one per curated kernel (the module computation; all passes share it);
- `WorkloadCase`: one per kernel and bound case (axes from `x_value` + the config, plus the float dtype);
- `ImplementationRevision`: one per kernel and provider;
- `BenchmarkProtocol`: one per timed pass (`forward`, `backward`, `full`);
- `ExecutionEnvironment`: one per GPU (hardware only: the CSV records no CUDA, driver or torch version);
- `BenchmarkRun`: one per row.

Each object's digest is `"sha256:" + sha256(RFC 8785 canonical JSON of {apiVersion, kind, spec})`
(`object_digest`); `metadata` (names, titles, `liger_version`, the git commit) never enters a digest.

Which rows map, and why the others do not (checked in this order, as `reconcileLiger` does; the reason
names are those of KernelIndex's report and of the golden `summary.json`):

1. `memoryRows`: `metric_name` is not `speed` (memory rows carry no latency);
2. `uncuratedKernels`: the kernel is not one of the 35 whose tensor semantics KernelIndex verified
   (`dpo_loss`, `dyt*`, `poly_norm`, `qwen2vl_mrope`, ... are not), counted per kernel name;
3. `unknownConfig`, counted per kernel name: the pass is not forward/backward/full (e.g. `no-grad-forward`),
   or `x_value` is not a positive integer (`qwen3.5_9b`), or the config is not JSON, or the config's shape
   is not the one the kernel's binder knows (the CSV spans script eras; each binder guards on its era's keys);
   the pass is checked before the provider, the config after it;
4. `unknownProvider`: the provider is not in KernelIndex's provider table (`liger_triton`, `liger_cutile`,
   `liger-fp32-accum`, ...), counted per provider;
5. `unknownGpu`: the GPU is not in its hardware table (`NVIDIA H200`, `NVIDIA H100 NVL`,
   `NVIDIA A100-SXM4-40GB`), counted per GPU name;
6. `issues`: the run cannot be normalized (median not a positive finite number, unparseable timestamp);
7. `duplicateRows`: within one file, a run whose externalId was already made.

Everything but the run depends only on (kernel, pass, provider, x_name, x_value, config, GPU): that part is
`resolve_identity`, cached per distinct tuple, so it can be applied per distinct value of a column set.

JavaScript semantics reproduced (the digests depend on them): numbers are IEEE doubles (`Number(...)` of a
CSV string, `JSON.parse` of the config: `4096.0` is the integer 4096, `1e21` stays a double); `Math.round`
rounds ties up (`2.5 -> 3`, `-2.5 -> -2`; Python's `round` rounds to even); numbers print as ECMAScript
does (`0.000001`, `1e+21`, via RFC 8785); axis names sort with `localeCompare` (`_` before digits before
letters); timestamps without a zone are UTC and print as `toISOString()` (`...T21:27:38.000Z`).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import re
import string
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cache, lru_cache
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any

from pipeline.contracts.digests import canonical_bytes as canonical_json
from pipeline.contracts.digests import object_digest as manifest_digest

API_VERSION = "kernelindex.dev/v1alpha1"

# --- from import/liger/types.ts -------------------------------------------------------------------------
LIGER_REPO_URL = "https://github.com/linkedin/Liger-Kernel"
SOURCE_SLUG = "liger-kernel-bench"  # LIGER_SOURCE.slug
CSV_COLUMNS = (  # ligerRow: a strict object, so a missing or an extra column makes the row a parse issue
    "kernel_name",
    "kernel_provider",
    "kernel_operation_mode",
    "metric_name",
    "metric_unit",
    "x_name",
    "x_label",
    "x_value",
    "y_value_50",
    "y_value_20",
    "y_value_80",
    "extra_benchmark_config_str",
    "gpu_name",
    "timestamp",
    "liger_version",
)
DTYPES = {"torch.bfloat16": "bf16", "torch.float16": "fp16", "torch.float32": "fp32"}

# --- from import/liger/kernels.ts (MODES) -----------------------------------------------------------------
MODES = {
    "forward": "the module forward pass",
    "backward": "the backward pass of the module output given a random upstream gradient",
    "full": "the forward pass plus the backward pass",
}

# --- from import/liger/normalize.ts (HARDWARE): GPU name as the CSV writes it -> hardware spec ---------------
HARDWARE: dict[str, dict[str, str]] = {
    "NVIDIA A100-SXM4-80GB": {
        "vendor": "nvidia",
        "product": "NVIDIA A100",
        "architecture": "sm_80",
        "formFactor": "SXM4-80GB",
    },
    "NVIDIA H100 80GB HBM3": {
        "vendor": "nvidia",
        "product": "NVIDIA H100",
        "architecture": "sm_90",
        "formFactor": "80GB HBM3",
    },
    "NVIDIA H100 PCIe": {"vendor": "nvidia", "product": "NVIDIA H100", "architecture": "sm_90", "formFactor": "PCIe"},
    "NVIDIA B200": {"vendor": "nvidia", "product": "NVIDIA B200", "architecture": "sm_100"},
    "NVIDIA GeForce RTX 3090": {"vendor": "nvidia", "product": "NVIDIA GeForce RTX 3090", "architecture": "sm_86"},
    "NVIDIA GeForce RTX 4090": {"vendor": "nvidia", "product": "NVIDIA GeForce RTX 4090", "architecture": "sm_89"},
}

# --- from import/liger/normalize.ts (PROJECTS): the software projects providers belong to ------------------
PROJECTS: dict[str, dict[str, str]] = {
    "liger-kernel": {"name": "Liger-Kernel", "repository": LIGER_REPO_URL, "github": "linkedin/Liger-Kernel"},
    "pytorch": {"name": "PyTorch", "repository": "https://github.com/pytorch/pytorch", "github": "pytorch/pytorch"},
    "megatron-lm": {
        "name": "NVIDIA Megatron-LM",
        "repository": "https://github.com/NVIDIA/Megatron-LM",
        "github": "NVIDIA/Megatron-LM",
    },
    "deepspeed": {
        "name": "DeepSpeed",
        "repository": "https://github.com/deepspeedai/DeepSpeed",
        "github": "deepspeedai/DeepSpeed",
    },
    "transformers": {
        "name": "Hugging Face Transformers",
        "repository": "https://github.com/huggingface/transformers",
        "github": "huggingface/transformers",
    },
}

# --- from import/liger/normalize.ts (PROVIDERS): kernel_provider -> implementation facts --------------------
# Only language, licences and pip package enter the implementation's digest, so providers can share one.
_LIGER = {
    "projectSlug": "liger-kernel",
    "language": "triton",
    "declared": "BSD-2-Clause",
    "concluded": "BSD-2-Clause",
    "pipPackage": "liger-kernel",
}
PROVIDERS: dict[str, dict[str, str]] = {
    "liger": {**_LIGER, "title": "Liger", "description": "Liger-Kernel Triton implementation."},
    "liger_fused_add_rms_norm": {
        **_LIGER,
        "title": "Liger fused",
        "description": "Liger-Kernel fused add + RMSNorm Triton implementation.",
    },
    "liger_rms_norm": {
        **_LIGER,
        "title": "Liger unfused",
        "description": "Residual add in PyTorch followed by the Liger RMSNorm Triton kernel (unfused baseline).",
    },
    "huggingface": {
        "projectSlug": "transformers",
        "title": "Transformers",
        "language": "python",
        "description": "Hugging Face Transformers reference module.",
        "declared": "Apache-2.0",
        "role": "baseline",
    },
    "torch": {
        "projectSlug": "pytorch",
        "title": "PyTorch",
        "language": "python",
        "description": "PyTorch reference module.",
        "declared": "BSD-3-Clause",
        "role": "baseline",
    },
    "torch_compile": {
        "projectSlug": "pytorch",
        "title": "torch.compile",
        "language": "python",
        "description": "PyTorch reference module compiled with torch.compile.",
        "declared": "BSD-3-Clause",
    },
    "liger_in_place": {
        **_LIGER,
        "title": "Liger in-place",
        "description": "Liger-Kernel Triton implementation, in-place variant.",
    },
    "liger_tiled": {
        **_LIGER,
        "title": "Liger tiled",
        "description": "Liger-Kernel MLP under seq-sharded tiled execution (same computation, "
        "chunked over the sequence).",
    },
    "megatron": {
        "projectSlug": "megatron-lm",
        "title": "Megatron",
        "language": "python",
        "description": "Megatron-Core module for the benchmarked operation.",
        "declared": "BSD-3-Clause",
    },
    "megatron-fused": {
        "projectSlug": "megatron-lm",
        "title": "Megatron fused",
        "language": "python",
        "description": "Megatron-Core fused_vocab_parallel_cross_entropy (fused kernel path).",
        "declared": "BSD-3-Clause",
    },
    "megatron-unfused": {
        "projectSlug": "megatron-lm",
        "title": "Megatron unfused",
        "language": "python",
        "description": "Megatron-Core vocab_parallel_cross_entropy (unfused reference path).",
        "declared": "BSD-3-Clause",
        "role": "baseline",
    },
    "deepspeed_tiled": {
        "projectSlug": "deepspeed",
        "title": "DeepSpeed tiled",
        "language": "python",
        "description": "DeepSpeed TiledMLP seq-sharded execution.",
        "declared": "Apache-2.0",
    },
}

# --- the curated kernels: kernels.ts (first 10), kernels-extra.ts (next 13), kernels-losses.ts (last 12) ----
# Signature arguments are (name, shape, dtype); a dtype "cfg" is the workload's float dtype ("float" in the
# OperationSpec). "bind" names a binder below and its parameters: the binders are code, as in the TS.
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


def _grpo_description(level: str) -> str:
    return (
        f"GRPO policy loss over batch×(seq+1)×vocab logits with per-sequence advantages and {level}-level "
        "importance sampling (clip 0.2, no KL reference term)."
    )


def _mta_description(activation: str) -> str:
    return (
        f"Multi-token attention over batch×heads_in×seq×seq scores: causal mask, {activation}, then a K×K "
        "convolution to heads_out with bias, re-masked causally."
    )


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
        "description": _mta_description("softmax"),
        **_MTA_IO,
    },
    {
        "csvName": "sparse_multi_token_attention",
        "slug": "liger-sparse-multi-token-attention",
        "title": "Sparse multi-token attention",
        "description": _mta_description("sparsemax"),
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
        "description": _grpo_description("token"),
        **_GRPO_IO,
        "bind": ("grpo", {"level": "token"}),
    },
    {
        "csvName": "fused_linear_grpo_loss_sequence",
        "slug": "liger-grpo-loss-sequence",
        "title": "GRPO loss, sequence-level importance sampling",
        "description": _grpo_description("sequence"),
        **_GRPO_IO,
        "bind": ("grpo", {"level": "sequence"}),
    },
)

KERNELS_BY_NAME: dict[str, dict[str, Any]] = {k["csvName"]: k for k in KERNELS}

# The columns `resolve_identity` takes, in its argument order: everything of a row but its run depends on these.
IDENTITY_COLUMNS = (
    "kernel_name",
    "kernel_operation_mode",
    "kernel_provider",
    "x_name",
    "x_value",
    "extra_benchmark_config_str",
    "gpu_name",
)
SKIP_REASONS = ("memoryRows", "uncuratedKernels", "unknownConfig", "unknownProvider", "unknownGpu", "duplicateRows")

# Why a row has no KernelIndex identity, as the warehouse states it (`identity_reason`), by skip reason.
IDENTITY_REASONS = {
    "memoryRows": "memory metric",
    "uncuratedKernels": "kernel not curated by KernelIndex",
    "unknownConfig": "config KernelIndex does not know",
    "unknownProvider": "provider KernelIndex does not know",
    "unknownGpu": "GPU not in KernelIndex's hardware table",
    "duplicateRows": "duplicate: an earlier row of the file made this externalId (KernelIndex keeps the first)",
}


def rejected_reason(problem: str) -> str:
    """`identity_reason` of a row KernelIndex's parser or run builder rejects (its `issues`)."""
    return f"KernelIndex rejects the row ({problem})"


def header_problem(header: list[str]) -> str | None:
    """What `parseRows` says of every row of a file with this header (as written, unstripped), or None: a
    missing column rejects the file, an unexpected one every row (the row schema is strict)."""
    missing = [c for c in CSV_COLUMNS if c not in header]
    if missing:
        return f"expected column {', '.join(repr(c) for c in missing)} missing"
    extra = [c for c in header if c not in CSV_COLUMNS]
    return f"unrecognized keys {extra}" if extra else None


# ============================================================================================================
# Canonical JSON and the one digest function (identity/digest.ts)


def object_digest(api_version: str, kind: str, spec: Mapping[str, Any]) -> str:
    """`sha256:` + hex sha256 of the RFC 8785 form of `{apiVersion, kind, spec}`: the project's one
    digest function (contracts/digests.py)."""
    return manifest_digest({"apiVersion": api_version, "kind": kind, "spec": spec})


# ============================================================================================================
# JavaScript semantics

_MAX_SAFE = 2**53 - 1
# ECMAScript StrWhiteSpaceChar: WhiteSpace and LineTerminator (Python's str.strip would also strip \x1c-\x1f).
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"  # noqa: E501
_JS_DECIMAL = re.compile(r"[+-]?(?:Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")
_JS_NONDECIMAL = re.compile(r"0(?:[xX][0-9a-fA-F]+|[oO][0-7]+|[bB][01]+)")


def js_number(text: str) -> float:
    """`Number(text)` for a string: "" -> 0, " 12 " -> 12, "0x10" -> 16, "1_0" / "inf" / "nan" -> NaN."""
    s = text.strip(_JS_SPACE)
    if s == "":
        return 0.0
    if _JS_DECIMAL.fullmatch(s):
        return float(s)
    if _JS_NONDECIMAL.fullmatch(s):
        return float(int(s[2:], {"x": 16, "o": 8, "b": 2}[s[1].lower()]))
    return math.nan


def js_round(x: float) -> float:
    """`Math.round`: the nearest integer, ties towards +infinity (2.5 -> 3, -2.5 -> -2, 0.49999999999999994 -> 0)."""
    if not math.isfinite(x):
        return x
    floor = math.floor(x)
    return float(floor + 1 if x - floor >= 0.5 else floor)


def js_value(x: float | int) -> float | int:
    """A JS number as the plain Python value JSON.parse would give back: integral and safe -> int, else float."""
    if isinstance(x, float) and x.is_integer() and abs(x) <= _MAX_SAFE:
        return int(x)
    return x


def js_number_to_string(x: float | int) -> str:
    """`String(x)` for a number (ECMAScript Number::toString): 4096, 0.000001, 1e-7, 1e+21."""
    if isinstance(x, float) and not math.isfinite(x):
        return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    if isinstance(x, int) and not isinstance(x, bool) and abs(x) > _MAX_SAFE:
        x = float(x)
    return canonical_json(js_value(x) if isinstance(x, float) else x).decode()


def ms_to_ns(ms: float) -> int | float:
    """`Math.round(ms * 1_000_000)`, the importer's ms -> ns conversion."""
    return js_value(js_round(ms * 1_000_000))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"JSON.parse rejects {name}")


def js_json_parse(text: str) -> Any:
    """`JSON.parse`: every number is a double (so 4096 and 4096.0 are the same), NaN/Infinity are errors."""
    return json.loads(text, parse_int=float, parse_constant=_reject_constant)


@lru_cache(maxsize=1 << 12)
def kebab(value: str) -> str:
    """shared.ts `kebab`: lower case, runs of anything but [a-z0-9] -> "-", trimmed, at most 100 characters."""
    return _KEBAB_EDGES.sub("", _KEBAB_RUNS.sub("-", value.lower()))[:100]


_KEBAB_RUNS = re.compile(r"[^a-z0-9]+")
_KEBAB_EDGES = re.compile(r"^-+|-+$")


def _locale_key(name: str) -> str:
    # `localeCompare` (ICU root collation) on axis names [a-z][a-z0-9_]*: "_" sorts before digits, digits
    # before letters, and a prefix first. Mapping "_" below "0" gives that order with a plain string sort.
    return name.replace("_", "\x01")


_ISO = re.compile(
    r"(?P<year>[+-]\d{6}|\d{4})(?:-(?P<month>\d\d)(?:-(?P<day>\d\d))?)?"
    r"(?:T(?P<hour>\d\d):(?P<minute>\d\d)(?::(?P<second>\d\d)(?:[.,](?P<frac>\d+))?)?)?"
    r"(?P<zone>[zZ]|[+-]\d\d:\d\d)?"
)


@lru_cache(maxsize=1 << 12)  # a sweep's rows share their timestamp
def to_utc_instant(value: str) -> str:
    """shared.ts `toUtcInstant`: no zone means UTC; printed as `Date.prototype.toISOString` (milliseconds, Z).

    Covers the ECMAScript date-time string format (what the CSV writes: `YYYY-MM-DDTHH:MM:SS` once the importer
    has put a `T` for the space). V8's fallback parser for other shapes is not reproduced: they raise ValueError.
    """
    with_zone = value if re.search(r"(z|[+-]\d\d:\d\d)$", value, re.IGNORECASE) else value + "Z"
    m = _ISO.fullmatch(with_zone)
    if not m or m["year"] == "-000000":
        raise ValueError(f"unparseable timestamp: {value}")
    year, month, day = int(m["year"]), int(m["month"] or 1), int(m["day"] or 1)
    hour, minute, second = int(m["hour"] or 0), int(m["minute"] or 0), int(m["second"] or 0)
    ms = int((m["frac"] or "0")[:3].ljust(3, "0"))
    if not (1 <= month <= 12 and 1 <= day <= 31 and minute < 60 and second < 60):
        raise ValueError(f"unparseable timestamp: {value}")
    if hour > 24 or (hour == 24 and (minute or second or ms)):
        raise ValueError(f"unparseable timestamp: {value}")
    zone = m["zone"] or "Z"
    offset = 0 if zone in "zZ" else (1 if zone[0] == "+" else -1) * (int(zone[1:3]) * 60 + int(zone[4:6]))
    if not 1 <= year <= 9999:
        raise ValueError(f"timestamp outside years 1-9999 not supported: {value}")
    # Like MakeDay, a day past the month's end rolls over (2024-02-30 -> 2024-03-01); 24:00 is the next day.
    moment = datetime(year, month, 1, tzinfo=UTC) + timedelta(
        days=day - 1, hours=hour, minutes=minute - offset, seconds=second, milliseconds=ms
    )
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def evaluate_axis_expression(expression: str, bindings: Mapping[str, float]) -> float:
    """shared.ts `evaluateAxisExpression`: integers, axis names, + - * % // and parentheses, in doubles."""
    tokens = re.findall(r"\d+|[a-z_][a-z0-9_]*|//|[+\-*%()]", expression)
    pos = 0

    def peek() -> str | None:
        return tokens[pos] if pos < len(tokens) else None

    def take() -> str | None:
        nonlocal pos
        token = peek()
        pos += 1
        return token

    def factor() -> float:
        token = take()
        if token is None:
            raise ValueError(f"unexpected end of '{expression}'")
        if token == "(":
            value = total()
            if take() != ")":
                raise ValueError(f"missing ')' in '{expression}'")
            return value
        if token.isdigit():
            return float(token)
        if token not in bindings:
            raise ValueError(f"unbound axis '{token}' in '{expression}'")
        return float(bindings[token])

    def product() -> float:
        value = factor()
        while peek() in ("*", "//", "%"):
            op, rhs = take(), factor()
            value = value * rhs if op == "*" else math.fmod(value, rhs) if op == "%" else float(math.floor(value / rhs))
        return value

    def total() -> float:
        value = product()
        while peek() in ("+", "-"):
            op, rhs = take(), product()
            value = value + rhs if op == "+" else value - rhs
        return value

    result = total()
    if pos != len(tokens):
        raise ValueError(f"trailing tokens in '{expression}'")
    return result


# ============================================================================================================
# Binders (kernels*.ts): row config -> axes, or None when the config's shape is not the one the kernel knows.

_UNDEFINED = object()


def _get(config: Any, key: str) -> Any:
    # `config.key` in JS: a missing key, or any non-object config, reads as undefined.
    return config.get(key, _UNDEFINED) if isinstance(config, dict) else _UNDEFINED


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _int(value: Any) -> float | None:
    # types.ts `int`: a number, an integer, > 0
    if _is_number(value) and math.isfinite(value) and float(value).is_integer() and value > 0:
        return float(value)
    return None


def _eps(value: Any) -> float | None:
    # types.ts `eps`: a finite number > 0
    return float(value) if _is_number(value) and math.isfinite(value) and value > 0 else None


def _dtype(value: Any) -> str | None:
    return DTYPES.get(value) if isinstance(value, str) else None


def _is(value: Any, expected: Any) -> bool:
    # JS `===` against a literal number, boolean or string
    if isinstance(expected, bool):
        return value is expected
    if _is_number(expected):
        return _is_number(value) and value == expected
    return isinstance(value, str) and value == expected


Binding = dict[str, Any]  # {"axes": {name: number}, "dtype": str, "scalars": {name: number} | None}


def _bind_rows_hidden(x, x_name, c, with_eps):
    rows, dtype = _int(_get(c, "M")), _dtype(_get(c, "dtype"))
    epsilon = _eps(_get(c, "eps")) if with_eps else None
    if not rows or not dtype or (with_eps and not epsilon):
        return None
    if x_name not in ("H", "N"):
        return None
    return {"axes": {"rows": rows, "hidden": x}, "dtype": dtype, "scalars": {"eps": epsilon} if epsilon else None}


def _bind_tokens_vocab(x, x_name, c):
    batch, seq = _int(_get(c, "B")), _int(_get(c, "T"))
    if not batch or not seq or x_name != "V":
        return None
    return {"axes": {"tokens": batch * seq, "vocab": x}, "dtype": "fp32"}


def _bind_jsd(x, x_name, c):
    if x_name == "V":
        return _bind_tokens_vocab(x, x_name, c)
    if x_name == "BT":
        vocab = _int(_get(c, "vocab_size"))
        return {"axes": {"tokens": x, "vocab": vocab}, "dtype": "fp32"} if vocab else None
    return None


def _bind_embedding(x, x_name, c):
    batch, seq, hidden = _int(_get(c, "B")), _int(_get(c, "T")), _int(_get(c, "D"))
    dtype = _dtype(_get(c, "dtype"))
    if not batch or not seq or not hidden or not dtype or x_name != "V":
        return None
    return {"axes": {"batch": batch, "seq": seq, "hidden": hidden, "vocab": x}, "dtype": dtype}


def _bind_rope(x, x_name, c):
    q_heads, kv_heads = _int(_get(c, "num_q_heads")), _int(_get(c, "num_kv_heads"))
    dtype = _dtype(_get(c, "dtype"))
    if not q_heads or not kv_heads or not dtype:
        return None
    seq = x if x_name == "T" else _int(_get(c, "seq_len"))
    hidden = x if x_name == "H" else _int(_get(c, "hidden_size"))
    if not seq or not hidden or math.fmod(hidden, q_heads) != 0:
        return None
    return {"axes": {"seq": seq, "hidden": hidden, "q_heads": q_heads, "kv_heads": kv_heads}, "dtype": dtype}


def _bind_mlp(x, x_name, c, batch_key, act):
    batch, hidden = _int(_get(c, batch_key)), _int(_get(c, "hidden_size"))
    intermediate, dtype = _int(_get(c, "intermediate_size")), _dtype(_get(c, "dtype"))
    if not batch or not hidden or not intermediate or not dtype:
        return None
    if x_name != "T" or not _is(_get(c, "hidden_act"), act):
        return None
    return {"axes": {"batch": batch, "seq": x, "hidden": hidden, "intermediate": intermediate}, "dtype": dtype}


def _bind_relu_squared(x, x_name, c):
    rows, dtype = _int(_get(c, "M")), _dtype(_get(c, "dtype"))
    if not rows or not dtype or x_name != "N":
        return None
    return {"axes": {"rows": rows, "hidden": x}, "dtype": dtype}


def _bind_group_norm(x, x_name, c):
    batch, hidden, per_group = _int(_get(c, "M")), _int(_get(c, "H")), _int(_get(c, "channels_per_group"))
    dtype, epsilon = _dtype(_get(c, "dtype")), _eps(_get(c, "eps"))
    if not batch or not hidden or not per_group or not dtype or not epsilon:
        return None
    if x_name != "C" or math.fmod(x, per_group) != 0:
        return None
    axes = {"batch": batch, "channels": x, "hidden": hidden, "channels_per_group": per_group}
    return {"axes": axes, "dtype": dtype, "scalars": {"eps": epsilon}}


def _bind_sparsemax(x, x_name, c):
    batch, seq, dtype = _int(_get(c, "B")), _int(_get(c, "T")), _dtype(_get(c, "dtype"))
    if not batch or not seq or not dtype:
        return None
    if x_name != "V" or not _is(_get(c, "dim"), -1):
        return None
    return {"axes": {"tokens": batch * seq, "features": x}, "dtype": dtype}


def _bind_megatron_rms_norm(x, x_name, c):
    seq, batch = _int(_get(c, "S")), _int(_get(c, "B"))
    if not seq or not batch or x_name != "H":
        return None
    return {"axes": {"seq": seq, "batch": batch, "hidden": x}, "dtype": "bf16", "scalars": {"eps": 1e-6}}


def _bind_megatron_swiglu(x, x_name, c):
    seq, batch = _int(_get(c, "S")), _int(_get(c, "B"))
    if not seq or not batch or x_name != "ffn_local":
        return None
    return {"axes": {"seq": seq, "batch": batch, "ffn": x}, "dtype": "bf16"}


def _bind_megatron_cross_entropy(x, x_name, c):
    seq, batch = _int(_get(c, "S")), _int(_get(c, "B"))
    if not seq or not batch or x_name != "V" or not _is(_get(c, "TP"), 1):
        return None
    return {"axes": {"seq": seq, "batch": batch, "vocab": x}, "dtype": "bf16"}


def _bind_fused_moe(x, x_name, c):
    hidden, intermediate, k = _int(_get(c, "H")), _int(_get(c, "intermediate_dim")), _int(_get(c, "K"))
    dtype = _dtype(_get(c, "dtype"))
    if not hidden or not intermediate or not k or not dtype:
        return None
    tokens = x if x_name == "T" else _int(_get(c, "T"))
    experts = x if x_name == "E" else _int(_get(c, "E"))
    if not tokens or not experts or x_name not in ("T", "E"):
        return None
    axes = {"tokens": tokens, "hidden": hidden, "intermediate": intermediate, "experts": experts, "k": k}
    return {"axes": axes, "dtype": dtype}


def _bind_neighborhood_attention(x, x_name, c):
    batch, hidden, heads = _int(_get(c, "batch_size")), _int(_get(c, "hidden_size")), _int(_get(c, "num_heads"))
    kernel, dilation = _int(_get(c, "kernel_size")), _int(_get(c, "dilation"))
    dtype = _dtype(_get(c, "dtype"))
    if not batch or not hidden or not heads or not kernel or not dilation or not dtype:
        return None
    if x_name != "seq_len" or not _is(_get(c, "bias"), True):
        return None
    if math.fmod(hidden, heads) != 0:
        return None
    axes = {"batch": batch, "seq": x, "hidden": hidden, "heads": heads, "kernel_size": kernel, "dilation": dilation}
    return {"axes": axes, "dtype": dtype}


def _bind_mta(x, x_name, c):
    batch, heads_in, heads_out = _int(_get(c, "B")), _int(_get(c, "C_in")), _int(_get(c, "C_out"))
    k, dtype = _int(_get(c, "K")), _dtype(_get(c, "dtype"))
    if not batch or not heads_in or not heads_out or not k or not dtype:
        return None
    if x_name != "L" or not _is(_get(c, "groups"), 1) or not _is(_get(c, "bias"), True):
        return None
    return {"axes": {"batch": batch, "heads_in": heads_in, "heads_out": heads_out, "seq": x, "k": k}, "dtype": dtype}


def _bind_linear_bt(x, x_name, c, scalars=None):
    hidden, vocab, dtype = _int(_get(c, "H")), _int(_get(c, "V")), _dtype(_get(c, "dtype"))
    if not hidden or not vocab or not dtype or x_name != "BT":
        return None
    return {"axes": {"tokens": x, "hidden": hidden, "vocab": vocab}, "dtype": dtype, "scalars": scalars}


def _bind_distill(x, x_name, c):
    hidden, vocab, dtype = _int(_get(c, "H")), _int(_get(c, "V")), _dtype(_get(c, "dtype"))
    hard, soft = _get(c, "weight_hard_loss"), _get(c, "weight_soft_loss")
    if not hidden or not vocab or not dtype or x_name != "BT":
        return None
    if not _is(_get(c, "bias"), False) or math.fmod(hidden, 2) != 0:
        return None
    if not _is_number(hard) or not _is_number(soft):
        return None
    axes = {"tokens": x, "hidden": hidden, "vocab": vocab}
    return {"axes": axes, "dtype": dtype, "scalars": {"weight_hard_loss": hard, "weight_soft_loss": soft}}


def _bind_preference(x, x_name, c):
    seq, hidden, vocab = _int(_get(c, "T")), _int(_get(c, "H")), _int(_get(c, "V"))
    dtype = _dtype(_get(c, "dtype"))
    if not seq or not hidden or not vocab or not dtype or x_name != "B":
        return None
    return {"axes": {"batch": x, "seq": seq, "hidden": hidden, "vocab": vocab}, "dtype": dtype}


def _bind_kto(x, x_name, c):
    seq, hidden, vocab = _int(_get(c, "T")), _int(_get(c, "H")), _int(_get(c, "V"))
    dtype, beta = _dtype(_get(c, "dtype")), _get(c, "beta")
    if not seq or not hidden or not vocab or not dtype or x_name != "B":
        return None
    if not _is(_get(c, "bias"), True) or not _is_number(beta):
        return None
    return {
        "axes": {"batch": x, "seq": seq, "hidden": hidden, "vocab": vocab},
        "dtype": dtype,
        "scalars": {"beta": beta},
    }


def _bind_grpo(x, x_name, c, level):
    seq, vocab, dtype = _int(_get(c, "T")), _int(_get(c, "V")), _dtype(_get(c, "dtype"))
    if not seq or not vocab or not dtype or x_name != "B":
        return None
    if not _is(_get(c, "importance_sampling_level"), level):
        return None
    return {"axes": {"batch": x, "seq": seq, "vocab": vocab}, "dtype": dtype}


BINDERS: dict[str, Callable[..., Binding | None]] = {
    "rows_hidden": _bind_rows_hidden,
    "tokens_vocab": _bind_tokens_vocab,
    "jsd": _bind_jsd,
    "embedding": _bind_embedding,
    "rope": _bind_rope,
    "mlp": _bind_mlp,
    "relu_squared": _bind_relu_squared,
    "group_norm": _bind_group_norm,
    "sparsemax": _bind_sparsemax,
    "megatron_rms_norm": _bind_megatron_rms_norm,
    "megatron_swiglu": _bind_megatron_swiglu,
    "megatron_cross_entropy": _bind_megatron_cross_entropy,
    "fused_moe": _bind_fused_moe,
    "neighborhood_attention": _bind_neighborhood_attention,
    "mta": _bind_mta,
    "linear_bt": _bind_linear_bt,
    "distill": _bind_distill,
    "preference": _bind_preference,
    "kto": _bind_kto,
    "grpo": _bind_grpo,
}


def bind(kernel: Mapping[str, Any], x: float, x_name: str, config: Any) -> Binding | None:
    name, params = kernel["bind"]
    return BINDERS[name](x, x_name, config, **params)


# ============================================================================================================
# The objects (normalize.ts)


def _signature_axes(kernel: Mapping[str, Any]) -> list[str]:
    derived = kernel.get("derived") or {}
    names: dict[str, None] = {}
    for _, shape, _ in (*kernel["inputs"], *kernel["outputs"]):
        for dim in shape:
            if isinstance(dim, str) and dim not in derived:
                names.setdefault(dim)
    return list(names)


def _argument(entry: tuple) -> dict[str, Any]:
    name, shape, dtype = entry
    return {"name": name, "tensor": {"shape": list(shape), "dtype": "float" if dtype == "cfg" else dtype}}


@cache
def _operation_spec(csv_name: str) -> tuple[dict[str, Any], str]:
    kernel = KERNELS_BY_NAME[csv_name]
    axes: dict[str, Any] = {name: {"role": "variable", "type": "integer"} for name in _signature_axes(kernel)}
    for name, expression in (kernel.get("derived") or {}).items():
        axes[name] = {"role": "derived", "type": "integer", "expression": expression}
    spec = {
        "family": kernel["family"],
        "axes": axes,
        "inputs": [_argument(e) for e in kernel["inputs"]],
        "outputs": [_argument(e) for e in kernel["outputs"]],
        "semantics": {"mutation": "none", "determinism": "unspecified"},
    }
    return spec, object_digest(API_VERSION, "OperationSpec", spec)


def operation_digest(csv_name: str) -> str | None:
    """The OperationSpec digest of a curated kernel (KernelIndex makes it for every row of the kernel), else None."""
    return _operation_spec(csv_name)[1] if csv_name in KERNELS_BY_NAME else None


def operation_manifest(csv_name: str, commit: str = "") -> dict[str, Any]:
    """`operationFromKernel`: the commit only names the benchmark script in metadata.sourceRefs."""
    kernel = KERNELS_BY_NAME[csv_name]
    metadata = {
        "name": kernel["slug"],
        "title": kernel["title"],
        "description": kernel["description"],
        "sourceRefs": [{"url": f"{LIGER_REPO_URL}/blob/{commit}/benchmark/scripts/benchmark_{csv_name}.py"}],
    }
    return {
        "apiVersion": API_VERSION,
        "kind": "OperationSpec",
        "metadata": metadata,
        "spec": _operation_spec(csv_name)[0],
    }


def case_key(binding: Binding) -> str:
    """`caseKey`: axis bindings sorted with localeCompare, then the float dtype: `hidden1024-rows2048-fp32`."""
    axes = sorted(binding["axes"].items(), key=lambda kv: _locale_key(kv[0]))
    return "-".join([*(f"{axis}{js_number_to_string(value)}" for axis, value in axes), binding["dtype"]])


def workload_manifest(kernel: Mapping[str, Any], operation_digest: str, binding: Binding) -> dict[str, Any]:
    """`caseFromRow`."""
    bindings = dict(binding["axes"])
    for name, expression in (kernel.get("derived") or {}).items():
        bindings[name] = evaluate_axis_expression(expression, bindings)

    def bound(dim: str | int) -> int | float:
        if not isinstance(dim, str):
            return dim
        if dim not in bindings:
            raise ValueError(f"unbound axis '{dim}' in {kernel['csvName']}")
        return js_value(bindings[dim])

    axes = {name: js_value(value) for name, value in binding["axes"].items()}
    spec: dict[str, Any] = {
        "operationSpecDigest": operation_digest,
        "axes": axes,
        "tensors": {
            name: {"shape": [bound(d) for d in shape], "dtype": binding["dtype"] if dtype == "cfg" else dtype}
            for name, shape, dtype in kernel["inputs"]
        },
    }
    if binding.get("scalars"):
        spec["scalars"] = {n: {"dtype": "fp32", "value": js_value(v)} for n, v in binding["scalars"].items()}
    spec["correctness"] = {"comparator": "not_asserted"}
    axes_title = ", ".join(f"{axis}={js_number_to_string(value)}" for axis, value in axes.items())
    metadata = {
        "name": kebab(f"{kernel['slug']}-{case_key(binding)}"),
        "title": f"{kernel['title']} · {axes_title} · {binding['dtype']}",
    }
    return {"apiVersion": API_VERSION, "kind": "WorkloadCase", "metadata": metadata, "spec": spec}


def implementation_manifest(kernel: Mapping[str, Any], provider: str, operation_digest: str) -> dict[str, Any]:
    """`implementationFromProvider`."""
    entry = PROVIDERS[provider]
    metadata: dict[str, Any] = {
        "name": kebab(f"liger-bench-{kernel['csvName']}-{provider}"),
        "title": f"{kernel['title']} · {entry['title']}",
        "description": entry["description"],
    }
    if entry.get("role"):
        metadata["labels"] = {"role": entry["role"]}
    metadata["sourceRefs"] = [{"url": LIGER_REPO_URL}]
    spec: dict[str, Any] = {
        "projectRevision": {},
        "operation": {"specDigest": operation_digest},
        "callable": {"language": entry["language"]},
        "support": {"hardwareArchitectures": [], "dtypes": []},
    }
    if entry.get("pipPackage"):
        spec["buildVariants"] = [{"name": "pip", "install": {"kind": "pip", "package": entry["pipPackage"]}}]
    licensing = {"declared": entry["declared"]}
    if entry.get("concluded"):
        licensing["concluded"] = entry["concluded"]
    spec["licensing"] = licensing
    return {"apiVersion": API_VERSION, "kind": "ImplementationRevision", "metadata": metadata, "spec": spec}


def protocol_manifest(mode: str) -> dict[str, Any]:
    """`ligerProtocol`: one per timed pass."""
    notes = (
        f"Timed: {MODES.get(mode, mode)}, via triton.testing.do_bench with quantiles 0.5/0.2/0.8 (median with "
        "p20/p80 spread). The upstream CSV records no CUDA, driver, or torch version; the Liger release rides each "
        "run's labels. Comparable only within one kernel, workload, timed pass, and GPU."
    )
    spec = {
        "harness": {"name": "Liger-Kernel benchmark scripts", "repository": LIGER_REPO_URL},
        "measurement": {"timer": "cuda_events", "primaryStatistic": "median"},
        "comparability": {"family": "liger_kernel_bench", "notes": notes},
    }
    metadata = {"name": kebab(f"liger-bench-do-bench-{mode}"), "title": f"Liger benchmark harness · {mode} pass"}
    return {"apiVersion": API_VERSION, "kind": "BenchmarkProtocol", "metadata": metadata, "spec": spec}


def environment_manifest(gpu_name: str) -> dict[str, Any] | None:
    """`ligerEnvironment`: hardware only; None for a GPU outside the hardware table."""
    hardware = HARDWARE.get(gpu_name)
    if hardware is None:
        return None
    metadata = {
        "name": kebab(f"liger-bench-{gpu_name}"),
        "title": f"Liger benchmark host · {re.sub(r'^NVIDIA ', '', gpu_name)}",
    }
    return {
        "apiVersion": API_VERSION,
        "kind": "ExecutionEnvironment",
        "metadata": metadata,
        "spec": {"hardware": dict(hardware), "software": {}},
    }


# ============================================================================================================
# One row


@dataclass(frozen=True)
class Skip:
    """A row KernelIndex does not map. `reason` is a key of summary.json's `skipped` (or `issues`); `key` is
    what that reason counts under: the kernel, provider or GPU name (None for memoryRows and duplicateRows)."""

    reason: str
    key: str | None = None
    problem: str | None = None


@dataclass(frozen=True)
class Identity:
    """Everything about a row but its run: depends only on (kernel, pass, provider, x_name, x_value, config, GPU).

    The manifests are shared between the rows that resolve to them: read them, do not change them."""

    kernel: str
    case_key: str
    operation_digest: str
    workload: dict[str, Any]
    workload_digest: str
    implementation: dict[str, Any]
    implementation_digest: str
    protocol: dict[str, Any]
    protocol_digest: str
    environment: dict[str, Any]
    environment_digest: str

    @property
    def workload_key(self) -> str:
        return f"{self.kernel}/{self.case_key}"

    def __hash__(self) -> int:  # the manifests are dicts; the digests and the case name them
        return hash(
            (
                self.kernel,
                self.case_key,
                self.workload_digest,
                self.implementation_digest,
                self.protocol_digest,
                self.environment_digest,
            )
        )


@cache
def _protocol(mode: str) -> tuple[dict[str, Any], str]:
    manifest = protocol_manifest(mode)
    return manifest, manifest_digest(manifest)


@cache
def _environment(gpu_name: str) -> tuple[dict[str, Any], str] | None:
    manifest = environment_manifest(gpu_name)
    return None if manifest is None else (manifest, manifest_digest(manifest))


@cache
def _implementation(csv_name: str, provider: str) -> tuple[dict[str, Any], str]:
    manifest = implementation_manifest(KERNELS_BY_NAME[csv_name], provider, _operation_spec(csv_name)[1])
    return manifest, manifest_digest(manifest)


@lru_cache(maxsize=1 << 16)
def _binding(csv_name: str, x_name: str, x_value: str, config_str: str) -> tuple[Binding, str] | None:
    x = js_number(x_value)
    try:
        config = js_json_parse(config_str)
    except ValueError:
        return None
    if not (math.isfinite(x) and x.is_integer() and x > 0):
        return None
    # A JSON `null` config makes the TS binder throw (config.M on null) and the whole import fail;
    # here it is an unknown config, like any other config the binder does not understand.
    binding = bind(KERNELS_BY_NAME[csv_name], x, x_name, config if config is not None else {})
    return None if binding is None else (binding, case_key(binding))


@lru_cache(maxsize=1 << 16)
def _workload(csv_name: str, x_name: str, x_value: str, config_str: str) -> tuple[dict[str, Any], str]:
    binding, _ = _binding(csv_name, x_name, x_value, config_str)  # type: ignore[misc]
    manifest = workload_manifest(KERNELS_BY_NAME[csv_name], _operation_spec(csv_name)[1], binding)
    return manifest, manifest_digest(manifest)


@lru_cache(maxsize=1 << 16)
def resolve_identity(
    kernel_name: str,
    kernel_operation_mode: str,
    kernel_provider: str,
    x_name: str,
    x_value: str,
    extra_benchmark_config_str: str,
    gpu_name: str,
) -> Identity | Skip:
    """The row's objects but its run, or why the row does not map: cached per distinct argument tuple.

    The checks and their order are `reconcileLiger`'s (the metric is checked before, the duplicate after)."""
    kernel = KERNELS_BY_NAME.get(kernel_name)
    if kernel is None:
        return Skip("uncuratedKernels", kernel_name)
    if kernel_operation_mode not in MODES:
        return Skip("unknownConfig", kernel_name)
    if kernel_provider not in PROVIDERS:
        return Skip("unknownProvider", kernel_provider)
    bound = _binding(kernel_name, x_name, x_value, extra_benchmark_config_str)
    if bound is None:
        return Skip("unknownConfig", kernel_name)
    environment = _environment(gpu_name)
    if environment is None:
        return Skip("unknownGpu", gpu_name)
    protocol = _protocol(kernel_operation_mode)
    implementation = _implementation(kernel_name, kernel_provider)
    workload = _workload(kernel_name, x_name, x_value, extra_benchmark_config_str)
    return Identity(
        kernel=kernel_name,
        case_key=bound[1],
        operation_digest=_operation_spec(kernel_name)[1],
        workload=workload[0],
        workload_digest=workload[1],
        implementation=implementation[0],
        implementation_digest=implementation[1],
        protocol=protocol[0],
        protocol_digest=protocol[1],
        environment=environment[0],
        environment_digest=environment[1],
    )


@dataclass(frozen=True)
class MappedRow:
    """A row KernelIndex maps: its run, the run's digest and externalId, and the five objects it points at."""

    external_id: str
    run: dict[str, Any]
    run_digest: str
    identity: Identity

    def __hash__(self) -> int:
        return hash((self.external_id, self.run_digest))

    @property
    def digests(self) -> dict[str, str]:
        i = self.identity
        return {
            "runDigest": self.run_digest,
            "protocolDigest": i.protocol_digest,
            "workloadDigest": i.workload_digest,
            "environmentDigest": i.environment_digest,
            "implementationDigest": i.implementation_digest,
            "operationDigest": i.operation_digest,
        }

    def objects(self, commit: str = "") -> dict[str, dict[str, Any]]:
        """The six objects by kind; `commit` only goes into the OperationSpec's metadata.sourceRefs."""
        i = self.identity
        return {
            "OperationSpec": operation_manifest(i.kernel, commit),
            "WorkloadCase": i.workload,
            "ImplementationRevision": i.implementation,
            "BenchmarkProtocol": i.protocol,
            "ExecutionEnvironment": i.environment,
            "BenchmarkRun": self.run,
        }


def external_id_of(kernel: str, mode: str, provider: str, gpu_name: str, case_key: str, timestamp: str) -> str:
    """`<kernel>/<pass>/<provider>/<gpu-kebab>/<case key>/<timestamp-kebab>` (the timestamp as the CSV writes it)."""
    return "/".join([kernel, mode, provider, kebab(gpu_name), case_key, kebab(timestamp)])


def build_run(
    *,
    kernel: str,
    mode: str,
    provider: str,
    gpu_name: str,
    case_key: str,
    ms20: float,
    ms50: float,
    ms80: float,
    external_id: str,
    observed_at: str,
    timestamp: str,
    liger_version: str,
    implementation_digest: str,
    workload_digest: str,
    protocol_digest: str,
    environment_digest: str,
    with_metadata: bool = True,
) -> dict[str, Any]:
    """The run object from values: the ms quantiles as doubles, the externalId, `observedAt` (an ISO instant as
    `toISOString` prints it). `timestamp` and `liger_version` only go into metadata. ValueError where the TS throws.
    `run_manifest` builds a CSV row's run with it; the export rebuilds a stored fact's run with it."""
    if not math.isfinite(ms50) or ms50 <= 0:
        raise ValueError(f"invalid median '{ms50}'")
    spread = math.isfinite(ms20) and math.isfinite(ms80)
    median = js_round(ms50 * 1_000_000)
    if median > _MAX_SAFE:  # the schema's durationNs is a safe integer
        raise ValueError(f"median {ms50} ms is not a safe integer of ns")
    spec: dict[str, Any] = {
        "implementationDigest": implementation_digest,
        "workloadDigest": workload_digest,
        "protocolDigest": protocol_digest,
        "environmentDigest": environment_digest,
        "status": "passed",
        "timing": {"primaryStatistic": "median", "latencyNs": {"median": js_value(median)}},
    }
    if spread:
        spec["measurements"] = [
            {"metric": "latency", "unit": "ns", "statistic": "p20", "value": ms_to_ns(ms20)},
            {"metric": "latency", "unit": "ns", "statistic": "p80", "value": ms_to_ns(ms80)},
        ]
    metrics = {"ms_50": js_value(ms50)}
    if spread:
        metrics.update(ms_20=js_value(ms20), ms_80=js_value(ms80))
    spec["sourceNative"] = {
        "source": SOURCE_SLUG,
        "benchmark": f"{kernel}/{mode}",
        "externalId": external_id,
        "metrics": metrics,
    }
    spec["observedAt"] = observed_at
    if not with_metadata:  # metadata is in no digest: the warehouse's per-row mapping skips it
        return {"apiVersion": API_VERSION, "kind": "BenchmarkRun", "spec": spec}
    metadata = {
        "name": kebab(f"liger-{kernel}-{mode}-{provider}-{gpu_name}-{case_key}-{timestamp}"),
        "title": f"{KERNELS_BY_NAME[kernel]['title']} · {provider} · {mode}",
        "labels": {"liger_version": liger_version},
    }
    return {"apiVersion": API_VERSION, "kind": "BenchmarkRun", "metadata": metadata, "spec": spec}


def run_manifest(
    row: Mapping[str, str], identity: Identity, *, with_metadata: bool = True
) -> tuple[dict[str, Any], str]:
    """`runFromRow`: (manifest, externalId); ValueError where the TS throws (then the row is an issue)."""
    ms50, ms20, ms80 = js_number(row["y_value_50"]), js_number(row["y_value_20"]), js_number(row["y_value_80"])
    if not math.isfinite(ms50) or ms50 <= 0:
        raise ValueError(f"invalid median '{row['y_value_50']}'")
    if js_round(ms50 * 1_000_000) > _MAX_SAFE:
        raise ValueError(f"median {row['y_value_50']} ms is not a safe integer of ns")
    mode, provider, gpu, timestamp = (
        row["kernel_operation_mode"],
        row["kernel_provider"],
        row["gpu_name"],
        row["timestamp"],
    )
    external_id = external_id_of(identity.kernel, mode, provider, gpu, identity.case_key, timestamp)
    observed_at = to_utc_instant(timestamp.replace(" ", "T", 1))
    run = build_run(
        kernel=identity.kernel,
        mode=mode,
        provider=provider,
        gpu_name=gpu,
        case_key=identity.case_key,
        ms20=ms20,
        ms50=ms50,
        ms80=ms80,
        external_id=external_id,
        observed_at=observed_at,
        timestamp=timestamp,
        liger_version=row["liger_version"],
        implementation_digest=identity.implementation_digest,
        workload_digest=identity.workload_digest,
        protocol_digest=identity.protocol_digest,
        environment_digest=identity.environment_digest,
        with_metadata=with_metadata,
    )
    return run, external_id


_RUN_SPEC_KEYS = frozenset(
    (
        "environmentDigest",
        "implementationDigest",
        "measurements",
        "observedAt",
        "protocolDigest",
        "sourceNative",
        "status",
        "timing",
        "workloadDigest",
    )
)


def _num(x: Any) -> str:
    """RFC 8785 number text, fast for what a run holds: safe integers, and doubles whose `repr` has no exponent
    (then it is ECMAScript's shortest round-trip text too); anything else through `rfc8785`."""
    if type(x) is int and -_MAX_SAFE <= x <= _MAX_SAFE:
        return str(x)
    if type(x) is float:
        text = repr(x)
        if "e" not in text and "n" not in text and not text.endswith(".0"):
            return text
    return canonical_json(x).decode()


_str = encode_basestring  # RFC 8785 escapes strings as JSON.stringify does (what json.dumps does without ensure_ascii)


def _run_text(run: Mapping[str, Any]) -> str | None:
    """The RFC 8785 text of `{apiVersion, kind, spec}` of a run `build_run` made (keys written in sorted order),
    or None when the run has another shape."""
    spec = run["spec"]
    if spec.keys() - {"measurements"} != _RUN_SPEC_KEYS - {"measurements"}:
        return None
    native, timing = spec["sourceNative"], spec["timing"]
    if native.keys() != {"benchmark", "externalId", "metrics", "source"} or timing.keys() != {
        "latencyNs",
        "primaryStatistic",
    }:
        return None
    if timing["latencyNs"].keys() != {"median"} or not all(k.isascii() for k in native["metrics"]):
        return None  # RFC 8785 sorts keys by UTF-16 code units: Python's order is that one for ASCII
    metrics = ",".join(f"{_str(k)}:{_num(v)}" for k, v in sorted(native["metrics"].items()))
    items = []
    for m in spec.get("measurements", ()):
        if m.keys() != {"metric", "unit", "statistic", "value"}:
            return None
        items.append(
            MEASUREMENT_TEXT.format(
                metric=_str(m["metric"]), statistic=_str(m["statistic"]), unit=_str(m["unit"]), value=_num(m["value"])
            )
        )
    return RUN_TEXT.format(
        api_version=_str(run["apiVersion"]),
        kind=_str(run["kind"]),
        environment=_str(spec["environmentDigest"]),
        implementation=_str(spec["implementationDigest"]),
        measurements=measurements_text(items) if "measurements" in spec else "",
        observed=_str(spec["observedAt"]),
        protocol=_str(spec["protocolDigest"]),
        benchmark=_str(native["benchmark"]),
        external_id=_str(native["externalId"]),
        metrics=metrics,
        source=_str(native["source"]),
        status=_str(spec["status"]),
        median=_num(timing["latencyNs"]["median"]),
        primary_statistic=_str(timing["primaryStatistic"]),
        workload=_str(spec["workloadDigest"]),
    )


def run_digest(run: Mapping[str, Any]) -> str:
    """`object_digest` of a run, fast (it is the per-row cost of mapping a CSV, and of reading a record): the
    run's RFC 8785 text written directly (`_run_text`); a run of another shape, or text that is not UTF-8 (a lone
    surrogate), goes to the reference `object_digest`. The golden tests check it on every shipped row, and
    tests/unit/stage on records of other shapes."""
    try:
        text = _run_text(run)
        if text is not None:
            return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
    except (KeyError, TypeError, AttributeError, UnicodeEncodeError):
        pass
    return manifest_digest(run)


# The RFC 8785 text of a run of the CSV's shape, keys in sorted order; every slot holds its value's JSON text.
# One template for every writer: `_run_text` (a run object), `row_run_digest` (a CSV row, in Python),
# `run_text_sql` (a CSV row or a record, in DuckDB, where SQL writes the numbers as ECMAScript does).
RUN_TEXT = (
    '{{"apiVersion":{api_version},"kind":{kind},"spec":{{"environmentDigest":{environment},'
    '"implementationDigest":{implementation}{measurements},"observedAt":{observed},"protocolDigest":{protocol},'
    '"sourceNative":{{"benchmark":{benchmark},"externalId":{external_id},"metrics":{{{metrics}}},"source":{source}}},'
    '"status":{status},"timing":{{"latencyNs":{{"median":{median}}},"primaryStatistic":{primary_statistic}}},'
    '"workloadDigest":{workload}}}}}'
)
MEASUREMENT_TEXT = '{{"metric":{metric},"statistic":{statistic},"unit":{unit},"value":{value}}}'
METRICS_TEXT = '"ms_20":{ms20},"ms_50":{ms50},"ms_80":{ms80}'
MEDIAN_ONLY_METRICS_TEXT = '"ms_50":{ms50}'
LATENCY = {"metric": _str("latency"), "unit": _str("ns")}
# What every run made from a CSV row says alike
CSV_RUN_CONSTANTS = {
    "api_version": _str(API_VERSION),
    "kind": _str("BenchmarkRun"),
    "source": _str(SOURCE_SLUG),
    "status": _str("passed"),
    "primary_statistic": _str("median"),
}


MEASUREMENTS_TEXT = ',"measurements":[{items}]'


def measurements_text(items: list[str]) -> str:
    return MEASUREMENTS_TEXT.format(items=",".join(items))


def csv_measurements_text(ns20: str, ns80: str) -> str:
    return measurements_text(
        [
            MEASUREMENT_TEXT.format(**LATENCY, statistic=_str("p20"), value=ns20),
            MEASUREMENT_TEXT.format(**LATENCY, statistic=_str("p80"), value=ns80),
        ]
    )


@dataclass(frozen=True)
class RunFrame:
    """What a row's run text takes from its identity, pass, provider and GPU (not its timestamp or numbers)."""

    slots: dict[str, str]  # RUN_TEXT's slots: the constants, the digests and the benchmark
    external_id_prefix: str  # the externalId up to its timestamp part


@lru_cache(maxsize=1 << 14)  # the rows of one sweep share all of it
def run_frame(identity: Identity, mode: str, provider: str, gpu_name: str) -> RunFrame:
    slots = CSV_RUN_CONSTANTS | {
        "environment": _str(identity.environment_digest),
        "implementation": _str(identity.implementation_digest),
        "protocol": _str(identity.protocol_digest),
        "workload": _str(identity.workload_digest),
        "benchmark": _str(f"{identity.kernel}/{mode}"),
    }
    prefix = external_id_of(identity.kernel, mode, provider, gpu_name, identity.case_key, "")
    return RunFrame(slots, prefix)


@lru_cache(maxsize=1 << 14)
def observed_at_of(timestamp: str) -> str:
    """The run's `observedAt` for a CSV timestamp (ValueError where `run_manifest` raises)."""
    return to_utc_instant(timestamp.replace(" ", "T", 1))


def row_run_digest(
    identity: Identity, mode: str, provider: str, gpu_name: str, timestamp: str, y20: str, y50: str, y80: str
) -> tuple[str, str]:
    """(externalId, run digest) of a CSV row: `run_digest(run_manifest(row)[0])` without building the run,
    the per-row cost of mapping a CSV. tests/unit/contracts check it against that reference on every shipped
    row; tests/unit/stage check `run_text_sql` against it."""
    ms50, ms20, ms80 = js_number(y50), js_number(y20), js_number(y80)
    if not math.isfinite(ms50) or ms50 <= 0:
        raise ValueError(f"invalid median '{y50}'")
    median = js_round(ms50 * 1_000_000)
    if median > _MAX_SAFE:
        raise ValueError(f"median {y50} ms is not a safe integer of ns")
    frame = run_frame(identity, mode, provider, gpu_name)
    external_id = frame.external_id_prefix + kebab(timestamp)
    observed_at = observed_at_of(timestamp)
    if math.isfinite(ms20) and math.isfinite(ms80):
        measurements = csv_measurements_text(_num(ms_to_ns(ms20)), _num(ms_to_ns(ms80)))
        metrics = METRICS_TEXT.format(ms20=_num(js_value(ms20)), ms50=_num(js_value(ms50)), ms80=_num(js_value(ms80)))
    else:
        measurements, metrics = "", MEDIAN_ONLY_METRICS_TEXT.format(ms50=_num(js_value(ms50)))
    text = RUN_TEXT.format(
        **frame.slots,
        measurements=measurements,
        observed=_str(observed_at),
        external_id=_str(external_id),
        metrics=metrics,
        median=_num(js_value(median)),
    )
    try:
        return external_id, "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
    except UnicodeEncodeError:  # a lone surrogate: the reference path says what RFC 8785 makes of it
        row = {"kernel_operation_mode": mode, "kernel_provider": provider, "gpu_name": gpu_name, "timestamp": timestamp}
        row |= {"y_value_20": y20, "y_value_50": y50, "y_value_80": y80, "liger_version": ""}
        run, external_id = run_manifest(row, identity, with_metadata=False)
        return external_id, run_digest(run)


# ------------------------------------------------------------------------------------------------------------
# The same run text in DuckDB SQL, for the rows whose numbers SQL writes exactly as ECMAScript does: every
# quantile a plain decimal (no whitespace, hex or Infinity), finite, and each written without an exponent
# (DuckDB prints a double as Python's `repr` does; where that has no exponent it is ECMAScript's text too).
# Any other row is `row_run_digest`'s, in Python: `run_sql_is_exact` says which.

_JS_PLAIN_DECIMAL = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"


def js_number_sql(text: str) -> str:
    """`Number(text)` for a plain decimal (both parse correctly rounded), else NULL."""
    return f"case when regexp_full_match({text}, '{_JS_PLAIN_DECIMAL}') then try_cast({text} as double) end"


def js_round_sql(x: str) -> str:
    """`Math.round`, as `js_round` computes it (x - floor(x) is exact for a finite double)."""
    return f"(case when {x} - floor({x}) >= 0.5 then floor({x}) + 1 else floor({x}) end)"


def js_value_text_sql(x: str) -> str:
    """`_num(js_value(x))` for a finite |x| <= 2^53 - 1 whose text has no exponent (`run_sql_is_exact`)."""
    integral = f"{x} = trunc({x}) and abs({x}) <= {_MAX_SAFE}"
    return f"(case when {integral} then cast(cast({x} as bigint) as varchar) else cast({x} as varchar) end)"


def run_sql_is_exact(ms20: str, ms50: str, ms80: str, ns20: str, ns50: str, ns80: str, texts: str) -> str:
    """True where `run_text_sql` writes the row's run as `row_run_digest` does (NULL counts as false)."""
    finite = " and ".join(f"isfinite({v})" for v in (ms20, ms50, ms80))
    safe = " and ".join(f"abs({v}) <= {_MAX_SAFE}" for v in (ms20, ms50, ms80, ns20, ns50, ns80))
    return f"({finite} and {ms50} > 0 and {safe} and not contains({texts}, 'e'))"


def csv_timestamp_sql(text: str) -> tuple[str, str]:
    """(parsed, kebab text) in SQL for upstream's own `YYYY-MM-DD HH:MM:SS`, a real date and time of years
    1000-9999 (`parsed` NULL otherwise): there `kebab` only turns the separators into "-"."""
    parsed = (
        f"case when regexp_full_match({text}, '[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}} [0-9]{{2}}:[0-9]{{2}}:[0-9]{{2}}')"
        f" and {text} >= '1000' then try_strptime({text}, '%Y-%m-%d %H:%M:%S') end"
    )
    return parsed, f"replace(replace({text}, ' ', '-'), ':', '-')"


def observed_at_json_sql(parsed: str) -> str:
    """`_str(observed_at_of(timestamp))` for a timestamp `csv_timestamp_sql` parsed: the same instant, `.000Z`."""
    return f"""strftime({parsed}, '"%Y-%m-%dT%H:%M:%S.000Z"')"""


# A template's text in SQL: (True, literal text) and (False, SQL expression) pieces, in order.
_Pieces = list[tuple[bool, str]]


def _template_pieces(template: str, slots: Mapping[str, str | _Pieces]) -> _Pieces:
    """A `str.format` template's pieces: its text as literals, its fields as `slots`' expressions or pieces."""
    pieces: _Pieces = []
    for literal, name, _, _ in string.Formatter().parse(template):
        if literal:
            pieces.append((True, literal))
        if name is not None:
            value = slots[name]
            pieces.extend(value if isinstance(value, list) else [(False, value)])
    return pieces


def _sql_concat(pieces: _Pieces) -> str:
    """The pieces joined by one `concat` (adjacent literals as one), NULL where an expression is, as `||`
    would be: a chain of `||` copies the growing text once a piece, 20× the cost over a run's 60 pieces."""
    merged: _Pieces = []
    for literal, text in pieces:
        if literal and merged and merged[-1][0]:
            merged[-1] = (True, merged[-1][1] + text)
        else:
            merged.append((literal, text))
    body = "concat(" + ", ".join(_sql_literal(t) if literal else t for literal, t in merged) + ")"
    nullable = [t for literal, t in merged if not literal]
    if not nullable:
        return body
    return "(case when " + " and ".join(f"({t}) is not null" for t in nullable) + f" then {body} end)"


# A run object's keys where `run_text_sql` writes it (JSON path in the run -> its keys, sorted), and where
# its slots are (slot -> JSON path): a record whose run has this shape is hashed in SQL.
RUN_SHAPE = {
    "$.spec": sorted(_RUN_SPEC_KEYS),
    "$.spec.sourceNative": ["benchmark", "externalId", "metrics", "source"],
    "$.spec.sourceNative.metrics": ["ms_20", "ms_50", "ms_80"],
    "$.spec.timing": ["latencyNs", "primaryStatistic"],
    "$.spec.timing.latencyNs": ["median"],
    "$.spec.measurements[0]": ["metric", "statistic", "unit", "value"],
    "$.spec.measurements[1]": ["metric", "statistic", "unit", "value"],
}
RUN_TOP_KEYS = (["apiVersion", "kind", "metadata", "spec"], ["apiVersion", "kind", "spec"])
RUN_STRING_SLOTS = {
    "api_version": "$.apiVersion",
    "kind": "$.kind",
    "environment": "$.spec.environmentDigest",
    "implementation": "$.spec.implementationDigest",
    "observed": "$.spec.observedAt",
    "protocol": "$.spec.protocolDigest",
    "benchmark": "$.spec.sourceNative.benchmark",
    "external_id": "$.spec.sourceNative.externalId",
    "source": "$.spec.sourceNative.source",
    "status": "$.spec.status",
    "primary_statistic": "$.spec.timing.primaryStatistic",
    "workload": "$.spec.workloadDigest",
}
RUN_NUMBER_SLOTS = {
    "median": "$.spec.timing.latencyNs.median",
    "ms20": "$.spec.sourceNative.metrics.ms_20",
    "ms50": "$.spec.sourceNative.metrics.ms_50",
    "ms80": "$.spec.sourceNative.metrics.ms_80",
    "ns20": "$.spec.measurements[0].value",
    "ns80": "$.spec.measurements[1].value",
}
# The measurement items `run_text_sql` writes, as JSON texts (slot -> path -> text)
RUN_ITEM_TEXTS = {
    f"$.spec.measurements[{i}].{field}": text
    for i, stat in enumerate(("p20", "p80"))
    for field, text in (("metric", LATENCY["metric"]), ("statistic", _str(stat)), ("unit", LATENCY["unit"]))
}


def _sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def run_text_sql(slots: Mapping[str, str]) -> str:
    """`RUN_TEXT` of a run with p20 and p80, in SQL. `slots`: SQL expressions of JSON texts for the fields of
    `RUN_TEXT` but `measurements` and `metrics` (`CSV_RUN_CONSTANTS` where not given), and for the numbers
    ns20, ns80, ms20, ms50, ms80. NULL where a slot is."""
    constants: dict[str, str | _Pieces] = {k: [(True, v)] for k, v in CSV_RUN_CONSTANTS.items()}
    slots = constants | dict(slots)
    latency: dict[str, str | _Pieces] = {k: [(True, v)] for k, v in LATENCY.items()}
    p20, p80 = (
        _template_pieces(MEASUREMENT_TEXT, latency | {"statistic": [(True, _str(stat))], "value": slots[value]})
        for stat, value in (("p20", "ns20"), ("p80", "ns80"))
    )
    measurements = _template_pieces(MEASUREMENTS_TEXT, {"items": [*p20, (True, ","), *p80]})
    return _sql_concat(
        _template_pieces(
            RUN_TEXT, slots | {"measurements": measurements, "metrics": _template_pieces(METRICS_TEXT, slots)}
        )
    )


def json_string(value: str) -> str:
    """A string's RFC 8785 text."""
    return _str(value)


def json_string_halves(value: str) -> tuple[str, str]:
    """`_str(value)` without its closing quote, and without its opening one: escaping is per character, so
    the externalId's JSON text is its prefix's first half and its timestamp part's second."""
    text = _str(value)
    return text[:-1], text[1:]


def _resolve_row(row: Mapping[str, str]) -> Identity | Skip:
    return resolve_identity(*(row[c] for c in IDENTITY_COLUMNS))


def map_row(row: Mapping[str, str]) -> MappedRow | Skip:
    """One CSV row (column name -> string, as upstream writes it) -> its run and five objects, or a Skip.

    A single row cannot be a duplicate: that takes the rows before it (`map_file`)."""
    if row["metric_name"] != "speed":
        return Skip("memoryRows")
    identity = _resolve_row(row)
    if isinstance(identity, Skip):
        return identity
    try:
        run, external_id = run_manifest(row, identity)
    except ValueError as error:
        return Skip("issues", f"{identity.kernel}/{row['kernel_provider']}/{row['x_value']}", str(error))
    return MappedRow(external_id, run, run_digest(run), identity)


# ============================================================================================================
# One file (discover.ts parseRows + reconcile.ts reconcileLiger)


def parse_csv(text: str) -> tuple[list[dict[str, str]], list[str]]:
    """`parseRows`: header + records -> rows by column name, and the problems (KernelIndex's parse issues).

    A missing expected column rejects the file; a record with the wrong number of fields, or (the row schema
    being strict) any record of a file with an unexpected column, is an issue. Blank lines are skipped.
    Python's csv module stands in for KernelIndex's minimal RFC 4180 parser; they agree on well-formed CSV."""
    table = [r for r in csv.reader(io.StringIO(text, newline="")) if len(r) > 1 or (r and r[0] != "")]
    if not table:
        return [], ["csv: empty"]
    header = table[0]
    missing = [c for c in CSV_COLUMNS if c not in header]
    if missing:
        return [], [f"header: expected column '{c}' is missing" for c in missing]
    extra = [c for c in header if c not in CSV_COLUMNS]
    rows: list[dict[str, str]] = []
    issues: list[str] = []
    for index, record in enumerate(table[1:]):
        if len(record) != len(header):
            issues.append(f"row {index + 2}: expected {len(header)} fields, found {len(record)}")
        elif extra:
            issues.append(f"row {index + 2}: unrecognized keys {extra}")
        else:
            rows.append(dict(zip(header, record, strict=True)))
    return rows, issues


def empty_skipped() -> dict[str, Any]:
    return {
        "memoryRows": 0,
        "uncuratedKernels": {},
        "unknownConfig": {},
        "unknownProvider": {},
        "unknownGpu": {},
        "duplicateRows": 0,
    }


@dataclass
class FileMapping:
    """What `reconcileLiger` makes of one file: the runs in row order, skips counted as in its report."""

    rows: int
    runs: list[MappedRow] = field(default_factory=list)
    skipped: dict[str, Any] = field(default_factory=empty_skipped)
    issues: list[Skip] = field(default_factory=list)
    operations: set[str] = field(default_factory=set)
    workloads: set[str] = field(default_factory=set)
    implementations: set[str] = field(default_factory=set)
    implementation_digests: set[str] = field(default_factory=set)

    def summary(self) -> dict[str, Any]:
        """The golden summary.json's fields for this file (but `file` and `parseIssues`)."""
        return {
            "rows": self.rows,
            "runs": len(self.runs),
            "workloads": len(self.workloads),
            "implementations": len(self.implementations),
            "distinctImplDigests": len(self.implementation_digests),
            "operations": len(self.operations),
            "skipped": self.skipped,
            "issues": len(self.issues),
        }


def map_file(rows: Iterable[Mapping[str, str]]) -> FileMapping:
    """All rows of one CSV file, in order, as `reconcileLiger` takes them: a run whose externalId an earlier
    row of the same file already made is a duplicate (`duplicateRows`), and the first one wins."""
    rows = list(rows)
    result = FileMapping(rows=len(rows))
    skipped = result.skipped
    seen: set[str] = set()
    for row in rows:
        mapped = map_row(row)
        if isinstance(mapped, Skip):
            if mapped.reason == "memoryRows":
                skipped["memoryRows"] += 1
            elif mapped.reason == "issues":
                result.issues.append(mapped)
            else:
                counts = skipped[mapped.reason]
                counts[mapped.key] = counts.get(mapped.key, 0) + 1
            if mapped.reason == "unknownGpu":  # the OperationSpec is made before the GPU is looked up
                result.operations.add(row["kernel_name"])
            if mapped.reason != "issues":
                continue
            identity = _resolve_row(row)
        else:
            identity = mapped.identity
        assert isinstance(identity, Identity)
        result.operations.add(identity.kernel)
        result.workloads.add(identity.workload_key)
        result.implementations.add(f"{identity.kernel}/{row['kernel_provider']}")
        result.implementation_digests.add(identity.implementation_digest)
        if isinstance(mapped, Skip):
            continue
        if mapped.external_id in seen:
            skipped["duplicateRows"] += 1
            continue
        seen.add(mapped.external_id)
        result.runs.append(mapped)
    return result
