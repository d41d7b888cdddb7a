"""`make run` starts staging the inputs beside its start-up (`pipeline.stage.ahead`); its staging step
waits for that and counts what was staged ahead as staged by the run."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg

from pipeline.contracts.sources import file_sha256
from pipeline.defs.ingest import _with_staged_ahead
from pipeline.ingest.discovery import discover
from pipeline.stage import ahead
from pipeline.stage.store import StagingStore
from tests.fixtures import runs as rs


def _make_run(env: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pipeline.cli.run"], cwd=rs.REPO, env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def _staging_metadata(home: Path) -> dict:
    with dg.DagsterInstance.from_config(str(home)) as instance:
        event = instance.get_latest_materialization_event(dg.AssetKey("staged_sources"))
        return {k: v.value for k, v in event.asset_materialization.metadata.items()}


def test_make_run_stages_its_inputs_beside_its_start_up(tmp_path: Path) -> None:
    raw = rs.small_data_raw(tmp_path / "raw", n_csv=2, kernelindex=True)
    env = rs.run_env(raw, tmp_path / "wh", tmp_path / "home")
    _make_run(env)
    first = _staging_metadata(tmp_path / "home")
    assert first["staged_ahead"] == first["newly_staged"] == 3 and first["already_staged"] == 0

    later = sorted(rs.CSV_DIR.glob("*.csv"))[2]
    shutil.copy(later, raw / "liger_csv" / later.name)
    _make_run(env)
    second = _staging_metadata(tmp_path / "home")
    assert second["staged_ahead"] == second["newly_staged"] == 1 and second["already_staged"] == 3
    assert any(p.name.startswith(file_sha256(later)) for p in (tmp_path / "wh").rglob("*.parquet"))


def test_what_the_step_stages_itself_is_counted_beside_what_was_staged_ahead(tmp_path: Path) -> None:
    csvs = sorted(rs.CSV_DIR.glob("*.csv"))[:3]
    raw = tmp_path / "raw"
    (raw / "liger_csv").mkdir(parents=True)
    for p in csvs[:2]:
        shutil.copy(p, raw / "liger_csv" / p.name)
    store = StagingStore(tmp_path / "staging")
    ahead.start(lambda: discover(raw)[0], store.root)
    staged_ahead = ahead.take(store.root)
    assert len(staged_ahead) == 2 and ahead.take(store.root) == set()  # taken once
    shutil.copy(csvs[2], raw / "liger_csv" / csvs[2].name)  # arrives after the staging ahead
    sources = discover(raw)[0]
    counts = _with_staged_ahead(store.stage(sources), sources, staged_ahead)
    assert (counts["newly_staged"], counts["staged_ahead"], counts["already_staged"]) == (3, 2, 0)


def test_a_failed_staging_ahead_leaves_the_step_to_stage_and_report(tmp_path: Path) -> None:
    def broken() -> list:
        raise OSError("injected: the inputs could not be listed")

    root = tmp_path / "staging"
    ahead.start(broken, root)
    assert ahead.take(root) == set()
    assert not root.exists() or not any(root.rglob("*.parquet"))
