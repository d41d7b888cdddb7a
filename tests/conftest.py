"""Shared fixtures: a real warehouse built by Dagster from the shipped data, in a temp dir."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import dagster as dg
import pytest

PROJECT = Path(__file__).resolve().parents[1]
DATA_RAW = PROJECT / "data_raw"
SAMPLE_RECORD = DATA_RAW / "kernelindex" / "a8e1599773300c7d.json"

os.environ.setdefault("DAGSTER_HOME", str(PROJECT / ".dagster_home"))
os.environ.setdefault("DAGSTER_DISABLE_TELEMETRY", "1")

from tests.fixtures import procs  # noqa: E402

SESSION_TOKEN = procs.install_token()  # each test process (xdist worker) its own


@pytest.fixture(scope="session", autouse=True)
def no_process_outlives_the_tests():
    """At the end of the session no process a test started (or one of theirs) is still alive: each
    survivor is named, killed by its PID, and the session fails."""
    yield
    left = procs.survivors(SESSION_TOKEN)
    if left:
        import psutil

        _, left = psutil.wait_procs(left, timeout=30)  # a shutdown under way may finish
    if left:
        names = []
        for p in left:
            try:
                names.append(f"{p.pid}: {' '.join(p.cmdline())[:200]}")
            except psutil.Error:
                names.append(str(p.pid))
        for p in left:
            procs.kill_tree(p.pid, grace=5)
        pytest.fail(f"processes started by the tests outlived them: {names}")


def all_assets_and_checks() -> list:
    from pipeline.definitions import defs

    d = defs()
    return [*d.assets, *(d.asset_checks or [])]


def materialize(
    data_raw: Path,
    warehouse: Path,
    selection: str | None = None,
    run_config=None,
    raise_on_error: bool = True,
    git_repo: str | Path = "",
) -> dg.ExecuteInProcessResult:
    from pipeline.defs.resources import WarehouseResource

    resource = WarehouseResource(data_raw=str(data_raw), warehouse=str(warehouse), git_repo=str(git_repo))
    return dg.materialize(
        all_assets_and_checks(),
        resources={"warehouse": resource},
        instance=dg.DagsterInstance.ephemeral(),
        # the warehouse job's assets: everything but the partitioned staging asset
        selection=selection or dg.AssetSelection.assets("staged_sources").downstream(),
        run_config=run_config,
        raise_on_error=raise_on_error,
    )


def copy_data_raw(dest: Path, csv_glob: str = "*.csv", with_record: bool = True) -> Path:
    (dest / "liger_csv").mkdir(parents=True)
    (dest / "kernelindex").mkdir(parents=True)
    for f in sorted((DATA_RAW / "liger_csv").glob(csv_glob)):
        shutil.copy(f, dest / "liger_csv" / f.name)
    shutil.copy(DATA_RAW / "liger_csv" / "SNAPSHOTS.tsv", dest / "liger_csv" / "SNAPSHOTS.tsv")
    if with_record:
        shutil.copy(SAMPLE_RECORD, dest / "kernelindex" / SAMPLE_RECORD.name)
    return dest


@pytest.fixture(scope="session")
def upstream_warehouse(tmp_path_factory) -> Path:
    """Upstream's history alone (data_raw/liger_csv + data_raw/kernelindex), materialized once per worker."""
    data = copy_data_raw(tmp_path_factory.mktemp("upstream") / "data_raw")
    wh = data.parent / "warehouse"
    result = materialize(data, wh)
    assert result.success
    return wh


@pytest.fixture(scope="session")
def shipped_run(tmp_path_factory) -> tuple[Path, dg.ExecuteInProcessResult]:
    """Everything shipped in data_raw (upstream history + the H200 runs), materialized once per test
    worker: (warehouse, Dagster result)."""
    wh = tmp_path_factory.mktemp("shipped") / "warehouse"
    result = materialize(DATA_RAW, wh)
    assert result.success
    return wh, result


@pytest.fixture(scope="session")
def shipped_warehouse(shipped_run) -> Path:
    return shipped_run[0]
