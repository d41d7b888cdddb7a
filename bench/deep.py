"""`make bench`'s deep case (issues 47, 57): the shipped series points at 100, 222 and 1,000 runs each.

    python -m bench.deep                       # depths 100, 222, 1000, 2,500 rows after each
    python -m bench.deep --depths 100,300 --limit 500   # fewer points (a quick look)
    python -m bench.deep --depths "" --releases 680     # the release axis alone (issue 57)
    python -m bench.deep --depths 222 --releases 0     # 2,500 rows into 1 M rows (issue 57)

Per depth, in fresh processes: `make run`'s command on an empty warehouse (wall, peak RSS, each
Dagster step, each model of the DuckDB build from the `liger_duckdb` materialization's metadata),
DuckDB's bare parse of the same files (the floor), and one new run of every series into the built
warehouse (`write_deep_rerun`: the newest version measured again), then two new runs of the first
`--partial` series points (2,500 rows; 0: none): the newest version measured once more (it moves the
measured noise), then the next version (`write_deep_next_version`). Then how each model's seconds grow
with depth: the exponent k of seconds ~ depth^k between the two deepest depths, against n log n's
(k of n log n itself over that range). Writes bench/results/deep.{md,csv}.
"""

from __future__ import annotations

import argparse
import functools
import math
import shutil
import time
from pathlib import Path

from bench import floor
from bench.generate_deep import (
    RELEASES,
    WEEKLY,
    Axis,
    generate_deep,
    rerun_files,
    write_deep_next_version,
    write_deep_rerun,
)
from bench.measure import measure_callable, result_row, write_table
from bench.run import PROJECT, machine, run_pipeline

# 222 runs of every shipped point are 1.0 M rows: the deep warehouse issue 57 adds 2,500 rows to
DEPTHS = (100, 222, 1000)
PARTIAL = 2500
# the partial new runs, in this order, each from the state the one before left: the newest version
# measured again (a bisect or gate run: it measures noise, which moves), then the next version (the
# weekly run of a new release, which measures none)
PARTIAL_CASES = (("rerun", functools.partial(write_deep_rerun, day=1)), ("next_version", write_deep_next_version))
# the release axis (issue 57): upstream's history at about 680 releases a series point
RELEASE_DEPTH = 680
# seconds under this at the deepest depth are fixed cost and timer noise: no growth is read from them
GROWTH_MIN_S = 0.2


def model_build(home: Path) -> tuple[dict[str, float], dict[str, str]]:
    """Each model's seconds, and how it was refreshed ('full', 'N key(s)', ...), in the last
    `liger_duckdb` materialization of the instance at ``home``; the build's phases outside the models
    (its `seconds_per_phase`: the file copied aside, the checkpoint, ...) beside them, in parentheses."""
    import dagster as dg

    with dg.DagsterInstance.from_config(str(home)) as instance:
        event = instance.get_latest_materialization_event(dg.AssetKey("liger_duckdb"))
    metadata = event.asset_materialization.metadata if event else {}
    seconds, refreshed = metadata.get("seconds_per_model"), metadata.get("refreshed")
    phases = metadata.get("seconds_per_phase")
    per_model = dict(seconds.value) if seconds else {}
    per_model |= {f"({k})": v for k, v in (phases.value if phases else {}).items()}
    return per_model, (dict(refreshed.value) if refreshed else {})


def new_run(case: str, data: Path, wh: Path, home: Path) -> dict:
    """The pipeline over the built warehouse with the new files beside the history; it must commit
    incrementally."""
    inc = run_pipeline(data, wh, home)
    if inc["committed"] is None or inc["committed"][1] != "incremental":
        raise RuntimeError(f"[{case}] the new run did not commit incrementally: {inc['committed']}")
    return inc


