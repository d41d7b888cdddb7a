"""A deep warehouse: the shipped series points, each measured at N runs (issue 47).

`bench/generate.py` grows the warehouse in width (more kernels, GPUs, x points, a few versions
each); a warehouse that lives grows in depth: weekly CI for years, a run on every merge, bisect
runs. This writes the distinct series points of the shipped CSVs (`data_raw/liger_csv`,
`data_raw/h200_runs`: kernel, provider, pass, metric, x, config, GPU), each measured at ``depth``
runs::

    OUT/liger_csv/<date>_<hex>_all_benchmark_data.csv   runs in time order, about ROWS_PER_FILE a file

* Run r of every point is on the week r before the end of the history; a kernel's points of one run
  share its timestamp (one kernel per timestamp, as upstream's files), each kernel a minute apart.
* Run r is Liger version ``0.<r // 100 + 1>.<r % 100>``: one run per version, as a long CI history
  of releases and dev builds; every 25th version (from the 12th) is measured twice, a day apart, so the
  history's noise is measured (issue 57); `write_deep_rerun` adds one more run of the newest version.
* ``axis=RELEASES`` (issue 57): the release axis instead, one run per release numbered as upstream
  does (``0.<r // 40>.<r % 40>``), every three days, ending years in the past (2025-03-01).
* Values are the point's newest shipped p20/p50/p80 scaled per run by a run-to-run wobble (log-normal,
  3 %, clipped to 10 %) and by each kernel and GPU's level, which moves by ×1.3 (either way) at a few
  runs: lasting shifts for the regression layer to find. Memory rows keep p20 = p50 = p80.

Deterministic for a seed; vectorized (polars), no Python loop per row.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import numpy as np
import polars as pl

from bench.generate import IDENTITY_KEY
from pipeline.contracts.kernelindex import CSV_COLUMNS

PROJECT = Path(__file__).resolve().parents[1]
SHIPPED = ("liger_csv", "h200_runs")
ROWS_PER_FILE = 550_000
WEEK_S = 7 * 86400
END = int(datetime(2026, 8, 1, tzinfo=UTC).timestamp())
WOBBLE_SIGMA, WOBBLE_MAX = 0.03, 0.10
RERUN_EVERY = 25  # every 25th version is measured twice
SHIFT, SHIFT_RATE = 1.3, 0.01  # a kernel/GPU's level moves ×1.3 at about 1 % of its runs
KEY = [c for c in IDENTITY_KEY if c not in ("timestamp", "liger_version")]  # a series point


def shipped_points(data_raw: Path = PROJECT / "data_raw", limit: int | None = None) -> pl.DataFrame:
    """The distinct series points of the shipped CSVs with their newest values, in a fixed order;
    ``limit``: the first points of that order (a small deep warehouse for tests)."""
    files = [str(p) for sub in SHIPPED for p in sorted((data_raw / sub).glob("*.csv"))]
    types = {"x_value": "VARCHAR", "extra_benchmark_config_str": "VARCHAR", "x_label": "VARCHAR"}
    with duckdb.connect() as con:
        con.execute("set enable_progress_bar = false")
        frame = con.sql(
            f"""select * exclude (timestamp, liger_version) from read_csv($files, union_by_name = true,
                    header = true, types = {types!r})
                where y_value_50 > 0
                qualify row_number() over (partition by {", ".join(KEY)} order by timestamp desc) = 1
                order by {", ".join(f"{c} nulls first" for c in KEY)}""",
            params={"files": files},
        ).to_arrow_table()
    frame = pl.from_arrow(frame)
    return frame.head(limit) if limit else frame


def _levels(rng: np.random.Generator, groups: int, depth: int) -> np.ndarray:
    """Each (kernel, GPU)'s level per run: ×SHIFT up or down at about SHIFT_RATE of its runs."""
    moves = rng.random((groups, depth)) < SHIFT_RATE
    moves[:, 0] = False
    signs = np.where(rng.random((groups, depth)) < 0.5, -1.0, 1.0)
    return np.exp(np.cumsum(moves * signs * np.log(SHIFT), axis=1))


