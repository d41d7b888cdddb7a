"""The Dagster instance on a real PostgreSQL server (deploy/dagster.yaml): a materialization and a
sensor tick of the daemon land in PostgreSQL, not in SQLite."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import psycopg2
import pytest

from tests.conftest import PROJECT, all_assets_and_checks, copy_data_raw
from tests.fixtures.postgres import postgres_server
from tests.fixtures.procs import kill_tree

SMALL_CSV = "*cutedsl.csv"


@pytest.fixture(scope="module")
def postgres_url():
    with postgres_server() as url:
        yield url


@pytest.fixture()
def pg_home(tmp_path, postgres_url, monkeypatch) -> Path:
    """A DAGSTER_HOME holding the file `make setup` installs when LIGER_DAGSTER_PG_URL is set."""
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(PROJECT / "deploy" / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("LIGER_DAGSTER_PG_URL", postgres_url)
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    return home


def pg_count(url: str, sql: str) -> int:
    with psycopg2.connect(url.replace("+psycopg2", "")) as con, con.cursor() as cur:
        cur.execute(sql)
        return cur.fetchone()[0]


def test_materialization_is_stored_in_postgres(pg_home, postgres_url, tmp_path):
    from pipeline.defs.resources import WarehouseResource

    data_raw = copy_data_raw(tmp_path / "data_raw", csv_glob=SMALL_CSV, with_record=False)
    with dg.DagsterInstance.from_config(str(pg_home)) as instance:
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        assert type(instance.event_log_storage).__name__ == "PostgresEventLogStorage"
        result = dg.materialize(
            all_assets_and_checks(),
            resources={"warehouse": WarehouseResource(data_raw=str(data_raw), warehouse=str(tmp_path / "wh"))},
            instance=instance,
            selection=dg.AssetSelection.assets("staged_sources").downstream(),  # the warehouse job's assets
        )
        assert result.success
        assert instance.get_latest_materialization_event(dg.AssetKey("fact_measurement")) is not None
    assert (
        pg_count(postgres_url, f"select count(*) from runs where run_id = '{result.run_id}' and status = 'SUCCESS'")
        == 1
    )
    assert (
        pg_count(
            postgres_url,
            f"select count(*) from event_logs where run_id = '{result.run_id}' "
            "and dagster_event_type = 'ASSET_MATERIALIZATION'",
        )
        >= 7
    )
    assert not list(pg_home.rglob("*.db"))  # no SQLite run/event/schedule database was created


def test_daemon_sensor_tick_launches_a_run_stored_in_postgres(pg_home, postgres_url, tmp_path):
    data_raw = copy_data_raw(tmp_path / "data_raw", csv_glob=SMALL_CSV, with_record=False)
    env = {
        **os.environ,
        "LIGER_DATA_RAW": str(data_raw),
        "LIGER_WAREHOUSE": str(tmp_path / "wh"),
        "PYTHONPATH": str(PROJECT),
        "DAGSTER_DISABLE_TELEMETRY": "1",
    }
    env.pop("LIGER_GIT_REPO", None)
    daemon = subprocess.Popen(
        [str(Path(sys.executable).parent / "dagster-daemon"), "run", "-m", "pipeline.definitions"],
        cwd=PROJECT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(tmp_path / "daemon.log", "wb"),
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 600
        with dg.DagsterInstance.from_config(str(pg_home)) as instance:
            while True:
                runs = instance.get_runs(filters=dg.RunsFilter(tags={"liger/trigger": "liger_inputs_sensor"}))
                if runs and runs[0].status in (dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE):
                    break
                assert daemon.poll() is None, (tmp_path / "daemon.log").read_text()[-3000:]
                assert time.monotonic() < deadline, (tmp_path / "daemon.log").read_text()[-3000:]
                time.sleep(1)
        assert runs[0].status == dg.DagsterRunStatus.SUCCESS
        assert len(runs) == 1  # one tick, one run; the cursor holds the fingerprint
    finally:
        kill_tree(daemon)  # the daemon, its run workers and code servers
    assert pg_count(postgres_url, "select count(*) from job_ticks where status = 'SUCCESS'") >= 1
    assert (
        pg_count(postgres_url, "select count(*) from instigators where instigator_body like '%liger_inputs_sensor%'")
        >= 1
    )
