"""Code location: every module in pipeline/defs/ plus project-wide executor and resources."""

import warnings

import dagster as dg

import pipeline.defs
from pipeline.defs.resources import warehouse_resource

# dagster marks parts of its own API (e.g. the `*` selection that `dg launch --assets '*'` parses)
# as beta/preview; those warnings address dagster's developers, not this project's users
# (https://docs.dagster.io/api/api-lifecycle/filtering-api-lifecycle-warnings)
warnings.filterwarnings("ignore", category=dg.BetaWarning)
warnings.filterwarnings("ignore", category=dg.PreviewWarning)


@dg.definitions
def defs() -> dg.Definitions:
    # The package loader, not dg's components loader: the latter builds a component library snapshot
    # on every load that a folder of plain Python modules does not need.
    loaded = dg.load_definitions_from_package_module(pipeline.defs)
    # One process: the multiprocess executor starts a process (imports, definitions) for every step.
    return dg.Definitions.merge(
        loaded,
        dg.Definitions(
            executor=dg.in_process_executor,
            resources={"warehouse": warehouse_resource()},
        ),
    )
