"""liger.duckdb: views over one published state of the Delta tables, kept up to date incrementally.

Layers, in order:
  delta_<table>   read_parquet over the snapshot's files, listed from the Delta log (DuckDB here
                  has no delta extension); a table with no files is an empty typed relation
  regression_settings, liger_version_order (tables)
  sql/serve/      what readers call fact_measurement, source, measurements, ... (provenance and
                  learned dimensions are derived when read)
  sql/regress/    in the order their MODEL headers' dependencies give; a stored model (kind
                  FULL or INCREMENTAL_BY_PARTITION) is kept as a table `<view>__materialized`, its query as
                  view `<view>__definition`
  change_points   (Python: PELT per sweep)

Everything is built in the schema `internal` (the models' unqualified names resolve there); `main`
then holds one view per object people query (`select * from internal.<name>`), so `main`,
information_schema and DuckDB's "did you mean" hints show what users query, not `delta_*`,
`*__materialized`, `*__definition`, the build state or the helper tables (``is_internal``).

A new published state is applied to a copy of the file, which then replaces it (open read-only
sessions keep the old one). The stored models are refreshed by the model engine
(`engine/incremental.py`: the partitions new facts touch, or merged); anything that can move every
row (a full run, other model or view files, other settings, a Liger version ranked among the measured
ones: `ranks_moved`) recomputes everything.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pyarrow as pa

from pipeline import engine
from pipeline.common import duck, failpoints
from pipeline.common.files import atomic_path, publish
from pipeline.config import SQL_DIR, build_memory
from pipeline.contracts.tables import RUN_LOG as RUN_LOG_TABLE
from pipeline.contracts.tables import SCHEMAS
from pipeline.engine.catalog import LOOKUP_TABLES, SERVE_DIR, model_files, regress_models, serve_models
from pipeline.engine.header import read_model
from pipeline.engine.incremental import narrowed, refresh_models
from pipeline.engine.run import create_view
from pipeline.history.paths import touches_harness, touches_kernel
from pipeline.regress.alert_state import install_alerts
from pipeline.regress.change_points import INPUTS_TABLE as CHANGE_POINT_INPUTS
from pipeline.regress.change_points import WINDOWS_TABLE as CHANGE_POINT_WINDOWS
from pipeline.regress.change_points import build_change_points
from pipeline.regress.settings import RegressionSettings, freshness_state, write_freshness_table, write_settings_table
from pipeline.regress.versions import version_order_table, write_version_order_table
from pipeline.serve.names import INTERNAL_SCHEMA
from pipeline.store.warehouse import RUN_LOG, Published, Warehouse

STATE_TABLE = "liger_build_state"
# helper tables of the build that no reader queries (beside delta_*, *__materialized, *__definition)
SNAPSHOTS_BUILT = "benchmark_snapshot_built"
INTERNAL_TABLES = frozenset(
    {
        STATE_TABLE,
        SNAPSHOTS_BUILT,
        "provenance_source_flags",
        "commit_kernel",
        "commit_harness",
        "freshness_settings",
        CHANGE_POINT_INPUTS,
        CHANGE_POINT_WINDOWS,
        "alert_state",
    }
)
DUCK_TYPES = {
    pa.string(): "varchar",
    pa.list_(pa.string()): "varchar[]",
    pa.int64(): "bigint",
    pa.float64(): "double",
    pa.bool_(): "boolean",
    pa.timestamp("us", tz="UTC"): "timestamptz",
}


def is_internal(name: str) -> bool:
    """An object of the build, not of the readers: kept out of `main`."""
    return (
        name.startswith("delta_")
        or name.endswith(("__materialized", "__definition", "__all"))
        or name in INTERNAL_TABLES
    )


def use_internal_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Build in `internal`: unqualified creates land there and names resolve there."""
    con.execute(f"create schema if not exists {INTERNAL_SCHEMA}")
    con.execute(f"use {INTERNAL_SCHEMA}")


