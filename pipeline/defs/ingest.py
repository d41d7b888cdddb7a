"""Ingest: find input files and stage each distinct file content once (content-addressed)."""


import dagster as dg

from pipeline.core.sources import SourceFile, discover
from pipeline.defs.resources import WarehouseResource


@dg.asset(group_name="ingest", kinds={"python", "duckdb", "parquet"})
def staged_sources(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.Output[dict]:
    """Every CSV and kernelindex file under data_raw, parsed into staged Parquet (good + quarantined rows).

    A file whose content was staged before is not parsed again, so re-runs cost only hashing.
    """
    wh = warehouse.open()
    sources, problems = discover(warehouse.data_raw_path())
    counts = wh.stage(sources)
    context.log.info(f"staged {counts['newly_staged']} new file contents, {counts['already_staged']} already staged")
    value = {"sources": sources, "problems": problems}
    return dg.Output(
        value,
        metadata={
            "dagster/row_count": len(sources),
            "newly_staged": counts["newly_staged"],
            "already_staged": counts["already_staged"],
            "refused_paths": len(problems),
            "data_raw": str(warehouse.data_raw_path()),
        },
    )


__all__ = ["staged_sources", "SourceFile"]
