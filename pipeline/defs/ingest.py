"""Ingest: find input files (and, with LIGER_GIT_REPO, every git snapshot) and stage each distinct content once.

Two ways in, one staging store (content-addressed, so they never clash):
* `source_content`, partitioned (one dynamic partition per data_raw file or upstream commit):
  any executor stages many partitions in parallel (multiprocess here, k8s/celery in production);
  each partition commits its row to the `staged_content` Delta table in one append.
* `staged_sources`: the single-process path of `make run`; it stages whatever no partition run
  has staged yet (a hash each for the rest) and hands every current source to the merge.
"""

import os
import socket
from datetime import UTC, datetime

import dagster as dg
import pyarrow as pa

from pipeline.config import GIT_REPO_ENV
from pipeline.contracts.sources import SourceFile, is_git
from pipeline.contracts.tables import STAGED_CONTENT
from pipeline.defs.resources import WarehouseResource
from pipeline.ingest.commits import reference_tables
from pipeline.ingest.discovery import DataRootError, discover_all, drop_duplicate_snapshots
from pipeline.ingest.git_history import GitHistoryError
from pipeline.ingest.partitions import by_partition
from pipeline.stage.store import ReadersFailed

source_partitions = dg.DynamicPartitionsDefinition(name="liger_source")
STAGED_CONTENT_SCHEMA = STAGED_CONTENT.schema


def _staged_by_partitions(warehouse: WarehouseResource, sources: list[SourceFile]) -> int:
    """How many of ``sources`` (path and content) a partition run of `source_content` staged: read
    lazily from the `staged_content` Delta table (two columns), or 0 before any partition run."""
    dt = warehouse.open().store.open(STAGED_CONTENT.name)
    if dt is None or not sources:
        return 0
    import polars as pl  # only once partition runs exist

    staged = pl.scan_delta(dt).select("source_path", "content_sha256").unique().collect()
    current = pl.DataFrame(
        {"source_path": [s.source_path for s in sources], "content_sha256": [s.content_sha256 for s in sources]},
        schema=staged.schema,
    )
    return current.join(staged, on=["source_path", "content_sha256"], how="semi").height


def _discover(context, warehouse: WarehouseResource, with_git: bool = True):
    git_repo = warehouse.git_repo_path() if with_git else None
    try:
        return discover_all(
            warehouse.data_raw_path(), git_repo, warehouse.git_blob_cache(), bisect_root=warehouse.bisect_path()
        )
    except DataRootError as exc:
        raise dg.Failure(description=str(exc)) from exc
    except GitHistoryError as exc:
        raise dg.Failure(
            description=f"git backfill failed: {exc}. Unset {GIT_REPO_ENV} to ingest data_raw only."
        ) from exc


def _stage(staging, sources: list[SourceFile]) -> dict:
    """Stage ``sources``; a reader failure (memory, I/O) fails the step by name, before any commit."""
    try:
        return staging.stage(sources)
    except ReadersFailed as exc:
        raise dg.Failure(description=str(exc)) from exc


@dg.asset(group_name="ingest", kinds={"python", "duckdb", "parquet", "deltalake"}, partitions_def=source_partitions)
def source_content(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """One data_raw file or one upstream commit's CSV snapshots, staged into the content-addressed
    store, with one append to the `staged_content` Delta table (concurrent appends both commit)."""
    keys = set(context.partition_keys)
    sources, _, _ = _discover(context, warehouse, with_git=any(is_git(k) for k in keys))
    grouped = by_partition(sources)
    wanted = [s for k in sorted(keys) for s in grouped.get(k, [])]
    gone = sorted(keys - set(grouped))
    if gone:
        context.log.warning(f"{len(gone)} partition(s) name inputs that no longer exist: {gone[:5]}")
    staging = warehouse.staging()
    counts = _stage(staging, wanted)
    now = datetime.now(UTC)
    rows = pa.table(
        {
            "partition_key": [next(k for k, v in grouped.items() if s in v) for s in wanted],
            "source_path": [s.source_path for s in wanted],
            "kind": [s.kind for s in wanted],
            "content_sha256": [s.content_sha256 for s in wanted],
            "size_bytes": [s.size_bytes for s in wanted],
            "newly_staged": [s.content_sha256 + s.kind in counts["new"] for s in wanted],
            "staged_at": [now] * len(wanted),
            "run_id": [context.run.run_id] * len(wanted),
            "host": [f"{socket.gethostname()}:{os.getpid()}"] * len(wanted),
        },
        schema=STAGED_CONTENT_SCHEMA,
    )
    if wanted:
        warehouse.open().store.write(STAGED_CONTENT.name, rows, mode="append", run_id=context.run.run_id)
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": len(wanted),
            "partitions": len(keys),
            "missing_inputs": len(gone),
            "newly_staged": counts["newly_staged"],
            "already_staged": counts["already_staged"],
        }
    )


