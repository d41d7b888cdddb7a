"""One fixture per normalize decision (sql/models), showing its rule on a handful of rows, plus the
rule end to end: newest source wins whichever order the snapshots arrive in."""

from __future__ import annotations

import random
import shutil
from datetime import datetime
from pathlib import Path

import pytest

from pipeline.common import duck
from pipeline.contracts.digests import record_only_measurement_digest
from pipeline.engine import read_model
from pipeline.model import run as normalize
from pipeline.serve.duckdb_build import create_table_views
from pipeline.stage.store import StagingStore
from tests.fixtures.runs import HEADER, row


def run_model(con, name: str) -> None:
    sql = read_model(normalize.MODELS_DIR / name).sql
    for token, expr in normalize.TEMPLATE.items():
        sql = sql.replace(token, expr)
    con.execute(sql)


@pytest.fixture()
def con(tmp_path):
    """Every model's tables, empty and correctly typed: the models run over a batch of no sources."""
    c = duck.connect()
    store = StagingStore(tmp_path / "staging")
    normalize.run_batch(c, [], store.path, store.empty_templates(), [])
    yield c
    c.close()


def record(**kw):
    base = dict(
        kernel_name="jsd",
        kernel_operation_mode="forward",
        kernel_provider="liger",
        gpu_name="NVIDIA H100",
        observed_at=datetime(2025, 1, 2, 3, 4, 5),
        observed_at_text="2025-01-02 03:04:05",
        liger_version="0.5.0",
        p20=1.0,
        p50=2.0,
        p80=3.0,
        protocol_digest="sha256:p",
        environment_digest="sha256:e",
        workload_digest="sha256:w",
        implementation_digest="sha256:i",
        protocol_json=None,
        environment_json=None,
    )
    return base | kw


KNOWN_RECORD_COLUMNS = ("kernel_operation_mode", "gpu_name", "observed_at", "protocol_digest", "environment_digest")


def insert(con, table: str, rows: list[dict]) -> None:
    cols = list(rows[0])
    con.executemany(
        f"insert into {table} ({', '.join(cols)}) values ({', '.join('?' for _ in cols)})",
        [[r[c] for c in cols] for r in rows],
    )


def csv_fact(digest: str, **kw):
    return (
        dict(
            measurement_digest=digest,
            kernel_name="jsd",
            kernel_provider="liger",
            kernel_operation_mode="forward",
            metric_name="speed",
            metric_unit="ms",
            gpu_name="NVIDIA H100",
            x_name="V",
            x_label="v",
            x_value="1",
            extra_config="{}",
            liger_version="0.5.0",
            observed_at=datetime(2025, 1, 2, 3, 4, 5),
            observed_at_text="2025-01-02 03:04:05",
            p20=1.0,
            p50=2.0,
            p80=3.0,
        )
        | kw
    )


def test_fold_tie_breaks(con):
    # One record matches two CSV rows (same second, same quantiles, two x points): the smaller digest wins.
    insert(con, "csv_fact", [csv_fact("sha256:b", x_value="2"), csv_fact("sha256:a", x_value="1")])
    # Two records match one CSV row: the smallest (workload, implementation, protocol, environment) wins.
    insert(con, "batch_record", [record(workload_digest="sha256:w2"), record(workload_digest="sha256:w1")])
    run_model(con, "fold.sql")
    folded = con.execute("select measurement_digest, workload_digest from fold order by 1").fetchall()
    assert folded == [("sha256:a", "sha256:w1")]


def test_fold_exact_rules_first_the_heuristic_only_for_records_matching_no_row(con):
    insert(
        con,
        "csv_fact",
        [
            csv_fact("sha256:a", run_digest="sha256:r1", external_id="e/1", p50=2.5),
            csv_fact("sha256:b", x_value="2", run_digest="sha256:r2", external_id="e/2", p50=2.6),
            csv_fact("sha256:c", x_value="3", run_digest=None, external_id=None),
        ],
    )
    # r1 (and r9) would also match c by the heuristic: an exact match takes them out of it
    insert(
        con,
        "batch_record",
        [
            record(run_digest="sha256:r1", external_id="other", workload_digest="sha256:w1"),
            record(run_digest="sha256:r9", external_id="e/2", workload_digest="sha256:w2"),
            record(run_digest="sha256:r8", external_id=None, workload_digest="sha256:w3"),
        ],
    )
    run_model(con, "fold.sql")
    folded = con.execute("select measurement_digest, workload_digest, fold_rule from fold order by 1").fetchall()
    assert folded == [
        ("sha256:a", "sha256:w1", "run digest"),
        ("sha256:b", "sha256:w2", "externalId"),
        ("sha256:c", "sha256:w3", "heuristic"),
    ]


