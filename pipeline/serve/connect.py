"""Open the warehouse from Python: today's state or the state after an earlier run.

    import pipeline
    con = pipeline.connect()                          # liger.duckdb, read-only
    con = pipeline.connect(run=3)                     # as warehouse run 3 left it
    con = pipeline.connect(as_of="2026-11-30T12:00")  # the newest run committed by then

The newest state opens `liger.duckdb` read-only. An earlier state is an in-memory database with
the same table views over that run's Delta versions and every sql/regress view (computed when
queried: nothing is materialized for a one-off look back). For a warehouse on S3 the connection
carries an fsspec filesystem, which a plain `duckdb` CLI cannot.
"""

from __future__ import annotations

from datetime import datetime

import duckdb

from pipeline.common import duck
from pipeline.config import load, warehouse_dir, warehouse_uri
from pipeline.engine import DuckTarget, run_models
from pipeline.engine.catalog import regress_models
from pipeline.regress.change_points import build_change_points
from pipeline.serve.duckdb_build import create_run_log_view, create_table_views, publish_main_views, use_internal_schema
from pipeline.store.warehouse import Warehouse


def connect(
    run: int | None = None,
    as_of: datetime | str | None = None,
    *,
    warehouse: str | None = None,
    local_dir: str | None = None,
) -> duckdb.DuckDBPyConnection:
    from pathlib import Path

    wh = Warehouse(warehouse or warehouse_uri(), Path(local_dir) if local_dir else warehouse_dir())
    newest = wh.published()
    if newest is None:
        raise LookupError(f"nothing published in {wh.root_uri} yet: run `make run`")
    wanted = newest if run is None and as_of is None else wh.published(seq=run, as_of=as_of)
    if wanted is None:
        raise LookupError(f"no warehouse run matches run={run!r} as_of={as_of!r} in {wh.root_uri}")
    if wanted.seq == newest.seq and wh.duckdb_path.exists():
        return duck.connect(wh.duckdb_path, read_only=True, remote_root=wh.root_uri)
    con = duck.connect(remote_root=wh.root_uri)
    use_internal_schema(con)  # as in liger.duckdb: the build's objects in `internal`, readers' views in `main`
    try:
        create_run_log_view(con, wh, wanted)
        create_table_views(con, wh.snapshot_files(wanted))
        run_models(regress_models(), DuckTarget(con, materialize=False))
        build_change_points(con)
    except duckdb.IOException as exc:
        con.close()
        if wanted.seq == newest.seq:
            raise
        hours = load().retention_hours
        raise LookupError(
            f"run {wanted.seq} is older than the retention ({hours:g} hours, LIGER_RETENTION_HOURS) and its "
            f"files were vacuumed; runs since {_oldest_readable(wh, newest)} are readable"
        ) from exc
    publish_main_views(con)
    return con


def _oldest_readable(wh: Warehouse, newest) -> int:
    """The oldest run whose fact files all still exist (local warehouses; else the newest run)."""
    from pathlib import Path

    for pub in wh.run_log():
        files = [f for fs in wh.snapshot_files(pub).values() for f in fs]
        if "://" in wh.root_uri or all(Path(f).exists() for f in files):
            return pub.seq
    return newest.seq
