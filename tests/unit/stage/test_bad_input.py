"""Every class of bad input lands in quarantine with its own reason; the good rows beside it land."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from pipeline.contracts.reasons import Reason
from pipeline.stage.csv_reader import stage_csv_file
from pipeline.stage.kernelindex_reader import stage_kernelindex_file
from tests.fixtures import runs as rs
from tests.fixtures.runs import HEADER, row

SAMPLE = json.loads((rs.KI_DIR / "a8e1599773300c7d.json").read_text())


def stage_csv(tmp_path: Path, body: bytes | str, name: str = "f.csv") -> list[dict]:
    p = tmp_path / name
    p.write_bytes(body.encode() if isinstance(body, str) else body)
    dest = tmp_path / (name + ".parquet")
    stage_csv_file(p, dest)
    return pq.read_table(dest).to_pylist()


def stage_ki(tmp_path: Path, body: bytes | str, name: str) -> list[dict]:
    p = tmp_path / name
    p.write_bytes(body.encode() if isinstance(body, str) else body)
    dest = tmp_path / (name + ".parquet")
    stage_kernelindex_file(p, dest)
    return pq.read_table(dest).to_pylist()


def csv_file(*rows: str, eol: str = "\n") -> str:
    return eol.join([HEADER, *rows]) + eol


def good(rows: list[dict]) -> list[str]:
    return sorted(r["x_value"] for r in rows if r["reason"] is None)


def bad(rows: list[dict]) -> list[tuple[str, str]]:
    return sorted((r["location"], r["reason"]) for r in rows if r["reason"] is not None)


# -- CSV: one class per test ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "broken, reason",
    [
        ("ce,liger,forward", Reason.SHORT_ROW),
        (row("9") + ",extra,fields", Reason.LONG_ROW),
        (row("9", p50="fast"), Reason.NON_NUMERIC_VALUE),
        (row("9", p50="NaN"), Reason.NON_NUMERIC_VALUE),
        (row("9", p80="inf"), Reason.NON_NUMERIC_VALUE),
        (row("9", p20="-Infinity"), Reason.NON_NUMERIC_VALUE),
        (row("9", p20="0"), Reason.NON_POSITIVE_VALUE),
        (row("9", p20="-0.1"), Reason.NON_POSITIVE_VALUE),
        (row("9", p20="0.7"), Reason.QUANTILE_ORDER),
        (row("9", gpu=""), Reason.EMPTY_FIELD),
        (row("9", gpu="   "), Reason.EMPTY_FIELD),
        (row("9", cfg='"{not json"'), Reason.BAD_CONFIG_JSON),
        (row("9", cfg='"[1, 2]"'), Reason.BAD_CONFIG_JSON),
        (row("9", cfg='"{""B"": NaN}"'), Reason.BAD_CONFIG_JSON),
        (row("9", ts="yesterday"), Reason.BAD_TIMESTAMP),
        (row("9", ts="2024-13-45 99:00:00"), Reason.BAD_TIMESTAMP),
    ],
)
def test_csv_bad_row_is_quarantined_and_neighbours_land(tmp_path, broken, reason):
    rows = stage_csv(tmp_path, csv_file(row("1"), broken, row("2")))
    assert good(rows) == ["1", "2"]
    [(loc, got)] = bad(rows)
    assert got == reason
    assert loc in ("line 3", "record 2")
    assert all(r["raw"] for r in rows if r["reason"])  # the raw text is kept for a human


def test_missing_required_column_quarantines_whole_file(tmp_path):
    rows = stage_csv(tmp_path, HEADER.replace(",timestamp", "") + "\n" + "a,b,c\n")
    assert [(r["location"], r["reason"]) for r in rows] == [("file", Reason.MISSING_REQUIRED_COLUMN)]


@pytest.mark.parametrize("body", ["", "\n", HEADER + "\n", HEADER])
def test_empty_and_header_only_files_are_no_error(tmp_path, body):
    assert stage_csv(tmp_path, body) == []


def test_bom_and_crlf_are_accepted(tmp_path):
    rows = stage_csv(tmp_path, b"\xef\xbb\xbf" + csv_file(row("1"), row("2"), eol="\r\n").encode())
    assert good(rows) == ["1", "2"] and not bad(rows)
    assert rows[0]["kernel_name"] == "ce" and rows[0]["liger_version"] == "0.2.1"


def test_quoted_newlines_are_accepted(tmp_path):
    rows = stage_csv(tmp_path, csv_file(row("1"), row('"a\nb"', cfg='"{""B"":\n 8}"'), row("2")))
    assert good(rows) == ["1", "2", "a\nb"] and not bad(rows)


def test_non_utf8_bytes_mid_file_quarantine_only_that_line(tmp_path):
    body = (
        (csv_file(row("1"))).encode()
        + row("9", gpu="NV\xff\xfe").encode("latin-1")
        + b"\n"
        + (row("2") + "\n").encode()
    )
    rows = stage_csv(tmp_path, body)
    assert good(rows) == ["1", "2"]
    assert bad(rows) == [("line 3", Reason.UNREADABLE_BYTES)]


def test_non_utf8_header_quarantines_file(tmp_path):
    rows = stage_csv(tmp_path, b"kernel_\xff" + HEADER.encode() + b"\n" + row("1").encode() + b"\n")
    assert [r["reason"] for r in rows] == [Reason.UNREADABLE_BYTES]


def test_line_numbers_are_physical_lines(tmp_path):
    """Blank lines and quoted newlines do not shift the reported line of a broken row."""
    rows = stage_csv(tmp_path, csv_file(row("1"), "", row('"a\nb"'), "short,row", row("2")))
    assert bad(rows) == [("line 6", Reason.SHORT_ROW)]


def test_identical_rows_of_one_file_are_told_apart_by_their_occurrence(tmp_path):
    rows = stage_csv(tmp_path, csv_file(row("1"), row("1"), row("2")))
    # a window function does not keep file order, so read the rows back in it
    good_rows = sorted((r for r in rows if r["reason"] is None), key=lambda r: r["record_no"])
    assert len(good_rows) == 3 and len({r["measurement_digest"] for r in good_rows}) == 3
    assert [r["occurrence"] for r in good_rows] == [1, 2, 1]


def test_occurrence_counts_lines_identical_in_every_field_even_fields_named_like_the_query_s_own(tmp_path):
    """Extra header fields take part in a line's identity, also those named like the staging query's own
    columns (record_no, line_hash, first_row_no); an empty field and a quoted empty one are the same."""
    header = HEADER + ",record_no,line_hash,first_row_no"
    body = "\n".join(
        [header, row("1") + ",7,a,", row("1") + ",7,a,", row("1") + ",7,b,", row("1") + ',7,a,""', row("2") + ",,,"]
    )
    rows = stage_csv(tmp_path, body + "\n")
    good_rows = sorted((r for r in rows if r["reason"] is None), key=lambda r: r["record_no"])
    assert [r["record_no"] for r in good_rows] == [1, 2, 3, 4, 5]
    assert [r["occurrence"] for r in good_rows] == [1, 2, 1, 3, 1]


# -- kernelindex bundles -------------------------------------------------------------------------
def bundle(mutate=None) -> str:
    b = copy.deepcopy(SAMPLE)
    if mutate:
        mutate(b)
    return json.dumps(b)


def _tamper_protocol(b):
    spec = b["protocol"]["spec"]
    key = sorted(spec)[0]
    spec[key] = "tampered" if isinstance(spec[key], str) else {"tampered": True}


@pytest.mark.parametrize(
    "broken, reason",
    [
        (bundle()[: len(bundle()) // 2], Reason.TRUNCATED_JSON),
        ("[1, 2, 3]", Reason.NOT_AN_OBJECT),
        ('"a string"', Reason.NOT_AN_OBJECT),
        (bundle(lambda b: b["protocol"].__setitem__("apiVersion", "kernelindex.dev/v9")), Reason.UNKNOWN_API_VERSION),
        (bundle(lambda b: b["run"].__setitem__("apiVersion", "v0")), Reason.UNKNOWN_API_VERSION),
        (bundle(_tamper_protocol), Reason.DIGEST_MISMATCH),
        ('{"a":' * 100_000 + "1" + "}" * 100_000, Reason.JSON_TOO_DEEP),
        ("[" * 100_000 + "]" * 100_000, Reason.JSON_TOO_DEEP),
    ],
    ids=["truncated", "array", "string", "protocol-api", "run-api", "digest", "deep-object", "deep-array"],
)
def test_ndjson_bad_record_is_quarantined_and_neighbours_land(tmp_path, broken, reason):
    rows = stage_ki(tmp_path, "\n".join([bundle(), broken, "", bundle()]) + "\n", "b.ndjson")
    assert sorted((r["location"], r["reason"]) for r in rows) == [
        ("line 1", None),
        ("line 2", reason),
        ("line 4", None),
    ]


def test_json_array_with_a_deep_element_keeps_the_good_bundle(tmp_path):
    rows = stage_ki(tmp_path, "[" + bundle() + "," + '{"a":' * 100_000 + "1" + "}" * 100_000 + "]", "b.json")
    assert sorted(r["reason"] or "" for r in rows) == ["", Reason.JSON_TOO_DEEP]


@pytest.mark.parametrize(
    "body, reason",
    [
        (bundle()[:100], Reason.TRUNCATED_JSON),
        ('{"a":' * 100_000 + "1" + "}" * 100_000, Reason.JSON_TOO_DEEP),
        (b'{"a": "\xff"}', Reason.UNREADABLE_BYTES),
    ],
    ids=["truncated", "deep", "bytes"],
)
def test_json_file_bad_document(tmp_path, body, reason):
    rows = stage_ki(tmp_path, body, "b.json")
    assert [r["reason"] for r in rows] == [reason]


@pytest.mark.parametrize("name, body", [("e.json", ""), ("e.ndjson", ""), ("b.ndjson", "\n\n")])
def test_empty_kernelindex_file_is_no_error(tmp_path, name, body):
    assert stage_ki(tmp_path, body, name) == []


def test_ndjson_non_utf8_line(tmp_path):
    rows = stage_ki(tmp_path, (bundle() + "\n").encode() + b'{"a": "\xff"}\n' + (bundle() + "\n").encode(), "b.ndjson")
    assert sorted((r["location"], r["reason"]) for r in rows) == [
        ("line 1", None),
        ("line 2", Reason.UNREADABLE_BYTES),
        ("line 3", None),
    ]


# -- end to end: a mixed-bad data_raw through Dagster ----------------------------------------------
def test_mixed_bad_data_raw_end_to_end(tmp_path):
    from tests.conftest import materialize

    raw = tmp_path / "raw"
    (raw / "liger_csv").mkdir(parents=True)
    (raw / "kernelindex").mkdir()
    csv = raw / "liger_csv"
    (csv / "a_good_and_bad.csv").write_text(
        csv_file(
            row("1"),
            row("1"),
            row("2", p50="NaN"),
            "short",
            row("3", ts="nope"),
            row("4", cfg='"{bad"'),
            row("5", p20="0.9"),
            row("6", gpu=""),
        )
    )
    (csv / "b_dup_across.csv").write_text(csv_file(row("1"), row("7")))
    (csv / "c_missing_col.csv").write_text(HEADER.replace(",gpu_name", "") + "\nx\n")
    (csv / "d_empty.csv").write_text("")
    (csv / "e_header_only.csv").write_text(HEADER + "\n")
    (csv / "f_bom_crlf.csv").write_bytes(b"\xef\xbb\xbf" + csv_file(row("8"), eol="\r\n").encode())
    (csv / "g_bytes.csv").write_bytes(csv_file(row("9")).encode() + b"\xff\xfe,,\n")
    (csv / "h_hostile.csv").write_text(csv_file(row("10", kernel="x'); drop table fact_measurement; --")))
    (raw / "kernelindex" / "bundles.ndjson").write_text("\n".join([bundle(), "[1]", bundle(_tamper_protocol)]) + "\n")
    wh = tmp_path / "wh"
    result = materialize(raw, wh)
    assert result.success
    with duckdb.connect(str(wh / "liger.duckdb"), read_only=True) as con:
        xs = sorted(
            r[0]
            for r in con.execute(
                "select x_value from fact_measurement where kernel_name <> 'fused_add_rms_norm'"
            ).fetchall()
        )
        # "1" appears twice in a file and once in another: two facts (occurrences 1 and 2), the first in both files
        assert xs == ["1", "1", "10", "7", "8", "9"]
        assert con.execute(
            "select source_count from fact_measurement where x_value = '1' order by occurrence"
        ).fetchall() == [(2,), (1,)]
        reasons = dict(con.execute("select reason, count(*) from quarantine group by 1").fetchall())
        assert reasons == {
            "non_numeric_value": 1,
            "short_row": 1,
            "bad_timestamp": 1,
            "bad_config_json": 1,
            "quantile_order": 1,
            "empty_field": 1,
            "missing_required_column": 1,
            "unreadable_bytes": 1,
            "not_an_object": 1,
            "digest_mismatch": 1,
        }
        # good + quarantined = rows read, per source
        for path, _read, quarantined in con.execute(
            "select source_path, rows_read, rows_quarantined from source"
        ).fetchall():
            in_quarantine = con.execute("select count(*) from quarantine where source_file = ?", [path]).fetchone()[0]
            assert in_quarantine == quarantined, path
        assert con.execute("select sum(rows_read) from source").fetchone()[0] == 18
        assert (
            con.execute("select count(*) from fact_measurement where kernel_name like 'x''); drop%'").fetchone()[0] == 1
        )
        assert (
            con.execute("select count(*) from fact_measurement where kernel_name = 'fused_add_rms_norm'").fetchone()[0]
            == 1
        )
