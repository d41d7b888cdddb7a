"""Staging trusts an input's size, mtime and inode as git's index does, and never keeps rows of a
file that changed while it was read."""

from __future__ import annotations

import os
import shutil
import threading
import time

import duckdb

from pipeline.contracts.sources import file_sha256
from pipeline.ingest.discovery import discover
from pipeline.stage import hash_index
from pipeline.stage.store import StagingStore
from tests.fixtures import runs as rs


def _age(path, seconds=10):
    past = time.time() - seconds
    os.utime(path, (past, past))


def test_an_unchanged_file_is_not_read_again_and_rehash_ignores_the_index(tmp_path, monkeypatch):
    raw = rs.small_data_raw(tmp_path / "raw", n_csv=1, kernelindex=False)
    (csv,) = raw.rglob("*.csv")
    _age(csv)
    store = StagingStore(tmp_path / "staging")
    first, _ = discover(raw)
    store.stage(first)
    reads = []
    monkeypatch.setattr("pipeline.stage.store.file_sha256", lambda p: reads.append(p) or file_sha256(p))
    again, _ = discover(raw)
    store.stage(again)
    assert reads == [] and again[0].content_sha256 == first[0].content_sha256
    monkeypatch.setenv("LIGER_REHASH", "1")
    store.stage(discover(raw)[0])
    assert reads == [csv.resolve()]


def test_a_racily_clean_entry_is_hashed_again(tmp_path):
    f = tmp_path / "x.csv"
    f.write_text("a")
    index = hash_index.HashIndex(tmp_path / "index.json")
    key = hash_index.stat_key(f)
    index.remember(f, key, "sha")
    index.save({str(f)})
    # written in the same tick as the index: it could change again unseen, so it is not trusted
    assert hash_index.HashIndex(tmp_path / "index.json").lookup(f, key) is None
    _age(f)
    key = hash_index.stat_key(f)
    index.remember(f, key, "sha")
    index.save({str(f)})
    assert hash_index.HashIndex(tmp_path / "index.json").lookup(f, key) == "sha"


def test_a_file_appended_while_it_is_staged_leaves_no_phantom_rows(tmp_path, monkeypatch):
    raw = rs.small_data_raw(tmp_path / "raw", n_csv=1, kernelindex=False)
    (csv,) = raw.rglob("*.csv")
    original = csv.read_bytes()
    marker = tmp_path / "paused"
    monkeypatch.setenv("LIGER_FAILPOINT", "staging:3")
    monkeypatch.setenv("LIGER_FAILPOINT_FILE", str(marker))
    sources, _ = discover(raw)
    store = StagingStore(tmp_path / "staging")
    worker = threading.Thread(target=store.stage, args=(sources,))
    worker.start()
    while not marker.exists() and worker.is_alive():
        time.sleep(0.05)
    extra = original.splitlines(keepends=True)[1]
    with csv.open("ab") as fh:  # between the hash and the parse
        fh.write(extra)
    marker.unlink()
    worker.join()
    assert sources[0].content_sha256 == file_sha256(csv)  # the digest names the bytes parsed
    rows = duckdb.sql(f"select count(*) from read_parquet('{store.path(sources[0])}')").fetchall()[0][0]
    assert rows == len(original.splitlines()) - 1 + 1
    shutil.rmtree(tmp_path / "staging")
