"""Python per distinct value, inside a DuckDB scan (Arrow UDFs)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

# Only short values are remembered, and only so many: a memo stays within tens of MB whatever the
# input (real configs, protocols and environments are well under a kilobyte, and few).
MEMO_MAX_ENTRIES = 2048
MEMO_MAX_CHARS = 8192


def map_distinct(
    values: pa.Array | pa.ChunkedArray, fn: Callable[[str], Any], out_type: pa.DataType, memo: dict[str, Any]
) -> pa.Array:
    """``fn`` over an Arrow UDF batch, called once per distinct non-null value (nulls stay null).

    Results are remembered across batches in ``memo``, so a value repeated on every row of a file
    costs Python once per file, not once per batch."""
    encoded = pc.dictionary_encode(values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values)
    results = []
    for v in encoded.dictionary.to_pylist():
        if v in memo:
            results.append(memo[v])
            continue
        result = fn(v)
        if len(v) <= MEMO_MAX_CHARS and len(memo) < MEMO_MAX_ENTRIES:
            memo[v] = result
        results.append(result)
    return pa.array(results, out_type).take(encoded.indices)
