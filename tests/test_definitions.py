"""The code location loads, and the schedule and checks the issues ask for exist."""

import subprocess

import dagster as dg

from .conftest import PROJECT


def test_definitions_load_with_expected_assets_checks_and_schedule():
    from pipeline.definitions import defs

    d = defs()
    keys = {k.to_user_string() for k in d.resolve_asset_graph().get_all_asset_keys()}
    assert {"staged_sources", "fact_measurement", "dim_environment", "dim_protocol", "dim_workload",
            "dim_implementation", "source", "quarantine", "liger_duckdb"} <= keys
    checks = {c.name for c in d.resolve_asset_graph().asset_check_keys}
    assert {"digest_integrity", "fact_key_unique", "quantile_order", "quarantine_is_empty"} <= checks
    schedule = d.resolve_schedule_def("daily_refresh")
    assert schedule.default_status == dg.DefaultScheduleStatus.RUNNING


def test_dg_cli_lists_the_definitions():
    out = subprocess.run([str(PROJECT / ".venv" / "bin" / "dg"), "list", "defs", "--json"], cwd=PROJECT,
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "fact_measurement" in out.stdout and "daily_refresh" in out.stdout
