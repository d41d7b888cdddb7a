"""`make run`: the warehouse job, in this one process, recorded in the Dagster instance of
``$DAGSTER_HOME`` (the UI shows it with its events and checks), then the closing summary of that
run. `dg launch` would start a code server and a run worker process first: seconds of start-up
that the run itself does not need. Scheduled runs and the sensor still go through the daemon.
"""

from __future__ import annotations

import sys

JOB = "liger_warehouse_job"


def main() -> int:
    import dagster as dg

    from pipeline.cli import summary
    from pipeline.config import SettingsError, load
    from pipeline.definitions import defs

    try:
        load()  # a bad setting fails here, before any work, naming its variable
    except SettingsError as exc:
        print(exc, file=sys.stderr)
        return 2
    job = defs().resolve_job_def(JOB)
    with dg.DagsterInstance.get() as instance:
        result = job.execute_in_process(instance=instance, raise_on_error=False)
    summary.main(result.run_id)
    return 0 if result.success else 1


if __name__ == "__main__":
    raise SystemExit(main())