def _commit_tables(context, sources: list[SourceFile], staging, git_repo) -> dict:
    """benchmark_snapshot and commit_change from the gh-pages snapshots among the sources."""
    tables = reference_tables(sources, staging.path, git_repo)
    snapshot, change = tables["benchmark_snapshot"], tables["commit_change"]
    orders = snapshot.column("order_source").to_pylist()
    context.log.info(
        f"{snapshot.num_rows} gh-pages snapshot(s) ordered by {sorted(set(orders)) or 'nothing'}; "
        f"{change.num_rows} commit(s) between them"
    )
    return tables


def _record_partitions(context, sources: list[SourceFile], counts: dict) -> None:
    """What this run staged is what `source_content` would have staged, partition by partition: add the
    partitions it does not know yet and record a materialization for each one that has none yet or got
    new content, so the UI does not call the staging asset "never materialized" after `make run`."""
    grouped = by_partition(sources)
    instance = context.instance
    known = set(instance.get_dynamic_partitions(source_partitions.name))
    added = sorted(set(grouped) - known)
    if added:
        instance.add_dynamic_partitions(source_partitions.name, added)
    key = dg.AssetKey("source_content")
    try:
        done = set(instance.get_materialized_partitions(key))
    except Exception:  # noqa: BLE001 -- an instance without the query: record them all
        done = set()
    new = counts.get("new") or set()
    for partition, group in sorted(grouped.items()):
        fresh = any(s.content_sha256 + s.kind in new for s in group)
        if partition in done and not fresh:
            continue
        context.log_event(
            dg.AssetMaterialization(
                asset_key=key,
                partition=partition,
                description="staged by staged_sources (the single-process path of liger_warehouse_job)",
                metadata={
                    "dagster/row_count": len(group),
                    "newly_staged": sum(s.content_sha256 + s.kind in new for s in group),
                    "staged_by": "staged_sources",
                },
            )
        )


@dg.asset(
    group_name="ingest",
    kinds={"python", "duckdb", "parquet", "git"},
    deps=[dg.AssetDep(source_content, partition_mapping=dg.AllPartitionMapping())],
)
def staged_sources(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.Output[dict]:
    """Every CSV and kernelindex file under data_raw, plus every committed snapshot of
    benchmark/data/*.csv when LIGER_GIT_REPO names a local Liger-Kernel clone, parsed into
    staged Parquet (good + quarantined rows).

    Staging is a content-digest ledger: a content staged before is not parsed again, and a git
    blob extracted before is not extracted again, so re-runs cost only listing and hashing.
    """
    git_repo = warehouse.git_repo_path()
    if git_repo is None:
        context.log.info(f"{GIT_REPO_ENV} not set: ingesting data_raw only (no git backfill)")
    sources, problems, history = _discover(context, warehouse)
    staging = warehouse.staging()
    counts = _stage(staging, sources)
    staging.collect_garbage()
    _record_partitions(context, sources, counts)
    sources = drop_duplicate_snapshots(sources)
    reference = _commit_tables(context, sources, staging, git_repo)
    by_partitions = _staged_by_partitions(warehouse, sources)
    context.log.info(
        f"staged {counts['newly_staged']} new file contents, {counts['already_staged']} already staged "
        f"({by_partitions} of the sources by partition runs)"
    )
    git_meta = {}
    if history is not None:
        git_sources = sum(1 for s in sources if is_git(s.source_path))
        context.log.info(
            f"git {git_repo}: HEAD {history.head}, {history.commits} commits with CSV snapshots, "
            f"{history.blobs_written} new blobs extracted, {git_sources} git-only sources"
        )
        git_meta = {
            "git_repo": str(git_repo),
            "git_head": history.head or "",
            "git_commits": history.commits,
            "git_snapshots": len(history.sources),
            "git_blobs_extracted": history.blobs_written,
            "git_only_sources": git_sources,
        }
    value = {
        "sources": sources,
        "problems": problems,
        "git_head": history.head if history else None,
        "reference": reference,
    }
    return dg.Output(
        value,
        metadata={
            "dagster/row_count": len(sources),
            "newly_staged": counts["newly_staged"],
            "already_staged": counts["already_staged"],
            "staged_by_partition_runs": by_partitions,
            "refused_paths": len(problems),
            "data_raw": str(warehouse.data_raw_path()),
            **git_meta,
        },
    )


__all__ = ["staged_sources", "SourceFile"]
