"""Confirm by itself: when a warehouse run opens a regression alert, queue a bisect plan for it.

`bisect_queue_sensor` looks at the newest published warehouse run; the alerts it opened (status open,
direction regression) each get one plan for their worst flagged sweep in ``<warehouse>/bisect/queue/``
(pipeline/bisect/queue.py), and the alert's Markdown page says so. Its cursor is the last run it looked
at; the queue's files make it exactly once per alert even without one. With a GPU host configured
(LIGER_BISECT_AUTORUN=1 and LIGER_BENCH_PYTHON), each queued plan is also a run of
`bisect_queue_job`: confirm then bisect under the GPU lock, ingest the runs, deliver the result on
the alert's channel once. Without it the queue waits for `make bisect-queue` on a GPU host.
"""

import dagster as dg

from pipeline.bisect import queue
from pipeline.config import load
from pipeline.defs.resources import WarehouseResource


class QueuedBisect(dg.Config):
    alert_id: str


@dg.op(description="Run one queued bisect plan (confirm, then bisect), ingest its runs, deliver its result once.")
def run_queued_bisect(context: dg.OpExecutionContext, config: QueuedBisect, warehouse: WarehouseResource) -> dict:
    settings = load().model_copy(
        update={"warehouse": warehouse.warehouse_uri(), "git_repo": str(warehouse.git_repo_path() or "")}
        | {"data_raw": warehouse.data_raw_path(), "local_dir": warehouse.warehouse_path()}
    )
    path = queue.entry_path(warehouse.warehouse_path(), config.alert_id)
    if queue.read_entry(path) is None:
        raise dg.Failure(description=f"no queued bisect for alert {config.alert_id}")
    queue.process(path, settings)
    entry = queue.read_entry(path) or {}
    if entry.get("state") != queue.DONE:
        raise dg.Failure(description=f"bisect for alert {config.alert_id} failed: {entry.get('reason')}")
    text = queue.result_text(entry)
    context.add_output_metadata({"result": text, "delivered": bool(entry.get("delivered_at"))})
    return {"alert_id": config.alert_id, "state": entry["state"], "result": text}


@dg.job(description="A queued bisect of an alert (docs/bisect.md, From an alert), one GPU job at a time.")
def bisect_queue_job():
    run_queued_bisect()


@dg.sensor(
    name="bisect_queue_sensor",
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.RUNNING,
    job=bisect_queue_job,
    description="Queues a bisect plan for each regression alert a warehouse run opens; with "
    "LIGER_BISECT_AUTORUN=1 also runs it.",
)
def bisect_queue_sensor(context: dg.SensorEvaluationContext, warehouse: WarehouseResource):
    published = warehouse.open().published()
    duckdb_path = warehouse.warehouse_path() / "liger.duckdb"
    if published is None or not duckdb_path.is_file():
        return dg.SkipReason("no published warehouse run yet")
    seq = int(published.seq)
    # no cursor (a new sensor or instance): only the newest run's alerts, never the whole history's
    after = int(context.cursor) if context.cursor else seq - 1
    if seq <= after:
        return dg.SkipReason(f"no warehouse run since run {after}")
    local = warehouse.warehouse_path()
    root, repo = warehouse.warehouse_uri(), warehouse.git_repo_path()
    queued, skipped = queue.queue_alerts(local, duckdb_path, repo, after_run=after, root_uri=root)
    queue.refresh_pages(local, duckdb_path, root, queued)
    for alert_id, why in skipped.items():
        context.log.warning(f"alert {alert_id}: no bisect queued: {why}")
    for alert_id in queued:
        context.log.info(f"alert {alert_id}: bisect plan queued")
    settings = load()
    autorun = settings.bisect_autorun and bool(settings.bench_python.strip())
    requests = [
        dg.RunRequest(
            run_key=f"bisect-{alert_id}",
            run_config={"ops": {"run_queued_bisect": {"config": {"alert_id": alert_id}}}},
            tags={"liger/trigger": "bisect_queue_sensor", "liger/alert": alert_id},
        )
        for alert_id in (queued if autorun else [])
    ]
    return dg.SensorResult(
        run_requests=requests,
        cursor=str(seq),
        skip_reason=None if queued else f"run {seq} opened no alert that needs a bisect",
    )
