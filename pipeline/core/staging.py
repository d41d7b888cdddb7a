"""Staged parquet layout shared by the CSV and kernelindex readers."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any, Callable

import pyarrow as pa
import pyarrow.compute as pc

RAW_PREVIEW_CHARS = 4096  # raw text kept in quarantine is capped: a 1 GB line must not land in memory twice


def atomic_path(final: Path) -> Path:
    """A sibling temp path; rename it onto ``final`` once fully written."""
    final.parent.mkdir(parents=True, exist_ok=True)
    return final.with_name(f".{final.name}.{uuid.uuid4().hex}.tmp")


def publish(tmp: Path, final: Path) -> None:
    """The one atomic write of this project: flush ``tmp`` to disk, then rename it onto ``final``
    (a crash leaves the old file or the complete new one, never a torn one)."""
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, final)


# -- guards against hostile lines ----------------------------------------------------------------
SCAN_CHUNK_BYTES = 1 << 20  # must stay <= MAX_LINE_BYTES: only lines spanning chunks can be too long


class Oversize:
    """A physical line that must never reach the parser: too long or too many fields."""

    __slots__ = ("line_no", "start", "end", "reason", "preview")

    def __init__(self, line_no: int, start: int, end: int, reason: str, preview: str):
        self.line_no, self.start, self.end, self.reason, self.preview = line_no, start, end, reason, preview

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Oversize(line {self.line_no}, {self.end - self.start} bytes, {self.reason})"


def scan_oversize_lines(path: Path, max_line_bytes: int, max_fields: int | None,
                        too_long: str, too_wide: str) -> list[Oversize]:
    """One streaming pass (bounded memory): lines longer than ``max_line_bytes`` or with more than
    ``max_fields`` comma-separated fields. C-level ``split``/``count`` keep this at ~memory speed."""
    assert SCAN_CHUNK_BYTES <= max_line_bytes
    found: list[Oversize] = []
    line_no = 1  # number of the line that starts at ``line_start``
    line_start = 0  # byte offset of the current (unfinished) line
    carry = b""  # the unfinished line's bytes, unless it is already too long
    carry_long = False
    offset = 0
    with path.open("rb") as fh:
        while chunk := fh.read(SCAN_CHUNK_BYTES):
            parts = chunk.split(b"\n")
            # parts[0] continues the carried line; parts[-1] starts a new unfinished one
            first = parts[0]
            if len(parts) == 1:  # no newline in this chunk
                if not carry_long:
                    carry += first
                    if len(carry) > max_line_bytes:
                        carry_long, carry = True, carry[:RAW_PREVIEW_CHARS]
                offset += len(chunk)
                continue
            # the carried line ends inside this chunk
            end = offset + len(first)
            _judge(found, line_no, line_start, end, carry if carry_long else carry + first, carry_long or
                   (end - line_start) > max_line_bytes, max_fields, too_long, too_wide)
            middle = parts[1:-1]
            pos = end + 1
            longest = max(map(len, middle)) if middle else 0
            # a line with max_fields commas is at least max_fields bytes long: count commas only then
            if middle and (longest > max_line_bytes or
                           (max_fields is not None and longest >= max_fields
                            and max(m.count(b",") for m in middle) >= max_fields)):
                for i, m in enumerate(middle):
                    _judge(found, line_no + 1 + i, pos, pos + len(m), m, len(m) > max_line_bytes,
                           max_fields, too_long, too_wide)
                    pos += len(m) + 1
            else:
                pos += sum(map(len, middle)) + len(middle)
            line_no += len(parts) - 1
            line_start = pos
            carry, carry_long = parts[-1], False
            offset += len(chunk)
    if offset > line_start:  # last line without a trailing newline
        _judge(found, line_no, line_start, offset, carry, carry_long or (offset - line_start) > max_line_bytes,
               max_fields, too_long, too_wide)
    return found


def _judge(found: list[Oversize], line_no: int, start: int, end: int, head: bytes, is_long: bool,
           max_fields: int | None, too_long: str, too_wide: str) -> None:
    if is_long:
        found.append(Oversize(line_no, start, end, too_long, head[:RAW_PREVIEW_CHARS].decode("utf-8", "replace")))
    elif max_fields is not None and head.count(b",") >= max_fields:
        found.append(Oversize(line_no, start, end, too_wide, head[:RAW_PREVIEW_CHARS].decode("utf-8", "replace")))


# A line no UTF-8 decoder accepts: the parser rejects it in place, so line numbers stay aligned.
OVERSIZE_MARKER = b"\xff"


def write_without(path: Path, oversize: list[Oversize], out: Path) -> None:
    """Copy ``path`` to ``out`` with every oversize line replaced by a one-byte marker line (streaming)."""
    with path.open("rb") as src, out.open("wb") as dst:
        pos = 0
        for o in sorted(oversize, key=lambda o: o.start):
            _copy_range(src, dst, pos, o.start)
            dst.write(OVERSIZE_MARKER)
            pos = o.end
        _copy_range(src, dst, pos, None)


def _copy_range(src, dst, start: int, end: int | None) -> None:
    src.seek(start)
    remaining = None if end is None else end - start
    while remaining is None or remaining > 0:
        buf = src.read(SCAN_CHUNK_BYTES if remaining is None else min(SCAN_CHUNK_BYTES, remaining))
        if not buf:
            break
        dst.write(buf)
        if remaining is not None:
            remaining -= len(buf)


def line_numbers(path: Path, offsets: list[int]) -> dict[int, int]:
    """Physical line number (1-based) of each byte offset, in one streaming pass."""
    result: dict[int, int] = {}
    if not offsets:
        return result
    todo = sorted(set(offsets))
    i, newlines, base = 0, 0, 0
    with path.open("rb") as fh:
        while i < len(todo) and (chunk := fh.read(SCAN_CHUNK_BYTES)):
            while i < len(todo) and todo[i] < base + len(chunk):
                result[todo[i]] = newlines + chunk.count(b"\n", 0, todo[i] - base) + 1
                i += 1
            newlines += chunk.count(b"\n")
            base += len(chunk)
    for o in todo[i:]:
        result[o] = newlines + 1
    return result


# -- Python per distinct value, inside a DuckDB scan ------------------------------------------------
MEMO_MAX_ENTRIES = 4096
MEMO_MAX_CHARS = 16384  # only short values are remembered: a few MB at most, whatever the input


def map_distinct(values: pa.Array | pa.ChunkedArray, fn: Callable[[str], Any], out_type: pa.DataType,
                 memo: dict[str, Any]) -> pa.Array:
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
