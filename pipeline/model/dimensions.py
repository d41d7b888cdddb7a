"""kernelindex-shaped objects the pipeline derives from CSV rows, one per distinct key.

They are hashed with the same rule as records (see digests.py), so a dimension digest
means the same thing whether it came from a record or from a CSV row.
"""

from __future__ import annotations

import json
from typing import Any

from pipeline.config import API_VERSION
from pipeline.contracts import kernelindex as ki
from pipeline.contracts.digests import canonical_json, object_digest
from pipeline.contracts.rules import slug

HARNESS = {"name": "Liger-Kernel benchmark scripts", "repository": "https://github.com/linkedin/Liger-Kernel"}


def _obj(kind: str, spec: dict[str, Any], name: str, title: str) -> dict[str, Any]:
    return {"apiVersion": API_VERSION, "kind": kind, "spec": spec, "metadata": {"name": name, "title": title}}


# What the bisect harness writes for a value it could not find (bisect/harness.py): not a version.
NOT_RECORDED = "not recorded"
# KernelIndex's schema caps a software version at 100 characters (schemas/kinds.ts, ExecutionEnvironment).
_VERSION_MAX = 100


def toolchain(environment_json: str | None) -> dict[str, Any]:
    """``spec.software`` in KernelIndex's field names (``driver``, ``cudaToolkit``, ``framework {name,
    version}``, ``libraries``) from a commit run's environment.json (canonical JSON text, untrusted):
    only what it records as a non-empty string is kept, nothing is guessed; no file gives ``{}``."""
    env = json.loads(environment_json) if environment_json else {}

    def recorded(key: str) -> str | None:
        value = env.get(key)
        text = value.strip() if isinstance(value, str) else ""
        # too long for KernelIndex's schema: not cut (a cut version would be a guess), left out
        return text if text and text != NOT_RECORDED and len(text) <= _VERSION_MAX else None

    software: dict[str, Any] = {}
    if driver := recorded("driver"):
        software["driver"] = driver
    if cuda := recorded("cuda"):
        software["cudaToolkit"] = cuda
    if torch := recorded("torch"):
        software["framework"] = {"name": "torch", "version": torch}
    if triton := recorded("triton"):
        software["libraries"] = {"triton": triton}
    return software


def environment(gpu_name: str, source_environment: str | None = None) -> dict[str, Any]:
    """The ExecutionEnvironment of a CSV row: its GPU, and the toolchain its source recorded (a commit
    run's environment.json); an upstream CSV records none, so its ``software`` stays ``{}``."""
    vendor = gpu_name.split()[0].lower() if gpu_name.split() else "unknown"
    spec = {"hardware": {"vendor": vendor, "product": gpu_name}, "software": toolchain(source_environment)}
    return _obj("ExecutionEnvironment", spec, f"liger-bench-{slug(gpu_name)}", f"Liger benchmark host · {gpu_name}")


def protocol(mode: str, metric_name: str, metric_unit: str) -> dict[str, Any]:
    timed = metric_unit == "ms"
    spec = {
        "harness": HARNESS,
        "measurement": {
            "metric": metric_name,
            "unit": metric_unit,
            "instrument": "cuda_events" if timed else "torch.cuda.max_memory_allocated",
            "primaryStatistic": "median",
            "spread": ["p20", "p80"],
        },
        "pass": mode,
        "comparability": {"family": "liger_kernel_bench"},
    }
    return _obj(
        "BenchmarkProtocol",
        spec,
        f"liger-bench-{slug(metric_name)}-{slug(mode)}",
        f"Liger benchmark · {metric_name} · {mode}",
    )


def workload(kernel: str, x_name: str | None, x_value: str | None, config: str | None) -> dict[str, Any]:
    spec = {
        "kernel": kernel,
        "x": {"name": x_name, "value": x_value},
        "config": json.loads(config) if config is not None else None,
    }
    return _obj("BenchmarkWorkload", spec, slug(f"{kernel}-{x_name}-{x_value}"), f"{kernel} · {x_name}={x_value}")


def implementation(kernel: str, provider: str | None, version: str | None) -> dict[str, Any]:
    spec = {"kernel": kernel, "provider": provider, "ligerVersion": version}
    return _obj(
        "KernelImplementation", spec, slug(f"{kernel}-{provider}-{version}"), f"{kernel} · {provider} · {version}"
    )


def operation(kernel: str) -> dict[str, Any]:
    """The OperationSpec of a kernel. A curated kernel's is KernelIndex's own (contracts/kernelindex/manifests.py; no
    commit in its metadata's sourceRefs). Any other kernel gets a minimal one by this rule: family = the kernel
    name, no axes, no tensors, semantics unspecified -- it names the computation, nothing more."""
    if kernel in ki.KERNELS_BY_NAME:
        return ki.operation_manifest(kernel)
    spec = {
        "family": kernel,
        "axes": {},
        "inputs": [],
        "outputs": [],
        "semantics": {"mutation": "none", "determinism": "unspecified"},
    }
    return {
        "apiVersion": API_VERSION,
        "kind": "OperationSpec",
        "metadata": {"name": f"liger-bench-{slug(kernel)}", "title": kernel},
        "spec": spec,
    }


def describe(obj: dict[str, Any]) -> dict[str, str]:
    """digest + the whole object as canonical JSON, as stored in a dim table."""
    return {
        "digest": object_digest(obj),
        "api_version": obj["apiVersion"],
        "kind": obj["kind"],
        "object_json": canonical_json(obj),
    }
