"""Issue 46 case 2: `make sql` is read-only in fact. Before, COPY … TO, EXPORT DATABASE and profile_output
wrote anywhere, and a `remove` action COPYed into `tables/fact_measurement/_delta_log/` made every Delta
reader see an empty table. Every writing statement is refused, nothing under the warehouse (or beside it)
changes, and the queries over the warehouse, delta_* views included, still answer."""

from __future__ import annotations

import json
import os
from pathlib import Path

import duckdb
import polars as pl
import pytest

from pipeline.cli import sql_shell
from pipeline.common import duck
from tests.conftest import copy_data_raw, materialize


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    """A warehouse of its own (the statements below would damage a shared one if they ran)."""
    data = copy_data_raw(tmp_path_factory.mktemp("ro") / "data_raw", csv_glob="*_cutile.csv")
    wh = data.parent / "warehouse"
    assert materialize(data, wh).success
    return wh


def _tree(*roots: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p): (p.stat().st_size, p.stat().st_mtime_ns)
        for root in roots
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.startswith("liger.duckdb.tmp")
    }


def _writes(wh: Path, out: Path) -> dict[str, str]:
    log = wh / "tables" / "fact_measurement" / "_delta_log"
    part = next((wh / "tables" / "fact_measurement").glob("*.parquet"))
    version = max(int(p.stem) for p in log.glob("*.json")) + 1
    remove = json.dumps({"remove": {"path": part.name, "deletionTimestamp": 1, "dataChange": True}})
    return {
        "copy_remove_into_delta_log": f"copy (select '{remove}' as a) to '{log}/{version:020d}.json' "
        "(format csv, header false, quote '')",
        "copy_view_to_parquet": f"copy measurements to '{out}/m.parquet' (format parquet)",
        "copy_over_a_listed_part_file": f"copy (select 1 as a) to '{part}' (format parquet, use_tmp_file false)",
        "copy_from_database": "copy from database liger to tmpdb",
        "export_database": f"export database '{out}/export'",
        "set_profile_output": f"set profile_output = '{out}/profile.json'",
        "pragma_profile_output": f"pragma profile_output = '{out}/profile.json'",
        "enable_profiling": "pragma enable_profiling = 'json'",
        "profiling_then_query": f"set enable_profiling = 'json'; set profile_output = '{log}/p.json'; select 1",
        "attach_new_file": f"attach '{out}/new.duckdb' as n",
        "attach_part_read_write": f"attach '{part}' as p (read_write)",
        "create_secret": "create secret s (type s3, key_id 'a', secret 'b')",
        "create_persistent_secret": "create persistent secret s2 (type s3, key_id 'a', secret 'b')",
        "install": "install httpfs",
        "load": "load httpfs",
        "reenable_external_access": "set enable_external_access = true",
        "unlock_configuration": "reset lock_configuration",
        "widen_allowed_directories": "set allowed_directories = ['/']",
        "create_temp_table": "create temp table t as select 1 as a",
        "checkpoint": "checkpoint",
        "query_then_copy": f"select 1 as one; copy (select 1) to '{out}/after.csv'",
        "read_outside_the_warehouse": f"select * from read_text('{out}/*')",
    }


CASES = (
    "copy_remove_into_delta_log", "copy_view_to_parquet", "copy_over_a_listed_part_file", "copy_from_database",
    "export_database", "set_profile_output", "pragma_profile_output", "enable_profiling", "profiling_then_query",
    "attach_new_file", "attach_part_read_write", "create_secret", "create_persistent_secret", "install", "load",
    "reenable_external_access", "unlock_configuration", "widen_allowed_directories", "create_temp_table",
    "checkpoint", "query_then_copy", "read_outside_the_warehouse",
)  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_every_writing_statement_is_refused_and_nothing_is_written(warehouse, tmp_path, capsys, case):
    out = tmp_path / "out"
    out.mkdir()
    (out / "seed.txt").write_text("x")
    facts = pl.scan_delta(str(warehouse / "tables" / "fact_measurement")).select(pl.len()).collect().item()
    assert facts > 0
    before = _tree(warehouse, out)
    sql = _writes(warehouse, out)[case]
    assert sql_shell.main(["--db", str(warehouse / "liger.duckdb"), "-c", sql]) == 1, sql
    assert "one" not in capsys.readouterr().out  # a batch with a write in it runs none of its statements
    assert _tree(warehouse, out) == before
    assert pl.scan_delta(str(warehouse / "tables" / "fact_measurement")).select(pl.len()).collect().item() == facts


def test_duckdb_itself_refuses_what_gets_past_the_statement_check(warehouse, tmp_path):
    """The second gate: the connection's own switches, locked."""
    con = sql_shell.lock_down(duck.connect(warehouse / "liger.duckdb", read_only=True))
    with pytest.raises(duckdb.PermissionException):
        con.execute(f"copy (select 1) to '{tmp_path}/direct.csv'")
    with pytest.raises(duckdb.PermissionException):
        con.execute(f"attach '{tmp_path}/direct.duckdb' as d")
    for setting in ("profile_output = 'p.json'", "enable_external_access = true", "lock_configuration = false"):
        with pytest.raises(duckdb.InvalidInputException, match="locked"):
            con.execute(f"set {setting}")
    con.close()
    assert not os.listdir(tmp_path)


def test_queries_over_the_warehouse_still_answer(warehouse):
    con = sql_shell.lock_down(duck.connect(warehouse / "liger.duckdb", read_only=True))
    facts = pl.scan_delta(str(warehouse / "tables" / "fact_measurement")).select(pl.len()).collect().item()
    assert duck.scalar(con, "select count(*) from measurements") == facts
    assert duck.scalar(con, "select count(*) from internal.delta_fact_measurement") == facts
    assert duck.scalar(con, "select count(*) from warehouse_run") == 1
    main = [r[0] for r in con.execute("select view_name from duckdb_views() where schema_name = 'main'").fetchall()]
    for name in main:
        con.execute(f'select * from "{name}" limit 1').fetchall()
    for sql in ("explain select * from measurements", "describe measurements", "summarize select 1 as a"):
        assert sql_shell.run(con, sql)
    con.close()


def test_the_shell_refuses_a_write_and_exits_non_zero(warehouse, tmp_path):
    target = tmp_path / "x.csv"
    assert sql_shell.main(["--db", str(warehouse / "liger.duckdb"), "-c", f"copy (select 1) to '{target}'"]) == 1
    assert not target.exists() and not os.listdir(tmp_path)
