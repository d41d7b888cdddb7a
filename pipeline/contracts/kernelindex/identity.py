"""A row's identity but its run: which rows KernelIndex maps, and the objects they resolve to.

The checks of `reconcileLiger`, in its order (`apps/web/src/server/import/liger/reconcile.ts` of
github.com/SamMausberg/KernelIndex at e6c5a71; a reading copy: ../shared/reference/kernelindex, relative to the
checkout), and the objects of `manifests.py`, cached per distinct
(kernel, pass, provider, x_name, x_value, config, GPU).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from pipeline.contracts.digests import object_digest
from pipeline.contracts.kernelindex.binders import Binding, bind
from pipeline.contracts.kernelindex.ecmascript import js_json_parse, js_number
from pipeline.contracts.kernelindex.kernels import KERNELS_BY_NAME, MODES
from pipeline.contracts.kernelindex.manifests import (
    case_key,
    environment_manifest,
    implementation_manifest,
    operation_spec,
    protocol_manifest,
    workload_manifest,
)
from pipeline.contracts.kernelindex.providers import PROVIDERS

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
    return manifest, object_digest(manifest)


@cache
def _environment(gpu_name: str) -> tuple[dict[str, Any], str] | None:
    manifest = environment_manifest(gpu_name)
    return None if manifest is None else (manifest, object_digest(manifest))


@cache
def _implementation(csv_name: str, provider: str) -> tuple[dict[str, Any], str]:
    manifest = implementation_manifest(KERNELS_BY_NAME[csv_name], provider, operation_spec(csv_name)[1])
    return manifest, object_digest(manifest)


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
    manifest = workload_manifest(KERNELS_BY_NAME[csv_name], operation_spec(csv_name)[1], binding)
    return manifest, object_digest(manifest)


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
        operation_digest=operation_spec(kernel_name)[1],
        workload=workload[0],
        workload_digest=workload[1],
        implementation=implementation[0],
        implementation_digest=implementation[1],
        protocol=protocol[0],
        protocol_digest=protocol[1],
        environment=environment[0],
        environment_digest=environment[1],
    )
