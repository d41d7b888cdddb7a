"""Partitioned staging: every input as a partition run of `liger_partitioned_staging`, one worker
vs two at once, against staging the same files in one process (no Dagster).

    python -m bench.partitions --data bench/work/data-1m

Dagster overhead per partition = (one worker, all partition runs) - (in-process staging) over the
number of partitions: the cost of a run (process start, code location load, events) per input.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.measure import measure_callable, pipeline_env, result_row
from pipeline.ingest.discovery import discover
from pipeline.ingest.partitions import current_keys
from pipeline.stage.store import StagingStore

PROJECT = Path(__file__).resolve().parents[1]
ADD_PARTITIONS = (
    "import dagster as dg, sys; from pipeline.defs.ingest import source_partitions; "
    "dg.DagsterInstance.get().add_dynamic_partitions(source_partitions.name, sys.argv[1:])"
)


def stage_in_process(data: str, staging: str) -> dict:
    sources, _ = discover(Path(data))
    return StagingStore(Path(staging)).stage(sources) | {"new": None}


def partition_runs(data: Path, work: Path, workers: int) -> tuple[float, int]:
    """Wall time of one `dg launch` per partition, `workers` at a time, on a fresh warehouse."""

    shutil.rmtree(work, ignore_errors=True)
    env = pipeline_env(data, work / "warehouse", work / "dagster_home")
    keys = current_keys(data, None)
    subprocess.run([sys.executable, "-c", ADD_PARTITIONS, *keys], env=env, check=True, cwd=PROJECT)
    dg = Path(sys.executable).parent / "dg"

    def launch(key: str) -> None:
        subprocess.run(
            [str(dg), "launch", "--job", "liger_partitioned_staging", "--partition", key],
            env=env,
            cwd=PROJECT,
            check=True,
            capture_output=True,
        )

    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(launch, keys))
    return time.perf_counter() - t0, len(keys)


def bench_partitions(label: str, data: Path, work: Path, results: list[dict], lines: list[str]) -> None:
    inproc = measure_callable(stage_in_process, str(data), str(work / "inproc-staging"))
    shutil.rmtree(work / "inproc-staging", ignore_errors=True)
    rows = 0
    results.append(result_row("staging_in_process", label, rows, inproc["wall_s"], inproc["peak_rss_mb"]))
    walls = {}
    for workers in (1, 2):
        walls[workers], n = partition_runs(data, work / f"partitions-{workers}w", workers)
        results.append(
            result_row(
                f"staging_partitions_{workers}_worker", label, n, walls[workers], ratio=walls[workers] / walls[1]
            )
        )
    overhead = (walls[1] - inproc["wall_s"]) / n
    lines.append(
        f"| {label} | {n} partitions | 1 worker {walls[1]:.1f} s, 2 workers {walls[2]:.1f} s "
        f"(x{walls[1] / walls[2]:.2f}); in-process staging {inproc['wall_s']:.1f} s; "
        f"Dagster overhead {overhead:.2f} s per partition |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--work", default=str(PROJECT / "bench" / "work" / "partitions"))
    a = ap.parse_args()
    results: list[dict] = []
    lines: list[str] = []
    bench_partitions(Path(a.data).name, Path(a.data), Path(a.work), results, lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
