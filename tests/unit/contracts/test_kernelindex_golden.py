"""Every shipped upstream CSV (40 from the CSV's git history, 28 from gh-pages) mapped here gives exactly what
KernelIndex's own importer gave: the same runs in the same order (externalId and all five digests), and the same
per-file counts (rows, runs, workloads, implementations, operations, skips by reason)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from pipeline.contracts import kernelindex as ki
from pipeline.contracts.kernelindex.run import run_manifest
from tests.fixtures.shared_data import shared_data

DIGEST_FIELDS = (
    "externalId",
    "runDigest",
    "protocolDigest",
    "workloadDigest",
    "environmentDigest",
    "implementationDigest",
)


def _cases() -> list:
    data = shared_data()
    if data is None:
        return [
            pytest.param(
                None,
                None,
                None,
                marks=pytest.mark.skip(reason="shared data not found beside the repo; set LIGER_SHARED_DATA"),
                id="no-shared-data",
            )
        ]
    cases = []
    for csv_path in sorted((data / "liger_csv_history").glob("*.csv")):
        cases.append(pytest.param("liger_csv_history", csv_path.name, csv_path, id=csv_path.name[:21]))
    for csv_path in sorted((data / "liger_gh_pages" / "benchmarks").glob("*/benchmark.csv")):
        name = f"benchmarks/{csv_path.parent.name}/benchmark.csv"
        cases.append(pytest.param("liger_gh_pages", name, csv_path, id=f"gh-pages-{csv_path.parent.name}"))
    return cases


CASES = _cases()


def _golden_runs(folder: Path, file: str) -> list[dict]:
    stem = file if folder.name == "liger_csv_history" else Path(file).parent.name
    with gzip.open(folder / f"{stem}.runs.jsonl.gz", "rt") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def test_all_68_shipped_files_are_covered():
    if CASES[0].values[0] is None:
        pytest.skip("shared data not found")
    assert len(CASES) == 68


@pytest.mark.parametrize(("folder", "file", "csv_path"), CASES)
def test_file_matches_kernelindex(folder, file, csv_path):
    golden = shared_data() / "kernelindex_golden" / folder
    summary = {entry["file"]: entry for entry in json.loads((golden / "summary.json").read_text())}[file]

    rows, parse_issues = ki.parse_csv(csv_path.read_text(encoding="utf-8-sig"))
    mapped = ki.map_file(rows)

    assert len(parse_issues) == summary["parseIssues"]
    got = mapped.summary()
    assert got["skipped"] == summary["skipped"]
    assert {k: got[k] for k in got if k != "skipped"} == {k: summary[k] for k in got if k != "skipped"}

    expected = _golden_runs(golden, file)
    assert len(mapped.runs) == len(expected) == summary["runs"]
    mine = [{"externalId": run.external_id, **run.digests} for run in mapped.runs]
    mismatches = [
        (m["externalId"], field, m[field], e[field])
        for m, e in zip(mine, expected, strict=True)
        for field in DIGEST_FIELDS
        if m[field] != e[field]
    ]
    assert mismatches == [], f"{len(mismatches)} mismatches, first: {mismatches[:3]}"


@pytest.mark.parametrize(("folder", "file", "csv_path"), CASES)
def test_the_warehouse_fast_run_digest_is_the_reference_one_on_every_row(folder, file, csv_path):
    """The staging's per-row digest (`row_run_digest`, written without building the run) equals
    `run_digest(run_manifest(row))`, the path the golden test above checks, on every shipped row."""
    rows, _ = ki.parse_csv(csv_path.read_text(encoding="utf-8-sig"))
    for row in rows:
        identity = ki.resolve_identity(*(row[c] for c in ki.IDENTITY_COLUMNS))
        if row["metric_name"] != "speed" or isinstance(identity, ki.Skip):
            continue
        run, external_id = run_manifest(row, identity, with_metadata=False)
        names = ("kernel_operation_mode", "kernel_provider", "gpu_name", "timestamp", "y_value_20", "y_value_50")
        fast = ki.row_run_digest(identity, *(row[n] for n in names), row["y_value_80"])
        assert fast == (external_id, ki.run_digest(run)), row
