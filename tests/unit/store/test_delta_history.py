"""The Delta tables over several runs: incremental equals full, history names the runs, earlier
states stay readable (run number or timestamp), compaction and vacuum keep the retention promise."""

from __future__ import annotations

import shutil
import time
from datetime import timedelta
from pathlib import Path

import pytest

from pipeline.ingest.commits import reference_tables
from pipeline.ingest.discovery import discover
from pipeline.serve.connect import connect
from pipeline.stage.store import StagingStore
from pipeline.store.merge import Merger
from pipeline.store.warehouse import RUN_LOG, Warehouse
from tests.fixtures import runs as rs


def ingest(wh: Warehouse, raw: Path, **kw):
    """What the run's assets do: discover, stage, order the gh-pages runs, merge."""
    staging = StagingStore(wh.staging)
    sources, problems = discover(raw)
    staging.stage(sources)
    reference = reference_tables(sources, staging.path, None)
    return Merger(wh, staging).run(sources, problems, reference=reference, **kw)


def facts(wh: Warehouse, seq: int | None = None):
    """Every column, provenance and learned dimensions included (no liger.duckdb here: computed)."""
    with connect(run=seq, warehouse=wh.root_uri, local_dir=str(wh.local)) as con:
        return con.execute("select * exclude (run_seq) from fact_measurement order by measurement_digest").fetchall()


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """Three runs on one warehouse: 3 snapshots, then 2 more, then nothing new."""
    tmp = tmp_path_factory.mktemp("history")
    raw = rs.small_data_raw(tmp / "raw", n_csv=3, kernelindex=True)
    wh = Warehouse(tmp / "wh")
    results = [ingest(wh, raw)]
    time.sleep(0.05)
    between = wh.published().committed_at
    rs.small_data_raw(raw, n_csv=2, kernelindex=False, skip=3)
    results.append(ingest(wh, raw))
    results.append(ingest(wh, raw))
    return tmp, raw, wh, results, between


@pytest.fixture(autouse=True)
def _freshness_at_a_fixed_time(monkeypatch):
    """source_freshness reads the clock unless told the time: builds compared here must read alike."""
    monkeypatch.setenv("LIGER_FRESHNESS_NOW", "2026-01-01T00:00:00")


def test_incremental_run_equals_a_full_build(history):
    tmp, raw, wh, results, _ = history
    assert [r.mode for r in results] == ["full", "incremental", "unchanged"]
    assert results[1].stats["sources_in_batch"] == 2 and results[1].stats["facts_inserted"] > 0
    fresh = Warehouse(tmp / "fresh")
    assert ingest(fresh, raw).mode == "full"
    assert facts(wh) == facts(fresh)


def test_history_shows_the_runs_and_the_run_log_names_their_versions(history):
    _, _, wh, results, _ = history
    log = wh.run_log()
    assert [p.seq for p in log] == [1, 2]  # the unchanged run committed nothing
    fact_history = wh.store.history("fact_measurement")
    run_ids = [h.get("liger.run_id") for h in fact_history]
    assert {results[0].published.run_id, results[1].published.run_id} <= set(run_ids)
    for p in log:
        assert wh.store.open("fact_measurement", p.versions["fact_measurement"]) is not None
    assert wh.store.version(RUN_LOG) == 1


def test_reading_the_state_before_a_run_gives_its_facts(history):
    tmp, _, wh, results, between = history
    first = facts(wh, seq=1)
    second = facts(wh, seq=2)
    assert len(first) < len(second)
    # From SQL/Python through pipeline.connect: by run number and by timestamp.
    with connect(run=1, warehouse=str(wh.root_uri)) as con:
        by_run = con.execute("select * exclude (run_seq) from fact_measurement order by measurement_digest").fetchall()
        assert con.execute("select count(*) from regressions").fetchone()[0] >= 0  # the views work on the old state
    with connect(as_of=between, warehouse=str(wh.root_uri)) as con:
        by_time = con.execute("select * exclude (run_seq) from fact_measurement order by measurement_digest").fetchall()
        assert con.execute("select seq, mode from warehouse_run").fetchall() == [(1, "full")]
    assert by_run == first and by_time == first
    with pytest.raises(LookupError):
        connect(run=99, warehouse=str(wh.root_uri))


