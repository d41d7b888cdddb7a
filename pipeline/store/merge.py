"""Merge a batch of new source contents into the Delta tables, under the run lock.

A run takes the sources whose (path, content) no published run has committed, runs the normalize
models over them, and merges the results:

* incremental (the common case): facts whose digest is new are appended (an anti-join on the
  digest column; no MERGE, see ARCHITECTURE.md), every (measurement, source) pair is appended to
  `fact_sighting`, dimension objects and records not yet known are appended, the small `source`
  and `learned_dimension` tables are rewritten when they change;
* full: every table is rewritten from all current sources, in one commit each. A run goes full
  when it must: first run, changed model files, a committed source that is gone or changed, a
  batch digest whose values differ from the stored ones (the newest-source rule needs every
  source), or a record that would fold into an earlier fact (or an earlier record into a batch fact).

Either way the run's row in `warehouse_run` is written last: until then, readers see the old state.
"""

from __future__ import annotations

import hashlib
import shutil
import uuid
from dataclasses import dataclass, field
from datetime import timedelta

import duckdb
import pyarrow as pa

from pipeline.common import duck, failpoints
from pipeline.config import load, merge_memory
from pipeline.contracts.rules import FOLD_RULES, RECORD_KEY, fold_heuristic_sql
from pipeline.contracts.sources import SourceFile
from pipeline.contracts.tables import DIM_KEYS, SCHEMAS
from pipeline.model import run as normalize
from pipeline.stage.store import StagingStore
from pipeline.store.warehouse import STAGING_VERSION, Published, Warehouse

# Small tables the ingest computes whole (commit order, commits between snapshots): rewritten when
# they differ from the published ones.
REFERENCE_TABLES = ("benchmark_snapshot", "commit_change")
# Batches DuckDB hands delta-rs: the writer holds several in flight, so their size bounds the merge's
# peak beside DuckDB's own limit; smaller batches cost no time, and the files written keep their row
# groups either way (bench/HISTORY.md).
ROWS_PER_BATCH = 1 << 14


@dataclass
class RunResult:
    mode: str  # full | incremental | unchanged
    reason: str
    published: Published | None
    stats: dict = field(default_factory=dict)


def models_hash() -> str:
    """Changing a model, a table schema or the readers' verdicts (STAGING_VERSION) makes the next run a
    full one: a published source is otherwise never read again, so a new verdict would never land."""
    h = hashlib.sha256(STAGING_VERSION.encode())
    for p in normalize.model_files():
        h.update(p.name.encode() + b"\0" + p.read_bytes())
    h.update(repr(sorted((t, s.to_string()) for t, s in SCHEMAS.items())).encode())
    return h.hexdigest()[:16]


def _ts(col: str) -> str:
    return f"{col}::timestamptz as {col}"


# What each table receives from a batch (the models' temp tables), in the Delta schema's column order.
BATCH_ROWS = {
    "fact_measurement": """select measurement_digest, kernel_name, kernel_provider, kernel_operation_mode, metric_name,
        metric_unit, gpu_name, x_name, x_label, x_value, extra_config, liger_version, {obs}, p20, p50, p80,
        environment_digest, protocol_digest, workload_digest, implementation_digest, operation_digest, origin,
        occurrence, identity, identity_reason, external_id, run_digest, fold_rule, $seq as run_seq
        from batch_fact""".format(obs=_ts("observed_at")),
    "fact_sighting": """select g.measurement_digest, g.source_path, s.content_sha256, s.upstream_path,
        s.upstream_commit,
        s.committed_at::timestamptz as committed_at, $seq as run_seq
        from batch_sighting g join batch_source s using (source_path)""",
    "kernelindex_record": """select kernel_name, kernel_operation_mode, kernel_provider, gpu_name, {obs},
        observed_at_text,
        liger_version, p20, p50, p80, protocol_digest, environment_digest, workload_digest, implementation_digest,
        protocol_json, environment_json, run_digest, external_id from batch_record""".format(obs=_ts("observed_at")),
    "learned_dimension": "select dimension, gpu_name, kernel_operation_mode, metric_unit, digest "
    "from learned_dimension",
    **{t: f"select * from batch_{t}" for t in REFERENCE_TABLES},
    "quarantine": "select source_file, location, reason, raw, $seq as run_seq from batch_quarantine",
    "source": """select source_path, kind, content_sha256, size_bytes, upstream_path, upstream_commit,
        committed_at::timestamptz as committed_at, in_upstream_head, rows_read, rows_quarantined, file_reason, snapshot,
        $seq as run_seq from batch_source_rows""",
}
for _dim, _key in DIM_KEYS.items():
    # A digest can arrive as an object and as a bare reference: keep the richest row.
    BATCH_ROWS[_dim] = f"""select {", ".join(SCHEMAS[_dim].names)} from batch_{_dim}
        qualify row_number() over (partition by {_key}
            order by case origin when 'kernelindex' then 0 when 'derived' then 1 else 2 end, object_json) = 1"""