def publish_main_views(con: duckdb.DuckDBPyConnection) -> list[str]:
    """`main`: one view per public object of `internal` (stale ones dropped); the connection's
    default schema is `main` again afterwards. Returns the public names."""
    rows = con.execute(
        """select table_name as name from duckdb_tables()
               where schema_name = $s and database_name = current_database() and not temporary
           union
           select view_name from duckdb_views()
               where schema_name = $s and database_name = current_database() and not temporary
           order by 1""",
        {"s": INTERNAL_SCHEMA},
    ).fetchall()
    public = [r[0] for r in rows if not is_internal(r[0])]
    con.execute("use main")
    for name in public:
        create_view(con, name, f'select * from {INTERNAL_SCHEMA}."{name}"', schema="main")
    stale = con.execute(
        """select view_name from duckdb_views()
           where schema_name = 'main' and database_name = current_database() and not internal and not temporary""",
    ).fetchall()
    for (name,) in stale:
        if name not in public:
            con.execute(f'drop view main."{name}"')
    return public


def sql_hash() -> str:
    """What the file's views and tables are made of: the SQL, and the code that names and wraps it
    (this module, the model engine). An incremental build keeps the previous file's views,
    so a change to any of these rebuilds the file."""
    h = hashlib.sha256()
    for folder in ("serve", "regress", "model"):
        for p in model_files(SQL_DIR / folder):
            h.update(f"{p.relative_to(SQL_DIR)}\0".encode() + p.read_bytes())
    for code in (Path(__file__), *sorted(Path(engine.__file__).parent.glob("*.py"))):
        h.update(f"{code.name}\0".encode() + code.read_bytes())
    return h.hexdigest()[:16]


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def create_delta_views(con: duckdb.DuckDBPyConnection, files: dict[str, list[str]]) -> None:
    """delta_<table> over a snapshot's files. The file list is written into the view (it must
    survive in the DuckDB file); the paths are the Delta table's own part files, quoted as literals."""
    for table, schema in SCHEMAS.items():
        if files.get(table):
            listed = ", ".join(_literal(f) for f in files[table])
            con.execute(f"create or replace view delta_{table} as select * from read_parquet([{listed}])")
        else:
            cols = ", ".join(f"null::{DUCK_TYPES[f.type]} as {f.name}" for f in schema)
            con.execute(f"create or replace view delta_{table} as select {cols} where false")


def create_table_views(
    con: duckdb.DuckDBPyConnection,
    files: dict[str, list[str]],
    settings: RegressionSettings | None = None,
    keep_views: bool = False,
) -> list[str]:
    """delta_<table> views, the lookup tables, then the readers' views of sql/serve (fact_measurement
    with provenance, measurements, ...); returns the Liger versions the facts name. ``keep_views``:
    the file already has this SQL's views (a copy of a build with the same `sql_hash`)."""
    create_delta_views(con, files)
    versions = write_lookup_tables(con, settings or RegressionSettings())
    write_commit_kernel_table(con)
    if not duck.scalar(
        con,
        "select count(*) from duckdb_views() where view_name = 'warehouse_run' "
        "and schema_name = current_schema() and database_name = current_database()",
    ):
        cols = ", ".join(f"null::{DUCK_TYPES[f.type]} as {f.name}" for f in RUN_LOG_TABLE.schema)
        con.execute(f"create or replace view warehouse_run as select {cols} where false")
    if not keep_views:
        engine.run_models(serve_models(), engine.DuckTarget(con, materialize=False))
    return versions


def create_run_log_view(con: duckdb.DuckDBPyConnection, wh: Warehouse, published: Published) -> None:
    """`warehouse_run`: every run up to ``published``, with each table's Delta version (JSON)."""
    files = wh.store.files(RUN_LOG)
    listed = ", ".join(_literal(f) for f in files)
    con.execute(f"""create or replace view warehouse_run as
        select seq, run_id, timezone('UTC', committed_at) as committed_at, mode, reason, versions, stats
        from read_parquet([{listed}]) where seq <= {int(published.seq)}""")


