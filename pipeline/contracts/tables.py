"""The table registry: every Delta table the warehouse writes, with its columns, key and docs.

This is the only list. The merge takes its schemas from here, the run log its commit order, the
Dagster assets their column descriptions, the DuckDB build the tables it exposes.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

S = pa.string()
F = pa.float64()
I64 = pa.int64()
UTC_TS = pa.timestamp("us", tz="UTC")


@dataclass(frozen=True)
class Column:
    name: str
    type: pa.DataType
    description: str


@dataclass(frozen=True)
class Table:
    name: str
    description: str
    columns: tuple[Column, ...]
    key: tuple[str, ...] = ()
    public: bool = True  # an asset users see; internal tables feed the readers' views only

    @property
    def schema(self) -> pa.Schema:
        return pa.schema([(c.name, c.type) for c in self.columns])

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)


def _c(name: str, description: str, type_: pa.DataType = S) -> Column:
    return Column(name, type_, description)


_SERIES = (
    _c("kernel_name", "Liger kernel, as upstream's benchmark names it"),
    _c("kernel_provider", "implementation benchmarked: liger, torch, huggingface, ..."),
    _c("kernel_operation_mode", "timed pass: forward, backward, full"),
)
_QUANTILES = (
    _c("p20", "20th percentile of the measured values, in metric_unit", F),
    _c("p50", "median of the measured values, in metric_unit", F),
    _c("p80", "80th percentile of the measured values, in metric_unit", F),
)
_OBJECT = (
    _c("api_version", "kernelindex apiVersion of the object"),
    _c("kind", "kernelindex kind of the object"),
    _c("object_json", "the object, whole, as JSON (null for a bare reference)"),
    _c("origin", "kernelindex (from a record), derived (from a CSV row) or referenced"),
)
_RUN_SEQ = _c("run_seq", "warehouse run that committed the row (warehouse_run.seq)", I64)

FACT_MEASUREMENT = Table(
    "fact_measurement",
    "One row per distinct measurement (digest-keyed): p20/p50/p80 in the CSV unit, its own dimension "
    "digests. Readers add provenance and learned dimensions (liger.duckdb).",
    (
        _c("measurement_digest", "sha256 of the measurement's identity (ARCHITECTURE.md)"),
        *_SERIES,
        _c("metric_name", "speed or memory"),
        _c("metric_unit", "ms or MB"),
        _c("gpu_name", "GPU as the harness names it"),
        _c("x_name", "swept parameter"),
        _c("x_label", "label of the swept parameter"),
        _c("x_value", "point of the sweep (text as written)"),
        _c("extra_config", "canonical JSON of the fixed config"),
        _c("liger_version", "Liger version benchmarked"),
        _c("observed_at", "when the sweep ran (UTC)", UTC_TS),
        *_QUANTILES,
        _c("environment_digest", "ExecutionEnvironment digest"),
        _c("protocol_digest", "BenchmarkProtocol digest"),
        _c("workload_digest", "WorkloadCase digest"),
        _c("implementation_digest", "ImplementationRevision digest"),
        _c("operation_digest", "OperationSpec digest (KernelIndex's for a curated kernel, else derived)"),
        _c("origin", "csv, kernelindex or both"),
        _c("occurrence", "ordinal among the rows of its file identical in every field (part of the identity)", I64),
        _c("identity", "kernelindex (the four digests and the run are KernelIndex's own) or derived (our rules)"),
        _c("identity_reason", "why derived: memory metric, kernel not curated by KernelIndex, ..."),
        _c("external_id", "KernelIndex run's sourceNative.externalId (null when derived)"),
        _c("run_digest", "KernelIndex BenchmarkRun digest (null when derived)"),
        _c("fold_rule", "how a kernelindex record folded into this CSV fact: run digest, externalId or heuristic"),
        _RUN_SEQ,
    ),
    key=("measurement_digest",),
)
FACT_SIGHTING = Table(
    "fact_sighting",
    "Append-only: one row per measurement x source content that carried it (path, content sha256, "
    "upstream commit and date).",
    (
        _c("measurement_digest", "the fact"),
        _c("source_path", "input path under data_raw or git:<commit>:<path>"),
        _c("content_sha256", "sha256 of the source content"),
        _c("upstream_path", "path in upstream's repository"),
        _c("upstream_commit", "upstream commit that held the file"),
        _c("committed_at", "date of that commit (UTC)", UTC_TS),
        _RUN_SEQ,
    ),
    key=("measurement_digest", "source_path", "content_sha256"),
)
DIM_ENVIRONMENT = Table(
    "dim_environment",
    "Execution environments (GPU hosts) keyed by digest.",
    (_c("environment_digest", "ExecutionEnvironment digest"), _c("gpu_name", "GPU as the harness names it"), *_OBJECT),
    key=("environment_digest",),
)
DIM_PROTOCOL = Table(
    "dim_protocol",
    "Benchmark protocols (timed pass, metric) keyed by digest.",
    (
        _c("protocol_digest", "BenchmarkProtocol digest"),
        _c("kernel_operation_mode", "timed pass"),
        _c("metric_name", "speed or memory"),
        _c("metric_unit", "ms or MB"),
        *_OBJECT,
    ),
    key=("protocol_digest",),
)
DIM_WORKLOAD = Table(
    "dim_workload",
    "Workloads (kernel, x point, config) keyed by digest.",
    (
        _c("workload_digest", "WorkloadCase digest"),
        _c("kernel_name", "kernel"),
        _c("x_name", "swept parameter"),
        _c("x_value", "point of the sweep"),
        _c("extra_config", "canonical JSON of the fixed config"),
        *_OBJECT,
    ),
    key=("workload_digest",),
)
DIM_IMPLEMENTATION = Table(
    "dim_implementation",
    "Implementations (kernel, provider, Liger release) keyed by digest.",
    (
        _c("implementation_digest", "ImplementationRevision digest"),
        _c("kernel_name", "kernel"),
        _c("kernel_provider", "provider"),
        _c("liger_version", "Liger version"),
        *_OBJECT,
    ),
    key=("implementation_digest",),
)
DIM_OPERATION = Table(
    "dim_operation",
    "Operations (OperationSpec: the module computation of a kernel) keyed by digest.",
    (_c("operation_digest", "OperationSpec digest"), _c("kernel_name", "kernel"), *_OBJECT),
    key=("operation_digest",),
)
KERNELINDEX_RECORD = Table(
    "kernelindex_record",
    "Every kernelindex run received, with its four dimension digests (fold input).",
    (
        _c("kernel_name", "from sourceNative.benchmark"),
        _c("kernel_operation_mode", "timed pass"),
        _c("kernel_provider", "from externalId"),
        _c("gpu_name", "resolved GPU name"),
        _c("observed_at", "run.observedAt (UTC)", UTC_TS),
        _c("observed_at_text", "observedAt as written"),
        _c("liger_version", "metadata.labels.liger_version"),
        *_QUANTILES,
        _c("protocol_digest", "BenchmarkProtocol digest"),
        _c("environment_digest", "ExecutionEnvironment digest"),
        _c("workload_digest", "WorkloadCase digest"),
        _c("implementation_digest", "ImplementationRevision digest"),
        _c("protocol_json", "the record's protocol, whole"),
        _c("environment_json", "the record's environment, whole"),
        _c("run_digest", "digest of the record's run"),
        _c("external_id", "run.spec.sourceNative.externalId"),
    ),
    public=False,
)
LEARNED_DIMENSION = Table(
    "learned_dimension",
    "Protocol/environment digests learned from records, applied to CSV facts when read.",
    (
        _c("dimension", "protocol or environment"),
        _c("gpu_name", "GPU"),
        _c("kernel_operation_mode", "timed pass"),
        _c("metric_unit", "ms or MB"),
        _c("digest", "the learned digest"),
    ),
    public=False,
)
QUARANTINE = Table(
    "quarantine",
    "Rejected rows and files: source_file, location, reason code, raw text.",
    (
        _c("source_file", "input path"),
        _c("location", "line or record number, or 'file'"),
        _c("reason", "reason code (pipeline/contracts/reasons.py)"),
        _c("raw", "the rejected text, capped"),
        _RUN_SEQ,
    ),
)
SOURCE = Table(
    "source",
    "One row per ingested file content: path, content sha256, kind, upstream commit/date, rows read/quarantined.",
    (
        _c("source_path", "input path under data_raw or git:<commit>:<path>"),
        _c("kind", "csv or kernelindex"),
        _c("content_sha256", "sha256 of the content"),
        _c("size_bytes", "bytes", I64),
        _c("upstream_path", "path in upstream's repository"),
        _c("upstream_commit", "upstream commit that held it"),
        _c("committed_at", "that commit's date (UTC)", UTC_TS),
        _c("in_upstream_head", "whether upstream's HEAD still holds this content", pa.bool_()),
        _c("rows_read", "data rows read", I64),
        _c("rows_quarantined", "rows sent to quarantine", I64),
        _c("file_reason", "reason code when the whole file was rejected"),
        _c("snapshot", "the gh-pages run this file is: <folder>@<content sha256[:12]> (null otherwise)"),
        _RUN_SEQ,
    ),
    key=("source_path",),
)
BENCHMARK_SNAPSHOT = Table(
    "benchmark_snapshot",
    "One row per gh-pages benchmark run: the commit it benchmarked, its release and its place in commit order.",
    (
        _c("snapshot", "<folder>@<content sha256[:12]>"),
        _c("folder", "gh-pages folder: <short sha>[-v<release>]"),
        _c("commit", "benchmarked commit: the full sha when the clone resolves it, else the folder's short sha"),
        _c("short_commit", "first 7 hex digits"),
        _c("commit_status", "resolved (full sha from a clone) or short"),
        _c("release", "release from the folder's -v suffix, or from a tag on the commit"),
        _c("release_source", "folder or tag"),
        _c("commit_order", "position in commit order, 0 = oldest", I64),
        _c("commits_between", "first-parent commits since the previous benchmarked commit", I64),
        _c("order_source", "what ordered it: git (first parent of main), commits.txt or timestamp"),
        _c("committed_at", "the commit's committer date (UTC)", UTC_TS),
        _c("subject", "the commit's subject"),
        _c("on_first_parent", "whether the commit is on main's first-parent chain", pa.bool_()),
        _c("kernel_changed", "whether a commit since the previous snapshot touches src/liger_kernel/", pa.bool_()),
        _c(
            "harness_changed",
            "whether a commit since the previous snapshot changes a benchmark script or a shared harness "
            "definition a script uses (false with kernel_changed false: a re-run)",
            pa.bool_(),
        ),
        _c("run_started_at", "earliest timestamp in the snapshot (UTC)", UTC_TS),
        _c("gh_pages_commit", "gh-pages commit that wrote it (clone only)"),
        _c("origin", "gh_pages (upstream's CI run) or bisect (our run at a commit: commit_runs/<sha>/<run id>/)"),
        _c("environment", "our runs: environment.json as JSON text (GPU, driver, CUDA, torch, Triton, Python, host)"),
    ),
    key=("snapshot",),
)
COMMIT_CHANGE = Table(
    "commit_change",
    "Every commit between two consecutive benchmarked commits, with the files it touches under src/liger_kernel/ "
    "and the changes it makes to the benchmark harness.",
    (
        _c("from_commit", "earlier benchmarked commit"),
        _c("to_commit", "later benchmarked commit"),
        _c("commit", "a commit in from_commit..to_commit"),
        _c("committed_at", "its committer date (UTC)", UTC_TS),
        _c("subject", "its subject"),
        _c("first_parent", "on main's first-parent chain", pa.bool_()),
        _c("kernel_paths", "files it touches under src/liger_kernel/", pa.list_(S)),
        _c(
            "harness_changes",
            "how it changes upstream's harness: benchmark scripts it changes, and '<script> <- <shared module>:"
            "<definition>' for a changed definition of benchmark/scripts/utils.py (or another shared module) "
            "that the script uses (history.paths.touches_harness)",
            pa.list_(S),
        ),
    ),
    key=("to_commit", "commit"),
)

# Every table a run may commit, in commit order; the run log is written after all of them.
WAREHOUSE_TABLES: tuple[Table, ...] = (
    FACT_MEASUREMENT,
    FACT_SIGHTING,
    DIM_ENVIRONMENT,
    DIM_PROTOCOL,
    DIM_WORKLOAD,
    DIM_IMPLEMENTATION,
    DIM_OPERATION,
    KERNELINDEX_RECORD,
    LEARNED_DIMENSION,
    QUARANTINE,
    SOURCE,
    BENCHMARK_SNAPSHOT,
    COMMIT_CHANGE,
)

RUN_LOG = Table(
    "warehouse_run",
    "The run log: a row per published run, naming every table's version.",
    (
        _c("seq", "run sequence number", I64),
        _c("run_id", "Dagster run id"),
        _c("committed_at", "when the run was published (UTC)", UTC_TS),
        _c("mode", "full, incremental or unchanged"),
        _c("reason", "why that mode"),
        _c("versions", "JSON: table -> Delta version"),
        _c("stats", "JSON: run figures"),
    ),
    key=("seq",),
)
STAGED_CONTENT = Table(
    "staged_content",
    "One row per input a partition run staged (who staged what, where, when).",
    (
        _c("partition_key", "data_raw path or git:<commit>"),
        _c("source_path", "input path"),
        _c("kind", "csv or kernelindex"),
        _c("content_sha256", "sha256 of the content"),
        _c("size_bytes", "bytes", I64),
        _c("newly_staged", "false when the content was already staged", pa.bool_()),
        _c("staged_at", "when (UTC)", UTC_TS),
        _c("run_id", "Dagster run id"),
        _c("host", "host:pid"),
    ),
    public=False,
)

BY_NAME: dict[str, Table] = {t.name: t for t in (*WAREHOUSE_TABLES, RUN_LOG, STAGED_CONTENT)}
TABLE_NAMES = tuple(t.name for t in WAREHOUSE_TABLES)
PUBLIC_TABLES = tuple(t.name for t in WAREHOUSE_TABLES if t.public)
SCHEMAS = {t.name: t.schema for t in WAREHOUSE_TABLES}
DIM_KEYS = {t.name: t.key[0] for t in (DIM_ENVIRONMENT, DIM_PROTOCOL, DIM_WORKLOAD, DIM_IMPLEMENTATION, DIM_OPERATION)}
