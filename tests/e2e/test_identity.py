"""One identity with KernelIndex, warehouse side: every mapped CSV row's run and digests are KernelIndex's own
(checked against its golden output), records fold exactly, the export round-trips, and the measurement
identity (ours) keeps runs that differ only in their values."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import duckdb
import pytest

from pipeline.cli import export as ki_export
from tests.conftest import DATA_RAW, SAMPLE_RECORD, materialize
from tests.fixtures.runs import HEADER, row
from tests.fixtures.shared_data import require_shared_data

MAIN_CSV = "2026-04-08_b7025a7027_all_benchmark_data.csv"  # holds the sample record's row
GH_PAGES = "0a62700-v0.6.4"
KI_COLUMNS = "external_id, run_digest, workload_digest, implementation_digest, protocol_digest, environment_digest"


def q(wh: Path, sql: str, params=None):
    with duckdb.connect(str(wh / "liger.duckdb"), read_only=True) as con:
        return con.execute(sql, params or {}).fetchall()


@pytest.fixture(scope="module")
def two_files(tmp_path_factory) -> Path:
    """One main-branch CSV (with the sample record) and one gh-pages snapshot, materialized once."""
    data = tmp_path_factory.mktemp("two_files") / "data_raw"
    (data / "liger_csv").mkdir(parents=True)
    (data / "kernelindex").mkdir()
    shutil.copy(DATA_RAW / "liger_csv" / MAIN_CSV, data / "liger_csv" / MAIN_CSV)
    shutil.copytree(
        DATA_RAW / "liger_gh_pages" / "benchmarks" / GH_PAGES, data / "liger_gh_pages" / "benchmarks" / GH_PAGES
    )
    shutil.copy(SAMPLE_RECORD, data / "kernelindex" / SAMPLE_RECORD.name)
    wh = data.parent / "warehouse"
    assert materialize(data, wh).success
    return wh


def _golden(path: Path) -> set[tuple[str, ...]]:
    fields = ("externalId", "runDigest", "workloadDigest", "implementationDigest", "protocolDigest")
    with gzip.open(path, "rt") as fh:
        runs = [json.loads(line) for line in fh if line.strip()]
    return {(*(r[f] for f in fields), r["environmentDigest"]) for r in runs}


def test_every_mapped_row_has_kernelindex_own_run_and_digests(two_files):
    golden_dir = require_shared_data() / "kernelindex_golden"
    golden = _golden(golden_dir / "liger_csv_history" / f"{MAIN_CSV}.runs.jsonl.gz")
    golden |= _golden(golden_dir / "liger_gh_pages" / f"{GH_PAGES}.runs.jsonl.gz")
    mine = q(two_files, f"select {KI_COLUMNS} from measurements where identity = 'kernelindex'")
    assert len(mine) == len(set(mine)) == len(golden) == 1370 + 1384
    assert set(mine) == golden
    # every other fact says why it is not KernelIndex's, and carries no KernelIndex run
    assert q(
        two_files,
        "select count(*) from measurements where identity = 'derived' and (identity_reason is null "
        "or external_id is not null or run_digest is not null or operation_digest is null)",
    ) == [(0,)]


def test_sample_record_folds_by_run_digest_with_the_digests_of_its_row(two_files):
    run = json.loads(SAMPLE_RECORD.read_text())["run"]
    spec = run["spec"]
    rows = q(
        two_files,
        f"select {KI_COLUMNS}, origin, fold_rule, identity from measurements where origin <> 'csv'",
    )
    assert len(rows) == 1
    external_id, run_digest, workload, implementation, protocol, environment, origin, rule, identity = rows[0]
    assert (origin, rule, identity) == ("csv+kernelindex", "run digest", "kernelindex")
    assert external_id == spec["sourceNative"]["externalId"]
    assert workload == spec["workloadDigest"] and workload.startswith("sha256:17d58604")
    assert (implementation, protocol, environment) == (
        spec["implementationDigest"],
        spec["protocolDigest"],
        spec["environmentDigest"],
    )
    from pipeline.contracts.digests import object_digest

    assert run_digest == object_digest(run)


def test_dimensions_hold_kernelindex_objects_whole(two_files):
    from pipeline.contracts.digests import canonical_json, object_digest

    for dim in ("workload", "implementation", "protocol", "environment", "operation"):
        rows = q(
            two_files,
            f"""select d.{dim}_digest, d.object_json from dim_{dim} d
                where d.{dim}_digest in (select {dim}_digest from measurements where identity = 'kernelindex')""",
        )
        assert rows, dim
        for digest, text in rows:
            obj = json.loads(text)
            assert "metadata" in obj and object_digest(obj) == digest
            assert canonical_json(obj) == text  # RFC 8785 bytes, as KernelIndex writes them


def test_export_round_trips_into_an_empty_warehouse(two_files, tmp_path):
    with duckdb.connect(str(two_files / "liger.duckdb"), read_only=True) as con:
        counts = ki_export.export(con, tmp_path / "export")
    assert counts["runs"] == 1370 + 1384 and counts["skipped"] == counts["run_digest_differs"] == 0
    objects = [json.loads(line) for line in (tmp_path / "export" / ki_export.OBJECTS_FILE).read_text().splitlines()]
    kinds = {o["kind"] for o in objects}
    assert kinds == {"WorkloadCase", "ImplementationRevision", "OperationSpec"}
    wh = tmp_path / "warehouse"
    assert materialize(tmp_path / "export", wh).success
    sql = f"select {KI_COLUMNS} from measurements where identity = 'kernelindex' order by all"
    assert q(wh, sql) == q(two_files, sql)
    assert q(wh, "select count(*) from quarantine") == [(0,)]


# -- the measurement identity (ours): the values are part of it ------------------------------------------------
def _csv(path: Path, *rows: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join([HEADER, *rows]) + "\n")


def test_same_second_rows_with_other_values_in_one_file_are_two_facts(tmp_path):
    data = tmp_path / "data_raw"
    _csv(data / "liger_csv" / "a.csv", row(p50="0.5"), row(p50="0.55", p80="0.65"))
    assert materialize(data, tmp_path / "wh").success
    assert q(tmp_path / "wh", "select p50, occurrence from measurements order by p50") == [(0.5, 1), (0.55, 1)]


def test_same_second_rows_with_other_values_in_two_files_are_two_facts(tmp_path):
    data = tmp_path / "data_raw"
    _csv(data / "liger_csv" / "a.csv", row(p50="0.5"))
    _csv(data / "liger_csv" / "b.csv", row(p50="0.55", p80="0.65"))
    assert materialize(data, tmp_path / "wh").success
    assert q(tmp_path / "wh", "select p50 from measurements order by p50") == [(0.5,), (0.55,)]


def test_the_same_file_sighted_again_adds_no_fact(tmp_path):
    data = tmp_path / "data_raw"
    rows = (row(p50="0.5"), row(p50="0.5"), row(x="2"))  # two identical rows: occurrences 1 and 2
    _csv(data / "liger_csv" / "a.csv", *rows)
    wh = tmp_path / "wh"
    assert materialize(data, wh).success
    first = q(wh, "select measurement_digest, occurrence from measurements order by 1")
    assert sorted(o for _, o in first) == [1, 1, 2]
    _csv(data / "liger_csv" / "copy.csv", *rows)
    assert materialize(data, wh).success
    assert q(wh, "select measurement_digest, occurrence from measurements order by 1") == first
    assert q(wh, "select max(source_count) from measurements") == [(2,)]
