"""Synthetic, realistic, reproducible benchmark data for the scale benchmark.

Writes the same layout the warehouse reads::

    OUT/liger_csv/<date>_<hex>_all_benchmark_data.csv   upstream Liger-Kernel CSV snapshots
    OUT/kernelindex/bundles-00000.ndjson                 kernelindex {run, protocol, environment} bundles

Everything is vectorized (numpy for the plan, polars for strings and writing); there is
no Python loop per row or per bundle.  The catalog below (kernels, x sweeps, configs,
providers, pass modes) is taken from the real upstream history in ``data_raw/liger_csv``.

Model of the history
--------------------
* A *block* is (suite, provider, pass mode, metric); a suite is (kernel, x_name, x_label,
  config, x sweep).  A *run* is one block executed once on one GPU at one timestamp and
  yields one row per x value (3-9 rows), like the real files (one kernel per timestamp).
* Run timestamps are unique and always an even number of seconds; standalone bundles use
  odd seconds, so they can never fold onto a CSV row by accident.
* The GPU of a run follows real availability windows; the Liger version is the release
  in effect at the run's timestamp (sometimes the previous release: a lagging install).
* Snapshot files are time slices of the runs (snapshot j holds the runs of slice j) plus
  ``dup_frac`` of the rows copied verbatim from earlier snapshots, like the cumulative
  upstream files.  Distinct identity keys = ``round(csv_rows * (1 - dup_frac))``.
* Quantiles: speed rows p20 <= p50 <= p80 (float32 values widened to float64, as upstream);
  memory rows have p20 == p50 == p80.
* Bundles: ``bundles // 2`` (at most the number of distinct speed rows) correspond exactly
  to a CSV speed row (same kernel, mode, provider, gpu, timestamp, quantiles, version);
  the rest are standalone (odd-second timestamps, some on GPUs never in the CSVs).
  Protocol/environment digests follow the digest rule; workload/implementation digests
  are opaque sha256 of small canonical dicts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import polars as pl

from pipeline.contracts.kernelindex import CSV_COLUMNS as CSV_HEADER

CSV_COLUMNS = list(CSV_HEADER)  # upstream's header, in its order
IDENTITY_KEY = [
    "kernel_name",
    "kernel_provider",
    "kernel_operation_mode",
    "metric_name",
    "x_name",
    "x_value",
    "extra_benchmark_config_str",
    "gpu_name",
    "timestamp",
    "liger_version",
]
API_VERSION = "kernelindex.dev/v1alpha1"
BUNDLES_PER_FILE = 200_000
T_START = "2024-09-01"
T_END = "2026-08-20"
EXTRA_START = "2026-09-01"  # write_extra_snapshot uses timestamps after everything generate() writes

# (kernel, x_name, x_label, config, providers, modes, x values, first seen) -- from the real history
SUITES = [
    (
        "cross_entropy",
        "V",
        "vocab size",
        '{"B": 8, "T": 2048}',
        ("huggingface", "liger"),
        ("forward", "full"),
        ("4096", "8192", "16384", "32768", "65536", "131072"),
        "2024-09-03",
    ),
    (
        "cross_entropy",
        "BT",
        "B * T",
        '{"vocab_size": 128256, "bsz": 1, "seq_len": 8192}',
        ("liger_cutedsl", "liger_cutile", "liger_triton", "torch"),
        ("backward", "forward", "full", "no-grad-forward"),
        ("1024", "2048", "4096", "8192"),
        "2026-06-16",
    ),
    (
        "cross_entropy",
        "model_config",
        "model configuration",
        '{"bsz": 1, "seq_len": 2048}',
        ("liger_cutedsl", "liger_triton", "torch"),
        ("backward", "forward", "full", "no-grad-forward"),
        ("deepseek_v2_lite", "deepseek_v3", "llama_2_7b", "llama_3_8b", "qwen2.5_14b", "qwen2.5_72b", "qwen2.5_7b"),
        "2026-07-05",
    ),
    (
        "distill_cosine_loss",
        "BT",
        "B x T",
        '{"H": 4096, "V": 128256, "mode": "forward", "dtype": "torch.bfloat16", "bias": false, "weight_hard_loss": 0.5, "weight_soft_loss": 0.5, "ignore_index": -100}',
        ("liger", "torch"),
        ("forward", "full"),
        ("1024", "2048", "4096", "8192"),
        "2025-06-27",
    ),
    (
        "distill_jsd_loss",
        "BT",
        "B x T",
        '{"H": 4096, "V": 128256, "mode": "forward", "dtype": "torch.bfloat16", "bias": false, "weight_hard_loss": 0.5, "weight_soft_loss": 0.5, "ignore_index": -100}',
        ("liger", "torch"),
        ("forward", "full"),
        ("1024", "2048", "4096", "8192"),
        "2024-12-03",
    ),
    (
        "dyt",
        "BT",
        "total tokens",
        '{"hidden_size": 4096, "dtype": "torch.bfloat16", "beta": false, "bsz": 1, "seq_len": 8192}',
        ("liger_cutile", "liger_triton", "torch", "torch_compile"),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192"),
        "2026-07-22",
    ),
    (
        "dyt",
        "BT",
        "total tokens",
        '{"hidden_size": 4096, "dtype": "torch.bfloat16", "beta": true, "bsz": 1, "seq_len": 8192}',
        ("liger_cutile", "liger_triton", "torch", "torch_compile"),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192"),
        "2026-07-22",
    ),
    (
        "embedding",
        "V",
        "embedding dimension",
        '{"B": 32, "T": 512, "D": 768, "dtype": "torch.float32"}',
        ("huggingface", "liger", "torch_compile"),
        ("forward", "full"),
        ("1024", "2048", "4096", "8192", "16384", "32768", "65536", "131072"),
        "2024-09-03",
    ),
    (
        "embedding",
        "V",
        "embedding dimension",
        '{"B": 8, "T": 2048, "D": 4096, "dtype": "torch.float32"}',
        ("huggingface", "liger", "torch_compile"),
        ("forward", "full"),
        ("1024", "2048", "4096", "8192", "16384", "32768", "65536", "131072"),
        "2024-09-03",
    ),
    (
        "fused_add_rms_norm",
        "H",
        "hidden size",
        '{"M": 2048, "dtype": "torch.float32", "eps": 1e-06}',
        ("huggingface", "liger_fused_add_rms_norm", "liger_rms_norm"),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192", "16384", "32768"),
        "2025-07-16",
    ),
    (
        "fused_add_rms_norm",
        "BT",
        "total tokens",
        '{"hidden_size": 4096, "intermediate_size": 14336, "dtype": "torch.bfloat16", "eps": 1e-06, "bsz": 1, "seq_len": 8192}',
        (
            "liger_cutile_fused_add_rms_norm",
            "liger_cutile_rms_norm",
            "liger_triton_fused_add_rms_norm",
            "liger_triton_rms_norm",
            "torch",
        ),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192"),
        "2026-07-22",
    ),
    (
        "fused_linear_cpo_loss",
        "B",
        "B",
        '{"T": 1024, "H": 4096, "V": 128256, "mode": "forward", "dtype": "torch.bfloat16"}',
        ("huggingface", "liger"),
        ("forward", "full"),
        ("2", "4", "8", "16"),
        "2024-11-14",
    ),
    (
        "fused_linear_cross_entropy",
        "BT",
        "B x T",
        '{"H": 4096, "V": 128256, "mode": "forward", "dtype": "torch.bfloat16"}',
        ("huggingface", "liger"),
        ("forward", "full"),
        ("4096", "8192", "16384", "32768"),
        "2024-09-03",
    ),
    (
        "fused_linear_grpo_loss_sequence",
        "B",
        "B",
        '{"T": 1024, "H": 4096, "V": 128256, "importance_sampling_level": "sequence", "dtype": "torch.bfloat16"}',
        ("liger", "torch"),
        ("backward", "forward", "full"),
        ("2", "4", "8", "16"),
        "2025-08-05",
    ),
    (
        "fused_linear_grpo_loss_sequence",
        "B",
        "batch size",
        '{"hidden_size": 4096, "vocab_size": 128256, "dtype": "torch.bfloat16", "T": 1024, "importance_sampling_level": "sequence", "bsz": 1, "seq_len": 8192}',
        ("liger_cutile", "torch"),
        ("backward", "forward", "full"),
        ("1", "2", "4", "8"),
        "2026-07-22",
    ),
    (
        "fused_linear_grpo_loss_token",
        "B",
        "B",
        '{"T": 1024, "H": 4096, "V": 128256, "importance_sampling_level": "token", "dtype": "torch.bfloat16"}',
        ("liger", "torch"),
        ("backward", "forward", "full"),
        ("2", "4", "8", "16"),
        "2025-08-04",
    ),
    (
        "fused_linear_grpo_loss_token",
        "B",
        "batch size",
        '{"hidden_size": 4096, "vocab_size": 128256, "dtype": "torch.bfloat16", "T": 1024, "importance_sampling_level": "token", "bsz": 1, "seq_len": 8192}',
        ("liger_cutile", "liger_triton", "torch"),
        ("backward", "forward", "full"),
        ("1", "2", "4", "8"),
        "2026-07-22",
    ),
    (
        "fused_linear_jsd",
        "BT",
        "B x T",
        '{"H": 4096, "V": 128256, "mode": "forward", "dtype": "torch.bfloat16"}',
        ("liger", "torch"),
        ("forward", "full"),
        ("1024", "2048", "4096", "8192"),
        "2024-10-09",
    ),
    (
        "fused_linear_jsd",
        "BT",
        "B * T",
        '{"hidden_size": 4096, "vocab_size": 128256, "dtype": "torch.bfloat16", "bsz": 1, "seq_len": 8192}',
        ("liger_cutile", "liger_triton", "torch"),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192"),
        "2026-06-16",
    ),
    (
        "fused_linear_orpo_loss",
        "B",
        "B",
        '{"T": 4096, "H": 4096, "V": 128256, "mode": "forward", "dtype": "torch.bfloat16"}',
        ("huggingface", "liger"),
        ("forward", "full"),
        ("2", "4", "8", "16"),
        "2024-11-13",
    ),
    (
        "fused_linear_orpo_loss",
        "B",
        "B",
        '{"T": 1024, "H": 4096, "V": 128256, "mode": "forward", "dtype": "torch.bfloat16"}',
        ("huggingface", "liger"),
        ("forward", "full"),
        ("2", "4", "8", "16"),
        "2024-11-13",
    ),
    (
        "fused_linear_simpo_loss",
        "B",
        "B",
        '{"T": 1024, "H": 4096, "V": 128256, "mode": "forward", "dtype": "torch.bfloat16"}',
        ("huggingface", "liger"),
        ("forward", "full"),
        ("2", "4", "8", "16"),
        "2024-11-15",
    ),
    (
        "fused_moe",
        "T",
        "num_tokens",
        '{"sweep_dim": "T", "T": null, "E": 128, "H": 2048, "intermediate_dim": 768, "K": 8, "dtype": "torch.bfloat16"}',
        ("huggingface", "liger"),
        ("backward", "forward", "full"),
        ("128", "256", "512", "1024", "2048", "4096", "8192", "16384", "32768"),
        "2026-04-02",
    ),
    (
        "fused_moe",
        "E",
        "num_experts",
        '{"sweep_dim": "E", "T": 8192, "E": null, "H": 2048, "intermediate_dim": 768, "K": 8, "dtype": "torch.bfloat16"}',
        ("huggingface", "liger"),
        ("backward", "forward", "full"),
        ("8", "16", "32", "64", "128"),
        "2026-04-02",
    ),
    (
        "fused_neighborhood_attention",
        "seq_len",
        "sequence length",
        '{"batch_size": 2, "hidden_size": 512, "num_heads": 8, "kernel_size": 7, "dilation": 1, "bias": true, "dtype": "torch.float32"}',
        ("liger", "torch"),
        ("backward", "forward", "full"),
        ("64", "128", "256", "512", "1024", "2048", "4096"),
        "2025-05-27",
    ),
    (
        "fused_neighborhood_attention",
        "seq_len",
        "sequence length",
        '{"batch_size": 4, "hidden_size": 768, "num_heads": 12, "kernel_size": 7, "dilation": 1, "bias": true, "dtype": "torch.float32"}',
        ("liger", "torch"),
        ("backward", "forward", "full"),
        ("64", "128", "256", "512", "1024", "2048", "4096"),
        "2025-05-27",
    ),
    (
        "fused_neighborhood_attention",
        "seq_len",
        "sequence length",
        '{"batch_size": 2, "hidden_size": 1024, "num_heads": 16, "kernel_size": 9, "dilation": 1, "bias": true, "dtype": "torch.float32"}',
        ("liger", "torch"),
        ("backward", "forward", "full"),
        ("64", "128", "256", "512", "1024", "2048", "4096"),
        "2025-05-27",
    ),
    (
        "fused_neighborhood_attention",
        "seq_len",
        "sequence length",
        '{"batch_size": 2, "hidden_size": 512, "num_heads": 8, "kernel_size": 7, "dilation": 2, "bias": true, "dtype": "torch.float32"}',
        ("liger", "torch"),
        ("backward", "forward", "full"),
        ("64", "128", "256", "512", "1024", "2048", "4096"),
        "2025-05-27",
    ),
    (
        "geglu",
        "T",
        "sequence length",
        '{"bsz": 8, "hidden_size": 4096, "intermediate_size": 11008, "hidden_act": "gelu_pytorch_tanh", "dtype": "torch.bfloat16"}',
        ("huggingface", "liger"),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192"),
        "2024-09-03",
    ),
    (
        "geglu",
        "T",
        "sequence length",
        '{"hidden_size": 4096, "intermediate_size": 14336, "dtype": "torch.bfloat16", "bsz": 1, "hidden_act": "gelu_pytorch_tanh", "seq_len": 8192}',
        ("huggingface", "liger_cutile", "liger_triton"),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192"),
        "2026-06-16",
    ),
    (
        "group_norm",
        "C",
        "num_channels",
        '{"M": 128, "H": 512, "channels_per_group": 4, "dtype": "torch.float32", "eps": 1e-06}',
        ("huggingface", "liger"),
        ("backward", "forward", "full"),
        ("32", "64", "128", "256", "512", "1024", "2048"),
        "2024-11-05",
    ),
    (
        "group_norm",
        "BT",
        "B*T",
        '{"hidden_size": 4096, "dtype": "torch.bfloat16", "channels_per_group": 4, "eps": 1e-06, "H": 512, "bsz": 1, "seq_len": 8192}',
        ("liger_cutile", "liger_triton", "torch"),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192"),
        "2026-06-26",
    ),
    (
        "jsd",
        "V",
        "vocab size",
        '{"B": 4, "T": 2048}',
        ("liger", "torch"),
        ("forward", "full"),
        ("4096", "8192", "16384", "32768", "65536", "131072"),
        "2024-09-25",
    ),
    (
        "jsd",
        "BT",
        "total tokens",
        '{"vocab_size": 128256, "bsz": 1, "seq_len": 8192}',
        ("liger", "liger_cutile", "liger_triton", "torch"),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192"),
        "2026-05-27",
    ),
    (
        "kl_div",
        "V",
        "vocab size",
        '{"B": 8, "T": 2048}',
        ("liger", "torch"),
        ("forward", "full"),
        ("4096", "8192", "16384", "32768", "65536", "131072"),
        "2024-09-04",
    ),
    (
        "kl_div",
        "BT",
        "total tokens",
        '{"vocab_size": 128256, "reduction": "batchmean", "bsz": 1, "seq_len": 8192}',
        ("liger_cutile", "liger_triton", "torch"),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192"),
        "2026-06-26",
    ),
    (
        "kto_loss",
        "B",
        "Batch Size (B)",
        '{"T": 512, "H": 1024, "V": 128256, "mode": "forward", "dtype": "torch.bfloat16", "bias": true, "beta": 0.1, "ignore_index": 42}',
        ("huggingface", "liger"),
        ("forward", "full"),
        ("2", "4", "8", "16", "32"),
        "2024-12-23",
    ),
    (
        "layer_norm",
        "N",
        "hidden size",
        '{"M": 4096, "dtype": "torch.float32", "eps": 1e-06}',
        ("huggingface", "liger"),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192", "16384"),
        "2024-09-03",
    ),
    (
        "layer_norm",
        "T",
        "Sequence length",
        '{"hidden_size": 4096, "dtype": "torch.bfloat16", "eps": 1e-06, "bsz": 1, "seq_len": 8192}',
        ("liger_cutile", "liger_triton", "torch"),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192"),
        "2026-06-16",
    ),
    (
        "llama4_rope",
        "H",
        "hidden size",
        '{"dtype": "torch.bfloat16", "seq_len": 2048, "num_q_heads": 32, "num_kv_heads": 8}',
        ("huggingface", "liger"),
        ("backward", "forward", "full"),
        ("512", "2048", "8192"),
        "2025-08-07",
    ),
    (
        "llama4_rope",
        "T",
        "sequence length",
        '{"dtype": "torch.bfloat16", "hidden_size": 8192, "num_q_heads": 32, "num_kv_heads": 8}',
        ("huggingface", "liger"),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192", "16384"),
        "2025-08-07",
    ),
    (
        "llama4_rope",
        "T",
        "sequence length",
        '{"hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, "dtype": "torch.bfloat16", "bsz": 1, "seq_len": 8192}',
        ("huggingface", "liger_cutile", "liger_triton"),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192"),
        "2026-06-26",
    ),
    (
        "megatron_cross_entropy",
        "V",
        "vocab size",
        '{"S": 2048, "B": 4}',
        ("liger", "megatron", "megatron-unfused", "torch"),
        ("backward", "forward", "full"),
        ("4096", "8192", "16384", "32768", "65536", "131072"),
        "2026-06-10",
    ),
    (
        "megatron_cross_entropy",
        "V",
        "vocab size",
        '{"S": 2048, "B": 4, "TP": 1}',
        ("liger", "megatron-fused", "megatron-unfused"),
        ("backward", "forward", "full"),
        ("4096", "8192", "16384", "32768", "65536", "131072"),
        "2026-06-15",
    ),
    (
        "megatron_rms_norm",
        "H",
        "hidden size",
        '{"S": 4096, "B": 1}',
        ("liger", "megatron", "torch"),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192", "16384"),
        "2026-06-10",
    ),
    (
        "megatron_swiglu",
        "ffn_local",
        "per-rank FFN hidden size",
        '{"S": 2048, "B": 4}',
        ("liger", "liger_in_place", "megatron", "torch"),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192", "16384", "32768"),
        "2026-07-26",
    ),
    (
        "multi_token_attention",
        "L",
        "sequence length",
        '{"B": 2, "C_in": 4, "C_out": 4, "K": 3, "groups": 1, "bias": true, "dtype": "torch.bfloat16"}',
        ("liger", "torch"),
        ("backward", "forward", "full"),
        ("32", "64", "128", "256", "512", "1024"),
        "2025-04-28",
    ),
    (
        "poly_norm",
        "T",
        "Sequence length",
        '{"hidden_size": 4096, "dtype": "torch.bfloat16", "eps": 1e-06, "bsz": 1, "seq_len": 8192}',
        ("liger_cutile", "liger_triton", "torch"),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192"),
        "2026-07-22",
    ),
    (
        "qwen2vl_mrope",
        "T",
        "sequence length",
        '{"hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, "dtype": "torch.bfloat16", "bsz": 1, "seq_len": 8192}',
        ("huggingface", "liger_cutile", "liger_triton"),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192"),
        "2026-06-26",
    ),
    (
        "relu_squared",
        "N",
        "hidden size",
        '{"M": 4096, "dtype": "torch.bfloat16"}',
        ("liger", "torch"),
        ("backward", "forward", "full"),
        ("128", "256", "512", "1024", "2048", "4096", "8192", "16384"),
        "2026-03-27",
    ),
    (
        "rms_norm",
        "H",
        "hidden size",
        '{"M": 2048, "dtype": "torch.bfloat16", "eps": 1e-06}',
        ("huggingface", "liger"),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192", "16384", "32768"),
        "2024-09-03",
    ),
    (
        "rope",
        "H",
        "hidden size",
        '{"dtype": "torch.bfloat16", "seq_len": 2048, "num_q_heads": 32, "num_kv_heads": 8}',
        ("huggingface", "liger"),
        ("backward", "forward", "full"),
        ("512", "2048", "8192"),
        "2024-09-03",
    ),
    (
        "rope",
        "T",
        "sequence length",
        '{"dtype": "torch.bfloat16", "hidden_size": 8192, "num_q_heads": 32, "num_kv_heads": 8}',
        ("huggingface", "liger"),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192", "16384"),
        "2024-09-03",
    ),
    (
        "rope",
        "T",
        "sequence length",
        '{"hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, "dtype": "torch.bfloat16", "bsz": 1, "seq_len": 8192}',
        ("huggingface", "liger_cutile", "liger_triton"),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192"),
        "2026-06-26",
    ),
    (
        "softmax",
        "N",
        "hidden size",
        '{"M": 2048, "dtype": "torch.float32"}',
        ("liger", "torch"),
        ("forward", "full"),
        ("128", "256", "512", "1024", "2048", "4096"),
        "2025-04-30",
    ),
    (
        "softmax",
        "N",
        "hidden size",
        '{"M": 2048, "dtype": "torch.bfloat16"}',
        ("liger", "torch"),
        ("forward", "full"),
        ("128", "256", "512", "1024", "2048", "4096"),
        "2025-04-30",
    ),
    (
        "softmax",
        "BT",
        "B*T",
        '{"hidden_size": 4096, "dtype": "torch.bfloat16", "bsz": 1, "seq_len": 8192}',
        ("liger_cutile", "liger_triton", "torch"),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192"),
        "2026-07-24",
    ),
    (
        "sparse_multi_token_attention",
        "L",
        "sequence length",
        '{"B": 2, "C_in": 4, "C_out": 4, "K": 3, "groups": 1, "bias": true, "dtype": "torch.float32"}',
        ("liger", "torch"),
        ("backward", "forward", "full"),
        ("32", "64", "128", "256", "512", "1024"),
        "2025-04-30",
    ),
    (
        "sparsemax",
        "V",
        "feature size",
        '{"B": 4, "T": 512, "dim": -1, "dtype": "torch.float32"}',
        ("liger", "torch"),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192", "16384", "32768"),
        "2025-04-28",
    ),
    (
        "sparsemax",
        "BT",
        "B*T",
        '{"hidden_size": 4096, "dtype": "torch.bfloat16", "dim": -1, "bsz": 1, "seq_len": 8192}',
        ("liger_cutile", "liger_triton", "torch"),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192"),
        "2026-06-26",
    ),
    (
        "swiglu",
        "T",
        "sequence length",
        '{"B": 4, "hidden_size": 4096, "dtype": "torch.bfloat16", "intermediate_size": 11008, "hidden_act": "silu"}',
        ("huggingface", "liger"),
        ("forward", "full"),
        ("1024", "2048", "4096", "8192"),
        "2024-09-03",
    ),
    (
        "swiglu",
        "T",
        "total tokens",
        '{"hidden_size": 4096, "intermediate_size": 14336, "dtype": "torch.bfloat16", "bsz": 1, "hidden_act": "silu", "seq_len": 8192}',
        ("huggingface", "liger_cutile", "liger_triton"),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192"),
        "2026-07-22",
    ),
    (
        "tiled_geglu",
        "T",
        "sequence length",
        '{"bsz": 2, "hidden_size": 2048, "intermediate_size": 4096, "hidden_act": "gelu_pytorch_tanh", "activation_type": "geglu", "num_shards": 4, "dtype": "torch.bfloat16"}',
        ("deepspeed_tiled", "huggingface", "liger", "liger_tiled"),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192", "16384"),
        "2025-11-11",
    ),
    (
        "tiled_geglu",
        "T",
        "sequence length",
        '{"hidden_size": 4096, "intermediate_size": 14336, "hidden_act": "gelu_pytorch_tanh", "dtype": "torch.bfloat16", "activation_type": "geglu", "num_shards": 4, "bsz": 2}',
        ("deepspeed_tiled", "huggingface", "liger_cutile", "liger_tiled", "liger_triton"),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192"),
        "2026-06-26",
    ),
    (
        "tiled_swiglu",
        "T",
        "sequence length",
        '{"bsz": 2, "hidden_size": 2048, "intermediate_size": 4096, "hidden_act": "silu", "activation_type": "swiglu", "num_shards": 4, "dtype": "torch.bfloat16"}',
        ("deepspeed_tiled", "huggingface", "liger", "liger_tiled"),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192", "16384"),
        "2025-11-11",
    ),
    (
        "tiled_swiglu",
        "T",
        "sequence length",
        '{"hidden_size": 4096, "intermediate_size": 14336, "hidden_act": "silu", "dtype": "torch.bfloat16", "activation_type": "swiglu", "num_shards": 4, "bsz": 2}',
        ("deepspeed_tiled", "huggingface", "liger_cutile", "liger_tiled", "liger_triton"),
        ("backward", "forward", "full"),
        ("1024", "2048", "4096", "8192"),
        "2026-06-26",
    ),
    (
        "tvd",
        "V",
        "vocab size",
        '{"B": 8, "T": 2048}',
        ("liger", "torch"),
        ("backward", "forward", "full"),
        ("4096", "8192", "16384", "32768", "65536", "131072"),
        "2024-10-26",
    ),
]

# name, weight, available from, to, product, form factor, architecture, speed factor
GPUS = [
    ("NVIDIA A100-SXM4-80GB", 0.30, "2024-09-01", "2025-09-01", "NVIDIA A100", "SXM4 80GB", "sm_80", 1.00),
    ("NVIDIA H100 80GB HBM3", 0.22, "2024-10-01", "2026-08-20", "NVIDIA H100", "80GB HBM3", "sm_90", 0.60),
    (
        "NVIDIA GeForce RTX 3090",
        0.10,
        "2025-04-01",
        "2025-06-30",
        "NVIDIA GeForce RTX 3090",
        "24GB GDDR6X",
        "sm_86",
        1.80,
    ),
    ("NVIDIA B200", 0.12, "2026-02-20", "2026-08-20", "NVIDIA B200", "180GB HBM3e", "sm_100", 0.45),
    ("NVIDIA H100 PCIe", 0.07, "2024-09-01", "2024-11-01", "NVIDIA H100", "PCIe 80GB", "sm_90", 0.75),
    (
        "NVIDIA GeForce RTX 4090",
        0.06,
        "2025-10-01",
        "2025-12-31",
        "NVIDIA GeForce RTX 4090",
        "24GB GDDR6X",
        "sm_89",
        1.10,
    ),
    ("NVIDIA A100-SXM4-40GB", 0.05, "2024-10-15", "2024-12-15", "NVIDIA A100", "SXM4 40GB", "sm_80", 1.05),
    ("NVIDIA H100 NVL", 0.03, "2025-06-15", "2025-08-15", "NVIDIA H100", "NVL 94GB", "sm_90", 0.65),
]
# GPUs that only standalone kernelindex bundles use
EXTRA_GPUS = [
    ("NVIDIA H200", 0.5, "2025-01-01", "2026-08-20", "NVIDIA H200", "141GB HBM3e", "sm_90", 0.55),
    ("NVIDIA L40S", 0.5, "2024-09-01", "2026-08-20", "NVIDIA L40S", "48GB GDDR6", "sm_89", 1.30),
]
VERSIONS = [
    ("0.1.1", "2024-08-20"),
    ("0.2.1", "2024-08-30"),
    ("0.3.0", "2024-09-20"),
    ("0.3.1", "2024-10-01"),
    ("0.4.0", "2024-11-10"),
    ("0.4.1", "2024-11-14"),
    ("0.4.2", "2024-11-20"),
    ("0.5.2", "2024-12-15"),
    ("0.5.3", "2025-02-20"),
    ("0.5.4", "2025-03-02"),
    ("0.5.8", "2025-04-20"),
    ("0.5.10", "2025-05-20"),
    ("0.6.0", "2025-07-10"),
    ("0.6.1", "2025-08-01"),
    ("0.6.3", "2025-10-20"),
    ("0.7.0", "2026-02-20"),
    ("0.8.0", "2026-05-20"),
    ("0.8.1", "2026-07-25"),
]
MODES = ["forward", "backward", "full", "no-grad-forward"]
METRICS = [("speed", "ms"), ("memory", "MB")]
PASS_TEXT = {
    "forward": "the forward pass of the module on random inputs",
    "backward": "the backward pass of the module output given a random upstream gradient",
    "full": "one forward plus backward step of the module on random inputs",
    "no-grad-forward": "the forward pass of the module under torch.no_grad()",
}
MODE_SPEED = {"forward": 1.0, "backward": 2.1, "full": 3.0, "no-grad-forward": 0.9}
MODE_MEMORY = {"forward": 0.6, "backward": 0.8, "full": 1.0, "no-grad-forward": 0.5}
KERNEL_TITLES = {
    "fused_add_rms_norm": "Fused add + RMSNorm",
    "rms_norm": "RMSNorm",
    "layer_norm": "LayerNorm",
    "group_norm": "GroupNorm",
    "rope": "RoPE",
    "llama4_rope": "Llama 4 RoPE",
    "qwen2vl_mrope": "Qwen2-VL mRoPE",
    "geglu": "GeGLU",
    "swiglu": "SwiGLU",
    "jsd": "JSD",
    "kl_div": "KL divergence",
    "tvd": "TVD",
    "dyt": "DyT",
}
X_SLUG = {
    "H": "hidden",
    "N": "hidden",
    "V": "vocab",
    "T": "seq",
    "BT": "tokens",
    "B": "batch",
    "C": "channels",
    "L": "seq",
    "E": "experts",
    "seq_len": "seq",
    "ffn_local": "ffn",
    "model_config": "",
}
CFG_SLUG = {
    "M": "rows",
    "B": "batch",
    "bsz": "batch",
    "batch_size": "batch",
    "T": "seq",
    "S": "seq",
    "seq_len": "seq",
    "H": "hidden",
    "hidden_size": "hidden",
    "D": "dim",
    "V": "vocab",
    "vocab_size": "vocab",
    "intermediate_size": "inter",
    "intermediate_dim": "inter",
    "E": "experts",
    "K": "k",
    "num_heads": "heads",
    "num_attention_heads": "heads",
    "num_q_heads": "heads",
    "num_shards": "shards",
    "kernel_size": "ks",
    "TP": "tp",
}
DTYPE_SLUG = {"torch.float32": "fp32", "torch.bfloat16": "bf16", "torch.float16": "fp16"}


# ----------------------------------------------------------------------------- helpers


def _epoch(day: str) -> int:
    return int(datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=UTC).timestamp())


def _slug(text: str) -> str:
    out = "".join(c if c.isalnum() else "-" for c in text.lower())
    while "--" in out:
        out = out.replace("--", "-")
    return out.strip("-")


def _digest_obj(obj: dict) -> str:
    text = json.dumps(
        {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "spec": obj["spec"]},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _sha_of(value) -> str:
    return (
        "sha256:"
        + hashlib.sha256(
            json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
        ).hexdigest()
    )


def kernel_title(kernel: str) -> str:
    return KERNEL_TITLES.get(kernel) or kernel.replace("_", " ").capitalize()


def protocol_object(mode: str) -> dict:
    notes = (
        f"Timed: {PASS_TEXT[mode]}, via triton.testing.do_bench with quantiles 0.5/0.2/0.8 "
        "(median with p20/p80 spread). The upstream CSV records no CUDA, driver, or torch version; "
        "the Liger release rides each run's labels. Comparable only within one kernel, workload, "
        "timed pass, and GPU."
    )
    return {
        "kind": "BenchmarkProtocol",
        "spec": {
            "harness": {
                "name": "Liger-Kernel benchmark scripts",
                "repository": "https://github.com/linkedin/Liger-Kernel",
            },
            "measurement": {"timer": "cuda_events", "primaryStatistic": "median"},
            "comparability": {"notes": notes, "family": "liger_kernel_bench"},
        },
        "metadata": {"name": f"liger-bench-do-bench-{mode}", "title": f"Liger benchmark harness · {mode} pass"},
        "apiVersion": API_VERSION,
    }


def environment_object(gpu: tuple) -> dict:
    name, _w, _a, _b, product, form, arch, _f = gpu
    short = name.replace("NVIDIA ", "").replace("GeForce ", "")
    return {
        "kind": "ExecutionEnvironment",
        "spec": {
            "hardware": {"vendor": "nvidia", "product": product, "formFactor": form, "architecture": arch},
            "software": {},
        },
        "metadata": {"name": f"liger-bench-{_slug(name)}", "title": f"Liger benchmark host · {short}"},
        "apiVersion": API_VERSION,
    }


def workload_slug(x_name: str, x_value: str, config: str) -> tuple[str, str]:
    """(full slug, slug without dtype) e.g. ('hidden1024-rows2048-fp32', 'hidden1024-rows2048')."""
    xs = X_SLUG.get(x_name, _slug(x_name))
    parts = [_slug(f"{xs}{x_value}")]
    cfg = json.loads(config)
    for k, v in cfg.items():
        name = CFG_SLUG.get(k)
        if name and name != xs and isinstance(v, int) and not isinstance(v, bool):
            parts.append(f"{name}{v}")
    dtype = DTYPE_SLUG.get(cfg.get("dtype", ""), "")
    short = "-".join(parts)
    return (f"{short}-{dtype}" if dtype else short), short


# ----------------------------------------------------------------------------- catalog


class Catalog:
    """Flattened catalog: suites, blocks (suite x provider x mode x metric) and series (block x x-value)."""

    def __init__(self) -> None:
        self.kernels = sorted({s[0] for s in SUITES})
        self.providers = sorted({p for s in SUITES for p in s[4]})
        self.gpus = GPUS + EXTRA_GPUS
        self.gpu_names = [g[0] for g in self.gpus]
        self.version_names = [v for v, _ in VERSIONS]
        self.version_epochs = np.array([_epoch(d) for _, d in VERSIONS], dtype=np.int64)
        # suites
        self.suite_kernel = np.array([self.kernels.index(s[0]) for s in SUITES])
        self.suite_t0 = np.array([_epoch(s[7]) for s in SUITES], dtype=np.int64)
        # x values: one global table of (suite, x) pairs == workloads
        wl_suite, wl_xval, wl_num = [], [], []
        self.suite_x0 = []
        for si, s in enumerate(SUITES):
            self.suite_x0.append(len(wl_suite))
            for j, xv in enumerate(s[6]):
                wl_suite.append(si)
                wl_xval.append(xv)
                wl_num.append(float(xv) if xv.isdigit() else float(2 ** (j + 10)))
        self.wl_suite = np.array(wl_suite)
        self.wl_xval = wl_xval
        self.wl_num = np.array(wl_num)
        self._blocks()
        self._base_values()
        # strings
        self.s_kernel = pl.Series([s[0] for s in SUITES], dtype=pl.String)
        self.s_xname = pl.Series([s[1] for s in SUITES], dtype=pl.String)
        self.s_xlabel = pl.Series([s[2] for s in SUITES], dtype=pl.String)
        self.s_config = pl.Series([s[3] for s in SUITES], dtype=pl.String)
        self.s_provider = pl.Series(self.providers, dtype=pl.String)
        self.s_mode = pl.Series(MODES, dtype=pl.String)
        self.s_metric = pl.Series([m for m, _ in METRICS], dtype=pl.String)
        self.s_unit = pl.Series([u for _, u in METRICS], dtype=pl.String)
        self.s_xval = pl.Series(self.wl_xval, dtype=pl.String)
        self.s_gpu = pl.Series(self.gpu_names, dtype=pl.String)
        self.s_version = pl.Series(self.version_names, dtype=pl.String)

    def _blocks(self) -> None:
        """Blocks: suite x provider x mode x metric, with their sampling weights."""
        b_suite, b_prov, b_mode, b_metric, b_weight = [], [], [], [], []
        for si, s in enumerate(SUITES):
            for p in s[4]:
                for m in s[5]:
                    for mi, (metric, _u) in enumerate(METRICS):
                        if metric == "memory" and m == "no-grad-forward":
                            continue
                        w = 1.0
                        if metric == "memory" and m != "full":
                            w = 0.12
                        if m == "no-grad-forward":
                            w = 0.2
                        b_suite.append(si)
                        b_prov.append(self.providers.index(p))
                        b_mode.append(MODES.index(m))
                        b_metric.append(mi)
                        b_weight.append(w)
        self.b_suite = np.array(b_suite)
        self.b_prov = np.array(b_prov)
        self.b_mode = np.array(b_mode)
        self.b_metric = np.array(b_metric)
        w = np.array(b_weight)
        self.b_p = w / w.sum()
        self.b_len = np.array([len(SUITES[s][6]) for s in b_suite])
        self.b_x0 = np.array([self.suite_x0[s] for s in b_suite])

    def _base_values(self) -> None:
        """Each block's base value, deterministic (independent of the run seed: a kernel is what it is)."""
        rng = np.random.default_rng(20240903)
        base_speed = np.exp(rng.uniform(np.log(0.01), np.log(0.8), len(SUITES)))
        base_mem = np.exp(rng.uniform(np.log(2.0), np.log(1500.0), len(SUITES)))
        alpha = rng.uniform(0.6, 1.0, len(SUITES))
        prov_speed = np.array(
            [
                (0.7 if p.startswith("liger") else 0.85 if p == "torch_compile" else 1.0) * rng.uniform(0.9, 1.1)
                for p in self.providers
            ]
        )
        prov_mem = np.array(
            [(0.55 if p.startswith("liger") else 1.0) * rng.uniform(0.95, 1.05) for p in self.providers]
        )
        mode_speed = np.array([MODE_SPEED[m] for m in MODES])
        mode_mem = np.array([MODE_MEMORY[m] for m in MODES])
        is_speed = self.b_metric == 0
        self.b_base = np.where(
            is_speed,
            base_speed[self.b_suite] * prov_speed[self.b_prov] * mode_speed[self.b_mode],
            base_mem[self.b_suite] * prov_mem[self.b_prov] * mode_mem[self.b_mode],
        )
        self.suite_alpha = alpha
        self.gpu_factor = np.array([g[7] for g in self.gpus])

    def y_base(self, block: np.ndarray, wl: np.ndarray, gpu: np.ndarray) -> np.ndarray:
        suite = self.b_suite[block]
        x_rel = self.wl_num[wl] / self.wl_num[self.b_x0[block]]
        speed = self.b_metric[block] == 0
        scale = np.where(speed, x_rel ** self.suite_alpha[suite] * self.gpu_factor[gpu], x_rel**0.9)
        return self.b_base[block] * scale


