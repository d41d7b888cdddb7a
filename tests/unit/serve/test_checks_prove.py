"""Each data check proves itself: on a small warehouse that breaks exactly its rule it returns exactly
the offending rows, on the unbroken one it returns none, and a check file emptied of its logic fails
its own proof.

The fixture warehouse is an in-memory DuckDB whose tables carry the warehouse's names
(fact_measurement, dim_*, source, quarantine), copied from the real pipeline's output on the shipped
history: a sample of facts (the folded kernelindex one included) with every dimension row.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from pipeline.contracts.digests import MEASUREMENT_KEY, measurement_digest, object_digest
from pipeline.serve.checks import digest_integrity, register_rules
from tests.conftest import PROJECT

SQL_DIR = PROJECT / "sql"
TABLES = (
    "fact_measurement",
    "dim_environment",
    "dim_protocol",
    "dim_workload",
    "dim_implementation",
    "dim_operation",
    "source",
    "quarantine",
)
SAMPLE_FACTS = 300
MISSING = "sha256:" + "0" * 64


@pytest.fixture(scope="module")
def base(shipped_warehouse, tmp_path_factory) -> Path:
    """The sampled warehouse as a DuckDB file; each test opens its own in-memory copy and breaks it."""
    path = tmp_path_factory.mktemp("checks_prove") / "base.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("attach ? as wh (read_only)", [str(shipped_warehouse / "liger.duckdb")])
        con.execute(f"""
            create table fact_measurement as
            select * from wh.fact_measurement
            where origin <> 'csv'
               or measurement_digest in (select measurement_digest from wh.fact_measurement
                                         order by measurement_digest limit {SAMPLE_FACTS})""")
        for table in TABLES[1:]:
            con.execute(f"create table {table} as select * from wh.{table}")
        con.execute("""create table fact_sighting as select * from wh.fact_sighting
            where measurement_digest in (select measurement_digest from fact_measurement)""")
        con.execute("detach wh")
    return path


def open_copy(base: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("attach ? as b (read_only)", [str(base)])
    for table in (*TABLES, "fact_sighting"):
        con.execute(f"create table {table} as select * from b.{table}")
    con.execute("detach b")
    return con


def run_check(con: duckdb.DuckDBPyConnection, sql_dir: Path, name: str) -> list[tuple]:
    """What the asset check runs: the check file's query, against tables by name, with the rules' macros."""
    register_rules(con)
    return con.execute((sql_dir / "checks" / f"{name}.sql").read_text()).fetchall()


def one(con, sql: str, params=()) -> tuple:
    rows = con.execute(sql, list(params)).fetchall()
    assert len(rows) == 1, rows
    return rows[0]


# -- one proof per sql/checks file: break exactly that rule, expect exactly those rows ------------------
def prove_fact_key_unique(con, sql_dir: Path) -> None:
    (digest,) = one(con, "select min(measurement_digest) from fact_measurement where origin = 'csv'")
    con.execute("insert into fact_measurement select * from fact_measurement where measurement_digest = ?", [digest])
    assert run_check(con, sql_dir, "fact_key_unique") == [("duplicate digest", digest, 2)]


QUANTILE_COLUMNS = "measurement_digest, kernel_name, kernel_provider, gpu_name, liger_version, p20, p50, p80"


def prove_quantile_order(con, sql_dir: Path) -> None:
    digests = [
        r[0]
        for r in con.execute(
            "select measurement_digest from fact_measurement order by measurement_digest limit 4"
        ).fetchall()
    ]
    con.execute("update fact_measurement set p50 = p80 * 2 where measurement_digest = ?", [digests[0]])  # p50 > p80
    con.execute("update fact_measurement set p20 = 0 where measurement_digest = ?", [digests[1]])  # not positive
    con.execute("update fact_measurement set p80 = null where measurement_digest = ?", [digests[2]])  # missing
    # digests[3] is left alone: p20 == p50 == p80 is in order
    con.execute("update fact_measurement set p20 = p50, p80 = p50 where measurement_digest = ?", [digests[3]])
    expected = con.execute(
        f"select {QUANTILE_COLUMNS} from fact_measurement where measurement_digest in (?, ?, ?)", digests[:3]
    ).fetchall()
    assert len(expected) == 3
    assert sorted(run_check(con, sql_dir, "quantile_order")) == sorted(expected)


def prove_dangling_dimension(con, sql_dir: Path) -> None:
    digests = [
        r[0]
        for r in con.execute(
            "select measurement_digest from fact_measurement order by measurement_digest limit 4"
        ).fetchall()
    ]
    expected = []
    for i, dim in enumerate(("environment", "protocol", "workload", "implementation")):
        missing = MISSING[:-1] + str(i + 1)
        con.execute(f"update fact_measurement set {dim}_digest = ? where measurement_digest = ?", [missing, digests[i]])
        expected.append((dim, missing))
    assert sorted(run_check(con, sql_dir, "dangling_dimension")) == sorted(expected)


def prove_sighting_without_fact(con, sql_dir: Path) -> None:
    """Issue 20 case 1: a fact-less sighting (what a late run publishing over a newer one leaves) fails."""
    (digest,) = one(con, "select min(measurement_digest) from fact_measurement where origin = 'csv'")
    expected = con.execute(
        "select measurement_digest, source_path, content_sha256, run_seq from fact_sighting"
        " where measurement_digest = ?",
        [digest],
    ).fetchall()
    assert expected
    con.execute("delete from fact_measurement where measurement_digest = ?", [digest])
    assert sorted(run_check(con, sql_dir, "sighting_without_fact")) == sorted(expected)


PROOFS: dict[str, Callable[[duckdb.DuckDBPyConnection, Path], None]] = {
    "fact_key_unique": prove_fact_key_unique,
    "quantile_order": prove_quantile_order,
    "dangling_dimension": prove_dangling_dimension,
    "sighting_without_fact": prove_sighting_without_fact,
}


def test_every_check_file_has_a_proof():
    assert set(PROOFS) == {p.stem for p in (SQL_DIR / "checks").glob("*.sql")}


def test_the_unbroken_sample_passes_every_check(base):
    con = open_copy(base)
    assert one(con, "select count(*) filter (where origin <> 'csv'), count(*) from fact_measurement") == (
        1,
        SAMPLE_FACTS + 1,
    )
    for name in PROOFS:
        assert run_check(con, SQL_DIR, name) == [], name
    assert digest_integrity(con) == []


@pytest.mark.parametrize("name", sorted(PROOFS))
def test_check_returns_exactly_the_rows_that_break_its_rule(base, name):
    PROOFS[name](open_copy(base), SQL_DIR)


@pytest.mark.parametrize("name", sorted(PROOFS))
def test_a_neutralized_check_file_fails_its_proof(base, name, tmp_path):
    """Replace one check's query by one that returns no rows (in a copy of sql/): its proof must fail."""
    sql_dir = tmp_path / "sql"
    shutil.copytree(SQL_DIR, sql_dir)
    (sql_dir / "checks" / f"{name}.sql").write_text("select 1 as nothing where false;\n")
    with pytest.raises(AssertionError):
        PROOFS[name](open_copy(base), sql_dir)