@dataclass(frozen=True)
class Axis:
    """How a deep history's runs are laid out: the version of run r, and when it ran."""

    name: str
    end: int  # the newest run's time (epoch seconds)
    spacing_s: int  # between consecutive runs
    version: Callable[[int], str]


def version(run: int) -> str:
    return f"0.{run // 100 + 1}.{run % 100}"


def release(run: int) -> str:
    """Releases as upstream numbers them (minor series of a few dozen patch releases)."""
    return f"0.{run // 40}.{run % 40}"


# the commit-era CI history: a run a week, up to the present
WEEKLY = Axis("weekly", END, WEEK_S, version)
# the release axis (issue 57): one run per release, every few days, years in the past
RELEASES = Axis("release", int(datetime(2025, 3, 1, tzinfo=UTC).timestamp()), 3 * 86400, release)


def deep_frame(points: pl.DataFrame, runs: np.ndarray, depth: int, seed: int, axis: Axis = WEEKLY) -> pl.DataFrame:
    """``points`` at the run indexes ``runs`` (of a history ``depth`` runs deep), upstream's columns."""
    rng = np.random.default_rng([seed, 47])
    kernels = points["kernel_name"].unique(maintain_order=True).to_list()
    groups = points.select(pl.concat_str("kernel_name", "gpu_name")).to_series()
    group_id = groups.rank("dense").cast(pl.Int64).to_numpy() - 1
    levels = _levels(rng, int(group_id.max()) + 1, depth)
    kernel_id = points["kernel_name"].replace_strict(kernels, list(range(len(kernels)))).to_numpy()
    n, m = len(points), len(runs)
    run = np.repeat(runs, n)
    point = np.tile(np.arange(n), m)
    # the wobble of run r at point p is drawn for the whole history, so a run reads the same
    # whichever slice of runs is written
    wobble = np.exp(np.clip(rng.normal(0.0, WOBBLE_SIGMA, (depth + 1, n)), -WOBBLE_MAX, WOBBLE_MAX))
    scale = wobble[run, point] * levels[group_id[point], np.minimum(run, depth - 1)]
    ts = axis.end - (depth - 1 - run) * axis.spacing_s + kernel_id[point] * 60
    frame = points[point]
    return frame.with_columns(
        (pl.col("y_value_50") * scale).alias("y_value_50"),
        pl.when(pl.col("metric_name") == "memory")
        .then(pl.col("y_value_50") * scale)
        .otherwise(pl.col("y_value_20") * scale)
        .alias("y_value_20"),
        pl.when(pl.col("metric_name") == "memory")
        .then(pl.col("y_value_50") * scale)
        .otherwise(pl.col("y_value_80") * scale)
        .alias("y_value_80"),
        pl.Series("timestamp", ts * 1000).cast(pl.Datetime("ms")).dt.strftime("%Y-%m-%d %H:%M:%S"),
        pl.Series("liger_version", [axis.version(min(r, depth - 1)) for r in runs]).gather(np.repeat(np.arange(m), n)),
    ).select(list(CSV_COLUMNS))


def rerun_frame(
    points: pl.DataFrame, runs: np.ndarray, depth: int, seed: int, axis: Axis = WEEKLY, day: int = 1
) -> pl.DataFrame:
    """Runs ``runs`` of every point measured once more, ``day`` days later, each value moved by its own
    run-to-run wobble: a re-run of the same version (a bisect, a gate run with `--record`)."""
    frame = deep_frame(points, runs, depth, seed, axis)
    rng = np.random.default_rng([seed, 57, day])
    wobble = pl.Series(np.exp(np.clip(rng.normal(0.0, WOBBLE_SIGMA, len(frame)), -WOBBLE_MAX, WOBBLE_MAX)))
    ts = pl.col("timestamp").str.to_datetime("%Y-%m-%d %H:%M:%S") + pl.duration(days=day)
    return frame.with_columns(
        *(pl.col(c) * wobble for c in ("y_value_20", "y_value_50", "y_value_80")),
        ts.dt.strftime("%Y-%m-%d %H:%M:%S").alias("timestamp"),
    )


