"""Compare any two points of the history: two releases, versions or commits, on one GPU or all.

    import pipeline
    rows = pipeline.compare("0.6.5", "0.7.0")                       # every sweep that moved
    rows = pipeline.compare("0a62700", "4444fdf", gpu="NVIDIA H100 80GB HBM3")

The verdict is THE rule of sql/regress/verdicts/verdicts.sql, not a copy: the analysis models run again on
a private in-memory connection that holds only the measurements of the two chosen steps (so they
are consecutive), with the full warehouse's noise thresholds (``noise_floor``), settings, version
order and benchmarked commits copied in. Thresholds therefore come from every re-run the
warehouse knows, never from the two steps alone.

A point is resolved in this order: a release (``measurements.release``; with a known commit it
is that commit), a Liger version (``liger_version``), a commit (full or short sha, a prefix of
``benchmarked_commit``). Two commits compare on the commit axis; anything else on the version
axis (a release whose commit is unknown is its version).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import duckdb

from pipeline.engine import DuckTarget, run_models
from pipeline.engine.catalog import regress_models

__all__ = [
    "compare",
    "judge_measurements",
    "judge_rows",
    "sweep_verdicts",
    "resolve_point",
    "Point",
    "MOVED",
    "SEVERITY",
    "SEVERITY_SQL",
    "SWEEP_KEY",
    "COMPARE_COLUMNS",
]

MOVED = ("regression", "improvement", "drift", "transient", "inconclusive", "unstable")
# THE sweep key: the series key less its x value (one line of a plot, one row of a sweep verdict)
SWEEP_KEY = (
    "kernel_name",
    "kernel_provider",
    "kernel_operation_mode",
    "metric_name",
    "gpu_name",
    "x_name",
    "extra_config",
)
# THE severity order, worst first: every verdict a kernel author should look at, a change beyond noise
# called or not yet callable; the rest (unchanged, insufficient, ...) after them
SEVERITY = ("regression", "inconclusive", "transient", "unstable", "drift", "improvement")
SEVERITY_SQL = (
    "case verdict " + " ".join(f"when '{v}' then {i}" for i, v in enumerate(SEVERITY)) + f" else {len(SEVERITY)} end"
)
COMPARE_COLUMNS = (
    "kernel_name",
    "kernel_provider",
    "kernel_operation_mode",
    "metric_name",
    "gpu_name",
    "x_name",
    "extra_config",
    "axis",
    "from_label",
    "to_label",
    "from_version",
    "to_version",
    "from_commit",
    "to_commit",
    "from_runs",
    "to_runs",
    "points",
    "points_banded",
    "ratio",
    "reference_providers",
    "reference_ratio",
    "normalized_ratio",
    "threshold",
    "noise_scope",
    "threshold_source",
    "min_detectable_change",
    "verdict",
    "reason",
)
# copied from the full warehouse, so the thresholds are the warehouse's (commit_change: every
# analysis model runs, commit_suspects too, and it reads the commits between benchmarked commits)
_CONTEXT_TABLES = ("regression_settings", "liger_version_order", "benchmark_commit", "commit_change", "noise_floor")


@dataclass(frozen=True)
class Point:
    text: str
    axis: str  # 'commit' | 'version'
    commit: str | None
    version: str | None
    label: str


def _columns(con, relation: str) -> set[str]:
    return {r[0] for r in con.execute(f"describe {relation}").fetchall()}


def resolve_point(con, text: str, gpu: str | None = None) -> Point:
    """A release, version or (short) commit sha, as measured in ``con``'s measurements."""
    text = text.strip()
    where_gpu = " and gpu_name = $gpu" if gpu else ""
    params = {"t": text} | ({"gpu": gpu} if gpu else {})
    has_commits = "benchmarked_commit" in _columns(con, "measurements")
    if has_commits:
        found = con.execute(
            "select distinct benchmarked_commit from measurements"
            f" where release = $t and benchmarked_commit is not null{where_gpu}",
            params,
        ).fetchall()
        if len(found) == 1:
            return Point(text, "commit", found[0][0], text, text)
    found = con.execute(f"select count(*) from measurements where liger_version = $t{where_gpu}", params).fetchall()
    if found[0][0]:
        return Point(text, "version", None, text, text)
    if has_commits and len(text) >= 7 and all(c in "0123456789abcdef" for c in text.lower()):
        found = con.execute(
            "select distinct benchmarked_commit from measurements"
            f" where starts_with(benchmarked_commit, $t){where_gpu}",
            params | {"t": text.lower()},
        ).fetchall()
        if len(found) == 1:
            return Point(text, "commit", found[0][0], None, text)
        if len(found) > 1:
            raise LookupError(f"{text!r} is ambiguous: {sorted(r[0] for r in found)}")
    raise LookupError(
        f"{text!r} is no release, Liger version or benchmarked commit measured{' on ' + gpu if gpu else ''}"
    )


