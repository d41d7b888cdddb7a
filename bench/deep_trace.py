"""The DuckDB build alone, model by model: each model's seconds and the highest RSS while it runs (issue 47).

Finds which model runs out of memory under a limit, over a warehouse already merged (its Delta tables);
``--start MODEL`` goes on in the same file from that model (the earlier ones kept as built).

python -m bench.deep_trace WAREHOUSE DB [--mem 2GB] [--start MODEL] [--only MODEL...]
"""

import argparse
import shutil
import sys
import time
from pathlib import Path

from pipeline.common import duck
from pipeline.engine.catalog import LOOKUP_TABLES, regress_models
from pipeline.engine.incremental import refresh_models
from pipeline.regress.change_points import build_change_points
from pipeline.regress.settings import RegressionSettings
from pipeline.serve import duckdb_build as b
from pipeline.store.warehouse import Warehouse


def hwm_mb() -> float:
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) / 1024
    return 0.0


def reset_hwm() -> None:
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("warehouse")
    ap.add_argument("db")
    ap.add_argument("--mem", default="2GB")
    ap.add_argument("--start", default=None)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--threads", type=int, default=None)
    a = ap.parse_args()
    wh = Warehouse(a.warehouse)
    published = wh.published()
    db = Path(a.db)
    fresh = a.start is None and a.only is None
    if fresh:
        db.unlink(missing_ok=True)
    spill = db.parent / f"spill-{db.name}"
    con = duck.connect(db, temp_dir=spill, memory_limit=a.mem, threads=a.threads)
    t0 = time.perf_counter()
    b.use_internal_schema(con)
    b.create_run_log_view(con, wh, published)
    settings = RegressionSettings()
    b.create_table_views(con, wh.snapshot_files(published), settings, False)
    print(f"views {time.perf_counter() - t0:.1f}s rss {hwm_mb():.0f}MB", flush=True)
    if fresh:
        t = time.perf_counter()
        b.materialize_provenance(con, True, 0)
        print(f"fact_provenance {time.perf_counter() - t:.1f}s hwm {hwm_mb():.0f}MB", flush=True)
    else:
        con.execute("create or replace view fact_provenance as select * from fact_provenance__materialized")
        con.execute("create or replace temp table reattributed_digest (measurement_digest varchar)")
    models = regress_models()
    started = a.start is None
    for m in models:
        if a.start and m.name == a.start:
            started = True
        run = (a.only is None and started) or (a.only is not None and m.name in a.only)
        if not run:
            # the view must exist (stored models: over their kept table)
            if m.materialize:
                b.engine.run.create_view(con, f"{m.name}__definition", m.sql)
                con.execute(f'create or replace view "{m.name}" as select * from "{m.name}__materialized"')
            else:
                b.engine.run.create_view(con, m.name, m.sql)
            continue
        reset_hwm()
        t = time.perf_counter()
        try:
            refresh_models(con, [m], True, 0, False, False, LOOKUP_TABLES)
        except Exception as e:  # noqa: BLE001
            print(f"FAIL {m.name} after {time.perf_counter() - t:.1f}s hwm {hwm_mb():.0f}MB: {e}", flush=True)
            sys.exit(1)
        tag = "table" if m.materialize else "view"
        print(f"{m.name} ({tag}) {time.perf_counter() - t:.1f}s hwm {hwm_mb():.0f}MB", flush=True)
    if a.only is None:
        reset_hwm()
        t = time.perf_counter()
        build_change_points(con, True)
        print(f"change_points {time.perf_counter() - t:.1f}s hwm {hwm_mb():.0f}MB", flush=True)
    print(f"total {time.perf_counter() - t0:.1f}s", flush=True)
    con.close()
    shutil.rmtree(spill, ignore_errors=True)


if __name__ == "__main__":
    main()
