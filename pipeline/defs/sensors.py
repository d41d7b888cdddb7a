"""Ingestion sensor: run the warehouse job when data_raw changes or the upstream clone gets new commits.

Each tick fingerprints data_raw (paths, sizes, mtimes; content sha256 only for files whose size or
mtime moved) and, when LIGER_GIT_REPO is configured, the clone's HEAD sha. The fingerprint lives in
the sensor cursor; a run of ``liger_warehouse_job`` is requested only when its digest changed, with a
run_key so a retried tick never launches a duplicate. The run itself is incremental: staging is a
content-digest ledger, so only new file contents / new git blobs are parsed.

The first tick (no cursor yet, e.g. the first `make dev` after `make run`) compares data_raw with the
published warehouse instead: when every input file is a source the newest warehouse run already
holds, with the same content, and no source of that run is gone, the cursor is seeded and no run
starts. With LIGER_GIT_REPO set, the first tick always runs (the run log does not name a HEAD).
"""

from pathlib import Path

import dagster as dg

from pipeline.common import duck
from pipeline.config import GIT_REPO_ENV
from pipeline.contracts.sources import GIT_PREFIX
from pipeline.defs.ingest import source_partitions
from pipeline.defs.resources import WarehouseResource
from pipeline.defs.schedules import warehouse_job
from pipeline.ingest import git_history
from pipeline.ingest.fingerprint import Fingerprint, describe_change, run_key, scan_data_raw
from pipeline.ingest.partitions import current_keys


def published_holds_inputs(warehouse: WarehouseResource, fingerprint: Fingerprint) -> bool:
    """True when the newest published run holds exactly the data_raw inputs ``fingerprint`` saw."""
    wh = warehouse.open()
    published = wh.published()
    if published is None:
        return False
    files = wh.snapshot_files(published).get("source") or []
    if not files:
        return False
    with duck.connect(remote_root=wh.root_uri) as con:
        held = set(con.execute("select source_path, content_sha256 from read_parquet($f)", {"f": files}).fetchall())
    now = {k: fingerprint.files.get(k, [None, None, None])[2] for k in current_keys(warehouse.data_raw_path(), None)}
    if any((path, sha) not in held for path, sha in now.items()):
        return False  # a new or changed input
    return all(now.get(path) == sha for path, sha in held if not path.startswith(GIT_PREFIX))  # none gone


@dg.sensor(
    name="liger_inputs_sensor",
    job=warehouse_job,
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Materializes the warehouse when data_raw files are added/changed/removed "
    "or the upstream git HEAD moves.",
)
def liger_inputs_sensor(context: dg.SensorEvaluationContext, warehouse: WarehouseResource):
    old = Fingerprint.from_cursor(context.cursor)
    new = Fingerprint(files=scan_data_raw(warehouse.data_raw_path(), old), runs=old.runs if old else 0)
    repo = warehouse.git_repo_path()
    if repo is not None:
        try:
            git_dir = git_history.validate_repo(repo)
            new.git_repo, new.git_head = str(Path(repo).resolve()), git_history.head_sha(git_dir)
        except git_history.GitHistoryError as exc:
            context.log.warning(str(exc))
            return dg.SkipReason(f"{GIT_REPO_ENV} is unusable, not launching: {exc}")
    if old is None and repo is None and published_holds_inputs(warehouse, new):
        return dg.SensorResult(
            skip_reason="first tick: the published warehouse already holds every input in data_raw",
            cursor=new.to_cursor(),
        )
    if old is not None and old.digest == new.digest:
        # Only mtimes may have moved: remember them so the next tick does not re-hash.
        return dg.SensorResult(skip_reason="data_raw and upstream HEAD unchanged", cursor=new.to_cursor())
    change = describe_change(old, new)
    new.runs += 1
    context.log.info(f"inputs changed: {change}")
    # Every input gets its staging partition, so a backfill can stage them in parallel anywhere.
    known = set(context.instance.get_dynamic_partitions(source_partitions.name))
    added = [k for k in current_keys(warehouse.data_raw_path(), repo) if k not in known]
    request = dg.RunRequest(
        run_key=run_key(old, new),
        tags={
            "liger/trigger": "liger_inputs_sensor",
            "liger/change": change[:200],
            "liger/git_head": new.git_head or "",
        },
    )
    return dg.SensorResult(
        run_requests=[request],
        cursor=new.to_cursor(),
        dynamic_partitions_requests=[source_partitions.build_add_request(added)] if added else [],
    )