def test_fold_needs_every_quantile_within_1e9(con):
    insert(con, "csv_fact", [csv_fact("sha256:a", p50=2.0 * (1 + 1e-8))])
    insert(con, "batch_record", [record()])
    run_model(con, "fold.sql")
    assert con.execute("select count(*) from fold").fetchone()[0] == 0


def test_record_only_fact_identity(con):
    insert(con, "batch_record", [record(workload_digest="sha256:w1"), record(workload_digest="sha256:w2")])
    insert(
        con,
        "batch_record_rows",
        [
            record(workload_digest="sha256:w1") | {"source_path": "kernelindex/a.json"},
            record(workload_digest="sha256:w2") | {"source_path": "kernelindex/a.json"},
        ],
    )
    run_model(con, "fact.sql")
    facts = con.execute(
        "select measurement_digest, workload_digest, origin, extra_config from batch_fact order by workload_digest"
    ).fetchall()
    key = dict(
        kernel_name="jsd",
        kernel_provider="liger",
        kernel_operation_mode="forward",
        metric_name="speed",
        x_name=None,
        x_value=None,
        gpu_name="NVIDIA H100",
        observed_at_text="2025-01-02 03:04:05",
        liger_version="0.5.0",
        p20=1.0,
        p50=2.0,
        p80=3.0,
        occurrence=1,
    )
    # Two records of one sweep in the same second stay two facts: the workload digest is in the identity.
    assert facts == [
        (record_only_measurement_digest("sha256:w1", **key), "sha256:w1", "kernelindex", None),
        (record_only_measurement_digest("sha256:w2", **key), "sha256:w2", "kernelindex", None),
    ]
    sightings = con.execute("select count(*) from batch_sighting where source_path = 'kernelindex/a.json'").fetchone()
    assert sightings == (2,)


def _newest_then_smallest(rows: list[dict], group: tuple[str, ...], digest: str) -> dict:
    """The rule in plain Python: per group the newest observed_at (a missing time loses to any
    time), ties to the smallest digest."""
    best: dict = {}
    for r in rows:
        rank = (r["observed_at"] is None, -(r["observed_at"] or datetime(2000, 1, 1)).timestamp(), r[digest])
        key = tuple(r[c] for c in group)
        best[key] = min(best.get(key, rank), rank)
    return {k: v[2] for k, v in best.items()}


def test_learned_dimensions_newest_time_then_smallest_digest(con):
    rng = random.Random(7)
    times = [None, datetime(2025, 1, 1), datetime(2025, 2, 1), datetime(2025, 3, 1)]
    rows = [
        record(
            gpu_name=rng.choice(["H100", "B200", "A10"]),
            kernel_operation_mode=rng.choice(["forward", "backward"]),
            observed_at=rng.choice(times),
            protocol_digest=f"sha256:p{rng.randrange(6)}",
            environment_digest=f"sha256:e{rng.randrange(6)}",
        )
        for _ in range(300)
    ]
    insert(con, "batch_record", rows[:150])
    insert(con, "known_record", [{c: r[c] for c in KNOWN_RECORD_COLUMNS} for r in rows[150:]])
    run_model(con, "learned_dimensions.sql")
    got = con.execute("select dimension, gpu_name, kernel_operation_mode, digest from learned_dimension").fetchall()
    environment = _newest_then_smallest(rows, ("gpu_name",), "environment_digest")
    protocol = _newest_then_smallest(rows, ("gpu_name", "kernel_operation_mode"), "protocol_digest")
    assert sorted(got, key=str) == sorted(
        [("environment", g, None, d) for (g,), d in environment.items()]
        + [("protocol", g, m, d) for (g, m), d in protocol.items()],
        key=str,
    )


