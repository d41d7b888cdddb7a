"""A new Liger version is not a whole rebuild when it ranks after every measured one (`ranks_moved`):
the weekly run of the next release refreshes the steps it adds, and the file then equals a whole
build's, model for model. A version ranked among the measured ones, or a rename's `since_version`
measured for the first time, still rebuilds whole. Real pipeline: a generated deep history ingested
into Delta, liger.duckdb built whole and then incrementally; nothing is timed."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from bench.generate_deep import generate_deep, version, write_deep_next_version
from pipeline.engine.catalog import regress_models
from pipeline.regress.settings import RegressionSettings
from pipeline.serve.duckdb_build import build_duckdb, ranks_moved
from pipeline.store.warehouse import Warehouse
from tests.unit.regress.test_deep_history import _attached
from tests.unit.store.test_delta_history import ingest

DEPTH, POINTS, SEED = 12, 160, 11
# a third of the points measured at the new version: some series get a step, the rest none
NEW_POINTS = 60
# noise kept at no tolerance: an incremental build is then exactly a whole one (docs/regressions.md)
EXACT = RegressionSettings(noise_tolerance=0, change_point_window=8)


def _measure(data: Path, liger_version: str, day: int) -> None:
    """The first NEW_POINTS series points measured once more, at ``liger_version``, ``day`` days after the history."""
    write_deep_next_version(data, DEPTH, seed=SEED, limit=NEW_POINTS, day=day, version=liger_version)


def _build(root: Path, wh: Warehouse, name: str) -> dict:
    local = Warehouse(wh.root_uri, root / name)
    return build_duckdb(local, local.published(), EXACT) | {"path": local.duckdb_path}


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> dict[str, dict]:
    """Built whole; then the newest version measured, built incrementally and whole (and the rows each
    model's two builds do not share, counted then); then that version under a second spelling, the same;
    then a version ranked between two measured ones."""
    root = tmp_path_factory.mktemp("ranks")
    data = root / "data"
    generate_deep(data, DEPTH, seed=SEED, limit=POINTS)
    wh = Warehouse(root / "wh")
    ingest(wh, data)
    done = {"first": _build(root, wh, "inc")}
    _measure(data, version(DEPTH), 1)
    assert ingest(wh, data).mode == "incremental"
    done["newest"] = _build(root, wh, "inc")
    done["whole"] = _build(root, wh, "whole")
    done["differ"] = _differences(done["newest"]["path"], done["whole"]["path"])
    # the newest version spelled another way (0.1.12.0): the same rank, so the same steps, kept incrementally
    _measure(data, f"{version(DEPTH)}.0", 3)
    assert ingest(wh, data).mode == "incremental"
    done["spelled"] = _build(root, wh, "inc")
    done["spelled_whole"] = _build(root, wh, "whole")
    done["spelled_differ"] = _differences(done["spelled"]["path"], done["spelled_whole"]["path"])
    # 0.1.3.post1 ranks between 0.1.3 and 0.1.4: every later version's rank moves
    _measure(data, f"{version(3)}.post1", 2)
    assert ingest(wh, data).mode == "incremental"
    done["between"] = _build(root, wh, "inc")
    return done


def _differences(inc: Path, whole: Path) -> dict[str, int]:
    """Per stored model (and change_points, and the version ranks): rows one file has and the other lacks."""
    tables = [m.name for m in regress_models() if m.materialize] + ["change_points", "liger_versions"]
    with _attached({"inc": str(inc), "whole": str(whole)}) as con:
        counts = {}
        for table in tables:
            # noise_judged names the run each row was judged at: the incremental file's is the first
            cols = "* exclude (judged_at_run)" if table == "noise_judged" else "*"
            one, two = f"select {cols} from inc.{table}", f"select {cols} from whole.{table}"
            counts[table] = con.execute(
                f"select count(*) from (({one} except all {two}) union all ({two} except all {one}))"
            ).fetchone()[0]
        counts["newest rank"] = con.execute("select max(version_rank) from inc.liger_versions").fetchone()[0]
    return counts


def test_a_newest_version_refreshes_the_steps_it_adds(builds):
    assert builds["first"]["mode"] == "full"
    done = builds["newest"]
    assert done["mode"] == "incremental", done
    # the touched series' keys and steps, not the whole of any keyed model
    for model in ("series_steps", "sweep_points", "reference_measurements", "step_changes", "point_evidence"):
        assert not done["refreshed"][model].startswith("full"), (model, done["refreshed"])


def test_a_newest_version_built_incrementally_equals_a_whole_build(builds):
    assert builds["whole"]["mode"] == "full"
    differ = builds["differ"]
    assert differ.pop("newest rank") == DEPTH + 1  # ranked after the DEPTH measured versions
    assert differ == dict.fromkeys(differ, 0)


def test_a_second_spelling_of_the_newest_version_built_incrementally_equals_a_whole_build(builds):
    assert builds["spelled"]["mode"] == "incremental", builds["spelled"]
    differ = builds["spelled_differ"]
    assert differ.pop("newest rank") == DEPTH + 1  # 0.1.12 and 0.1.12.0 are one release
    assert differ == dict.fromkeys(differ, 0)


def test_a_version_ranked_among_the_measured_ones_rebuilds_whole(builds):
    assert builds["between"]["mode"] == "full", builds["between"]


def test_ranks_moved_follows_the_ranks_of_the_versions_built_before():
    with duckdb.connect() as con:
        # no views yet: nothing says what a rename keys
        assert ranks_moved(con, ["0.1.0"], ["0.1.0", "0.1.1"])
        con.execute("create view provider_renames as select 'liger' as from_provider, 'liger_t' as to_provider, "
                    "'0.8.0' as since_version")  # fmt: skip
        assert ranks_moved(con, None, ["0.1.0"])  # nothing built before
        assert not ranks_moved(con, ["0.1.0", "0.1.1"], ["0.1.1", "0.1.0"])  # the same versions
        assert not ranks_moved(con, ["0.1.0", "0.1.1"], ["0.1.0", "0.1.1", "0.2.0.dev1", "0.2.0"])
        # a second spelling of a measured version shares its rank; a text no version at all ranks nowhere
        assert not ranks_moved(con, ["0.1.0", "0.1.1"], ["0.1.0", "0.1.1", "0.1.1.0", "nightly"])
        assert ranks_moved(con, ["0.1.0", "0.1.10"], ["0.1.0", "0.1.10", "0.1.9"])  # PEP 440, not text
        assert ranks_moved(con, ["0.1.0", "0.1.1"], ["0.1.1"])  # a version gone
        # the rename's since_version measured for the first time re-keys the provider's earlier rows
        assert ranks_moved(con, ["0.7.0"], ["0.7.0", "0.8.0"])
        assert not ranks_moved(con, ["0.7.0", "0.8.0"], ["0.7.0", "0.8.0", "0.8.1"])
