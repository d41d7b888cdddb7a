"""Issue 46 cases 5 and 7: a kernelindex line file (.ndjson / .jsonl) judged like a .json file.

Before: a key repeated in a nested object the reader did not list (run.spec.timing, a measurement, three
levels deep, an object beside the bundle's own) was accepted in a line file (DuckDB kept the first value,
the run digest the last), and a number JSON has not (NaN, ±Infinity, 1e400) outside the ms fields gave a
fact with identity `kernelindex` and run_digest NULL."""

from __future__ import annotations

import json

import pytest

from pipeline.contracts.reasons import Reason
from tests.unit.stage.test_bad_input import SAMPLE, stage_ki

SENTINEL = "\u0000dup\u0000"


def _with_duplicate_at(path: tuple) -> str:
    """The sample bundle with the object at ``path`` naming its first key twice (same value)."""
    doc = json.loads(json.dumps(SAMPLE))
    holder = doc
    for step in path[:-1]:
        holder = holder[step]
    target = holder[path[-1]] if path else doc
    first, value = next(iter(target.items()))
    inner = json.dumps(target)
    doubled = "{" + json.dumps(first) + ": " + json.dumps(value) + ", " + inner[1:]
    if not path:
        return doubled
    holder[path[-1]] = SENTINEL
    return json.dumps(doc).replace(json.dumps(SENTINEL), doubled, 1)


def _with_extra_object(doc: dict) -> dict:
    doc["x-notes"] = {"a": {"b": {"c": 1}}}
    return doc


DUPLICATE_PLACES = {
    "top_level": (),
    "run_2_deep": ("run", "spec"),
    "timing_3_deep": ("run", "spec", "timing"),
    "latency_4_deep": ("run", "spec", "timing", "latencyNs"),
    "measurement_in_array": ("run", "spec", "measurements", 0),
    "second_measurement_in_array": ("run", "spec", "measurements", 1),
    "metadata_labels": ("run", "metadata", "labels"),
    "environment_nested": ("environment", "spec"),
}


@pytest.mark.parametrize("suffix", [".ndjson", ".jsonl", ".json"])
@pytest.mark.parametrize("place", sorted(DUPLICATE_PLACES))
def test_a_key_twice_in_any_object_is_duplicate_key_and_neighbours_land(tmp_path, place, suffix):
    broken = _with_duplicate_at(DUPLICATE_PLACES[place])
    assert json.loads(broken) == SAMPLE  # the same bundle, but for the repeated key
    good = json.dumps(SAMPLE)
    body = "\n".join([good, broken, good]) + "\n" if suffix != ".json" else f"[{good}, {broken}, {good}]"
    rows = stage_ki(tmp_path, body, "b" + suffix)
    assert sorted(r["reason"] or "" for r in rows) == ["", "", Reason.DUPLICATE_KEY], place


def test_a_key_twice_inside_an_object_beside_the_bundle_is_duplicate_key(tmp_path):
    """Three levels down in an object the reader never reads; the same object without the repeat lands."""
    extra = json.dumps(_with_extra_object(json.loads(json.dumps(SAMPLE))))
    broken = extra.replace('{"c": 1}', '{"c": 1, "c": 1}')
    assert broken != extra
    rows = stage_ki(tmp_path, "\n".join([extra, broken]) + "\n", "b.ndjson")
    assert sorted((r["location"], r["reason"]) for r in rows) == [("line 1", None), ("line 2", Reason.DUPLICATE_KEY)]


NUMBER_PLACES = {
    "timing_median": '"median": 125920',
    "measurement_p20_value": '"value": 123104',
    "measurement_p80_value": '"value": 137440',
}
NON_JSON_NUMBERS = ["NaN", "-Infinity", "Infinity", "1e400", "-1e400", "1" + "0" * 400]


@pytest.mark.parametrize("suffix", [".ndjson", ".jsonl"])
@pytest.mark.parametrize("number", NON_JSON_NUMBERS, ids=["nan", "-inf", "inf", "1e400", "-1e400", "400-digits"])
@pytest.mark.parametrize("place", sorted(NUMBER_PLACES))
def test_a_non_json_number_outside_the_ms_fields_is_quarantined(tmp_path, place, number, suffix):
    good = json.dumps(SAMPLE)
    field = NUMBER_PLACES[place]
    assert field in good
    broken = good.replace(field, field.split(":")[0] + ": " + number, 1)
    rows = stage_ki(tmp_path, "\n".join([good, broken, good]) + "\n", "b" + suffix)
    assert sorted((r["location"], r["reason"]) for r in rows) == [
        ("line 1", None),
        ("line 2", Reason.NON_NUMERIC_VALUE),
        ("line 3", None),
    ]
    assert all(r["run_digest"] for r in rows if r["reason"] is None)


@pytest.mark.parametrize("number", ["NaN", "Infinity", "1e400"])
def test_a_non_json_number_in_another_object_is_quarantined(tmp_path, number):
    """Numbers beside the run (an object the reader never reads) and inside the run's labels."""
    beside = json.dumps(_with_extra_object(json.loads(json.dumps(SAMPLE)))).replace('"c": 1', f'"c": {number}')
    doc = json.loads(json.dumps(SAMPLE))
    doc["run"]["spec"]["timing"]["latencyNs"]["p99"] = "__n__"
    in_run = json.dumps(doc).replace('"__n__"', number)
    rows = stage_ki(tmp_path, "\n".join([json.dumps(SAMPLE), beside, in_run]) + "\n", "b.ndjson")
    reasons = sorted((r["location"], r["reason"]) for r in rows)
    assert reasons[0] == ("line 1", None)
    assert [r for _, r in reasons[1:]] == [Reason.NON_NUMERIC_VALUE, Reason.NON_NUMERIC_VALUE]


def test_huge_finite_numbers_and_words_like_nan_are_no_error(tmp_path):
    """The prefilter is a superset: a finite 1e308 and a title holding "infinity" or "nano" still land."""
    doc = json.loads(json.dumps(SAMPLE))
    doc["run"]["metadata"]["title"] = "Infinity and nano: NaN-free"
    doc["run"]["metadata"]["labels"]["note"] = "1e400"
    text = json.dumps(doc)
    assert json.loads(text)["run"]["spec"]["timing"]["latencyNs"]["median"] == 125920
    rows = stage_ki(tmp_path, text + "\n", "b.ndjson")
    assert [r["reason"] for r in rows] == [None]
