"""Regression detection on the shipped data: false alarms on known re-runs, recall of synthetic shifts.

    python -m bench.regression_detection                   # scratch warehouse of the shipped data, writes the table
    python -m bench.regression_detection path/to/db.duckdb  # a warehouse that has the commit interface
    python -m bench.regression_detection --json out.json    # results as JSON, the tracked table left alone

The verdicts are THE rule (sql/regress/verdicts/verdicts.sql), run through
``pipeline.regress.judge.judge_measurements``: the chosen measurements on a private connection, with the full
warehouse's noise thresholds.

* **Re-runs** (targets: at most 2 % of sweeps called `regression` or `improvement`):
  - *same commit, two runs*: each commit benchmarked twice (0a62700 and 0a62700-v0.6.4) is split into
    two steps and judged as a pair: ``in-sample`` with the warehouse's thresholds (which these very
    re-runs helped measure), ``held out`` with that GPU's re-runs removed from the noise (defaults);
  - *no kernel change*: consecutive snapshots of a sweep with no commit touching src/liger_kernel/
    between them (``commit_regressions.kernel_changed = false``), as the warehouse judges them.
* **Synthetic shifts** (target: >= 90 % recall at x1.3 on speed sweeps of >= 1 ms): every liger sweep
  of a benchmarked snapshot gets a next step whose liger runs are x(1 + shift) (p20/p50/p80; the
  reference providers unchanged). ``copy``: the snapshot against its own shifted copy; ``rerun``: a
  commit's first run against its *second* run shifted (real run-to-run noise on top). Shift 0 counts
  false alarms. Flagged = `regression`.
"""

from __future__ import annotations

import json
import math
import sys
import tempfile
from pathlib import Path

import duckdb

from pipeline.engine import DuckTarget, run_models
from pipeline.engine.catalog import regress_models
from pipeline.regress.judge import judge_measurements

PROJECT = Path(__file__).resolve().parents[1]
RESULT = PROJECT / "bench" / "results" / "regression_detection.md"
SHIFTS = (0.0, 0.1, 0.3, 0.5)
CALLED = ("regression", "improvement")

_SPLIT_RERUNS = """
with runs as (
    select *,
        dense_rank() over (partition by benchmarked_commit order by snapshot) as run_no,
        count(distinct snapshot) over (partition by benchmarked_commit) as n_runs
    from measurements where commit_order is not null
)
select * exclude (run_no, n_runs) replace (
    commit_order * 2 + (run_no - 1) as commit_order,
    case when run_no > 1 then benchmarked_commit || '-run' || run_no else benchmarked_commit end
        as benchmarked_commit)
from runs where n_runs > 1
"""

# A: the base run (copy: every snapshot; rerun: a commit's first run), B: the shifted one.
_SHIFTED = """
with base as (
    select *,
        dense_rank() over (partition by benchmarked_commit order by snapshot) as run_no,
        count(distinct snapshot) over (partition by benchmarked_commit) as n_runs
    from measurements where commit_order is not null and snapshot is not null
),
a as (
    select * exclude (run_no, n_runs) replace (
        measurement_digest || '-a' as measurement_digest,
        coalesce(extra_config, '') || ' #' || benchmarked_commit as extra_config,
        cast(0 as bigint) as commit_order, 'a' as benchmarked_commit)
    from base where {a_filter}
),
b as (
    select * exclude (run_no, n_runs) replace (
        measurement_digest || '-b' as measurement_digest,
        coalesce(extra_config, '') || ' #' || benchmarked_commit as extra_config,
        cast(1 as bigint) as commit_order, 'b' as benchmarked_commit,
        case when starts_with(kernel_provider, 'liger') then p20 * $f else p20 end as p20,
        case when starts_with(kernel_provider, 'liger') then p50 * $f else p50 end as p50,
        case when starts_with(kernel_provider, 'liger') then p80 * $f else p80 end as p80)
    from base where {b_filter}
)
select * from a union all select * from b
"""
_POOLS = {
    "copy": ("true", "true"),
    "rerun": ("n_runs > 1 and run_no = 1", "n_runs > 1 and run_no = 2"),
}

_SWEEP_DURATION = """
select kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, x_name, extra_config,
       median(p50) as p50
from series_steps where axis = 'commit' and step_rank = 0 and is_liger
group by all
"""


def _verdicts(con, where: str = "true") -> list[dict]:
    cur = con.execute(
        f"""select v.*, d.p50 as sweep_p50 from verdicts v
            left join ({_SWEEP_DURATION}) d using (kernel_name, kernel_provider, kernel_operation_mode,
                metric_name, gpu_name, x_name, extra_config)
            where v.level = 'sweep' and v.axis = 'commit' and {where}"""
    )
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def _rate(rows: list[dict], verdicts=CALLED) -> tuple[int, int, float]:
    n = len(rows)
    k = sum(r["verdict"] in verdicts for r in rows)
    return k, n, (k / n if n else math.nan)


