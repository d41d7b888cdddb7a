"""A chain model's steps to refresh (`_Refresh._chain_steps`): the rows, the pairs they read and the steps
those read are exactly what the definition gives, though a row already searched one way is not searched
that way again. Chains with gaps of every size, chains that stop early or start late, a NULL key."""

from __future__ import annotations

import random

import duckdb
import pytest

from pipeline.engine import incremental
from pipeline.engine.header import Chain, ModelHeader, SqlModel

KEY = ["kernel_name", "axis"]


def _model(around: int) -> SqlModel:
    header = ModelHeader.model_validate(
        {
            "name": "pairs",
            "kind": "INCREMENTAL_BY_PARTITION",
            "partitioned_by": KEY,
            "partitions_from": "steps",
            "grain": [*KEY, "provider", "to_step_rank"],
            "chain": Chain(steps="steps", within=["provider"], around=around).model_dump(),
        }
    )
    return SqlModel(header, None, "select 1")


def _steps(con, seed: int) -> list[tuple]:
    rng = random.Random(seed)
    rows = []
    for kernel in ("a", "b", None):
        for provider in ("liger", "torch", "rare"):
            every = {"liger": 1, "torch": 3, "rare": 40}[provider]
            first, last = rng.randint(0, 30), rng.randint(120, 200)
            rows += [(kernel, "commit", provider, s) for s in range(first, last, every) if rng.random() > 0.2]
    con.execute("create table steps (kernel_name varchar, axis varchar, provider varchar, step_rank bigint)")
    con.executemany("insert into steps values (?, ?, ?, ?)", rows)
    return rows


def _defined(rows: list[tuple], touched: set, around: int) -> tuple[set, set, set]:
    """The three sets by the definition: every chain's neighbours of every step, searched afresh."""
    chains: dict[tuple, list[int]] = {}
    for kernel, axis, provider, step in rows:
        chains.setdefault((kernel, axis, provider), []).append(step)

    def near(found: set, before: bool, after: bool) -> set:
        more = set()
        for kernel, axis, step in found:
            for (k, a, _), steps in chains.items():
                if (k, a) != (kernel, axis):
                    continue
                if before and (lower := [s for s in steps if s < step]):
                    more.add((k, a, max(lower)))
                if after and (upper := [s for s in steps if s > step]):
                    more.add((k, a, min(upper)))
        return found | more

    computed = near(set(touched), False, True)
    for _ in range(around):
        computed = near(computed, True, True)
    pairs = computed
    for _ in range(around):
        pairs = near(pairs, True, True)
    return computed, pairs, near(pairs, True, False)


@pytest.mark.parametrize("around", [0, 1, 2, 3])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_steps_to_refresh_are_the_definition_s(around, seed):
    con = duckdb.connect()
    rows = _steps(con, seed)
    model = _model(around)
    rng = random.Random(seed)
    touched = {(k, a, s) for k, a, _, s in rng.sample(rows, 12)}
    con.execute("create table touched_t (kernel_name varchar, axis varchar, step_rank bigint)")
    con.executemany("insert into touched_t values (?, ?, ?)", sorted(touched, key=str))
    refresh = incremental._Refresh(con, [model], 0, False, frozenset())
    found = incremental.Touched("steps", [*KEY, "step_rank"], "touched_t", [], count=len(touched))
    tables = refresh._chain_steps(model, found, None)
    got = [set(con.execute(f"select kernel_name, axis, step_rank from {t}").fetchall()) for t in tables]
    refresh.drop()
    assert got == list(_defined(rows, touched, around))
    assert got[0] < got[1] < got[2] or around == 0
