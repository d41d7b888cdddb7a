"""The CSV reader's KernelIndex mapping: SQL writes the run of a row with plain numbers and upstream's own
timestamp; any other row goes through the per-row reference (`ki_map`). Both give KernelIndex's answer."""

from __future__ import annotations

import copy
import csv
import gzip
import io
import json
from pathlib import Path

import duckdb
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pipeline.contracts import kernelindex as ki
from pipeline.contracts.digests import object_digest
from pipeline.stage import csv_reader, kernelindex_reader
from tests.fixtures import runs
from tests.fixtures.shared_data import shared_data

COLUMNS = list(ki.CSV_COLUMNS)
SAMPLE_RUN = ki.js_json_parse(json.dumps(json.loads((runs.KI_DIR / "a8e1599773300c7d.json").read_text())["run"]))
BASE = {
    "kernel_name": "rms_norm",
    "kernel_provider": "liger",
    "kernel_operation_mode": "forward",
    "metric_name": "speed",
    "metric_unit": "ms",
    "x_name": "H",
    "x_label": "hidden size",
    "x_value": "1024",
    "y_value_50": "0.05",
    "y_value_20": "0.04",
    "y_value_80": "0.06",
    "extra_benchmark_config_str": '{"M": 2048, "dtype": "torch.bfloat16", "eps": 1e-06}',
    "gpu_name": "NVIDIA H100 80GB HBM3",
    "timestamp": "2025-01-02 03:04:05",
    "liger_version": "0.5.2",
}
NUMBERS = [
    "0.05", "1", "1.0", "12.5", "0.1", "1e-7", "0.000001", "1.5e-5", "123456789.123", ".5", "5.", "+2", "00012",
    "9007.199254740993", "3.0000000000000004", "5e-324", "1e21", "9007199254740993", "-0.0", "-1", "0",
    " 1.5", "1.5 ", "0x10", "", "Infinity", "-Infinity", "NaN", "1e400", "1_0", "abc", "2.2250738585072014e-308",
]  # fmt: skip
TIMESTAMPS = [
    "2025-01-02 03:04:05", "2024-02-29 23:59:59", "2024-02-30 00:00:00", "2024-01-01 24:00:00",
    "2024-01-01T00:00:00", "2024-01-01 00:00:00+02:00", "0999-01-01 00:00:00", "2024-1-01 00:00:00",
    "9999-12-31 23:59:59", "2024-01-01 00:00:60",
]  # fmt: skip


def _rows() -> list[dict]:
    rows = []
    for i, y in enumerate(NUMBERS):
        # each number as the median, and as p20 and p80 around a plain median
        rows.append(BASE | {"y_value_50": y, "x_value": str(1024 + i)})
        rows.append(BASE | {"y_value_20": y, "y_value_80": y, "x_value": str(2048 + i)})
    for i, ts in enumerate(TIMESTAMPS):
        rows.append(BASE | {"timestamp": ts, "x_value": str(4096 + i)})
    rows.append(BASE | {"metric_name": "memory", "metric_unit": "MB"})
    rows.append(BASE | {"kernel_name": "not_a_curated_kernel"})
    rows.append(BASE | {"gpu_name": "Some Unknown GPU"})
    return rows


