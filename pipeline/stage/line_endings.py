"""Line endings are not data: a line ends at LF, CRLF or a lone CR, in any mix, as Python's universal
newlines read them. DuckDB's strict CSV reader takes a file of one kind (it detects which from the
first lines) and refuses a file whose kinds mix (a CRLF file with one LF row appended, `cat` of a CRLF
and an LF file); such a file is read from a copy whose endings are all LF. A line ending inside a
quoted field is the field's text and stays as it is, so every row keeps the values it has in a file of
one kind (its measurement digest with them).

Only a file the parser refused is checked and copied: a file of one kind costs nothing here.
"""

from __future__ import annotations

from pathlib import Path

CHUNK_BYTES = 1 << 20


def mixed(path: Path) -> bool:
    """Does ``path`` end its lines in more than one way (or hold a lone CR)? One streaming pass of
    C-speed counts; a CRLF split between two chunks is counted where it is."""
    lf = cr = crlf = 0
    last = b""
    with path.open("rb") as fh:
        while chunk := fh.read(CHUNK_BYTES):
            lf, cr, crlf = lf + chunk.count(b"\n"), cr + chunk.count(b"\r"), crlf + chunk.count(b"\r\n")
            crlf += last == b"\r" and chunk[:1] == b"\n"
            last = chunk[-1:]
    all_lf = cr == 0
    all_crlf = cr == crlf == lf
    all_cr = lf == 0
    return not (all_lf or all_crlf or all_cr)


def write_normalized(path: Path, out: Path) -> None:
    """Copy ``path`` to ``out`` with every line ending outside quotes written as LF (streaming). The
    quote state flips at every double quote (an escaped quote, written twice, flips it back)."""
    inside = False
    carry = b""  # a CR that ends a chunk: the next chunk may start with its LF
    with path.open("rb") as src, out.open("wb") as dst:
        while True:
            data = src.read(CHUNK_BYTES)
            chunk, carry = carry + data, b""
            if data and chunk.endswith(b"\r"):
                chunk, carry = chunk[:-1], b"\r"
            for i, part in enumerate(chunk.split(b'"')):
                if i:
                    dst.write(b'"')
                    inside = not inside
                dst.write(part if inside else part.replace(b"\r\n", b"\n").replace(b"\r", b"\n"))
            if not data:
                return
