"""liger.duckdb: views over one published state of the Delta tables, kept up to date incrementally.

Layers, in order:
  delta_<table>   read_parquet over the snapshot's files, listed from the Delta log (DuckDB here
                  has no delta extension); a table with no files is an empty typed relation
  regression_settings, liger_version_order (tables)
  sql/serve/      what readers call fact_measurement, source, measurements, ... (provenance and
                  learned dimensions are derived when read)
  sql/analyze/    in the order their MODEL headers' dependencies give; a model with
                  `materialized: table` is kept as a table `<view>__materialized`, its query as
                  view `<view>__definition`
  change_points   (Python: PELT per sweep)

Everything is built in the schema `internal` (the models' unqualified names resolve there); `main`
then holds one view per object people query (`select * from internal.<name>`), so `main`,
information_schema and DuckDB's "did you mean" hints show what users query, not `delta_*`,
`*__materialized`, `*__definition`, the build state or the helper tables (``is_internal``).

A new published state is applied to a copy of the file, which then replaces it (open read-only
sessions keep the old one). A materialized view with `incremental_key: [a, b]` is refreshed only
for the key values that facts committed since the file's last state touch (with
`incremental_merge`: its rows over the new facts alone merged into the kept ones); the others are
recomputed whole. Anything that can move every row (a full run, other model or view files, other
settings, a new Liger version) recomputes everything.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa

from pipeline.analyze.alerts.state import install_alerts
from pipeline.analyze.change_points import INPUTS_TABLE as CHANGE_POINT_INPUTS
from pipeline.analyze.change_points import build_change_points
from pipeline.analyze.settings import RegressionSettings, write_settings_table
from pipeline.analyze.versions import write_version_order_table
from pipeline.common import duck, failpoints, sql_models
from pipeline.common.files import atomic_path, publish
from pipeline.common.sql_models import FactSteps, SqlModel, load_models, read_model
from pipeline.config import SQL_DIR, build_memory
from pipeline.contracts.tables import RUN_LOG as RUN_LOG_TABLE
from pipeline.contracts.tables import SCHEMAS
from pipeline.ingest.gh_pages import touches_kernel
from pipeline.serve.names import INTERNAL_SCHEMA
from pipeline.store.warehouse import RUN_LOG, Published, Warehouse

STATE_TABLE = "liger_build_state"
# helper tables of the build that no reader queries (beside delta_*, *__materialized, *__definition)
SNAPSHOTS_BUILT = "benchmark_snapshot_built"
INTERNAL_TABLES = frozenset(
    {STATE_TABLE, SNAPSHOTS_BUILT, "provenance_source_flags", "commit_kernel", CHANGE_POINT_INPUTS, "alert_state"}
)
DUCK_TYPES = {
    pa.string(): "varchar",
    pa.list_(pa.string()): "varchar[]",
    pa.int64(): "bigint",
    pa.float64(): "double",
    pa.bool_(): "boolean",
    pa.timestamp("us", tz="UTC"): "timestamptz",
}
SERVE_DIR, ANALYZE_DIR = SQL_DIR / "serve", SQL_DIR / "analyze"
# What the build registers before the models: the Delta snapshot and the lookup tables.
LOOKUP_TABLES = ("regression_settings", "liger_version_order", "warehouse_run", "commit_kernel")
SERVE_INPUTS = tuple(f"delta_{t}" for t in SCHEMAS) + LOOKUP_TABLES


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
        con.execute(f'create or replace view main."{name}" as select * from {INTERNAL_SCHEMA}."{name}"')
    stale = con.execute(
        """select view_name from duckdb_views()
           where schema_name = 'main' and database_name = current_database() and not internal and not temporary""",
    ).fetchall()
    for (name,) in stale:
        if name not in public:
            con.execute(f'drop view main."{name}"')
    return public


def serve_models() -> list[SqlModel]:
    return load_models(SERVE_DIR, SERVE_INPUTS)


def analyze_models() -> list[SqlModel]:
    serve = [m.name for m in serve_models()]
    return load_models(ANALYZE_DIR, (*SERVE_INPUTS, *serve, "change_points"))


def view_files() -> list[SqlModel]:
    """The analysis models users query (sql/analyze), in dependency order."""
    return analyze_models()


def create_view(con: duckdb.DuckDBPyConnection, name: str, model: SqlModel) -> None:
    con.execute(f'create or replace view "{name}" as\n{model.sql}')


def sql_hash() -> str:
    """What the file's views and tables are made of: the SQL, and the code that names and wraps it
    (this module, the MODEL header parser). An incremental build keeps the previous file's views,
    so a change to any of these rebuilds the file."""
    h = hashlib.sha256()
    for folder in ("serve", "analyze", "model", "alerts"):
        for p in sorted((SQL_DIR / folder).glob("*.sql")):
            h.update(f"{folder}/{p.name}\0".encode() + p.read_bytes())
    for code in (Path(__file__), Path(sql_models.__file__)):
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
        for model in serve_models():
            create_view(con, model.name, model)
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
    (`gh_pages.touches_kernel`, the one rule): a few hundred commits times a hundred kernels."""
    kernels = [r[0] for r in con.execute("select distinct kernel_name from delta_fact_measurement").fetchall()]
    commits = con.execute("select distinct commit, kernel_paths from delta_commit_change").fetchall()
    rows = pa.table(
        {
            "commit": [c for c, _ in commits],
            "touches_kernel_of": [sorted(k for k in kernels if k and touches_kernel(p or (), k)) for _, p in commits],
        },
        schema=pa.schema([("commit", pa.string()), ("touches_kernel_of", pa.list_(pa.string()))]),
    )
    con.register("commit_kernel_rows", rows)
    con.execute("create or replace table commit_kernel as select * from commit_kernel_rows")
    con.unregister("commit_kernel_rows")


