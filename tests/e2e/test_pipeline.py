"""End-to-end on the real shipped history, through real Dagster runs."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
import duckdb

from tests.conftest import DATA_RAW, PROJECT, SAMPLE_RECORD, copy_data_raw, materialize

SAMPLE_ROW = dict(
    kernel_name="fused_add_rms_norm",
    kernel_provider="liger_fused_add_rms_norm",
    kernel_operation_mode="backward",
    gpu_name="NVIDIA H100 80GB HBM3",
    x_value="1024",
    observed_at="2026-04-07 21:27:38",
    metric_name="speed",
)


def q(wh: Path, sql: str, params=None):
    with duckdb.connect(str(wh / "liger.duckdb"), read_only=True) as con:
        return con.execute(sql, params or {}).fetchall()


def sample_fact(wh: Path) -> dict:
    with duckdb.connect(str(wh / "liger.duckdb"), read_only=True) as con:
        cur = con.execute(
            """select * from measurements where kernel_name = $kernel_name and kernel_provider = $kernel_provider
               and kernel_operation_mode = $kernel_operation_mode and gpu_name = $gpu_name and x_value = $x_value
               and observed_at = $observed_at::timestamp and metric_name = $metric_name""",
            SAMPLE_ROW,
        )
        cols = [d[0] for d in cur.description]
        rows = cur.fetchall()
    assert len(rows) == 1
    return dict(zip(cols, rows[0], strict=False))


# -- an independent count: plain Python over the shipped CSVs, by the identity ARCHITECTURE.md documents ----
IDENTITY_COLUMNS = (
    "kernel_name",
    "kernel_provider",
    "kernel_operation_mode",
    "metric_name",
    "x_name",
    "x_value",
    "gpu_name",
    "liger_version",
)


def identity(row: dict[str, str]) -> tuple[str, ...]:
    """Identity fields trimmed, the config as canonical JSON, the timestamp in UTC."""
    ts = datetime.fromisoformat(row["timestamp"].strip())
    if ts.tzinfo is not None:
        ts = ts.astimezone(UTC).replace(tzinfo=None)
    config = json.dumps(
        json.loads(row["extra_benchmark_config_str"]), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return (*(row[c].strip() for c in IDENTITY_COLUMNS), config, f"{ts:%Y-%m-%d %H:%M:%S}")


def identities_by_file() -> dict[str, list[tuple[str, ...]]]:
    out = {}
    for f in sorted((DATA_RAW / "liger_csv").glob("*.csv")):
        with f.open(newline="", encoding="utf-8-sig") as fh:
            out[f.name] = [identity(r) for r in csv.DictReader(fh)]
    return out


def newest_snapshot_per_upstream_path() -> list[str]:
    with (DATA_RAW / "liger_csv" / "SNAPSHOTS.tsv").open(newline="") as fh:
        snaps = list(csv.DictReader(fh, delimiter="\t"))
    newest: dict[str, dict[str, str]] = {}
    for s in snaps:
        key = (datetime.fromisoformat(s["committed_at"]), s["file"])
        cur = newest.get(s["upstream_path"])
        if cur is None or key > (datetime.fromisoformat(cur["committed_at"]), cur["file"]):
            newest[s["upstream_path"]] = s
    return [s["file"] for s in newest.values()]


def test_counts_agree_with_an_independent_count_over_the_shipped_csvs(upstream_warehouse):
    by_file = identities_by_file()
    distinct = {i for ids in by_file.values() for i in ids}
    records = list((DATA_RAW / "kernelindex").iterdir())
    # The one shipped record folds into a CSV row, so it adds a source and a row read but no fact.
    assert len(distinct) == 4421
    assert q(upstream_warehouse, "select count(*) from measurements") == [(len(distinct),)]
    assert q(upstream_warehouse, "select count(*), sum(rows_read) from source") == [
        (len(by_file) + len(records), sum(map(len, by_file.values())) + len(records))
    ]
    in_head = {i for f in newest_snapshot_per_upstream_path() for i in by_file[f]}
    assert q(upstream_warehouse, "select count(*) from measurements where in_upstream_head") == [(len(in_head),)]


def test_upstream_history_gives_4421_facts_and_no_quarantine(upstream_warehouse):
    assert q(upstream_warehouse, "select count(*) from measurements") == [(4421,)]
    assert q(upstream_warehouse, "select count(distinct measurement_digest) from measurements") == [(4421,)]
    assert q(upstream_warehouse, "select count(*) from quarantine") == [(0,)]
    assert q(upstream_warehouse, "select count(*), sum(rows_read) from source") == [(41, 48174)]


def _distinct_measurements(csv_paths) -> int:
    """Distinct measurements by the documented identity, counted in plain Python (independent of the pipeline)."""
    keys = set()
    for path in csv_paths:
        with path.open(newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                config = json.dumps(json.loads(row["extra_benchmark_config_str"]), sort_keys=True)
                keys.add(
                    (
                        row["kernel_name"],
                        row["kernel_provider"],
                        row["kernel_operation_mode"],
                        row["metric_name"],
                        row["x_name"],
                        row["x_value"],
                        config,
                        row["gpu_name"],
                        row["timestamp"],
                        row["liger_version"],
                    )
                )
    return len(keys)


def test_h200_runs_and_gh_pages_snapshots_add_their_distinct_rows_to_the_upstream_facts(shipped_warehouse):
    h200 = sorted((PROJECT / "data_raw" / "h200_runs").glob("*.csv"))
    pages = sorted((PROJECT / "data_raw" / "liger_gh_pages" / "benchmarks").glob("*/benchmark.csv"))
    assert len(h200) == 3 and len(pages) == 28
    assert _distinct_measurements(h200) == 372
    expected = 4421 + 372 + _distinct_measurements(pages)
    assert q(shipped_warehouse, "select count(*) from measurements") == [(expected,)]
    assert q(
        shipped_warehouse,
        "select count(*) from measurements m join source s on s.snapshot = m.snapshot where s.source_path like "
        "'h200_runs/%'",
    ) == [(0,)]
    assert q(shipped_warehouse, "select count(*) from measurements where commit_status <> 'unknown'") == [
        (_distinct_measurements(pages),)
    ]
    assert q(shipped_warehouse, "select count(*) from quarantine") == [(0,)]
    # no provenance file beside them: sources without an upstream commit, nothing else breaks
    assert q(
        shipped_warehouse, "select count(*), count(upstream_commit) from source where source_path like 'h200_runs/%'"
    ) == [(3, 0)]


def test_sample_record_folds_into_its_csv_row(shipped_warehouse):
    record = json.loads(SAMPLE_RECORD.read_text())["run"]["spec"]
    fact = sample_fact(shipped_warehouse)
    assert (fact["origin"], fact["fold_rule"], fact["identity"]) == ("csv+kernelindex", "run digest", "kernelindex")
    assert fact["external_id"] == record["sourceNative"]["externalId"]
    for dim in ("protocol", "environment", "workload", "implementation"):
        assert fact[f"{dim}_digest"] == record[f"{dim}Digest"]
    assert fact["p50"] == record["sourceNative"]["metrics"]["ms_50"]
    assert fact["liger_version"] == "0.7.0"
    assert q(shipped_warehouse, "select count(*) from measurements where origin <> 'csv'") == [(1,)]


def test_csv_rows_learn_protocol_and_environment_from_records(shipped_warehouse):
    record = json.loads(SAMPLE_RECORD.read_text())["run"]["spec"]
    rows = q(
        shipped_warehouse,
        """
        select count(*), count(distinct protocol_digest), any_value(protocol_digest), any_value(environment_digest)
        from measurements where gpu_name = 'NVIDIA H100 80GB HBM3' and kernel_operation_mode = 'backward'
          and metric_unit = 'ms'""",
    )
    n, distinct, protocol, environment = rows[0]
    assert n > 100 and distinct == 1
    assert protocol == record["protocolDigest"] and environment == record["environmentDigest"]
    # Other GPUs keep the pipeline's own objects.
    other = q(
        shipped_warehouse,
        "select count(*) from measurements where gpu_name <> 'NVIDIA H100 80GB HBM3' and environment_digest = $d",
        {"d": record["environmentDigest"]},
    )
    assert other == [(0,)]


def test_snapshot_dedup_one_fact_per_measurement_with_source_count(shipped_warehouse):
    # The first 0.2.1 rows appear in every main-CSV snapshot since 2024-09-03: 35 sources.
    rows = q(
        shipped_warehouse,
        """
        select source_count, first_seen_commit, in_upstream_head from measurements
        where kernel_name = 'cross_entropy' and kernel_provider = 'liger' and kernel_operation_mode = 'forward'
          and metric_name = 'speed' and x_value = '4096' and liger_version = '0.2.1'
          and gpu_name = 'NVIDIA A100-SXM4-80GB'""",
    )
    assert len(rows) == 1
    source_count, first_commit, _ = rows[0]
    carrying = [
        f
        for f, ids in identities_by_file().items()
        if any(
            i[:4] == ("cross_entropy", "liger", "forward", "speed")
            and i[5:8] == ("4096", "NVIDIA A100-SXM4-80GB", "0.2.1")
            for i in ids
        )
    ]
    assert source_count == len(carrying) == 35
    assert first_commit.startswith("b5672a153b") and min(carrying).startswith("2024-09-03_b5672a153b")


def test_sample_first_seen_commit(shipped_warehouse):
    fact = sample_fact(shipped_warehouse)
    assert fact["first_seen_commit"].startswith("b7025a7027")
    assert str(fact["first_seen_at"].date()) == "2026-04-08"
    assert fact["in_upstream_head"] is True


def test_head_flags(upstream_warehouse):
    assert q(upstream_warehouse, "select count(*) from measurements where in_upstream_head") == [(3897,)]


def test_views_open_read_only_from_another_directory(upstream_warehouse, tmp_path):
    code = (
        "import duckdb, sys; con = duckdb.connect(sys.argv[1], read_only=True);"
        "print(con.execute('select count(*) from measurements').fetchone()[0]);"
        "print(con.execute('select count(*) from quarantine').fetchone()[0])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(upstream_warehouse / "liger.duckdb")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert out == ["4421", "0"]


def test_idempotent_rerun(tmp_path):
    data = copy_data_raw(tmp_path / "data_raw", csv_glob="2024-*.csv")
    wh = tmp_path / "warehouse"
    assert materialize(data, wh).success
    first = q(
        wh, "select measurement_digest, source_count, environment_digest, protocol_digest from measurements order by 1"
    )
    sources = q(wh, "select source_path, content_sha256, rows_read from source order by 1")
    assert materialize(data, wh).success
    assert (
        q(
            wh,
            "select measurement_digest, source_count, environment_digest, protocol_digest from measurements order by 1",
        )
        == first
    )
    assert q(wh, "select source_path, content_sha256, rows_read from source order by 1") == sources
    # A copy of an already-ingested file under another name is a new source but adds no fact.
    f = next((data / "liger_csv").glob("2024-11-22*.csv"))
    (data / "liger_csv" / "copy_of_snapshot.csv").write_bytes(f.read_bytes())
    assert materialize(data, wh).success
    assert q(wh, "select count(*) from measurements") == [(len(first),)]
    assert q(wh, "select count(*) from source") == [(len(sources) + 1,)]


def test_reordered_and_extra_columns_give_the_same_facts(tmp_path):
    import polars as pl

    src = PROJECT / "data_raw" / "liger_csv" / "2024-11-22_90fb5e4a3c_all_benchmark_data.csv"
    plain = copy_data_raw(tmp_path / "plain", csv_glob=src.name, with_record=False)
    shuffled = tmp_path / "shuffled"
    (shuffled / "liger_csv").mkdir(parents=True)
    df = pl.read_csv(src, infer_schema=False)
    cols = list(reversed(df.columns))
    df.select(cols).with_columns(pl.lit("new upstream column").alias("notes")).write_csv(
        shuffled / "liger_csv" / src.name
    )
    assert materialize(plain, tmp_path / "wh1").success
    assert materialize(shuffled, tmp_path / "wh2").success
    sql = "select measurement_digest, p20, p50, p80 from measurements order by 1"
    a, b = q(tmp_path / "wh1", sql), q(tmp_path / "wh2", sql)
    assert a == b and len(a) > 600
    # KernelIndex reads by name too, but its row schema is strict: an unknown column rejects every row
    assert q(tmp_path / "wh1", "select count(*) > 0 from measurements where identity = 'kernelindex'") == [(True,)]
    assert q(tmp_path / "wh2", "select distinct identity, identity_reason from measurements") == [
        ("derived", "KernelIndex rejects the row (unrecognized keys ['notes'])")
    ]


def test_record_without_csv_counterpart_is_its_own_fact(tmp_path):
    data = tmp_path / "data_raw"
    (data / "kernelindex").mkdir(parents=True)
    bundle = json.loads(SAMPLE_RECORD.read_text())
    bundle["run"]["spec"]["observedAt"] = "2026-05-01T10:00:00.000Z"
    bundle["run"]["spec"]["sourceNative"]["metrics"] = {"ms_20": 0.2, "ms_50": 0.21, "ms_80": 0.25}
    (data / "kernelindex" / "batch.ndjson").write_text(json.dumps(bundle) + "\n")
    wh = tmp_path / "warehouse"
    assert materialize(data, wh).success
    rows = q(
        wh,
        """select kernel_name, kernel_operation_mode, kernel_provider, gpu_name, liger_version, x_value,
                    extra_config, p50, origin, protocol_digest from measurements""",
    )
    assert rows == [
        (
            "fused_add_rms_norm",
            "backward",
            "liger_fused_add_rms_norm",
            "NVIDIA H100 80GB HBM3",
            "0.7.0",
            None,
            None,
            0.21,
            "kernelindex",
            bundle["run"]["spec"]["protocolDigest"],
        )
    ]


def test_digest_mismatch_quarantines_the_bundle_and_keeps_the_rest(tmp_path):
    data = tmp_path / "data_raw"
    (data / "kernelindex").mkdir(parents=True)
    good = json.loads(SAMPLE_RECORD.read_text())
    bad = json.loads(SAMPLE_RECORD.read_text())
    bad["protocol"]["spec"]["measurement"]["timer"] = "wall_clock"
    bad["run"]["spec"]["observedAt"] = "2026-05-02T10:00:00Z"
    (data / "kernelindex" / "mixed.ndjson").write_text(json.dumps(good) + "\n" + json.dumps(bad) + '\n{"run": \n')
    wh = tmp_path / "warehouse"
    assert materialize(data, wh).success
    assert q(wh, "select count(*) from measurements") == [(1,)]
    assert q(wh, "select location, reason from quarantine order by 1") == [
        ("line 2", "digest_mismatch"),
        ("line 3", "truncated_json"),
    ]


def test_env_vars_redirect_paths(tmp_path, monkeypatch):
    """The resource falls back to the environment, read when asked (not at import), and its own fields win."""
    from pipeline import config as settings
    from pipeline.defs.resources import WarehouseResource

    for name in ("LIGER_WAREHOUSE", "LIGER_DATA_RAW", "LIGER_GIT_REPO", "LIGER_READER_MEMORY"):
        monkeypatch.delenv(name, raising=False)
    default = WarehouseResource()
    assert (default.data_raw_path(), default.warehouse_path(), default.git_repo_path()) == (
        PROJECT / "data_raw",
        PROJECT / "warehouse",
        None,
    )
    assert settings.reader_memory() == "1500MB"

    monkeypatch.setenv("LIGER_WAREHOUSE", str(tmp_path / "w"))
    monkeypatch.setenv("LIGER_DATA_RAW", str(tmp_path / "d"))
    monkeypatch.setenv("LIGER_GIT_REPO", str(tmp_path / "clone"))
    monkeypatch.setenv("LIGER_READER_MEMORY", "123MB")
    from_env = WarehouseResource()
    assert (from_env.data_raw_path(), from_env.warehouse_path(), from_env.git_repo_path()) == (
        (tmp_path / "d").resolve(),
        (tmp_path / "w").resolve(),
        tmp_path / "clone",
    )
    assert settings.reader_memory() == "123MB"
    explicit = WarehouseResource(data_raw=str(tmp_path / "x"), warehouse=str(tmp_path / "y"))
    assert (explicit.data_raw_path(), explicit.warehouse_path()) == (
        (tmp_path / "x").resolve(),
        (tmp_path / "y").resolve(),
    )


def test_records_of_one_sweep_in_the_same_second_stay_distinct(tmp_path):
    data = tmp_path / "data_raw"
    (data / "kernelindex").mkdir(parents=True)
    lines = []
    for i, wl in enumerate(("a", "b")):
        bundle = json.loads(SAMPLE_RECORD.read_text())
        bundle["run"]["spec"]["observedAt"] = "2026-05-01T10:00:00Z"
        bundle["run"]["spec"]["workloadDigest"] = "sha256:" + wl * 64
        bundle["run"]["spec"]["sourceNative"]["metrics"] = {"ms_20": 0.2 + i, "ms_50": 0.21 + i, "ms_80": 0.25 + i}
        lines.append(json.dumps(bundle))
    (data / "kernelindex" / "sweep.jsonl").write_text("\n".join(lines) + "\n")
    wh = tmp_path / "warehouse"
    result = materialize(data, wh)
    assert result.success
    assert q(wh, "select count(*), count(distinct workload_digest) from measurements") == [(2, 2)]
    checks = {e.asset_check_key.name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks["fact_key_unique"] and checks["digest_integrity"]


def test_every_asset_check_on_the_shipped_warehouse_says_what_the_data_says(shipped_run):
    """`success` stays true when a non-blocking check fails, so each evaluation is asserted: every
    ERROR check passes; each WARN check passes exactly when an independent query says it should."""
    from tests.e2e.test_definitions import CHECKS

    wh, result = shipped_run
    evaluations = {e.asset_check_key.name: e for e in result.get_asset_check_evaluations()}
    assert set(evaluations) == CHECKS
    errors = {
        n: e.description for n, e in evaluations.items() if e.severity == dg.AssetCheckSeverity.ERROR and not e.passed
    }
    assert not errors, errors
    newest = "(select liger_version from liger_versions where is_newest)"
    expected_warn = {
        "quarantine_is_empty": q(wh, "select count(*) = 0 from quarantine")[0][0],
        "newest_version_has_no_regressions": q(
            wh, f"select count(*) = 0 from sweep_regressions where verdict = 'regression' and to_version = {newest}"
        )[0][0],
        "newest_version_was_compared": q(
            wh, f"select count(compared_with) > 0 from version_coverage where liger_version = {newest}"
        )[0][0],
        "sources_are_fresh": q(wh, "select count(*) = 0 from source_freshness where overdue")[0][0],
    }
    assert {n: evaluations[n].passed for n in expected_warn} == expected_warn
    assert all(evaluations[n].severity == dg.AssetCheckSeverity.WARN for n in expected_warn)
    # on the shipped data the H200 group_norm/backward excursion at 0.8.0 is taken back at 0.8.5:
    # transient, not a regression of 0.8.5
    verdicts = q(
        wh,
        "select distinct verdict from sweep_regressions where kernel_name = 'group_norm' "
        "and kernel_operation_mode = 'backward' and metric_name = 'speed' and gpu_name = 'NVIDIA H200' "
        "and to_version = '0.8.5'",
    )
    assert verdicts == [("transient",)]


def test_a_selection_of_warehouse_checks_runs_those_alone(tmp_path):
    """The warehouse checks share one step and one connection; selecting one of them in the UI (or in a
    job) evaluates that one only, over the published warehouse."""
    data = copy_data_raw(tmp_path / "data_raw", csv_glob="*.csv", with_record=False)
    wh = tmp_path / "warehouse"
    assert materialize(data, wh).success
    one = dg.AssetCheckKey(dg.AssetKey("fact_measurement"), "quantile_order")
    result = materialize(data, wh, selection=dg.AssetSelection.checks(one))
    evaluations = result.get_asset_check_evaluations()
    assert [e.asset_check_key for e in evaluations] == [one]
    assert evaluations[0].passed
    assert result.get_asset_materialization_events() == []
