"""The instance `make run`, the UI and the daemon share (config/dagster.yaml): Dagster's own, its default
SQLite storage keeping its engines, in the instance's own folders, with several processes on one home."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg

from tests.conftest import PROJECT


@dg.asset
def tiny() -> int:
    return 1


def _home(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(PROJECT / "config" / "dagster.yaml", home / "dagster.yaml")
    return home


def test_the_project_instance_keeps_engines_in_dagsters_own_folders(tmp_path, monkeypatch):
    from pipeline.instance.sqlite_storage import LigerDagsterInstance, SqliteStorageKeepingEngines

    home = _home(tmp_path)
    # DAGSTER_HOME names another folder: the storage follows the instance's folder, not the variable
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "elsewhere"))
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert isinstance(instance, LigerDagsterInstance)
        assert isinstance(instance.get_ref().storage, SqliteStorageKeepingEngines)
        result = dg.materialize([tiny], instance=instance)
        assert result.success
    # the files Dagster's default SQLite storage uses, so an instance without this class reads them
    assert (home / "history" / "runs.db").exists()
    assert (home / "history" / "runs" / f"{result.run_id}.db").exists()
    assert (home / "history" / "runs" / "index.db").exists()
    assert not (tmp_path / "elsewhere").exists()
    with dg.DagsterInstance.from_config(str(home), config_filename="absent.yaml") as plain:
        assert type(plain) is dg.DagsterInstance
        assert plain.get_run_by_id(result.run_id).is_success
        assert plain.get_latest_materialization_event(dg.AssetKey("tiny")).run_id == result.run_id


def test_another_process_writes_between_two_reads_of_a_kept_engine(tmp_path):
    """An instance that keeps its engines still sees what another process wrote since its last read
    (its kept connection reads in a new transaction)."""
    home = _home(tmp_path)
    with dg.DagsterInstance.from_config(str(home)) as instance:
        first = dg.materialize([tiny], instance=instance)
        assert instance.get_latest_materialization_event(dg.AssetKey("tiny")).run_id == first.run_id
        code = (
            "import dagster as dg\n"
            f"from {__name__} import tiny\n"
            f"with dg.DagsterInstance.from_config({str(home)!r}) as i:\n"
            "    print(dg.materialize([tiny], instance=i).run_id)\n"
        )
        done = subprocess.run([sys.executable, "-c", code], cwd=PROJECT, capture_output=True, text=True, check=True)
        other = done.stdout.split()[-1]
        assert other != first.run_id
        assert instance.get_latest_materialization_event(dg.AssetKey("tiny")).run_id == other
        assert {r.run_id for r in instance.get_runs()} == {first.run_id, other}
        assert instance.get_run_by_id(other).is_success
        assert any(e.dagster_event and e.dagster_event.is_step_success for e in instance.all_logs(other))


def _open_deleted_files() -> list[str]:
    fds = Path("/proc/self/fd")
    return [t for t in (os.readlink(fd) for fd in fds.iterdir() if fd.exists()) if t.endswith(" (deleted)")]


def test_a_wiped_instance_takes_new_runs(tmp_path):
    home = _home(tmp_path)
    with dg.DagsterInstance.from_config(str(home)) as instance:
        dg.materialize([tiny], instance=instance)
        instance.wipe()
        # the kept connections to the run databases a wipe deletes are closed, not left writing to nothing
        assert not [f for f in _open_deleted_files() if str(home) in f]
        assert instance.get_runs() == []
        again = dg.materialize([tiny], instance=instance)
        assert [r.run_id for r in instance.get_runs()] == [again.run_id]
        assert instance.get_latest_materialization_event(dg.AssetKey("tiny")).run_id == again.run_id


def _shape(db: Path) -> tuple:
    """A SQLite database's schema, alembic revision and journal mode."""
    import sqlite3

    with sqlite3.connect(db) as con:
        return (
            sorted(con.execute("select type, name, sql from sqlite_master").fetchall()),
            con.execute("select version_num from alembic_version").fetchall(),
            con.execute("pragma journal_mode").fetchone(),
        )


