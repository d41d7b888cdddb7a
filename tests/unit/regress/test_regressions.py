"""Regression detection: verdicts on the shipped history, version order, synthetic shifts, report, notebook.

The warehouse under test is the real one the core pipeline builds from the shipped
history (``shipped_warehouse`` in tests/conftest.py), unless ``LIGER_REGRESSION_TEST_DB``
names a DuckDB file or ``LIGER_REGRESSION_TEST_SOURCE=scratch`` asks for a build straight
from ``data_raw/liger_csv`` (see tests/fixtures/regression.py).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.version import Version

from pipeline.engine import DuckTarget, run_models
from pipeline.regress.change_points import build_change_points
from pipeline.regress.settings import RegressionSettings, write_settings_table
from pipeline.regress.versions import version_order_table
from tests.fixtures import regression as rs

REPO = rs.REPO
VERDICTS = {"regression", "improvement", "unchanged", "drift", "insufficient", "unstable", "transient", "inconclusive"}
JSD = ("jsd", "liger", "forward", "speed", "NVIDIA H100 PCIe", "0.3.0", "0.3.1")
KTO = ("kto_loss", "liger", "forward", "speed", "NVIDIA H100 80GB HBM3", "0.5.3", "0.5.4")
_SWEEP_WHERE = (
    "kernel_name = ? and kernel_provider = ? and kernel_operation_mode = ? and metric_name = ?"
    " and gpu_name = ? and from_version = ? and to_version = ?"
)


@pytest.fixture(scope="module")
def warehouse(request, tmp_path_factory) -> Path:
    chosen = rs.regression_warehouse(tmp_path_factory.mktemp("regression_wh"))
    if chosen is not None:
        return chosen
    # the real pipeline (Dagster, all assets) on the shipped history, shared with the core tests
    return request.getfixturevalue("shipped_warehouse") / "liger.duckdb"


@pytest.fixture()
def con(warehouse):
    with duckdb.connect(str(warehouse), read_only=True) as c:
        yield c


def _one(con, sql, params=()):
    cur = con.execute(sql, list(params))
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]
    assert len(rows) == 1, rows
    return rows[0]


# --------------------------------------------------------------------------- version order


def test_version_order_is_pep440_not_text():
    rows = dict(
        version_order_table(
            ["0.6.0", "0.5.10", "0.5.8", "0.6.0rc1", "0.6.0.dev2", "0.6.0.post1", "0.5.10.0", "not-a-version", "", None]
        )
    )
    assert rows["0.5.8"] < rows["0.5.10"] < rows["0.6.0.dev2"] < rows["0.6.0rc1"]
    assert rows["0.6.0rc1"] < rows["0.6.0"] < rows["0.6.0.post1"]
    assert rows["0.5.10"] == rows["0.5.10.0"]  # same release, two spellings
    assert rows["not-a-version"] is None and rows[""] is None
    assert None not in rows


_release = st.tuples(*(st.integers(0, 30) for _ in range(3)))
_suffix = st.sampled_from(["", "a1", "b2", "rc1", ".post1", ".dev3", "rc2.dev1"])


@given(st.lists(st.tuples(_release, _suffix).map(lambda t: ".".join(map(str, t[0])) + t[1]), min_size=1, max_size=30))
def test_version_ranks_follow_packaging(versions):
    ranks = dict(version_order_table(versions))
    for a in versions:
        for b in versions:
            va, vb = Version(a), Version(b)
            assert (ranks[a] < ranks[b]) == (va < vb)
            assert (ranks[a] == ranks[b]) == (va == vb)


def test_no_version_pair_is_ordered_backwards(con):
    order = dict(con.execute("select liger_version, version_rank from liger_version_order").fetchall())
    assert order["0.5.8"] < order["0.5.10"] < order["0.6.0"]
    for view in ("version_changes", "regressions", "sweep_regressions"):
        pairs = con.execute(f"select distinct from_version, to_version from {view}").fetchall()
        assert pairs, view
        for from_version, to_version in pairs:
            assert Version(from_version) < Version(to_version), (view, from_version, to_version)
    (backwards,) = con.execute(
        "select count(*) from version_changes where from_version_rank >= to_version_rank"
    ).fetchone()
    assert backwards == 0


# --------------------------------------------------------------------------- shipped verdicts


def test_jsd_h100_pcie_is_not_a_regression(con):
    # x1.078 while torch moved x1.14; the H100 PCIe has no re-runs, so the documented default applies
    sweep = _one(con, f"select * from sweep_regressions where {_SWEEP_WHERE}", JSD)
    assert sweep["verdict"] == "unchanged"
    assert sweep["geomean_ratio"] == pytest.approx(1.08, abs=0.01)
    assert sweep["geomean_reference_ratio"] == pytest.approx(1.14, abs=0.01)
    assert "torch" in sweep["reference_providers"]
    assert sweep["noise_scope"] == "default" and sweep["min_detectable_change"] == pytest.approx(0.10)
    assert "a change under 10.0% cannot be told from noise" in sweep["reason"]
    assert "0 re-run sweeps of speed on NVIDIA H100 PCIe" in sweep["threshold_source"]
    (point_regressions,) = con.execute(
        f"select count(*) from regressions where {_SWEEP_WHERE} and verdict = 'regression'", JSD
    ).fetchone()
    assert point_regressions == 0


def test_kto_loss_h100_0_5_4_is_improvement(con):
    sweep = _one(con, f"select * from sweep_regressions where {_SWEEP_WHERE}", KTO)
    assert sweep["verdict"] == "improvement"
    assert sweep["geomean_ratio"] < 0.5


def test_verdicts_cover_liger_pairs_only(con):
    (liger_pairs,) = con.execute("select count(*) from version_changes where is_liger").fetchone()
    (judged,) = con.execute("select count(*) from regressions").fetchone()
    assert judged == liger_pairs > 0
    providers = {
        r[0]
        for r in con.execute(
            "select distinct kernel_provider from regressions union "
            "select distinct kernel_provider from sweep_regressions"
        ).fetchall()
    }
    assert all(p.startswith("liger") for p in providers)
    verdicts = {
        r[0]
        for r in con.execute(
            "select verdict from regressions union all select verdict from sweep_regressions"
        ).fetchall()
    }
    assert verdicts <= VERDICTS
    # reference providers stay visible as context
    (refs,) = con.execute("select count(*) from version_changes where not is_liger").fetchone()
    assert refs > 0


def test_version_changes_columns_and_bands(con):
    cols = {r[0] for r in con.execute("describe version_changes").fetchall()}
    assert {
        "from_version",
        "to_version",
        "from_p20",
        "from_p50",
        "from_p80",
        "to_p20",
        "to_p50",
        "to_p80",
        "ratio",
        "bands_separated",
    } <= cols
    bad = con.execute(
        """select count(*) from version_changes where ratio is not null and bands_separated <> coalesce(
             case when ratio > 1 then to_p20 > from_p80 when ratio < 1 then to_p80 < from_p20 end, false)"""
    ).fetchone()[0]
    assert bad == 0


def test_noise_floor_is_per_gpu_and_never_below_its_floor(con):
    rows = con.execute("select scope, gpu_name, metric_name, rerun_points, threshold from noise_floor").fetchall()
    assert rows and {r[0] for r in rows} <= {"bucket", "gpu"} and all(r[1] for r in rows)
    (below,) = con.execute(
        """select count(*) from noise_floor, regression_settings
           where threshold < case when metric_name = 'memory' then memory_min_noise_floor else min_noise_floor end"""
    ).fetchone()
    assert below == 0
    # the published same-version re-run median move of upstream's CSV history is 1.7 % (the gh-pages
    # snapshots' weekly runs of one version are different commits, not re-runs)
    (median,) = con.execute(
        """with r as (select abs(p50 / first_value(p50) over w - 1) as spread,
                             row_number() over w as rn
                      from measurements
                      where measurement_digest not in (
                          select measurement_digest from fact_sighting where source_path like 'liger_gh_pages/%')
                      window w as (partition by kernel_name, kernel_provider, kernel_operation_mode,
                                   metric_name, gpu_name, x_name, x_value, extra_config, liger_version
                                   order by observed_at desc))
           select median(spread) from r where rn > 1"""
    ).fetchone()
    assert median == pytest.approx(0.017, abs=0.003)


def test_readme_sql_line_answers_what_regressed(con):
    text = (REPO / "docs" / "regressions.md").read_text()
    match = re.search(r"^(select \* from sweep_regressions where .*;)$", text, re.M)
    assert match, "docs/regressions.md must show the one-line query"
    con.execute(match.group(1)).fetchall()


# --------------------------------------------------------------------------- settings


def _rebuild(warehouse: Path, tmp_path: Path, settings: RegressionSettings) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(str(tmp_path / "rebuilt.duckdb"))
    con.execute(f"attach '{warehouse}' as src (read_only)")
    con.execute("create table measurements as select * from src.measurements")
    con.execute("detach src")
    rs.build_regression_layer(con, settings)
    return con


def test_settings_are_bound_and_change_verdicts(warehouse, tmp_path):
    settings = RegressionSettings(min_noise_floor=0.9, default_noise_threshold=0.9)
    con = _rebuild(warehouse, tmp_path, settings)
    assert con.execute("select min_noise_floor from regression_settings").fetchone()[0] == 0.9
    # x1.08 is within the 90 % floor and default; x0.39 is still far beyond them
    assert _one(con, f"select verdict from sweep_regressions where {_SWEEP_WHERE}", JSD)["verdict"] == "unchanged"
    assert _one(con, f"select verdict from sweep_regressions where {_SWEEP_WHERE}", KTO)["verdict"] == "improvement"
    con.close()
    with pytest.raises(ValueError):
        RegressionSettings(min_noise_floor=-1)


def test_settings_table_uses_parameter_binding():
    con = duckdb.connect()
    write_settings_table(con, RegressionSettings(noise_multiplier=2.5))
    row = con.execute("select * from regression_settings").fetchall()
    assert len(row) == 1 and 2.5 in row[0]


# --------------------------------------------------------------------------- change points


def _synthetic_sweep_db(levels_by_version: dict[str, float], with_reference: bool = True):
    """One liger sweep (4 x points) whose p50 is base * level at each version."""
    con = duckdb.connect()
    rows = []
    for day, (version, level) in enumerate(levels_by_version.items()):
        for x in (1024, 2048, 4096, 8192):
            for provider, factor in (("liger", level), ("torch", 1.0)):
                if provider == "torch" and not with_reference:
                    continue
                p50 = x / 1000 * factor
                rows.append(
                    (
                        f"{version}-{x}-{provider}",
                        "k",
                        provider,
                        "forward",
                        "speed",
                        "ms",
                        "GPU",
                        "N",
                        "n",
                        str(x),
                        '{"B":1}',
                        version,
                        f"2025-01-{day + 1:02d} 00:00:00",
                        p50 * 0.995,
                        p50,
                        p50 * 1.005,
                        1,
                    )
                )
    con.execute(
        "create table measurements (measurement_digest varchar, kernel_name varchar,"
        " kernel_provider varchar, kernel_operation_mode varchar, metric_name varchar,"
        " metric_unit varchar, gpu_name varchar, x_name varchar, x_label varchar, x_value varchar,"
        " extra_config varchar, liger_version varchar, observed_at timestamp, p20 double,"
        " p50 double, p80 double, source_count bigint)"
    )
    con.executemany("insert into measurements values (" + ",".join("?" * 17) + ")", rows)
    return con


def test_change_point_finds_the_version_that_shifted():
    con = _synthetic_sweep_db({"0.5.8": 1.0, "0.5.9": 1.01, "0.5.10": 1.30, "0.6.0": 1.31, "0.6.1": 1.29})
    rs.build_regression_layer(con)
    cps = con.execute("select version, previous_version, direction, shift_ratio, basis from change_points").fetchall()
    assert len(cps) == 1
    version, previous, direction, shift, basis = cps[0]
    assert (version, previous, direction, basis) == ("0.5.10", "0.5.9", "worse", "normalized")
    assert shift == pytest.approx(1.29, abs=0.03)
    verdict = con.execute("select verdict from sweep_regressions where to_version = '0.5.10'").fetchone()[0]
    assert verdict == "regression"
    con.close()


def test_change_points_segment_again_only_the_sweeps_whose_inputs_changed():
    """An incremental call keeps a sweep whose pairs are unchanged and redoes one whose pairs
    moved, ending where a full call over the same verdicts ends."""
    con = _synthetic_sweep_db({"0.5.8": 1.0, "0.5.9": 1.01, "0.5.10": 1.30, "0.6.0": 1.31, "0.6.1": 1.29})
    rs.build_regression_layer(con)
    query = "select * from change_points order by all"
    before = con.execute(query).fetchall()
    assert len(before) == 1
    assert build_change_points(con, full=False) == 0  # nothing to segment again
    assert con.execute("select count(*) from changed_sweep").fetchone()[0] == 0
    assert con.execute(query).fetchall() == before
    # the shift moves from 0.5.10 to 0.6.0
    con.execute(
        "update fact_measurement set p50 = p50 / 1.30 where liger_version = '0.5.10' and kernel_provider = 'liger'"
    )
    run_models(rs.regression_view_files(), DuckTarget(con))
    assert build_change_points(con, full=False) == 1
    assert con.execute("select count(*) from changed_sweep").fetchone()[0] == 1
    incremental = con.execute(query).fetchall()
    assert [r[9] for r in incremental] == ["0.6.0"]
    build_change_points(con)
    assert con.execute(query).fetchall() == incremental
    con.close()


def test_change_points_ignore_noise_and_handle_zero_sweeps():
    con = _synthetic_sweep_db({"0.1.0": 1.0, "0.2.0": 1.01, "0.3.0": 0.99, "0.4.0": 1.005})
    rs.build_regression_layer(con)
    assert con.execute("select count(*) from change_points").fetchone()[0] == 0
    con.close()
    empty = _synthetic_sweep_db({"0.1.0": 1.0})
    rs.build_regression_layer(empty)
    assert build_change_points(empty) == 0
    assert empty.execute("select count(*) from change_points").fetchone()[0] == 0
    empty.close()


# --------------------------------------------------------------------------- synthetic shifts


def test_rerun_false_alarms_and_synthetic_shift_recall(tmp_path):
    """The table in bench/results is written by `make bench` only; here the same benchmark is asserted
    on the shipped data (with the gh-pages snapshots and their commits), in its own process."""
    tracked = (REPO / "bench" / "results" / "regression_detection.md").read_bytes()
    out = tmp_path / "detection.json"
    subprocess.run(
        [sys.executable, "-m", "bench.regression_detection", "--json", str(out)],
        cwd=REPO,
        check=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    results = json.loads(out.read_text())
    assert (REPO / "bench" / "results" / "regression_detection.md").read_bytes() == tracked
    for r in results["reruns"]:
        if r["noise"] == "in-sample" and r["sweeps"]:
            assert r["rate"] <= 0.02, r
    for r in results["shifts"]:
        if r["shift"] == 0 and r["pool"] == "copy":
            assert r["flagged"] == 0, r
        if r["shift"] == 0 and r["pool"] == "rerun" and r["sweeps"]:
            assert r["rate"] <= 0.02, r  # a commit's two real runs: re-run noise
        if r["shift"] == 0.3 and r["band"] == "speed >= 1 ms" and r["sweeps"]:
            assert r["rate"] >= 0.9, r


# --------------------------------------------------------------------------- outputs for people


def test_report_is_written_with_plots(warehouse, tmp_path):
    from pipeline.outputs.report.write import write_report

    summary = write_report(warehouse, tmp_path / "reports")
    html = (tmp_path / "reports" / "regressions.html").read_text()
    md = (tmp_path / "reports" / "regressions.md").read_text()
    assert summary["plots"] >= 3  # jsd drift + two kto_loss improvements
    # the version plots, and as many per-commit trends (gh-pages snapshots in commits.txt order) at most
    drawn = summary["plots"] + summary["commit_trend_plots"]
    assert 0 < summary["commit_trend_plots"] <= 30
    assert html.count("data:image/png;base64,") == drawn
    assert "jsd" in md and "drift" in md
    pngs = list((tmp_path / "reports" / "plots").glob("*.png"))
    assert len(pngs) == drawn
    assert not list((tmp_path / "reports").glob(".*.tmp"))


def test_notebook_executes(warehouse, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.setenv("LIGER_DUCKDB", str(warehouse))
    nb = json.loads((REPO / "notebooks" / "version_trend.ipynb").read_text())
    import matplotlib.pyplot as plt

    namespace = {"__name__": "__main__"}
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            exec(compile("".join(cell["source"]), "version_trend.ipynb", "exec"), namespace)
    assert namespace["trend"], "the notebook found no rows for its default kernel"
    assert namespace["panels"], "no default panel has a series measured at two versions"
    for gpu, mode in namespace["panels"]:
        keys = {
            (r["provider"], r["x_value"], r["extra_config"])
            for r in namespace["shown"]
            if r["gpu_name"] == gpu and r["mode"] == mode
        }
        assert any(len(namespace["series_versions"][(gpu, mode, *k)]) > 1 for k in keys)
    labels = [t.get_text() for f in map(plt.figure, plt.get_fignums()) for ax in f.axes for t in ax.texts]
    assert labels and all("=" in t for t in labels), "each x point's line is labelled"
    plt.close("all")


def test_dagster_report_asset_and_check(warehouse, tmp_path):
    import dagster as dg

    from pipeline.defs.analyze import regression_report
    from pipeline.defs.resources import WarehouseResource

    wh = tmp_path / "wh"
    wh.mkdir()
    shutil.copy(warehouse, wh / "liger.duckdb")
    result = dg.materialize(
        [regression_report],  # its two checks are evaluated in its step
        resources={"warehouse": WarehouseResource(warehouse=str(wh))},
        instance=dg.DagsterInstance.ephemeral(),
    )
    assert result.success
    checks = result.get_asset_check_evaluations()
    assert {c.asset_check_key.name for c in checks} == {
        "newest_version_has_no_regressions",
        "newest_version_was_compared",
    }
    assert all(c.severity == dg.AssetCheckSeverity.WARN for c in checks)
    assert (wh / "reports" / "regressions.html").exists()
