"""`make bisect` / `make bisect-plan` / `make bisect-ingest` (docs/bisect.md).

  plan    the plan JSON only (warehouse side: candidates, noise), for a GPU host to run later
  run     plan, then the stdlib runner (``python -I pipeline/bisect/runner.py``) into
          <warehouse>/bisect/<id>/, then one warehouse run that ingests its commit runs
  ingest  one warehouse run over what is there (results copied back from a GPU host)
  queue   drain the plans the alert sensor queued (`make bisect-queue`, pipeline/bisect/queue.py)
The clone is LIGER_GIT_REPO; the harness interpreter LIGER_BENCH_PYTHON (default python3).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from pipeline.bisect.plan import RUNNER, BisectOptions, PlanError, make_plan, write_plan
from pipeline.config import GIT_REPO_ENV, load


def _flag(text: str | None) -> bool:
    return (text or "").strip().lower() in ("1", "true", "yes", "on")


def options(ns: argparse.Namespace) -> BisectOptions:
    return BisectOptions(
        kernel=ns.kernel or "", from_rev=ns.from_rev or "", to_rev=ns.to_rev or "", alert=ns.alert or "",
        **{"pass": ns.pass_ or ""}, metric=ns.metric or "", config=ns.config or "",
        providers=ns.providers or "", runs=int(ns.runs or 3), max_runs=int(ns.max_runs or 8),
        confirm=_flag(ns.confirm), min_effect=float(ns.min_effect) if ns.min_effect else None,
        narrow=(ns.narrow or "1").strip() not in ("0", "false", "no"),
    )  # fmt: skip


def _repo() -> Path:
    repo = load().git_repo_dir
    if repo is None:
        raise PlanError(f"set {GIT_REPO_ENV} to a Liger-Kernel clone")
    return repo


def ingest() -> int:
    """One warehouse run that reads the bisect folder: forced, as the run's 'nothing new' test looks
    at data_raw and the clone only."""
    os.environ["LIGER_REHASH"] = "1"
    from pipeline.cli import run

    return run.main()


def run_bisect(opts: BisectOptions, do_ingest: bool = True) -> int:
    plan = make_plan(_repo(), opts)
    out = load().local / "bisect" / plan["id"]
    path = write_plan(plan, out / "plan.json")
    python = load().harness_python
    # -I: the runner gets no site-packages and no PYTHONPATH, as on a GPU host without our stack
    code = subprocess.call([sys.executable, "-I", str(RUNNER), str(path), str(out), "--repo", str(_repo()),
                            "--python", python])  # fmt: skip
    if code != 0:
        return code
    print((out / "result.md").read_text())
    return ingest() if do_ingest else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bisect", description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=("plan", "run", "ingest", "queue"))
    for name in ("kernel", "from_rev", "to_rev", "alert", "pass_", "metric", "config", "providers", "runs",
                 "max_runs", "confirm", "min_effect", "narrow", "plan_out"):  # fmt: skip
        ap.add_argument("--" + name.rstrip("_").replace("_", "-"), dest=name, default=None)
    ap.add_argument("--no-ingest", action="store_true")
    ns = ap.parse_args(argv)
    if ns.command == "ingest":
        return ingest()
    if ns.command == "queue":  # `make bisect-queue`: drain <warehouse>/bisect/queue/ (pipeline/bisect/queue.py)
        from pipeline.bisect.queue import drain

        return drain()
    if not ns.kernel and not ns.alert:
        print("usage: make bisect KERNEL=<name> FROM=<rev> TO=<rev> [PASS= METRIC= CONFIG= MIN_EFFECT= CONFIRM=1]")
        return 2
    try:
        opts = options(ns)
        if ns.command == "plan":
            plan = make_plan(_repo(), opts)
            target = Path(ns.plan_out) if ns.plan_out else load().local / "bisect" / plan["id"] / "plan.json"
            print(write_plan(plan, target))
            print(f"{len(plan['candidates'])} candidate(s) of {plan['first_parent_commits']} first-parent commit(s)")
            return 0
        return run_bisect(opts, do_ingest=not ns.no_ingest)
    except PlanError as exc:
        print(f"bisect: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
