"""The candidate run of a gate: its CSV(s) read exactly as the warehouse reads them (the staging
reader and the normalize models, so its rows and digests are the warehouse's), into rows shaped like
``measurements``, in a scratch folder: nothing reaches the warehouse.

A file the reader refuses whole, a row it quarantines, or a run without a single measurement is bad
input: the gate says which file and why (``GateInputError``) rather than judge part of a run.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa

from pipeline.contracts.sources import CSV_KIND, SourceFile, file_sha256
from pipeline.model.run import run_batch
from pipeline.stage.store import StagingStore

MAX_REJECTS_SHOWN = 5
# the measured columns ranked_measurements reads (both sides of a gate take these, then their place on
# the commit axis: version_rank, benchmarked_commit, commit_status, release, commit_order, snapshot)
FACT_COLUMNS = """measurement_digest, kernel_name, kernel_provider, kernel_operation_mode, metric_name,
    metric_unit, gpu_name, x_name, x_label, x_value, extra_config, liger_version, observed_at, p20, p50, p80,
    try_cast(x_value as double) as x_numeric"""


class GateInputError(ValueError):
    """Bad input: the message names the file (or the base) and what is wrong."""


@dataclass(frozen=True)
class Candidate:
    rows: pa.Table  # measurements-shaped: one row per measurement of the run
    files: tuple[str, ...]
    gpus: tuple[str, ...]


def candidate_files(run: Path) -> list[Path]:
    """A CSV, or every ``*.csv`` under a folder (e.g. upstream's ``benchmark/data/``)."""
    if not run.exists():
        raise GateInputError(f"{run}: no such file or folder")
    if run.is_dir():
        files = sorted(p for p in run.rglob("*.csv") if p.is_file())
        if not files:
            raise GateInputError(f"{run}: a folder without any *.csv file")
        return files
    return [run]


def _sources(files: list[Path]) -> list[SourceFile]:
    out = []
    for i, path in enumerate(files):
        try:
            sha = file_sha256(path)
        except OSError as exc:
            raise GateInputError(f"{path}: unreadable ({exc.strerror or exc})") from exc
        name = f"candidate/{i}/{path.name}"
        out.append(SourceFile(path=path, source_path=name, kind=CSV_KIND, content_sha256=sha,
                              size_bytes=path.stat().st_size))  # fmt: skip
    return out


def _rejects_message(rejects: list[tuple], by_name: dict[str, Path]) -> str:
    shown = [f"{by_name.get(f, f)} ({loc}): {reason}: {str(raw)[:160]!r}" for f, loc, reason, raw in rejects]
    more = len(rejects) - MAX_REJECTS_SHOWN
    text = "; ".join(shown[:MAX_REJECTS_SHOWN]) + (f"; … {more} more" if more > 0 else "")
    return f"malformed input, {len(rejects)} rejected line(s) or file(s): {text}"


def load_candidate(run: Path, *, commit_label: str, snapshot: str) -> Candidate:
    """The run's measurements as the warehouse would stage them, placed on the commit axis after the
    base (``commit_order`` 1, ``benchmarked_commit`` = ``commit_label``)."""
    files = candidate_files(run)
    sources = _sources(files)
    by_name = {s.source_path: s.path for s in sources}
    with tempfile.TemporaryDirectory(prefix="liger-gate-") as tmp:
        store = StagingStore(Path(tmp) / "staging")
        store.stage(sources)
        con = duckdb.connect()
        try:
            run_batch(con, sources, store.path, store.empty_templates(), [])
            rejects = con.execute(
                "select source_file, location, reason, raw from batch_quarantine order by source_file, location"
            ).fetchall()
            if rejects:
                raise GateInputError(_rejects_message(rejects, by_name))
            rows = con.sql(
                f"""select {FACT_COLUMNS}, null::bigint as version_rank, $commit as benchmarked_commit,
                        'candidate' as commit_status, null::varchar as release, 1::bigint as commit_order,
                        $snapshot as snapshot
                    from batch_fact where origin like 'csv%'""",
                params={"commit": commit_label, "snapshot": snapshot},
            ).to_arrow_table()
        finally:
            con.close()
    if rows.num_rows == 0:
        raise GateInputError(f"{run}: no measurement in {', '.join(str(f) for f in files)} (empty or header only)")
    gpus = tuple(sorted({g for g in rows.column("gpu_name").to_pylist() if g}))
    return Candidate(rows, tuple(str(f) for f in files), gpus)