def bench_depth(depth: int, work: Path, limit: int | None, axis: Axis = WEEKLY, partial: int = 0) -> dict:
    """One depth: the full build, the floor, one new run of every series, then a new run of the first
    ``partial`` series points (when set); the figures as a dict."""
    case = f"deep-{depth}" if axis is WEEKLY else f"{axis.name}-{depth}"
    data, runs = work / case / "data", work / case / "runs"
    shutil.rmtree(runs, ignore_errors=True)
    if not (data / ".complete").exists():
        shutil.rmtree(data, ignore_errors=True)
        print(f"[{case}] generating", flush=True)
        generate_deep(data, depth, limit=limit, axis=axis)
        (data / ".complete").touch()
    for leftover in rerun_files(data, depth):
        leftover.unlink()
    rows = sum(sum(1 for _ in p.open()) - 1 for p in (data / "liger_csv").glob("*.csv"))
    wh, home = runs / "warehouse", runs / "dagster_home"
    print(f"[{case}] full build, {rows:,} rows", flush=True)
    full = run_pipeline(data, wh, home)
    models, _ = model_build(home)
    print(f"[{case}]   {full['wall_s']:.1f} s, peak {full['peak_rss_mb']:.0f} MB", flush=True)
    parse = measure_callable(floor.CASES["duckdb_csv_plain"], data, runs / "floor")
    partials, added = [], []
    try:
        print(f"[{case}] one new run of every series", flush=True)
        added.append(write_deep_rerun(data, depth, limit=limit, axis=axis))
        inc = new_run(case, data, wh, home)
        inc_models, inc_refreshed = model_build(home)
        if partial:
            # after it, from the state it left (a re-run before it moves the judged noise it is measured
            # against), a day later so the two runs share no row (a fact seen again moves to the later run,
            # and the warehouse is then rebuilt whole); every file stays until all ran (a committed file
            # gone also rebuilds it whole)
            for name, write in PARTIAL_CASES:
                added.append(write(data, depth, limit=partial, axis=axis))
                some_rows = sum(1 for _ in added[-1].open()) - 1
                print(f"[{case}] {name}: the first {partial:,} series points ({some_rows:,} rows)", flush=True)
                some = new_run(case, data, wh, home) | {"rows": some_rows, "case": name}
                some["models"], some["refreshed"] = model_build(home)
                partials.append(some)
    finally:
        for extra in added:
            extra.unlink(missing_ok=True)
    print(f"[{case}]   {inc['wall_s']:.1f} s ({inc['wall_s'] / full['wall_s']:.0%} of the full build)", flush=True)
    print("\n".join(model_lines(models, inc_models, inc_refreshed)), flush=True)
    for some in partials:
        share = some["wall_s"] / full["wall_s"]
        print(f"[{case}]   {some['case']}: {some['wall_s']:.1f} s ({share:.0%} of the full build)", flush=True)
        print("\n".join(model_lines(models, some["models"], some["refreshed"])), flush=True)
    return {
        "depth": depth,
        "label": case.replace("-", " "),
        "rows": rows,
        "full": full,
        "models": models,
        "floor_s": parse["wall_s"],
        "incremental": inc,
        "incremental_models": inc_models,
        "incremental_refreshed": inc_refreshed,
        "partials": partials,
    }


def model_lines(full: dict[str, float], new_run: dict[str, float], refreshed: dict[str, str]) -> list[str]:
    """Each model's seconds in the full build and in one new run, and how the new run refreshed it; a
    stored model recomputed whole in the new run is flagged."""
    lines = ["| model | full build, s | one new run, s | refreshed in the new run |", "|---|---:|---:|---|"]
    for name in sorted(set(full) | set(new_run), key=lambda m: -full.get(m, 0.0)):
        how = refreshed.get(name, "")
        flag = " **FULL**" if how.startswith("full") else ""
        lines.append(f"| {name} | {full.get(name, 0.0):.2f} | {new_run.get(name, 0.0):.2f} | {how}{flag} |")
    return lines


def growth_exponent(t1: float, t2: float, d1: int, d2: int) -> float:
    return math.log(t2 / t1) / math.log(d2 / d1)


def nlogn_exponent(d1: int, d2: int) -> float:
    return growth_exponent(d1 * math.log(d1), d2 * math.log(d2), d1, d2)


def _growth_lines(found: list[dict]) -> list[str]:
    """Per model: seconds at each depth, and the exponent between the two deepest against n log n's."""
    depths = [f["depth"] for f in found]
    names = sorted({m for f in found for m in f["models"]}, key=lambda m: -found[-1]["models"].get(m, 0.0))
    head = "| model | " + " | ".join(f"s at {d}" for d in depths) + " | growth | |"
    lines = [head, "|---|" + "---:|" * len(depths) + "---:|---|"]
    limit = nlogn_exponent(depths[-2], depths[-1]) if len(depths) > 1 else None
    for name in names:
        secs = [f["models"].get(name, 0.0) for f in found]
        cells = " | ".join(f"{s:.2f}" for s in secs)
        if limit is None or min(secs[-2:]) <= 0 or secs[-1] < GROWTH_MIN_S:
            lines.append(f"| {name} | {cells} | — | under {GROWTH_MIN_S} s |")
            continue
        k = growth_exponent(secs[-2], secs[-1], depths[-2], depths[-1])
        verdict = "n log n or better" if k <= limit + 0.15 else "**worse than n log n**"
        lines.append(f"| {name} | {cells} | depth^{k:.2f} | {verdict} (n log n: depth^{limit:.2f}) |")
    return lines