def write_commit_kernel_table(con: duckdb.DuckDBPyConnection) -> None:
    """commit_kernel: the measured kernels each commit between benchmarked commits touches
    (`history.paths.touches_kernel`, the one rule) and those whose harness it changes (`touches_harness`);
    commit_harness: one row per commit and kernel of the latter, naming the harness files it changes.
    A few hundred commits times a hundred kernels."""
    kernels = [r[0] for r in con.execute("select distinct kernel_name from delta_fact_measurement").fetchall()]
    commits = con.execute("select distinct commit, kernel_paths, harness_changes from delta_commit_change").fetchall()
    harness = [(c, k, touches_harness(h or (), k)) for c, _, h in commits for k in kernels if k]
    harness = [(c, k, files) for c, k, files in harness if files]
    of: dict[str, list[str]] = {}
    for c, k, _ in harness:
        of.setdefault(c, []).append(k)
    rows = pa.table(
        {
            "commit": [c for c, _, _ in commits],
            "touches_kernel_of": [
                sorted(k for k in kernels if k and touches_kernel(p or (), k)) for _, p, _ in commits
            ],
            "touches_harness_of": [sorted(of.get(c, ())) for c, _, _ in commits],
        },
        schema=pa.schema(
            [
                ("commit", pa.string()),
                ("touches_kernel_of", pa.list_(pa.string())),
                ("touches_harness_of", pa.list_(pa.string())),
            ]
        ),
    )
    files = pa.table(
        {
            "commit": [c for c, _, _ in harness],
            "kernel_name": [k for _, k, _ in harness],
            "harness_files": [", ".join(f) for _, _, f in harness],
        },
        schema=pa.schema([("commit", pa.string()), ("kernel_name", pa.string()), ("harness_files", pa.string())]),
    )
    for name, table in (("commit_kernel", rows), ("commit_harness", files)):
        con.register(f"{name}_rows", table)
        con.execute(f"create or replace table {name} as select * from {name}_rows")
        con.unregister(f"{name}_rows")


def write_lookup_tables(con: duckdb.DuckDBPyConnection, settings: RegressionSettings) -> list[str]:
    """regression_settings and liger_version_order (the versions the facts name, in PEP 440 order),
    which sql/regress reads beside the tables; returns the versions."""
    write_settings_table(con, settings)
    write_freshness_table(con)
    versions = sorted(
        r[0]
        for r in con.execute(
            "select distinct liger_version from delta_fact_measurement where liger_version is not null"
        ).fetchall()
    )
    write_version_order_table(con, versions)
    return versions


def _state(con) -> dict:
    try:
        return json.loads(duck.scalar(con, f"select state from {INTERNAL_SCHEMA}.{STATE_TABLE}"))
    except (duckdb.Error, TypeError):
        return {}