def _write(path: Path, rows: list[dict]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


def _reference(row: dict) -> tuple[str | None, str | None, str | None]:
    """(externalId, run digest, why no identity) by the golden-tested path: the run built whole, then hashed."""
    mapped = ki.map_row(row)
    if isinstance(mapped, ki.Skip):
        reason = ki.rejected_reason(mapped.problem) if mapped.reason == "issues" else ki.IDENTITY_REASONS[mapped.reason]
        return None, None, reason
    return mapped.external_id, mapped.run_digest, None


def _staged(path: Path, tmp_path: Path) -> list[tuple]:
    out = tmp_path / "staged.parquet"
    csv_reader.stage_csv_file(path, out)
    return duckdb.sql(
        f"select external_id, run_digest, identity_reason from '{out}' order by record_no"  # noqa: S608  a test path
    ).fetchall()


def test_every_number_and_timestamp_shape_maps_as_kernelindex_does(tmp_path, monkeypatch):
    rows = _rows()
    assert isinstance(ki.resolve_identity(*(BASE[c] for c in ki.IDENTITY_COLUMNS)), ki.Identity)
    path = tmp_path / "shapes.csv"
    _write(path, rows)
    per_row = []
    reference_map = csv_reader.ki_map
    monkeypatch.setattr(csv_reader, "ki_map", lambda *a: per_row.append(len(a[0])) or reference_map(*a))

    staged = _staged(path, tmp_path)

    assert staged == [_reference(row) for row in rows]
    mapped = sum(1 for r in staged if r[1] is not None)
    # both writers ran: SQL for the plain rows, the per-row reference for the others
    assert 0 < sum(per_row) < mapped


@pytest.mark.skipif(shared_data() is None, reason="shared data not found beside the repo")
def test_staged_runs_of_every_shipped_csv_are_kernelindex_own(tmp_path):
    """Each run KernelIndex made from a shipped CSV is the first staged row with its externalId, with the
    same run, workload, implementation, protocol and environment digests; no other staged row has a run."""
    data = shared_data()
    files = [(p, "liger_csv_history", p.name) for p in sorted((data / "liger_csv_history").glob("*.csv"))]
    for p in sorted((data / "liger_gh_pages" / "benchmarks").glob("*/benchmark.csv")):
        files.append((p, "liger_gh_pages", p.parent.name))
    assert len(files) == 68
    for path, folder, stem in files:
        with gzip.open(data / "kernelindex_golden" / folder / f"{stem}.runs.jsonl.gz", "rt") as fh:
            golden = [json.loads(line) for line in fh if line.strip()]
        out = tmp_path / f"{folder}-{stem}.parquet"
        csv_reader.stage_csv_file(path, out)
        staged = duckdb.sql(
            "select external_id, run_digest, ki_workload_digest, ki_implementation_digest, ki_protocol_digest,"
            f" ki_environment_digest from '{out}' where run_digest is not null order by record_no"  # noqa: S608
        ).fetchall()
        first: dict[str, tuple] = {}
        for row in staged:
            first.setdefault(row[0], row)
        expected = {
            g["externalId"]: (
                g["externalId"],
                g["runDigest"],
                g["workloadDigest"],
                g["implementationDigest"],
                g["protocolDigest"],
                g["environmentDigest"],
            )
            for g in golden
        }
        assert first == expected, path


def test_a_csv_cell_is_read_as_kernelindex_reads_it():
    """The fixture's rows survive the CSV round trip (the test above compares raw strings)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS)
    writer.writeheader()
    writer.writerows(_rows())
    rows, problems = ki.parse_csv(buffer.getvalue())
    assert problems == [] and rows == [{c: r[c] for c in COLUMNS} for r in _rows()]


json_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**60), 2**60),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=4),
)
json_value = st.recursive(
    json_scalar,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2),
    max_leaves=4,
)  # noqa: E501
run_edit = st.sampled_from(["metrics", "measurement", "number", "string", "extra", "drop"])


@given(st.lists(st.tuples(run_edit, st.text(max_size=3), json_value), max_size=3))
@example([("metrics", "\ue000", 1), ("metrics", "\U0001f600", 2)])  # code point and UTF-16 orders differ
@example([("number", "", 1e21), ("measurement", "", 5e-324), ("string", "", "\u2028\x7f\x1f")])
@settings(max_examples=300, deadline=None)
def test_a_record_run_of_any_shape_has_the_reference_digest(edits):
    """A record's run is hashed by the fast writer when it has a CSV run's shape; whatever it holds, the
    digest is the RFC 8785 one (`object_digest` of the run as JSON.parse reads it): keys of any script,
    numbers of any size, values of any type."""
    run = copy.deepcopy(SAMPLE_RUN)
    spec = run["spec"]
    for edit, key, value in edits:
        if edit == "metrics":
            spec["sourceNative"]["metrics"][key] = value
        elif edit == "measurement":
            spec.setdefault("measurements", []).append(
                {"metric": key, "statistic": "p50", "unit": "ns", "value": value}
            )
        elif edit == "number":
            spec["timing"]["latencyNs"]["median"] = value
        elif edit == "string":
            spec["sourceNative"]["externalId"] = value
        elif edit == "extra":
            spec[key or "x"] = value
        else:
            spec.pop("measurements", None)
    text = json.dumps(run, ensure_ascii=False)
    try:
        reference = object_digest(ki.js_json_parse(text))
    except ValueError:
        reference = None
    assert kernelindex_reader._run_digest(text) == reference


STRING_SLOTS = [
    ("kind",),
    ("spec", "observedAt"),
    ("spec", "protocolDigest"),
    ("spec", "sourceNative", "externalId"),
    ("spec", "sourceNative", "source"),
    ("spec", "timing", "primaryStatistic"),
    ("spec", "measurements", 0, "unit"),
    ("spec", "measurements", 1, "statistic"),
]
NUMBER_SLOTS = [
    ("spec", "timing", "latencyNs", "median"),
    ("spec", "sourceNative", "metrics", "ms_20"),
    ("spec", "sourceNative", "metrics", "ms_50"),
    ("spec", "measurements", 0, "value"),
]
# DuckDB writes \x1b as \u001B, RFC 8785 as \u001b; a lone surrogate makes the line no JSON to DuckDB
ODD_STRINGS = ["plain", 'a "quote"', "back\\slash", "ctl\x01", "esc\x1b", "é", "\u2028", "😀", "", "a/b", "\x7f"]
ODD_STRINGS.append("\ud800")
ODD_NUMBERS = [0.1, 1, 1.0, 1e-7, 1e21, 123456789.5, -0.0, 2**60, 5e-324, 9007199254740993, "1", None, True, []]


def _set(obj, path, value):
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value


def _odd_runs() -> list[dict]:
    """The sample record's run with one slot, one number or the shape changed at a time."""
    runs_ = []
    for path in STRING_SLOTS:
        runs_ += [(path, v) for v in ODD_STRINGS + [5, None, 1.0, 1e-7, True, [1.0], {"b": 1.0, "a": 2}]]
    for path in NUMBER_SLOTS:
        runs_ += [(path, v) for v in ODD_NUMBERS]
    out = []
    for path, value in runs_:
        run = copy.deepcopy(SAMPLE_RUN)
        _set(run, path, value)
        out.append(run)
    shapes = [
        lambda s: s.pop("measurements"),
        lambda s: s["measurements"].reverse(),
        lambda s: s["measurements"].append(dict(s["measurements"][0])),
        lambda s: s.__setitem__("extra", 1),
        lambda s: s["timing"].__setitem__("extra", 1),
        lambda s: s["sourceNative"]["metrics"].pop("ms_20"),
        lambda s: s["sourceNative"]["metrics"].__setitem__("ms_99", 1.5),
        lambda s: s["measurements"][0].__setitem__("note", "x"),
    ]
    for change in shapes:
        run = copy.deepcopy(SAMPLE_RUN)
        change(run["spec"])
        out.append(run)
    out.append({k: v for k, v in SAMPLE_RUN.items() if k != "metadata"})
    return out


def test_a_record_run_is_hashed_as_rfc_8785_says_whatever_its_shape(tmp_path, monkeypatch):
    """Staged records: SQL hashes the runs of the CSV's shape whose strings and numbers it writes as they
    are, Python the others; every digest is `object_digest` of the run as JSON.parse reads it."""
    bundle = json.loads((runs.KI_DIR / "a8e1599773300c7d.json").read_text())
    odd = _odd_runs()
    lines, written = [], []
    for run in odd:
        for ascii_only in (False, True):
            line = json.dumps(bundle | {"run": run}, ensure_ascii=ascii_only)
            if (
                line.encode("utf-8", "surrogatepass").decode("utf-8", "replace") == line
            ):  # a lone surrogate: escaped only
                lines.append(line)
                written.append(run)
    path = tmp_path / "odd.ndjson"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    in_python = []
    reference_digest = kernelindex_reader._run_digest
    monkeypatch.setattr(kernelindex_reader, "_run_digest", lambda t: in_python.append(t) or reference_digest(t))
    out = tmp_path / "odd.parquet"
    kernelindex_reader.stage_kernelindex_file(path, out)
    staged = [r[0] for r in duckdb.sql(f"select run_digest from '{out}' order by record_no").fetchall()]  # noqa: S608

    expected = []
    for run in written:
        try:
            expected.append(object_digest(ki.js_json_parse(json.dumps(run))))
        except ValueError:
            expected.append(None)
    assert staged == expected
    assert 0 < len(in_python) < len(lines)
