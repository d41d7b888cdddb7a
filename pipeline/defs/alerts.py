"""Alert messages: after each build of liger.duckdb, one message per alert whose status was not
delivered yet (pipeline.outputs.alerts.notify). A failed delivery is retried on the next run and
never fails the warehouse: the step succeeds and says what failed; Dagster retries the step itself
only when it could not run at all (e.g. the state table was busy)."""

import dagster as dg

from pipeline.config import load
from pipeline.defs.resources import WarehouseResource
from pipeline.outputs.alerts.notify import sync_and_notify


@dg.asset(
    group_name="reports",
    kinds={"duckdb", "delta"},
    deps=[dg.AssetKey("liger_duckdb")],
    retry_policy=dg.RetryPolicy(max_retries=2, delay=1, backoff=dg.Backoff.EXPONENTIAL),
    description=(
        "warehouse/alerts/<alert_id>.md and the LIGER_ALERT_WEBHOOK messages: one per alert per status change "
        "(open, recovered, transient, acknowledged), with the lifecycle kept in the Delta table alert_state."
    ),
)
def alert_notifications(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    settings = load()
    wh = warehouse.open()
    done = sync_and_notify(
        wh.duckdb_path,
        wh.root_uri,
        warehouse.warehouse_path(),
        settings.alert_webhook,
        settings.alert_timeout_s,
        deadline_s=settings.alert_deadline_s,
    )
    context.log.info(done.summary())
    for alert_id, error in done.failed.items():
        context.log.warning(f"alert {alert_id}: delivery failed, retried next run: {error}")
    return dg.MaterializeResult(
        metadata={
            "alerts": done.alerts,
            "sent": dg.MetadataValue.json(done.sent),
            "failed": dg.MetadataValue.json(done.failed),
        }
    )
