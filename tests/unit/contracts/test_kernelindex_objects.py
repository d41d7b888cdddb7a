"""Whole objects against KernelIndex's own (upstream CSV at 2120862), and the sample record from its CSV row."""

from __future__ import annotations

import gzip
import json

import pytest

from pipeline.contracts import kernelindex as ki
from pipeline.contracts.digests import canonical_json, object_digest
from tests.fixtures.shared_data import SAMPLE_RECORD, require_shared_data

# Upstream's commit 2120862 in full: the OperationSpec names its benchmark script at it (metadata only).
COMMIT_2120862 = "2120862ba532c9449e72d603ba6324310ae756e7"

# Line 1986 of upstream's CSV at b7025a7027 (header = line 1), the row the sample record was made from.
SAMPLE_ROW = {
    "kernel_name": "fused_add_rms_norm",
    "kernel_provider": "liger_fused_add_rms_norm",
    "kernel_operation_mode": "backward",
    "metric_name": "speed",
    "metric_unit": "ms",
    "x_name": "H",
    "x_label": "hidden size",
    "x_value": "1024",
    "y_value_50": "0.12591999769210815",
    "y_value_20": "0.12310399860143661",
    "y_value_80": "0.13743999600410461",
    "extra_benchmark_config_str": '{"M": 2048, "dtype": "torch.float32", "eps": 1e-06}',
    "gpu_name": "NVIDIA H100 80GB HBM3",
    "timestamp": "2026-04-07 21:27:38",
    "liger_version": "0.7.0",
}


def test_whole_objects_at_2120862():
    data = require_shared_data()
    with gzip.open(data / "kernelindex_golden" / "objects_at_2120862.json.gz", "rt") as fh:
        golden = json.load(fh)
    csv_path = data / "liger_csv_history" / "2026-08-10_2120862ba5_all_benchmark_data.csv"
    rows, _ = ki.parse_csv(csv_path.read_text(encoding="utf-8-sig"))
    made: dict[str, dict[str, dict]] = {"operations": {}, "workloads": {}, "implementations": {}}
    for run in ki.map_file(rows).runs:
        objects = run.objects(COMMIT_2120862)
        for group, kind in (
            ("operations", "OperationSpec"),
            ("workloads", "WorkloadCase"),
            ("implementations", "ImplementationRevision"),
        ):
            made[group].setdefault(objects[kind]["metadata"]["name"], objects[kind])
    assert {k: len(v) for k, v in golden.items()} == {"operations": 35, "workloads": 241, "implementations": 80}
    for group, entries in golden.items():
        assert set(made[group]) == {e["manifest"]["metadata"]["name"] for e in entries}, group
        for entry in entries:
            mine = made[group][entry["manifest"]["metadata"]["name"]]
            assert mine == entry["manifest"]  # field for field, metadata included
            assert object_digest(mine) == entry["digest"]
            if "canonical" in entry:
                body = {"apiVersion": mine["apiVersion"], "kind": mine["kind"], "spec": mine["spec"]}
                assert canonical_json(body) == entry["canonical"]


def test_sample_row_is_line_1986_of_its_csv():
    data = require_shared_data()
    csv_path = data / "liger_csv_history" / "2026-04-08_b7025a7027_all_benchmark_data.csv"
    rows, issues = ki.parse_csv(csv_path.read_text(encoding="utf-8-sig"))
    assert issues == []
    assert rows[1986 - 2] == SAMPLE_ROW


def test_sample_record_digests_from_its_csv_row_alone():
    record = json.loads(SAMPLE_RECORD.read_text())
    spec = record["run"]["spec"]
    mapped = ki.map_row(SAMPLE_ROW)
    assert isinstance(mapped, ki.MappedRow)
    assert (
        mapped.identity.workload_digest
        == spec["workloadDigest"]
        == ("sha256:17d58604971b8f043560cac520c2de4c8003a0c771587ec03750ce75167a7ed6")
    )
    assert mapped.identity.implementation_digest == spec["implementationDigest"]
    assert mapped.identity.protocol_digest == spec["protocolDigest"]
    assert mapped.identity.environment_digest == spec["environmentDigest"]
    assert mapped.external_id == spec["sourceNative"]["externalId"]
    # and whole: the run, protocol and environment the record carries are the ones made here
    assert mapped.run == record["run"]
    assert mapped.identity.protocol == record["protocol"]
    assert mapped.identity.environment == record["environment"]


