"""The warehouse side of a bisect: which commits to run and how much noise to allow (docs/bisect.md).

* Candidates: the first-parent commits of FROM..TO (oldest first) whose change against their first
  parent touches the kernel's source under the one rule, ``history.paths.touches_kernel``. A merge on the
  chain counts with everything it brought in.
* Noise: every row of the warehouse's ``noise_floor`` for the metric (the runner picks the row of
  the GPU it runs on and the duration it measures, trusted bucket first, then the GPU's row), and the
  documented default of ``RegressionSettings`` for when none fits, said as such.
The plan is JSON the standard-library runner reads (pipeline/bisect/runner.py).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field

from pipeline.common import duck
from pipeline.config import load
from pipeline.history import git
from pipeline.history.paths import KERNEL_ROOT, touches_kernel
from pipeline.regress.settings import RegressionSettings

PLAN_FORMAT = "liger-bisect-plan/1"
# the GPU side: a standard-library script, run as `python3 -I runner.py plan.json out/`
RUNNER = Path(__file__).resolve().parent / "runner.py"
MAX_RUNS = 8  # per side, the cap on added runs (docs/bisect.md: why 8)


class BisectOptions(BaseModel):
    """`make bisect` variables and the Dagster job's run config: one set of options."""

    kernel: str = Field("", description="KERNEL: the benchmark's kernel_name (benchmark/scripts/benchmark_<kernel>.py)")
    from_rev: str = Field("", description="FROM: the good end (any git revision)")
    to_rev: str = Field("", description="TO: the bad end (any git revision)")
    alert: str = Field("", description="ALERT: an alert id; its range and worst flagged sweep (of KERNEL if given)")
    pass_: str = Field(
        "", alias="pass", description="PASS: kernel_operation_mode of the judged sweep (blank: docs/bisect.md)"
    )
    metric: str = Field("", description="METRIC: speed or memory (blank: as PASS)")
    config: str = Field("", description="CONFIG: extra_benchmark_config_str of the judged sweep (blank: every config)")
    provider: str = Field("liger", description="the judged provider")
    providers: str = Field("", description="PROVIDERS: run only these providers, comma-separated (blank: all)")
    runs: int = Field(3, ge=1, le=50, description="RUNS: runs per side and per bisect step")
    max_runs: int = Field(MAX_RUNS, ge=1, le=100, description="MAX_RUNS: cap on runs per side when unclear")
    confirm: bool = Field(False, description="CONFIRM: re-run both ends even without a candidate")
    min_effect: float | None = Field(
        None, ge=0, le=10, description="MIN_EFFECT: the smallest change that counts (blank: 5 % speed, 0 memory)"
    )
    narrow: bool = Field(True, description="run only the judged pass/metric/config (NARROW=0: the whole harness)")
    harness_timeout_s: float = Field(900, gt=0, description="one harness run's time limit")
    alert_sweep: bool = Field(False, exclude=True, description="internal: the sweep came from ALERT=")

    model_config = {"populate_by_name": True}


class PlanError(ValueError):
    """A range or option that cannot be planned; the message says why."""


def resolve(git_dir: Path, rev: str) -> str:
    full = git.rev_parse(git_dir, rev)
    if full is None:
        raise PlanError(f"{rev!r} is not a commit of the clone")
    return full


def first_parent_changes(git_dir: Path, from_sha: str, to_sha: str) -> list[dict]:
    """First-parent commits of from..to, oldest first, each with its files against its first parent."""
    entries = git.log(
        git_dir,
        f"{from_sha}..{to_sha}",
        fields=("H", "s"),
        files="names",
        options=("--first-parent", "--diff-merges=first-parent", "--no-renames"),
    )
    return [{"sha": e.fields[0], "subject": e.fields[1], "paths": [f.path for f in e.files]} for e in entries][::-1]


def noise_rows(metric: str, duckdb_path: Path | None) -> tuple[list[dict], str | None]:
    """noise_floor's rows for ``metric`` (blank: every metric) from liger.duckdb, or (no rows, why not)."""
    from pipeline.config import duckdb_path as default_path

    path = duckdb_path or default_path()
    if not path.is_file():
        return [], f"no warehouse at {path.name}"
    import duckdb

    try:
        with duck.open_readonly(path) as con:
            cur = con.execute(
                """select metric_name, scope, gpu_name, duration_bucket, trusted, threshold, threshold_source
                from noise_floor where ? in ('', metric_name) order by metric_name, gpu_name, scope, duration_bucket""",
                [metric],
            )
            names = [d[0] for d in cur.description]
            return [dict(zip(names, row, strict=True)) for row in cur.fetchall()], None
    except duckdb.Error as exc:
        return [], f"the warehouse has no readable noise_floor ({type(exc).__name__})"


