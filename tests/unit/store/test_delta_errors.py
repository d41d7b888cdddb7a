"""A warehouse table that cannot be read fails with a message naming the table, where it is and what
to do (issue 46, case 9), never delta-rs' bare words: a truncated commit, a commit of garbage, an
empty commit file, on a data table and on the run log, read directly and through a real Dagster run."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.store.delta import DeltaStore, WarehouseTableError
from tests.conftest import DATA_RAW, copy_data_raw, materialize

BREAKAGES = {
    "truncated": lambda text: text[: len(text) // 3],
    "garbage": lambda text: "{not json at all\n",
    "empty_json_object": lambda text: '{}\n{"add": 1}\n',
}


def _break_newest_commit(table_dir: Path, how: str) -> Path:
    commit = max((table_dir / "_delta_log").glob("*.json"))
    commit.write_text(BREAKAGES[how](commit.read_text()))
    return commit


@pytest.mark.parametrize("how", sorted(BREAKAGES))
def test_a_broken_commit_is_named_by_table_on_every_read(tmp_path, how):
    store = DeltaStore(str(tmp_path))
    for n in range(2):
        store.write("t", pa.table({"x": [n]}), mode="append", run_id=f"r{n}")
    _break_newest_commit(tmp_path / "tables" / "t", how)
    for read in (lambda: store.files("t"), lambda: store.row_count("t"), lambda: store.schema("t")):
        with pytest.raises(WarehouseTableError, match=r"warehouse table 't' at .*tables/t: .*To fix"):
            read()


@pytest.mark.parametrize("table", ["fact_measurement", "warehouse_run"])
def test_a_run_over_a_broken_table_fails_naming_it(tmp_path, table):
    raw = copy_data_raw(tmp_path / "data_raw", csv_glob="2024-09-03_*.csv", with_record=False)
    wh = tmp_path / "wh"
    assert materialize(raw, wh).success
    _break_newest_commit(wh / "tables" / table, "truncated")
    new = next((DATA_RAW / "liger_csv").glob("2024-09-04_*.csv"))
    (raw / "liger_csv" / new.name).write_bytes(new.read_bytes())  # something new: the run reads its tables
    result = materialize(raw, wh, raise_on_error=False)
    assert not result.success
    messages = [
        e.step_failure_data.error.cause.message
        if e.step_failure_data.error.cause
        else e.step_failure_data.error.message
        for e in result.all_events
        if e.is_step_failure
    ]
    assert any(f"warehouse table '{table}'" in m and "To fix" in m for m in messages), messages
