"""Print what the warehouse holds: facts, sources, quarantined rows by reason (read-only)."""

from __future__ import annotations

import sys

import duckdb

from pipeline.core.settings import duckdb_path


def main() -> int:
    path = duckdb_path()
    if not path.exists():
        print(f"no warehouse at {path}; run `make run`", file=sys.stderr)
        return 1
    with duckdb.connect(str(path), read_only=True) as con:
        facts, folded, record_only = con.execute(
            "select count(*), count(*) filter (where origin = 'csv+kernelindex'), count(*) filter (where origin = 'kernelindex') from measurements"
        ).fetchone()
        sources, rows_read = con.execute("select count(*), coalesce(sum(rows_read), 0) from source").fetchone()
        by_kind = con.execute("select kind, count(*) from source group by 1 order by 1").fetchall()
        reasons = con.execute("select reason, count(*) from quarantine group by 1 order by 2 desc, 1").fetchall()
    print(f"warehouse: {path}")
    print(f"facts:     {facts:,}  (folded kernelindex records: {folded}, record-only facts: {record_only})")
    print(f"sources:   {sources:,}  ({', '.join(f'{k}: {n}' for k, n in by_kind)}; {rows_read:,} rows read)")
    total = sum(n for _, n in reasons)
    print(f"quarantined rows: {total:,}")
    for reason, n in reasons:
        print(f"  {reason:<26} {n:,}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