def write_lookup_tables(con: duckdb.DuckDBPyConnection, settings: RegressionSettings) -> list[str]:
    """regression_settings and liger_version_order (the versions the facts name, in PEP 440 order),
    which sql/views read beside the tables; returns the versions."""
    write_settings_table(con, settings)
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


def build_duckdb(wh: Warehouse, published: Published, settings: RegressionSettings | None = None) -> dict:
    """Bring liger.duckdb to ``published``; returns what was done. Callers hold wh.duckdb_lock(),
    so a file being built aside here belongs to a killed build and goes."""
    for leftover in wh.local.glob(".liger.duckdb.*.tmp"):
        leftover.unlink(missing_ok=True)
    settings = settings or RegressionSettings()
    # The state names its warehouse: a file built from another warehouse (two warehouses sharing
    # LIGER_LOCAL_DIR) is never taken for this one's.
    target = {
        "warehouse": wh.root_uri,
        "seq": published.seq,
        "sql": sql_hash(),
        "settings": settings.model_dump(mode="json"),
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
    if not full:
        shutil.copyfile(final, tmp)
    spill = wh.temp_dir / f"duckdb-{tmp.name}"
    con = duck.connect(tmp, temp_dir=spill, memory_limit=build_memory(), remote_root=wh.root_uri)
    try:
        use_internal_schema(con)
        create_run_log_view(con, wh, published)
        # A copy of a build with the same SQL already has its views: views bind by name, so they read
        # the new delta_* views and tables (re-creating ~150 views took 0.4 s of an incremental run).
        keep_views = bool(old) and not full
        versions = create_table_views(con, wh.snapshot_files(published), settings, keep_views)
        if versions != old.get("versions") or snapshots_moved(con):
            full = True
        started = time.perf_counter()
        provenance = materialize_provenance(con, full, old.get("seq", 0))
        provenance_s = round(time.perf_counter() - started, 3)
        moved = bool(duck.scalar(con, "select count(*) from reattributed_digest"))
        done = apply_views(con, full, old.get("seq", 0), moved, keep_views) | {"fact_provenance": provenance}
        started = time.perf_counter()
        build_change_points(con, full)
        done["refreshed"]["change_points"] = f"{duck.scalar(con, 'select count(*) from changed_sweep')} sweep(s)"
        done["seconds"] |= {"fact_provenance": provenance_s, "change_points": round(time.perf_counter() - started, 3)}
        # alerts: the analysis' alert_groups beside the state people and earlier runs left (Delta)
        done["refreshed"]["alerts"] = f"{install_alerts(con, wh.root_uri)} state row(s)"
        con.execute(f"create or replace table {SNAPSHOTS_BUILT} as select * from delta_benchmark_snapshot")
        state = target | {"versions": versions}
        con.execute(f"create or replace table {STATE_TABLE} as select $s as state", {"s": json.dumps(state)})
        if not keep_views:
            publish_main_views(con)
        con.execute("checkpoint")
        failpoints.pause("duckdb_built_aside")
    except BaseException:
        con.close()
        tmp.unlink(missing_ok=True)
        raise
    finally:
        shutil.rmtree(spill, ignore_errors=True)
    con.close()
    publish(tmp, final)
    side = atomic_path(_state_sidecar(wh))
    side.write_text(json.dumps({"state": state, "file": _file_id(final)}))
    publish(side, _state_sidecar(wh))
    return {"mode": "full" if full else "incremental", "seq": published.seq, **done}


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
    every sighting per query would cost seconds at 10 M facts. Only measurements with a new sighting
    (run_seq > since_seq), or carried by a source whose in_upstream_head flipped (the previous
    upstream HEAD snapshot, when a new commit lands), are recomputed. Leaves the temp tables
    `reattributed_digest` (earlier facts a new sighting gave another gh-pages run, `snapshot`) and
    `touched_provenance` (the rows recomputed, for `_new_facts`)."""
    table = "fact_provenance__materialized"
    # The view is the model's query again (a kept file has it as the table, from the end of this function).
    create_view(con, "fact_provenance", read_model(SERVE_DIR / "fact_provenance.sql"))
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
        # file (0.6 s -> 0 at 10 M); an OR beside the filter keeps DuckDB from pruning.
        moved = duck.scalar(con, "select count(*) from moved_source")
        con.execute(TOUCHED_DIGEST + (MOVED_SOURCE_SIGHTINGS if moved else ""), {"s": since_seq})
        # Narrowed at the bottom: a filter on top of the view would aggregate every sighting first.
        with _narrowed(con, "delta_fact_sighting", "semi join touched_digest using (measurement_digest)"):
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


def apply_views(
    con: duckdb.DuckDBPyConnection, full: bool = True, since_seq: int = 0, moved: bool = False, keep_views: bool = False
) -> dict:
    """sql/analyze in dependency order on a connection that has the tables, settings and version order.
    ``moved``: an earlier fact now belongs to another gh-pages run (a new sighting), so keys finer
    than the fact's own columns may have lost it: those models are recomputed whole. ``keep_views``:
    the file has the models' views already (`create_table_views`)."""
    applied, refreshed, seconds = [], {}, {}
    touched: dict[tuple, Touched] = {}
    models = view_files()
    fact_columns = {m.name: m.header.fact_columns for m in models}
    fact_steps = {m.name: m.header.fact_steps for m in models}
    try:
        for vf in models:
            started = time.perf_counter()
            if not vf.materialize:
                if not keep_views:
                    create_view(con, vf.name, vf)
                applied.append(vf.path.name)
                continue
            definition = f"{vf.name}__definition"
            if not keep_views:
                create_view(con, definition, vf)
            table = f"{vf.name}__materialized"
            exists = duck.has_tables(con, table)
            key, source = list(vf.header.incremental_key), vf.header.incremental_key_from
            finer = source != "fact_measurement"
            if full or not exists or not key or (finer and moved):
                con.execute(f'create or replace table "{table}" as select * from "{definition}"')
                refreshed[vf.name] = "full"
            elif vf.header.incremental_merge and not moved:
                refreshed[vf.name] = merge_new_facts(con, vf, definition, table, since_seq)
            else:
                if (source, tuple(key)) not in touched:
                    fact_key = [c for c in key if c in fact_columns.get(source, ())]
                    found = Touched.find(con, source, key, fact_key, since_seq, len(touched), list(touched.values()))
                    if fact_key and found.count:
                        found.find_steps(con, fact_steps.get(source))
                    touched[(source, tuple(key))] = found
                finer_deps = [
                    m.name
                    for m in models
                    if m.name in vf.header.depends_on
                    and m.header.incremental_key_from == source
                    and set(key) <= set(m.header.incremental_key)
                ]
                refreshed[vf.name] = touched[(source, tuple(key))].refresh(con, vf, definition, table, finer_deps)
            if not keep_views:
                con.execute(f'create or replace view "{vf.name}" as select * from "{table}"')
            applied.append(vf.path.name)
            seconds[vf.name] = round(time.perf_counter() - started, 3)
    finally:
        for t in touched.values():
            t.drop(con)
        con.execute("drop table if exists new_fact_digest")
        con.execute("drop table if exists new_fact_provenance")
    return {"applied": applied, "refreshed": refreshed, "seconds": seconds}


@contextmanager
def _narrowed(con: duckdb.DuckDBPyConnection, name: str, tail: str = "", rows: str = "") -> Iterator[None]:
    """View ``name`` narrowed for the block (``select f.* from <its own rows> f <tail>``, or the
    ``rows`` table's rows), then itself again: a temp view of that name, which DuckDB resolves
    before the build's schema, also inside the views that read ``name``. Renaming the view itself
    and back wrote the file's catalog four times a narrowing (0.2 s of a 1 M incremental build)."""
    own = ".".join(f'"{part}"' for part in con.execute("select current_database(), current_schema()").fetchone())
    source = f'"{rows}" f' if rows else f'{own}."{name}" f {tail}'
    con.execute(f'create temp view "{name}" as select f.* from {source}')
    try:
        yield
    finally:
        con.execute(f'drop view temp."{name}"')


MOVED_DIGESTS = "select * from reattributed_digest"
NO_NEW_PROVENANCE = "(select * from new_fact_digest anti join new_fact_provenance using (measurement_digest))"


@contextmanager
def _new_facts(con: duckdb.DuckDBPyConnection, since_seq: int) -> Iterator[None]:
    """The fact views narrowed to the new facts, and earlier ones a new sighting gave another
    gh-pages run, with their provenance: the rows `touched_provenance` recomputed (a new fact comes
    with its sighting), any other looked up. Each view over the facts joins the provenance, and
    probing every fact's provenance for a few thousand new facts cost most of a second per key."""
    # By run_seq alone when no fact moved: the fact files' statistics then skip the earlier files.
    moved = duck.scalar(con, "select count(*) from reattributed_digest")
    new = f"where f.run_seq > {int(since_seq)}" + (f" or f.measurement_digest in ({MOVED_DIGESTS})" if moved else "")
    if not duck.scalar(con, "select count(*) from duckdb_tables() where temporary and table_name = 'new_fact_digest'"):
        con.execute(
            f"create or replace temp table new_fact_digest as "
            f"select measurement_digest from delta_fact_measurement f {new}"
        )
        con.execute(
            "create or replace temp table new_fact_provenance as "
            "select * from touched_provenance semi join new_fact_digest using (measurement_digest)"
        )
        if duck.scalar(con, f"select count(*) from {NO_NEW_PROVENANCE}"):
            con.execute(
                "insert into new_fact_provenance "
                f"select * from fact_provenance semi join {NO_NEW_PROVENANCE} using (measurement_digest)"
            )
    with _narrowed(con, "delta_fact_measurement", new), _narrowed(con, "fact_provenance", rows="new_fact_provenance"):
        yield


def merge_new_facts(
    con: duckdb.DuckDBPyConnection, model: SqlModel, definition: str, table: str, since_seq: int
) -> str:
    """``model``'s rows for the keys new facts touch, its rows over the new facts alone merged into
    the kept ones (`incremental_merge`: rows alike in every other column are one). Only when no
    earlier fact moved: the new facts are then exactly those of runs after ``since_seq``, and an
    incremental run never changes an earlier fact. version_kernel_gpus counted every fact of its
    touched versions (0.3 s at 1 M facts); series_steps and sweep_points took a median over every
    run of each touched step (0.5 s at 1 M facts for a 2,500-row snapshot of a version run 60 times)."""
    key, merge = list(model.header.incremental_key), model.header.incremental_merge
    new, quoted = f"{model.name}__new", f'"{table}"'
    with _new_facts(con, since_seq):
        con.execute(f'create or replace temp table {new} as select * from "{definition}"')
    count = duck.scalar(con, f"select count(*) from {new}")
    if count:
        columns = [d[0] for d in con.execute(f"select * from {new} limit 0").description]
        grain = [f'"{c}"' for c in columns if c not in merge]
        merged = [f'{_merged(merge[c], c)} as "{c}"' for c in columns if c in merge]
        con.execute(f"""create or replace temp table {new}_merged as
            select {", ".join(grain + merged)} from (
                select * from {quoted} semi join {new} k on {_on(key, quoted)}
                union all by name select * from {new}
            ) group by all""")
        con.execute(f"delete from {quoted} where exists (select 1 from {new} k where {_on(key, quoted)})")
        con.execute(f"insert into {quoted} by name select * from {new}_merged")
        con.execute(f"drop table {new}_merged")
    con.execute(f"drop table {new}")
    return f"{count} key(s) (merged)" if count else "untouched"


def _merged(rule: str, column: str) -> str:
    """An `incremental_merge` rule as SQL: a function name applies to the column, else the expression."""
    return f'{rule}("{column}")' if rule.isidentifier() else rule


def _on(key: list[str], left: str, right: str = "k") -> str:
    """Equality on ``key`` with NULLs equal (x_value, extra_config may be NULL)."""
    return " and ".join(f"{right}.{c} is not distinct from {left}.{c}" for c in key)


@dataclass
class Touched:
    """The key values new facts touch, for one (source view, key), found once per build and used
    by every model refreshed on that key. A model row with key value K depends only on the
    source's rows with K (the `incremental_key` promise), so recomputing the model over just
    those rows gives exactly its rows for the touched keys.
    Narrowed by the hash of the key at the source (`_source_narrowed`): for the facts themselves at the
    bottom (`delta_fact_measurement`), for a finer source on that view. Under a finer
    source the facts are narrowed as well, by the hash of the key columns the source takes
    unchanged from them (`fact_columns` in its header): a superset of the facts behind the touched
    rows (a collision only adds rows the key's semi join drops). Narrowing the facts there to
    exactly those behind the touched rows (a semi join on their digests, or on a hash of them)
    made DuckDB plan reference_measurements past its memory limit at 10 M facts; a filter on top
    of the fact view, or a correlated EXISTS, is not pushed down."""

    source: str
    key: list[str]
    keys: str  # temp table: the touched key values; `<keys>_key_hash`, `<keys>_fact_hash`: hash(key), hash(fact_key)
    fact_key: list[str]  # the key's columns the source takes unchanged from the facts
    count: int = 0
    steps: bool = False  # `<keys>_step_hash`, `<keys>_step_digest`: the touched steps' facts

    @classmethod
    def find(
        cls, con, source: str, key: list[str], fact_key: list[str], since_seq: int, n: int, known: list[Touched]
    ) -> Touched:
        """From a finer key already found on the same source (a projection), else from the facts."""
        finer = next((t for t in known if t.source == source and set(key) < set(t.key)), None)
        t = cls(source, key, f"touched_key_{n}", fact_key)
        if finer is not None:
            con.execute(f"create or replace temp table {t.keys} as select distinct {', '.join(key)} from {finer.keys}")
        else:
            with _new_facts(con, since_seq):
                con.execute(f"create or replace temp table {t.keys} as select distinct {', '.join(key)} from {source}")
        t.count = duck.scalar(con, f"select count(*) from {t.keys}")
        con.execute(
            f"create or replace temp table {t.keys}_key_hash as "
            f"select distinct hash({', '.join(key)}) as h from {t.keys}"
        )
        if fact_key:
            con.execute(
                f"create or replace temp table {t.keys}_fact_hash as "
                f"select distinct hash({', '.join(fact_key)}) as h from {t.keys}"
            )
        return t

    def _source_narrowed(self, con, name: str):
        """The source's rows whose key hashes like a touched key's: a superset of the touched keys' rows
        (a collision adds rows of another key, which the insert's semi join on the key itself drops).
        An IN on one hash is planned with the few touched keys as the build side; a semi join on the
        key's columns was planned the other way round (the narrowed facts beneath are estimated at a
        few hundred rows) and hashed a million source rows on nine columns."""
        cols = ", ".join(f"f.{c}" for c in self.key)
        return _narrowed(con, name, f"where hash({cols}) in (select h from {self.keys}_key_hash)")

    def find_steps(self, con, steps: FactSteps | None) -> None:
        """The versions and runs of the touched keys, when the key holds the source's step
        (``fact_steps`` in its header): the facts are then narrowed to the touched points at their
        touched versions (a hash of both) or runs, not to every step of a touched point."""
        if steps is None or not set(steps.columns) <= set(self.key):
            return
        con.execute(f"create or replace temp table touched as select * from {self.keys}")
        con.execute(f"create or replace temp table {self.keys}_step as {steps.sql}")
        con.execute(
            f"create or replace temp table {self.keys}_step_hash as "
            f"select distinct hash({', '.join(self.fact_key)}, liger_version) as h "
            f"from {self.keys}_step where liger_version is not null"
        )
        con.execute(
            f"create or replace temp table {self.keys}_step_digest as select distinct measurement_digest "
            f"from fact_provenance semi join {self.keys}_step s using (snapshot)"
        )
        con.execute("drop table touched")
        self.steps = True

    def _facts_narrowed(self, con, model: SqlModel):
        """delta_fact_measurement narrowed to the facts whose own columns hash like a touched key's
        (and, with ``steps``, of a touched step's version or run), for a model that reaches the facts
        through the source alone (its other inputs lookup tables)."""
        if not self.fact_key or set(model.header.depends_on) - {self.source} - set(LOOKUP_TABLES):
            return nullcontext()
        cols = ", ".join(f"f.{c}" for c in self.fact_key)
        where = f"where hash({cols}) in (select h from {self.keys}_fact_hash)"
        if self.steps:
            where += (
                f" and (hash({cols}, f.liger_version) in (select h from {self.keys}_step_hash)"
                f" or f.measurement_digest in (select measurement_digest from {self.keys}_step_digest))"
            )
        return _narrowed(con, "delta_fact_measurement", where)

    def refresh(self, con, model: SqlModel, definition: str, table: str, finer_deps: list[str] = ()) -> str:
        """Delete the model's rows for the touched keys and insert them again, computed over the
        source's rows for the touched keys only (when the model reads that source), and over the
        rows of ``finer_deps`` (models keyed on the same source by a key holding this one, refreshed
        before it) whose key hashes like a touched key's: their rows of key K come from the source's
        rows of K alone, so the promise that this model's rows of K read only those holds for them
        too. step_changes ran its windows over every series' steps to keep a few (0.1 s at 1 M)."""
        if self.count == 0:
            return "untouched"
        quoted, narrowed_facts = f'"{table}"', False
        con.execute(f"delete from {quoted} where exists (select 1 from {self.keys} k where {_on(self.key, quoted)})")
        insert = (
            f'insert into "{table}" by name select d.* from "{definition}" d '
            f"semi join {self.keys} k on {_on(self.key, 'd')}"
        )
        with ExitStack() as narrowed:
            for dep in finer_deps:
                narrowed.enter_context(self._source_narrowed(con, dep))
            if self.source == "fact_measurement":
                narrowed.enter_context(self._source_narrowed(con, "delta_fact_measurement"))
            elif self.source in model.header.depends_on:
                facts = self._facts_narrowed(con, model)
                narrowed_facts = not isinstance(facts, nullcontext)
                narrowed.enter_context(facts)
                # facts narrowed to the touched steps leave the source little beyond the touched keys
                # (hashing its rows by the key cost more than it spared)
                if not (narrowed_facts and self.steps):
                    narrowed.enter_context(self._source_narrowed(con, self.source))
            con.execute(insert)
        return f"{self.count} key(s)" + (" (facts by step)" if self.steps and narrowed_facts else "")

    def drop(self, con) -> None:
        kept = ("key_hash", "fact_hash", "step", "step_hash", "step_digest")
        for table in (self.keys, *(f"{self.keys}_{t}" for t in kept)):
            con.execute(f"drop table if exists {table}")