def test_compaction_then_vacuum_after_retention(tmp_path, monkeypatch):

    monkeypatch.setenv("LIGER_COMPACT_MIN_FILES", "3")
    raw = rs.small_data_raw(tmp_path / "raw", n_csv=1, kernelindex=False)
    wh = Warehouse(tmp_path / "wh")
    ingest(wh, raw)
    compacted = []
    for i in range(1, 3):  # one small append per run: the third file triggers compaction
        rs.small_data_raw(raw, n_csv=1, kernelindex=False, skip=i)
        compacted.append(ingest(wh, raw).stats.get("compacted", []))
    assert compacted == [[], ["fact_measurement", "fact_sighting"]]
    assert len(wh.store.files("fact_measurement")) == 1
    ops = [h["operation"] for h in wh.store.history("fact_measurement")]
    assert "OPTIMIZE" in ops
    old = wh.run_log()[0]
    # Within retention the first run's files are still there: its state reads back.
    assert facts(wh, seq=old.seq)
    # Past retention, vacuum deletes them (only files no current version needs).
    removed = wh.vacuum(timedelta(0))
    assert removed["fact_measurement"] > 0
    assert facts(wh)  # the newest state is untouched
    with pytest.raises(LookupError, match=f"run {old.seq} is older than the retention"):
        facts(wh, seq=old.seq)


def test_incremental_duckdb_refresh_equals_a_full_build(tmp_path):
    """liger.duckdb after run 1 and then run 2 (materialized views refreshed for touched keys only)
    holds exactly what a file built from scratch at run 2 holds. Run 2 brings no new Liger version
    (one ranked among the measured ones re-ranks every series, and the file is then rebuilt whole;
    tests/unit/serve/test_new_version_ranks.py has the newest version kept incrementally)."""
    from pipeline.engine.catalog import regress_models
    from pipeline.serve.duckdb_build import build_duckdb

    raw = rs.small_data_raw(tmp_path / "raw", n_csv=4, kernelindex=True)
    wh = Warehouse(tmp_path / "wh")
    ingest(wh, raw)
    inc = Warehouse(wh.root_uri, tmp_path / "incremental")
    first = build_duckdb(inc, inc.published(seq=1))
    rs.small_data_raw(raw, n_csv=2, kernelindex=False, skip=4)  # 0.2.1 and 0.3.1 rows only
    assert ingest(wh, raw).mode == "incremental"
    second = build_duckdb(inc, inc.published(seq=2))
    assert first["mode"] == "full" and second["mode"] == "incremental"
    assert any("key(s)" in v for v in second["refreshed"].values()), second["refreshed"]
    # the point's other versions' facts stay out of the models keyed on the step
    assert second["refreshed"]["reference_measurements"].endswith("(facts by step)"), second["refreshed"]
    # counted (a step's runs: listed) over the new facts alone and merged into the kept rows
    for merged in ("version_kernel_gpus", "series_steps", "sweep_points"):
        assert second["refreshed"][merged].endswith("(merged)"), second["refreshed"]
    full = Warehouse(wh.root_uri, tmp_path / "full")
    assert build_duckdb(full, full.published(seq=2))["mode"] == "full"
    assert second["fact_provenance"].endswith("measurement(s)")  # refreshed for new sightings only
    assert second["refreshed"]["change_points"].endswith("sweep(s)"), second["refreshed"]
    with inc.open_duckdb() as a, full.open_duckdb() as b:
        q = "select * from fact_measurement order by measurement_digest"
        assert a.execute(q).fetchall() == b.execute(q).fetchall()
        # the incremental file kept run 1's views: the same views, texts and columns as a fresh file's
        q = "select schema_name, view_name, sql, column_count from duckdb_views() where not internal order by all"
        assert a.execute(q).fetchall() == b.execute(q).fetchall()
        for name in [vf.name for vf in regress_models() if vf.materialize] + ["change_points"]:
            q = f"select * from {name} order by all"
            assert a.execute(q).fetchall() == b.execute(q).fetchall(), name


