"""SIGKILL a real `make run` path (`dg launch --assets '*'`) at several points.

Promise: the previous liger.duckdb stays readable with exactly the old facts (never a mix), and
the next run ends exactly like an uninterrupted one.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import duckdb
import pytest

from tests import robustness_support as rs


def _markers(wh: Path):
    """Kill points, in pipeline order: (name, predicate that says the run got there)."""
    staged_before = set((wh / "staging" / "v1" / "liger_csv").glob("*.parquet"))
    gens_before = set((wh / "generations").iterdir())
    return [
        ("during start-up", None),
        ("while staging a new file", lambda: bool(set((wh / "staging" / "v1" / "liger_csv").glob("*.parquet")) - staged_before)
         or any((wh / "staging" / "v1" / "liger_csv").glob(".*.tmp"))),
        ("while writing a generation", lambda: any((wh / "generations").glob(".*.tmp"))),
        ("right after a generation was renamed in", lambda: bool(set((wh / "generations").iterdir()) - gens_before - set((wh / "generations").glob(".*")))),
        ("while building the DuckDB file aside", lambda: any(wh.glob(".liger.duckdb.*.tmp"))),
    ]


def test_sigkill_keeps_old_warehouse_and_rerun_matches(tmp_path: Path) -> None:
    old_raw = rs.small_data_raw(tmp_path / "raw_old", n_csv=4, kernelindex=False)
    new_raw = rs.small_data_raw(tmp_path / "raw_new", n_csv=5, kernelindex=True)
    wh, home, log = tmp_path / "wh", tmp_path / "home", tmp_path / "runs.log"

    # Reference: an uninterrupted run on the new input, in a warehouse of its own.
    assert rs.run(rs.run_env(new_raw, tmp_path / "wh_ref", home), log) == 0
    expected = rs.facts(tmp_path / "wh_ref" / "liger.duckdb")

    # The warehouse people trust: built from the old input.
    assert rs.run(rs.run_env(old_raw, wh, home), log) == 0
    old = rs.facts(wh / "liger.duckdb")
    assert old != expected and old[0] > 0

    env = rs.run_env(new_raw, wh, home)
    outcomes = []
    for name, reached in _markers(wh):
        proc = rs.start_run(env, log)
        if reached is None:
            time.sleep(1.5)
            hit = True
        else:
            hit = rs.wait_for(lambda: reached() or proc.poll() is not None, timeout=120)
        finished_first = proc.poll() is not None
        rs.kill(proc)
        # The file readers use opens read-only and holds either the old facts or (only if the run
        # had already swapped it in) the complete new facts: never a mix, never an error.
        now = rs.facts(wh / "liger.duckdb")
        assert now in (old, expected), name
        outcomes.append((name, hit, finished_first, now == old))
        # A second reader through a fresh connection sees a coherent view too.
        with duckdb.connect(str(wh / "liger.duckdb"), read_only=True) as con:
            assert con.execute("select count(*) from measurements").fetchone()[0] == now[0]
    # Every kill landed mid-run (the run had not finished on its own).
    assert not any(finished for _, _, finished, _ in outcomes), outcomes
    # The kill points before the DuckDB swap must have left the old warehouse in place.
    assert all(kept_old for name, hit, finished, kept_old in outcomes[:3] if not finished), outcomes

    # The next run finishes with exactly the result of an uninterrupted one.
    assert rs.run(env, log) == 0, log.read_text()[-3000:]
    assert rs.facts(wh / "liger.duckdb") == expected
    assert not list(wh.glob(".liger.duckdb.*.tmp")) and not list((wh / "generations").glob(".*.tmp"))
    # And the staged files a killed run may have left behind are complete Parquet (written aside).
    for staged in (wh / "staging").rglob("*.parquet"):
        duckdb.connect().execute("select count(*) from read_parquet(?)", [str(staged)]).fetchone()
