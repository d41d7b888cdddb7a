"""Small files of one CSV header are staged in one query, split by file: each staged file is the
one the one-file path makes of it, whatever its neighbours hold."""

from __future__ import annotations

import os
import shutil
import threading
import time

import duckdb
import pytest

from pipeline.contracts.sources import file_sha256
from pipeline.ingest.discovery import discover
from pipeline.stage import driver
from pipeline.stage import store as store_module
from pipeline.stage.csv_reader import stage_csv_file
from pipeline.stage.store import STALE_S, StagingStore
from tests.conftest import DATA_RAW


def _raw(tmp_path):
    """Real snapshots (history and gh-pages, whose lines repeat and do not) and odd neighbours."""
    raw = tmp_path / "raw" / "liger_csv"
    raw.mkdir(parents=True)
    history = sorted((DATA_RAW / "liger_csv").glob("*.csv"))
    for p in history[:4] + history[-2:]:
        shutil.copy(p, raw / p.name)
    for p in sorted((DATA_RAW / "liger_gh_pages").rglob("benchmark.csv"))[:2]:
        shutil.copy(p, raw / f"pages_{p.parent.name}.csv")
    lines = history[-1].read_text().splitlines()
    header, rows = lines[0], lines[1:]
    # a line twice in one file (two measurements) and also in the next file; a row the parser refuses;
    # an empty field; a header without rows
    (raw / "zz_repeats.csv").write_text("\n".join([header, rows[0], rows[0], rows[1]]) + "\n")
    (raw / "zz_refused_line.csv").write_text("\n".join([header, rows[0], rows[2] + ",extra", rows[3]]) + "\n")
    (raw / "zz_empty_field.csv").write_text(
        "\n".join([header, rows[0], ",".join([""] + rows[4].split(",")[1:])]) + "\n"
    )
    (raw / "zz_header_only.csv").write_text(header + "\n")
    return raw.parent


def _rows(path):
    return duckdb.sql(f"select * from read_parquet('{path}') order by record_no").fetchall()


def test_files_staged_together_equal_each_staged_alone(tmp_path):
    raw = _raw(tmp_path)
    sources, _ = discover(raw)
    units = store_module._units(sources)
    together = [files for context, files in units if context is not None and len(files) > 1]
    assert sum(len(f) for f in together) == len(sources)  # one header: all of them, in one query
    store = StagingStore(tmp_path / "staging")
    store.stage(sources)
    for s in sources:
        alone = tmp_path / "alone" / f"{s.content_sha256}.parquet"
        stage_csv_file(s.path, alone)
        assert _rows(store.path(s)) == _rows(alone), s.source_path
    repeats = next(s for s in sources if s.path.name == "zz_repeats.csv")
    occurrences = duckdb.sql(f"select occurrence from read_parquet('{store.path(repeats)}') order by record_no")
    assert occurrences.fetchall() == [(1,), (2,), (1,)]  # the line of the next file is not counted here
    assert not list(store.root.rglob(".*.tmp"))  # the query's partitions are gone


def test_a_file_the_query_refuses_lines_of_is_staged_alone_with_their_reasons(tmp_path):
    raw = _raw(tmp_path)
    sources, _ = discover(raw)
    files = [s for s in sources if s.path.name.startswith("zz_")]
    reader = store_module.READERS[files[0].kind]
    db = duckdb.connect()
    reader.register(db)
    pairs = [(s.path, tmp_path / "out" / f"{s.path.name}.parquet") for s in files]
    alone = driver.stage_several(reader, pairs, driver.several_context(reader, files[0].path), db)
    assert [p.name for p, _ in alone] == ["zz_refused_line.csv"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(
        f"{s.path.name}.parquet" for s in files if s.path.name != "zz_refused_line.csv"
    )


def test_when_the_shared_query_fails_every_file_is_staged_alone(tmp_path, monkeypatch):
    raw = _raw(tmp_path)
    sources, _ = discover(raw)
    reader = store_module.READERS[sources[0].kind]

    def failing(*_args):
        raise duckdb.IOException("injected: the shared query failed")

    monkeypatch.setitem(
        store_module.READERS, sources[0].kind, driver.Reader(**{**vars(reader), "parse_several": failing})
    )
    store = StagingStore(tmp_path / "staging")
    store.stage(sources)
    for s in sources:
        alone = tmp_path / "alone" / f"{s.content_sha256}.parquet"
        stage_csv_file(s.path, alone)
        assert _rows(store.path(s)) == _rows(alone)
    assert not list(store.root.rglob(".*.tmp"))


def test_a_file_appended_while_staged_with_others_is_staged_again_as_it_is_now(tmp_path, monkeypatch):
    raw = _raw(tmp_path)
    csv = raw / "liger_csv" / "zz_repeats.csv"
    original = csv.read_bytes()
    past = time.time() - 10
    for p in raw.rglob("*.csv"):
        os.utime(p, (past, past))
    marker = tmp_path / "paused"
    monkeypatch.setenv("LIGER_FAILPOINT", "staging:3")
    monkeypatch.setenv("LIGER_FAILPOINT_FILE", str(marker))
    sources, _ = discover(raw)
    store = StagingStore(tmp_path / "staging")
    worker = threading.Thread(target=store.stage, args=(sources,), kwargs={"max_workers": 1})
    worker.start()
    while not marker.exists() and worker.is_alive():
        time.sleep(0.05)
    with csv.open("ab") as fh:  # between the hash and the parse
        fh.write(original.splitlines(keepends=True)[1])
    marker.unlink()
    worker.join()
    changed = next(s for s in sources if s.path == csv.resolve())
    assert changed.content_sha256 == file_sha256(csv)  # the digest names the bytes parsed
    assert len(_rows(store.path(changed))) == len(original.splitlines())  # 3 rows, then one more


@pytest.mark.parametrize("kind", ["file", "folder"])
def test_stale_leftovers_of_a_killed_staging_are_removed(tmp_path, kind):
    store = StagingStore(tmp_path / "staging")
    leftover = store.root / "liger_csv" / ".abc.parquet.1.tmp"
    if kind == "folder":
        (leftover / "file_index=1").mkdir(parents=True)
        (leftover / "file_index=1" / "data_0.parquet").write_text("x")
    else:
        leftover.parent.mkdir(parents=True)
        leftover.write_text("x")
    old = time.time() - STALE_S - 10
    os.utime(leftover, (old, old))
    assert store.collect_garbage() == 1
    assert not leftover.exists()
