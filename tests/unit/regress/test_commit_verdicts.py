"""The verdict rule on both axes (versions, benchmarked commits) on small synthetic warehouses:
transient, inconclusive, a commit benchmarked twice, per-GPU noise, exact memory, provider renames,
compare() over non-consecutive points and change points over commits."""

from __future__ import annotations

import duckdb
import pytest

from pipeline.regress.judge import compare
from tests.fixtures import regression as rs

XS = (1024, 2048, 4096, 8192)
COLUMNS = (
    "measurement_digest, kernel_name, kernel_provider, kernel_operation_mode, metric_name, metric_unit, gpu_name,"
    " x_name, x_label, x_value, extra_config, liger_version, observed_at, p20, p50, p80, source_count,"
    " benchmarked_commit, commit_status, release, commit_order, snapshot"
)


def _sha(i: int) -> str:
    return f"{i:07x}" + "a" * 33


def _rows(
    steps: list[tuple],
    *,
    kernel="k",
    provider="liger",
    metric="speed",
    gpu="GPU A",
    config='{"c":1}',
    band=0.01,
    base=1.0,
):
    """steps: (version, commit index or None, [levels of its runs]); p50 = base * x/1024 * level."""
    unit = "ms" if metric == "speed" else "MB"
    rows = []
    for day, (version, commit, levels) in enumerate(steps):
        for run, level in enumerate(levels):
            snapshot = None if commit is None else f"{_sha(commit)[:7]}{'-r' + str(run) if run else ''}"
            for x in XS:
                p50 = base * x / 1024 * level
                rows.append(
                    (
                        f"{kernel}-{provider}-{metric}-{gpu}-{config}-{day}-{run}-{x}",
                        kernel,
                        provider,
                        "forward",
                        metric,
                        unit,
                        gpu,
                        "N",
                        "n",
                        str(x),
                        config,
                        version,
                        f"2025-01-{day + 1:02d} {run:02d}:00:00",
                        p50 * (1 - band),
                        p50,
                        p50 * (1 + band),
                        1,
                        None if commit is None else _sha(commit),
                        None if commit is None else "resolved",
                        None,
                        commit,
                        snapshot,
                    )
                )
    return rows


def _build(rows, commits: int = 0, kernel_changed=True) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(
        "create table measurements (measurement_digest varchar, kernel_name varchar, kernel_provider varchar,"
        " kernel_operation_mode varchar, metric_name varchar, metric_unit varchar, gpu_name varchar, x_name varchar,"
        " x_label varchar, x_value varchar, extra_config varchar, liger_version varchar, observed_at timestamp,"
        " p20 double, p50 double, p80 double, source_count bigint, benchmarked_commit varchar,"
        " commit_status varchar, release varchar, commit_order bigint, snapshot varchar)"
    )
    con.executemany(f"insert into measurements ({COLUMNS}) values ({','.join('?' * 22)})", rows)
    con.execute(
        'create table benchmark_commit ("commit" varchar, short_commit varchar, release varchar,'
        " commit_order bigint, commits_between bigint, order_source varchar, committed_at timestamp,"
        " subject varchar, kernel_changed boolean, harness_changed boolean)"
    )
    for i in range(commits):
        con.execute(
            "insert into benchmark_commit values (?, ?, null, ?, 1, 'git', null, 's', ?, ?)",
            [_sha(i), _sha(i)[:7], i, None if i == 0 else kernel_changed, None if i == 0 else False],
        )
    rs.build_regression_layer(con)
    return con


def _dicts(con, sql, params=()):
    cur = con.execute(sql, list(params))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def test_one_step_excursion_on_the_commit_axis_is_transient():
    steps = [("0.6.4", i, [lvl]) for i, lvl in enumerate((1.0, 1.01, 3.5, 1.0, 0.99))]
    con = _build(_rows(steps), commits=5)
    rows = _dicts(con, "select * from commit_regressions order by to_commit_order")
    assert [r["verdict"] for r in rows] == ["unchanged", "transient", "transient", "unchanged"]
    excursion = rows[1]
    assert excursion["to_commit"] == _sha(2) and excursion["ratio"] == pytest.approx(3.5 / 1.01)
    assert "a one-step excursion at 0000002" in excursion["reason"]
    assert rows[2]["from_commit"] == _sha(2) and "takes back the step before it" in rows[2]["reason"]
    assert excursion["commits_between"] == 1 and excursion["kernel_changed"] is True
    assert {"threshold_source", "min_detectable_change"} <= set(excursion)
    # the version axis sees one version with five runs that disagree: no verdict there
    assert con.execute("select count(*) from sweep_regressions").fetchone()[0] == 0


