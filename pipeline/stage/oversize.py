"""Guards against hostile lines: the lines that must never reach a parser (too long, too many fields),
found in one streaming pass, and a copy of the file without them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pipeline.contracts.reasons import RAW_PREVIEW_CHARS

SCAN_CHUNK_BYTES = 1 << 20  # must stay <= MAX_LINE_BYTES: only lines spanning chunks can be too long


class Oversize:
    """A physical line that must never reach the parser: too long or too many fields."""

    __slots__ = ("line_no", "start", "end", "reason", "preview")

    def __init__(self, line_no: int, start: int, end: int, reason: str, preview: str):
        self.line_no, self.start, self.end, self.reason, self.preview = line_no, start, end, reason, preview

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Oversize(line {self.line_no}, {self.end - self.start} bytes, {self.reason})"


def scan_oversize_lines(
    path: Path, max_line_bytes: int, max_fields: int | None, too_long: str, too_wide: str
) -> list[Oversize]:
    """One streaming pass (bounded memory): lines longer than ``max_line_bytes`` or with more than
    ``max_fields`` comma-separated fields.

    Per chunk only C-speed work: a line longer than a chunk is found from the chunk's first and last
    newline (memchr); a line with ``max_fields`` commas is at least that many bytes long, so commas
    are counted only on such lines, found from the newline positions (numpy)."""
    assert max_line_bytes >= SCAN_CHUNK_BYTES
    found: list[Oversize] = []
    line_no = 1  # number of the line that starts at ``line_start``
    line_start = 0  # byte offset of the current (unfinished) line
    head = bytearray()  # its first RAW_PREVIEW_CHARS bytes
    commas = 0  # its commas so far (counted only when max_fields is set)
    offset = 0
    buf = bytearray(SCAN_CHUNK_BYTES)
    with path.open("rb") as fh:
        while n := fh.readinto(buf):
            chunk = buf if n == len(buf) else buf[:n]
            first = chunk.find(b"\n")
            if first < 0:  # the current line goes on through this whole chunk
                if len(head) < RAW_PREVIEW_CHARS:
                    head += chunk[: RAW_PREVIEW_CHARS - len(head)]
                if max_fields is not None:
                    commas += chunk.count(b",")
                offset += n
                continue
            # the current line ends inside this chunk
            if len(head) < RAW_PREVIEW_CHARS:
                head += chunk[: min(first, RAW_PREVIEW_CHARS - len(head))]
            if max_fields is not None:
                commas += chunk.count(b",", 0, first)
            _judge(
                found, line_no, line_start, offset + first, head, commas, max_line_bytes, max_fields, too_long, too_wide
            )
            last = chunk.rfind(b"\n")
            if max_fields is not None and last > first:
                # lines wholly inside this chunk are shorter than a chunk: only the field count can be wrong
                newlines = np.flatnonzero(np.frombuffer(chunk, np.uint8) == 10)
                for i in np.flatnonzero(np.diff(newlines) > max_fields).tolist():
                    start, end = int(newlines[i]) + 1, int(newlines[i + 1])
                    _judge(
                        found,
                        line_no + 1 + i,
                        offset + start,
                        offset + end,
                        chunk[start : min(end, start + RAW_PREVIEW_CHARS)],
                        chunk.count(b",", start, end),
                        max_line_bytes,
                        max_fields,
                        too_long,
                        too_wide,
                    )
                line_no += len(newlines)
            else:
                line_no += 1 if last == first else chunk.count(b"\n")
            line_start = offset + last + 1
            head = bytearray(chunk[last + 1 : last + 1 + RAW_PREVIEW_CHARS])
            commas = chunk.count(b",", last + 1) if max_fields is not None else 0
            offset += n
    if offset > line_start:  # last line without a trailing newline
        _judge(found, line_no, line_start, offset, head, commas, max_line_bytes, max_fields, too_long, too_wide)
    return found


def _judge(
    found: list[Oversize],
    line_no: int,
    start: int,
    end: int,
    head: bytes | bytearray,
    commas: int,
    max_line_bytes: int,
    max_fields: int | None,
    too_long: str,
    too_wide: str,
) -> None:
    reason = (
        too_long
        if end - start > max_line_bytes
        else too_wide
        if max_fields is not None and commas >= max_fields
        else None
    )
    if reason is not None:
        found.append(Oversize(line_no, start, end, reason, bytes(head[:RAW_PREVIEW_CHARS]).decode("utf-8", "replace")))


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
