"""The straightforward implementation: the same normalization, written the way a user would.

csv.DictReader row by row, a pydantic model per row, json canonicalization of the config,
hashlib per row for the measurement digest and for each of the four dimension objects,
facts deduplicated in a dict, bundles read with json.loads + a pydantic model per record
with their protocol/environment digests verified, and the fact table written with pyarrow
at the end.  No vectorization, no caching of repeated work: this is the yardstick the
pipeline is compared against (see bench/run.py).

Fold rule for bundles: a bundle whose (kernel, pass, provider, gpu slug, timestamp,
p20/p50/p80) equals a CSV speed row corroborates that fact instead of adding a new one.
"""

from __future__ import annotations

import argparse
import csv
import glob
import hashlib
import json
import os
import re
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

API_VERSION = "kernelindex.dev/v1alpha1"
HARNESS = {"name": "Liger-Kernel benchmark scripts", "repository": "https://github.com/linkedin/Liger-Kernel"}
KEY_FIELDS = (
    "kernel_name",
    "kernel_provider",
    "kernel_operation_mode",
    "metric_name",
    "x_name",
    "x_value",
    "extra_config",
    "gpu_name",
    "observed_at_text",
    "liger_version",
)
DIGEST = r"^sha256:[0-9a-f]{64}$"


# ----------------------------------------------------------------------------- models


class CsvRow(BaseModel):
    kernel_name: str = Field(min_length=1)
    kernel_provider: str = Field(min_length=1)
    kernel_operation_mode: str = Field(min_length=1)
    metric_name: str = Field(min_length=1)
    metric_unit: str = Field(min_length=1)
    x_name: str = Field(min_length=1)
    x_label: str | None = None
    x_value: str = Field(min_length=1)
    y_value_50: float
    y_value_20: float
    y_value_80: float
    extra_benchmark_config_str: str
    gpu_name: str = Field(min_length=1)
    timestamp: datetime
    liger_version: str = Field(min_length=1)

    @model_validator(mode="after")
    def _quantiles_ordered(self):
        if not (self.y_value_20 <= self.y_value_50 <= self.y_value_80):
            raise ValueError("quantiles out of order")
        return self


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Metadata(_Open):
    name: str | None = None
    title: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)


class SourceNative(_Open):
    source: str | None = None
    benchmark: str
    externalId: str
    metrics: dict[str, float]


class Measurement(_Open):
    metric: str
    statistic: str
    unit: str
    value: float


class RunSpec(_Open):
    status: str | None = None
    observedAt: datetime
    protocolDigest: str = Field(pattern=DIGEST)
    environmentDigest: str = Field(pattern=DIGEST)
    workloadDigest: str = Field(pattern=DIGEST)
    implementationDigest: str = Field(pattern=DIGEST)
    measurements: list[Measurement] = Field(default_factory=list)
    sourceNative: SourceNative


class Run(_Open):
    apiVersion: str
    kind: str
    metadata: Metadata = Field(default_factory=Metadata)
    spec: RunSpec


class Obj(_Open):
    apiVersion: str
    kind: str
    metadata: Metadata = Field(default_factory=Metadata)
    spec: dict[str, Any]


class Bundle(_Open):
    run: Run
    protocol: Obj
    environment: Obj


# ----------------------------------------------------------------------------- digests and dimensions


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def object_digest(obj: dict) -> str:
    text = canonical({"apiVersion": obj["apiVersion"], "kind": obj["kind"], "spec": obj["spec"]})
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def environment(gpu_name: str) -> dict:
    spec = {"hardware": {"vendor": gpu_name.split()[0].lower(), "product": gpu_name}, "software": {}}
    return {
        "apiVersion": API_VERSION,
        "kind": "ExecutionEnvironment",
        "spec": spec,
        "metadata": {"name": f"liger-bench-{slug(gpu_name)}"},
    }


def protocol(mode: str, metric: str, unit: str) -> dict:
    spec = {
        "harness": HARNESS,
        "measurement": {
            "metric": metric,
            "unit": unit,
            "instrument": "cuda_events" if unit == "ms" else "torch.cuda.max_memory_allocated",
            "primaryStatistic": "median",
            "spread": ["p20", "p80"],
        },
        "pass": mode,
        "comparability": {"family": "liger_kernel_bench"},
    }
    return {"apiVersion": API_VERSION, "kind": "BenchmarkProtocol", "spec": spec, "metadata": {}}


