"""The warehouse on object storage: a real S3-compatible server on 127.0.0.1 (moto's server mode).

The real pipeline (dg launch, the `make run` path) writes Delta tables into a bucket; the facts and
digests equal a local run's, a second run is incremental, and `pipeline.connect()` reads the bucket.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.fixtures import runs as rs
from tests.fixtures.s3 import create_bucket, s3_server


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    with s3_server(log) as env:
        create_bucket(env, "liger")
        yield env


def _facts_via_connect(monkeypatch, env: dict, uri: str, local: Path, **kw):
    from pipeline.serve.connect import connect

    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with connect(warehouse=uri, local_dir=str(local), **kw) as con:
        return rs.snapshot(con)


def test_pipeline_into_a_bucket_matches_a_local_run(tmp_path: Path, s3, monkeypatch) -> None:
    old_raw = rs.small_data_raw(tmp_path / "raw_old", n_csv=3, kernelindex=True)
    new_raw = rs.small_data_raw(tmp_path / "raw_new", n_csv=5, kernelindex=True)
    home, log = tmp_path / "home", tmp_path / "run.log"

    assert rs.run(rs.run_env(new_raw, tmp_path / "local", home), log) == 0
    local = rs.facts(tmp_path / "local" / "liger.duckdb")

    uri, local_dir = "s3://liger/warehouse", tmp_path / "s3_local"
    for raw in (old_raw, new_raw):
        env = rs.run_env(raw, tmp_path / "unused", home, **s3, LIGER_LOCAL_DIR=str(local_dir))
        env["LIGER_WAREHOUSE"] = uri
        assert rs.run(env, log) == 0, log.read_text()[-4000:]

    from pipeline.store.warehouse import Warehouse

    for k, v in s3.items():
        monkeypatch.setenv(k, v)
    wh = Warehouse(uri, local_dir)
    runs = wh.run_log()
    assert [r.mode for r in runs] == ["full", "incremental"]
    assert wh.store.files("fact_measurement")[0].startswith("s3://liger/warehouse/tables/fact_measurement/")
    # Same facts, same digests and values as the local warehouse: through pipeline.connect() ...
    assert _facts_via_connect(monkeypatch, s3, uri, local_dir) == local
    # ... and the state before the second run is still readable (time travel by run number).
    old_local_ref = tmp_path / "local_old"
    assert rs.run(rs.run_env(old_raw, old_local_ref, home), log) == 0
    assert _facts_via_connect(monkeypatch, s3, uri, local_dir, run=runs[0].seq) == rs.facts(
        old_local_ref / "liger.duckdb"
    )
    # Nothing but the Delta tables went to the bucket: staging and liger.duckdb stay local.
    assert (local_dir / "liger.duckdb").exists() and (local_dir / "staging").is_dir()


def test_writers_racing_for_the_lease_exactly_one_wins(tmp_path: Path, s3, monkeypatch) -> None:
    import threading

    from pipeline.store.delta import DeltaStore
    from pipeline.store.warehouse import DeltaLease, WarehouseBusy

    for k, v in s3.items():
        monkeypatch.setenv(k, v)
    store = DeltaStore("s3://liger/lease-test")
    DeltaLease(store, timeout=5).acquire().release()  # the lease table exists; the race is on taking it
    start = threading.Barrier(3)
    outcome: list[object] = []

    def contend() -> None:
        lease = DeltaLease(store, timeout=3)
        start.wait()
        try:
            outcome.append(lease.acquire())
        except WarehouseBusy as exc:
            outcome.append(exc)

    threads = [threading.Thread(target=contend) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    winners = [o for o in outcome if isinstance(o, DeltaLease)]
    losers = [o for o in outcome if isinstance(o, WarehouseBusy)]
    assert len(winners) == 1 and len(losers) == 2, outcome
    assert all("another run holds the warehouse lock" in str(e) and winners[0].owner in str(e) for e in losers)
    winners[0].release()
    DeltaLease(store, timeout=5).acquire().release()  # released: the next one gets it at once


def _lock_table_holder(store) -> tuple[str, float] | None:
    from pipeline.store.warehouse import DeltaLease

    return DeltaLease(store, timeout=1)._holder()


def test_a_held_lease_is_renewed_while_the_run_works(tmp_path: Path, s3, monkeypatch) -> None:
    """Issue 20 case 1: the lease is renewed (every ttl/3) while held, so a long run keeps it."""
    from pipeline.store.delta import DeltaStore
    from pipeline.store.warehouse import DeltaLease, WarehouseBusy

    for k, v in s3.items():
        monkeypatch.setenv(k, v)
    store = DeltaStore("s3://liger/lease-renewal")
    lease = DeltaLease(store, timeout=60, ttl=6).acquire()
    try:
        first = _lock_table_holder(store)
        assert first is not None and first[0] == lease.owner
        # Event, not clock: wait (generously) until the holder's expiry has moved out twice.
        seen = [first[1]]

        def renewed_twice() -> bool:
            h = _lock_table_holder(store)
            if h and h[0] == lease.owner and h[1] > seen[-1]:
                seen.append(h[1])
            return len(seen) >= 3

        assert rs.wait_for(renewed_twice, timeout=180, interval=0.5), seen
        with pytest.raises(WarehouseBusy):
            DeltaLease(store, timeout=1).acquire()
        assert not lease.lost
    finally:
        lease.release()
    assert _lock_table_holder(store) is None


def test_a_dead_holder_on_this_host_is_taken_over_at_once(tmp_path: Path, s3, monkeypatch) -> None:
    """Issue 20 case 10: a run that died (here: SIGKILL) cannot release its lease; its process is gone,
    so the next run on this host takes the warehouse at once instead of waiting out the TTL."""
    import subprocess

    from pipeline.store.delta import DeltaStore
    from pipeline.store.warehouse import DeltaLease

    for k, v in s3.items():
        monkeypatch.setenv(k, v)
    uri = "s3://liger/lease-dead-holder"
    script = (
        "import os, sys\n"
        "from pipeline.store.delta import DeltaStore\n"
        "from pipeline.store.warehouse import DeltaLease\n"
        f"lease = DeltaLease(DeltaStore({uri!r}), timeout=60, ttl=900).acquire()\n"
        "print(lease.owner, flush=True)\n"
        "os.kill(os.getpid(), 9)\n"
    )
    proc = subprocess.run(
        [rs.python(), "-c", script],
        cwd=rs.REPO,
        env={**rs.run_env(tmp_path, tmp_path, tmp_path / "h")},
        capture_output=True,
        text=True,
        timeout=180,
    )
    dead_owner = proc.stdout.strip()
    assert proc.returncode == -9 and dead_owner, proc.stderr[-2000:]
    store = DeltaStore(uri)
    holder = _lock_table_holder(store)
    assert holder is not None and holder[0] == dead_owner and holder[1] > time.time() + 600  # not run out
    lease = DeltaLease(store, timeout=30).acquire()  # would wait out 15 minutes before the fix
    try:
        assert _lock_table_holder(store)[0] == lease.owner
    finally:
        lease.release()


def test_busy_message_says_whether_the_holder_is_alive(tmp_path: Path, s3, monkeypatch) -> None:
    """Issue 20 case 10: the timeout message names the holder, and says whether it is a live process
    on this host or one on another host (which this host cannot check)."""
    import os

    import pyarrow as pa
    from deltalake import write_deltalake

    from pipeline.store.delta import DeltaStore
    from pipeline.store.warehouse import DeltaLease, WarehouseBusy

    for k, v in s3.items():
        monkeypatch.setenv(k, v)
    store = DeltaStore("s3://liger/lease-message")
    live = DeltaLease(store, timeout=30).acquire()
    try:
        with pytest.raises(WarehouseBusy) as busy:
            DeltaLease(store, timeout=1).acquire()
        assert live.owner in str(busy.value) and f"pid {os.getpid()} on this host, alive" in str(busy.value)
    finally:
        live.release()
    far = DeltaStore("s3://liger/lease-message-other-host")
    row = pa.table({"slot": [0], "holder": ["elsewhere.example:4242:0123abcd"], "expires": [time.time() + 900]})
    write_deltalake(far.uri(DeltaLease.TABLE), row, mode="append", storage_options=far.options)
    with pytest.raises(WarehouseBusy) as busy:
        DeltaLease(far, timeout=1).acquire()
    assert "elsewhere.example:4242:0123abcd: on host elsewhere.example" in str(busy.value)


def test_a_run_whose_lease_ran_out_cannot_publish_over_a_newer_run(tmp_path: Path, s3, monkeypatch) -> None:
    """Issue 20 case 1: run A is frozen (SIGSTOP: no renewal either) after committing its tables; its
    lease runs out, run B takes the warehouse and publishes. When A wakes it must not publish over B:
    it fails, and the published state stays B's."""
    import os
    import signal

    from pipeline.store.warehouse import Warehouse

    uri, local_dir, home = "s3://liger/late-run", tmp_path / "local", tmp_path / "home"
    raw_a = rs.small_data_raw(tmp_path / "raw_a", n_csv=1, kernelindex=False)
    raw_b = rs.small_data_raw(tmp_path / "raw_b", n_csv=3, kernelindex=False)
    hit = tmp_path / "failpoint"
    common = dict(**s3, LIGER_LOCAL_DIR=str(local_dir), LIGER_LEASE_TTL_S="4")
    env_a = rs.run_env(raw_a, tmp_path / "unused", home, **common)
    env_a |= {"LIGER_WAREHOUSE": uri, "LIGER_FAILPOINT": "tables_committed:30", "LIGER_FAILPOINT_FILE": str(hit)}
    env_b = rs.run_env(raw_b, tmp_path / "unused", home, **common) | {"LIGER_WAREHOUSE": uri}
    for k, v in s3.items():
        monkeypatch.setenv(k, v)
    wh = Warehouse(uri, local_dir)

    a = rs.start_run(env_a, tmp_path / "a.log")
    try:
        assert rs.wait_for(hit.exists, timeout=300, interval=0.05), (tmp_path / "a.log").read_text()[-3000:]
        os.killpg(a.pid, signal.SIGSTOP)
        # Event: A's lease has run out (read from the lease table, not assumed from a clock).
        assert rs.wait_for(lambda: (_lock_table_holder(wh.store) or ("", 0.0))[1] < time.time(), 120, 0.5)
        assert rs.run(env_b, tmp_path / "b.log") == 0, (tmp_path / "b.log").read_text()[-3000:]
        after_b = wh.run_log()
        assert len(after_b) == 1
        os.killpg(a.pid, signal.SIGCONT)
        code = a.wait(timeout=300)
    finally:
        rs.kill(a)
    text = (tmp_path / "a.log").read_text(errors="replace")
    assert code != 0, text[-3000:]
    assert "lease ran out" in text or "published by another run" in text, text[-3000:]
    assert [(r.seq, r.run_id, r.versions) for r in wh.run_log()] == [(r.seq, r.run_id, r.versions) for r in after_b]
    with wh.open_duckdb() as con:  # B's liger.duckdb, as B built it
        b_facts = rs.snapshot(con)
    assert b_facts[0] > 0 and _facts_via_connect(monkeypatch, s3, uri, local_dir) == b_facts
