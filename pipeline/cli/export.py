"""`liger-bench export-kernelindex DEST` (`make export-kernelindex DEST=dir`): every fact with
KernelIndex's identity, as KernelIndex records.

Writes, under DEST:
- ``kernelindex/runs.ndjson``: one bundle ``{run, protocol, environment}`` per fact, the format the warehouse
  ingests (data_raw/kernelindex), so DEST can itself be a data root (``LIGER_DATA_RAW=DEST``);
- ``objects.ndjson``: the workload, implementation and operation objects those runs name, one per line (outside
  ``kernelindex/``, so ingesting DEST does not read them as bundles).

The run is rebuilt from the fact (contracts/kernelindex/run.py ``build_run``: the stored p20/p50/p80 doubles, the
externalId, observedAt) and its digest checked against the stored ``run_digest``; protocol, environment and the
other objects are the dimension tables' objects, whole. A fact whose objects the warehouse does not hold whole
(a record that named them by digest only) or whose run cannot be rebuilt is counted and skipped.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from pathlib import Path

import duckdb

from pipeline.common import duck
from pipeline.config import duckdb_path, warehouse_uri
from pipeline.contracts import kernelindex as ki

RUNS_FILE = Path("kernelindex") / "runs.ndjson"
OBJECTS_FILE = Path("objects.ndjson")

_FACTS_SQL = """
    select kernel_name, kernel_operation_mode, kernel_provider, gpu_name, liger_version, observed_at,
           p20, p50, p80, external_id, run_digest, workload_digest, implementation_digest, protocol_digest,
           environment_digest, operation_digest
    from measurements
    where identity = 'kernelindex' and external_id is not null
    order by external_id, run_digest
"""


def _objects(con: duckdb.DuckDBPyConnection, dim: str) -> dict[str, dict]:
    rows = con.execute(f"select {dim}_digest, object_json from dim_{dim} where object_json is not null").fetchall()
    return {digest: json.loads(text) for digest, text in rows}


def _instant(moment: datetime) -> str:
    """`Date.prototype.toISOString` of a UTC wall-clock time."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def rebuild_run(fact: dict) -> dict:
    """A fact's BenchmarkRun, as KernelIndex's importer made it from the row (ValueError if it cannot be)."""
    parts = fact["external_id"].split("/")
    if len(parts) != 6 or fact["kernel_name"] not in ki.KERNELS_BY_NAME:
        raise ValueError(f"not a KernelIndex Liger run: {fact['external_id']}")
    observed: datetime = fact["observed_at"]
    return ki.build_run(
        kernel=fact["kernel_name"],
        mode=fact["kernel_operation_mode"],
        provider=fact["kernel_provider"],
        gpu_name=fact["gpu_name"],
        case_key=parts[4],
        ms20=fact["p20"],
        ms50=fact["p50"],
        ms80=fact["p80"],
        external_id=fact["external_id"],
        observed_at=_instant(observed),
        timestamp=observed.strftime("%Y-%m-%d %H:%M:%S"),
        liger_version=fact["liger_version"] or "",
        implementation_digest=fact["implementation_digest"],
        workload_digest=fact["workload_digest"],
        protocol_digest=fact["protocol_digest"],
        environment_digest=fact["environment_digest"],
    )


def export(con: duckdb.DuckDBPyConnection, dest: Path) -> dict[str, int]:
    """Write the export under ``dest``; returns its counts."""
    dims = {d: _objects(con, d) for d in ("protocol", "environment", "workload", "implementation", "operation")}
    cursor = con.execute(_FACTS_SQL)
    names = [c[0] for c in cursor.description]
    (dest / RUNS_FILE).parent.mkdir(parents=True, exist_ok=True)
    counts = {"runs": 0, "skipped": 0, "run_digest_differs": 0}
    named: dict[str, set[str]] = {"workload": set(), "implementation": set(), "operation": set()}
    with (dest / RUNS_FILE).open("w", encoding="utf-8") as out:
        while batch := cursor.fetchmany(10_000):
            for values in batch:
                fact = dict(zip(names, values, strict=True))
                protocol = dims["protocol"].get(fact["protocol_digest"])
                environment = dims["environment"].get(fact["environment_digest"])
                try:
                    run = rebuild_run(fact)
                except ValueError:
                    run = None
                if run is None or protocol is None or environment is None:
                    counts["skipped"] += 1
                    continue
                counts["run_digest_differs"] += ki.run_digest(run) != fact["run_digest"]
                bundle = {"run": run, "protocol": protocol, "environment": environment}
                out.write(json.dumps(bundle, ensure_ascii=False, separators=(",", ":")) + "\n")
                counts["runs"] += 1
                for dim in named:
                    named[dim].add(fact[f"{dim}_digest"])
    with (dest / OBJECTS_FILE).open("w", encoding="utf-8") as out:
        for dim, digests in named.items():
            for digest in sorted(digests):
                obj = dims[dim].get(digest)
                if obj is not None:
                    out.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")
                    counts[f"{dim}s"] = counts.get(f"{dim}s", 0) + 1
    return counts


def main(argv: list[str] | None = None) -> int:
    from pipeline.cli.parser import parse

    return run(parse(["export-kernelindex", *(sys.argv[1:] if argv is None else argv)]))


def run(args: argparse.Namespace) -> int:
    """`liger-bench export-kernelindex DEST`: 2 when there is no warehouse to export."""
    path = duckdb_path()
    if not path.exists():
        print(f"no warehouse at {path}; run `liger-bench run` (or `make run`) first", file=sys.stderr)
        return 2
    dest = Path(args.dest)
    with duck.connect(path, read_only=True, remote_root=warehouse_uri()) as con:
        counts = export(con, dest)
    print(f"exported to {dest}: " + ", ".join(f"{k}: {v:,}" for k, v in counts.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
