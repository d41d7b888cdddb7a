"""Issue 46 case 9 (ingest): NUL bytes in names and versions, and versions that are not PEP 440.

Before: a kernel name, GPU or version holding U+0000 landed (a version `0.9.0\\0\\0\\0` then had no rank,
silently), and a version PEP 440 does not spell (`latest`) landed and was left out of the dashboard and
the verdicts without a word. Now each is quarantined with its own reason, in a CSV row and in a
kernelindex bundle, and its neighbours land (contracts/rules.py `nul_character_clause`, `parse_version`)."""

from __future__ import annotations

import json

import pytest

from pipeline.contracts.reasons import Reason
from tests.fixtures.runs import row
from tests.unit.stage.test_bad_input import SAMPLE, bad, csv_file, good, stage_csv, stage_ki

NUL_FIELDS = {
    "kernel": {"kernel": "ce\0"},
    "kernel_inside": {"kernel": "c\0e"},
    "version": {"version": "0.9.0\0\0\0"},
    "gpu": {"gpu": "NVIDIA\0A100"},
    "x_value": {"x": "9\0"},
}


@pytest.mark.parametrize("field", sorted(NUL_FIELDS))
def test_a_nul_in_a_csv_name_or_version_is_quarantined(tmp_path, field):
    rows = stage_csv(tmp_path, csv_file(row("1"), row(**{"x": "9", **NUL_FIELDS[field]}), row("2")))
    assert good(rows) == ["1", "2"]
    assert bad(rows) == [("record 2", Reason.NUL_CHARACTER)]


def test_a_nul_in_the_x_label_is_quarantined(tmp_path):
    rows = stage_csv(tmp_path, csv_file(row("1"), row("9").replace(",vocab,", ",vo\0cab,"), row("2")))
    assert good(rows) == ["1", "2"] and bad(rows) == [("record 2", Reason.NUL_CHARACTER)]


NOT_PEP440 = ["latest", "main", "0.9.0+", "0.9.0.x", "0.9.0 rc1", "unknown"]
PEP440_SPELLINGS = ["0.9.0", " 0.9.0 ", "v0.9.0", "0.9.0rc1", "0.9.0.post1", "0.9.0.dev3", "1!0.9", "0.9.0+local"]


@pytest.mark.parametrize("version", NOT_PEP440)
def test_a_csv_version_pep_440_does_not_spell_is_bad_version(tmp_path, version):
    rows = stage_csv(tmp_path, csv_file(row("1"), row("9", version=version), row("2")))
    assert good(rows) == ["1", "2"] and bad(rows) == [("record 2", Reason.BAD_VERSION)]


def test_every_pep_440_spelling_lands(tmp_path):
    rows = stage_csv(tmp_path, csv_file(*(row(str(i), version=v) for i, v in enumerate(PEP440_SPELLINGS))))
    assert len(good(rows)) == len(PEP440_SPELLINGS) and not bad(rows)


def _bundle(**changes: str) -> str:
    doc = json.loads(json.dumps(SAMPLE))
    for place, value in changes.items():
        if place == "version":
            doc["run"]["metadata"]["labels"]["liger_version"] = value
        elif place == "run_name":
            doc["run"]["metadata"]["name"] = value
    return json.dumps(doc)


@pytest.mark.parametrize(
    "change, reason",
    [
        ({"version": "0.9.0\0\0\0"}, Reason.NUL_CHARACTER),
        ({"run_name": "run\0"}, Reason.NUL_CHARACTER),
        ({"version": "latest"}, Reason.BAD_VERSION),
        ({"version": "0.9.0 rc1"}, Reason.BAD_VERSION),
    ],
)
@pytest.mark.parametrize("suffix", [".ndjson", ".json"])
def test_a_bundle_with_a_nul_or_a_bad_version_is_quarantined_and_neighbours_land(tmp_path, change, reason, suffix):
    good_bundle = _bundle()
    broken = _bundle(**change)
    body = "\n".join([good_bundle, broken]) + "\n" if suffix == ".ndjson" else f"[{good_bundle}, {broken}]"
    rows = stage_ki(tmp_path, body, "b" + suffix)
    assert sorted(r["reason"] or "" for r in rows) == ["", reason]
