"""The explorer's points in blocks of axis points, each encoded once and kept while its rows stay.

The page shows the newest ``dashboard_axis_points`` of the axis (commits or versions) for every sweep:
hundreds of thousands of points, most of a dashboard's cost when encoded anew on every run. A new run
adds or moves the points of its own axis point, so the points go to the page in blocks of
``POINT_BLOCK`` consecutive axis points (by absolute position on the whole axis), and a block's JSON is
kept in a cache folder under the name of what it holds: its axis keys and a hash of its rows. A run
encodes the blocks whose rows changed (the newest, as a rule), reads the others back, and splices
them into the payload (`payload_json`); the window sliding within a block changes no block, since a
block holds all its axis points and the page drops those before the window.

A block (JSON): ``k`` its sweeps' keys (SWEEP_KEY's values), ``x`` its x values (``[text,
numeric]``), ``p`` per sweep a flat list ``[x index, axis position, p20, p50, p80, ...]`` in x order
(x_numeric, none last, then the text), then axis order; p20/p50/p80 to 4 significant digits
(`sig4_sql`). The page (dashboard.js, ``assemblePoints``) maps them onto the payload's sweeps.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path

from pipeline.common.files import write_atomic
from pipeline.regress.judge import SWEEP_KEY

__all__ = ["POINT_BLOCK", "AxisSource", "RawJson", "point_blocks", "window_sweeps", "sweep_p50s"]

# Axis points per block: a new run re-encodes one or two blocks of the window's ten or so
POINT_BLOCK = 16
BLOCK_FORMAT = 1
_COLS = ", ".join(SWEEP_KEY)
_KEY = ", ".join(f"s.{k}" for k in SWEEP_KEY)
_AXIS_TABLE = "site_axis_positions"


class RawJson(str):
    """JSON text spliced into the payload as it is (`payload_json`)."""


@dataclass(frozen=True)
class AxisSource:
    """Where the points on the axis are: ``relation`` with the axis key in ``column``, and the
    absolute position on the whole axis of every key from the first block the window touches on."""

    relation: str
    column: str
    positions: dict  # axis key -> absolute position
    first: int  # the window's first absolute position

    @classmethod
    def window(cls, relation: str, column: str, positions: dict, first: int) -> AxisSource:
        """The source of a window starting at ``first``: every key from the start of its first block on."""
        start = first - first % POINT_BLOCK
        return cls(relation, column, {k: i for k, i in positions.items() if i >= start}, first)

    def install(self, con) -> None:
        keys, positions = list(self.positions), list(self.positions.values())
        con.execute(
            f"create or replace temp table {_AXIS_TABLE} as select unnest($k) as axis_key, unnest($p) as pos",
            {"k": keys, "p": positions},
        )

    @property
    def joined(self) -> str:
        return f"{self.relation} s join {_AXIS_TABLE} a on s.{self.column} = a.axis_key"


def window_sweeps(con, axis: AxisSource) -> list[tuple]:
    """Every sweep with a point on the window, in SWEEP_KEY order: its key, its metric unit and the
    most runs of a point at its newest axis point."""
    return con.execute(
        f"""
        select {_COLS}, max(metric_unit), arg_max(runs, pos)
        from (
            select {_KEY}, max(s.metric_unit) as metric_unit, a.pos, max(s.runs) as runs
            from {axis.joined}
            where a.pos >= $first
            group by all
        )
        group by all
        order by all""",
        {"first": axis.first},
    ).fetchall()


def point_blocks(con, axis: AxisSource, sig4_sql, cache: Path | None = None) -> list[RawJson]:
    """The blocks of the window's points (oldest first), as JSON: read back from ``cache`` when a block
    of the same axis keys and rows was encoded before, else encoded (and kept there)."""
    digests = con.execute(
        f"""
        select a.pos // {POINT_BLOCK} as block, count(*),
               sum(hash({_KEY}, s.x_value, s.x_numeric, s.{axis.column}, s.p20, s.p50, s.p80))
        from {axis.joined} group by 1 order by 1"""
    ).fetchall()
    by_block: dict[int, list] = {}
    for key, pos in axis.positions.items():
        by_block.setdefault(pos // POINT_BLOCK, []).append([pos, key])
    names = {
        block: hashlib.sha256(
            json.dumps([BLOCK_FORMAT, POINT_BLOCK, sorted(by_block[block]), rows, str(digest)], default=str).encode()
        ).hexdigest()[:32]
        for block, rows, digest in digests
    }
    found = {b: _read(cache, name) for b, name in names.items()} if cache else {}
    missing = [b for b in names if found.get(b) is None]
    if missing:
        found |= _encode(con, axis, sig4_sql, missing)
        if cache:
            _keep(cache, {names[b]: found[b] for b in missing}, set(names.values()))
    return [RawJson(found[b]) for b in sorted(names)]


def _encode(con, axis: AxisSource, sig4_sql, blocks: list[int]) -> dict[int, str]:
    """The JSON of each of ``blocks``, written by DuckDB: a double as its shortest text, which JSON
    reads back as the same double; NULL (no value, or no finite one) as null."""
    numbers = ", ',', ".join(f"coalesce(cast({sig4_sql(f'p.{q}')} as varchar), 'null')" for q in ("p20", "p50", "p80"))
    keys = ", ".join(f"p.{k}" for k in SWEEP_KEY)
    con.execute(
        f"""
        create or replace temp table site_block_points as
        select a.pos // {POINT_BLOCK} as block, {_KEY}, s.x_value,
               case when isfinite(s.x_numeric) then s.x_numeric end as x_numeric, a.pos, s.p20, s.p50, s.p80
        from {axis.joined}
        where a.pos // {POINT_BLOCK} in (select unnest($blocks))""",
        {"blocks": blocks},
    )
    con.execute(
        """
        create or replace temp table site_block_x as
        select block, x_value, x_numeric,
               row_number() over (partition by block order by x_numeric nulls last, x_value nulls last) - 1 as x
        from (select distinct block, x_value, x_numeric from site_block_points)"""
    )
    xs: dict[int, list] = {}
    for block, x_value, x_numeric in con.execute(
        "select block, x_value, x_numeric from site_block_x order by block, x"
    ).fetchall():
        xs.setdefault(block, []).append([None if x_value is None else str(x_value), x_numeric])
    sweeps = con.execute(
        f"""
        select p.block, {keys},
               string_agg(concat(x.x, ',', p.pos, ',', {numbers}), ',' order by x.x, p.pos) as flat
        from site_block_points p join site_block_x x
            on x.block = p.block and x.x_value is not distinct from p.x_value
            and x.x_numeric is not distinct from p.x_numeric
        group by all
        order by p.block, {keys}"""
    ).fetchall()
    con.execute("drop table site_block_points")
    con.execute("drop table site_block_x")
    width = len(SWEEP_KEY)
    encoded = {}
    for block, rows in groupby(sweeps, key=lambda r: r[0]):
        rows = list(rows)
        k = json.dumps(
            [[None if v is None else str(v) for v in r[1 : 1 + width]] for r in rows],
            separators=(",", ":"), ensure_ascii=False,
        )  # fmt: skip
        x = json.dumps(xs[block], separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        encoded[block] = f'{{"k":{k},"x":{x},"p":[{",".join(f"[{r[1 + width]}]" for r in rows)}]}}'
    return encoded


def _read(cache: Path, name: str) -> str | None:
    try:
        return (cache / f"{name}.json").read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return None


def _keep(cache: Path, new: dict[str, str], live: set[str]) -> None:
    """Writes the new blocks (aside, then renamed) and removes those no longer on the page."""
    cache.mkdir(parents=True, exist_ok=True)
    for name, text in new.items():
        write_atomic(cache / f"{name}.json", text.encode("utf-8"))
    for old in cache.glob("*.json"):
        if old.stem not in live:
            old.unlink(missing_ok=True)


def sweep_p50s(con, axis: AxisSource, keys: list[tuple]) -> dict[tuple, list[tuple[int, float]]]:
    """(window position, p50) of every point on the window of the sweeps ``keys`` (SWEEP_KEY's values)."""
    if not keys:
        return {}
    same = " and ".join(f"s.{k} is not distinct from w.{k}" for k in SWEEP_KEY)
    wanted = ", ".join(f"unnest($k{i}) as {k}" for i, k in enumerate(SWEEP_KEY))
    rows = con.execute(
        f"""
        select {_KEY}, a.pos - $first, s.p50
        from {axis.joined} semi join (select {wanted}) w on {same}
        where a.pos >= $first""",
        {"first": axis.first} | {f"k{i}": [k[i] for k in keys] for i in range(len(SWEEP_KEY))},
    ).fetchall()
    found: dict[tuple, list[tuple[int, float]]] = {}
    width = len(SWEEP_KEY)
    for r in rows:
        found.setdefault(tuple(r[:width]), []).append((r[width], r[width + 1]))
    return found
