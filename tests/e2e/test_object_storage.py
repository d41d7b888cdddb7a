"""The warehouse on object storage: a real S3-compatible server on 127.0.0.1 (moto's server mode).

The real pipeline (dg launch, the `make run` path) writes Delta tables into a bucket; the facts and
digests equal a local run's, a second run is incremental, and `pipeline.connect()` reads the bucket.
"""

from __future__ import annotations

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
