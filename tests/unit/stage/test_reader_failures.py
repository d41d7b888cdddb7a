"""Issue 46 case 6: a failure of the reader (out of memory, an I/O error) is not a verdict on the file.

Before: DuckDB's out-of-memory error staged the file as one `unreadable_file` row under its content's
digest, so every later run said "already staged" and the file stayed quarantined for good, even with
more memory. Now nothing is staged for it, the run fails by name before it commits, and the next run
reads it again. The failures are real: DuckDB's own memory limit (LIGER_READER_MEMORY) and the
kernel's file-size limit (RLIMIT_FSIZE) on the staged file's write."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import duckdb
import pyarrow.parquet as pq

from pipeline.contracts.reasons import Reason
from pipeline.contracts.sources import CSV_KIND, SourceFile
from pipeline.stage.store import StagingStore
from tests.conftest import materialize
from tests.fixtures import runs as rs

TOO_LITTLE_MEMORY = "1MB"  # below what DuckDB needs to parse any shipped file


def _staged(wh: Path) -> list[Path]:
    return sorted(p for p in (wh / "staging").rglob("*.parquet") if not p.name.startswith("_empty_"))


def _count(db: Path, sql: str) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchone()[0]


def _failure_message(result: dg.ExecuteInProcessResult) -> str:
    """The step failure's message with its causes (Dagster wraps an op's exception in its own)."""
    failure = next(e for e in result.all_events if e.event_type == dg.DagsterEventType.STEP_FAILURE)
    error, messages = failure.event_specific_data.error, []
    while error is not None:
        messages.append(error.message)
        error = error.cause
    return "\n".join(messages)


def test_an_out_of_memory_read_fails_the_run_by_name_and_the_next_run_reads_the_file(tmp_path, monkeypatch):
    raw = rs.small_data_raw(tmp_path / "raw", n_csv=1, kernelindex=False)
    wh = tmp_path / "wh"
    assert materialize(raw, wh).success
    db = wh / "liger.duckdb"
    facts, staged = _count(db, "select count(*) from fact_measurement"), _staged(wh)
    published = sorted((wh / "tables").rglob("*.json"))
    # a second CSV and a bundle arrive while the reader has too little memory
    new_csv = sorted(rs.CSV_DIR.glob("*.csv"))[1]
    shutil.copy(new_csv, raw / "liger_csv" / new_csv.name)
    (raw / "kernelindex").mkdir()
    bundle = next(rs.KI_DIR.iterdir())
    shutil.copy(bundle, raw / "kernelindex" / bundle.name)
    monkeypatch.setenv("LIGER_READER_MEMORY", TOO_LITTLE_MEMORY)
    result = materialize(raw, wh, raise_on_error=False)
    assert not result.success
    message = _failure_message(result)
    assert "not a verdict" in message and "OutOfMemoryException" in message
    assert f"liger_csv/{new_csv.name}" in message and f"kernelindex/{bundle.name}" in message
    assert _staged(wh) == staged  # nothing recorded for the two files
    assert sorted((wh / "tables").rglob("*.json")) == published  # no commit
    assert _count(db, "select count(*) from fact_measurement") == facts
    # the next run, with the memory back, reads them: no "already staged", no quarantine
    monkeypatch.delenv("LIGER_READER_MEMORY")
    assert materialize(raw, wh).success
    assert _count(db, "select count(*) from fact_measurement") > facts
    assert _count(db, "select count(*) from quarantine where location = 'file'") == 0
    assert _count(db, "select count(*) from source") == 3


# Stages one file with the kernel's file-size limit below the staged Parquet file's size: its write
# fails with EFBIG (an I/O error of the reader, never a verdict on the bytes).
STAGE_UNDER_FSIZE_LIMIT = """
import resource, signal, sys
from pathlib import Path
from pipeline.contracts.sources import SourceFile
from pipeline.stage.store import ReadersFailed, StagingStore
src = Path(sys.argv[1])
store = StagingStore(Path(sys.argv[2]))
source = SourceFile(path=src, source_path="liger_csv/" + src.name, kind="liger_csv", size_bytes=src.stat().st_size)
store.hash_sources([source])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))
try:
    store.stage([source])
except ReadersFailed as exc:
    print(exc)
    sys.exit(3)
"""


def test_an_io_error_while_staging_leaves_nothing_and_the_next_stage_reads_the_file(tmp_path):
    src = sorted(rs.CSV_DIR.glob("*.csv"))[0]
    root = tmp_path / "staging"
    out = subprocess.run(
        [sys.executable, "-c", STAGE_UNDER_FSIZE_LIMIT, str(src), str(root)],
        cwd=rs.REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(rs.REPO)},
        start_new_session=True,
    )
    assert out.returncode == 3, out.stdout + out.stderr[-3000:]
    assert f"liger_csv/{src.name}" in out.stdout and "not a verdict" in out.stdout
    assert not list((root / CSV_KIND).glob("*.parquet"))  # no verdict, and no write-aside file left
    assert not list((root / CSV_KIND).glob(".*"))
    source = SourceFile(path=src, source_path=f"liger_csv/{src.name}", kind=CSV_KIND, size_bytes=src.stat().st_size)
    counts = StagingStore(root).stage([source])
    assert counts["newly_staged"] == 1 and counts["already_staged"] == 0
    rows = pq.read_table(StagingStore(root).path(source)).to_pylist()
    assert rows and not [r for r in rows if r["reason"] == Reason.UNREADABLE_FILE]
