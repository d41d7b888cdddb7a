"""The JavaScript and RFC 8785 behaviour KernelIndex's digests depend on (expected values checked with node)."""

from __future__ import annotations

import hashlib
import json
import math

import pytest

from pipeline.contracts import kernelindex as ki
from pipeline.contracts.digests import canonical_json, object_digest
from pipeline.contracts.kernelindex.ecmascript import js_number, js_number_to_string, js_round, ms_to_ns
from pipeline.contracts.kernelindex.manifests import case_key
from pipeline.contracts.kernelindex.run_text import (
    CSV_RUN_CONSTANTS,
    LATENCY,
    MEASUREMENT_TEXT,
    METRICS_TEXT,
    RUN_TEXT,
    json_string,
    measurements_text,
)
from pipeline.contracts.kernelindex.shared import evaluate_axis_expression, kebab, to_utc_instant
from pipeline.stage.kernelindex_sql import run_text_sql


@pytest.mark.parametrize(
    ("value", "canonical"),
    [
        (1e-6, b"0.000001"),  # json.dumps: 1e-06
        (25.0, b"25"),  # json.dumps: 25.0
        (1e21, b"1e+21"),  # json.dumps: 1e+21 too, but 1e20 below differs
        (1e20, b"100000000000000000000"),
        (1e-7, b"1e-7"),  # json.dumps: 1e-07
        (0.12591999769210815, b"0.12591999769210815"),
        (-0.0, b"0"),
    ],
)
def test_numbers_print_as_ecmascript(value, canonical):
    assert canonical_json(value).encode() == canonical
    assert js_number_to_string(value) == canonical.decode()


def test_keys_sort_by_utf16_code_units():
    # U+1F600 is the surrogate pair D83D DE00, which sorts before U+FB01 in UTF-16 (not in code points).
    obj = {"\ufb01": 1, "\U0001f600": 2, "a": 3}
    assert canonical_json(obj).encode() == '{"a":3,"\U0001f600":2,"\ufb01":1}'.encode()
    assert json.dumps(obj, sort_keys=True, ensure_ascii=False).index("\ufb01") < json.dumps(
        obj, sort_keys=True, ensure_ascii=False
    ).index("\U0001f600")


def test_sample_workload_digest_needs_rfc8785_not_json_dumps():
    spec = {
        "operationSpecDigest": "sha256:" + "0" * 64,
        "axes": {"rows": 2048, "hidden": 1024},
        "scalars": {"eps": {"dtype": "fp32", "value": 1e-6}},
    }
    canonical = canonical_json({"apiVersion": ki.API_VERSION, "kind": "WorkloadCase", "spec": spec}).encode()
    assert b'"value":0.000001' in canonical
    dumped = json.dumps(
        {"apiVersion": ki.API_VERSION, "kind": "WorkloadCase", "spec": spec}, sort_keys=True, separators=(",", ":")
    ).encode()
    assert dumped != canonical
    assert (
        object_digest({"apiVersion": ki.API_VERSION, "kind": "WorkloadCase", "spec": spec})
        == "sha256:" + hashlib.sha256(canonical).hexdigest()
    )


@pytest.mark.parametrize(
    ("x", "js"),
    [
        (2.5, 3),
        (-2.5, -2),
        (0.5, 1),
        (-0.5, 0),
        (1.5, 2),
        (-1.5, -1),
        (0.49999999999999994, 0),
        (12500.5, 12501),
        (2**53, 2**53),
    ],
)
def test_math_round_ties_go_up(x, js):
    assert js_round(x) == js


@pytest.mark.parametrize(
    ("ms", "ns"),
    [
        ("0.0125", 12500),
        ("0.0000125", 13),
        ("0.0000025", 3),
        ("0.0000005", 1),
        ("0.1234565", 123457),
        ("0.0024445", 2445),
        ("0.12591999769210815", 125920),
    ],
)
def test_ms_to_ns_is_math_round(ms, ns):
    # values from node: Math.round(Number(ms) * 1000000); Python's round() gives 12, 2, 0, 123456, 2444 for five
    assert ms_to_ns(js_number(ms)) == ns


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("", 0.0),
        (" 12 ", 12.0),
        ("0x10", 16.0),
        ("1.", 1.0),
        (".5e1", 5.0),
        ("Infinity", math.inf),
        ("-Infinity", -math.inf),
    ],
)
def test_js_number(text, value):
    assert js_number(text) == value