class Merger:
    def __init__(self, wh: Warehouse, staging: StagingStore):
        self.wh, self.staging = wh, staging
        # Read (and validated) before the run takes the lock: a bad value commits nothing.
        self.settings = load()
        self.memory_limit = merge_memory()

    # -- reading the published state -------------------------------------------------------
    def _register_published(self, con: duckdb.DuckDBPyConnection, pub: Published | None) -> None:
        files = self.wh.snapshot_files(pub)
        for table, schema in SCHEMAS.items():
            if files[table]:
                con.read_parquet(files[table]).create_view(f"published_{table}")
            else:
                con.register(f"published_{table}", schema.empty_table())

    def _write(self, con, table: str, sql: str, mode: str, run_id: str, params: dict) -> int:
        reader = con.sql(sql, params=params or None).to_arrow_reader(ROWS_PER_BATCH)
        version = self.wh.store.write(table, reader.cast(SCHEMAS[table]), mode=mode, run_id=run_id)
        failpoints.pause(f"committed_{table}")
        return version

    def _count(self, con, sql: str, params: dict | None = None) -> int:
        return duck.scalar(con, f"select count(*) from ({sql})", params)

    # -- the run -----------------------------------------------------------------------------
    def run(
        self,
        sources: list[SourceFile],
        problems: list[tuple[str, str, str]],
        run_id: str | None = None,
        *,
        force_full: bool = False,
        reference: dict[str, pa.Table] | None = None,
    ) -> RunResult:
        run_id = run_id or uuid.uuid4().hex
        with self.wh.lock():
            restored = self.wh.restore_unpublished()
            pub = self.wh.published()
            spill = self.wh.temp_dir / f"merge-{run_id}"
            con = duck.connect(temp_dir=spill, memory_limit=self.memory_limit, remote_root=self.wh.root_uri)
            try:
                self._register_published(con, pub)
                for table in REFERENCE_TABLES:
                    given = (reference or {}).get(table)
                    con.register(f"batch_{table}", given if given is not None else SCHEMAS[table].empty_table())
                result = self._run(con, pub, sources, problems, run_id, force_full)
            finally:
                con.close()
                shutil.rmtree(spill, ignore_errors=True)
            if restored:
                result.stats["restored_unpublished"] = restored
            return result

    def _run(self, con, pub, sources, problems, run_id, force_full) -> RunResult:
        mhash = models_hash()
        committed = set(con.execute("select source_path, content_sha256 from published_source").fetchall())
        current = {(s.source_path, s.content_sha256) for s in sources}
        batch = [s for s in sources if (s.source_path, s.content_sha256) not in committed]
        gone = committed - current
        if force_full:
            reason = "full rebuild requested"
        elif pub is None:
            reason = "first run"
        elif pub.stats.get("models_hash") != mhash:
            reason = "normalize models, table schemas or staging version changed"
        elif gone:
            reason = f"{len(gone)} committed source(s) gone or changed, e.g. {sorted(gone)[0][0]}"
        else:
            reason = ""
        seq = (pub.seq if pub else 0) + 1
        if reason:
            return self._full(con, sources, problems, run_id, seq, reason, mhash)
        if not batch and not self._references_moved(con) and self._nothing_else_moved(con, sources, problems):
            return RunResult("unchanged", "no new source content", pub, {"models_hash": mhash, "sources_in_batch": 0})

        self._models(con, batch, problems, incremental=True)
        # The batch's facts the warehouse holds already, found once by the one column it needs: the
        # checks and the append below would each scan every published digest (and, for the value
        # check, every value column) again.
        con.execute(
            "create or replace temp table batch_known_digest as select distinct measurement_digest "
            "from batch_fact semi join published_fact_measurement using (measurement_digest)"
        )
        escalate = self._must_go_full(con)
        if escalate:
            return self._full(con, sources, problems, run_id, seq, escalate, mhash)
        return self._incremental(con, pub, sources, batch, run_id, seq, mhash)

    def _references_moved(self, con) -> list[str]:
        """The reference tables whose rows differ from the published ones (either way)."""
        moved = []
        for t in REFERENCE_TABLES:
            diff = f"""(select * from batch_{t} except all select * from published_{t})
                union all (select * from published_{t} except all select * from batch_{t})"""
            if self._count(con, diff):
                moved.append(t)
        return moved

    def _nothing_else_moved(self, con, sources, problems) -> bool:
        """No new content: is anything else new? A moved upstream HEAD flag or a newly refused file."""
        flags = {(s.source_path, s.content_sha256): s.in_upstream_head for s in sources}
        committed = con.execute("select source_path, content_sha256, in_upstream_head from published_source").fetchall()
        if any(flags.get((p, c)) != head for p, c, head in committed):
            return False
        known = set(
            con.execute("select source_file, reason, raw from published_quarantine where location = 'file'").fetchall()
        )
        return all((p[0], str(p[1]), p[2]) in known for p in problems)

    def _models(self, con, sources, problems, *, incremental: bool) -> None:
        kwargs = {}
        if incremental:
            kwargs = {
                "known_gpu": "select distinct gpu_name from published_fact_measurement where origin <> 'kernelindex'",
                "known_record": "select kernel_operation_mode, gpu_name, observed_at, protocol_digest, "
                "environment_digest from published_kernelindex_record",
                "known_dim_digest": " union all ".join(
                    f"select {key} as digest from published_{dim}" for dim, key in DIM_KEYS.items()
                ),
            }
        normalize.run_batch(con, sources, self.staging.path, self.staging.empty_templates(), problems, **kwargs)

    def _must_go_full(self, con) -> str:
        """Cases the append-only merge cannot express; they are rare and a full build is exact."""
        known = """(select * from published_fact_measurement
                     where measurement_digest in (select measurement_digest from batch_known_digest))"""
        changed = duck.scalar(con, "select count(*) from batch_known_digest") and self._count(
            con,
            f"""
            select 1 from batch_fact b join {known} p using (measurement_digest)
            where (b.p20, b.p50, b.p80, b.metric_unit, b.x_label, b.origin, b.environment_digest, b.protocol_digest,
                   b.workload_digest, b.implementation_digest, b.identity, b.external_id, b.run_digest)
               is distinct from (p.p20, p.p50, p.p80, p.metric_unit, p.x_label, p.origin, p.environment_digest,
                   p.protocol_digest, p.workload_digest, p.implementation_digest, p.identity, p.external_id,
                   p.run_digest)""",
        )
        if changed:
            return f"{changed} stored fact(s) carried with other values: the newest source decides"
        fold_key = fold_heuristic_sql("f", "r")
        if duck.scalar(con, "select count(*) from batch_record"):
            late = self._count(
                con,
                f"""
                select 1 from batch_record r join published_fact_measurement f
                  on f.origin <> 'kernelindex' and {fold_key}
                union all
                select 1 from batch_record r join published_fact_measurement f
                  on f.origin <> 'kernelindex' and r.run_digest = f.run_digest
                union all
                select 1 from batch_record r join published_fact_measurement f
                  on f.origin <> 'kernelindex' and r.external_id = f.external_id""",
            )
            if late:
                return f"{late} new record(s) fold into facts committed earlier"
        early = self._count(
            con,
            f"""
            with f as (select * from batch_fact where origin = 'csv'
                       and measurement_digest not in (select measurement_digest from batch_known_digest))
            select 1 from f join published_kernelindex_record r on {fold_key}
            union all
            select 1 from f join published_kernelindex_record r on f.run_digest = r.run_digest
            union all
            select 1 from f join published_kernelindex_record r on f.external_id = r.external_id""",
        )
        if early:
            return f"{early} new CSV row(s) match records committed earlier"
        return ""

    def _full(self, con, sources, problems, run_id, seq, reason, mhash) -> RunResult:
        for t in ("batch_fact", "batch_record"):
            con.execute(f"drop table if exists {t}")
        self._models(con, sources, problems, incremental=False)
        params = {"seq": seq}
        versions, stats = {}, {"models_hash": mhash, "sources_in_batch": len(sources)}
        for table in SCHEMAS:
            versions[table] = self._write(
                con, table, BATCH_ROWS[table], "overwrite", run_id, params if "$seq" in BATCH_ROWS[table] else {}
            )
        stats |= self._batch_stats(con)
        stats["facts_inserted"] = stats["batch_facts"]
        failpoints.pause("tables_committed")
        published = self.wh.append_run(run_id, "full", reason, versions, stats, seq=seq)
        return RunResult("full", reason, published, stats)

    def _batch_stats(self, con) -> dict:
        q = lambda sql: duck.scalar(con, sql)  # noqa: E731
        folded = dict(con.execute("select fold_rule, count(*) from fold group by 1").fetchall())
        return {
            "batch_facts": q("select count(*) from batch_fact"),
            "batch_sightings": q("select count(*) from batch_sighting"),
            "folded_records": q("select count(*) from fold"),
            "folded_by_rule": {rule: folded.get(rule, 0) for rule in FOLD_RULES},
            "facts_by_identity": dict(con.execute("select identity, count(*) from batch_fact group by 1").fetchall()),
            "record_only_facts": q("select count(*) from batch_fact where origin = 'kernelindex'"),
            "quarantined_rows": q("select count(*) from batch_quarantine"),
        }

    def _append(self, con, run_id: str, params: dict, versions: dict, stats: dict) -> bool:
        """Append the batch's rows no published row has (facts by digest, the rest by their keys);
        records each table's count in ``stats`` and new version in ``versions``. Whether any was written."""
        appends = {
            "fact_measurement": f"""select * from ({BATCH_ROWS["fact_measurement"]})
                where measurement_digest not in (select measurement_digest from batch_known_digest)""",
            "fact_sighting": BATCH_ROWS["fact_sighting"],
            "kernelindex_record": f"""select * from ({BATCH_ROWS["kernelindex_record"]}) b
                anti join published_kernelindex_record p using ({", ".join(RECORD_KEY)})""",
            "quarantine": f"""select * from ({BATCH_ROWS["quarantine"]}) b
                anti join published_quarantine p using (source_file, location, reason, raw)""",
            **{
                dim: f"""select * from ({BATCH_ROWS[dim]}) b
                anti join published_{dim} p using ({key})"""
                for dim, key in DIM_KEYS.items()
            },
        }
        changed = False
        for table, sql in appends.items():
            # kept once: counting and then writing the query would anti-join the published table twice
            con.execute(f"create or replace temp table append_{table} as {sql}", params if "$seq" in sql else None)
            n = self._count(con, f"select * from append_{table}")
            stats[f"{table}_appended"] = n
            if n:
                versions[table] = self._write(con, table, f"select * from append_{table}", "append", run_id, {})
                changed = True
            con.execute(f"drop table append_{table}")
        return changed

    def _incremental(self, con, pub, sources, batch, run_id, seq, mhash) -> RunResult:
        params = {"seq": seq}
        # The source ledger: committed rows (with today's in_upstream_head) plus the batch's.
        con.register(
            "current_flags",
            pa.table(
                {
                    "source_path": pa.array([s.source_path for s in sources], pa.string()),
                    "content_sha256": pa.array([s.content_sha256 for s in sources], pa.string()),
                    "in_upstream_head": pa.array([s.in_upstream_head for s in sources], pa.bool_()),
                }
            ),
        )
        new_source_sql = f"""
            select p.* replace (c.in_upstream_head as in_upstream_head) from published_source p
            join current_flags c using (source_path, content_sha256)
            union all by name
            ({BATCH_ROWS["source"]})"""
        flags_moved = self._count(
            con,
            """select 1 from published_source p join current_flags c
            using (source_path, content_sha256) where p.in_upstream_head is distinct from c.in_upstream_head""",
        )
        stats = {"models_hash": mhash, "sources_in_batch": len(batch)} | self._batch_stats(con)
        versions = dict(pub.versions)
        changed = self._append(con, run_id, params, versions, stats)
        stats["facts_inserted"] = stats["fact_measurement_appended"]
        if batch or flags_moved:
            versions["source"] = self._write(con, "source", new_source_sql, "overwrite", run_id, params)
            changed = True
        learned_moved = self._count(
            con,
            """
            (select * from learned_dimension
             except select dimension, gpu_name, kernel_operation_mode, metric_unit, digest
             from published_learned_dimension)
            union all
            (select dimension, gpu_name, kernel_operation_mode, metric_unit, digest from published_learned_dimension
             except select * from learned_dimension)""",
        )
        for table in self._references_moved(con):
            versions[table] = self._write(con, table, BATCH_ROWS[table], "overwrite", run_id, {})
            changed = True
        if learned_moved and stats["batch_sightings"] + stats["kernelindex_record_appended"]:
            versions["learned_dimension"] = self._write(
                con, "learned_dimension", BATCH_ROWS["learned_dimension"], "overwrite", run_id, {}
            )
        if not changed:
            return RunResult("unchanged", "no new source content", pub, stats)
        for table in ("fact_measurement", "fact_sighting", "quarantine"):
            if self.wh.store.compact(table, run_id=run_id, min_files=self.settings.compact_min_files):
                versions[table] = self.wh.store.version(table)
                stats.setdefault("compacted", []).append(table)
        failpoints.pause("tables_committed")
        published = self.wh.append_run(
            run_id, "incremental", f"{len(batch)} new source content(s)", versions, stats, seq=seq
        )
        if stats.get("compacted"):
            stats["vacuumed_files"] = self.wh.vacuum(timedelta(hours=self.settings.retention_hours))
        return RunResult("incremental", f"{len(batch)} new source content(s)", published, stats)
