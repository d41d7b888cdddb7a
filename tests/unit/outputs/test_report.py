"""The regression report, its Dagster checks and the closing summary, on a synthetic warehouse
whose verdicts are designed (tests/fixtures/report.py): 35 regressions, one unstable sweep, a
launch-bound sweep, and a newest version that is mostly or entirely uncompared."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from pipeline.outputs.report.queries import VersionCoverage
from pipeline.outputs.report.write import write_report
from tests.fixtures.report import build_report_warehouse

PROJECT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def flaky_db(tmp_path_factory) -> Path:
    return build_report_warehouse(tmp_path_factory.mktemp("report_flaky") / "liger.duckdb", flaky=True)


@pytest.fixture(scope="module")
def uncompared_db(tmp_path_factory) -> Path:
    return build_report_warehouse(tmp_path_factory.mktemp("report_uncompared") / "liger.duckdb", flaky=False)


@pytest.fixture(scope="module")
def flaky_report(flaky_db, tmp_path_factory) -> tuple[dict, Path]:
    out = tmp_path_factory.mktemp("report_out")
    return write_report(flaky_db, out, max_plots=30), out


def _flagged_rows(html: str) -> list[str]:
    body = re.search(r"<table id=\"flagged\">.*?<tbody>(.*?)</tbody>", html, re.S).group(1)
    return re.findall(r"<tr>.*?</tr>", body, re.S)


def test_plots_are_capped_and_every_flagged_sweep_is_listed_newest_first(flaky_db, flaky_report):
    summary, tmp_path = flaky_report
    html = (tmp_path / "regressions.html").read_text()
    with duckdb.connect(str(flaky_db), read_only=True) as con:
        flagged = con.execute(
            "select count(*) from sweep_regressions where verdict in ('regression','unstable','drift','improvement')"
        ).fetchone()[0]
    assert flagged > 30
    assert summary["plots"] == 30 and summary["flagged_sweeps"] == flagged
    assert html.count("data:image/png;base64,") == 30
    assert len(list((tmp_path / "plots").glob("*.png"))) == 30
    rows = _flagged_rows(html)
    assert len(rows) == flagged
    # the newest version comes first: the unstable 0.2.0 -> 0.3.0 sweep heads the list
    assert "flaky" in rows[0] and "unstable" in rows[0] and "0.2.0 → 0.3.0" in rows[0]
    assert re.search(r"<td>1 / 2</td>", rows[0]), "runs per side are shown"
    # the first max_plots rows link to their plot, the rest do not
    assert all('href="#plot-' in r for r in rows[:30]) and not any('href="#plot-' in r for r in rows[30:])
    assert "id='plot-30'" in html and "id='plot-31'" not in html


def test_only_plots_whose_sweep_changed_are_drawn_again(flaky_db, tmp_path, monkeypatch):
    write_report(flaky_db, tmp_path, max_plots=5)
    plots = sorted((tmp_path / "plots").glob("*.png"))
    before = {p.name: p.stat().st_mtime_ns for p in plots}
    # one plot lost: a second report draws that one only, and keeps the others' files untouched
    plots[0].unlink()
    draws = []
    import pipeline.outputs.report.plot as report_plot
    import pipeline.outputs.report.write as report_write

    # which plots are drawn, not where: in this process, so the counting wrapper sees every draw
    monkeypatch.setattr(report_plot, "MIN_PLOTS_PER_HELPER", 10**6)
    drawing = report_write.plot_sweep  # the real drawing, counted
    monkeypatch.setattr(report_write, "plot_sweep", lambda *a: draws.append(a) or drawing(*a))
    write_report(flaky_db, tmp_path, max_plots=5)
    after = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "plots").glob("*.png")}
    assert len(draws) == 1 and after.keys() == before.keys()
    assert all(after[n] == before[n] for n in before if n != plots[0].name)
    # a sweep whose data changed is a new plot: the old file goes, the new one is drawn
    changed = tmp_path / "changed.duckdb"
    changed.write_bytes(flaky_db.read_bytes())
    with duckdb.connect(str(changed)) as con:
        # sweep_regressions' rows as stored (its view adds is_newest and alert_id)
        schema, table = con.execute(
            "select schema_name, table_name from duckdb_tables() "
            "where table_name in ('sweep_pair_verdicts', 'sweep_pair_verdicts__materialized')"
        ).fetchone()
        con.execute(f'update "{schema}"."{table}" set threshold = threshold * 1.01')
    write_report(changed, tmp_path, max_plots=5)
    assert not set(before) & {p.name for p in (tmp_path / "plots").glob("*.png")}


def test_no_duplicated_tables_and_each_sweep_listed_once(flaky_report):
    tmp_path = flaky_report[1]
    html = (tmp_path / "regressions.html").read_text()
    headings = re.findall(r"<h2>(.*?)</h2>", html)
    assert len(headings) == len(set(headings))
    table_ids = re.findall(r"<table id=['\"]([^'\"]+)['\"]", html)
    assert len(table_ids) == len(set(table_ids))
    k07 = [r for r in _flagged_rows(html) if "<td>k07</td>" in r]
    assert len(k07) == 1
    assert html.count("<td>k07</td>") == 1


def test_thresholds_are_percentages_and_launch_bound_sweeps_get_a_hint(flaky_report):
    tmp_path = flaky_report[1]
    md = (tmp_path / "regressions.md").read_text()
    html = (tmp_path / "regressions.html").read_text()
    assert "±3.0 %" in md and "min_noise_floor = 3 %" in md
    assert not re.search(r"\| 0\.030 \|", md)
    launchy = next(r for r in _flagged_rows(html) if "<td>launchy</td>" in r)
    assert "launch-bound?" in launchy and "flat across x" in launchy
    assert not any("launch-bound?" in r for r in _flagged_rows(html) if "<td>launchy</td>" not in r)


def test_coverage_section_per_version(flaky_db, flaky_report):
    tmp_path = flaky_report[1]
    html = (tmp_path / "regressions.html").read_text()
    table = re.search(r"<table id='coverage'>.*?</table>", html, re.S).group(0)
    with duckdb.connect(str(flaky_db), read_only=True) as con:
        expected = con.execute(
            "select liger_version, count(*), count(compared_with) from version_coverage group by 1 order by 1"
        ).fetchall()
    for version, series, compared in expected:
        assert re.search(rf"<td>{re.escape(version)}</td><td>{series}</td><td>{compared}</td>", table), version
    assert "first seen" in table or "first version" in table


def test_nothing_compared_is_never_reported_as_no_regressions(uncompared_db, tmp_path):
    summary = write_report(uncompared_db, tmp_path, max_plots=1)
    md = (tmp_path / "regressions.md").read_text()
    assert summary["newest_version"] == "0.3.0" and summary["newest_compared"] == 0
    assert "Regressions in 0.3.0: unknown, none of its 6 series was compared" in md
    assert "Regressions in 0.3.0: none" not in md


def test_regressions_line_wording():
    assert VersionCoverage("1.0", series=5, compared=0).regressions_line().startswith("Regressions in 1.0: unknown")
    assert VersionCoverage("1.0").regressions_line().startswith("Regressions in 1.0: unknown")
    some = VersionCoverage("1.0", series=5, compared=2, verdicts={"unchanged": 2}, reasons={"first seen": 3})
    assert some.regressions_line() == ("Regressions in 1.0: none among 2 compared series; 3 of 5 series not compared.")
    assert some.sentence() == "1.0: 5 series, 2 compared (2 unchanged); not compared: 3 first seen"


def _materialize_report(db: Path, wh: Path, home: Path) -> dg.ExecuteInProcessResult:
    from pipeline.defs.analyze import regression_report
    from pipeline.defs.resources import WarehouseResource

    wh.mkdir(parents=True, exist_ok=True)
    (wh / "liger.duckdb").write_bytes(db.read_bytes())
    home.mkdir(parents=True, exist_ok=True)
    with dg.DagsterInstance.local_temp(str(home)) as instance:
        return dg.materialize(
            [regression_report],  # its two checks are evaluated in its step
            resources={"warehouse": WarehouseResource(warehouse=str(wh))},
            instance=instance,
            run_config={"ops": {"regression_report": {"config": {"max_plots": 4}}}},
        )


def test_dagster_checks_and_closing_summary(uncompared_db, tmp_path):
    wh, home = tmp_path / "warehouse", tmp_path / "dagster_home"
    result = _materialize_report(uncompared_db, wh, home)
    assert result.success
    checks = {c.asset_check_key.name: c for c in result.get_asset_check_evaluations()}
    assert checks["newest_version_was_compared"].passed is False
    assert checks["newest_version_has_no_regressions"].passed is True
    assert len(list((wh / "reports" / "plots").glob("*.png"))) == 4

    env = {**os.environ, "DAGSTER_HOME": str(home), "LIGER_WAREHOUSE": str(wh), "PYTHONPATH": str(PROJECT)}
    out = subprocess.run(
        [sys.executable, "-m", "pipeline.cli.summary"], env=env, capture_output=True, text=True, check=True, cwd=PROJECT
    ).stdout
    assert re.search(r"^facts:\s+\d", out, re.M)
    assert "sources:   2  (kernelindex: 1, liger_csv: 1; 123 rows read)" in out
    assert "quarantined rows: 1" in out
    assert "newest version 0.3.0: 6 series, 0 compared" in out
    assert "Regressions in 0.3.0: unknown" in out
    assert re.search(r"^run:\s+SUCCESS", out, re.M)
    assert "checks:    1 passed, 1 warned, 0 failed" in out
    assert "WARN  regression_report.newest_version_was_compared: 0.3.0: 6 series, 0 compared" in out
    assert f"report:    {wh / 'reports' / 'regressions.html'}" in out


def test_the_checks_read_the_report_s_summary_or_the_file_alike(uncompared_db, tmp_path):
    """The newest-version checks take the report's summary (its coverage and regressed sweeps, read once);
    a summary recorded before it held them makes the checks read the file: the same checks either way."""
    from pipeline.defs.analyze import _newest_version_checks
    from pipeline.defs.resources import WarehouseResource

    wh = tmp_path / "warehouse"
    assert _materialize_report(uncompared_db, wh, tmp_path / "dagster_home").success
    summary = json.loads((wh / "reports" / ".built_from.json").read_text())["summary"]
    older = {k: v for k, v in summary.items() if k not in ("newest_reasons", "newest_regressions")}
    resource = WarehouseResource(warehouse=str(wh))

    def checks(summary: dict) -> list:
        return [
            (c.check_name, c.passed, c.description, {k: v.value for k, v in c.metadata.items()})
            for c in _newest_version_checks(resource, summary)
        ]

    assert checks(summary) == checks(older)
    assert dict(checks(summary)[1][3]["not_compared"]) == summary["newest_reasons"] != {}


def test_plots_drawn_side_by_side_are_the_ones_one_process_draws(flaky_db, tmp_path, monkeypatch):
    """Helper processes draw part of the batch: every plot lands under its own name with the bytes one
    process alone would draw, and the report that embeds them is the same."""
    import pipeline.outputs.report.plot as report_plot

    monkeypatch.setattr(report_plot, "_usable_cores", lambda: 3)  # two helpers beside this process
    write_report(flaky_db, tmp_path / "side_by_side", max_plots=8)
    monkeypatch.setattr(report_plot, "MIN_PLOTS_PER_HELPER", 10**6)
    write_report(flaky_db, tmp_path / "alone", max_plots=8)

    def files(folder):
        # the reports differ in their "Generated <time>" line alone
        return {
            p.relative_to(folder).as_posix(): re.sub(rb"Generated [0-9: -]+ UTC", b"Generated", p.read_bytes())
            for p in folder.rglob("*")
            if p.is_file()
        }

    side_by_side, alone = files(tmp_path / "side_by_side"), files(tmp_path / "alone")
    assert sum(n.startswith("plots/") for n in alone) >= 8
    assert side_by_side.keys() == alone.keys()
    assert [n for n in alone if side_by_side[n] != alone[n]] == []


def test_a_plot_is_named_by_what_it_shows_not_by_the_last_ulp(tmp_path):
    """A geomean DuckDB sums in another order differs in its last bit: the same plot, not drawn again."""
    from pipeline.outputs.report.plot import PlotBatch

    batch = PlotBatch(tmp_path)
    one = batch.add("s", [{"level": 1.6076458384874845, "step_rank": 2}], str)
    same = batch.add("s", [{"level": 1.6076458384874843, "step_rank": 2}], str)
    other = batch.add("s", [{"level": 1.6076458384, "step_rank": 2}], str)
    assert one.name == same.name != other.name