def default_threshold(metric: str) -> dict:
    s = RegressionSettings()
    if metric == "memory":
        return {"threshold": s.default_memory_threshold, "source": "documented default (default_memory_threshold)"}
    return {"threshold": s.default_noise_threshold, "source": "documented default (default_noise_threshold)"}


def plan_id(opts: BisectOptions, from_sha: str, to_sha: str, now: datetime | None = None) -> str:
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    kernel = re.sub(r"[^a-z0-9_]+", "-", opts.kernel.lower()).strip("-")
    return f"{stamp}-{kernel}-{opts.pass_ or 'auto'}-{from_sha[:7]}-{to_sha[:7]}"


def make_plan(repo: Path, opts: BisectOptions, duckdb_path: Path | None = None) -> dict:
    if opts.alert:
        return plan_from_alert(repo, opts, duckdb_path)
    if not opts.from_rev or not opts.to_rev:
        raise PlanError("give FROM= and TO= (or ALERT=)")
    git_dir = git.open_repo(repo)
    from_sha, to_sha = resolve(git_dir, opts.from_rev), resolve(git_dir, opts.to_rev)
    if git.run(git_dir, "merge-base", "--is-ancestor", from_sha, to_sha, check=False).returncode != 0:
        raise PlanError(f"FROM {opts.from_rev} is not an ancestor of TO {opts.to_rev}")
    chain = first_parent_changes(git_dir, from_sha, to_sha)
    cands = [c for c in chain if touches_kernel(c["paths"], opts.kernel)]
    sweep_source = "given" if opts.pass_ or opts.metric else ""
    if not sweep_source and not opts.alert_sweep:
        opts, sweep_source = flagged_defaults(opts, chain, duckdb_path)
    sweep_source = "the alert's worst flagged sweep" if opts.alert_sweep else sweep_source
    metric = opts.metric or "speed"  # the default's metric before the first run can say
    rows, why = noise_rows(opts.metric, duckdb_path)
    default = default_threshold(metric)
    if why:
        default["source"] += f"; {why}"
    subjects = {c["sha"]: c["subject"] for c in chain}
    settings = load()
    return {
        "format": PLAN_FORMAT,
        "id": plan_id(opts, from_sha, to_sha),
        "repo": str(Path(repo).resolve()),
        "kernel": opts.kernel,
        "provider": opts.provider,
        "providers": opts.providers or None,
        "pass": opts.pass_ or None,
        "metric": opts.metric or None,
        "sweep_source": sweep_source or None,  # None: the runner takes them from the first run at FROM
        "config": opts.config or None,
        "narrow": opts.narrow,
        "from": {"rev": opts.from_rev, "sha": from_sha, "subject": _subject(git_dir, from_sha)},
        "to": {"rev": opts.to_rev, "sha": to_sha, "subject": subjects.get(to_sha, "")},
        "first_parent_commits": len(chain),
        "candidates": [
            {"sha": c["sha"], "subject": c["subject"], "paths": [p for p in c["paths"] if p.startswith(KERNEL_ROOT)]}
            for c in cands
        ],
        "runs": opts.runs,
        "max_runs": max(opts.max_runs, opts.runs),
        "confirm": opts.confirm,
        "harness_timeout_s": opts.harness_timeout_s,
        "min_effect": {
            "given": opts.min_effect,
            "speed": settings.bisect_min_effect_speed,
            "memory": settings.bisect_min_effect_memory,
        },
        "noise": {"rows": rows, "default": default},  # context: the warehouse's CI noise, never the bar
        "planned_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


FLAGGED_SQL = """
select kernel_operation_mode, metric_name, extra_config, from_commit, to_commit
from commit_regressions
where kernel_name = ? and kernel_provider = 'liger' and verdict in ('regression', 'improvement', 'transient')
order by abs(ln(ratio)) desc nulls last, kernel_operation_mode, metric_name, extra_config
"""


def flagged_defaults(opts: BisectOptions, chain: list[dict], duckdb_path: Path | None) -> tuple[BisectOptions, str]:
    """KERNEL without PASS/METRIC/CONFIG: the kernel's worst flagged sweep in the warehouse, one whose
    range lies in FROM..TO first; none (or no warehouse): blank, for the runner's first run at FROM."""
    from pipeline.config import duckdb_path as default_path

    path = duckdb_path or default_path()
    if not path.is_file():
        return opts, ""
    import duckdb

    try:
        with duck.open_readonly(path) as con:
            rows = con.execute(FLAGGED_SQL, [opts.kernel]).fetchall()
    except duckdb.Error:
        return opts, ""
    inside = {c["sha"] for c in chain}
    rows.sort(key=lambda r: not (_in(r[3], inside) or _in(r[4], inside)))  # stable: worst first within each
    if not rows:
        return opts, ""
    mode, metric, config, *_ = rows[0]
    update = {"pass_": mode, "metric": metric, "config": opts.config or config or ""}
    return opts.model_copy(update=update), "the kernel's worst flagged sweep in the warehouse"


def _in(commit: str | None, shas: set[str]) -> bool:
    return bool(commit) and any(s.startswith(commit) for s in shas)


def _subject(git_dir: Path, sha: str) -> str:
    return git.log(git_dir, sha, fields=("s",), options=("-1",))[0].fields[0].strip()


_ALERT_MEMBERS = {  # an alert's flagged rows: the commit axis and the version axis
    "commit": ("commit_regressions", "ratio"),
    "version": ("sweep_regressions", "geomean_ratio"),
}


def plan_from_alert(repo: Path, opts: BisectOptions, duckdb_path: Path | None) -> dict:
    """ALERT=<id>: the alert's range and its worst flagged sweep (of KERNEL when given) become the plan's
    FROM, TO, kernel, pass, metric and config; the plan names the alert, so its result sits beside it."""
    from pipeline.config import duckdb_path as default_path

    path = duckdb_path or default_path()
    if not path.is_file():
        raise PlanError(f"ALERT={opts.alert}: no warehouse at {path} (run `make run` first)")

    with duck.open_readonly(path) as con:
        alert = con.execute(
            "select axis, from_commit, to_commit, gpu_name, status, cause from alerts where alert_id = ?",
            [opts.alert],
        ).fetchone()
        if alert is None:
            raise PlanError(f"ALERT={opts.alert}: no such alert in {path.name} (`make sql Q='from alerts'` lists them)")
        axis, from_rev, to_rev, gpu, status, cause = alert
        table, ratio = _ALERT_MEMBERS.get(axis, _ALERT_MEMBERS["commit"])
        member = con.execute(
            f"""select kernel_name, kernel_operation_mode, metric_name, extra_config from {table}
            where alert_id = ? and (? = '' or kernel_name = ?)
            order by abs(ln({ratio})) desc nulls last, kernel_name, kernel_operation_mode, extra_config limit 1""",
            [opts.alert, opts.kernel, opts.kernel],
        ).fetchone()
    if member is None:
        raise PlanError(f"ALERT={opts.alert}: no flagged sweep of kernel {opts.kernel!r} in this alert")
    git_dir = git.open_repo(repo)
    if axis == "version":
        from_rev, to_rev = _release_rev(git_dir, from_rev), _release_rev(git_dir, to_rev)
    kernel, pass_, metric, config = member
    update = {"kernel": kernel, "pass_": pass_, "metric": metric, "config": opts.config or config or ""}
    update |= {"alert": "", "from_rev": from_rev, "to_rev": to_rev, "alert_sweep": True}
    plan = make_plan(repo, opts.model_copy(update=update), duckdb_path)
    plan["alert"] = {"alert_id": opts.alert, "gpu_name": gpu, "status": status, "cause": cause}
    return plan


def _release_rev(git_dir: Path, version: str) -> str:
    """A version alert's end as a revision of the clone: its release tag (v0.6.4 or 0.6.4)."""
    for rev in (f"v{version}", version):
        try:
            resolve(git_dir, rev)
            return rev
        except PlanError:
            continue
    raise PlanError(f"release {version} has no tag v{version} or {version} in the clone")


def write_plan(plan: dict, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(plan, indent=2, default=str) + "\n")
    return path
