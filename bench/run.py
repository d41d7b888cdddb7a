"""`make bench`: the pipeline vs the bare-parse floor vs a straightforward baseline, side by side.

    python -m bench.run                      # 1M and 10M CSV rows (100k / 1M bundles); baseline at 1M
    python -m bench.run --smoke              # tiny sizes, for CI (no timing assertions anywhere)
    python -m bench.run --sizes 1m --baseline-max 1m

Every case runs in its own process (wall time and peak RSS from wait4). The pipeline case is the
same path as `make run`: `dg launch --job liger_warehouse_job` against a fresh warehouse. Results go to
bench/results/latest.{md,csv} together with the machine they came from.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import sys
import time
from pathlib import Path

import duckdb

from bench import floor, report_step
from bench.generate import generate, write_extra_snapshot
from bench.measure import measure_callable, measure_subprocess, pipeline_env, result_row, write_table
from bench.partitions import bench_partitions

PROJECT = Path(__file__).resolve().parents[1]
PARTITION_SIZES = {"1m"}  # 2 workers vs 1 on the 1 M case (a run per partition: too slow for the CI smoke)
SIZES = {
    "smoke": (20_000, 2_000),
    "100k": (100_000, 10_000),
    "1m": (1_000_000, 100_000),
    "3m": (3_000_000, 300_000),
    "10m": (10_000_000, 1_000_000),
}


def _parse_size(text: str) -> int:
    text = text.lower()
    return SIZES[text][0] if text in SIZES else int(float(text))


def run_pipeline(data: Path, warehouse: Path, home: Path) -> dict:
    """`make run`'s own command (the job in one process, then its summary), measured whole; with
    ``steps``, each step's wall time as the Dagster instance recorded it, and ``committed``, the
    warehouse run it committed and its mode (("2", "incremental"); None when it printed none). The disk
    is flushed first: the gigabytes the run before wrote (a deep full build's) are that run's cost, and
    left to the kernel's writeback they slowed this one's copy of liger.duckdb fivefold (bench/HISTORY.md)."""
    os.sync()
    result = measure_subprocess(
        [sys.executable, "-m", "pipeline.cli.run"], cwd=PROJECT, env=pipeline_env(data, warehouse, home)
    )
    found = RUN_ID_RE.search(result["stdout"])
    result["steps"] = step_seconds(home, found.group(1)) if found else {}
    committed = COMMITTED_RE.search(result["stdout"])
    result["committed"] = committed.groups() if committed else None
    return result


RUN_ID_RE = re.compile(r"^run:\s+\w+ \(([0-9a-f-]{36})\)", re.M)
COMMITTED_RE = re.compile(r"^committed:\s+warehouse run (\d+) \((\w+)", re.M)


def step_seconds(home: Path, run_id: str) -> dict[str, float]:
    """Per-step wall time of one run, from the instance's event log."""
    import dagster as dg

    with dg.DagsterInstance.from_config(str(home)) as instance:
        return {
            s.step_key: (s.end_time or s.start_time) - s.start_time
            for s in instance.get_run_step_stats(run_id)
            if s.start_time is not None
        }


def view_latencies(db: Path, repeats: int = 3) -> list[tuple[str, float, int]]:
    """Warm latency of each view: the best of `repeats` full scans (every column) after one warm-up scan."""
    out = []
    with duckdb.connect(str(db), read_only=True) as con:
        con.execute("set enable_progress_bar = false")
        views = [
            r[0]
            for r in con.execute(
                "select view_name from duckdb_views() where not internal and schema_name = 'main' order by 1"
            ).fetchall()
        ]
        for v in views:
            # hash every column so the scan really reads all of them (a bare count(*) is answered from metadata)
            q = f'select count(*), sum(hash(columns(*))) from "{v}"'
            rows = con.execute(q).fetchone()[0]
            best = float("inf")
            for _ in range(repeats):
                t0 = time.perf_counter()
                con.execute(q).fetchone()
                best = min(best, time.perf_counter() - t0)
            out.append((v, best, rows))
    return out


TYPICAL_QUERIES = {
    "one kernel's trend on one GPU": """
        select liger_version, kernel_provider, count(*), median(p50) from measurements
        where kernel_name = (select any_value(kernel_name) from measurements)
          and gpu_name = (select any_value(gpu_name) from measurements) group by all""",
    "what regressed in the newest version": """
        select * from sweep_regressions
        where to_version = (select liger_version from liger_versions where is_newest) and verdict = 'regression'""",
    "facts per GPU and release": "select gpu_name, liger_version, count(*) from measurements group by all",
    "quarantine by reason": "select reason, count(*) from quarantine group by reason",
}


def query_latencies(db: Path, repeats: int = 3) -> list[tuple[str, float]]:
    out = []
    with duckdb.connect(str(db), read_only=True) as con:
        con.execute("set enable_progress_bar = false")
        for name, q in TYPICAL_QUERIES.items():
            con.execute(q).fetchall()
            best = float("inf")
            for _ in range(repeats):
                t0 = time.perf_counter()
                con.execute(q).fetchall()
                best = min(best, time.perf_counter() - t0)
            out.append((name, best))
    return out


# A single whole run on a shared host spreads widely between sittings: the incremental figure is
# the median of this many runs, each into the state the full build left.
INCREMENTAL_RUNS = 3


def bench_incremental(
    label: str, data: Path, wh: Path, home: Path, full_s: float, results: list[dict], step_lines: list[str]
) -> None:
    """One new 2,500-row snapshot into the built warehouse (the median of INCREMENTAL_RUNS runs, each
    from the full build's state), then the same inputs again."""
    print(f"[{label}] incremental: one new 2,500-row snapshot, {INCREMENTAL_RUNS} runs", flush=True)
    # the warehouse and the Dagster instance as the full build left them, put back at their own
    # paths before each further run (liger.duckdb names its warehouse)
    kept = wh.parent / "after-full"
    saved = {wh: kept / "warehouse", home: kept / "dagster_home"}
    shutil.rmtree(kept, ignore_errors=True)
    for live, copy in saved.items():
        shutil.copytree(live, copy, symlinks=True)
    extra = write_extra_snapshot(data, rows=2500, seed=7)
    try:
        runs = []
        for i in range(INCREMENTAL_RUNS):
            if i:
                for live, copy in saved.items():
                    shutil.rmtree(live, ignore_errors=True)
                    shutil.copytree(copy, live, symlinks=True)
            runs.append(run_pipeline(data, wh, home))
            committed = runs[-1]["committed"]
            if committed is None or committed[1] != "incremental" or committed != runs[0]["committed"]:
                raise RuntimeError(f"[{label}] incremental run {i + 1} did not commit as the first did: {committed}")
        print(f"[{label}] nothing new: the same inputs again", flush=True)
        same = run_pipeline(data, wh, home)
    finally:
        extra.unlink(missing_ok=True)  # (the next run over this warehouse would rebuild it whole)
        shutil.rmtree(kept, ignore_errors=True)
    inc = sorted(runs, key=lambda r: r["wall_s"])[len(runs) // 2]
    walls = ", ".join(f"{r['wall_s']:.2f}" for r in runs)
    results.append(
        result_row(
            "pipeline_incremental_2500",
            label,
            2500,
            inc["wall_s"],
            inc["peak_rss_mb"],
            ratio=inc["wall_s"] / full_s,
        )
    )
    step_lines.append(f"| {label} | incremental 2,500 rows, each run whole (the median is quoted): {walls} s | — |")
    for name, seconds in sorted(inc["steps"].items(), key=lambda kv: -kv[1])[:6]:
        step_lines.append(f"| {label} | incremental 2,500 rows (the median run): {name} | {seconds:.1f} |")
    results.append(
        result_row("pipeline_nothing_new", label, 0, same["wall_s"], same["peak_rss_mb"], ratio=same["wall_s"] / full_s)
    )


def bench_size(
    label: str,
    csv_rows: int,
    bundles: int,
    work: Path,
    run_baseline: bool,
    results: list[dict],
    latencies: list[str],
    step_lines: list[str],
    partition_sizes: frozenset[str] = frozenset(PARTITION_SIZES),
) -> None:
    data, runs = work / f"data-{label}", work / f"runs-{label}"
    shutil.rmtree(runs, ignore_errors=True)
    if not (data / ".complete").exists():
        shutil.rmtree(data, ignore_errors=True)
        print(f"[{label}] generating {csv_rows:,} CSV rows + {bundles:,} bundles", flush=True)
        generate(data, csv_rows=csv_rows, bundles=bundles, seed=42)
        (data / ".complete").touch()
    rows = csv_rows + bundles

    print(f"[{label}] pipeline (make run: python -m pipeline.cli.run)", flush=True)
    wh, home = runs / "warehouse", runs / "dagster_home"
    full = run_pipeline(data, wh, home)
    results.append(result_row("pipeline_full", label, rows, full["wall_s"], full["peak_rss_mb"]))
    steps = full["steps"]
    normalize = steps.get("staged_sources", 0.0) + steps.get("warehouse_tables", 0.0)
    # the part that does what the baseline does: parse, validate, hash, dedupe, fold, write Parquet
    results.append(result_row("pipeline_normalize_steps", label, rows, normalize))
    for name, seconds in sorted(steps.items(), key=lambda kv: -kv[1]):
        step_lines.append(f"| {label} | {name} | {seconds:.1f} |")
    with duckdb.connect(str(wh / "liger.duckdb"), read_only=True) as con:
        facts = con.execute("select count(*) from measurements").fetchone()[0]
    print(f"[{label}]   {full['wall_s']:.1f} s, {facts:,} facts", flush=True)

    print(f"[{label}] report step alone (write_report, default max_plots)", flush=True)
    rep = measure_callable(report_step.run, wh / "liger.duckdb", runs / "report")
    results.append(result_row("report_step", label, facts, rep["wall_s"], rep["peak_rss_mb"]))
    step_lines.append(
        f"| {label} | report step alone: {rep['result']['flagged_sweeps']:,} flagged sweeps, "
        f"{rep['result']['plots']} plots | {rep['wall_s']:.1f} |"
    )

    print(f"[{label}] floor (bare parse to Parquet)", flush=True)
    floor_total = {"wall_s": 0.0, "peak": 0.0}
    for case in ("duckdb_csv_plain", "duckdb_ndjson"):
        m = measure_callable(floor.CASES[case], data, runs / f"floor-{case}")
        floor_total["wall_s"] += m["wall_s"]
        floor_total["peak"] = max(floor_total["peak"], m["peak_rss_mb"] or 0)
        results.append(result_row(f"floor_{case}", label, m["result"]["rows"], m["wall_s"], m["peak_rss_mb"]))
    m = measure_callable(floor.CASES["polars_csv"], data, runs / "floor-polars_csv")
    results.append(result_row("floor_polars_csv", label, m["result"]["rows"], m["wall_s"], m["peak_rss_mb"]))
    results.append(result_row("floor_duckdb_total", label, rows, floor_total["wall_s"], floor_total["peak"]))

    if run_baseline:
        print(f"[{label}] baseline (csv/json + hashlib + pydantic per record)", flush=True)
        from bench.baseline import run_baseline as baseline

        m = measure_callable(baseline, data, runs / "baseline")
        results.append(result_row("baseline", label, rows, m["wall_s"], m["peak_rss_mb"]))

    bench_incremental(label, data, wh, home, full["wall_s"], results, step_lines)

    if label in partition_sizes:
        print(f"[{label}] partitioned staging: 1 worker vs 2", flush=True)
        bench_partitions(label, data, runs / "partitions", results, step_lines)

    for name, seconds in query_latencies(wh / "liger.duckdb"):
        latencies.append(f"| {label} | query: {name} | — | {seconds * 1000:.0f} |")
    for view, seconds, n in view_latencies(wh / "liger.duckdb"):
        latencies.append(f"| {label} | {view} | {n:,} | {seconds * 1000:.0f} |")


def machine() -> str:
    mem = ""
    try:
        kb = int(next(line for line in open("/proc/meminfo") if line.startswith("MemTotal")).split()[1])
        mem = f", {kb / 1024 / 1024:.0f} GiB RAM"
    except (OSError, StopIteration, ValueError):
        pass
    system = f"{platform.system()} {platform.release()}"
    return (
        f"{platform.machine()}, {os.cpu_count()} cores{mem}, {system}, "
        f"Python {platform.python_version()}, duckdb {duckdb.__version__}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1m,10m", help="comma list of smoke/100k/1m/3m/10m")
    ap.add_argument("--baseline-max", default="1m", help="run the (slow) baseline only up to this size")
    ap.add_argument("--smoke", action="store_true", help="tiny size for CI")
    ap.add_argument("--work", default=str(PROJECT / "bench" / "work"))
    ap.add_argument("--out", default=str(PROJECT / "bench" / "results"))
    ap.add_argument(
        "--partitions",
        default=",".join(sorted(PARTITION_SIZES)),
        help="sizes whose partitioned staging is timed too (1 worker vs 2; minutes at 1m); 'none' for none",
    )
    ap.add_argument("--stem", default="latest", help="results file name: <out>/<stem>.{md,csv}")
    args = ap.parse_args(argv)
    partition_sizes = frozenset(s.strip().lower() for s in args.partitions.split(",")) - {"none", ""}
    sizes = ["smoke"] if args.smoke else [s.strip().lower() for s in args.sizes.split(",") if s.strip()]
    work, out = Path(args.work), Path(args.out)
    work.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    results: list[dict] = []
    latencies = ["| size | view | rows | warm ms |", "|---|---|---:|---:|"]
    step_lines = ["| size | Dagster step | seconds |", "|---|---|---:|"]
    for label in sizes:
        csv_rows, bundles = SIZES[label]
        run_baseline = csv_rows <= _parse_size(args.baseline_max)
        bench_size(label, csv_rows, bundles, work, run_baseline, results, latencies, step_lines, partition_sizes)
    stem = "smoke" if args.smoke else args.stem
    table = write_table(results, out / f"{stem}.md", out / f"{stem}.csv", reference_case="floor_duckdb_total")
    text = (
        f"# Benchmark ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})\n\nMachine: {machine()}\n\n"
        f"ratio = wall time / bare DuckDB parse of the same files (CSV + NDJSON); incremental ratio = "
        f"its wall time / the full build.\n\n{table}\n\n## Full build by Dagster step\n\n"
        + "\n".join(step_lines)
        + "\n\n## View latency (warm, full scan of every column)\n\n"
        + "\n".join(latencies)
        + "\n"
    )
    (out / f"{stem}.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
