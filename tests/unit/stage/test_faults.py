"""Issue 20 "Nothing lost under faults": inputs that used to fail a whole stage or land wrong values.

Each test failed before its fix: a repeated header name, a repeated
JSON key, an unknown `metric_unit`, a far-future timestamp and a timestamp after the commit that holds its
file all landed as good rows."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from pipeline.contracts.reasons import Reason
from tests.fixtures.runs import HEADER, row
from tests.unit.stage.test_bad_input import bad, bundle, csv_file, good, stage_csv, stage_ki


# -- case 14: a header that names a column twice ---------------------------------------------------------
@pytest.mark.parametrize("column", ["kernel_name", "y_value_50", "x_label"])
def test_duplicate_header_name_quarantines_the_file(tmp_path, column):
    header = HEADER + "," + column
    rows = stage_csv(tmp_path, "\n".join([header, row("1") + ",x", row("2") + ",y"]) + "\n")
    assert bad(rows) == [("file", Reason.DUPLICATE_COLUMN)]
    assert column in rows[0]["raw"] and good(rows) == []


def test_repeated_unknown_column_is_no_error(tmp_path):
    """A column the reader never reads may repeat: nothing is ambiguous."""
    rows = stage_csv(tmp_path, "\n".join([HEADER + ",note,note", row("1") + ",a,b"]) + "\n")
    assert good(rows) == ["1"] and bad(rows) == []


# -- case 15: duplicate JSON keys -------------------------------------------------------------------------
def _with_duplicate_label(text: str) -> str:
    assert '"labels": {' in text
    return text.replace('"labels": {', '"labels": {"liger_version": "9.9.9", ', 1)


def _with_duplicate_in_protocol(text: str) -> str:
    doc = json.loads(text)
    inner = json.dumps(doc["protocol"])
    return text.replace(json.dumps(doc["protocol"])[:-1], inner[:-1] + ', "kind": "BenchmarkProtocol"', 1)


@pytest.mark.parametrize("make", [_with_duplicate_label, _with_duplicate_in_protocol], ids=["run", "protocol"])
def test_ndjson_duplicate_key_is_quarantined_and_neighbours_land(tmp_path, make):
    rows = stage_ki(tmp_path, "\n".join([bundle(), make(bundle()), bundle()]) + "\n", "b.ndjson")
    assert sorted((r["location"], r["reason"]) for r in rows) == [
        ("line 1", None),
        ("line 2", Reason.DUPLICATE_KEY),
        ("line 3", None),
    ]


def test_json_duplicate_key_is_quarantined_and_neighbours_land(tmp_path):
    body = "[" + ",".join([bundle(), _with_duplicate_label(bundle())]) + "]"
    rows = stage_ki(tmp_path, body, "b.json")
    assert sorted(r["reason"] or "" for r in rows) == ["", Reason.DUPLICATE_KEY]
    one = stage_ki(tmp_path, _with_duplicate_label(bundle()), "one.json")
    assert [r["reason"] for r in one] == [Reason.DUPLICATE_KEY]


# -- case 16: metric_unit ---------------------------------------------------------------------------------
def _unit_row(x: str, unit: str, p20: str, p50: str, p80: str, metric: str = "speed") -> str:
    return row(x, p20=p20, p50=p50, p80=p80).replace(",speed,ms,", f",{metric},{unit},")


def test_unknown_unit_is_quarantined_and_exact_units_are_converted(tmp_path):
    rows = stage_csv(
        tmp_path,
        csv_file(
            _unit_row("1", "ms", "0.4", "0.5", "0.6"),
            _unit_row("2", "us", "400", "500", "600"),
            _unit_row("3", "µs", "400", "500", "600"),
            _unit_row("4", "s", "0.0004", "0.0005", "0.0006"),
            _unit_row("5", "furlongs", "1", "2", "3"),
            _unit_row("6", "GB", "1", "2", "3", metric="memory"),
            _unit_row("7", "MB", "1", "2", "3", metric="memory"),
        ),
    )
    assert bad(rows) == [("record 5", Reason.UNKNOWN_UNIT)]
    by_x = {r["x_value"]: r for r in rows if r["reason"] is None}
    for x in "1234":
        assert by_x[x]["metric_unit"] == "ms"
        assert (by_x[x]["p20"], by_x[x]["p50"], by_x[x]["p80"]) == pytest.approx((0.4, 0.5, 0.6), rel=1e-12)
    # one measurement in ms and in us is one digest: a unit switch between versions is not a x1000 change
    assert len({by_x[x]["measurement_digest"] for x in "1234"}) == 4  # x differs; same values though
    assert by_x["6"]["metric_unit"] == "MB" and by_x["6"]["p50"] == 2048
    assert by_x["7"]["metric_unit"] == "MB" and by_x["7"]["p50"] == 2


def test_same_measurement_in_ms_and_us_has_one_digest(tmp_path):
    ms = stage_csv(tmp_path, csv_file(_unit_row("1", "ms", "0.4", "0.5", "0.6")), "ms.csv")
    us = stage_csv(tmp_path, csv_file(_unit_row("1", "us", "400", "500", "600")), "us.csv")
    assert ms[0]["measurement_digest"] == us[0]["measurement_digest"]
    assert (us[0]["p50"], us[0]["metric_unit"]) == (pytest.approx(0.5, rel=1e-12), "ms")


# -- case 17: far-future timestamps ------------------------------------------------------------------------
@pytest.mark.parametrize("ts", ["9999-12-31 23:59:59", "2999-01-01 00:00:00", "10000-01-01 00:00:00"])
def test_far_future_csv_timestamp_is_quarantined(tmp_path, ts):
    import pyarrow.parquet as pq

    from pipeline.stage.csv_reader import stage_csv_file

    (tmp_path / "f.csv").write_text(csv_file(row("1"), row("2", ts=ts)))
    stage_csv_file(tmp_path / "f.csv", tmp_path / "f.parquet")
    # (year 10000 is past what Python's datetime holds: read the verdict columns only)
    rows = pq.read_table(tmp_path / "f.parquet", columns=["location", "reason", "x_value"]).to_pylist()
    assert good(rows) == ["1"]
    assert bad(rows) == [("record 2", Reason.FUTURE_TIMESTAMP)]


def test_far_future_record_timestamp_is_quarantined(tmp_path):
    future = bundle().replace('"observedAt": "2026-04-07T21:27:38.000Z"', '"observedAt": "9999-04-07T21:27:38.000Z"')
    assert future != bundle()
    rows = stage_ki(tmp_path, "\n".join([bundle(), future]) + "\n", "b.ndjson")
    assert sorted((r["location"], r["reason"]) for r in rows) == [("line 1", None), ("line 2", Reason.FUTURE_TIMESTAMP)]


# -- case 17: a timestamp after the commit that holds the file ----------------------------------------------
# main's commit is at 12:00 UTC, written in +09:00 (committed_at is read as UTC); gh-pages' one hour later.
_MAIN_COMMIT, _PAGES_COMMIT = "2025-01-10T21:00:00+09:00", "2025-01-10T13:00:00+00:00"
_MAIN_ROWS = {  # x -> timestamp (naive, read as UTC)
    "1": "2025-01-10 11:00:00",  # before the commit
    "2": "2025-01-20 12:00:00",  # ten days after it: after_file_commit
    "3": "2025-01-11 06:00:00",  # 18 h after (local time of a machine east of UTC): within the slack
    "4": "2025-01-11 12:00:00",  # exactly one day after: still within
    "5": "2025-01-11 12:00:01",  # one second more: after_file_commit
}
_PAGES_ROWS = {"11": "2025-01-10 12:30:00", "12": "2025-02-01 00:00:00"}


def _csv_of(rows: dict[str, str]) -> str:
    return csv_file(*(row(x, ts=ts) for x, ts in rows.items()))


def _clone_with_late_rows(repo: Path) -> tuple[str, str]:
    """A clone whose main commits one CSV and whose gh-pages commits one snapshot, each holding rows
    timestamped after its commit. Returns their source paths."""
    from tests.fixtures import git_repo as g

    g.init_repo(repo)
    csv_path = "benchmark/data/all_benchmark_data.csv"
    (repo / csv_path).parent.mkdir(parents=True)
    (repo / csv_path).write_text(_csv_of(_MAIN_ROWS))
    main = g.commit(repo, "benchmark data", _MAIN_COMMIT)
    g.git(repo, "checkout", "-q", "--orphan", "gh-pages")
    g.git(repo, "rm", "-rq", "--cached", ".")
    (repo / csv_path).unlink()
    pages_path = f"benchmarks/{main[:7]}/benchmark.csv"
    (repo / pages_path).parent.mkdir(parents=True)
    (repo / pages_path).write_text(_csv_of(_PAGES_ROWS))
    pages = g.commit(repo, "benchmark run", _PAGES_COMMIT)
    g.git(repo, "checkout", "-q", "main")
    return f"git:{main}:{csv_path}", f"git:{pages}:{pages_path}"


def _build(data_raw: Path, warehouse: Path, repo: Path | None = None) -> None:
    import dagster as dg

    from pipeline.defs.ingest import staged_sources
    from pipeline.defs.resources import WarehouseResource
    from pipeline.defs.serve import liger_duckdb
    from pipeline.defs.warehouse import warehouse_tables

    resource = WarehouseResource(data_raw=str(data_raw), warehouse=str(warehouse), git_repo=str(repo or ""))
    result = dg.materialize(
        [staged_sources, warehouse_tables, liger_duckdb],
        resources={"warehouse": resource},
        instance=dg.DagsterInstance.ephemeral(),
    )
    assert result.success


def _sighted(db: Path) -> dict[str, list[str]]:
    """x_value -> the sources that carry it (sightings)."""
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "select f.x_value, list(distinct g.source_path order by g.source_path) from fact_measurement f "
            "join fact_sighting g using (measurement_digest) group by 1 order by 1"
        ).fetchall()
    return dict(rows)


def test_row_after_its_files_commit_is_quarantined_and_the_same_bytes_elsewhere_land(tmp_path):
    main_src, pages_src = _clone_with_late_rows(tmp_path / "repo")
    data_raw, wh = tmp_path / "data_raw", tmp_path / "wh"
    (data_raw / "liger_csv").mkdir(parents=True)
    _build(data_raw, wh, tmp_path / "repo")
    db = wh / "liger.duckdb"
    with duckdb.connect(str(db), read_only=True) as con:
        quarantine = con.execute("select source_file, location, reason, raw from quarantine order by 1, 2").fetchall()
        sources = con.execute("select source_path, rows_read, rows_quarantined from source order by 1").fetchall()
    assert [q[:3] for q in quarantine] == sorted(
        [
            (main_src, "record 2", Reason.AFTER_FILE_COMMIT),
            (main_src, "record 5", Reason.AFTER_FILE_COMMIT),
            (pages_src, "record 2", Reason.AFTER_FILE_COMMIT),
        ]
    )
    # the row as staged, in upstream's column order (the staged file keeps no raw text of a good row)
    raw = {(q[0], q[1]): q[3] for q in quarantine}
    assert (
        raw[main_src, "record 2"]
        == 'ce,liger,forward,speed,ms,V,vocab,2,0.5,0.4,0.6,"{""B"":8}",NVIDIA A100,2025-01-20 12:00:00,0.2.1'
    )
    assert sources == sorted([(main_src, 5, 2), (pages_src, 2, 1)])  # rows read = good + quarantined
    # the neighbours land, from their own commit's file
    assert _sighted(db) == {"1": [main_src], "11": [pages_src], "3": [main_src], "4": [main_src]}

    # The same bytes as main's CSV in data_raw, with no commit: only the wall-clock rule applies there.
    # Staging is by content (the file is not parsed again), so the late rows land from this source.
    staged = sorted((wh / "staging").rglob("*.parquet"))
    (data_raw / "liger_csv" / "copy.csv").write_text(_csv_of(_MAIN_ROWS))
    _build(data_raw, wh, tmp_path / "repo")
    assert sorted((wh / "staging").rglob("*.parquet")) == staged
    copy = "liger_csv/copy.csv"
    assert _sighted(db) == {
        "1": sorted([copy, main_src]),
        "11": [pages_src],
        "2": [copy],
        "3": sorted([copy, main_src]),
        "4": sorted([copy, main_src]),
        "5": [copy],
    }
    with duckdb.connect(str(db), read_only=True) as con:
        assert [q[:3] for q in quarantine] == con.execute(
            "select source_file, location, reason from quarantine order by 1, 2"
        ).fetchall()


def test_a_data_raw_file_whose_snapshots_tsv_names_its_commit_is_judged_by_that_commit(tmp_path):
    """SNAPSHOTS.tsv gives a data_raw CSV the commit it was taken from: the same rule holds."""
    folder = tmp_path / "data_raw" / "liger_csv"
    folder.mkdir(parents=True)
    (folder / "snap.csv").write_text(_csv_of(_MAIN_ROWS))
    (folder / "SNAPSHOTS.tsv").write_text(
        "file\tupstream_path\tupstream_commit\tcommitted_at\n"
        f"snap.csv\tbenchmark/data/all_benchmark_data.csv\t{'a' * 40}\t{_MAIN_COMMIT}\n"
    )
    _build(tmp_path / "data_raw", tmp_path / "wh")
    with duckdb.connect(str(tmp_path / "wh" / "liger.duckdb"), read_only=True) as con:
        assert con.execute("select source_file, location, reason from quarantine order by 2").fetchall() == [
            ("liger_csv/snap.csv", "record 2", Reason.AFTER_FILE_COMMIT),
            ("liger_csv/snap.csv", "record 5", Reason.AFTER_FILE_COMMIT),
        ]
    assert _sighted(tmp_path / "wh" / "liger.duckdb") == {x: ["liger_csv/snap.csv"] for x in ("1", "3", "4")}


def test_no_real_row_is_after_its_files_commit(tmp_path):
    """Every snapshot of the real clone (main's CSV history and gh-pages), each judged by its own commit:
    the rule rejects none of their rows (the latest is minutes before its commit)."""
    from tests.fixtures.shared_data import require_shared_data

    clone = require_shared_data() / "liger_git"
    if not (clone / "objects").is_dir():
        pytest.skip(f"no real Liger-Kernel clone at {clone}")
    (tmp_path / "data_raw").mkdir()  # every source from the clone, none replaced by a data_raw twin
    _build(tmp_path / "data_raw", tmp_path / "wh", clone)
    with duckdb.connect(str(tmp_path / "wh" / "liger.duckdb"), read_only=True) as con:
        judged, late = con.execute(
            "select sum(rows_read) filter (where committed_at is not null), "
            "(select count(*) from quarantine where reason = $r) from source",
            {"r": Reason.AFTER_FILE_COMMIT},
        ).fetchone()
        latest = con.execute(
            "select max(f.observed_at - s.committed_at) from fact_measurement f "
            "join fact_sighting g using (measurement_digest) join source s using (source_path)"
        ).fetchone()[0]
    assert judged > 100_000 and late == 0
    assert latest.total_seconds() < 0  # no row after its file's commit at all, slack unused
