"""Shared helpers for the bad-input, atomicity, concurrency and hostile-data tests."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb

REPO = Path(__file__).resolve().parents[1]
DG = REPO / ".venv" / "bin" / "dg"
CSV_DIR = REPO / "data_raw" / "liger_csv"
KI_DIR = REPO / "data_raw" / "kernelindex"

HEADER = (
    "kernel_name,kernel_provider,kernel_operation_mode,metric_name,metric_unit,x_name,x_label,x_value,"
    "y_value_50,y_value_20,y_value_80,extra_benchmark_config_str,gpu_name,timestamp,liger_version"
)


def row(
    x="1",
    p50="0.5",
    p20="0.4",
    p80="0.6",
    cfg='"{""B"": 8}"',
    ts="2024-09-03 15:31:39",
    gpu="NVIDIA A100",
    kernel="ce",
    version="0.2.1",
) -> str:
    return f"{kernel},liger,forward,speed,ms,V,vocab,{x},{p50},{p20},{p80},{cfg},{gpu},{ts},{version}"


def small_data_raw(dest: Path, n_csv: int = 5, kernelindex: bool = True, skip: int = 0) -> Path:
    """A few real snapshot CSVs (+ the kernelindex sample): a real run in ~10 s."""
    (dest / "liger_csv").mkdir(parents=True, exist_ok=True)
    for p in sorted(CSV_DIR.glob("*.csv"))[skip : skip + n_csv]:
        shutil.copy(p, dest / "liger_csv" / p.name)
    tsv = CSV_DIR / "SNAPSHOTS.tsv"
    if tsv.exists():
        shutil.copy(tsv, dest / "liger_csv" / tsv.name)
    if kernelindex:
        (dest / "kernelindex").mkdir(parents=True, exist_ok=True)
        for p in KI_DIR.iterdir():
            shutil.copy(p, dest / "kernelindex" / p.name)
    return dest


def run_env(data_raw: Path, warehouse: Path, dagster_home: Path, **extra: str) -> dict[str, str]:
    dagster_home.mkdir(parents=True, exist_ok=True)
    if not (dagster_home / "dagster.yaml").exists():
        shutil.copy(REPO / "config" / "dagster.yaml", dagster_home / "dagster.yaml")
    env = dict(os.environ)
    env.update(
        LIGER_DATA_RAW=str(data_raw),
        LIGER_WAREHOUSE=str(warehouse),
        DAGSTER_HOME=str(dagster_home),
        DAGSTER_DISABLE_TELEMETRY="1",
        PYTHONPATH=str(REPO),
        **extra,
    )
    return env


def start_run(env: dict[str, str], log: Path) -> subprocess.Popen:
    """The `make run` path: `dg launch --job liger_warehouse_job` in its own process group (so SIGKILL takes it all)."""
    fh = log.open("ab")
    return subprocess.Popen(
        [str(DG), "launch", "--job", "liger_warehouse_job"],
        cwd=REPO,
        env=env,
        stdout=fh,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def run(env: dict[str, str], log: Path, timeout: float = 240) -> int:
    proc = start_run(env, log)
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill(proc)
        raise


def kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=60)


def facts(db: Path) -> tuple[int, str]:
    """(fact count, digest over every fact's digest and values), read-only like a notebook would."""
    with duckdb.connect(str(db), read_only=True) as con:
        return snapshot(con)


def snapshot(con: duckdb.DuckDBPyConnection) -> tuple[int, str]:
    rows = con.execute(
        "select measurement_digest, p20, p50, p80 from fact_measurement order by measurement_digest"
    ).fetchall()
    return len(rows), hashlib.sha256(repr(rows).encode()).hexdigest()


def wait_for(pred, timeout: float, interval: float = 0.005) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(interval)
    return False


def python() -> str:
    return sys.executable
