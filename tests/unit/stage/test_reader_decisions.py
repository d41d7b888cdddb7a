"""Decisions the readers and source discovery make on their own, checked on real files: timestamps are
normalized to UTC (no zone = UTC), a config is identified by its canonical JSON, and a run is valid
exactly when the pydantic model says so."""

from __future__ import annotations

import copy
import json
from datetime import datetime

import pyarrow.parquet as pq
import pytest
from pydantic import ValidationError

from pipeline.contracts.digests import measurement_digest
from pipeline.contracts.reasons import Reason
from pipeline.contracts.records import Bundle
from pipeline.ingest.discovery import discover
from pipeline.stage.csv_reader import stage_csv_file
from pipeline.stage.kernelindex_reader import stage_kernelindex_file
from tests.conftest import SAMPLE_RECORD
from tests.fixtures.runs import HEADER, row


def staged(tmp_path, name: str, text: str) -> list[dict]:
    src = tmp_path / name
    src.write_text(text)
    dest = tmp_path / f"{name}.parquet"
    (stage_csv_file if name.endswith(".csv") else stage_kernelindex_file)(src, dest)
    return sorted(pq.read_table(dest).to_pylist(), key=lambda r: r["location"])


def test_zoned_csv_timestamps_are_normalized_to_utc(tmp_path):
    stamps = ["2024-09-03 15:31:39+02:00", "2024-09-03T13:31:39Z", "2024-09-03 13:31:39", "2024-09-03T08:31:39-05:00"]
    rows = staged(tmp_path, "zones.csv", HEADER + "\n" + "\n".join(row(ts=ts) for ts in stamps) + "\n")
    assert [r["reason"] for r in rows] == [None] * 4
    assert {r["observed_at_text"] for r in rows} == {"2024-09-03 13:31:39"}
    assert {str(r["observed_at"]) for r in rows} == {"2024-09-03 13:31:39"}
    # One instant, one identity: the four rows are one measurement, with the documented digest.
    expected = measurement_digest(
        kernel_name="ce",
        kernel_provider="liger",
        kernel_operation_mode="forward",
        metric_name="speed",
        x_name="V",
        x_value="1",
        extra_config='{"B":8}',
        gpu_name="NVIDIA A100",
        observed_at_text="2024-09-03 13:31:39",
        liger_version="0.2.1",
        p20=0.4,
        p50=0.5,
        p80=0.6,
        occurrence=1,
    )
    assert {r["measurement_digest"] for r in rows} == {expected}


def test_config_is_identified_by_its_canonical_json(tmp_path):
    configs = ['"{""B"": 8, ""T"": 1024}"', '"{""T"":1024,""B"":8}"', '"{ ""T"" : 1024 , ""B"" : 8 }"']
    rows = staged(tmp_path, "configs.csv", HEADER + "\n" + "\n".join(row(cfg=c) for c in configs) + "\n")
    assert {r["extra_config"] for r in rows} == {'{"B":8,"T":1024}'}
    assert len({r["measurement_digest"] for r in rows}) == 1


def test_zoned_record_timestamp_is_normalized_to_utc(tmp_path):
    bundle = json.loads(SAMPLE_RECORD.read_text())
    bundle["run"]["spec"]["observedAt"] = "2026-05-01T12:00:00+02:00"
    (rec,) = staged(tmp_path, "zoned.ndjson", json.dumps(bundle) + "\n")
    assert rec["reason"] is None and rec["observed_at_text"] == "2026-05-01 10:00:00"


def test_snapshot_commit_dates_are_normalized_to_utc(tmp_path):
    csv_dir = tmp_path / "liger_csv"
    csv_dir.mkdir()
    dates = {
        "zoned.csv": "2024-09-03T17:00:00+02:00",
        "plain.csv": "2024-09-03T15:30:00",
        "z.csv": "2024-09-03T14:00:00Z",
        "unreadable.csv": "yesterday",
    }
    for name in dates:
        (csv_dir / name).write_text(HEADER + "\n" + row() + "\n")
    (csv_dir / "SNAPSHOTS.tsv").write_text(
        "file\tupstream_path\tupstream_commit\tcommitted_at\n"
        + "".join(f"{name}\tbenchmark/data/{name}\t{i:040x}\t{when}\n" for i, (name, when) in enumerate(dates.items()))
    )
    sources, problems = discover(tmp_path)
    assert not problems
    assert {s.source_path: s.committed_at for s in sources} == {
        "liger_csv/zoned.csv": datetime(2024, 9, 3, 15, 0),
        "liger_csv/plain.csv": datetime(2024, 9, 3, 15, 30),
        "liger_csv/z.csv": datetime(2024, 9, 3, 14, 0),
        "liger_csv/unreadable.csv": None,
    }


def _set(path: str, value):
    def mutate(b: dict) -> None:
        *parents, leaf = path.split(".")
        node = b
        for p in parents:
            node = node[p]
        if value is KeyError:
            del node[leaf]
        else:
            node[leaf] = value

    return mutate


RUN_MUTATIONS = {
    "valid as shipped": lambda b: None,
    "uppercase digest": _set("run.spec.workloadDigest", "sha256:" + "A" * 64),
    "short digest": _set("run.spec.implementationDigest", "sha256:abc"),
    "digest without prefix": _set("run.spec.protocolDigest", "0" * 64),
    "missing digest": _set("run.spec.environmentDigest", KeyError),
    "benchmark without a pass": _set("run.spec.sourceNative.benchmark", "fused_add_rms_norm"),
    "benchmark with three parts": _set("run.spec.sourceNative.benchmark", "a/b/c"),
    "benchmark with an empty pass": _set("run.spec.sourceNative.benchmark", "a/"),
    "wrong kind": _set("run.kind", "BenchmarkPlan"),
}


@pytest.mark.parametrize("case", sorted(RUN_MUTATIONS))
def test_reader_accepts_a_run_exactly_when_the_model_does(tmp_path, case):
    """The reader's SQL checks are derived from the pydantic models; both must agree on every case."""
    bundle = copy.deepcopy(json.loads(SAMPLE_RECORD.read_text()))
    RUN_MUTATIONS[case](bundle)
    try:
        Bundle.model_validate(bundle)
        model_ok = True
    except ValidationError:
        model_ok = False
    (rec,) = staged(tmp_path, "case.ndjson", json.dumps(bundle) + "\n")
    assert (rec["reason"] is None) is model_ok, rec["reason"]
    if not model_ok:
        assert rec["reason"] == Reason.INVALID_RECORD
    assert model_ok is (case == "valid as shipped")
