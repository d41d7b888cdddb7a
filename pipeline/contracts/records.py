"""kernelindex.dev/v1alpha1 record models (pydantic v2).

Unknown fields are kept (``extra="allow"``) because digests cover the whole spec: dropping
a field we do not model would change the digest.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from pipeline.config import API_VERSION

DIGEST_PATTERN = r"^sha256:[0-9a-f]{64}$"
BENCHMARK_PATTERN = r"^[^/]+/[^/]+$"


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Metadata(_Open):
    name: str | None = None
    title: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)


class SourceNative(_Open):
    source: str | None = None
    benchmark: str = Field(pattern=BENCHMARK_PATTERN, description="'<kernel>/<pass>' as upstream names it")
    externalId: str | None = Field(
        default=None, description="<kernel>/<pass>/<provider>/<gpu-slug>/<workload-slug>/<YYYY-MM-DD-HH-MM-SS>"
    )
    metrics: dict[str, float] = Field(default_factory=dict, description="ms_20 / ms_50 / ms_80")


class Measurement(_Open):
    metric: str
    statistic: str
    unit: str
    value: float


class RunSpec(_Open):
    status: str | None = None
    observedAt: datetime
    protocolDigest: str = Field(pattern=DIGEST_PATTERN)
    environmentDigest: str = Field(pattern=DIGEST_PATTERN)
    workloadDigest: str = Field(pattern=DIGEST_PATTERN)
    implementationDigest: str = Field(pattern=DIGEST_PATTERN)
    measurements: list[Measurement] = Field(default_factory=list)
    sourceNative: SourceNative


class BenchmarkRun(_Open):
    apiVersion: Literal["kernelindex.dev/v1alpha1"] = API_VERSION
    kind: Literal["BenchmarkRun"] = "BenchmarkRun"
    metadata: Metadata = Field(default_factory=Metadata)
    spec: RunSpec


class _SpecObject(_Open):
    """A kernelindex object whose spec is free-form (hashed whole, so never trimmed)."""

    apiVersion: Literal["kernelindex.dev/v1alpha1"] = API_VERSION
    metadata: Metadata = Field(default_factory=Metadata)
    spec: dict[str, Any]


class BenchmarkProtocol(_SpecObject):
    kind: Literal["BenchmarkProtocol"] = "BenchmarkProtocol"


class ExecutionEnvironment(_SpecObject):
    kind: Literal["ExecutionEnvironment"] = "ExecutionEnvironment"


class BenchmarkWorkload(_SpecObject):
    """Derived from CSV rows: what was run (kernel, x point, config)."""

    kind: Literal["BenchmarkWorkload"] = "BenchmarkWorkload"


class KernelImplementation(_SpecObject):
    """Derived from CSV rows: which code ran (kernel, provider, Liger release)."""

    kind: Literal["KernelImplementation"] = "KernelImplementation"


class Bundle(BaseModel):
    model_config = ConfigDict(extra="allow")
    run: BenchmarkRun
    protocol: BenchmarkProtocol
    environment: ExecutionEnvironment


def run_string_patterns() -> dict[str, str]:
    """JSON path in a bundle -> regex, for every pattern-constrained string of a run.

    The kernelindex reader checks these in SQL (one pass over all lines, no per-record pydantic),
    so the model stays the one statement of what a valid run looks like.
    """
    found: dict[str, str] = {}
    nested = {"spec": ("$.run.spec", RunSpec), "sourceNative": ("$.run.spec.sourceNative", SourceNative)}
    for prefix, model in nested.values():
        for name, info in model.model_fields.items():
            pattern = next((m.pattern for m in info.metadata if getattr(m, "pattern", None)), None)
            if pattern is not None:
                found[f"{prefix}.{name}"] = pattern
    return found


RUN_KIND: str = BenchmarkRun.model_fields["kind"].default


SCHEMA_MODELS = {
    "BenchmarkRun": BenchmarkRun,
    "BenchmarkProtocol": BenchmarkProtocol,
    "ExecutionEnvironment": ExecutionEnvironment,
    "BenchmarkWorkload": BenchmarkWorkload,
    "KernelImplementation": KernelImplementation,
    "Bundle": Bundle,
}


def export_json_schemas(out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, model in SCHEMA_MODELS.items():
        path = out_dir / f"{name}.schema.json"
        path.write_text(json.dumps(model.model_json_schema(), indent=2, sort_keys=True) + "\n")
        written.append(path)
    return written
