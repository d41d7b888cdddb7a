"""Issue 20 "Nothing lost under faults": inputs that used to fail a whole stage or land wrong values.

Each test failed before its fix: a CR-only CSV raised `_csv.Error`, a repeated header name, a repeated
JSON key, an unknown `metric_unit` and a far-future timestamp all landed as good rows."""

from __future__ import annotations

import json

import pytest

from pipeline.contracts.reasons import Reason
from tests.fixtures.runs import HEADER, row
from tests.unit.stage.test_bad_input import bad, bundle, csv_file, good, stage_csv, stage_ki


# -- case 7: CR-only line endings ----------------------------------------------------------------------
def test_cr_only_csv_is_quarantined_with_a_reason_and_other_files_land(tmp_path):
    rows = stage_csv(tmp_path, csv_file(row("1"), row("2"), eol="\r"), "cr.csv")
    assert [(r["location"], r["reason"]) for r in rows] == [("file", Reason.CR_LINE_ENDINGS)]
    assert good(stage_csv(tmp_path, csv_file(row("1"), row("2")), "lf.csv")) == ["1", "2"]


# -- case 14: a header that names a column twice ---------------------------------------------------------
@pytest.mark.parametrize("column", ["kernel_name", "y_value_50", "x_label"])
def test_duplicate_header_name_quarantines_the_file(tmp_path, column):
    header = HEADER + "," + column
    rows = stage_csv(tmp_path, "\n".join([header, row("1") + ",x", row("2") + ",y"]) + "\n")
    assert bad(rows) == [("file", Reason.DUPLICATE_COLUMN)]
    assert column in rows[0]["raw"] and good(rows) == []


def test_repeated_unknown_column_is_no_error(tmp_path):
    """A column the reader never reads may repeat: nothing is ambiguous."""
    rows = stage_csv(tmp_path, "\n".join([HEADER + ",note,note", row("1") + ",a,b"]) + "\n")
    assert good(rows) == ["1"] and bad(rows) == []


# -- case 15: duplicate JSON keys -------------------------------------------------------------------------
def _with_duplicate_label(text: str) -> str:
    assert '"labels": {' in text
    return text.replace('"labels": {', '"labels": {"liger_version": "9.9.9", ', 1)


def _with_duplicate_in_protocol(text: str) -> str:
    doc = json.loads(text)
    inner = json.dumps(doc["protocol"])
    return text.replace(json.dumps(doc["protocol"])[:-1], inner[:-1] + ', "kind": "BenchmarkProtocol"', 1)


@pytest.mark.parametrize("make", [_with_duplicate_label, _with_duplicate_in_protocol], ids=["run", "protocol"])
def test_ndjson_duplicate_key_is_quarantined_and_neighbours_land(tmp_path, make):
    rows = stage_ki(tmp_path, "\n".join([bundle(), make(bundle()), bundle()]) + "\n", "b.ndjson")
    assert sorted((r["location"], r["reason"]) for r in rows) == [
        ("line 1", None),
        ("line 2", Reason.DUPLICATE_KEY),
        ("line 3", None),
    ]


def test_json_duplicate_key_is_quarantined_and_neighbours_land(tmp_path):
    body = "[" + ",".join([bundle(), _with_duplicate_label(bundle())]) + "]"
    rows = stage_ki(tmp_path, body, "b.json")
    assert sorted(r["reason"] or "" for r in rows) == ["", Reason.DUPLICATE_KEY]
    one = stage_ki(tmp_path, _with_duplicate_label(bundle()), "one.json")
    assert [r["reason"] for r in one] == [Reason.DUPLICATE_KEY]


# -- case 16: metric_unit ---------------------------------------------------------------------------------
def _unit_row(x: str, unit: str, p20: str, p50: str, p80: str, metric: str = "speed") -> str:
    return row(x, p20=p20, p50=p50, p80=p80).replace(",speed,ms,", f",{metric},{unit},")


def test_unknown_unit_is_quarantined_and_exact_units_are_converted(tmp_path):
    rows = stage_csv(
        tmp_path,
        csv_file(
            _unit_row("1", "ms", "0.4", "0.5", "0.6"),
            _unit_row("2", "us", "400", "500", "600"),
            _unit_row("3", "µs", "400", "500", "600"),
            _unit_row("4", "s", "0.0004", "0.0005", "0.0006"),
            _unit_row("5", "furlongs", "1", "2", "3"),
            _unit_row("6", "GB", "1", "2", "3", metric="memory"),
            _unit_row("7", "MB", "1", "2", "3", metric="memory"),
        ),
    )
    assert bad(rows) == [("record 5", Reason.UNKNOWN_UNIT)]
    by_x = {r["x_value"]: r for r in rows if r["reason"] is None}
    for x in "1234":
        assert by_x[x]["metric_unit"] == "ms"
        assert (by_x[x]["p20"], by_x[x]["p50"], by_x[x]["p80"]) == pytest.approx((0.4, 0.5, 0.6), rel=1e-12)
    # one measurement in ms and in us is one digest: a unit switch between versions is not a x1000 change
    assert len({by_x[x]["measurement_digest"] for x in "1234"}) == 4  # x differs; same values though
    assert by_x["6"]["metric_unit"] == "MB" and by_x["6"]["p50"] == 2048
    assert by_x["7"]["metric_unit"] == "MB" and by_x["7"]["p50"] == 2


def test_same_measurement_in_ms_and_us_has_one_digest(tmp_path):
    ms = stage_csv(tmp_path, csv_file(_unit_row("1", "ms", "0.4", "0.5", "0.6")), "ms.csv")
    us = stage_csv(tmp_path, csv_file(_unit_row("1", "us", "400", "500", "600")), "us.csv")
    assert ms[0]["measurement_digest"] == us[0]["measurement_digest"]
    assert (us[0]["p50"], us[0]["metric_unit"]) == (pytest.approx(0.5, rel=1e-12), "ms")


# -- case 17: far-future timestamps ------------------------------------------------------------------------
@pytest.mark.parametrize("ts", ["9999-12-31 23:59:59", "2999-01-01 00:00:00", "10000-01-01 00:00:00"])
def test_far_future_csv_timestamp_is_quarantined(tmp_path, ts):
    import pyarrow.parquet as pq

    from pipeline.stage.csv_reader import stage_csv_file

    (tmp_path / "f.csv").write_text(csv_file(row("1"), row("2", ts=ts)))
    stage_csv_file(tmp_path / "f.csv", tmp_path / "f.parquet")
    # (year 10000 is past what Python's datetime holds: read the verdict columns only)
    rows = pq.read_table(tmp_path / "f.parquet", columns=["location", "reason", "x_value"]).to_pylist()
    assert good(rows) == ["1"]
    assert bad(rows) == [("record 2", Reason.FUTURE_TIMESTAMP)]


def test_far_future_record_timestamp_is_quarantined(tmp_path):
    future = bundle().replace('"observedAt": "2026-04-07T21:27:38.000Z"', '"observedAt": "9999-04-07T21:27:38.000Z"')
    assert future != bundle()
    rows = stage_ki(tmp_path, "\n".join([bundle(), future]) + "\n", "b.ndjson")
    assert sorted((r["location"], r["reason"]) for r in rows) == [("line 1", None), ("line 2", Reason.FUTURE_TIMESTAMP)]