def write_results(found: list[dict], out: Path, note: str) -> str:
    results = []
    for f in found:
        full, inc, label = f["full"], f["incremental"], f["label"]
        results.append(result_row("deep_full", label, f["rows"], full["wall_s"], full["peak_rss_mb"]))
        results.append(result_row("floor_duckdb_csv_plain", label, f["rows"], f["floor_s"]))
        for some in f.get("partials", []):
            results.append(
                result_row(
                    f"deep_{some['case']}_{some['rows']}_rows",
                    label,
                    some["rows"],
                    some["wall_s"],
                    some["peak_rss_mb"],
                    ratio=some["wall_s"] / full["wall_s"],
                )
            )
        results.append(
            result_row(
                "deep_one_new_run", label, 0, inc["wall_s"], inc["peak_rss_mb"], ratio=inc["wall_s"] / full["wall_s"]
            )
        )
    table = write_table(results, out / "deep.md", out / "deep.csv", reference_case="floor_duckdb_csv_plain")
    names = [c for c, _ in PARTIAL_CASES]
    runs = " | ".join(f"{n} new run, s" for n in names)
    steps = [f"| case | Dagster step | full build, s | {runs} | one new run, s |"]
    steps.append("|---|---|---:|" + "---:|" * len(names) + "---:|")
    for f in found:
        partials = {p["case"]: p["steps"] for p in f.get("partials", [])}
        for name, s in sorted(f["full"]["steps"].items(), key=lambda kv: -kv[1])[:7]:
            some = " | ".join(f"{partials[n][name]:.1f}" if name in partials.get(n, {}) else "" for n in names)
            steps.append(
                f"| {f['label']} | {name} | {s:.1f} | {some} | {f['incremental']['steps'].get(name, 0.0):.1f} |"
            )
    weekly = [f for f in found if f["label"].startswith("deep")]
    growth = (
        "## Each model of the DuckDB build (full build), and how it grows with depth\n\n"
        + "\n".join(_growth_lines(weekly))
        + "\n\n"
        if weekly
        else ""
    )
    cases = [f for f in (weekly[-1:] + [f for f in found if f not in weekly]) if f]
    per_model = "".join(
        f"## Each model at {f['label']}: the full build and one new run (a stored model recomputed whole in the "
        "new run is flagged **FULL**)\n\n"
        + "\n".join(model_lines(f["models"], f["incremental_models"], f["incremental_refreshed"]))
        + "\n\n"
        for f in cases
    )
    text = (
        f"# Deep history (issues 47, 57; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})\n\n"
        f"Machine: {machine()}. {note}\n\nThe shipped series points at N runs each (`bench/generate_deep.py`): "
        "'deep N' a run a week, one version each; 'release N' one run per release, every three days, years in the "
        "past. ratio = wall time / DuckDB's bare parse of the same CSVs; one new run's ratio = its wall time / the "
        f"full build.\n\n{table}\n## Full build by Dagster step\n\n" + "\n".join(steps) + "\n\n" + growth + per_model
    )
    (out / "deep.md").write_text(text)
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--depths", default=",".join(map(str, DEPTHS)))
    ap.add_argument("--limit", type=int, default=None, help="only the first N series points")
    ap.add_argument("--work", default=str(PROJECT / "bench" / "work"))
    ap.add_argument("--out", default=str(PROJECT / "bench" / "results"))
    ap.add_argument("--note", default="", help="a line about the machine's state (load) for the results")
    ap.add_argument("--releases", type=int, default=RELEASE_DEPTH, help="releases of the release-axis case (0: none)")
    ap.add_argument(
        "--partial",
        type=int,
        default=PARTIAL,
        help="after the new run of every series, one of the first N series points (issue 57: 2,500 rows)",
    )
    args = ap.parse_args(argv)
    found = [
        bench_depth(int(d), Path(args.work), args.limit, partial=args.partial)
        for d in args.depths.split(",")
        if d.strip()
    ]
    if args.releases:
        found.append(bench_depth(args.releases, Path(args.work), args.limit, RELEASES))
    print(write_results(found, Path(args.out), args.note))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
