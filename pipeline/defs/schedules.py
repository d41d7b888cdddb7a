"""Jobs and the daily refresh (on by default so `dagster dev` runs it without a click).

* liger_warehouse_job: staging of everything not yet staged, the merge, views, report and checks,
  in one process (`make run`, the sensor, the schedule).
* liger_partitioned_staging: one partition of `source_content` per run, for parallel staging on
  any executor; backfills over `liger_source` partitions run it.
"""

import dagster as dg

warehouse_job = dg.define_asset_job(
    "liger_warehouse_job", selection=dg.AssetSelection.assets("staged_sources").downstream()
)


@dg.op(
    config_schema={"reason": str},
    description="Records a `make run` that found nothing new: same inputs, code, settings and warehouse.",
)
def inputs_unchanged(context: dg.OpExecutionContext) -> None:
    context.log.info(context.op_config["reason"])


@dg.job(description="What `make run` records when nothing changed since the last warehouse run.")
def liger_nothing_new():
    inputs_unchanged()


partitioned_staging_job = dg.define_asset_job(
    "liger_partitioned_staging", selection=dg.AssetSelection.assets("source_content")
)

daily_refresh = dg.ScheduleDefinition(
    name="daily_refresh",
    job=warehouse_job,
    cron_schedule="0 5 * * *",
    execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.RUNNING,
)
