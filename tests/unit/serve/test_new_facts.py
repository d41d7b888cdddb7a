"""The incremental build finds the touched keys over the new facts alone, with their provenance
taken from the rows it just recomputed; a new fact those rows miss still gets its own."""

from __future__ import annotations

import duckdb

from pipeline.engine.incremental import _new_facts


def _connection() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("""create table facts as
        select 'd' || i as measurement_digest, i as run_seq from range(1, 9) t(i)""")
    con.execute("""create table provenance as
        select 'd' || i as measurement_digest, 's' || i as snapshot from range(1, 9) t(i)""")
    con.execute("create view delta_fact_measurement as select * from facts")
    con.execute("create view fact_provenance as select * from provenance")
    con.execute("""create view fact_measurement as select f.*, p.snapshot
        from delta_fact_measurement f left join fact_provenance p using (measurement_digest)""")
    con.execute("create temp table reattributed_digest (measurement_digest varchar)")
    return con


def _seen(con) -> list[tuple]:
    return con.execute("select measurement_digest, snapshot from fact_measurement order by all").fetchall()


def test_new_facts_take_recomputed_provenance_and_look_up_the_rest():
    con = _connection()
    # Recomputed: d7 (a new fact) and d2 (an earlier fact with a new sighting, same run), not d8.
    con.execute(
        "create temp table touched_provenance as select * from provenance where measurement_digest in ('d2', 'd7')"
    )
    with _new_facts(con, since_seq=6):
        assert _seen(con) == [("d7", "s7"), ("d8", "s8")]
    assert len(_seen(con)) == 8  # the views are themselves again


def test_an_earlier_fact_given_another_run_counts_as_new():
    con = _connection()
    con.execute("insert into reattributed_digest values ('d2')")
    con.execute("create temp table touched_provenance as select * from provenance where measurement_digest = 'd2'")
    with _new_facts(con, since_seq=7):
        assert _seen(con) == [("d2", "s2"), ("d8", "s8")]
