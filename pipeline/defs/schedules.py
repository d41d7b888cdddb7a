"""Daily refresh of every asset; on by default so `dagster dev` runs it without a click."""

import dagster as dg

warehouse_job = dg.define_asset_job("liger_warehouse_job", selection=dg.AssetSelection.all())

daily_refresh = dg.ScheduleDefinition(
    name="daily_refresh",
    job=warehouse_job,
    cron_schedule="0 5 * * *",
    execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.RUNNING,
)
