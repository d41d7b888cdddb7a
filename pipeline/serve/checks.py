"""Data tests over one published warehouse state: each returns the offending rows; a check passes
with zero rows."""

from __future__ import annotations

import json

import duckdb

from pipeline.common import duck
from pipeline.contracts.digests import measurement_digest_sql, object_digest, record_only_extra_config_sql
from pipeline.contracts.rules import QUANTILE_REASON_MACRO, observed_at_text_sql
from pipeline.engine.catalog import check_model
from pipeline.serve.duckdb_build import create_table_views
from pipeline.store.warehouse import Published, Warehouse

DIMENSIONS = ("environment", "protocol", "workload", "implementation", "operation")
DIGEST_SAMPLE_LIMIT = 20  # wrong measurement digests reported at most
CHECKED_DIGESTS = "select measurement_digest from checked_facts union select measurement_digest from checked_sightings"


def connect(
    wh: Warehouse, published: Published | None = None, since_seq: int | None = None
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the readers' tables (sql/serve) over a published state; the checks
    read the facts committed after run ``since_seq`` (all when None)."""
    con = duck.connect(remote_root=wh.root_uri)
    create_table_views(con, wh.snapshot_files(published))
    # No check reads provenance (source_count, first/last seen); aggregating every sighting for it
    # would cost more than the checks themselves. Its columns read as NULL here.
    con.execute("""create or replace view fact_provenance as select null::varchar as measurement_digest,
        null::bigint as source_count, null::timestamptz as first_seen_at, null::varchar as first_seen_commit,
        null::timestamptz as last_seen_at, null::varchar as last_seen_commit, null::boolean as in_upstream_head,
        null::varchar as snapshot
        where false""")
    register_rules(con, since_seq)  # after: it reads the facts
    return con


def register_rules(con: duckdb.DuckDBPyConnection, since_seq: int | None = None) -> None:
    """The rules the check files use, as macros (each written once, in contracts/rules.py), and
    `checked_facts` / `checked_sightings`: the facts and sightings committed after run
    ``since_seq`` (every one when None), `checked_dim_<dimension>`: the dimension objects those
    facts name (every one when None), and `checked_digest_count`: how many facts carry each
    digest of those, counted over every fact. Two checks read it; each scanning every fact's
    digest itself cost most of a second at 10 M facts."""
    con.execute(QUANTILE_REASON_MACRO)
    where = "" if since_seq is None else f"where run_seq > {int(since_seq)}"
    con.execute(f"create or replace view checked_facts as select * from fact_measurement {where}")
    con.execute(f"create or replace view checked_sightings as select * from fact_sighting {where}")
    for dim in DIMENSIONS:
        # the dimension objects the checked facts name (every one on a full check): a deep history has a
        # dim_implementation row per kernel, provider and version, each digest recomputed in Python
        named = "" if since_seq is None else f"where {dim}_digest in (select {dim}_digest from checked_facts)"
        con.execute(f"create or replace view checked_dim_{dim} as select * from dim_{dim} {named}")
    if since_seq is None:
        # Every digest, counted by each check itself and freed again (kept as a table, the 10 M counts
        # stayed in memory under every later check). No filter: it would only add a join.
        con.execute("""create or replace view checked_digest_count as
            select measurement_digest, count(*) as n from fact_measurement group by measurement_digest""")
        return
    con.execute(f"""create or replace temp table checked_digest_rows as
        select measurement_digest, count(*) as n from fact_measurement
        where measurement_digest in ({CHECKED_DIGESTS})
        group by measurement_digest""")
    con.execute("create or replace view checked_digest_count as select * from checked_digest_rows")


def check_scope(published: Published, run_id: str | None, every: int) -> tuple[int | None, str]:
    """What a run's checks read: the facts that run committed, or every fact on the periodic full
    check (a full warehouse run, or every ``every``-th run). A run that committed nothing (the
    published state is an earlier run's) has nothing new to check."""
    if published.mode == "full" or published.seq % every == 0:
        return None, f"every fact (full check at warehouse run {published.seq})"
    if run_id is not None and published.run_id != run_id:
        return published.seq, f"nothing committed by this run (warehouse run {published.seq} was checked when made)"
    return published.seq - 1, f"the facts warehouse run {published.seq} committed"


def sql_check(con: duckdb.DuckDBPyConnection, name: str) -> list[tuple]:
    return con.execute(check_model(name).sql).fetchall()


def digest_integrity(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    """Recompute the checked facts' measurement digests (vectorized) and the digests of the dimension
    objects they name (every one on a full check)."""
    if not duck.scalar(con, "select count(*) from duckdb_views() where view_name = 'checked_facts'"):
        register_rules(con)  # no scope given: every fact
    record_only = record_only_extra_config_sql("workload_digest")
    observed_at_text = observed_at_text_sql("observed_at")
    bad = con.execute(
        f"""
        with facts as (
            select * replace (
                case when origin = 'kernelindex' then {record_only} else extra_config end as extra_config),
                   {observed_at_text} as observed_at_text
            from checked_facts
        )
        select 'measurement', measurement_digest, {measurement_digest_sql()} as recomputed
        from facts where measurement_digest <> {measurement_digest_sql()}
        limit {DIGEST_SAMPLE_LIMIT}
        """
    ).fetchall()
    for dim in DIMENSIONS:
        rows = con.execute(
            f"select {dim}_digest, object_json from checked_dim_{dim} where object_json is not null"
        ).fetchall()
        for digest, text in rows:  # one row per distinct object: small by construction
            actual = object_digest(json.loads(text))
            if actual != digest:
                bad.append((dim, digest, actual))
    return bad


def quarantine_counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    return dict(con.execute("select reason, count(*) from quarantine group by 1 order by 1").fetchall())
