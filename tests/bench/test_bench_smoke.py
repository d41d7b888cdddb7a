"""CI runs the benchmark at a tiny size as a smoke test: it must produce its table; no timing is asserted."""

import csv
import re
import subprocess
import sys

from tests.conftest import PROJECT


def test_bench_smoke_writes_its_table(tmp_path):
    out = tmp_path / "results"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.run", "--smoke", "--work", str(tmp_path / "work"), "--out", str(out)],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = list(csv.DictReader((out / "smoke.csv").open()))
    cases = {r["case"] for r in rows}
    assert {
        "pipeline_full",
        "pipeline_normalize_steps",
        "floor_duckdb_total",
        "baseline",
        "pipeline_incremental_2500",
    } <= cases
    assert all(float(r["wall_s"]) > 0 for r in rows)
    md = (out / "smoke.md").read_text()
    assert "View latency" in md and "| smoke | measurements |" in md and "| smoke | staged_sources |" in md
    # the incremental figure is the median of three runs, each from the full build's state (each one
    # committed as an incremental run: the bench stops otherwise)
    runs = re.search(r"incremental 2,500 rows, each run whole \(the median is quoted\): ([\d., ]+) s", md)
    assert runs and len(runs.group(1).split(", ")) == 3
