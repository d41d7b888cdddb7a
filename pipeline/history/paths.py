"""Which paths of a Liger-Kernel commit belong to which kernel: THE rule (``touches_kernel``),
applied wherever commits meet kernels (suspects, alerts' causes, the gate, the bisect)."""

from __future__ import annotations

import re
from collections.abc import Iterable

KERNEL_ROOT = "src/liger_kernel/"

# THE rule deciding whether a source file belongs to a kernel. Paths are relative to src/liger_kernel/.
# 1. SHARED_FILES count for every kernel.
# 2. A file whose stem (name without .py), split on "_", is a contiguous run of the kernel name's tokens:
#    ops/rms_norm.py -> rms_norm, fused_add_rms_norm; chunked_loss/cpo_loss.py -> fused_linear_cpo_loss;
#    ops/cross_entropy.py -> cross_entropy, fused_linear_cross_entropy. Any folder: ops/, transformers/,
#    chunked_loss/, ops/experimental/, ops/cutile/... The kernel name is lower-cased and loses a config
#    suffix "_<key>=<value>" (dyt_beta=False -> dyt).
#    Except OTHER_DEVICE_BACKENDS: upstream's ops/backends/ holds "operator implementations for devices other
#    than the default (CUDA)" (Ascend NPU), which never run on the NVIDIA GPUs its benchmarks measure; the
#    v0.7.0-era NPU commits otherwise read as code changes of softmax, rms_norm, layer_norm (issue 42).
# 3. FAMILY_FILES: the base classes of chunked losses count for every kernel whose name has the token "loss".
# 4. KERNEL_ALIASES: kernels implemented in a file whose name is not theirs.
# Over-inclusive on purpose (a suspect list, not a verdict): ops/jsd.py also counts for distill_jsd_loss.
SHARED_FILES = frozenset({"ops/utils.py", "utils.py"})
OTHER_DEVICE_BACKENDS = "ops/backends/"
FAMILY_FILES = {
    "loss": frozenset(
        {
            "chunked_loss/fused_linear_preference.py",
            "chunked_loss/fused_linear_distillation.py",
            "chunked_loss/fused_linear_ppo.py",
            "chunked_loss/fused_linear_unpaired_preference.py",
        }
    ),
}
KERNEL_ALIASES = {
    "tiled_geglu": ("tiled_mlp",),
    "tiled_swiglu": ("tiled_mlp",),
    "distill_cosine_loss": ("cosine_similarity_loss",),
}


def kernel_tokens(kernel_name: str) -> tuple[str, ...]:
    name = kernel_name.strip().lower()
    name = re.sub(r"_[a-z0-9]+=.*$", "", name)
    return tuple(t for t in re.split(r"[^a-z0-9]+", name) if t)


def _contains_run(tokens: tuple[str, ...], run: tuple[str, ...]) -> bool:
    n = len(run)
    return n > 0 and any(tokens[i : i + n] == run for i in range(len(tokens) - n + 1))


def touches_kernel(paths: Iterable[str], kernel_name: str) -> bool:
    """Whether any of ``paths`` (repository paths) is source of ``kernel_name`` under the rule above."""
    tokens = kernel_tokens(kernel_name)
    if not tokens:
        return False
    name = "_".join(tokens)
    stems = {tuple(a.split("_")) for a in KERNEL_ALIASES.get(name, ())}
    families = [files for token, files in FAMILY_FILES.items() if token in tokens]
    for path in paths:
        if not path.startswith(KERNEL_ROOT):
            continue
        rel = path[len(KERNEL_ROOT) :]
        if rel.startswith(OTHER_DEVICE_BACKENDS):
            continue
        if rel in SHARED_FILES or any(rel in files for files in families):
            return True
        if not rel.endswith(".py"):
            continue
        stem = tuple(t for t in rel.rsplit("/", 1)[-1][:-3].lower().split("_") if t)
        if stem in stems or _contains_run(tokens, stem):
            return True
    return False
