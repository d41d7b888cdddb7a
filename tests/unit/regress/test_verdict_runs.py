"""Verdicts that every run supports, robust noise, coverage and the SQL conveniences, on real plus synthetic data.

Synthetic sweeps are added to the shipped measurements (so the pooled re-run noise is the real
one) under their own kernel and GPU names, then the whole regression layer is rebuilt.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.fixtures import regression as rs

KERNEL = "synthetic_kernel"
GPU = "Synthetic GPU"
COVERAGE_REASONS = {
    "no shared x points",
    "too few shared x points",
    "earlier version measured only with another config",
    "earlier version measured only on another GPU",
    "earlier version measured only under another provider name",
    "earlier version measured only in another pass or metric",
    "first version of the series",
}


@pytest.fixture(scope="module")
def warehouse(request) -> Path:
    return request.getfixturevalue("shipped_warehouse") / "liger.duckdb"


@pytest.fixture()
def con(warehouse):
    with duckdb.connect(str(warehouse), read_only=True) as c:
        yield c


def _run_rows(runs_by_version: dict[str, list], config: str) -> list[tuple]:
    """One liger sweep over 4 x points. A run is a level (p50 = x / 1000 * level, band +-1 %)
    or ('degenerate', level) for p20 = p50 = p80. Run i of a version is observed i hours in."""
    rows = []
    for day, (version, runs) in enumerate(runs_by_version.items()):
        for hour, run in enumerate(runs):
            degenerate = isinstance(run, tuple)
            level = run[1] if degenerate else run
            for x in (1024, 2048, 4096, 8192):
                p50 = x / 1000 * level
                low, high = (p50, p50) if degenerate else (p50 * 0.99, p50 * 1.01)
                rows.append(
                    (
                        f"{config}-{version}-{hour}-{x}",
                        KERNEL,
                        "liger",
                        "forward",
                        "speed",
                        "ms",
                        GPU,
                        "N",
                        "n",
                        str(x),
                        config,
                        version,
                        f"2025-01-{day + 1:02d} {hour:02d}:00:00",
                        low,
                        p50,
                        high,
                        1,
                    )
                )
    return rows


def _build(warehouse: Path, tmp_path: Path, *sweeps: tuple[str, dict]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(str(tmp_path / "with_synthetic.duckdb"))
    con.execute(f"attach '{warehouse}' as src (read_only)")
    con.execute("create table measurements as select * from src.measurements")
    con.execute("detach src")
    columns = (
        "measurement_digest, kernel_name, kernel_provider, kernel_operation_mode, metric_name, metric_unit,"
        " gpu_name, x_name, x_label, x_value, extra_config, liger_version, observed_at, p20, p50, p80,"
        " source_count"
    )
    for config, runs in sweeps:
        con.executemany(f"insert into measurements ({columns}) values ({','.join('?' * 17)})", _run_rows(runs, config))
    rs.build_regression_layer(con)
    return con


def _sweep(con, config: str, to_version: str) -> dict:
    cur = con.execute(
        "select * from sweep_regressions where kernel_name = ? and extra_config = ? and to_version = ?",
        [KERNEL, config, to_version],
    )
    cols = [d[0] for d in cur.description]
    rows = cur.fetchall()
    assert len(rows) == 1, rows
    return dict(zip(cols, rows[0], strict=True))


# --------------------------------------------------------------------------- every run takes part


def test_two_new_runs_that_disagree_2x_are_unstable(warehouse, tmp_path):
    con = _build(warehouse, tmp_path, ('{"c":1}', {"0.1.0": [1.0], "0.2.0": [1.0, 2.0]}))
    sweep = _sweep(con, '{"c":1}', "0.2.0")
    assert sweep["verdict"] == "unstable"
    assert (sweep["from_runs"], sweep["to_runs"]) == (1, 2)
    assert sweep["to_spread"] == pytest.approx(2.0)
    assert "2 runs of 0.2.0 differ x2.0" in sweep["reason"]
    points = con.execute("select distinct verdict from regressions where kernel_name = ?", [KERNEL]).fetchall()
    assert points == [("unstable",)]
    con.close()


def test_two_runs_that_agree_on_a_2x_change_are_a_regression(warehouse, tmp_path):
    con = _build(warehouse, tmp_path, ('{"c":1}', {"0.1.0": [1.0], "0.2.0": [2.0, 2.04]}))
    sweep = _sweep(con, '{"c":1}', "0.2.0")
    assert sweep["verdict"] == "regression"
    assert (sweep["from_runs"], sweep["to_runs"]) == (1, 2)
    assert sweep["geomean_ratio"] == pytest.approx(2.02, rel=1e-6)  # the median of both runs
    con.close()


def test_stable_kernel_with_three_runs_per_version_is_unchanged(warehouse, tmp_path):
    con = _build(warehouse, tmp_path, ('{"c":1}', {"0.1.0": [1.0, 1.01, 0.995], "0.2.0": [1.005, 0.99, 1.01]}))
    sweep = _sweep(con, '{"c":1}', "0.2.0")
    assert sweep["verdict"] == "unchanged"
    assert (sweep["from_runs"], sweep["to_runs"]) == (3, 3)
    con.close()


def test_degenerate_quantiles_alone_do_not_drop_a_run(warehouse, tmp_path):
    con = _build(warehouse, tmp_path, ('{"c":1}', {"0.1.0": [("degenerate", 6.0)], "0.2.0": [1.0]}))
    sweep = _sweep(con, '{"c":1}', "0.2.0")
    assert sweep["verdict"] == "improvement"
    assert sweep["geomean_ratio"] == pytest.approx(1 / 6)
    con.close()


# --------------------------------------------------------------------------- robust noise


def test_cold_rerun_on_its_gpu_leaves_a_real_regression_flagged(warehouse, tmp_path):
    # same GPU: sweep A regresses x2.7; sweep B has a cold first run (x6, p20 = p50 = p80) beside a
    # normal one, like jsd/liger/forward on B200. One re-run sweep never sets a threshold.
    con = _build(
        warehouse,
        tmp_path,
        ('{"c":"A"}', {"0.1.0": [1.0], "0.2.0": [2.7]}),
        ('{"c":"B"}', {"0.1.0": [1.0], "0.2.0": [("degenerate", 6.0), 1.0]}),
    )
    gpu = con.execute(
        "select rerun_sweeps, trusted from noise_floor where scope = 'gpu' and gpu_name = ?", [GPU]
    ).fetchall()
    assert gpu == [(1, False)]
    regressed = _sweep(con, '{"c":"A"}', "0.2.0")
    assert regressed["verdict"] == "regression", regressed["reason"]
    assert regressed["noise_scope"] == "default" and regressed["threshold"] < 0.2
    # ... and the cold run creates no change either: its own pair says which runs disagree
    cold = _sweep(con, '{"c":"B"}', "0.2.0")
    assert cold["verdict"] == "unstable" and "2 runs of 0.2.0 differ x6.0" in cold["reason"]
    con.close()


def test_jsd_b200_cold_rerun_does_not_set_its_gpus_threshold(con):
    # the cold 0.8.0 run of jsd/liger/forward on B200 (x6.25) is one re-run sweep among B200's: the
    # loudest of them is left out, so B200's speed threshold stays far below the old +-939 %
    (threshold, sweeps, trusted) = con.execute(
        """select threshold, rerun_sweeps, trusted from noise_floor
           where scope = 'gpu' and gpu_name = 'NVIDIA B200' and metric_name = 'speed'"""
    ).fetchone()
    assert trusted and sweeps >= 5 and 0.03 <= threshold < 0.5


# --------------------------------------------------------------------------- coverage and the H200 runs


def test_version_coverage_explains_every_uncompared_version(con):
    (rows,) = con.execute("select count(*) from version_coverage").fetchone()
    (sweep_versions,) = con.execute("select count(*) from sweep_versions").fetchone()
    assert rows == sweep_versions > 0
    reasons = {r[0] for r in con.execute("select reason from version_coverage where compared_with is null").fetchall()}
    assert reasons <= COVERAGE_REASONS and None not in reasons
    assert {
        "first version of the series",
        "earlier version measured only on another GPU",
        "earlier version measured only under another provider name",
    } <= reasons
    (compared,) = con.execute("select count(*) from version_coverage where compared_with is not null").fetchone()
    (judged,) = con.execute("select count(*) from sweep_regressions where verdict <> 'insufficient'").fetchone()
    assert compared == judged
    row = con.execute("""select compared_with, verdict, from_runs, to_runs from version_coverage
                         where kernel_name = 'jsd' and gpu_name = 'NVIDIA H100 PCIe' and kernel_provider = 'liger'
                           and kernel_operation_mode = 'forward' and metric_name = 'speed'
                           and liger_version = '0.3.1'""").fetchall()
    assert row == [("0.3.0", "unchanged", 1, 1)]


def test_h200_runs_compare_three_versions_of_one_harness(con):
    verdicts = dict(
        con.execute("""select kernel_name || '/' || kernel_operation_mode || '/' || metric_name
                                          || ' ' || from_version || '->' || to_version, verdict
                                   from sweep_regressions where gpu_name = 'NVIDIA H200'
                                     and to_version in ('0.8.0', '0.8.5')""").fetchall()
    )
    assert len(verdicts) == 30  # 15 liger sweeps x 2 pairs, every one compared
    assert verdicts["fused_linear_jsd/forward/speed 0.8.0->0.8.5"] == "improvement"
    assert verdicts["fused_linear_jsd/full/memory 0.8.0->0.8.5"] == "improvement"
    assert verdicts["fused_linear_jsd/forward/speed 0.7.0->0.8.0"] == "unchanged"
    assert verdicts["sparsemax/forward/speed 0.7.0->0.8.0"] == "unchanged"
    commits_known = con.execute("select count(benchmarked_commit) > 0 from measurements").fetchone()[0]
    # x1.47 with 1 of 4 points banded and one run per version: never `unchanged`; once the warehouse
    # knows the gh-pages snapshots' commits (the H200 weekly runs of 0.5.10 / 0.6.0 are then no
    # re-runs) the H200 uses the default threshold and the reason says what settles it
    assert verdicts["embedding/forward/speed 0.8.0->0.8.5"] == ("inconclusive" if commits_known else "drift")
    # 0.8.0 is the outlier: x0.82 then x1.26 back (before the commits are known, the gh-pages weekly
    # H200 runs count as same-version re-runs and raise the H200 threshold above x0.82)
    if commits_known:
        assert verdicts["group_norm/backward/speed 0.7.0->0.8.0"] == "transient"
        assert verdicts["group_norm/backward/speed 0.8.0->0.8.5"] == "transient"
    (reason,) = con.execute(
        """select reason from sweep_regressions where gpu_name = 'NVIDIA H200' and kernel_name = 'embedding'
           and kernel_operation_mode = 'forward' and to_version = '0.8.5'"""
    ).fetchone()
    if commits_known:
        assert "2 more run(s) of 0.8.0 and 2 more run(s) of 0.8.5 would settle it" in reason
    (uncompared,) = con.execute(
        "select count(*) from version_coverage where gpu_name = 'NVIDIA H200' "
        "and liger_version in ('0.8.0', '0.8.5') and compared_with is null"
    ).fetchone()
    assert uncompared == 0


# --------------------------------------------------------------------------- SQL conveniences


def test_measurements_sort_x_and_versions_as_numbers(con):
    xs = [
        r[0]
        for r in con.execute("""select distinct x_value, x_numeric from measurements
                                       where kernel_name = 'softmax' order by x_numeric""").fetchall()
    ]
    assert xs == ["128", "256", "512"] + xs[3:] and len(xs) > 3  # as text, '128' < '1024' < '256'
    assert all(float(a) < float(b) for a, b in zip(xs, xs[1:], strict=False))
    order = [
        r[0]
        for r in con.execute(
            "select distinct liger_version, version_rank from measurements "
            "where version_rank is not null order by version_rank"
        ).fetchall()
    ]
    assert order.index("0.5.8") < order.index("0.5.10")
    (non_numeric,) = con.execute(
        "select count(*) from measurements where x_numeric is null and try_cast(x_value as double) is not null"
    ).fetchone()
    assert non_numeric == 0


def test_every_readme_sql_example_returns_rows(con):
    import re

    text = "\n".join((rs.REPO / name).read_text() for name in ("README.md", "docs/sql.md"))
    statements = [
        line
        for block in re.findall(r"```sql\n(.*?)```", text, re.S)
        for line in block.splitlines()
        if line.strip() and not line.startswith("--")
    ]
    assert len(statements) >= 7
    for statement in statements:
        assert con.execute(statement).fetchall(), statement