CATALOG: Catalog | None = None


def catalog() -> Catalog:
    global CATALOG
    if CATALOG is None:
        CATALOG = Catalog()
    return CATALOG


# ----------------------------------------------------------------------------- plan


def _sample_runs(
    cat: Catalog, rng: np.random.Generator, n_runs: int, t_lo: int, t_hi: int, gpu_pool: list[int], parity: int
):
    """Blocks, gpus and unique timestamps (seconds, all of the given parity) of n_runs runs, time-ordered."""
    block = rng.choice(len(cat.b_p), n_runs, p=cat.b_p)
    w = np.array([cat.gpus[g][1] for g in gpu_pool])
    gpu = np.asarray(gpu_pool)[rng.choice(len(gpu_pool), n_runs, p=w / w.sum())]
    g_lo = np.array([_epoch(g[2]) for g in cat.gpus], dtype=np.int64)
    g_hi = np.array([_epoch(g[3]) for g in cat.gpus], dtype=np.int64)
    lo = np.clip(np.maximum(g_lo[gpu], cat.suite_t0[cat.b_suite[block]]), t_lo, t_hi)
    hi = np.clip(g_hi[gpu], t_lo, t_hi)
    # suite not yet released in that GPU's window: run it on a GPU alive at the end (H100 or B200)
    late = lo >= hi - 86400
    if late.any():
        alt = np.where(rng.random(int(late.sum())) < 0.5, 1, 3)
        gpu[late] = alt
        lo[late] = np.clip(np.maximum(g_lo[alt], cat.suite_t0[cat.b_suite[block[late]]]), t_lo, t_hi)
        hi[late] = np.maximum(np.clip(g_hi[alt], t_lo, t_hi), lo[late] + 86400)
    ts = lo + (rng.random(n_runs) * (hi - lo)).astype(np.int64)
    # unique timestamps of one parity: work in 2-second ticks, make ticks strictly increasing
    order = np.argsort(ts, kind="stable")
    block, gpu, ts = block[order], gpu[order], ts[order]
    ticks = ts // 2
    i = np.arange(n_runs, dtype=np.int64)
    ticks = np.maximum.accumulate(ticks - i) + i
    ts = ticks * 2 + parity
    # release in effect; 10% of runs lag one release behind
    vidx = np.searchsorted(cat.version_epochs, ts, side="right") - 1
    vidx = np.clip(vidx - (rng.random(n_runs) < 0.10), 0, len(cat.version_names) - 1)
    run_noise = np.exp(rng.normal(0.0, 0.03, n_runs))
    return block, gpu, ts, vidx, run_noise


