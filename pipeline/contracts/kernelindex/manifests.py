"""The five objects a row points at, as `apps/web/src/server/import/liger/normalize.ts` makes them
(`operationFromKernel`, `caseKey`, `caseFromRow`, `implementationFromProvider`, `ligerProtocol`, `ligerEnvironment`),
github.com/SamMausberg/KernelIndex at e6c5a71 (a reading copy: ../shared/reference/kernelindex, relative to the
checkout).

Each object's digest is `object_digest` (contracts/digests.py); `metadata` never enters a digest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any

from pipeline.contracts.digests import object_digest
from pipeline.contracts.kernelindex.binders import Binding
from pipeline.contracts.kernelindex.ecmascript import js_number_to_string, js_value
from pipeline.contracts.kernelindex.kernels import KERNELS_BY_NAME, MODES
from pipeline.contracts.kernelindex.liger_types import API_VERSION, LIGER_REPO_URL
from pipeline.contracts.kernelindex.providers import HARDWARE, PROVIDERS
from pipeline.contracts.kernelindex.shared import evaluate_axis_expression, kebab, locale_key


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
def operation_spec(csv_name: str) -> tuple[dict[str, Any], str]:
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
    return spec, object_digest({"apiVersion": API_VERSION, "kind": "OperationSpec", "spec": spec})


def operation_digest(csv_name: str) -> str | None:
    """The OperationSpec digest of a curated kernel (KernelIndex makes it for every row of the kernel), else None."""
    return operation_spec(csv_name)[1] if csv_name in KERNELS_BY_NAME else None


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
        "spec": operation_spec(csv_name)[0],
    }


def case_key(binding: Binding) -> str:
    """`caseKey`: axis bindings sorted with localeCompare, then the float dtype: `hidden1024-rows2048-fp32`."""
    axes = sorted(binding["axes"].items(), key=lambda kv: locale_key(kv[0]))
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