@pytest.mark.parametrize("text", ["1_0", "inf", "nan", "qwen3.5_9b", "1e", "0x", "--1", "\x1c1"])
def test_js_number_nan(text):
    assert math.isnan(js_number(text))


def test_json_parse_numbers_are_doubles():
    assert ki.js_json_parse('{"M": 2048}') == {"M": 2048.0}
    assert ki.js_json_parse("123456789012345678901") == 1.2345678901234568e20
    with pytest.raises(ValueError):
        ki.js_json_parse('{"eps": NaN}')


def test_axis_names_sort_like_locale_compare():
    names = [
        "q_heads",
        "kv_heads",
        "seq",
        "hidden",
        "heads_in",
        "heads",
        "k",
        "kernel_size",
        "channels_per_group",
        "channels",
        "a_b",
        "ab",
        "a1",
        "a_1",
    ]
    # node: names.sort((a, b) => a.localeCompare(b))
    expected = [
        "a_1",
        "a_b",
        "a1",
        "ab",
        "channels",
        "channels_per_group",
        "heads",
        "heads_in",
        "hidden",
        "k",
        "kernel_size",
        "kv_heads",
        "q_heads",
        "seq",
    ]
    binding = {"axes": dict.fromkeys(names, 1.0), "dtype": "fp32"}
    assert case_key(binding) == "-".join([f"{n}1" for n in expected] + ["fp32"])


@pytest.mark.parametrize(
    ("text", "iso"),
    [
        ("2026-04-07T21:27:38", "2026-04-07T21:27:38.000Z"),
        ("2024-09-03T15:31:39.123456", "2024-09-03T15:31:39.123Z"),
        ("2024-02-30T00:00:00", "2024-03-01T00:00:00.000Z"),
        ("2024-09-03T24:00:00", "2024-09-04T00:00:00.000Z"),
        ("2024-09-03T01:00:00+02:00", "2024-09-02T23:00:00.000Z"),
    ],
)
def test_timestamps_are_utc_and_print_as_to_iso_string(text, iso):
    assert to_utc_instant(text) == iso


def test_kebab():
    assert kebab("NVIDIA H100 80GB HBM3") == "nvidia-h100-80gb-hbm3"
    assert kebab("--2026-04-07 21:27:38--") == "2026-04-07-21-27-38"
    assert len(kebab("a" * 150)) == 100


def test_axis_expressions():
    assert evaluate_axis_expression("hidden // q_heads", {"hidden": 4096, "q_heads": 32}) == 128
    assert evaluate_axis_expression("(seq + 1) * 2 % 7", {"seq": 3}) == 1
    with pytest.raises(ValueError):
        evaluate_axis_expression("seq +", {"seq": 3})


def _run_text_slots() -> dict[str, str]:
    strings = ("environment", "implementation", "observed", "protocol", "benchmark", "external_id", "workload")
    numbers = {"ns20": "1250", "ns80": "1500", "ms20": "0.00125", "ms50": "0.0013", "ms80": "0.0015", "median": "1300"}
    return {s: json_string(f"{s} 'value'") for s in strings} | numbers


def test_run_text_sql_writes_the_run_template_and_is_null_where_a_slot_is():
    import duckdb

    texts = _run_text_slots()
    sql_slots = {name: "'" + text.replace("'", "''") + "'" for name, text in texts.items()}
    expected = RUN_TEXT.format(
        **CSV_RUN_CONSTANTS,
        **{k: texts[k] for k in ("environment", "implementation", "observed", "protocol", "benchmark")},
        **{k: texts[k] for k in ("external_id", "workload", "median")},
        metrics=METRICS_TEXT.format(**texts),
        measurements=measurements_text(
            [
                MEASUREMENT_TEXT.format(**LATENCY, statistic=json_string(stat), value=texts[value])
                for stat, value in (("p20", "ns20"), ("p80", "ns80"))
            ]
        ),
    )
    con = duckdb.connect()
    assert con.execute(f"select {run_text_sql(sql_slots)}").fetchone()[0] == expected
    for slot in ("workload", "ns80"):  # a NULL slot makes no text, as `||` would
        assert con.execute(f"select {run_text_sql(sql_slots | {slot: 'null::varchar'})}").fetchone()[0] is None
