"""A row's `BenchmarkRun`: `runFromRow` of `apps/web/src/server/import/liger/normalize.ts`,
github.com/SamMausberg/KernelIndex at e6c5a71 (a reading copy: ../shared/reference/kernelindex, relative to the
checkout).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pipeline.contracts.kernelindex.ecmascript import MAX_SAFE_INTEGER, js_number, js_round, js_value, ms_to_ns
from pipeline.contracts.kernelindex.identity import Identity
from pipeline.contracts.kernelindex.kernels import KERNELS_BY_NAME
from pipeline.contracts.kernelindex.liger_types import API_VERSION, SOURCE_SLUG
from pipeline.contracts.kernelindex.shared import kebab, to_utc_instant


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
    if median > MAX_SAFE_INTEGER:  # the schema's durationNs is a safe integer
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
    if js_round(ms50 * 1_000_000) > MAX_SAFE_INTEGER:
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
