"""Which paths of a Liger-Kernel commit belong to which kernel: THE rule (``touches_kernel``),
applied wherever commits meet kernels (suspects, alerts' causes, the gate, the bisect); and which
change how a kernel is measured (``touches_harness``: its benchmark script, or a shared harness
definition the script uses, compared as ASTs)."""

from __future__ import annotations

import ast
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


# ----------------------------------------------------------------------------------------------------------------
# which kernels' harness a commit touches (issue 54): how a kernel is measured, not what it computes
HARNESS_ROOT = "benchmark/scripts/"
# Modules of upstream's harness that every script may import from. A change to one counts for a kernel only
# where it changes a definition (function, class or top-level assignment, compared as ASTs) that the kernel's
# script uses, directly or through other definitions of that module: an added helper nobody calls changes
# nothing. benchmark_model_configs.py arrived with the refactor of issue 54 (c2f4c020, #1116).
HARNESS_SHARED = frozenset({"benchmark/scripts/utils.py", "benchmark/scripts/benchmark_model_configs.py"})
# A harness change, as commit_change.harness_changes lists it: a changed script's path, or
# "<script path> <- <shared module path>:<definition>" for a changed definition of a shared module that the
# script (as of that commit) uses.
HARNESS_VIA = " <- "


def is_harness_script(path: str) -> bool:
    """A kernel's benchmark script: benchmark/scripts/benchmark_<name>.py (not a shared module)."""
    rest = path[len(HARNESS_ROOT) :] if path.startswith(HARNESS_ROOT) else ""
    return "/" not in rest and rest.startswith("benchmark_") and rest.endswith(".py") and path not in HARNESS_SHARED


def harness_script_measures(script: str, kernel_name: str) -> bool:
    """Whether ``script`` (benchmark/scripts/benchmark_<name>.py) measures ``kernel_name``: <name>'s tokens
    are a contiguous run of the kernel's (benchmark_cpo_loss.py -> fused_linear_cpo_loss, benchmark_dyt.py
    -> dyt_beta=False), or a KERNEL_ALIASES name (benchmark_tiled_mlp.py -> tiled_geglu). Over-inclusive as
    touches_kernel is: benchmark_rms_norm.py also counts for fused_add_rms_norm."""
    if not is_harness_script(script):
        return False
    tokens = kernel_tokens(kernel_name)
    stem = tuple(t for t in script.rsplit("/", 1)[-1][len("benchmark_") : -3].lower().split("_") if t)
    aliases = {tuple(a.split("_")) for a in KERNEL_ALIASES.get("_".join(tokens), ())}
    return stem in aliases or _contains_run(tokens, stem)


def touches_harness(changes: Iterable[str], kernel_name: str) -> tuple[str, ...]:
    """THE harness rule: which of a commit's harness ``changes`` (see HARNESS_VIA) change how ``kernel_name``
    is measured, as short labels: a changed script (``benchmark_dyt.py``), then per shared module the changed
    definitions the script uses (``utils.py:run_memory_benchmark,run_speed_benchmark``); empty: none."""
    scripts: list[str] = []
    modules: dict[str, list[str]] = {}
    for change in changes:
        script, _, via = change.partition(HARNESS_VIA)
        if not harness_script_measures(script, kernel_name):
            continue
        if not via:
            scripts.append(script.rsplit("/", 1)[-1])
            continue
        module, _, name = via.rpartition(":")
        modules.setdefault(module.rsplit("/", 1)[-1], []).append(name)
    labels = sorted(set(scripts)) + [f"{m}:{','.join(sorted(set(n)))}" for m, n in sorted(modules.items())]
    return tuple(labels)


def _definitions(source: str | None) -> dict[str, tuple[str, frozenset[str]]]:
    """A module's top-level definitions: name -> (its AST, without positions; the names it refers to).
    Unparsable or absent source: no definitions (a module that does not parse measures nothing)."""
    try:
        tree = ast.parse(source or "")
    except (SyntaxError, ValueError):
        return {}
    out: dict[str, tuple[str, frozenset[str]]] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        else:
            continue
        for name in names:
            out[name] = (ast.dump(node, include_attributes=False), _referenced(node))
    return out


def _referenced(node) -> frozenset[str]:
    names: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            names.add(n.id)
        elif isinstance(n, ast.Attribute):
            names.add(n.attr)
        elif isinstance(n, ast.alias):
            names.add(n.asname or n.name.rsplit(".", 1)[-1])
    return frozenset(names)


def changed_definitions(old_source: str | None, new_source: str | None) -> frozenset[str]:
    """Top-level definitions of a module that differ between two versions of its source (added, removed or
    changed, compared as ASTs: comments and formatting do not count)."""
    old, new = _definitions(old_source), _definitions(new_source)
    return frozenset(n for n in old.keys() | new.keys() if (old.get(n) or ("",))[0] != (new.get(n) or ("",))[0])


def used_definitions(script_source: str | None, module_source: str | None) -> frozenset[str]:
    """The definitions of a shared module that a script uses: named in the script, and everything those
    definitions name in turn within the module (a helper's helper counts)."""
    try:
        wanted = set(_referenced(ast.parse(script_source or "")))
    except (SyntaxError, ValueError):
        return frozenset()
    defs = _definitions(module_source)
    used: set[str] = set()
    stack = [n for n in wanted if n in defs]
    while stack:
        name = stack.pop()
        if name in used:
            continue
        used.add(name)
        stack.extend(n for n in defs[name][1] if n in defs and n not in used)
    return frozenset(used)
