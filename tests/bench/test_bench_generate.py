"""bench/: the synthetic data generator, the straightforward baseline, the floor, the measure helpers."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import duckdb
import polars as pl
import pytest

from bench import baseline, floor, generate, measure

ROWS, BUNDLES, SEED = 4000, 600, 7
EXAMPLE = Path(__file__).resolve().parents[2] / "data_raw" / "kernelindex" / "a8e1599773300c7d.json"


def rule(o: dict) -> str:
    text = json.dumps(
        {"apiVersion": o["apiVersion"], "kind": o["kind"], "spec": o["spec"]},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gen")
    summary = generate.generate(out, ROWS, BUNDLES, seed=SEED, snapshots=5)
    assert summary["csv_files"] == 5 and summary["bundles"] == BUNDLES
    return out


def _files(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def csv_frame(d: Path) -> pl.DataFrame:
    return pl.read_csv(d / "liger_csv" / "*.csv", infer_schema=False)


def bundle_frame(d: Path) -> pl.DataFrame:
    recs = []
    for p in sorted((d / "kernelindex").glob("*.ndjson")):
        for line in p.read_text(encoding="utf-8").splitlines():
            b = json.loads(line)
            spec = b["run"]["spec"]
            kernel, mode, provider, gpu_slug, _wl, ts = spec["sourceNative"]["externalId"].split("/")
            m = spec["sourceNative"]["metrics"]
            recs.append(
                {
                    "kernel_name": kernel,
                    "kernel_operation_mode": mode,
                    "kernel_provider": provider,
                    "gpu_slug": gpu_slug,
                    "ts": ts,
                    "observedAt": spec["observedAt"],
                    "p20": m["ms_20"],
                    "p50": m["ms_50"],
                    "p80": m["ms_80"],
                    "liger_version": b["run"]["metadata"]["labels"]["liger_version"],
                }
            )
    return pl.DataFrame(recs)


def test_deterministic_for_a_seed(data, tmp_path):
    again = tmp_path / "again"
    generate.generate(again, ROWS, BUNDLES, seed=SEED, snapshots=5)
    assert _files(again) == _files(data)
    other = tmp_path / "other"
    generate.generate(other, ROWS, BUNDLES, seed=SEED + 1, snapshots=5)
    assert _files(other) != _files(data)


def test_csv_shape_and_quantiles(data):
    df = csv_frame(data)
    assert df.columns == generate.CSV_COLUMNS
    assert df.height == ROWS
    # rows repeated across snapshot files, like the cumulative upstream history; never conflicting
    distinct = df.unique(generate.IDENTITY_KEY)
    assert df.height > distinct.height > ROWS // 2
    assert df.unique().height == distinct.height
    y = df.with_columns(pl.col("^y_value_.*$").cast(pl.Float64))
    assert y.filter(
        ~((pl.col("y_value_20") <= pl.col("y_value_50")) & (pl.col("y_value_50") <= pl.col("y_value_80")))
    ).is_empty()
    assert y.filter(pl.col("y_value_50") <= 0).is_empty()
    mem = y.filter(pl.col("metric_name") == "memory")
    assert not mem.is_empty() and (mem["y_value_20"] == mem["y_value_80"]).all()
    speed = y.filter(pl.col("metric_name") == "speed")
    assert (speed["y_value_20"] < speed["y_value_80"]).mean() > 0.9
    # variety: liger-family and reference providers, several GPUs/versions, numeric and text x values
    providers = set(df["kernel_provider"])
    assert {"liger", "torch", "huggingface"} <= providers and any(p.startswith("liger_") for p in providers)
    assert df["gpu_name"].n_unique() >= 4 and df["liger_version"].n_unique() >= 8
    assert df["x_value"].str.contains(r"^[0-9]+$").all() is False
    assert df["timestamp"].str.contains(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$").all()


def test_bundle_digests_follow_the_rule(data):
    n = 0
    for p in (data / "kernelindex").glob("*.ndjson"):
        for line in p.read_text(encoding="utf-8").splitlines():
            b = json.loads(line)
            assert rule(b["protocol"]) == b["run"]["spec"]["protocolDigest"]
            assert rule(b["environment"]) == b["run"]["spec"]["environmentDigest"]
            for k in ("workloadDigest", "implementationDigest"):
                assert b["run"]["spec"][k].startswith("sha256:") and len(b["run"]["spec"][k]) == 71
            n += 1
    assert n == BUNDLES


@pytest.mark.skipif(not EXAMPLE.exists(), reason="real kernelindex example not shipped")
def test_dimension_objects_match_the_real_record():
    real = json.loads(EXAMPLE.read_text())
    assert generate.protocol_object("backward") == real["protocol"]
    h100 = next(g for g in generate.GPUS if g[0] == "NVIDIA H100 80GB HBM3")
    assert generate.environment_object(h100) == real["environment"]
    assert generate.workload_slug("H", "1024", '{"M": 2048, "dtype": "torch.float32", "eps": 1e-06}') == (
        "hidden1024-rows2048-fp32",
        "hidden1024-rows2048",
    )


def test_half_the_bundles_fold_onto_csv_rows(data):
    rows = (
        csv_frame(data)
        .filter(pl.col("metric_name") == "speed")
        .unique(generate.IDENTITY_KEY)
        .select(
            "kernel_name",
            "kernel_operation_mode",
            "kernel_provider",
            "liger_version",
            pl.col("gpu_name").map_elements(generate._slug, return_dtype=pl.String).alias("gpu_slug"),
            pl.col("timestamp").str.replace_all(r"[ :]", "-").alias("ts"),
            pl.col("y_value_20").cast(pl.Float64).alias("p20"),
            pl.col("y_value_50").cast(pl.Float64).alias("p50"),
            pl.col("y_value_80").cast(pl.Float64).alias("p80"),
        )
    )
    b = bundle_frame(data)
    assert b.height == BUNDLES
    on = ["kernel_name", "kernel_operation_mode", "kernel_provider", "gpu_slug", "ts", "p20", "p50", "p80"]
    folded = b.join(rows, on=on, how="inner")
    assert folded.height == BUNDLES // 2
    assert (folded["liger_version"] == folded["liger_version_right"]).all()
    # the standalone half shares no (kernel, pass, provider, gpu, timestamp) with any CSV row
    alone = b.join(rows, on=on, how="anti")
    assert alone.join(rows, on=on[:5], how="inner").is_empty()
    assert b["observedAt"].str.contains(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$").all()


def test_baseline_counts_match_duckdb(data, tmp_path):
    res = baseline.run_baseline(data, tmp_path / "out")
    key = ", ".join(generate.IDENTITY_KEY)
    glob = str(data / "liger_csv" / "*.csv")
    n = duckdb.sql(
        f"SELECT count(*) FROM (SELECT DISTINCT {key} FROM read_csv('{glob}', all_varchar=true))"
    ).fetchall()[0][0]
    assert res["csv_rows"] == ROWS and res["csv_facts"] == n
    assert res["bundles"] == BUNDLES and res["folded"] == BUNDLES // 2 and res["standalone"] == BUNDLES - BUNDLES // 2
    assert res["facts"] == n + res["standalone"]
    assert res["quarantined"] == 0 and res["bad_digests"] == 0 and res["conflicts"] == 0
    assert pl.read_parquet(tmp_path / "out" / "facts.parquet").height == res["facts"]


def test_extra_snapshot_is_new_rows(data, tmp_path):
    d = tmp_path / "d"
    generate.generate(d, 2000, 0, seed=3, snapshots=3)
    before = csv_frame(d).unique(generate.IDENTITY_KEY)
    path = generate.write_extra_snapshot(d, rows=250, seed=3)
    extra = pl.read_csv(path, infer_schema=False)
    assert extra.height == 250 and extra.unique(generate.IDENTITY_KEY).height == 250
    assert extra.join(before, on=generate.IDENTITY_KEY, how="inner").is_empty()
    assert extra["timestamp"].min() > before["timestamp"].max()
    assert sorted(p.name for p in (d / "liger_csv").iterdir())[-1] == path.name


def test_floor_and_measure(data, tmp_path):
    r = floor.polars_csv(data, tmp_path)
    assert r["rows"] == ROWS
    r = floor.duckdb_ndjson(data, tmp_path)
    assert r["rows"] == BUNDLES
    m = measure.measure_subprocess([sys.executable, "-c", "x = bytearray(150 * 2**20); print('ok')"])
    assert m["stdout"].strip() == "ok" and m["peak_rss_mb"] >= 150 and m["wall_s"] > 0
    c = measure.measure_callable(floor.polars_csv, data, tmp_path / "c")
    assert c["result"]["rows"] == ROWS and c["peak_rss_mb"] > 0 and c["total_wall_s"] >= c["wall_s"]
    rows = [measure.result_row("floor", ROWS, ROWS, 1.0, 10.0), measure.result_row("pipeline", ROWS, ROWS, 2.0, 20.0)]
    md = measure.write_table(rows, tmp_path / "t.md", tmp_path / "t.csv", reference_case="floor")
    assert md.splitlines()[0] == "| " + " | ".join(measure.COLUMNS) + " |"
    back = pl.read_csv(tmp_path / "t.csv")
    assert back.columns == measure.COLUMNS and back["ratio"].to_list() == [1.0, 2.0]
