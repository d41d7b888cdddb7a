"""Every model of sql/serve and sql/regress, run on Spark (pyspark local[2]) through sqlglot, equals DuckDB's."""

from __future__ import annotations

import math
import os
import re
from decimal import Decimal
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from pipeline.spark.inputs import table_files
from pipeline.spark.session import spark_session
from pipeline.spark.transpile import transpile_views
from pipeline.spark.views import run_views
from pipeline.store.warehouse import Warehouse
from tests.fixtures import procs
from tests.fixtures.spark_parity import (
    build_duckdb_from_files,
    differences,
    duckdb_rows,
    spark_rows,
    write_perturbed_tables,
)

VIEW_NAME = re.compile(r"create\s+or\s+replace\s+view\s+([A-Za-z_][A-Za-z0-9_]*)", re.IGNORECASE)


def view_names() -> list[str]:
    """Every sql/regress model (what run_views writes), in run order, plus the change_points table."""
    from pipeline.engine.catalog import regress_models

    return [*(m.name for m in regress_models()), "change_points"]


@pytest.fixture(scope="module")
def spark():
    os.environ.pop("LIGER_SPARK_MASTER", None)
    # A JVM that lives for one test file: C1 alone and the serial collector compute the same rows with
    # a third less CPU (C2 and the parallel collector's threads take it from the other test worker).
    java = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
    session = spark_session("local[2]", app_name="liger-parity-test", conf={"spark.driver.extraJavaOptions": java})
    yield session
    session.stop()
    # stop() leaves py4j's JVM running until the interpreter exits: end it with the test
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    jvm = getattr(gateway, "proc", None)
    if gateway is not None:
        gateway.shutdown()
        SparkContext._gateway = SparkContext._jvm = None
    if jvm is not None:
        procs.kill_tree(jvm.pid, grace=10)


def assert_parity(db: Path, spark_out: Path) -> dict[str, int]:
    problems, counts = [], {}
    for view in view_names():
        duck, spark = duckdb_rows(db, view), spark_rows(spark_out, view)
        counts[view] = duck.height
        problems += differences(view, duck, spark)
    assert not problems, "\n".join(problems)
    return counts


def test_shipped_data_same_rows_on_spark(spark, shipped_warehouse, tmp_path):
    out = tmp_path / "spark"
    seconds = run_views(spark, table_files(Warehouse(shipped_warehouse)), str(out))
    assert list(seconds) == view_names()
    counts = assert_parity(shipped_warehouse / "liger.duckdb", out)
    with duckdb.connect(str(shipped_warehouse / "liger.duckdb"), read_only=True) as con:
        gh_pages = con.sql(
            "select count(distinct measurement_digest) from fact_sighting where source_path like 'liger_gh_pages/%'"
        ).fetchall()[0][0]
        assert con.sql("select count(*) from measurements").fetchall()[0][0] == 4421 + 372 + gh_pages
    assert counts["sweep_regressions"] > 0 and counts["regressions"] > 0


def test_perturbed_data_same_rows_on_spark(spark, shipped_warehouse, tmp_path):
    files = write_perturbed_tables(table_files(Warehouse(shipped_warehouse)), tmp_path / "perturbed")
    db = tmp_path / "perturbed" / "liger.duckdb"
    build_duckdb_from_files(files, db)
    out = tmp_path / "spark"
    run_views(spark, files, str(out))
    counts = assert_parity(db, out)

    # The perturbations reach the views (else the comparison above proves little).
    con = duckdb.connect(str(db), read_only=True)
    try:
        facts = con.sql(
            "select count(*) filter (where extra_config is null), "
            "count(*) filter (where microsecond(observed_at) % 1000000 <> 0), "
            "count(*) filter (where p50 <= 0), count(*) filter (where liger_version = 'main') "
            "from measurements"
        ).fetchall()[0]
        unranked = con.sql("select count(*) from liger_versions where not is_orderable").fetchall()[0][0]
        verdicts = {r[0] for r in con.sql("select distinct verdict from regressions").fetchall()}
        # a p50 <= 0 forms no ratio: ranked_measurements leaves it out (both engines must agree on that)
        non_positive = con.sql("select count(*) from ranked_measurements where p50 <= 0").fetchall()[0][0]
        quarantined = con.sql("select count(*) from quarantine_by_reason").fetchall()[0][0]
    finally:
        con.close()
    assert all(n > 0 for n in facts), facts
    assert unranked >= 1
    assert {"regression", "improvement", "unchanged", "unstable"} <= verdicts
    assert non_positive == 0
    assert counts["change_points"] > 0 and quarantined >= 3
    assert counts["noise_floor"] > 2 and counts["reference_measurements"] > 0


