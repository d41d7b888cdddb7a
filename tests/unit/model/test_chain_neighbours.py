"""A chain model's neighbour search (`_Refresh._neighbours`) looks near the refresh's steps first and
reads further back only for the chains with no step there: it finds exactly the steps a join over
every step of the partition finds, whatever the gaps."""

from __future__ import annotations

import random

import duckdb
import pytest

from pipeline.engine import incremental
from pipeline.engine.header import Chain, ModelHeader, SqlModel

KEY = ["kernel_name", "axis"]


def _model() -> SqlModel:
    header = ModelHeader.model_validate(
        {
            "name": "pairs",
            "kind": "INCREMENTAL_BY_PARTITION",
            "partitioned_by": KEY,
            "partitions_from": "steps",
            "grain": [*KEY, "provider", "to_step_rank"],
            "chain": Chain(steps="steps", within=["provider"]).model_dump(),
        }
    )
    return SqlModel(header, None, "select 1")


def _steps(con, seed: int) -> None:
    """Partitions of chains with gaps of every size: some chains stop early, some start late."""
    rng = random.Random(seed)
    rows = []
    for kernel in ("a", "b", None):
        for provider in ("liger", "torch", "rare"):
            every = {"liger": 1, "torch": 3, "rare": 40}[provider]
            first, last = rng.randint(0, 30), rng.randint(120, 200)
            rows += [(kernel, "commit", provider, s) for s in range(first, last, every) if rng.random() > 0.2]
    con.execute("create table steps (kernel_name varchar, axis varchar, provider varchar, step_rank bigint)")
    con.executemany("insert into steps values (?, ?, ?, ?)", rows)


def _plain(con, table: str, before: bool, after: bool) -> set:
    """Every step of the partition joined: the neighbours by definition."""
    same = " and ".join(f"s.{c} is not distinct from t.{c}" for c in KEY)
    found = set()
    for agg, op, wanted in (("max", "<", before), ("min", ">", after)):
        if wanted:
            found |= set(
                con.execute(f"""select t.kernel_name, t.axis, {agg}(s.step_rank) from {table} t
                join steps s on {same} and s.step_rank {op} t.step_rank
                group by t.kernel_name, t.axis, t.step_rank, s.provider""").fetchall()
            )
    return found


@pytest.mark.parametrize("near", [0, 1, 5, 64])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_neighbours_are_the_whole_join_s(monkeypatch, near, seed):
    monkeypatch.setattr(incremental, "NEIGHBOURS_NEAR", near)
    con = duckdb.connect()
    _steps(con, seed)
    model = _model()
    rng = random.Random(seed)
    touched = rng.sample(con.execute("select kernel_name, axis, step_rank from steps").fetchall(), 12)
    for before, after in ((True, False), (False, True), (True, True)):
        con.execute("create or replace table rows_t (kernel_name varchar, axis varchar, step_rank bigint)")
        con.executemany("insert into rows_t values (?, ?, ?)", touched)
        expected = set(touched) | _plain(con, "rows_t", before, after)
        refresh = incremental._Refresh(con, [model], 0, False, frozenset())
        refresh._neighbours(model, "rows_t", before=before, after=after)
        refresh.drop()
        assert set(con.execute("select * from rows_t").fetchall()) == expected, (before, after)
