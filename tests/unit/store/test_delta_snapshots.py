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
