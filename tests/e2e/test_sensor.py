"""The ingestion sensor: runs only when data_raw or the upstream HEAD changed, with de-duplicating run keys."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import dagster as dg
import pytest

from pipeline.defs.resources import WarehouseResource
from pipeline.defs.sensors import liger_inputs_sensor
from pipeline.ingest.fingerprint import Fingerprint
from tests.fixtures import git_repo as g

SMALL = "2026-08-03_4d899a0bdc_all_benchmark_data_cutedsl.csv"


@pytest.fixture(autouse=True)
def no_env_repo(monkeypatch):
    monkeypatch.delenv("LIGER_GIT_REPO", raising=False)


@pytest.fixture()
def instance():
    with dg.instance_for_test() as inst:
        yield inst


@pytest.fixture()
def data_raw(tmp_path) -> Path:
    d = tmp_path / "data_raw" / "liger_csv"
    d.mkdir(parents=True)
    shutil.copy(g.HISTORY / SMALL, d / SMALL)
    return d.parent


def tick(instance, data_raw: Path, cursor: str | None, git_repo: str = "") -> dg.SensorResult | dg.SkipReason:
    res = WarehouseResource(data_raw=str(data_raw), warehouse=str(data_raw.parent / "wh"), git_repo=git_repo)
    ctx = dg.build_sensor_context(instance=instance, cursor=cursor, resources={"warehouse": res})
    return liger_inputs_sensor(ctx)


def test_runs_on_first_tick_then_only_on_change(instance, data_raw):
    first = tick(instance, data_raw, None)
    assert len(first.run_requests) == 1 and first.run_requests[0].run_key
    cursor = first.cursor

    idle = tick(instance, data_raw, cursor)
    assert idle.run_requests in (None, []) and "unchanged" in str(idle.skip_reason)

    f = data_raw / "liger_csv" / SMALL  # touch: mtime moves, content does not -> no run, cursor remembers mtime
    os.utime(f, ns=(f.stat().st_atime_ns, f.stat().st_mtime_ns + 5_000_000_000))
    touched = tick(instance, data_raw, idle.cursor)
    assert not touched.run_requests
    assert Fingerprint.from_cursor(touched.cursor).files[f"liger_csv/{SMALL}"][1] == f.stat().st_mtime_ns

    added_file = data_raw / "liger_csv" / "extra.csv"  # a new file -> one run
    shutil.copy(f, added_file)
    added = tick(instance, data_raw, touched.cursor)
    assert len(added.run_requests) == 1 and "added 1" in added.run_requests[0].tags["liger/change"]

    with added_file.open("a") as fh:  # changed content -> one run, different key
        fh.write("x\n")
    changed = tick(instance, data_raw, added.cursor)
    assert len(changed.run_requests) == 1 and "changed 1" in changed.run_requests[0].tags["liger/change"]
    assert changed.run_requests[0].run_key != added.run_requests[0].run_key

    added_file.unlink()  # back to the earlier content: still a new run key (A -> B -> A runs again)
    removed = tick(instance, data_raw, changed.cursor)
    assert len(removed.run_requests) == 1
    keys = {r.run_requests[0].run_key for r in (first, added, changed, removed)}
    assert len(keys) == 4


def test_retried_tick_gives_same_run_key(instance, data_raw):
    a = tick(instance, data_raw, None)
    b = tick(instance, data_raw, None)
    assert a.run_requests[0].run_key == b.run_requests[0].run_key  # Dagster drops the duplicate


def test_new_upstream_commit_triggers_a_run(instance, data_raw, tmp_path):
    repo = g.init_repo(tmp_path / "repo")
    (repo / "benchmark" / "data").mkdir(parents=True)
    shutil.copy(g.HISTORY / SMALL, repo / "benchmark" / "data" / "all_benchmark_data_cutedsl.csv")
    head1 = g.commit(repo, "one", "2026-08-03T21:09:17+00:00")
    first = tick(instance, data_raw, None, str(repo))
    assert first.run_requests[0].tags["liger/git_head"] == head1
    assert not tick(instance, data_raw, first.cursor, str(repo)).run_requests
    g.git(repo, "commit", "-q", "--allow-empty", "-m", "two", date="2026-08-04T00:00:00+00:00")
    moved = tick(instance, data_raw, first.cursor, str(repo))
    assert len(moved.run_requests) == 1 and "git HEAD" in moved.run_requests[0].tags["liger/change"]


def test_unusable_repo_skips_without_launching(instance, data_raw, tmp_path):
    result = tick(instance, data_raw, None, str(tmp_path / "missing"))
    assert isinstance(result, dg.SkipReason) and "LIGER_GIT_REPO" in result.skip_message


def test_sensor_adds_a_staging_partition_per_new_input(instance, data_raw):
    from pipeline.defs.ingest import source_partitions

    first = tick(instance, data_raw, None)
    (request,) = first.dynamic_partitions_requests
    files = sorted(p.relative_to(data_raw).as_posix() for p in data_raw.rglob("*") if p.suffix in (".csv", ".json"))
    assert sorted(request.partition_keys) == files
    instance.add_dynamic_partitions(source_partitions.name, list(request.partition_keys))  # what the daemon does
    shutil.copy(data_raw / "liger_csv" / SMALL, data_raw / "liger_csv" / "extra.csv")
    added = tick(instance, data_raw, first.cursor)
    assert [list(r.partition_keys) for r in added.dynamic_partitions_requests] == [["liger_csv/extra.csv"]]


def test_first_tick_after_a_run_starts_nothing_and_the_run_filled_the_partitions(instance, data_raw):
    """`make run`, then the first `make dev` tick: nothing new, so no run; and `source_content` shows
    the partitions that run staged as materialized (not "never materialized / 0 % filled")."""
    from pipeline.definitions import defs
    from pipeline.defs.ingest import source_partitions

    d = defs()
    result = dg.materialize(
        [*d.assets, *(d.asset_checks or [])],
        resources={"warehouse": WarehouseResource(data_raw=str(data_raw), warehouse=str(data_raw.parent / "wh"))},
        instance=instance,
        selection=dg.AssetSelection.assets("staged_sources").downstream(),
    )
    assert result.success
    keys = sorted(p.relative_to(data_raw).as_posix() for p in data_raw.rglob("*.csv"))
    assert sorted(instance.get_dynamic_partitions(source_partitions.name)) == keys
    assert sorted(instance.get_materialized_partitions(dg.AssetKey("source_content"))) == keys

    first = tick(instance, data_raw, None)
    assert not first.run_requests and "already holds" in str(first.skip_reason)
    assert Fingerprint.from_cursor(first.cursor).files  # seeded: the next tick compares with it
    assert not tick(instance, data_raw, first.cursor).run_requests

    shutil.copy(data_raw / "liger_csv" / SMALL, data_raw / "liger_csv" / "extra.csv")
    assert len(tick(instance, data_raw, None).run_requests) == 1  # a first tick with something new runs
    assert len(tick(instance, data_raw, first.cursor).run_requests) == 1


def test_code_location_has_a_name():
    from dagster_dg_core.context import DgContext

    from tests.conftest import PROJECT

    assert DgContext.for_project_environment(PROJECT, {}).code_location_name == "liger_warehouse"
