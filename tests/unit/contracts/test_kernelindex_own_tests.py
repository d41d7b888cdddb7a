"""KernelIndex's own tests (liger.test.ts, digest.test.ts), restated against this module."""

from __future__ import annotations

import pytest

from pipeline.contracts import kernelindex as ki
from pipeline.contracts.digests import canonical_json, object_digest
from pipeline.contracts.kernelindex.binders import BINDERS, bind
from pipeline.contracts.kernelindex.kernels import KERNELS
from pipeline.contracts.kernelindex.mapping import empty_skipped
from pipeline.contracts.kernelindex.providers import HARDWARE, PROJECTS, PROVIDERS
from tests.fixtures.shared_data import require_shared_data

SLICE = "apps/web/src/server/import/liger/__fixtures__/all-benchmark-data-slice.csv"


def _slice_text() -> str:
    path = require_shared_data().parent / "reference" / "kernelindex" / SLICE
    if not path.exists():
        pytest.skip(f"{path} not found")
    return path.read_text(encoding="utf-8")


def test_pinned_digest_vector():
    spec = {"name": "Vector Project", "repository": "https://example.invalid/vector/project"}
    assert canonical_json({"apiVersion": ki.API_VERSION, "kind": "SoftwareProject", "spec": spec}).encode() == (
        b'{"apiVersion":"kernelindex.dev/v1alpha1","kind":"SoftwareProject","spec":{"name":"Vector Project",'
        b'"repository":"https://example.invalid/vector/project"}}'
    )
    assert object_digest({"apiVersion": ki.API_VERSION, "kind": "SoftwareProject", "spec": spec}) == (
        "sha256:bea60af06f12216679b113d6624c5293d59bef2104ccc27cd33c992d124e039d"
    )


def test_csv_slice_parses_and_reconciles():
    rows, issues = ki.parse_csv(_slice_text())
    assert issues == [] and len(rows) == 9
    assert ki.js_json_parse(rows[0]["extra_benchmark_config_str"]) == {
        "M": 2048,
        "dtype": "torch.bfloat16",
        "eps": 1e-6,
    }
    mapped = ki.map_file(rows)
    assert mapped.skipped == {**empty_skipped(), "memoryRows": 1}
    assert mapped.issues == [] and len(mapped.runs) == 8
    slugs = sorted({r.objects()["OperationSpec"]["metadata"]["name"] for r in mapped.runs})
    assert slugs == ["liger-embedding", "liger-fused-add-rms-norm", "liger-fused-moe", "liger-rms-norm", "liger-rope"]
    titles = [r.identity.workload["metadata"]["title"] for r in mapped.runs]
    assert any("bf16" in t for t in titles) and any("fp32" in t for t in titles)


def test_ragged_records_and_doubled_quotes():
    header = ",".join(ki.CSV_COLUMNS)
    rows, issues = ki.parse_csv(f"{header}\na,b\n")
    assert rows == [] and "expected 15 fields" in issues[0]
    rows, issues = ki.parse_csv(header + "\n" + ",".join(["x"] * 11) + ',"{""B"": 8}",g,t,v\n')
    assert issues == [] and rows[0]["extra_benchmark_config_str"] == '{"B": 8}'


def test_missing_or_extra_columns():
    header = ",".join(ki.CSV_COLUMNS)
    record = ",".join(["x"] * 15)
    rows, issues = ki.parse_csv(header.replace(",liger_version", "") + "\n" + record[2:] + "\n")
    assert rows == [] and issues == ["header: expected column 'liger_version' is missing"]
    rows, issues = ki.parse_csv(header + ",extra\n" + record + ",y\n")
    assert rows == [] and len(issues) == 1  # the row schema is strict


def test_era_specific_binders():
    rms = ki.KERNELS_BY_NAME["rms_norm"]
    assert bind(rms, 1024.0, "H", {"M": 2048.0, "dtype": "torch.bfloat16", "eps": 1e-6}) == {
        "axes": {"rows": 2048.0, "hidden": 1024.0},
        "dtype": "bf16",
        "scalars": {"eps": 1e-6},
    }
    assert bind(rms, 2048.0, "BT", {"hidden_size": 4096.0, "dtype": "torch.bfloat16"}) is None
    rope = ki.KERNELS_BY_NAME["rope"]
    bound = bind(
        rope, 512.0, "H", {"dtype": "torch.bfloat16", "seq_len": 2048.0, "num_q_heads": 32.0, "num_kv_heads": 8.0}
    )
    assert bound["axes"] == {"seq": 2048, "hidden": 512, "q_heads": 32, "kv_heads": 8}


def test_tables_have_what_the_ts_has():
    assert len(KERNELS) == len(ki.KERNELS_BY_NAME) == 35
    assert len(PROVIDERS) == 12 and len(HARDWARE) == 6
    assert {p["projectSlug"] for p in PROVIDERS.values()} <= set(PROJECTS)
    assert all(name in BINDERS for name, _ in (k["bind"] for k in KERNELS))
