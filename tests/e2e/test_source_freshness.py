"""Sources that go silent (issue 54): `source_freshness` on upstream's gh-pages runs (a real Dagster run into
real Delta tables and DuckDB files), the `sources_are_fresh` asset check, and the stoppage alert delivered
once per state change to a real webhook receiver on 127.0.0.1. "Now" is LIGER_FRESHNESS_NOW, never the clock."""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import duckdb

from tests.conftest import materialize
from tests.fixtures.webhook import Receiver

REPO = Path(__file__).resolve().parents[2]
GH_PAGES = REPO / "data_raw" / "liger_gh_pages"
H100 = "NVIDIA H100 80GB HBM3"
NOW = "2026-03-20T00:00:00"  # six weeks after the newest shipped H100 run (2026-02-06)


def _new_run(raw: Path, folder: str, at: str) -> None:
    """One more gh-pages run of H100, as upstream's CI writes it: the newest snapshot's rows at ``at``."""
    bench = raw / "liger_gh_pages" / "benchmarks"
    rows = list(csv.DictReader(io.StringIO((bench / "1fdb668" / "benchmark.csv").read_text())))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows({**r, "timestamp": at} for r in rows if r["gpu_name"] == H100)
    (bench / folder).mkdir()
    (bench / folder / "benchmark.csv").write_text(out.getvalue())
    with (bench / "commits.txt").open("a") as fh:
        fh.write(folder + "\n")


def _freshness(wh: Path) -> tuple:
    with duckdb.connect(str(wh / "liger.duckdb"), read_only=True) as con:
        row = con.execute(
            "select runs, newest_run_at, usual_interval_hours, overdue, strftime(overdue_at, '%Y-%m-%d') "
            "from source_freshness where family = 'gh-pages CI' and scope = $g",
            {"g": H100},
        ).fetchone()
        stoppage = con.execute(
            "select alert_id, status, line from alerts where kind = 'stoppage' and gpu_name = $g", {"g": H100}
        ).fetchall()
    return row, stoppage


def _check(result) -> tuple[bool, str]:
    [evaluation] = [e for e in result.get_asset_check_evaluations() if e.check_name == "sources_are_fresh"]
    return evaluation.passed, evaluation.description


def test_silent_ci_is_overdue_a_new_run_clears_it_and_each_change_is_delivered_once(tmp_path, monkeypatch):
    raw, wh = tmp_path / "data_raw", tmp_path / "wh"
    shutil.copytree(GH_PAGES, raw / "liger_gh_pages")
    monkeypatch.setenv("LIGER_FRESHNESS_NOW", NOW)
    with Receiver() as hook:
        monkeypatch.setenv("LIGER_ALERT_WEBHOOK", hook.url)
        result = materialize(raw, wh)
        assert result.success
        (runs, newest, interval, overdue, since), stoppage = _freshness(wh)
        # weekly CI: 23 H100 runs, a median week between them; silent since 2026-02-06, overdue 3 weeks later
        assert runs == 23 and str(newest)[:10] == "2026-02-06" and 167 < interval < 169
        assert overdue and since == "2026-02-27"
        [(alert_id, status, line)] = stoppage
        assert status == "overdue" and line.startswith("gh-pages CI on H100 80GB HBM3: no run since 2026-02-06")
        passed, text = _check(result)
        assert not passed
        assert "gh-pages CI NVIDIA H100 80GB HBM3 silent since 2026-02-06 (overdue since 2026-02-27)" in text
        first = [t for t in hook.take() if alert_id in t]
        assert len(first) == 1 and f"{alert_id} [overdue]" in first[0]

        assert materialize(raw, wh).success  # nothing new: no message
        assert [t for t in hook.take() if alert_id in t] == []

        _new_run(raw, "abcdef1", "2026-03-19 06:00:00")  # one new run with a current timestamp
        result = materialize(raw, wh)
        assert result.success
        (runs, newest, _, overdue, _), stoppage = _freshness(wh)
        assert runs == 24 and str(newest)[:10] == "2026-03-19" and overdue is False
        assert [s[:2] for s in stoppage] == [(alert_id, "resumed")]
        assert _check(result)[1].find("H100 80GB HBM3") == -1  # H100 is no longer named as overdue
        resumed = [t for t in hook.take() if alert_id in t]
        assert len(resumed) == 1 and f"{alert_id} [resumed]" in resumed[0]

        assert materialize(raw, wh).success
        assert [t for t in hook.take() if alert_id in t] == []