# -- digest_integrity (Python + SQL in pipeline/serve/checks.py) ----------------------------------------
def test_digest_integrity_reports_a_fact_whose_identity_changed(base):
    con = open_copy(base)
    cur = con.execute("select * from fact_measurement where origin = 'csv' order by measurement_digest limit 1")
    fact = dict(zip([d[0] for d in cur.description], cur.fetchone(), strict=False))
    con.execute(
        "update fact_measurement set kernel_name = kernel_name || '_renamed' where measurement_digest = ?",
        [fact["measurement_digest"]],
    )
    # The recomputed digest, by the Python twin of the SQL rule, from the changed identity.
    identity = {k: fact.get(k) for k in MEASUREMENT_KEY}
    identity |= {
        "kernel_name": fact["kernel_name"] + "_renamed",
        "observed_at_text": f"{fact['observed_at']:%Y-%m-%d %H:%M:%S}",
    }
    assert measurement_digest(**{**identity, "kernel_name": fact["kernel_name"]}) == fact["measurement_digest"]
    assert digest_integrity(con) == [("measurement", fact["measurement_digest"], measurement_digest(**identity))]


def test_digest_integrity_reports_a_dimension_object_that_changed(base):
    con = open_copy(base)
    digest, text = one(con, "select environment_digest, object_json from dim_environment order by 1 limit 1")
    obj = json.loads(text)
    obj["spec"]["tampered"] = True
    con.execute("update dim_environment set object_json = ? where environment_digest = ?", [json.dumps(obj), digest])
    assert object_digest(obj) != digest
    assert digest_integrity(con) == [("environment", digest, object_digest(obj))]


def test_digest_integrity_ignores_metadata(base):
    """Metadata is not part of an object's identity: changing it breaks nothing."""
    con = open_copy(base)
    digest, text = one(con, "select protocol_digest, object_json from dim_protocol order by 1 limit 1")
    obj = json.loads(text)
    obj.setdefault("metadata", {})["name"] = "renamed"
    con.execute("update dim_protocol set object_json = ? where protocol_digest = ?", [json.dumps(obj), digest])
    assert digest_integrity(con) == []


def test_digest_integrity_of_one_run_recomputes_the_dimension_objects_its_facts_name(base):
    """A run's checks (scoped to the facts it committed) recompute the dimension objects those facts name,
    not every object of a deep history; the full check recomputes every one."""
    con = open_copy(base)
    fact, named = one(con, "select measurement_digest, implementation_digest from fact_measurement order by 1 limit 1")
    con.execute("update fact_measurement set run_seq = run_seq + 1000 where measurement_digest = ?", [fact])
    other = one(
        con,
        "select implementation_digest from dim_implementation where implementation_digest <> ? order by 1 limit 1",
        [named],
    )[0]
    tampered = []
    for digest in (named, other):
        obj = json.loads(
            one(con, "select object_json from dim_implementation where implementation_digest = ?", [digest])[0]
        )
        obj["spec"]["tampered"] = True
        con.execute(
            "update dim_implementation set object_json = ? where implementation_digest = ?", [json.dumps(obj), digest]
        )
        tampered.append(("implementation", digest, object_digest(obj)))
    since = one(con, "select max(run_seq) - 1 from fact_measurement")[0]
    register_rules(con, since)
    assert digest_integrity(con) == [tampered[0]]
    register_rules(con)
    assert sorted(digest_integrity(con)) == sorted(tampered)
