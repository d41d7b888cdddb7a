"""SIGKILL a real `make run` path (`dg launch --job liger_warehouse_job`) at named points of the run.

Promise: until a run's row lands in the run log, every reader (liger.duckdb, the published
snapshot) sees exactly the old facts, never a mix; the next run ends exactly like an
uninterrupted one, and the killed run's commits are undone, not doubled.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from pipeline.store.warehouse import TABLES, Warehouse
from tests.fixtures import runs as rs

# (failpoint, what has happened when the run pauses there), in pipeline order.
KILL_POINTS = [
    ("staging", "a new file is being staged"),
    ("committed_fact_measurement", "new facts are committed, sightings and the run log are not"),
    ("committed_source", "every table is committed, the run log is not"),
    ("tables_committed", "right before the run-log commit"),
    ("duckdb_built_aside", "the run is published, liger.duckdb is built aside but not swapped in"),
]


def _published_facts(wh_path: Path) -> tuple[int, str]:
    from pipeline.serve import checks

    wh = Warehouse(wh_path)
    with checks.connect(wh, wh.published()) as con:
        return rs.snapshot(con)


def test_sigkill_at_each_point_keeps_old_state_and_rerun_matches(tmp_path: Path) -> None:
    old_raw = rs.small_data_raw(tmp_path / "raw_old", n_csv=4, kernelindex=False)
    new_raw = rs.small_data_raw(tmp_path / "raw_new", n_csv=5, kernelindex=True)
    wh, home, log = tmp_path / "wh", tmp_path / "home", tmp_path / "runs.log"

    # Reference: an uninterrupted run on the new input, in a warehouse of its own.
    assert rs.run(rs.run_env(new_raw, tmp_path / "wh_ref", home), log) == 0
    expected = rs.facts(tmp_path / "wh_ref" / "liger.duckdb")

    assert rs.run(rs.run_env(old_raw, wh, home), log) == 0
    old = rs.facts(wh / "liger.duckdb")
    assert old != expected and old[0] > 0
    runs_before = len(Warehouse(wh).run_log())

    marker = tmp_path / "reached"
    for point, what in KILL_POINTS:
        marker.unlink(missing_ok=True)
        env = rs.run_env(new_raw, wh, home, LIGER_FAILPOINT=f"{point}:600", LIGER_FAILPOINT_FILE=str(marker))
        proc = rs.start_run(env, log)
        try:  # an event (the failpoint's file, or the run's exit), with a generous bound for a loaded machine
            reached = rs.wait_for(lambda p=proc: marker.exists() or p.poll() is not None, timeout=900)
            assert reached and marker.exists() and proc.poll() is None, f"the run never paused at {point}"
        finally:
            rs.kill(proc)
        # The file readers open holds the old facts: never a mix.
        assert rs.facts(wh / "liger.duckdb") == old, what
        with duckdb.connect(str(wh / "liger.duckdb"), read_only=True) as con:
            assert con.execute("select count(*) from measurements").fetchone()[0] == old[0]
        # The published snapshot moves only with the run-log commit.
        published_already = point == "duckdb_built_aside"
        assert _published_facts(wh) == (expected if published_already else old), what
        assert len(Warehouse(wh).run_log()) == runs_before + published_already, what

    # The next run finishes with exactly the result of an uninterrupted one: nothing doubled.
    assert rs.run(rs.run_env(new_raw, wh, home), log) == 0, log.read_text()[-3000:]
    assert rs.facts(wh / "liger.duckdb") == expected
    assert _published_facts(wh) == expected
    files = Warehouse(wh).snapshot_files()["fact_sighting"]
    with duckdb.connect() as con:
        dup = con.execute(
            "select count(*) - count(distinct (measurement_digest, source_path, content_sha256)) from read_parquet(?)",
            [files],
        ).fetchone()[0]
    assert dup == 0
    assert not list(wh.glob(".liger.duckdb.*.tmp"))
    # Every Delta table the killed runs touched is at its published version again (or past it).
    pub = Warehouse(wh).published()
    assert set(pub.versions) == set(TABLES)
    for staged in (wh / "staging").rglob("*.parquet"):
        duckdb.connect().execute("select count(*) from read_parquet(?)", [str(staged)]).fetchone()


def test_a_kill_while_liger_duckdb_is_built_leaves_no_file_after_the_rerun(tmp_path: Path) -> None:
    """Issue 46 case 9: a SIGKILL before the build's checkpoint left `.liger.duckdb.<id>.tmp.wal`
    behind for good (the rerun removed only `.tmp`)."""
    raw = rs.small_data_raw(tmp_path / "raw", n_csv=2, kernelindex=False)
    wh, home, log, marker = tmp_path / "wh", tmp_path / "home", tmp_path / "runs.log", tmp_path / "reached"
    env = rs.run_env(raw, wh, home, LIGER_FAILPOINT="duckdb_building:600", LIGER_FAILPOINT_FILE=str(marker))
    proc = rs.start_run(env, log)
    try:
        reached = rs.wait_for(lambda: marker.exists() or proc.poll() is not None, timeout=900)
        assert reached and marker.exists() and proc.poll() is None, "the run never paused in the build"
    finally:
        rs.kill(proc)
    assert list(wh.glob(".liger.duckdb.*.tmp.wal")), "the kill left no write-ahead log: the test proves nothing"
    assert rs.run(rs.run_env(raw, wh, home), log) == 0, log.read_text()[-3000:]
    assert rs.facts(wh / "liger.duckdb")[0] > 0
    assert not list(wh.glob(".liger.duckdb.*")), list(wh.glob(".liger.duckdb.*"))
