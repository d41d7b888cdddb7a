"""The `bisect` job: `make bisect`'s options as run config, launchable from the UI (docs/bisect.md).

One op plans (candidates, noise) from the clone and the warehouse, runs the standard-library runner
into <warehouse>/bisect/<id>/, and then records one warehouse run that ingests its commit runs."""

import subprocess
import sys

import dagster as dg

from pipeline.bisect.plan import RUNNER, BisectOptions, PlanError, make_plan, write_plan
from pipeline.config import child_env, load
from pipeline.defs.resources import WarehouseResource


class BisectConfig(dg.Config):
    kernel: str
    from_rev: str = ""
    to_rev: str = ""
    alert: str = ""
    sweep_pass: str = ""  # PASS (`pass` is a Python keyword); blank: docs/bisect.md, Defaults
    metric: str = ""
    config: str = ""
    providers: str = ""
    runs: int = 3
    max_runs: int = 8
    confirm: bool = False
    min_effect: float | None = None
    narrow: bool = True
    ingest: bool = True


@dg.op(description="Plan, run the harness at the range's commits, and ingest what it measured.")
def bisect_commits(context: dg.OpExecutionContext, config: BisectConfig, warehouse: WarehouseResource) -> dict:
    fields = config.model_dump()
    ingest = fields.pop("ingest")
    opts = BisectOptions(**{"pass": fields.pop("sweep_pass")}, **fields)
    repo = warehouse.git_repo_path()
    if repo is None:
        raise dg.Failure(description="the bisect needs a clone: set LIGER_GIT_REPO (or the resource's git_repo)")
    try:
        plan = make_plan(repo, opts, duckdb_path=warehouse.warehouse_path() / "liger.duckdb")
    except PlanError as exc:
        raise dg.Failure(description=str(exc)) from exc
    out = warehouse.bisect_path() / plan["id"]
    path = write_plan(plan, out / "plan.json")
    python = load().harness_python
    cmd = [sys.executable, "-I", str(RUNNER), str(path), str(out), "--repo", str(repo), "--python", python]
    proc = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise dg.Failure(description=f"the runner failed: {proc.stderr[-2000:]}")
    md = (out / "result.md").read_text()
    context.add_output_metadata({"result": dg.MetadataValue.md(md), "folder": str(out)})
    if ingest:
        # the warehouse job as `make run` runs it, in a process of its own (it takes the run lock)
        env = child_env(LIGER_REHASH="1")
        done = subprocess.run([sys.executable, "-m", "pipeline.cli.run"], env=env, stdin=subprocess.DEVNULL)
        context.log.info(f"ingest run: {'success' if done.returncode == 0 else 'failed'}")
    return {"outcome": md.splitlines()[0], "folder": str(out)}


@dg.job(description="Confirm a range on a GPU, then bisect it to the culprit commit (docs/bisect.md).")
def bisect():
    bisect_commits()
