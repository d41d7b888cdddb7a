"""`make run`: the warehouse job, in this one process, recorded in the Dagster instance of
``$DAGSTER_HOME`` (the UI shows it with its events and checks), then the closing summary of that
run. `dg launch` would start a code server and a run worker process first: seconds of start-up
that the run itself does not need. Scheduled runs and the sensor still go through the daemon.

Nothing new costs almost nothing: when the inputs (data_raw's files by size, mtime and content,
the clone's refs), the code, the settings and the published warehouse are what the last
successful run saw, the run records `liger_nothing_new` instead and touches no table, no
liger.duckdb and no report. `LIGER_REHASH=1` always runs the whole job.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import sys
import threading
from pathlib import Path

from pipeline.config import PROJECT_ROOT, SQL_DIR, Settings, SettingsError, load

JOB = "liger_warehouse_job"
STAMP = "last_run.json"


def _code_version() -> str:
    """Every source and SQL file by path, size and mtime: an edit anywhere runs the whole job."""
    h = hashlib.sha256()
    for root, pattern in ((PROJECT_ROOT / "pipeline", "*.py"), (SQL_DIR, "*.sql")):
        for p in sorted(root.rglob(pattern)):
            st = p.stat()
            h.update(f"{p.relative_to(PROJECT_ROOT)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def _state(settings: Settings, previous: dict) -> dict:
    from pipeline.history.git import GitError, open_repo, refs_state
    from pipeline.ingest.fingerprint import Fingerprint, scan_data_raw
    from pipeline.store.warehouse import Warehouse

    prev = Fingerprint.from_cursor(previous.get("inputs"))
    inputs = Fingerprint(files=scan_data_raw(settings.data_raw.resolve(), prev))
    if settings.git_repo_dir is not None:
        inputs.git_repo = str(settings.git_repo_dir.resolve())
        try:
            inputs.git_head = hashlib.sha256(refs_state(open_repo(settings.git_repo_dir)).encode()).hexdigest()
        except GitError:  # unknown: the job runs, and its ingest step refuses the clone by name
            inputs.git_head = None
    published = Warehouse(settings.warehouse, settings.local).published()
    return {
        "inputs": inputs.to_cursor(),
        "inputs_digest": inputs.digest,
        "code": _code_version(),
        "settings": settings.model_dump(mode="json"),
        "published": published.seq if published else None,
    }


def _unchanged(settings: Settings, stamp: Path) -> tuple[str | None, dict]:
    """(why nothing is new, or None; the state to remember after a successful run)."""
    from pipeline.serve.duckdb_build import built_state
    from pipeline.store.warehouse import Warehouse

    try:
        previous = json.loads(stamp.read_text())
    except (OSError, ValueError):
        previous = {}
    state = _state(settings, previous)
    same = {k: v for k, v in state.items() if k != "inputs"} == {k: previous.get(k) for k in state if k != "inputs"}
    built = built_state(Warehouse(settings.warehouse, settings.local)).get("seq")
    if same and not settings.rehash and state["published"] is not None and built == state["published"]:
        return f"nothing new since warehouse run {state['published']}: inputs, code and settings unchanged", state
    return None, state


def main() -> int:
    import dagster as dg

    from pipeline.cli import summary
    from pipeline.common.files import write_atomic
    from pipeline.store.warehouse import Warehouse

    try:
        settings = load()  # a bad setting fails here, before any work, naming its variable
    except SettingsError as exc:
        print(exc, file=sys.stderr)
        return 2
    stamp = settings.local / STAMP
    reason, state = _unchanged(settings, stamp)
    with dg.DagsterInstance.get() as instance:
        if reason:  # the one job that needs none of the code location's assets
            from pipeline.defs.schedules import liger_nothing_new

            config = {"ops": {"inputs_unchanged": {"config": {"reason": reason}}}}
            result = liger_nothing_new.execute_in_process(run_config=config, instance=instance, raise_on_error=False)
        else:
            from pipeline.definitions import defs

            job = defs().resolve_job_def(JOB)
            result = job.execute_in_process(instance=instance, raise_on_error=False)
            if result.success:
                # only the published run moved: the inputs were read before the job
                published = Warehouse(settings.warehouse, settings.local).published()
                state["published"] = published.seq if published else None
                settings.local.mkdir(parents=True, exist_ok=True)
                write_atomic(stamp, json.dumps(state).encode())
            else:
                stamp.unlink(missing_ok=True)
        summary.main(result.run_id, nothing_new=reason, instance=instance)
    return 0 if result.success else 1


def exit_without_teardown(code: int) -> None:
    """End the process with ``code`` once everything is written, skipping the interpreter's teardown
    of every module and object: with Dagster, SQLAlchemy, DuckDB, Polars and pyarrow loaded it is a
    large part of a nothing-new run, and the run is done. By then the job's files,
    databases and the Dagster instance are closed by their context managers; threads still running
    are waited for, the atexit handlers run (logging's flush among them) and stdio is flushed, as a
    normal exit would."""
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    exit_without_teardown(main())
