"""Why a sweep moved, when only the benchmark harness changed (issue 54): a real Dagster run over a synthetic
clone (tests/fixtures/gh_pages_repo.py, build_harness_repo) where one commit changes only a kernel's benchmark
script, one only comments of the shared utils.py, and one rewrites a script so that its series are redefined."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.conftest import materialize
from tests.fixtures.gh_pages_repo import build_harness_repo


@pytest.fixture(scope="module")
def harness_wh(tmp_path_factory) -> tuple:
    root = tmp_path_factory.mktemp("harness_cause")
    clone = build_harness_repo(root / "repo")
    (root / "data_raw").mkdir()
    assert materialize(root / "data_raw", root / "wh", git_repo=clone.path).success
    return clone, root / "wh"


def _open(wh: Path) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(wh / "liger.duckdb"), read_only=True)


def test_a_commit_changing_only_a_benchmark_script_is_harness_and_names_it(harness_wh):
    clone, wh = harness_wh
    with _open(wh) as con:
        alerts = {
            tuple(r[0]): r[1:]
            for r in con.execute(
                "select kernel_names, cause, suspects, harness_suspects, line from alerts where axis = 'commit'"
            ).fetchall()
        }
        rows = dict(
            con.execute(
                "select kernel_name, harness_changed from commit_regressions where verdict = 'regression'"
            ).fetchall()
        )
    h2, h4, h5 = clone.short("h2"), clone.short("h4"), clone.short("h5")
    # swiglu (h2 rewrote its script) and geglu (nothing of it changed) in one range: mixed, each named
    cause, suspects, harness, line = alerts[("geglu", "swiglu")]
    assert (cause, suspects, harness) == ("mixed", [], [clone.commits["h2"]])
    assert f"mixed: harness for swiglu ({h2} (benchmark_swiglu.py)); environment for geglu" in line
    # layer_norm: h5 changed only its benchmark script, so harness, never environment
    cause, suspects, harness, line = alerts[("layer_norm",)]
    assert (cause, suspects, harness) == ("harness", [], [clone.commits["h5"]])
    assert f"harness: {h5} (benchmark_layer_norm.py) changes how layer_norm is measured" in line
    # rms_norm: its source (h4); comments of utils.py (h3) change no harness
    cause, suspects, harness, _ = alerts[("rms_norm",)]
    assert (cause, [s[:7] for s in suspects], harness) == ("code", [h4], [])
    assert rows == {"swiglu": True, "geglu": False, "layer_norm": True, "rms_norm": False}


def test_a_sweep_ending_at_a_redefinition_reads_redefined_not_open(harness_wh):
    clone, wh = harness_wh
    h6 = clone.short("h6")
    with _open(wh) as con:
        lineage = con.execute(
            "select kernel_name, to_label, vanished, appeared, kept, harness_commits, harness_text from series_lineage"
        ).fetchall()
        dyt = con.execute("select status, line from alerts where kernel_names = ['dyt']").fetchone()
        members = con.execute(
            "select member_status, redefined_at, redefined_by from alert_member_status where kernel_name = 'dyt'"
        ).fetchall()
        others = {
            r[0]
            for r in con.execute(
                "select status from alerts where axis = 'commit' and kernel_names <> ['dyt']"
            ).fetchall()
        }
    # dyt's script was rewritten at h6 and measures other sizes there: 4 sizes x 2 providers vanish, 3 x 2 appear
    assert lineage == [("dyt", h6, 8, 6, 0, [clone.commits["h6"]], f"{h6}, benchmark_dyt.py")]
    assert members == [("redefined", h6, f"{h6}, benchmark_dyt.py")]
    assert dyt[0] == "redefined" and dyt[1].endswith(f" — series redefined at {h6} ({h6}, benchmark_dyt.py)")
    assert others == {"open"}  # the other steps persist: nothing took them back or ended their series
