"""`liger-bench bisect plan|run|ingest|queue` (`make bisect`, `bisect-plan`, `bisect-ingest`, `bisect-queue`;
docs/bisect.md).

  plan    the plan JSON only (warehouse side: candidates, noise), for a GPU host to run later
  run     plan, then the stdlib runner (``python -I pipeline/bisect/runner.py``) into
          <warehouse>/bisect/<id>/, then one warehouse run that ingests its commit runs
  ingest  one warehouse run over what is there (results copied back from a GPU host)
  queue   drain the plans the alert sensor queued (`make bisect-queue`, pipeline/bisect/queue.py)
The clone is LIGER_GIT_REPO; the harness interpreter LIGER_BENCH_PYTHON (default python3).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from pydantic import ValidationError

from pipeline.bisect.plan import RUNNER, BisectOptions, PlanError, make_plan, write_plan
from pipeline.config import GIT_REPO_ENV, SettingsError, load, rehash_from_now_on
from pipeline.history.git import GitError


def _flag(text: str | None) -> bool:
    return (text or "").strip().lower() in ("1", "true", "yes", "on")


def options(ns: argparse.Namespace) -> BisectOptions:
    return BisectOptions(
        kernel=ns.kernel or "", from_rev=ns.from_rev or "", to_rev=ns.to_rev or "", alert=ns.alert or "",
        **{"pass": ns.pass_ or ""}, metric=ns.metric or "", config=ns.config or "",
        providers=ns.providers or "", runs=ns.runs or 3, max_runs=ns.max_runs or 8,
        confirm=_flag(ns.confirm), min_effect=ns.min_effect,
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
    rehash_from_now_on()
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
    from pipeline.cli.parser import parse

    return run(parse(["bisect", *(sys.argv[1:] if argv is None else argv)]))


def _plan(opts: BisectOptions, plan_out: str | None) -> int:
    plan = make_plan(_repo(), opts)
    target = Path(plan_out) if plan_out else load().local / "bisect" / plan["id"] / "plan.json"
    print(write_plan(plan, target))
    print(f"{len(plan['candidates'])} candidate(s) of {plan['first_parent_commits']} first-parent commit(s)")
    return 0


def run(ns: argparse.Namespace) -> int:
    """`liger-bench bisect plan|run|ingest` (the arguments of pipeline/cli/parser.py): a bad option, a
    missing clone or a range that cannot be planned is one line and exit 2, before any harness run."""
    if ns.step == "ingest":
        return ingest()
    if ns.step == "queue":  # `make bisect-queue`: drain <warehouse>/bisect/queue/ (pipeline/bisect/queue.py)
        from pipeline.bisect.queue import drain

        return drain()
    if not ns.kernel and not ns.alert:
        print(f"bisect {ns.step}: name a kernel or an alert (--kernel NAME --from-rev REV --to-rev REV, or --alert ID)",
              file=sys.stderr)  # fmt: skip
        return 2
    try:
        opts = options(ns)
        if ns.step == "plan":
            return _plan(opts, ns.plan_out)
        return run_bisect(opts, do_ingest=not ns.no_ingest)
    except ValidationError as exc:
        problems = "; ".join(f"--{str(e['loc'][0]).rstrip('_').replace('_', '-')}: {e['msg']}" for e in exc.errors())
        print(f"bisect {ns.step}: {problems}", file=sys.stderr)
        return 2
    except (PlanError, GitError, SettingsError) as exc:
        print(f"bisect {ns.step}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
