"""DistinctMap: Python once per distinct value, Arrow for the rest, the same answer as calling it per row."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor

import duckdb
import pyarrow as pa

from pipeline.stage import distinct
from pipeline.stage.distinct import DistinctMap

PAIR = pa.struct([("upper", pa.string()), ("length", pa.string())])


def _pair(value: str) -> dict | None:
    return None if value == "none" else {"upper": value.upper(), "length": str(len(value))}


def test_each_distinct_value_costs_python_once_across_batches():
    calls = []
    mapped = DistinctMap(lambda v: calls.append(v) or v[::-1], pa.string())
    first = mapped(pa.array(["ab", "cd", None, "ab"]))
    second = mapped(pa.chunked_array([pa.array(["cd", "ef"]), pa.array(["ab"])]))
    assert first.to_pylist() == ["ba", "dc", None, "ba"]
    assert second.to_pylist() == ["dc", "fe", "ba"]
    assert sorted(calls) == ["ab", "cd", "ef"]


def test_a_struct_result_and_a_null_result_come_back_per_row():
    mapped = DistinctMap(_pair, PAIR)
    out = mapped(pa.array(["x", "none", "yy", "x"]))
    assert out.to_pylist() == [_pair("x"), None, _pair("yy"), _pair("x")]


def test_a_full_memo_is_emptied_and_answers_stay_right(monkeypatch):
    monkeypatch.setattr(distinct, "MEMO_MAX_BYTES", 64)
    mapped = DistinctMap(lambda v: v + "!", pa.string())
    rng = random.Random(7)
    for _ in range(50):
        batch = [f"value-{rng.randrange(40)}" for _ in range(30)]
        assert mapped(pa.array(batch)).to_pylist() == [v + "!" for v in batch]
    assert mapped.value_bytes <= 64 + 30 * len("value-39")


def test_a_memo_grown_by_many_batches_is_few_arrays_and_answers_stay_right():
    mapped = DistinctMap(_pair, PAIR)
    rng = random.Random(11)
    for n in range(3 * distinct.MEMO_MAX_CHUNKS):
        batch = [f"v{n}-{i}" for i in range(5)] + [f"v{rng.randrange(n + 1)}-{rng.randrange(5)}" for _ in range(20)]
        assert mapped(pa.array(batch)).to_pylist() == [_pair(v) for v in batch]
        assert mapped.results.num_chunks <= distinct.MEMO_MAX_CHUNKS
    assert len(mapped.position) == 15 * distinct.MEMO_MAX_CHUNKS


def test_files_staged_side_by_side_share_one_map_and_each_gets_its_own_rows():
    """The staging store runs two files at once on one database: their UDF batches interleave."""
    db = duckdb.connect()
    db.create_function("mapped", DistinctMap(_pair, PAIR), ["VARCHAR"], "STRUCT(upper VARCHAR, length VARCHAR)",
                       type="arrow", null_handling="special")  # fmt: skip

    def run(seed: int) -> bool:
        con = db.cursor()
        rows = con.execute(
            "select v, mapped(v) from (select 'k' || ((i * $s) % 997) as v from range(60000) t(i))", {"s": seed}
        ).fetchall()
        return all(m == _pair(v) for v, m in rows)

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert all(pool.map(run, [1, 3, 7, 11, 13, 17]))