def test_commit_history_same_rows_on_spark(spark, tmp_path):
    """A synthetic clone (tests/fixtures/gh_pages_repo.build_suspects_repo): the commit views
    (commit_ranges, commit_regressions, commit_suspects) hold rows here, unlike without a clone."""
    from pipeline.defs.resources import WarehouseResource
    from tests.conftest import all_assets_and_checks
    from tests.fixtures.gh_pages_repo import build_suspects_repo

    clone = build_suspects_repo(tmp_path / "repo")
    (tmp_path / "raw").mkdir()
    wh = tmp_path / "wh"
    result = dg.materialize(
        all_assets_and_checks(),
        resources={
            "warehouse": WarehouseResource(data_raw=str(tmp_path / "raw"), warehouse=str(wh), git_repo=str(clone.path))
        },
        instance=dg.DagsterInstance.ephemeral(),
        selection=dg.AssetSelection.assets("staged_sources").downstream(),
    )
    assert result.success
    out = tmp_path / "spark"
    run_views(spark, table_files(Warehouse(wh)), str(out))
    counts = assert_parity(wh / "liger.duckdb", out)
    assert counts["commit_regressions"] > 0 and counts["commit_suspects"] == 9


def test_toolchains_same_rows_on_spark(spark, tmp_path):
    """Our own runs with environment.json at two commits (issue 54): alert_toolchain holds a row here."""
    from tests.conftest import materialize
    from tests.e2e.test_toolchain_identity import harness_runs_with_toolchains

    clone, root = harness_runs_with_toolchains(tmp_path)
    assert materialize(root, tmp_path / "wh", git_repo=clone.path).success
    out = tmp_path / "spark"
    run_views(spark, table_files(Warehouse(tmp_path / "wh")), str(out))
    counts = assert_parity(tmp_path / "wh" / "liger.duckdb", out)
    assert counts["alert_toolchain"] > 0


# Each probe is a construct that sqlglot translates but Spark evaluates differently.
PROBES = {
    "epoch_subsecond": "epoch(timestamp '2024-05-01 10:00:00.123456')",
    "printf_half_even_tie": "printf('%.2f|%.1f|%.0f|%.0f', 0.125, 0.25, 0.5, 2.5)",
    "printf_binary_above_half": "printf('%.3f|%.3f', 0.0125, 1.0005)",
    "printf_null_argument": "printf('x%.3f %s', null::double, 'a')",
    "printf_percent_and_int": "printf('%d of %d (%.1f%%)', 3::bigint, 4::bigint, 75.0)",
    "list_keeps_nulls": "(select len(list(x)) from (values (1), (null), (3)) as t(x))",
    "list_distinct_drops_nulls": "list_distinct([1, null, 1])",
    "flatten_skips_null_lists": "flatten([null, ['a'], ['b']])",
    "division_by_zero": "[1 / 0, -1 / 0, 1.5 / 3]",
    "ln_edges": "[ln(0), ln(1)]",
    "index_out_of_range": "[1, 2, 3][5]",
    "index_by_untyped_column": "(select [10, 20, 30][i] from (values (2)) as t(i))",
    "quantile_cont": "(select quantile_cont(x, 0.9) from (values (1.0), (2.0), (10.0)) as t(x))",
    "median_even": "(select median(x) from (values (1.0), (4.0)) as t(x))",
}


@pytest.mark.parametrize("name", sorted(PROBES))
def test_construct_evaluates_like_duckdb(spark, name):
    sql = f"create or replace view probe as select {PROBES[name]} as v"
    expected = duckdb.sql(f"select {PROBES[name]} as v").fetchall()[0][0]
    expected = (
        [float(e) if isinstance(e, Decimal) else e for e in expected]
        if isinstance(expected, list)
        else (float(expected) if isinstance(expected, Decimal) else expected)
    )
    (view,) = transpile_views(sql)
    actual = spark.sql(view.query).collect()[0][0]
    if isinstance(expected, list):
        assert len(actual) == len(expected)
        pairs = list(zip(expected, actual, strict=True))
    else:
        pairs = [(expected, actual)]
    for want, got in pairs:
        if isinstance(want, float):
            assert (math.isnan(want) and math.isnan(got)) or want == pytest.approx(float(got), rel=1e-12), (want, got)
        else:
            assert (float(got) if isinstance(want, (int, float)) and not isinstance(want, bool) else got) == want


def test_select_star_qualify_does_not_leak_helper_column(spark):
    sql = """create or replace view pick as
    with runs as (select k, tag, p from (values (1, 'a', 2.0), (1, 'b', 1.0), (2, 'c', 5.0)) as t(k, tag, p))
    select * from runs qualify row_number() over (partition by k order by p) = 1"""
    (view,) = transpile_views(sql)
    frame = spark.sql(view.query)
    assert frame.columns == ["k", "tag", "p"]
    assert sorted(tuple(r) for r in frame.collect()) == [(1, "b", 1.0), (2, "c", 5.0)]


def test_list_length_is_array_size(spark):
    sql = """create or replace view sized as
    with grouped as (select list_sort(list(x)) as xs from (values (3), (1), (2)) as t(x))
    select len(xs) as n, xs[1] as smallest from grouped"""
    (view,) = transpile_views(sql)
    assert [tuple(r) for r in spark.sql(view.query).collect()] == [(3, 1)]
