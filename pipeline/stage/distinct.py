"""Python per distinct value, inside a DuckDB scan (Arrow UDFs)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.contracts.rules import is_version

# A memo stays within tens of MB whatever the input: it is emptied when its values or its results pass a
# size (real configs, identities, protocols and environments are well under a kilobyte each, and few).
MEMO_MAX_BYTES = 32 * 1024 * 1024
MEMO_MAX_CHUNKS = 8


class DistinctMap:
    """``fn`` over an Arrow UDF batch, called once per distinct non-null value (nulls stay null).

    Results are remembered across batches as Arrow: a batch costs Python a dictionary lookup per value
    distinct in it, and Arrow takes for the rest, so a value repeated across a file (a config) or shared
    by a sweep's rows (an identity key) costs Python once, not once per row. One map serves the files a
    batch stages side by side: a call holds the lock, since pyarrow lets go of the GIL mid-call."""

    def __init__(self, fn: Callable[[str], Any], out_type: pa.DataType) -> None:
        self.fn, self.out_type = fn, out_type
        self.lock = threading.Lock()
        self._clear()

    def _clear(self) -> None:
        self.position: dict[str, int] = {}
        self.results = pa.chunked_array([], self.out_type)
        self.value_bytes = 0

    def __call__(self, values: pa.Array | pa.ChunkedArray) -> pa.Array:
        with self.lock:
            return self._map(values)

    def _map(self, values: pa.Array | pa.ChunkedArray) -> pa.Array:
        encoded = pc.dictionary_encode(values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values)
        distinct = encoded.dictionary.to_pylist()
        if self.results.nbytes > MEMO_MAX_BYTES or self.value_bytes > MEMO_MAX_BYTES:
            self._clear()
        new = [v for v in distinct if v not in self.position]
        if new:
            chunk = _to_arrow([self.fn(v) for v in new], self.out_type)  # first: fn may raise
            base = len(self.results)
            chunks = [*self.results.chunks, chunk]
            # `take` over many chunks costs per chunk: past a few, the memo is made one array again
            self.results = pa.chunked_array(
                [pa.concat_arrays(chunks)] if len(chunks) > MEMO_MAX_CHUNKS else chunks, self.out_type
            )
            self.position.update((v, base + i) for i, v in enumerate(new))
            self.value_bytes += sum(len(v) for v in new)
        positions = pa.array([self.position[v] for v in distinct], pa.int64())
        return self.results.take(positions.take(encoded.indices)).combine_chunks()


def _to_arrow(results: list, out_type: pa.DataType) -> pa.Array:
    """`pa.array(results, out_type)`, a struct's field by field (pyarrow converts dicts slowly)."""
    if not pa.types.is_struct(out_type):
        return pa.array(results, out_type)
    present = [r is not None for r in results]
    rows = [r if r is not None else {} for r in results]
    fields = [pa.array([r.get(f.name) for r in rows], f.type) for f in out_type]
    mask = None if all(present) else pa.array([not p for p in present])
    return pa.StructArray.from_arrays(fields, fields=list(out_type), mask=mask)


def register_is_version(con) -> None:
    """`is_version(text)`: contracts/rules.py `is_version`, once per distinct version (both readers call
    this on the batch's one database: registered once)."""
    if con.execute("select 1 from duckdb_functions() where function_name = 'is_version'").fetchall():
        return
    con.create_function(
        "is_version",
        DistinctMap(is_version, pa.bool_()),
        ["VARCHAR"],
        "BOOLEAN",
        type="arrow",
        null_handling="special",
    )
