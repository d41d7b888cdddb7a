"""One CSV row, and one CSV file, as KernelIndex maps them: `parseRows` of
`apps/web/src/server/import/liger/discover.ts` and the per-row loop of `reconcileLiger`
(`apps/web/src/server/import/liger/reconcile.ts`), github.com/SamMausberg/KernelIndex at e6c5a71 (a reading copy:
../shared/reference/kernelindex, relative to the checkout).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pipeline.contracts.kernelindex.identity import IDENTITY_COLUMNS, Identity, Skip, resolve_identity
from pipeline.contracts.kernelindex.liger_types import CSV_COLUMNS
from pipeline.contracts.kernelindex.manifests import operation_manifest
from pipeline.contracts.kernelindex.run import run_manifest
from pipeline.contracts.kernelindex.run_text import run_digest


def header_problem(header: list[str]) -> str | None:
    """What `parseRows` says of every row of a file with this header (as written, unstripped), or None: a
    missing column rejects the file, an unexpected one every row (the row schema is strict)."""
    missing = [c for c in CSV_COLUMNS if c not in header]
    if missing:
        return f"expected column {', '.join(repr(c) for c in missing)} missing"
    extra = [c for c in header if c not in CSV_COLUMNS]
    return f"unrecognized keys {extra}" if extra else None


@dataclass(frozen=True)
class MappedRow:
    """A row KernelIndex maps: its run, the run's digest and externalId, and the five objects it points at."""

    external_id: str
    run: dict[str, Any]
    run_digest: str
    identity: Identity

    def __hash__(self) -> int:
        return hash((self.external_id, self.run_digest))

    @property
    def digests(self) -> dict[str, str]:
        i = self.identity
        return {
            "runDigest": self.run_digest,
            "protocolDigest": i.protocol_digest,
            "workloadDigest": i.workload_digest,
            "environmentDigest": i.environment_digest,
            "implementationDigest": i.implementation_digest,
            "operationDigest": i.operation_digest,
        }

    def objects(self, commit: str = "") -> dict[str, dict[str, Any]]:
        """The six objects by kind; `commit` only goes into the OperationSpec's metadata.sourceRefs."""
        i = self.identity
        return {
            "OperationSpec": operation_manifest(i.kernel, commit),
            "WorkloadCase": i.workload,
            "ImplementationRevision": i.implementation,
            "BenchmarkProtocol": i.protocol,
            "ExecutionEnvironment": i.environment,
            "BenchmarkRun": self.run,
        }


def _resolve_row(row: Mapping[str, str]) -> Identity | Skip:
    return resolve_identity(*(row[c] for c in IDENTITY_COLUMNS))


def map_row(row: Mapping[str, str]) -> MappedRow | Skip:
    """One CSV row (column name -> string, as upstream writes it) -> its run and five objects, or a Skip.

    A single row cannot be a duplicate: that takes the rows before it (`map_file`)."""
    if row["metric_name"] != "speed":
        return Skip("memoryRows")
    identity = _resolve_row(row)
    if isinstance(identity, Skip):
        return identity
    try:
        run, external_id = run_manifest(row, identity)
    except ValueError as error:
        return Skip("issues", f"{identity.kernel}/{row['kernel_provider']}/{row['x_value']}", str(error))
    return MappedRow(external_id, run, run_digest(run), identity)


def parse_csv(text: str) -> tuple[list[dict[str, str]], list[str]]:
    """`parseRows`: header + records -> rows by column name, and the problems (KernelIndex's parse issues).

    A missing expected column rejects the file; a record with the wrong number of fields, or (the row schema
    being strict) any record of a file with an unexpected column, is an issue. Blank lines are skipped.
    Python's csv module stands in for KernelIndex's minimal RFC 4180 parser; they agree on well-formed CSV."""
    table = [r for r in csv.reader(io.StringIO(text, newline="")) if len(r) > 1 or (r and r[0] != "")]
    if not table:
        return [], ["csv: empty"]
    header = table[0]
    missing = [c for c in CSV_COLUMNS if c not in header]
    if missing:
        return [], [f"header: expected column '{c}' is missing" for c in missing]
    extra = [c for c in header if c not in CSV_COLUMNS]
    rows: list[dict[str, str]] = []
    issues: list[str] = []
    for index, record in enumerate(table[1:]):
        if len(record) != len(header):
            issues.append(f"row {index + 2}: expected {len(header)} fields, found {len(record)}")
        elif extra:
            issues.append(f"row {index + 2}: unrecognized keys {extra}")
        else:
            rows.append(dict(zip(header, record, strict=True)))
    return rows, issues


def empty_skipped() -> dict[str, Any]:
    return {
        "memoryRows": 0,
        "uncuratedKernels": {},
        "unknownConfig": {},
        "unknownProvider": {},
        "unknownGpu": {},
        "duplicateRows": 0,
    }


@dataclass
class FileMapping:
    """What `reconcileLiger` makes of one file: the runs in row order, skips counted as in its report."""

    rows: int
    runs: list[MappedRow] = field(default_factory=list)
    skipped: dict[str, Any] = field(default_factory=empty_skipped)
    issues: list[Skip] = field(default_factory=list)
    operations: set[str] = field(default_factory=set)
    workloads: set[str] = field(default_factory=set)
    implementations: set[str] = field(default_factory=set)
    implementation_digests: set[str] = field(default_factory=set)

    def summary(self) -> dict[str, Any]:
        """The golden summary.json's fields for this file (but `file` and `parseIssues`)."""
        return {
            "rows": self.rows,
            "runs": len(self.runs),
            "workloads": len(self.workloads),
            "implementations": len(self.implementations),
            "distinctImplDigests": len(self.implementation_digests),
            "operations": len(self.operations),
            "skipped": self.skipped,
            "issues": len(self.issues),
        }


def map_file(rows: Iterable[Mapping[str, str]]) -> FileMapping:
    """All rows of one CSV file, in order, as `reconcileLiger` takes them: a run whose externalId an earlier
    row of the same file already made is a duplicate (`duplicateRows`), and the first one wins."""
    rows = list(rows)
    result = FileMapping(rows=len(rows))
    skipped = result.skipped
    seen: set[str] = set()
    for row in rows:
        mapped = map_row(row)
        if isinstance(mapped, Skip):
            if mapped.reason == "memoryRows":
                skipped["memoryRows"] += 1
            elif mapped.reason == "issues":
                result.issues.append(mapped)
            else:
                counts = skipped[mapped.reason]
                counts[mapped.key] = counts.get(mapped.key, 0) + 1
            if mapped.reason == "unknownGpu":  # the OperationSpec is made before the GPU is looked up
                result.operations.add(row["kernel_name"])
            if mapped.reason != "issues":
                continue
            identity = _resolve_row(row)
        else:
            identity = mapped.identity
        assert isinstance(identity, Identity)
        result.operations.add(identity.kernel)
        result.workloads.add(identity.workload_key)
        result.implementations.add(f"{identity.kernel}/{row['kernel_provider']}")
        result.implementation_digests.add(identity.implementation_digest)
        if isinstance(mapped, Skip):
            continue
        if mapped.external_id in seen:
            skipped["duplicateRows"] += 1
            continue
        seen.add(mapped.external_id)
        result.runs.append(mapped)
    return result
