"""A deep history (issue 47): the shipped series points at 100 runs each, built with the bounded
change-point window and without it. The verdicts do not depend on the window; the change points
differ only as docs/regressions.md says (a chain longer than the window is segmented in windows).
Nothing here is timed."""

from __future__ import annotations

import math

import duckdb
import pytest

from bench.generate_deep import generate_deep
from pipeline.regress.change_points import WindowMemo, segment_levels, windowed_segments
from pipeline.regress.settings import RegressionSettings
from tests.fixtures.regression import SCRATCH_MEASUREMENTS_SQL, build_regression_layer

DEPTH, POINTS = 100, 160
# a verdict and what it was judged on; doubles to 9 digits: DuckDB sums a geomean in its threads'
# order, so two builds of the same data can differ in the last bit
VERDICT = """select level, axis, kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name,
    x_name, x_value, extra_config, from_step_rank, to_step_rank, verdict, reason,
    round(ratio, 9), round(normalized_ratio, 9), round(threshold, 9) from {db}.verdicts"""
CHANGE_POINT = """select axis, kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, x_name,
    extra_config, version, direction, basis, pair_verdict, round(shift_ratio, 9) from {db}.change_points"""


@pytest.fixture(scope="module")
def deep_builds(tmp_path_factory) -> dict[str, str]:
    """liger-regression layers over one generated deep history: 'bounded' (the default window),
    'whole' (window 0: every chain at once), 'wide' (a window longer than every chain)."""
    root = tmp_path_factory.mktemp("deep")
    generate_deep(root / "data", DEPTH, seed=3, limit=POINTS)
    builds = {"bounded": RegressionSettings(), "whole": RegressionSettings(change_point_window=0)}
    builds["wide"] = RegressionSettings(change_point_window=DEPTH + 8)
    paths = {}
    for name, settings in builds.items():
        paths[name] = str(root / f"{name}.duckdb")
        with duckdb.connect(paths[name]) as con:
            con.execute(SCRATCH_MEASUREMENTS_SQL, [str(root / "data" / "liger_csv" / "*.csv")])
            build_regression_layer(con, settings)
    return paths


def _attached(paths: dict[str, str]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    for name, path in paths.items():
        con.execute(f"attach '{path}' as {name} (read_only)")
    return con


def test_verdicts_at_depth_100_equal_the_whole_history_build(deep_builds):
    with _attached(deep_builds) as con:
        counts = dict(con.execute("select verdict, count(*) from bounded.verdicts group by 1").fetchall())
        # a deep history with lasting shifts: the layer judges it, not just 'unchanged'
        assert counts.get("regression", 0) + counts.get("improvement", 0) > 0, counts
        assert sum(counts.values()) > POINTS * (DEPTH - 1) // 2
        for a, b in (("bounded", "whole"), ("whole", "bounded")):
            differ = f"select count(*) from ({VERDICT.format(db=a)} except all {VERDICT.format(db=b)})"
            assert con.execute(differ).fetchone()[0] == 0


def test_change_points_differ_only_where_a_chain_is_longer_than_the_window(deep_builds):
    with _attached(deep_builds) as con:
        whole = con.execute("select count(*) from whole.change_points").fetchone()[0]
        assert whole > 0
        # a window longer than every chain is the whole chain
        for a, b in (("wide", "whole"), ("whole", "wide")):
            differ = f"select count(*) from ({CHANGE_POINT.format(db=a)} except all {CHANGE_POINT.format(db=b)})"
            assert con.execute(differ).fetchone()[0] == 0
        # bounded: every row is still a shift beyond the sweep's noise, at a step of its chain
        rows = con.execute(
            "select shift_ratio, threshold, versions_in_chain, version_rank, previous_version_rank "
            "from bounded.change_points"
        ).fetchall()
        assert rows
        window = RegressionSettings().change_point_window
        for shift, threshold, chain, rank, previous in rows:
            assert abs(math.log(shift)) > math.log1p(threshold)
            assert chain > window and previous < rank


def test_windowed_segments_are_pelt_on_short_chains_and_find_every_step_of_a_long_one():
    short = [0.0, 0.02, -0.01, 0.4, 0.41, 0.39, 0.4, 0.0, 0.01]
    assert windowed_segments(short, 0.01, 32) == segment_levels(short, 0.01)
    # a long chain: a lasting shift every 50 levels, each found where it happens
    levels = [0.3 * (i // 50) + (0.01 if i % 2 else -0.01) for i in range(400)]
    assert windowed_segments(levels, 0.01, 32, band=math.log1p(0.1)) == list(range(50, 400, 50))
    # a window within the noise band is not segmented
    assert windowed_segments([0.01 * (i % 3) for i in range(200)], 0.0001, 32, band=0.05) == []


def test_a_report_plot_of_a_deep_sweep_draws_the_versions_nearest_its_pair(deep_builds):
    """100 versions a sweep: a plot takes the judged pair and the PLOT_VERSIONS versions nearest it, not
    a line per version (issue 47: a line each made the report's plots most of a deep run)."""
    from pipeline.outputs.report import write

    with duckdb.connect(deep_builds["bounded"], read_only=True) as con:
        con.execute(write._FLAGGED_TABLE)
        con.execute(write._PLOTTED_TABLE, [20])
        rows = con.execute(
            f"select p.plot_rank, list(distinct p.version_rank), any_value(f.from_version_rank), "
            f"any_value(f.to_version_rank) from ({write._PLOT_POINTS_SQL}) p "
            "join report_flagged f using (plot_rank) where p.is_liger group by 1"
        ).fetchall()
    assert len(rows) == 20
    for _, ranks, from_rank, to_rank in rows:
        assert from_rank in ranks and to_rank in ranks
        assert len(ranks) == write.PLOT_VERSIONS
        nearest = sorted(ranks, key=lambda r: abs(r - to_rank))
        assert max(abs(r - to_rank) for r in ranks) == abs(nearest[-1] - to_rank) <= write.PLOT_VERSIONS


def test_a_chain_grown_at_its_end_segments_again_only_its_last_windows():
    """Issue 57: the windows of a chain are kept by what they segment (WindowMemo); one more level at the
    end re-segments the last windows only, and the answer is the one without the memo."""
    levels = [0.3 * (i // 50) + (0.01 if i % 2 else -0.01) for i in range(400)]
    memo = WindowMemo()
    assert windowed_segments(levels, 0.01, 32, 0.0, memo) == windowed_segments(levels, 0.01, 32)
    first = len(memo.added)
    assert first == len(memo) > 20
    memo.added.clear()
    grown = [*levels, levels[-1] + 0.005]
    assert windowed_segments(grown, 0.01, 32, 0.0, memo) == windowed_segments(grown, 0.01, 32)
    assert 0 < len(memo.added) <= 2
