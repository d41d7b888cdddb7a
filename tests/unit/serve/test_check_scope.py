"""The asset checks read what a run committed, and every fact on the periodic full check."""

from __future__ import annotations

from datetime import UTC, datetime

import duckdb

from pipeline.serve.checks import check_scope, register_rules
from pipeline.store.warehouse import Published


def _pub(seq: int, mode: str = "incremental", run_id: str = "r") -> Published:
    return Published(seq=seq, run_id=run_id, committed_at=datetime.now(UTC), mode=mode, versions={})


def test_scope_follows_the_run():
    assert check_scope(_pub(3), "r", every=10)[0] == 2  # the facts run 3 committed
    assert check_scope(_pub(3), "another", every=10)[0] == 3  # this run committed nothing
    assert check_scope(_pub(10), "r", every=10)[0] is None  # periodic full check
    assert check_scope(_pub(4, mode="full"), "r", every=10)[0] is None  # a full warehouse run


def test_checked_facts_are_the_facts_after_the_scope():
    con = duckdb.connect()
    # d1 is carried by two facts (runs 1 and 5); run 4's sighting names d2, an earlier fact.
    con.execute("""create table fact_measurement as
        select range as run_seq, 'd' || if(range = 5, 1, range) as measurement_digest from range(1, 6)""")
    con.execute("""create table fact_sighting as
        select range as run_seq, 'd' || if(range = 4, 2, range) as measurement_digest from range(1, 6)""")
    counts = "select list((measurement_digest, n) order by measurement_digest) from checked_digest_count"
    register_rules(con, since_seq=3)
    for view in ("checked_facts", "checked_sightings"):
        assert con.execute(f"select list(run_seq order by run_seq) from {view}").fetchone()[0] == [4, 5]
    assert con.execute(counts).fetchone()[0] == [("d1", 2), ("d2", 1), ("d4", 1)]  # over every fact
    register_rules(con)
    for view in ("checked_facts", "checked_sightings"):
        assert con.execute(f"select count(*) from {view}").fetchone()[0] == 5
    assert len(con.execute(counts).fetchone()[0]) == 4
