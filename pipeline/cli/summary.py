"""The closing summary of `make run`: what the warehouse holds, what the newest version's verdicts
say (and how much of it was compared at all), each regression by commit and by version (capped),
which checks failed or warned, where the report and the dashboard are.

Reads the warehouse read-only and one run recorded in the Dagster instance of ``$DAGSTER_HOME``:
the run `make run` just executed, named by its id. Several processes may share ``$DAGSTER_HOME``
(the daemon's scheduled runs, a second `make run`), so "the latest run there" may be another's.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pipeline.common import duck
from pipeline.config import duckdb_path, warehouse_dir, warehouse_uri
from pipeline.outputs.alerts.lead import summary_lines as alert_lines
from pipeline.outputs.report.queries import named_regressions, newest_overview
from pipeline.serve.names import FACT_FILES

# regressions named per axis before "... and N more"
REGRESSION_LINES = 20


def warehouse_lines(con, run_id: str | None = None) -> list[str]:
    """What liger.duckdb holds. Its newest warehouse run is said to be ``run_id``'s only when that
    Dagster run published it: after a failed or a nothing-new run it is an earlier run's."""
    facts, folded, record_only, by_digest, by_id, by_heuristic, ki_facts = con.execute(
        "select count(*), count(*) filter (where origin = 'csv+kernelindex'), "
        "count(*) filter (where origin = 'kernelindex'), count(*) filter (where fold_rule = 'run digest'), "
        "count(*) filter (where fold_rule = 'externalId'), count(*) filter (where fold_rule = 'heuristic'), "
        f"count(*) filter (where identity = 'kernelindex') from {FACT_FILES}"
    ).fetchone()
    sources, rows_read = con.execute("select count(*), coalesce(sum(rows_read), 0) from source").fetchone()
    by_kind = con.execute("select kind, count(*) from source group by 1 order by 1").fetchall()
    reasons = con.execute("select reason, count(*) from quarantine group by 1 order by 2 desc, 1").fetchall()
    has_log = con.execute("select count(*) from duckdb_views() where view_name = 'warehouse_run'").fetchall()[0][0]
    runs = (
        con.execute(
            "select seq, mode, reason, json_extract(stats, '$.facts_inserted')::bigint, run_id "
            "from warehouse_run order by seq desc limit 1"
        ).fetchall()
        if has_log
        else []
    )
    lines = [
        *(_committed_line(seq, mode, why, new, by, run_id) for seq, mode, why, new, by in runs),
        f"facts:     {facts:,}  (KernelIndex's identity: {ki_facts:,}, derived: {facts - ki_facts:,}; "
        f"record-only facts: {record_only:,})",
        f"folded kernelindex records: {folded:,} (run digest: {by_digest:,}, externalId: {by_id:,}, "
        f"heuristic: {by_heuristic:,})",
        f"sources:   {sources:,}  ({', '.join(f'{k}: {n:,}' for k, n in by_kind)}; {rows_read:,} rows read)",
        f"quarantined rows: {sum(n for _, n in reasons):,}",
        *(f"  {reason:<26} {n:,}" for reason, n in reasons),
    ]
    newest = newest_overview(con)
    lines += [f"newest version {newest.sentence()}", f"  {newest.regressions_line()}"]
    return lines + regression_lines(con)


def regression_lines(con, limit: int = REGRESSION_LINES) -> list[str]:
    """Each regression by commit (commit_regressions) and by version (sweep_regressions), newest
    first: kernel, pass, metric, GPU, the pair and the ratio; ``limit`` lines per axis."""
    lines = []
    for axis, view in (("commit", "commit_regressions"), ("version", "sweep_regressions")):
        named, total = named_regressions(con, axis, limit)
        if not total:
            lines.append(f"regressions by {axis}: none ({view})")
            continue
        lines.append(f"regressions by {axis}: {total:,} (newest first; {view})")
        lines += [f"  {r.line()}" for r in named]
        if total > len(named):
            lines.append(f"  … and {total - len(named):,} more; see the report")
    return lines