def test_sample_tuple_is_shared_with_the_unfused_provider():
    # Only language, licences and pip package enter an implementation's digest: liger_rms_norm shares it.
    unfused = ki.map_row({**SAMPLE_ROW, "kernel_provider": "liger_rms_norm"})
    sample = ki.map_row(SAMPLE_ROW)
    assert isinstance(unfused, ki.MappedRow) and isinstance(sample, ki.MappedRow)
    assert {k: v for k, v in unfused.digests.items() if k != "runDigest"} == {
        k: v for k, v in sample.digests.items() if k != "runDigest"
    }
    assert unfused.run_digest != sample.run_digest
    assert unfused.external_id != sample.external_id


def test_metadata_never_enters_a_digest():
    sample = ki.map_row(SAMPLE_ROW)
    other = ki.map_row({**SAMPLE_ROW, "liger_version": "0.6.5"})
    assert sample.identity == other.identity
    assert sample.run_digest == other.run_digest
    assert ki.operation_manifest("rms_norm", "a" * 40) != ki.operation_manifest("rms_norm", "b" * 40)


@pytest.mark.parametrize(
    ("change", "reason", "key"),
    [
        ({"metric_name": "memory"}, "memoryRows", None),
        ({"kernel_name": "dpo_loss"}, "uncuratedKernels", "dpo_loss"),
        ({"kernel_operation_mode": "no-grad-forward"}, "unknownConfig", "fused_add_rms_norm"),
        ({"kernel_provider": "liger_cutile"}, "unknownProvider", "liger_cutile"),
        ({"x_value": "qwen3.5_9b"}, "unknownConfig", "fused_add_rms_norm"),
        ({"x_value": "1024.5"}, "unknownConfig", "fused_add_rms_norm"),
        ({"extra_benchmark_config_str": "{not json"}, "unknownConfig", "fused_add_rms_norm"),
        (
            {"extra_benchmark_config_str": '{"M": 2048, "dtype": "torch.float32"}'},
            "unknownConfig",
            "fused_add_rms_norm",
        ),
        (
            {"extra_benchmark_config_str": '{"M": 2048, "dtype": "torch.float32", "eps": NaN}'},
            "unknownConfig",
            "fused_add_rms_norm",
        ),
        ({"gpu_name": "NVIDIA H200"}, "unknownGpu", "NVIDIA H200"),
        ({"y_value_50": "0"}, "issues", "fused_add_rms_norm/liger_fused_add_rms_norm/1024"),
        # the pass is checked before the provider; the config after it
        ({"kernel_operation_mode": "no-grad-forward", "kernel_provider": "x"}, "unknownConfig", "fused_add_rms_norm"),
        ({"kernel_provider": "x", "x_value": "nope"}, "unknownProvider", "x"),
        ({"gpu_name": "NVIDIA H200", "x_value": "nope"}, "unknownConfig", "fused_add_rms_norm"),
    ],
)
def test_skip_reasons(change, reason, key):
    skip = ki.map_row({**SAMPLE_ROW, **change})
    assert isinstance(skip, ki.Skip)
    assert (skip.reason, skip.key) == (reason, key)


def test_float_config_values_bind_as_integers():
    # JSON.parse gives doubles: 2048.0 is the integer 2048, so the workload is the same one.
    row = {
        **SAMPLE_ROW,
        "extra_benchmark_config_str": '{"M": 2048.0, "dtype": "torch.float32", "eps": 0.000001}',
        "x_value": "1024.0",
    }
    assert ki.map_row(row).identity.workload_digest == ki.map_row(SAMPLE_ROW).identity.workload_digest


def test_duplicates_within_a_file_count_once_and_the_first_wins():
    second = {**SAMPLE_ROW, "y_value_50": "0.2"}
    mapped = ki.map_file([SAMPLE_ROW, second, {**SAMPLE_ROW, "metric_name": "memory"}])
    assert mapped.skipped["duplicateRows"] == 1
    assert mapped.skipped["memoryRows"] == 1
    assert [r.run["spec"]["sourceNative"]["metrics"]["ms_50"] for r in mapped.runs] == [0.12591999769210815]


def test_identity_is_cached_per_distinct_key():
    args = tuple(SAMPLE_ROW[c] for c in ki.IDENTITY_COLUMNS)
    assert ki.resolve_identity(*args) is ki.resolve_identity(*args)
