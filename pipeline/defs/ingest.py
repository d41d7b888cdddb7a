"""Ingest: find input files (and, with LIGER_GIT_REPO, every git snapshot) and stage each distinct content once."""


import dagster as dg

from pipeline.core.git_history import GIT_REPO_ENV, GitHistoryError
from pipeline.core.discovery import discover_all
from pipeline.core.sources import SourceFile
from pipeline.defs.resources import WarehouseResource


@dg.asset(group_name="ingest", kinds={"python", "duckdb", "parquet", "git"})
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
    try:
        sources, problems, history = discover_all(warehouse.data_raw_path(), git_repo, warehouse.git_blob_cache())
    except GitHistoryError as exc:
        raise dg.Failure(description=f"git backfill failed: {exc}. Unset {GIT_REPO_ENV} to ingest data_raw only.") from exc
    staging = warehouse.staging()
    counts = staging.stage(sources)
    staging.collect_garbage()
    context.log.info(f"staged {counts['newly_staged']} new file contents, {counts['already_staged']} already staged")
    git_meta = {}
    if history is not None:
        git_sources = sum(1 for s in sources if s.source_path.startswith("git:"))
        context.log.info(f"git {git_repo}: HEAD {history.head}, {history.commits} commits with CSV snapshots, "
                         f"{history.blobs_written} new blobs extracted, {git_sources} git-only sources")
        git_meta = {
            "git_repo": str(git_repo),
            "git_head": history.head or "",
            "git_commits": history.commits,
            "git_snapshots": len(history.sources),
            "git_blobs_extracted": history.blobs_written,
            "git_only_sources": git_sources,
        }
    value = {"sources": sources, "problems": problems, "git_head": history.head if history else None}
    return dg.Output(
        value,
        metadata={
            "dagster/row_count": len(sources),
            "newly_staged": counts["newly_staged"],
            "already_staged": counts["already_staged"],
            "refused_paths": len(problems),
            "data_raw": str(warehouse.data_raw_path()),
            **git_meta,
        },
    )


__all__ = ["staged_sources", "SourceFile"]