def _rows_from_runs(cat: Catalog, rng, block, gpu, ts, vidx, run_noise, n_rows: int) -> dict:
    """Expand runs into rows (one per x value); truncate to n_rows."""
    lens = cat.b_len[block]
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    total = int(lens.sum())
    assert total >= n_rows
    run = np.repeat(np.arange(len(block), dtype=np.int64), lens)[:n_rows]
    pos = np.arange(n_rows, dtype=np.int64) - starts[run]
    blk = block[run]
    wl = cat.b_x0[blk] + pos
    g = gpu[run]
    p50 = cat.y_base(blk, wl, g) * run_noise[run] * np.exp(rng.normal(0.0, 0.05, n_rows))
    speed = cat.b_metric[blk] == 0
    lo = np.where(speed, 1.0 - np.abs(rng.normal(0.0, 0.012, n_rows)), 1.0)
    hi = np.where(speed, 1.0 + np.abs(rng.normal(0.0, 0.035, n_rows)), 1.0)
    f32 = np.float32
    y50 = p50.astype(f32).astype(np.float64)
    y20 = (y50 * lo).astype(f32).astype(np.float64)
    y80 = (y50 * hi).astype(f32).astype(np.float64)
    y20 = np.minimum(y20, y50)
    y80 = np.maximum(y80, y50)
    return {
        "run": run,
        "block": blk,
        "wl": wl,
        "gpu": g,
        "ts": ts[run],
        "vidx": vidx[run],
        "y20": y20,
        "y50": y50,
        "y80": y80,
    }


