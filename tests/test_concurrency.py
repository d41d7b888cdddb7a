"""Two real runs at once on one warehouse, with a notebook-style reader holding the DuckDB open."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import duckdb
from filelock import FileLock

from tests import robustness_support as rs


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
    codes = [p.wait(timeout=300) for p in procs]
    stop.set()
    t.join(timeout=60)

    logs = [(tmp_path / f"run{i}.log").read_text(errors="replace") for i in range(2)]
    for code, text in zip(codes, logs):
        # Either the run succeeded, or it failed with the clear lock message.
        assert code == 0 or "another run holds the warehouse lock" in text, text[-3000:]
    assert 0 in codes
    assert not errors, errors
    assert len(seen) > 10 and set(seen) == {single}
    # The reader's old connection still works after both runs (old generations are kept).
    assert rs.snapshot(reader) == single
    reader.close()
    # The warehouse equals a single run's, and a fresh reader sees it.
    assert rs.facts(wh / "liger.duckdb") == single
    with duckdb.connect(str(wh / "liger.duckdb"), read_only=True) as con:
        assert con.execute("select count(*) from quarantine").fetchone()[0] == 0


def test_second_run_fails_with_clear_message_when_lock_is_held(tmp_path: Path) -> None:
    raw = rs.small_data_raw(tmp_path / "raw", n_csv=1, kernelindex=False)
    wh, home, log = tmp_path / "wh", tmp_path / "home", tmp_path / "run.log"
    wh.mkdir()
    env = rs.run_env(raw, wh, home, LIGER_RUN_LOCK_TIMEOUT_S="1")
    with FileLock(str(wh / ".run.lock")):  # another run is "in progress"
        code = rs.run(env, log)
    text = log.read_text(errors="replace")
    assert code != 0
    assert "another run holds the warehouse lock" in text, text[-3000:]
    # Nothing was written: the holder's warehouse is untouched.
    assert not (wh / "liger.duckdb").exists() and not (wh / "generations").exists()
