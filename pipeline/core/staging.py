"""Staged parquet layout shared by the CSV and kernelindex readers."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

QUARANTINE_SCHEMA = pa.schema(
    [("location", pa.string()), ("reason", pa.string()), ("raw", pa.string())]
)

RAW_PREVIEW_CHARS = 4096  # raw text kept in quarantine is capped: a 1 GB line must not land in memory twice


def atomic_path(final: Path) -> Path:
    """A sibling temp path; rename it onto ``final`` once fully written."""
    final.parent.mkdir(parents=True, exist_ok=True)
    return final.with_name(f".{final.name}.{uuid.uuid4().hex}.tmp")


def publish(tmp: Path, final: Path) -> None:
    os.replace(tmp, final)


def write_table_atomic(table: pa.Table, final: Path) -> None:
    tmp = atomic_path(final)
    pq.write_table(table, tmp)
    publish(tmp, final)


def quarantine_table(items: list[tuple[str, str, str]]) -> pa.Table:
    loc, reason, raw = zip(*items) if items else ((), (), ())
    return pa.table(
        {"location": list(loc), "reason": [str(r) for r in reason], "raw": [r[:RAW_PREVIEW_CHARS] for r in raw]},
        schema=QUARANTINE_SCHEMA,
    )