def _committed_line(seq: int, mode: str, why: str, new: int | None, by: str, run_id: str | None) -> str:
    what = f"warehouse run {seq} ({mode}: {why}; {new or 0:,} new facts)"
    if run_id is None or by == run_id:
        return f"committed: {what}"
    # not "this run published nothing": a run may publish, then fail before liger.duckdb is rebuilt
    return f"published: {what}, by Dagster run {by}, not by this run"


def _cause(error) -> str:
    """The exception that failed a step, not Dagster's wrapper around it ("Error occurred while
    executing op …"); its own cause stays unsaid (WarehouseBusy says more than filelock's Timeout)."""
    while error.cause is not None and error.message.startswith("dagster._core.errors."):
        error = error.cause
    return error.message.strip()


def run_lines(run_id: str | None = None, instance=None) -> list[str]:
    """Status of run ``run_id`` (else the latest run) in $DAGSTER_HOME and every check that did not
    pass in it. `make run` names its own run, so another run sharing $DAGSTER_HOME is never shown.
    ``instance``: the caller's open instance (opening one checks its schema: a third of a second)."""
    import dagster as dg

    if instance is None:
        with dg.DagsterInstance.get() as own:
            return run_lines(run_id, own)
    run = instance.get_run_by_id(run_id) if run_id else next(iter(instance.get_runs(limit=1)), None)
    if run is None:
        return [f"run:       {run_id or 'none'} not recorded in $DAGSTER_HOME"]
    evaluations = [
        e.get_dagster_event().event_specific_data
        for e in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION)
    ]
    failures = [e.get_dagster_event() for e in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.STEP_FAILURE)]
    named = "" if run_id else "; the latest in $DAGSTER_HOME, no run named"
    lines = [f"run:       {run.status.value} ({run.run_id}{named})"]
    lines += [f"  step failed: {f.step_key}: {_cause(f.event_specific_data.error)}" for f in failures]
    not_passed = [e for e in evaluations if not e.passed]
    passed = len(evaluations) - len(not_passed)
    warned = sum(e.severity == dg.AssetCheckSeverity.WARN for e in not_passed)
    lines.append(f"checks:    {passed} passed, {warned} warned, {len(not_passed) - warned} failed")
    for e in not_passed:
        word = "WARN " if e.severity == dg.AssetCheckSeverity.WARN else "ERROR"
        key = e.asset_check_key
        text = e.description or ""
        lines.append(f"  {word} {key.asset_key.to_user_string()}.{key.name}: {text}")
    return lines


def main(run_id: str | None = None, nothing_new: str | None = None, instance=None) -> int:
    path = duckdb_path()
    # A first run that fails has no liger.duckdb yet: its status and failed step must still be said.
    if path.exists():
        with duck.connect(path, read_only=True, remote_root=warehouse_uri()) as con:
            # alerts first: one line per change, then what the warehouse holds
            lines = [f"warehouse: {path}", *alert_lines(con), *warehouse_lines(con, run_id)]
    else:
        lines = [f"warehouse: {path} not built (no run has published one)"]
    lines += run_lines(run_id, instance)
    if nothing_new:
        lines.append(f"           {nothing_new}")
    report = Path(warehouse_dir()) / "reports" / "regressions.html"
    lines.append(f"report:    {report}" if report.exists() else f"report:    not written ({report} missing)")
    site = Path(warehouse_dir()) / "site" / "index.html"
    lines.append(f"dashboard: {site}" if site.exists() else f"dashboard: not written ({site} missing)")
    print("\n".join(lines))
    return 0 if path.exists() else 1


if __name__ == "__main__":  # `python -m pipeline.cli.summary [RUN_ID]`: without an id, the latest run, said so
    raise SystemExit(main(sys.argv[1] if len(sys.argv) > 1 else None))