def workload(kernel: str, x_name: str, x_value: str, config: str) -> dict:
    spec = {"kernel": kernel, "x": {"name": x_name, "value": x_value}, "config": json.loads(config)}
    return {"apiVersion": API_VERSION, "kind": "BenchmarkWorkload", "spec": spec, "metadata": {}}


def implementation(kernel: str, provider: str, version: str) -> dict:
    spec = {"kernel": kernel, "provider": provider, "ligerVersion": version}
    return {"apiVersion": API_VERSION, "kind": "KernelImplementation", "spec": spec, "metadata": {}}


def measurement_digest(fields: dict) -> str:
    text = chr(31).join(str(fields[k]) for k in KEY_FIELDS)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


# ----------------------------------------------------------------------------- the run


def _csv_files(data_dir: Path) -> list[str]:
    return sorted(glob.glob(str(data_dir / "liger_csv" / "*.csv")))


def _bundle_files(data_dir: Path) -> list[str]:
    d = data_dir / "kernelindex"
    return sorted(glob.glob(str(d / "*.ndjson")) + glob.glob(str(d / "*.json")))


@dataclass
class _Normalized:
    """The baseline's state: facts by digest, the fold index, and the counts `run_baseline` returns."""

    facts: dict[str, dict] = field(default_factory=dict)
    fold_index: dict[tuple, str] = field(default_factory=dict)
    counts: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(
            ("csv_rows", "bundles", "duplicates", "conflicts", "quarantined", "folded", "standalone", "bad_digests"), 0
        )
    )

    def add_csv_row(self, raw: dict, source: str) -> None:
        self.counts["csv_rows"] += 1
        try:
            row = CsvRow.model_validate(raw)
            config = canonical(json.loads(row.extra_benchmark_config_str))
        except (ValidationError, ValueError):
            self.counts["quarantined"] += 1
            return
        ts_text = row.timestamp.strftime("%Y-%m-%d %H:%M:%S")
        key = {
            "kernel_name": row.kernel_name,
            "kernel_provider": row.kernel_provider,
            "kernel_operation_mode": row.kernel_operation_mode,
            "metric_name": row.metric_name,
            "x_name": row.x_name,
            "x_value": row.x_value,
            "extra_config": config,
            "gpu_name": row.gpu_name,
            "observed_at_text": ts_text,
            "liger_version": row.liger_version,
        }
        digest = measurement_digest(key)
        fact = {
            "measurement_digest": digest,
            "environment_digest": object_digest(environment(row.gpu_name)),
            "protocol_digest": object_digest(protocol(row.kernel_operation_mode, row.metric_name, row.metric_unit)),
            "workload_digest": object_digest(workload(row.kernel_name, row.x_name, row.x_value, config)),
            "implementation_digest": object_digest(
                implementation(row.kernel_name, row.kernel_provider, row.liger_version)
            ),
            **key,
            "metric_unit": row.metric_unit,
            "observed_at": row.timestamp,
            "p20": row.y_value_20,
            "p50": row.y_value_50,
            "p80": row.y_value_80,
            "source": "csv",
            "source_file": source,
            "external_id": None,
        }
        old = self.facts.get(digest)
        if old is not None:
            self.counts["duplicates"] += 1
            if (old["p20"], old["p50"], old["p80"]) != (fact["p20"], fact["p50"], fact["p80"]):
                self.counts["conflicts"] += 1
            return
        self.facts[digest] = fact
        if row.metric_unit == "ms":
            quantiles = (row.y_value_20, row.y_value_50, row.y_value_80)
            gpu = slug(row.gpu_name)
            self.fold_index[
                (row.kernel_name, row.kernel_operation_mode, row.kernel_provider, gpu, ts_text, *quantiles)
            ] = digest

    def add_bundle(self, line: str, source: str) -> None:
        self.counts["bundles"] += 1
        try:
            raw = json.loads(line)
            b = Bundle.model_validate(raw)
        except (ValidationError, ValueError):
            self.counts["quarantined"] += 1
            return
        spec = b.run.spec
        if (
            object_digest(raw["protocol"]) != spec.protocolDigest
            or object_digest(raw["environment"]) != spec.environmentDigest
        ):
            self.counts["bad_digests"] += 1
            return
        ext = spec.sourceNative.externalId.split("/")
        m = spec.sourceNative.metrics
        ts_text = spec.observedAt.strftime("%Y-%m-%d %H:%M:%S")
        hit = self.fold_index.get((*ext[:4], ts_text, m.get("ms_20"), m.get("ms_50"), m.get("ms_80")))
        if hit is not None:
            self.facts[hit]["source"] = "csv+kernelindex"
            self.facts[hit]["external_id"] = spec.sourceNative.externalId
            self.counts["folded"] += 1
            return
        digest = object_digest(raw["run"])
        if digest in self.facts:
            self.counts["duplicates"] += 1
            return
        self.counts["standalone"] += 1
        self.facts[digest] = _record_fact(digest, b, ext, ts_text, source)


