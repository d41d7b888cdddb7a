"""A run's checks are evaluated beside the DuckDB build, in a side thread the merge's step starts, and
the check step reports that result; a full check of a larger warehouse is evaluated in its own step, and
a side evaluation that failed is done again there."""

from __future__ import annotations

import shutil
import threading

from pipeline.defs import checks as check_defs
from pipeline.serve import checks
from tests.conftest import DATA_RAW, copy_data_raw, materialize


def _record_evaluations(monkeypatch) -> list[tuple[str, int | None]]:
    """(thread name, scope) of every evaluation of the warehouse checks."""
    seen: list[tuple[str, int | None]] = []
    connect = checks.connect

    def recording(wh, published=None, since_seq=None):
        seen.append((threading.current_thread().name, since_seq))
        return connect(wh, published, since_seq)

    monkeypatch.setattr(checks, "connect", recording)
    return seen


def _runs(tmp_path):
    history = sorted((DATA_RAW / "liger_csv").glob("*.csv"))
    data = copy_data_raw(tmp_path / "data_raw", csv_glob=history[0].name, with_record=False)
    return data, history[1], tmp_path / "warehouse"


def test_a_runs_checks_are_evaluated_beside_the_build(tmp_path, monkeypatch):
    seen = _record_evaluations(monkeypatch)
    data, later, wh = _runs(tmp_path)
    assert materialize(data, wh).success
    assert seen == [("checks-beside-build", None)]  # a small full run: every fact, beside the build
    shutil.copy(later, data / "liger_csv" / later.name)
    result = materialize(data, wh)
    assert result.success
    assert seen[1:] == [("checks-beside-build", 1)]  # once, beside the build: the facts run 2 committed
    evaluations = result.get_asset_check_evaluations()
    assert len(evaluations) == 8 and all(e.passed for e in evaluations if e.severity.value == "ERROR")
    digests = next(e for e in evaluations if e.asset_check_key.name == "digest_integrity")
    assert digests.metadata["checked"].value == "the facts warehouse run 2 committed"
    assert not check_defs._EARLY  # the step took the result


def test_a_full_check_of_a_larger_warehouse_waits_for_its_step(tmp_path, monkeypatch):
    seen = _record_evaluations(monkeypatch)
    monkeypatch.setattr(check_defs, "FULL_CHECK_BESIDE_BUILD_MAX_FACTS", 10)
    data, _, wh = _runs(tmp_path)
    result = materialize(data, wh)
    assert result.success
    assert seen == [("MainThread", None)]  # every fact, in the check step (after the build)
    assert all(e.passed for e in result.get_asset_check_evaluations() if e.severity.value == "ERROR")


def test_a_failed_side_evaluation_is_done_again_in_the_check_step(tmp_path, monkeypatch):
    data, later, wh = _runs(tmp_path)
    assert materialize(data, wh).success
    seen = _record_evaluations(monkeypatch)
    evaluate = check_defs._evaluate

    def failing_beside_the_build(*args):
        if threading.current_thread().name == "checks-beside-build":
            raise OSError("injected: the side evaluation failed")
        return evaluate(*args)

    monkeypatch.setattr(check_defs, "_evaluate", failing_beside_the_build)
    shutil.copy(later, data / "liger_csv" / later.name)
    result = materialize(data, wh)
    assert result.success
    assert seen == [("MainThread", 1)]
    assert all(e.passed for e in result.get_asset_check_evaluations() if e.severity.value == "ERROR")
