"""A wrong input root stops the run before it commits anything; odd provenance bytes do not."""

from __future__ import annotations

import shutil

import dagster as dg
import pytest

from pipeline.ingest.discovery import DataRootError, discover, discover_all
from tests.conftest import DATA_RAW, materialize
from tests.fixtures import runs as rs


def test_missing_empty_and_unreadable_roots_are_refused(tmp_path):
    with pytest.raises(DataRootError, match="does not exist"):
        discover(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataRootError, match="holds no CSV"):
        discover_all(tmp_path / "empty")
    (tmp_path / "file").write_text("x")
    with pytest.raises(DataRootError, match="not a folder"):
        discover(tmp_path / "file")


def test_a_missing_root_fails_the_run_and_leaves_the_warehouse_as_it_was(tmp_path):
    raw = rs.small_data_raw(tmp_path / "raw", n_csv=1, kernelindex=False)
    wh = tmp_path / "wh"
    assert materialize(raw, wh).success
    before = sorted((wh / "tables").rglob("*.json"))
    shutil.rmtree(raw)
    result = materialize(raw, wh, raise_on_error=False)
    assert not result.success
    failure = next(e for e in result.all_events if e.event_type == dg.DagsterEventType.STEP_FAILURE)
    assert "does not exist" in failure.event_specific_data.error.message
    assert sorted((wh / "tables").rglob("*.json")) == before  # no Delta commit at all


def test_a_non_utf8_byte_in_snapshots_tsv_keeps_the_row(tmp_path):
    raw = tmp_path / "raw" / "liger_csv"
    raw.mkdir(parents=True)
    name = "2024-09-03_b5672a153b_all_benchmark_data.csv"
    shutil.copy(DATA_RAW / "liger_csv" / name, raw / name)
    tsv = (DATA_RAW / "liger_csv" / "SNAPSHOTS.tsv").read_bytes().splitlines()
    row = next(line for line in tsv if line.startswith(name.encode()))
    (raw / "SNAPSHOTS.tsv").write_bytes(tsv[0] + b"\n" + row + b"\t\xff\xfe note\n")
    sources, problems = discover(raw.parent)
    assert problems == [] and sources[0].upstream_commit