def _record_fact(digest: str, b: Bundle, ext: list[str], ts_text: str, source: str) -> dict:
    spec, m = b.run.spec, b.run.spec.sourceNative.metrics
    return {
        "measurement_digest": digest,
        "environment_digest": spec.environmentDigest,
        "protocol_digest": spec.protocolDigest,
        "workload_digest": spec.workloadDigest,
        "implementation_digest": spec.implementationDigest,
        "kernel_name": ext[0],
        "kernel_provider": ext[2],
        "kernel_operation_mode": ext[1],
        "metric_name": "speed",
        "x_name": None,
        "x_value": None,
        "extra_config": None,
        "gpu_name": ext[3],
        "observed_at_text": ts_text,
        "liger_version": b.run.metadata.labels.get("liger_version"),
        "metric_unit": "ms",
        "observed_at": spec.observedAt.replace(tzinfo=None),
        "p20": m.get("ms_20"),
        "p50": m.get("ms_50"),
        "p80": m.get("ms_80"),
        "source": "kernelindex",
        "source_file": source,
        "external_id": spec.sourceNative.externalId,
    }


def run_baseline(data_dir: str | Path, out_dir: str | Path, include_bundles: bool = True) -> dict:
    """Normalize data_dir/liger_csv/*.csv (+ data_dir/kernelindex/*.ndjson) into out_dir/facts.parquet.

    Returns counts: rows (CSV rows + bundles read), csv_rows, bundles, facts (total distinct),
    csv_facts (distinct CSV identity keys), folded, standalone, duplicates, conflicts,
    quarantined, bad_digests, seconds.
    """
    t0 = time.perf_counter()
    data_dir, out_dir = Path(data_dir), Path(out_dir)
    state = _Normalized()
    for path in _csv_files(data_dir):
        with open(path, newline="", encoding="utf-8") as fh:
            for raw in csv.DictReader(fh):
                state.add_csv_row(raw, os.path.basename(path))
    csv_facts = len(state.facts)
    if include_bundles:
        for path in _bundle_files(data_dir):
            with open(path, encoding="utf-8") as fh:
                texts = fh if path.endswith(".ndjson") else [fh.read()]
                for line in texts:
                    if line.strip():
                        state.add_bundle(line, os.path.basename(path))
    out_dir.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(list(state.facts.values())), out_dir / "facts.parquet")
    c = state.counts
    return {
        "rows": c["csv_rows"] + c["bundles"],
        "csv_rows": c["csv_rows"],
        "bundles": c["bundles"],
        "facts": len(state.facts),
        "csv_facts": csv_facts,
        **{k: c[k] for k in ("folded", "standalone", "duplicates", "conflicts", "quarantined", "bad_digests")},
        "seconds": round(time.perf_counter() - t0, 3),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="straightforward csv/json/pydantic/hashlib normalization")
    ap.add_argument("data_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--no-bundles", action="store_true")
    a = ap.parse_args(argv)
    print(json.dumps(run_baseline(a.data_dir, a.out_dir, include_bundles=not a.no_bundles)))


if __name__ == "__main__":
    main()
