"""A real Dagster run over commit runs whose environment.json is bad, or missing from one of two
byte-identical runs (issue 53; tests/unit/ingest/test_commit_run_environment.py has every kind)."""

from __future__ import annotations

import os

import duckdb

from pipeline.ingest.commit_runs import ENVIRONMENT_JSON
from tests.conftest import materialize
from tests.e2e.test_gate import RERUN
from tests.unit.ingest.test_commit_run_environment import _outside


def test_a_run_lands_whatever_its_environment_and_an_identical_run_keeps_its_environment(tmp_path):
    """A real Dagster run over commit runs with a deep, a FIFO and an outside-symlink environment.json,
    and a commit run twice, byte-identical, once with an environment: everything lands, each bad file is
    quarantined with its reason, the identical pair keeps the environment as JSON."""
    root = tmp_path / "data_raw"
    runs = {c * 40: root / "runs" / "commit_runs" / (c * 40) for c in "abcd"}
    for sha, folder in runs.items():
        for run in ("r1", "r2") if sha == "a" * 40 else ("r1",):
            (folder / run).mkdir(parents=True)
            (folder / run / "all_benchmark_data.csv").write_bytes(RERUN.read_bytes())
    (runs["a" * 40] / "r2" / ENVIRONMENT_JSON).write_text('{"gpu": "H100", "torch": {"version": "2.6"}}')
    (runs["b" * 40] / "r1" / ENVIRONMENT_JSON).write_text("[" * 30_000 + "]" * 30_000)
    os.mkfifo(runs["c" * 40] / "r1" / ENVIRONMENT_JSON)
    (runs["d" * 40] / "r1" / ENVIRONMENT_JSON).symlink_to(_outside(tmp_path))
    assert materialize(root, tmp_path / "wh").success
    with duckdb.connect(str(tmp_path / "wh" / "liger.duckdb"), read_only=True) as con:
        snaps = dict(con.sql("select commit, environment from benchmark_snapshot").fetchall())
        refused = dict(con.sql("select source_file, reason from quarantine where location = 'file'").fetchall())
    assert set(snaps) == set(runs)  # every run landed
    assert snaps["a" * 40] == '{"gpu":"H100","torch":{"version":"2.6"}}'
    assert snaps["b" * 40] is snaps["c" * 40] is snaps["d" * 40] is None
    where = "runs/commit_runs/{}/r1/" + ENVIRONMENT_JSON
    assert refused == {
        where.format("b" * 40): "json_too_deep",
        where.format("c" * 40): "unreadable_file",
        where.format("d" * 40): "unreadable_file",
    }