def test_one_version_outlier_is_transient_on_the_version_axis():
    steps = [("0.7.0", None, [1.0]), ("0.8.0", None, [0.8]), ("0.8.5", None, [1.02])]
    con = _build(_rows(steps))
    verdicts = dict(con.execute("select to_version, verdict from sweep_regressions").fetchall())
    assert verdicts == {"0.8.0": "transient", "0.8.5": "transient"}
    (reason,) = con.execute("select reason from sweep_regressions where to_version = '0.8.0'").fetchone()
    assert "a one-step excursion at 0.8.0" in reason


def test_a_lasting_change_is_not_transient():
    steps = [("0.7.0", None, [1.0]), ("0.8.0", None, [1.5]), ("0.8.5", None, [1.5])]
    con = _build(_rows(steps))
    verdicts = dict(con.execute("select to_version, verdict from sweep_regressions").fetchall())
    assert verdicts == {"0.8.0": "regression", "0.8.5": "unchanged"}


def test_overlapping_bands_with_one_run_each_are_inconclusive_and_say_how_many_runs_settle_it():
    steps = [("0.8.0", None, [1.0]), ("0.8.5", None, [1.4])]
    con = _build(_rows(steps, band=0.3))
    sweep = _dicts(con, "select * from sweep_regressions")[0]
    assert sweep["verdict"] == "inconclusive"
    assert "2 more run(s) of 0.8.0 and 2 more run(s) of 0.8.5 would settle it" in sweep["reason"]
    assert "default of regression_settings" in sweep["reason"]  # which threshold, and from where
    # three agreeing runs on each side settle it
    steps = [("0.8.0", None, [1.0, 1.01, 0.99]), ("0.8.5", None, [1.4, 1.41, 1.39])]
    con = _build(_rows(steps, band=0.3))
    assert con.execute("select verdict from sweep_regressions").fetchone()[0] == "regression"


def test_a_commit_benchmarked_twice_is_two_runs_of_one_step_never_a_pair():
    steps = [("0.6.4", 0, [1.0]), ("0.6.4", 1, [1.0, 1.02]), ("0.6.4", 2, [1.01])]
    con = _build(_rows(steps), commits=3)
    rows = _dicts(con, "select * from commit_regressions order by to_commit_order")
    assert [(r["from_commit"], r["to_commit"]) for r in rows] == [(_sha(0), _sha(1)), (_sha(1), _sha(2))]
    assert [(r["from_runs"], r["to_runs"]) for r in rows] == [(1, 2), (2, 1)]
    (runs,) = con.execute("select max(runs) from series_steps where axis = 'commit'").fetchone()
    assert runs == 2
    kinds = con.execute("select sum(same_commit_sweeps) from noise_floor where scope = 'gpu'").fetchone()[0]
    assert kinds == 1  # the two runs are a re-run, a unit of noise


def _reruns(gpu: str, sweeps: int, spread: float, metric="speed", first=0, base=1.0, band=0.01):
    """`sweeps` sweeps on `gpu`, each benchmarked twice at one commit, the runs `spread` apart."""
    rows = []
    for i in range(sweeps):
        rows += _rows(
            [("0.6.4", 0, [1.0, 1.0 + spread * (1 + i / 10)])],
            gpu=gpu,
            metric=metric,
            config=f'{{"r":{first + i}}}',
            base=base,
            band=band,
        )
    return rows


def test_re_runs_on_one_gpu_never_move_another_gpus_thresholds():
    rows = _reruns("GPU A", 6, 0.10) + _reruns("GPU B", 6, 0.04)
    rows += _rows([("0.6.4", 0, [1.0]), ("0.6.5", 1, [1.06])], gpu="GPU B", config='{"judged":1}')
    noise_b = "select * from noise_floor where gpu_name = 'GPU B' order by scope, duration_bucket"
    pair_b = "select threshold, threshold_source, verdict from commit_regressions where gpu_name = 'GPU B'"
    before = _build(rows, commits=2)
    # a quiet re-run added on GPU A: GPU A's noise takes it in, GPU B's rows and verdicts do not move
    after = _build(rows + _reruns("GPU A", 1, 0.0, first=100), commits=2)
    assert _dicts(before, noise_b) == _dicts(after, noise_b)
    assert _dicts(before, pair_b) == _dicts(after, pair_b) and len(_dicts(after, pair_b)) == 1
    count_a = "select rerun_sweeps from noise_floor where gpu_name = 'GPU A' and scope = 'gpu'"
    assert after.execute(count_a).fetchone()[0] == before.execute(count_a).fetchone()[0] + 1
    # one pooled threshold per metric (the old 'metric' scope) would have moved GPU B's with GPU A's re-runs
    assert _dicts(before, "select distinct scope from noise_floor order by 1") == [
        {"scope": "bucket"},
        {"scope": "gpu"},
    ]


