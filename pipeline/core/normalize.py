"""Staged rows + records -> fact and dimension Parquet tables (one DuckDB pass, streaming from Parquet).

Decisions (documented in ARCHITECTURE.md):
- A measurement seen in several sources is one fact; its values come from the newest source
  (by commit date, then path), and source_count says how many sources carried it.
- A kernelindex record folds into a CSV fact when kernel, pass, provider, GPU, timestamp and the
  three quantiles agree (relative tolerance 1e-9); the fact then carries the record's four digests.
- CSV rows learn protocol (per timed pass and GPU, ms rows only) and environment (per GPU) from the
  records: the newest record wins, ties broken by the smallest digest.
- Anything not learned uses the pipeline's own derived objects (dimensions.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa

from . import dimensions
from .digests import measurement_digest_sql
from .settings import BUILD_MEMORY, duckdb_config
from .sources import SourceFile

QUANTILE_TOLERANCE = 1e-9
SLUG_SQL = "trim(regexp_replace(lower({c}), '[^a-z0-9]+', '-', 'g'), '-')"

FACT_COLUMNS = (
    "measurement_digest", "kernel_name", "kernel_provider", "kernel_operation_mode", "metric_name",
    "metric_unit", "gpu_name", "x_name", "x_label", "x_value", "extra_config", "liger_version",
    "observed_at", "p20", "p50", "p80", "environment_digest", "protocol_digest", "workload_digest",
    "implementation_digest", "source_count", "origin", "first_seen_commit", "first_seen_at",
    "last_seen_commit", "last_seen_at", "in_upstream_head",
)


@dataclass
class BuildSummary:
    facts: int = 0
    sources: int = 0
    folded_records: int = 0
    record_only_facts: int = 0
    rows_read: int = 0
    quarantined_by_reason: dict[str, int] = field(default_factory=dict)
    table_rows: dict[str, int] = field(default_factory=dict)


def _sources_table(sources: list[SourceFile], staged: dict[str, Path]) -> pa.Table:
    return pa.table(
        {
            "source_path": pa.array([s.source_path for s in sources], pa.string()),
            "kind": pa.array([s.kind for s in sources], pa.string()),
            "content_sha256": pa.array([s.content_sha256 for s in sources], pa.string()),
            "size_bytes": pa.array([s.size_bytes for s in sources], pa.int64()),
            "upstream_path": pa.array([s.upstream_path for s in sources], pa.string()),
            "upstream_commit": pa.array([s.upstream_commit for s in sources], pa.string()),
            "committed_at": pa.array([s.committed_at for s in sources], pa.timestamp("us")),
            "in_upstream_head": pa.array([s.in_upstream_head for s in sources], pa.bool_()),
            "staged_path": pa.array([str(staged[s.source_path]) for s in sources], pa.string()),
        }
    )


def _register_dim(con: duckdb.DuckDBPyConnection, name: str, keys: list[tuple], builder, key_names: tuple[str, ...]) -> None:
    described = [dimensions.describe(builder(*k)) for k in keys]
    cols = {n: pa.array([k[i] for k in keys], pa.string()) for i, n in enumerate(key_names)}
    for f in ("digest", "api_version", "kind", "object_json"):
        cols[f] = pa.array([d[f] for d in described], pa.string())
    con.register(name, pa.table(cols))


def _copy(con: duckdb.DuckDBPyConnection, sql: str, out: Path) -> int:
    """COPY a query to Parquet; returns the row count DuckDB reports for the COPY."""
    target = str(out).replace("'", "''")
    return con.execute(f"copy ({sql}) to '{target}' (format parquet, compression zstd, row_group_size 122880)").fetchone()[0]


def build_tables(
    sources: list[SourceFile],
    staged: dict[str, Path],
    empty_templates: dict[str, Path],
    problems: list[tuple[str, str, str]],
    out_dir: Path,
    *,
    temp_dir: Path,
    memory_limit: str = BUILD_MEMORY,
    threads: int | None = None,
) -> BuildSummary:
    out_dir.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(config=duckdb_config(temp_dir, memory_limit))
    try:
        if threads:
            con.execute(f"SET threads = {int(threads)}")
        con.register("sources_in", _sources_table(sources, staged))
        # An integer rank per source (oldest commit first) makes "newest source wins" a cheap integer arg_max.
        con.execute(
            """
            create temp table sources as
            select *, row_number() over (order by committed_at nulls first, source_path) as source_rank from sources_in
            """
        )
        csv_files = [str(staged[s.source_path]) for s in sources if s.kind == "liger_csv"] + [str(empty_templates["liger_csv"])]
        ki_files = [str(staged[s.source_path]) for s in sources if s.kind == "kernelindex"] + [str(empty_templates["kernelindex"])]
        # One staged file may back several sources (identical snapshots): join on the staged path.
        # Relation API: file lists are passed as values, never pasted into SQL text.
        con.read_parquet(sorted(set(csv_files)), filename=True, union_by_name=True).create_view("csv_raw")
        con.read_parquet(sorted(set(ki_files)), filename=True, union_by_name=True).create_view("ki_raw")
        # One staged file may back several sources (identical snapshots): join on the staged path.
        con.execute(
            """
            create temp view csv_staged as
            select s.source_path, s.source_rank, s.committed_at, s.upstream_commit, s.in_upstream_head, r.*
            from csv_raw r join sources s on s.staged_path = r.filename
            """
        )
        con.execute(
            """
            create temp view ki_staged as
            select s.source_path, r.* from ki_raw r join sources s on s.staged_path = r.filename
            """
        )
        # --- CSV facts: one row per measurement digest --------------------------------------
        # Two passes beat one wide group-by (7x at 10 M rows): first only numbers per measurement,
        # keyed by a 128-bit number of the digest; then the newest row of each is picked by a join.
        con.execute(
            """
            create temp table csv_agg as
            select
                md5_number(measurement_digest) as k,
                max(source_rank * 4294967296 + coalesce(record_no, 0)) as winner,
                count(distinct source_rank) as source_count,
                min(committed_at) as first_seen_at,
                arg_min(source_rank, committed_at) as first_rank,
                max(committed_at) as last_seen_at,
                arg_max(source_rank, committed_at) as last_rank,
                bool_or(in_upstream_head) as in_upstream_head
            from csv_staged
            where reason is null
            group by 1
            """
        )
        con.execute(
            """
            create temp table csv_fact as
            select g.measurement_digest, g.kernel_name, g.kernel_provider, g.kernel_operation_mode, g.metric_name,
                   g.metric_unit, g.gpu_name, g.x_name, g.x_label, g.x_value, g.extra_config, g.liger_version,
                   g.observed_at, g.observed_at_text, g.p20, g.p50, g.p80,
                   a.source_count, a.first_seen_at, fs.upstream_commit as first_seen_commit,
                   a.last_seen_at, ls.upstream_commit as last_seen_commit, a.in_upstream_head
            from csv_staged g
            join csv_agg a on md5_number(g.measurement_digest) = a.k
                          and g.source_rank * 4294967296 + coalesce(g.record_no, 0) = a.winner
            left join sources fs on fs.source_rank = a.first_rank
            left join sources ls on ls.source_rank = a.last_rank
            where g.reason is null
            """
        )
        con.execute("drop table csv_agg")
        # --- records: resolve GPU names, dedupe ---------------------------------------------
        gpu_slug = SLUG_SQL.format(c="gpu_name")
        env_slug = SLUG_SQL.format(c="environment_gpu_name")
        con.execute(
            f"""
            create temp table records as
            with good as (select * from ki_staged where reason is null),
            csv_gpus as (select {gpu_slug} as slug, min(gpu_name) as gpu_name from (select distinct gpu_name from csv_fact) group by 1),
            resolved as (
                select g.*,
                    coalesce(c.gpu_name,
                             case when g.gpu_slug is null or {env_slug} = g.gpu_slug then nullif(g.environment_gpu_name, '') end,
                             g.gpu_slug, nullif(g.environment_gpu_name, '')) as gpu_name
                from good g left join csv_gpus c on c.slug = g.gpu_slug
            )
            select kernel_name, kernel_operation_mode, kernel_provider, gpu_name, observed_at, observed_at_text,
                   liger_version, p20, p50, p80, protocol_digest, environment_digest, workload_digest,
                   implementation_digest,
                   any_value(protocol_json) as protocol_json, any_value(environment_json) as environment_json,
                   count(distinct source_path) as source_count
            from resolved
            group by all
            """
        )
        # --- fold records into CSV facts -----------------------------------------------------
        con.execute(
            f"""
            create temp table fold as
            with candidates as (
                select f.measurement_digest, r.*
                from csv_fact f
                join records r
                  on f.kernel_name = r.kernel_name and f.kernel_operation_mode = r.kernel_operation_mode
                 and f.kernel_provider is not distinct from r.kernel_provider and f.gpu_name = r.gpu_name
                 and f.observed_at_text = r.observed_at_text and f.metric_unit = 'ms'
                 and abs(f.p20 - r.p20) <= {QUANTILE_TOLERANCE} * r.p20
                 and abs(f.p50 - r.p50) <= {QUANTILE_TOLERANCE} * r.p50
                 and abs(f.p80 - r.p80) <= {QUANTILE_TOLERANCE} * r.p80
            ),
            one_per_record as (
                select * from candidates
                qualify row_number() over (partition by kernel_name, kernel_operation_mode, kernel_provider, gpu_name,
                    observed_at_text, p20, p50, p80, protocol_digest, environment_digest, workload_digest,
                    implementation_digest order by measurement_digest) = 1
            )
            select * from one_per_record
            qualify row_number() over (partition by measurement_digest
                order by workload_digest, implementation_digest, protocol_digest, environment_digest) = 1
            """
        )
        # --- learned protocol/environment per GPU (and timed pass) ------------------------------
        con.execute(
            """
            create temp table learned_env as
            select gpu_name, environment_digest from records
            qualify row_number() over (partition by gpu_name order by observed_at desc, environment_digest) = 1
            """
        )
        con.execute(
            """
            create temp table learned_protocol as
            select kernel_operation_mode, gpu_name, protocol_digest from records
            qualify row_number() over (partition by kernel_operation_mode, gpu_name order by observed_at desc, protocol_digest) = 1
            """
        )
        # --- derived dimension objects, one per distinct key --------------------------------
        keys = lambda sql: con.execute(sql).fetchall()  # noqa: E731
        _register_dim(con, "derived_env", keys("select distinct gpu_name from csv_fact"), dimensions.environment, ("gpu_name",))
        _register_dim(con, "derived_protocol", keys("select distinct kernel_operation_mode, metric_name, metric_unit from csv_fact"),
                      dimensions.protocol, ("kernel_operation_mode", "metric_name", "metric_unit"))
        _register_dim(con, "derived_workload", keys("select distinct kernel_name, x_name, x_value, extra_config from csv_fact"),
                      dimensions.workload, ("kernel_name", "x_name", "x_value", "extra_config"))
        _register_dim(con, "derived_impl", keys("select distinct kernel_name, kernel_provider, liger_version from csv_fact"),
                      dimensions.implementation, ("kernel_name", "kernel_provider", "liger_version"))
        # --- the fact table ---------------------------------------------------------------
        digest_expr = measurement_digest_sql()
        con.execute(
            f"""
            create temp view fact_query as
            with csv_based as (
                select f.measurement_digest, f.kernel_name, f.kernel_provider, f.kernel_operation_mode, f.metric_name,
                    f.metric_unit, f.gpu_name, f.x_name, f.x_label, f.x_value, f.extra_config, f.liger_version,
                    f.observed_at, f.p20, f.p50, f.p80,
                    coalesce(k.environment_digest, le.environment_digest, de.digest) as environment_digest,
                    coalesce(k.protocol_digest, case when f.metric_unit = 'ms' then lp.protocol_digest end, dp.digest) as protocol_digest,
                    coalesce(k.workload_digest, dw.digest) as workload_digest,
                    coalesce(k.implementation_digest, di.digest) as implementation_digest,
                    f.source_count + coalesce(k.source_count, 0) as source_count,
                    case when k.measurement_digest is null then 'csv' else 'csv+kernelindex' end as origin,
                    f.first_seen_commit, f.first_seen_at, f.last_seen_commit, f.last_seen_at, f.in_upstream_head
                from csv_fact f
                left join fold k using (measurement_digest)
                left join learned_env le on le.gpu_name = f.gpu_name
                left join learned_protocol lp on lp.gpu_name = f.gpu_name and lp.kernel_operation_mode = f.kernel_operation_mode
                left join derived_env de on de.gpu_name = f.gpu_name
                left join derived_protocol dp on dp.kernel_operation_mode = f.kernel_operation_mode
                     and dp.metric_name = f.metric_name and dp.metric_unit = f.metric_unit
                left join derived_workload dw on dw.kernel_name = f.kernel_name and dw.x_name is not distinct from f.x_name
                     and dw.x_value is not distinct from f.x_value and dw.extra_config is not distinct from f.extra_config
                left join derived_impl di on di.kernel_name = f.kernel_name and di.kernel_provider is not distinct from f.kernel_provider
                     and di.liger_version is not distinct from f.liger_version
            ),
            record_only as (
                -- A record names its workload only by digest; it stands in for the config in the identity key,
                -- so two records of one sweep taken in the same second stay two facts.
                select r.*, 'speed' as metric_name, 'ms' as metric_unit, null::varchar as x_name, null::varchar as x_label,
                       null::varchar as x_value, 'workload:' || r.workload_digest as extra_config
                from records r
                anti join fold k using (kernel_name, kernel_operation_mode, gpu_name, observed_at_text, p20, p50, p80,
                                        protocol_digest, environment_digest, workload_digest, implementation_digest)
            ),
            record_facts as (
                select {digest_expr} as measurement_digest, kernel_name, kernel_provider, kernel_operation_mode, metric_name,
                    metric_unit, gpu_name, x_name, x_label, x_value, null::varchar as extra_config, liger_version, observed_at,
                    p20, p50, p80, environment_digest, protocol_digest, workload_digest, implementation_digest, source_count,
                    'kernelindex' as origin, null::varchar as first_seen_commit, null::timestamp as first_seen_at,
                    null::varchar as last_seen_commit, null::timestamp as last_seen_at, null::boolean as in_upstream_head
                from record_only
                qualify row_number() over (partition by measurement_digest
                    order by workload_digest, implementation_digest, protocol_digest, environment_digest) = 1
            )
            select * from csv_based
            union all by name
            select * from record_facts  -- never collides with a CSV digest: its config slot holds 'workload:…', not JSON
            """
        )
        summary = BuildSummary()
        cols = ", ".join(FACT_COLUMNS)
        # Streamed straight to Parquet (no temp table, no sort: both cost more than they save at 10 M rows);
        # everything after reads the written file back, columnar.
        summary.table_rows["fact_measurement"] = _copy(con, f"select {cols} from fact_query", out_dir / "fact_measurement.parquet")
        con.read_parquet(str(out_dir / "fact_measurement.parquet")).create_view("fact")
        summary.facts = summary.table_rows["fact_measurement"]
        summary.folded_records = con.execute("select count(*) from fold").fetchone()[0]
        summary.record_only_facts = con.execute("select count(*) from fact where origin = 'kernelindex'").fetchone()[0]
        # --- dimensions: every digest a fact references, with its object when we have it ----
        summary.table_rows["dim_environment"] = _copy(con, """
            with used as (select distinct environment_digest, gpu_name from fact),
            objects as (
                select digest as environment_digest, api_version, kind, object_json, 'derived' as origin from derived_env
                union all
                select distinct environment_digest, json_extract_string(environment_json, '$.apiVersion'),
                    json_extract_string(environment_json, '$.kind'), environment_json, 'kernelindex' from records
            )
            select u.environment_digest, min(u.gpu_name) as gpu_name, any_value(o.api_version) as api_version,
                   any_value(o.kind) as kind, any_value(o.object_json) as object_json,
                   coalesce(min(o.origin), 'referenced') as origin
            from used u left join objects o using (environment_digest)
            group by u.environment_digest order by 1
            """, out_dir / "dim_environment.parquet")
        summary.table_rows["dim_protocol"] = _copy(con, """
            with used as (select distinct protocol_digest, kernel_operation_mode, metric_name, metric_unit from fact),
            objects as (
                select digest as protocol_digest, api_version, kind, object_json, 'derived' as origin from derived_protocol
                union all
                select distinct protocol_digest, json_extract_string(protocol_json, '$.apiVersion'),
                    json_extract_string(protocol_json, '$.kind'), protocol_json, 'kernelindex' from records
            )
            select u.protocol_digest, min(u.kernel_operation_mode) as kernel_operation_mode, min(u.metric_name) as metric_name,
                   min(u.metric_unit) as metric_unit, any_value(o.api_version) as api_version, any_value(o.kind) as kind,
                   any_value(o.object_json) as object_json,
                   coalesce(min(o.origin), 'referenced') as origin
            from used u left join objects o using (protocol_digest)
            group by u.protocol_digest order by 1
            """, out_dir / "dim_protocol.parquet")
        summary.table_rows["dim_workload"] = _copy(con, """
            select f.workload_digest, min(f.kernel_name) as kernel_name, min(f.x_name) as x_name, min(f.x_value) as x_value,
                   min(f.extra_config) as extra_config, any_value(d.api_version) as api_version, any_value(d.kind) as kind,
                   any_value(d.object_json) as object_json,
                   case when any_value(d.digest) is null then 'referenced' else 'derived' end as origin
            from fact f left join derived_workload d on d.digest = f.workload_digest
            group by f.workload_digest order by 1
            """, out_dir / "dim_workload.parquet")
        summary.table_rows["dim_implementation"] = _copy(con, """
            select f.implementation_digest, min(f.kernel_name) as kernel_name, min(f.kernel_provider) as kernel_provider,
                   min(f.liger_version) as liger_version, any_value(d.api_version) as api_version, any_value(d.kind) as kind,
                   any_value(d.object_json) as object_json,
                   case when any_value(d.digest) is null then 'referenced' else 'derived' end as origin
            from fact f left join derived_impl d on d.digest = f.implementation_digest
            group by f.implementation_digest order by 1
            """, out_dir / "dim_implementation.parquet")
        # --- quarantine and source ledger -----------------------------------------------------
        con.register("problems", pa.table({
            "source_file": pa.array([p[0] for p in problems], pa.string()),
            "location": pa.array(["file"] * len(problems), pa.string()),
            "reason": pa.array([p[1] for p in problems], pa.string()),
            "raw": pa.array([p[2] for p in problems], pa.string()),
        }))
        summary.table_rows["quarantine"] = _copy(con, """
            select source_path as source_file, location, reason, raw from csv_staged where reason is not null
            union all select source_path, location, reason, raw from ki_staged where reason is not null
            union all select * from problems
            order by source_file, location
            """, out_dir / "quarantine.parquet")
        summary.table_rows["source"] = _copy(con, """
            with counts as (
                select source_path, count(*) as rows_read, count(*) filter (where reason is not null) as rows_quarantined,
                       max(case when location = 'file' then reason end) as file_reason
                from (select source_path, reason, location from csv_staged
                      union all select source_path, reason, location from ki_staged)
                group by source_path
            )
            select s.source_path, s.kind, s.content_sha256, s.size_bytes, s.upstream_path, s.upstream_commit,
                   s.committed_at, s.in_upstream_head, coalesce(c.rows_read, 0) as rows_read,
                   coalesce(c.rows_quarantined, 0) as rows_quarantined, c.file_reason
            from sources s left join counts c using (source_path)
            order by s.kind, s.committed_at nulls last, s.source_path
            """, out_dir / "source.parquet")
        summary.sources = summary.table_rows["source"]
        summary.rows_read = con.execute("select coalesce(sum(rows_read), 0) from read_parquet($p)", {"p": str(out_dir / "source.parquet")}).fetchone()[0]
        summary.quarantined_by_reason = dict(con.execute(
            "select reason, count(*) from read_parquet($p) group by 1 order by 1", {"p": str(out_dir / "quarantine.parquet")}
        ).fetchall())
    finally:
        con.close()
    return summary