def _write(frame: pl.DataFrame, out: Path, tag: int) -> Path:
    last = datetime.strptime(frame["timestamp"].max(), "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    path = out / f"{last:%Y-%m-%d}_{tag:010x}_all_benchmark_data.csv"
    frame.write_csv(path)
    return path


def generate_deep(
    out_dir: str | Path, depth: int, seed: int = 0, limit: int | None = None, axis: Axis = WEEKLY
) -> dict:
    """Write the shipped points at ``depth`` runs each (``limit``: only the first points)."""
    points = shipped_points(limit=limit)
    out = Path(out_dir) / "liger_csv"
    out.mkdir(parents=True, exist_ok=True)
    per_file = max(1, ROWS_PER_FILE // len(points))
    paths = []
    for first in range(0, depth, per_file):
        runs = np.arange(first, min(depth, first + per_file), dtype=np.int64)
        paths.append(_write(deep_frame(points, runs, depth, seed, axis), out, 0xD0000 + first))
    # a history that lives has re-runs (so its noise is measured): every RERUN_EVERY-th version twice
    reruns = np.arange(RERUN_EVERY // 2, depth - 1, RERUN_EVERY, dtype=np.int64)
    for first in range(0, len(reruns), per_file):
        frame = rerun_frame(points, reruns[first : first + per_file], depth, seed, axis)
        paths.append(_write(frame, out, 0xC0000 + first))
    return {
        "out_dir": str(out_dir),
        "points": len(points),
        "depth": depth,
        "rows": len(points) * (depth + len(reruns)),
        "files": len(paths),
    }


def write_deep_rerun(
    out_dir: str | Path, depth: int, seed: int = 0, limit: int | None = None, axis: Axis = WEEKLY, day: int = 0
) -> Path:
    """One more run of every point (``limit``: of the first points only): the newest version measured
    again, one spacing after the history's end (and ``day`` days later, with its own wobble: another run)."""
    points = shipped_points(limit=limit)
    runs = np.array([depth], dtype=np.int64)
    frame = rerun_frame(points, runs, depth, seed, axis, day) if day else deep_frame(points, runs, depth, seed, axis)
    return _write(frame, Path(out_dir) / "liger_csv", 0xE0000 + depth + day * 0x100000)


def write_deep_next_version(
    out_dir: str | Path,
    depth: int,
    seed: int = 0,
    limit: int | None = None,
    axis: Axis = WEEKLY,
    day: int = 2,
    version: str | None = None,
) -> Path:
    """The next version (ranked after every one the history measured) of the first ``limit`` points,
    ``day`` days after the history's end: the weekly run of a new release, which measures no noise.
    ``version``: another version's text instead (ranked anywhere: a backport, a second spelling)."""
    frame = deep_frame(shipped_points(limit=limit), np.array([depth], dtype=np.int64), depth, seed, axis)
    ts = pl.col("timestamp").str.to_datetime("%Y-%m-%d %H:%M:%S") + pl.duration(days=day)
    frame = frame.with_columns(
        pl.lit(version or axis.version(depth)).alias("liger_version"),
        ts.dt.strftime("%Y-%m-%d %H:%M:%S").alias("timestamp"),
    )
    return _write(frame, Path(out_dir) / "liger_csv", 0xE0000 + depth + day * 0x100000)


def rerun_files(out_dir: str | Path, depth: int) -> list[Path]:
    """The files `write_deep_rerun` and `write_deep_next_version` wrote for ``depth`` (any ``day``) that
    are still there: a bench killed between its new runs leaves them, and the next full build would hold them."""
    found = []
    for path in (Path(out_dir) / "liger_csv").glob("*_all_benchmark_data.csv"):
        tag = path.name.split("_")[1]
        if all(c in "0123456789abcdef" for c in tag) and int(tag, 16) % 0x100000 == 0xE0000 + depth:
            found.append(path)
    return found


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--depth", type=int, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=int, default=None, help="only the first N series points")
    ap.add_argument("--releases", action="store_true", help="the release axis (one run per release, in the past)")
    a = ap.parse_args(argv)
    print(json.dumps(generate_deep(a.out, a.depth, a.seed, a.limit, RELEASES if a.releases else WEEKLY)))


if __name__ == "__main__":
    main()