def _file_id(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def _state_sidecar(wh: Warehouse) -> Path:
    return wh.local / "liger.duckdb.state.json"


def built_state(wh: Warehouse) -> dict:
    """What liger.duckdb was last built from (warehouse, published run, SQL, settings, versions); {}
    if none. Read from the sidecar written with the file while it still describes that very file
    (size, mtime, inode), so a run with nothing new never opens the database."""
    if not wh.duckdb_path.exists():
        return {}
    try:
        side = json.loads(_state_sidecar(wh).read_text())
        if side.get("file") == _file_id(wh.duckdb_path):
            return side["state"]
    except (OSError, ValueError, KeyError):
        pass
    with duck.connect(wh.duckdb_path, read_only=True) as con:
        return _state(con)


def _clear_leftovers(wh: Warehouse) -> None:
    """What a killed build left: its copy, the copy's write-ahead log (`.tmp.wal`), its spill folder."""
    for leftover in wh.local.glob(".liger.duckdb.*.tmp*"):
        leftover.unlink(missing_ok=True)
    for spill in wh.temp_dir.glob("duckdb-.liger.duckdb.*.tmp"):
        shutil.rmtree(spill, ignore_errors=True)


class _Phases(dict):
    """Seconds per phase of a build outside its models (copying the file aside, the views, the alert
    state, the checkpoint, ...), in the order they ran: `liger_duckdb`'s `seconds_per_phase`."""

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self[name] = round(self.get(name, 0.0) + time.perf_counter() - started, 3)


def build_duckdb(wh: Warehouse, published: Published, settings: RegressionSettings | None = None) -> dict:
    """Bring liger.duckdb to ``published``; returns what was done. Callers hold wh.duckdb_lock(),
    so a file being built aside here belongs to a killed build and goes."""
    _clear_leftovers(wh)
    settings = settings or RegressionSettings()
    # The state names its warehouse: a file built from another warehouse (two warehouses sharing
    # LIGER_LOCAL_DIR) is never taken for this one's.
    target = {
        "warehouse": wh.root_uri,
        "seq": published.seq,
        "sql": sql_hash(),
        "settings": settings.model_dump(mode="json"),
        "freshness": freshness_state(),
    }
    final = wh.duckdb_path
    old = built_state(wh) if final.exists() else {}
    if old and all(old.get(k) == v for k, v in target.items()):
        return {"mode": "unchanged", "seq": published.seq}
    if old.get("warehouse") != wh.root_uri:
        old = {}
    full = not old or old.get("sql") != target["sql"] or old.get("settings") != target["settings"]
    runs_between = [p for p in wh.run_log() if old.get("seq", 0) < p.seq <= published.seq]
    if any(p.mode == "full" for p in runs_between) or old.get("seq", 0) > published.seq:
        full = True

    wh.local.mkdir(parents=True, exist_ok=True)
    tmp = wh.local / f".liger.duckdb.{uuid.uuid4().hex}.tmp"
    phases = _Phases()
    if not full:
        with phases("file copied aside"):
            shutil.copyfile(final, tmp)
    spill = wh.temp_dir / f"duckdb-{tmp.name}"
    con = duck.connect(tmp, temp_dir=spill, memory_limit=build_memory(), remote_root=wh.root_uri)
    try:
        done, state = _build(con, wh, published, settings, old, full, target, phases)
    except BaseException:
        con.close()
        tmp.unlink(missing_ok=True)
        tmp.with_name(tmp.name + ".wal").unlink(missing_ok=True)
        raise
    finally:
        shutil.rmtree(spill, ignore_errors=True)
    with phases("closed and published"):
        con.close()
        publish(tmp, final)
        side = atomic_path(_state_sidecar(wh))
        side.write_text(json.dumps({"state": state, "file": _file_id(final)}))
        publish(side, _state_sidecar(wh))
    return {"mode": done.pop("mode"), "seq": published.seq, **done, "phases": dict(phases)}


def _build(con, wh: Warehouse, published: Published, settings, old: dict, full: bool, target: dict, phases: _Phases):
    """The build itself, on the file aside: (what was done, its state)."""
    with phases("table views"):
        use_internal_schema(con)
        create_run_log_view(con, wh, published)
        # A copy of a build with the same SQL already has its views: views bind by name, so they read
        # the new delta_* views and tables: re-creating every view would rewrite the catalog on every run.
        keep_views = bool(old) and not full
        versions = create_table_views(con, wh.snapshot_files(published), settings, keep_views)
        if ranks_moved(con, old.get("versions"), versions) or snapshots_moved(con):
            full = True
    started = time.perf_counter()
    with engine.naming("fact_provenance", "INCREMENTAL_BY_PARTITION, the touched measurements"):
        provenance = materialize_provenance(con, full, old.get("seq", 0))
    provenance_s = round(time.perf_counter() - started, 3)
    moved = bool(duck.scalar(con, "select count(*) from reattributed_digest"))
    done = refresh_models(
        con, regress_models(), full, old.get("seq", 0), moved, keep_views, LOOKUP_TABLES, published.seq
    )
    done |= {"fact_provenance": provenance}
    started = time.perf_counter()
    with engine.naming("change_points", "PYTHON, PELT per sweep"):
        build_change_points(con, full)
    done["refreshed"]["change_points"] = f"{duck.scalar(con, 'select count(*) from changed_sweep')} sweep(s)"
    done["seconds"] |= {"fact_provenance": provenance_s, "change_points": round(time.perf_counter() - started, 3)}
    # alerts: the analysis' alert_groups beside the state people and earlier runs left (Delta)
    with phases("alert state"), engine.naming("alert_state", "PYTHON, the Delta table people write"):
        done["refreshed"]["alerts"] = f"{install_alerts(con, wh.root_uri)} state row(s)"
    state = target | {"versions": versions}
    with phases("state and views published"):
        con.execute(f"create or replace table {SNAPSHOTS_BUILT} as select * from delta_benchmark_snapshot")
        con.execute(f"create or replace table {STATE_TABLE} as select $s as state", {"s": json.dumps(state)})
        if not keep_views:
            publish_main_views(con)
    failpoints.pause("duckdb_building")
    with phases("checkpoint"):
        con.execute("checkpoint")
    failpoints.pause("duckdb_built_aside")
    return done | {"mode": "full" if full else "incremental"}, state


def ranks_moved(con: duckdb.DuckDBPyConnection, before: list[str] | None, after: list[str]) -> bool:
    """Whether the Liger versions the facts name now rank a stored row otherwise: a version ranked
    between two measured ones (a backport, a late-ingested old release) shifts the rank of every version
    after it, and a rename's `since_version` measured for the first time re-keys its provider's earlier
    rows (`ranked_measurements`). Every series may then move. Versions ranked after every measured one
    (the next release, a dev build of it) move nothing but the steps they add, which the touched keys
    refresh: the weekly run of a new version is not a whole rebuild."""
    if before is None:
        return True
    if before == after:
        return False
    ranked_before, ranked_after = dict(version_order_table(before)), dict(version_order_table(after))
    if any(ranked_after.get(v) != rank for v, rank in ranked_before.items()):
        return True
    try:
        since = [r[0] for r in con.execute("select distinct since_version from provider_renames").fetchall()]
    except duckdb.Error:  # no views yet (a file from before them): nothing says what a rename keys
        return True
    return any(ranked_before.get(v) != ranked_after.get(v) for v in since)


def snapshots_moved(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether a benchmarked run the file was built from now reads otherwise: a commit benchmarked
    later but older in the graph shifts the commit order of every run after it, and a tag can give
    an old run its release. Every series on the commit axis may then move, not only the touched
    ones. Runs appended at the end of the order move nothing."""
    try:
        return bool(
            duck.scalar(
                con,
                f"select count(*) from (select * from {SNAPSHOTS_BUILT} "
                "except all select * from delta_benchmark_snapshot)",
            )
        )
    except duckdb.Error:  # a file from before this table, or another schema of it
        return True


TOUCHED_DIGEST = """create or replace temp table touched_digest as
    select distinct measurement_digest from delta_fact_sighting where run_seq > $s"""
MOVED_SOURCE_SIGHTINGS = " or (source_path, content_sha256) in (select (source_path, content_sha256) from moved_source)"


def materialize_provenance(con: duckdb.DuckDBPyConnection, full: bool, since_seq: int) -> str:
    """Keep fact_provenance as a table: every read of fact_measurement joins it, and aggregating
    every sighting per query costs more than the facts. Only measurements with a new sighting
    (run_seq > since_seq), or carried by a source whose in_upstream_head flipped (the previous
    upstream HEAD snapshot, when a new commit lands), are recomputed. Leaves the temp tables
    `reattributed_digest` (earlier facts a new sighting gave another gh-pages run, `snapshot`) and
    `touched_provenance` (the rows recomputed, for `_new_facts`)."""
    table = "fact_provenance__materialized"
    # The view is the model's query again (a kept file has it as the table, from the end of this function).
    create_view(con, "fact_provenance", read_model(SERVE_DIR / "fact_provenance.sql").sql)
    if full or not duck.has_tables(con, table, "provenance_source_flags"):
        con.execute(f"create or replace table {table} as select * from fact_provenance")
        con.execute("create or replace temp table reattributed_digest (measurement_digest varchar)")
        con.execute(f"create or replace temp table touched_provenance as select * from {table} limit 0")
        mode = "full"
    else:
        con.execute("""create or replace temp table moved_source as
            select source_path, content_sha256 from provenance_source_flags p join delta_source s
            using (source_path, content_sha256) where p.in_upstream_head is distinct from s.in_upstream_head""")
        # By run_seq alone when no source moved: the sighting files' statistics then skip every earlier
        # file; an OR beside the filter keeps DuckDB from pruning.
        moved = duck.scalar(con, "select count(*) from moved_source")
        con.execute(TOUCHED_DIGEST + (MOVED_SOURCE_SIGHTINGS if moved else ""), {"s": since_seq})
        # Narrowed at the bottom: a filter on top of the view would aggregate every sighting first.
        with narrowed(con, "delta_fact_sighting", "semi join touched_digest using (measurement_digest)"):
            con.execute("create or replace temp table touched_provenance as select * from fact_provenance")
        con.execute(f"""create or replace temp table reattributed_digest as
            select measurement_digest from {table} o join touched_provenance n using (measurement_digest)
            where o.snapshot is distinct from n.snapshot""")
        con.execute(f"delete from {table} where measurement_digest in (select measurement_digest from touched_digest)")
        con.execute(f"insert into {table} by name select * from touched_provenance")
        mode = f"{duck.scalar(con, 'select count(*) from touched_digest')} measurement(s)"
    con.execute(
        "create or replace table provenance_source_flags as "
        "select source_path, content_sha256, in_upstream_head from delta_source"
    )
    con.execute(f"create or replace view fact_provenance as select * from {table}")
    return mode
