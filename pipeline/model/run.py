"""Run the normalize models (sql/model/*.sql, one decision per file, in the order their declared
dependencies give) over a batch of staged sources. It returns temp tables; it never touches storage.

The driver registers the inputs every model may read, then runs the files:
  batch_source   the batch's sources, ranked oldest commit first (`source_rank`)
  csv_staged     staged CSV rows of the batch, with their source's path, rank and commit date, each
                 judged against that commit (`after_file_commit`)
  ki_staged      staged kernelindex rows of the batch, with their source's path
  problems       files refused before staging (outside data_raw, unreadable), with reason codes
  known_gpu      CSV GPU names the warehouse already holds (resolves a record's GPU slug)
  known_record   records the warehouse already holds (learned dimensions use all of them)
A full build is the same models over every source with empty `known_*`.
Results are temp tables named batch_* (see merge.py for how they reach the Delta tables).
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pyarrow as pa

from pipeline.config import SQL_DIR
from pipeline.contracts import kernelindex as ki
from pipeline.contracts.digests import measurement_digest_sql, record_only_extra_config_sql
from pipeline.contracts.reasons import RAW_PREVIEW_CHARS
from pipeline.contracts.rules import RECORD_KEY, SLUG_MACRO, after_file_commit_clause, fold_heuristic_sql
from pipeline.contracts.sources import CSV_KIND, KERNELINDEX_KIND, SourceFile
from pipeline.engine import DuckScripts, ModelHeader, PythonModel, load_models, run_models
from pipeline.model import dimensions

MODELS_DIR = SQL_DIR / "model"
# What the driver registers before the models run: the only tables a model may read besides
# what other models create.
INPUTS = (
    "batch_source",
    "batch_source_in",
    "csv_raw",
    "ki_raw",
    "csv_staged",
    "ki_staged",
    "problems",
    "known_gpu",
    "known_dim_digest",
    "known_record",
)
# Placeholders the model files use for rules that live in contracts/ only.
TEMPLATE = {
    "{measurement_digest}": measurement_digest_sql(),
    "{record_only_extra_config}": record_only_extra_config_sql("r.workload_digest"),
    "{record_key}": ", ".join(RECORD_KEY),
    "{fold_heuristic}": fold_heuristic_sql("f", "r"),
    "{ki_duplicate_reason}": ki.IDENTITY_REASONS["duplicateRows"],
}
# Macros the model files call, made from the same rules: slug(text).
MACROS = (SLUG_MACRO,)
DERIVED = {  # key table -> (builder, key columns)
    "environment": (dimensions.environment, ("gpu_name", "source_environment")),
    "protocol": (dimensions.protocol, ("kernel_operation_mode", "metric_name", "metric_unit")),
    "workload": (dimensions.workload, ("kernel_name", "x_name", "x_value", "extra_config")),
    "implementation": (dimensions.implementation, ("kernel_name", "kernel_provider", "liger_version")),
    "operation": (dimensions.operation, ("kernel_name",)),
}
# KernelIndex's own objects of the batch's 'kernelindex' CSV facts, one per digest, rebuilt from a raw
# identity key (csv_reader.KI_FIELDS): table -> (Identity attribute, the fact columns kept beside it).
KERNELINDEX_OBJECTS = {
    "ki_workload": ("workload", ("kernel_name", "x_name", "x_value", "extra_config")),
    "ki_implementation": ("implementation", ("kernel_name", "kernel_provider", "null::varchar as liger_version")),
    "ki_protocol": ("protocol", ("kernel_operation_mode", "'speed' as metric_name", "'ms' as metric_unit")),
    "ki_environment": ("environment", ("gpu_name",)),
}


def _csv_field(column: str) -> str:
    """``column`` as a CSV field: quoted (quotes doubled) when it holds a comma, a quote or a line break."""
    text = f"coalesce({column}::varchar, '')"
    needs_quotes = f"""regexp_matches({text}, '[,"' || chr(10) || chr(13) || ']')"""
    return f"""case when {needs_quotes} then '"' || replace({text}, '"', '""') || '"' else {text} end"""


# The staged name of each upstream CSV column that staging renames (the others keep theirs).
_STAGED_NAMES = {
    "y_value_50": "p50",
    "y_value_20": "p20",
    "y_value_80": "p80",
    "extra_benchmark_config_str": "extra_config",
    "timestamp": "observed_at_text",
}
# A staged CSV row as a line in upstream's column order (values in their stored unit, the config
# canonical): the raw text of a row judged here, since a staged file keeps raw text only for the
# rows its reader rejected.
_STAGED_ROW_TEXT = "concat_ws(',', " + ", ".join(_csv_field(_STAGED_NAMES.get(c, c)) for c in ki.CSV_COLUMNS) + ")"
# The batch's CSV rows, one per (source, staged row), judged once more against their source's commit.
# A row timestamped after the commit that holds its file cannot be real, but the staged file is named
# by its bytes alone, and the same bytes may come from another commit, or from a data_raw file
# without one, where the row stands. So the reader never judges it (it would poison the content-
# addressed staging for every other source of those bytes): each source is judged here, by its own
# committed_at, and a row it fails is that source's quarantine row, with no sighting from it.
CSV_STAGED_SQL = f"""
    create or replace temp view csv_staged as
    with joined as (
        select s.source_path, s.source_rank, s.committed_at, s.environment as source_environment, r.*,
            case {after_file_commit_clause("r.observed_at", "s.committed_at")} end as late
        from csv_raw r join batch_source s on s.staged_path = r.filename
    )
    select * exclude (late) replace (
        coalesce(reason, late) as reason,
        case when reason is null and late is not null then left({_STAGED_ROW_TEXT}, {RAW_PREVIEW_CHARS})
             else raw end as raw,
        case when late is null then measurement_digest end as measurement_digest
    )
    from joined
