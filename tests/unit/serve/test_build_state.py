"""liger.duckdb's build state names its warehouse and is read without opening the file."""

from __future__ import annotations

from pathlib import Path

from pipeline.ingest.discovery import discover
from pipeline.serve.duckdb_build import build_duckdb, built_state
from pipeline.stage.store import StagingStore
from pipeline.store.merge import Merger
from pipeline.store.warehouse import Warehouse
from tests.fixtures import runs as rs


def _ingest(wh: Warehouse, raw: Path) -> None:
    sources, problems = discover(raw)
    staging = StagingStore(wh.staging)
    staging.stage(sources)
    Merger(wh, staging).run(sources, problems)


def _facts(wh: Warehouse) -> int:
    with wh.open_duckdb() as con:
        return con.execute("select count(*) from fact_measurement").fetchone()[0]


def test_a_file_built_for_one_warehouse_is_not_served_for_another(tmp_path):
    local = tmp_path / "local"
    first = Warehouse(tmp_path / "a", local)
    _ingest(first, rs.small_data_raw(tmp_path / "raw_a", n_csv=1, kernelindex=False))
    assert build_duckdb(first, first.published())["mode"] == "full"
    second = Warehouse(tmp_path / "b", local)  # another warehouse, the same local folder
    _ingest(second, rs.small_data_raw(tmp_path / "raw_b", n_csv=2, kernelindex=False, skip=3))
    assert first.published().seq == second.published().seq == 1
    assert build_duckdb(second, second.published())["mode"] == "full"
    assert built_state(second)["warehouse"] == second.root_uri
    with second.open_duckdb() as con:
        sources = {r[0] for r in con.execute("select source_path from source").fetchall()}
    assert len(sources) == 2  # b's two files, not a's one


def test_the_state_is_read_from_its_sidecar_while_it_describes_the_file(tmp_path):
    wh = Warehouse(tmp_path / "wh")
    _ingest(wh, rs.small_data_raw(tmp_path / "raw", n_csv=1, kernelindex=False))
    build_duckdb(wh, wh.published())
    state = built_state(wh)
    assert state["seq"] == 1 and (wh.local / "liger.duckdb.state.json").exists()
    wh.duckdb_path.unlink()
    assert built_state(wh) == {}
    assert build_duckdb(wh, wh.published())["mode"] == "full" and _facts(wh) > 0
