"""The GPU side of a bisect: ``python3 runner.py plan.json out_dir [--repo CLONE] [--python PY]``.

Standard library only (a GPU host has torch and Triton, not the warehouse's stack): it runs
upstream's harness at the plan's commits (harness.py), judges runs by their own spread against the
minimum effect (judge.py), decides the next commit, and writes everything it measured under ``out_dir``:
  commit_runs/<sha>/<run id>/all_benchmark_data.csv, environment.json, harness.log
  environment.json, result.json, result.md
The warehouse ingests ``commit_runs/`` (pipeline/ingest/commit_runs.py). Rules: docs/bisect.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import sys
from pathlib import Path

if __package__:
    from . import harness, judge, result_md
else:  # python3 pipeline/bisect/runner.py: its siblings, without the (isolated) script folder on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import harness
    import judge
    import result_md

PLAN_FORMAT = "liger-bisect-plan/1"
# MIN_EFFECT's documented defaults (pipeline/config.py repeats them for the warehouse side):
# upstream's memory figures are exact (710 memory series moved by exactly 0 between same-commit runs)
DEFAULT_MIN_EFFECT = {"speed": 0.05, "memory": 0.0}
OUTCOMES = ("culprit", "reproduced", "not_reproduced", "no_kernel_change", "inconclusive", "harness_failed")


class Bisect:
    """One plan's runs: every harness run, the samples per commit, the log of decisions."""

    def __init__(self, plan: dict, out: Path, git_dir: Path, python: str, scratch: Path):
        self.plan, self.out, self.git_dir, self.python, self.scratch = plan, out, git_dir, python, scratch
        self.sweep = {k: plan.get(k) for k in ("kernel", "provider", "pass", "metric", "config")}
        self.narrow = {
            "metric": plan.get("metric") or "", "pass": plan.get("pass") or "", "config": plan.get("config") or "",
            "providers": plan.get("providers") or "",
        } if plan.get("narrow", True) else {}  # fmt: skip
        self.sweep_source = plan.get("sweep_source") or "given"
        self.samples: dict[str, list[float]] = {}
        self.runs: list[dict] = []
        self.exports: dict[str, Path] = {}
        self.skipped: list[dict] = []
        self.steps: list[dict] = []
        self.notes: list[str] = []
        self.gpu: str | None = None
        self.environment: dict = {}

    def run_once(self, sha: str, role: str) -> bool:
        """One harness run of ``sha``; its value joins the samples. False when the harness failed."""
        seq = len(self.runs) + 1
        run_id = f"{seq:03d}-{role}"
        folder = self.out / "commit_runs" / sha / run_id
        folder.mkdir(parents=True, exist_ok=True)
        record = {"run_id": run_id, "commit": sha, "role": role, "ok": False, "value": None}
        self.runs.append(record)
        try:
            if sha not in self.exports:
                self.exports[sha] = self.scratch / sha
                harness.export_commit(self.git_dir, sha, self.exports[sha])
        except (harness.GitError, OSError) as exc:
            record["reason"] = f"export failed: {exc}"
            return False
        got = harness.run_harness(
            self.exports[sha], self.plan["kernel"], self.python, self.narrow,
            float(self.plan.get("harness_timeout_s", 900)), folder / "harness.log",
        )  # fmt: skip
        if not got.ok:
            record["reason"] = got.reason
            return False
        shutil.copyfile(got.csv_path, folder / harness.CSV_NAME)
        (folder / "environment.json").write_text(json.dumps(self.environment, indent=2) + "\n")
        if not (self.sweep["pass"] and self.sweep["metric"]):
            self.pick_sweep(folder / harness.CSV_NAME)
        value, rows, gpu = harness.sweep_value(folder / harness.CSV_NAME, self.sweep)
        if value is None:
            record["reason"] = "the run wrote no row of the judged sweep " + harness.describe_missing(
                folder / harness.CSV_NAME, self.sweep
            )
            return False
        self.gpu = self.gpu or gpu
        record.update(ok=True, value=value, points=len(rows))
        self.samples.setdefault(sha, []).append(value)
        return True

    def pick_sweep(self, csv_path: Path) -> None:
        """PASS and METRIC from what the first run at FROM wrote (docs/bisect.md, *Defaults*)."""
        metric, mode = harness.default_sweep(csv_path, self.sweep)
        if metric and mode:
            self.sweep.update(metric=metric, **{"pass": mode})
            self.sweep_source = "what the first run at FROM wrote"
            if self.narrow:
                self.narrow.update(metric=metric, **{"pass": mode})

    def min_effect(self) -> tuple[float, str]:
        """The smallest change that counts: MIN_EFFECT when given, else the documented default of the metric."""
        given = self.plan.get("min_effect") or {}
        if given.get("given") is not None:
            return float(given["given"]), "given (MIN_EFFECT=)"
        metric = self.sweep.get("metric") or "speed"
        value = given.get(metric, DEFAULT_MIN_EFFECT.get(metric, DEFAULT_MIN_EFFECT["speed"]))
        return float(value), f"documented default for {metric}"

    def ci_noise(self) -> tuple[float, str]:
        """Context only: the warehouse's noise model's row for this GPU and the FROM side's duration
        (bucket, then GPU, trusted rows only, as the pair views pick), else the documented default."""
        noise = self.plan["noise"]
        base = sorted(self.samples.get(self.plan["from"]["sha"], []) or [1.0])
        median = base[len(base) // 2]
        bucket = math.floor(math.log10(median)) if self.sweep["metric"] == "speed" and median > 0 else 0
        metric = self.sweep.get("metric") or "speed"
        rows = [
            r
            for r in noise.get("rows", [])
            if r.get("gpu_name") == self.gpu and r.get("trusted") and r.get("metric_name", metric) == metric
        ]
        for scope, want in (("bucket", bucket), ("gpu", None)):
            for r in rows:
                if r["scope"] == scope and (want is None or r["duration_bucket"] == want):
                    return float(r["threshold"]), str(r["threshold_source"])
        d = noise["default"]
        return float(d["threshold"]), f"{d['source']} (no trusted noise row for {self.gpu or 'this GPU'})"

    def flips(self, *shas: str) -> bool:
        return any(judge.levels(self.samples.get(sha, [])) for sha in shas)

    def settle(self, a: str, b: str, min_effect: float) -> judge.Comparison:
        """Compare a and b; while unclear, or while a side flips between levels with fewer than 2 x RUNS
        runs, one more run of the side with fewer (both when even), up to the cap."""
        cap = int(self.plan["max_runs"])
        while True:
            c = judge.compare(self.samples[a], self.samples[b], min_effect)
            na, nb = len(self.samples[a]), len(self.samples[b])
            weighed = not self.flips(a, b) or min(na, nb) >= 2 * int(self.plan["runs"])
            if (c.verdict != judge.UNCLEAR and weighed) or min(na, nb) >= cap:
                return c
            sides = [a] if na < nb else [b] if nb < na else [a, b]
            for sha in sides:
                if not self.run_once(sha, "more"):
                    return c


def _interleaved_ends(b: Bisect) -> str | None:
    """RUNS runs of each end, alternating; the first end whose harness fails stops everything."""
    for _ in range(int(b.plan["runs"])):
        for side in ("from", "to"):
            sha = b.plan[side]["sha"]
            if not b.run_once(sha, side):
                return f"the harness failed at {side.upper()} {sha[:12]}: {b.runs[-1].get('reason')}"
    return None


def _classify(b: Bisect, sha: str, min_effect: float, worse: bool) -> str:
    """'bad' (like TO), 'good' (like FROM) or 'unclear' for a midpoint, adding its runs up to the cap."""
    good, bad = b.plan["from"]["sha"], b.plan["to"]["sha"]
    cap = int(b.plan["max_runs"])
    while True:
        to_good = judge.compare(b.samples[good], b.samples[sha], min_effect)
        to_bad = judge.compare(b.samples[sha], b.samples[bad], min_effect)
        moved = to_good.verdict == judge.DIFFERENT and (to_good.ratio > 1) == worse
        left = to_bad.verdict == judge.DIFFERENT and (to_bad.ratio > 1) == worse
        b.steps[-1].update(vs_from=to_good.to_json(), vs_to=to_bad.to_json())
        if moved and not left:
            return "bad"
        if left and not moved:
            return "good"
        if len(b.samples[sha]) >= cap or not b.run_once(sha, "mid"):
            return "unclear"


def _bisect(b: Bisect, min_effect: float, worse: bool) -> dict:
    """Binary search over the candidates (oldest first): FROM is good, the last candidate carries TO's
    kernel source. A midpoint whose harness fails is skipped (git bisect skip) and a neighbour tried."""
    cands = b.plan["candidates"]
    lo, hi = -1, len(cands) - 1
    skipped: set[int] = set()
    while hi - lo > 1:
        mid = (lo + hi) // 2
        order = sorted((i for i in range(lo + 1, hi) if i not in skipped), key=lambda i: (abs(i - mid), i))
        if not order:
            break
        i = order[0]
        sha = cands[i]["sha"]
        b.steps.append({"commit": sha, "subject": cands[i].get("subject", "")})
        ok = all(b.run_once(sha, "mid") for _ in range(int(b.plan["runs"])))
        if not ok:
            skipped.add(i)
            reason = b.runs[-1].get("reason")
            b.skipped.append({"commit": sha, "subject": cands[i].get("subject", ""), "reason": reason})
            b.steps[-1]["state"] = "skipped"
            continue
        state = _classify(b, sha, min_effect, worse)
        b.steps[-1]["state"] = state
        if state == "unclear":
            b.notes.append(f"{sha[:12]} is neither like FROM nor like TO after {len(b.samples[sha])} runs")
            return {"lo": lo, "hi": hi}
        lo, hi = (lo, i) if state == "bad" else (i, hi)
    return {"lo": lo, "hi": hi, "open": [cands[i]["sha"] for i in range(lo + 1, hi + 1)]}


def execute(plan: dict, out: Path, repo: Path, python: str) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    scratch = harness.scratch_dir()
    try:
        git_dir = harness.open_git_dir(repo, scratch)
        b = Bisect(plan, out, git_dir, python, scratch)
        b.environment = harness.environment(python)
        (out / "environment.json").write_text(json.dumps(b.environment, indent=2) + "\n")
        return _decide(b)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _decide(b: Bisect) -> dict:
    plan = b.plan
    result: dict = {"outcome": None, "culprit": None, "culprit_subject": None, "ratio": None}
    if not plan["candidates"] and not plan.get("confirm"):
        result["outcome"] = "no_kernel_change"
        b.notes.append("no first-parent commit of the range touches the kernel's source: nothing was run")
        return _finish(b, result, None)
    failed = _interleaved_ends(b)
    if failed:
        b.notes.append(failed)
        result["outcome"] = "harness_failed"
        return _finish(b, result, None)
    min_effect = b.min_effect()[0]
    c = b.settle(plan["from"]["sha"], plan["to"]["sha"], min_effect)
    _note_levels(b)
    if not plan["candidates"]:
        result["outcome"] = {judge.DIFFERENT: "reproduced", judge.SAME: "not_reproduced"}.get(c.verdict, "inconclusive")
        if c.verdict == judge.DIFFERENT:
            b.notes.append("no commit of the range touches the kernel's source: the environment or the harness moved")
        return _finish(b, result, c)
    if c.verdict != judge.DIFFERENT:
        result["outcome"] = "not_reproduced" if c.verdict == judge.SAME else "inconclusive"
        return _finish(b, result, c)
    found = _bisect(b, min_effect, worse=c.ratio > 1)
    cands = {x["sha"]: x for x in plan["candidates"]}
    if found.get("open") and len(found["open"]) == 1:
        result["outcome"] = "culprit"
        result["culprit"] = found["open"][0]
        result["culprit_subject"] = cands[found["open"][0]].get("subject")
    else:
        result["outcome"] = "reproduced"
        if found.get("open"):
            b.notes.append(
                "only skipped commits are left: the first bad commit could be any of " + ", ".join(found["open"])
            )
    return _finish(b, result, c)


def _note_levels(b: Bisect) -> None:
    """Say when the runs of one end flip between levels (launch-bound kernels do, from run to run)."""
    for side in ("from", "to"):
        split = judge.levels(b.samples.get(b.plan[side]["sha"], []))
        if split:
            lo, hi = (statistics.median(v) for v in split)
            b.notes.append(
                f"{side.upper()}'s runs flip between levels: {len(split[0])} near {lo:.4g} and {len(split[1])} "
                f"near {hi:.4g} (x{hi / lo:.2f}); more runs were taken, and the rank test, which only asks "
                "which runs sit above which, judged them"
            )


def _finish(b: Bisect, result: dict, c: judge.Comparison | None) -> dict:
    plan = b.plan
    if c is not None:
        result["ratio"] = {"to_over_from": c.ratio, "low": c.ratio_low, "high": c.ratio_high,
                           "level": c.interval_level, "p_value": c.p_value}  # fmt: skip
    min_effect, min_source = b.min_effect()
    noise, noise_source = b.ci_noise()
    result.update(
        plan_id=plan["id"], kernel=plan["kernel"], provider=plan["provider"], **{"pass": b.sweep["pass"]},
        metric=b.sweep["metric"], config=plan.get("config"), sweep_source=b.sweep_source, gpu=b.gpu,
        from_commit=plan["from"]["sha"], to_commit=plan["to"]["sha"],
        candidates=[x["sha"] for x in plan["candidates"]],
        harness_runs=len(b.runs), commits_run=sorted({r["commit"] for r in b.runs}),
        skipped=b.skipped, min_effect=min_effect, min_effect_source=min_source,
        ci_noise={"threshold": noise, "source": noise_source},
        runs_per_side=int(plan["runs"]), max_runs=int(plan["max_runs"]), alpha=judge.ALPHA,
        samples=dict(b.samples), runs=b.runs, steps=b.steps, notes=b.notes,
        environment=b.environment, alert=plan.get("alert"),
    )  # fmt: skip
    (b.out / "result.json").write_text(json.dumps(result, indent=2) + "\n")
    (b.out / "result.md").write_text(result_md.render(result, plan))
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("plan", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--repo", type=Path, default=None, help="the clone (default: $LIGER_GIT_REPO, else the plan's)")
    ap.add_argument("--python", default=None, help="harness interpreter (default: $LIGER_BENCH_PYTHON, else python3)")
    args = ap.parse_args(argv)
    plan = json.loads(args.plan.read_text())
    if plan.get("format") != PLAN_FORMAT:
        print(f"{args.plan}: not a {PLAN_FORMAT} plan", file=sys.stderr)
        return 2
    repo = args.repo or Path(os.environ.get("LIGER_GIT_REPO") or plan.get("repo") or ".")
    python = args.python or os.environ.get("LIGER_BENCH_PYTHON") or "python3"
    try:
        result = execute(plan, args.out, repo, python)
    except harness.GitError as exc:
        print(f"bisect: {exc}", file=sys.stderr)
        return 2
    print(f"{result['outcome']}: {result['harness_runs']} harness run(s); {args.out / 'result.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
