"""`make sql` (pipeline/cli/sql_shell.py) and what liger.duckdb shows its users: a failing statement
fails the command, `main` lists only what people query (the build's objects live in `internal`),
wide text stays readable."""

from __future__ import annotations

import os
import subprocess
import sys

import duckdb
import pytest

from pipeline.serve.duckdb_build import INTERNAL_SCHEMA, is_internal
from tests.conftest import PROJECT

INTERNAL_NAMES = ("delta_fact_measurement", "liger_build_state", "provenance_source_flags", "commit_kernel")


def shell(db, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(PROJECT), "COLUMNS": "160"}
    return subprocess.run(
        [sys.executable, "-m", "pipeline.cli.sql_shell", "--db", str(db), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=PROJECT,
    )


@pytest.fixture(scope="module")
def db(shipped_warehouse):
    return shipped_warehouse / "liger.duckdb"


def test_a_failing_statement_exits_non_zero(db):
    ok = shell(db, "-c", "select count(*) as n from measurements")
    assert ok.returncode == 0 and "65571" in ok.stdout.replace(",", ""), ok.stderr
    bad = shell(db, "-c", "select * from no_such_view")
    assert bad.returncode == 1 and "no_such_view" in bad.stderr
    piped = shell(db, stdin="select 1 as one;\nselect * from no_such_view;\nselect 2 as two;\n")
    assert piped.returncode == 1 and "one" in piped.stdout and "two" in piped.stdout
    assert shell(db, stdin="select 1 as one;\nselect 2 as two\n").returncode == 0  # the last ';' may be missing


def test_main_holds_only_what_users_query(db):
    with duckdb.connect(str(db), read_only=True) as con:
        main = {
            r[0]
            for r in con.execute(
                "select table_name from information_schema.tables where table_schema = 'main'"
            ).fetchall()
        }
        internal = {
            r[0]
            for r in con.execute(
                "select table_name from information_schema.tables where table_schema = $s", {"s": INTERNAL_SCHEMA}
            ).fetchall()
        }
        assert {"measurements", "sweep_regressions", "warehouse_run", "change_points", "regression_settings"} <= main
        assert not [n for n in main if is_internal(n) or n.endswith(("__materialized", "__definition"))], main
        assert set(INTERNAL_NAMES) <= internal
        assert any(n.endswith("__materialized") for n in internal) and any(n.endswith("__definition") for n in internal)
        for name in sorted(main):  # every view in main works
            con.execute(f'select * from "{name}" limit 1').fetchall()
        with pytest.raises(duckdb.CatalogException) as hint:
            con.execute("select * from measurement")
        assert '"measurements"' in str(hint.value)
    listed = shell(db, stdin=".tables\n")
    assert listed.returncode == 0 and "sweep_regressions" in listed.stdout
    assert not any(n in listed.stdout for n in INTERNAL_NAMES), listed.stdout


def test_wide_text_is_readable(db):
    sql = "select kernel_name, extra_config from sweep_regressions order by length(extra_config) desc limit 1"
    with duckdb.connect(str(db), read_only=True) as con:
        config = con.execute(sql).fetchone()[1]
    line = shell(db, "--mode", "line", "-c", sql)
    assert line.returncode == 0 and f"extra_config = {config}" in line.stdout
    box = shell(db, "-c", sql)
    assert box.returncode == 0 and max(len(r) for r in box.stdout.splitlines()) <= 160
