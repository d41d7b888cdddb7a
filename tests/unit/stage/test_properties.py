"""Property tests: generate valid rows/records, corrupt a random subset in random ways, and check
that good + quarantined = input, every corrupted row is quarantined with its reason, and every
untouched row lands unchanged."""

from __future__ import annotations

import copy
import json

import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.contracts.reasons import Reason
from pipeline.stage.csv_reader import stage_csv_file
from pipeline.stage.kernelindex_reader import stage_kernelindex_file
from tests.fixtures import runs as rs
from tests.fixtures.runs import HEADER

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
SAMPLE = json.loads((rs.KI_DIR / "a8e1599773300c7d.json").read_text())

quantiles = st.lists(
    st.floats(min_value=1e-6, max_value=1e6, allow_nan=False, allow_infinity=False), min_size=3, max_size=3
).map(sorted)
gpu = st.sampled_from(["NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3", "AMD MI300X", 'gpu, "quoted"'])
config = st.dictionaries(
    st.sampled_from(["B", "T", "H", "dtype", "note"]),
    st.one_of(st.integers(-5, 4096), st.text(max_size=6), st.booleans()),
    max_size=3,
)
timestamp = st.datetimes(
    min_value=__import__("datetime").datetime(2020, 1, 1),
    max_value=__import__("datetime").datetime(2026, 1, 1),  # valid: never in the future
).map(lambda d: d.strftime("%Y-%m-%d %H:%M:%S"))
label = st.sampled_from(["vocab size", "multi\nline label", "comma, label", ""])


def q(s: str) -> str:
    return '"' + s.replace('"', '""') + '"'


@st.composite
def csv_row(draw, x: int) -> dict:
    p20, p50, p80 = draw(quantiles)
    return {
        "x": str(x),
        "p20": repr(p20),
        "p50": repr(p50),
        "p80": repr(p80),
        "gpu": draw(gpu),
        "cfg": json.dumps(draw(config)),
        "ts": draw(timestamp),
        "label": draw(label),
    }


CSV_CORRUPTIONS = {
    "short": (Reason.SHORT_ROW, lambda r: "ce,liger,forward"),
    "long": (Reason.LONG_ROW, lambda r: render(r) + ",extra,more"),
    "non_numeric": (Reason.NON_NUMERIC_VALUE, lambda r: render({**r, "p50": "fast"})),
    "nan": (Reason.NON_NUMERIC_VALUE, lambda r: render({**r, "p50": "NaN"})),
    "inf": (Reason.NON_NUMERIC_VALUE, lambda r: render({**r, "p80": "inf"})),
    "zero": (Reason.NON_POSITIVE_VALUE, lambda r: render({**r, "p20": "0"})),
    "negative": (Reason.NON_POSITIVE_VALUE, lambda r: render({**r, "p20": "-" + r["p20"]})),
    "order": (Reason.QUANTILE_ORDER, lambda r: render({**r, "p20": repr(float(r["p80"]) * 2)})),
    "empty": (Reason.EMPTY_FIELD, lambda r: render({**r, "gpu": ""})),
    "config": (Reason.BAD_CONFIG_JSON, lambda r: render({**r, "cfg": r["cfg"][:-1] or "{"})),
    "timestamp": (Reason.BAD_TIMESTAMP, lambda r: render({**r, "ts": "not a time"})),
    "future": (Reason.FUTURE_TIMESTAMP, lambda r: render({**r, "ts": "9999-12-31 23:59:59"})),
    "bytes": (Reason.UNREADABLE_BYTES, lambda r: render(r).encode().replace(b"liger", b"lig\xff\xfer", 1)),
}
STRUCTURAL = {"short", "long", "bytes"}


def render(r: dict) -> str:
    return ",".join(
        [
            "ce",
            "liger",
            "forward",
            "speed",
            "ms",
            "V",
            q(r["label"]),
            r["x"],
            r["p50"],
            r["p20"],
            r["p80"],
            q(r["cfg"]),
            q(r["gpu"]),
            r["ts"],
            "0.2.1",
        ]
    )


@SETTINGS
@given(data=st.data(), n=st.integers(1, 25), bom=st.booleans(), eol=st.sampled_from(["\n", "\r\n"]))
def test_csv_good_plus_quarantined_equals_input(tmp_path_factory, data, n, bom, eol):
    rows = [data.draw(csv_row(i)) for i in range(n)]
    corrupt = data.draw(st.dictionaries(st.integers(0, n - 1), st.sampled_from(sorted(CSV_CORRUPTIONS)), max_size=n))
    out, line, expected_lines, expected_values = [(b"\xef\xbb\xbf" if bom else b"") + HEADER.encode()], 2, {}, {}
    for i, r in enumerate(rows):
        kind = corrupt.get(i)
        text = CSV_CORRUPTIONS[kind][1](r) if kind else render(r)
        raw = text if isinstance(text, bytes) else text.encode()
        if kind in STRUCTURAL:
            expected_lines[f"line {line}"] = CSV_CORRUPTIONS[kind][0]
        elif kind:
            expected_values[r["x"]] = CSV_CORRUPTIONS[kind][0]
        out.append(raw)
        line += raw.count(b"\n") + 1
    d = tmp_path_factory.mktemp("csv")
    (d / "f.csv").write_bytes(eol.encode().join(out) + eol.encode())
    stage_csv_file(d / "f.csv", d / "f.parquet")
    staged = pq.read_table(d / "f.parquet").to_pylist()
    good = [s for s in staged if s["reason"] is None]
    bad = [s for s in staged if s["reason"] is not None]
    assert len(good) + len(bad) == n
    assert {s["location"]: s["reason"] for s in bad if s["location"].startswith("line")} == expected_lines
    assert {s["x_value"]: s["reason"] for s in bad if s["location"].startswith("record")} == expected_values
    untouched = {r["x"]: r for i, r in enumerate(rows) if i not in corrupt}
    assert {s["x_value"] for s in good} == set(untouched)
    for s in good:  # values land exactly as written
        r = untouched[s["x_value"]]
        assert (s["p20"], s["p50"], s["p80"]) == (float(r["p20"]), float(r["p50"]), float(r["p80"]))
        assert s["gpu_name"] == r["gpu"].strip() and s["observed_at_text"] == r["ts"]
        assert (s["x_label"] or "") == r["label"] and json.loads(s["extra_config"]) == json.loads(r["cfg"])