def judge_measurements(source, query: str, params: dict | None = None) -> duckdb.DuckDBPyConnection:
    """The analysis models over the rows ``query`` selects from ``source``'s measurements, on a new
    in-memory connection, with ``source``'s thresholds, settings, version order and commits."""
    return judge_rows(source, source.sql(query, params=params or {}).to_arrow_table())


def judge_rows(source, rows) -> duckdb.DuckDBPyConnection:
    """The analysis models over ``rows`` (an Arrow table shaped like ``measurements``; rows from
    elsewhere too, e.g. a candidate run the warehouse does not hold), on a new in-memory connection,
    with ``source``'s thresholds, settings, version order and commits."""
    scratch = duckdb.connect()
    scratch.register("chosen", rows)
    scratch.execute("create table measurements as select * from chosen")
    scratch.unregister("chosen")
    for table in _CONTEXT_TABLES:
        scratch.register("copied", source.sql(f"select * from {table}").to_arrow_table())
        scratch.execute(f"create table {table}__source as select * from copied")
        scratch.unregister("copied")
    for table in ("regression_settings", "liger_version_order", "benchmark_commit", "commit_change"):
        scratch.execute(f"create table {table} as select * from {table}__source")
    # the full warehouse's noise, not the noise of the two steps alone
    run_models(_judging_models(), DuckTarget(scratch), given={"noise_floor": "noise_floor__source"})
    return scratch


def _judging_models() -> list:
    """The regression models that the chosen rows and the copied tables make (verdicts and what
    reads them), in run order; the rest (source freshness, lineage, alerts) read tables of the whole
    warehouse that a judged scratch does not hold."""
    made = {"measurements", *_CONTEXT_TABLES}
    kept = []
    for model in regress_models():
        if set(model.header.depends_on) <= made:
            kept.append(model)
            made |= set(model.header.creates)
    return kept


def compare(
    from_: str,
    to: str,
    gpu: str | None = None,
    *,
    con: duckdb.DuckDBPyConnection | None = None,
    moved_only: bool = True,
    connect: Callable[[], duckdb.DuckDBPyConnection] | None = None,
) -> list[dict]:
    """Sweep verdicts between two points (releases, versions or commits), worst first.

    ``con``: a connection to the warehouse, or ``connect`` to open one (``pipeline.compare`` passes
    ``pipeline.connect``). With ``moved_only`` only the sweeps whose verdict is one of MOVED are returned."""
    if con is None and connect is None:
        raise TypeError("compare needs con= or connect= (pipeline.compare opens the warehouse)")
    own = con is None
    if own:
        con = connect()
    try:
        a, b = resolve_point(con, from_, gpu), resolve_point(con, to, gpu)
        axis = "commit" if a.axis == b.axis == "commit" else "version"
        if axis == "commit":
            where, params = "benchmarked_commit in ($a, $b)", {"a": a.commit, "b": b.commit}
        else:
            where, params = "liger_version in ($a, $b)", {"a": a.version or a.text, "b": b.version or b.text}
        if gpu:
            where, params = where + " and gpu_name = $gpu", params | {"gpu": gpu}
        scratch = judge_measurements(con, f"select * from measurements where {where}", params)
    finally:
        if own:
            con.close()
    try:
        return sweep_verdicts(scratch, axis, moved_only=moved_only)
    finally:
        scratch.close()


def sweep_verdicts(scratch: duckdb.DuckDBPyConnection, axis: str, *, moved_only: bool = True) -> list[dict]:
    """The sweep rows of ``verdicts`` on ``axis`` of a judged connection, worst first: regressions,
    then the rest of SEVERITY's order, then the unflagged; by |ln ratio| within each."""
    cols = ", ".join(COMPARE_COLUMNS)
    moved = f" and verdict in {MOVED!r}" if moved_only else ""
    cur = scratch.execute(
        f"""select {cols} from verdicts where level = 'sweep' and axis = $axis{moved}
            order by {SEVERITY_SQL}, abs(ln(ratio)) desc nulls last,
                kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, extra_config""",
        {"axis": axis},
    )
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
