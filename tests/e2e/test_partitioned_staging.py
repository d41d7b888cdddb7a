"""Staging as a partitioned asset: one dynamic partition per data_raw file or upstream commit.

Partition runs stage in parallel (real `dg launch` processes at once, each committing its row to
the `staged_content` Delta table); the single-process job then finds everything staged and gives
the same facts as ever: 4,421 on upstream's history, the same on the git backfill.
"""

from __future__ import annotations

import subprocess

import dagster as dg
import duckdb

from pipeline.defs.ingest import STAGED_CONTENT, source_content, source_partitions
from pipeline.defs.resources import WarehouseResource
from pipeline.ingest.partitions import current_keys
from tests.conftest import all_assets_and_checks, copy_data_raw
from tests.fixtures import git_repo as g
from tests.fixtures import runs as rs


def _materialize_partitions(instance, resource, keys):
    for key in keys:
        result = dg.materialize(
            [source_content], partition_key=key, instance=instance, resources={"warehouse": resource}
        )
        assert result.success


def _main_job(instance, resource):
    result = dg.materialize(
        all_assets_and_checks(),
        instance=instance,
        resources={"warehouse": resource},
        selection=dg.AssetSelection.assets("staged_sources").downstream(),
    )
    assert result.success
    staged = next(
        m for m in result.get_asset_materialization_events() if m.asset_key == dg.AssetKey("staged_sources")
    ).materialization.metadata
    return result, staged


def test_partition_runs_then_the_job_give_the_upstream_facts(tmp_path):
    raw = copy_data_raw(tmp_path / "data_raw")
    instance = dg.DagsterInstance.ephemeral()
    resource = WarehouseResource(data_raw=str(raw), warehouse=str(tmp_path / "wh"))
    keys = current_keys(raw, None)
    assert len(keys) == 41 and "kernelindex/a8e1599773300c7d.json" in keys
    instance.add_dynamic_partitions(source_partitions.name, keys)
    _materialize_partitions(instance, resource, keys)
    _, staged = _main_job(instance, resource)
    assert staged["newly_staged"].value == 0 and staged["already_staged"].value == 41
    assert staged["staged_by_partition_runs"].value == 41  # read back from the staged_content table
    with duckdb.connect(str(tmp_path / "wh" / "liger.duckdb"), read_only=True) as con:
        assert con.execute("select count(*) from fact_measurement").fetchone()[0] == 4421
    ledger = resource.open().store.files(STAGED_CONTENT.name)
    with duckdb.connect() as con:
        rows = con.execute("select count(*), count(distinct partition_key) from read_parquet(?)", [ledger]).fetchone()
    assert rows == (41, 41)


def test_git_backfill_partitions_give_the_same_facts(tmp_path):
    repo = tmp_path / "repo"
    g.build_history_repo(repo)
    (tmp_path / "empty_raw").mkdir()
    instance = dg.DagsterInstance.ephemeral()
    resource = WarehouseResource(
        data_raw=str(tmp_path / "empty_raw"), warehouse=str(tmp_path / "wh"), git_repo=str(repo)
    )
    keys = current_keys(tmp_path / "empty_raw", repo)
    assert keys and all(k.startswith("git:") for k in keys)
    instance.add_dynamic_partitions(source_partitions.name, keys)
    _materialize_partitions(instance, resource, keys)
    _, staged = _main_job(instance, resource)
    assert staged["newly_staged"].value == 0
    with duckdb.connect(str(tmp_path / "wh" / "liger.duckdb"), read_only=True) as con:
        assert con.execute("select count(*) from fact_measurement").fetchone()[0] == 4421


def test_partition_runs_in_parallel_processes_both_commit(tmp_path):
    raw = rs.small_data_raw(tmp_path / "raw", n_csv=2, kernelindex=False)
    env = rs.run_env(raw, tmp_path / "wh", tmp_path / "home")
    keys = current_keys(raw, None)
    assert len(keys) == 2
    add = (
        "import dagster as dg, sys; from pipeline.defs.ingest import source_partitions; "
        "dg.DagsterInstance.get().add_dynamic_partitions(source_partitions.name, sys.argv[1:])"
    )
    subprocess.run([rs.python(), "-c", add, *keys], env=env, check=True, cwd=rs.REPO)
    procs = [
        subprocess.Popen(
            [str(rs.DG), "launch", "--job", "liger_partitioned_staging", "--partition", k],
            cwd=rs.REPO,
            env=env,
            stdout=(tmp_path / f"p{i}.log").open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        for i, k in enumerate(keys)
    ]
    try:
        codes = [p.wait(timeout=900) for p in procs]  # generous: the machine may be loaded
    finally:
        for p in procs:
            rs.kill(p)
    assert codes == [0, 0], [(tmp_path / f"p{i}.log").read_text()[-2000:] for i in range(2)]
    from pipeline.store.warehouse import Warehouse

    store = Warehouse(tmp_path / "wh").store
    with duckdb.connect() as con:
        got = sorted(
            r[0]
            for r in con.execute(
                "select partition_key from read_parquet(?)", [store.files(STAGED_CONTENT.name)]
            ).fetchall()
        )
    assert got == keys  # two concurrent appends, both committed, nothing doubled
    assert len(store.history(STAGED_CONTENT.name)) == 2