def _n_runs_for(cat: Catalog, n_rows: int) -> int:
    mean_len = float((cat.b_p * cat.b_len).sum())
    return int(n_rows / mean_len * 1.15) + 64


def _plan_rows(cat: Catalog, rng, n_rows: int, t_lo: int, t_hi: int, gpu_pool: list[int], parity: int) -> dict:
    n_runs = _n_runs_for(cat, n_rows)
    while True:
        runs = _sample_runs(cat, rng, n_runs, t_lo, t_hi, gpu_pool, parity)
        if int(cat.b_len[runs[0]].sum()) >= n_rows:
            break
        n_runs *= 2
    return _rows_from_runs(cat, rng, *runs, n_rows)


def _ts_strings(ts: np.ndarray, fmt: str) -> pl.Series:
    return pl.Series(ts * 1000, dtype=pl.Int64).cast(pl.Datetime("ms")).dt.strftime(fmt)


def _csv_frame(cat: Catalog, rows: dict, idx: np.ndarray | None = None) -> pl.DataFrame:
    """Polars frame with the upstream CSV columns for rows[idx] (all rows when idx is None)."""

    def take(name):
        a = rows[name]
        return a if idx is None else a[idx]

    blk, wl = take("block"), take("wl")
    suite = cat.b_suite[blk]
    metric = cat.b_metric[blk]
    return pl.DataFrame(
        {
            "kernel_name": cat.s_kernel.gather(suite),
            "kernel_provider": cat.s_provider.gather(cat.b_prov[blk]),
            "kernel_operation_mode": cat.s_mode.gather(cat.b_mode[blk]),
            "metric_name": cat.s_metric.gather(metric),
            "metric_unit": cat.s_unit.gather(metric),
            "x_name": cat.s_xname.gather(suite),
            "x_label": cat.s_xlabel.gather(suite),
            "x_value": cat.s_xval.gather(wl),
            "y_value_50": take("y50"),
            "y_value_20": take("y20"),
            "y_value_80": take("y80"),
            "extra_benchmark_config_str": cat.s_config.gather(suite),
            "gpu_name": cat.s_gpu.gather(take("gpu")),
            "timestamp": _ts_strings(take("ts"), "%Y-%m-%d %H:%M:%S"),
            "liger_version": cat.s_version.gather(take("vidx")),
        }
    )