def test_learned_protocol_for_ms_rows_only_and_newest_record_wins(con):
    older = record(observed_at=datetime(2025, 1, 1), protocol_digest="sha256:p-old", environment_digest="sha256:e-old")
    newer = record(observed_at=datetime(2025, 2, 1), protocol_digest="sha256:p-new", environment_digest="sha256:e-new")
    insert(con, "batch_record", [older, newer])
    run_model(con, "learned_dimensions.sql")
    learned = con.execute(
        "select dimension, gpu_name, kernel_operation_mode, metric_unit, digest from learned_dimension order by 1"
    ).fetchall()
    assert learned == [
        ("environment", "NVIDIA H100", None, None, "sha256:e-new"),
        ("protocol", "NVIDIA H100", "forward", "ms", "sha256:p-new"),
    ]
    # Readers apply it: an ms row takes the learned protocol, an MB row keeps its derived one; both
    # take the learned environment; a folded row keeps its record's own digests.
    con.execute("create table learned as select * from learned_dimension")
    fact = dict(
        csv_fact("sha256:ms"),
        environment_digest="sha256:e-derived",
        protocol_digest="sha256:p-derived",
        workload_digest="sha256:w",
        implementation_digest="sha256:i",
        origin="csv",
        identity="derived",
        run_seq=1,
    )
    facts = [
        fact,
        fact | {"measurement_digest": "sha256:mb", "metric_name": "memory", "metric_unit": "MB"},
        fact
        | {
            "measurement_digest": "sha256:folded",
            "origin": "csv+kernelindex",
            "environment_digest": "sha256:e-own",
            "protocol_digest": "sha256:p-own",
        },
        # KernelIndex's own digests of a row it maps are never overridden by what records taught
        fact | {"measurement_digest": "sha256:ki", "identity": "kernelindex"},
    ]
    reader = duck.connect()
    create_table_views(reader, {})
    for t in ("fact_measurement", "learned_dimension"):
        reader.execute(f"create or replace table t_{t} as select * from delta_{t}")
    for f in facts:
        f.pop("observed_at_text")
    insert(reader, "t_fact_measurement", facts)
    reader.register("learned_rows", con.sql("select * from learned").to_arrow_table())
    reader.execute("insert into t_learned_dimension select * from learned_rows")
    reader.execute("create or replace view delta_fact_measurement as select * from t_fact_measurement")
    reader.execute("create or replace view delta_learned_dimension as select * from t_learned_dimension")
    resolved = reader.execute(
        "select measurement_digest, environment_digest, protocol_digest from fact_measurement order by 1"
    ).fetchall()
    assert resolved == [
        ("sha256:folded", "sha256:e-own", "sha256:p-own"),
        ("sha256:ki", "sha256:e-derived", "sha256:p-derived"),
        ("sha256:mb", "sha256:e-new", "sha256:p-derived"),
        ("sha256:ms", "sha256:e-new", "sha256:p-new"),
    ]


def _snapshot_dir(root: Path, p50: str, with_tsv_rows: list[tuple[str, str]]) -> None:
    (root / "liger_csv").mkdir(parents=True, exist_ok=True)
    (root / "liger_csv" / "SNAPSHOTS.tsv").write_text(
        "file\tupstream_path\tupstream_commit\tcommitted_at\n"
        + "".join(
            f"{name}\tbenchmark/data/all_benchmark_data.csv\t{name[:7]}\t{date}\n" for name, date in with_tsv_rows
        )
    )


@pytest.mark.parametrize("order", ["old_then_new", "new_then_old"])
def test_two_snapshots_that_disagree_on_a_value_hold_two_measurements(tmp_path, order):
    """Two snapshots carry a run stamped in the same second with other values: the values are part of the
    identity, so both are kept (issue 20), whichever run brought which snapshot; a row both carry alike is one
    measurement with two sightings, its provenance the newest snapshot."""
    from pipeline.ingest.discovery import discover
    from pipeline.serve.connect import connect
    from pipeline.store.merge import Merger
    from pipeline.store.warehouse import Warehouse

    snaps = {"aaaaaaa.csv": ("2025-01-01T00:00:00Z", "0.5"), "bbbbbbb.csv": ("2025-06-01T00:00:00Z", "0.7")}
    raw = tmp_path / "raw"
    _snapshot_dir(raw, "", [(n, d) for n, (d, _) in snaps.items()])
    wh = Warehouse(tmp_path / "wh")
    staging = StagingStore(wh.staging)
    names = list(snaps) if order == "old_then_new" else list(reversed(snaps))
    modes = []
    for name in names:
        (raw / "liger_csv" / name).write_text(
            HEADER + "\n" + row("1", p50=snaps[name][1], p80="0.9") + "\n" + row("2", p50="0.5") + "\n"
        )
        sources, problems = discover(raw)
        staging.stage(sources)
        modes.append(Merger(wh, staging).run(sources, problems).mode)
    assert modes[0] == "full"
    with connect(warehouse=wh.root_uri, local_dir=str(tmp_path / "wh")) as c:  # provenance included
        rows = c.execute(
            "select x_value, p50, source_count, last_seen_commit from fact_measurement order by 1, 2"
        ).fetchall()
    assert rows == [("1", 0.5, 1, "aaaaaaa"), ("1", 0.7, 1, "bbbbbbb"), ("2", 0.5, 2, "bbbbbbb")]
    shutil.rmtree(tmp_path / "wh")