# -- kernelindex records --------------------------------------------------------------------------
def _tamper(b):
    spec = b["protocol"]["spec"]
    k = sorted(spec)[0]
    spec[k] = "tampered" if isinstance(spec[k], str) else {"tampered": True}


def _mut(f):
    def apply(b):
        b = copy.deepcopy(b)
        f(b)
        return json.dumps(b)

    return apply


KI_CORRUPTIONS = {
    "truncated": (Reason.TRUNCATED_JSON, lambda b: json.dumps(b)[:-7]),
    "array": (Reason.NOT_AN_OBJECT, lambda b: json.dumps([b])),
    "number": (Reason.NOT_AN_OBJECT, lambda b: "42"),
    "api": (
        Reason.UNKNOWN_API_VERSION,
        _mut(lambda b: b["environment"].__setitem__("apiVersion", "kernelindex.dev/v2")),
    ),
    "digest": (Reason.DIGEST_MISMATCH, _mut(_tamper)),
    "deep": (Reason.JSON_TOO_DEEP, lambda b: '{"run":' + "[" * 200 + "]" * 200 + "}"),
    "order": (
        Reason.QUANTILE_ORDER,
        _mut(
            lambda b: b["run"]["spec"]["sourceNative"]["metrics"].__setitem__(
                "ms_20", b["run"]["spec"]["sourceNative"]["metrics"]["ms_80"] * 2
            )
        ),
    ),
    "timestamp": (Reason.BAD_TIMESTAMP, _mut(lambda b: b["run"]["spec"].__setitem__("observedAt", "when?"))),
    "future": (
        Reason.FUTURE_TIMESTAMP,
        _mut(lambda b: b["run"]["spec"].__setitem__("observedAt", "9999-01-01T00:00:00Z")),
    ),
    "zero": (
        Reason.NON_POSITIVE_VALUE,
        _mut(lambda b: b["run"]["spec"]["sourceNative"]["metrics"].__setitem__("ms_20", 0)),
    ),
    "bytes": (
        Reason.UNREADABLE_BYTES,
        lambda b: json.dumps(b, ensure_ascii=False).encode().replace(b"BenchmarkRun", b"Bench\xffRun"),
    ),
}


@st.composite
def record(draw) -> dict:
    b = copy.deepcopy(SAMPLE)
    p20, p50, p80 = draw(quantiles)
    b["run"]["spec"]["sourceNative"]["metrics"] = {"ms_20": p20, "ms_50": p50, "ms_80": p80}
    b["run"]["spec"]["observedAt"] = draw(timestamp).replace(" ", "T") + "Z"
    return b


@SETTINGS
@given(data=st.data(), n=st.integers(1, 15), blank=st.booleans())
def test_ndjson_good_plus_quarantined_equals_input(tmp_path_factory, data, n, blank):
    recs = [data.draw(record()) for _ in range(n)]
    corrupt = data.draw(st.dictionaries(st.integers(0, n - 1), st.sampled_from(sorted(KI_CORRUPTIONS)), max_size=n))
    lines, expected = [], {}
    for i, b in enumerate(recs):
        kind = corrupt.get(i)
        text = KI_CORRUPTIONS[kind][1](b) if kind else json.dumps(b)
        lines.append(text if isinstance(text, bytes) else text.encode())
        expected[f"line {len(lines)}"] = KI_CORRUPTIONS[kind][0] if kind else None
        if blank and i % 3 == 0:
            lines.append(b"")
    d = tmp_path_factory.mktemp("ki")
    (d / "b.ndjson").write_bytes(b"\n".join(lines) + b"\n")
    stage_kernelindex_file(d / "b.ndjson", d / "b.parquet")
    staged = pq.read_table(d / "b.parquet").to_pylist()
    assert len(staged) == n
    assert {s["location"]: s["reason"] for s in staged} == expected
    good = sorted((s["p20"], s["p50"], s["p80"]) for s in staged if s["reason"] is None)
    want = sorted(
        tuple(recs[i]["run"]["spec"]["sourceNative"]["metrics"][k] for k in ("ms_20", "ms_50", "ms_80"))
        for i in range(n)
        if i not in corrupt
    )
    assert good == want