def test_a_gpu_without_re_runs_uses_the_documented_default():
    con = _build(_rows([("0.7.0", None, [1.0]), ("0.8.0", None, [1.05])], gpu="Lonely GPU"))
    sweep = _dicts(con, "select * from sweep_regressions")[0]
    assert sweep["noise_scope"] == "default" and sweep["threshold"] == pytest.approx(0.10)
    assert sweep["verdict"] == "unchanged"
    assert "a change under 10.0% cannot be told from noise" in sweep["reason"]
    assert "0 re-run sweeps of speed on Lonely GPU" in sweep["reason"]


def test_memory_is_exact_a_small_step_that_re_runs_reproduce_is_real():
    rows = _reruns("GPU M", 6, 0.0, metric="memory", base=1000.0, band=0.0) + _reruns("GPU M", 6, 0.02)
    rows += _rows(
        [("0.6.4", 0, [1.0, 1.0]), ("0.6.5", 1, [1.02])], gpu="GPU M", metric="memory", config='{"m":1}', band=0.0
    )
    rows += _rows([("0.6.4", 0, [1.0, 1.0]), ("0.6.5", 1, [1.02])], gpu="GPU M", config='{"m":1}', band=0.0)
    con = _build(rows, commits=2)
    verdicts = dict(con.execute("select metric_name, verdict from commit_regressions").fetchall())
    assert verdicts == {"memory": "regression", "speed": "unchanged"}
    (threshold,) = con.execute(
        "select threshold from noise_floor where gpu_name = 'GPU M' and metric_name = 'memory' and scope = 'gpu'"
    ).fetchone()
    assert threshold < 0.005


def test_the_reviewed_rename_joins_liger_and_liger_triton():
    rows = _rows([("0.7.0", None, [1.0])], provider="liger") + _rows([("0.8.0", None, [1.3])], provider="liger_triton")
    rows += _rows([("0.7.0", None, [1.0])], provider="liger_cutile", config='{"c":2}')
    rows += _rows([("0.8.0", None, [1.0])], provider="liger_cutile_x", config='{"c":2}')
    con = _build(rows)
    sweep = _dicts(con, "select * from sweep_regressions")
    assert len(sweep) == 1 and sweep[0]["kernel_provider"] == "liger" and sweep[0]["verdict"] == "regression"
    coverage = _dicts(con, "select * from version_coverage where liger_version = '0.8.0' order by extra_config")
    assert coverage[0]["reason"].startswith("compared across the rename liger -> liger_triton: ")
    assert coverage[0]["measured_provider"] == "liger_triton"
    # an unreviewed name is never mapped by guessing
    assert coverage[1]["compared_with"] is None
    renames = con.execute("select from_provider, to_provider, since_version from provider_renames").fetchall()
    assert ("liger", "liger_triton", "0.8.0") in renames


def test_compare_judges_two_non_consecutive_points_with_the_same_rule():
    steps = [("0.1.0", 0, [1.0]), ("0.2.0", 1, [1.04]), ("0.3.0", 2, [1.3])]
    con = _build(_rows(steps), commits=3)
    pairs = {(r[0], r[1]) for r in con.execute("select from_version, to_version from sweep_regressions").fetchall()}
    assert ("0.1.0", "0.3.0") not in pairs
    rows = compare("0.1.0", "0.3.0", con=con)
    assert len(rows) == 1 and rows[0]["verdict"] == "regression" and rows[0]["axis"] == "version"
    assert rows[0]["ratio"] == pytest.approx(1.3)
    by_commit = compare(_sha(0)[:7], _sha(2), con=con)
    assert by_commit[0]["axis"] == "commit" and by_commit[0]["verdict"] == "regression"
    assert compare("0.1.0", "0.2.0", con=con) == []  # within noise: nothing moved
    assert compare("0.1.0", "0.2.0", con=con, moved_only=False)[0]["verdict"] == "unchanged"
    with pytest.raises(LookupError):
        compare("0.1.0", "9.9.9", con=con)


def test_change_points_over_commits():
    levels = (1.0, 1.01, 1.3, 1.31, 1.29, 1.3)
    con = _build(_rows([("0.6.4", i, [lvl]) for i, lvl in enumerate(levels)]), commits=len(levels))
    cps = _dicts(con, "select * from change_points where axis = 'commit'")
    assert len(cps) == 1
    assert (cps[0]["version"], cps[0]["previous_version"], cps[0]["direction"]) == (_sha(2)[:7], _sha(1)[:7], "worse")
    assert cps[0]["shift_ratio"] == pytest.approx(1.29, abs=0.03)
