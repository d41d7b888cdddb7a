"""The code location loads with every asset and check, and its automation does what the README promises."""

import re
import subprocess

import dagster as dg

from tests.conftest import PROJECT

ASSETS = {
    "source_content",
    "staged_sources",
    "fact_measurement",
    "fact_sighting",
    "dim_environment",
    "dim_protocol",
    "dim_workload",
    "dim_implementation",
    "source",
    "quarantine",
    "benchmark_snapshot",
    "commit_change",
    "dim_operation",
    "liger_duckdb",
    "regression_report",
    "dashboard",
    "alert_notifications",
}
CHECKS = {
    "digest_integrity",
    "fact_key_unique",
    "quantile_order",
    "dimensions_resolve",
    "sighting_has_fact",
    "quarantine_is_empty",
    "newest_version_has_no_regressions",
    "newest_version_was_compared",
    "sources_are_fresh",
}


def test_definitions_load_with_every_asset_and_check():
    from pipeline.definitions import defs

    graph = defs().resolve_asset_graph()
    assert {k.to_user_string() for k in graph.get_all_asset_keys()} == ASSETS
    assert {c.name for c in graph.asset_check_keys} == CHECKS


def test_automation_matches_the_readme():
    """Sensor interval, schedule time and 'on by default' are read from the docs
    (docs/operations.md), not repeated here."""
    from pipeline.definitions import defs

    readme = (PROJECT / "docs" / "operations.md").read_text()
    promise = re.search(
        r"Both automations are \*\*on by default\*\*.*?`liger_inputs_sensor` \(every (\d+) s;"
        r".*?`daily_refresh` schedule \((\d\d):(\d\d) UTC\)",
        readme,
        re.S,
    )
    assert promise, "the README no longer states the automation defaults"
    interval, hour, minute = map(int, promise.groups())
    d = defs()
    sensor = next(s for s in d.sensors if s.name == "liger_inputs_sensor")
    schedule = d.resolve_schedule_def("daily_refresh")
    assert sensor.default_status == dg.DefaultSensorStatus.RUNNING
    assert schedule.default_status == dg.DefaultScheduleStatus.RUNNING
    assert sensor.minimum_interval_seconds == interval
    assert (schedule.cron_schedule, schedule.execution_timezone) == (f"{minute} {hour} * * *", "UTC")
    # both launch the one job that materializes everything
    assert sensor.job_name == schedule.job_name
    job = d.resolve_job_def(schedule.job_name)
    assert {k.to_user_string() for k in job.asset_layer.asset_graph.get_all_asset_keys()} >= ASSETS


def test_dg_cli_lists_the_definitions():
    out = subprocess.run(
        [str(PROJECT / ".venv" / "bin" / "dg"), "list", "defs", "--json"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "fact_measurement" in out.stdout and "daily_refresh" in out.stdout


def test_table_columns_carry_the_registry_descriptions():
    from pipeline.contracts.tables import BY_NAME, PUBLIC_TABLES
    from pipeline.definitions import defs

    graph = defs().resolve_asset_graph()
    for table in PUBLIC_TABLES:
        schema = graph.get(dg.AssetKey(table)).metadata["dagster/column_schema"]
        documented = {c.name: c.description for c in BY_NAME[table].columns}
        assert {c.name: c.description for c in schema.columns} == documented
        assert all(documented.values()), f"{table} has an undocumented column"
