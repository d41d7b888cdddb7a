"""Issue 20, case 11: `make run`'s summary is the summary of its own run, never of another run that
shares `$DAGSTER_HOME`.

Before the fix `make run` was `dg launch …; python -m pipeline.cli.summary`, and the summary read the
latest run of the instance: a failed run printed `SUCCESS` with the other run's id and checks. Here
a run (A) fails while a newer run (B) in the same `$DAGSTER_HOME` has succeeded: A's summary must name
A, say FAILURE and A's failed step, and `make run` must exit non-zero.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import dagster as dg
from filelock import FileLock

from tests.fixtures import runs as rs

_RUN_LINE = re.compile(r"^run:\s+(\w+) \(([0-9a-f-]{36})", re.M)


def _start_make_run(env: dict[str, str], out: Path) -> subprocess.Popen:
    """`make run`'s process (`python -m pipeline.cli.run`), in its own process group; stdout (the
    summary) to ``out``, Dagster's log beside it."""
    return subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli.run"],
        cwd=rs.REPO,
        env=env,
        stdout=out.open("wb"),
        stderr=out.with_suffix(".log").open("wb"),
        start_new_session=True,
    )


def _make_run(env: dict[str, str], out: Path) -> tuple[int, str]:
    proc = _start_make_run(env, out)
    try:
        code = proc.wait(timeout=900)  # generous: the machine may be loaded
    finally:
        rs.kill(proc)
    return code, out.read_text(errors="replace")


def _run_line(summary: str) -> tuple[str, str]:
    """(status, run id) of the summary's `run:` line."""
    found = _RUN_LINE.findall(summary)
    assert len(found) == 1, summary
    return found[0]


def test_a_failed_runs_summary_is_its_own_not_the_newer_run_beside_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    wh_a, wh_b = tmp_path / "wh_a", tmp_path / "wh_b"
    # A's warehouse holds an earlier successful run, so its liger.duckdb has a run log to misread.
    raw0 = rs.small_data_raw(tmp_path / "raw0", n_csv=1, kernelindex=False)
    code, first = _make_run(rs.run_env(raw0, wh_a, home), tmp_path / "a0.out")
    assert code == 0, first
    _, first_id = _run_line(first)

    marker = tmp_path / "a_paused"
    raw_a = rs.small_data_raw(tmp_path / "raw_a", n_csv=2, kernelindex=False)
    env_a = rs.run_env(
        raw_a, wh_a, home, LIGER_FAILPOINT="staging:600", LIGER_FAILPOINT_FILE=str(marker), LIGER_LOCK_TIMEOUT_S="1"
    )
    env_b = rs.run_env(rs.small_data_raw(tmp_path / "raw_b", n_csv=1, skip=3, kernelindex=False), wh_b, home)
    # Another run holds A's warehouse for the whole of A: A fails with WarehouseBusy, whatever the speed.
    with FileLock(str(wh_a / ".lock")):
        a = _start_make_run(env_a, tmp_path / "a.out")
        try:
            # Event: A is recorded and paused in staging. B starts after A and ends before A.
            assert rs.wait_for(lambda: marker.exists() or a.poll() is not None, timeout=900)
            assert a.poll() is None, (tmp_path / "a.log").read_text(errors="replace")[-3000:]
            code_b, summary_b = _make_run(env_b, tmp_path / "b.out")
            marker.unlink()  # A goes on, to the lock it cannot get
            code_a = a.wait(timeout=900)
        finally:
            rs.kill(a)
    summary_a = (tmp_path / "a.out").read_text(errors="replace")

    assert code_b == 0, summary_b
    status_b, b_id = _run_line(summary_b)
    assert status_b == "SUCCESS"
    with dg.DagsterInstance.from_config(str(home)) as instance:
        # the scenario that fooled the old summary: B is the instance's latest run when A's summary is written
        assert instance.get_runs(limit=1)[0].run_id == b_id
        a_runs = [r for r in instance.get_runs() if r.run_id not in (b_id, first_id)]
        assert len(a_runs) == 1 and a_runs[0].status == dg.DagsterRunStatus.FAILURE
        a_id = a_runs[0].run_id

    assert code_a == 1, summary_a
    assert _run_line(summary_a) == ("FAILURE", a_id), summary_a
    assert b_id not in summary_a and "SUCCESS" not in summary_a, summary_a
    assert re.search(r"^  step failed: warehouse_tables: .*another run holds the warehouse lock", summary_a, re.M)
    checks_b = re.search(r"^checks:\s+(\d+) passed", summary_b, re.M)
    assert checks_b and int(checks_b.group(1)) > 0, summary_b  # B's checks ran, A's did not: A's line is its own
    assert "checks:    0 passed, 0 warned, 0 failed" in summary_a, summary_a
    # liger.duckdb's newest warehouse run is the earlier run's, and the summary says it is not A's
    published = rf"^published: warehouse run 1 \(.*by Dagster run {first_id}, not by this run$"
    assert re.search(published, summary_a, re.M), summary_a
    assert "committed:" not in summary_a, summary_a
    # What the old `make run` printed after A (`dg launch …; python -m pipeline.cli.summary`): the
    # latest run, B's SUCCESS. Without a run id the summary still shows it, but says so.
    old = subprocess.run(
        [sys.executable, "-m", "pipeline.cli.summary"], env=env_a, cwd=rs.REPO, capture_output=True, text=True
    ).stdout
    assert _run_line(old) == ("SUCCESS", b_id) and "the latest in $DAGSTER_HOME, no run named" in old, old


def test_a_failed_first_run_still_says_failure_and_its_step(tmp_path: Path) -> None:
    """No liger.duckdb yet: the summary used to stop at "no warehouse" and never said the run failed."""
    wh = tmp_path / "wh"
    wh.mkdir()
    env = rs.run_env(
        rs.small_data_raw(tmp_path / "raw", n_csv=1, kernelindex=False), wh, tmp_path / "home", LIGER_LOCK_TIMEOUT_S="1"
    )
    with FileLock(str(wh / ".lock")):
        code, summary = _make_run(env, tmp_path / "run.out")
    assert code == 1, summary
    assert _run_line(summary)[0] == "FAILURE", summary
    assert "not built (no run has published one)" in summary
    assert re.search(r"^  step failed: warehouse_tables: .*another run holds the warehouse lock", summary, re.M)
