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
    con.execute("create table fact_measurement as select range as run_seq from range(1, 6)")
    con.execute("create table fact_sighting as select range as run_seq from range(1, 6)")
    register_rules(con, since_seq=3)
    for view in ("checked_facts", "checked_sightings"):
        assert con.execute(f"select list(run_seq order by run_seq) from {view}").fetchone()[0] == [4, 5]
    register_rules(con)
    for view in ("checked_facts", "checked_sightings"):
        assert con.execute(f"select count(*) from {view}").fetchone()[0] == 5
