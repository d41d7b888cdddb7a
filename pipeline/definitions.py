"""Code location: every module in pipeline/defs/ plus project-wide executor and resources."""

from pathlib import Path

import dagster as dg

from pipeline.defs.resources import warehouse_resource


@dg.definitions
def defs() -> dg.Definitions:
    loaded = dg.load_from_defs_folder(path_within_project=Path(__file__).parent / "defs")
    # One process: the multiprocess executor costs ~2 s of start-up per step on 2 cores.
    return dg.Definitions.merge(
        loaded,
        dg.Definitions(executor=dg.in_process_executor, resources={"warehouse": warehouse_resource()}),
    )