def rerun_results(source) -> list[dict]:
    out = []
    in_sample = judge_measurements(source, _SPLIT_RERUNS)
    rows = _verdicts(in_sample, "v.verdict <> 'insufficient'")
    gpus = sorted({r["gpu_name"] for r in rows})
    called, n, rate = _rate(rows)
    out.append(dict(pool="same commit, two runs", noise="in-sample", sweeps=n, called=called, rate=rate, gpus=gpus))
    in_sample.close()
    # held out: the noise without that GPU's rows (its pairs fall back to the documented default)
    held = judge_measurements(
        source,
        _SPLIT_RERUNS,
    )
    held.execute("delete from noise_floor where gpu_name in (select unnest($g))", {"g": gpus})
    downstream = [m for m in regress_models() if m.name in ("point_pairs", "sweep_pairs", "verdicts")]
    run_models(downstream, DuckTarget(held))
    rows = _verdicts(held, "v.verdict <> 'insufficient'")
    called, n, rate = _rate(rows)
    out.append(dict(pool="same commit, two runs", noise="held out (defaults)", sweeps=n, called=called, rate=rate))
    held.close()
    rows = source.execute(
        "select verdict from commit_regressions where kernel_changed = false and verdict <> 'insufficient'"
    ).fetchall()
    called = sum(r[0] in CALLED for r in rows)
    out.append(
        dict(
            pool="no kernel change between snapshots",
            noise="in-sample",
            sweeps=len(rows),
            called=called,
            rate=called / len(rows) if rows else math.nan,
        )
    )
    return out


def shift_results(source, shifts=SHIFTS) -> list[dict]:
    out = []
    for pool, (a_filter, b_filter) in _POOLS.items():
        for shift in shifts:
            con = judge_measurements(source, _SHIFTED.format(a_filter=a_filter, b_filter=b_filter), {"f": 1 + shift})
            rows = [r for r in _verdicts(con) if r["metric_name"] == "speed" and r["sweep_p50"] is not None]
            con.close()
            for band, keep in (
                ("speed >= 1 ms", lambda r: r["sweep_p50"] >= 1.0),
                ("speed < 1 ms", lambda r: r["sweep_p50"] < 1.0),
            ):
                chosen = [r for r in rows if keep(r)]
                flagged, n, rate = _rate(chosen, ("regression",) if shift else CALLED)
                misses: dict[str, int] = {}
                for r in chosen:
                    if r["verdict"] != "regression":
                        misses[r["verdict"]] = misses.get(r["verdict"], 0) + 1
                out.append(dict(pool=pool, shift=shift, band=band, sweeps=n, flagged=flagged, rate=rate, misses=misses))
    return out


def _fmt(x: float) -> str:
    return "n/a" if isinstance(x, float) and math.isnan(x) else f"{100 * x:.1f} %"


def markdown(reruns: list[dict], shifts: list[dict]) -> str:
    lines = [
        "## Known re-runs: sweeps called `regression` or `improvement` (target <= 2 %)",
        "",
        "| re-run pairs | thresholds | sweeps judged | called | share |",
        "|---|---|---:|---:|---:|",
    ]
    lines += [f"| {r['pool']} | {r['noise']} | {r['sweeps']} | {r['called']} | {_fmt(r['rate'])} |" for r in reruns]
    lines += [
        "",
        "## Synthetic shifts of the liger runs, reference unchanged (target >= 90 % at x1.3, speed >= 1 ms)",
        "",
        "| pool | shift | sweeps | judged | `regression` (shift 0: called) | share | the others |",
        "|---|---:|---|---:|---:|---:|---|",
    ]
    for r in shifts:
        others = ", ".join(f"{k} {v}" for k, v in sorted(r["misses"].items(), key=lambda kv: -kv[1]))
        lines.append(
            f"| {r['pool']} | x{1 + r['shift']:.1f} | {r['band']} | {r['sweeps']} | {r['flagged']} | "
            f"{_fmt(r['rate'])} | {others} |"
        )
    return "\n".join(lines) + "\n"


def scratch_warehouse(path: Path) -> Path:
    """The shipped data (upstream CSVs, H200 runs, gh-pages snapshots with their commits) in a scratch DuckDB."""
    from tests.fixtures import gh_pages_commits, regression

    with duckdb.connect(str(path)) as con:
        gh_pages_commits.shipped_measurements(con)
        regression.build_regression_layer(con)
    return path


def main(argv: list[str]) -> None:
    args = list(argv)
    json_out = None
    if "--json" in args:
        i = args.index("--json")
        json_out = Path(args[i + 1])
        del args[i : i + 2]
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(args[0]) if args else scratch_warehouse(Path(tmp) / "shipped.duckdb")
        with duckdb.connect(str(db), read_only=True) as source:
            reruns, shifts = rerun_results(source), shift_results(source)
    if json_out is not None:
        json_out.write_text(json.dumps({"reruns": reruns, "shifts": shifts}, allow_nan=True))
        return
    table = markdown(reruns, shifts)
    RESULT.parent.mkdir(parents=True, exist_ok=True)
    staging = RESULT.with_suffix(".md.tmp")
    staging.write_text(
        "# Regression detection on the shipped data\n\n"
        "Generated by `python -m bench.regression_detection` (part of `make bench`; see docs/regressions.md).\n\n"
        + table
    )
    staging.replace(RESULT)
    print(table)


if __name__ == "__main__":
    main(sys.argv[1:])
