"""KernelIndex's hardware, project and provider tables as data: `HARDWARE`, `PROJECTS` and `PROVIDERS` of
`apps/web/src/server/import/liger/normalize.ts`, github.com/SamMausberg/KernelIndex at e6c5a71 (a reading copy:
../shared/reference/kernelindex, relative to the checkout).
"""

from __future__ import annotations

from pipeline.contracts.kernelindex.liger_types import LIGER_REPO_URL

# HARDWARE: GPU name as the CSV writes it -> hardware spec
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

# PROJECTS: the software projects providers belong to
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

# PROVIDERS: kernel_provider -> implementation facts
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
