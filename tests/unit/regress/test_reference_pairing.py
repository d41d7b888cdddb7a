"""reference_measurements pairs each liger run with the nearest reference run in time by a window
over a sorted timeline, not by a join of runs. Golden answer: the rule written out in Python (the
nearer run, then the later, then the smaller digest; within the allowed gap; the median over the
liger runs of a step), over random runs with many ties of time."""

from __future__ import annotations

import statistics
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.engine import read_model

MODEL = read_model(Path(__file__).resolve().parents[3] / "sql" / "regress" / "series" / "reference_measurements.sql")
MAX_GAP_HOURS = 3.0
T0 = datetime(2025, 1, 1)

run = st.tuples(
    st.sampled_from(["liger", "torch", "huggingface"]),  # provider
    st.integers(0, 1),  # x point
    st.integers(0, 1),  # step
    st.integers(0, 12),  # hour: few values, so ties of time and of gap are common
    st.integers(1, 50),  # p50
)


def expected(runs: list[tuple]) -> dict[tuple, tuple[int, float, float]]:
    """(x, step, reference provider) -> (matched runs, median reference p50, largest gap)."""
    out: dict[tuple, list[tuple[float, float]]] = {}
    for provider, x, step, hour, _ in runs:
        if provider != "liger":
            continue
        refs = {}
        for j, (rp, rx, rs, rh, rp50) in enumerate(runs):
            if rp == "liger" or (rx, rs) != (x, step):
                continue
            # nearer, then later, then the smaller digest
            rank = (abs(rh - hour), -rh, f"r{j:03d}")
            if rp not in refs or rank < refs[rp][0]:
                refs[rp] = (rank, rp50)
        for rp, ((gap, _, _), p50) in refs.items():
            if gap <= MAX_GAP_HOURS:
                out.setdefault((x, step, rp), []).append((p50, gap))
    return {k: (len(v), statistics.median(p for p, _ in v), max(g for _, g in v)) for k, v in out.items()}


@settings(max_examples=60, deadline=None)
@given(st.lists(run, min_size=1, max_size=25))
def test_each_liger_run_takes_the_nearest_reference_run(runs):
    con = duckdb.connect()
    con.execute(f"create table regression_settings as select {MAX_GAP_HOURS} as reference_max_gap_hours")
    con.execute(
        """create table ranked_measurements (measurement_digest varchar, kernel_name varchar,
        kernel_provider varchar, kernel_operation_mode varchar, metric_name varchar, gpu_name varchar,
        x_name varchar, x_value varchar, extra_config varchar, axis varchar, step_rank bigint,
        liger_version varchar, is_liger boolean, observed_at timestamp, p50 double)"""
    )
    rows = [
        (
            f"{'l' if p == 'liger' else 'r'}{i:03d}",
            "k",
            p,
            "forward",
            "speed",
            "GPU",
            "n",
            str(x),
            None,
            "version",
            step,
            "0.1",
            p == "liger",
            T0 + timedelta(hours=h),
            float(p50),
        )
        for i, (p, x, step, h, p50) in enumerate(runs)
    ]
    if rows:
        con.executemany("insert into ranked_measurements values (" + ", ".join("?" * 15) + ")", rows)
    got = {
        (int(x), step, rp): (n, p50, gap)
        for x, step, rp, n, p50, gap in con.execute(
            f"select x_value, step_rank, reference_provider, matched_runs, reference_p50, gap_hours from ({MODEL.sql})"
        ).fetchall()
    }
    assert got == expected(runs)
