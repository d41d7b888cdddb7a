"""A local table's snapshots are read from its log once per process (pipeline/store/delta.py):
the cache must never give another table's, or another version's, files."""

import shutil

import pyarrow as pa

from pipeline.store.delta import DeltaStore


def _rows(n: int, start: int = 0) -> pa.Table:
    return pa.table({"k": pa.array(range(start, start + n), pa.int64())})


def test_each_version_and_a_table_made_again_at_the_same_path_read_their_own_files(tmp_path):
    store = DeltaStore(str(tmp_path))
    store.write("t", _rows(3), mode="append", run_id="r1")
    store.write("t", _rows(2, 3), mode="append", run_id="r2")
    v0, v1 = store.files("t", 0), store.files("t", 1)
    assert len(v0) == 1 and len(v1) == 2 and set(v0) < set(v1)
    assert store.row_count("t", 0) == 3 and store.row_count("t", 1) == 5
    # the newest version, from a store opened afresh (as every step of a run opens one)
    assert DeltaStore(str(tmp_path)).files("t") == v1
    store.write("t", _rows(1, 5), mode="append", run_id="r3")
    assert DeltaStore(str(tmp_path)).row_count("t") == 6

    # the same path, deleted and made again: versions 0 and 1 are other commits now
    shutil.rmtree(tmp_path / "tables" / "t")
    again = DeltaStore(str(tmp_path))
    again.write("t", _rows(7, 100), mode="append", run_id="s1")
    again.write("t", _rows(1, 200), mode="append", run_id="s2")
    assert again.row_count("t", 0) == 7 and again.row_count("t", 1) == 8
    assert not set(again.files("t", 1)) & set(v1)
    assert DeltaStore(str(tmp_path)).files("t") == again.files("t", 1)


def _row_groups(files: list[str]) -> list[int]:
    import pyarrow.parquet as pq

    return [pq.ParquetFile(f).metadata.num_row_groups for f in files]


def test_written_and_compacted_files_hold_row_groups_duckdb_reads_side_by_side(tmp_path, monkeypatch):
    """DuckDB reads a Parquet file one row group per thread: every file the store writes, and every file
    its compaction writes, is cut into groups of ROW_GROUP_ROWS (delta-rs' own default is 1 Mi rows)."""
    from pipeline.store import delta

    monkeypatch.setattr(delta, "ROW_GROUP_ROWS", 10)
    store = DeltaStore(str(tmp_path))
    store.write("t", _rows(25), mode="append", run_id="r1")
    assert _row_groups(store.files("t")) == [3]
    for i in range(3):
        store.write("t", _rows(4, 25 + 4 * i), mode="append", run_id=f"r{i + 2}")
    assert store.compact("t", run_id="c", min_files=4)
    compacted = store.files("t")
    assert len(compacted) == 1 and store.row_count("t") == 37
    assert _row_groups(compacted) == [4]
