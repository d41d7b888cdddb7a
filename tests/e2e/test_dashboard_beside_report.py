"""The dashboard's pages are rendered from liger.duckdb in a side thread the DuckDB build's step starts,
while the report's step runs (it goes first); the dashboard's step writes them, renders them itself when
the side rendering failed, and nothing is rendered for it in a run without the dashboard."""

from __future__ import annotations

import threading

import dagster as dg

from pipeline.common import duck
from pipeline.defs import analyze as analyze_defs
from pipeline.outputs import site
from tests.conftest import copy_data_raw, materialize


def _record_renderings(monkeypatch) -> list[str]:
    """The thread of every rendering of the site."""
    seen: list[str] = []
    read = analyze_defs.render_site

    def recording(*args, **kwargs):
        seen.append(threading.current_thread().name)
        return read(*args, **kwargs)

    monkeypatch.setattr(analyze_defs, "render_site", recording)
    return seen


def _step_order(result: dg.ExecuteInProcessResult) -> list[str]:
    return [e.step_key for e in result.all_events if e.event_type_value == "STEP_START"]


def test_the_dashboard_is_rendered_beside_the_report_and_written_by_its_step(tmp_path, monkeypatch):
    seen = _record_renderings(monkeypatch)
    data = copy_data_raw(tmp_path / "data_raw", csv_glob="2024-09*.csv")
    result = materialize(data, tmp_path / "warehouse")
    assert result.success
    assert seen == ["dashboard-beside-report"]
    order = _step_order(result)
    assert order.index("liger_duckdb") < order.index("regression_report") < order.index("dashboard")
    assert not analyze_defs._SITE_PAGES  # the step took the pages
    index = tmp_path / "warehouse" / "site" / "index.html"
    standalone = tmp_path / "standalone"
    site.write_site(tmp_path / "warehouse" / "liger.duckdb", standalone)
    strip = lambda text: text.split('"generated":"', 1)[0]  # noqa: E731 - the payload's clock aside
    assert strip(index.read_text()) == strip((standalone / "index.html").read_text())
    assert not duck._reader_spill().exists()  # the last reader removed the shared spill folder


def test_a_failed_side_rendering_is_done_again_by_the_dashboards_step(tmp_path, monkeypatch):
    seen: list[str] = []
    read = analyze_defs.render_site

    def failing_beside_the_report(*args, **kwargs):
        seen.append(threading.current_thread().name)
        if seen[-1] == "dashboard-beside-report":
            raise OSError("injected: the side rendering failed")
        return read(*args, **kwargs)

    monkeypatch.setattr(analyze_defs, "render_site", failing_beside_the_report)
    data = copy_data_raw(tmp_path / "data_raw", csv_glob="2024-09*.csv")
    result = materialize(data, tmp_path / "warehouse")
    assert result.success
    assert seen == ["dashboard-beside-report", "MainThread"]
    assert (tmp_path / "warehouse" / "site" / "index.html").exists()
    assert result.asset_materializations_for_node("dashboard")[0].metadata["rebuilt"].value is True


def test_a_run_without_the_dashboard_renders_nothing_for_it(tmp_path, monkeypatch):
    seen = _record_renderings(monkeypatch)
    data = copy_data_raw(tmp_path / "data_raw", csv_glob="2024-09*.csv")
    without = dg.AssetSelection.assets("staged_sources").downstream() - dg.AssetSelection.assets("dashboard")
    result = materialize(data, tmp_path / "warehouse", selection=without)
    assert result.success
    assert "dashboard" not in _step_order(result)
    assert seen == [] and not analyze_defs._SITE_PAGES


def test_two_readers_of_the_published_file_can_be_open_at_once(tmp_path):
    db = tmp_path / "x.duckdb"
    with duck.connect(db) as con:
        con.execute("create table t as select 1 as a")
    with duck.open_readonly(db, "") as first, duck.open_readonly(db, "") as second:
        assert first.execute("select a from t").fetchall() == second.execute("select a from t").fetchall() == [(1,)]
        assert duck._reader_spill().parent.exists()
    assert not duck._reader_spill().exists()
