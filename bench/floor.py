"""The floor: a bare parse of the same input files to Parquet, no normalization at all.

Nothing the warehouse does can be faster than simply reading the CSVs / NDJSON once and
writing them back out, so these timings bound the pipeline from below.

Each function returns ``{"case", "rows", "wall_s"}``.  CLI (for a fresh process whose peak
RSS can be measured, see bench/measure.py)::

    python -m bench.floor duckdb_csv|duckdb_csv_plain|polars_csv|duckdb_ndjson|polars_ndjson DATA_DIR OUT_DIR
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import duckdb
import polars as pl

# x_value mixes numbers and model names; pin it so per-file sniffing can't disagree.
CSV_TYPES = {"x_value": "VARCHAR", "extra_benchmark_config_str": "VARCHAR", "x_label": "VARCHAR"}


def _glob(data_dir: str | Path, sub: str, pattern: str) -> str:
    return str(Path(data_dir) / sub / pattern)


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _connect(threads: int | None) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("SET enable_progress_bar=false")
    if threads:
        con.execute(f"SET threads={int(threads)}")
    return con


def duckdb_csv(
    data_dir: str | Path, out_dir: str | Path, threads: int | None = None, union_by_name: bool = True
) -> dict:
    """DuckDB: read_csv(all CSVs, union_by_name) -> COPY TO one Parquet file.

    union_by_name sniffs every file in full before reading (about 3-4x the plain read on
    40 files); ``union_by_name=False`` (case ``floor_duckdb_csv_plain``) assumes one header.
    """
    case = "floor_duckdb_csv" if union_by_name else "floor_duckdb_csv_plain"
    out = Path(out_dir) / f"{case}.parquet"
    out.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    con = _connect(threads)
    types = "{" + ", ".join(f"{_sql_str(k)}: {_sql_str(v)}" for k, v in CSV_TYPES.items()) + "}"
    src = (
        f"read_csv({_sql_str(_glob(data_dir, 'liger_csv', '*.csv'))}, "
        f"union_by_name={str(union_by_name).lower()}, header=true, types={types})"
    )
    con.execute(f"COPY (SELECT * FROM {src}) TO {_sql_str(str(out))} (FORMAT parquet)")
    rows = con.execute(f"SELECT count(*) FROM read_parquet({_sql_str(str(out))})").fetchone()[0]
    wall = time.perf_counter() - t0
    con.close()
    return {"case": case, "rows": int(rows), "wall_s": wall}


def duckdb_csv_plain(data_dir: str | Path, out_dir: str | Path, threads: int | None = None) -> dict:
    return duckdb_csv(data_dir, out_dir, threads, union_by_name=False)


def polars_csv(data_dir: str | Path, out_dir: str | Path) -> dict:
    """Polars: scan_csv(all CSVs) -> sink_parquet."""
    out = Path(out_dir) / "floor_polars_csv.parquet"
    out.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    lf = pl.scan_csv(_glob(data_dir, "liger_csv", "*.csv"), schema_overrides=dict.fromkeys(CSV_TYPES, pl.String))
    lf.sink_parquet(out)
    rows = pl.scan_parquet(out).select(pl.len()).collect().item()
    return {"case": "floor_polars_csv", "rows": int(rows), "wall_s": time.perf_counter() - t0}


def duckdb_ndjson(data_dir: str | Path, out_dir: str | Path, threads: int | None = None) -> dict:
    """DuckDB: read_ndjson(all bundles) -> COPY TO Parquet (nested structs kept)."""
    out = Path(out_dir) / "floor_duckdb_ndjson.parquet"
    out.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    con = _connect(threads)
    src = f"read_ndjson({_sql_str(_glob(data_dir, 'kernelindex', '*.ndjson'))}, union_by_name=true)"
    con.execute(f"COPY (SELECT * FROM {src}) TO {_sql_str(str(out))} (FORMAT parquet)")
    rows = con.execute(f"SELECT count(*) FROM read_parquet({_sql_str(str(out))})").fetchone()[0]
    wall = time.perf_counter() - t0
    con.close()
    return {"case": "floor_duckdb_ndjson", "rows": int(rows), "wall_s": wall}


def polars_ndjson(data_dir: str | Path, out_dir: str | Path) -> dict:
    """Polars: scan_ndjson(all bundles) -> sink_parquet."""
    out = Path(out_dir) / "floor_polars_ndjson.parquet"
    out.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    src = _glob(data_dir, "kernelindex", "*.ndjson")
    # Parquet cannot store an empty struct (environment.spec.software == {}): keep such
    # top-level columns as JSON text instead.
    schema = pl.scan_ndjson(src).collect_schema()
    overrides = {name: pl.String for name, dtype in schema.items() if _has_empty_struct(dtype)}
    pl.scan_ndjson(src, schema_overrides=overrides or None).sink_parquet(out)
    rows = pl.scan_parquet(out).select(pl.len()).collect().item()
    return {"case": "floor_polars_ndjson", "rows": int(rows), "wall_s": time.perf_counter() - t0}


def _has_empty_struct(dtype) -> bool:
    if isinstance(dtype, pl.Struct):
        return not dtype.fields or any(_has_empty_struct(f.dtype) for f in dtype.fields)
    if isinstance(dtype, (pl.List, pl.Array)):
        return _has_empty_struct(dtype.inner)
    return False


CASES = {
    "duckdb_csv": duckdb_csv,
    "duckdb_csv_plain": duckdb_csv_plain,
    "polars_csv": polars_csv,
    "duckdb_ndjson": duckdb_ndjson,
    "polars_ndjson": polars_ndjson,
}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="bare parse of the inputs to Parquet")
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("data_dir")
    ap.add_argument("out_dir")
    a = ap.parse_args(argv)
    print(json.dumps(CASES[a.case](a.data_dir, a.out_dir)))


if __name__ == "__main__":
    main()
