"""Issue 46 case 1: line endings are not data (`pipeline/stage/line_endings.py`).

Before: a CRLF file with one LF row appended (or an LF file with one CRLF row, a lone CR between rows,
`cat` of a CRLF and an LF file) was quarantined whole as `unreadable_file` ("CSV Parser state machine
reached an invalid state"), and the facts the warehouse held from that file disappeared on the next
run; a CR-only file was quarantined whole as `cr_line_endings`. Now every mix is read, and each row
keeps the digest it has in a file of one kind."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from pipeline.contracts.reasons import Reason
from tests.fixtures import runs as rs
from tests.fixtures.runs import HEADER, row
from tests.unit.stage.test_bad_input import bad, good, stage_csv
from tests.unit.stage.test_faults import _build

# The middle row's x value is quoted and holds a CRLF: that one is the field's text, in every file.
ROWS = [HEADER, row("1"), row('"a\r\nb"'), row("3"), row("4")]


def _joined(endings: list[str]) -> str:
    """ROWS, the i-th line ended by ``endings[i]`` ('' for none)."""
    return "".join(line + end for line, end in zip(ROWS, endings, strict=True))


MIXES = {
    "crlf_file_with_one_lf_row": _joined(["\r\n", "\r\n", "\r\n", "\r\n", "\n"]),
    "lf_file_with_one_crlf_row": _joined(["\n", "\n", "\r\n", "\n", "\n"]),
    "crlf_header_then_lf_rows": _joined(["\r\n", "\n", "\n", "\n", "\n"]),
    "lf_header_then_crlf_rows": _joined(["\n", "\r\n", "\r\n", "\r\n", "\r\n"]),
    "lone_cr_between_lf_rows": _joined(["\n", "\r", "\n", "\n", "\n"]),
    "lone_cr_between_crlf_rows": _joined(["\r\n", "\r\n", "\r\n", "\r", "\r\n"]),
    "all_three_and_no_final_ending": _joined(["\r\n", "\n", "\r", "\r\n", ""]),
    "cr_only": _joined(["\r"] * 5),
    "lf_cr_pairs": _joined(["\n\r"] * 5),
}


@pytest.mark.parametrize("mix", sorted(MIXES))
def test_every_mix_of_line_endings_is_read_with_the_digests_of_a_file_of_one_kind(tmp_path, mix):
    reference = stage_csv(tmp_path, _joined(["\r\n"] * 5), "crlf.csv")
    assert good(reference) == ["1", "3", "4", "a\r\nb"] and not bad(reference)
    rows = stage_csv(tmp_path, MIXES[mix], mix + ".csv")
    assert not bad(rows), bad(rows)
    digests = {r["x_value"]: r["measurement_digest"] for r in rows}
    assert digests == {r["x_value"]: r["measurement_digest"] for r in reference}


def test_cat_of_a_crlf_and_an_lf_file_keeps_both_files_rows(tmp_path):
    """`cat a.csv b.csv`: the second header is one quarantined line, never the whole file."""
    first = "\r\n".join([HEADER, row("1"), row("2")]) + "\r\n"
    second = "\n".join([HEADER, row("3"), row("4")]) + "\n"
    rows = stage_csv(tmp_path, first + second, "cat.csv")
    assert good(rows) == ["1", "2", "3", "4"]
    [quarantined] = [r for r in rows if r["reason"] is not None]
    assert quarantined["raw"].startswith("kernel_name,") and quarantined["reason"] != Reason.UNREADABLE_FILE


def test_a_lone_cr_ends_a_line_where_rejects_are_counted(tmp_path):
    """Locations count a lone CR as a line end, as the row it ends is read."""
    body = HEADER + "\n" + row("1") + "\r" + "ce,liger,forward\r\n" + row("2") + "\n" + row("3") + "\n"
    rows = stage_csv(tmp_path, body, "short.csv")
    assert good(rows) == ["1", "2", "3"]
    assert bad(rows) == [("line 3", Reason.SHORT_ROW)]


def _facts(db: Path) -> set[str]:
    with duckdb.connect(str(db), read_only=True) as con:
        return {r[0] for r in con.execute("select measurement_digest from fact_measurement").fetchall()}


@pytest.mark.parametrize("appended_endings", [["\n"], ["\r", "\n"]], ids=["one_lf_row", "a_cr_row_and_an_lf_row"])
def test_rows_appended_with_other_endings_keep_every_fact_of_their_file(tmp_path, appended_endings):
    """A shipped CSV (CRLF) gets rows ended otherwise: the next run keeps every fact it held and adds
    the new rows'; before, the file was quarantined whole and its facts left the warehouse."""
    shipped = sorted(rs.CSV_DIR.glob("*.csv"))[0]
    assert b"\r\n" in shipped.read_bytes()[:4096]
    data_raw, wh = tmp_path / "data_raw", tmp_path / "wh"
    (data_raw / "liger_csv").mkdir(parents=True)
    target = data_raw / "liger_csv" / shipped.name
    shutil.copy(shipped, target)
    _build(data_raw, wh)
    before = _facts(wh / "liger.duckdb")
    assert before
    fields = shipped.read_bytes().rstrip(b"\r\n").rsplit(b"\r\n", 1)[-1].decode().split(",")
    with target.open("ab") as fh:
        for i, ending in enumerate(appended_endings):
            fields[7] = str(424242 + i)  # x_value: a measurement the file did not hold
            fh.write((",".join(fields) + ending).encode())
    _build(data_raw, wh)
    after = _facts(wh / "liger.duckdb")
    assert before < after and len(after) == len(before) + len(appended_endings)
    with duckdb.connect(str(wh / "liger.duckdb"), read_only=True) as con:
        assert con.execute("select count(*) from quarantine where location = 'file'").fetchone()[0] == 0