def test_a_runs_database_is_made_as_dagsters_own_storage_makes_it(tmp_path):
    """The kept-engine event log makes a run's new database itself (the migration scripts read once per
    process): the same tables, indexes, revision and WAL as Dagster's own storage makes, read by it."""
    from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage

    from pipeline.instance.sqlite_storage import _EventLogKeepingEngines

    ours, theirs = _EventLogKeepingEngines(str(tmp_path / "ours")), SqliteEventLogStorage(str(tmp_path / "theirs"))
    for storage in (ours, theirs):
        with storage.run_connection("run-a"):
            pass
    assert _shape(tmp_path / "ours" / "run-a.db") == _shape(tmp_path / "theirs" / "run-a.db")
    assert _shape(tmp_path / "ours" / "index.db") == _shape(tmp_path / "theirs" / "index.db")
    assert _shape(tmp_path / "ours" / "run-a.db")[2] == ("wal",)
    home = _home(tmp_path)
    with dg.DagsterInstance.from_config(str(home)) as instance:
        run_id = dg.materialize([tiny], instance=instance).run_id
    with dg.DagsterInstance.from_config(str(home), config_filename="absent.yaml") as plain:
        assert any(e.dagster_event and e.dagster_event.is_step_success for e in plain.all_logs(run_id))


def test_an_index_with_tables_but_no_revision_goes_through_dagsters_own_path(tmp_path):
    """An index with Dagster's tables but no alembic_version (made before Dagster stamped SQLite
    databases) is stamped by Dagster's own path, as Dagster's own storage does."""
    import sqlite3

    from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage

    from pipeline.instance.sqlite_storage import _EventLogKeepingEngines

    expected = {}
    for name, cls in (("ours", _EventLogKeepingEngines), ("theirs", SqliteEventLogStorage)):
        folder = tmp_path / name
        cls(str(folder)).dispose()
        with sqlite3.connect(folder / "index.db") as con:
            con.execute("drop table alembic_version")
        storage = cls(str(folder))
        with storage.index_connection():
            pass
        storage.dispose()
        expected[name] = _shape(folder / "index.db")
    assert expected["ours"] == expected["theirs"]


def _checks_of_revision(monkeypatch) -> list[str]:
    """Which of Dagster's runs and schedules storages parsed the migration scripts (checked the revision)."""
    from dagster._core.storage.runs.sqlite import sqlite_run_storage
    from dagster._core.storage.schedules.sqlite import sqlite_schedule_storage

    seen = []
    for name, module in (("runs", sqlite_run_storage), ("schedules", sqlite_schedule_storage)):
        check = module.check_alembic_revision

        def recording(*args, name=name, check=check):
            seen.append(name)
            return check(*args)

        monkeypatch.setattr(module, "check_alembic_revision", recording)
    return seen


def test_stamped_runs_and_schedules_databases_are_opened_as_they_are(tmp_path, monkeypatch):
    """Dagster's own check of the runs and schedules databases reads every migration script to learn the
    head revision, and changes nothing in a stamped database: one is opened as it is; a database
    without a revision (or a new home) goes through Dagster's own path, which stamps it."""
    import sqlite3

    home = _home(tmp_path)
    seen = _checks_of_revision(monkeypatch)
    with dg.DagsterInstance.from_config(str(home)) as instance:
        run_id = dg.materialize([tiny], instance=instance).run_id
    assert sorted(seen) == ["runs", "schedules"]  # a new home: Dagster's path made both
    stamped = {db: _shape(home / db) for db in ("history/runs.db", "schedules/schedules.db")}
    seen.clear()
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert instance.get_run_by_id(run_id).is_success
        assert dg.materialize([tiny], instance=instance).success
    assert seen == []
    assert {db: _shape(home / db) for db in stamped} == stamped
    for db in stamped:
        with sqlite3.connect(home / db) as con:
            con.execute("drop table alembic_version")
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert instance.get_run_by_id(run_id).is_success
    assert sorted(seen) == ["runs", "schedules"]
    assert all(_shape(home / db)[1] for db in stamped)  # stamped again by Dagster's path
