"""Two real runs at once on one warehouse, with a notebook-style reader holding the DuckDB open."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import duckdb
from filelock import FileLock

from tests.fixtures import runs as rs


def test_two_runs_at_once_serialize_and_readers_keep_working(tmp_path: Path) -> None:
    raw = rs.small_data_raw(tmp_path / "raw", n_csv=5)
    wh, home, log = tmp_path / "wh", tmp_path / "home", tmp_path / "runs.log"
    env = rs.run_env(raw, wh, home)
    assert rs.run(env, log) == 0
    single = rs.facts(wh / "liger.duckdb")

    # A reader (notebook, duckdb CLI) opened read-only before the runs and keeps querying.
    reader = duckdb.connect(str(wh / "liger.duckdb"), read_only=True)
    seen: list[tuple[int, str]] = []
    errors: list[BaseException] = []
    stop = threading.Event()

    def read_loop() -> None:
        while not stop.is_set():
            try:
                seen.append(rs.snapshot(reader))
                reader.execute("select count(*) from measurements").fetchone()
            except BaseException as exc:  # noqa: BLE001 - any failure is the finding
                errors.append(exc)
                return
            time.sleep(0.05)

    t = threading.Thread(target=read_loop)
    t.start()
    procs = [rs.start_run(env, tmp_path / f"run{i}.log") for i in range(2)]
    try:
        codes = [p.wait(timeout=900) for p in procs]  # generous: the machine may be loaded
    finally:
        stop.set()
        t.join(timeout=60)
        for p in procs:
            rs.kill(p)

    logs = [(tmp_path / f"run{i}.log").read_text(errors="replace") for i in range(2)]
    for code, text in zip(codes, logs, strict=False):
        # One commits first; the other waits for the run lock, then finds nothing new.
        assert code == 0, text[-3000:]
    assert not errors, errors
    assert len(seen) > 10 and set(seen) == {single}
    # The reader's old connection still works after both runs (old table files are kept until vacuum).
    assert rs.snapshot(reader) == single
    reader.close()
    # The warehouse equals a single run's, and a fresh reader sees it.
    assert rs.facts(wh / "liger.duckdb") == single
    with duckdb.connect(str(wh / "liger.duckdb"), read_only=True) as con:
        assert con.execute("select count(*) from quarantine").fetchone()[0] == 0


def test_run_that_cannot_get_the_lock_fails_clearly_and_changes_nothing(tmp_path: Path) -> None:
    from pipeline.store.warehouse import Warehouse

    wh, home, log = tmp_path / "wh", tmp_path / "home", tmp_path / "run.log"
    old_raw = rs.small_data_raw(tmp_path / "raw_old", n_csv=1, kernelindex=False)
    assert rs.run(rs.run_env(old_raw, wh, home), log) == 0
    before = rs.facts(wh / "liger.duckdb")
    versions = Warehouse(wh).published().versions
    new_raw = rs.small_data_raw(tmp_path / "raw_new", n_csv=2, kernelindex=False)
    env = rs.run_env(new_raw, wh, home, LIGER_LOCK_TIMEOUT_S="1")
    with FileLock(str(wh / ".lock")):  # another run is committing
        code = rs.run(env, log)
    text = log.read_text(errors="replace")
    assert code != 0
    assert "another run holds the warehouse lock" in text and "the warehouse is unchanged" in text, text[-3000:]
    assert rs.facts(wh / "liger.duckdb") == before
    after = Warehouse(wh)
    assert after.published().versions == versions
    assert {t: after.store.version(t) for t in versions} == versions  # not even an unpublished commit


def test_stale_staging_leftovers_of_killed_runs_are_removed(tmp_path):
    import os
    import time as _time

    from pipeline.stage.store import STALE_S, StagingStore

    store = StagingStore(tmp_path / "staging")
    kind_dir = store.root / "liger_csv"
    kind_dir.mkdir(parents=True)
    stale, fresh = kind_dir / ".abc.parquet.1.tmp", kind_dir / ".def.parquet.2.tmp"
    stale.write_text("x")
    fresh.write_text("y")
    old = _time.time() - STALE_S - 10
    os.utime(stale, (old, old))
    assert store.collect_garbage() == 1
    assert not stale.exists() and fresh.exists()
