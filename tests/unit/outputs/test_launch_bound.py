"""The launch-bound hint on real sweeps: Liger's own harness on one H200 (data_raw/h200_runs).

group_norm and sparsemax backward take ~0.1 ms a call and barely move across x: launch-bound.
fused_linear_jsd is as flat across x but takes ~70 ms a call: not launch-bound. The rule is
pipeline/outputs/report/launch.py (docs/regressions.md, "Launch-bound")."""

from __future__ import annotations

import shutil

import duckdb
import pytest

from pipeline.outputs.report import launch
from pipeline.outputs.report.write import _FLAGGED_TABLE, _LAUNCH_HINT_TABLE
from tests.conftest import DATA_RAW, materialize


@pytest.fixture(scope="module")
def h200_hints(tmp_path_factory) -> dict[tuple, dict]:
    root = tmp_path_factory.mktemp("h200")
    shutil.copytree(DATA_RAW / "h200_runs", root / "data_raw" / "h200_runs")
    assert materialize(root / "data_raw", root / "warehouse").success
    with duckdb.connect(str(root / "warehouse" / "liger.duckdb"), read_only=True) as con:
        launch.install_launch_macro(con)
        con.execute(_FLAGGED_TABLE)
        con.execute(_LAUNCH_HINT_TABLE)
        cur = con.execute(
            """select f.kernel_name, f.kernel_operation_mode, f.metric_name, f.from_version, f.to_version,
                      h.hint, h.median_p50, h.spread
               from report_flagged f left join report_launch_hints h using (plot_rank)"""
        )
        cols = [d[0] for d in cur.description]
        rows = [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]
    return {(r["kernel_name"], r["kernel_operation_mode"], r["metric_name"], r["to_version"]): r for r in rows}


@pytest.mark.parametrize(
    "sweep",
    [
        ("group_norm", "backward", "speed", "0.8.5"),
        ("group_norm", "backward", "speed", "0.8.0"),
        ("sparsemax", "backward", "speed", "0.8.0"),
    ],
)
def test_short_flat_sweeps_are_marked(h200_hints, sweep):
    row = h200_hints[sweep]
    assert row["hint"] and row["hint"].startswith("launch-bound?"), row
    assert row["median_p50"] < launch.LAUNCH_MAX_MEDIAN_MS and row["spread"] <= launch.LAUNCH_MAX_SPREAD
    assert "µs" in row["hint"]


@pytest.mark.parametrize("mode", ["forward", "full"])
def test_a_70_ms_kernel_is_not_launch_bound_however_flat(h200_hints, mode):
    row = h200_hints[("fused_linear_jsd", mode, "speed", "0.8.5")]
    assert row["hint"] is None, row


def test_memory_sweeps_never_get_the_hint(h200_hints):
    assert all(r["hint"] is None for k, r in h200_hints.items() if k[2] != "speed")


def test_the_rule_is_one_macro():
    con = duckdb.connect()
    launch.install_launch_macro(con)
    ms, spread, points = launch.LAUNCH_MAX_MEDIAN_MS, launch.LAUNCH_MAX_SPREAD, launch.LAUNCH_MIN_POINTS

    def judged(metric="speed", unit="ms", median=0.1, s=1.2, n=4):
        return con.execute("select is_launch_bound(?, ?, ?, ?, ?)", [metric, unit, median, s, n]).fetchone()[0]

    assert judged()
    assert not judged(median=ms)  # the threshold itself is not below it
    assert judged(s=spread) and not judged(s=spread * 1.01)
    assert not judged(n=points - 1)
    assert not judged(metric="memory", unit="MB")
    assert not judged(median=None)
