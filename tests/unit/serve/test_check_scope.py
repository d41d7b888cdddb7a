"""The asset checks read what a run committed, and every fact on the periodic full check."""

from __future__ import annotations

from datetime import UTC, datetime

import duckdb

from pipeline.serve.checks import DIMENSIONS, check_scope, register_rules
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
    # d1 is carried by two facts (runs 1 and 5); run 4's sighting names d2, an earlier fact. Fact n names
    # the dimension objects o<n> (o6 is named by no fact).
    dims = ", ".join(f"'o' || range as {d}_digest" for d in DIMENSIONS)
    con.execute(f"""create table fact_measurement as
        select range as run_seq, 'd' || if(range = 5, 1, range) as measurement_digest, {dims} from range(1, 6)""")
    for d in DIMENSIONS:
        con.execute(f"create table dim_{d} as select 'o' || range as {d}_digest from range(1, 7)")
    named = "select list({d}_digest order by {d}_digest) from checked_dim_{d}"
    con.execute("""create table fact_sighting as
        select range as run_seq, 'd' || if(range = 4, 2, range) as measurement_digest from range(1, 6)""")
    counts = "select list((measurement_digest, n) order by measurement_digest) from checked_digest_count"
    register_rules(con, since_seq=3)
    for view in ("checked_facts", "checked_sightings"):
        assert con.execute(f"select list(run_seq order by run_seq) from {view}").fetchone()[0] == [4, 5]
    assert con.execute(counts).fetchone()[0] == [("d1", 2), ("d2", 1), ("d4", 1)]  # over every fact
    for d in DIMENSIONS:  # the objects the checked facts name
        assert con.execute(named.format(d=d)).fetchone()[0] == ["o4", "o5"]
    register_rules(con)
    for view in ("checked_facts", "checked_sightings"):
        assert con.execute(f"select count(*) from {view}").fetchone()[0] == 5
    assert len(con.execute(counts).fetchone()[0]) == 4
    for d in DIMENSIONS:  # every object, named or not
        assert len(con.execute(named.format(d=d)).fetchone()[0]) == 6