def _page(raw: Path, folder: str, run_at: str, value: float, order: list[str]) -> None:
    from tests.fixtures.gh_pages_repo import benchmark_csv

    (raw / "pages" / "benchmarks" / folder).mkdir(parents=True, exist_ok=True)
    (raw / "pages" / "benchmarks" / folder / "benchmark.csv").write_text(benchmark_csv(run_at, value))
    (raw / "pages" / "benchmarks" / "commits.txt").write_text("".join(f"{f}\n" for f in order))


def test_a_run_benchmarked_late_but_older_in_commit_order_rebuilds_liger_duckdb(tmp_path):
    """A commit appended at the end of the order moves no other run: the refresh stays incremental.
    A commit that lands between two benchmarked ones shifts the commit order of every later run, on
    every GPU and kernel, touched or not: the file is then built whole. Both equal a fresh build."""
    from pipeline.engine.catalog import regress_models
    from pipeline.serve.duckdb_build import build_duckdb

    raw, wh = tmp_path / "raw", Warehouse(tmp_path / "wh")
    _page(raw, "aaaaaaa", "2025-01-01 10:00:00", 1.0, ["aaaaaaa"])
    _page(raw, "ccccccc", "2025-01-08 10:00:00", 1.5, ["aaaaaaa", "ccccccc"])
    ingest(wh, raw)
    inc = Warehouse(wh.root_uri, tmp_path / "incremental")
    assert build_duckdb(inc, inc.published())["mode"] == "full"
    steps = [
        ("ddddddd", "2025-01-15 10:00:00", 1.6, ["aaaaaaa", "ccccccc", "ddddddd"], "incremental"),
        ("bbbbbbb", "2025-01-22 10:00:00", 1.2, ["aaaaaaa", "bbbbbbb", "ccccccc", "ddddddd"], "full"),
    ]
    for folder, run_at, value, order, mode in steps:
        _page(raw, folder, run_at, value, order)
        assert ingest(wh, raw).mode == "incremental"
        assert build_duckdb(inc, inc.published())["mode"] == mode, folder
        fresh = Warehouse(wh.root_uri, tmp_path / f"fresh-{folder}")
        build_duckdb(fresh, fresh.published())
        with inc.open_duckdb() as a, fresh.open_duckdb() as b:
            for vf in regress_models():
                q = f"select * from {vf.name} order by all"
                assert a.execute(q).fetchall() == b.execute(q).fetchall(), (folder, vf.name)
    with inc.open_duckdb() as con:
        order = con.execute("select short_commit from benchmark_commit order by commit_order").fetchall()
    assert [o[0] for o in order] == ["aaaaaaa", "bbbbbbb", "ccccccc", "ddddddd"]


def test_a_fact_a_new_run_carries_again_leaves_no_step_behind(tmp_path):
    """The same benchmark.csv written again under another commit's folder: no new fact, but the
    facts now belong to the run named first (`snapshot`), so they leave one commit's step for
    another. Refreshing only the keys of new facts would keep the old step; the models keyed
    finer than the facts' own columns are recomputed whole, and the file equals a fresh build."""
    from pipeline.engine.catalog import regress_models
    from pipeline.serve.duckdb_build import build_duckdb

    raw, wh = tmp_path / "raw", Warehouse(tmp_path / "wh")
    _page(raw, "bbbbbbb", "2025-01-01 10:00:00", 1.0, ["bbbbbbb"])
    _page(raw, "ccccccc", "2025-01-08 10:00:00", 1.5, ["bbbbbbb", "ccccccc"])
    ingest(wh, raw)
    inc = Warehouse(wh.root_uri, tmp_path / "incremental")
    build_duckdb(inc, inc.published())
    with inc.open_duckdb() as con:
        before = con.execute("select distinct benchmarked_commit from measurements order by 1").fetchall()
    _page(raw, "aaaaaaa", "2025-01-01 10:00:00", 1.0, ["bbbbbbb", "ccccccc", "aaaaaaa"])
    assert ingest(wh, raw).mode == "incremental"
    done = build_duckdb(inc, inc.published())
    assert done["mode"] == "incremental" and done["refreshed"]["series_steps"] == "full", done["refreshed"]
    fresh = Warehouse(wh.root_uri, tmp_path / "fresh")
    build_duckdb(fresh, fresh.published())
    with inc.open_duckdb() as a, fresh.open_duckdb() as b:
        after = a.execute("select distinct benchmarked_commit from measurements order by 1").fetchall()
        for vf in regress_models():
            q = f"select * from {vf.name} order by all"
            assert a.execute(q).fetchall() == b.execute(q).fetchall(), vf.name
        q = "select * from change_points order by all"
        assert a.execute(q).fetchall() == b.execute(q).fetchall()
    assert before == [("bbbbbbb",), ("ccccccc",)] and after == [("aaaaaaa",), ("ccccccc",)]