# ----------------------------------------------------------------------------- CSV


def default_snapshots(csv_rows: int) -> int:
    return int(min(40, max(2, csv_rows // 2000)))


def write_csv_snapshots(
    out_dir: str | Path, csv_rows: int, seed: int, snapshots: int | None = None, dup_frac: float = 0.25
) -> tuple[dict, list[Path]]:
    """Write csv_rows rows over `snapshots` files; returns (distinct-row plan, written paths)."""
    cat = catalog()
    out = Path(out_dir) / "liger_csv"
    out.mkdir(parents=True, exist_ok=True)
    k = snapshots or default_snapshots(csv_rows)
    rng = np.random.default_rng([seed, 1])
    n_distinct = csv_rows if k == 1 else max(1, int(round(csv_rows * (1.0 - dup_frac))))
    n_dup = csv_rows - n_distinct
    rows = _plan_rows(cat, rng, n_distinct, _epoch(T_START), _epoch(T_END), list(range(len(GPUS))), parity=0)
    # runs are time-ordered, so snapshot slices are contiguous row ranges
    run = rows["run"]
    n_runs = int(run[-1]) + 1
    snap_of_run = (np.arange(n_runs) * k) // n_runs
    snap = snap_of_run[run]
    bounds = np.searchsorted(snap, np.arange(k + 1), side="left")
    # duplicates: rows of earlier snapshots copied into a later one
    eligible = int(bounds[k - 1])
    if n_dup and eligible == 0:
        raise ValueError("too few rows for the requested snapshots")
    src = rng.integers(0, eligible, n_dup) if n_dup else np.zeros(0, dtype=np.int64)
    src_snap = snap[src]
    tgt = src_snap + 1 + (rng.random(n_dup) * (k - 1 - src_snap)).astype(np.int64)
    order = np.argsort(tgt, kind="stable")
    src, tgt = src[order], tgt[order]
    dbounds = np.searchsorted(tgt, np.arange(k + 1), side="left")
    hexes = rng.integers(0, 2**40, k)
    paths = []
    for j in range(k):
        new = np.arange(bounds[j], bounds[j + 1], dtype=np.int64)
        idx = np.concatenate([src[dbounds[j] : dbounds[j + 1]], new])
        last_ts = int(rows["ts"][bounds[j + 1] - 1]) if bounds[j + 1] > bounds[j] else _epoch(T_START)
        day = datetime.fromtimestamp(last_ts + 86400, tz=UTC).strftime("%Y-%m-%d")
        path = out / f"{day}_{int(hexes[j]):010x}_all_benchmark_data.csv"
        _csv_frame(cat, rows, idx).write_csv(path)
        paths.append(path)
    rows["snap"] = snap
    return rows, paths


def write_extra_snapshot(out_dir: str | Path, rows: int = 2500, seed: int = 1) -> Path:
    """One more snapshot of `rows` new rows, all timestamped after anything generate() writes."""
    cat = catalog()
    out = Path(out_dir) / "liger_csv"
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng([seed, 3])
    lo = _epoch(EXTRA_START) + int(rng.integers(0, 30)) * 86400
    hi = lo + 7 * 86400
    # only GPUs/suites alive at the end of the history
    pool = [i for i, g in enumerate(GPUS) if _epoch(g[3]) >= _epoch(T_END) - 86400]
    plan = _plan_rows(cat, rng, rows, lo, hi, pool, parity=0)
    day = datetime.fromtimestamp(int(plan["ts"].max()) + 86400, tz=UTC).strftime("%Y-%m-%d")
    path = out / f"{day}_{int(rng.integers(0, 2**40)):010x}_all_benchmark_data.csv"
    _csv_frame(cat, plan).write_csv(path)
    return path


# ----------------------------------------------------------------------------- bundles


def _dim_tables(cat: Catalog):
    protos = [protocol_object(m) for m in MODES]
    envs = [environment_object(g) for g in cat.gpus]
    dumps = lambda o: json.dumps(o, ensure_ascii=False, separators=(",", ":"))  # noqa: E731
    return (
        pl.Series([dumps(o) for o in protos]),
        pl.Series([_digest_obj(o) for o in protos]),
        pl.Series([dumps(o) for o in envs]),
        pl.Series([_digest_obj(o) for o in envs]),
    )


def _workload_tables(cat: Catalog):
    digests, slugs, names = [], [], []
    for w, si in enumerate(cat.wl_suite):
        s = SUITES[si]
        digests.append(_sha_of({"kernel": s[0], "x_name": s[1], "x_value": cat.wl_xval[w], "config": json.loads(s[3])}))
        full, short = workload_slug(s[1], cat.wl_xval[w], s[3])
        slugs.append(full)
        names.append(short)
    return pl.Series(digests), pl.Series(slugs), pl.Series(names)


def _bundle_lines(cat: Catalog, b: dict, tables) -> pl.DataFrame:
    c, s = pl.col, pl.lit
    line = pl.concat_str(
        [s('{"run":'), _run_json(), s(',"protocol":'), c("p_json"), s(',"environment":'), c("e_json"), s("}")]
    )
    return _bundle_frame(cat, b, tables).select(line.alias("line"))


def _bundle_frame(cat: Catalog, b: dict, tables) -> pl.DataFrame:
    """One row per bundle: the strings its JSON line is written from."""
    p_json, p_dig, e_json, e_dig, wl_dig, wl_slug, wl_name = tables
    blk = b["block"]
    suite = cat.b_suite[blk]
    mode = cat.b_mode[blk]
    df = pl.DataFrame(
        {
            "kernel": cat.s_kernel.gather(suite),
            "provider": cat.s_provider.gather(cat.b_prov[blk]),
            "mode": cat.s_mode.gather(mode),
            "gpu_slug": pl.Series([_slug(g) for g in cat.gpu_names]).gather(b["gpu"]),
            "ktitle": pl.Series([kernel_title(k) for k in SUITES_KERNELS]).gather(suite),
            "wl_dig": wl_dig.gather(b["wl"]),
            "wl_slug": wl_slug.gather(b["wl"]),
            "wl_name": wl_name.gather(b["wl"]),
            "version": cat.s_version.gather(b["vidx"]),
            "p_json": p_json.gather(mode),
            "p_dig": p_dig.gather(mode),
            "e_json": e_json.gather(b["gpu"]),
            "e_dig": e_dig.gather(b["gpu"]),
            "observed": _ts_strings(b["ts"], "%Y-%m-%dT%H:%M:%S.000Z"),
            "ts_slug": _ts_strings(b["ts"], "%Y-%m-%d-%H-%M-%S"),
            "y20": b["y20"],
            "y50": b["y50"],
            "y80": b["y80"],
        }
    )
    c = pl.col
    s = lambda x: pl.lit(x)  # noqa: E731
    impl = c("provider") + s("|") + c("kernel") + s("|") + c("version")
    impl_tab = df.select(impl.unique().alias("k")).sort("k")
    impl_tab = impl_tab.with_columns(
        pl.Series(
            "impl_dig",
            [
                _sha_of(dict(zip(("provider", "kernel", "liger_version"), k.split("|"), strict=False)))
                for k in impl_tab["k"]
            ],
        )
    )
    return df.with_columns(impl.alias("k")).join(impl_tab, on="k", how="left", maintain_order="left")


def _run_json() -> pl.Expr:
    """A bundle's run as KernelIndex writes it (its own key order), from `_bundle_frame`'s columns."""
    c, s = pl.col, pl.lit
    kdash = c("kernel").str.replace_all("_", "-")
    pdash = c("provider").str.replace_all("_", "-")
    ns = lambda col: (c(col) * 1e6).round(0).cast(pl.Int64).cast(pl.String)  # noqa: E731
    ms = lambda col: c(col).cast(pl.String)  # noqa: E731
    run = pl.concat_str(
        [
            s('{"apiVersion":"' + API_VERSION + '","kind":"BenchmarkRun","metadata":{"name":"liger-'),
            kdash,
            s("-"),
            c("mode"),
            s("-"),
            pdash,
            s("-"),
            c("gpu_slug"),
            s("-"),
            c("wl_name"),
            s('","title":"'),
            c("ktitle"),
            s(" · "),
            c("provider"),
            s(" · "),
            c("mode"),
            s('","labels":{"liger_version":"'),
            c("version"),
            s('"}},"spec":{"status":"passed","timing":{"latencyNs":{"median":'),
            ns("y50"),
            s('},"primaryStatistic":"median"},"observedAt":"'),
            c("observed"),
            s('","measurements":[{"unit":"ns","value":'),
            ns("y20"),
            s(',"metric":"latency","statistic":"p20"},{"unit":"ns","value":'),
            ns("y80"),
            s(
                ',"metric":"latency","statistic":"p80"}],"sourceNative":{"source":"liger-kernel-bench","metrics":{"ms_20":'
            ),
            ms("y20"),
            s(',"ms_50":'),
            ms("y50"),
            s(',"ms_80":'),
            ms("y80"),
            s('},"benchmark":"'),
            c("kernel"),
            s("/"),
            c("mode"),
            s('","externalId":"'),
            c("kernel"),
            s("/"),
            c("mode"),
            s("/"),
            c("provider"),
            s("/"),
            c("gpu_slug"),
            s("/"),
            c("wl_slug"),
            s("/"),
            c("ts_slug"),
            s('"},"protocolDigest":"'),
            c("p_dig"),
            s('","workloadDigest":"'),
            c("wl_dig"),
            s('","environmentDigest":"'),
            c("e_dig"),
            s('","implementationDigest":"'),
            c("impl_dig"),
            s('"}}'),
        ]
    )
    return run


SUITES_KERNELS = [s[0] for s in SUITES]


def write_bundles(out_dir: str | Path, n_bundles: int, seed: int, csv_rows: dict | None) -> tuple[int, list[Path]]:
    """Write n_bundles bundles; about half fold onto distinct CSV speed rows. Returns (n_folding, paths)."""
    cat = catalog()
    out = Path(out_dir) / "kernelindex"
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng([seed, 2])
    n_fold = 0
    parts = []
    if csv_rows is not None and n_bundles:
        speed_idx = np.flatnonzero(cat.b_metric[csv_rows["block"]] == 0)
        n_fold = min(n_bundles // 2, len(speed_idx))
        pick = np.sort(rng.choice(speed_idx, n_fold, replace=False)) if n_fold else np.zeros(0, np.int64)
        parts.append({k: csv_rows[k][pick] for k in ("block", "wl", "gpu", "ts", "vidx", "y20", "y50", "y80")})
    n_alone = n_bundles - n_fold
    if n_alone:
        # standalone: odd-second timestamps, speed blocks only, CSV GPUs plus bundle-only GPUs
        alone = _plan_rows(cat, rng, n_alone * 2, _epoch(T_START), _epoch(T_END), list(range(len(cat.gpus))), parity=1)
        keep = np.flatnonzero(cat.b_metric[alone["block"]] == 0)
        while len(keep) < n_alone:  # very unlikely; top up
            more = _plan_rows(cat, rng, n_alone * 2, _epoch(T_START), _epoch(T_END), list(range(len(cat.gpus))), 1)
            alone = {k: np.concatenate([alone[k], more[k]]) for k in alone}
            keep = np.flatnonzero(cat.b_metric[alone["block"]] == 0)
        keep = np.sort(rng.choice(keep, n_alone, replace=False))
        parts.append({k: alone[k][keep] for k in ("block", "wl", "gpu", "ts", "vidx", "y20", "y50", "y80")})
    allb = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]} if parts else None
    paths = []
    if allb is None:
        return 0, paths
    perm = rng.permutation(n_bundles)
    tables = _dim_tables(cat) + _workload_tables(cat)
    for f, lo in enumerate(range(0, n_bundles, BUNDLES_PER_FILE)):
        idx = perm[lo : lo + BUNDLES_PER_FILE]
        chunk = {k: v[idx] for k, v in allb.items()}
        path = out / f"bundles-{f:05d}.ndjson"
        _bundle_lines(cat, chunk, tables).write_csv(path, include_header=False, quote_style="never")
        paths.append(path)
    return n_fold, paths


# ----------------------------------------------------------------------------- entry points


def generate(
    out_dir: str | Path,
    csv_rows: int,
    bundles: int,
    seed: int = 0,
    snapshots: int | None = None,
    dup_frac: float = 0.25,
) -> dict:
    """Generate the whole dataset; returns a summary dict (counts, paths, seconds)."""
    t0 = time.perf_counter()
    rows, csv_paths = write_csv_snapshots(out_dir, csv_rows, seed, snapshots, dup_frac)
    t1 = time.perf_counter()
    n_fold, b_paths = write_bundles(out_dir, bundles, seed, rows)
    t2 = time.perf_counter()
    return {
        "out_dir": str(out_dir),
        "csv_rows": csv_rows,
        "distinct_rows": int(len(rows["y50"])),
        "csv_files": len(csv_paths),
        "bundles": bundles,
        "bundles_folding": n_fold,
        "bundle_files": len(b_paths),
        "csv_seconds": round(t1 - t0, 3),
        "bundle_seconds": round(t2 - t1, 3),
        "seconds": round(t2 - t0, 3),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--csv-rows", type=int, required=True)
    ap.add_argument("--bundles", type=int, default=0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--snapshots", type=int, default=None)
    ap.add_argument("--dup-frac", type=float, default=0.25)
    ap.add_argument("--extra-snapshot", type=int, default=0, help="also write one extra snapshot of N new rows")
    a = ap.parse_args(argv)
    summary = generate(a.out, a.csv_rows, a.bundles, a.seed, a.snapshots, a.dup_frac)
    if a.extra_snapshot:
        summary["extra_snapshot"] = str(write_extra_snapshot(a.out, a.extra_snapshot, a.seed))
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
