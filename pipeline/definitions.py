"""Code location: every module in pipeline/defs/ plus project-wide executor and resources."""

import warnings
from pathlib import Path

import dagster as dg

from pipeline.defs.resources import warehouse_resource

# dagster marks parts of its own API (e.g. the `*` selection that `dg launch --assets '*'` parses)
# as beta/preview; those warnings address dagster's developers, not this project's users
# (https://docs.dagster.io/api/api-lifecycle/filtering-api-lifecycle-warnings)
warnings.filterwarnings("ignore", category=dg.BetaWarning)
warnings.filterwarnings("ignore", category=dg.PreviewWarning)

# The console logger of every run at INFO: runs started by the sensor or schedule under `make dev`
# would otherwise print each step event at DEBUG. A run can still ask for DEBUG in its run config
# (`loggers: console: config: log_level: DEBUG`), as `make bench` does to time the steps.
console_logger = dg.LoggerDefinition(
    dg.colored_console_logger.logger_fn,
    config_schema={
        "log_level": dg.Field(str, default_value="INFO", is_required=False),
        "name": dg.Field(str, default_value="dagster", is_required=False),
    },
    description="dagster's coloured console logger, INFO by default",
)


@dg.definitions
def defs() -> dg.Definitions:
    loaded = dg.load_from_defs_folder(path_within_project=Path(__file__).parent / "defs")
    # One process: the multiprocess executor costs ~2 s of start-up per step on 2 cores.
    return dg.Definitions.merge(
        loaded,
        dg.Definitions(
            executor=dg.in_process_executor,
            resources={"warehouse": warehouse_resource()},
            loggers={"console": console_logger},
        ),
    )