"""
EMPTY_KNOWN_GPU = "select null::varchar as gpu_name where false"
EMPTY_KNOWN_DIM_DIGEST = "select null::varchar as digest where false"
EMPTY_KNOWN_RECORD = (
    "select null::varchar as kernel_operation_mode, null::varchar as gpu_name, "
    "null::timestamptz as observed_at, null::varchar as protocol_digest, "
    "null::varchar as environment_digest where false"
)


def model_files() -> list[Path]:
    return sorted(MODELS_DIR.glob("*.sql"))


def models() -> list:
    """The SQL models and the one Python step, in dependency order."""
    derived = PythonModel(
        ModelHeader(
            name="derived_objects",
            description="kernelindex-shaped objects per distinct key (pydantic)",
            depends_on=tuple(f"derived_{n}_key" for n in DERIVED),
            creates=tuple(f"derived_{n}" for n in DERIVED),
        ),
        run=_register_derived,
    )
    kernelindex_objects = PythonModel(
        ModelHeader(
            name="kernelindex_objects",
            description="KernelIndex's objects per distinct identity key of the batch's 'kernelindex' rows",
            depends_on=("csv_fact", "known_dim_digest"),
            creates=tuple(KERNELINDEX_OBJECTS),
        ),
        run=_register_kernelindex_objects,
    )
    return load_models(MODELS_DIR, INPUTS, extra=[derived, kernelindex_objects])


def sources_table(sources: list[SourceFile], staging_path) -> pa.Table:
    return pa.table(
        {
            "source_path": pa.array([s.source_path for s in sources], pa.string()),
            "kind": pa.array([s.kind for s in sources], pa.string()),
            "content_sha256": pa.array([s.content_sha256 for s in sources], pa.string()),
            "size_bytes": pa.array([s.size_bytes for s in sources], pa.int64()),
            "upstream_path": pa.array([s.upstream_path for s in sources], pa.string()),
            "upstream_commit": pa.array([s.upstream_commit for s in sources], pa.string()),
            "committed_at": pa.array([s.committed_at for s in sources], pa.timestamp("us")),
            "in_upstream_head": pa.array([s.in_upstream_head for s in sources], pa.bool_()),
            "snapshot": pa.array([s.snapshot for s in sources], pa.string()),
            # a commit run's environment.json (canonical JSON), the toolchain of its derived environment
            "environment": pa.array([s.environment for s in sources], pa.string()),
            "staged_path": pa.array([str(staging_path(s)) for s in sources], pa.string()),
        }
    )


def _register_derived(con: duckdb.DuckDBPyConnection) -> None:
    """One object per distinct key, built and hashed in Python (the pydantic models): the key
    tables hold thousands of rows, not millions."""
    for name, (builder, key_cols) in DERIVED.items():
        keys = con.execute(f"select {', '.join(key_cols)} from derived_{name}_key").fetchall()
        described = [dimensions.describe(builder(*k)) for k in keys]
        cols = {c: pa.array([k[i] for k in keys], pa.string()) for i, c in enumerate(key_cols)}
        for f in ("digest", "api_version", "kind", "object_json"):
            cols[f] = pa.array([d[f] for d in described], pa.string())
        # an OperationSpec of a curated kernel is KernelIndex's own
        origin = ["kernelindex" if name == "operation" and k[0] in ki.KERNELS_BY_NAME else "derived" for k in keys]
        cols["origin"] = pa.array(origin, pa.string())
        con.register(f"derived_{name}", pa.table(cols))


def _register_kernelindex_objects(con: duckdb.DuckDBPyConnection) -> None:
    """KernelIndex's workload, implementation, protocol and environment of every distinct identity key of the
    batch (thousands, not millions), whole (metadata included) as its importer makes them; not those whose
    digest the warehouse holds already (`known_dim_digest`): the merge appends only new digests, and a
    digest names one object."""
    for table, (attribute, columns) in KERNELINDEX_OBJECTS.items():
        picked = ", ".join(f"any_value({c.split(' as ')[0]}) as {c.split(' as ')[-1]}" for c in columns)
        digest = attribute_digest(attribute)
        rows = con.execute(
            f"""select {digest}, any_value(ki_identity_key), {picked}
                from csv_fact where ki_identity_key is not null
                and {digest} not in (select digest from known_dim_digest where digest is not null) group by 1"""
        ).fetchall()
        objects = []
        for row in rows:
            identity = ki.resolve_identity(*json.loads(row[1]))
            objects.append(dimensions.describe(getattr(identity, attribute)))
        names = [c.split(" as ")[-1] for c in columns]
        cols = {"digest": pa.array([r[0] for r in rows], pa.string())}
        cols |= {n: pa.array([r[2 + i] for r in rows], pa.string()) for i, n in enumerate(names)}
        for f in ("api_version", "kind", "object_json"):
            cols[f] = pa.array([o[f] for o in objects], pa.string())
        con.register(table, pa.table(cols))


def attribute_digest(attribute: str) -> str:
    return f"ki_{attribute}_digest"


def run_batch(
    con: duckdb.DuckDBPyConnection,
    sources: list[SourceFile],
    staging_path,
    empty_templates: dict[str, Path],
    problems: list[tuple[str, str, str]],
    *,
    known_gpu: str = EMPTY_KNOWN_GPU,
    known_record: str = EMPTY_KNOWN_RECORD,
    known_dim_digest: str = EMPTY_KNOWN_DIM_DIGEST,
) -> list[str]:
    """Register the batch and run every model file; returns the files applied."""
    con.register("batch_source_in", sources_table(sources, staging_path))
    # An integer rank per source (oldest commit first) makes "newest source wins" an integer max.
    con.execute("""
        create or replace temp table batch_source as
        select *, row_number() over (order by committed_at nulls first, source_path) as source_rank
        from batch_source_in
    """)
    files = {
        kind: sorted({str(staging_path(s)) for s in sources if s.kind == kind} | {str(empty_templates[kind])})
        for kind in (CSV_KIND, KERNELINDEX_KIND)
    }
    # File lists are passed as values (relation API), never pasted into SQL text.
    con.read_parquet(files[CSV_KIND], filename=True, union_by_name=True).create_view("csv_raw")
    con.read_parquet(files[KERNELINDEX_KIND], filename=True, union_by_name=True).create_view("ki_raw")
    # One staged file may back several sources (identical snapshots): join on the staged path.
    con.execute(CSV_STAGED_SQL)
    con.execute("""
        create or replace temp view ki_staged as
        select s.source_path, r.* from ki_raw r join batch_source s on s.staged_path = r.filename
    """)
    con.register(
        "problems",
        pa.table(
            {
                "source_file": pa.array([p[0] for p in problems], pa.string()),
                "location": pa.array(["file"] * len(problems), pa.string()),
                "reason": pa.array([str(p[1]) for p in problems], pa.string()),
                "raw": pa.array([p[2] for p in problems], pa.string()),
            }
        ),
    )
    con.execute(f"create or replace temp table known_gpu as {known_gpu}")
    con.execute(f"create or replace temp table known_record as {known_record}")
    con.execute(f"create or replace temp table known_dim_digest as {known_dim_digest}")
    for macro in MACROS:
        con.execute(macro)
    return run_models(models(), DuckScripts(con), template=TEMPLATE)
