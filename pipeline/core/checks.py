"""Data tests over one generation: each returns the offending rows; a check passes with zero rows."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from .digests import measurement_digest_sql, object_digest
from .settings import SQL_DIR

DIMENSIONS = ("environment", "protocol", "workload", "implementation")


def connect(gen: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    for table in ("fact_measurement", "source", "quarantine", *(f"dim_{d}" for d in DIMENSIONS)):
        con.read_parquet(str(gen / f"{table}.parquet")).create_view(table)
    return con


def sql_check(con: duckdb.DuckDBPyConnection, name: str) -> list[tuple]:
    return con.execute((SQL_DIR / "checks" / f"{name}.sql").read_text()).fetchall()


def digest_integrity(con: duckdb.DuckDBPyConnection, sample_limit: int = 20) -> list[tuple]:
    """Recompute every measurement digest (vectorized) and every stored dimension object's digest."""
    bad = con.execute(
        f"""
        with facts as (
            select * replace (case when origin = 'kernelindex' then 'workload:' || workload_digest else extra_config end as extra_config),
                   strftime(observed_at, '%Y-%m-%d %H:%M:%S') as observed_at_text
            from fact_measurement
        )
        select 'measurement', measurement_digest, {measurement_digest_sql()} as recomputed
        from facts where measurement_digest <> {measurement_digest_sql()}
        limit {int(sample_limit)}
        """
    ).fetchall()
    for dim in DIMENSIONS:
        rows = con.execute(f"select {dim}_digest, object_json from dim_{dim} where object_json is not null").fetchall()
        for digest, text in rows:  # one row per distinct object: small by construction
            actual = object_digest(json.loads(text))
            if actual != digest:
                bad.append((dim, digest, actual))
    return bad


def quarantine_counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    return dict(con.execute("select reason, count(*) from quarantine group by 1 order by 1").fetchall())
