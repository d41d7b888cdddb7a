"""The everyday run on the shipped data, against Dagster's own import, in one session.

    python -m bench.shipped [--repeats 3]

Each repeat times, in turn: `python -c "import dagster"` (the floor), `make run`'s command on an
empty warehouse, and the same command again with nothing new. Ratios are taken pair by pair, so
a machine that slows down during the session moves both sides. Writes bench/results/shipped.md.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
from pathlib import Path

from bench.measure import measure_subprocess, pipeline_env
from bench.run import PROJECT, RUN_ID_RE, machine, step_seconds

TARGETS = {"empty warehouse": 8.0, "nothing new": 3.0}


def _once(work: Path) -> dict[str, float]:
    shutil.rmtree(work, ignore_errors=True)
    env = pipeline_env(PROJECT / "data_raw", work / "warehouse", work / "home")
    run = [sys.executable, "-m", "pipeline.cli.run"]
    floor = measure_subprocess([sys.executable, "-c", "import dagster"], cwd=PROJECT, env=env)
    empty = measure_subprocess(run, cwd=PROJECT, env=env)
    again = measure_subprocess(run, cwd=PROJECT, env=env)
    if "nothing new since" not in again["stdout"]:
        raise SystemExit("the second run found something new:\n" + again["stdout"][-2000:])
    return {
        "floor": floor["wall_s"],
        "empty warehouse": empty["wall_s"],
        "nothing new": again["wall_s"],
        "empty peak MB": empty["peak_rss_mb"],
        "empty warehouse steps": _steps(work / "home", empty["stdout"]),
        "nothing new steps": _steps(work / "home", again["stdout"]),
    }


def _steps(home: Path, stdout: str) -> dict[str, float]:
    found = RUN_ID_RE.search(stdout)
    return step_seconds(home, found.group(1)) if found else {}


def _where_the_time_goes(runs: list[dict]) -> list[str]:
    """Median seconds per Dagster step of each case, and what lies outside the steps (interpreter
    start, imports, loading the definitions, Dagster's run start and end, the summary)."""
    lines = ["", "## Where the time goes (median seconds)", ""]
    lines += ["| step | empty warehouse | nothing new |", "|---|---:|---:|"]
    keys = sorted({k for r in runs for case in TARGETS for k in r[f"{case} steps"]})
    medians = {
        case: {k: statistics.median(r[f"{case} steps"].get(k, 0.0) for r in runs) for k in keys} for case in TARGETS
    }
    for key in sorted(keys, key=lambda k: -medians["empty warehouse"][k]):
        lines.append(f"| {key} | {medians['empty warehouse'][key]:.2f} | {medians['nothing new'][key]:.2f} |")
    outside = {case: statistics.median(r[case] - sum(r[f"{case} steps"].values()) for r in runs) for case in TARGETS}
    lines.append(
        f"| outside the steps (start, imports, definitions, run start/end, summary) "
        f"| {outside['empty warehouse']:.2f} | {outside['nothing new']:.2f} |"
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--work", default=str(PROJECT / "bench" / "work" / "shipped"))
    ap.add_argument("--out", default=str(PROJECT / "bench" / "results" / "shipped.md"))
    args = ap.parse_args(argv)
    runs = [_once(Path(args.work)) for _ in range(args.repeats)]
    lines = [
        "# The everyday run on the shipped data",
        "",
        f"Machine: {machine()}. {args.repeats} repeats, medians; ratios pair by pair to `import dagster`.",
        "",
        "| case | wall s (median) | ÷ import dagster (median) | target |",
        "|---|---|---|---|",
        f"| `python -c 'import dagster'` | {statistics.median(r['floor'] for r in runs):.2f} | 1 | |",
    ]
    for case, target in TARGETS.items():
        ratio = statistics.median(r[case] / r["floor"] for r in runs)
        wall = statistics.median(r[case] for r in runs)
        lines.append(f"| `make run`, {case} | {wall:.2f} | ×{ratio:.1f} | ≤ ×{target:g} |")
    peak = statistics.median(r["empty peak MB"] for r in runs)
    lines += ["", f"Peak RSS of the empty-warehouse run: {peak:.0f} MB."]
    lines += _where_the_time_goes(runs)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