def test_a_known_fact_is_not_appended_again_and_one_carried_with_other_values_rebuilds(tmp_path):
    """A later snapshot repeating a stored fact adds its sighting, not the fact; one that carries a
    stored fact (same digest) with another value outside the digest (x_label) runs the whole build,
    where the newest source decides."""
    raw, wh = tmp_path / "raw", Warehouse(tmp_path / "wh")
    first = sorted(rs.CSV_DIR.glob("*.csv"))[0]
    (raw / "liger_csv").mkdir(parents=True)
    shutil.copy(first, raw / "liger_csv" / first.name)
    assert ingest(wh, raw).mode == "full"
    stored = len(facts(wh))
    text = first.read_text()
    (raw / "liger_csv" / "2030-01-01_aaaaaaaaaa_all_benchmark_data.csv").write_text(text)
    again = ingest(wh, raw)
    assert again.mode == "incremental" and again.stats["facts_inserted"] == 0, again.stats
    assert again.stats["fact_sighting_appended"] == stored and len(facts(wh)) == stored
    relabelled = text.replace(",vocab size,", ",vocabulary size,")
    assert relabelled != text
    (raw / "liger_csv" / "2030-02-01_bbbbbbbbbb_all_benchmark_data.csv").write_text(relabelled)
    rebuilt = ingest(wh, raw)
    assert rebuilt.mode == "full" and "carried with other values" in rebuilt.reason, rebuilt.reason
    assert len(facts(wh)) == stored


def test_a_table_empty_at_the_last_build_read_through_the_kept_views(tmp_path):
    """An incremental build keeps the file's views; a Delta table that had no file then (the
    quarantine, a typed empty relation) and has rows now is read through them like a fresh build's."""
    from pipeline.serve.duckdb_build import build_duckdb

    raw = rs.small_data_raw(tmp_path / "raw", n_csv=2, kernelindex=False)
    wh = Warehouse(tmp_path / "wh")
    ingest(wh, raw)
    inc = Warehouse(wh.root_uri, tmp_path / "incremental")
    build_duckdb(inc, inc.published())
    with inc.open_duckdb() as con:
        assert con.execute("select count(*) from quarantine").fetchone() == (0,)
    first = sorted(raw.rglob("*.csv"))[0]
    (first.parent / "zz_bad.csv").write_text(first.read_text().splitlines()[0] + "\nnot,a,valid,row\n")
    assert ingest(wh, raw).mode == "incremental"
    assert build_duckdb(inc, inc.published())["mode"] == "incremental"
    fresh = Warehouse(wh.root_uri, tmp_path / "fresh")
    build_duckdb(fresh, fresh.published())
    with inc.open_duckdb() as a, fresh.open_duckdb() as b:
        assert a.execute("select count(*) from quarantine").fetchone() == (1,)
        for name in ("quarantine", "quarantine_by_reason", "source", "fact_measurement", "liger_versions"):
            q = f"select * from {name} order by all"
            assert a.execute(q).fetchall() == b.execute(q).fetchall(), name
